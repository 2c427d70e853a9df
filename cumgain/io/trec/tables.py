"""The tables the TREC readers return (:class:`~cumgain.trec_io.Qrels`,
:class:`~cumgain.trec_io.Run`) and the step every reader ends with: the rows grouped by
topic and the duplicates policy applied.

:mod:`cumgain.trec_io` is where users import these from (and where the rules are
written); the classes are named there (``__module__``), so that pickles and the docs
refer to ``cumgain.trec_io.Qrels``.
"""
from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass
from itertools import compress
from typing import Any, Sequence, get_args

import numpy as np

from cumgain.exceptions import FormatError, InputError
from cumgain.types import DuplicatePolicy

_POLICIES: tuple[DuplicatePolicy, ...] = get_args(DuplicatePolicy)


class DuplicatesDroppedWarning(UserWarning):
    """``duplicates="first"`` or ``"last"`` dropped repeated (topic, docno) rows."""


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments grouped by topic.

    Topic ``t`` (``topics[t]``) owns ``docnos[offsets[t]:offsets[t+1]]`` and the
    matching ``relevance`` values, in input order. ``offsets`` is int64 with
    ``len(topics) + 1`` entries, ``docnos`` an object array of ``str``,
    ``relevance`` float64 (negative and fractional levels kept as read), and
    ``lines`` the int64 1-based line of each row in ``source`` (``None`` for
    dicts and DataFrames).
    """

    topics: tuple[str, ...]
    offsets: np.ndarray
    docnos: np.ndarray
    relevance: np.ndarray
    source: str
    lines: np.ndarray | None

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The judgments as ``{qid: {docno: relevance}}``."""
        return _to_dict(self.topics, self.offsets, self.docnos, self.relevance)


@dataclass(frozen=True, eq=False)
class Run:
    """Retrieved documents and their scores grouped by topic.

    Topic ``t`` owns ``docnos[offsets[t]:offsets[t+1]]`` and the matching
    float64 ``scores`` in input order (not sorted: ranking is the engine's
    job). The arrays are laid out as in :class:`Qrels`. ``tag`` is the run
    tag of the last line read (``""`` for dicts and DataFrames); ``tags_agree``: whether
    every line has that tag.
    """

    topics: tuple[str, ...]
    offsets: np.ndarray
    docnos: np.ndarray
    scores: np.ndarray
    tag: str
    source: str
    lines: np.ndarray | None
    tags_agree: bool = True

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The run as ``{qid: {docno: score}}``."""
        return _to_dict(self.topics, self.offsets, self.docnos, self.scores)


# Named where users import them from: pickles and the docs name them there.
DuplicatesDroppedWarning.__module__ = Qrels.__module__ = Run.__module__ = "cumgain.trec_io"


def _to_dict(topics, offsets, docnos, values) -> dict[str, dict[str, float]]:
    return {
        topic: dict(zip(docnos[offsets[t]:offsets[t + 1]].tolist(),
                        values[offsets[t]:offsets[t + 1]].tolist()))
        for t, topic in enumerate(topics)
    }


def _check_policy(duplicates: Any) -> None:
    if duplicates not in _POLICIES:
        raise InputError(f"duplicates must be one of {_POLICIES}, got {duplicates!r}")


def _assemble(source: str, topics: Sequence[str], tidx: np.ndarray, docnos: list[str],
              values: np.ndarray, lines: np.ndarray | None, duplicates: DuplicatePolicy,
              doc_word: str, topic_word: str):
    """Group the rows by topic (a stable sort), then apply the duplicates policy.

    Returns ``offsets, docnos, values, lines`` with ``docnos`` as an object array.
    """
    n = len(docnos)
    position = None                     # grouped row -> input row, when they differ
    if n > 1 and (np.diff(tidx) < 0).any():
        position = np.argsort(tidx, kind="stable")
        tidx, values = tidx[position], values[position]
        docnos = list(map(docnos.__getitem__, position.tolist()))
        lines = None if lines is None else lines[position]
    offsets = np.zeros(len(topics) + 1, dtype=np.int64)
    np.cumsum(np.bincount(tidx, minlength=len(topics)), out=offsets[1:])
    dropped = []                        # (first, repeat) grouped rows
    bounds = offsets.tolist()
    for t in range(len(topics)):
        a, b = bounds[t], bounds[t + 1]
        if b - a > 1 and len(set(docnos[a:b])) != b - a:
            seen: dict[str, int] = {}
            for i in range(a, b):
                j = seen.setdefault(docnos[i], i)
                if j != i:
                    dropped.append((j, i))
    if dropped:
        def row(i: int) -> int:
            return i if position is None else int(position[i])

        dropped.sort(key=lambda pair: row(pair[1]))   # in input order of the repeats
        j, i = dropped[0]
        what = f"duplicate {doc_word} {docnos[i]!r} in {topic_word} {topics[tidx[i]]!r}"
        if lines is None:
            where = f"rows {row(j)} and {row(i)} (0-based positions)"
        else:
            where = f"lines {lines[j]} and {lines[i]}"
        if duplicates == "error":
            if lines is None:
                raise InputError(f"{source}: {what}: {where}")
            raise FormatError(source, int(lines[i]), f"{what}: {where}")
        warnings.warn(
            f"{source}: dropped {len(dropped)} duplicate ({topic_word}, {doc_word}) "
            f"row(s), keeping the {duplicates} occurrence of each; the first was {what}: "
            f"{where}", DuplicatesDroppedWarning, stacklevel=_user_stacklevel())
        keep = np.ones(n, dtype=bool)
        if duplicates == "last":        # every occurrence but the last of each docno
            last: dict[int, int] = {}
            for j, i in dropped:
                last[j] = max(last.get(j, j), i)
            keep[[j for j in last] + [i for j, i in dropped if i != last[j]]] = False
        else:
            keep[[i for _, i in dropped]] = False
        tidx, values = tidx[keep], values[keep]
        lines = None if lines is None else lines[keep]
        docnos = list(compress(docnos, keep.tolist()))
        n = len(docnos)
        np.cumsum(np.bincount(tidx, minlength=len(topics)), out=offsets[1:])
    docno_array = np.empty(n, dtype=object)
    docno_array[:] = docnos
    values = np.ascontiguousarray(values, dtype=np.float64)
    return offsets, docno_array, values, lines


# The modules of the reader (trec_io and those behind it), which a warning does not point at.
_READER_MODULES = frozenset({"cumgain.trec_io", "cumgain.io.trec.frontends",
                             "cumgain.io.trec.lines", "cumgain.io.trec.byte_stream", __name__,
                             "cumgain.io.native.reader", "cumgain.io.native.blocks",
                             "cumgain.io.native.errors", "cumgain.io.native.qrels",
                             "cumgain.io.native.tables"})


def _user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the first caller outside the reader's
    modules."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__") in _READER_MODULES:
        frame = frame.f_back
        level += 1
    return level
