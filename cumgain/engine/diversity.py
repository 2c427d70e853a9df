"""Subtopic judgments and the novelty and diversity measures of the TREC Web track's
ndeval (``ERR_IA``, ``nERR_IA``, ``alpha_DCG``, ``alpha_nDCG``, ``NRBP``, ``nNRBP``,
``AP_IA``, ``P_IA``, ``StRecall``: ir_measures' names for ndeval's ``ERR-IA``,
``nERR-IA``, ``alpha-DCG``, ``alpha-nDCG``, ``NRBP``, ``nNRBP``, ``MAP-IA``, ``P-IA``,
``strec``).

:func:`load_subtopics` reads the judgments into a :class:`Subtopics`; pass that to
:func:`cumgain.evaluate` as the qrels (it calls :func:`evaluate_subtopics`):

>>> import cumgain
>>> judgments = load_subtopics({"q1": {"1": {"a": 1, "b": 0}, "2": {"b": 1, "c": 1}}})
>>> result = cumgain.evaluate(judgments, {"q1": {"a": 3, "b": 2, "x": 1}},
...                           ["alpha_nDCG@2", "StRecall@2", "P_IA@2"])
>>> result.means["StRecall@2"], result.means["P_IA@2"]
(1.0, 0.5)

Judgments
---------
ndeval's qrels: a line ``qid subtopic docno rel`` says whether document ``docno`` is
relevant (``rel`` >= the relevance level, 1 unless ``rel=`` or ``relevance_level=``
says otherwise) to subtopic ``subtopic`` of topic ``qid``. A document may be judged for
several subtopics of a topic; a document judged for none is *unjudged*.

* **Files** follow :mod:`cumgain.trec_io`'s rules (UTF-8, gzip, ``"-"`` for standard
  input, ``#`` comments, errors naming file and line): exactly 4 fields; ``rel`` a
  finite number (``2``, ``0.5``, ``-1``); a blank line is an error. *Differences from
  ndeval*, which reads topic, subtopic and judgment as natural numbers and stops on
  anything else: here ids are any strings (``"01"`` and ``"1"`` are two topics, where
  ndeval reads one), and a level may be fractional or negative (below any relevance
  level: judged, not relevant, as pyndeval reads it).
* **Dicts**: ``{qid: {subtopic: {docno: rel}}}``, ids converted with ``str``.
* **DataFrames**: columns ``query_id``, ``doc_id``, ``relevance`` and the subtopic in
  ``iteration`` (ir_measures' qrels column, which its pyndeval provider reads as the
  subtopic) or ``subtopic`` (one of the two); other columns are ignored.

The same (topic, subtopic, document) twice is an error naming both lines (ndeval and
pyndeval count such a document twice in the subtopic's number of relevant documents).
A topic without judgments (``{"q": {}}``) is not evaluated and is listed in
:attr:`~cumgain.engine.evaluator.Evaluation.empty_qrels_topics`.

Subtopics are taken, within a topic, in the order they first appear in the input, all
topics together: the order pyndeval gives them (its ``_coerce_qrels``), which fixes the
order in which a document's gains are summed. ndeval orders them by number; the two
agree when the subtopic numbers first appear in increasing order, as in TREC's files,
and otherwise can differ in the last bit.

What is computed (ndeval.c 4.5, the version pyndeval 0.0.8 bundles)
-------------------------------------------------------------------
Per topic, with S the number of its subtopics that have a relevant document, the gain of
the document at rank i is g(i) = sum over the subtopics s it is relevant to of
(1 - alpha)^(number of documents relevant to s above rank i) (0 for a document relevant
to nothing or unjudged), and the "ideal ideal" gain I(i) = S (1 - alpha)^(i-1):

* ``alpha_DCG@k`` = sum_{i<=k} g(i)/log2(i+1) / sum_{i<=k} I(i)/log2(i+1) (ndeval's
  "collection-independent normalisation"; ndeval's discount is log(2)/log(i+1));
* ``alpha_nDCG@k`` = alpha_DCG@k / alpha_DCG@k of the ideal ranking;
* ``ERR_IA@k`` = sum_{i<=k} g(i)/i / sum_{i<=k} I(i)/i, ``nERR_IA@k`` likewise divided
  by the ideal's (alpha = 0.5: ir_measures gives ERR_IA no alpha);
* ``NRBP`` = (1 - (1 - alpha) beta) / S * sum_i g(i) beta^(i-1) over the whole ranking,
  ``nNRBP`` = NRBP / NRBP of the ideal ranking;
* ``AP_IA`` = (1/S) sum_s AP_s, AP_s = (1/R_s) sum over the ranks i of documents
  relevant to s of (documents relevant to s in the top i) / i, R_s the documents
  judged relevant to s; over the whole ranking;
* ``P_IA@k`` = (relevant (document, subtopic) pairs in the top k) / (k S);
* ``StRecall@k`` = (subtopics with a relevant document in the top k) / S.

The **ideal ranking** is ndeval's greedy approximation (finding the best one is
NP-hard): rank by rank, the judged document with the greatest g given the documents
already placed, a tie going to the greater docno in byte order (``strcmp``). It is not
always optimal, so alpha_nDCG, nERR_IA and nNRBP can exceed 1. alpha_nDCG@k and
nERR_IA@k are 0 wherever alpha_DCG@k is 0.

ndeval's own quirks, reproduced so that every value equals pyndeval's bit for bit:

* at **k = 1**, ``alpha_DCG@1`` and ``ERR_IA@1`` are *not normalised* (ndeval's
  normalising loops start at rank 2): each is g(1), the number of subtopics the first
  document is relevant to (``alpha_nDCG@1`` and ``nERR_IA@1`` are ratios of two such
  values, and so are right);
* a topic with S = 0 (judgments, none relevant at the level) scores 0 on every measure,
  and counts in the mean;
* **documents without a judgment** stay in the ranking with gain 0 (unless
  ``judged_only``), as do documents judged not relevant.

Differences from ndeval and pyndeval, each on purpose:

* **cut-offs above 20** follow the same formulas; ndeval computes ranks 1-20 only
  (``DEPTH``) and pyndeval refuses larger cut-offs. A cut-off family without a cut-off
  (``ERR_IA``) is an error here; ir_measures accepts the name, then fails evaluating it;
* **nNRBP of a topic with S = 0** (or with alpha = 0 and beta = 1) is 0, cumgain's rule
  for 0 / 0; ndeval prints ``nan`` and pyndeval returns NaN, which makes ir_measures'
  mean over topics NaN;
* **ties** follow the ``ties`` policy of :func:`cumgain.evaluate`, whose default,
  ``"docno_desc"`` (trec_eval), is also ndeval's ``-traditional`` order; pyndeval, and so
  ir_measures, rank by score and then docno **ascending**: pass ``ties="docno_asc"`` to
  reproduce them. ndeval without ``-traditional`` ranks by the rank column, which cumgain
  never reads (``"input_order"`` comes closest). ``"average"``, ``"expected"``,
  ``"optimistic"`` and ``"pessimistic"`` are refused: these measures depend on the order
  within ties and on every other document's subtopics;
* **judged_only** (``judged_only=True`` or a measure's ``judged_only=True``) drops the
  ranked documents that have no subtopic judgment at any level, closing the gaps, as
  ir_measures' provider means to (in ir_measures 0.4.3 it raises a TypeError instead);
  it applies to every measure here, NRBP, nNRBP and StRecall included, for which
  ir_measures has no such parameter;
* ir_measures' provider evaluates only the first group of measures sharing a
  (rel, alpha, beta, judged_only) setting and scores every other 0 (its run iterator is
  used up by the first group): ``[alpha_nDCG@5, alpha_nDCG(alpha=0.7)@5]`` gives 0 for
  the second; cumgain computes each;
* which topics: ``topics="both"`` (the default) evaluates the topics judged and ranked,
  as ndeval and pyndeval do; ``topics="qrels"`` also scores 0 the judged topics the run
  lacks, as ir_measures does (and ndeval ``-c``); ``topics="strict"`` refuses any
  difference. Run topics are matched to judged topics as strings (ndeval reads a
  ``wt09-1`` run topic as topic 1);
* ``depth`` keeps the first N ranked documents (ndeval ``-M``) before ``judged_only``;
  ``score_precision="float32"`` rounds scores as elsewhere in cumgain (ndeval reads them
  as doubles).

Means are arithmetic means over the evaluated topics, summed in topic byte order.
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from cgcore import _diversity
from cumgain.common.optional import require
from cumgain.engine.kinds import JudgmentKind, register_kind
from cumgain.engine.ranking_rules import _docno_ids, compared_scores, ranked_order
from cumgain.engine.results import Evaluation, TopicsWarning, aggregate, topics_warning
from cumgain.exceptions import FormatError, InputError
from cumgain.io import neighbours
from cumgain.io.native.reader import read_ranked
from cumgain.measures import Measure
from cumgain.measures.diversity import DEFAULT_ALPHA, DEFAULT_BETA
from cumgain.measures.ranked import gather, offsets_from_counts, topic_of_rows
from cumgain.io.trec.frontends import _number
from cumgain.io.trec.lines import _Kind
from cumgain.trec_io import _is_dataframe, _read_file, load_run
from cumgain.types import GROUP_TIE_RULES, DuplicatePolicy, ScorePrecision, TieRule, TopicPolicy

__all__ = ["Subtopics", "evaluate_subtopics", "load_subtopics", "read_subtopics",
           "subtopics_from_dataframe", "subtopics_from_dict"]

#: ndeval's qrels, read by trec_io's rules; a topic is "qid\tsubtopic" while reading.
_SUBTOPIC_QRELS = _Kind("subtopic qrels", 4, True, 3, "relevance", True, False, "no judgments",
                        "qid subtopic docno rel", False, group_field=1)
_SUBTOPIC_COLUMNS = ("iteration", "subtopic")


@dataclass(frozen=True, eq=False)
class Subtopics:
    """Subtopic judgments grouped by topic (read-only).

    Topic ``t`` (``topics[t]``, in byte order of the ids) owns rows
    ``offsets[t]:offsets[t + 1]``, sorted by docno (byte order) and then subtopic. Per row:
    ``docnos`` (object array of str), ``subtopics`` (int64 index into
    ``subtopic_names``, which lists the subtopic ids in order of first appearance in the
    input), ``levels`` (float64) and ``lines`` (the 1-based line in ``source``; None for
    dicts and DataFrames).
    """

    topics: tuple[str, ...]
    offsets: np.ndarray
    docnos: np.ndarray
    subtopics: np.ndarray
    levels: np.ndarray
    subtopic_names: tuple[str, ...]
    source: str
    lines: Optional[np.ndarray]

    def to_dict(self) -> dict[str, dict[str, dict[str, float]]]:
        """The judgments as ``{qid: {subtopic: {docno: rel}}}``."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for t, topic in enumerate(self.topics):
            inner = out.setdefault(topic, {})
            for i in range(int(self.offsets[t]), int(self.offsets[t + 1])):
                inner.setdefault(self.subtopic_names[self.subtopics[i]], {})[
                    self.docnos[i]] = float(self.levels[i])
        return out


# --------------------------------------------------------------------------- reading

def _build(source: str, qids: list, labels: list, docnos: list, levels: np.ndarray,
           lines: Optional[np.ndarray], empty_topics: tuple = ()) -> Subtopics:
    """Group rows (input order) into a :class:`Subtopics`; a (topic, subtopic, docno)
    given twice is an error naming both rows."""
    n = len(docnos)
    names = tuple(dict.fromkeys(labels))
    code_of = {name: i for i, name in enumerate(names)}
    codes = np.fromiter(map(code_of.__getitem__, labels), np.int64, n)
    topics = tuple(sorted(set(qids) | set(empty_topics)))
    topic_of = {topic: t for t, topic in enumerate(topics)}
    tidx = np.fromiter(map(topic_of.__getitem__, qids), np.int64, n)
    docno_array = np.empty(n, dtype=object)
    docno_array[:] = docnos
    doc_ids, _ = _docno_ids(docno_array)
    order = np.lexsort((codes, doc_ids, tidx))      # stable: repeats keep input order
    same = (tidx[order][1:] == tidx[order][:-1]) & (doc_ids[order][1:] == doc_ids[order][:-1]) \
        & (codes[order][1:] == codes[order][:-1])
    if same.any():
        pairs = np.flatnonzero(same)
        at = pairs[np.argmin(order[pairs + 1])]     # the repeat that comes first in the input
        first, repeat = int(order[at]), int(order[at + 1])
        what = (f"docno {docnos[repeat]!r} is judged twice for subtopic {labels[repeat]!r} of "
                f"topic {qids[repeat]!r}")
        if lines is None:
            raise InputError(f"{source}: {what}: rows {first} and {repeat} (0-based positions)")
        raise FormatError(source, int(lines[repeat]),
                          f"{what}: lines {lines[first]} and {lines[repeat]}")
    offsets = offsets_from_counts(np.bincount(tidx, minlength=len(topics)))
    return Subtopics(topics, offsets, docno_array[order], np.ascontiguousarray(codes[order]),
                     np.ascontiguousarray(levels[order], dtype=np.float64), names, source,
                     None if lines is None else np.ascontiguousarray(lines[order]))


def read_subtopics(path: Any) -> Subtopics:
    """Read an ndeval qrels file (``qid subtopic docno rel``; a path, ``"-"`` for
    standard input; plain or gzip).

    Raises
    ------
    FormatError
        A malformed line or a judgment given twice, with the file and line number.
    OSError
        The file cannot be opened.
    """
    source, groups, gidx, docnos, values, lines, _ = _read_file(path, _SUBTOPIC_QRELS)
    parts = [group.split("\t", 1) for group in groups]
    qids = np.array([qid for qid, _ in parts], dtype=object)[gidx].tolist()
    labels = np.array([label for _, label in parts], dtype=object)[gidx].tolist()
    return _build(source, qids, labels, docnos, values, lines)


def _keyed(mapping: Any, source: str, where: str, what: str) -> list:
    """The (str id, original key, value) items of a mapping; two keys that become the
    same string are an error."""
    if not isinstance(mapping, Mapping):
        raise InputError(f"{source}: {where} must be a mapping {what}, got "
                         f"{type(mapping).__name__}")
    items, seen = [], {}
    for key, value in mapping.items():
        text = str(key)
        if text in seen:
            raise InputError(f"{source}: {where}: keys {seen[text]!r} and {key!r} are both "
                             f"{text!r} once converted to str")
        seen[text] = key
        items.append((text, key, value))
    return items


def subtopics_from_dict(d: Any, *, source: str = "<dict>") -> Subtopics:
    """Subtopic judgments from ``{qid: {subtopic: {docno: rel}}}``.

    Ids become ``str``; levels must be finite real numbers (not bool). A topic with no
    judgment (``{"q": {}}`` or ``{"q": {"1": {}}}``) is kept with zero rows.

    >>> s = subtopics_from_dict({"q1": {"1": {"d1": 1}, "2": {"d1": 0, "d2": 2}}})
    >>> s.topics, s.docnos.tolist(), s.levels.tolist()
    (('q1',), ['d1', 'd1', 'd2'], [1.0, 0.0, 2.0])
    """
    qids, labels, docnos, levels, empty = [], [], [], [], []
    for qid, raw_qid, subtopics in _keyed(d, source, "the judgments",
                                          "{qid: {subtopic: {docno: rel}}}"):
        before = len(docnos)
        for label, raw_label, docs in _keyed(subtopics, source, f"topic {raw_qid!r}",
                                             "{subtopic: {docno: rel}}"):
            for docno, raw_docno, level in _keyed(
                    docs, source, f"topic {raw_qid!r}, subtopic {raw_label!r}",
                    "{docno: rel}"):
                levels.append(_number(
                    level, lambda: f"{source}: topic {raw_qid!r}, subtopic {raw_label!r}, "
                                   f"docno {raw_docno!r}", True, "relevance"))
                qids.append(qid)
                labels.append(label)
                docnos.append(docno)
        if len(docnos) == before:
            empty.append(qid)
    return _build(source, qids, labels, docnos, np.array(levels, dtype=np.float64), None,
                  tuple(empty))


def subtopics_from_dataframe(df: Any) -> Subtopics:
    """Subtopic judgments from a pandas DataFrame with columns ``query_id``, ``doc_id``,
    ``relevance`` and the subtopic in ``iteration`` (ir_measures' name) or ``subtopic``.

    Ids become ``str`` (a float column gives ``"1.0"``); a missing id, or a level that
    is missing, not a number, boolean or infinite, is an :class:`InputError` naming the
    row (0-based position). Other columns are ignored.
    """
    pd = require("pandas", extra="pandas", for_what="reading a DataFrame")

    source = "<DataFrame>"
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"expected a pandas DataFrame, got {type(df).__name__}")
    found = [column for column in _SUBTOPIC_COLUMNS if column in df.columns]
    if len(found) != 1:
        why = "has both" if found else "has neither"
        raise InputError(f"{source}: the subtopic must be in one column, 'iteration' (as in "
                         f"ir_measures' qrels) or 'subtopic'; this DataFrame {why} "
                         f"(columns {list(df.columns)})")
    needed = ("query_id", found[0], "doc_id", "relevance")
    missing = [column for column in needed if column not in df.columns]
    if missing:
        raise InputError(f"{source}: missing column(s) {missing}; need {list(needed)}, "
                         f"found {list(df.columns)}")
    ids = {}
    for column in needed[:3]:
        series = df[column]
        if isinstance(series, pd.DataFrame):
            raise InputError(f"{source}: column {column!r} appears more than once")
        array = series.to_numpy(dtype=object)
        absent = pd.isna(array)
        if absent.any():
            raise InputError(f"{source}: {column} is missing at row {int(np.argmax(absent))} "
                             "(0-based position)")
        ids[column] = list(map(str, array))
    series = df["relevance"]
    if isinstance(series, pd.DataFrame):
        raise InputError(f"{source}: column 'relevance' appears more than once")

    def describe(i: int) -> str:
        return (f"{source}: row {i} (query_id {ids['query_id'][i]!r}, subtopic "
                f"{ids[found[0]][i]!r}, doc_id {ids['doc_id'][i]!r})")

    if pd.api.types.is_bool_dtype(series.dtype):
        raise InputError(f"{source}: column 'relevance' is boolean; it must hold numbers")
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_complex_dtype(
            series.dtype):
        levels = series.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(levels)
        if bad.any():
            i = int(np.argmax(bad))
            what = "NaN or missing" if np.isnan(levels[i]) else "infinite; it must be finite"
            raise InputError(f"{describe(i)}: relevance is {what}")
    else:
        levels = np.array([_number(value, lambda i=i: describe(i), True, "relevance")
                           for i, value in enumerate(series.to_numpy(dtype=object))],
                          dtype=np.float64)
    return _build(source, ids["query_id"], ids[found[0]], ids["doc_id"], levels, None)


def load_subtopics(obj: Any) -> Subtopics:
    """Subtopic judgments for the diversity measures, from whatever was given.

    Parameters
    ----------
    obj : Subtopics, str, os.PathLike, mapping, DataFrame or rows
        A :class:`Subtopics` (returned as is), a path (``"-"`` is standard input), a
        ``{qid: {subtopic: {docno: rel}}}`` mapping, a pandas DataFrame (see the module
        docstring), or rows with fields ``query_id, iteration, doc_id, relevance``
        (ir_measures' and ir_datasets' qrels: the iteration is the subtopic).

    Returns
    -------
    Subtopics

    Raises
    ------
    InputError
        An input of another kind, or a malformed line naming the file and line.
    """
    if isinstance(obj, Subtopics):
        return obj
    rows = neighbours.subtopics_dict(obj)
    if rows is not None:
        return subtopics_from_dict(rows)
    if isinstance(obj, (str, os.PathLike)):
        return read_subtopics(obj)
    if _is_dataframe(obj):
        return subtopics_from_dataframe(obj)
    if isinstance(obj, Mapping):
        return subtopics_from_dict(obj)
    raise InputError("subtopic judgments must be a Subtopics, a path, a "
                     "{qid: {subtopic: {docno: rel}}} mapping, a pandas DataFrame or "
                     "rows with fields query_id, iteration, doc_id, relevance, got "
                     f"{type(obj).__name__}")


# --------------------------------------------------------------------------- evaluating

@dataclass(frozen=True)
class _Judged:
    """The chosen topics' judged documents and subtopics, as the kernel takes them."""

    offsets: np.ndarray         # per topic: its judged documents (docno byte order)
    keys: np.ndarray            # per judged document: topic * n_docs + docno id (sorted)
    doc_of_row: np.ndarray      # per judgment row: its judged document
    local: np.ndarray           # per judgment row: the subtopic's index in its topic
    n_subtopics: np.ndarray     # per topic
    levels: np.ndarray          # per judgment row


def _judged(judgments: Subtopics, rows: np.ndarray, row_offsets: np.ndarray,
            doc_ids: np.ndarray, n_docs: int) -> _Judged:
    n_topics = len(row_offsets) - 1
    row_topic = topic_of_rows(row_offsets)
    keys = row_topic * n_docs + doc_ids             # sorted: rows are in docno order
    new_doc = np.ones(len(keys), dtype=bool)
    new_doc[1:] = keys[1:] != keys[:-1]
    n_codes = max(len(judgments.subtopic_names), 1)
    distinct, local = np.unique(row_topic * n_codes + judgments.subtopics[rows],
                                return_inverse=True)
    distinct_topic = distinct // n_codes
    local = local.reshape(-1) - np.searchsorted(distinct_topic, row_topic)
    return _Judged(offsets=offsets_from_counts(np.bincount(row_topic[new_doc],
                                                           minlength=n_topics)),
                   keys=keys[new_doc], doc_of_row=np.cumsum(new_doc) - 1,
                   local=local.astype(np.int64),
                   n_subtopics=np.bincount(distinct_topic, minlength=n_topics).astype(np.int64),
                   levels=judgments.levels[rows])


def _ranked(run, run_rows: np.ndarray, run_offsets: np.ndarray, doc_ids: np.ndarray,
            n_docs: int, judged: _Judged, *, ties: TieRule, score_precision: ScorePrecision,
            seed: int, depth: Optional[int]) -> tuple[np.ndarray, np.ndarray]:
    """Each topic's ranking (offsets, and per rank the judged document or -1), ranked by
    score descending and the tie rule, cut at ``depth``."""
    offsets, kept = ranked_order(compared_scores(run.scores[run_rows], score_precision),
                                 doc_ids, run_offsets, ties=ties, seed=seed, depth=depth)
    topic = topic_of_rows(run_offsets)
    keys = topic[kept] * n_docs + doc_ids[kept]
    at = np.minimum(np.searchsorted(judged.keys, keys), max(len(judged.keys) - 1, 0))
    found = judged.keys[at] == keys if len(judged.keys) else np.zeros(len(keys), dtype=bool)
    return offsets, np.where(found, at, -1).astype(np.int64)


def _local_documents(judgments: Subtopics) -> np.ndarray:
    """Per judgment row, its document's index among its topic's judged documents
    (docno byte order, as the rows are sorted)."""
    docnos = judgments.docnos
    new_doc = np.ones(len(docnos), dtype=bool)
    new_doc[1:] = docnos[1:] != docnos[:-1]
    new_doc[judgments.offsets[:-1][np.diff(judgments.offsets) > 0]] = True
    document = np.cumsum(new_doc) - 1
    first_of_topic = document[np.minimum(judgments.offsets[:-1], max(len(docnos) - 1, 0))]
    return document - np.repeat(first_of_topic, np.diff(judgments.offsets))


def _rank_natively(judgments: Subtopics, local: np.ndarray, run: Any, *, ties: TieRule,
                   score_precision: ScorePrecision, seed: int, depth: Optional[int],
                   duplicates: DuplicatePolicy):
    """The run ranked by the native reader (a file or a dict; else None) against a table
    of each topic's judged documents whose "level" is the document's index among its
    topic's judged documents (``local``, see _local_documents) plus 0.5: each ranked row
    then carries which judged document it is, with no docno of the run made into a
    Python string. Topics without judgments are left out of the table (None if none
    has any)."""
    if duplicates != "error" or not len(judgments.docnos):
        return None
    names, levels = judgments.docnos.tolist(), (local + 0.5).tolist()
    table: dict = {}
    for t, topic in enumerate(judgments.topics):
        lo, hi = int(judgments.offsets[t]), int(judgments.offsets[t + 1])
        if hi > lo:     # (a document in several subtopics: the same key, the same level)
            table[topic] = dict(zip(names[lo:hi], levels[lo:hi]))
    ranked = read_ranked(table, run, ties=ties, score_precision=score_precision, seed=seed,
                         depth=depth)
    if ranked is not None:
        ranked.release()
    return ranked


def _only_judged(offsets: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keep = docs >= 0
    counts = np.bincount(topic_of_rows(offsets)[keep], minlength=len(offsets) - 1)
    return offsets_from_counts(counts), docs[keep]


def _setting(measure, relevance_level: float, judged_only: bool) -> tuple:
    """What one kernel call is for: (rel, alpha, beta, judged_only)."""
    rel = measure.relevance_level if measure.relevance_level is not None else relevance_level
    only = measure.judged_only if measure.judged_only is not None else judged_only
    return (float(rel), float(measure.param("alpha", DEFAULT_ALPHA)),
            float(measure.param("beta", DEFAULT_BETA)), bool(only))


def evaluate_subtopics(judgments: Subtopics, run: Any, measures: list[Measure], *,
                       topics: TopicPolicy, warn: bool, relevance_level: float = 1.0,
                       judged_only: bool = False, depth: Optional[int] = None,
                       ties: TieRule = "docno_desc", score_precision: ScorePrecision = "float64",
                       seed: int = 0, duplicates: DuplicatePolicy = "error", **ignored: Any
                       ) -> Evaluation:
    """:func:`cumgain.evaluate` for subtopic judgments: the diversity measures of
    ``run`` (see the module docstring for what they compute and every policy)."""
    for measure in measures:
        if measure.spec.input != "subtopics":
            raise InputError(f"measure {measure.name!r} cannot be computed from subtopic "
                             "judgments: only the diversity measures (ERR_IA, nERR_IA, "
                             "alpha_DCG, alpha_nDCG, NRBP, nNRBP, AP_IA, P_IA, StRecall) can")
        beta = measure.param("beta", DEFAULT_BETA)
        if not 0 <= beta <= 1:
            raise InputError(f"measure {measure.name!r}: beta must be in [0, 1] (NRBP's "
                             "patience)")
    if ties in GROUP_TIE_RULES:
        raise InputError(f"the diversity measures depend on the order within groups of equal "
                         f"scores, and on each other document's subtopics: ties={ties!r} is "
                         "not defined for them; choose a rule that orders them (docno_desc, "
                         "docno_asc, input_order, random)")
    local = _local_documents(judgments)
    native = _rank_natively(judgments, local, run, ties=ties, score_precision=score_precision,
                            seed=seed, depth=depth, duplicates=duplicates)
    if native is None:
        run = load_run(run, duplicates=duplicates)
        run_topics, run_tag = run.topics, run.tag
    else:
        run_topics, run_tag = native.run_topics, native.tag
    counts = np.diff(judgments.offsets)
    judged_topics = {topic for topic, n in zip(judgments.topics, counts) if n}
    empty = tuple(topic for topic, n in zip(judgments.topics, counts) if not n)
    run_index = {topic: i for i, topic in enumerate(run_topics)}
    run_only = tuple(sorted(set(run_index) - judged_topics))
    missing = tuple(sorted(judged_topics - set(run_index)))
    if topics == "strict" and (run_only or missing):
        raise InputError(f"topics differ: {len(run_only)} in the run only "
                         f"{list(run_only[:5])}, {len(missing)} in the subtopic judgments "
                         f"only {list(missing[:5])} (topics='strict')")
    if warn and (run_only or missing or empty):
        warnings.warn(topics_warning(run_only, missing, empty, topics), TopicsWarning,
                      stacklevel=3)
    chosen = sorted(judged_topics) if topics == "qrels" else \
        sorted(judged_topics & set(run_index))

    index = {topic: t for t, topic in enumerate(judgments.topics)}
    rows, row_offsets = gather(judgments.offsets,
                               np.array([index[t] for t in chosen], dtype=np.int64))
    run_order = np.array([run_index.get(t, -1) for t in chosen], dtype=np.int64)
    if native is None:
        run_rows, run_offsets = gather(run.offsets, run_order)
        ids, n_docs = _docno_ids(np.concatenate([judgments.docnos[rows],
                                                 run.docnos[run_rows]]))
        judged = _judged(judgments, rows, row_offsets, ids[:len(rows)], n_docs)
        ranked = _ranked(run, run_rows, run_offsets, ids[len(rows):], n_docs, judged,
                         ties=ties, score_precision=score_precision, seed=seed, depth=depth)
    else:
        ids = local[rows]                   # (no docno compared again)
        judged = _judged(judgments, rows, row_offsets, ids, int(ids.max(initial=0)) + 1)
        ranked_rows, offsets = gather(native.run_offsets, run_order)
        first_doc = judged.offsets[:-1][topic_of_rows(offsets)]
        local = native.levels[ranked_rows].astype(np.int64)    # (floor of index + 0.5)
        ranked = (offsets, np.where(native.judged[ranked_rows], first_doc + local, -1))

    settings: dict = {}
    for measure in measures:
        settings.setdefault(_setting(measure, relevance_level, judged_only), []).append(measure)
    values = {}
    for (rel, alpha, beta, only), group in settings.items():
        relevant = np.flatnonzero(judged.levels >= rel)
        relevant_offsets = offsets_from_counts(np.bincount(
            judged.doc_of_row[relevant], minlength=len(judged.keys)))
        offsets, docs = _only_judged(*ranked) if only else ranked
        cutoffs = np.array(sorted({m.cutoff for m in group if m.cutoff is not None}),
                           dtype=np.int64)
        at, whole = _diversity.diversity_measures(
            judged.offsets, relevant_offsets, np.ascontiguousarray(judged.local[relevant]),
            judged.n_subtopics, offsets, docs, cutoffs, alpha, beta)
        for measure in group:
            if measure.family in _diversity.AT_CUTOFF:
                column = int(np.searchsorted(cutoffs, measure.cutoff))
                values[measure.name] = at[_diversity.AT_CUTOFF.index(measure.family), :, column]
            else:
                values[measure.name] = whole[_diversity.WHOLE.index(measure.family)]
    values = {m.name: np.ascontiguousarray(values[m.name]) for m in measures}
    means = {m.name: aggregate(m, values[m.name], run_tag) for m in measures}
    policies = dict(relevance_level=float(relevance_level), judged_only=bool(judged_only),
                    depth=depth, topics=topics, ties=ties, score_precision=score_precision,
                    seed=seed)
    return Evaluation(topics=tuple(chosen), measures=tuple(measures), values=values,
                      means=means, run_only_topics=run_only,
                      missing_topics=missing if topics != "strict" else (),
                      empty_qrels_topics=empty, run_tag=run_tag, policies=policies)


register_kind(JudgmentKind("subtopics", Subtopics, evaluate_subtopics,
                           "qid subtopic docno rel lines; cumgain.load_subtopics",
                           load=load_subtopics))
