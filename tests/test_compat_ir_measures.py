"""cumgain as an ir_measures provider (cumgain.compat.ir_measures), and the tools built
on ir_measures and pytrec_eval running on cumgain: PyTerrier's pt.Experiment, BEIR's
EvaluateRetrieval.evaluate.

The harness: every measure of ir_measures' registry that the provider supports, with
the parameters ir_measures' own tests use, computed by the provider ir_measures' default
pipeline would use and by cumgain's, on the inputs of ir_measures' provider tests (small
literal qrels and runs) and on generated ones (ties, unjudged and negative judgments,
topics on one side only): the same topics, the same values bit for bit, except where a
documented difference applies (gdeval prints ERR to 5 decimals; the compat provider's
value depends on the order of the qrels, given here in docno order)."""
from __future__ import annotations

import math
import random

import pytest

ir_measures = pytest.importorskip("ir_measures")
from ir_measures import (AP, BPM, ERR, INSQ, INST, NERR8, NERR9, NERR10, NERR11,  # noqa: E402
                         RBP, RR, SDCG, Bpref, Compat, IPrec, Judged, NumQ, NumRel,
                         NumRet, P, R, Rprec, SetAP, SetF, SetP, SetR, Success, alpha_nDCG,
                         infAP, nDCG)
from ir_measures.providers import registry  # noqa: E402

from cumgain.compat import ir_measures as provider_module  # noqa: E402

PROVIDER = provider_module.PROVIDER

MEASURES = [nDCG, nDCG@10, nDCG@5, nDCG(judged_only=True)@10, nDCG(gains={0: 0, 1: 1, 2: 5})@10,
            nDCG(gains={2: 5})@10, AP, AP@100, AP(rel=2), AP(judged_only=True), P@5, P@10,
            P(rel=2)@5, R@10, R@100, RR, RR(rel=2), Rprec, Rprec(rel=2), Bpref, infAP,
            SetP, SetP(rel=2), SetP(relative=True), SetR, SetAP, SetF, SetF(beta=0.5),
            IPrec@0.0, IPrec@0.3, IPrec@1.0, Success@1, Success@5, NumQ, NumRel, NumRet,
            NumRet(rel=1), NumRet(rel=2), Judged@5, Judged@10, RR@10, ERR@5, ERR@20,
            Compat, Compat(p=0.8), RBP(rel=1), RBP(rel=1, p=0.5), SDCG(max_rel=3)@10,
            INST(max_rel=3), INSQ(max_rel=3), NERR8(max_rel=3)@10, NERR9(max_rel=3)@10,
            NERR10(max_rel=3, p=0.8), NERR11(max_rel=3, T=2.0), BPM(max_rel=3)@10]

# ir_measures' provider tests' literal inputs (the shape of tests/test_pytrec_eval.py)
LITERAL_QRELS = {"0": {"D0": 0, "D1": 1, "D2": 1, "D3": 2, "D4": 0},
                 "1": {"D0": 1, "D3": 2, "D5": 2}}
LITERAL_RUN = {"0": {"D0": 0.8, "D2": 0.7, "D1": 0.3, "D3": 0.4, "D4": 0.1},
               "1": {"D1": 0.8, "D3": 0.7, "D4": 0.3, "D2": 0.4}}


def generated(seed: int) -> tuple:
    """Qrels (each topic's judgments in docno order) and a run: levels -1..3, scores on
    a coarse grid (ties), unjudged documents, a qrels topic the run lacks, a run topic
    the qrels lack, a topic without a relevant judgment."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for topic in range(1, rng.randint(3, 9)):
        docs = [f"d{i:02d}" for i in range(rng.randint(2, 30))]
        judged = sorted(rng.sample(docs, rng.randint(1, len(docs))))
        qrels[str(topic)] = {doc: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for doc in judged}
        retrieved = rng.sample(docs, rng.randint(1, len(docs)))
        run[str(topic)] = {doc: rng.choice([s / 4 for s in range(1, 9)]) for doc in retrieved}
    qrels["900"] = {"d01": 2, "d02": 0}
    qrels["901"] = {"d01": 0}
    run["901"] = {"d01": 1.0, "d02": 0.5}
    run["902"] = {"d01": 1.0}
    return qrels, run


def reference_provider(measure):
    return registry[provider_module._reference_provider(measure)]


def tolerance(reference, value: float) -> float:
    """0, but where a documented difference applies: gdeval prints ERR with 5 decimals
    (half up); cwl_eval takes its last sum with a BLAS dot product in a machine-dependent
    order, cumgain exactly: at most 2 units in the last place."""
    if reference.NAME == "gdeval":
        return 5.000001e-6
    if reference.NAME == "cwl_eval":
        return 2 * math.ulp(value)
    return 0.0


def metrics(provider, measure, qrels, run) -> dict:
    return {(m.query_id, str(m.measure)): m.value
            for m in provider.iter_calc([measure], qrels, run)}


def test_the_provider_supports_what_it_should():
    supported = [m for m in MEASURES if PROVIDER.supports(m)]
    assert len(supported) == len(MEASURES)
    assert not PROVIDER.supports(alpha_nDCG@10)       # subtopic judgments: pyndeval's


@pytest.mark.parametrize("seed", ["literal"] + list(range(8)))
@pytest.mark.parametrize("measure", MEASURES, ids=str)
def test_each_measure_is_its_reference_provider(measure, seed):
    qrels, run = (LITERAL_QRELS, LITERAL_RUN) if seed == "literal" else generated(seed)
    reference = reference_provider(measure)
    if not reference.is_available():
        pytest.skip(f"ir_measures' {reference.NAME} provider is not available here")
    expected = metrics(reference, measure, qrels, run)
    got = metrics(PROVIDER, measure, qrels, run)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert abs(got[key] - value) <= tolerance(reference, value), (key, got[key], value)
    if reference.NAME not in ("gdeval", "cwl_eval"):   # the means too, bit for bit: the
        # topics come in the run's order
        assert PROVIDER.calc_aggregate([measure], qrels, run) == \
            reference.calc_aggregate([measure], qrels, run)


def test_every_input_form_gives_the_same_metrics():
    """Dicts, DataFrames, lists of Qrel / ScoredDoc namedtuples and generators of them
    (read once)."""
    pd = pytest.importorskip("pandas")
    qrels, run = generated(3)
    measures = [nDCG@10, AP, P@5, Judged@10, RBP(rel=1)]
    def listed(metrics_):
        return sorted((m.query_id, str(m.measure), m.value) for m in metrics_)

    expected = listed(PROVIDER.iter_calc(measures, qrels, run))
    qrel_rows = [ir_measures.Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    run_rows = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    qrels_frame = pd.DataFrame(qrel_rows)
    run_frame = pd.DataFrame(run_rows)
    for q, r in ((qrel_rows, run_rows), (iter(qrel_rows), iter(run_rows)),
                 (qrels_frame, run_frame), (qrels, run_frame), (qrel_rows, run)):
        evaluator = PROVIDER.evaluator(measures, q)
        assert listed(evaluator.iter_calc(r)) == expected
    evaluator = PROVIDER.evaluator(measures, iter(qrel_rows))
    assert listed(evaluator.iter_calc(run_rows)) == expected     # (several runs, one read)
    assert listed(evaluator.iter_calc(iter(run_rows))) == expected


def test_install_puts_cumgain_first_and_falls_back_for_the_rest(monkeypatch):
    qrels, run = generated(5)
    measures = [nDCG@10, AP, Judged@10, alpha_nDCG@10]
    qrels_rows = [ir_measures.GenericQrel(q, d, r) if hasattr(ir_measures, "GenericQrel")
                  else ir_measures.Qrel(q, d, r, "0")
                  for q, docs in qrels.items() for d, r in docs.items()]
    before = ir_measures.calc_aggregate(measures, qrels_rows, run)
    calls = []
    real = provider_module.CumgainEvaluator._iter_calc
    monkeypatch.setattr(provider_module.CumgainEvaluator, "_iter_calc",
                        lambda self, r: calls.append(len(self.measures)) or real(self, r))
    provider_module.install()
    try:
        assert ir_measures.DefaultPipeline.providers[0] is PROVIDER
        assert registry["cumgain"] is PROVIDER
        after = ir_measures.calc_aggregate(measures, qrels_rows, run)
        provider_module.install()                   # (twice: still once in the pipeline)
        assert ir_measures.DefaultPipeline.providers.count(PROVIDER) == 1
    finally:
        provider_module.uninstall()
    assert PROVIDER not in ir_measures.DefaultPipeline.providers
    assert calls == [3]                             # alpha_nDCG went to pyndeval
    assert after == before


@pytest.mark.slow
def test_pyterrier_experiment_is_the_same_table():
    """pt.Experiment on DataFrames of results (no Java needed for this call), with a
    baseline and a correction: the same table, and the same per-query values."""
    pt = pytest.importorskip("pyterrier")
    pd = pytest.importorskip("pandas")
    rng = random.Random(3)
    qrels = pd.DataFrame([(str(t), f"d{d}", rng.choice([0, 1, 2])) for t in rng.sample(range(20), 20)
                          for d in rng.sample(range(40), 15)], columns=["qid", "docno", "label"])

    def results(seed):
        r = random.Random(seed)
        return pd.DataFrame([(str(t), f"d{d}", r.random()) for t in r.sample(range(20), 20)
                             for d in r.sample(range(40), 25)], columns=["qid", "docno", "score"])

    runs = [results(1), results(2)]
    topics = pd.DataFrame({"qid": [str(t) for t in range(20)], "query": ["q"] * 20})
    measures = [nDCG@10, AP, P@5, RR, R@20]
    tables = []
    for installed in (False, True):
        if installed:
            provider_module.install()
        try:
            tables.append((pt.Experiment(runs, topics, qrels, measures, names=["a", "b"],
                                         baseline=0, correction="holm"),
                           pt.Experiment(runs, topics, qrels, measures, names=["a", "b"],
                                         perquery=True)))
        finally:
            provider_module.uninstall()
    (before, per_query_before), (after, per_query_after) = tables
    columns = sorted(before.columns)
    assert before[columns].equals(after[columns])
    key = ["name", "qid", "measure"]
    assert per_query_before.sort_values(key).reset_index(drop=True).equals(
        per_query_after.sort_values(key).reset_index(drop=True))


def test_beir_evaluate_runs_on_the_pytrec_eval_drop_in():
    """BEIR imports pytrec_eval itself: after install(), `import pytrec_eval` gives the
    drop-in (for modules imported from then on) and the numbers are the same."""
    import importlib
    import sys
    pytest.importorskip("pytrec_eval")
    evaluation = pytest.importorskip("beir.retrieval.evaluation")
    from cumgain.compat import pytrec_eval as drop_in
    rng = random.Random(5)
    qrels = {str(t): {f"d{d}": rng.choice([0, 1, 2]) for d in rng.sample(range(60), 20)}
             for t in range(50)}
    results = {str(t): {f"d{d}": rng.random() for d in rng.sample(range(60), 50)}
               for t in range(50)}
    before = evaluation.EvaluateRetrieval.evaluate(qrels, results, [1, 3, 5, 10, 100])
    real = sys.modules["pytrec_eval"]
    drop_in.install()
    try:
        assert importlib.import_module("pytrec_eval") is drop_in
        reloaded = importlib.reload(evaluation)
        assert reloaded.pytrec_eval is drop_in
        after = reloaded.EvaluateRetrieval.evaluate(qrels, results, [1, 3, 5, 10, 100])
    finally:
        drop_in.uninstall()
        importlib.reload(evaluation)
    assert sys.modules["pytrec_eval"] is real
    assert after == before
