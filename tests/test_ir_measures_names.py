"""Every measure in ir_measures' registry, spelled as ir_measures spells it (str and repr,
every parameter it supports set), is a measure name cumgain reads; a bare name that
ir_measures cannot compute either (a required parameter missing) is an InputError saying
which parameter. The values themselves are tested family by family (test_cwl_measures,
test_diversity, test_misc_measures, test_evaluator)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from cumgain.exceptions import InputError
from cumgain.measures import parse_measure

ir_measures = pytest.importorskip("ir_measures")
from ir_measures.measures.base import _NOT_PROVIDED  # noqa: E402 - its "no default"

#: a valid value for every parameter ir_measures' measures take (not their defaults)
SAMPLE = {"cutoff": 10, "rel": 2, "judged_only": True, "T": 2, "min_rel": 1, "max_rel": 3,
          "p": 0.9, "alpha": 0.3, "beta": 0.7, "dcg": "exp-log2", "gains": {0: 0, 1: 1, 2: 3},
          "relative": True, "recall": 0.5, "normalize": False}

#: parameter values ir_measures accepts and cumgain refuses, and why
REFUSED = {("SDCG", "dcg"): "cwl_eval's SDCG has only the log2 discount (ir_measures passes "
                            "dcg to no provider that computes SDCG)",
           # SAMPLE sets gains= too; nDCG(dcg='exp-log2') alone is a documentation example
           ("nDCG", "dcg"): "dcg='exp-log2' means gains='exponential': with gains= as well "
                            "it is refused (no ir_measures provider computes the two together)",
           ("NDCG", "dcg"): "as nDCG"}

REGISTRY = sorted(ir_measures.measures.registry.items())


def _sample_measure(name, measure_class):
    params = {key: SAMPLE[key] for key in measure_class.SUPPORTED_PARAMS
              if (name, key) not in REFUSED}
    return measure_class(**params)


@pytest.mark.parametrize("name, measure_class", REGISTRY, ids=[n for n, _ in REGISTRY])
def test_every_ir_measures_spelling_parses(name, measure_class):
    measure = _sample_measure(name, measure_class)
    for spelling in {str(measure), repr(measure)}:
        (parsed,) = parse_measure(spelling)
        # ir_measures' own parser reads the same spelling back to the same measure
        assert ir_measures.parse_measure(spelling) == measure
        assert parsed.name                       # a canonical name to print
        # the canonical name cumgain prints reads back to the same measure
        assert parse_measure(parsed.name)[0] == parsed


@pytest.mark.parametrize("name, measure_class", REGISTRY, ids=[n for n, _ in REGISTRY])
def test_bare_names_need_what_ir_measures_needs(name, measure_class):
    """A parameter ir_measures requires (other than the cut-off: a bare ``P`` is trec_eval's
    P at all its cut-offs) is one cumgain asks for by name; a measure with a default for
    every parameter is a name on its own."""
    params = measure_class.SUPPORTED_PARAMS
    required = sorted(key for key, param in params.items() if param.required and key != "cutoff")
    spelling = name + "@10" if "cutoff" in params and params["cutoff"].required else name
    if required:
        with pytest.raises(InputError, match="|".join(required)):
            parse_measure(spelling)
    elif all(param.default is not _NOT_PROVIDED for param in params.values()):
        assert parse_measure(name)


@pytest.mark.parametrize("name", ["P@10", "nDCG@10", "AP", "RR", "R@1000", "Judged@10",
                                  "ERR@20", "alpha_nDCG@20", "α_nDCG@20", "RBP(rel=1)",
                                  "nDCG(dcg='exp-log2')@10", "SetF(beta=2)", "Success@1",
                                  "IPrec@0.1", "P(rel=2)@5", "AP(judged_only=True)",
                                  "Compat(p=0.8)", "INST(T=3,max_rel=3)", "infAP", "Bpref"])
def test_documentation_examples(name):
    """Names from ir_measures' README and measure documentation: each is the measure
    ir_measures' canonical spelling of it is (up to the name cumgain prints)."""
    ours = parse_measure(name)[0]
    theirs = parse_measure(str(ir_measures.parse_measure(name)))[0]
    assert replace(ours, name="") == replace(theirs, name="")


def test_refused_parameters_say_why():
    with pytest.raises(InputError, match="log2"):
        parse_measure("SDCG(dcg='exp-log2',max_rel=3)@10")
