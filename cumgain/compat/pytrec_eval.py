"""A drop-in for pytrec_eval (pytrec-eval-terrier): ``import cumgain.compat.pytrec_eval
as pytrec_eval`` and existing code (BEIR, MTEB, PyTerrier style) runs unchanged.

Same API, output shape, measure names and per-topic values, for all 34 of
pytrec_eval's ``supported_measures``: it evaluates like the trec_eval 9.0.8 that
pytrec_eval embeds (scores compared as 32-bit floats, ties by docno descending,
9.0.8's recall cut-offs for iprec_at_recall and 11pt_avg), only topics in both run and
qrels, qrels topics with no judgments dropped. Measure names are read as pytrec_eval
reads them: nicknames expanded, then the parameters of each measure merged
(``{"P_5", "P.10"}`` gives P_5 and P_10; ``{"P", "P_5"}`` gives P_5 only, as in
pytrec_eval); ``ndcg_cut_20,4`` is two cut-offs. ``relstring`` and ``runid`` are 0.0
per topic, as pytrec_eval returns them (it cannot return text); ``gm_map`` and
``gm_bpref`` are per topic the log of the floored value; measures with a list of
parameters (``utility.2,-1,0,0``, ``set_F.0.5``, ``11pt_avg.0.2,0.8``) are named without
it (``utility``), as pytrec_eval names them. Differences, all in the
direction of fewer surprises:

* a malformed measure string raises :class:`cumgain.InputError` (a ``ValueError``;
  pytrec_eval aborts the process on most); gain tables such as ``ndcg.1=3,2=9`` and
  trec_eval 10.0's measures (``dcg``, ``rbp``, ``unj``, ...) work;
* float relevance levels are accepted (pytrec_eval requires int);
* ``utility.2,1,0,0`` is trec_eval's utility with those four coefficients (pytrec_eval
  merges a measure's parameters as a set, reads three coefficients, prints "improper
  number of coefficients" and returns 0.0);
* a topic whose judgments are all negative is evaluated (all measures 0) instead of
  crashing the process;
* where trec_eval divides 0 by 0 (iprec_at_recall, 11pt_avg and Rprec_mult of a topic
  that ``judged_docs_only_flag`` leaves with no document) the value is 0, not NaN;
* topics left out are announced with a :class:`cumgain.engine.evaluator.TopicsWarning`
  only when ``warn=True`` is passed to ``evaluate`` (pytrec_eval is silent).
"""
from __future__ import annotations

import collections
import re
import sys
from typing import Dict, FrozenSet, Iterable, List, Mapping, Sequence, Union

import numpy as np

from cumgain.common.version import __version__ as _cumgain_version
from cumgain.engine.evaluator import evaluate as _evaluate
from cumgain.exceptions import InputError
from cumgain.measures import FAMILIES, NICKNAMES, TREC_NAMES, Measure, parse_measures
from cumgain.measures.trec_names import NEW_IN_10
from cumgain.io.native.reader import PreparedQrels

__all__ = ["RelevanceEvaluator", "compute_aggregated_measure", "install", "parse_qrel",
           "parse_run", "supported_measures", "supported_nicknames", "uninstall"]

#: The trec_eval measure names this drop-in computes: pytrec_eval's 34 and trec_eval
#: 10.0's dcg, ideal_dcg, rbp, rbp_resid, unj and yaap.
supported_measures: FrozenSet[str] = frozenset(name for name in TREC_NAMES
                               if FAMILIES[name].input == "ranking")

#: pytrec_eval's nicknames (trec_eval 9.0.8's members) for qrels judgments.
supported_nicknames: Dict[str, FrozenSet[str]] = {
    name: frozenset(m for m in NICKNAMES[name] if m not in NEW_IN_10)
    for name in ("official", "set", "all_trec")}

#: What ``pytrec_eval.__version__`` gives with this drop-in installed (ir_measures' provider
#: checks that the attribute exists).
__version__ = f"cumgain-{_cumgain_version}"

_PARAMETERS = r"{}[\._]([0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*)"


def _expand(measures: Iterable[str]) -> List[str]:
    """pytrec_eval's reading of a measure set: nicknames expanded, then each measure's
    cut-offs merged into one ``name.p1,p2`` (spellings it cannot read, like gain
    tables, and the ordered parameters of ``utility`` and ``set_F``, are kept as they
    are for cumgain's parser)."""
    if isinstance(measures, str):
        raise InputError("measures must be a collection of names, e.g. {'map', 'ndcg'}")
    names: List[str] = []
    for measure in measures:
        if not isinstance(measure, str):
            raise InputError(f"a measure name must be a string, got {measure!r}")
        names.extend(sorted(supported_nicknames[measure]) if measure in supported_nicknames
                     else [measure])
    merged: Dict[str, set] = {}
    others: List[str] = []
    for name in names:
        if name in supported_measures:
            merged.setdefault(name, set())
            continue
        for base in supported_measures:
            if FAMILIES[base].trec == "floats":     # an ordered list (utility.2,1,0,0's
                continue                            # four coefficients), never merged
            match = re.fullmatch(_PARAMETERS.format(re.escape(base)), name)
            if match is not None:
                merged.setdefault(base, set()).update(match.group(1).split(","))
                break
        else:
            others.append(name)
    spellings = [f"{base}.{','.join(sorted(params))}" if params else base
                 for base, params in merged.items()]
    return spellings + others


class RelevanceEvaluator:
    """``RelevanceEvaluator(qrel, measures, relevance_level=1, judged_docs_only_flag=False)``.

    ``evaluate(run)`` returns ``{qid: {measure: value}}`` for the topics in both the
    run and the qrels, with trec_eval's measure names (``ndcg_cut_10``, ``P_5``, ...).
    As in pytrec_eval, the qrels are read once, here, and each ``evaluate`` only reads
    and ranks the run. (A run the native reader does not take, e.g. one with numpy
    scores, goes to the reference reader, which reads the qrels dicts again: keep them
    unchanged while the evaluator is in use.)
    """

    def __init__(self, query_relevance: Mapping[str, Mapping[str, float]],
                 measures: Iterable[str],
                 relevance_level: int = 1, judged_docs_only_flag: bool = False):
        if not isinstance(query_relevance, Mapping):
            raise InputError("query_relevance must be a dict {qid: {docid: relevance}}")
        spellings = _expand(measures)
        self._measures = parse_measures(spellings) if spellings else []
        for measure in self._measures:
            if measure.spec.input != "ranking":
                raise InputError(f"unsupported measure {measure.name!r}: it needs "
                                 f"{measure.spec.input.replace('_', ' ')}, not qrels")
        # pytrec_eval drops topics without judgments, and reads the qrels once, here
        self._qrels = PreparedQrels(
            {qid: docs for qid, docs in query_relevance.items() if len(docs) > 0})
        self._relevance_level = relevance_level
        self._judged_only = bool(judged_docs_only_flag)

    def evaluate(self, scores: Mapping[str, Mapping[str, float]], *, warn: bool = False
                 ) -> Dict[str, Dict[str, float]]:
        """Evaluate a run ``{qid: {docid: score}}`` (an empty run gives ``{}``)."""
        if not isinstance(scores, Mapping):
            raise InputError("the run must be a dict {qid: {docid: score}}")
        if not scores:
            return {}
        # no measure: the topics, no values
        measures: Sequence[Union[str, Measure]] = self._measures or ["num_q"]
        result = _evaluate(self._qrels, scores if type(scores) is dict else dict(scores),
                           measures, relevance_level=self._relevance_level,
                           judged_only=self._judged_only, score_precision="float32",
                           recall_cutoffs="trec_eval9", ties="docno_desc", topics="both",
                           warn=warn, seed=0)  # unused by these ties: no random seed to draw
        if not self._measures:
            return {topic: {} for topic in result.topics}
        for measure in self._measures:
            if measure.kind == "text":       # pytrec_eval returns text measures as 0.0
                result.values[measure.name] = np.zeros(len(result.topics))
        per_topic = result.per_topic()
        renamed = {m.name: m.family for m in self._measures
                   if m.spec.trec == "floats" and m.name != m.family}
        if renamed:     # pytrec_eval names utility.2,-1,0,0 and set_F.0.5 without parameters
            for values in per_topic.values():
                for name, family in renamed.items():
                    values[family] = values.pop(name)
        return per_topic


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


_REAL = "_cumgain_real_pytrec_eval"     # where install() keeps a pytrec_eval imported before


def install() -> None:
    """Make ``import pytrec_eval`` give this drop-in everywhere in this process (its
    ``sys.modules`` entry), so that tools that import pytrec_eval themselves (BEIR's
    ``EvaluateRetrieval.evaluate``, MTEB's retrieval evaluator) run on cumgain without
    a change to their code. Call it before importing them: a module that has already
    imported pytrec_eval keeps the one it has. :func:`uninstall` undoes it."""
    current = sys.modules.get("pytrec_eval")
    if current is not None and current is not sys.modules[__name__]:
        sys.modules[_REAL] = current
    sys.modules["pytrec_eval"] = sys.modules[__name__]


def uninstall() -> None:
    """Undo :func:`install`: ``import pytrec_eval`` gives the real one again (the one
    imported before, if any; else it is imported anew)."""
    if sys.modules.get("pytrec_eval") is sys.modules[__name__]:
        del sys.modules["pytrec_eval"]
    real = sys.modules.pop(_REAL, None)
    if real is not None:
        sys.modules["pytrec_eval"] = real
