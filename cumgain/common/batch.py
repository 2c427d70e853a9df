"""Batches of gain lists: one topic, a ragged list of topics, or a dense matrix.

Every form becomes a :class:`Ragged` batch (flat values + offsets, as in a CSR
matrix), which is what the compiled kernels take. Validation happens here,
before any kernel runs, and raises :class:`~cumgain.exceptions.InputError`.
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import Any, Sequence

import numpy as np

from cumgain.common.arrays import plain
from cumgain.exceptions import InputError


@dataclass(frozen=True)
class Ragged:
    """Gain lists of different lengths: topic ``t`` owns ``values[offsets[t]:offsets[t+1]]``.

    ``values`` is float64 and ``offsets`` int64 with ``n_topics + 1`` entries,
    non-decreasing and within ``values``.

    Attributes
    ----------
    values : numpy.ndarray of float64
        Every topic's values, one after the other.
    offsets : numpy.ndarray of int64
        Where each topic's values start, and the end (``n_topics + 1`` entries).
    """

    values: np.ndarray
    offsets: np.ndarray

    @classmethod
    def from_lists(cls, lists: Sequence[Sequence[float]], name: str = "gains") -> "Ragged":
        """Build a batch from a sequence of gain lists."""
        arrays = []
        for t, row in enumerate(lists):
            if _is_scalar(row) or isinstance(row, (str, bytes)) or not hasattr(row, "__len__"):
                raise InputError(f"{name}[{t}] must be a list of numbers, got {row!r}")
            try:
                array = np.asarray(row) if len(row) else np.zeros(0)
            except ValueError as error:
                raise InputError(f"{name}[{t}] is not a flat list of numbers: {error}") from None
            if array.ndim != 1:
                raise InputError(f"{name}[{t}] must be a flat list of numbers, got shape {array.shape}")
            arrays.append(_as_float(array, f"{name}[{t}]"))
        offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
        np.cumsum([len(array) for array in arrays], out=offsets[1:])
        values = np.concatenate(arrays) if arrays else np.zeros(0)
        return cls(values=np.ascontiguousarray(values, dtype=np.float64), offsets=offsets)

    @classmethod
    def from_dense(cls, matrix: np.ndarray) -> "Ragged":
        """A topics x ranks matrix, without copying when it is already C-contiguous float64."""
        matrix = np.ascontiguousarray(matrix, dtype=np.float64)
        n_topics, n_ranks = matrix.shape
        offsets = np.arange(n_topics + 1, dtype=np.int64) * n_ranks
        return cls(values=matrix.reshape(-1), offsets=offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        """The number of gains of each topic."""
        return np.diff(self.offsets)

    def __getitem__(self, topic: int) -> np.ndarray:
        return self.values[self.offsets[topic]:self.offsets[topic + 1]]


def _as_float(array: Any, name: str) -> np.ndarray:
    array = np.asarray(plain(array))
    if array.size == 0:
        return np.zeros(array.shape, dtype=np.float64)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise InputError(f"{name} must hold numbers, got dtype {array.dtype}")
    if np.iscomplexobj(array):
        raise InputError(f"{name} must hold real numbers, got complex values")
    array = array.astype(np.float64, copy=False)
    bad = ~np.isfinite(array)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(f"{name} must be finite: {name}{list(where)} is {array[where]}")
    return array


def _check_ragged(batch: Ragged, name: str) -> Ragged:
    values = _as_float(batch.values, f"{name}.values")
    offsets = np.asarray(batch.offsets)
    if values.ndim != 1 or offsets.ndim != 1:
        raise InputError(f"{name}.values and {name}.offsets must be 1-D")
    if not np.issubdtype(offsets.dtype, np.integer):
        raise InputError(f"{name}.offsets must be integers, got dtype {offsets.dtype}")
    if len(offsets) < 1:
        raise InputError(f"{name}.offsets must hold n_topics + 1 >= 1 entries")
    if offsets.dtype != np.int64:
        # checked as int64, the kernels' type: unsigned or narrow offsets would wrap
        # around in np.diff (uint64 2**63 as int64 is negative, int8 100 - (-100) is 56)
        too_big = np.flatnonzero(offsets > np.iinfo(np.int64).max) \
            if np.issubdtype(offsets.dtype, np.unsignedinteger) else ()
        if len(too_big):
            t = int(too_big[0])
            raise InputError(f"{name}.offsets[{t}] = {offsets[t]} runs past the "
                             f"{len(values)} values")
        offsets = offsets.astype(np.int64)
    if offsets[0] < 0:
        raise InputError(f"{name}.offsets[0] = {offsets[0]} is negative")
    decreasing = offsets[1:] < offsets[:-1]     # (not np.diff: it wraps around int64)
    if decreasing.any():
        t = int(np.argmax(decreasing))
        raise InputError(
            f"{name}.offsets must be non-decreasing: offsets[{t + 1}] = {offsets[t + 1]} "
            f"< offsets[{t}] = {offsets[t]}")
    if offsets[-1] > len(values):
        raise InputError(
            f"{name}.offsets[-1] = {offsets[-1]} runs past the {len(values)} values")
    return Ragged(np.ascontiguousarray(values), np.ascontiguousarray(offsets, dtype=np.int64))


def _is_scalar(item: Any) -> bool:
    return isinstance(item, (Real, np.number)) and not isinstance(item, (str, bytes))


def as_batch(gains: Any, name: str = "gains") -> tuple[Ragged, bool]:
    """Return ``(batch, single)``: the input as a validated :class:`Ragged`
    batch, and whether it was a single gain list (so results are 1-D). A torch tensor
    is read as :func:`cumgain.common.arrays.plain` reads it."""
    gains = plain(gains)
    if hasattr(gains, "__dlpack__") and not isinstance(gains, np.ndarray):
        gains = np.asarray(gains)
    if isinstance(gains, Ragged):
        return _check_ragged(gains, name), False
    if isinstance(gains, np.ndarray):
        if gains.ndim == 1:
            values = _as_float(gains, name)
            return Ragged(np.ascontiguousarray(values), np.array([0, len(values)], np.int64)), True
        if gains.ndim == 2:
            return Ragged.from_dense(_as_float(gains, name)), False
        raise InputError(
            f"{name} must be one gain list (1-D) or topics x ranks (2-D), got {gains.ndim}-D")
    if isinstance(gains, (str, bytes)) or not hasattr(gains, "__len__"):
        raise InputError(f"{name} must be a list of gains or a batch of them, got {type(gains).__name__}")
    items = list(gains)
    if all(_is_scalar(item) for item in items):
        values = _as_float(np.asarray(items, dtype=np.float64) if items else np.zeros(0), name)
        return Ragged(values, np.array([0, len(values)], np.int64)), True
    if any(_is_scalar(item) for item in items):
        raise InputError(f"{name} mixes numbers and lists; give one gain list or a list of lists")
    return Ragged.from_lists(items, name), False
