"""NTCIREVAL's measures (Q, O, P, P+, NCU, nERR, iRBU, GAP, MSnDCG, JKnDCG): per-topic differential
tests against pyNTCIREVAL (NTCIREVAL's Python port) on generated inputs and on
../shared/data/real, hand-computed cases from the published formulas, properties, the
kernels' argument checks and parameter errors.

pyNTCIREVAL takes a ranked list of (docno, level) with no scores: it is given the
ranking cumgain makes (trec_eval's tie rule: docno descending). A document judged with
a negative level is unjudged to cumgain (gain 0, not in the ideal): pyNTCIREVAL gets
it unlabelled. Where pyNTCIREVAL divides by zero (no relevant judgment: nERR and the
nDCGs) or fails (an empty ranked list), cumgain gives 0."""
from __future__ import annotations

import math
import random
import sys
from fractions import Fraction

import numpy as np
import pytest

from cgcore import _graded_extra as kernels
from cumgain import InputError, evaluate

ntcireval = pytest.importorskip("pyNTCIREVAL")
from pyNTCIREVAL import Labeler  # noqa: E402
from pyNTCIREVAL.metrics import (  # noqa: E402
    AP,
    MSnDCG,
    NCUguBR,
    NCUguP,
    NCUrbBR,
    NCUrbP,
    QMeasure,
    nDCG,
    nERR,
)


def cumgain_values(spelling: str, qrels, run, **policies) -> dict:
    result = evaluate(qrels, run, [spelling], topics="qrels", warn=False, **policies)
    return dict(zip(result.topics, result.values[result.measures[0].name].tolist()))


def ranking_of(docs: dict) -> list:
    """trec_eval's order: score descending, docno descending among equal scores."""
    return sorted(sorted(docs, reverse=True), key=lambda doc: -docs[doc])


def labelled(topic_qrels: dict, docs: dict, n_levels: int) -> tuple:
    """pyNTCIREVAL's inputs for one topic: the labelled ranked list and xrelnum."""
    judged = {doc: level for doc, level in topic_qrels.items() if level >= 0}
    labeler = Labeler(judged)
    return labeler.label(ranking_of(docs)), labeler.compute_per_level_doc_num(n_levels + 1)


def gains_spelling(grades: list) -> str:
    return "{" + ", ".join(f"{level}: {gain}" for level, gain in
                           enumerate([0] + list(grades))) + "}"


def generated(seed: int, n_levels: int = 3) -> tuple:
    rng = random.Random(seed)
    qrels, run = {}, {}
    for topic in range(rng.randint(2, 7)):
        docs = [f"d{i:02d}" for i in range(rng.randint(1, 30))]
        judged = rng.sample(docs, rng.randint(0, len(docs)))
        no_relevant = rng.random() < 0.15
        qrels[f"t{topic}"] = {doc: (rng.choice([-1, 0]) if no_relevant else
                                    rng.choice([-1] + list(range(n_levels + 1))))
                              for doc in judged} or {"d99": 1}
        retrieved = rng.sample(docs, rng.randint(1, len(docs)))
        run[f"t{topic}"] = {doc: rng.choice([s / 4 for s in range(-2, 7)]) for doc in retrieved}
    qrels["missing"] = {"d01": n_levels, "d02": 0}         # not in the run: an empty ranking
    return qrels, run


def has_relevant(topic_qrels: dict) -> bool:
    return any(level > 0 for level in topic_qrels.values())


def compare(seed: int, grades: list, spelling: str, reference, *, exact: bool,
            normalised: bool = False):
    qrels, run = generated(seed, len(grades))
    ours = cumgain_values(spelling, qrels, run)
    assert set(ours) == set(qrels)
    for topic, value in ours.items():
        if normalised and not has_relevant(qrels[topic]):
            assert value == 0.0
            continue
        ranked, xrelnum = labelled(qrels[topic], run.get(topic, {}), len(grades))
        if not ranked:      # pyNTCIREVAL fails on an empty list (max() of nothing)
            assert value == 0.0
            continue
        expected = reference(xrelnum).compute(ranked)
        if exact:
            assert value == expected, (topic, value, expected)
        else:
            assert value == pytest.approx(expected, rel=1e-13, abs=1e-15), topic


GRADES = [[1, 2, 3], [1, 3, 7], [2, 5, 9], [1, 1, 4]]


# ---------------------------------------------------------------- against pyNTCIREVAL

@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("grades", GRADES)
@pytest.mark.parametrize("beta, cutoff", [(1.0, None), (1.0, 5), (0.5, 10), (0.0, None),
                                          (3.0, 1)])
def test_q_measure_is_pyntcireval_exactly(seed, grades, beta, cutoff):
    at = "" if cutoff is None else f"@{cutoff}"
    compare(seed, grades, f"Q(beta={beta}, gains={gains_spelling(grades)}){at}",
            lambda xrelnum: QMeasure(xrelnum, grades, beta, cutoff), exact=True)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("cutoff", [None, 3, 10])
def test_q_with_beta_zero_is_pyntcirevals_ap(seed, cutoff):
    at = "" if cutoff is None else f"@{cutoff}"
    compare(seed, [1, 2, 3], f"Q(beta=0){at}", lambda xrelnum: AP(xrelnum, [1, 2, 3], cutoff),
            exact=True)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("grades", GRADES)
@pytest.mark.parametrize("cutoff", [1, 5, 20, 1000])
def test_nerr_is_pyntcireval_exactly(seed, grades, cutoff):
    compare(seed, grades, f"nERR(gains={gains_spelling(grades)})@{cutoff}",
            lambda xrelnum: nERR(xrelnum, grades, cutoff), exact=True, normalised=True)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("grades", GRADES)
@pytest.mark.parametrize("cutoff", [1, 5, 20])
def test_ms_ndcg_is_pyntcireval(seed, grades, cutoff):
    """pyNTCIREVAL divides by ln(i + 1) and multiplies by 1/discount: equal to 1e-13."""
    compare(seed, grades, f"MSnDCG(gains={gains_spelling(grades)})@{cutoff}",
            lambda xrelnum: MSnDCG(xrelnum, grades, cutoff), exact=False, normalised=True)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("grades", GRADES)
@pytest.mark.parametrize("base, cutoff", [(2, 10), (2, 3), (10, 20), (3.5, 1000)])
def test_jk_ndcg_is_pyntcirevals_ndcg(seed, grades, base, cutoff):
    compare(seed, grades, f"JKnDCG(base={base}, gains={gains_spelling(grades)})@{cutoff}",
            lambda xrelnum: nDCG(xrelnum, grades, base, cutoff), exact=False,
            normalised=True)


# ---------------------------------------------------------------- real data

@pytest.fixture
def dl19(shared):
    real = shared / "data" / "real"
    qrels_path = real / "qrels" / "qrels.dl19-passage.txt"
    run_path = real / "runs" / "run.msmarco-v1-passage.bm25-default.dl19.txt"
    if not qrels_path.exists() or not run_path.exists():
        pytest.skip("the DL19 files are not in ../shared/data/real")
    qrels, run = {}, {}
    for line in qrels_path.read_text().splitlines():
        topic, _, doc, level = line.split()
        qrels.setdefault(topic, {})[doc] = int(level)
    for line in run_path.read_text().splitlines():
        topic, _, doc, _, score, _ = line.split()
        run.setdefault(topic, {})[doc] = float(score)
    return str(qrels_path), str(run_path), qrels, run


@pytest.mark.slow
@pytest.mark.parametrize("spelling, reference, exact, topics", [
    ("Q(gains={0:0,1:1,2:2,3:3})@100", lambda x: QMeasure(x, [1, 2, 3], 1.0, 100), True, 43),
    ("Q(gains={0:0,1:1,2:2,3:3})", lambda x: QMeasure(x, [1, 2, 3], 1.0), True, 12),
    ("nERR(gains={0:0,1:1,2:3,3:7})@20", lambda x: nERR(x, [1, 3, 7], 20), True, 43),
    ("nERR(max_rel=3)@1000", lambda x: nERR(x, [1, 2, 3], 1000), True, 43),
    ("MSnDCG@10", lambda x: MSnDCG(x, [1, 2, 3], 10), False, 43),
    ("JKnDCG@100", lambda x: nDCG(x, [1, 2, 3], 2, 100), False, 43),
])
def test_dl19_per_topic(dl19, spelling, reference, exact, topics):
    qrels_path, run_path, qrels, run = dl19
    ours = cumgain_values(spelling, qrels_path, run_path)
    assert len(ours) == 43
    for topic in sorted(ours)[:topics]:
        ranked, xrelnum = labelled(qrels[topic], run[topic], 3)
        expected = reference(xrelnum).compute(ranked)
        if exact:
            assert ours[topic] == expected, topic
        else:
            assert ours[topic] == pytest.approx(expected, rel=1e-13), topic


# ---------------------------------------------------------------- hand-computed

QRELS = {"1": {"a": 3, "b": 1, "c": 2, "d": 0, "j": -1}}
RUN = {"1": {"b": 4.0, "d": 3.0, "a": 2.0, "x": 1.0}}      # b (1), d (0), a (3), x (none)


def test_q_measure_hand_computed():
    """R = 3, ideal gains 3, 2, 1 (cg*: 3, 5, 6, 6). Rank 1: b, BR = (1 + 1) / (1 + 3);
    rank 3: a, BR = (2 + 4) / (3 + 6)."""
    assert cumgain_values("Q", QRELS, RUN)["1"] == pytest.approx((0.5 + 6 / 9) / 3, abs=1e-15)
    assert cumgain_values("Q@2", QRELS, RUN)["1"] == 0.5 / 2          # min(R, 2) = 2
    assert cumgain_values("Q(beta=0)", QRELS, RUN)["1"] == pytest.approx((1 + 2 / 3) / 3)
    assert cumgain_values("QMeasure(beta=2)", QRELS, RUN)["1"] == \
        pytest.approx(((1 + 2) / (1 + 6) + (2 + 8) / (3 + 12)) / 3, abs=1e-15)
    # gains: level 1 given no gain is not relevant any more (R = 2)
    assert cumgain_values("Q(gains={0:0,1:0,2:2,3:3})", QRELS, RUN)["1"] == \
        pytest.approx((1 + 3) / (3 + 5) / 2, abs=1e-15)


def err(probabilities: list) -> Fraction:
    total, decay = Fraction(0), Fraction(1)
    for rank, r in enumerate(probabilities, start=1):
        total += r * decay / rank
        decay *= 1 - r
    return total


def test_nerr_hand_computed():
    """R = g / (g_max + 1) = g / 4: run 1/4, 0, 3/4, 0; ideal 3/4, 2/4, 1/4."""
    quarter = Fraction(1, 4)
    run, ideal = [quarter, 0, 3 * quarter, 0], [3 * quarter, 2 * quarter, quarter]
    expected = err(run) / err(ideal)
    assert err(run) == Fraction(1, 4) + Fraction(3, 4) * Fraction(3, 4) / 3
    for spelling in ("nERR(max_rel=3)", "nERR(gains={0:0,1:1,2:2,3:3})",
                     "nERR(gains='0-1-2-3')@10"):
        assert cumgain_values(spelling, QRELS, RUN)["1"] == pytest.approx(float(expected),
                                                                          abs=1e-15)
    assert cumgain_values("nERR(max_rel=3)@1", QRELS, RUN)["1"] == \
        pytest.approx(float(err(run[:1]) / err(ideal[:1])), abs=1e-15)
    # exponential gains with max_rel: Chapelle et al.'s (2^g - 1) / 2^3
    eighth = Fraction(1, 8)
    chapelle = err([eighth, 0, 7 * eighth, 0]) / err([7 * eighth, 3 * eighth, eighth])
    assert cumgain_values("nERR(gains='exponential', max_rel=3)", QRELS, RUN)["1"] == \
        pytest.approx(float(chapelle), abs=1e-15)


def test_irbu_hand_computed():
    """sum_i p^i R_i prod_{j<i} (1 - R_j) - e sum_{i<=min(k, N)} p^i."""
    p = 0.99
    value = p * 0.25 + p ** 3 * 0.75 * 0.75
    assert cumgain_values("iRBU(max_rel=3)", QRELS, RUN)["1"] == pytest.approx(value, abs=1e-15)
    assert cumgain_values("iRBU(max_rel=3)@2", QRELS, RUN)["1"] == pytest.approx(p * 0.25)
    assert cumgain_values("iRBU(max_rel=3, p=0.5, e=0.1)@10", QRELS, RUN)["1"] == \
        pytest.approx(0.5 * 0.25 + 0.125 * 0.5625 - 0.1 * (0.5 + 0.25 + 0.125 + 0.0625),
                      abs=1e-15)
    # binary relevance, a single relevant document found at rank r: p^r / 2
    assert cumgain_values("iRBU(gains={0:0,1:1})", {"1": {"z": 1}},
                          {"1": {"y": 2.0, "z": 1.0}})["1"] == pytest.approx(p ** 2 / 2)


def graded_ap_by_thresholds(levels: list, judged: list, probabilities: dict) -> float:
    """GAP as Robertson et al. derive it: a user's relevance threshold is level j with
    probability pi_j; GAP = E[sum_n rel(n) prec(n)] / E[R] over the users."""
    numerator = denominator = 0.0
    for threshold, pi in probabilities.items():
        relevant = [level >= threshold for level in levels]
        found = 0
        for n, rel in enumerate(relevant, start=1):
            found += rel
            if rel:
                numerator += pi * found / n
        denominator += pi * sum(level >= threshold for level in judged)
    return numerator / denominator if denominator else 0.0


def test_gap_hand_computed():
    """Gains 1, 2, 3 are P(relevant) 1/3, 2/3, 1: thresholds 1, 2, 3 equally likely.
    Rank 1 (b): 1/3; rank 3 (a): (1/3) (min(1/3, 1) + 1); over the sum 2."""
    assert cumgain_values("GAP", QRELS, RUN)["1"] == pytest.approx((1 / 3 + 4 / 9) / 2,
                                                                   abs=1e-15)
    assert cumgain_values("GAP", QRELS, RUN)["1"] == pytest.approx(graded_ap_by_thresholds(
        [1, 0, 3, 0], [3, 1, 2, 0], {1: 1 / 3, 2: 1 / 3, 3: 1 / 3}), abs=1e-15)
    assert cumgain_values("GAP@1", QRELS, RUN)["1"] == pytest.approx((1 / 3) / 2, abs=1e-15)


@pytest.mark.parametrize("seed", range(20))
def test_gap_is_the_expectation_over_user_thresholds(seed):
    """Gains g_l give the thresholds pi_j = (g_j - g_{j-1}) / g_max."""
    qrels, run = generated(seed)
    gains = {0: 0, 1: 1, 2: 3, 3: 4}
    pi = {1: 1 / 4, 2: 2 / 4, 3: 1 / 4}
    ours = cumgain_values("GAP(gains={0:0,1:1,2:3,3:4})", qrels, run)
    for topic, value in ours.items():
        levels = [max(qrels[topic].get(doc, 0), 0) for doc in ranking_of(run.get(topic, {}))]
        judged = [level for level in qrels[topic].values() if level > 0]
        assert gains and value == pytest.approx(graded_ap_by_thresholds(levels, judged, pi),
                                                abs=1e-14), topic


def test_jk_ndcg_hand_computed():
    """b = 2: ranks 1 and 2 undiscounted, then 1/log2(i)."""
    dcg = 1 + 0 + 3 / math.log2(3)
    ideal = 3 + 2 + 1 / math.log2(3)
    assert cumgain_values("JKnDCG@4", QRELS, RUN)["1"] == pytest.approx(dcg / ideal, abs=1e-15)
    assert cumgain_values("JKnDCG@4", QRELS, RUN) == \
        cumgain_values("nDCG(discount='tois', base=2)@4", QRELS, RUN)
    assert cumgain_values("JKnDCG(base=10)@4", QRELS, RUN)["1"] == pytest.approx(4 / 6)


@pytest.mark.parametrize("seed", range(10))
def test_ms_ndcg_is_ndcg(seed):
    qrels, run = generated(seed)
    for at in ("@5", "@20", ""):
        assert cumgain_values(f"MSnDCG(gains={{0:0,1:1,2:3,3:7}}){at}", qrels, run) == \
            cumgain_values(f"nDCG(gains={{0:0,1:1,2:3,3:7}}){at}", qrels, run)


@pytest.mark.parametrize("seed", range(10))
def test_binary_special_cases_are_ap(seed):
    """With binary gains, Q(beta=0) and GAP are AP (trec_eval's map, relevant = level >= 1)."""
    qrels, run = generated(seed, n_levels=1)
    ap = cumgain_values("AP", qrels, run)
    for spelling in ("Q(beta=0)", "GAP", "GAP(gains={0:0,1:5})"):
        ours = cumgain_values(spelling, qrels, run)
        assert ours == pytest.approx(ap, abs=1e-15), spelling


@pytest.mark.parametrize("spelling", ["Q", "Q@3", "nERR(max_rel=3)@5", "GAP", "JKnDCG@5",
                                      "MSnDCG@5", "Q(beta=0)@10", "NCUguP", "NCUguBR(beta=2)",
                                      "NCUrbP(gamma=0.5)", "NCUrbBR@10"])
def test_the_ideal_ranking_scores_one(spelling):
    qrels = {"1": {"a": 3, "b": 2, "c": 2, "d": 1, "e": 0}}
    run = {"1": {"a": 5.0, "c": 4.0, "b": 3.0, "d": 2.0, "e": 1.0, "f": 0.5}}
    assert cumgain_values(spelling, qrels, run)["1"] == pytest.approx(1.0, abs=1e-15)


def test_no_relevant_judgment_and_no_ranking_give_zero():
    qrels = {"1": {"a": 0, "b": -1}, "2": {"a": 2}}
    run = {"1": {"a": 1.0, "b": 0.5}}
    for spelling in ("Q", "nERR(max_rel=3)@10", "iRBU(max_rel=3)", "GAP", "JKnDCG@10",
                     "MSnDCG@10", "NCUguP", "NCUguBR@5", "NCUrbP", "NCUrbBR@5"):
        assert cumgain_values(spelling, qrels, run) == {"1": 0.0, "2": 0.0}, spelling


def test_condensed_lists():
    """judged_only=True (NTCIREVAL's -j): unjudged documents are removed first."""
    assert cumgain_values("Q(judged_only=True)", QRELS, RUN)["1"] == \
        cumgain_values("Q", QRELS, {"1": {"b": 4.0, "d": 3.0, "a": 2.0}})["1"]
    run = {"1": {"x": 5.0, "b": 4.0, "y": 3.0, "a": 2.0}}
    condensed = {"1": {"b": 4.0, "a": 2.0}}
    for name in ("nERR(max_rel=3, judged_only=True)@2", "GAP(judged_only=True)",
                 "JKnDCG(judged_only=True)@2", "iRBU(max_rel=3, judged_only=True)@2",
                 "NCUguBR(judged_only=True)@2", "NCUrbP(judged_only=True)"):
        plain = name.replace("judged_only=True", "judged_only=False")
        assert cumgain_values(name, QRELS, run) == cumgain_values(plain, QRELS, condensed)


# ---------------------------------------------------------------- parameters

@pytest.mark.parametrize("spelling, fragment", [
    ("nERR@10", "needs the gain of the top relevance level"),
    ("iRBU@10", "needs the gain of the top relevance level"),
    ("nERR(max_rel=0)@10", "max_rel must be >= 1"),
    ("nERR(gains={0:0,1:1,2:2}, max_rel=3)@10", "gains has no gain for level max_rel=3"),
    ("nERR(gains={0:0,1:1})@10", "relevance level 2 has no gain"),
    ("nERR(max_rel=1)@10", r"a judged gain \(2\) is above the top level's \(1\)"),
    ("Q(gains={0:0,1:-1,2:2})", "gains must be >= 0"),
    ("Q(beta=-1)", "beta must be a number >= 0"),
    ("Q(rel=2)", "Q does not take 'rel'"),
    ("iRBU(max_rel=2, e=-1)", "e must be a finite number >= 0"),
    ("iRBU(max_rel=2, p=2)", r"p must be a number in \[0, 1\]"),
    ("GAP(beta=1)", "GAP does not take 'beta'"),
    ("JKnDCG(base=1)@10", "base must be a number > 1"),
    ("MSnDCG(base=2)@10", "MSnDCG does not take 'base'"),
    ("NCUrbP(gamma=1.5)", r"gamma must be a number in \[0, 1\]"),
    ("NCUrbBR(gamma=-0.1)@10", r"gamma must be a number in \[0, 1\]"),
    ("NCUrbP(gamma='high')", r"gamma must be a number in \[0, 1\]"),
    ("NCUguBR(beta=-1)", "beta must be a number >= 0"),
    ("NCUguP(beta=1)", "NCUguP does not take 'beta'"),
    ("NCUrbP(beta=1)", "NCUrbP does not take 'beta'"),
    ("NCUguBR(gamma=0.5)", "NCUguBR does not take 'gamma'"),
    ("NCUrbBR(stops={1: 1, 2: 2})", "NCUrbBR does not take 'stops'"),
    ("NCUguP(stops={1: -1, 2: 1})", "stops must map relevance levels to stop values >= 0"),
    ("NCUguP(stops=2)", "stops must map relevance levels to stop values >= 0"),
    ("NCUguP(stops={})", "stops must map relevance levels to stop values >= 0"),
    ("NCUguBR(stops={1: 1})", "stops has no stop value for relevance level 2"),
    ("NCUguP(gains={0:0,1:1})", "relevance level 2 has no gain"),
    ("NCUguP(gains={0:0,1:-1,2:2})", "gains must be >= 0"),
    ("NCUguP@0", "the cut-off must be a whole number >= 1"),
])
def test_parameter_errors(spelling, fragment):
    with pytest.raises(InputError, match=fragment):
        evaluate({"1": {"a": 2, "b": 1}}, {"1": {"a": 1.0}}, [spelling])


def test_ties_average_is_refused_for_order_dependent_measures():
    with pytest.raises(InputError, match="not defined under ties='average'"):
        evaluate(QRELS, RUN, ["Q"], ties="average")
    for name in ("NCUguP", "NCUguBR", "NCUrbP", "NCUrbBR@5"):
        with pytest.raises(InputError, match="not defined under ties='average'"):
            evaluate(QRELS, RUN, [name], ties="average")
        with pytest.raises(InputError, match="no exact expectation"):
            evaluate(QRELS, RUN, [name], ties="expected")
    evaluate(QRELS, RUN, ["MSnDCG@10", "JKnDCG@10"], ties="average")


# ---------------------------------------------------------------- kernels

def test_kernel_argument_checks():
    offsets = np.array([0, 2], dtype=np.int64)
    values = np.array([0.5, 0.25])
    ideal_offsets = np.array([0, 2], dtype=np.int64)
    with pytest.raises(ValueError, match="not a probability"):
        kernels.expected_reciprocal_rank(np.array([0.5, 1.5]), offsets, 10, kernels.ORDER_GDEVAL)
    with pytest.raises(ValueError, match="unknown order"):
        kernels.expected_reciprocal_rank(values, offsets, 10, 7)
    with pytest.raises(ValueError, match="cutoff must be >= 1"):
        kernels.expected_reciprocal_rank(values, offsets, 0, kernels.ORDER_GDEVAL)
    with pytest.raises(ValueError, match="runs past"):
        kernels.rank_biased_utility(values, np.array([0, 3], dtype=np.int64), 10, 0.9, 0.0)
    with pytest.raises(ValueError, match="p must be in"):
        kernels.rank_biased_utility(values, offsets, 10, 1.5, 0.0)
    with pytest.raises(ValueError, match="effort must be"):
        kernels.rank_biased_utility(values, offsets, 10, 0.5, math.nan)
    with pytest.raises(ValueError, match="beta must be"):
        kernels.q_measure(values, offsets, values, ideal_offsets, -1.0, 10)
    with pytest.raises(ValueError, match="ideal_offsets has 2 entries for 1 topics"):
        kernels.q_measure(values, offsets, values, np.array([0, 1, 2], dtype=np.int64), 1.0, 10)
    with pytest.raises(ValueError, match="not a finite gain"):
        kernels.graded_average_precision(np.array([1.0, -1.0]), offsets, values,
                                         ideal_offsets, 10)
    with pytest.raises(ValueError, match="not among the topic's judged gains"):
        kernels.graded_average_precision(np.array([1.0, 0.3]), offsets, np.array([1.0, 0.5]),
                                         ideal_offsets, 10)
    with pytest.raises(ValueError, match="not among the topic's judged levels"):
        kernels.compatibility(np.array([1.0, 3.0]), offsets, np.array([2.0, 1.0]),
                              ideal_offsets, 0.9, True)
    with pytest.raises(ValueError, match="non-decreasing"):
        kernels.pairwise_accuracy(values, np.array([0, 2, 1], dtype=np.int64), 10)


def test_ncu_kernel_argument_checks():
    offsets = np.array([0, 2], dtype=np.int64)
    values, totals = np.array([1.0, 2.0]), np.array([3.0])
    ncu = kernels.normalised_cumulative_utility
    gu, rb = kernels.STOP_GRADED_UNIFORM, kernels.STOP_RANK_BIASED
    with pytest.raises(ValueError, match="gamma must be in"):
        ncu(values, values, offsets, values, offsets, totals, 1.0, 1.5, 10, rb)
    with pytest.raises(ValueError, match="beta must be"):
        ncu(values, values, offsets, values, offsets, totals, math.inf, 0.5, 10, rb)
    with pytest.raises(ValueError, match="unknown stopping distribution"):
        ncu(values, values, offsets, values, offsets, totals, 1.0, 0.5, 10, 7)
    with pytest.raises(ValueError, match="stop_totals has 2 entries for 1 topics"):
        ncu(values, values, offsets, values, offsets, np.ones(2), 1.0, 0.5, 10, gu)
    with pytest.raises(ValueError, match="stops has 1 entries for 2 topics"):
        ncu(values, np.ones(1), offsets, values, offsets, totals, 1.0, 0.5, 10, gu)
    with pytest.raises(ValueError, match="not a finite gain"):
        ncu(values, np.array([1.0, -1.0]), offsets, values, offsets, totals, 1.0, 0.5, 10, gu)
    with pytest.raises(ValueError, match="cutoff must be >= 1"):
        ncu(values, values, offsets, values, offsets, totals, 1.0, 0.5, 0, gu)
    with pytest.raises(ValueError, match="levels must be ascending"):
        kernels.graded_stop_totals(np.array([2.0, 1.0]), values, offsets)
    with pytest.raises(ValueError, match="has two stop values"):
        kernels.graded_stop_totals(np.array([1.0, 1.0]), values, offsets)
    # per level (ascending), the judgments times their stop value: 2 * 0.5 + 1 * 3
    assert kernels.graded_stop_totals(np.array([1.0, 1.0, 2.0]), np.array([0.5, 0.5, 3.0]),
                                      np.array([0, 3], dtype=np.int64))[0] == 4.0


def test_kernels_on_no_topics():
    empty, none = np.zeros(0), np.zeros(1, dtype=np.int64)
    assert len(kernels.graded_stop_totals(empty, empty, none)) == 0
    assert len(kernels.normalised_cumulative_utility(empty, empty, none, empty, none, empty,
                                                     1.0, 0.95, 5,
                                                     kernels.STOP_RANK_BIASED)) == 0
    assert len(kernels.expected_reciprocal_rank(empty, none, 5, kernels.ORDER_NTCIREVAL)) == 0
    assert len(kernels.rank_biased_utility(empty, none, 5, 0.9, 0.0)) == 0
    assert len(kernels.q_measure(empty, none, empty, none, 1.0, 5)) == 0
    assert len(kernels.graded_average_precision(empty, none, empty, none, 5)) == 0
    assert len(kernels.compatibility(empty, none, empty, none, 0.9, True)) == 0
    assert len(kernels.pairwise_accuracy(empty, none, 5)) == 0


def test_kernels_accept_read_only_arrays():
    gains = np.array([2.0, 0.0, 1.0])
    gains.setflags(write=False)
    offsets = np.array([0, 3], dtype=np.int64)
    offsets.setflags(write=False)
    ideal = np.array([2.0, 1.0])
    ideal.setflags(write=False)
    ideal_offsets = np.array([0, 2], dtype=np.int64)
    assert kernels.q_measure(gains, offsets, ideal, ideal_offsets, 1.0, 10)[0] == \
        pytest.approx(((1 + 2) / (1 + 2) + (2 + 3) / (3 + 3)) / 2)
    assert kernels.graded_average_precision(gains, offsets, ideal, ideal_offsets, 10)[0] == \
        pytest.approx((2 + (1 + 1) / 3) / 3)      # rank 1: min(2, 2); rank 3: min(2, 1) + 1


# ---------------------------------------------------------------- kernels vs their twins

from hypothesis import given, strategies as st  # noqa: E402

from cumgain.reference import graded_extra as twins  # noqa: E402


@st.composite
def batches(draw):
    """Topics of ranked gains (ties of gains, zeros, a few levels) and each topic's ideal:
    its ranked positive gains plus unretrieved ones, descending."""
    levels = st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0, 0.5])
    ranked, ideal, offsets, ideal_offsets = [], [], [0], [0]
    for _ in range(draw(st.integers(0, 5))):
        run = draw(st.lists(levels, max_size=25))
        extra = draw(st.lists(levels.filter(lambda g: g > 0), max_size=6))
        ranked += run
        ideal += sorted([g for g in run if g > 0] + extra, reverse=True)
        offsets.append(len(ranked))
        ideal_offsets.append(len(ideal))
    as_array = lambda values, dtype=np.float64: np.array(values, dtype=dtype)  # noqa: E731
    return (as_array(ranked), as_array(offsets, np.int64), as_array(ideal),
            as_array(ideal_offsets, np.int64))


@given(batches(), st.integers(1, 30), st.floats(0, 1), st.floats(0, 5), st.floats(0, 1),
       st.booleans())
def test_kernels_are_their_pure_python_twins(batch, cutoff, p, beta, effort, normalize):
    gains, offsets, ideal, ideal_offsets = batch
    probabilities = gains / 4.0
    for order in (kernels.ORDER_GDEVAL, kernels.ORDER_NTCIREVAL):
        np.testing.assert_array_equal(
            kernels.expected_reciprocal_rank(probabilities, offsets, cutoff, order),
            twins.expected_reciprocal_rank(probabilities, offsets, cutoff, order))
    np.testing.assert_array_equal(
        kernels.rank_biased_utility(probabilities, offsets, cutoff, p, effort),
        twins.rank_biased_utility(probabilities, offsets, cutoff, p, effort))
    np.testing.assert_array_equal(
        kernels.q_measure(gains, offsets, ideal, ideal_offsets, beta, cutoff),
        twins.q_measure(gains, offsets, ideal, ideal_offsets, beta, cutoff))
    np.testing.assert_allclose(
        kernels.graded_average_precision(gains, offsets, ideal, ideal_offsets, cutoff),
        twins.graded_average_precision(gains, offsets, ideal, ideal_offsets, cutoff),
        rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(
        kernels.compatibility(gains, offsets, ideal, ideal_offsets, p, normalize),
        twins.compatibility(gains, offsets, ideal, ideal_offsets, p, normalize))
    np.testing.assert_array_equal(kernels.pairwise_accuracy(gains, offsets, cutoff),
                                  twins.pairwise_accuracy(gains, offsets, cutoff))


# ---------------------------------------------------------------- O, P and P+

def _with_cutoff(metric, cutoff):
    """pyNTCIREVAL's O/P/P+ constructors take no cut-off; its Metric reads .cutoff."""
    metric.cutoff = cutoff
    return metric


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("grades", GRADES)
@pytest.mark.parametrize("beta, cutoff", [(1.0, None), (1.0, 3), (0.5, 10), (0.0, None)])
@pytest.mark.parametrize("name", ["OMeasure", "PMeasure", "PPlusMeasure"])
def test_one_highly_relevant_document_measures_are_pyntcireval(seed, grades, beta, cutoff,
                                                                name):
    from pyNTCIREVAL.metrics import OMeasure, PMeasure, PPlusMeasure
    reference = {"OMeasure": OMeasure, "PMeasure": PMeasure, "PPlusMeasure": PPlusMeasure}[name]
    at = "" if cutoff is None else f"@{cutoff}"
    compare(seed, grades, f"{name}(beta={beta}, gains={gains_spelling(grades)}){at}",
            lambda xrelnum: _with_cutoff(reference(xrelnum, grades, beta), cutoff),
            exact=True)


def test_one_highly_relevant_document_measures_worked_out():
    """Ranking: level 1, level 0, level 2, level 2 (gains = levels); judged: those and one
    more level-2 document, so the ideal is 2, 2, 2, 1. BR(i) = (C(i) + cg(i)) / (i +
    cg*(i)); BR(1) = (1 + 1) / (1 + 2) = 2/3, BR(3) = (2 + 3) / (3 + 6) = 5/9.
    O = BR(1); P: the first level-2 document is at rank 3: BR(3); P+ = (BR(1) + BR(3)) / 2."""
    qrels = {"q": {"a": 1, "b": 0, "c": 2, "d": 2, "e": 2}}
    run = {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}}
    means = evaluate(qrels, run, ["OMeasure", "PMeasure", "PPlusMeasure", "PMeasure@2"]).means
    assert means["OMeasure"] == pytest.approx(2 / 3, abs=1e-15)
    assert means["PMeasure"] == pytest.approx(5 / 9, abs=1e-15)
    assert means["PPlusMeasure"] == pytest.approx((2 / 3 + 5 / 9) / 2, abs=1e-15)
    assert means["PMeasure@2"] == 0.0           # the preferred document is past the cut-off


# ---------------------------------------------------------------- NCU

def stops_spelling(stops: list) -> str:
    return "{" + ", ".join(f"{level}: {stop}" for level, stop in
                           enumerate(stops, start=1)) + "}"


#: (variant, parameters as written, the pyNTCIREVAL metric for (xrelnum, grades)); stops
#: None: NTCIREVAL's default, the gains
NCU_CASES = [
    ("NCUguP", {}, lambda x, g: NCUguP(x, g, list(g))),
    ("NCUguP", {"stops": [1, 1, 1]}, lambda x, g: NCUguP(x, g, [1, 1, 1])),
    ("NCUguP", {"stops": [0.3, 0.1, 2.5]}, lambda x, g: NCUguP(x, g, [0.3, 0.1, 2.5])),
    ("NCUguBR", {}, lambda x, g: NCUguBR(x, g, list(g), 1.0)),
    ("NCUguBR", {"beta": 0.5, "stops": [1, 2, 4]}, lambda x, g: NCUguBR(x, g, [1, 2, 4], 0.5)),
    ("NCUguBR", {"beta": 3.0, "stops": [0, 1, 3]}, lambda x, g: NCUguBR(x, g, [0, 1, 3], 3.0)),
    ("NCUguBR", {"beta": 0.0}, lambda x, g: NCUguBR(x, g, list(g), 0.0)),
    ("NCUrbP", {}, lambda x, g: NCUrbP(x, g, 0.95)),
    ("NCUrbP", {"gamma": 0.5}, lambda x, g: NCUrbP(x, g, 0.5)),
    ("NCUrbP", {"gamma": 0.0}, lambda x, g: NCUrbP(x, g, 0.0)),
    ("NCUrbBR", {}, lambda x, g: NCUrbBR(x, g, 0.95, 1.0)),
    ("NCUrbBR", {"beta": 0.5, "gamma": 1.0}, lambda x, g: NCUrbBR(x, g, 1.0, 0.5)),
    ("NCUrbBR", {"beta": 3.0, "gamma": 0.8}, lambda x, g: NCUrbBR(x, g, 0.8, 3.0)),
]


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("grades", GRADES + [[0.1, 0.7, 1.3]])
@pytest.mark.parametrize("case", range(len(NCU_CASES)))
def test_ncu_is_pyntcireval_exactly(seed, grades, case):
    """The four NCUs, with NTCIREVAL's defaults (beta 1, gamma 0.95, stops = gains) and
    others, whole and cut off (pyNTCIREVAL's Metric reads .cutoff: the ranking truncated
    there, the normalisation unchanged); fractional gains and stops too, whose sums
    pyNTCIREVAL makes per level and from rank 1 as the kernel does."""
    name, params, reference = NCU_CASES[case]
    written = dict(params, gains=gains_spelling(grades))
    if "stops" in written:
        written["stops"] = stops_spelling(written["stops"])
    arguments = ", ".join(f"{key}={value}" for key, value in written.items())
    for cutoff in (None, 1, 3, 10):
        at = "" if cutoff is None else f"@{cutoff}"
        compare(seed, grades, f"{name}({arguments}){at}",
                lambda xrelnum, cutoff=cutoff: ZeroWhereItDividesByZero(
                    _with_cutoff(reference(xrelnum, grades), cutoff)),
                exact=sys.version_info < (3, 12))


# pyNTCIREVAL takes NCU's normalisers with Python's sum(), which adds floats with
# Neumaier's compensation from Python 3.12 on: there its values can differ from the
# plain running sums of NTCIREVAL (and of Python <= 3.11, and of cumgain) in the last
# bit, so the comparison above is exact on Python <= 3.11 and to 1e-13 from 3.12.


class ZeroWhereItDividesByZero:
    """pyNTCIREVAL's NCUgu divides by zero where every relevant judgment's stop value is 0
    (stops 0:1:3 on a topic with only level-1 documents relevant): cumgain gives 0."""

    def __init__(self, metric):
        self.metric = metric

    def compute(self, ranked):
        try:
            return self.metric.compute(ranked)
        except ZeroDivisionError:
            return 0.0


def test_ncu_worked_out():
    """QRELS/RUN (gains = levels): the run is b (1), d (0), a (3), x (none); judged
    relevant a, b, c (3, 1, 2): R = 3, ideal gains 3, 2, 1 (cg*: 3, 5, 6).
    Relevant ranks 1 (b) and 3 (a): P(1) = 1/1, P(3) = 2/3; BR(1) = (1 + 1) / (1 + 3)
    = 1/2, BR(3) = (2 + 4) / (3 + 6) = 2/3.
    gu, stops = gains: the stop values sum to 1 + 2 + 3 = 6, Pr(b) = 1/6, Pr(a) = 3/6:
    NCUguP = 1/6 + 1/2 * 2/3 = 1/2; NCUguBR = 1/6 * 1/2 + 1/2 * 2/3 = 5/12.
    rb: Pr(b) = 1 / (1 + g + g^2), Pr(a) = g / (1 + g + g^2) (a is the second relevant
    document); gamma = 1/2: 1 + 1/2 + 1/4 = 7/4, NCUrbP = (1 + 1/2 * 2/3) * 4/7 = 16/21,
    NCUrbBR = (1/2 + 1/2 * 2/3) * 4/7 = 10/21."""
    values = evaluate(QRELS, RUN, [
        "NCUguP", "NCUguBR", "NCUrbP(gamma=0.5)", "NCUrbBR(gamma=0.5)", "NCUrbP",
        "NCUrbBR(beta=2)", "NCUguP@2", "NCUguP(stops={1:0,2:1,3:2})",
        "NCUguBR(stops={1:1,2:1,3:1})", "NCUguP(stops={1:1,2:1,3:1})",
        "NCUrbP(gamma=0)", "NCUrbBR(gamma=0)"]).means
    assert values["NCUguP"] == pytest.approx(1 / 2, abs=1e-15)
    assert values["NCUguBR"] == pytest.approx(5 / 12, abs=1e-15)
    assert values["NCUrbP(gamma=0.5)"] == pytest.approx(16 / 21, abs=1e-15)
    assert values["NCUrbBR(gamma=0.5)"] == pytest.approx(10 / 21, abs=1e-15)
    # gamma = 0.95 (the default): 1 + 0.95 + 0.9025 = 2.8525
    assert values["NCUrbP"] == pytest.approx((1 + 0.95 * 2 / 3) / 2.8525, abs=1e-15)
    # beta = 2: BR(1) = (1 + 2) / (1 + 6) = 3/7, BR(3) = (2 + 8) / (3 + 12) = 2/3
    assert values["NCUrbBR(beta=2)"] == pytest.approx((3 / 7 + 0.95 * 2 / 3) / 2.8525,
                                                      abs=1e-15)
    # @2 truncates the ranking (only b), the normaliser stays 6
    assert values["NCUguP@2"] == pytest.approx(1 / 6, abs=1e-15)
    # stops 0, 1, 2 for levels 1, 2, 3: the sum is 3, Pr(b) = 0, Pr(a) = 2/3
    assert values["NCUguP(stops={1:0,2:1,3:2})"] == pytest.approx(4 / 9, abs=1e-15)
    # equal stops: the uniform distribution, Pr = 1/R: Q and AP ((1 + 2/3) / 3)
    assert values["NCUguBR(stops={1:1,2:1,3:1})"] == pytest.approx(
        (1 / 2 + 2 / 3) / 3, abs=1e-15)
    assert values["NCUguP(stops={1:1,2:1,3:1})"] == pytest.approx(5 / 9, abs=1e-15)
    # gamma = 0: every user stops at the first relevant document (rank 1)
    assert values["NCUrbP(gamma=0)"] == 1.0
    assert values["NCUrbBR(gamma=0)"] == 0.5


@pytest.mark.parametrize("seed", range(10))
def test_ncu_special_cases(seed):
    """Equal stop values make graded-uniform NCU Q-measure (BR) and AP (P) over the whole
    ranking; gamma = 1 makes rank-biased NCU the same; gamma = 0 makes NCUrbBR O-measure."""
    qrels, run = generated(seed)
    q, ap = cumgain_values("Q", qrels, run), cumgain_values("Q(beta=0)", qrels, run)
    for spelling, expected in (("NCUguBR(stops={1: 2, 2: 2, 3: 2})", q),
                               ("NCUrbBR(gamma=1)", q), ("NCUguP(stops={1:1,2:1,3:1})", ap),
                               ("NCUrbP(gamma=1)", ap),
                               ("NCUrbBR(gamma=0)", cumgain_values("OMeasure", qrels, run))):
        assert cumgain_values(spelling, qrels, run) == pytest.approx(expected, abs=1e-15), \
            spelling
