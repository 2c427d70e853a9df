"""cumgain as an ir_measures provider: ``ir_measures.calc_aggregate``, ``iter_calc``,
``evaluator`` and everything built on them (PyTerrier's ``pt.Experiment``) computed by
cumgain's compiled core.

>>> import ir_measures
>>> from ir_measures import nDCG, AP
>>> import cumgain.compat.ir_measures
>>> cumgain.compat.ir_measures.install()
>>> qrels = {"q1": {"a": 2, "b": 0, "c": 1}}
>>> run = {"q1": {"a": 0.2, "b": 0.9, "c": 0.5}}
>>> ir_measures.calc_aggregate([nDCG@10, AP], qrels, run)[AP]
0.5833333333333333
>>> cumgain.compat.ir_measures.uninstall()

:func:`install` registers the provider (``ir_measures.providers.registry["cumgain"]``,
also ``ir_measures.cumgain``) and puts it first in ``ir_measures.DefaultPipeline``, so
that ir_measures' own functions use it for every measure it supports and the other
providers for the rest; :func:`uninstall` takes it out again.

**The same numbers as ir_measures' default pipeline.** For each measure, the provider
that ir_measures' default pipeline would use decides the semantics, and cumgain
evaluates with the options that reproduce them (see :data:`PROVIDER_OPTIONS`; tested
against those providers): pytrec_eval's measures (``nDCG``, ``AP``, ``P``, ``R``,
``RR``, ``Bpref``, ``infAP``, ``Rprec``, ``Set*``, ``IPrec``, ``Success``, ``Num*``)
with scores compared as float32, ties by docno descending and trec_eval 9's recall
cut-offs; the C/W/L measures (``RBP``, ``SDCG``, ``INST``, ...) in the run's order;
``Compat``, ``Judged`` and MS MARCO's ``RR@10`` with ties by docno ascending; gdeval's
``ERR``; ``Accuracy``. Every provider scores the topics of both the qrels and the run;
a qrels topic the run lacks gets the measure's default (0), as ir_measures gives it.
Gain tables (``nDCG(gains={2:3})``) keep an unlisted level's own value as its gain, as
ir_measures maps them. The diversity measures (ndeval's, through pyndeval) and
measures cumgain does not compute fall back to the other providers.

Qrels and runs in every form ir_measures takes (``{qid: {docid: value}}`` dicts,
pandas DataFrames, iterables of ``Qrel`` / ``ScoredDoc`` namedtuples, generators) go
to the compiled reader: the qrels are read once per evaluator, a run once per call.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional

import numpy as np

from cumgain.common.optional import require
from cumgain.engine.evaluator import evaluate
from cumgain.exceptions import InputError
from cumgain.io import neighbours
from cumgain.measures import parse_measure
from cumgain.trec_io import prepare_qrels

ir_measures = require("ir_measures", extra="ir_measures", for_what="cumgain.compat.ir_measures")

__all__ = ["CumgainProvider", "CumgainEvaluator", "PROVIDER_OPTIONS", "install", "uninstall"]

#: The options that reproduce each ir_measures provider's semantics (its tie order,
#: score precision and recall cut-offs), by the provider's NAME.
PROVIDER_OPTIONS: dict[str, dict[str, str]] = {
    "pytrec_eval": dict(ties="docno_desc", score_precision="float32",
                        recall_cutoffs="trec_eval9"),
    "cwl_eval": dict(ties="input_order"),
    "compat": dict(ties="docno_asc"),
    "judged": dict(ties="docno_asc"),
    "msmarco": dict(ties="docno_asc"),
    "gdeval": dict(ties="docno_desc"),
    "accuracy": dict(ties="input_order"),
}


def _reference_provider(measure: Any) -> Optional[str]:
    """The name of the provider ir_measures' default pipeline would compute ``measure``
    with (available or not), leaving this one out; None if none supports it."""
    for provider in ir_measures.DefaultPipeline.providers:
        if provider.NAME not in ("cumgain", "runtime") and provider.supports(measure):
            return provider.NAME
    return None


class CumgainProvider(ir_measures.providers.Provider):
    """The provider: the measures cumgain computes with the semantics of ir_measures'
    default pipeline (the module docstring)."""

    NAME = "cumgain"

    def supports(self, measure: Any) -> bool:
        measure.validate_params()
        if _reference_provider(measure) not in PROVIDER_OPTIONS:
            return False
        try:
            parsed = parse_measure(str(measure))
        except InputError:
            return False
        return all(m.spec.input == "ranking" for m in parsed)

    def _evaluator(self, measures: Iterable[Any], qrels: Any) -> "CumgainEvaluator":
        return CumgainEvaluator(list(measures), qrels)

    def install_instructions(self) -> str:
        return "pip install cumgain"


class CumgainEvaluator(ir_measures.providers.Evaluator):
    """The qrels read once (:func:`cumgain.prepare_qrels`); each run evaluated once per
    group of measures that share options."""

    def __init__(self, measures: list, qrels: Any):
        if isinstance(qrels, Iterator) or neighbours.is_ranx(qrels, "Qrels"):
            qrels = neighbours.adapted(qrels, "qrels")
        self.judgments = prepare_qrels(qrels)
        super().__init__(measures, set(_topics_of(self.judgments)))
        groups: dict[tuple, list] = {}
        for measure in measures:
            options = PROVIDER_OPTIONS[_reference_provider(measure)]
            groups.setdefault(tuple(sorted(options.items())), []).append(measure)
        self.groups = [(dict(key), group) for key, group in groups.items()]

    def _iter_calc(self, run: Any) -> Iterator[Any]:
        run = neighbours.adapted(run, "run")         # (read once if a generator)
        if isinstance(run, dict) and not run:
            return
        order = None
        for options, group in self.groups:
            result = evaluate(self.judgments, run, [str(m) for m in group], topics="both",
                              warn=False, **options)
            columns = [(m, result.values[parsed.name], parsed.aggregate)
                       for m, parsed in zip(group, result.measures)]
            if order is None:       # the run's order, as the providers yield them (a mean
                order = _in_run_order(run, result.topics)   # then sums in the same order)
            for t in order:
                topic = result.topics[t]
                for measure, values, aggregate in columns:
                    value = float(values[t])
                    if aggregate == "mean_defined" and np.isnan(value):
                        continue        # (undefined on this topic: left out, as ir_measures)
                    yield ir_measures.Metric(query_id=topic, measure=measure, value=value)


def _in_run_order(run: Any, topics: tuple) -> list:
    """The indices of ``topics`` (byte order) in the order the run first gives them."""
    if isinstance(run, dict):
        given: Iterable = run.keys()
    elif hasattr(run, "column_names"):                  # an Arrow table
        given = run.column("query_id").unique().to_pylist()
    elif hasattr(run, "columns"):                       # a pandas DataFrame
        column = "query_id" if "query_id" in run.columns else "qid"
        given = run[column].astype(str).unique().tolist()
    else:
        return list(range(len(topics)))
    index = {topic: t for t, topic in enumerate(topics)}
    return [index[topic] for topic in map(str, given) if topic in index]


def _topics_of(judgments: Any) -> Iterable[str]:
    """The topics with judgments of prepared qrels."""
    topics = getattr(judgments, "topics", None)
    if topics is not None:
        return [str(t) for t in topics]
    return [str(t) for t, docs in dict(judgments).items() if len(docs)]


PROVIDER = CumgainProvider()


def install() -> None:
    """Register the provider with ir_measures and put it first in its default pipeline
    (``ir_measures.calc_aggregate``, ``iter_calc``, ``evaluator``, ``calc`` and what is
    built on them, PyTerrier's ``pt.Experiment`` included, then use cumgain for the
    measures it supports)."""
    ir_measures.providers.registry["cumgain"] = PROVIDER
    ir_measures.cumgain = PROVIDER
    pipeline = ir_measures.DefaultPipeline.providers
    if PROVIDER in pipeline:
        pipeline.remove(PROVIDER)
    pipeline.insert(0, PROVIDER)


def uninstall() -> None:
    """Take the provider out of ir_measures' default pipeline again."""
    pipeline = ir_measures.DefaultPipeline.providers
    if PROVIDER in pipeline:
        pipeline.remove(PROVIDER)
