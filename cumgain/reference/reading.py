"""The pure-Python twin of the native reader, as a test oracle: qrels and runs read by
the reference reader (:func:`read_qrels`, :func:`read_run`, :func:`load_qrels`,
:func:`load_run`: plain Python and numpy, each rule of :mod:`cumgain.trec_io` written
out) and ranked and joined with numpy (:func:`reference_ranking`), where the
production path reads, ranks and joins in C (:mod:`cumgain.io.native.reader`). Nothing a user
calls goes through it: the tests evaluate the same inputs both ways and require the
same per-topic values, bit for bit, and the same errors.

>>> import cumgain
>>> qrels, run = {"q1": {"a": 2, "b": 0}}, {"q1": {"a": 0.1, "b": 0.9}}
>>> evaluate(qrels, run, ["P_1"]).means == cumgain.evaluate(qrels, run, ["P_1"]).means
True
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from cumgain.engine.evaluator import READER, ReadInput, Ranking
from cumgain.engine.ranking_rules import _docno_ids, compared_scores, ranked_order
from cumgain.engine.results import Evaluation
from cumgain.engine.evaluator import evaluate as _evaluate
from cumgain.engine.evaluator import rank as _rank_native
from cumgain.measures.ranked import RankedBatch, gather, topic_of_rows
from cumgain.trec_io import Qrels, Run
from cumgain.trec_io import _load_qrels_python as load_qrels
from cumgain.trec_io import _load_run_python as load_run
from cumgain.trec_io import _read_qrels_python as read_qrels
from cumgain.trec_io import _read_run_python as read_run
from cumgain.types import DuplicatePolicy, ScorePrecision, TieRule

__all__ = ["evaluate", "load_qrels", "load_run", "rank", "read_qrels", "read_reference",
           "read_run", "reference_ranking", "using_reference_reader"]


def reference_ranking(qrels: Qrels, run: Run, topics: Sequence[str], *, ties: TieRule,
                      score_precision: ScorePrecision, seed: int,
                      depth: Optional[int]) -> RankedBatch:
    """The rankings of ``topics`` (each empty where the run or the qrels lack it):
    join, rank and cut with numpy and cgcore, the native reader's twin."""
    run_index = {topic: i for i, topic in enumerate(run.topics)}
    qrels_index = {topic: i for i, topic in enumerate(qrels.topics)}
    run_rows, run_offsets = gather(
        run.offsets, np.array([run_index.get(t, -1) for t in topics], dtype=np.int64))
    qrels_rows, qrels_offsets = gather(
        qrels.offsets, np.array([qrels_index.get(t, -1) for t in topics], dtype=np.int64))

    doc_ids, n_docs = _docno_ids(np.concatenate([run.docnos[run_rows],
                                                 qrels.docnos[qrels_rows]]))
    run_docs, qrels_docs = doc_ids[:len(run_rows)], doc_ids[len(run_rows):]

    # Join: each run row's judgment, by sorted (topic, docno) keys.
    qrels_keys = topic_of_rows(qrels_offsets) * n_docs + qrels_docs
    key_order = np.argsort(qrels_keys, kind="stable")
    sorted_keys = qrels_keys[key_order]
    run_keys = topic_of_rows(run_offsets) * n_docs + run_docs
    found_at = np.searchsorted(sorted_keys, run_keys)
    found_at = np.minimum(found_at, max(len(sorted_keys) - 1, 0))
    in_qrels = (sorted_keys[found_at] == run_keys) if len(sorted_keys) else \
        np.zeros(len(run_keys), dtype=bool)
    qrels_levels = qrels.relevance[qrels_rows].astype(np.float64)
    levels = np.where(in_qrels, qrels_levels[key_order][found_at] if len(sorted_keys) else 0.0,
                      0.0)
    judged = in_qrels & (levels >= 0)     # a negative level stays: pooled, not judged

    scores = compared_scores(run.scores[run_rows], score_precision)
    offsets, kept = ranked_order(scores, run_docs, run_offsets, ties=ties, seed=seed,
                                 depth=depth)
    return RankedBatch(offsets=offsets, levels=levels[kept],
                   judged=judged[kept], scores=scores[kept],
                   qrels_offsets=qrels_offsets, qrels_levels=qrels_levels)


def read_reference(qrels: Any, run: Any, *, ties: TieRule, score_precision: ScorePrecision,
                   seed: int, depth: Optional[int], duplicates: DuplicatePolicy,
                   threads: Optional[int]) -> ReadInput:
    """The run and its judgments read by the reference reader
    (:func:`cumgain.trec_io.load_qrels`, :func:`~cumgain.trec_io.load_run`), in the
    form the evaluator takes (:class:`cumgain.engine.evaluator.ReadInput`); ``threads`` is
    ignored."""
    qrels = load_qrels(_unprepared(qrels), duplicates=duplicates)
    run = load_run(run, duplicates=duplicates)
    judged_counts = np.diff(qrels.offsets)
    empty = tuple(t for t, n in zip(qrels.topics, judged_counts.tolist()) if n == 0)
    judged = set(qrels.topics) - set(empty)

    def rank_chosen(chosen: Sequence[str]) -> tuple[RankedBatch, np.ndarray]:
        return (reference_ranking(qrels, run, chosen, ties=ties, score_precision=score_precision,
                                  seed=seed, depth=depth), np.arange(len(chosen)))

    def unused() -> RankedBatch:
        raise AssertionError("the reference reader never takes the same-topics path")

    return ReadInput(run.topics, run.tag, run.tags_agree, empty,
                     lambda: (judged, tuple(sorted(judged))), False, unused, rank_chosen,
                     lambda: None)


def _unprepared(qrels: Any) -> Any:
    """Prepared judgments (cumgain.prepare_qrels) as what they were prepared from."""
    from cumgain.io.native.reader import PreparedQrels, PreparedQrelsFile, PreparedQrelsTable
    if isinstance(qrels, PreparedQrels):
        return dict(qrels)
    if isinstance(qrels, PreparedQrelsFile):
        return qrels.source
    if isinstance(qrels, PreparedQrelsTable):
        from cumgain.io import columns
        return columns.Renamed(qrels.table, qrels.names) if qrels.names else qrels.table
    return qrels


@contextlib.contextmanager
def using_reference_reader() -> Iterator[None]:
    """Inside, :func:`cumgain.evaluate` and :func:`cumgain.rank` read with the
    reference reader (in this thread and the tasks it starts)."""
    token = READER.set(read_reference)
    try:
        yield
    finally:
        READER.reset(token)


def evaluate(qrels: Any, run: Any, measures: Any, **options: Any) -> Evaluation:
    """:func:`cumgain.evaluate` with the reference reader."""
    with using_reference_reader():
        return _evaluate(qrels, run, measures, **options)


def rank(qrels: Any, run: Any, **options: Any) -> Ranking:
    """:func:`cumgain.rank` with the reference reader."""
    with using_reference_reader():
        return _rank_native(qrels, run, **options)
