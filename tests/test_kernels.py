"""The compiled kernels equal their pure-Python twins, bit for bit, and reject bad input."""
import math

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

import cgcore
from cumgain.reference import kernels as reference

RULES = [cgcore.DISCOUNT_NONE, cgcore.DISCOUNT_RANK, cgcore.DISCOUNT_TOIS,
         cgcore.DISCOUNT_NOTE, cgcore.DISCOUNT_TREC_EVAL]

gain_values = st.one_of(st.integers(-2, 4).map(float),  # many ties
                        st.floats(-5, 100, allow_nan=False, allow_infinity=False))
topic_lists = st.lists(st.lists(gain_values, max_size=120), min_size=1, max_size=8)
bases = st.one_of(st.sampled_from([2.0, 10.0, math.e]), st.floats(1.01, 50))


def equal_or_ratio_overflow(compiled, twin, of=("ratio",)):
    """compiled() equals twin() bit for bit; or, where a finite (D)CG over a tiny ideal
    > 0 leaves float64's range (100 / 5e-324: gains like 5e-324 are drawn), compiled()
    raises SumOverflow and twin()'s value there is infinite (a sum of such ratios too:
    ``of`` names the sums that may overflow). Returns the value, or None."""
    with np.errstate(over="ignore"):       # the twin divides numpy scalars
        expected = twin()
    try:
        result = compiled()
    except cgcore.SumOverflow as overflow:
        assert overflow.of in of
        assert np.isinf(expected).any()
        return None
    np.testing.assert_array_equal(result, expected)
    return result


def flatten(lists):
    values = np.array([g for row in lists for g in row], dtype=np.float64)
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(row) for row in lists], out=offsets[1:])
    return values, offsets


@given(st.sampled_from(RULES), bases, st.integers(1, 60))
def test_discount_divisors(rule, base, depth):
    np.testing.assert_array_equal(cgcore.discount_divisors(rule, base, depth),
                                  reference.discount_divisors(rule, base, depth))


@given(topic_lists, st.integers(1, 40))
def test_cg_vectors(lists, depth):
    values, offsets = flatten(lists)
    np.testing.assert_array_equal(cgcore.cg_vectors(values, offsets, depth),
                                  reference.cg_vectors(values, offsets, depth))


@given(topic_lists, st.integers(1, 40), st.sampled_from(RULES), bases)
def test_dcg_vectors(lists, depth, rule, base):
    values, offsets = flatten(lists)
    divisors = cgcore.discount_divisors(rule, base, depth)
    np.testing.assert_array_equal(cgcore.dcg_vectors(values, offsets, divisors, depth),
                                  reference.dcg_vectors(values, offsets, divisors, depth))


@given(topic_lists, st.integers(1, 40))
def test_ideal_gain_vectors(lists, depth):
    values, offsets = flatten(lists)
    np.testing.assert_array_equal(cgcore.ideal_gain_vectors(values, offsets, depth),
                                  reference.ideal_gain_vectors(values, offsets, depth))


@example(lists=[[1.1125369292536007e-308, -1.0]], depth=6, zero_ideal=0.0)  # found by CI
@example(lists=[[1.1125369292536007e-308, -1.0]] * 2, depth=2, zero_ideal=0.0)
@given(topic_lists, st.integers(1, 30), st.sampled_from([0.0, math.nan]))
def test_normalise_average_and_avg_pos(lists, depth, zero_ideal):
    values, offsets = flatten(lists)
    cg = cgcore.cg_vectors(values, offsets, depth)
    ideal = cgcore.ideal_gain_vectors(values, offsets, depth)
    ideal_cg = cgcore.cg_vectors(ideal.reshape(-1), np.arange(len(lists) + 1) * depth, depth)
    normalised = equal_or_ratio_overflow(lambda: cgcore.normalise(cg, ideal_cg, zero_ideal),
                                         lambda: reference.normalise(cg, ideal_cg, zero_ideal))
    if normalised is None:
        return
    for ignore_nan in (False, True):   # ratios near float64's top (-1 / 1e-308) can sum
        equal_or_ratio_overflow(                                          # past it
            lambda: cgcore.average_vector(normalised, ignore_nan),
            lambda: reference.average_vector(normalised, ignore_nan), of=("topics",))
    k = max(1, depth // 2)
    equal_or_ratio_overflow(lambda: cgcore.average_position(normalised, k),
                            lambda: reference.average_position(normalised, k), of=("ranks",))


@given(topic_lists, topic_lists, st.integers(1, 100), st.sampled_from(RULES), bases,
       st.sampled_from([0.0, math.nan]))
def test_scalars_at_k(run_lists, judged_lists, k, rule, base, zero_ideal):
    judged_lists = (judged_lists * len(run_lists))[:len(run_lists)]
    values, offsets = flatten(run_lists)
    judged, judged_offsets = flatten(judged_lists)
    divisors = cgcore.discount_divisors(rule, base, k)
    np.testing.assert_array_equal(cgcore.dcg_at(values, offsets, divisors, k),
                                  reference.dcg_at(values, offsets, divisors, k))
    np.testing.assert_array_equal(cgcore.ideal_dcg_at(judged, judged_offsets, divisors, k),
                                  reference.ideal_dcg_at(judged, judged_offsets, divisors, k))
    equal_or_ratio_overflow(
        lambda: cgcore.ndcg_at(values, offsets, judged, judged_offsets, divisors, k, zero_ideal),
        lambda: reference.ndcg_at(values, offsets, judged, judged_offsets, divisors, k,
                                  zero_ideal))


@given(topic_lists, st.lists(st.one_of(st.integers(1, 80), st.integers(1, 130)), max_size=6),
       st.booleans(), st.sampled_from(RULES), bases, st.sampled_from([0.0, math.nan]))
@example([[1.0], [5e-324]], [1], False, cgcore.DISCOUNT_NONE, 2.0, 0.0)  # 1 / 5e-324
def test_ndcg_at_several_cutoffs_equals_one_at_a_time(lists, ks, whole, rule, base, zero_ideal):
    """Each column of ndcg_at_cutoffs is ndcg_at at its cut-off, bit for bit (the sums
    are the same, in the same order), for any cut-offs (repeated, unsorted, beyond every
    topic, past 64, where the ideal is sorted), gains counted or sorted."""
    if whole:
        lists = [[float(max(-1, min(15, round(g)))) for g in row] for row in lists]
    values, offsets = flatten(lists)
    judged, judged_offsets = flatten(lists[::-1])
    cutoffs = np.array(ks, dtype=np.int64)
    divisors = cgcore.discount_divisors(rule, base, max(ks, default=1))

    def one_at_a_time(k):
        return cgcore.ndcg_at(values, offsets, judged, judged_offsets, divisors, k, zero_ideal)
    table = equal_or_ratio_overflow(
        lambda: cgcore.ndcg_at_cutoffs(values, offsets, judged, judged_offsets, divisors,
                                       cutoffs, zero_ideal),
        lambda: reference.ndcg_at_cutoffs(values, offsets, judged, judged_offsets, divisors,
                                          cutoffs, zero_ideal))
    if table is None:       # an overflow at some cut-off: ndcg_at raises there too
        with pytest.raises(cgcore.SumOverflow):
            for k in ks:
                one_at_a_time(k)
        return
    assert table.shape == (len(lists), len(ks))
    for j, k in enumerate(ks):
        np.testing.assert_array_equal(table[:, j], one_at_a_time(k))


def test_ndcg_at_cutoffs_rejects_bad_cutoffs():
    values, offsets = flatten([[1.0, 2.0]])
    with pytest.raises(ValueError, match="every k must be >= 1"):
        cgcore.ndcg_at_cutoffs(values, offsets, values, offsets, np.ones(3),
                               np.array([2, 0], dtype=np.int64), 0.0)
    long_values, long_offsets = flatten([[1.0] * 6])
    with pytest.raises(ValueError, match="fewer than depth 5"):
        cgcore.ndcg_at_cutoffs(long_values, long_offsets, long_values, long_offsets,
                               np.ones(3), np.array([5], dtype=np.int64), 0.0)


def test_scalars_at_k_need_divisors_for_the_ranks_summed_only():
    """A cut-off beyond the lists reads no divisor past the longest list: 2 divisors
    serve k = 10**12 over lists of 2, with the values of k = 2."""
    values, offsets = flatten([[3.0, 1.0], [2.0]])
    judged, judged_offsets = flatten([[1.0, 3.0], [2.0, 2.0]])
    divisors = np.array([1.0, 2.0])
    huge = 10 ** 12
    np.testing.assert_array_equal(cgcore.dcg_at(values, offsets, divisors, huge),
                                  cgcore.dcg_at(values, offsets, divisors, 2))
    np.testing.assert_array_equal(cgcore.ideal_dcg_at(judged, judged_offsets, divisors, huge),
                                  cgcore.ideal_dcg_at(judged, judged_offsets, divisors, 2))
    np.testing.assert_array_equal(
        cgcore.ndcg_at(values, offsets, judged, judged_offsets, divisors, huge, 0.0),
        cgcore.ndcg_at(values, offsets, judged, judged_offsets, divisors, 2, 0.0))
    np.testing.assert_array_equal(
        cgcore.ndcg_at_cutoffs(values, offsets, judged, judged_offsets, divisors,
                               np.array([1, huge], dtype=np.int64), 0.0),
        cgcore.ndcg_at_cutoffs(values, offsets, judged, judged_offsets, divisors,
                               np.array([1, 2], dtype=np.int64), 0.0))
    with pytest.raises(ValueError, match="fewer than depth 2"):
        cgcore.dcg_at(values, offsets, divisors[:1], huge)


# Whole gains below 16 are counted (_gains.h), anything else sorted: lists that are whole
# but for an edge value (16, a fraction, NaN, infinity, -0.0) take either path.
whole_gains = st.lists(st.one_of(st.integers(-1, 15).map(float), st.integers(-1, 15).map(float),
                                 st.sampled_from([0.0, -0.0, 15.0, 16.0, 17.0, 0.5, 15.5,
                                                  1e300, math.nan, math.inf, -math.inf])),
                       max_size=150)


@given(st.lists(whole_gains, min_size=1, max_size=6), st.integers(1, 100),
       st.sampled_from(RULES))
def test_ideal_of_whole_gains_counted_equals_sorted(lists, k, rule):
    judged, offsets = flatten(lists)
    divisors = cgcore.discount_divisors(rule, 2.0, k)
    np.testing.assert_array_equal(cgcore.ideal_dcg_at(judged, offsets, divisors, k),
                                  reference.ideal_dcg_at(judged, offsets, divisors, k))
    np.testing.assert_array_equal(cgcore.ideal_gain_vectors(judged, offsets, k),
                                  reference.ideal_gain_vectors(judged, offsets, k))


def test_caller_provided_output_is_filled():
    values, offsets = flatten([[1, 2], [3]])
    out = np.full((2, 3), -1.0)
    assert cgcore.cg_vectors(values, offsets, 3, out) is out
    assert out.tolist() == [[1, 3, 3], [3, 3, 3]]


def test_read_only_inputs_are_accepted():
    values, offsets = flatten([[1, 2], [3]])
    values.setflags(write=False)
    offsets.setflags(write=False)
    assert cgcore.cg_vectors(values, offsets, 2).tolist() == [[1, 3], [3, 3]]


# ------------------------------------------------ the wrappers stop bad input before C

def test_offsets_not_non_decreasing():
    with pytest.raises(ValueError, match="non-decreasing"):
        cgcore.cg_vectors(np.ones(4), np.array([0, 3, 1], dtype=np.int64), 2)


def test_offsets_past_the_data():
    with pytest.raises(ValueError, match="runs past"):
        cgcore.cg_vectors(np.ones(4), np.array([0, 2, 9], dtype=np.int64), 2)


def test_negative_first_offset():
    with pytest.raises(ValueError, match="negative"):
        cgcore.ideal_gain_vectors(np.ones(4), np.array([-1, 2], dtype=np.int64), 2)


def test_empty_offsets():
    with pytest.raises(ValueError, match="at least one"):
        cgcore.cg_vectors(np.ones(4), np.zeros(0, dtype=np.int64), 2)


def test_too_few_divisors():
    with pytest.raises(ValueError, match="fewer than depth"):
        cgcore.dcg_vectors(np.ones(4), np.array([0, 4], dtype=np.int64), np.ones(2), 3)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_bad_divisor(bad):
    divisors = np.array([1.0, bad, 2.0])
    with pytest.raises(ValueError, match="rank 2"):
        cgcore.dcg_at(np.ones(3), np.array([0, 3], dtype=np.int64), divisors, 3)


@pytest.mark.parametrize("base", [1.0, 0.5, -2.0, math.nan, math.inf])
def test_bad_base(base):
    with pytest.raises(ValueError, match="base"):
        cgcore.discount_divisors(cgcore.DISCOUNT_TOIS, base, 5)


@pytest.mark.parametrize("k", [0, -3])
def test_bad_k(k):
    with pytest.raises(ValueError, match="k must be"):
        cgcore.dcg_at(np.ones(3), np.array([0, 3], dtype=np.int64), np.ones(3), k)
    with pytest.raises(ValueError, match="k must be"):
        cgcore.average_position(np.ones((2, 3)), k)


def test_k_beyond_vector_depth():
    with pytest.raises(ValueError, match="exceeds"):
        cgcore.average_position(np.ones((2, 3)), 4)


def test_wrong_output_shape():
    with pytest.raises(ValueError, match="out has shape"):
        cgcore.cg_vectors(np.ones(3), np.array([0, 3], dtype=np.int64), 3, np.empty((2, 3)))


def test_mismatched_normalise_shapes():
    with pytest.raises(ValueError, match="shape"):
        cgcore.normalise(np.ones((2, 3)), np.ones((2, 4)), 0.0)


def test_topic_count_mismatch_in_ndcg_at():
    with pytest.raises(ValueError, match="topics"):
        cgcore.ndcg_at(np.ones(3), np.array([0, 3], dtype=np.int64), np.ones(3),
                       np.array([0, 1, 3], dtype=np.int64), np.ones(2), 2, 0.0)


def test_wrong_dtype_is_a_type_error_not_a_crash():
    with pytest.raises((ValueError, TypeError)):
        cgcore.cg_vectors(np.ones(3, dtype=np.float32), np.array([0, 3], dtype=np.int64), 2)
