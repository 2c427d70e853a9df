"""The ranked batch: every evaluated topic's ranked documents and judgments, in CSR
arrays, and the array operations on it that the ranking and the measures share.

Topic ``t`` owns ranked rows ``offsets[t]:offsets[t + 1]`` (in rank order) and
judgments ``qrels_offsets[t]:qrels_offsets[t + 1]``. Nothing here loops over topics
or documents in Python.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Optional

import numpy as np
import numpy.typing as npt

from cgcore import _tie_expected as expected


@dataclass
class RankedBatch:
    """Per evaluated topic, the ranked documents (CSR) and the topic's judgments."""

    offsets: np.ndarray        # int64, ranked rows of topic t: offsets[t]:offsets[t+1]
    levels: np.ndarray         # relevance level per ranked row: its judgment's level (a
                               # negative one: pooled, not judged), 0 if not in the qrels;
                               # float64, or int8 from the native reader (small whole levels)
    judged: np.ndarray         # bool: in the qrels with a level >= 0
    scores: np.ndarray         # float64 (after the precision policy)
    qrels_offsets: np.ndarray  # int64, judgments of topic t
    qrels_levels: np.ndarray   # float64, or int8 as levels



def as_float64(levels: np.ndarray) -> np.ndarray:
    """Levels as float64 (the native reader's int8 levels converted; the measures
    take float64), without a copy if they are already."""
    return levels.astype(np.float64, copy=False)


def at_least(levels: np.ndarray, level: float, out: Optional[np.ndarray] = None) -> np.ndarray:
    """levels >= level (into ``out`` if given); whole int8 levels are compared as they
    are, with ceil(level) (numpy would compare them as float64, a converted copy first)."""
    if levels.dtype != np.int8:
        return np.greater_equal(levels, level, out=out)
    whole = math.ceil(level)
    if not -128 <= whole <= 127:
        out = np.empty(len(levels), bool) if out is None else out
        out.fill(whole < -128)
        return out
    return np.greater_equal(levels, np.int8(whole), out=out)


class Scratch:
    """Arrays one thread reuses from one topic range to the next: the float64 levels
    and relevance flags of a range (a few MB each). Fresh arrays that size, freed after
    each range, went back to the system and cost a page fault per 4 KiB every time."""

    def __init__(self) -> None:
        self._arrays: dict[Hashable, np.ndarray] = {}

    def array(self, key: Hashable, n: int, dtype: npt.DTypeLike) -> np.ndarray:
        """An uninitialised array of ``n`` values for ``key`` (its last one's memory)."""
        array = self._arrays.get(key)
        if array is None or len(array) < n or array.dtype != dtype:
            array = self._arrays[key] = np.empty(n + n // 8, dtype)   # room for the
        return array[:n]                                              # next, a bit longer

    def float64(self, key: Hashable, levels: np.ndarray) -> np.ndarray:
        """as_float64(levels), converted into the array for ``key``."""
        if levels.dtype == np.float64:
            return levels
        converted = self.array(key, len(levels), np.float64)
        np.copyto(converted, levels)
        return converted




def gather(offsets: np.ndarray, topic_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the chosen topics (index -1: a topic with no rows), and their offsets."""
    present = topic_indices >= 0
    if len(offsets) < 2:                  # no topics at all on that side
        present[:] = False
        offsets = np.zeros(2, dtype=np.int64)
    safe = np.where(present, topic_indices, 0)
    starts = np.where(present, offsets[safe], 0)
    lengths = np.where(present, offsets[safe + 1] - offsets[safe], 0)
    new_offsets = np.zeros(len(topic_indices) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    rows = np.repeat(starts - new_offsets[:-1], lengths) + np.arange(new_offsets[-1])
    return rows.astype(np.int64), new_offsets


def topic_of_rows(offsets: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))


def positions_in_topic(offsets: np.ndarray) -> np.ndarray:
    lengths = np.diff(offsets)
    return np.arange(offsets[-1]) - np.repeat(offsets[:-1], lengths)


def offsets_from_counts(counts: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets



def judged_only_rows(ranked: RankedBatch) -> RankedBatch:
    """trec_eval -J: drop ranked documents without a judgment >= 0, closing the gaps."""
    keep = ranked.judged
    counts = np.bincount(topic_of_rows(ranked.offsets)[keep],
                         minlength=len(ranked.offsets) - 1)
    return RankedBatch(offsets=offsets_from_counts(counts), levels=ranked.levels[keep],
                   judged=ranked.judged[keep],
                   scores=None if ranked.scores is None else ranked.scores[keep],
                   qrels_offsets=ranked.qrels_offsets, qrels_levels=ranked.qrels_levels)


def tie_groups(ranked: RankedBatch) -> np.ndarray:
    """Per ranked row, the number of its group of equal scores (within its topic),
    counted from 0 over the batch."""
    topic = topic_of_rows(ranked.offsets)
    starts = np.ones(len(topic), dtype=bool)
    starts[1:] = (ranked.scores[1:] != ranked.scores[:-1]) | (topic[1:] != topic[:-1])
    return np.cumsum(starts) - 1


def tie_group_means(values: np.ndarray, ranked: RankedBatch) -> np.ndarray:
    """Replace each value by the mean over its group of equal scores within a topic
    (summed in rank order, in C)."""
    if len(values) == 0:
        return values
    return expected.group_means(np.ascontiguousarray(values, dtype=np.float64),
                                ranked.scores, ranked.offsets)


def ordered_within_ties(ranked: RankedBatch, best: bool) -> RankedBatch:
    """The ranking with each group of equal scores reordered, for the system's best
    (``best``) or worst case: the highest relevance level first (last), and among
    equal levels the documents without a judgment first (last), since a judged
    non-relevant document above a relevant one costs the measures that count them
    (bpref, infAP); else in the order given (docno descending). Sorted in C, group by
    group."""
    if len(ranked.levels) < 2:
        return ranked
    levels = np.where(ranked.judged, as_float64(ranked.levels), 0.0)
    rows = expected.order_within_groups(levels, ranked.judged.view(np.uint8), ranked.scores,
                                        ranked.offsets, best)
    return RankedBatch(offsets=ranked.offsets, levels=ranked.levels[rows],
                       judged=ranked.judged[rows], scores=ranked.scores[rows],
                       qrels_offsets=ranked.qrels_offsets, qrels_levels=ranked.qrels_levels)


# ---------------------------------------------------------------- measures

def full_depth(ranked: RankedBatch) -> int:
    lengths = np.diff(ranked.offsets)
    judged = np.diff(ranked.qrels_offsets)
    return int(max(lengths.max(initial=0), judged.max(initial=0), 1))


def topic_bounds(ranked: RankedBatch, parts: int) -> list[tuple[int, int]]:
    """Up to ``parts`` ranges [first, stop) of whole topics with about equal rows (ranked
    and judged), covering every topic."""
    n_topics = len(ranked.offsets) - 1
    rows_before = ranked.offsets + ranked.qrels_offsets
    cuts = np.searchsorted(rows_before, rows_before[-1] * np.arange(1, parts) / parts)
    bounds = sorted({0, n_topics, *(int(cut) for cut in cuts if 0 < cut < n_topics)})
    return list(zip(bounds, bounds[1:])) if n_topics else [(0, 0)]


def topic_range(ranked: RankedBatch, first: int, stop: int) -> RankedBatch:
    """Topics [first, stop) of ``ranked``: views of its rows, new (small) offsets."""
    rows = slice(ranked.offsets[first], ranked.offsets[stop])
    judgments = slice(ranked.qrels_offsets[first], ranked.qrels_offsets[stop])
    return RankedBatch(offsets=ranked.offsets[first:stop + 1] - ranked.offsets[first],
                   levels=ranked.levels[rows], judged=ranked.judged[rows],
                   scores=None if ranked.scores is None else ranked.scores[rows],
                   qrels_offsets=ranked.qrels_offsets[first:stop + 1]
                   - ranked.qrels_offsets[first],
                   qrels_levels=ranked.qrels_levels[judgments])


def ideal_lists(judged_gains: np.ndarray, offsets: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Each topic's positive gains sorted descending, as flat values + offsets."""
    topic = topic_of_rows(offsets)
    positive = judged_gains > 0
    order = np.lexsort((-judged_gains[positive], topic[positive]))
    values = np.ascontiguousarray(judged_gains[positive][order])
    counts = np.bincount(topic[positive], minlength=len(offsets) - 1)
    return values, offsets_from_counts(counts)

