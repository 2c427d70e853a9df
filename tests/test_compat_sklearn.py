"""The scikit-learn drop-in (cumgain.compat.sklearn) and its kernels (cgcore._dense).

Three oracles: scikit-learn itself (a test dependency), a naive loop written
from scikit-learn's definitions (``naive_dcg``), and values written as
formulas. Per-row values and means must agree to 1e-12, relative to the size of
the result, or where gains may be negative (dcg_score) and terms can cancel, to
1e-12 of the size of the terms.
"""
import ast
import doctest
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays

import cgcore._dense as dense
import cumgain.compat.sklearn as compat
from cumgain.compat.sklearn import dcg_score, ndcg_score
from cumgain.exceptions import InputError

sk_metrics = pytest.importorskip("sklearn.metrics")
try:
    from sklearn.metrics._ranking import _dcg_sample_scores as sk_dcg_rows
except ImportError:  # a private function: only the bit-identity test needs it
    sk_dcg_rows = None

REL = 1e-12


# ---------------------------------------------------------------- oracles

def discount(n_labels, k=None, log_base=2):
    """scikit-learn's discount: 1 / log_b(rank + 1), 0 beyond rank k."""
    d = [1 / (math.log(i + 2) / math.log(log_base)) for i in range(n_labels)]
    if k is not None:
        d[k:] = [0.0] * len(d[k:])
    return d


def naive_dcg(y_true, y_score, k=None, log_base=2, ignore_ties=False):
    """Per-row DCG from the definitions, one Python loop per row and tie group."""
    y_true = np.asarray(y_true, dtype=float)
    y_score = np.asarray(y_score)
    d = discount(y_true.shape[1], k, log_base)
    order = np.argsort(y_score)[:, ::-1]  # scikit-learn's order under ignore_ties
    rows = []
    for r in range(y_true.shape[0]):
        gains = [float(g) for g in y_true[r]]
        if ignore_ties:
            rows.append(sum(d[i] * gains[j] for i, j in enumerate(order[r])))
            continue
        scores = [float(s) for s in y_score[r]]
        total, rank = 0.0, 0
        for value in sorted(set(scores), reverse=True):
            members = [j for j, s in enumerate(scores) if s == value]
            mean = sum(gains[j] for j in members) / len(members)
            total += mean * sum(d[rank:rank + len(members)])
            rank += len(members)
        rows.append(total)
    return np.array(rows)


def naive_ndcg(y_true, y_score, k=None, ignore_ties=False):
    gain = naive_dcg(y_true, y_score, k, 2, ignore_ties)
    ideal_order = -np.sort(-np.asarray(y_true, dtype=float), axis=1)
    ideal = np.array([sum(di * g for di, g in zip(discount(len(row), k), row))
                      for row in ideal_order])
    return np.where(ideal > 0, gain / np.where(ideal > 0, ideal, 1), 0.0)


def term_size(y_true, log_base=2):
    """An upper bound of |sum of a row's DCG terms|: the scale for cancellation."""
    y = np.abs(np.asarray(y_true, dtype=float))
    return float(y.sum(axis=1).max()) * max(1.0, abs(math.log(2) / math.log(log_base)))


def assert_close(ours, expected, scale=0.0):
    tolerance = REL * max(abs(expected), scale)
    assert abs(ours - expected) <= tolerance, (ours, expected, ours - expected)


def assert_rows_close(ours, expected, scale=0.0):
    ours, expected = np.asarray(ours), np.asarray(expected)
    assert ours.shape == expected.shape
    tolerance = REL * np.maximum(np.abs(expected), scale)
    bad = np.abs(ours - expected) > tolerance
    assert not bad.any(), (ours[bad], expected[bad])


def sk_quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(*args, **kwargs)


# ---------------------------------------------------------------- worked examples

# scikit-learn's docstring example: true relevance and scores of five answers.
TRUE = np.asarray([[10, 0, 0, 1, 5]])
SCORES = np.asarray([[.1, .2, .3, 4, 70]])
TIED = np.asarray([[1, 0, 0, 0, 1]])


def test_dcg_of_the_docstring_example_is_the_formula():
    # ranking by score: 5, 1, 0, 0, 10 at ranks 1..5
    expected = 5 / math.log2(2) + 1 / math.log2(3) + 10 / math.log2(6)
    assert_close(dcg_score(TRUE, SCORES), expected)
    assert_close(dcg_score(TRUE, SCORES, k=2), 5 + 1 / math.log2(3))
    assert_close(dcg_score(TRUE, SCORES, log_base=10),
                 5 / math.log10(2) + 1 / math.log10(3) + 10 / math.log10(6))


def test_ndcg_of_the_docstring_example_is_the_formula():
    dcg = 5 + 1 / math.log2(3) + 10 / math.log2(6)
    ideal = 10 + 5 / math.log2(3) + 1 / math.log2(4)
    assert_close(ndcg_score(TRUE, SCORES), dcg / ideal)
    assert_close(ndcg_score(TRUE, TRUE, k=4), 1.0)


def test_ties_are_averaged_and_ignore_ties_takes_argsort_order():
    # ranks 1-2 hold a tie between gains 10 and 5: each gets the mean, 7.5
    assert dcg_score(TRUE, TIED, k=1) == 7.5
    assert ndcg_score(TRUE, TIED, k=1) == 0.75
    assert_close(dcg_score(TRUE, TIED, k=2), 7.5 * (1 + 1 / math.log2(3)))
    # the tail group (0, 0, 1 at ranks 3-5) averages 1/3 over three discounts
    assert_close(dcg_score(TRUE, TIED),
                 7.5 * (1 + 1 / math.log2(3))
                 + (1 / 3) * (1 / math.log2(4) + 1 / math.log2(5) + 1 / math.log2(6)))
    # np.argsort(...)[::-1] puts column 4 (gain 5) first
    assert dcg_score(TRUE, TIED, k=1, ignore_ties=True) == 5.0
    assert ndcg_score(TRUE, TIED, k=1, ignore_ties=True) == 0.5


def test_a_tie_straddling_the_cutoff_is_averaged_over_all_its_members():
    y_true = [[3, 0, 1, 2, 0, 0]]
    y_score = [[9, 5, 5, 5, 5, 1]]          # rank 1: gain 3; ranks 2-5: mean 3/4
    expected = 3 + 0.75 * (1 / math.log2(3))  # k = 2 keeps one rank of the tie
    assert_close(dcg_score(y_true, y_score, k=2), expected)
    assert_close(ndcg_score(y_true, y_score, k=2), expected / (3 + 2 / math.log2(3)))


def test_rows_whose_ideal_is_zero_score_zero_and_still_count_in_the_mean():
    y_true = [[0, 0, 0], [1, 0, 0]]
    y_score = [[3, 2, 1], [3, 2, 1]]
    assert ndcg_score(y_true, y_score) == 0.5
    assert ndcg_score(y_true, y_score, sample_weight=[3, 1]) == 0.25
    assert ndcg_score([[0, 0], [0, 0]], [[1, 2], [3, 3]]) == 0.0


def test_sample_weight_is_a_weighted_mean_of_the_rows():
    y_true = [[1, 0, 2], [0, 3, 0]]
    y_score = [[0.3, 0.2, 0.1], [0.1, 0.2, 0.3]]
    rows = naive_dcg(y_true, y_score)
    assert_close(dcg_score(y_true, y_score, sample_weight=[2, 1]),
                 (2 * rows[0] + rows[1]) / 3)
    assert_close(dcg_score(y_true, y_score, sample_weight=[1, -3]),
                 (rows[0] - 3 * rows[1]) / -2)


def test_the_module_docstring_examples_run():
    failures, tried = doctest.testmod(compat, verbose=False)
    assert tried >= 8 and failures == 0


# ---------------------------------------------------------------- against scikit-learn

def both(function_name, *args, **kwargs):
    ours = getattr(compat, function_name)(*args, **kwargs)
    theirs = sk_quiet(getattr(sk_metrics, function_name), *args, **kwargs)
    assert type(ours) is float and isinstance(theirs, float)   # (numpy.float64 before 1.3)
    return ours, theirs


gain_dtypes = st.sampled_from([np.int64, np.int32, np.uint8, np.float64, np.float32, np.bool_])
score_dtypes = st.sampled_from([np.float64, np.float32, np.int64, np.int32, np.int8])


@st.composite
def problems(draw, negative_gains=False, max_labels=30):
    """Small matrices whose scores come from a few values (heavy ties)."""
    n_rows = draw(st.integers(1, 6))
    n_labels = draw(st.integers(2, max_labels))
    gain_dtype = draw(gain_dtypes)
    if gain_dtype == np.bool_:
        gain_values = st.booleans()
    elif np.dtype(gain_dtype).kind == "f":
        low = -3.0 if negative_gains else 0.0
        gain_values = st.one_of(st.integers(int(low), 3).map(float),
                                st.floats(low, 3.0, width=32))
    else:
        low = -3 if negative_gains and np.dtype(gain_dtype).kind == "i" else 0
        gain_values = st.integers(low, 3)
    y_true = draw(arrays(gain_dtype, (n_rows, n_labels), elements=gain_values))
    score_dtype = draw(score_dtypes)
    if np.dtype(score_dtype).kind == "f":
        pool = draw(st.lists(st.floats(-5, 5, width=32), min_size=1, max_size=6))
    else:
        pool = draw(st.lists(st.integers(-100, 100), min_size=1, max_size=6))
    y_score = draw(arrays(score_dtype, (n_rows, n_labels), elements=st.sampled_from(pool)))
    k = draw(st.one_of(st.none(), st.integers(1, n_labels + 2)))
    weights = draw(st.one_of(
        st.none(), st.lists(st.floats(0.1, 10), min_size=n_rows, max_size=n_rows)))
    return y_true, y_score, k, weights


@given(problems(), st.booleans())
def test_ndcg_score_equals_scikit_learn_on_tied_matrices(problem, ignore_ties):
    y_true, y_score, k, weights = problem
    ours, theirs = both("ndcg_score", y_true, y_score, k=k, sample_weight=weights,
                        ignore_ties=ignore_ties)
    assert_close(ours, theirs)


@given(problems(negative_gains=True), st.booleans(),
       st.sampled_from([2, 10, math.e, 1.5, 0.5, 100]))
def test_dcg_score_equals_scikit_learn_on_tied_matrices(problem, ignore_ties, log_base):
    y_true, y_score, k, weights = problem
    ours, theirs = both("dcg_score", y_true, y_score, k=k, log_base=log_base,
                        sample_weight=weights, ignore_ties=ignore_ties)
    assert_close(ours, theirs, scale=term_size(y_true, log_base))


@given(problems(negative_gains=True, max_labels=12), st.booleans())
def test_per_row_values_equal_the_naive_definition(problem, ignore_ties):
    y_true, y_score, k, _ = problem
    n_labels = y_true.shape[1]
    gains = compat._kernel_array(y_true, compat._GAIN_TYPES)
    keys = compat._ranking_keys(y_score)
    cutoff = compat._cutoff(k, n_labels)
    ours = compat._dcg_sample_scores(y_true, y_score, gains, cutoff, 2, ignore_ties)
    assert_rows_close(ours, naive_dcg(y_true, y_score, k, 2, ignore_ties),
                      scale=term_size(y_true))
    if not (y_true < 0).any():
        ideal = dense.ideal_dcg(gains, compat._discount(n_labels, 2), cutoff)
        ndcg = np.where(ideal > 0, ours / np.where(ideal > 0, ideal, 1), 0.0)
        assert_rows_close(ndcg, naive_ndcg(y_true, y_score, k, ignore_ties))
    assert keys.dtype in compat._SCORE_TYPES


def random_matrix(rng, n_rows, n_labels, n_values, dtype=np.float64):
    """Scores drawn from n_values distinct values, gains graded 0-3 (mostly 0)."""
    values = rng.normal(size=n_values)
    y_score = values[rng.integers(0, n_values, size=(n_rows, n_labels))].astype(dtype)
    y_true = rng.choice(4, size=(n_rows, n_labels), p=[0.6, 0.2, 0.12, 0.08])
    return y_true, y_score


@pytest.mark.slow
@pytest.mark.parametrize("n_labels", [2, 9, 70, 300])
@pytest.mark.parametrize("n_values", [1, 3, 12, 40, 10_000])
def test_larger_random_matrices_equal_scikit_learn(n_labels, n_values):
    rng = np.random.default_rng(n_labels * 1000 + n_values)
    y_true, y_score = random_matrix(rng, 40, n_labels, n_values)
    weights = rng.random(40) + 0.1
    for k in sorted({None, 1, 3, 4, 10, 64, 65, 100, n_labels - 1, n_labels} - {0}, key=str):
        for ignore_ties in (False, True):
            assert_close(*both("ndcg_score", y_true, y_score, k=k, ignore_ties=ignore_ties))
            assert_close(*both("ndcg_score", y_true, y_score, k=k, ignore_ties=ignore_ties,
                               sample_weight=weights))
            signed = y_true - 1.5
            ours, theirs = both("dcg_score", signed, y_score, k=k, ignore_ties=ignore_ties,
                                log_base=10)
            assert_close(ours, theirs, scale=term_size(signed, 10))


@pytest.mark.skipif(sk_dcg_rows is None, reason="scikit-learn's private _dcg_sample_scores moved")
@pytest.mark.parametrize("n_values", [2, 5, 9, 13, 20, 60, 500])
@pytest.mark.parametrize("k", [None, 2, 3, 4, 5, 8, 10, 17, 64, 65, 200])
def test_tie_averaged_rows_are_bit_identical_to_scikit_learn(n_values, k):
    # The same operations in the same order, numpy's pairwise summation of the
    # group terms included: exact equality, not a tolerance. The number of
    # distinct values below the cut-off decides how numpy pairs the terms.
    rng = np.random.default_rng(n_values * 7 + (k or 0))
    y_true, y_score = random_matrix(rng, 60, 150, n_values)
    y_true = y_true * rng.random(y_true.shape) - 0.7   # signed, non-integer gains
    for log_base in (2, 10):
        expected = sk_dcg_rows(y_true, y_score, k=k, log_base=log_base, ignore_ties=False)
        ours = dense.tie_averaged_dcg(np.ascontiguousarray(y_true), y_score,
                                      compat._discount(150, log_base), k or 150)
        np.testing.assert_array_equal(ours, expected)


@pytest.mark.skipif(sk_dcg_rows is None, reason="scikit-learn's private _dcg_sample_scores moved")
@pytest.mark.parametrize("k", [4, 7, 9, 10, 12, 17, 33, 64])
def test_the_groups_below_the_cutoff_are_counted_as_numpy_pairs_the_terms(k):
    # k distinct scores on top, then 0-12 distinct values below: numpy's sum of
    # the group terms (zeros included) pairs them according to the total
    # number of groups, which the heap path counts only up to 8 below k.
    rng = np.random.default_rng(k)
    n_labels = 120
    for below in range(13):
        top = rng.permutation(np.arange(k) + 100.0)
        rest = rng.integers(0, max(below, 1), n_labels - k).astype(float)
        if below == 0:
            rest = np.empty(0)
        y_score = np.concatenate([top, rest])[None, :].repeat(20, axis=0)
        y_score = np.ascontiguousarray(rng.permuted(y_score, axis=1))
        y_true = rng.random((20, y_score.shape[1])) * 3 - 1
        expected = sk_dcg_rows(y_true, y_score, k=k, ignore_ties=False)
        ours = dense.tie_averaged_dcg(y_true, y_score,
                                      compat._discount(y_score.shape[1], 2), k)
        np.testing.assert_array_equal(ours, expected)


@pytest.mark.parametrize("shape", [(1, 2), (1, 7), (1, 500), (9, 2), (500, 2)])
def test_extreme_shapes_equal_scikit_learn(shape):
    rng = np.random.default_rng(shape[0] * shape[1])
    y_true, y_score = random_matrix(rng, *shape, n_values=3)
    for k in (None, 1, 2, 3):
        for ignore_ties in (False, True):
            assert_close(*both("ndcg_score", y_true, y_score, k=k, ignore_ties=ignore_ties))
            assert_close(*both("dcg_score", y_true, y_score, k=k, ignore_ties=ignore_ties))


def test_input_types_equal_scikit_learn():
    y_true = [[3, 0, 1, 2], [0, 0, 1, 1], [2, 2, 0, 1]]
    y_score = [[0.5, 0.5, 0.1, 0.2], [1, 2, 3, 4], [0, 0, 0, 0]]
    cases = [
        (y_true, y_score),                                            # nested lists
        (np.array(y_true, dtype=object), np.array(y_score, dtype=object)),
        (np.asfortranarray(y_true), np.asfortranarray(y_score)),     # F order
        (np.array(y_true)[:, ::-1], np.array(y_score)[:, ::-1]),      # negative strides
        (np.array(y_true, dtype=">i8"), np.array(y_score, dtype=">f8")),  # big-endian
        (np.array(y_true, dtype=np.float16), np.array(y_score, dtype=np.float16)),
        (np.array(y_true, dtype=np.int16), np.array(y_score, dtype=np.uint16)),
    ]
    for t, s in cases:
        for ignore_ties in (False, True):
            assert_close(*both("ndcg_score", t, s, ignore_ties=ignore_ties))
            assert_close(*both("dcg_score", t, s, k=2, ignore_ties=ignore_ties))


def test_read_only_inputs_are_accepted():
    y_true, y_score = random_matrix(np.random.default_rng(3), 5, 20, 4)
    y_true.flags.writeable = False
    y_score.flags.writeable = False
    assert_close(*both("ndcg_score", y_true, y_score, k=5))
    assert_close(*both("ndcg_score", y_true, y_score, k=5, ignore_ties=True))


def test_bool_gains_equal_scikit_learn():
    rng = np.random.default_rng(11)
    y_true = rng.random((8, 15)) < 0.3
    y_score = rng.integers(0, 4, (8, 15)).astype(float)
    for k in (None, 3):
        assert_close(*both("ndcg_score", y_true, y_score, k=k))
        assert_close(*both("dcg_score", y_true, y_score, k=k, ignore_ties=True))


def test_integer_scores_beyond_float64_precision_keep_their_order():
    big = 2**60
    y_score = np.array([[big + 1, big, big + 2, big], [-big - 1, -big, 5, -big - 1]],
                       dtype=np.int64)
    y_true = [[1, 2, 3, 0], [3, 1, 0, 2]]
    for ignore_ties in (False, True):
        assert_close(*both("ndcg_score", y_true, y_score, ignore_ties=ignore_ties))
    # float64 would tie big and big + 1; the true order puts gain 3 first
    assert dcg_score(y_true[:1], y_score[:1], k=1) == 3.0


def test_log_base_one_gives_zero_discounts_like_scikit_learn():
    with pytest.warns(RuntimeWarning):
        ours = dcg_score(TRUE, SCORES, log_base=1)
    assert ours == sk_quiet(sk_metrics.dcg_score, TRUE, SCORES, log_base=1) == 0.0
    assert dcg_score(TRUE, SCORES, log_base=0.5) < 0


def test_k_may_exceed_the_number_of_labels_and_be_any_integral():
    assert dcg_score(TRUE, SCORES, k=10**30) == dcg_score(TRUE, SCORES)
    assert dcg_score(TRUE, SCORES, k=np.int8(2)) == dcg_score(TRUE, SCORES, k=2)
    assert dcg_score(TRUE, SCORES, k=True) == dcg_score(TRUE, SCORES, k=1) == 5.0


# ---------------------------------------------------------------- deliberate differences

def test_unsigned_and_bool_scores_are_ranked_by_their_values():
    # scikit-learn's tie-averaging negates the scores: uint8 0 wraps to 0 and
    # ranks first, and bool scores raise. cumgain ranks the values themselves.
    y_true = [[1, 0, 2], [0, 1, 1]]
    as_uint8 = np.array([[0, 1, 2], [2, 1, 0]], dtype=np.uint8)
    as_int64 = as_uint8.astype(np.int64)
    assert ndcg_score(y_true, as_uint8) == ndcg_score(y_true, as_int64)
    assert_close(ndcg_score(y_true, as_uint8), sk_metrics.ndcg_score(y_true, as_int64))
    assert_close(ndcg_score(y_true, as_uint8),
                 sk_metrics.ndcg_score(y_true, as_uint8, ignore_ties=True))
    assert ndcg_score(y_true, as_uint8) != sk_metrics.ndcg_score(y_true, as_uint8)
    as_bool = np.array([[True, False, True], [False, False, True]])
    assert_close(ndcg_score(y_true, as_bool),
                 sk_metrics.ndcg_score(y_true, as_bool.astype(int)))
    int8_min = np.array([[-128, 0, 5]], dtype=np.int8)
    assert dcg_score([[4, 1, 2]], int8_min, k=1) == 2.0


def test_scores_must_have_the_shape_of_the_gains():
    with pytest.raises(InputError, match=r"same shape; got \(1, 5\) and \(1, 4\)"):
        ndcg_score(TRUE, SCORES[:, :4])
    with pytest.raises(InputError, match=r"same shape; got \(1, 5\) and \(1, 10\)"):
        dcg_score(TRUE, np.hstack([SCORES, SCORES]))


# ---------------------------------------------------------------- errors

ERRORS = [
    # (function, args, kwargs, message pattern); each also fails in scikit-learn
    ("ndcg_score", (TRUE, SCORES), {"k": 0}, r"'k' parameter of ndcg_score must be an int"),
    ("ndcg_score", (TRUE, SCORES), {"k": 2.0}, r"'k' parameter .* Got 2.0 instead"),
    ("dcg_score", (TRUE, SCORES), {"k": -1}, r"'k' parameter of dcg_score"),
    ("dcg_score", (TRUE, SCORES), {"log_base": 0}, r"'log_base' parameter .*\(0.0, inf\)"),
    ("dcg_score", (TRUE, SCORES), {"log_base": -2}, r"'log_base' parameter"),
    ("dcg_score", (TRUE, SCORES), {"log_base": np.inf}, r"'log_base' parameter"),
    ("dcg_score", (TRUE, SCORES), {"log_base": np.nan}, r"'log_base' parameter"),
    ("dcg_score", (TRUE, SCORES), {"log_base": "2"}, r"'log_base' parameter"),
    ("ndcg_score", (TRUE, SCORES), {"ignore_ties": 1}, r"'ignore_ties' parameter .*'bool'"),
    ("ndcg_score", (TRUE, SCORES), {"sample_weight": 1.0}, r"'sample_weight' .* or None"),
    ("ndcg_score", (3, SCORES), {}, r"'y_true' parameter .* array-like. Got 3"),
    ("ndcg_score", (TRUE, "abc"), {}, r"'y_score' parameter .* array-like"),
    ("ndcg_score", (np.array(3), SCORES), {}, r"at least 1 dimension"),
    ("ndcg_score", ([["a", "b"]], [[1, 2]]), {}, r"bytes/strings"),
    ("ndcg_score", (np.array([[1, "x"]], dtype=object), [[1, 2]]), {}, r"could not convert"),
    ("ndcg_score", (TRUE + 0j, SCORES), {}, r"Complex data not supported"),
    ("ndcg_score", (TRUE[None], SCORES[None]), {}, r"Found array with dim 3"),
    ("ndcg_score", ([[1, 2], [1]], [[1, 2], [1, 2]]), {}, r"inhomogeneous|sequence"),
    ("ndcg_score", ([[1.0, np.nan]], [[1, 2]]), {}, r"Input contains NaN"),
    ("ndcg_score", ([[1, 2]], [[np.inf, 2]]), {}, r"Input contains infinity"),
    ("dcg_score", ([[1, 2]], [[1, -np.inf]]), {}, r"Input contains infinity"),
    ("ndcg_score", ([[1, 2]], [[1e308, 1e308]]), {}, None),   # finite: must NOT raise
    ("ndcg_score", (np.zeros((0, 3)), np.zeros((0, 3))), {}, r"0 sample\(s\)"),
    ("ndcg_score", (np.zeros((3, 0)), np.zeros((3, 0))), {}, r"0 feature\(s\)"),
    ("ndcg_score", (TRUE, np.vstack([SCORES, SCORES])), {}, r"inconsistent numbers of samples: \[1, 2\]"),
    ("ndcg_score", (TRUE, SCORES), {"sample_weight": [1, 2]}, r"inconsistent .*\[1, 1, 2\]"),
    ("ndcg_score", (-TRUE, SCORES), {}, r"negative y_true"),
    ("ndcg_score", (TRUE[:, :1], SCORES[:, :1]), {}, r"more than 1 document. Got 1"),
    ("dcg_score", (TRUE[:, :1], SCORES[:, :1]), {}, r"Got binary instead"),
    ("dcg_score", ([[1], [2], [3]], [[1], [2], [3]]), {}, r"Got multiclass instead"),
    ("dcg_score", ([[0.5], [2]], [[1], [2]]), {}, r"Got continuous instead"),
    ("dcg_score", (TRUE[0], SCORES[0]), {}, r"formats are supported. Got multiclass"),
    ("dcg_score", ([0.5, 1.5], [1, 2]), {}, r"Got continuous instead"),
    ("dcg_score", ([[0], [1]], [[1], [2]]), {}, r"Got binary instead"),
    ("ndcg_score", ([1, 0, 2], [1, 2, 3]), {}, r"formats are supported"),
    ("ndcg_score", (TRUE, SCORES), {"sample_weight": [[1.0]]}, r"sample_weight must have shape"),
    ("ndcg_score", (TRUE, SCORES), {"sample_weight": np.array(1.0)}, r"at least 1 dimension"),
    ("ndcg_score", (TRUE, SCORES), {"sample_weight": ["a"]}, r"real numbers"),
    ("ndcg_score", (TRUE, SCORES), {"sample_weight": [0.0]}, r"Weights sum to zero"),
    ("ndcg_score", (np.zeros((2, 3), dtype="datetime64[s]"), np.zeros((2, 3))), {}, r"not numeric"),
]


@pytest.mark.parametrize("function,args,kwargs,message", ERRORS)
def test_invalid_input_raises_an_input_error_where_scikit_learn_raises(
        function, args, kwargs, message):
    ours = getattr(compat, function)
    theirs = getattr(sk_metrics, function)
    if message is None:
        assert ours(*args, **kwargs) == sk_quiet(theirs, *args, **kwargs)
        return
    with pytest.raises(InputError, match=message) as caught:
        ours(*args, **kwargs)
    assert isinstance(caught.value, ValueError)
    with pytest.raises(Exception):
        sk_quiet(theirs, *args, **kwargs)


def test_sparse_input_is_refused_like_scikit_learn():
    sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(InputError, match="array-like"):
        ndcg_score(sparse.csr_matrix(TRUE), SCORES)
    with pytest.raises(ValueError):
        sk_metrics.ndcg_score(sparse.csr_matrix(TRUE), SCORES)


def test_error_classes_also_derive_from_what_scikit_learn_raises():
    # scikit-learn raises InvalidParameterError (ValueError and TypeError),
    # TypeError for a mis-shaped weight, ZeroDivisionError for zero weights.
    with pytest.raises(TypeError):
        ndcg_score(TRUE, SCORES, k=0)
    with pytest.raises(TypeError):
        ndcg_score(TRUE, SCORES, sample_weight=[[1.0]])
    with pytest.raises(ZeroDivisionError):
        ndcg_score(TRUE, SCORES, sample_weight=[0.0])
    assert issubclass(compat.InvalidParameterError, InputError)
    assert issubclass(compat.ZeroWeightSumError, InputError)
    with pytest.raises(TypeError):
        ndcg_score(TRUE, SCORES, 3)          # k is keyword-only, as in scikit-learn
    with pytest.raises(TypeError):
        ndcg_score(TRUE, SCORES, log_base=2)  # ndcg_score has no log_base


# ---------------------------------------------------------------- the kernels

def test_kernels_check_shapes_and_cutoffs_before_running():
    gains = np.ones((3, 4))
    scores = np.zeros((3, 4))
    d = compat._discount(4, 2)
    for kernel in (dense.tie_averaged_dcg, dense.ranked_dcg):
        with pytest.raises(ValueError, match="shape"):
            kernel(gains, np.zeros((3, 5)), d, 2)
        with pytest.raises(ValueError, match="k must be >= 1"):
            kernel(gains, scores, d, 0)
        with pytest.raises(ValueError, match="fewer than the 4 labels"):
            kernel(gains, scores, d[:3], 2)
        with pytest.raises(ValueError, match="out has shape"):
            kernel(gains, scores, d, 2, out=np.empty(2))
        with pytest.raises(ValueError, match="at least one column"):
            kernel(np.ones((3, 0)), np.ones((3, 0)), d, 2)
    with pytest.raises(ValueError, match="k must be >= 1"):
        dense.ideal_dcg(gains, d, 0)
    with pytest.raises((TypeError, ValueError)):      # only C-contiguous matrices
        dense.ideal_dcg(np.ones((4, 3)).T, d, 2)
    with pytest.raises((TypeError, ValueError)):      # no int16 specialisation
        dense.ideal_dcg(np.ones((3, 4), dtype=np.int16), d, 2)


def test_ordered_dcg_checks_every_index():
    gains = np.arange(12.0).reshape(3, 4)
    d = compat._discount(4, 2)
    out = np.zeros(3)
    rows = np.array([2, 0], dtype=np.int64)
    order = np.array([[3, 2], [0, 1]], dtype=np.int64)
    dense.ordered_dcg(gains, rows, order, d, out)
    assert out[2] == 11 * d[0] + 10 * d[1] and out[0] == 0 * d[0] + 1 * d[1] and out[1] == 0
    with pytest.raises(ValueError, match=r"rows\[0\] = 3"):
        dense.ordered_dcg(gains, np.array([3, 0]), order, d, out)
    with pytest.raises(ValueError, match=r"order\[1, 1\] = 4"):
        dense.ordered_dcg(gains, rows, np.array([[3, 2], [0, 4]]), d, out)
    with pytest.raises(ValueError, match=r"order\[0, 0\] = -1"):
        dense.ordered_dcg(gains, rows, np.array([[-1, 2], [0, 1]]), d, out)
    with pytest.raises(ValueError, match="2 row indices"):
        dense.ordered_dcg(gains, rows, order[:1], d, out)


def test_ranked_dcg_flags_exactly_the_rows_whose_tie_order_matters():
    gains = np.array([[1.0, 2, 0, 0], [1, 1, 0, 5], [3, 0, 0, 0], [0, 0, 1, 2]])
    scores = np.array([[5.0, 5, 1, 0], [5, 5, 1, 0], [2, 1, 1, 1], [2, 1, 1, 1]])
    d = compat._discount(4, 2)
    values, rows = dense.ranked_dcg(gains, scores, d, 2)
    # row 0: the top tie mixes gains 1 and 2; row 1: equal gains tie; row 2: the
    # tie at rank 2 holds only zeros; row 3: the tie at rank 2 mixes 0, 1, 2
    assert rows.tolist() == [0, 3]
    assert_close(values[1], 1 + 1 / math.log2(3))
    assert values[2] == 3.0
    values, rows = dense.ranked_dcg(gains, scores, d, 4)   # the full-sort path
    assert rows.tolist() == [0, 3]
    assert_close(values[1], 1 + 1 / math.log2(3) + 5 / math.log2(5))


def test_ideal_dcg_sums_the_largest_gains_in_every_path():
    rng = np.random.default_rng(8)
    gains = rng.integers(0, 5, (20, 200)).astype(np.float32)
    d = compat._discount(200, 2)
    for k in (1, 10, 64, 65, 199, 200):
        expected = [sum(di * g for di, g in zip(d[:k], sorted(row, reverse=True)))
                    for row in gains.astype(float)]
        assert_rows_close(dense.ideal_dcg(gains, d, k), expected)


def test_the_stub_names_every_public_kernel():
    stub = Path(dense.__file__).with_name("_dense.pyi")
    tree = ast.parse(stub.read_text())
    stubbed = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    public = {name for name in dir(dense)
              if not name.startswith("_") and callable(getattr(dense, name))}
    assert stubbed == public
