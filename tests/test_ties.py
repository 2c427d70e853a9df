"""Ties as uncertainty: ``ties="expected"`` against the brute-force mean over every
order of the documents inside each group of equal scores, ``"optimistic"`` and
``"pessimistic"`` against the best and worst of those orders, and the half-precision
score rules against numpy's float16 and a bfloat16 rounding written here."""
from __future__ import annotations

import io
import itertools
import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cumgain
from cumgain.exceptions import InputError
from cumgain.measures.trec_names import NICKNAMES

# Every trec_eval measure that reads qrels and a run, plus the ir_measures-style ones.
MEASURES = list(NICKNAMES["all_trec"]) + [
    "P_2", "recall_2", "ndcg_cut_2", "map_cut_2", "success_2", "nDCG@3",
    "RBP(rel=1)", "ERR@3", "ERR", "nERR(max_rel=3)@3", "Judged@2", "Rprec", "hits@2", "R@3", "AP@3",
    "RR@3", "FallOut@2", "AUROC", "AUROC@3", "AUROC(max_fpr=0.5)@3", "RetrievalMAP@3",
    "RetrievalPrecision@3", "RetrievalPrecision(adaptive_k=True)@3"]

# The measures whose best and worst orders the bound rules must find (higher is better,
# monotone in each document's level).
BOUNDED = ["map", "map_cut_2", "recip_rank", "success_1", "success_2", "P_2", "ndcg",
           "ndcg_cut_2", "Rprec", "recall_2", "bpref", "nDCG@3", "RR@3", "ERR@3", "binG"]


def _groups(run: dict) -> list[list[str]]:
    """A topic's documents in groups of equal scores, the highest first, each in docno
    descending order (trec_eval's order within a group)."""
    by_score: dict[float, list[str]] = {}
    for docno, score in run.items():
        by_score.setdefault(score, []).append(docno)
    return [sorted(by_score[score], reverse=True) for score in sorted(by_score, reverse=True)]


def _orders(run: dict[str, dict[str, float]]):
    """Every run that orders each tie group of every topic one way: the same scores,
    inserted in that order (evaluated with ties="input_order")."""
    per_topic = []
    for topic, docs in run.items():
        groups = _groups(docs)
        per_topic.append([(topic, [doc for group in choice for doc in group])
                          for choice in itertools.product(*map(itertools.permutations,
                                                               groups))])
    for choice in itertools.product(*per_topic):
        yield {topic: {doc: run[topic][doc] for doc in order} for topic, order in choice}


def _n_orders(run) -> int:
    return math.prod(math.factorial(len(group)) for docs in run.values()
                     for group in _groups(docs))


def _numbers(means: dict) -> dict[str, float]:
    return {name: value for name, value in means.items() if not isinstance(value, str)}


def _by_order(qrels, run, measures) -> dict[str, np.ndarray]:
    """Per measure (each output name), its mean over topics under each order of the
    tie groups."""
    values: dict[str, list[float]] = {}
    for ordered in _orders(run):
        means = cumgain.evaluate(qrels, ordered, measures, ties="input_order",
                                 warn=False).means
        for name, value in _numbers(means).items():
            values.setdefault(name, []).append(value)
    return {name: np.array(v) for name, v in values.items()}


def _accepted(qrels, run, ties) -> list[str]:
    """The measures ``ties`` accepts (the others refused with an InputError)."""
    accepted = []
    for measure in MEASURES:
        try:
            cumgain.evaluate(qrels, run, [measure], ties=ties, warn=False)
        except InputError as error:
            assert "ties=" in str(error), error
        else:
            accepted.append(measure)
    return accepted


@st.composite
def tied_topics(draw):
    """Two topics of up to 8 ranked documents with scores from a few values (so they
    tie), levels from -1 to 3, some documents unjudged, some judgments unretrieved."""
    qrels, run = {}, {}
    for topic in ("q1", "q2"):
        n = draw(st.integers(1, 8))
        docs = [f"d{i}" for i in range(n + 3)]
        scores = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=n, max_size=n))
        run[topic] = dict(zip(docs[:n], scores))
        levels = draw(st.lists(st.sampled_from([None, -1, 0, 0, 1, 1, 2, 3]),
                               min_size=n + 3, max_size=n + 3))
        qrels[topic] = {doc: level for doc, level in zip(docs, levels) if level is not None}
        if not qrels[topic]:
            qrels[topic] = {docs[-1]: 1}
    return qrels, run


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(tied_topics())
def test_expected_is_the_mean_over_every_order_of_the_ties(topics):
    qrels, run = topics
    if _n_orders(run) > 720:
        return
    accepted = _accepted(qrels, run, "expected")
    by_order = _by_order(qrels, run, accepted)
    expected = _numbers(cumgain.evaluate(qrels, run, accepted, ties="expected",
                                         warn=False).means)
    assert expected.keys() == by_order.keys()
    for name, value in expected.items():
        assert value == pytest.approx(by_order[name].mean(), abs=1e-12), name


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(tied_topics())
def test_optimistic_and_pessimistic_are_the_best_and_worst_orders(topics):
    qrels, run = topics
    if _n_orders(run) > 720:
        return
    by_order = _by_order(qrels, run, BOUNDED)
    best = cumgain.evaluate(qrels, run, BOUNDED, ties="optimistic", warn=False).means
    worst = cumgain.evaluate(qrels, run, BOUNDED, ties="pessimistic", warn=False).means
    expected_ok = [m for m in BOUNDED if m in _accepted(qrels, run, "expected")]
    expected = cumgain.evaluate(qrels, run, expected_ok, ties="expected", warn=False).means
    for measure in BOUNDED:
        assert best[measure] == pytest.approx(by_order[measure].max(), abs=1e-12), measure
        assert worst[measure] == pytest.approx(by_order[measure].min(), abs=1e-12), measure
        if measure in expected:
            assert worst[measure] - 1e-12 <= expected[measure] <= best[measure] + 1e-12


def test_the_rules_on_one_topic_worked_out():
    """Groups {a: 1, b: 0} then {c: 1, d: 2, e: 0}; R = 3 (levels >= 1)."""
    qrels = {"q1": {"a": 1, "b": 0, "c": 1, "d": 2, "e": 0}}
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 0.5, "d": 0.5, "e": 0.5}}
    means = {ties: cumgain.evaluate(qrels, run, ["recip_rank", "success_1", "map"],
                                    ties=ties).means
             for ties in ("expected", "optimistic", "pessimistic", "docno_desc")}
    assert means["expected"]["recip_rank"] == 0.75         # 1/2 (a first) + 1/2 * 1/2
    assert means["expected"]["success_1"] == 0.5
    assert means["optimistic"]["recip_rank"] == 1.0
    assert means["pessimistic"]["recip_rank"] == 0.5
    assert means["docno_desc"]["recip_rank"] == 0.5        # b before a
    # AP: first group a at rank 1 or 2 (each 1/2): E[rel found / i] over ranks 1, 2 =
    # 1/2 * 1 + (0 + 1 * 0) / 2 ... by the closed form:
    # ranks 1-2: p = 1/2, C = 0, pair = 0: 1/2 / 1 + 1/2 / 2 = 3/4;
    # ranks 3-5: p = 2/3, C = 1, pair = 2*1/(3*2) = 1/3: (4/3)/3 + (4/3 + 1/3)/4 +
    # (4/3 + 2/3)/5 = 4/9 + 5/12 + 2/5
    ap = (3 / 4 + 4 / 9 + 5 / 12 + 2 / 5) / 3
    assert means["expected"]["map"] == pytest.approx(ap, abs=1e-15)


def test_expected_refuses_what_it_cannot_compute_exactly():
    qrels, run = {"q1": {"a": 1, "b": 0}}, {"q1": {"a": 1.0, "b": 1.0}}
    for measure in ("infAP", "gm_map", "gm_bpref", "11pt_avg", "iprec_at_recall"):
        with pytest.raises(InputError, match="no exact expectation.*ties='optimistic'"):
            cumgain.evaluate(qrels, run, [measure], ties="expected")
    with pytest.raises(InputError, match="ties='expected' \\(its exact expectation"):
        cumgain.evaluate(qrels, run, ["map"], ties="average")


def test_expected_equals_average_on_the_linear_measures():
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1}}
    run = {"q1": {"a": 0.5, "b": 0.5, "c": 0.5, "d": 0.1}, "q2": {"x": 0.2, "y": 0.2}}
    linear = ["ndcg", "ndcg_cut_2", "P_1", "recall_1", "Rprec", "dcg"]
    expected = cumgain.evaluate(qrels, run, linear, ties="expected").values
    average = cumgain.evaluate(qrels, run, linear, ties="average").values
    assert all(np.array_equal(expected[m], average[m]) for m in linear)


def test_ties_outside_the_groups_change_nothing():
    """Without equal scores every rule gives trec_eval's values."""
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}}
    run = {"q1": {"a": 0.3, "b": 0.2, "c": 0.1}}
    measures = ["map", "recip_rank", "ndcg", "P_2", "bpref"]
    plain = cumgain.evaluate(qrels, run, measures).means
    for ties in ("optimistic", "pessimistic"):
        assert cumgain.evaluate(qrels, run, measures, ties=ties).means == plain
    accepted = ["map", "recip_rank", "ndcg", "P_2", "bpref"]
    assert cumgain.evaluate(qrels, run, accepted, ties="expected").means == \
        {m: plain[m] for m in accepted}


def test_the_rules_on_a_file_and_through_the_reference_reader(tmp_path):
    """The native reader and the pure-Python reference reader agree under every new
    rule (both rank by docno descending first, then read the groups)."""
    from cumgain.reference.reading import evaluate as reference_evaluate
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 x 1\n")
    run_path.write_text("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.5 t\nq1 Q0 c 3 0.5 t\n"
                        "q2 Q0 y 1 0.7 t\nq2 Q0 x 2 0.7 t\n")
    for ties, measures in (("expected", ["map", "recip_rank", "ndcg", "bpref"]),
                           ("optimistic", ["map", "bpref"]), ("pessimistic", ["map", "bpref"])):
        ours = cumgain.evaluate(str(qrels_path), str(run_path), measures, ties=ties)
        theirs = reference_evaluate(str(qrels_path), str(run_path), measures, ties=ties)
        assert all(np.array_equal(ours.values[m], theirs.values[m]) for m in measures)
        assert ours.means != cumgain.evaluate(str(qrels_path), str(run_path), measures).means


def test_the_diversity_measures_refuse_the_group_rules():
    qrels = cumgain.load_subtopics({"q1": {"1": {"a": 1}}})
    for ties in ("expected", "optimistic", "pessimistic", "average"):
        with pytest.raises(InputError, match=f"ties={ties!r} is not defined"):
            cumgain.evaluate(qrels, {"q1": {"a": 1.0}}, ["alpha_nDCG@5"], ties=ties)


# ---------------------------------------------------------------- half precision

def _bfloat16(value: float) -> float:
    """value rounded to bfloat16 (8 significant bits, float32's exponents), ties to
    even, from its exact binary expansion (Python's integers), +-inf past the largest."""
    if value == 0 or math.isinf(value) or math.isnan(value):
        return value
    mantissa, exponent = math.frexp(abs(value))         # |v| = m 2^e, 0.5 <= m < 1
    exponent = max(exponent - 1, -126)
    numerator, denominator = abs(value).as_integer_ratio()
    step = exponent - 7                                  # the last bit's weight: 2^step
    # |v| / 2^step as a fraction, rounded half to even by integers
    scaled_num = numerator * (2 ** -step if step < 0 else 1)
    scaled_den = denominator * (2 ** step if step > 0 else 1)
    whole, rest = divmod(scaled_num, scaled_den)
    if 2 * rest > scaled_den or (2 * rest == scaled_den and whole % 2 == 1):
        whole += 1
    rounded = math.ldexp(whole, step)
    if rounded > (2 - 2 ** -7) * 2.0 ** 127:
        rounded = math.inf
    return math.copysign(rounded, value)


def _edge_values() -> list[float]:
    values = [0.1, 1 / 3, 2 / 3, 1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 1.0 + 2 ** -11,
              1.0 + 3 * 2 ** -11, 65504.0, 65519.99, 65520.0, 6.1e-5, 2.0 ** -24,
              2.0 ** -25, 3 * 2.0 ** -26, 1e-8, 3.3895313892515355e38, 3.4e38, 1e-40,
              2.0 ** -133, 2.0 ** -134, 1e300, -0.7, -65520.0, 12345.678]
    rng = np.random.default_rng(0)
    values += list(rng.normal(0, 10, 300)) + list(rng.uniform(-1, 1, 300) * 1e-6)
    values += [struct.unpack("<d", struct.pack("<Q", bits))[0] for bits in
               rng.integers(0, 2 ** 63, 300, dtype=np.uint64).tolist()]
    return [v for v in values if not math.isnan(v)]


def _as_compared(values: list[float], precision: str) -> list[float]:
    """The scores the native reader compares, one topic per value (a tie rule that
    reads the groups keeps them), in run order."""
    run = {f"q{i}": {"d": value} for i, value in enumerate(values)}
    qrels = {topic: {"d": 1} for topic in run}
    ranking = cumgain.rank(qrels, run, ties="expected", score_precision=precision, warn=False)
    return list(ranking._everything.scores)


@pytest.mark.parametrize("precision", ["float16", "bfloat16"])
def test_half_precisions_round_as_the_formats_do(precision):
    values = _edge_values()
    if precision == "float16":
        with np.errstate(over="ignore"):
            truth = np.array(values).astype(np.float16).astype(np.float64)
    else:
        truth = np.array([_bfloat16(v) for v in values])
    compared = np.array(_as_compared(values, precision))
    assert np.array_equal(compared, truth), [
        (v, c, t) for v, c, t in zip(values, compared, truth) if c != t][:5]
    from cumgain.engine.ranking_rules import compared_scores
    assert np.array_equal(compared_scores(np.array(values), precision), truth)


def test_half_precision_creates_the_ties_a_model_would():
    qrels = {"q1": {"a": 1, "b": 0}}
    run = {"q1": {"a": 0.50001, "b": 0.50002}}      # equal in float16, not in float32
    assert cumgain.evaluate(qrels, run, ["recip_rank"]).means["recip_rank"] == 0.5
    assert cumgain.evaluate(qrels, run, ["recip_rank"], score_precision="float16",
                            ties="expected").means["recip_rank"] == 0.75
    assert cumgain.evaluate(qrels, run, ["recip_rank"], score_precision="bfloat16",
                            ties="optimistic").means["recip_rank"] == 1.0


def test_tie_bounds_read_the_run_once_and_equal_the_two_rules():
    qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 1}}
    text = b"q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.5 t\nq1 Q0 c 3 0.5 t\nq2 Q0 x 1 0.3 t\nq2 Q0 y 2 0.9 t\n"
    measures = ["map", "ndcg_cut_2", "bpref", "P_1"]
    bounds = cumgain.evaluate_tie_bounds(qrels, io.BytesIO(text), measures)
    for ties, evaluation in (("optimistic", bounds.optimistic),
                             ("pessimistic", bounds.pessimistic)):
        alone = cumgain.evaluate(qrels, io.BytesIO(text), measures, ties=ties)
        assert all(np.array_equal(alone.values[m], evaluation.values[m]) for m in measures)
        assert evaluation.policies["ties"] == ties
    summary = bounds.summary()
    assert summary["P_1"] == {"topics_moved": 1, "mean_spread": 0.5, "max_spread": 1.0}
    assert summary["map"]["topics_moved"] == 1          # q2 has no tie: 0 spread
    assert np.array_equal(bounds.spread("P_1"), [1.0, 0.0])
    assert "P_1: 0.0000 .. 0.5000, 1" in repr(bounds)


def test_runs_compared_on_their_expected_values(tmp_path):
    """cumgain.compare and `cumgain compare --ties expected` test the runs' expected
    values over the orders of their ties."""
    qrels = {f"q{t}": {"a": 1, "b": 0, "c": 2, "d": 0} for t in range(6)}
    runs = {"tied": {f"q{t}": {"a": 0.5, "b": 0.5, "c": 0.5, "d": 0.1} for t in range(6)},
            "sorted": {f"q{t}": {"c": 0.9, "a": 0.8, "b": 0.2, "d": 0.1} for t in range(6)}}
    result = cumgain.compare(qrels, runs, ["map", "recip_rank"], ties="expected",
                             test="ttest")
    expected = cumgain.evaluate(qrels, runs["tied"], ["map"], ties="expected").means["map"]
    assert result.comparisons["map"].means["tied"] == pytest.approx(expected, abs=1e-15)
    assert result.comparisons["recip_rank"].means["tied"] == pytest.approx(5 / 6)
    (tmp_path / "qrels").write_text("".join(f"q{t} 0 {d} {l}\n" for t in range(6)
                                            for d, l in qrels[f"q{t}"].items()))
    for name, run in runs.items():
        (tmp_path / f"{name}.run").write_text("".join(
            f"q{t} Q0 {d} 1 {s} {name}\n" for t in range(6)
            for d, s in run[f"q{t}"].items()))
    from cumgain import cli
    assert cli.main(["compare", str(tmp_path / "qrels"), str(tmp_path / "tied.run"),
                     str(tmp_path / "sorted.run"), "-m", "recip_rank", "--ties", "expected",
                     "--test", "ttest"]) == 0
