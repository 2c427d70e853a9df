"""Pure-Python twins of the ``cgcore`` kernels, with the same signatures.

Plain loops over Python floats, written to read like the paper's equations.
They are the test oracle: the compiled kernels must give the same numbers
(bit for bit: same operations, same order, libm's log functions via ``math``).
Far too slow for real use.
"""
from __future__ import annotations

import math
from typing import Any, Iterator, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
ArrayIn = Union[npt.NDArray[Any], Sequence[float]]     # what the kernels take, as arrays or lists

DISCOUNT_NONE = 0
DISCOUNT_RANK = 1
DISCOUNT_TOIS = 2
DISCOUNT_NOTE = 3
DISCOUNT_TREC_EVAL = 4


def _log_base(x: float, base: float) -> float:
    if base == 2.0:
        return math.log2(x)
    if base == 10.0:
        return math.log10(x)
    return math.log(x) / math.log(base)


def _topics(values: Any, offsets: Any) -> Iterator[list[float]]:
    """Yield each topic's gains as a list of floats."""
    for t in range(len(offsets) - 1):
        yield [float(g) for g in values[offsets[t]:offsets[t + 1]]]


def _fill(result: Any, out: Optional[Float64Array]) -> Float64Array:
    result = np.array(result, dtype=np.float64)
    if out is None:
        return result
    out[...] = result
    return out


def discount_divisors(rule: int, base: float, depth: int) -> Float64Array:
    """df(i) for i = 1..depth (see ``cgcore.discount_divisors``)."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    if rule in (DISCOUNT_TOIS, DISCOUNT_NOTE) and not (math.isfinite(base) and base > 1.0):
        raise ValueError(f"the logarithm base must be a finite number > 1, got {base}")
    divisors = []
    for i in range(1, depth + 1):
        if rule == DISCOUNT_NONE:
            divisors.append(1.0)
        elif rule == DISCOUNT_RANK:
            divisors.append(float(i))
        elif rule == DISCOUNT_TOIS:          # no discount before rank b
            divisors.append(1.0 if i < base else _log_base(float(i), base))
        elif rule == DISCOUNT_NOTE:          # every rank >= 2 discounted
            divisors.append(1.0 if i == 1 else _log_base(float(i), base))
        elif rule == DISCOUNT_TREC_EVAL:     # 1 / log2(i + 1) from rank 1
            divisors.append(math.log2(i + 1.0))
        else:
            raise ValueError(f"unknown discount rule {rule}")
    return np.array(divisors)


def _padded(gains: list[float], depth: int) -> list[float]:
    return (gains + [0.0] * depth)[:depth]


def cg_vectors(gains: ArrayIn, offsets: ArrayIn, depth: int,
               out: Optional[Float64Array] = None) -> Float64Array:
    """CG[1] = G[1]; CG[i] = CG[i-1] + G[i]."""
    rows = []
    for topic in _topics(gains, offsets):
        row, total = [], 0.0
        for gain in _padded(topic, depth):
            total = total + gain
            row.append(total)
        rows.append(row)
    return _fill(np.reshape(rows, (len(offsets) - 1, depth)), out)


def dcg_vectors(gains: ArrayIn, offsets: ArrayIn, divisors: Sequence[float],
                depth: int, out: Optional[Float64Array] = None) -> Float64Array:
    """DCG[i] = DCG[i-1] + G[i] / df(i)."""
    rows = []
    for topic in _topics(gains, offsets):
        row, total = [], 0.0
        for i, gain in enumerate(topic[:depth]):
            total = total + gain / float(divisors[i])
            row.append(total)
        rows.append(row + [total] * (depth - len(row)))
    return _fill(np.reshape(rows, (len(offsets) - 1, depth)), out)


def ideal_gain_vectors(judged: ArrayIn, offsets: ArrayIn, depth: int,
                       out: Optional[Float64Array] = None) -> Float64Array:
    """BV: positive judged gains sorted descending, then zeros."""
    rows = [_padded(sorted((g for g in topic if g > 0.0), reverse=True), depth)
            for topic in _topics(judged, offsets)]
    return _fill(np.reshape(rows, (len(offsets) - 1, depth)), out)


def normalise(values: Any, ideal: Any, zero_ideal: float,
              out: Optional[Float64Array] = None) -> Float64Array:
    """V[i] / I[i] where I[i] > 0, else zero_ideal."""
    rows = [[float(v) / float(i) if i > 0.0 else zero_ideal for v, i in zip(vrow, irow)]
            for vrow, irow in zip(values, ideal)]
    return _fill(np.reshape(rows, np.shape(values)), out)


def average_vector(vectors: Any, ignore_nan: bool = False,
                   out: Optional[Float64Array] = None) -> Float64Array:
    """Component-wise mean over topics (rows); NaN entries skipped if ignore_nan."""
    if len(vectors) < 1:
        raise ValueError("avg-vect needs at least one vector")
    means = []
    for column in range(np.shape(vectors)[1]):
        total, counted = 0.0, 0
        for row in vectors:
            value = float(row[column])
            if ignore_nan and math.isnan(value):
                continue
            total = total + value
            counted += 1
        means.append(total / counted if counted else math.nan)
    return _fill(means, out)


def average_position(vectors: Any, k: int, out: Optional[Float64Array] = None
                     ) -> Float64Array:
    """(1/k) * sum_{i=1..k} V[i] per topic."""
    if k < 1 or k > np.shape(vectors)[1]:
        raise ValueError(f"k = {k} must be in 1..{np.shape(vectors)[1]}")
    result = []
    for row in vectors:
        total = 0.0
        for value in row[:k]:
            total = total + float(value)
        result.append(total / k)
    return _fill(result, out)


def _discounted_sum(gains: list[float], divisors: Sequence[float], k: int) -> float:
    total = 0.0
    for i, gain in enumerate(gains[:k]):
        total = total + gain / float(divisors[i])
    return total


def dcg_at(gains: ArrayIn, offsets: ArrayIn, divisors: Sequence[float], k: int,
           out: Optional[Float64Array] = None) -> Float64Array:
    """sum_{i <= min(k, len)} G[i] / df(i) per topic."""
    return _fill([_discounted_sum(topic, divisors, k) for topic in _topics(gains, offsets)], out)


def ideal_dcg_at(judged: ArrayIn, offsets: ArrayIn, divisors: Sequence[float],
                 k: int, out: Optional[Float64Array] = None) -> Float64Array:
    """The discounted sum of the top-k positive judged gains, descending."""
    return _fill([_discounted_sum(sorted((g for g in topic if g > 0.0), reverse=True), divisors, k)
                  for topic in _topics(judged, offsets)], out)


def ndcg_at(gains: ArrayIn, offsets: ArrayIn, judged: ArrayIn,
            judged_offsets: ArrayIn, divisors: Sequence[float], k: int,
            zero_ideal: float, out: Optional[Float64Array] = None) -> Float64Array:
    """DCG@k / ideal DCG@k, or zero_ideal where the ideal is 0."""
    values = dcg_at(gains, offsets, divisors, k)
    ideal = ideal_dcg_at(judged, judged_offsets, divisors, k)
    return _fill([v / i if i > 0.0 else zero_ideal for v, i in zip(values, ideal)], out)


def ndcg_at_cutoffs(gains: ArrayIn, offsets: ArrayIn, judged: ArrayIn,
                    judged_offsets: ArrayIn, divisors: Sequence[float],
                    ks: Sequence[int], zero_ideal: float,
                    out: Optional[Float64Array] = None) -> Float64Array:
    """ndcg_at at each cut-off of ks, one column each: shape (T, len(ks))."""
    columns = [ndcg_at(gains, offsets, judged, judged_offsets, divisors, int(k), zero_ideal)
               for k in ks]
    return _fill(np.reshape(columns, (len(ks), len(offsets) - 1)).T, out)
