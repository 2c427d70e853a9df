"""The public vector API: input forms, gain mappings, averaging orders, input checks."""
import math
import re

import numpy as np
import pytest

import cumgain
from cumgain import InputError, Ragged

G = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
I = [3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]


# ---------------------------------------------------------------- input forms

def test_single_list_gives_1d_and_batch_gives_2d():
    assert cumgain.cg(G).shape == (10,)
    assert cumgain.cg([G, G[:3]]).shape == (2, 10)
    assert cumgain.cg(np.array([G, G])).shape == (2, 10)
    assert cumgain.cg(Ragged.from_lists([G, [1]])).shape == (2, 10)


def test_shorter_lists_are_padded_with_zero_gain():
    assert cumgain.cg([[1, 2], [5]], depth=4).tolist() == [[1, 3, 3, 3], [5, 5, 5, 5]]
    assert cumgain.dcg([1], depth=3, discount="rank").tolist() == [1, 1, 1]


def test_depth_cuts_longer_lists():
    assert cumgain.cg(G, depth=3).tolist() == [3, 5, 8]


def test_empty_topic_in_a_batch():
    assert cumgain.cg([[], [1, 1]]).tolist() == [[0, 0], [1, 2]]
    assert cumgain.ndcg_at([[], [1]], [[1], [1]], 1).tolist() == [0.0, 1.0]


def test_ragged_from_lists_and_indexing():
    batch = Ragged.from_lists([[1, 2], [], [3]])
    assert len(batch) == 3
    assert batch.lengths.tolist() == [2, 0, 1]
    assert batch[2].tolist() == [3.0]


def test_numpy_and_int_inputs():
    assert cumgain.cg(np.array(G, dtype=np.int8)).tolist() == cumgain.cg(G).tolist()
    assert cumgain.cg(np.array(G, dtype=np.float32)).tolist() == cumgain.cg(G).tolist()


# ---------------------------------------------------------------- gain mappings

@pytest.mark.parametrize("scheme, expected", [
    ("0-1-1-1", [0, 1, 1, 1]),
    ("0-1-2-3", [0, 1, 2, 3]),
    ("0-1-10-100", [0, 1, 10, 100]),
    ("0-0-0-1", [0, 0, 0, 1]),
    ("exponential", [0, 1, 3, 7]),
    ("identity", [0, 1, 2, 3]),
    ({0: 0, 1: 2, 2: 5, 3: 9}, [0, 2, 5, 9]),
    (lambda level: level * 0.5, [0, 0.5, 1, 1.5]),
])
def test_gain_mappings(scheme, expected):
    assert cumgain.map_gains([0, 1, 2, 3], scheme).tolist() == expected


def test_negative_levels_get_gain_zero():
    for scheme in ("identity", "exponential", "0-1-10-100", {1: 5}):
        assert cumgain.map_gains([-2, -1, 1], scheme)[:2].tolist() == [0, 0]


def test_unmapped_level_is_an_error_not_a_silent_zero():
    with pytest.raises(InputError, match="level 4"):
        cumgain.map_gains([0, 4], "0-1-2-3")
    with pytest.raises(InputError, match="level 2"):
        cumgain.map_gains([2], {0: 0, 1: 1})


def test_unknown_scheme_and_bad_callable():
    with pytest.raises(InputError, match="unknown gain scheme"):
        cumgain.gain_mapping("quadratic")
    with pytest.raises(InputError, match="nan"):
        cumgain.map_gains([1], lambda level: math.nan)


def test_mapping_argument_of_the_vector_functions():
    scheme = "0-1-10-100"
    mapped = cumgain.map_gains(G, scheme)
    np.testing.assert_array_equal(cumgain.dcg(G, mapping=scheme), cumgain.dcg(mapped))
    np.testing.assert_array_equal(cumgain.ndcg(G, I, mapping=scheme),
                                  cumgain.ndcg(mapped, cumgain.map_gains(I, scheme)))
    batch = cumgain.map_gains([G, I], scheme)
    assert isinstance(batch, Ragged) and batch[1][0] == 100


def test_0_0_0_1_scheme_on_the_paper_example():
    # only level-3 documents count: G' has them at ranks 1, 3 and 9
    assert cumgain.cg(G, mapping="0-0-0-1").tolist() == [1, 1, 2, 2, 2, 2, 2, 2, 3, 3]


# ---------------------------------------------------------------- normalising, averaging

def test_zero_ideal_policy():
    assert cumgain.ndcg([1, 0], [0, 0]).tolist() == [0, 0]
    assert np.isnan(cumgain.ndcg([1, 0], [0, 0], zero_ideal=math.nan)).all()
    assert cumgain.ndcg_at([1], [0], 1) == 0.0
    assert math.isnan(cumgain.ndcg_at([1], [0], 1, zero_ideal=math.nan))


def test_skipping_zero_ideal_topics_in_the_average():
    vectors = cumgain.ndcg([[1, 0], [1, 1]], [[0], [1, 1]], 2, zero_ideal=math.nan)
    assert cumgain.avg_vect(vectors, ignore_nan=True).tolist() == [1.0, 1.0]
    assert np.isnan(cumgain.avg_vect(vectors)).all()


def test_avg_vect_is_the_component_mean():
    assert cumgain.avg_vect([[1, 2], [3, 6]]).tolist() == [2, 4]


def test_both_averaging_orders():
    run = [[3, 0, 0], [0, 0, 1]]
    judged = [[3, 3, 3], [1]]
    values = cumgain.cg(run, 3)
    ideal = cumgain.cg(cumgain.ideal_gains(judged, 3))
    per_topic = cumgain.avg_norm_vect(values, ideal, order="normalise_then_average")
    pooled = cumgain.avg_norm_vect(values, ideal, order="average_then_normalise")
    # per topic: mean of <1, 1/2, 1/3> and <0, 0, 1>
    np.testing.assert_allclose(per_topic, [(1 + 0) / 2, (0.5 + 0) / 2, (1 / 3 + 1) / 2])
    # pooled: mean CG <1.5, 1.5, 2> over mean ideal CG <2, 3.5, 5>
    np.testing.assert_allclose(pooled, [1.5 / 2, 1.5 / 3.5, 2 / 5])
    with pytest.raises(InputError, match="order"):
        cumgain.avg_norm_vect(values, ideal, order="sideways")


def test_norm_vect_of_the_ideal_is_all_ones():
    ideal = cumgain.cg(cumgain.ideal_gains(I, 10))
    assert cumgain.norm_vect(ideal, ideal).tolist() == [1.0] * 10


def test_avg_pos_batch():
    assert cumgain.avg_pos([[1, 0, 0, 1], [1, 1, 1, 1]], 4).tolist() == [0.5, 1.0]


# ---------------------------------------------------------------- input checks

@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_gains(bad):
    with pytest.raises(InputError, match="finite"):
        cumgain.cg([1, bad])
    with pytest.raises(InputError, match="finite"):
        cumgain.ndcg([1, 2], [1, bad])


@pytest.mark.parametrize("base", [1, 0.5, 0, -2, math.nan, math.inf, "2", None])
def test_bad_base(base):
    with pytest.raises(InputError, match="base"):
        cumgain.dcg(G, base=base)


@pytest.mark.parametrize("k", [0, -1, 2.5, "3", True])
def test_bad_k(k):
    with pytest.raises(InputError, match="k must be"):
        cumgain.ndcg_at(G, I, k)
    with pytest.raises(InputError, match="k must be"):
        cumgain.avg_pos(cumgain.cg(G), k)


@pytest.mark.parametrize("depth", [0, -5, 1.5])
def test_bad_depth(depth):
    with pytest.raises(InputError, match="depth"):
        cumgain.cg(G, depth=depth)


def test_wrong_shapes():
    with pytest.raises(InputError, match="3-D"):
        cumgain.cg(np.ones((2, 2, 2)))
    with pytest.raises(InputError, match="mixes"):
        cumgain.cg([1, [2, 3]])
    with pytest.raises(InputError, match="flat list"):
        cumgain.cg([[1, 2], [[3]]])
    with pytest.raises(InputError, match="numbers"):
        cumgain.cg(["a", "b"])
    with pytest.raises(InputError, match="topics"):
        cumgain.ndcg([[1], [2]], [[1]])
    with pytest.raises(InputError, match="both"):
        cumgain.ndcg([1, 2], [[1, 2]])
    with pytest.raises(InputError, match="shape"):
        cumgain.norm_vect([1, 2], [1, 2, 3])
    with pytest.raises(InputError, match="exceeds"):
        cumgain.avg_pos([1, 2], 3)


def test_bad_ragged_offsets():
    with pytest.raises(InputError, match="non-decreasing"):
        cumgain.cg(Ragged(np.ones(3), np.array([0, 2, 1])))
    with pytest.raises(InputError, match="runs past"):
        cumgain.cg(Ragged(np.ones(3), np.array([0, 5])))
    with pytest.raises(InputError, match="integers"):
        cumgain.cg(Ragged(np.ones(3), np.array([0.0, 3.0])))


def test_bad_discount():
    with pytest.raises(InputError, match="unknown discount"):
        cumgain.dcg(G, discount="harmonic")
    with pytest.raises(InputError, match="fewer than depth"):
        cumgain.dcg(G, discount=[1, 2])
    with pytest.raises(InputError, match="rank 2"):
        cumgain.dcg([1, 1], discount=[1, 0])


def test_input_errors_are_value_errors():
    assert issubclass(InputError, ValueError)
    with pytest.raises(ValueError):
        cumgain.dcg(G, base=1)


# ---------------------------------------------------------------- numeric limits
# (docs/reliability.md: k and depth up to 2**53 - 1, memory for min(k, the list) at a
# cut-off, vector requests beyond the memory available refused, sums that overflow
# float64 refused naming the list and the rank)

HUGE = [2 ** 53, 2 ** 63, 2 ** 64, 10 ** 400]


@pytest.mark.parametrize("k", HUGE)
@pytest.mark.parametrize("function", [
    lambda k: cumgain.ndcg_at([1, 2], [2, 1], k),
    lambda k: cumgain.ncg_at([1, 2], [2, 1], k),
    lambda k: cumgain.dcg_at([1, 2], k),
    lambda k: cumgain.cg_at([1, 2], k),
    lambda k: cumgain.avg_pos([1.0, 2.0], k),
])
def test_a_k_beyond_the_largest_is_an_input_error(function, k):
    """Not an OverflowError from the conversion to C (k = 2**63 raised one)."""
    with pytest.raises(InputError, match=r"k must be a positive integer \(at most 2\*\*53 - 1"):
        function(k)


@pytest.mark.parametrize("depth", HUGE)
@pytest.mark.parametrize("function", [
    lambda depth: cumgain.cg([1, 2], depth),
    lambda depth: cumgain.dcg([1, 2], depth),
    lambda depth: cumgain.ideal_gains([1, 2], depth),
    lambda depth: cumgain.ncg([1, 2], [2, 1], depth),
    lambda depth: cumgain.ndcg([1, 2], [2, 1], depth),
    lambda depth: cumgain.discount_divisors("tois", depth=depth),
])
def test_a_depth_beyond_the_largest_is_an_input_error(function, depth):
    with pytest.raises(InputError, match=r"depth must be a positive integer \(at most 2\*\*53"):
        function(depth)


@pytest.mark.parametrize("discount", ["tois", "note", "trec_eval", "none", "rank"])
def test_a_scalar_at_a_huge_k_is_the_value_at_the_list_end_in_little_memory(discount):
    """ndcg_at(..., 10**8) built 10**8 divisors (790 MB, 2.4 s): the ranks past the
    lists are never summed, so the value is bit for bit the one at the longest list's
    length (the vector's last entry), and the memory is that of the lists."""
    import tracemalloc
    runs, judged = [G, [1, 2]], [I, [2, 1]]
    longest = max(map(len, runs + judged))
    expected_ndcg = cumgain.ndcg(runs, judged, longest, discount=discount)[:, -1]
    expected_dcg = cumgain.dcg(runs, longest, discount=discount)[:, -1]
    tracemalloc.start()
    try:
        ndcg = cumgain.ndcg_at(runs, judged, 10 ** 8, discount=discount)
        dcg = cumgain.dcg_at(runs, 2 ** 53 - 1, discount=discount)
        ncg = cumgain.ncg_at(runs, judged, 10 ** 8)
        cg = cumgain.cg_at(runs, 10 ** 8)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    np.testing.assert_array_equal(ndcg, expected_ndcg)
    np.testing.assert_array_equal(dcg, expected_dcg)
    np.testing.assert_array_equal(ncg, cumgain.ncg(runs, judged, longest)[:, -1])
    np.testing.assert_array_equal(cg, [sum(G), 3.0])


def test_a_discount_array_still_needs_k_divisors():
    with pytest.raises(InputError, match="fewer than depth 5"):
        cumgain.dcg_at([1, 2], 5, discount=[1.0, 2.0, 3.0])
    assert cumgain.dcg_at([1, 2], 3, discount=[1.0, 2.0, 3.0]) == 1 + 2 / 2


@pytest.fixture
def one_gib_available(monkeypatch):
    """The memory available, as the vector API reads it, is 1 GiB."""
    import cumgain.common.limits
    monkeypatch.setattr(cumgain.common.limits, "available_memory", lambda: 1 << 30)


@pytest.mark.parametrize("call, size", [
    (lambda: cumgain.ndcg([1, 2], [2, 1], depth=2 ** 31), "64.0 GiB"),  # 4 x 2**31 x 8
    (lambda: cumgain.ncg([[1], [2]], [[1], [2]], depth=2 ** 40), "64.0 TiB"),
    (lambda: cumgain.cg([[1, 2]] * 16, depth=2 ** 31), "256.0 GiB"),
    (lambda: cumgain.dcg([1, 2], depth=2 ** 28), "2.0 GiB"),
    (lambda: cumgain.ideal_gains([1, 2], depth=2 ** 40), "8.0 TiB"),
    (lambda: cumgain.discount_divisors("trec_eval", depth=2 ** 28), "2.0 GiB"),
])
def test_a_vector_request_beyond_the_memory_available_is_refused_up_front(
        one_gib_available, call, size):
    """ndcg(depth=2**31) was killed by the out-of-memory killer (24 GB): the request is
    refused before any allocation, with its size and the memory available."""
    with pytest.raises(InputError, match=f"needs {re.escape(size)}, more than the 1.0 GiB"):
        call()


def test_the_default_depth_is_checked_too(one_gib_available):
    """depth=None is the longest list: 2**17 rows padded to one list of 2**11 need
    4 x 2 GiB for ndcg."""
    batch = Ragged(np.ones(2 ** 11), np.array([0] + [2 ** 11] * 2 ** 17, dtype=np.int64))
    with pytest.raises(InputError, match=re.escape("ndcg to depth 2048 over 131072 topics (4 "
                                                   "matrices of 131072 x 2048 float64) needs "
                                                   "8.0 GiB")):
        cumgain.ndcg(batch, batch)


def test_a_vector_request_within_the_memory_available_is_computed(one_gib_available):
    assert cumgain.cg([1, 2], depth=2 ** 20)[-1] == 3.0       # 8 MiB


@pytest.mark.parametrize("call, rank, topic, what", [
    (lambda: cumgain.cg([1e308, 1e308]), 2, None, "the CG of gains"),
    (lambda: cumgain.dcg([[1.0], [1e308, 1e308]]), 2, 1, "the DCG of gains[1]"),
    (lambda: cumgain.ndcg([1e308, 1e308], [1e308, 1e308]), 2, None, "the DCG of gains"),
    (lambda: cumgain.ndcg([1.0], [1e308, 1e308, 1e308], 3, discount="trec_eval"), 3, None,
     "the ideal DCG of judged"),
    (lambda: cumgain.ncg([[1.0], [1.0]], [[1.0], [1e308, 1e308]], 2), 2, 1,
     "the ideal CG of judged[1]"),
    (lambda: cumgain.ndcg_at([1e308, 1e308], [1e308, 1e308], 2), 2, None, "the DCG of gains"),
    (lambda: cumgain.ndcg_at([[1.0], [1.0]], [[1.0], [1e308] * 3], 10 ** 8), 2, 1,
     "the ideal DCG of judged[1]"),
    (lambda: cumgain.dcg_at([1e308, -1e308, 1e308, 1e308], 4, discount="none"), 4, None,
     "the DCG of gains"),
    (lambda: cumgain.cg_at([[1.0], [1e308, 1e308]], 5), 2, 1, "the CG of gains[1]"),
    (lambda: cumgain.ncg_at([1e308, 1e308], [1.0], 2), 2, None, "the CG of gains"),
    (lambda: cumgain.ndcg_at([1e300], [1e-10], 1), 1, None, "DCG / ideal DCG of gains"),
    (lambda: cumgain.norm_vect([[1.0, 1e300]], [[1.0, 1e-10]]), 2, 0, "V / ideal V"),
    (lambda: cumgain.avg_vect([[1.0, 1e308], [1.0, 1e308]]), 2, None, "sum over topics"),
    (lambda: cumgain.avg_pos([[1.0, 1.0], [1e308, 1e308]], 2), 2, 1, "the sum of vectors[1]"),
    (lambda: cumgain.dcg([1e308, 1e308], discount=[1.0, 0.5]), 2, None, "the DCG of gains"),
])
def test_a_sum_that_overflows_float64_is_an_error_naming_the_list_and_rank(call, rank,
                                                                           topic, what):
    """ndcg([1e308, 1e308], [1e308, 1e308]) returned [1, nan]: inf / inf. Every sum of
    finite gains that leaves float64's range (run, ideal, V / I, over topics, over
    ranks) is a SumOverflowError (an InputError) naming where, never inf or NaN."""
    from cumgain.exceptions import SumOverflowError
    with pytest.raises(SumOverflowError, match=f"{re.escape(what)}.* at rank {rank}|"
                                                f"{re.escape(what)} to rank {rank}") as error:
        call()
    assert isinstance(error.value, InputError)
    assert (error.value.rank, error.value.topic) == (rank, topic)


def test_sums_just_inside_float64_are_computed():
    """No false alarm: 1e308 + 7e307 is finite, and so is every value built from it."""
    gains = [1e308, 7e307]
    assert cumgain.cg(gains).tolist() == [1e308, 1e308 + 7e307]
    assert cumgain.ndcg(gains, gains).tolist() == [1.0, 1.0]
    assert cumgain.ndcg_at(gains, gains, 10 ** 6) == 1.0
    assert cumgain.avg_vect([[1e308], [7e307]]).tolist() == [(1e308 + 7e307) / 2]


def test_norm_vect_refuses_a_nan_or_infinite_ideal_or_value():
    """norm_vect turned a NaN ideal into 0 silently."""
    for values, ideal, where in [([1.0, 2.0], [1.0, math.nan], "ideal[1] is nan"),
                                 ([1.0], [math.inf], "ideal[0] is inf"),
                                 ([[1.0], [math.nan]], [[1.0], [1.0]], "values[1, 0] is nan")]:
        with pytest.raises(InputError, match=re.escape(where)):
            cumgain.norm_vect(values, ideal)


def test_averages_keep_nan_marks_and_refuse_infinite_entries():
    """NaN marks a topic with a zero ideal (zero_ideal=nan); infinity is no value."""
    marked = cumgain.ndcg([[1.0], [1.0]], [[1.0], [0.0]], zero_ideal=math.nan)
    assert cumgain.avg_vect(marked, ignore_nan=True).tolist() == [1.0]
    assert math.isnan(cumgain.avg_pos(marked, 1)[1])
    with pytest.raises(InputError, match=re.escape("vectors[1, 0] is inf")):
        cumgain.avg_vect([[1.0], [math.inf]])
    with pytest.raises(InputError, match=re.escape("vectors[0] is -inf")):
        cumgain.avg_pos([-math.inf, 1.0], 2)


@pytest.mark.parametrize("levels, mapping, fragment", [
    ([1e300], "exponential", "the gain of level 1e+300 is beyond float64"),
    ([3, 1100], "exponential", "the gain of level 1100 is beyond float64"),
    ([3], lambda level: 10 ** 400, "gave inf for level 3"),
    ([1], {1: 10 ** 400}, "entry 1: the gain is beyond float64"),
])
def test_a_gain_beyond_float64_is_an_input_error(levels, mapping, fragment):
    """map_gains([1e300], "exponential") raised OverflowError(34)."""
    with pytest.raises(InputError, match=re.escape(fragment)):
        cumgain.map_gains(levels, mapping)


def test_the_largest_exponential_gain_is_computed():
    assert cumgain.map_gains([1023], "exponential").tolist() == [2.0 ** 1023 - 1]


@pytest.mark.parametrize("offsets, fragment", [
    (np.array([0, 2 ** 63 - 1, 2], dtype=np.uint64), "non-decreasing"),
    (np.array([0, 2 ** 63 + 1], dtype=np.uint64), "offsets[1] = 9223372036854775809 runs past"),
    (np.array([0, 100, -100], dtype=np.int8), "non-decreasing"),
])
def test_ragged_offsets_of_any_integer_type_are_checked_as_int64(offsets, fragment):
    """Unsigned or narrow offsets wrapped around in the check, and the kernel's own
    check raised a plain ValueError."""
    with pytest.raises(InputError, match=re.escape(fragment)):
        cumgain.cg(Ragged(np.ones(2), offsets))


def test_ragged_offsets_of_a_small_integer_type_are_read():
    batch = Ragged(np.array([1.0, 2.0, 3.0]), np.array([0, 1, 3], dtype=np.uint8))
    assert cumgain.cg(batch).tolist() == [[1, 1], [2, 5]]


@pytest.mark.parametrize("call", [
    lambda: cumgain.dcg(G, base=10 ** 400),
    lambda: cumgain.ndcg(G, I, zero_ideal=10 ** 400),
    lambda: cumgain.ndcg_at(G, I, 3, zero_ideal=-10 ** 400),
])
def test_real_arguments_beyond_float64_are_input_errors(call):
    with pytest.raises(InputError, match="must be"):
        call()


def test_offsets_that_decrease_past_int64_are_refused_as_decreasing():
    """np.diff wrapped around int64 (2 - (-2**63 + 1) is positive), so decreasing
    offsets passed the check and the kernel raised a plain ValueError."""
    with pytest.raises(InputError, match=r"must be non-decreasing: offsets\[2\]"):
        cumgain.dcg_at(Ragged(np.ones(3), np.array([0, 2, -2 ** 63 + 1])), 2)
    with pytest.raises(InputError, match=r"runs past the 3 values"):
        cumgain.dcg_at(Ragged(np.ones(3), np.array([0, 2 ** 62, 2 ** 63 - 1])), 2)
