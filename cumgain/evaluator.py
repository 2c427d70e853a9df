"""Evaluate a run against qrels: the engine behind every drop-in.

Pipeline (Python composes, the loops run in ``cgcore``; nothing here loops over
topics or documents):

1. read qrels and run (files, streams, dicts, DataFrames, Arrow tables), rank each
   topic (``ties=``, ``score_precision=``), cut at ``depth`` (-M) and join its documents
   with their judgments, in C (:mod:`cumgain.native`);
2. choose the topics (``topics=`` policy) and report the ones left out;
3. drop unjudged documents if ``judged_only`` (-J);
4. compute each measure with one batched kernel call; average.

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
                     (trec_eval -l; >= 0); it never changes graded gains.
``topics``           ``"both"`` (topics in run and qrels; trec_eval, pytrec_eval),
                     ``"qrels"`` (every qrels topic; those missing from the run score 0:
                     trec_eval -c, ir_measures), ``"strict"`` (an error if the sets differ).
===================  =====================================================================

Topics in the run but not in the qrels, qrels topics absent from the run, and qrels
topics without judgments are returned in :class:`Evaluation` and announced with a
:class:`TopicsWarning` (``warn=False`` silences it); they are never dropped silently.
"""
from __future__ import annotations

import contextvars
import dataclasses
import functools
import itertools
import math
import operator
import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Sequence, Union, get_args

import numpy as np
import numpy.typing as npt

import cgcore
from cgcore import _measures as kernels
from cgcore import _trec
from cgcore._convert import topic_dicts
from cumgain import _display as display
from cumgain._native_blocks import auto_threads, check_threads, parts_for
from cumgain._optional import require
from cumgain.batch import Ragged
from cumgain.exceptions import InputError, SumOverflowError
from cumgain.gains import GainSpec, gain_mapping
from cumgain.judgment_groups import JudgmentGroups, evaluate_groups
from cumgain.limits import real_number, whole_number
from cumgain.measures import Measure, parse_measures
from cumgain.measures.batch import Batch, Shared, judged_only_flag
from cumgain.measures.binary import RECALL_ROUNDING
from cumgain.native import RankedInput, read_ranked
from cumgain.ranked import (
    RankedBatch,
    Scratch,
    as_float64,
    full_depth,
    gather,
    judged_only_rows,
    offsets_from_counts,
    positions_in_topic,
    tie_group_means,
    topic_bounds,
    topic_of_rows,
    topic_range,
)
from cumgain.types import DuplicatePolicy, RecallCutoffs, ScorePrecision, TieRule, TopicPolicy

if TYPE_CHECKING:
    import pandas as pd

TIE_RULES: tuple[TieRule, ...] = get_args(TieRule)
SCORE_PRECISIONS: tuple[ScorePrecision, ...] = get_args(ScorePrecision)
TOPIC_POLICIES: tuple[TopicPolicy, ...] = get_args(TopicPolicy)
RECALL_CUTOFFS: tuple[str, ...] = tuple(RECALL_ROUNDING)
PARALLEL_MEASURE_ROWS = 1 << 20  # from this many ranked rows, measures are computed in threads
MEASURE_RANGE_ROWS = 1 << 19     # the measures take the topics in ranges of at most about
                                 # this many rows (ranked + judged): a range's float64
                                 # copies (of int8 levels) and flags stay in the cache


_OVERFLOW_ADVICE = ("gains this large cannot be summed in float64 (beyond about 1.8e308): "
                    "scale them down")


class TopicsWarning(UserWarning):
    """Some topics were not evaluated (or scored 0): the run and qrels topic sets differ."""


@dataclass(repr=False)
class Evaluation:
    """Per-topic values and means of an evaluation.

    ``values[name]`` is an array aligned with ``topics`` (in trec_eval's order: byte
    order of the topic id); ``means[name]`` the aggregate (arithmetic mean over the
    evaluated topics; sums for counts; geometric mean for ``gm_map``). Its repr is a
    short summary (counts and the first means); in a notebook, a table of the means.
    (Two trec_eval measures are not numbers: the "mean" of ``runid`` is the run tag, a
    str, and that of ``relstring`` is None.)
    """

    topics: tuple[str, ...]
    measures: tuple[Measure, ...]
    values: dict[str, npt.NDArray[Any]]
    means: dict[str, float]
    run_only_topics: tuple[str, ...] = ()
    missing_topics: tuple[str, ...] = ()
    empty_qrels_topics: tuple[str, ...] = ()
    run_tag: str = ""
    policies: dict[str, Any] = field(default_factory=dict)
    run_tags_agree: bool = True

    def on_topics(self, topics: Sequence[str]) -> "Evaluation":
        """The evaluation kept on ``topics`` (each one of :attr:`topics`; kept in this
        evaluation's order), its means recomputed over them (:func:`aggregate`)."""
        rows = _topic_rows(self.topics, topics, "evaluated")
        values = {name: np.asarray(column)[rows] for name, column in self.values.items()}
        means = {m.name: aggregate(m, values[m.name], self.run_tag) for m in self.measures}
        return dataclasses.replace(self, topics=tuple(self.topics[t] for t in rows),
                                   values=values, means=means)

    def per_topic(self) -> dict[str, dict[str, float]]:
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

    def to_dataframe(self) -> pd.DataFrame:
        """A pandas DataFrame, one row per topic and a column per measure (needs pandas)."""
        pd = require("pandas", extra="pandas", for_what="Evaluation.to_dataframe()")
        frame = pd.DataFrame({m.name: self.values[m.name] for m in self.measures},
                             index=pd.Index(list(self.topics), name="query_id"))
        return frame

    def __getitem__(self, name: str) -> float:
        return self.means[name]

    def _head(self) -> str:
        run = f" of run {display.shorten(self.run_tag)!r}" if self.run_tag else ""
        return (f"Evaluation{run}: {display.count(len(self.topics), 'topic')}, "
                f"{display.count(len(self.measures), 'measure')}")

    def __repr__(self) -> str:
        return display.summary(self._head() + "; means", self.means.items())

    def _repr_html_(self) -> str:
        return display.means_table(self._head(), "measure", self.means.items())


def _topic_rows(have: Sequence[str], topics: Sequence[str], what: str) -> np.ndarray:
    """The positions in ``have`` of ``topics`` (each one of them), in ``have``'s order."""
    index = {topic: t for t, topic in enumerate(have)}
    unknown = [topic for topic in topics if topic not in index]
    if unknown:
        raise InputError(f"topic {unknown[0]!r} is not one of the {what} topics")
    return np.array(sorted(index[topic] for topic in set(topics)), dtype=np.intp)


def _check_choice(value: Any, allowed: tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise InputError(f"{name} must be one of {allowed}, got {value!r}")
    return value


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


def compared_scores(scores: np.ndarray, score_precision: ScorePrecision) -> np.ndarray:
    """The scores as float64, rounded to float32 first under score_precision="float32"
    (beyond float32's range: +-inf, as in C)."""
    scores = scores.astype(np.float64)
    if score_precision == "float32":
        with np.errstate(over="ignore"):
            scores = scores.astype(np.float32).astype(np.float64)
    return scores


def ranked_order(scores: np.ndarray, doc_ids: np.ndarray, offsets: np.ndarray, *,
                 ties: TieRule, seed: int, depth: Optional[int]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Each topic's rows ranked by score, descending, ties broken by the tie rule
    (``doc_ids`` in docno byte order), cut at ``depth``: (the ranked offsets, the rows
    in ranked order)."""
    if ties in ("docno_desc", "average"):
        tie_keys = -doc_ids
    elif ties == "docno_asc":
        tie_keys = doc_ids
    elif ties == "input_order":
        tie_keys = np.arange(len(scores), dtype=np.int64)
    else:
        tie_keys = _trec.random_tie_keys(seed, positions_in_topic(offsets))
    order = kernels.rank_topics(scores, np.ascontiguousarray(tie_keys, np.int64), offsets)
    topic = topic_of_rows(offsets)
    keep = np.ones(len(order), dtype=bool) if depth is None else \
        positions_in_topic(offsets) < depth
    counts = np.bincount(topic[keep], minlength=len(offsets) - 1)
    return offsets_from_counts(counts), order[keep]


def _universe(native: RankedInput, topics: Sequence[str]) -> tuple[RankedBatch, np.ndarray]:
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
        qrels_index = native.judgments.topic_index
        qrels_rows, qrels_offsets = gather(
            native.qrels_offsets,
            np.array([qrels_index.get(t, -1) for t in universe], dtype=np.int64))
        qrels_levels = native.qrels_levels[qrels_rows]
    offsets = np.concatenate([native.run_offsets,
                              np.full(len(absent), native.run_offsets[-1], dtype=np.int64)])
    ranked = _as_ranked(native, offsets, qrels_offsets, qrels_levels)
    return ranked, np.fromiter(map(index.__getitem__, topics), np.int64, len(topics))


def _as_ranked(native: RankedInput, offsets: np.ndarray, qrels_offsets: np.ndarray,
               qrels_levels: np.ndarray) -> RankedBatch:
    """The native ranked rows with these topic offsets and judgments."""
    return RankedBatch(offsets=offsets, levels=native.levels, judged=native.judged,
                   scores=native.scores, qrels_offsets=qrels_offsets,
                   qrels_levels=qrels_levels)


def aggregate(measure: Measure, values: np.ndarray, run_tag: str = "") -> Any:
    """The summary that :attr:`Evaluation.means` reports for ``measure`` over per-topic
    ``values`` (in topic order), by the family's rule: ``S / n`` with ``S = sum_t v_t``
    summed sequentially in topic order, as trec_eval does (``mean``); ``S`` itself for
    counts (``sum``); ``exp(S / n)`` for ``gm_map`` and ``gm_bpref``, whose per-topic
    values are already ``log(max(value, 1e-5))`` (``gmean``); ``S / n`` over the topics
    whose value is not NaN (``mean_defined``: Accuracy, as ir_measures averages it); the
    run tag for ``runid``; None for ``relstring``. A mean over no topic is NaN (a sum is 0).
    A sum of finite values beyond float64's range raises
    :class:`~cumgain.exceptions.SumOverflowError`.

    Pieces of an evaluation (:mod:`cumgain.stream`, :mod:`cumgain.dask`) are combined with
    it, so their means are bit-identical to :func:`evaluate`'s.

    >>> from cumgain.measures import parse_measures
    >>> p5, num_rel = parse_measures(["P_5", "num_rel"])
    >>> aggregate(p5, np.array([0.2, 0.6])), aggregate(num_rel, np.array([3.0, 4.0]))
    (0.4, 7.0)
    """
    rule = measure.aggregate
    if rule == "first":
        return run_tag
    if rule == "none":
        return None
    if rule == "mean_defined":
        values = values[~np.isnan(values)]
    if len(values) == 0:
        return 0.0 if rule == "sum" else math.nan
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.cumsum(values)[-1])  # sequential, in topic order, like trec_eval
    if not math.isfinite(total) and np.isfinite(values).all():
        raise SumOverflowError(
            f"measure {measure.name!r}: the sum of its values over the topics overflows "
            f"float64, so their mean cannot be computed; {_OVERFLOW_ADVICE}",
            sum=measure.name)
    if rule == "sum":
        return total
    if rule == "gmean":
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

    topics: tuple[str, ...]
    run_only_topics: tuple[str, ...]
    missing_topics: tuple[str, ...]
    empty_qrels_topics: tuple[str, ...]
    run_tag: str
    policies: dict[str, Any]
    _everything: "RankedBatch" = field(repr=False, compare=False)
    _chosen_index: np.ndarray = field(repr=False, compare=False)
    run_tags_agree: bool = True

    def on_topics(self, topics: Sequence[str]) -> "Ranking":
        """The ranking kept on ``topics`` (each one of :attr:`topics`; kept in this
        ranking's order)."""
        rows = _topic_rows(self.topics, topics, "ranked")
        return dataclasses.replace(self, topics=tuple(self.topics[t] for t in rows),
                                   _chosen_index=self._chosen_index[rows])

    @functools.cached_property
    def _chosen(self) -> "RankedBatch":
        """The ranked rows and judgments of the evaluated topics only."""
        everything, index = self._everything, self._chosen_index
        if np.array_equal(index, np.arange(len(everything.offsets) - 1)):
            return dataclasses.replace(everything, levels=as_float64(everything.levels),
                                       qrels_levels=as_float64(everything.qrels_levels))
        rows, offsets = gather(everything.offsets, index)
        qrels_rows, qrels_offsets = gather(everything.qrels_offsets, index)
        return RankedBatch(offsets=offsets, levels=as_float64(everything.levels[rows]),
                       judged=everything.judged[rows],
                       scores=None if everything.scores is None else everything.scores[rows],
                       qrels_offsets=qrels_offsets,
                       qrels_levels=as_float64(everything.qrels_levels[qrels_rows]))

    @property
    def levels(self) -> Ragged:
        chosen = self._chosen
        return Ragged(np.maximum(chosen.levels, 0.0), chosen.offsets)

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
            gains = tie_group_means(gains, chosen)
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
    """``depth`` is None or a whole number from 1 to MAX_RANK (cumgain.limits)."""
    if depth is not None:
        whole_number(depth, "depth")


def _resolve_seed(seed: Any) -> int:
    if seed is None:    # fresh entropy from the OS, as numpy's SeedSequence() draws it
        return int.from_bytes(os.urandom(8), "little")  # (importing numpy.random: 13 ms)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"seed must be an integer or None, got {seed!r}")
    return int(seed) & (2 ** 64 - 1)


def rank(qrels: Any, run: Any, *, ties: TieRule = "docno_desc",
         score_precision: ScorePrecision = "float64", depth: Optional[int] = None,
         topics: TopicPolicy = "both", duplicates: DuplicatePolicy = "error",
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


def topics_warning(run_only: Sequence[str], missing: Sequence[str], empty: Sequence[str],
                   topics: str) -> str:
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


def _byte_order(ids: list[str]) -> np.ndarray:
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


def _pick(items: list[str], positions: np.ndarray) -> tuple[str, ...]:
    """``tuple(items[i] for i in positions)`` (for 100,000 topic ids, 12 ms as a
    comprehension, 4 ms this way)."""
    if len(positions) < 2:
        return tuple(items[i] for i in positions.tolist())
    return operator.itemgetter(*positions.tolist())(items)


@dataclass
class ReadInput:
    """A run and its judgments read for :func:`rank` (by the native reader, or by the
    reference reader: see :data:`READER`): the run's topics in order of appearance,
    its tag, the qrels topics without judgments; ``judged()``: the judged topics (a
    container) and sorted, asked for only where the run's topics are not the judged
    ones (a table's ids are then decoded); ``same``: the run ranks exactly the judged
    topics, in their order, so that ``rank_all()`` gives every topic's ranking in run
    order; ``rank_chosen(topics)``: the rankings of any topics and where each sits in
    them; ``release()`` frees what was read for this ranking alone."""

    run_topics: Sequence[str]
    run_tag: str
    tags_agree: bool
    empty: tuple[str, ...]
    judged: Callable[[], tuple[Any, tuple[str, ...]]]
    same: bool
    rank_all: Callable[[], RankedBatch]
    rank_chosen: Callable[[Sequence[str]], tuple[RankedBatch, np.ndarray]]
    release: Callable[[], None]


def read_native(qrels: Any, run: Any, *, ties: TieRule, score_precision: ScorePrecision,
                seed: int, depth: Optional[int], duplicates: DuplicatePolicy,
                threads: Optional[int]) -> ReadInput:
    """The run and its judgments read, ranked and joined by the native reader
    (:func:`cumgain.native.read_ranked`)."""
    native = read_ranked(qrels, run, ties=ties, score_precision=score_precision, seed=seed,
                         depth=depth, duplicates=duplicates, threads=threads)
    return ReadInput(
        native.run_topics, native.tag, native.tags_agree, native.judgments.empty_topics,
        # native judgments keep their topic index and sorted topics: a table prepared
        # once for many runs (a Dask run's partitions) costs each one pass over them
        lambda: (native.judgments.topic_index, native.judgments.sorted_topics),
        native.same_topics,
        lambda: _as_ranked(native, native.run_offsets, native.qrels_offsets,
                           native.qrels_levels),
        functools.partial(_universe, native), native.release)


READER: contextvars.ContextVar[Callable[..., ReadInput]] = contextvars.ContextVar(
    "READER", default=read_native)
"""What reads a run and its judgments for :func:`rank` and :func:`evaluate`: the native
reader. :mod:`cumgain.reference_reading` sets the pure-Python reference reader here
for the tests that compare the two (its ``using_reference_reader()``)."""


def _ranking(qrels: Any, run: Any, *, ties: TieRule, score_precision: ScorePrecision,
             depth: Optional[int], topics: TopicPolicy, duplicates: DuplicatePolicy,
             seed: Optional[int], warn: bool, threads: Optional[int]
             ) -> tuple[Ranking, Callable[[], None]]:
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
    read = READER.get()(qrels, run, ties=ties, score_precision=score_precision, seed=seed,
                        depth=depth, duplicates=duplicates, threads=threads)
    chosen: Sequence[str]
    run_only: tuple[str, ...]
    missing: tuple[str, ...]
    run_topics_all, empty = read.run_topics, read.empty
    if read.same:   # the usual case: the same topics judged and ranked, in the same order
        order = _byte_order(list(run_topics_all))
        chosen, run_only, missing = _pick(list(run_topics_all), order), (), ()
    else:
        judged, judged_sorted = read.judged()
        run_topics = set(run_topics_all)
        run_only = tuple(sorted(t for t in run_topics if t not in judged))
        missing = tuple(itertools.filterfalse(run_topics.__contains__, judged_sorted))
        chosen = judged_sorted if topics == "qrels" \
            else sorted(t for t in run_topics if t in judged)
    if topics == "strict" and (run_only or missing):
        raise InputError(
            f"topics differ: {len(run_only)} in the run only {list(run_only[:5])}, "
            f"{len(missing)} in the qrels only {list(missing[:5])} (topics='strict')")
    if warn and (run_only or missing or empty):
        warnings.warn(topics_warning(run_only, missing, empty, topics), TopicsWarning,
                      stacklevel=3)

    if read.same:
        everything, chosen_index = read.rank_all(), order
    else:
        everything, chosen_index = read.rank_chosen(chosen)
    policies = dict(depth=depth, topics=topics, ties=ties, score_precision=score_precision,
                    seed=seed)
    ranking = Ranking(topics=tuple(chosen), run_only_topics=run_only, missing_topics=missing,
                      empty_qrels_topics=empty, run_tag=read.run_tag, policies=policies,
                      _everything=everything, _chosen_index=chosen_index,
                      run_tags_agree=read.tags_agree)
    return ranking, read.release


# ---------------------------------------------------------------- public entry point

def evaluate(qrels: Any, run: Any,
             measures: Union[str, Measure, Iterable[Union[str, Measure]]], *,
             relevance_level: float = 1, judged_only: bool = False,
             depth: Optional[int] = None, topics: TopicPolicy = "both",
             ties: TieRule = "docno_desc", score_precision: ScorePrecision = "float64",
             seed: Optional[int] = None, duplicates: DuplicatePolicy = "error",
             warn: bool = True, threads: Optional[int] = None,
             recall_cutoffs: RecallCutoffs = "nearest", collection_size: int = 0
             ) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` with the given measures.

    ``qrels`` / ``run``: TREC file paths (plain or gzip), ``{qid: {docid: value}}``
    dicts, pandas DataFrames, or loaded :class:`~cumgain.trec_io.Qrels` /
    :class:`~cumgain.trec_io.Run`; ``qrels`` also judgments read once for many runs by
    :func:`~cumgain.prepare_qrels`, judgment groups
    (:func:`~cumgain.load_judgment_groups`: the ``*_avgjg`` measures) or preference
    judgments (:func:`~cumgain.load_preferences`: the ``prefs_*`` measures).
    ``measures``: names in any supported spelling, or :class:`~cumgain.measures.Measure`
    objects (see :mod:`cumgain.measures`). Policies: see the module docstring. The ranking
    half is :func:`rank`. ``threads``: how many threads may work on one evaluation
    (None: the available cores, at most 4): plain qrels and run files are read in
    parts of at least 4 MiB, and the measures of a batch of a million ranked rows or
    more are computed side by side, each thread for a range of topics; the result is
    the same for any number. ``recall_cutoffs``: how iprec_at_recall and 11pt_avg turn a
    recall level x into a number of relevant documents: ``"nearest"`` (trec_eval 10:
    x R rounded to the nearest) or ``"trec_eval9"`` (trec_eval <= 9.0.8 and pytrec_eval:
    x R + 0.9 truncated). ``collection_size``: the number of documents in the collection
    (trec_eval -N), used by ``utility`` only.

    >>> result = evaluate({"q1": {"a": 2, "b": 0, "c": 1}},
    ...                   {"q1": {"a": 0.9, "b": 0.8, "c": 0.1}}, ["P_2", "ndcg_cut_3"])
    >>> result.means["P_2"]
    0.5
    """
    _check_choice(ties, TIE_RULES, "ties")
    _check_choice(score_precision, SCORE_PRECISIONS, "score_precision")
    _check_choice(topics, TOPIC_POLICIES, "topics")
    relevance_level = real_number(relevance_level, "relevance_level")
    if relevance_level < 0:
        raise InputError(f"relevance_level must be >= 0, got {relevance_level!r} (below 0 "
                         "trec_eval counts every document without a judgment as relevant)")
    _check_depth(depth)
    _check_choice(recall_cutoffs, RECALL_CUTOFFS, "recall_cutoffs")
    collection_size = whole_number(collection_size, "collection_size", low=0)
    measure_list = parse_measures(measures)
    seed = _resolve_seed(seed)
    from cumgain.preferences import Preferences, evaluate_preferences   # (it imports this)
    if isinstance(qrels, Preferences):
        return evaluate_preferences(qrels, run, measure_list, topics=topics, warn=warn,
                                    depth=depth, score_precision=score_precision)
    from cumgain.diversity import Subtopics, evaluate_subtopics   # (it imports this)
    if isinstance(qrels, Subtopics):
        return evaluate_subtopics(qrels, run, measure_list, topics=topics, warn=warn,
                                  relevance_level=relevance_level, judged_only=judged_only,
                                  depth=depth, ties=ties, score_precision=score_precision,
                                  seed=seed, duplicates=duplicates)
    if isinstance(qrels, JudgmentGroups):
        return evaluate_groups(qrels, run, measure_list, topics=topics, warn=warn,
                               relevance_level=relevance_level, judged_only=judged_only,
                               depth=depth, ties=ties, score_precision=score_precision,
                               seed=seed, duplicates=duplicates, threads=threads,
                               recall_cutoffs=recall_cutoffs, collection_size=collection_size)
    ranking, release_qrels = _ranking(qrels, run, ties=ties, score_precision=score_precision,
                                      depth=depth, topics=topics, duplicates=duplicates,
                                      seed=seed, warn=warn, threads=threads)
    policies = dict(relevance_level=float(relevance_level), judged_only=bool(judged_only),
                    depth=depth, topics=topics, ties=ties, score_precision=score_precision,
                    seed=seed, recall_cutoffs=recall_cutoffs,
                    collection_size=int(collection_size))
    try:
        return _measured(ranking, measure_list, policies, threads)
    finally:        # the qrels table read for this evaluation alone is freed once the
        del ranking         # measures are done (not while they need both cores), by a
        release_qrels()     # helper, after the ranked rows (freeing memory at once, the
                            # two threads wait for each other)


# What a measure's compute raises when a sum of gains overflows: a kernel's
# SumOverflow, or the vector API's SumOverflowError (avg_pos_*), each with the topic's
# index in the batch of topics computed.
_KERNEL_OVERFLOWS = (cgcore.SumOverflow, SumOverflowError)


def _overflow_error(overflow: Any, measures: list[Measure], ranking: Ranking,
                    first: int) -> SumOverflowError:
    """The SumOverflowError for a kernel's SumOverflow in the topics from ``first`` on
    of the ranking's rows, naming the measures, the topic and the rank."""
    of = overflow.of if isinstance(overflow, cgcore.SumOverflow) else overflow.sum
    row = first + (overflow.topic or 0)
    chosen = np.flatnonzero(ranking._chosen_index == row)
    topic = ranking.topics[int(chosen[0])] if len(chosen) else f"(row {row})"
    sums = {"run": "the ranking's gains", "ideal": "the ideal gains",
            "ratio": "DCG / ideal DCG", "ranks": "the normalised vector"}
    names = ("measures " if len(measures) > 1 else "measure ") + \
        ", ".join(repr(m.name) for m in measures)
    return SumOverflowError(
        f"{names}, topic {topic!r}: the sum of {sums.get(of, of)} overflows float64 at "
        f"rank {overflow.rank}; {_OVERFLOW_ADVICE}",
        topic=topic, rank=overflow.rank, sum=measures[0].name)


def _check_finite(measure: Measure, column: np.ndarray, topics: tuple[str, ...]) -> None:
    """A measure's per-topic values are finite: where a kernel's sum left float64's
    range (G, ndcg_rel, Rndcg, utility with huge coefficients, ...) it gives NaN or
    infinity, refused here with the topic. (NaN is a value for a measure averaged over
    the topics where it is defined, ``mean_defined``: Accuracy without a pair.)"""
    if column.dtype != np.float64:
        return
    bad = np.isinf(column) if measure.aggregate == "mean_defined" else \
        ~np.isfinite(column)
    if bad.any():
        t = int(np.argmax(bad))
        raise SumOverflowError(
            f"measure {measure.name!r}, topic {topics[t]!r}: the value is {column[t]}, a "
            f"sum of the gains or parameters left float64's range; {_OVERFLOW_ADVICE}",
            topic=topics[t], sum=measure.name)


def _compute_groups(measure_list: list[Measure]
                    ) -> list[tuple[Callable[..., Any], list[Measure]]]:
    """The measures grouped by the function that computes them (families may share
    one, such as ndcg, ndcg_cut and nDCG), in the order first met."""
    groups: dict[Callable[..., Any], list[Measure]] = {}
    for measure in measure_list:
        groups.setdefault(measure.spec.compute, []).append(measure)
    return list(groups.items())


_INPUT_SOURCES = {
    "judgment_groups": "trec_eval -R qrels_jg; cumgain.load_judgment_groups",
    "preferences": "trec_eval -R prefs; cumgain.load_preferences",
    "subtopics": "qid subtopic docno rel lines; cumgain.load_subtopics",
}


def _check_computable(measure_list: list[Measure], policies: dict[str, Any]) -> None:
    for measure in measure_list:
        family = measure.spec
        if family.input != "ranking":
            raise InputError(f"measure {measure.name!r} needs {family.input.replace('_', ' ')} "
                             f"({_INPUT_SOURCES[family.input]}), not qrels")
        if policies["ties"] == "average" and family.ordered:
            raise InputError(
                f"measure {measure.name!r} is not defined under ties='average' (it depends "
                "on the order within groups of equal scores); choose another tie rule")


def _measured(ranking: Ranking, measure_list: list[Measure], policies: dict[str, Any],
              threads: Optional[int]) -> Evaluation:
    """:func:`evaluate`'s second half: the measures of a Ranking, per topic and averaged.
    Each group of measures sharing a compute function is computed by it for every range
    of topics (ranges in threads when the batch is large)."""
    _check_computable(measure_list, policies)
    flags = {judged_only_flag(measure, policies) for measure in measure_list}
    everything, chosen_index = ranking._everything, ranking._chosen_index
    ranked = {flag: judged_only_rows(everything) if flag else everything for flag in flags}
    shared = Shared(policies=policies,
                    full_depths={flag: full_depth(variant) for flag, variant in ranked.items()},
                    gain_tables=Shared.gain_tables_for(measure_list, everything.qrels_levels),
                    run_tag=ranking.run_tag)
    groups = _compute_groups(measure_list)
    scratch = threading.local()     # each thread's Scratch

    def columns_of(first: int, stop: int) -> dict[str, np.ndarray]:
        """Every measure's values for the topics [first, stop)."""
        if not hasattr(scratch, "arrays"):
            scratch.arrays = Scratch()
        batch = Batch({flag: topic_range(variant, first, stop)
                       for flag, variant in ranked.items()}, shared, scratch.arrays)
        columns = {}
        for compute, measures in groups:
            try:
                computed = compute(measures, batch)
            except _KERNEL_OVERFLOWS as error:
                overflow = error
                for measure in measures:    # the error path: which measure, to name it
                    try:
                        compute([measure], batch)
                    except _KERNEL_OVERFLOWS as its_overflow:
                        overflow, measures = its_overflow, [measure]
                        break
                raise _overflow_error(overflow, measures, ranking, first) from None
            columns.update(zip((m.name for m in measures), computed))
        return columns

    workers = auto_threads(threads) if len(everything.levels) >= PARALLEL_MEASURE_ROWS else 1
    rows = int(everything.offsets[-1] + everything.qrels_offsets[-1])
    ranges = topic_bounds(everything, max(parts_for(workers), -(-rows // MEASURE_RANGE_ROWS)))
    if workers > 1 and len(ranges) > 1:     # the kernels release the GIL
        with ThreadPoolExecutor(min(workers, len(ranges))) as pool:
            parts = list(pool.map(columns_of, *zip(*ranges)))
    else:
        parts = [columns_of(first, stop) for first, stop in ranges]
    missing = np.isin(np.array(ranking.topics, dtype=object),
                      np.array(ranking.missing_topics, dtype=object)) \
        if ranking.missing_topics and policies["topics"] == "qrels" else None
    values = {}
    for measure in measure_list:
        column = np.concatenate([part[measure.name] for part in parts])[chosen_index]
        if missing is not None and measure.spec.missing_value is not None:
            column[missing] = measure.spec.missing_value
        values[measure.name] = column
        _check_finite(measure, column, ranking.topics)
    means = {measure.name: aggregate(measure, values[measure.name], ranking.run_tag)
             for measure in measure_list}
    return Evaluation(topics=ranking.topics, measures=tuple(measure_list), values=values,
                      means=means, run_only_topics=ranking.run_only_topics,
                      missing_topics=ranking.missing_topics,
                      empty_qrels_topics=ranking.empty_qrels_topics, run_tag=ranking.run_tag,
                      policies=policies, run_tags_agree=ranking.run_tags_agree)
