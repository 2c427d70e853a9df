"""A drop-in for pytrec_eval (pytrec-eval-terrier): ``import cumgain.compat.pytrec_eval
as pytrec_eval`` and existing code (BEIR, MTEB, PyTerrier style) runs unchanged.

Same API, output shape and measure names; the same numbers, because it ranks like
the trec_eval 9.0.8 that pytrec_eval embeds: scores compared as 32-bit floats, ties
by docno descending, only topics in both run and qrels, qrels topics with no
judgments dropped. Differences, all in the direction of fewer surprises:

* a malformed measure string raises :class:`cumgain.InputError` (pytrec_eval aborts
  the process); gain tables such as ``ndcg.1=3,2=9`` work (pytrec_eval crashes);
* float relevance levels are accepted (pytrec_eval requires int);
* a topic whose judgments are all negative is evaluated (all measures 0) instead of
  crashing the process;
* topics left out are announced with a :class:`cumgain.evaluator.TopicsWarning`
  only when ``warn=True`` is passed to ``evaluate`` (pytrec_eval is silent).
"""
from __future__ import annotations

import collections
from typing import Dict, Iterable, List, Mapping

import numpy as np

from cumgain.evaluator import evaluate as _evaluate
from cumgain.exceptions import InputError
from cumgain.measures import TREC_NAMES, parse_measures
from cumgain.native import PreparedQrels

__all__ = ["RelevanceEvaluator", "compute_aggregated_measure", "parse_qrel", "parse_run",
           "supported_measures", "supported_nicknames"]

#: The trec_eval measure names this drop-in computes.
supported_measures = frozenset(TREC_NAMES)

# trec_eval's nicknames, restricted to the measures supported here.
_NICKNAMES = {
    "official": ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
                 "recip_rank", "P"),
    "all_trec": ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
                 "recip_rank", "P", "recall", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut",
                 "map_cut", "success"),
}
supported_nicknames = frozenset(_NICKNAMES)


def _expand(measures: Iterable[str]) -> List[str]:
    if isinstance(measures, str):
        raise InputError("measures must be a collection of names, e.g. {'map', 'ndcg'}")
    names: List[str] = []
    for measure in measures:
        names.extend(_NICKNAMES.get(measure, (measure,)))
    for name in names:
        family = name.partition(".")[0]
        if family not in supported_measures and \
                family.rsplit("_", 1)[0] not in supported_measures:
            raise InputError(f"unsupported measure {name!r}; supported: "
                             f"{sorted(supported_measures)}")
    return names


class RelevanceEvaluator:
    """``RelevanceEvaluator(qrel, measures, relevance_level=1, judged_docs_only_flag=False)``.

    ``evaluate(run)`` returns ``{qid: {measure: value}}`` for the topics in both the
    run and the qrels, with trec_eval's measure names (``ndcg_cut_10``, ``P_5``, ...).
    As in pytrec_eval, the qrels are read once, here, and each ``evaluate`` only reads
    and ranks the run. (A run the native reader does not take, e.g. one with numpy
    scores, goes to the reference reader, which reads the qrels dicts again: keep them
    unchanged while the evaluator is in use.)
    """

    def __init__(self, query_relevance: Mapping, measures: Iterable[str],
                 relevance_level: int = 1, judged_docs_only_flag: bool = False):
        if not isinstance(query_relevance, Mapping):
            raise InputError("query_relevance must be a dict {qid: {docid: relevance}}")
        self._measures = parse_measures(_expand(measures))
        # pytrec_eval drops topics without judgments, and reads the qrels once, here
        self._qrels = PreparedQrels(
            {qid: docs for qid, docs in query_relevance.items() if len(docs) > 0})
        self._relevance_level = relevance_level
        self._judged_only = bool(judged_docs_only_flag)

    def evaluate(self, scores: Mapping, *, warn: bool = False) -> Dict[str, Dict[str, float]]:
        """Evaluate a run ``{qid: {docid: score}}``."""
        if not isinstance(scores, Mapping):
            raise InputError("the run must be a dict {qid: {docid: score}}")
        result = _evaluate(self._qrels, scores if type(scores) is dict else dict(scores),
                           [m.name for m in self._measures],
                           relevance_level=self._relevance_level,
                           judged_only=self._judged_only, score_precision="float32",
                           ties="docno_desc", topics="both", warn=warn,
                           seed=0)  # unused by these ties: no random seed to draw
        return result.per_topic()


def compute_aggregated_measure(measure: str, values: List[float]) -> float:
    """Aggregate per-topic values like pytrec_eval: sums for ``num_*``, the geometric
    mean for ``gm_*`` (whose per-topic values are logs), the arithmetic mean otherwise."""
    if measure.startswith("num_"):
        return float(np.sum(values))
    if measure.startswith("gm_"):
        return float(np.exp(np.sum(values) / len(values)))
    return float(np.mean(values))


def parse_run(f_run: Iterable[str]) -> Dict[str, Dict[str, float]]:
    """Lines ``qid Q0 docid rank score tag`` to ``{qid: {docid: score}}``."""
    run: Dict[str, Dict[str, float]] = collections.defaultdict(dict)
    for number, line in enumerate(f_run, 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) < 6:
            raise InputError(f"run line {number}: expected 6 fields, got {len(fields)}")
        query_id, _, doc_id, _, score = fields[:5]
        if doc_id in run[query_id]:
            raise InputError(f"run line {number}: duplicate document {doc_id} in topic {query_id}")
        try:
            run[query_id][doc_id] = float(score)
        except ValueError:
            raise InputError(f"run line {number}: score {score!r} is not a number") from None
    return run


def parse_qrel(f_qrel: Iterable[str]) -> Dict[str, Dict[str, int]]:
    """Lines ``qid 0 docid relevance`` to ``{qid: {docid: relevance}}``."""
    qrel: Dict[str, Dict[str, int]] = collections.defaultdict(dict)
    for number, line in enumerate(f_qrel, 1):
        fields = line.split()
        if len(fields) != 4:
            raise InputError(f"qrels line {number}: expected 4 fields, got {len(fields)}")
        query_id, _, doc_id, relevance = fields
        if doc_id in qrel[query_id]:
            raise InputError(
                f"qrels line {number}: duplicate document {doc_id} in topic {query_id}")
        try:
            value = float(relevance)
        except ValueError:
            raise InputError(f"qrels line {number}: relevance {relevance!r} is not a number") \
                from None
        qrel[query_id][doc_id] = int(value) if value.is_integer() else value
    return qrel
