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
# (README, "Reliability": k and depth up to 2**53 - 1, memory for min(k, the list) at a
# cut-off, vector requests beyond the memory available refused, sums that overflow
# float64 refused naming the list and the rank)

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
