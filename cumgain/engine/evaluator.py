"""Evaluate a run against qrels: the engine behind every drop-in.

Pipeline (Python composes, the loops run in ``cgcore``; nothing here loops over
topics or documents):

1. read qrels and run (files, streams, dicts, DataFrames, Arrow tables), rank each
   topic (``ties=``, ``score_precision=``), cut at ``depth`` (-M) and join its documents
   with their judgments, in C (:mod:`cumgain.io.native.reader`);
2. choose the topics (``topics=`` policy) and report the ones left out;
3. drop unjudged documents if ``judged_only`` (-J);
4. compute each measure with one batched kernel call; average.

Policies, each with trec_eval's behaviour as the default:

===================  =====================================================================
``ties``             ``"docno_desc"`` (trec_eval: equal scores ordered by docno descending
                     in byte order), ``"docno_asc"``, ``"input_order"`` (file / dict order),
                     ``"random"`` (seeded by ``seed``: 0 unless given, None for a seed
                     drawn from the OS; kept in the policies); or the value over the orders within
                     each group of equal scores: ``"expected"``, its exact mean over every
                     such order (McSherry & Najork 2008): for the measures linear in the
                     ranking (CG/DCG/nDCG family, P, recall, Rprec, counts) each group
                     shares its mean gain, and AP (map, map_cut), RR and success have
                     closed forms; the other order-dependent measures are refused;
                     ``"average"`` (sklearn's rule: the linear measures only);
                     ``"optimistic"`` / ``"pessimistic"``, the best / worst order (highest
                     level first / last; among equal levels, documents without a judgment
                     first / last).
``score_precision``  ``"float64"`` (trec_eval 10), ``"float32"`` (trec_eval <= 9.0.8 and
                     pytrec_eval: scores equal as 32-bit floats tie), ``"float16"`` or
                     ``"bfloat16"`` (as a half-precision model emits them: round to
                     nearest, ties to even; the ties such a model creates then show).
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
import operator
import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np

import cgcore
from cgcore import _trec
from cumgain.io.native.parts import auto_threads, check_threads, parts_for
from cumgain.common.batch import Ragged
from cumgain.exceptions import InputError, SumOverflowError
from cumgain.gains import GainSpec, gain_mapping
from cumgain.engine.kinds import JudgmentKind, kind_for_input, kind_of
from cumgain.io import neighbours
from cumgain.engine.ranking_rules import (SCORE_PRECISIONS, TIE_RULES, TOPIC_POLICIES,
                                          _check_choice, _check_depth)
from cumgain.engine.results import (_OVERFLOW_ADVICE, Evaluation, TieBounds, TopicsWarning,
                                    _topic_rows, aggregate, topics_warning)
from cumgain.common.limits import real_number, whole_number
from cumgain.measures import Measure, parse_measures
from cumgain.measures.base import expected_tie_families
from cumgain.measures.batch import TIE_MEAN_RULES, Batch, Shared, judged_only_flag
from cumgain.measures.binary import RECALL_ROUNDING
from cumgain.io.native.reader import RankedInput, read_ranked
from cumgain.measures.ranked import (
    RankedBatch,
    Scratch,
    as_float64,
    full_depth,
    gather,
    judged_only_rows,
    ordered_within_ties,
    tie_group_means,
    topic_bounds,
    topic_range,
)
from cumgain.types import DuplicatePolicy, RecallCutoffs, ScorePrecision, TieRule, TopicPolicy


RECALL_CUTOFFS: tuple[str, ...] = tuple(RECALL_ROUNDING)
PARALLEL_MEASURE_ROWS = 1 << 20  # from this many ranked rows, measures are computed in threads
MEASURE_RANGE_ROWS = 1 << 19     # the measures take the topics in ranges of at most about
                                 # this many rows (ranked + judged): a range's float64
                                 # copies (of int8 levels) and flags stay in the cache


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

    Attributes
    ----------
    topics : tuple of str
        The evaluated topics.
    run_only_topics, missing_topics, empty_qrels_topics : tuple of str
        The topics left out, as in :class:`Evaluation`.
    run_tag : str
        The run's tag.
    policies : dict
        The ranking policies used.
    levels : Ragged
        Per topic, the levels of the retrieved documents in rank order.
    judged : numpy.ndarray of bool
        Which of them have a judgment >= 0.
    qrels_levels : Ragged
        Per topic, the levels of all its judgments (the recall base).
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
        its level if judged (>= 0), else 0; under ``ties="average"`` or ``"expected"``
        each group of equal scores shares its mean gain."""
        chosen = self._chosen
        gains = np.zeros(len(chosen.levels), dtype=np.float64)
        gains[chosen.judged] = gain_mapping(mapping)(chosen.levels[chosen.judged])
        if self.policies["ties"] in TIE_MEAN_RULES:
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


def _resolve_seed(seed: Any) -> int:
    if seed is None:    # fresh entropy from the OS, as numpy's SeedSequence() draws it
        return int.from_bytes(os.urandom(8), "little")  # (importing numpy.random: 13 ms)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"seed must be an integer or None, got {seed!r}")
    return int(seed) & (2 ** 64 - 1)


def rank(qrels: Any, run: Any, *, ties: TieRule = "docno_desc",
         score_precision: ScorePrecision = "float64", depth: Optional[int] = None,
         topics: TopicPolicy = "both", duplicates: DuplicatePolicy = "error",
         seed: Optional[int] = 0, warn: bool = True,
         threads: Optional[int] = None) -> Ranking:
    """Rank ``run`` and join it with ``qrels``: the first half of :func:`evaluate`.

    Parameters
    ----------
    qrels, run
        As in :func:`evaluate` (graded qrels).
    ties : {"docno_desc", "docno_asc", "input_order", "random", "expected", \
"optimistic", "pessimistic", "average"}, default "docno_desc"
        The order of equal scores, as in :func:`evaluate`; ``"optimistic"`` and
        ``"pessimistic"`` reorder each group, the others keep trec_eval's order and the
        gains of a group under ``"expected"`` / ``"average"`` are its mean.
    score_precision : {"float64", "float32", "float16", "bfloat16"}, default "float64"
        How scores are compared, as in :func:`evaluate`.
    depth : int, optional
        Keep the first ``depth`` documents per topic (trec_eval ``-M``).
    topics : {"both", "qrels", "strict"}, default "both"
        Which topics are ranked, as in :func:`evaluate`.
    duplicates : {"error", "first", "last"}, default "error"
        A docno twice in a topic: an error, or keep the first or last.
    seed : int or None, default 0
        The seed of ``ties="random"``.
    warn : bool, default True
        Announce the topics left out (:class:`TopicsWarning`).
    threads : int, optional
        Threads the reading may use (None: the available cores, at most 4).

    Returns
    -------
    Ranking
        Per topic, the levels of the retrieved documents in rank order and the
        judgments (the recall base).

    Raises
    ------
    InputError
        A bad input or policy.

    Examples
    --------
    >>> ranking = rank({"q1": {"a": 2, "b": 0, "c": 1}}, {"q1": {"a": 0.1, "c": 0.9}})
    >>> ranking.levels[0], ranking.judged_gains("0-1-10-100")[0]
    (array([1., 2.]), array([10.,  0.,  1.]))
    """
    ranking, release_qrels = _ranking(qrels, run, ties=ties, score_precision=score_precision,
                                      depth=depth, topics=topics, duplicates=duplicates,
                                      seed=seed, warn=warn, threads=threads)
    release_qrels()
    return ranking


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
    (:func:`cumgain.io.native.reader.read_ranked`)."""
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
reader. :mod:`cumgain.reference.reading` sets the pure-Python reference reader here
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
    qrels, run = neighbours.adapted(qrels, "qrels"), neighbours.adapted(run, "run")
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
    if ties in ("optimistic", "pessimistic"):
        everything = ordered_within_ties(everything, best=ties == "optimistic")
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
             seed: Optional[int] = 0, duplicates: DuplicatePolicy = "error",
             warn: bool = True, threads: Optional[int] = None,
             recall_cutoffs: RecallCutoffs = "nearest", collection_size: int = 0
             ) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` with the given measures.

    The ranking half is :func:`rank`; every default is trec_eval's behaviour.

    Parameters
    ----------
    qrels : str, os.PathLike, dict, DataFrame, Arrow table, rows, Qrels or prepared
        Judgments: a TREC qrels file (plain or gzip; ``"-"`` standard input),
        ``{qid: {docid: level}}``, a pandas or Polars DataFrame or an Arrow table
        (``query_id, doc_id, relevance``), ir_measures / ir_datasets rows, a ranx
        ``Qrels``, a loaded :class:`~cumgain.trec_io.Qrels`, or judgments read once for
        many runs (:func:`~cumgain.prepare_qrels`); also judgment groups
        (:func:`~cumgain.load_judgment_groups`: the ``*_avgjg`` measures), preferences
        (:func:`~cumgain.load_preferences`: ``prefs_*``) or subtopics
        (:func:`~cumgain.load_subtopics`: the diversity measures).
    run : str, os.PathLike, file object, dict, DataFrame, Arrow table, rows or Run
        The ranked results: a TREC run file or stream (any order of topics), ``{qid:
        {docid: score}}``, a table (``query_id, doc_id, score``), rows, a ranx ``Run``
        or a loaded :class:`~cumgain.trec_io.Run`.
    measures : str, Measure or iterable of them
        Names in any spelling (trec_eval ``ndcg_cut.10``, ir_measures ``nDCG@10``,
        ranx ``ndcg@10``, the paper's ``nDCG@10(discount=tois)``, nicknames such as
        ``official``), :class:`~cumgain.measures.Measure` objects or ir_measures'
        measure objects; the catalogue lists them.
    relevance_level : float, default 1
        Binary measures count a document relevant at this level or above (trec_eval
        ``-l``; >= 0); graded gains never change.
    judged_only : bool, default False
        Drop the documents without a judgment >= 0 after the depth cut, closing the gaps
        (trec_eval ``-J``).
    depth : int, optional
        Keep the first ``depth`` documents of each topic after ranking (trec_eval
        ``-M``; 0 keeps none).
    topics : {"both", "qrels", "strict"}, default "both"
        Evaluate the topics in both (trec_eval, pytrec_eval); every qrels topic, those
        the run lacks scoring 0 (trec_eval ``-c``, ir_measures); or raise if the sets
        differ.
    ties : {"docno_desc", "docno_asc", "input_order", "random", "expected", \
"optimistic", "pessimistic", "average"}, default "docno_desc"
        The order of equal scores: trec_eval's docno descending, ascending, the input's
        order, a seeded shuffle; or each group of equal scores read as a whole: the
        exact mean over its orders (``"expected"``), its best or worst order
        (``"optimistic"``, ``"pessimistic"``), scikit-learn's shared mean gain
        (``"average"``, the linear measures only).
    score_precision : {"float64", "float32", "float16", "bfloat16"}, default "float64"
        Scores compared as doubles (trec_eval 10), as 32-bit floats (trec_eval 9.0.8,
        pytrec_eval), or rounded as a half-precision model emits them.
    seed : int or None, default 0
        The seed of ``ties="random"``; None draws one (kept in ``policies``).
    duplicates : {"error", "first", "last"}, default "error"
        A docno twice in a topic: an error naming both lines, or keep the first or the
        last occurrence (with a warning).
    warn : bool, default True
        Announce the topics left out (:class:`TopicsWarning`).
    threads : int, optional
        Threads one evaluation may use (None: the available cores, at most 4); the
        result is the same for any number.
    recall_cutoffs : {"nearest", "trec_eval9"}, default "nearest"
        How ``iprec_at_recall`` and ``11pt_avg`` turn recall x into a number of relevant
        documents: x R rounded (trec_eval 10) or x R + 0.9 truncated (trec_eval 9.0.8).
    collection_size : int, default 0
        Documents in the collection (trec_eval ``-N``), for ``utility`` only.

    Returns
    -------
    Evaluation
        Per-topic values (``values``, aligned with ``topics``) and means (``means``).

    Raises
    ------
    InputError
        A bad input (naming the file and line, or row and column), an unknown measure or
        policy, or a measure not defined under the tie rule.

    Examples
    --------
    >>> result = evaluate({"q1": {"a": 2, "b": 0, "c": 1}},
    ...                   {"q1": {"a": 0.9, "b": 0.8, "c": 0.1}}, ["P_2", "ndcg_cut_3"])
    >>> result.means["P_2"]
    0.5
    """
    measure_list, policies = _checked(measures, relevance_level=relevance_level,
                                      judged_only=judged_only, depth=depth, topics=topics,
                                      ties=ties, score_precision=score_precision, seed=seed,
                                      recall_cutoffs=recall_cutoffs,
                                      collection_size=collection_size)
    seed = policies["seed"]
    kind = kind_of(qrels)
    if kind is None:
        kind = _kind_to_load(measure_list)
        if kind is not None:
            qrels = _loaded(kind, qrels, measure_list[0])
    if kind is not None:        # preferences, subtopics, judgment groups (engine/kinds.py)
        return kind.evaluate(qrels, neighbours.adapted(run, "run"), measure_list, topics=topics, warn=warn,
                             relevance_level=policies["relevance_level"],
                             judged_only=judged_only, depth=depth, ties=ties,
                             score_precision=score_precision, seed=seed,
                             duplicates=duplicates, threads=threads,
                             recall_cutoffs=recall_cutoffs,
                             collection_size=policies["collection_size"])
    ranking, release_qrels = _ranking(qrels, run, ties=ties, score_precision=score_precision,
                                      depth=depth, topics=topics, duplicates=duplicates,
                                      seed=seed, warn=warn, threads=threads)
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


def _checked(measures: Any, *, relevance_level: Any, judged_only: bool, depth: Any,
             topics: Any, ties: Any, score_precision: Any, seed: Any, recall_cutoffs: Any,
             collection_size: Any) -> tuple[list[Measure], dict[str, Any]]:
    """:func:`evaluate`'s arguments checked: the measures, and the policies (the seed
    drawn if None)."""
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
    policies = dict(relevance_level=float(relevance_level), judged_only=bool(judged_only),
                    depth=depth, topics=topics, ties=ties, score_precision=score_precision,
                    seed=_resolve_seed(seed), recall_cutoffs=recall_cutoffs,
                    collection_size=int(collection_size))
    return measure_list, policies


def evaluate_tie_bounds(qrels: Any, run: Any,
                        measures: Union[str, Measure, Iterable[Union[str, Measure]]], *,
                        relevance_level: float = 1, judged_only: bool = False,
                        depth: Optional[int] = None, topics: TopicPolicy = "both",
                        score_precision: ScorePrecision = "float64",
                        duplicates: DuplicatePolicy = "error", warn: bool = True,
                        threads: Optional[int] = None, recall_cutoffs: RecallCutoffs = "nearest",
                        collection_size: int = 0) -> TieBounds:
    """How far the order inside groups of equal scores can move each measure: the run
    evaluated with every group in its best order (``ties="optimistic"``) and in its
    worst (``"pessimistic"``), read and ranked once.

    Parameters
    ----------
    qrels, run, measures
        As in :func:`evaluate` (graded qrels and ranked measures).
    relevance_level, judged_only, depth, topics, score_precision, duplicates, warn, \
threads, recall_cutoffs, collection_size
        The policies of :func:`evaluate`, with the same defaults (trec_eval's).

    Returns
    -------
    TieBounds
        ``optimistic`` and ``pessimistic`` evaluations; ``summary()``: per measure, the
        topics the ties move and the mean and largest spread.

    Raises
    ------
    InputError
        A bad input or policy, or judgments other than graded qrels.

    Examples
    --------
    >>> bounds = evaluate_tie_bounds({"q1": {"a": 1, "b": 0}}, {"q1": {"a": 0.5, "b": 0.5}},
    ...                              ["recip_rank", "P_2"])
    >>> bounds.pessimistic.means["recip_rank"], bounds.optimistic.means["recip_rank"]
    (0.5, 1.0)
    >>> bounds.summary()["recip_rank"]
    {'topics_moved': 1, 'mean_spread': 0.5, 'max_spread': 0.5}
    """
    measure_list, policies = _checked(measures, relevance_level=relevance_level,
                                      judged_only=judged_only, depth=depth, topics=topics,
                                      ties="optimistic", score_precision=score_precision,
                                      seed=0, recall_cutoffs=recall_cutoffs,
                                      collection_size=collection_size)
    if kind_of(qrels) is not None or _kind_to_load(measure_list) is not None:
        raise InputError("tie bounds are computed for graded qrels and ranked measures only")
    best, release_qrels = _ranking(qrels, run, ties="optimistic", score_precision=score_precision,
                                   depth=depth, topics=topics, duplicates=duplicates, seed=0,
                                   warn=warn, threads=threads)
    worst = dataclasses.replace(
        best, _everything=ordered_within_ties(best._everything, best=False),
        policies=dict(best.policies, ties="pessimistic"))
    try:
        return TieBounds(optimistic=_measured(best, measure_list, policies, threads),
                         pessimistic=_measured(worst, measure_list,
                                               dict(policies, ties="pessimistic"), threads))
    finally:
        del best, worst
        release_qrels()


def _check_computable(measure_list: list[Measure], policies: dict[str, Any]) -> None:
    for measure in measure_list:
        family = measure.spec
        if family.input != "ranking":
            kind = kind_for_input(family.input)
            source = f" ({kind.source})" if kind is not None else ""
            raise InputError(f"measure {measure.name!r} needs {family.input.replace('_', ' ')}"
                             f"{source}, not qrels")
        if policies["ties"] == "average" and family.ordered:
            raise InputError(
                f"measure {measure.name!r} is not defined under ties='average' (it depends "
                "on the order within groups of equal scores); choose another tie rule, "
                "or ties='expected'" + (" (its exact expectation over those orders)"
                                        if family.expected_ties else ""))
        if policies["ties"] == "expected" and family.ordered and not family.expected_ties:
            raise InputError(
                f"measure {measure.name!r} has no exact expectation over the orders within "
                "groups of equal scores in cumgain (ties='expected': "
                f"{', '.join(expected_tie_families())} and the measures linear in the "
                "ranking); choose another tie rule, or ties='optimistic' and "
                "'pessimistic' for its bounds")


def _kind_to_load(measure_list: list[Measure]) -> Optional[JudgmentKind]:
    """The judgment kind every measure needs, where it can read qrels itself (subtopics
    from a qrels file or rows with an iteration field, as ndeval and ir_measures read
    them); else None."""
    inputs = {measure.spec.input for measure in measure_list}
    if len(inputs) != 1 or "ranking" in inputs:
        return None
    kind = kind_for_input(inputs.pop())
    return kind if kind is not None and kind.load is not None else None


def _loaded(kind: JudgmentKind, qrels: Any, measure: Measure) -> Any:
    """``qrels`` read as judgments of ``kind`` (which ``measure`` needs)."""
    try:
        return kind.load(qrels)
    except InputError as error:
        raise InputError(f"measure {measure.name!r} needs {kind.input.replace('_', ' ')} "
                         f"({kind.source}), and these qrels are not: {error}") from None


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
