"""Evaluate a run against qrels: the engine behind every drop-in.

Pipeline (Python composes, the loops run in ``cgcore``; nothing here loops over
topics or documents):

1. load qrels and run (files, dicts or DataFrames: :mod:`cumgain.trec_io`);
2. choose the topics (``topics=`` policy) and report the ones left out;
3. join run documents to judgments (sorted keys, vectorised);
4. rank each topic (``ties=``, ``score_precision=``), cut at ``depth`` (-M), drop
   unjudged documents if ``judged_only`` (-J);
5. compute each measure with one batched kernel call; average.

Policies, each with trec_eval's behaviour as the default:

===================  =====================================================================
``ties``             ``"docno_desc"`` (trec_eval: equal scores ordered by docno descending
                     in byte order), ``"docno_asc"``, ``"input_order"`` (file / dict order),
                     ``"average"`` (sklearn: each tied group shares its mean gain; only for
                     measures linear in the ranking: CG/DCG/nDCG family, P, recall, Rprec,
                     counts), ``"random"`` (seeded by ``seed``).
``score_precision``  ``"float64"`` (trec_eval 10) or ``"float32"`` (trec_eval <= 9.0.8 and
                     pytrec_eval: scores equal as 32-bit floats tie).
``depth``            keep the first N documents per topic after ranking (trec_eval -M).
``judged_only``      drop documents without a judgment >= 0 after the depth cut, closing the
                     gaps (trec_eval -J).
``relevance_level``  a document is relevant for the binary measures when its level is >= this
                     (trec_eval -l); it never changes graded gains.
``topics``           ``"both"`` (topics in run and qrels; trec_eval, pytrec_eval),
                     ``"qrels"`` (every qrels topic; those missing from the run score 0:
                     trec_eval -c, ir_measures), ``"strict"`` (an error if the sets differ).
===================  =====================================================================

Topics in the run but not in the qrels, qrels topics absent from the run, and qrels
topics without judgments are returned in :class:`Evaluation` and announced with a
:class:`TopicsWarning` (``warn=False`` silences it); they are never dropped silently.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import operator
import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Union

import numpy as np

import cgcore
from cgcore import _measures as kernels
from cgcore import _trec
from cgcore._convert import topic_dicts
from cumgain.batch import Ragged
from cumgain.exceptions import InputError
from cumgain.gains import GainMapping, GainSpec, gain_mapping
from cumgain.measures import Measure, parse_measures
from cumgain.native import (
    RankedInput,
    auto_threads,
    check_threads,
    parts_for,
    read_ranked,
)
from cumgain.trec_io import Qrels, Run, load_qrels, load_run
from cumgain.vectors import discount_divisors, ncg, ndcg

TIE_RULES = ("docno_desc", "docno_asc", "input_order", "average", "random")
SCORE_PRECISIONS = ("float64", "float32")
TOPIC_POLICIES = ("both", "qrels", "strict")
# measures whose value is not linear in the gains by rank: undefined under tie averaging
_ORDER_SENSITIVE = ("map", "map_cut", "gm_map", "recip_rank", "success", "ndcg_rel", "Rndcg")
GM_FLOOR = 1e-5  # trec_eval's gm_map floor: log(max(AP, 1e-5))
PARALLEL_MEASURE_ROWS = 1 << 20  # from this many ranked rows, measures are computed in threads
MEASURE_RANGE_ROWS = 1 << 19     # the measures take the topics in ranges of at most about
                                 # this many rows (ranked + judged): a range's float64
                                 # copies (of int8 levels) and flags stay in the cache


class TopicsWarning(UserWarning):
    """Some topics were not evaluated (or scored 0): the run and qrels topic sets differ."""


@dataclass
class Evaluation:
    """Per-topic values and means of an evaluation.

    ``values[name]`` is an array aligned with ``topics`` (in trec_eval's order: byte
    order of the topic id); ``means[name]`` the aggregate (arithmetic mean over the
    evaluated topics; sums for counts; geometric mean for ``gm_map``).
    """

    topics: tuple
    measures: tuple
    values: dict
    means: dict
    run_only_topics: tuple = ()
    missing_topics: tuple = ()
    empty_qrels_topics: tuple = ()
    run_tag: str = ""
    policies: dict = field(default_factory=dict)

    def per_topic(self) -> dict:
        """``{topic: {measure: value}}``, pytrec_eval's shape."""
        names = tuple(measure.name for measure in self.measures)
        columns = [self.values[name] for name in names]
        if all(column.dtype == np.float64 for column in columns):
            stacked = np.empty((len(names), len(self.topics)))
            for m, column in enumerate(columns):
                stacked[m] = column
            return topic_dicts(tuple(self.topics), names, stacked)
        rows = zip(*(column.tolist() for column in columns)) if columns \
            else ((),) * len(self.topics)
        return {topic: dict(zip(names, row)) for topic, row in zip(self.topics, rows)}

    def to_dataframe(self):
        """A pandas DataFrame, one row per topic and a column per measure (needs pandas)."""
        import pandas as pd
        frame = pd.DataFrame({m.name: self.values[m.name] for m in self.measures},
                             index=pd.Index(list(self.topics), name="query_id"))
        return frame

    def __getitem__(self, name: str) -> float:
        return self.means[name]


# ---------------------------------------------------------------- the ranked batch

@dataclass
class _Ranked:
    """Per evaluated topic, the ranked documents (CSR) and the topic's judgments."""

    offsets: np.ndarray        # int64, ranked rows of topic t: offsets[t]:offsets[t+1]
    levels: np.ndarray         # relevance level per ranked row (0 if unjudged): float64,
                               # or int8 from the native reader (small whole levels)
    judged: np.ndarray         # bool: in the qrels with a level >= 0
    scores: np.ndarray         # float64 (after the precision policy)
    qrels_offsets: np.ndarray  # int64, judgments of topic t
    qrels_levels: np.ndarray   # float64, or int8 as levels


def _float64(levels: np.ndarray) -> np.ndarray:
    """Levels as float64 (the native reader's int8 levels converted; the measures
    take float64), without a copy if they are already."""
    return levels.astype(np.float64, copy=False)


def _at_least(levels: np.ndarray, level: float, out: Optional[np.ndarray] = None) -> np.ndarray:
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


class _Scratch:
    """Arrays one thread reuses from one topic range to the next: the float64 levels
    and relevance flags of a range (a few MB each). Fresh arrays that size, freed after
    each range, went back to the system and cost a page fault per 4 KiB every time."""

    def __init__(self):
        self._arrays: dict = {}

    def array(self, key, n: int, dtype) -> np.ndarray:
        """An uninitialised array of ``n`` values for ``key`` (its last one's memory)."""
        array = self._arrays.get(key)
        if array is None or len(array) < n or array.dtype != dtype:
            array = self._arrays[key] = np.empty(n + n // 8, dtype)   # room for the
        return array[:n]                                              # next, a bit longer

    def float64(self, key, levels: np.ndarray) -> np.ndarray:
        """_float64(levels), converted into the array for ``key``."""
        if levels.dtype == np.float64:
            return levels
        converted = self.array(key, len(levels), np.float64)
        np.copyto(converted, levels)
        return converted


def _check_choice(value: Any, allowed: tuple, name: str) -> str:
    if value not in allowed:
        raise InputError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def _gather(offsets: np.ndarray, topic_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def _topic_of_rows(offsets: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))


def _positions_in_topic(offsets: np.ndarray) -> np.ndarray:
    lengths = np.diff(offsets)
    return np.arange(offsets[-1]) - np.repeat(offsets[:-1], lengths)


def _offsets_from_counts(counts: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def _docno_ids(docnos: np.ndarray) -> tuple[np.ndarray, int]:
    """Each docno's position in the sorted vocabulary (code-point order of str = byte
    order of UTF-8), and the vocabulary's size (at least 1). numpy's fixed-width
    strings are fast but drop trailing NULs ("d\\x00" would equal "d"): where a docno
    ends in one, Python's strings are sorted instead."""
    if len(docnos) == 0:
        return np.zeros(0, dtype=np.int64), 1
    fixed = docnos.astype(str)
    texts = docnos.tolist()
    if (np.char.str_len(fixed) == np.fromiter(map(len, texts), np.int64, len(texts))).all():
        vocabulary, ids = np.unique(fixed, return_inverse=True)
        return ids.reshape(-1).astype(np.int64), max(len(vocabulary), 1)
    index = {docno: i for i, docno in enumerate(sorted(set(texts)))}
    return np.fromiter(map(index.__getitem__, texts), np.int64, len(texts)), max(len(index), 1)


def _rank(qrels: Qrels, run: Run, topics: list, *, ties: str, score_precision: str,
          seed: int, depth: Optional[int]) -> _Ranked:
    """The reference path (any input form): join, rank and cut with numpy and cgcore."""
    run_index = {topic: i for i, topic in enumerate(run.topics)}
    qrels_index = {topic: i for i, topic in enumerate(qrels.topics)}
    run_rows, run_offsets = _gather(
        run.offsets, np.array([run_index.get(t, -1) for t in topics], dtype=np.int64))
    qrels_rows, qrels_offsets = _gather(
        qrels.offsets, np.array([qrels_index.get(t, -1) for t in topics], dtype=np.int64))

    doc_ids, n_docs = _docno_ids(np.concatenate([run.docnos[run_rows], qrels.docnos[qrels_rows]]))
    run_docs, qrels_docs = doc_ids[:len(run_rows)], doc_ids[len(run_rows):]

    # Join: each run row's judgment, by sorted (topic, docno) keys.
    qrels_keys = _topic_of_rows(qrels_offsets) * n_docs + qrels_docs
    key_order = np.argsort(qrels_keys, kind="stable")
    sorted_keys = qrels_keys[key_order]
    run_keys = _topic_of_rows(run_offsets) * n_docs + run_docs
    found_at = np.searchsorted(sorted_keys, run_keys)
    found_at = np.minimum(found_at, max(len(sorted_keys) - 1, 0))
    in_qrels = (sorted_keys[found_at] == run_keys) if len(sorted_keys) else \
        np.zeros(len(run_keys), dtype=bool)
    qrels_levels = qrels.relevance[qrels_rows].astype(np.float64)
    levels = np.where(in_qrels, qrels_levels[key_order][found_at] if len(sorted_keys) else 0.0,
                      0.0)
    judged = in_qrels & (levels >= 0)
    levels = np.where(judged, levels, 0.0)

    scores = run.scores[run_rows].astype(np.float64)
    if score_precision == "float32":
        with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as in C
            scores = scores.astype(np.float32).astype(np.float64)
    if ties in ("docno_desc", "average"):
        tie_keys = -run_docs
    elif ties == "docno_asc":
        tie_keys = run_docs
    elif ties == "input_order":
        tie_keys = np.arange(len(run_rows), dtype=np.int64)
    else:
        tie_keys = _trec.random_tie_keys(seed, _positions_in_topic(run_offsets))
    order = kernels.rank_topics(scores, np.ascontiguousarray(tie_keys, np.int64), run_offsets)

    keep = np.ones(len(order), dtype=bool)
    if depth is not None:
        keep &= _positions_in_topic(run_offsets) < depth
    kept = order[keep]
    counts = np.bincount(_topic_of_rows(run_offsets)[keep], minlength=len(topics))
    return _Ranked(offsets=_offsets_from_counts(counts), levels=levels[kept],
                   judged=judged[kept], scores=scores[kept],
                   qrels_offsets=qrels_offsets, qrels_levels=qrels_levels)


def _universe(native: RankedInput, topics: list) -> tuple[_Ranked, np.ndarray]:
    """The native output as it is (run topic order, no copy of the ranked rows), with
    empty topics appended for chosen topics absent from the run; and where each chosen
    topic sits in it. Measures are computed for all of it, then the chosen picked."""
    index = {topic: i for i, topic in enumerate(native.run_topics)}
    absent = [topic for topic in topics if topic not in index]
    index.update((topic, len(native.run_topics) + i) for i, topic in enumerate(absent))
    universe = list(native.run_topics) + absent
    if universe == list(native.qrels_topics):      # judgments in run order
        qrels_offsets, qrels_levels = native.qrels_offsets, native.qrels_levels
    else:
        qrels_index = {topic: i for i, topic in enumerate(native.qrels_topics)}
        qrels_rows, qrels_offsets = _gather(
            native.qrels_offsets,
            np.array([qrels_index.get(t, -1) for t in universe], dtype=np.int64))
        qrels_levels = native.qrels_levels[qrels_rows]
    offsets = np.concatenate([native.run_offsets,
                              np.full(len(absent), native.run_offsets[-1], dtype=np.int64)])
    ranked = _as_ranked(native, offsets, qrels_offsets, qrels_levels)
    return ranked, np.fromiter(map(index.__getitem__, topics), np.int64, len(topics))


def _as_ranked(native: RankedInput, offsets: np.ndarray, qrels_offsets: np.ndarray,
               qrels_levels: np.ndarray) -> _Ranked:
    """The native ranked rows with these topic offsets and judgments."""
    return _Ranked(offsets=offsets, levels=native.levels, judged=native.judged,
                   scores=native.scores, qrels_offsets=qrels_offsets,
                   qrels_levels=qrels_levels)


def _judged_only(ranked: _Ranked) -> _Ranked:
    """trec_eval -J: drop ranked documents without a judgment >= 0, closing the gaps."""
    keep = ranked.judged
    counts = np.bincount(_topic_of_rows(ranked.offsets)[keep],
                         minlength=len(ranked.offsets) - 1)
    return _Ranked(offsets=_offsets_from_counts(counts), levels=ranked.levels[keep],
                   judged=ranked.judged[keep],
                   scores=None if ranked.scores is None else ranked.scores[keep],
                   qrels_offsets=ranked.qrels_offsets, qrels_levels=ranked.qrels_levels)


def _tie_group_means(values: np.ndarray, ranked: _Ranked) -> np.ndarray:
    """Replace each value by the mean over its group of equal scores within a topic."""
    if len(values) == 0:
        return values
    topic = _topic_of_rows(ranked.offsets)
    starts = np.ones(len(values), dtype=bool)
    starts[1:] = (ranked.scores[1:] != ranked.scores[:-1]) | (topic[1:] != topic[:-1])
    group = np.cumsum(starts) - 1
    sums = np.bincount(group, weights=values)
    sizes = np.bincount(group)
    return (sums / sizes)[group]


# ---------------------------------------------------------------- measures

def _judged_only_flag(measure: Measure, policies: dict) -> bool:
    return measure.judged_only if measure.judged_only is not None else policies["judged_only"]


def _gain_mapping_of(measure: Measure) -> GainMapping:
    """The level -> gain function of a measure with gains=."""
    if isinstance(measure.gains, str):
        return gain_mapping(measure.gains)
    table = dict(measure.gains)

    def gain_of_level(level: float) -> float:
        if level in table:
            return table[level]
        if measure.gain_fallback == "identity" or level < 0:
            return level if level >= 0 else 0.0
        raise InputError(f"measure {measure.name!r}: relevance level {level:g} has no gain")
    return GainMapping(measure.name, gain_of_level)


def _mapping_key(measure: Measure) -> tuple:
    """What defines a measure's level -> gain function: its gains and what a level
    they leave out gets (so "ndcg.1=3,2=9", whose other levels keep their value, and
    "nDCG(gains={1:3,2:9})", for which they are an error, never share a table)."""
    return measure.gains, measure.gain_fallback


def _gain_tables(measures: list, qrels_levels: np.ndarray) -> dict:
    """For each gain mapping the measures use (other than the level itself): the
    distinct judged levels of the whole batch and their gains, keyed by _mapping_key;
    or the exception the mapping raised on them (a level it has no gain for,
    say), raised when a measure asks for it. Built once for the batch, so that the
    gains, and which level an error names, do not depend on how the topics are split
    between threads."""
    tables: dict = {}
    distinct = None
    for measure in measures:
        key = _mapping_key(measure)
        if measure.gains is None or key in tables:
            continue
        if distinct is None:
            distinct = _float64(np.unique(qrels_levels))
        try:
            gains = _gain_mapping_of(measure)(distinct) if len(distinct) else np.zeros(1)
        except Exception as error:      # noqa: BLE001 - raised where the measure needs it
            tables[key] = error
        else:
            tables[key] = (distinct, gains)
    return tables


class _Context:
    """Caches what several measures share (relevance flags, gains, ideals); used by
    one thread (threads get a context each, for their range of topics)."""

    def __init__(self, ranked: dict, policies: dict, full_depths: dict, gain_tables: dict,
                 ndcg_cutoffs: dict, scratch: _Scratch):
        self._ranked = ranked          # judged_only flag -> _Ranked
        self.policies = policies
        self._full_depths = full_depths  # judged_only flag -> the whole batch's _full_depth
        self._gain_tables = gain_tables  # the whole batch's, see _gain_tables
        self._ndcg_cutoffs = ndcg_cutoffs  # the batch's, see _ndcg_cutoffs
        self._scratch = scratch        # the thread's, reused by its next context
        self._cache: dict = {}

    def _judged_only(self, measure: Measure) -> bool:
        return _judged_only_flag(measure, self.policies)

    def ranked(self, measure: Measure) -> _Ranked:
        return self._ranked[self._judged_only(measure)]

    def full_depth(self, measure: Measure) -> int:
        """The cut-off of a measure without one: the depth of the whole batch (also when
        this context has a range of its topics, so that the values do not depend on
        how the topics were split)."""
        return self._full_depths[self._judged_only(measure)]

    def level(self, measure: Measure) -> float:
        return measure.relevance_level if measure.relevance_level is not None \
            else self.policies["relevance_level"]

    def _cached(self, key, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def relevant(self, measure: Measure) -> np.ndarray:
        ranked, level = self.ranked(measure), self.level(measure)

        def build():
            key = ("relevant", self._judged_only(measure), level)    # the scratch's
            relevant = _at_least(ranked.levels, level,
                                 out=self._scratch.array(key + (bool,), len(ranked.levels), bool))
            np.logical_and(relevant, ranked.judged, out=relevant)
            flags = self._scratch.array(key, len(relevant), np.float64)
            np.copyto(flags, relevant)
            return _tie_group_means(flags, ranked) if self.policies["ties"] == "average" \
                else flags
        return self._cached(("relevant", id(ranked), level), build)

    def num_relevant(self, measure: Measure) -> np.ndarray:
        """R per topic (the same for both judged_only flags, like _qrels_levels)."""
        ranked, level = self.ranked(measure), self.level(measure)
        return self._cached(("R", level), lambda: kernels.count_at_least(
            self._qrels_levels(measure), ranked.qrels_offsets, level))

    def _qrels_levels(self, measure: Measure) -> np.ndarray:
        """The judgments' levels as float64 (converted once, when a measure needs them;
        the same for both judged_only flags, which keep every judgment)."""
        key = ("qrels_levels",)
        return self._cached(key, lambda: self._scratch.float64(
            key, self.ranked(measure).qrels_levels))

    def _mapped_gains(self, measure: Measure, levels: np.ndarray) -> np.ndarray:
        """The gains of judged ``levels`` under the measure's gains, looked up in the
        batch's table (see _gain_tables)."""
        table = self._gain_tables[_mapping_key(measure)]
        if isinstance(table, Exception):
            raise table
        distinct, gains = table
        return gains[np.minimum(np.searchsorted(distinct, levels), len(gains) - 1)]

    def gains(self, measure: Measure) -> np.ndarray:
        ranked = self.ranked(measure)

        def build():
            if measure.gains is None:   # identity: judged rows have levels >= 0, others 0
                gains = self._scratch.float64(("levels", self._judged_only(measure)),
                                              ranked.levels)
            else:
                gains = np.where(ranked.judged, self._mapped_gains(measure, ranked.levels), 0.0)
            return _tie_group_means(gains, ranked) if self.policies["ties"] == "average" \
                else gains
        return self._cached(("gains", id(ranked), _mapping_key(measure)), build)

    def ndcg(self, measure: Measure, k: int) -> np.ndarray:
        """nDCG@k, computed in one go with the other cut-offs of its group (the same
        gains, discount and judged_only; see _ndcg_cutoffs)."""
        group = _ndcg_group(measure, self.policies)
        cutoffs = self._ndcg_cutoffs[group]
        ranked = self.ranked(measure)

        def build():
            return cgcore.ndcg_at_cutoffs(
                self.gains(measure), ranked.offsets, self.judged_gains(measure),
                ranked.qrels_offsets, _divisors(measure, max(cutoffs)),
                np.array(cutoffs, dtype=np.int64), 0.0)
        table = self._cached(("nDCG", id(ranked), group, cutoffs), build)
        return np.ascontiguousarray(table[:, cutoffs.index(k)])

    def judged_gains(self, measure: Measure) -> np.ndarray:
        """The recall base: a gain per judgment (levels < 0 get 0, never in the ideal)."""
        ranked = self.ranked(measure)

        def build():
            levels = self._qrels_levels(measure)
            if measure.gains is None:
                return levels if len(levels) == 0 or levels.min() >= 0 else \
                    np.where(levels >= 0, levels, 0.0)
            return np.where(levels >= 0, self._mapped_gains(measure, levels), 0.0)
        return self._cached(("judged_gains", id(ranked), _mapping_key(measure)), build)


def _graded_kind(family: str) -> str:
    """The kernel family of a graded measure: trec_eval's names mapped to ours."""
    return {"ndcg": "nDCG", "ndcg_cut": "nDCG", "dcg": "DCG", "ideal_dcg": "IDCG"}.get(
        family, family)


def _ndcg_group(measure: Measure, policies: dict) -> tuple:
    """What nDCG measures share when computed together: judged_only, gains, discount."""
    return (_judged_only_flag(measure, policies), _mapping_key(measure), measure.discount,
            measure.base)


def _ndcg_cutoffs(measures: list, policies: dict, full_depths: dict) -> dict:
    """For each group of nDCG measures (_ndcg_group), its cut-offs, ascending (a
    measure without one: the batch's full depth): ndcg, ndcg_cut.5,10,... are
    computed with one pass over each topic's run and judgments."""
    groups: dict = {}
    for measure in measures:
        if _graded_kind(measure.family) == "nDCG":
            k = measure.cutoff if measure.cutoff is not None \
                else full_depths[_judged_only_flag(measure, policies)]
            groups.setdefault(_ndcg_group(measure, policies), set()).add(k)
    return {group: tuple(sorted(cutoffs)) for group, cutoffs in groups.items()}


def _safe_ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), 0.0)


def _full_depth(ranked: _Ranked) -> int:
    lengths = np.diff(ranked.offsets)
    judged = np.diff(ranked.qrels_offsets)
    return int(max(lengths.max(initial=0), judged.max(initial=0), 1))


def _divisors(measure: Measure, k: int) -> np.ndarray:
    return discount_divisors(measure.discount, measure.base, k)


def _compute(measure: Measure, context: _Context) -> np.ndarray:
    family = measure.family
    ranked = context.ranked(measure)
    n_topics = len(ranked.offsets) - 1
    lengths = np.diff(ranked.offsets)
    if context.policies["ties"] == "average" and family in _ORDER_SENSITIVE:
        raise InputError(
            f"measure {measure.name!r} is not defined under ties='average' (it is not linear "
            "in the gains by rank); choose another tie rule")
    if family == "num_q":
        return np.ones(n_topics)
    if family == "num_ret":
        return lengths.astype(np.float64)
    if family == "num_rel":
        return context.num_relevant(measure)
    if family in ("num_rel_ret", "P", "recall", "success", "Rprec"):
        relevant = context.relevant(measure)
        if family == "Rprec":
            cutoffs = context.num_relevant(measure).astype(np.int64)
        elif family == "num_rel_ret":
            cutoffs = lengths.astype(np.int64)
        else:
            cutoffs = np.full(n_topics, measure.cutoff, dtype=np.int64)
        found = kernels.relevant_in_top(relevant, ranked.offsets, cutoffs)
        if family == "num_rel_ret":
            return found
        if family == "P":
            return found / measure.cutoff
        if family == "success":
            return (found > 0).astype(np.float64)
        return _safe_ratio(found, context.num_relevant(measure))
    if family in ("map", "map_cut", "gm_map"):
        cutoff = measure.cutoff if family == "map_cut" else max(int(lengths.max(initial=0)), 1)
        ap = kernels.average_precision(context.relevant(measure), ranked.offsets,
                                       context.num_relevant(measure), cutoff)
        return kernels.log_floored(ap, GM_FLOOR) if family == "gm_map" else ap
    if family == "recip_rank":
        return kernels.reciprocal_rank(context.relevant(measure), ranked.offsets,
                                       max(int(lengths.max(initial=0)), 1))
    gains, judged = context.gains(measure), context.judged_gains(measure)
    if family in ("ndcg_rel", "Rndcg"):
        ideal, ideal_offsets = _ideal_lists(judged, ranked.qrels_offsets)
        ndcg_rel, rndcg = kernels.trec_ndcg_rel_and_rndcg(gains, ranked.offsets, ideal,
                                                          ideal_offsets)
        if family == "ndcg_rel":
            return ndcg_rel
        return np.where(context.num_relevant(measure) > 0, rndcg, 0.0)
    kind = _graded_kind(family)
    k = measure.cutoff if measure.cutoff is not None else context.full_depth(measure)
    if kind in ("avg_pos_nCG", "avg_pos_nDCG"):
        run_batch, judged_batch = Ragged(gains, ranked.offsets), Ragged(judged, ranked.qrels_offsets)
        vectors = ncg(run_batch, judged_batch, k) if kind == "avg_pos_nCG" else \
            ndcg(run_batch, judged_batch, k, discount=measure.discount, base=measure.base)
        return cgcore.average_position(np.ascontiguousarray(vectors), k)
    if kind == "nDCG":
        return context.ndcg(measure, k)
    divisors = np.ones(k) if kind in ("CG", "nCG") else _divisors(measure, k)
    if kind in ("CG", "DCG"):
        return cgcore.dcg_at(gains, ranked.offsets, divisors, k)
    if kind == "IDCG":
        return cgcore.ideal_dcg_at(judged, ranked.qrels_offsets, divisors, k)
    return cgcore.ndcg_at(gains, ranked.offsets, judged, ranked.qrels_offsets, divisors, k, 0.0)


def _topic_bounds(ranked: _Ranked, parts: int) -> list:
    """Up to ``parts`` ranges [first, stop) of whole topics with about equal rows (ranked
    and judged), covering every topic."""
    n_topics = len(ranked.offsets) - 1
    rows_before = ranked.offsets + ranked.qrels_offsets
    cuts = np.searchsorted(rows_before, rows_before[-1] * np.arange(1, parts) / parts)
    bounds = sorted({0, n_topics, *(int(cut) for cut in cuts if 0 < cut < n_topics)})
    return list(zip(bounds, bounds[1:])) if n_topics else [(0, 0)]


def _topic_range(ranked: _Ranked, first: int, stop: int) -> _Ranked:
    """Topics [first, stop) of ``ranked``: views of its rows, new (small) offsets."""
    rows = slice(ranked.offsets[first], ranked.offsets[stop])
    judgments = slice(ranked.qrels_offsets[first], ranked.qrels_offsets[stop])
    return _Ranked(offsets=ranked.offsets[first:stop + 1] - ranked.offsets[first],
                   levels=ranked.levels[rows], judged=ranked.judged[rows],
                   scores=None if ranked.scores is None else ranked.scores[rows],
                   qrels_offsets=ranked.qrels_offsets[first:stop + 1]
                   - ranked.qrels_offsets[first],
                   qrels_levels=ranked.qrels_levels[judgments])


def _ideal_lists(judged_gains: np.ndarray, offsets: np.ndarray):
    """Each topic's positive gains sorted descending, as flat values + offsets."""
    topic = _topic_of_rows(offsets)
    positive = judged_gains > 0
    order = np.lexsort((-judged_gains[positive], topic[positive]))
    values = np.ascontiguousarray(judged_gains[positive][order])
    counts = np.bincount(topic[positive], minlength=len(offsets) - 1)
    return values, _offsets_from_counts(counts)


def aggregate(measure: Measure, values: np.ndarray) -> float:
    """The mean that :attr:`Evaluation.means` reports for ``measure`` over per-topic
    ``values`` (in topic order): ``S / n`` with ``S = sum_t v_t`` summed sequentially in
    topic order, as trec_eval does; ``S`` itself for counts (``num_rel``, ``num_ret``,
    ...); ``exp(S / n)`` for ``gm_map``, whose per-topic values are already
    ``log(max(AP, 1e-5))``; 0 for no topics.

    Pieces of an evaluation (:mod:`cumgain.stream`, :mod:`cumgain.dask`) are combined with
    it, so their means are bit-identical to :func:`evaluate`'s.

    >>> from cumgain.measures import parse_measures
    >>> p5, num_rel = parse_measures(["P_5", "num_rel"])
    >>> aggregate(p5, np.array([0.2, 0.6])), aggregate(num_rel, np.array([3.0, 4.0]))
    (0.4, 7.0)
    """
    if len(values) == 0:
        return 0.0
    total = float(np.cumsum(values)[-1])  # sequential, in topic order, like trec_eval
    if measure.aggregate == "sum":
        return total
    if measure.aggregate == "gmean":
        return math.exp(total / len(values))
    return total / len(values)


# ---------------------------------------------------------------- ranking

@dataclass(frozen=True)
class Ranking:
    """A run ranked and joined with its qrels, for the evaluated topics.

    ``topics``: the evaluated topics (trec_eval's order: byte order of the id).
    ``levels``: per topic, the relevance level of each retrieved document in rank
    order, after the tie rule and the depth cut (0 where the document is not judged
    or judged below 0); ``judged`` (aligned with ``levels.values``) says which
    documents have a judgment >= 0. ``qrels_levels``: per topic, the levels of all its
    judgments (the recall base, negative levels included). ``run_only_topics``,
    ``missing_topics``, ``empty_qrels_topics``: the topics left out, as in
    :class:`Evaluation`; ``policies``: the ranking policies used.
    """

    topics: tuple
    run_only_topics: tuple
    missing_topics: tuple
    empty_qrels_topics: tuple
    run_tag: str
    policies: dict
    _everything: "_Ranked" = field(repr=False, compare=False)
    _chosen_index: np.ndarray = field(repr=False, compare=False)

    @functools.cached_property
    def _chosen(self) -> "_Ranked":
        """The ranked rows and judgments of the evaluated topics only."""
        everything, index = self._everything, self._chosen_index
        if np.array_equal(index, np.arange(len(everything.offsets) - 1)):
            return dataclasses.replace(everything, levels=_float64(everything.levels),
                                       qrels_levels=_float64(everything.qrels_levels))
        rows, offsets = _gather(everything.offsets, index)
        qrels_rows, qrels_offsets = _gather(everything.qrels_offsets, index)
        return _Ranked(offsets=offsets, levels=_float64(everything.levels[rows]),
                       judged=everything.judged[rows],
                       scores=None if everything.scores is None else everything.scores[rows],
                       qrels_offsets=qrels_offsets,
                       qrels_levels=_float64(everything.qrels_levels[qrels_rows]))

    @property
    def levels(self) -> Ragged:
        chosen = self._chosen
        return Ragged(np.ascontiguousarray(chosen.levels, dtype=np.float64), chosen.offsets)

    @property
    def judged(self) -> np.ndarray:
        return self._chosen.judged

    @property
    def qrels_levels(self) -> Ragged:
        chosen = self._chosen
        return Ragged(np.ascontiguousarray(chosen.qrels_levels, dtype=np.float64),
                      chosen.qrels_offsets)

    def gains(self, mapping: GainSpec = "identity") -> Ragged:
        """Per topic, the gain of each retrieved document in rank order: ``mapping`` of
        its level if judged (>= 0), else 0; under ``ties="average"`` each group of equal
        scores shares its mean gain."""
        chosen = self._chosen
        gains = np.zeros(len(chosen.levels), dtype=np.float64)
        gains[chosen.judged] = gain_mapping(mapping)(chosen.levels[chosen.judged])
        if self.policies["ties"] == "average":
            gains = _tie_group_means(gains, chosen)
        return Ragged(gains, chosen.offsets)

    def judged_gains(self, mapping: GainSpec = "identity") -> Ragged:
        """Per topic, the gain of each judgment (the recall base the ideal vector is
        built from): ``mapping`` of its level, 0 for levels < 0."""
        chosen = self._chosen
        gains = np.zeros(len(chosen.qrels_levels), dtype=np.float64)
        keep = chosen.qrels_levels >= 0
        gains[keep] = gain_mapping(mapping)(chosen.qrels_levels[keep])
        return Ragged(gains, chosen.qrels_offsets)


def _check_depth(depth: Any) -> None:
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer))
                              or depth < 1):
        raise InputError(f"depth must be a positive integer or None, got {depth!r}")


def _resolve_seed(seed: Any) -> int:
    if seed is None:    # fresh entropy from the OS, as numpy's SeedSequence() draws it
        return int.from_bytes(os.urandom(8), "little")  # (importing numpy.random: 13 ms)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"seed must be an integer or None, got {seed!r}")
    return int(seed) & (2 ** 64 - 1)


def rank(qrels: Any, run: Any, *, ties: str = "docno_desc", score_precision: str = "float64",
         depth: Optional[int] = None, topics: str = "both", duplicates: str = "error",
         seed: Optional[int] = None, warn: bool = True,
         threads: Optional[int] = None) -> Ranking:
    """Rank ``run`` and join it with ``qrels``: the first half of :func:`evaluate`.

    Inputs and policies (``ties``, ``score_precision``, ``depth``, ``topics``,
    ``duplicates``, ``seed``, ``warn``, ``threads``) as in :func:`evaluate`.

    >>> ranking = rank({"q1": {"a": 2, "b": 0, "c": 1}}, {"q1": {"a": 0.1, "c": 0.9}})
    >>> ranking.levels[0], ranking.judged_gains("0-1-10-100")[0]
    (array([1., 2.]), array([10.,  0.,  1.]))
    """
    ranking, release_qrels = _ranking(qrels, run, ties=ties, score_precision=score_precision,
                                      depth=depth, topics=topics, duplicates=duplicates,
                                      seed=seed, warn=warn, threads=threads)
    release_qrels()
    return ranking


def topics_warning(run_only: tuple, missing: tuple, empty: tuple, topics: str) -> str:
    """The text of the :class:`TopicsWarning` for topics left out (or scored 0) under
    the ``topics`` policy; the streaming and Dask evaluators give the same."""
    parts = []
    if run_only:
        parts.append(f"{len(run_only)} run topics have no judgments and are not evaluated "
                     f"(e.g. {', '.join(run_only[:3])})")
    if missing:
        fate = "score 0" if topics == "qrels" else "are skipped"
        parts.append(f"{len(missing)} qrels topics are missing from the run and {fate} "
                     f"(e.g. {', '.join(missing[:3])})")
    if empty:
        parts.append(f"{len(empty)} qrels topics have no judgments (e.g. {empty[0]})")
    return "; ".join(parts)


def _byte_order(ids: list) -> np.ndarray:
    """The positions of ``ids`` (distinct str) in the order of their UTF-8 bytes, which
    is trec_eval's topic order and Python's order of str: sorted by their first 8 bytes
    (_trec.prefix_keys), then ids sharing those by comparing them whole (sorting 100,000
    ids as str took 17-19 ms in an evaluation; this, 1-2 ms)."""
    keys = _trec.prefix_keys(ids)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    shared = ordered[1:] == ordered[:-1]        # position i shares its key with i + 1
    if shared.any():
        edges = np.flatnonzero(np.diff(np.concatenate(([0], shared, [0])).astype(np.int8)))
        for start, stop in zip(edges[::2].tolist(), (edges[1::2] + 1).tolist()):
            order[start:stop] = sorted(order[start:stop].tolist(), key=ids.__getitem__)
    return order


def _pick(items: list, positions: np.ndarray) -> tuple:
    """``tuple(items[i] for i in positions)`` (for 100,000 topic ids, 12 ms as a
    comprehension, 4 ms this way)."""
    if len(positions) < 2:
        return tuple(items[i] for i in positions.tolist())
    return operator.itemgetter(*positions.tolist())(items)


def _ranking(qrels: Any, run: Any, *, ties: str, score_precision: str, depth: Optional[int],
             topics: str, duplicates: str, seed: Optional[int], warn: bool,
             threads: Optional[int]) -> tuple:
    """:func:`rank`'s Ranking, and a function that frees the qrels table read for it
    alone (see RankedInput.release) for the caller to call once its work is done;
    called by :func:`rank` and :func:`evaluate` alike, so that a :class:`TopicsWarning`
    points at their caller."""
    _check_choice(ties, TIE_RULES, "ties")
    _check_choice(score_precision, SCORE_PRECISIONS, "score_precision")
    _check_choice(topics, TOPIC_POLICIES, "topics")
    _check_depth(depth)
    check_threads(threads)
    seed = _resolve_seed(seed)
    native = read_ranked(qrels, run, ties=ties, score_precision=score_precision, seed=seed,
                         depth=depth, duplicates=duplicates, threads=threads)
    if native is not None:
        run_topics_all, run_tag, empty = native.run_topics, native.tag, ()
    else:
        qrels = load_qrels(qrels, duplicates=duplicates)
        run = load_run(run, duplicates=duplicates)
        judged_counts = np.diff(qrels.offsets)
        empty = tuple(t for t, n in zip(qrels.topics, judged_counts) if n == 0)
        run_topics_all, run_tag = run.topics, run.tag

    same = native is not None and native.same_topics
    if same:        # the usual case: the same topics judged and ranked, in the same order
        order = _byte_order(run_topics_all)
        chosen, run_only, missing = _pick(run_topics_all, order), (), ()
    else:
        qrels_topics = set(native.qrels_topics if native is not None else qrels.topics) \
            - set(empty)
        run_topics = set(run_topics_all)
        run_only = tuple(sorted(run_topics - qrels_topics))
        missing = tuple(sorted(qrels_topics - run_topics))
        chosen = sorted(qrels_topics) if topics == "qrels" else sorted(qrels_topics & run_topics)
    if topics == "strict" and (run_only or missing):
        raise InputError(
            f"topics differ: {len(run_only)} in the run only {list(run_only[:5])}, "
            f"{len(missing)} in the qrels only {list(missing[:5])} (topics='strict')")
    if warn and (run_only or missing or empty):
        warnings.warn(topics_warning(run_only, missing, empty, topics), TopicsWarning,
                      stacklevel=3)

    if same:
        everything = _as_ranked(native, native.run_offsets, native.qrels_offsets,
                                native.qrels_levels)
        chosen_index = order
    elif native is not None:
        everything, chosen_index = _universe(native, chosen)
    else:
        everything = _rank(qrels, run, chosen, ties=ties, score_precision=score_precision,
                           seed=seed, depth=depth)
        chosen_index = np.arange(len(chosen))
    policies = dict(depth=depth, topics=topics, ties=ties, score_precision=score_precision,
                    seed=seed)
    ranking = Ranking(topics=tuple(chosen), run_only_topics=run_only, missing_topics=missing,
                      empty_qrels_topics=empty, run_tag=run_tag, policies=policies,
                      _everything=everything, _chosen_index=chosen_index)
    return ranking, (native.release if native is not None else _nothing)


def _nothing() -> None:
    """Nothing to free (the reference reader's tables are Python's)."""


# ---------------------------------------------------------------- public entry point

def evaluate(qrels: Any, run: Any, measures: Union[str, Iterable[str]], *,
             relevance_level: float = 1, judged_only: bool = False,
             depth: Optional[int] = None, topics: str = "both", ties: str = "docno_desc",
             score_precision: str = "float64", seed: Optional[int] = None,
             duplicates: str = "error", warn: bool = True,
             threads: Optional[int] = None) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` with the given measures.

    ``qrels`` / ``run``: TREC file paths (plain or gzip), ``{qid: {docid: value}}``
    dicts, pandas DataFrames, or loaded :class:`~cumgain.trec_io.Qrels` /
    :class:`~cumgain.trec_io.Run`; ``qrels`` also judgments read once for many runs by
    :func:`~cumgain.prepare_qrels`. ``measures``: names in any supported spelling
    (see :mod:`cumgain.measures`). Policies: see the module docstring. The ranking
    half is :func:`rank`. ``threads``: how many threads may work on one evaluation
    (None: the available cores, at most 4): plain qrels and run files are read in
    parts of at least 4 MiB, and the measures of a batch of a million ranked rows or
    more are computed side by side, each thread for a range of topics; the result is
    the same for any number.

    >>> result = evaluate({"q1": {"a": 2, "b": 0, "c": 1}},
    ...                   {"q1": {"a": 0.9, "b": 0.8, "c": 0.1}}, ["P_2", "ndcg_cut_3"])
    >>> result.means["P_2"]
    0.5
    """
    _check_choice(ties, TIE_RULES, "ties")
    _check_choice(score_precision, SCORE_PRECISIONS, "score_precision")
    _check_choice(topics, TOPIC_POLICIES, "topics")
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, (int, float)) \
            or not math.isfinite(relevance_level):
        raise InputError(f"relevance_level must be a number, got {relevance_level!r}")
    _check_depth(depth)
    measure_list = parse_measures(measures)
    seed = _resolve_seed(seed)
    ranking, release_qrels = _ranking(qrels, run, ties=ties, score_precision=score_precision,
                                      depth=depth, topics=topics, duplicates=duplicates,
                                      seed=seed, warn=warn, threads=threads)
    policies = dict(relevance_level=float(relevance_level), judged_only=bool(judged_only),
                    depth=depth, topics=topics, ties=ties, score_precision=score_precision,
                    seed=seed)
    try:
        return _measured(ranking, measure_list, policies, threads)
    finally:        # the qrels table read for this evaluation alone is freed once the
        del ranking         # measures are done (not while they need both cores), by a
        release_qrels()     # helper, after the ranked rows (freeing memory at once, the
                            # two threads wait for each other)


def _measured(ranking: Ranking, measure_list: list, policies: dict,
              threads: Optional[int]) -> Evaluation:
    """:func:`evaluate`'s second half: the measures of a Ranking, per topic and averaged."""
    flags = {_judged_only_flag(measure, policies) for measure in measure_list}
    everything, chosen_index = ranking._everything, ranking._chosen_index
    ranked = {flag: _judged_only(everything) if flag else everything for flag in flags}
    full_depths = {flag: _full_depth(variant) for flag, variant in ranked.items()}
    gain_tables = _gain_tables(measure_list, everything.qrels_levels)
    ndcg_cutoffs = _ndcg_cutoffs(measure_list, policies, full_depths)

    scratch = threading.local()     # each thread's _Scratch

    def columns_of(first: int, stop: int) -> list:
        """Every measure's values for the topics [first, stop)."""
        if not hasattr(scratch, "arrays"):
            scratch.arrays = _Scratch()
        context = _Context({flag: _topic_range(variant, first, stop)
                            for flag, variant in ranked.items()}, policies, full_depths,
                           gain_tables, ndcg_cutoffs, scratch.arrays)
        return [_compute(measure, context) for measure in measure_list]

    workers = auto_threads(threads) if len(everything.levels) >= PARALLEL_MEASURE_ROWS else 1
    rows = int(everything.offsets[-1] + everything.qrels_offsets[-1])
    ranges = _topic_bounds(everything, max(parts_for(workers), -(-rows // MEASURE_RANGE_ROWS)))
    if workers > 1 and len(ranges) > 1:     # the kernels release the GIL
        with ThreadPoolExecutor(min(workers, len(ranges))) as pool:
            parts = list(pool.map(columns_of, *zip(*ranges)))
    else:
        parts = [columns_of(first, stop) for first, stop in ranges]
    computed = [np.concatenate([part[i] for part in parts])[chosen_index]
                for i in range(len(measure_list))]
    values = {measure.name: column for measure, column in zip(measure_list, computed)}
    means = {measure.name: aggregate(measure, values[measure.name]) for measure in measure_list}
    return Evaluation(topics=ranking.topics, measures=tuple(measure_list), values=values,
                      means=means, run_only_topics=ranking.run_only_topics,
                      missing_topics=ranking.missing_topics,
                      empty_qrels_topics=ranking.empty_qrels_topics, run_tag=ranking.run_tag,
                      policies=policies)
