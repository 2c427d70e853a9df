"""The cumulated-gain vector API of Jarvelin & Kekalainen (2002), section 2.

Every function takes one gain list (and returns a 1-D result) or a batch of
them: a list of lists, a topics x ranks matrix, or a :class:`~cumgain.common.batch.Ragged`
(and returns one row per topic). Lists shorter than the depth ``n`` are padded
with gain 0. Inputs are validated here; the loops run in the compiled ``cgcore``.
For a type checker, a scalar at k (``ndcg_at``, ...) of a list of numbers is a ``float``
and of a list of lists or a ``Ragged`` a float64 array; of a numpy array, whose number
of dimensions only the running program knows, it is ``Any`` (:mod:`cumgain.types`).

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

Limits (:mod:`cumgain.common.limits`): ``k`` and ``depth`` are whole numbers from 1 to
2**53 - 1. A scalar at k (``dcg_at``, ``ndcg_at``, ...) needs memory for the ranks it
sums, min(k, the longest list), never for k. A vector request whose matrices
(topics x depth float64 each; ``ncg`` and ``ndcg`` hold four at once) need more than
the memory available is refused up front, naming the size. Gains so large that a
sum leaves float64's range (a CG or DCG, an ideal, V / I, a sum over topics) raise
:class:`~cumgain.exceptions.SumOverflowError` naming the topic and the rank, never
an infinite or NaN value.
"""
from __future__ import annotations

import contextlib
import math
from typing import Any, Iterator, Optional, Sequence, Union, get_args, overload

import numpy as np
import numpy.typing as npt

import cgcore
from cumgain.common.arrays import plain
from cumgain.common.batch import Ragged, as_batch
from cumgain.exceptions import InputError, SumOverflowError
from cumgain.gains import GainSpec, gain_mapping
from cumgain.common.limits import check_memory, real_number, whole_number
from cumgain.types import (
    AveragingOrder,
    DiscountSpec,
    FloatArray,
    GainList,
    GainLists,
    GainsLike,
)

DISCOUNT_RULES: dict[str, int] = {
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

AVERAGING_ORDERS: tuple[AveragingOrder, ...] = get_args(AveragingOrder)


# ---------------------------------------------------------------- helpers

def _check_base(base: Any) -> float:
    base = real_number(base, "the logarithm base", "a finite number > 1")
    if not base > 1.0:
        raise InputError(f"the logarithm base must be a finite number > 1, got {base}")
    return base


def _check_positive_int(value: Any, name: str) -> int:
    return whole_number(value, name)


def _check_zero_ideal(zero_ideal: Any) -> float:
    if isinstance(zero_ideal, (float, np.floating)) and math.isnan(zero_ideal):
        return math.nan
    return real_number(zero_ideal, "zero_ideal", "a number (0.0 or nan)")


@contextlib.contextmanager
def _sums(function: str, measure: str, single: bool, *, ideal: bool = False,
          names: tuple[str, str] = ("gains", "judged")) -> Iterator[None]:
    """Turn a kernel's SumOverflow into a SumOverflowError naming the list and rank
    (``ideal``: the kernel was given the ideal gains; ``names``: what the caller calls
    the run's and the judged lists, or the vectors)."""
    try:
        yield
    except cgcore.SumOverflow as overflow:
        of = "ideal" if ideal and overflow.of == "run" else overflow.of
        raise _overflow_error(overflow, of, function, measure, single, names) from None


def _overflow_error(overflow: Any, of: str, function: str, measure: str, single: bool,
                    names: tuple[str, str]) -> SumOverflowError:
    def of_list(name: str) -> str:
        return name if single or overflow.topic is None else f"{name}[{overflow.topic}]"

    rank = overflow.rank
    if of == "run":
        what = f"the {measure} of {of_list(names[0])} overflows float64 at rank {rank}"
    elif of == "ideal":
        what = f"the ideal {measure} of {of_list(names[1])} overflows float64 at rank {rank}"
    elif of == "ratio":
        what = (f"{measure} / ideal {measure} of {of_list(names[0])} at rank {rank} "
                "overflows float64 (a tiny ideal)")
    elif of == "topics":
        what = f"the sum over topics at rank {rank} overflows float64"
    else:
        what = f"the sum of {of_list(names[0])} to rank {rank} overflows float64"
    return SumOverflowError(
        f"{function}: {what}; gains this large cannot be summed in float64 (beyond "
        "about 1.8e308): scale them down",
        topic=None if single else overflow.topic, rank=rank, sum=of)


def _check_vector_memory(function: str, n_topics: int, depth: int, matrices: int,
                         longest: int) -> None:
    """Refuse a vector request whose ``matrices`` topics x depth float64 matrices
    would not fit in the memory available, before any is allocated."""
    if n_topics == 0:
        return
    check_memory(
        n_topics * depth * 8 * matrices,
        f"{function} to depth {depth} over {n_topics} topic{'s' if n_topics != 1 else ''} "
        f"({matrices} matri{'ces' if matrices != 1 else 'x'} of {n_topics} x {depth} float64)",
        f"; the longest list holds {longest} gains (ranks beyond it only pad the vectors)")


def discount_divisors(discount: DiscountSpec = "tois", base: float = 2.0,
                      depth: int = 1) -> FloatArray:
    """The divisors df(1..depth) of a discount rule (see the module docstring).

    Parameters
    ----------
    discount : {"tois", "note", "trec_eval", "none"} or sequence of float, default "tois"
        The rule (the paper's; its research note's; trec_eval's log2(i + 1); none), or
        the divisors themselves (see the module docstring).
    base : float, default 2.0
        b of the paper's rules.
    depth : int, default 1
        How many ranks.

    Returns
    -------
    numpy.ndarray
        df(1), ..., df(depth).

    Raises
    ------
    InputError
        An unknown rule, a base <= 1 or a bad depth.

    Examples
    --------
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
        base = _check_base(base)
        check_memory(depth * 8, f"discount_divisors to depth {depth}")
        return cgcore.discount_divisors(rule, base, depth)
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


def _longest(batch: Ragged) -> int:
    return int(batch.lengths.max()) if len(batch) else 0


def _resolve_depth(depth: Optional[int], batch: Ragged, function: str, matrices: int,
                   judged: Optional[Ragged] = None) -> int:
    """The depth (the longest list when None), once the ``matrices`` topics x depth
    matrices ``function`` builds are known to fit in memory (with depth None too: one
    long list among many short ones makes every row that long)."""
    longest = _longest(batch)
    depth = longest if depth is None else _check_positive_int(depth, "depth")
    longest = max(longest, _longest(judged) if judged is not None else 0)
    _check_vector_memory(function, len(batch), depth, matrices, longest)
    return depth


def _divisors_to(discount: DiscountSpec, base: float, k: int, longest: int) -> FloatArray:
    """The divisors a scalar at k needs: of a named rule, for the ranks summed,
    min(k, the longest list), which are bit for bit the first of the rule's divisors
    to k; of an array, its first k (checked to k, as for a vector to depth k)."""
    if isinstance(discount, str):
        return discount_divisors(discount, base, max(1, min(k, longest)))
    return discount_divisors(discount, base, k)


def _shape(result: FloatArray, single: bool) -> FloatArray:
    return result[0] if single else result


def _pair(gains: Any, judged: Any, mapping: Optional[GainSpec]) -> tuple[Ragged, Ragged, bool]:
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


def _as_matrix(vectors: Any, name: str, nan: bool = False,
               columns: Optional[int] = None) -> tuple[FloatArray, bool]:
    """A 1-D vector or topics x ranks matrix as C-contiguous float64, and whether it was
    1-D; its entries (of the first ``columns`` ranks, the ones read) finite, or
    (``nan``) finite or NaN (a topic marked by ``zero_ideal=nan``)."""
    array = np.asarray(plain(vectors))
    if array.dtype == object or not np.issubdtype(array.dtype, np.number) \
            or np.iscomplexobj(array):
        raise InputError(f"{name} must be a numeric vector or topics x ranks matrix")
    if array.ndim not in (1, 2):
        raise InputError(f"{name} must be 1-D or 2-D, got {array.ndim}-D")
    single = array.ndim == 1
    matrix = np.ascontiguousarray(array[np.newaxis, :] if single else array, dtype=np.float64)
    checked = matrix[:, :columns] if columns is not None else matrix
    if np.isinf(checked).any() if nan else not np.isfinite(checked).all():
        bad = np.isinf(checked) if nan else ~np.isfinite(checked)
        topic, rank = (int(i) for i in np.argwhere(bad)[0])
        where = f"{name}[{rank}]" if single else f"{name}[{topic}, {rank}]"
        allowed = "finite or NaN" if nan else "finite"
        raise InputError(f"{name} must be {allowed}: {where} is {matrix[topic, rank]}")
    return matrix, single


# ---------------------------------------------------------------- vectors

def cg(gains: GainsLike, depth: Optional[int] = None, *, mapping: Optional[GainSpec] = None
       ) -> FloatArray:
    """Cumulated gain (eq. 1): CG[1] = G[1]; CG[i] = CG[i-1] + G[i], to depth n.

    ``mapping``: if given, the inputs are relevance levels, mapped to gains first.

    Parameters
    ----------
    gains : array_like, list of lists or Ragged
        Gains (or levels, with ``mapping``) in rank order: one list, or a batch (a list of
        lists, a topics x ranks matrix, a :class:`~cumgain.Ragged`).
    depth : int, optional
        n, the last rank (default: the longest list); shorter lists are padded with 0.
    mapping : str, mapping, callable or GainMapping, optional
        Turn levels into gains first (:func:`~cumgain.gain_mapping`).

    Returns
    -------
    numpy.ndarray
        The vector (length ``depth``), or a topics x ``depth`` matrix for a batch.

    Raises
    ------
    InputError
        Gains that are not finite numbers, a bad depth, cut-off or discount.

    Examples
    --------
    >>> cg([3, 2, 3, 0, 0, 1, 2, 2, 3, 0])
    array([ 3.,  5.,  8.,  8.,  8.,  9., 11., 13., 16., 16.])
    """
    batch, single = _prepare(gains, mapping, "gains")
    depth = _resolve_depth(depth, batch, "cg", 1)
    if depth == 0:
        return _shape(np.zeros((len(batch), 0)), single)
    with _sums("cg", "CG", single):
        return _shape(cgcore.cg_vectors(batch.values, batch.offsets, depth), single)


def dcg(gains: GainsLike, depth: Optional[int] = None, *, discount: DiscountSpec = "tois",
        base: float = 2.0, mapping: Optional[GainSpec] = None) -> FloatArray:
    """Discounted cumulated gain (eq. 2): DCG[i] = DCG[i-1] + G[i] / df(i).

    Parameters
    ----------
    gains : array_like, list of lists or Ragged
        Gains (or levels, with ``mapping``) in rank order: one list, or a batch (a list of
        lists, a topics x ranks matrix, a :class:`~cumgain.Ragged`).
    depth : int, optional
        n, the last rank (default: the longest list); shorter lists are padded with 0.
    discount : {"tois", "note", "trec_eval", "none"} or sequence of float, default "tois"
        The rule (the paper's; its research note's; trec_eval's log2(i + 1); none), or
        the divisors themselves (see the module docstring).
    base : float, default 2.0
        b of the paper's rules.
    mapping : str, mapping, callable or GainMapping, optional
        Turn levels into gains first (:func:`~cumgain.gain_mapping`).

    Returns
    -------
    numpy.ndarray
        The vector (length ``depth``), or a topics x ``depth`` matrix for a batch.

    Raises
    ------
    InputError
        Gains that are not finite numbers, a bad depth, cut-off or discount.

    Examples
    --------
    >>> dcg([3, 2, 3, 0, 0, 1, 2, 2, 3, 0]).round(2)
    array([3.  , 5.  , 6.89, 6.89, 6.89, 7.28, 7.99, 8.66, 9.61, 9.61])
    """
    batch, single = _prepare(gains, mapping, "gains")
    depth = _resolve_depth(depth, batch, "dcg", 1)
    if depth == 0:
        return _shape(np.zeros((len(batch), 0)), single)
    divisors = discount_divisors(discount, base, depth)
    with _sums("dcg", "DCG", single):
        return _shape(cgcore.dcg_vectors(batch.values, batch.offsets, divisors, depth), single)


def ideal_gains(judged: GainsLike, depth: Optional[int] = None, *,
                mapping: Optional[GainSpec] = None) -> FloatArray:
    """The ideal gain vector BV (eq. 4): the topic's positive judged gains sorted
    descending, then zeros, to depth n (default: the number of judged documents).

    Parameters
    ----------
    judged : array_like, list of lists or Ragged
        The topic's judged gains (the recall base), in any order; a batch for a batch.
    depth : int, optional
        n (default: the number of judged documents).
    mapping : str, mapping, callable or GainMapping, optional
        Turn levels into gains first (:func:`~cumgain.gain_mapping`).

    Returns
    -------
    numpy.ndarray
        The vector (length ``depth``), or a topics x ``depth`` matrix for a batch.

    Raises
    ------
    InputError
        Gains that are not finite numbers, a bad depth, cut-off or discount.

    Examples
    --------
    >>> ideal_gains([1, 3, 0, 2, 3], depth=7)
    array([3., 3., 2., 1., 0., 0., 0.])
    """
    batch, single = _prepare(judged, mapping, "judged")
    depth = _resolve_depth(depth, batch, "ideal_gains", 1)
    if depth == 0:
        return _shape(np.zeros((len(batch), 0)), single)
    return _shape(cgcore.ideal_gain_vectors(batch.values, batch.offsets, depth), single)


def norm_vect(values: npt.ArrayLike, ideal: npt.ArrayLike, *, zero_ideal: float = 0.0
              ) -> FloatArray:
    """norm-vect (eq. 5): V[i] / I[i], or ``zero_ideal`` where I[i] <= 0.

    ``values`` and ``ideal`` must be finite (a NaN or infinite ideal would make the
    ratio meaningless); a ratio beyond float64's range raises SumOverflowError.

    Parameters
    ----------
    values : array_like
        A vector or a topics x ranks matrix.
    ideal : array_like
        The ideal vector(s), the same shape.
    zero_ideal : float, default 0.0
        The value where the ideal is 0 (``nan`` leaves such topics out of averages).

    Returns
    -------
    numpy.ndarray
        values / ideal, element by element.

    Raises
    ------
    InputError
        Shapes that differ.
    """
    matrix, single = _as_matrix(values, "values")
    ideal_matrix, ideal_single = _as_matrix(ideal, "ideal")
    if matrix.shape != ideal_matrix.shape:
        raise InputError(f"values have shape {np.shape(values)} but ideal has {np.shape(ideal)}")
    zero_ideal = _check_zero_ideal(zero_ideal)
    both_single = single and ideal_single
    with _sums("norm_vect", "V", both_single, names=("values", "ideal")):
        result = cgcore.normalise(matrix, ideal_matrix, zero_ideal)
    return _shape(result, both_single)


def ncg(gains: GainsLike, judged: GainsLike, depth: Optional[int] = None, *,
        zero_ideal: float = 0.0, mapping: Optional[GainSpec] = None) -> FloatArray:
    """Normalised CG: norm-vect(CG, CG_I), the ideal built from ``judged`` (the recall base).

    Parameters
    ----------
    gains : array_like, list of lists or Ragged
        Gains (or levels, with ``mapping``) in rank order: one list, or a batch (a list of
        lists, a topics x ranks matrix, a :class:`~cumgain.Ragged`).
    judged : array_like, list of lists or Ragged
        The topic's judged gains (the recall base), in any order; a batch for a batch.
    depth : int, optional
        n, the last rank (default: the longest list); shorter lists are padded with 0.
    zero_ideal : float, default 0.0
        The value where the ideal is 0 (``nan`` leaves such topics out of averages).
    mapping : str, mapping, callable or GainMapping, optional
        Turn levels into gains first (:func:`~cumgain.gain_mapping`).

    Returns
    -------
    numpy.ndarray
        The vector (length ``depth``), or a topics x ``depth`` matrix for a batch.

    Raises
    ------
    InputError
        Gains that are not finite numbers, a bad depth, cut-off or discount.

    Examples
    --------
    >>> ncg([3, 2, 3, 0, 0, 1, 2, 2, 3, 0], [3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]).round(2)
    array([1.  , 0.83, 0.89, 0.73, 0.62, 0.6 , 0.69, 0.76, 0.89, 0.84])
    """
    run, recall_base, single = _pair(gains, judged, mapping)
    depth = _resolve_depth(depth, run, "ncg", 4, recall_base)
    zero_ideal = _check_zero_ideal(zero_ideal)
    if depth == 0:
        return _shape(np.zeros((len(run), 0)), single)
    with _sums("ncg", "CG", single):
        values = cgcore.cg_vectors(run.values, run.offsets, depth)
    ideal = cgcore.ideal_gain_vectors(recall_base.values, recall_base.offsets, depth)
    with _sums("ncg", "CG", single, ideal=True):
        ideal_cg = cgcore.cg_vectors(ideal.reshape(-1), _dense_offsets(ideal), depth)
    with _sums("ncg", "CG", single):
        return _shape(cgcore.normalise(values, ideal_cg, zero_ideal), single)


def ndcg(gains: GainsLike, judged: GainsLike, depth: Optional[int] = None, *,
         discount: DiscountSpec = "tois", base: float = 2.0, zero_ideal: float = 0.0,
         mapping: Optional[GainSpec] = None) -> FloatArray:
    """Normalised DCG: norm-vect(DCG, DCG_I), the ideal built from ``judged``.

    Parameters
    ----------
    gains : array_like, list of lists or Ragged
        Gains (or levels, with ``mapping``) in rank order: one list, or a batch (a list of
        lists, a topics x ranks matrix, a :class:`~cumgain.Ragged`).
    judged : array_like, list of lists or Ragged
        The topic's judged gains (the recall base), in any order; a batch for a batch.
    depth : int, optional
        n, the last rank (default: the longest list); shorter lists are padded with 0.
    discount : {"tois", "note", "trec_eval", "none"} or sequence of float, default "tois"
        The rule (the paper's; its research note's; trec_eval's log2(i + 1); none), or
        the divisors themselves (see the module docstring).
    base : float, default 2.0
        b of the paper's rules.
    zero_ideal : float, default 0.0
        The value where the ideal is 0 (``nan`` leaves such topics out of averages).
    mapping : str, mapping, callable or GainMapping, optional
        Turn levels into gains first (:func:`~cumgain.gain_mapping`).

    Returns
    -------
    numpy.ndarray
        The vector (length ``depth``), or a topics x ``depth`` matrix for a batch.

    Raises
    ------
    InputError
        Gains that are not finite numbers, a bad depth, cut-off or discount.
    """
    run, recall_base, single = _pair(gains, judged, mapping)
    depth = _resolve_depth(depth, run, "ndcg", 4, recall_base)
    zero_ideal = _check_zero_ideal(zero_ideal)
    if depth == 0:
        return _shape(np.zeros((len(run), 0)), single)
    divisors = discount_divisors(discount, base, depth)
    with _sums("ndcg", "DCG", single):
        values = cgcore.dcg_vectors(run.values, run.offsets, divisors, depth)
    ideal = cgcore.ideal_gain_vectors(recall_base.values, recall_base.offsets, depth)
    with _sums("ndcg", "DCG", single, ideal=True):
        ideal_dcg = cgcore.dcg_vectors(ideal.reshape(-1), _dense_offsets(ideal), divisors, depth)
    with _sums("ndcg", "DCG", single):
        return _shape(cgcore.normalise(values, ideal_dcg, zero_ideal), single)


def _dense_offsets(matrix: FloatArray) -> npt.NDArray[np.int64]:
    return np.arange(matrix.shape[0] + 1, dtype=np.int64) * matrix.shape[1]


# ---------------------------------------------------------------- averaging

def avg_vect(vectors: npt.ArrayLike, *, ignore_nan: bool = False) -> FloatArray:
    """avg-vect (eq. 3): the component-wise mean of a topics x ranks matrix.

    ``ignore_nan`` leaves NaN entries (topics with a zero ideal under
    ``zero_ideal=nan``) out of each component's mean; without it a NaN entry makes
    its component NaN. Infinite entries are refused; a sum over topics beyond
    float64's range raises SumOverflowError.

    Parameters
    ----------
    vectors : array_like
        A topics x ranks matrix.
    ignore_nan : bool, default False
        Average each rank over the topics that are not NaN there.

    Returns
    -------
    numpy.ndarray
        The mean vector.

    Raises
    ------
    InputError
        Not a matrix of numbers.
    """
    matrix, _ = _as_matrix(vectors, "vectors", nan=True)
    if matrix.shape[0] == 0:
        raise InputError("avg-vect needs at least one vector")
    with _sums("avg_vect", "", False, names=("vectors", "vectors")):
        return cgcore.average_vector(matrix, bool(ignore_nan))


def avg_norm_vect(values: npt.ArrayLike, ideal: npt.ArrayLike, *,
                  order: AveragingOrder = "normalise_then_average", zero_ideal: float = 0.0,
                  ignore_nan: bool = False) -> FloatArray:
    """The average normalised vector over topics, in either order:

    * ``"normalise_then_average"``: avg-vect(norm-vect(V_t, I_t)) - each topic counts equally;
    * ``"average_then_normalise"``: norm-vect(avg-vect(V), avg-vect(I)) - the paper's
      "average vector of ideal performance" (topics with more gain weigh more).

    Parameters
    ----------
    values : array_like
        The topics x ranks matrix of CG or DCG vectors.
    ideal : array_like
        The ideal vectors, the same shape.
    order : {"normalise_then_average", "average_then_normalise"}, default "normalise_then_average"
        Normalise each topic then average, or average then normalise (the paper's figures).
    zero_ideal : float, default 0.0
        The value where the ideal is 0 (``nan`` leaves such topics out of averages).
    ignore_nan : bool, default False
        Average each rank over the topics that are not NaN there.

    Returns
    -------
    numpy.ndarray
        The average normalised vector.

    Raises
    ------
    InputError
        Shapes that differ, an unknown order.
    """
    if order not in AVERAGING_ORDERS:
        raise InputError(f"order must be one of {AVERAGING_ORDERS}, got {order!r}")
    if order == "normalise_then_average":
        return avg_vect(norm_vect(values, ideal, zero_ideal=zero_ideal), ignore_nan=ignore_nan)
    return norm_vect(avg_vect(values), avg_vect(ideal), zero_ideal=zero_ideal)


@overload
def avg_pos(vectors: Sequence[float], k: int) -> float: ...
@overload
def avg_pos(vectors: Sequence[Sequence[float]], k: int) -> FloatArray: ...
@overload
def avg_pos(vectors: npt.ArrayLike, k: int) -> Any: ...


def avg_pos(vectors: npt.ArrayLike, k: int) -> Union[float, FloatArray]:
    """avg-pos(V, k) (eq. 6): (1/k) * sum_{i=1..k} V[i], per topic.

    NaN entries (``zero_ideal=nan``) make the topic's value NaN; infinite ones are
    refused.

    Parameters
    ----------
    vectors : array_like
        A vector or a topics x ranks matrix.
    k : int
        The cut-off (>= 1).

    Returns
    -------
    float or numpy.ndarray
        The value, or one per topic for a batch.

    Raises
    ------
    InputError
        A cut-off outside 1..len(vector).

    Examples
    --------
    >>> avg_pos([1.0, 0.5, 0.0, 0.5], 4)
    0.5
    """
    k = _check_positive_int(k, "k")
    matrix, single = _as_matrix(vectors, "vectors", nan=True, columns=k)
    if k > matrix.shape[1]:
        raise InputError(f"k = {k} exceeds the vectors' depth {matrix.shape[1]}")
    with _sums("avg_pos", "", single, names=("vectors", "vectors")):
        result = cgcore.average_position(matrix, k)
    return float(result[0]) if single else result


# ---------------------------------------------------------------- scalars at k

def _scalar(result: FloatArray, single: bool) -> Union[float, FloatArray]:
    return float(result[0]) if single else result


def _first_k(gains: Any, k: int) -> Any:
    """Only ranks 1..k of a run matter at cut-off k: skip checking the rest of a matrix."""
    if isinstance(gains, np.ndarray) and gains.ndim == 2 and gains.shape[1] > k:
        return gains[:, :k]
    return gains


@overload
def cg_at(gains: GainList, k: int, *, mapping: Optional[GainSpec] = None) -> float: ...
@overload
def cg_at(gains: GainLists, k: int, *, mapping: Optional[GainSpec] = None) -> FloatArray: ...
@overload
def cg_at(gains: GainsLike, k: int, *, mapping: Optional[GainSpec] = None) -> Any: ...


def cg_at(gains: GainsLike, k: int, *, mapping: Optional[GainSpec] = None
          ) -> Union[float, FloatArray]:
    """CG@k = CG[k], computed without building the vector.

    Parameters
    ----------
    gains : array_like, list of lists or Ragged
        Gains (or levels, with ``mapping``) in rank order: one list, or a batch (a list of
        lists, a topics x ranks matrix, a :class:`~cumgain.Ragged`).
    k : int
        The cut-off (>= 1).
    mapping : str, mapping, callable or GainMapping, optional
        Turn levels into gains first (:func:`~cumgain.gain_mapping`).

    Returns
    -------
    float or numpy.ndarray
        The value, or one per topic for a batch.

    Raises
    ------
    InputError
        Gains that are not finite numbers, a bad depth, cut-off or discount.
    """
    return _dcg_at(gains, k, "none", 2.0, mapping, "cg_at", "CG")


@overload
def dcg_at(gains: GainList, k: int, *, discount: DiscountSpec = ..., base: float = ...,
           mapping: Optional[GainSpec] = ...) -> float: ...
@overload
def dcg_at(gains: GainLists, k: int, *, discount: DiscountSpec = ..., base: float = ...,
           mapping: Optional[GainSpec] = ...) -> FloatArray: ...
@overload
def dcg_at(gains: GainsLike, k: int, *, discount: DiscountSpec = ..., base: float = ...,
           mapping: Optional[GainSpec] = ...) -> Any: ...


def dcg_at(gains: GainsLike, k: int, *, discount: DiscountSpec = "tois", base: float = 2.0,
           mapping: Optional[GainSpec] = None) -> Union[float, FloatArray]:
    """DCG@k = DCG[k], computed without building the vector.

    Parameters
    ----------
    gains : array_like, list of lists or Ragged
        Gains (or levels, with ``mapping``) in rank order: one list, or a batch (a list of
        lists, a topics x ranks matrix, a :class:`~cumgain.Ragged`).
    k : int
        The cut-off (>= 1).
    discount : {"tois", "note", "trec_eval", "none"} or sequence of float, default "tois"
        The rule (the paper's; its research note's; trec_eval's log2(i + 1); none), or
        the divisors themselves (see the module docstring).
    base : float, default 2.0
        b of the paper's rules.
    mapping : str, mapping, callable or GainMapping, optional
        Turn levels into gains first (:func:`~cumgain.gain_mapping`).

    Returns
    -------
    float or numpy.ndarray
        The value, or one per topic for a batch.

    Raises
    ------
    InputError
        Gains that are not finite numbers, a bad depth, cut-off or discount.
    """
    return _dcg_at(gains, k, discount, base, mapping, "dcg_at", "DCG")


def _dcg_at(gains: Any, k: Any, discount: DiscountSpec, base: float,
            mapping: Optional[GainSpec], function: str, measure: str
            ) -> Union[float, FloatArray]:
    k = _check_positive_int(k, "k")
    batch, single = _prepare(_first_k(gains, k), mapping, "gains")
    divisors = _divisors_to(discount, base, k, _longest(batch))
    with _sums(function, measure, single):
        return _scalar(cgcore.dcg_at(batch.values, batch.offsets, divisors, k), single)


@overload
def ncg_at(gains: GainList, judged: GainList, k: int, *, zero_ideal: float = ...,
           mapping: Optional[GainSpec] = ...) -> float: ...
@overload
def ncg_at(gains: GainLists, judged: GainLists, k: int, *, zero_ideal: float = ...,
           mapping: Optional[GainSpec] = ...) -> FloatArray: ...
@overload
def ncg_at(gains: GainsLike, judged: GainsLike, k: int, *, zero_ideal: float = ...,
           mapping: Optional[GainSpec] = ...) -> Any: ...


def ncg_at(gains: GainsLike, judged: GainsLike, k: int, *, zero_ideal: float = 0.0,
           mapping: Optional[GainSpec] = None) -> Union[float, FloatArray]:
    """nCG@k = CG[k] / CG_I[k].

    Parameters
    ----------
    gains : array_like, list of lists or Ragged
        Gains (or levels, with ``mapping``) in rank order: one list, or a batch (a list of
        lists, a topics x ranks matrix, a :class:`~cumgain.Ragged`).
    judged : array_like, list of lists or Ragged
        The topic's judged gains (the recall base), in any order; a batch for a batch.
    k : int
        The cut-off (>= 1).
    zero_ideal : float, default 0.0
        The value where the ideal is 0 (``nan`` leaves such topics out of averages).
    mapping : str, mapping, callable or GainMapping, optional
        Turn levels into gains first (:func:`~cumgain.gain_mapping`).

    Returns
    -------
    float or numpy.ndarray
        The value, or one per topic for a batch.

    Raises
    ------
    InputError
        Gains that are not finite numbers, a bad depth, cut-off or discount.
    """
    return _ndcg_at(gains, judged, k, "none", 2.0, zero_ideal, mapping, "ncg_at", "CG")


@overload
def ndcg_at(gains: GainList, judged: GainList, k: int, *, discount: DiscountSpec = ...,
            base: float = ..., zero_ideal: float = ..., mapping: Optional[GainSpec] = ...
            ) -> float: ...
@overload
def ndcg_at(gains: GainLists, judged: GainLists, k: int, *, discount: DiscountSpec = ...,
            base: float = ..., zero_ideal: float = ..., mapping: Optional[GainSpec] = ...
            ) -> FloatArray: ...
@overload
def ndcg_at(gains: GainsLike, judged: GainsLike, k: int, *, discount: DiscountSpec = ...,
            base: float = ..., zero_ideal: float = ..., mapping: Optional[GainSpec] = ...
            ) -> Any: ...


def ndcg_at(gains: GainsLike, judged: GainsLike, k: int, *, discount: DiscountSpec = "tois",
            base: float = 2.0, zero_ideal: float = 0.0, mapping: Optional[GainSpec] = None
            ) -> Union[float, FloatArray]:
    """nDCG@k = DCG[k] / DCG_I[k], for millions of topics without building vectors.

    Parameters
    ----------
    gains : array_like, list of lists or Ragged
        Gains (or levels, with ``mapping``) in rank order: one list, or a batch (a list of
        lists, a topics x ranks matrix, a :class:`~cumgain.Ragged`).
    judged : array_like, list of lists or Ragged
        The topic's judged gains (the recall base), in any order; a batch for a batch.
    k : int
        The cut-off (>= 1).
    discount : {"tois", "note", "trec_eval", "none"} or sequence of float, default "tois"
        The rule (the paper's; its research note's; trec_eval's log2(i + 1); none), or
        the divisors themselves (see the module docstring).
    base : float, default 2.0
        b of the paper's rules.
    zero_ideal : float, default 0.0
        The value where the ideal is 0 (``nan`` leaves such topics out of averages).
    mapping : str, mapping, callable or GainMapping, optional
        Turn levels into gains first (:func:`~cumgain.gain_mapping`).

    Returns
    -------
    float or numpy.ndarray
        The value, or one per topic for a batch.

    Raises
    ------
    InputError
        Gains that are not finite numbers, a bad depth, cut-off or discount.

    Examples
    --------
    >>> round(ndcg_at([2, 1, 2, 0], [0, 1, 2, 2], 4), 4)   # the slides' example
    0.9203
    """
    return _ndcg_at(gains, judged, k, discount, base, zero_ideal, mapping, "ndcg_at", "DCG")


def _ndcg_at(gains: Any, judged: Any, k: Any, discount: DiscountSpec, base: float,
             zero_ideal: Any, mapping: Optional[GainSpec], function: str, measure: str
             ) -> Union[float, FloatArray]:
    k = _check_positive_int(k, "k")
    run, recall_base, single = _pair(_first_k(gains, k), judged, mapping)
    divisors = _divisors_to(discount, base, k, max(_longest(run), _longest(recall_base)))
    zero_ideal = _check_zero_ideal(zero_ideal)
    with _sums(function, measure, single):
        result = cgcore.ndcg_at(run.values, run.offsets, recall_base.values,
                                recall_base.offsets, divisors, k, zero_ideal)
    return _scalar(result, single)
