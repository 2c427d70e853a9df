"""Gain mappings: relevance level -> gain value.

A mapping is given as
  * ``"identity"`` (also ``"linear"``): gain = level (trec_eval, pytrec_eval, sklearn);
  * a named scheme ``"0-1-10-100"`` etc.: the i-th number is the gain of level i
    (the paper's ``0-1-1-1``, ``0-1-2-3``, ``0-1-10-100``, ``0-0-0-1``, or any such list);
  * ``"exponential"`` (also ``"exp"``, ``"2^rel-1"``): gain = 2**level - 1;
  * a dict ``{level: gain}``;
  * a callable ``level -> gain``;
  * any named scheme followed by ``>=N`` (``"identity>=2"``, ``"exponential>=2"``): levels
    below N get gain 0 (ranx's ``-lN``, which drops lower judgments from gains and ideal).

Negative levels mean "judged non-relevant" (trec_eval) and get gain 0 under every
mapping unless a dict or callable maps them explicitly. A level that a named scheme
or dict does not cover is an error, never a silent 0; so is a gain that is not
finite (``"exponential"`` from level 1024 on: 2**1024 is beyond float64).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Union

import numpy as np

from cumgain.common.batch import Ragged, as_batch
from cumgain.exceptions import GainMappingError, InputError

GainSpec = Union[str, Mapping[float, float], Callable[[float], float], "GainMapping"]

_SCHEME = re.compile(r"^-?\d+(\.\d+)?(-\d+(\.\d+)?)+$")


@dataclass(frozen=True)
class GainMapping:
    """A named level -> gain function, applied to whole arrays at once.

    Attributes
    ----------
    name : str
        How the mapping is reported ("0-1-10-100", "exponential", ...).
    gain_of_level : callable
        The gain of one level (a float), applied element by element.
    """

    name: str
    gain_of_level: Callable[[float], float]

    def __call__(self, levels: Any) -> np.ndarray:
        """Map an array of levels to float64 gains (one Python call per distinct level)."""
        levels = np.asarray(levels, dtype=np.float64)
        distinct, inverse = np.unique(levels, return_inverse=True)
        table = np.empty(len(distinct), dtype=np.float64)
        for i, level in enumerate(distinct):
            try:
                gain = self.gain_of_level(float(level))
            except OverflowError:
                raise InputError(
                    f"gain mapping {self.name}: the gain of level {level:g} is beyond "
                    "float64's range (about 1.8e308)") from None
            try:
                gain = float(gain)
            except (TypeError, ValueError):
                raise InputError(
                    f"gain mapping {self.name} gave {gain!r} for level {level:g}; "
                    "gains must be real numbers") from None
            except OverflowError:           # a Python int beyond float64
                gain = math.inf
            if not math.isfinite(gain):
                raise InputError(f"gain mapping {self.name} gave {gain} for level {level:g}; "
                                 "gains must be finite (below about 1.8e308)")
            table[i] = gain
        return table[inverse].reshape(levels.shape)


def _identity(level: float) -> float:
    return level if level >= 0 else 0.0


def _exponential(level: float) -> float:
    """2**level - 1; OverflowError from level 1024 on (beyond float64)."""
    return 2.0 ** level - 1.0 if level >= 0 else 0.0


def _from_table(table: Mapping[float, float], name: str) -> Callable[[float], float]:
    def gain_of_level(level: float) -> float:
        if level in table:
            return table[level]
        if level < 0:
            return 0.0
        raise GainMappingError(
            f"relevance level {level:g} has no gain in mapping {name} "
            f"(it covers levels {sorted(table)})")
    return gain_of_level


_AT_LEAST = re.compile(r"^\s*(.+?)\s*>=\s*(-?\d+(?:\.\d+)?)\s*$")


def _from_level(mapping: "GainMapping", threshold: float, name: str) -> "GainMapping":
    """``mapping``, with gain 0 for the levels below ``threshold``."""
    def gain_of_level(level: float) -> float:
        return mapping.gain_of_level(level) if level >= threshold else 0.0
    return GainMapping(name, gain_of_level)


def gain_mapping(spec: GainSpec = "identity") -> GainMapping:
    """Turn a gain specification into a :class:`GainMapping`.

    Parameters
    ----------
    spec : str, mapping, callable or GainMapping, default "identity"
        A scheme (``"identity"``, ``"0-1-10-100"``, ``"exponential"``, ...), a
        ``{level: gain}`` table, or a function of an array of levels.

    Returns
    -------
    GainMapping

    Raises
    ------
    InputError
        An unknown scheme or a malformed table.

    Examples
    --------
    >>> gain_mapping("0-1-10-100")([0, 1, 2, 3, -2])
    array([  0.,   1.,  10., 100.,   0.])
    >>> gain_mapping("exponential")([0, 1, 2, 3])
    array([0., 1., 3., 7.])
    """
    if isinstance(spec, GainMapping):
        return spec
    if isinstance(spec, str) and _AT_LEAST.match(spec):
        scheme, threshold = _AT_LEAST.match(spec).groups()
        return _from_level(gain_mapping(scheme), float(threshold), spec)
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key in ("identity", "linear"):
            return GainMapping("identity", _identity)
        if key in ("exponential", "exp", "2^rel-1", "exp2"):
            return GainMapping("exponential", _exponential)
        if _SCHEME.match(key):
            table = {float(level): float(gain) for level, gain in enumerate(key.split("-"))}
            return GainMapping(spec, _from_table(table, spec))
        raise InputError(
            f"unknown gain scheme {spec!r}; use 'identity', 'exponential', a scheme "
            "like '0-1-10-100', a {level: gain} dict or a callable")
    if isinstance(spec, Mapping):
        table = {}
        for level, gain in spec.items():
            try:
                table[float(level)] = float(gain)
            except (TypeError, ValueError):
                raise InputError(f"gain mapping entry {level!r}: {gain!r} is not numeric") from None
            except OverflowError:
                raise InputError(f"gain mapping entry {level!r}: the gain is beyond float64's "
                                 "range (about 1.8e308)") from None
        name = "{" + ", ".join(f"{k:g}: {v:g}" for k, v in sorted(table.items())) + "}"
        return GainMapping(name, _from_table(table, name))
    if callable(spec):
        return GainMapping(getattr(spec, "__name__", "callable"), spec)
    raise InputError(f"cannot use {spec!r} as a gain mapping")


def map_gains(levels: Any, mapping: GainSpec = "identity") -> Any:
    """Map relevance levels to gains.

    Parameters
    ----------
    levels : array_like, list of lists or Ragged
        One list of levels, or a batch.
    mapping : str, mapping, callable or GainMapping, default "identity"
        As :func:`gain_mapping` takes it.

    Returns
    -------
    numpy.ndarray or Ragged
        A 1-D array for one list, a :class:`~cumgain.common.batch.Ragged` for a batch (or
        a 2-D array for 2-D input).

    Raises
    ------
    InputError
        Levels that are not finite numbers, or a level the mapping has no gain for.

    Examples
    --------
    >>> map_gains([3, 2, 0, 1], "0-1-10-100")
    array([100.,  10.,   0.,   1.])
    """
    function = gain_mapping(mapping)
    if isinstance(levels, np.ndarray) and levels.ndim == 2:
        return function(as_batch(levels, "levels")[0].values).reshape(levels.shape)
    batch, single = as_batch(levels, "levels")
    gains = function(batch.values)
    return gains if single else Ragged(gains, batch.offsets)
