"""Evaluate dense score matrices: ``(n_queries, n_candidates)`` labels and scores, as
training and serving loops hold them (torchmetrics' retrieval metrics, scikit-learn's
``ndcg_score``), with every measure of the registry.

Row q is query q; its candidates are the row's columns, all of them judged with their
label (a negative label: judged non-relevant, never in the ideal, as a negative level in
qrels). Padding is left out with ``lengths`` (row q's first ``lengths[q]`` candidates
are real) or ``mask`` (true where a candidate is real). The values are those of
:func:`cumgain.evaluate` on the qrels and run the matrix stands for (topic ``str(q)``,
document ``str(j)``, ties broken by column order), bit for bit; topics are the rows,
in row order, and a row without a real candidate or a relevant one scores as trec_eval
scores a topic without relevant documents (0 for most measures).

Arrays: numpy, or anything with ``__dlpack__`` (torch, JAX, CuPy on the CPU) or
``__array__``, read without a copy when C-contiguous with scores float32/float64 and
labels int32/int64/float32/float64 (others are converted once).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Optional, Union

import numpy as np

from cgcore import _dense_rank
from cumgain.common.arrays import plain
from cumgain.engine.evaluator import RECALL_CUTOFFS, Ranking, _measured, _resolve_seed
from cumgain.engine.ranking_rules import _check_choice, _check_depth
from cumgain.engine.results import Evaluation
from cumgain.exceptions import InputError
from cumgain.common.limits import real_number, whole_number
from cumgain.measures import Measure, parse_measures
from cumgain.io.native.reader import auto_threads, check_threads
from cumgain.measures.ranked import RankedBatch
from cumgain.types import DenseTieRule, RecallCutoffs

#: the tie rules of a dense matrix (no document ids: the docno rules do not apply)
DENSE_TIES = {"input_order": _dense_rank.RULE_INPUT_ORDER, "random": _dense_rank.RULE_RANDOM,
              "average": _dense_rank.RULE_INPUT_ORDER}
ROWS_PER_THREAD = 4096      # a matrix is ranked in threads from twice this many rows
CHUNK_WORDS = 1 << 15       # each thread sorts its rows in chunks of this many candidates
                            # (256 KiB of packed words: in the cache, reused)
_SCORE_TYPES = (np.float32, np.float64)
_LABEL_TYPES = (np.int32, np.int64, np.float32, np.float64)


def as_matrix(x: Any, name: str) -> np.ndarray:
    """``x`` as a 2-D C-contiguous numpy array without a copy where possible (numpy,
    ``__dlpack__``, ``__array__``; a torch tensor detached, half precision widened to
    float32: :func:`cumgain.common.arrays.plain`); a 1-D array is one query."""
    x = plain(x)
    if not isinstance(x, np.ndarray) and hasattr(x, "__dlpack__"):
        try:
            x = np.from_dlpack(x)
        except (BufferError, TypeError, RuntimeError, ValueError):
            x = np.asarray(x)
    else:
        x = np.asarray(x)
    if x.ndim == 1:
        x = x[np.newaxis, :]
    if x.ndim != 2:
        raise InputError(f"{name} must be a (n_queries, n_candidates) matrix, got shape "
                         f"{x.shape}")
    if x.dtype == np.bool_ and name != "scores":
        return np.ascontiguousarray(x)      # a mask, or labels 0/1 (converted later)
    if not (np.issubdtype(x.dtype, np.integer) or np.issubdtype(x.dtype, np.floating)):
        raise InputError(f"{name} must hold numbers, got dtype {x.dtype}")
    return np.ascontiguousarray(x)


def _valid_parts(n_rows: int, n_columns: int, lengths: Any, mask: Any) -> tuple:
    """(lengths as int64 or None, mask as uint8 or None), checked."""
    if lengths is not None and mask is not None:
        raise InputError("give lengths or mask, not both")
    if lengths is not None:
        lengths = np.asarray(lengths)
        if lengths.shape != (n_rows,) or not np.issubdtype(lengths.dtype, np.integer):
            raise InputError(f"lengths must be {n_rows} whole numbers, one per query")
        lengths = np.ascontiguousarray(lengths, dtype=np.int64)
        if len(lengths) and (lengths.min() < 0 or lengths.max() > n_columns):
            q = int(np.flatnonzero((lengths < 0) | (lengths > n_columns))[0])
            raise InputError(f"lengths[{q}] = {lengths[q]} is not in [0, {n_columns}]")
    if mask is not None:
        mask = as_matrix(mask, "mask")
        if mask.shape != (n_rows, n_columns):
            raise InputError(f"mask must have the scores' shape {(n_rows, n_columns)}, got "
                             f"{mask.shape}")
        mask = np.ascontiguousarray(mask != 0).view(np.uint8)
    return lengths, mask


def rank_dense(labels: Any, scores: Any, *, lengths: Any = None, mask: Any = None,
               ties: DenseTieRule = "input_order", depth: Optional[int] = None,
               seed: Optional[int] = 0, threads: Optional[int] = None) -> Ranking:
    """The :class:`~cumgain.engine.evaluator.Ranking` of a dense matrix (see the module)."""
    _check_choice(ties, tuple(DENSE_TIES), "ties")
    _check_depth(depth)
    check_threads(threads)
    seed = _resolve_seed(seed)
    scores, labels = as_matrix(scores, "scores"), as_matrix(labels, "labels")
    if labels.shape != scores.shape:
        raise InputError(f"labels {labels.shape} and scores {scores.shape} must have one "
                         "shape")
    if scores.dtype not in _SCORE_TYPES:
        scores = scores.astype(np.float64)
    if labels.dtype not in _LABEL_TYPES:
        labels = labels.astype(np.float64)
    n_rows, n_columns = scores.shape
    lengths, mask = _valid_parts(n_rows, n_columns, lengths, mask)
    valid = _dense_rank.count_valid(n_rows, n_columns, lengths, mask)
    qrels_offsets = np.zeros(n_rows + 1, np.int64)
    np.cumsum(valid, out=qrels_offsets[1:])
    kept = valid if depth is None else np.minimum(valid, depth)
    offsets = np.zeros(n_rows + 1, np.int64)
    np.cumsum(kept, out=offsets[1:])
    levels = np.empty(offsets[-1], np.float64)
    judged = np.empty(offsets[-1], np.uint8)
    ranked_scores = np.empty(offsets[-1], np.float64) if ties == "average" else None
    in_place = lengths is None and mask is None and labels.dtype == np.float64
    qrels_levels = labels.reshape(-1) if in_place else np.empty(qrels_offsets[-1], np.float64)

    def rank(first: int, stop: int) -> int:
        """Rows [first, stop) in chunks through one scratch matrix of packed words
        (see _dense_rank.pack_rows), sorted by numpy (SIMD where the CPU has it; the
        GIL released), then finished in C; -1, or the first bad entry (flat index)."""
        chunk = max(1, min(stop - first, CHUNK_WORDS // max(n_columns, 1)))
        words = np.empty((chunk, n_columns), np.uint64)
        for start in range(first, stop, chunk):
            end = min(stop, start + chunk)
            bad = _dense_rank.pack_rows(scores, labels, lengths, mask, qrels_offsets,
                                        None if in_place else qrels_levels, words, start,
                                        end)
            if bad >= 0:
                return bad
            words[:end - start].sort(axis=1)
            _dense_rank.finish_rows(scores, labels, mask, words, offsets, qrels_offsets,
                                    levels, judged, ranked_scores, start, end,
                                    DENSE_TIES[ties], seed)
        return -1

    workers = min(auto_threads(threads), max(1, n_rows // ROWS_PER_THREAD))
    bounds = [n_rows * part // workers for part in range(workers + 1)]
    if workers > 1:
        with ThreadPoolExecutor(workers) as pool:
            found = list(pool.map(rank, bounds[:-1], bounds[1:]))
    else:
        found = [rank(0, n_rows)]
    bad = next((index for index in found if index >= 0), -1)
    if bad >= 0:
        q, j = divmod(bad, n_columns)
        what = "score is NaN" if np.isnan(scores[q, j]) else \
            f"label is {labels[q, j]} (it must be finite)"
        raise InputError(f"query {q} (row), candidate {j} (column): the {what}")
    everything = RankedBatch(offsets=offsets, levels=levels, judged=judged.view(np.bool_),
                             scores=ranked_scores, qrels_offsets=qrels_offsets,
                             qrels_levels=qrels_levels)
    policies = dict(depth=depth, topics="both", ties=ties, score_precision="float64",
                    seed=seed)
    return Ranking(topics=tuple(map(str, range(n_rows))), run_only_topics=(),
                   missing_topics=(), empty_qrels_topics=(), run_tag="", policies=policies,
                   _everything=everything, _chosen_index=np.arange(n_rows))


def evaluate_dense(labels: Any, scores: Any,
                   measures: Union[str, Measure, Iterable[Union[str, Measure]]], *,
                   lengths: Any = None, mask: Any = None, ties: DenseTieRule = "input_order",
                   relevance_level: float = 1, judged_only: bool = False,
                   depth: Optional[int] = None, seed: Optional[int] = 0,
                   threads: Optional[int] = None, recall_cutoffs: RecallCutoffs = "nearest",
                   collection_size: int = 0) -> Evaluation:
    """Evaluate a ``(n_queries, n_candidates)`` matrix of ``scores`` against ``labels``
    (relevance levels) with any measures of :func:`cumgain.evaluate`; one topic per row,
    in row order (``str(q)``), document ``str(j)`` per column.

    Parameters
    ----------
    labels : array_like, shape (n_queries, n_candidates)
        Relevance levels (numpy, torch, JAX or anything with ``__array__``); negative:
        judged non-relevant.
    scores : array_like, shape (n_queries, n_candidates)
        The scores, read in place when C-contiguous float32 or float64.
    measures : str, Measure or iterable of them
        As in :func:`cumgain.evaluate`.
    lengths : array_like of int, optional
        The real candidates of each row (the first ``lengths[q]``); padding left out.
    mask : array_like of bool, optional
        The real candidates, element by element (instead of ``lengths``).
    ties : {"input_order", "random", "average"}, default "input_order"
        Equal scores in column order, shuffled by ``seed``, or sharing their mean gain.
    relevance_level : float, default 1
        Binary measures count a label at this level or above relevant.
    judged_only : bool, default False
        Drop the candidates with a negative label, closing the gaps.
    depth : int, optional
        Keep the first ``depth`` candidates of each row after ranking.
    seed : int or None, default 0
        The seed of ``ties="random"``.
    threads : int, optional
        Threads the ranking may use (None: the available cores, at most 4).
    recall_cutoffs : {"nearest", "trec_eval9"}, default "nearest"
        As in :func:`cumgain.evaluate`.
    collection_size : int, default 0
        As in :func:`cumgain.evaluate` (``utility`` only).

    Returns
    -------
    Evaluation
        Per-row values and means.

    Raises
    ------
    InputError
        Shapes that differ, a NaN score, an unknown measure or policy.

    Examples
    --------
    >>> evaluate_dense([[2, 0, 1]], [[0.9, 0.8, 0.1]], ["P_2", "recip_rank"]).means
    {'P_2': 0.5, 'recip_rank': 1.0}
    """
    relevance_level = real_number(relevance_level, "relevance_level")
    if relevance_level < 0:
        raise InputError(f"relevance_level must be >= 0, got {relevance_level!r}")
    _check_choice(recall_cutoffs, RECALL_CUTOFFS, "recall_cutoffs")
    collection_size = whole_number(collection_size, "collection_size", low=0)
    measure_list = parse_measures(measures)
    ranking = rank_dense(labels, scores, lengths=lengths, mask=mask, ties=ties, depth=depth,
                         seed=seed, threads=threads)
    policies = dict(relevance_level=float(relevance_level), judged_only=bool(judged_only),
                    recall_cutoffs=recall_cutoffs, collection_size=int(collection_size),
                    **ranking.policies)
    return _measured(ranking, measure_list, policies, threads)
