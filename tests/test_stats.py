"""cumgain.stats: the score table, the tests (against scipy, statsmodels, textbook formulas
and published worked examples), corrections, effect sizes and the compare() family."""
import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy import stats as ss

import cumgain
from cumgain import stats
from cumgain.exceptions import InputError


def _table(seed: int, n: int, k: int, levels: int = 0) -> np.ndarray:
    """Random topics x runs scores; ``levels`` > 0 rounds to that many values (many ties)."""
    rng = np.random.default_rng(seed)
    values = rng.random((n, k)) + np.linspace(0, 0.3, k)
    return np.round(values * levels) / levels if levels else values


def _runs(k: int) -> list:
    return [f"R{i}" for i in range(k)]


def _long(values: np.ndarray):
    """The table in long form for statsmodels (topic, run, score)."""
    import pandas as pd
    n, k = values.shape
    return pd.DataFrame([(t, f"R{r}", values[t, r]) for t in range(n) for r in range(k)],
                        columns=["topic", "run", "score"])


def _rng_kwargs(seed: int) -> dict:
    """scipy's own spelling of "this seed" (rng= from scipy 1.15, random_state= before)."""
    import inspect
    keyword = "rng" if "rng" in inspect.signature(ss.permutation_test).parameters \
        else "random_state"
    return {keyword: np.random.default_rng(seed)}


# ============================================================== the score table

def test_table_from_dicts_sorts_topics_and_pairs_by_topic():
    table = stats.score_table({"B": {"q2": 0.5, "q1": 0.25}, "A": {"q1": 1.0, "q2": 0.0}})
    assert table.runs == ("B", "A")
    assert table.topics == ("q1", "q2")
    assert table.values.tolist() == [[0.25, 1.0], [0.5, 0.0]]
    assert table.means == {"B": 0.375, "A": 0.5}
    assert table.column("A").tolist() == [1.0, 0.0]
    assert table.dropped == {}
    with pytest.raises(ValueError):
        table.values[0, 0] = 1.0          # read-only


def test_table_from_evaluations_accepts_any_spelling_of_the_measure():
    qrels = {"1": {"a": 2, "b": 1}, "2": {"c": 1, "d": 2}, "3": {"e": 1}}
    run_x = {"1": {"a": 2.0, "b": 1.0}, "2": {"c": 2.0, "d": 1.0}, "3": {"e": 1.0, "z": 2.0}}
    run_y = {"1": {"b": 2.0, "a": 1.0}, "2": {"d": 2.0, "c": 1.0}, "3": {"z": 1.0, "e": 0.5}}
    spelling = "nDCG@2(discount=tois, gains=0-1-10)"
    x = cumgain.evaluate(qrels, run_x, [spelling, "P@1"])
    y = cumgain.evaluate(qrels, run_y, [spelling, "P@1"])
    table = stats.score_table({"x": x, "y": y}, spelling)
    assert table.measure == "nDCG@2(discount=tois,gains=0-1-10)"
    assert table.topics == x.topics
    assert table.values[:, 0].tolist() == x.values[table.measure].tolist()
    assert table.values[:, 1].tolist() == y.values[table.measure].tolist()
    with pytest.raises(InputError, match="name the measure"):
        stats.score_table({"x": x, "y": y})
    with pytest.raises(InputError, match="not in the evaluations"):
        stats.score_table({"x": x, "y": y}, "map")


def test_table_from_dataframe_and_array():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"A": [0.1, 0.2, 0.3], "B": [0.3, np.nan, 0.1]},
                         index=["t3", "t1", "t2"])
    with pytest.raises(InputError, match=r"A 3, B 2; 2 common"):
        stats.score_table(frame)
    table = stats.score_table(frame, topics="intersect")
    assert table.topics == ("t3", "t2")               # the frame's order
    assert table.values.tolist() == [[0.1, 0.3], [0.3, 0.1]]
    assert table.dropped == {"A": ("t1",)}

    with pytest.raises(InputError, match="'t1' appears twice"):
        stats.score_table(pd.DataFrame({"A": [0.1, 0.2], "B": [0.3, 0.4]}, index=["t1", "t1"]))
    with pytest.raises(InputError, match="not all numbers"):
        stats.score_table(pd.DataFrame({"A": [0.1, "x"], "B": [0.3, 0.4]}))
    renamed = stats.score_table(frame.fillna(0.0), runs=["x", "y"])
    assert renamed.runs == ("x", "y")

    array = stats.score_table([[1, 2], [3, 4], [5, 6]], runs=["u", "v"])
    assert array.topics == ("0", "1", "2") and array.runs == ("u", "v")
    assert array.values[:, 1].tolist() == [2, 4, 6]


@pytest.mark.parametrize("data, kwargs, message", [
    ({"A": {"1": 0.1, "2": 0.2}}, {}, "at least 2 runs"),
    ({"A": {"1": 0.1}, "B": {"1": 0.2}}, {}, "at least 2 topics"),
    ({"A": {"1": 0.1, "2": float("nan")}, "B": {"1": 0.2, "2": 0.3}}, {}, "run 'A', topic '2'"),
    ({"A": {"1": 0.1, "2": "x"}, "B": {"1": 0.2, "2": 0.3}}, {}, "not a number"),
    ({"A": {"1": 0.1, 1: 0.2}, "B": {"1": 0.2}}, {}, "appears twice"),
    ({"A": {"1": 0.1, "2": 0.2}, "B": {"1": 0.2, "3": 0.3}}, {}, r"A 2, B 2; 1 common"),
    ({"A": {"1": 0.1, "2": 0.2}, "B": {"1": 0.2, "2": 0.3}}, {"topics": "union"}, "topics must"),
    ([[1, 2], [3, 4]], {}, "runs="),
    ([[1, 2], [3, 4]], {"runs": ["a"]}, "1 run names for an array of 2"),
    ([[1, 2], [3, 4]], {"runs": ["a", "a"]}, "appears twice"),
    ([[1, np.inf], [3, 4]], {"runs": ["a", "b"]}, "not finite"),
    ([1, 2, 3], {"runs": ["a"]}, "2-D"),
])
def test_table_rejects_bad_input(data, kwargs, message):
    with pytest.raises(InputError, match=message):
        stats.score_table(data, **kwargs)


def test_intersect_keeps_common_topics_and_reports_the_rest():
    table = stats.score_table({"A": {"1": 0.1, "2": 0.2, "3": 0.3},
                               "B": {"2": 0.5, "3": 0.1, "4": 0.2}}, topics="intersect")
    assert table.topics == ("2", "3")
    assert table.dropped == {"A": ("1",), "B": ("4",)}
    result = stats.compare({"A": {"1": 0.1, "2": 0.2, "3": 0.3},
                            "B": {"2": 0.5, "3": 0.1, "4": 0.2}}, test="ttest",
                           topics="intersect")
    assert result.table.dropped == table.dropped


# ============================================================== omnibus tests

@pytest.mark.parametrize("seed, n, k, levels", [
    (1, 20, 5, 0), (2, 12, 3, 4), (3, 50, 8, 3), (4, 7, 4, 2), (5, 100, 17, 10), (6, 3, 7, 0)])
def test_friedman_equals_scipy_with_ties(seed, n, k, levels):
    values = _table(seed, n, k, levels)
    ours = stats.friedman(stats.score_table(values, runs=_runs(k)))
    theirs = ss.friedmanchisquare(*values.T)
    assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-12, abs=1e-12)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-10, abs=1e-15)
    assert ours.df == (k - 1,) and (ours.n_topics, ours.n_runs) == (n, k)


def test_friedman_is_undefined_when_every_topic_ties_all_runs():
    result = stats.friedman(stats.score_table([[0.5, 0.5, 0.5], [0.0, 0.0, 0.0]],
                                              runs=["a", "b", "c"]))
    assert math.isnan(result.statistic) and math.isnan(result.p_value)
    assert not result.significant(0.05)


@pytest.mark.parametrize("seed, n, k, levels", [
    (1, 20, 5, 0), (2, 12, 3, 4), (3, 30, 8, 0), (4, 6, 2, 0), (5, 40, 10, 0)])
def test_rm_anova_equals_statsmodels_anovarm(seed, n, k, levels):
    anova = pytest.importorskip("statsmodels.stats.anova")
    values = _table(seed, n, k, levels)
    ours = stats.rm_anova(stats.score_table(values, runs=_runs(k)))
    row = anova.AnovaRM(_long(values), "score", "topic", within=["run"]).fit() \
        .anova_table.loc["run"]
    assert ours.statistic == pytest.approx(row["F Value"], rel=1e-10)
    assert ours.p_value == pytest.approx(row["Pr > F"], rel=1e-10, abs=1e-300)
    assert ours.df == (row["Num DF"], row["Den DF"])


# ============================================================== Conover

def _conover_textbook(values: np.ndarray) -> np.ndarray:
    """Conover (1999), section 5.8, written as the book states it: T1 from A1 and C1, and
    |R_i - R_j| compared with t * sqrt(2 b (A1 - C1) (1 - T1 / (b (k-1))) / ((b-1)(k-1)))."""
    b, k = values.shape
    ranks = np.array([ss.rankdata(row) for row in values])
    rank_sums = ranks.sum(axis=0)
    a1 = (ranks ** 2).sum()
    c1 = b * k * (k + 1) ** 2 / 4
    t1 = (k - 1) * ((rank_sums ** 2).sum() - b * c1) / (a1 - c1)
    scale = math.sqrt(2 * b * (a1 - c1) * (1 - t1 / (b * (k - 1))) / ((b - 1) * (k - 1)))
    p = np.ones((k, k))
    for i, j in itertools.combinations(range(k), 2):
        p[i, j] = p[j, i] = 2 * ss.t.sf(abs(rank_sums[i] - rank_sums[j]) / scale,
                                        (b - 1) * (k - 1))
    return p


@pytest.mark.parametrize("seed, n, k, levels", [(1, 20, 5, 0), (2, 15, 4, 3), (3, 40, 9, 5)])
def test_conover_equals_the_textbook_formula(seed, n, k, levels):
    values = _table(seed, n, k, levels)
    result = stats.compare(stats.score_table(values, runs=_runs(k)), correction="none",
                           protected=False)
    expected = _conover_textbook(values)
    for pair in result.pairs:
        i, j = int(pair.run_a[1:]), int(pair.run_b[1:])
        assert pair.p_value == pytest.approx(expected[i, j], rel=1e-10)
        assert pair.p_corrected == pair.p_value
        assert pair.test == "conover"


# scikit-posthocs' test data: 3 blocks (rows) x 7 groups (columns).
SKPH_BLOCKS = np.array([[4, 3, 4, 4, 5, 6, 3], [1, 2, 3, 5, 6, 7, 7], [1, 2, 6, 4, 1, 5, 1]],
                       dtype=float)


def test_conover_reproduces_the_published_r_reference():
    """Durbin's all-pairs test (Conover 1999, section 5.9) on a complete block design is
    Conover's Friedman procedure. scikit-posthocs' test suite (tests/test_posthocs.py) pins,
    for SKPH_BLOCKS, the Holm-corrected p-values of its posthoc_durbin (a port of PMCMRplus'
    durbinAllPairsTest): groups 1-6 p = 0.381364, 2-6 p = 0.444549, every other pair 1; and
    the R result of the Durbin test, statistic 8.468354, p = 0.205758 (test_durbin), which
    for complete blocks is Friedman's."""
    result = stats.compare(stats.score_table(SKPH_BLOCKS, runs=list("abcdefg")),
                           correction="holm", protected=False)
    assert result.omnibus.statistic == pytest.approx(8.468354, abs=5e-7)
    assert result.omnibus.p_value == pytest.approx(0.205758, abs=5e-7)
    published = {("a", "f"): 0.381364, ("b", "f"): 0.444549}
    for pair in result.pairs:
        assert pair.p_corrected == pytest.approx(published.get((pair.run_a, pair.run_b), 1.0),
                                                 abs=5e-7)


def test_conover_differs_from_pmcmrplus_frdallpairsconovertest_by_its_rank_sum_term():
    """PMCMRplus' frdAllPairsConoverTest (and scikit-posthocs' port, whose test pins
    p = 0.0517417 for groups 1-6 of SKPH_BLOCKS without correction) computes the Friedman
    statistic in its error term from sum_j R_j instead of sum_j R_j^2. We follow the book:
    the substitution alone reproduces their number, and ours is the book's 0.0181602."""
    values = SKPH_BLOCKS
    b, k = values.shape
    ranks = np.array([ss.rankdata(row) for row in values])
    rank_sums, a1 = ranks.sum(axis=0), (ranks ** 2).sum()
    s2 = (a1 - b * k * (k + 1) ** 2 / 4) / (k - 1)
    their_t2 = (rank_sums.sum() - b * ((k + 1) / 2) ** 2) / s2          # sum R_j, not R_j^2
    scale = math.sqrt(s2 * 2 * b * (k - 1) / ((b - 1) * (k - 1)) * (1 - their_t2 / (b * (k - 1))))
    their_p = 2 * ss.t.sf(abs(rank_sums[0] - rank_sums[5]) / scale, (b - 1) * (k - 1))
    assert their_p == pytest.approx(0.0517417, abs=5e-8)
    ours = stats.compare(stats.score_table(values, runs=list("abcdefg")), correction="none",
                         protected=False).pair("a", "f")
    assert ours.p_value == pytest.approx(0.0181602, abs=5e-8)
    assert ours.p_value == pytest.approx(_conover_textbook(values)[0, 5], rel=1e-12)


# ============================================================== Nemenyi

# Demsar (2006, JMLR 7, section 3.2.2): four classifiers on 14 data sets with average ranks
# C4.5 3.143, C4.5+m 2.000, C4.5+cf 2.893, C4.5+m+cf 1.964 (rank 1 = best). Nemenyi's
# critical difference is 1.25 at alpha = 0.05 and 1.12 at 0.10: C4.5 differs from C4.5+m
# (1.143) and C4.5+m+cf (1.179) at 0.10 but not at 0.05; no other pair at 0.10. A rank
# matrix with those column means (the scores are the ranks themselves):
DEMSAR_RANKS = np.array([
    [3, 4, 2, 1], [3, 1, 4, 2], [3, 1, 4, 2], [4, 3, 1, 2], [1, 2, 3, 4], [4, 2, 3, 1],
    [4, 1, 3, 2], [4, 1, 3, 2], [4, 1, 2, 3], [2, 3, 4, 1], [3, 1, 4, 2], [2, 1, 4, 3],
    [3, 4, 2, 1], [4, 3, 1.5, 1.5]])


def test_nemenyi_reproduces_demsars_worked_example():
    assert DEMSAR_RANKS.mean(axis=0).round(3).tolist() == [3.143, 2.0, 2.893, 1.964]
    names = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
    result = stats.compare(stats.score_table(DEMSAR_RANKS, runs=names), posthoc="nemenyi",
                           protected=False)
    assert result.correction == "single-step"
    between = {("C4.5", "C4.5+m"), ("C4.5", "C4.5+m+cf")}
    for pair in result.pairs:
        if (pair.run_a, pair.run_b) in between:
            assert 0.05 < pair.p_value < 0.10
        else:
            assert pair.p_value > 0.10
        assert pair.p_corrected == pair.p_value
    # The critical differences themselves: q_alpha / sqrt(2) * sqrt(k (k+1) / (6 N)).
    for alpha, cd in ((0.05, 1.25), (0.10, 1.12)):
        q = ss.studentized_range.isf(alpha, 4, np.inf) / math.sqrt(2)
        assert q * math.sqrt(4 * 5 / (6 * 14)) == pytest.approx(cd, abs=0.005)


def test_nemenyi_statistic_is_the_studentized_mean_rank_difference():
    values = _table(7, 25, 6, 4)
    result = stats.compare(stats.score_table(values, runs=_runs(6)), posthoc="nemenyi")
    mean_ranks = np.array([ss.rankdata(row) for row in values]).mean(axis=0)
    for pair in result.pairs:
        i, j = int(pair.run_a[1:]), int(pair.run_b[1:])
        q = abs(mean_ranks[i] - mean_ranks[j]) / math.sqrt(6 * 7 / (12 * 25))
        assert pair.statistic == pytest.approx(q, rel=1e-12)
        assert pair.p_value == pytest.approx(ss.studentized_range.sf(q, 6, np.inf), rel=1e-10)
        assert pair.direction == (">" if mean_ranks[i] > mean_ranks[j] else
                                  "<" if mean_ranks[i] < mean_ranks[j] else "=")


# ============================================================== Tukey HSD

def test_tukey_for_two_runs_equals_the_paired_t_test():
    values = _table(8, 30, 2)
    result = stats.compare(stats.score_table(values, runs=["a", "b"]), test="anova")
    pair = result.pairs[0]
    t = ss.ttest_rel(values[:, 0], values[:, 1])
    assert pair.p_value == pytest.approx(t.pvalue, rel=1e-10)
    assert pair.statistic == pytest.approx(math.sqrt(2) * abs(t.statistic), rel=1e-12)


@pytest.mark.parametrize("seed, n, k", [(9, 20, 5), (10, 12, 3), (11, 30, 6)])
def test_tukey_uses_the_residual_mean_square_of_statsmodels_anova(seed, n, k):
    anova = pytest.importorskip("statsmodels.stats.anova")
    values = _table(seed, n, k)
    row = anova.AnovaRM(_long(values), "score", "topic", within=["run"]).fit() \
        .anova_table.loc["run"]
    means = values.mean(axis=0)
    ms_runs = n * ((means - values.mean()) ** 2).sum() / (k - 1)
    mse = ms_runs / row["F Value"]                     # MSE recovered from statsmodels' F
    result = stats.compare(stats.score_table(values, runs=_runs(k)), test="anova")
    assert result.correction == "single-step"
    for pair in result.pairs:
        i, j = int(pair.run_a[1:]), int(pair.run_b[1:])
        q = abs(means[i] - means[j]) / math.sqrt(mse / n)
        assert pair.statistic == pytest.approx(q, rel=1e-10)
        assert pair.p_value == pytest.approx(ss.studentized_range.sf(q, k, row["Den DF"]),
                                             rel=1e-9)


def test_tukey_estimates_equal_scipy_tukey_hsd_but_not_its_error_term():
    """scipy.stats.tukey_hsd treats the runs as independent groups (error df k (n-1), the
    within-run variance); for repeated measures the error is the ANOVA residual with
    (k-1)(n-1) df. The estimates (mean differences) are the same."""
    values = _table(12, 15, 4)
    result = stats.compare(stats.score_table(values, runs=_runs(4)), test="anova")
    theirs = ss.tukey_hsd(*values.T)
    for pair in result.pairs:
        i, j = int(pair.run_a[1:]), int(pair.run_b[1:])
        assert pair.mean_difference == pytest.approx(theirs.statistic[i, j], abs=1e-14)


# ============================================================== pairwise tests

def test_ttest_equals_scipy_and_the_formula():
    values = _table(13, 25, 4)
    result = stats.compare(stats.score_table(values, runs=_runs(4)), test="ttest",
                           correction="none")
    for pair in result.pairs:
        i, j = int(pair.run_a[1:]), int(pair.run_b[1:])
        theirs = ss.ttest_rel(values[:, i], values[:, j])
        assert pair.statistic == pytest.approx(theirs.statistic, rel=1e-12)
        assert pair.p_value == pytest.approx(theirs.pvalue, rel=1e-10)
        d = values[:, i] - values[:, j]
        assert pair.statistic == pytest.approx(d.mean() / (d.std(ddof=1) / math.sqrt(25)),
                                               rel=1e-10)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("continuity", [False, True])
@pytest.mark.parametrize("method", ["auto", "exact", "asymptotic"])
def test_wilcoxon_equals_scipy_with_the_same_options(zero_method, continuity, method):
    values = _table(14, 30, 3, levels=6)          # zero differences and ties
    if method == "exact" and zero_method != "wilcox":
        values = _table(14, 12, 3)                # scipy's exact test refuses zeros/ties
    result = stats.compare(stats.score_table(values, runs=_runs(3)), test="wilcoxon",
                           correction="none", zero_method=zero_method, continuity=continuity,
                           wilcoxon_method=method)
    for pair in result.pairs:
        i, j = int(pair.run_a[1:]), int(pair.run_b[1:])
        try:
            theirs = ss.wilcoxon(values[:, i], values[:, j], zero_method=zero_method,
                                 correction=continuity, method=method)
        except ValueError:          # scipy < 1.15 spells the normal approximation "approx"
            theirs = ss.wilcoxon(values[:, i], values[:, j], zero_method=zero_method,
                                 correction=continuity, method="approx")
        assert pair.statistic == pytest.approx(theirs.statistic, rel=1e-12)
        assert pair.p_value == pytest.approx(theirs.pvalue, rel=1e-10)


def test_wilcoxon_exact_p_by_enumerating_every_sign():
    a = np.array([0.9, 0.3, 0.55, 0.71, 0.12, 0.64, 0.48, 0.83])
    b = np.array([0.4, 0.5, 0.15, 0.2, 0.1, 0.3, 0.62, 0.02])
    d = a - b
    ranks = ss.rankdata(np.abs(d))
    w_plus = ranks[d > 0].sum()
    sums = [sum(r for r, s in zip(ranks, signs) if s) for signs in
            itertools.product([0, 1], repeat=len(d))]
    extreme = min(w_plus, ranks.sum() - w_plus)
    expected = min(1.0, 2 * np.mean([s <= extreme for s in sums]))
    result = stats.compare({"a": dict(enumerate(a)), "b": dict(enumerate(b))}, test="wilcoxon",
                           wilcoxon_method="exact")
    assert result.pairs[0].p_value == pytest.approx(expected, rel=1e-12)
    assert result.pairs[0].direction == ">"


def test_randomization_equals_scipy_permutation_test_with_the_same_seed():
    values = _table(15, 40, 3)
    result = stats.compare(stats.score_table(values, runs=_runs(3)), test="randomization",
                           n_permutations=2000, seed=42, correction="none")
    assert result.seed == 42
    for pair in result.pairs:
        i, j = int(pair.run_a[1:]), int(pair.run_b[1:])
        theirs = ss.permutation_test(
            (values[:, i], values[:, j]), lambda x, y, axis: x.mean(axis) - y.mean(axis),
            permutation_type="samples", vectorized=True, n_resamples=2000, **_rng_kwargs(42))
        assert pair.p_value == theirs.pvalue
        assert pair.statistic == pytest.approx(theirs.statistic, rel=1e-12)


def test_randomization_is_exact_when_every_sign_flip_fits():
    """8 topics, 2^8 = 256 <= 1000 resamples: scipy enumerates; the p-value is the exact
    one, twice the smaller tail of the 256 sign-flipped mean differences."""
    a = np.array([0.9, 0.3, 0.55, 0.71, 0.12, 0.64, 0.48, 0.83])
    b = np.array([0.4, 0.5, 0.15, 0.2, 0.1, 0.3, 0.62, 0.02])
    d = a - b
    flipped = np.array([np.mean(d * np.array(signs)) for signs in
                        itertools.product([1, -1], repeat=len(d))])
    observed = d.mean()
    tolerance = 1e-14 * abs(observed)
    expected = min(1.0, 2 * min(np.mean(flipped >= observed - tolerance),
                                np.mean(flipped <= observed + tolerance)))
    result = stats.compare({"a": dict(enumerate(a)), "b": dict(enumerate(b))},
                           test="randomization", n_permutations=1000, seed=1)
    assert result.pairs[0].p_value == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("method", ["BCa", "percentile", "basic"])
def test_bootstrap_ci_equals_scipy_with_the_same_seed(method):
    values = _table(16, 30, 2)
    ours = stats.bootstrap_ci(values[:, 0], values[:, 1], confidence_level=0.9,
                              n_resamples=3000, method=method, seed=7)
    theirs = ss.bootstrap((values[:, 0] - values[:, 1],), np.mean, confidence_level=0.9,
                          n_resamples=3000, method=method, **_rng_kwargs(7))
    assert (ours.low, ours.high) == (theirs.confidence_interval.low,
                                     theirs.confidence_interval.high)
    assert (ours.level, ours.method) == (0.9, method)
    result = stats.compare(stats.score_table(values, runs=["a", "b"]), test="ttest",
                           confidence_level=0.9, n_resamples=3000, ci_method=method, seed=7)
    assert result.pairs[0].ci == ours
    assert ours.low < result.pairs[0].mean_difference < ours.high


def test_bootstrap_ci_of_constant_differences_is_nan_not_an_error():
    ci = stats.bootstrap_ci([1.0, 2.0, 3.0], [0.5, 1.5, 2.5], seed=0)
    assert math.isnan(ci.low) and math.isnan(ci.high)


@pytest.mark.parametrize("kwargs, message", [
    ({"confidence_level": 1.0}, "confidence_level"),
    ({"method": "bca"}, "method must be"),
    ({"n_resamples": 0}, "n_resamples"),
])
def test_bootstrap_ci_rejects_bad_options(kwargs, message):
    with pytest.raises(InputError, match=message):
        stats.bootstrap_ci([1.0, 2.0, 3.0], [0.5, 1.0, 2.5], **kwargs)


# ============================================================== corrections

@pytest.mark.parametrize("ours, theirs", [("holm", "holm"), ("bonferroni", "bonferroni"),
                                          ("bh", "fdr_bh")])
def test_corrections_equal_statsmodels_multipletests(ours, theirs):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(17)
    for size in (1, 2, 7, 50):
        p = rng.random(size) ** 3
        p[: size // 3] = p[0]                      # ties
        expected = multitest.multipletests(p, method=theirs)[1]
        assert stats.correct(p, ours) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_correction_none_and_nan_handling():
    p = np.array([0.01, np.nan, 0.04, 0.03])
    assert stats.correct(p, "none")[[0, 2, 3]].tolist() == [0.01, 0.04, 0.03]
    holm = stats.correct(p, "holm")                 # m = 3 finite p-values
    assert math.isnan(holm[1])
    assert holm[[0, 2, 3]] == pytest.approx([0.03, 0.06, 0.06])
    with pytest.raises(InputError, match="correction must be"):
        stats.correct(p, "sidak")


def test_compare_corrects_the_pair_family():
    values = _table(18, 20, 5)
    raw = stats.compare(stats.score_table(values, runs=_runs(5)), test="ttest",
                        correction="none")
    for method in ("holm", "bonferroni", "bh"):
        corrected = stats.compare(stats.score_table(values, runs=_runs(5)), test="ttest",
                                  correction=method)
        expected = stats.correct([pair.p_value for pair in raw.pairs], method)
        assert [pair.p_corrected for pair in corrected.pairs] == expected.tolist()
        assert corrected.correction == method


# ============================================================== effect sizes

def test_relative_difference_and_practical_significance():
    assert stats.relative_difference(0.343, 0.242) == pytest.approx(100 * 0.101 / 0.242)
    assert stats.relative_difference(0.2, 0.25) == pytest.approx(-20.0)
    assert stats.relative_difference(-0.1, -0.2) == pytest.approx(50.0)   # |baseline|
    assert stats.relative_difference(0.0, 0.0) == 0.0
    assert stats.relative_difference(0.1, 0.0) == math.inf
    labels = [stats.practical_significance(x) for x in
              (0.0, 4.999, 5.0, -7.5, 10.0, 10.001, -25.0, math.inf, math.nan)]
    assert labels == ["marginal", "marginal", "noticeable", "noticeable", "noticeable",
                      "essential", "essential", "essential", "undefined"]


def test_pairs_carry_means_differences_and_labels():
    table = stats.score_table({"A": {"1": 0.30, "2": 0.40, "3": 0.50},
                               "B": {"1": 0.28, "2": 0.38, "3": 0.49}})
    pair = stats.compare(table, test="ttest").pairs[0]
    assert (pair.run_a, pair.run_b) == ("A", "B")
    assert pair.mean_a == pytest.approx(0.4) and pair.mean_b == pytest.approx(1.15 / 3)
    assert pair.mean_difference == pytest.approx(0.4 - 1.15 / 3)
    assert pair.relative_difference == pytest.approx(100 * (1.2 - 1.15) / 1.15)
    assert pair.practical == "marginal"
    assert pair.direction == ">" and pair.winner == "A" and pair.loser == "B"
    with pytest.raises(dataclasses.FrozenInstanceError):
        pair.p_value = 0.0


# ============================================================== compare()

def test_direction_follows_each_tests_own_location():
    """A wins 9 of 10 topics by a little and loses one by a lot: A has the better ranks and
    signed ranks, B the better mean. Rank-based pairs point to A, mean-based ones to B."""
    a = {str(t): 0.50 for t in range(10)}
    b = {str(t): 0.45 for t in range(9)}
    b["9"] = 1.5
    data = {"A": a, "B": b, "C": {str(t): 0.1 for t in range(10)}}
    expected = {"friedman": ">", "wilcoxon": ">", "ttest": "<", "anova": "<",
                "randomization": "<"}
    for test, direction in expected.items():
        pair = stats.compare(data, test=test, n_permutations=200, seed=0).pair("A", "B")
        assert pair.direction == direction, test
        assert pair.mean_difference < 0


def test_baseline_compares_every_run_with_it_as_run_b():
    values = _table(19, 20, 4)
    table = stats.score_table(values, runs=_runs(4))
    result = stats.compare(table, test="ttest", baseline="R2")
    assert [(p.run_a, p.run_b) for p in result.pairs] == [("R0", "R2"), ("R1", "R2"),
                                                          ("R3", "R2")]
    raw = [ss.ttest_rel(values[:, i], values[:, 2]).pvalue for i in (0, 1, 3)]
    assert [p.p_corrected for p in result.pairs] == pytest.approx(stats.correct(raw, "holm"))
    with pytest.raises(InputError, match="no run named"):
        stats.compare(table, baseline="R9")


def test_protected_pairs_need_a_significant_omnibus_test():
    # B beats A on 5 of 6 topics; C is noise: the Friedman test is not significant at 0.05.
    data = np.array([[0.2, 0.3, 0.5], [0.4, 0.5, 0.1], [0.1, 0.2, 0.9], [0.6, 0.7, 0.3],
                     [0.3, 0.35, 0.2], [0.5, 0.4, 0.6]])
    table = stats.score_table(data, runs=["A", "B", "C"])
    protected = stats.compare(table, correction="none")
    assert protected.omnibus.p_value > 0.05
    open_family = stats.compare(table, correction="none", protected=False)
    assert protected.pairs == open_family.pairs
    assert protected.significant(0.05) == ()
    flagged = [p for p in open_family.pairs if p.p_value < 0.05]
    assert open_family.significant(0.05) == tuple(flagged)


def test_seed_is_drawn_recorded_and_reproducible():
    values = _table(20, 15, 2)
    first = stats.compare(stats.score_table(values, runs=["a", "b"]), test="randomization",
                          n_permutations=500)
    assert isinstance(first.seed, int)
    again = stats.compare(stats.score_table(values, runs=["a", "b"]), test="randomization",
                          n_permutations=500, seed=first.seed)
    assert again.pairs == first.pairs


@pytest.mark.parametrize("kwargs, message", [
    ({"test": "kruskal"}, "test must be"),
    ({"test": "anova", "posthoc": "conover"}, "does not go with"),
    ({"test": "ttest", "posthoc": "tukey"}, "no post-hoc"),
    ({"correction": "sidak"}, "correction must be"),
    ({"test": "wilcoxon", "zero_method": "drop"}, "zero_method"),
    ({"n_permutations": 0}, "n_permutations"),
    ({"seed": 1.5}, "seed"),
    ({"test": "wilcoxon", "wilcoxon_method": "magic"}, "Wilcoxon"),
])
def test_compare_rejects_bad_options(kwargs, message):
    table = stats.score_table(_table(21, 10, 3), runs=_runs(3))
    with pytest.raises(InputError, match=message):
        stats.compare(table, **kwargs)


def test_degenerate_pairs_are_nan_and_never_significant():
    table = stats.score_table([[0.1, 0.1], [0.2, 0.2], [0.3, 0.3]], runs=["a", "b"])
    for test in ("ttest", "anova"):
        result = stats.compare(table, test=test)
        assert math.isnan(result.pairs[0].p_value)
        assert result.pairs[0].direction == "=" and result.significant(0.5) == ()


# ============================================================== TREC 2003 Robust

@pytest.fixture
def robust03(shared):
    real = shared / "data" / "real"
    measure = "avg_pos_nDCG@200(discount=tois,base=2,gains=0-1-10)"
    qrels = cumgain.trec_io.load_qrels(real / "qrels" / "qrels.robust03.txt")
    runs = sorted((real / "runs" / "robust03").glob("input.*.gz"))
    evaluations = {}
    for path in runs:
        evaluation = cumgain.evaluate(qrels, str(path), [measure], warn=False)
        evaluations[evaluation.run_tag] = evaluation
    return evaluations, measure


def test_robust03_comparison_agrees_with_scipy(robust03):
    """The 17 official TREC 2003 Robust runs, avg-pos of nDCG to rank 200 (TOIS discount,
    b = 2, gains 0-1-10 for the 0-2 qrels): every number against scipy on the same table."""
    evaluations, measure = robust03
    assert len(evaluations) == 17
    result = stats.compare(evaluations, measure)
    values = result.table.values
    assert values.shape == (100, 17)
    theirs = ss.friedmanchisquare(*values.T)
    assert result.omnibus.statistic == pytest.approx(theirs.statistic, rel=1e-10)
    assert result.omnibus.p_value == pytest.approx(theirs.pvalue, rel=1e-8)
    assert len(result.pairs) == 17 * 16 // 2
    expected = _conover_textbook(values)
    index = {run: i for i, run in enumerate(result.runs)}
    for pair in result.pairs:
        assert pair.p_value == pytest.approx(expected[index[pair.run_a], index[pair.run_b]],
                                             rel=1e-9, abs=1e-300)
    assert [p.p_corrected for p in result.pairs] == \
        stats.correct([p.p_value for p in result.pairs], "holm").tolist()
    for pair in stats.compare(evaluations, measure, test="wilcoxon").pairs[:20]:
        i, j = index[pair.run_a], index[pair.run_b]
        assert pair.p_value == pytest.approx(ss.wilcoxon(values[:, i], values[:, j]).pvalue,
                                             rel=1e-10)
    # The means are the evaluator's.
    for run, evaluation in evaluations.items():
        assert result.means[run] == pytest.approx(evaluation.means[measure], rel=1e-12)


# ============================================================== progress

def _numbers(comparison):
    return [(p.statistic, p.p_value, p.p_corrected, p.ci) for p in comparison.pairs]


@pytest.mark.parametrize("progress", [True, "auto"])
def test_progress_changes_no_number_of_the_resampling_tests(monkeypatch, progress, terminal):
    table = stats.score_table(_table(4, 12, 4), runs=_runs(4))
    options = dict(test="randomization", n_permutations=300, seed=11, confidence_level=0.9,
                   n_resamples=200)
    monkeypatch.setattr("sys.stderr", terminal)
    quiet = stats.compare(table, **options)
    assert terminal.text == ""
    shown = stats.compare(table, **options, progress=progress)
    assert _numbers(shown) == _numbers(quiet)
    assert shown.pairs[0].ci is not None
    assert "randomization test" in terminal.text and "bootstrap" in terminal.text
    assert terminal.text.endswith("\r")                 # the bar is erased at the end


def test_progress_is_silent_when_not_asked_or_not_on_a_terminal(capsys):
    table = stats.score_table(_table(4, 12, 3), runs=_runs(3))
    for progress in (False, "auto"):                    # capsys' stderr is no terminal
        stats.compare(table, test="randomization", n_permutations=100, seed=1,
                      progress=progress)
        assert capsys.readouterr().err == ""
    stats.compare(table, test="randomization", n_permutations=100, seed=1, progress=True)
    assert "randomization test" in capsys.readouterr().err
    stats.compare(table, test="friedman", progress=True)   # no resampling: no bar
    assert capsys.readouterr().err == ""
    for bad in (1, "yes", None):
        with pytest.raises(InputError, match="progress must be"):
            stats.compare(table, progress=bad)


def test_randomized_procedures_default_to_seed_0():
    data = {"A": {str(t): 0.1 * (t % 3) for t in range(12)},
            "B": {str(t): 0.1 * (t % 4) + 0.05 for t in range(12)}}
    first = stats.compare(data, test="randomization", n_permutations=200)
    again = stats.compare(data, test="randomization", n_permutations=200)
    assert first.seed == 0 and first.pairs[0].p_value == again.pairs[0].p_value
    drawn = stats.compare(data, test="randomization", n_permutations=200, seed=None)
    assert isinstance(drawn.seed, int)                  # None draws one, kept in the result
    a, b = np.arange(10.0), np.arange(10.0)[::-1]
    assert stats.bootstrap_ci(a, b, n_resamples=99) == stats.bootstrap_ci(a, b, n_resamples=99,
                                                                          seed=0)
