"""Golden comparisons with trec_eval's own outputs in ../shared (skipped when absent).

* ``data/real/expected/*.fp.q``: trec_eval 10.0 (float64 scores) and 9.0.8 (float32)
  printed at full precision: every value must be equal, not close.
* ``data/real/expected/*.v10.q`` and ``data/trec_eval_tests``: trec_eval's 4-decimal
  output: every line of a measure we support must print identically.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from cumgain.engine.evaluator import TopicsWarning, evaluate

_shared = Path(__file__).resolve().parents[1].parent / "shared"
SHARED = _shared if (_shared / "data").is_dir() else None

pytestmark = pytest.mark.skipif(SHARED is None, reason="../shared is not beside this checkout")

REAL = SHARED / "data" / "real" if SHARED else None
TESTS = SHARED / "data" / "trec_eval_tests" if SHARED else None

SUITE = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank",
         "P.5,10,20,100,1000", "recall.10,100,1000", "ndcg", "ndcg_cut.5,10,20,100,1000",
         "ndcg_rel", "Rndcg"]
OFFICIAL = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
            "recip_rank", "P"]
ALL_TREC = OFFICIAL + ["recall", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "success"]
GRADED_SUITE = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank",
                "P", "recall", "ndcg", "ndcg_cut", "ndcg_rel", "Rndcg", "map_cut", "success"]
COUNTS = {"num_q", "num_ret", "num_rel", "num_rel_ret"}

REAL_PAIRS = {
    "dl19-passage.bm25": ("qrels.dl19-passage.txt",
                          "run.msmarco-v1-passage.bm25-default.dl19.txt", {}),
    "dl19-passage.bm25.l2": ("qrels.dl19-passage.txt",
                             "run.msmarco-v1-passage.bm25-default.dl19.txt",
                             {"relevance_level": 2}),
    "trec-covid-beir.bm25": ("qrels.beir-v1.0.0-trec-covid.test.txt",
                             "run.beir.bm25-flat.trec-covid.txt", {}),
    "covid-complete.bm25": ("qrels.covid-complete.txt", "run.beir.bm25-flat.trec-covid.txt", {}),
}
if REAL is not None:
    for path in sorted((REAL / "runs" / "robust03").glob("input.*.gz")):
        name = path.name[len("input."):-len(".gz")]
        REAL_PAIRS[f"robust03.{name}"] = ("qrels.robust03.txt", f"robust03/{path.name}", {})


def read_expected(path: Path) -> dict:
    """{(measure, topic): printed value} from a ``trec_eval -q`` output file."""
    expected = {}
    for line in path.read_text().splitlines():
        measure, topic, value = line.split("\t")
        expected[(measure.strip(), topic)] = value
    return expected


def trec_format(measure: str, value) -> str:
    if measure in COUNTS:
        return str(int(round(value)))
    return f"{value:6.4f}"


def compare(expected: dict, result, exact: bool) -> int:
    """Check every expected line of a measure we computed; return how many."""
    per_topic = result.per_topic()
    names = set(result.values)
    compared = 0
    mismatches = []
    for (measure, topic), printed in expected.items():
        if measure == "runid":
            assert printed == result.run_tag
            continue
        if measure not in names:
            continue
        ours = result.means[measure] if topic == "all" else per_topic[topic][measure]
        compared += 1
        if exact:
            if float(printed) != ours:
                mismatches.append((measure, topic, printed, repr(ours)))
        elif trec_format(measure, ours) != printed:
            mismatches.append((measure, topic, printed, trec_format(measure, ours)))
    assert not mismatches, f"{len(mismatches)} of {compared} differ, e.g. {mismatches[:5]}"
    assert compared > 0
    return compared


def run_real(name: str, precision: str, measures: list):
    qrels, run, options = REAL_PAIRS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        return evaluate(REAL / "qrels" / qrels, REAL / "runs" / run, measures,
                        score_precision=precision, **options)


@pytest.mark.parametrize("name", sorted(REAL_PAIRS))
def test_real_runs_trec_eval_10_full_precision(name):
    result = run_real(name, "float64", SUITE + ["dcg", "ideal_dcg"])
    compare(read_expected(REAL / "expected" / f"{name}.v10.fp.q"), result, exact=True)
    compare(read_expected(REAL / "expected" / f"{name}.v10.q"), result, exact=False)


@pytest.mark.parametrize("name", sorted(REAL_PAIRS))
def test_real_runs_trec_eval_9_full_precision(name):
    result = run_real(name, "float32", SUITE)
    compare(read_expected(REAL / "expected" / f"{name}.v908.fp.q"), result, exact=True)


def test_float32_and_float64_differ_where_trec_eval_versions_do():
    """InexpC2 has scores equal only as 32-bit floats: the two modes must differ there."""
    v10 = run_real("robust03.InexpC2", "float64", ["map"]).values["map"]
    v908 = run_real("robust03.InexpC2", "float32", ["map"]).values["map"]
    assert (v10 != v908).any()


# trec_eval's own test suite: (expected file, qrels, run, measures, options, precision)
UPSTREAM = [
    ("out.test", "qrels.test", "results.test", OFFICIAL, {}),
    ("out.test", "qrels.test.with-comments", "results.test", OFFICIAL, {}),
    ("out.comment.test", "qrels.comment.test", "results.comment.test", OFFICIAL, {}),
    ("out.test.a", "qrels.test", "results.test", ALL_TREC, {}),
    ("out.test.aq", "qrels.test", "results.test", ALL_TREC, {}),
    ("out.test.aqc", "qrels.test", "results.trunc", ALL_TREC, {"topics": "qrels"}),
    ("out.test.aqcM", "qrels.test", "results.trunc", ALL_TREC, {"topics": "qrels", "depth": 100}),
    ("out.test.aql", "qrels.rel_level", "results.test", ALL_TREC, {"relevance_level": 2}),
    ("out.test.meas_params", "qrels.test", "results.test",
     ["P.5,7,3", "recall.20,2000", "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4",
      "success.2,5,20"], {}),
]
PAIRS = {"test": ("qrels.test", "results.test"), "rel_level": ("qrels.rel_level", "results.test"),
         "rag24": ("qrels.comment.test", "results.comment.test")}
EXP_GAINS = "0=0,1=1,2=3,3=7,4=15"
for pair, (qrels, run) in PAIRS.items():
    UPSTREAM += [
        (f"generated/v10.graded_suite.{pair}.q", qrels, run, GRADED_SUITE + ["dcg", "ideal_dcg"], {}),
        (f"generated/v10.ndcg_exp_gains.{pair}.q", qrels, run,
         [f"ndcg.{EXP_GAINS}", f"ndcg_rel.{EXP_GAINS}", f"Rndcg.{EXP_GAINS}"], {}),
        (f"generated/v10.l2.{pair}.q", qrels, run,
         ["num_rel", "num_rel_ret", "map", "P.5,10", "recip_rank", "Rprec", "ndcg", "ndcg_cut.10"],
         {"relevance_level": 2}),
        (f"generated/v10.J.{pair}.q", qrels, run,
         ["num_ret", "map", "P.10", "ndcg", "ndcg_cut.10"], {"judged_only": True}),
        (f"generated/v10.M10.{pair}.q", qrels, run,
         ["num_ret", "map", "P.10,20", "ndcg", "ndcg_cut.10,20", "recip_rank"], {"depth": 10}),
    ]
UPSTREAM += [
    ("generated/v10.graded_suite.c.trunc.q", "qrels.test", "results.trunc",
     GRADED_SUITE + ["dcg", "ideal_dcg"], {"topics": "qrels"}),
]


@pytest.mark.parametrize("expected_file, qrels, run, measures, options", UPSTREAM,
                         ids=[f"{case[0]}:{case[1]}" for case in UPSTREAM])
def test_trec_eval_test_suite(expected_file, qrels, run, measures, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        result = evaluate(TESTS / qrels, TESTS / run, measures, **options)
    compare(read_expected(TESTS / expected_file), result, exact=False)


V908 = [
    ("v9.0.8_expected/out.test.aq", "qrels.test", "results.test", ALL_TREC, {}),
    ("v9.0.8_expected/out.test.aql", "qrels.rel_level", "results.test", ALL_TREC,
     {"relevance_level": 2}),
    ("generated/v908.graded_suite.rag24.q", "qrels.comment.test", "results.comment.test",
     GRADED_SUITE, {}),
    ("generated/v908.graded_suite.noc.trunc.q", "qrels.test", "results.trunc", GRADED_SUITE, {}),
]


@pytest.mark.parametrize("expected_file, qrels, run, measures, options", V908,
                         ids=[case[0] for case in V908])
def test_trec_eval_9_outputs(expected_file, qrels, run, measures, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        result = evaluate(TESTS / qrels, TESTS / run, measures, score_precision="float32",
                          **options)
    compare(read_expected(TESTS / expected_file), result, exact=False)
