"""Qrels, runs and measures as the neighbouring tools hold them (cumgain.io.neighbours):
ir_measures' and ir_datasets' namedtuple rows (lists, generators), ranx's Qrels and
Run, ir_measures' measure objects; each against the dict path, bit for bit."""
from __future__ import annotations

import collections
import random

import numpy as np
import pytest

import cumgain
from cumgain import trec_io
from cumgain.exceptions import InputError

MEASURES = ["map", "ndcg_cut.10", "P.5", "recip_rank", "nDCG@10(gains=0-1-10-100)",
            "Judged@10", "bpref"]
# (the fields of ir_measures' Qrel / ScoredDoc and ir_datasets' TrecQrel, defined here so
# that the test needs neither)
Qrel = collections.namedtuple("Qrel", "query_id doc_id relevance iteration")
ScoredDoc = collections.namedtuple("ScoredDoc", "query_id doc_id score")
TrecQrel = collections.namedtuple("TrecQrel", "query_id doc_id relevance iteration")


def collection(seed: int = 1) -> tuple:
    rng = random.Random(seed)
    qrels = {str(t): {f"d{d}": rng.choice([-1, 0, 1, 2, 3]) for d in rng.sample(range(40), 12)}
             for t in range(15)}
    run = {str(t): {f"d{d}": rng.choice([0.25, 0.5, 0.75, rng.random()])
                    for d in rng.sample(range(50), 30)} for t in range(1, 17)}
    return qrels, run


def rows(qrels: dict, run: dict) -> tuple:
    return ([Qrel(q, d, r, "0") for q, docs in qrels.items() for d, r in docs.items()],
            [ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()])


def same(a: cumgain.Evaluation, b: cumgain.Evaluation) -> bool:
    return a.topics == b.topics and all(np.array_equal(a.values[n], b.values[n])
                                        for n in a.values) and a.means == b.means


@pytest.mark.parametrize("form", ["list", "tuple", "generator"])
def test_namedtuple_rows_are_the_dicts(form):
    qrels, run = collection()
    expected = cumgain.evaluate(qrels, run, MEASURES, warn=False)
    qrel_rows, run_rows = rows(qrels, run)
    make = {"list": list, "tuple": tuple, "generator": lambda r: (x for x in r)}[form]
    got = cumgain.evaluate(make(qrel_rows), make(run_rows), MEASURES, warn=False)
    assert same(got, expected)
    prepared = cumgain.prepare_qrels(make(qrel_rows))
    assert same(cumgain.evaluate(prepared, make(run_rows), MEASURES, warn=False), expected)
    loaded = trec_io.load_run(make(run_rows))
    assert loaded.topics == tuple(run) and len(loaded.docnos) == len(run_rows)
    assert trec_io.load_qrels(make(qrel_rows)).topics == tuple(qrels)
    ranking = cumgain.rank(make(qrel_rows), make(run_rows), warn=False)
    assert ranking.topics == cumgain.rank(qrels, run, warn=False).topics


def test_rows_without_pyarrow_become_dicts(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name == "pyarrow":
            raise ImportError("no pyarrow here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    from cumgain.io import neighbours
    qrels, run = collection(2)
    qrel_rows, run_rows = rows(qrels, run)
    assert neighbours.adapted(run_rows, "run") == run
    assert neighbours.adapted(qrel_rows, "qrels") == qrels


@pytest.mark.slow
def test_ranx_qrels_and_run_are_their_dicts():
    ranx = pytest.importorskip("ranx")
    qrels, run = collection(3)
    positive = {q: {d: r for d, r in docs.items() if r >= 0} for q, docs in qrels.items()}
    expected = cumgain.evaluate(positive, run, MEASURES, warn=False)
    got = cumgain.evaluate(ranx.Qrels(positive), ranx.Run(run), MEASURES, warn=False)
    assert same(got, expected)
    with pytest.raises(InputError, match="expected qrels, got a ranx Run"):
        cumgain.evaluate(ranx.Run(run), run, MEASURES)


def test_ir_measures_measure_objects_are_their_names():
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, P, nDCG
    qrels, run = collection(4)
    got = cumgain.evaluate(qrels, run, [nDCG@10, AP(rel=2), P@5], warn=False)
    expected = cumgain.evaluate(qrels, run, ["nDCG@10", "AP(rel=2)", "P@5"], warn=False)
    assert same(got, expected) and list(got.means) == ["nDCG@10", "AP(rel=2)", "P@5"]
    assert cumgain.evaluate(qrels, run, nDCG@10, warn=False).means == \
        {"nDCG@10": expected.means["nDCG@10"]}
    assert ir_measures.parse_measure("nDCG@10") == nDCG@10


def test_rows_with_an_iteration_field_are_subtopic_judgments():
    """ir_datasets' diversity qrels: the iteration is the subtopic, read as such when
    every measure needs subtopic judgments."""
    judgments = {"1": {"s1": {"a": 1, "c": 0}, "s2": {"b": 1}}, "2": {"s1": {"x": 1}}}
    run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}, "2": {"x": 1.0, "y": 2.0}}
    trec_rows = [TrecQrel(q, d, r, s) for q, subtopics in judgments.items()
                 for s, docs in subtopics.items() for d, r in docs.items()]
    measures = ["alpha_nDCG@10", "ERR_IA@10", "StRecall@5"]
    expected = cumgain.evaluate(cumgain.load_subtopics(judgments), run, measures,
                                ties="docno_asc")
    for given in (trec_rows, iter(trec_rows)):
        got = cumgain.evaluate(given, rows({}, run)[1], measures, ties="docno_asc")
        assert same(got, expected)
    assert cumgain.load_subtopics(trec_rows).topics == expected.topics


def test_an_empty_list_is_no_judgments_and_other_kinds_are_listed():
    qrels, run = collection(5)
    with pytest.raises(InputError) as caught:
        cumgain.evaluate([(1, 2)], run, ["map"])
    message = str(caught.value)
    for kind in ("TREC qrels file", "mapping", "DataFrame", "Arrow table", "ir_measures",
                 "ranx Qrels", "prepare_qrels"):
        assert kind in message
    with pytest.raises(InputError, match=r"lack \['score'\]"):
        cumgain.evaluate(qrels, rows(qrels, {})[0], ["map"])
