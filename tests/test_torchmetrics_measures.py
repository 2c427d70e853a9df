"""torchmetrics' retrieval measures (cumgain.measures.torchmetrics): worked examples
computed by hand from torchmetrics 1.9's definitions, the edge cases (no relevant, no
non-relevant, k beyond the ranking, empty_target_action), ties, parameter errors, and a
differential test against torchmetrics itself where it imports (it is not a test
dependency)."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from cumgain import InputError, evaluate
from cumgain.measures import parse_measure

# q1: ranked d1..d6 (scores 6..1); relevant (level >= 1): d1, d3, d6; d2 judged 0, d4
# and d5 not in the qrels; d7 is relevant but unretrieved, which torchmetrics never
# sees: rel = [1, 0, 1, 0, 0, 1], 3 non-relevant.
# q2: no relevant document retrieved (e1 judged 0, e2 not judged), rel = [0, 0].
# q3: every retrieved document relevant, rel = [1, 1].
QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2, "d6": 1, "d7": 1},
         "q2": {"e1": 0, "e3": 1},
         "q3": {"f1": 1, "f2": 1}}
RUN = {"q1": {f"d{i}": float(7 - i) for i in range(1, 7)},
       "q2": {"e1": 2.0, "e2": 1.0},
       "q3": {"f1": 2.0, "f2": 1.0}}


def values(spelling, qrels=QRELS, run=RUN, **policies) -> dict:
    result = evaluate(qrels, run, [spelling], warn=False, **policies)
    return dict(zip(result.topics, result.values[spelling].tolist()))


def mean(spelling, qrels=QRELS, run=RUN, **policies) -> float:
    return evaluate(qrels, run, [spelling], warn=False, **policies).means[spelling]


@pytest.mark.parametrize("spelling, expected", [
    # non-relevant in the top k / non-relevant retrieved (3 in q1, 2 in q2); q3 has none:
    # empty_target_action='pos', 1
    ("FallOut@2", {"q1": 1 / 3, "q2": 1.0, "q3": 1.0}),       # q1: d2; q2: e1, e2
    ("FallOut@4", {"q1": 2 / 3, "q2": 1.0, "q3": 1.0}),       # q1: d2, d4
    ("RetrievalFallOut@1", {"q1": 0.0, "q2": 0.5, "q3": 1.0}),
    ("FallOut", {"q1": 1.0, "q2": 1.0, "q3": 1.0}),
    ("FallOut(empty_target_action='neg')@2", {"q1": 1 / 3, "q2": 1.0, "q3": 0.0}),
    # q1: pairs (relevant above non-relevant): d1 over 3, d3 over d4 and d5, d6 over
    # none: 5 of 3 * 3; q2 has no relevant (0), q3 no non-relevant (0)
    ("AUROC", {"q1": 5 / 9, "q2": 0.0, "q3": 0.0}),
    ("AUROC@4", {"q1": 3 / 4, "q2": 0.0, "q3": 0.0}),         # rel 1,0,1,0: 3 of 2 * 2
    ("RetrievalAUROC@1", {"q1": 0.0, "q2": 0.0, "q3": 0.0}),  # no negative in the top 1
    ("AUROC(empty_target_action='pos')", {"q1": 5 / 9, "q2": 1.0, "q3": 0.0}),
    # partial AUC to 0.5: ROC (0,0) (0,1/3) (1/3,1/3) (1/3,2/3) (2/3,2/3) ...: area up to
    # fpr 0.5 = 1/3 * 1/3 + 1/6 * 2/3 = 2/9; McClish: 0.5 (1 + (2/9 - 1/8) / (1/2 - 1/8))
    # = 0.5 (1 + 7/27) = 17/27
    ("AUROC(max_fpr=0.5)", {"q1": 17 / 27, "q2": 0.0, "q3": 0.0}),
    ("AUROC(max_fpr=1)", {"q1": 5 / 9, "q2": 0.0, "q3": 0.0}),
    # (1/found(k)) sum over relevant ranks of found(i)/i: q1 ranks 1, 3, 6:
    # (1 + 2/3 + 3/6) / 3 = 13/18 (trec_eval's AP divides by R = 4: 13/24)
    ("RetrievalMAP", {"q1": 13 / 18, "q2": 0.0, "q3": 1.0}),
    ("RetrievalMAP@4", {"q1": (1 + 2 / 3) / 2, "q2": 0.0, "q3": 1.0}),
    ("RetrievalMAP(top_k=2)", {"q1": 1.0, "q2": 0.0, "q3": 1.0}),
    ("RetrievalMAP(empty_target_action='pos')", {"q1": 13 / 18, "q2": 1.0, "q3": 1.0}),
    # found(k) / k
    ("RetrievalPrecision@4", {"q1": 2 / 4, "q2": 0.0, "q3": 2 / 4}),
    ("RetrievalPrecision@10", {"q1": 3 / 10, "q2": 0.0, "q3": 2 / 10}),
    ("RetrievalPrecision(adaptive_k=True)@10", {"q1": 3 / 6, "q2": 0.0, "q3": 2 / 2}),
    ("RetrievalPrecision(adaptive_k=True)@4", {"q1": 2 / 4, "q2": 0.0, "q3": 2 / 2}),
    ("RetrievalPrecision", {"q1": 3 / 6, "q2": 0.0, "q3": 2 / 2}),     # k = N
])
def test_worked_examples(spelling, expected):
    got = values(spelling)
    assert got.keys() == expected.keys()
    for topic, value in expected.items():
        assert got[topic] == pytest.approx(value, abs=1e-15), topic


def test_not_the_trec_measures_of_the_same_name():
    # trec_eval's AP divides by R (4 in q1, counting the unretrieved d7), P@10 is the
    # same as RetrievalPrecision@10, adaptive_k is not
    assert values("AP")["q1"] == pytest.approx(13 / 24)
    assert values("P@10") == values("RetrievalPrecision@10")


def test_skip_leaves_the_topic_out_of_the_mean():
    # FallOut: q3 has no non-relevant document; the others 1/3 (q1) and 1 (q2)
    result = evaluate(QRELS, RUN, ["FallOut(empty_target_action='skip')@2"], warn=False)
    name = "FallOut(empty_target_action='skip')@2"
    assert math.isnan(result.values[name][2])
    assert result.means[name] == pytest.approx((1 / 3 + 1) / 2)
    assert name not in result.per_topic()["q3"]
    # RetrievalMAP: q2 has no relevant document
    assert mean("RetrievalMAP(empty_target_action='skip')") == pytest.approx((13 / 18 + 1) / 2)


def test_top_k_is_the_cutoff():
    for family in ("FallOut", "AUROC", "RetrievalMAP", "RetrievalPrecision"):
        (measure,) = parse_measure(f"{family}(top_k=3)")
        assert measure.cutoff == 3
        assert values(f"{family}(top_k=3)") == values(f"{family}@3")


def test_rel_and_judged_only():
    # rel=2: only d3 is relevant in q1; rel = [0, 0, 1, 0, 0, 0]: 5 non-relevant
    assert values("FallOut(rel=2)@3")["q1"] == pytest.approx(2 / 5)
    assert values("RetrievalMAP(rel=2)")["q1"] == pytest.approx(1 / 3)
    # judged_only: q1 keeps d1, d2, d3, d6: rel = [1, 0, 1, 1], one non-relevant
    assert values("FallOut(judged_only=True)@1")["q1"] == 0.0
    # AUROC: of the 3 (relevant, d2) pairs only d1's has the relevant one above: 1/3
    assert values("AUROC(judged_only=True)")["q1"] == pytest.approx(1 / 3)


def test_empty_ranking():
    # q4 is in the qrels only: no documents, no target of either kind
    qrels = dict(QRELS, q4={"g1": 1})
    got = {s: values(s, qrels=qrels, topics="qrels")["q4"] for s in
           ("FallOut@5", "AUROC@5", "RetrievalMAP@5", "RetrievalPrecision@5",
            "RetrievalPrecision(adaptive_k=True)@5", "RetrievalPrecision")}
    assert got == {"FallOut@5": 1.0, "AUROC@5": 0.0, "RetrievalMAP@5": 0.0,
                   "RetrievalPrecision@5": 0.0, "RetrievalPrecision(adaptive_k=True)@5": 0.0,
                   "RetrievalPrecision": 0.0}


def test_auroc_counts_a_tied_pair_as_half_under_ties_expected():
    # scores 3, 2, 2, 1 with rel 1, 0, 1, 0: a over b and d (2), c over d (1), the tied
    # pair (b, c) 1/2 as torchmetrics counts it: 3.5 / 4. The rules that order the tie
    # count the pair as ordered: docno_desc puts c first (4/4), docno_asc b (3/4).
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": 0}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}}
    assert values("AUROC", qrels, run, ties="expected")["q"] == 0.875
    assert values("AUROC", qrels, run)["q"] == 1.0
    assert values("AUROC", qrels, run, ties="docno_asc")["q"] == 0.75
    assert values("AUROC", qrels, run, ties="pessimistic")["q"] == 0.75
    with pytest.raises(InputError, match="ties='expected'"):
        values("AUROC", qrels, run, ties="average")


def test_ties_expected():
    # a (2, relevant), then b (relevant), c, d (non-relevant) tied at 1. Top 2: a and
    # one of b, c, d. docno_desc puts d first: {a, d}: AUROC 1. Expected: b with
    # probability 1/3 (no negative: 0), else 1: 2/3.
    qrels = {"q": {"a": 1, "b": 1, "c": 0, "d": 0}}
    run = {"q": {"a": 2.0, "b": 1.0, "c": 1.0, "d": 1.0}}
    assert values("AUROC@2", qrels, run)["q"] == 1.0
    assert values("AUROC@2", qrels, run, ties="expected")["q"] == pytest.approx(2 / 3)
    # FallOut@2: E[non-relevant in the top 2] = 2/3, of 2: 1/3; precision: (1 + 1/3) / 2
    assert values("FallOut@2", qrels, run, ties="expected")["q"] == pytest.approx(1 / 3)
    assert values("RetrievalPrecision@2", qrels, run, ties="expected")["q"] == \
        pytest.approx(2 / 3)
    assert values("FallOut@2", qrels, run, ties="average")["q"] == pytest.approx(1 / 3)
    for ties in ("expected", "average"):
        with pytest.raises(InputError, match="ties="):
            values("RetrievalMAP@2", qrels, run, ties=ties)
    # the partial AUC is not linear in the orders: refused
    with pytest.raises(InputError, match="no exact expectation.*ties='optimistic'"):
        values("AUROC(max_fpr=0.5)", qrels, run, ties="expected")
    assert values("AUROC(max_fpr=1)@2", qrels, run, ties="expected")["q"] == \
        pytest.approx(2 / 3)


@pytest.mark.parametrize("spelling, message", [
    ("AUROC(max_fpr=0)", "max_fpr must be a number in \\(0, 1\\]"),
    ("AUROC(max_fpr=1.5)", "max_fpr must be"),
    ("AUROC(max_fpr=True)", "max_fpr must be"),
    ("RetrievalPrecision(adaptive_k=1)@5", "adaptive_k must be True or False"),
    ("FallOut(empty_target_action='error')", "empty_target_action must be"),
    ("FallOut(empty_target_action=neg2)", "empty_target_action must be"),
    ("FallOut(top_k=0)", "top_k must be a whole number >= 1"),
    ("FallOut(top_k=2.5)", "top_k must be"),
    ("FallOut(top_k=5)@5", "give the cut-off once"),
    ("FallOut@0", "cut-off must be a whole number >= 1"),
    ("RetrievalMAP(max_fpr=0.5)", "does not take 'max_fpr'"),
    ("FallOut(adaptive_k=True)", "does not take 'adaptive_k'"),
])
def test_bad_parameters(spelling, message):
    with pytest.raises(InputError, match=message):
        parse_measure(spelling)


# ---------------------------------------------------------------- against torchmetrics

def _random_collection(rng: random.Random, n_topics: int):
    """Topics of 1 to 25 ranked documents with distinct scores in (0, 1) (torchmetrics
    orders ties arbitrarily and zeroes the target of a score <= 0 in AP and precision);
    levels 0 to 2, some documents not in the qrels (non-relevant for both), some
    relevant ones unretrieved (which torchmetrics never sees)."""
    qrels, run = {}, {}
    for t in range(n_topics):
        n = rng.randint(1, 25)
        scores = rng.sample(range(1, 10 ** 6), n)
        run[f"q{t}"] = {f"d{i}": s / 10 ** 6 for i, s in enumerate(scores)}
        style = rng.random()    # some topics all relevant, some without a relevant one
        judged = {}
        for i in range(n + 3):
            if style < 0.1:
                judged[f"d{i}"] = 1
            elif style < 0.2:
                judged[f"d{i}"] = 0
            elif rng.random() < 0.8:
                judged[f"d{i}"] = rng.choice([0, 0, 1, 2])
        qrels[f"q{t}"] = judged or {"d0": 0}
    return qrels, run


def _targets(qrels, run, topic):
    docs = list(run[topic])
    return (np.array([run[topic][d] for d in docs]),
            np.array([int(qrels[topic].get(d, 0) >= 1) for d in docs]))


def test_against_torchmetrics():
    torch = pytest.importorskip("torch")
    tm = pytest.importorskip("torchmetrics.retrieval")
    rng = random.Random(20240917)
    qrels, run = _random_collection(rng, 300)
    topics = sorted(run)
    preds, target, indexes = [], [], []
    for t, topic in enumerate(topics):
        p, y = _targets(qrels, run, topic)
        preds += p.tolist()
        target += y.tolist()
        indexes += [t] * len(p)
    preds = torch.tensor(preds, dtype=torch.float64)
    target = torch.tensor(target)
    indexes = torch.tensor(indexes)
    cases = []
    for k in (None, 1, 3, 10, 30):
        top = {} if k is None else {"top_k": k}
        at = "" if k is None else f"@{k}"
        for action in ("neg", "pos", "skip"):
            option = {"empty_target_action": action}
            cases += [
                (tm.RetrievalFallOut(**top, **option), f"FallOut(empty_target_action='{action}'){at}"),
                (tm.RetrievalAUROC(**top, **option), f"AUROC(empty_target_action='{action}'){at}"),
                (tm.RetrievalMAP(**top, **option), f"RetrievalMAP(empty_target_action='{action}'){at}"),
                (tm.RetrievalPrecision(**top, **option),
                 f"RetrievalPrecision(empty_target_action='{action}'){at}")]
        cases += [(tm.RetrievalFallOut(**top), f"FallOut{at}"),
                  (tm.RetrievalAUROC(**top), f"AUROC{at}"),
                  (tm.RetrievalMAP(**top), f"RetrievalMAP{at}"),
                  (tm.RetrievalPrecision(**top), f"RetrievalPrecision{at}"),
                  (tm.RetrievalPrecision(**top, adaptive_k=True),
                   f"RetrievalPrecision(adaptive_k=True){at}")]
        for fpr in (0.1, 0.5, 0.75):
            cases.append((tm.RetrievalAUROC(**top, max_fpr=fpr), f"AUROC(max_fpr={fpr}){at}"))
    result = evaluate(qrels, run, [name for _, name in cases], warn=False)
    assert list(result.topics) == topics
    for metric, name in cases:
        assert result.means[name] == pytest.approx(
            float(metric(preds, target, indexes=indexes)), abs=1e-5), name
        # per topic: the metric with the identity as its aggregation
        metric = type(metric)(**_arguments(metric), aggregation=lambda x, dim=None: x)
        per_topic = metric(preds, target, indexes=indexes).numpy()
        ours = result.values[name]
        ours = ours[~np.isnan(ours)]
        assert np.abs(per_topic - ours).max() < 1e-5, name


def _arguments(metric) -> dict:
    arguments = {"empty_target_action": metric.empty_target_action}
    for key in ("top_k", "max_fpr", "adaptive_k"):
        if hasattr(metric, key):
            arguments[key] = getattr(metric, key)
    if hasattr(metric, "k"):        # RetrievalMAP keeps top_k as k
        arguments["top_k"] = metric.k
    return arguments
