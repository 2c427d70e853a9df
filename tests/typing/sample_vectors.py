"""The vector API as users call it, checked by ``mypy --strict`` (tests/test_typing.py) and
run by the same test: a scalar function of one gain list is a ``float``, of a batch (a
list of lists or a :class:`cumgain.Ragged`) a float64 array, one value per topic. A numpy
array may be one list or a batch (only its ``ndim`` says which), so its result is typed
``Any``: annotate the variable that takes it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

import cumgain
from cumgain.types import DiscountName, GainList

if TYPE_CHECKING:
    from typing_extensions import assert_type
else:
    def assert_type(value: Any, _type: Any) -> Any:
        return value

GAINS = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
JUDGED = [3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]
FloatArray = npt.NDArray[np.float64]


def one_list_gives_floats() -> float:
    s: float = cumgain.ndcg_at(GAINS, JUDGED, 10)
    assert_type(cumgain.ndcg_at(GAINS, JUDGED, 10), float)
    assert_type(cumgain.dcg_at(GAINS, 5, discount="trec_eval"), float)
    assert_type(cumgain.cg_at([1.5, 0.5], 2), float)
    assert_type(cumgain.ncg_at(GAINS, JUDGED, 4, zero_ideal=float("nan")), float)
    assert_type(cumgain.avg_pos([1.0, 0.5, 0.0, 0.5], 4), float)
    for value in (s, cumgain.dcg_at(GAINS, 5, discount="trec_eval"), cumgain.cg_at([1.5], 1),
                  cumgain.ncg_at(GAINS, JUDGED, 4), cumgain.avg_pos([1.0, 0.5], 2)):
        assert isinstance(value, float)
    return s + cumgain.dcg_at(GAINS, 3, discount="note", base=3.0)


def batch_gives_arrays() -> FloatArray:
    batch = [GAINS, GAINS[:4], []]
    judged = [JUDGED, JUDGED, [1]]
    values = cumgain.ndcg_at(batch, judged, 10)
    assert_type(values, FloatArray)
    assert_type(cumgain.dcg_at(batch, 3), FloatArray)
    assert_type(cumgain.cg_at(cumgain.Ragged.from_lists(batch), 3), FloatArray)
    assert_type(cumgain.ncg_at(batch, judged, 3), FloatArray)
    assert_type(cumgain.avg_pos([[1.0, 0.5], [0.0, 0.5]], 2), FloatArray)
    for array in (values, cumgain.dcg_at(batch, 3), cumgain.ncg_at(batch, judged, 3),
                  cumgain.cg_at(cumgain.Ragged.from_lists(batch), 3),
                  cumgain.avg_pos([[1.0, 0.5], [0.0, 0.5]], 2)):
        assert isinstance(array, np.ndarray) and array.shape[0] in (2, 3)
    return values


def numpy_input_is_annotated_by_the_caller() -> float:
    matrix: FloatArray = cumgain.ndcg_at(np.array([GAINS, GAINS]), np.array([JUDGED, JUDGED]), 5)
    one: float = cumgain.ndcg_at(np.array(GAINS), np.array(JUDGED), 5)
    assert isinstance(matrix, np.ndarray) and isinstance(one, float)
    return float(matrix.mean()) + one


def vectors_are_arrays(discount: DiscountName = "tois") -> FloatArray:
    curve = cumgain.ndcg(GAINS, JUDGED, 10, discount=discount)
    assert_type(curve, FloatArray)
    assert_type(cumgain.cg(GAINS), FloatArray)
    assert_type(cumgain.dcg([GAINS, GAINS], discount=[1.0, 2.0, 3.0] * 4), FloatArray)
    assert_type(cumgain.ideal_gains(JUDGED, 5), FloatArray)
    averaged = cumgain.avg_norm_vect(cumgain.dcg([GAINS, GAINS]),
                                     cumgain.dcg([JUDGED, JUDGED], 10),
                                     order="average_then_normalise")
    assert_type(averaged, FloatArray)
    return curve


def user_function(gains: GainList, k: int = 10) -> float:
    """A user's own helper keeps the float without a cast."""
    return cumgain.ndcg_at(gains, sorted(gains, reverse=True), k)


def wrong_discount_is_refused() -> None:
    """Never called for a result: raises InputError at run time."""
    cumgain.dcg_at(GAINS, 5, discount="log2")  # type: ignore[arg-type]


def wrong_order_is_refused() -> None:
    cumgain.avg_norm_vect([[1.0]], [[1.0]], order="normalise")  # type: ignore[arg-type]
