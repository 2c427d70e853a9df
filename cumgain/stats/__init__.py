"""Significance tests for comparing runs on per-topic scores (J&K 2002, sections 3.6 and 4).

The input is a topics x runs table of per-topic scores (any measure: avg-pos of the
nCG/nDCG vectors as in the paper's Table 2, nDCG@10, AP, ...), paired by topic:
:func:`score_table` builds it from ``{run: Evaluation}`` plus a measure name, from
``{run: {topic: value}}``, from a pandas DataFrame (rows topics, columns runs) or from
a 2-D array with run names. Runs must cover the same topics; ``topics="intersect"``
compares on the topics all runs share and records what was dropped.

:func:`compare` runs one of these families over the runs:

===================  ===========================  ============================================
``test``             omnibus test over k runs      pairs (``posthoc``)
===================  ===========================  ============================================
``"friedman"``       Friedman, tie-corrected       ``"conover"`` (default; Conover 1999, the
                     (= scipy friedmanchisquare)   procedure of the book the paper cites) or
                                                   ``"nemenyi"`` (studentized range)
``"anova"``          repeated-measures ANOVA,      ``"tukey"``: Tukey HSD on the ANOVA's
                     topics as subjects            residual mean square
                     (= statsmodels AnovaRM)
``"ttest"``          none                          paired t-test (= scipy ttest_rel)
``"wilcoxon"``       none                          Wilcoxon signed-rank (= scipy wilcoxon)
``"randomization"``  none                          paired randomization test (= scipy
                                                   permutation_test, permutation_type="samples")
===================  ===========================  ============================================

Multiple comparisons: the p-values of the pair family are corrected by ``correction``:
``"holm"`` (default), ``"bonferroni"``, ``"bh"`` (Benjamini-Hochberg) or ``"none"``
(= statsmodels ``multipletests``). Nemenyi and Tukey p-values come from the studentized
range distribution and already hold for the family of all k(k-1)/2 pairs (single-step);
they are not corrected again (``Comparison.correction == "single-step"``).

Effect sizes of each pair (run_a, run_b): the mean difference mean_a - mean_b; the
relative difference 100 (mean_a - mean_b) / |mean_b| in percent, relative to run_b (the
baseline when there is one); and Sparck Jones's (1974) practical significance as the
paper applies it (section 2.3): under 5% "marginal", over 10% "essential", and in between
"noticeable" (the word Sparck Jones used for 5-10%; the paper names only the two ends).

All tests are two-sided. Degenerate data (every topic ties all runs, a zero variance)
give NaN statistics or p-values, as scipy does, and are never marked significant.
"""
from __future__ import annotations

import inspect
import math
import warnings
from dataclasses import dataclass
from typing import Any, Optional, get_args

import numpy as np
from cumgain.common import display
from cumgain.common.optional import require
from cumgain.exceptions import InputError
from cumgain.common.progress import ProgressOption, check_progress, progress_bar
from cumgain.types import (
    CIMethod,
    Correction,
    Posthoc,
    ScoreTopics,
    StatsTest,
    WilcoxonMethod,
    ZeroMethod,
)

from cumgain.stats.score_table import TOPIC_POLICIES, ScoreTable, score_table

__all__ = [
    "ScoreTable", "score_table", "compare", "Comparison", "OmnibusResult", "PairwiseResult",
    "ConfidenceInterval", "friedman", "rm_anova", "bootstrap_ci", "correct",
    "relative_difference", "practical_significance", "TESTS", "POSTHOCS", "CORRECTIONS",
    "SINGLE_STEP", "TOPIC_POLICIES", "ZERO_METHODS", "CI_METHODS", "MARGINAL_PERCENT",
    "ESSENTIAL_PERCENT",
]

TESTS: tuple[StatsTest, ...] = get_args(StatsTest)
POSTHOCS: dict[str, tuple[Posthoc, ...]] = {"friedman": ("conover", "nemenyi"),
                                            "anova": ("tukey",)}
CORRECTIONS: tuple[Correction, ...] = get_args(Correction)
SINGLE_STEP = "single-step"      # the correction of Nemenyi and Tukey p-values
ZERO_METHODS: tuple[ZeroMethod, ...] = get_args(ZeroMethod)
CI_METHODS: tuple[CIMethod, ...] = get_args(CIMethod)
MARGINAL_PERCENT = 5.0           # Sparck Jones: under 5% marginal
ESSENTIAL_PERCENT = 10.0         # Sparck Jones: over 10% essential


def _scipy():
    """scipy.stats, imported on first use: it takes about a second, and the command line
    imports this module for its option lists."""
    from scipy import stats
    return stats


# ============================================================== results

@dataclass(frozen=True)
class OmnibusResult:
    """An omnibus test over all runs: ``statistic`` (Friedman's chi-square or ANOVA's F),
    its ``df`` (one or two degrees of freedom) and ``p_value``.

    Attributes
    ----------
    test : str
        "friedman" or "anova".
    statistic : float
        The test statistic.
    p_value : float
        Its p-value.
    df : tuple of float
        The degrees of freedom.
    n_topics, n_runs : int
        The table's size.
    """

    test: str
    statistic: float
    p_value: float
    df: tuple[float, ...]
    n_topics: int
    n_runs: int

    def significant(self, alpha: float = 0.05) -> bool:
        return bool(self.p_value < alpha)


@dataclass(frozen=True)
class ConfidenceInterval:
    """A bootstrap confidence interval for the mean difference of a pair.

    Attributes
    ----------
    low, high : float
        The bounds.
    level : float
        The confidence level.
    method : str
        scipy's bootstrap method.
    """

    low: float
    high: float
    level: float
    method: str


@dataclass(frozen=True)
class PairwiseResult:
    """One pair of runs: the test's ``statistic`` and ``p_value``, the ``p_corrected`` of the
    family, and the effect of run_a over run_b.

    ``statistic``: t (ttest, Conover), Wilcoxon's W as scipy reports it, the observed
    mean difference (randomization), or the studentized range q (Nemenyi, Tukey).
    ``direction``: ``">"`` if run_a is ahead of run_b by the test's own measure of
    location (mean rank for Conover and Nemenyi, the signed-rank sums W+ vs W- for
    Wilcoxon, the mean otherwise), ``"<"`` if behind, ``"="`` if level.
    ``relative_difference``: 100 (mean_a - mean_b) / |mean_b| (± inf when mean_b is 0).
    ``practical``: Sparck Jones's label of the relative difference.

    Attributes
    ----------
    run_a, run_b : str
        The pair.
    test : str
        The test that compared them.
    statistic, p_value, p_corrected : float
        The statistic, its p-value and the p-value after the correction.
    mean_a, mean_b, mean_difference, relative_difference : float
        The means, their difference and that difference in percent of ``mean_b``.
    practical : str
        Sparck Jones' reading of the relative difference.
    direction : str
        "<", ">" or "=".
    ci : ConfidenceInterval, optional
        The bootstrap interval of the mean difference, when asked.
    """

    run_a: str
    run_b: str
    test: str
    statistic: float
    p_value: float
    p_corrected: float
    mean_a: float
    mean_b: float
    mean_difference: float
    relative_difference: float
    practical: str
    direction: str
    ci: Optional[ConfidenceInterval] = None

    @property
    def winner(self) -> Optional[str]:
        """The run ahead (by ``direction``), or None if level."""
        return {">": self.run_a, "<": self.run_b}.get(self.direction)

    @property
    def loser(self) -> Optional[str]:
        return {">": self.run_b, "<": self.run_a}.get(self.direction)

    def significant(self, alpha: float = 0.05) -> bool:
        """Corrected p below ``alpha`` (and a direction)."""
        return bool(self.p_corrected < alpha) and self.direction != "="


@dataclass(frozen=True, repr=False)
class Comparison:
    """The outcome of :func:`compare`: the table, the omnibus test (None for a pairwise
    test), the pair family and how it was corrected.

    ``protected``: a pair counts as significant at level alpha only if the omnibus test
    is significant at alpha too (Conover's protected procedure); see :meth:`significant`.
    ``seed``: the seed the randomization test and bootstrap used (0 unless given; one
    drawn from the OS when given as None).
    Its repr is a short summary (test, significant pairs, the runs' first means); in a
    notebook, a table of the means.

    Attributes
    ----------
    table : ScoreTable
        The scores compared.
    test, posthoc, correction : str
        How they were compared.
    omnibus : OmnibusResult, optional
        The omnibus test (None for a pairwise test).
    pairs : tuple of PairwiseResult
        The pair family.
    baseline : str, optional
        The run every other was compared with.
    protected : bool
        Pairs count only when the omnibus test is significant too.
    seed : int, optional
        The seed of the randomization test and the bootstrap.
    """

    table: ScoreTable
    test: str
    posthoc: Optional[str]
    correction: str
    omnibus: Optional[OmnibusResult]
    pairs: tuple[PairwiseResult, ...]
    baseline: Optional[str] = None
    protected: bool = True
    seed: Optional[int] = 0

    @property
    def runs(self) -> tuple[str, ...]:
        return self.table.runs

    @property
    def measure(self) -> Optional[str]:
        return self.table.measure

    @property
    def means(self) -> dict[str, float]:
        return self.table.means

    def pair(self, run_a: str, run_b: str) -> PairwiseResult:
        """The result for two runs, in either order (as stored: check ``run_a``)."""
        for result in self.pairs:
            if {result.run_a, result.run_b} == {run_a, run_b}:
                return result
        raise InputError(f"no pair {run_a!r} / {run_b!r} in this comparison")

    def significant(self, alpha: float = 0.05) -> tuple[PairwiseResult, ...]:
        """The pairs significant at ``alpha`` after correction (and, when protected, only
        if the omnibus p-value is below ``alpha`` too)."""
        if self.protected and self.omnibus is not None and not self.omnibus.significant(alpha):
            return ()
        return tuple(result for result in self.pairs if result.significant(alpha))

    def _head(self) -> str:
        measure = f" of {display.shorten(self.measure)!r}" if self.measure else ""
        omnibus = f" (p={self.omnibus.p_value:.3g})" if self.omnibus is not None else ""
        return (f"Comparison{measure}: {display.count(len(self.runs), 'run')}, "
                f"{display.count(len(self.table.topics), 'topic')}, {self.test}{omnibus}, "
                f"{len(self.significant())} of {display.count(len(self.pairs), 'pair')} "
                "significant at 0.05")

    def __repr__(self) -> str:
        return display.summary(self._head() + "; means", self.means.items())

    def to_dataframe(self) -> Any:
        """A pandas DataFrame, a row per pair: the runs, their means and difference, the
        test's statistic, the p-value and the corrected one, whether it is significant at
        0.05 (with the omnibus test, when protected) and the direction (needs pandas)."""
        pd = require("pandas", extra="pandas", for_what="Comparison.to_dataframe()")
        significant = {id(p) for p in self.significant()}
        return pd.DataFrame([{"run_a": p.run_a, "run_b": p.run_b, "mean_a": p.mean_a,
                              "mean_b": p.mean_b, "mean_difference": p.mean_difference,
                              "statistic": p.statistic, "p_value": p.p_value,
                              "p_corrected": p.p_corrected,
                              "significant": id(p) in significant, "direction": p.direction}
                             for p in self.pairs])

    def _repr_html_(self) -> str:
        significant = {id(p) for p in self.significant()}
        pairs = [(f"{p.run_a} {p.direction} {p.run_b}", f"{p.mean_difference:.4g}",
                  f"{p.p_value:.3g}", (f"{p.p_corrected:.3g}",
                                       "*" if id(p) in significant else ""))
                 for p in self.pairs]
        return (display.means_table(self._head(), "run", self.means.items())
                + display.html_table("pairs (* significant at 0.05)",
                                     ("pair", "mean difference", "p-value", "corrected"),
                                     pairs))


# ============================================================== effect sizes

def relative_difference(mean_a: float, mean_b: float) -> float:
    """100 (mean_a - mean_b) / |mean_b|: run_a's difference in percent of run_b's mean.

    A zero mean_b gives 0 when mean_a is 0 too, else ± inf.

    Parameters
    ----------
    mean_a, mean_b : float
        The two means.

    Returns
    -------
    float

    Raises
    ------
    None

    Examples
    --------
    >>> round(relative_difference(0.33, 0.30), 9)
    10.0
    """
    difference = mean_a - mean_b
    if mean_b == 0:
        return 0.0 if difference == 0 else math.copysign(math.inf, difference)
    return 100.0 * difference / abs(mean_b)


def practical_significance(relative_percent: float) -> str:
    """Sparck Jones (1974) as J&K (2002, section 2.3) apply it: a difference under 5% is
    ``"marginal"``, over 10% ``"essential"``, and from 5% to 10% ``"noticeable"``.

    Parameters
    ----------
    relative_percent : float
        A relative difference in percent.

    Returns
    -------
    str

    Raises
    ------
    None

    Examples
    --------
    >>> [practical_significance(x) for x in (4.9, -7.0, 10.5)]
    ['marginal', 'noticeable', 'essential']
    """
    size = abs(relative_percent)
    if math.isnan(size):
        return "undefined"
    if size < MARGINAL_PERCENT:
        return "marginal"
    if size > ESSENTIAL_PERCENT:
        return "essential"
    return "noticeable"


# ============================================================== omnibus tests

def _as_table(data: Any) -> ScoreTable:
    return data if isinstance(data, ScoreTable) else score_table(data)


def _friedman_terms(values: np.ndarray) -> tuple:
    """Within-topic mid-ranks and Conover's (1999, section 5.8) terms: the rank sums R_j,
    A1 = sum of the squared ranks, and C1 = n k (k + 1)^2 / 4."""
    n, k = values.shape
    ranks = _scipy().rankdata(values, axis=1)
    rank_sums = ranks.sum(axis=0)
    a1 = float(np.sum(ranks * ranks))
    c1 = n * k * (k + 1) ** 2 / 4.0
    return ranks, rank_sums, a1, c1


def friedman(data: Any) -> OmnibusResult:
    """Friedman's test over the runs (topics are blocks), corrected for ties.

    With mid-ranks within each topic, rank sums R_j, A1 = sum r_ij^2 and
    C1 = n k (k+1)^2 / 4 (Conover 1999, eq. 5.8.2):

        T1 = (k - 1) (sum_j R_j^2 - n C1) / (A1 - C1),   p = P(chi2_{k-1} > T1)

    which equals scipy.stats.friedmanchisquare. NaN when every topic ties all runs.

    Parameters
    ----------
    data : mapping of str to Evaluation or dict, or ScoreTable
        ``{run: Evaluation}``, ``{run: {topic: score}}`` or a :class:`ScoreTable`.

    Returns
    -------
    OmnibusResult

    Raises
    ------
    InputError
        Bad data or options.
    """
    table = _as_table(data)
    n, k = table.values.shape
    _, rank_sums, a1, c1 = _friedman_terms(table.values)
    if a1 - c1 <= 0:
        statistic = p_value = math.nan
    else:
        statistic = (k - 1) * (float(np.sum(rank_sums ** 2)) - n * c1) / (a1 - c1)
        p_value = float(_scipy().chi2.sf(statistic, k - 1))
    return OmnibusResult("friedman", float(statistic), p_value, (float(k - 1),), n, k)


def _anova_terms(values: np.ndarray) -> tuple:
    """Repeated-measures ANOVA with topics as subjects: (F, p, df_runs, df_error, MSE)."""
    n, k = values.shape
    grand = values.mean()
    run_means = values.mean(axis=0)
    topic_means = values.mean(axis=1)
    ss_runs = n * float(np.sum((run_means - grand) ** 2))
    residuals = values - topic_means[:, None] - run_means[None, :] + grand
    ss_error = float(np.sum(residuals ** 2))
    df_runs, df_error = k - 1, (k - 1) * (n - 1)
    mse = ss_error / df_error
    with np.errstate(divide="ignore", invalid="ignore"):
        f_value = float(np.float64(ss_runs / df_runs) / np.float64(mse))
    p_value = float(_scipy().f.sf(f_value, df_runs, df_error)) if not math.isnan(f_value) \
        else math.nan
    return f_value, p_value, df_runs, df_error, mse


def rm_anova(data: Any) -> OmnibusResult:
    """One-way repeated-measures ANOVA, topics as subjects, runs as the within factor.

    SS_runs = n sum_j (mean_j - mean)^2; SS_error = sum_ij (x_ij - mean_i. - mean_.j + mean)^2;
    F = [SS_runs / (k-1)] / [SS_error / ((k-1)(n-1))], p = P(F_{k-1,(k-1)(n-1)} > F);
    no sphericity correction (as statsmodels' AnovaRM, whose F and p this equals).

    Parameters
    ----------
    data : mapping of str to Evaluation or dict, or ScoreTable
        ``{run: Evaluation}``, ``{run: {topic: score}}`` or a :class:`ScoreTable`.

    Returns
    -------
    OmnibusResult

    Raises
    ------
    InputError
        Bad data or options.
    """
    table = _as_table(data)
    n, k = table.values.shape
    f_value, p_value, df_runs, df_error, _ = _anova_terms(table.values)
    return OmnibusResult("anova", f_value, p_value, (float(df_runs), float(df_error)), n, k)


# ============================================================== pairwise statistics

def _conover(values: np.ndarray, pairs: list) -> list:
    """Conover's (1999, section 5.8, eq. 5.8.6) multiple comparisons after Friedman:

        t_ij = (R_i - R_j) / sqrt(2 (n A1 - sum_j R_j^2) / ((n-1)(k-1))),
        p = 2 P(t_{(n-1)(k-1)} > |t_ij|)

    (the same as the book's sqrt(2 n (A1 - C1) (1 - T1 / (n (k-1))) / ((n-1)(k-1)))).
    Returns [(t, p, rank difference)].
    """
    n, k = values.shape
    _, rank_sums, a1, _ = _friedman_terms(values)
    df = (n - 1) * (k - 1)
    scale = math.sqrt(max(2.0 * (n * a1 - float(np.sum(rank_sums ** 2))) / df, 0.0))
    out = []
    for i, j in pairs:
        difference = float(rank_sums[i] - rank_sums[j])
        with np.errstate(divide="ignore", invalid="ignore"):
            t_value = float(np.float64(difference) / np.float64(scale))
        p_value = float(2.0 * _scipy().t.sf(abs(t_value), df)) if not math.isnan(t_value) \
            else math.nan
        out.append((t_value, p_value, difference))
    return out


def _nemenyi(values: np.ndarray, pairs: list) -> list:
    """Nemenyi's test after Friedman (Demsar 2006; PMCMRplus frdAllPairsNemenyiTest):

        q_ij = |Rbar_i - Rbar_j| / sqrt(k (k+1) / (12 n)),   p = P(Q_{k,inf} > q_ij)

    with Rbar the mean ranks and Q the studentized range (single-step over all pairs).
    """
    n, k = values.shape
    _, rank_sums, _, _ = _friedman_terms(values)
    mean_ranks = rank_sums / n
    scale = math.sqrt(k * (k + 1) / (12.0 * n))
    out = []
    for i, j in pairs:
        difference = float(mean_ranks[i] - mean_ranks[j])
        q_value = abs(difference) / scale
        out.append((q_value, float(_scipy().studentized_range.sf(q_value, k, np.inf)),
                    difference))
    return out


def _tukey(values: np.ndarray, pairs: list) -> list:
    """Tukey's HSD for repeated measures: the ANOVA's residual mean square as the error,

        q_ij = |mean_i - mean_j| / sqrt(MSE / n),   p = P(Q_{k,(k-1)(n-1)} > q_ij)

    (single-step over all pairs). For k = 2 it equals the paired t-test.
    """
    n, k = values.shape
    _, _, _, df_error, mse = _anova_terms(values)
    means = values.mean(axis=0)
    scale = math.sqrt(mse / n)
    out = []
    for i, j in pairs:
        difference = float(means[i] - means[j])
        with np.errstate(divide="ignore", invalid="ignore"):
            q_value = float(np.float64(abs(difference)) / np.float64(scale))
        p_value = float(_scipy().studentized_range.sf(q_value, k, df_error)) \
            if not math.isnan(q_value) else math.nan
        out.append((q_value, p_value, difference))
    return out


def _quiet(function, *args, **kwargs):
    """Call scipy without the warnings of degenerate data (the NaN result says it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        degenerate = getattr(_scipy(), "DegenerateDataWarning", None)
        if degenerate is not None:
            warnings.simplefilter("ignore", degenerate)
        return function(*args, **kwargs)


def _ttest(a: np.ndarray, b: np.ndarray) -> tuple:
    """Paired t-test: t = mean(d) / (sd(d) / sqrt(n)), d = a - b (scipy.stats.ttest_rel)."""
    result = _quiet(_scipy().ttest_rel, a, b)
    return float(result.statistic), float(result.pvalue), float(np.mean(a - b))


def _signed_rank_balance(d: np.ndarray) -> float:
    """W+ - W-: the signed-rank sums of the nonzero differences (ranks of |d|)."""
    nonzero = d[d != 0]
    if len(nonzero) == 0:
        return 0.0
    ranks = _scipy().rankdata(np.abs(nonzero))
    return float(np.sum(np.sign(nonzero) * ranks))


#: scipy's normal approximation is method="asymptotic" from scipy 1.15, "approx" before;
#: either spelling works with either scipy.
_NORMAL_APPROXIMATION = {"asymptotic": "approx", "approx": "asymptotic"}


def _wilcoxon(a: np.ndarray, b: np.ndarray, zero_method: str, continuity: bool,
              method: str) -> tuple:
    """Wilcoxon signed-rank test of d = a - b (scipy.stats.wilcoxon with the same options)."""
    try:
        try:
            result = _quiet(_scipy().wilcoxon, a, b, zero_method=zero_method,
                            correction=continuity, method=method)
        except ValueError:
            if method not in _NORMAL_APPROXIMATION:
                raise
            other = _NORMAL_APPROXIMATION[method]   # the installed scipy's spelling
            result = _quiet(_scipy().wilcoxon, a, b, zero_method=zero_method,
                            correction=continuity, method=other)
    except ValueError as error:
        raise InputError(f"Wilcoxon test: {error}") from None
    return float(result.statistic), float(result.pvalue), _signed_rank_balance(a - b)


def _generator_argument(seed: Optional[int]) -> dict:
    """scipy's random-generator keyword (``rng`` from scipy 1.15, ``random_state`` before),
    holding ``numpy.random.default_rng(seed)``: the stream of scipy's ``rng=seed``."""
    keywords = inspect.signature(_scipy().permutation_test).parameters
    return {"rng" if "rng" in keywords else "random_state": np.random.default_rng(seed)}


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def _randomization(a: np.ndarray, b: np.ndarray, n_permutations: int, seed: int) -> tuple:
    """Paired randomization test of mean(a) - mean(b): each resample swaps a topic's two
    scores with probability 1/2 (scipy.stats.permutation_test, permutation_type="samples",
    n_resamples=n_permutations; exact when 2^n <= n_permutations). Two-sided p as scipy:
    twice the smaller one-sided p, each (count + 1) / (n_permutations + 1) when sampled."""
    result = _scipy().permutation_test(
        (a, b), _mean_difference, permutation_type="samples", vectorized=True,
        n_resamples=n_permutations, **_generator_argument(seed))
    statistic = float(result.statistic)
    return statistic, float(result.pvalue), statistic


def bootstrap_ci(a: Any, b: Any, *, confidence_level: float = 0.95, n_resamples: int = 9999,
                 method: CIMethod = "BCa", seed: Optional[int] = 0) -> ConfidenceInterval:
    """A bootstrap confidence interval for the mean of the paired differences a - b
    (topics resampled with replacement): scipy.stats.bootstrap((a - b,), np.mean, ...)
    with ``rng=numpy.random.default_rng(seed)``. NaN bounds for degenerate data (BCa).

    Parameters
    ----------
    a, b : array_like
        The paired scores of two runs, topic by topic.
    confidence_level : float, default 0.95
        In (0, 1).
    n_resamples : int, default 9999
        The bootstrap resamples.
    method : {"BCa", "percentile", "basic"}, default "BCa"
        scipy's interval method.
    seed : int or None, default 0
        The generator's seed (None draws one).

    Returns
    -------
    ConfidenceInterval

    Raises
    ------
    InputError
        Bad data or options.
    """
    if not 0 < confidence_level < 1:
        raise InputError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    if method not in CI_METHODS:
        raise InputError(f"method must be one of {CI_METHODS}, got {method!r}")
    _check_count(n_resamples, "n_resamples")
    difference = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    result = _quiet(_scipy().bootstrap, (difference,), np.mean,
                    confidence_level=confidence_level, n_resamples=n_resamples,
                    method=method, **_generator_argument(seed))
    interval = result.confidence_interval
    return ConfidenceInterval(float(interval.low), float(interval.high),
                              float(confidence_level), method)


# ============================================================== corrections

def correct(p_values: Any, method: Correction = "holm") -> np.ndarray:
    """Adjust a family of p-values for multiple comparisons (= statsmodels multipletests
    with ``holm``, ``bonferroni``, ``fdr_bh``).

    With the m finite p-values sorted ascending, p_(1) <= ... <= p_(m):
    ``bonferroni``: min(1, m p); ``holm``: max_{j<=i} min(1, (m - j + 1) p_(j));
    ``bh``: min_{j>=i} min(1, m p_(j) / j); ``none``: p. NaN p-values stay NaN and are
    not counted in m.

    Parameters
    ----------
    p_values : array_like
        The family of p-values (NaN stays NaN).
    method : {"holm", "bonferroni", "bh", "none"}, default "holm"
        The correction.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    InputError
        An unknown method.

    Examples
    --------
    >>> correct([0.01, 0.04, 0.03], "holm").tolist()
    [0.03, 0.06, 0.06]
    """
    if method not in CORRECTIONS:
        raise InputError(f"correction must be one of {CORRECTIONS}, got {method!r}")
    p = np.asarray(p_values, dtype=np.float64)
    out = p.copy()
    finite = np.flatnonzero(~np.isnan(p))
    m = len(finite)
    if method == "none" or m == 0:
        return out
    order = finite[np.argsort(p[finite], kind="stable")]
    ranked = p[order]
    position = np.arange(1, m + 1)
    if method == "bonferroni":
        adjusted = np.minimum(1.0, m * ranked)
    elif method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - position + 1) * ranked))
    else:
        adjusted = np.minimum.accumulate(np.minimum(1.0, m * ranked / position)[::-1])[::-1]
    out[order] = adjusted
    return out


# ============================================================== compare

def _check_count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _direction(location_difference: float) -> str:
    if location_difference > 0:
        return ">"
    if location_difference < 0:
        return "<"
    return "="


def _pair_indices(table: ScoreTable, baseline: Optional[str]) -> list:
    """All pairs (i < j) in run order, or (run, baseline) for every other run."""
    k = len(table.runs)
    if baseline is None:
        return [(i, j) for i in range(k) for j in range(i + 1, k)]
    b = table._index(baseline)
    return [(i, b) for i in range(k) if i != b]


def compare(data: Any, measure: Optional[str] = None, *, test: StatsTest = "friedman",
            posthoc: Optional[Posthoc] = None, correction: Correction = "holm",
            baseline: Optional[str] = None, topics: ScoreTopics = "strict",
            protected: bool = True, zero_method: ZeroMethod = "wilcox",
            continuity: bool = False, wilcoxon_method: WilcoxonMethod = "auto",
            n_permutations: int = 10_000, seed: Optional[int] = 0,
            confidence_level: Optional[float] = None, n_resamples: int = 9_999,
            ci_method: CIMethod = "BCa", progress: ProgressOption = False) -> Comparison:
    """Compare runs on per-topic scores: an omnibus test and the family of pairs.

    ``data`` / ``measure`` / ``topics``: as for :func:`score_table`.
    ``test``: ``"friedman"`` (pairs by ``posthoc="conover"``, the default, or
    ``"nemenyi"``), ``"anova"`` (pairs by Tukey HSD), or a pairwise test without an
    omnibus: ``"ttest"``, ``"wilcoxon"``, ``"randomization"``.
    ``correction``: ``"holm"``, ``"bonferroni"``, ``"bh"``, ``"none"`` for the pair family
    (Nemenyi and Tukey are single-step and not corrected again).
    ``baseline``: compare every other run with this one (run_b = baseline) instead of all
    pairs. ``protected``: see :class:`Comparison`.
    Wilcoxon: ``zero_method``, ``continuity`` (scipy's ``correction``) and
    ``wilcoxon_method`` (scipy's ``method``) as in scipy.stats.wilcoxon.
    Randomization: ``n_permutations`` resamples from ``seed``.
    ``confidence_level``: also give each pair a bootstrap CI of its mean difference
    (:func:`bootstrap_ci` with ``n_resamples``, ``ci_method`` and ``seed``).
    ``seed``: 0 by default, as the command line, so a result is reproducible; None draws
    one (kept in ``Comparison.seed``, as it always is); every pair uses the same seed,
    so each pair's result equals scipy's call with ``rng=seed``.
    ``progress``: False (default), True or "auto" (stderr a terminal only): a bar on
    stderr counting the pairs of the randomization test and of the bootstrap, the slow
    parts (:func:`cumgain.common.progress.progress_bar`); the other tests take no visible time
    and show none. It changes no number.

    Parameters
    ----------
    data : mapping of str to Evaluation or dict, or ScoreTable
        ``{run: Evaluation}``, ``{run: {topic: score}}`` or a :class:`ScoreTable`.
    measure : str, optional
        The measure, when the evaluations hold several.
    test : {"friedman", "anova", "ttest", "wilcoxon", "randomization"}, default "friedman"
        The omnibus test, or a pairwise test without one.
    posthoc : {"conover", "nemenyi", "tukey"}, optional
        The pairs after the omnibus test (default: Conover after Friedman, Tukey after ANOVA).
    correction : {"holm", "bonferroni", "bh", "none"}, default "holm"
        The correction of the pair family.
    baseline : str, optional
        Compare every other run with this one only.
    topics : {"strict", "intersect"}, default "strict"
        As in :func:`score_table`.
    protected : bool, default True
        A pair counts only when the omnibus test is significant too.
    zero_method, continuity, wilcoxon_method
        scipy.stats.wilcoxon's ``zero_method``, ``correction`` and ``method``.
    n_permutations : int, default 10000
        Resamples of the randomization test.
    seed : int or None, default 0
        The seed of the randomization test and the bootstrap (None draws one).
    confidence_level : float, optional
        Also give each pair a bootstrap interval of its mean difference.
    n_resamples : int, default 9999
        The bootstrap resamples.
    ci_method : {"BCa", "percentile", "basic"}, default "BCa"
        scipy's interval method.
    progress : bool or "auto", default False
        A bar on stderr for the slow parts.

    Returns
    -------
    Comparison

    Raises
    ------
    InputError
        Bad data or options.

    Examples
    --------
    >>> result = compare({"A": {"1": 0.1, "2": 0.2, "3": 0.3, "4": 0.2},
    ...                   "B": {"1": 0.3, "2": 0.4, "3": 0.6, "4": 0.5},
    ...                   "C": {"1": 0.2, "2": 0.3, "3": 0.4, "4": 0.3}})
    >>> round(result.omnibus.statistic, 6), result.pairs[0].direction
    (8.0, '<')
    """
    if test not in TESTS:
        raise InputError(f"test must be one of {TESTS}, got {test!r}")
    allowed = POSTHOCS.get(test, ())
    if posthoc is None:
        posthoc = allowed[0] if allowed else None
    elif posthoc not in allowed:
        raise InputError(f"posthoc {posthoc!r} does not go with test {test!r}"
                         + (f"; choose one of {allowed}" if allowed else
                            " (a pairwise test has no post-hoc step)"))
    if correction not in CORRECTIONS:
        raise InputError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
    if zero_method not in ZERO_METHODS:
        raise InputError(f"zero_method must be one of {ZERO_METHODS}, got {zero_method!r}")
    _check_count(n_permutations, "n_permutations")
    check_progress(progress)
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2 ** 63))
    elif isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"seed must be an integer or None, got {seed!r}")
    table = score_table(data, measure, topics=topics)
    if baseline is not None:
        table._index(baseline)
    values = table.values
    pairs = _pair_indices(table, baseline)
    label = table.measure or "compare"

    omnibus = None
    if test == "friedman":
        omnibus = friedman(table)
        rows = (_conover if posthoc == "conover" else _nemenyi)(values, pairs)
    elif test == "anova":
        omnibus = rm_anova(table)
        rows = _tukey(values, pairs)
    elif test == "ttest":
        rows = [_ttest(values[:, i], values[:, j]) for i, j in pairs]
    elif test == "wilcoxon":
        rows = [_wilcoxon(values[:, i], values[:, j], zero_method, continuity, wilcoxon_method)
                for i, j in pairs]
    else:
        rows = []
        with progress_bar(len(pairs), f"{label}: randomization test, pairs", progress) as bar:
            for i, j in pairs:
                rows.append(_randomization(values[:, i], values[:, j], n_permutations, seed))
                bar.update()
    name = posthoc or test
    single_step = name in ("nemenyi", "tukey")
    p_values = np.array([p for _, p, _ in rows], dtype=np.float64)
    p_corrected = p_values.copy() if single_step else correct(p_values, correction)

    intervals = [None] * len(pairs)
    if confidence_level is not None:
        with progress_bar(len(pairs), f"{label}: bootstrap CIs, pairs", progress) as bar:
            for index, (i, j) in enumerate(pairs):
                intervals[index] = bootstrap_ci(
                    values[:, i], values[:, j], confidence_level=confidence_level,
                    n_resamples=n_resamples, method=ci_method, seed=seed)
                bar.update()

    means = values.mean(axis=0)
    results = []
    for (i, j), (statistic, p_value, location), p_adjusted, interval in zip(
            pairs, rows, p_corrected, intervals):
        mean_a, mean_b = float(means[i]), float(means[j])
        relative = relative_difference(mean_a, mean_b)
        results.append(PairwiseResult(
            run_a=table.runs[i], run_b=table.runs[j], test=name, statistic=float(statistic),
            p_value=float(p_value), p_corrected=float(p_adjusted), mean_a=mean_a,
            mean_b=mean_b, mean_difference=mean_a - mean_b, relative_difference=relative,
            practical=practical_significance(relative), direction=_direction(location),
            ci=interval))
    return Comparison(table=table, test=test, posthoc=posthoc,
                      correction=SINGLE_STEP if single_step else correction, omnibus=omnibus,
                      pairs=tuple(results), baseline=baseline, protected=protected, seed=seed)
