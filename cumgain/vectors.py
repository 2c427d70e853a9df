"""The cumulated-gain vector API of Jarvelin & Kekalainen (2002), section 2.

Every function takes one gain list (and returns a 1-D result) or a batch of
them: a list of lists, a topics x ranks matrix, or a :class:`~cumgain.batch.Ragged`
(and returns one row per topic). Lists shorter than the depth ``n`` are padded
with gain 0. Inputs are validated here; the loops run in the compiled ``cgcore``.

Discounts (``discount=``), as divisors df(i) in DCG[i] = DCG[i-1] + G[i] / df(i):

=================  ===========================================  ========================
name               df(i)                                        source
=================  ===========================================  ========================
``"tois"``         1 for i < b, log_b(i) for i >= b              TOIS 2002, eq. 2 (default)
``"note"``         1 for i = 1, log_b(i) for i >= 2              the 2002 research note
``"trec_eval"``    log2(i + 1) for every i >= 1                  trec_eval >= 9.0.4, sklearn
``"none"``         1 (DCG = CG)                                  the paper's df = 1
``"rank"``         i                                             the paper's df = i
an array           the caller's divisors, df(1..n)
=================  ===========================================  ========================

Zero ideal: where the ideal value is 0 (a topic with no positive judged gain) a
normalised value is ``zero_ideal``: 0.0 by default, as in trec_eval; pass
``float("nan")`` to mark such topics and ``avg_vect(..., ignore_nan=True)`` to
leave them out of an average.
"""
from __future__ import annotations

import math
from numbers import Real
from typing import Any, Optional, Union

import numpy as np

import cgcore
from cumgain.batch import Ragged, as_batch
from cumgain.exceptions import InputError
from cumgain.gains import GainSpec, gain_mapping

DiscountSpec = Union[str, Any]

DISCOUNT_RULES = {
    "tois": cgcore.DISCOUNT_TOIS,
    "jk": cgcore.DISCOUNT_TOIS,
    "jk2002": cgcore.DISCOUNT_TOIS,
    "note": cgcore.DISCOUNT_NOTE,
    "research_note": cgcore.DISCOUNT_NOTE,
    "trec_eval": cgcore.DISCOUNT_TREC_EVAL,
    "log2(i+1)": cgcore.DISCOUNT_TREC_EVAL,
    "none": cgcore.DISCOUNT_NONE,
    "rank": cgcore.DISCOUNT_RANK,
}

AVERAGING_ORDERS = ("normalise_then_average", "average_then_normalise")


# ---------------------------------------------------------------- helpers

def _check_base(base: Any) -> float:
    if isinstance(base, bool) or not isinstance(base, (Real, np.number)):
        raise InputError(f"the logarithm base must be a real number > 1, got {base!r}")
    base = float(base)
    if not (math.isfinite(base) and base > 1.0):
        raise InputError(f"the logarithm base must be a finite number > 1, got {base}")
    return base


def _check_positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer >= 1, got {value!r}")
    if value < 1:
        raise InputError(f"{name} must be >= 1, got {value}")
    return int(value)


def _check_zero_ideal(zero_ideal: Any) -> float:
    if isinstance(zero_ideal, bool) or not isinstance(zero_ideal, (Real, np.number)):
        raise InputError(f"zero_ideal must be a number (0.0 or nan), got {zero_ideal!r}")
    return float(zero_ideal)


def discount_divisors(discount: DiscountSpec = "tois", base: float = 2.0,
                      depth: int = 1) -> np.ndarray:
    """The divisors df(1..depth) of a discount rule (see the module docstring).

    >>> discount_divisors("tois", base=10, depth=3)
    array([1., 1., 1.])
    >>> discount_divisors("trec_eval", depth=3)
    array([1.       , 1.5849625, 2.       ])
    """
    depth = _check_positive_int(depth, "depth")
    if isinstance(discount, str):
        rule = DISCOUNT_RULES.get(discount.strip().lower())
        if rule is None:
            raise InputError(
                f"unknown discount {discount!r}; use one of {sorted(DISCOUNT_RULES)} "
                "or an array of divisors")
        return cgcore.discount_divisors(rule, _check_base(base), depth)
    divisors = np.asarray(discount, dtype=np.float64)
    if divisors.ndim != 1:
        raise InputError(f"a discount array must be 1-D, got shape {divisors.shape}")
    if len(divisors) < depth:
        raise InputError(
            f"the discount array holds {len(divisors)} divisors, fewer than depth {depth}")
    bad = ~(np.isfinite(divisors[:depth]) & (divisors[:depth] > 0))
    if bad.any():
        rank = int(np.argmax(bad)) + 1
        raise InputError(
            f"discount divisor at rank {rank} is {divisors[rank - 1]}; divisors must be "
            "finite and > 0")
    return np.ascontiguousarray(divisors[:depth])


def _prepare(gains: Any, mapping: Optional[GainSpec], name: str) -> tuple[Ragged, bool]:
    batch, single = as_batch(gains, name)
    if mapping is not None:
        batch = Ragged(gain_mapping(mapping)(batch.values), batch.offsets)
    return batch, single


def _resolve_depth(depth: Optional[int], batch: Ragged) -> int:
    if depth is None:
        return int(batch.lengths.max()) if len(batch) else 0
    return _check_positive_int(depth, "depth")


def _shape(result: np.ndarray, single: bool) -> np.ndarray:
    return result[0] if single else result


def _pair(gains: Any, judged: Any, mapping: Optional[GainSpec]):
    run, single = _prepare(gains, mapping, "gains")
    recall_base, judged_single = _prepare(judged, mapping, "judged")
    if single != judged_single:
        raise InputError(
            "gains and judged must both be single lists or both be batches "
            f"(gains is {'one list' if single else 'a batch'}, "
            f"judged is {'one list' if judged_single else 'a batch'})")
    if len(run) != len(recall_base):
        raise InputError(f"gains has {len(run)} topics but judged has {len(recall_base)}")
    return run, recall_base, single


def _as_matrix(vectors: Any, name: str) -> tuple[np.ndarray, bool]:
    array = np.asarray(vectors)
    if array.dtype == object or not np.issubdtype(array.dtype, np.number):
        raise InputError(f"{name} must be a numeric vector or topics x ranks matrix")
    if array.ndim == 1:
        return np.ascontiguousarray(array[np.newaxis, :], dtype=np.float64), True
    if array.ndim == 2:
        return np.ascontiguousarray(array, dtype=np.float64), False
    raise InputError(f"{name} must be 1-D or 2-D, got {array.ndim}-D")


# ---------------------------------------------------------------- vectors

def cg(gains: Any, depth: Optional[int] = None, *, mapping: Optional[GainSpec] = None
       ) -> np.ndarray:
    """Cumulated gain (eq. 1): CG[1] = G[1]; CG[i] = CG[i-1] + G[i], to depth n.

    ``mapping``: if given, the inputs are relevance levels, mapped to gains first.

    >>> cg([3, 2, 3, 0, 0, 1, 2, 2, 3, 0])
    array([ 3.,  5.,  8.,  8.,  8.,  9., 11., 13., 16., 16.])
    """
    batch, single = _prepare(gains, mapping, "gains")
    depth = _resolve_depth(depth, batch)
    if depth == 0:
        return _shape(np.zeros((len(batch), 0)), single)
    return _shape(cgcore.cg_vectors(batch.values, batch.offsets, depth), single)


def dcg(gains: Any, depth: Optional[int] = None, *, discount: DiscountSpec = "tois",
        base: float = 2.0, mapping: Optional[GainSpec] = None) -> np.ndarray:
    """Discounted cumulated gain (eq. 2): DCG[i] = DCG[i-1] + G[i] / df(i).

    >>> dcg([3, 2, 3, 0, 0, 1, 2, 2, 3, 0]).round(2)
    array([3.  , 5.  , 6.89, 6.89, 6.89, 7.28, 7.99, 8.66, 9.61, 9.61])
    """
    batch, single = _prepare(gains, mapping, "gains")
    depth = _resolve_depth(depth, batch)
    if depth == 0:
        return _shape(np.zeros((len(batch), 0)), single)
    divisors = discount_divisors(discount, base, depth)
    return _shape(cgcore.dcg_vectors(batch.values, batch.offsets, divisors, depth), single)


def ideal_gains(judged: Any, depth: Optional[int] = None, *,
                mapping: Optional[GainSpec] = None) -> np.ndarray:
    """The ideal gain vector BV (eq. 4): the topic's positive judged gains sorted
    descending, then zeros, to depth n (default: the number of judged documents).

    >>> ideal_gains([1, 3, 0, 2, 3], depth=7)
    array([3., 3., 2., 1., 0., 0., 0.])
    """
    batch, single = _prepare(judged, mapping, "judged")
    depth = _resolve_depth(depth, batch)
    if depth == 0:
        return _shape(np.zeros((len(batch), 0)), single)
    return _shape(cgcore.ideal_gain_vectors(batch.values, batch.offsets, depth), single)


def norm_vect(values: Any, ideal: Any, *, zero_ideal: float = 0.0) -> np.ndarray:
    """norm-vect (eq. 5): V[i] / I[i], or ``zero_ideal`` where I[i] <= 0."""
    matrix, single = _as_matrix(values, "values")
    ideal_matrix, ideal_single = _as_matrix(ideal, "ideal")
    if matrix.shape != ideal_matrix.shape:
        raise InputError(f"values have shape {np.shape(values)} but ideal has {np.shape(ideal)}")
    result = cgcore.normalise(matrix, ideal_matrix, _check_zero_ideal(zero_ideal))
    return _shape(result, single and ideal_single)


def ncg(gains: Any, judged: Any, depth: Optional[int] = None, *, zero_ideal: float = 0.0,
        mapping: Optional[GainSpec] = None) -> np.ndarray:
    """Normalised CG: norm-vect(CG, CG_I), the ideal built from ``judged`` (the recall base).

    >>> ncg([3, 2, 3, 0, 0, 1, 2, 2, 3, 0], [3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]).round(2)
    array([1.  , 0.83, 0.89, 0.73, 0.62, 0.6 , 0.69, 0.76, 0.89, 0.84])
    """
    run, recall_base, single = _pair(gains, judged, mapping)
    depth = _resolve_depth(depth, run)
    if depth == 0:
        return _shape(np.zeros((len(run), 0)), single)
    values = cgcore.cg_vectors(run.values, run.offsets, depth)
    ideal = cgcore.ideal_gain_vectors(recall_base.values, recall_base.offsets, depth)
    ideal_cg = cgcore.cg_vectors(ideal.reshape(-1), _dense_offsets(ideal), depth)
    return _shape(cgcore.normalise(values, ideal_cg, _check_zero_ideal(zero_ideal)), single)


def ndcg(gains: Any, judged: Any, depth: Optional[int] = None, *, discount: DiscountSpec = "tois",
         base: float = 2.0, zero_ideal: float = 0.0, mapping: Optional[GainSpec] = None
         ) -> np.ndarray:
    """Normalised DCG: norm-vect(DCG, DCG_I), the ideal built from ``judged``."""
    run, recall_base, single = _pair(gains, judged, mapping)
    depth = _resolve_depth(depth, run)
    if depth == 0:
        return _shape(np.zeros((len(run), 0)), single)
    divisors = discount_divisors(discount, base, depth)
    values = cgcore.dcg_vectors(run.values, run.offsets, divisors, depth)
    ideal = cgcore.ideal_gain_vectors(recall_base.values, recall_base.offsets, depth)
    ideal_dcg = cgcore.dcg_vectors(ideal.reshape(-1), _dense_offsets(ideal), divisors, depth)
    return _shape(cgcore.normalise(values, ideal_dcg, _check_zero_ideal(zero_ideal)), single)


def _dense_offsets(matrix: np.ndarray) -> np.ndarray:
    return np.arange(matrix.shape[0] + 1, dtype=np.int64) * matrix.shape[1]


# ---------------------------------------------------------------- averaging

def avg_vect(vectors: Any, *, ignore_nan: bool = False) -> np.ndarray:
    """avg-vect (eq. 3): the component-wise mean of a topics x ranks matrix.

    ``ignore_nan`` leaves NaN entries (topics with a zero ideal under
    ``zero_ideal=nan``) out of each component's mean.
    """
    matrix, _ = _as_matrix(vectors, "vectors")
    if matrix.shape[0] == 0:
        raise InputError("avg-vect needs at least one vector")
    return cgcore.average_vector(matrix, bool(ignore_nan))


def avg_norm_vect(values: Any, ideal: Any, *, order: str = "normalise_then_average",
                  zero_ideal: float = 0.0, ignore_nan: bool = False) -> np.ndarray:
    """The average normalised vector over topics, in either order:

    * ``"normalise_then_average"``: avg-vect(norm-vect(V_t, I_t)) - each topic counts equally;
    * ``"average_then_normalise"``: norm-vect(avg-vect(V), avg-vect(I)) - the paper's
      "average vector of ideal performance" (topics with more gain weigh more).
    """
    if order not in AVERAGING_ORDERS:
        raise InputError(f"order must be one of {AVERAGING_ORDERS}, got {order!r}")
    if order == "normalise_then_average":
        return avg_vect(norm_vect(values, ideal, zero_ideal=zero_ideal), ignore_nan=ignore_nan)
    return norm_vect(avg_vect(values), avg_vect(ideal), zero_ideal=zero_ideal)


def avg_pos(vectors: Any, k: int) -> Union[float, np.ndarray]:
    """avg-pos(V, k) (eq. 6): (1/k) * sum_{i=1..k} V[i], per topic.

    >>> avg_pos([1.0, 0.5, 0.0, 0.5], 4)
    0.5
    """
    matrix, single = _as_matrix(vectors, "vectors")
    k = _check_positive_int(k, "k")
    if k > matrix.shape[1]:
        raise InputError(f"k = {k} exceeds the vectors' depth {matrix.shape[1]}")
    result = cgcore.average_position(matrix, k)
    return float(result[0]) if single else result


# ---------------------------------------------------------------- scalars at k

def _scalar(result: np.ndarray, single: bool) -> Union[float, np.ndarray]:
    return float(result[0]) if single else result


def _first_k(gains: Any, k: int) -> Any:
    """Only ranks 1..k of a run matter at cut-off k: skip checking the rest of a matrix."""
    if isinstance(gains, np.ndarray) and gains.ndim == 2 and gains.shape[1] > k:
        return gains[:, :k]
    return gains


def cg_at(gains: Any, k: int, *, mapping: Optional[GainSpec] = None) -> Union[float, np.ndarray]:
    """CG@k = CG[k], computed without building the vector."""
    return dcg_at(gains, k, discount="none", mapping=mapping)


def dcg_at(gains: Any, k: int, *, discount: DiscountSpec = "tois", base: float = 2.0,
           mapping: Optional[GainSpec] = None) -> Union[float, np.ndarray]:
    """DCG@k = DCG[k], computed without building the vector."""
    k = _check_positive_int(k, "k")
    batch, single = _prepare(_first_k(gains, k), mapping, "gains")
    divisors = discount_divisors(discount, base, k)
    return _scalar(cgcore.dcg_at(batch.values, batch.offsets, divisors, k), single)


def ncg_at(gains: Any, judged: Any, k: int, *, zero_ideal: float = 0.0,
           mapping: Optional[GainSpec] = None) -> Union[float, np.ndarray]:
    """nCG@k = CG[k] / CG_I[k]."""
    return ndcg_at(gains, judged, k, discount="none", zero_ideal=zero_ideal, mapping=mapping)


def ndcg_at(gains: Any, judged: Any, k: int, *, discount: DiscountSpec = "tois",
            base: float = 2.0, zero_ideal: float = 0.0, mapping: Optional[GainSpec] = None
            ) -> Union[float, np.ndarray]:
    """nDCG@k = DCG[k] / DCG_I[k], for millions of topics without building vectors.

    >>> round(ndcg_at([2, 1, 2, 0], [0, 1, 2, 2], 4), 4)   # the slides' example
    0.9203
    """
    k = _check_positive_int(k, "k")
    run, recall_base, single = _pair(_first_k(gains, k), judged, mapping)
    divisors = discount_divisors(discount, base, k)
    result = cgcore.ndcg_at(run.values, run.offsets, recall_base.values, recall_base.offsets,
                            divisors, k, _check_zero_ideal(zero_ideal))
    return _scalar(result, single)
