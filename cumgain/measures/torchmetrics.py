"""torchmetrics' retrieval measures that cumgain had no family for: ``RetrievalFallOut``,
``RetrievalAUROC``, ``RetrievalMAP`` and ``RetrievalPrecision``, with torchmetrics 1.9's
definitions, parameters (``top_k=``, ``max_fpr=``, ``adaptive_k=``,
``empty_target_action=``) and defaults.

torchmetrics sees only the documents passed for a query, that is the retrieved ones: it
has no qrels. So here too every count is over the ranking the measure sees (after the
depth, -M, and ``judged_only=``), never over the qrels' unretrieved judgments:

* a document is relevant (torchmetrics' ``target`` 1) when judged at the relevance
  level or above (``rel=``, default the evaluation's, 1); every other retrieved document,
  judged below the level, unjudged or not in the qrels at all, is non-relevant (target 0);
* N = documents retrieved, found(k) = relevant ones in the top min(k, N),
  F = found(N) the relevant ones retrieved, N - F the non-relevant ones retrieved
  (fall-out's "all non-relevant": not trec-style judged non-relevant documents);
* a query without a relevant retrieved document (for FallOut: without a non-relevant
  one) takes the value of ``empty_target_action``: ``'neg'`` 0, ``'pos'`` 1, ``'skip'``
  left out of the mean (NaN per topic); the defaults are torchmetrics': ``'pos'`` for
  RetrievalFallOut, ``'neg'`` for the others.

What torchmetrics does that cumgain does not copy:

* **Scores <= 0.** torchmetrics' retrieval_average_precision and retrieval_precision
  first set the target of every document with a score <= 0 to 0 (non-relevant); here a
  document's relevance never depends on its score (runs with negative scores, such as
  log-probabilities, would otherwise score 0). The values agree for positive scores.
* **Ties.** torchmetrics picks the top k with ``torch.topk`` (fall-out: ``argsort``),
  whose order among equal scores is unspecified, and its AUROC counts a tied (relevant,
  non-relevant) pair inside the top k as 1/2. Here the evaluation's tie rule decides
  (``ties=``): the rules that order equal scores (trec_eval's docno descending, the
  default, ...) give every measure the value of that order, AUROC included (a tied pair
  counts 1 or 0 as ordered); ``ties="expected"`` gives the exact expectation over the
  orders within each group of equal scores, which for AUROC is torchmetrics' 1/2 per
  tied pair (and, where k cuts a group, the mean over which of its documents fall in
  the top k). The partial AUC (``max_fpr`` < 1) is not linear in the orders:
  torchmetrics draws a diagonal through a tied group, which is not the mean over its
  orders, so ``ties="expected"`` refuses it (as it refuses RetrievalMAP, a ratio);
  FallOut and RetrievalPrecision are linear in the ranking (``"average"`` gives the
  same).
* **Precision of the scores.** torchmetrics casts scores to float32 (and AUROC applies a
  sigmoid to scores outside [0, 1]), which can make distinct scores equal; here scores
  are float64 (``score_precision=``) and compared as they are.
* **All queries skipped.** With ``empty_target_action='skip'`` and no query left,
  torchmetrics returns 0.0; here the mean is NaN, as for any mean over no topic.
* ``'error'`` (torchmetrics raises for such a query) is not an ``empty_target_action``
  here.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from cgcore import _graded_extra as extra_kernels
from cgcore import _measures as kernels
from cumgain.exceptions import InputError
from cumgain.measures.base import Family, Measure, register
from cumgain.measures.batch import Batch, safe_ratio
from cumgain.measures.parse import PARAMS

SOURCE = "torchmetrics 1.9"
EMPTY_TARGET_VALUES = {"neg": 0.0, "pos": 1.0, "skip": math.nan}


def _read_top_k(value: Any, spelling: str) -> dict:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2 ** 53:
        raise InputError(f"measure {spelling!r}: top_k must be a whole number >= 1")
    return {"_top_k": value}


def _read_max_fpr(value: Any, spelling: str) -> dict:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or not 0 < value <= 1:
        raise InputError(f"measure {spelling!r}: max_fpr must be a number in (0, 1]")
    return {"params": (("max_fpr", float(value)),)}


def _read_adaptive_k(value: Any, spelling: str) -> dict:
    if not isinstance(value, bool):
        raise InputError(f"measure {spelling!r}: adaptive_k must be True or False")
    return {"params": (("adaptive_k", value),)}


def _read_empty_target_action(value: Any, spelling: str) -> dict:
    if value not in EMPTY_TARGET_VALUES:
        raise InputError(f"measure {spelling!r}: empty_target_action must be 'neg', 'pos' "
                         f"or 'skip', got {value!r}")
    return {"params": (("empty_target_action", value),)}


for _key, _reader in (("top_k", _read_top_k), ("max_fpr", _read_max_fpr),
                      ("adaptive_k", _read_adaptive_k),
                      ("empty_target_action", _read_empty_target_action)):
    if PARAMS.setdefault(_key, _reader) is not _reader:     # pragma: no cover
        raise RuntimeError(f"another module registered a reader for the parameter {_key!r}")


def _depths(batch: Batch, measure: Measure) -> np.ndarray:
    """Per topic, min(k, N) (N without a cut-off)."""
    retrieved = batch.num_retrieved(measure)
    return retrieved if measure.cutoff is None else np.minimum(retrieved, measure.cutoff)


def _found(batch: Batch, measure: Measure, depths: np.ndarray) -> np.ndarray:
    """found(depth) per topic (under ties="average"/"expected" its expectation)."""
    return kernels.relevant_in_top(batch.relevant(measure), batch.ranked(measure).offsets,
                                   np.ascontiguousarray(depths, dtype=np.int64))


def _relevant_retrieved(batch: Batch, measure: Measure) -> np.ndarray:
    """found(N) per topic, computed once per batch for the measures that share it."""
    ranked = batch.ranked(measure)
    return batch.cached(("found_retrieved", id(ranked), batch.level(measure)),
                        lambda: _found(batch, measure, batch.num_retrieved(measure)))


def _with_empty_targets(values: np.ndarray, empty: np.ndarray, measure: Measure,
                        default: str) -> np.ndarray:
    """``values``, with the topics in ``empty`` set by empty_target_action."""
    action = measure.param("empty_target_action", default)
    return np.where(empty, EMPTY_TARGET_VALUES[action], values)


def _fall_out(measures: list, batch: Batch) -> list:
    """(N_k - found(k)) / (N - F), N_k = min(k, N); 'pos' (1) when N - F = 0."""
    columns = []
    for measure in measures:
        retrieved = batch.num_retrieved(measure).astype(np.float64)
        depths = _depths(batch, measure)
        nonrelevant = retrieved - _relevant_retrieved(batch, measure)
        nonrelevant_top = depths - _found(batch, measure, depths)
        empty = nonrelevant < 0.5       # (a count; under tie means a sum of means)
        columns.append(_with_empty_targets(safe_ratio(nonrelevant_top, nonrelevant), empty,
                                           measure, "pos"))
    return columns


def _auroc(measures: list, batch: Batch) -> list:
    """ROC AUC of the top min(k, N) in the ranking's order; under ties="expected" its
    exact expectation over the orders within groups of equal scores, where a tied pair
    counts 1/2 (torchmetrics' binary_auroc), see the kernel."""
    columns = []
    for measure in measures:
        ranked = batch.ranked(measure)
        expected = batch.policies["ties"] == "expected"     # (the rules that keep scores)
        if expected and measure.param("max_fpr", 1.0) < 1.0:
            raise InputError(
                f"measure {measure.name!r} has no exact expectation over the orders within "
                "groups of equal scores in cumgain (the partial AUC is not linear in them: "
                "torchmetrics' diagonal through a tied group is not their mean); choose "
                "another tie rule, or ties='optimistic' and 'pessimistic' for its bounds")
        scores = ranked.scores if expected else np.zeros(len(ranked.levels))
        cutoff = measure.cutoff if measure.cutoff is not None else batch.full_depth(measure)
        values = extra_kernels.retrieval_auroc(
            batch.relevant_flags(measure), np.ascontiguousarray(scores, dtype=np.float64),
            ranked.offsets, max(cutoff, 1), measure.param("max_fpr", 1.0), expected)
        columns.append(_with_empty_targets(values, _no_relevant(batch, measure), measure,
                                           "neg"))
    return columns


def _no_relevant(batch: Batch, measure: Measure) -> np.ndarray:
    """Per topic, whether no retrieved document is relevant (torchmetrics' empty target)."""
    return _relevant_retrieved(batch, measure) < 0.5


def _average_precision(measures: list, batch: Batch) -> list:
    """(1 / found(k)) sum_{i <= k: rel(i)} found(i) / i; 0 when found(k) = 0."""
    columns = []
    for measure in measures:
        ranked = batch.ranked(measure)
        cutoff = measure.cutoff if measure.cutoff is not None else batch.full_depth(measure)
        sums = kernels.average_precision(batch.relevant(measure), ranked.offsets,
                                         np.ones(batch.n_topics), max(cutoff, 1))
        found = _found(batch, measure, _depths(batch, measure))
        columns.append(_with_empty_targets(safe_ratio(sums, found),
                                           _no_relevant(batch, measure), measure, "neg"))
    return columns


def _precision(measures: list, batch: Batch) -> list:
    """found(k) / k; k = N without a cut-off, min(k, N) with adaptive_k=True."""
    columns = []
    for measure in measures:
        retrieved = batch.num_retrieved(measure)
        if measure.cutoff is None:
            divisor = retrieved
        elif measure.param("adaptive_k", False):
            divisor = np.minimum(retrieved, measure.cutoff)
        else:
            divisor = np.full(batch.n_topics, measure.cutoff, dtype=np.int64)
        found = _found(batch, measure, _depths(batch, measure))
        columns.append(_with_empty_targets(safe_ratio(found, divisor.astype(np.float64)),
                                           _no_relevant(batch, measure), measure, "neg"))
    return columns


_PARAMS = ("top_k", "rel", "judged_only", "empty_target_action")
register(
    Family("FallOut", "(non-relevant in the top min(k, N)) / (non-relevant retrieved), "
           "the query's retrieved documents its universe (not the qrels); 1 for a query "
           "without a non-relevant one (empty_target_action='pos')",
           _fall_out, ir_names=("FallOut", "RetrievalFallOut"), ir_params=_PARAMS,
           at="cutoff", aggregate="mean_defined",
           source=f"{SOURCE} RetrievalFallOut (retrieval_fall_out)"),
    Family("AUROC", "ROC AUC of the top min(k, N) (a tied (relevant, non-relevant) "
           "pair counting 1/2 under ties='expected', as in torchmetrics); max_fpr < 1: "
           "the McClish-standardized partial AUC over [0, max_fpr] (refused under "
           "ties='expected'); 0 when the top k lacks a relevant or a "
           "non-relevant document",
           _auroc, ir_names=("AUROC", "RetrievalAUROC"), ir_params=_PARAMS + ("max_fpr",),
           at="cutoff", ordered=True, expected_ties=True, aggregate="mean_defined",
           source=f"{SOURCE} RetrievalAUROC (retrieval_auroc, binary_auroc)"),
    Family("RetrievalMAP", "AP over the top min(k, N) divided by the relevant documents "
           "found there: (1 / found(k)) sum_{i <= k: rel(i)} found(i) / i (not by R); 0 "
           "when found(k) = 0",
           _average_precision, ir_names=("RetrievalMAP",), ir_params=_PARAMS, at="cutoff",
           ordered=True, aggregate="mean_defined",
           source=f"{SOURCE} RetrievalMAP (retrieval_average_precision)"),
    Family("RetrievalPrecision", "found(k) / k (k = N without a cut-off; min(k, N) with "
           "adaptive_k=True)",
           _precision, ir_names=("RetrievalPrecision",), ir_params=_PARAMS + ("adaptive_k",),
           at="cutoff", aggregate="mean_defined",
           source=f"{SOURCE} RetrievalPrecision (retrieval_precision)"),
)
