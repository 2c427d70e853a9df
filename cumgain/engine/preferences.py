"""trec_eval 10.0's preference measures (``-R prefs`` and ``-R qrels_prefs``).

Three steps, as elsewhere in cumgain: :func:`load_preferences` reads the judgments,
:func:`rank_for_preferences` ranks a run the way trec_eval does for these measures,
:func:`preference_values` computes the measures (one call to the compiled kernel
:func:`cgcore._prefs.preference_measures` for all topics).

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "prefs")
>>> with open(path, "w") as f:
...     _ = f.write("q1 user1 s1 d1 2\\nq1 user1 s1 d2 1\\nq1 user1 s1 d3 0\\n")
>>> prefs = load_preferences(path)
>>> result = preference_values(prefs, {"q1": ["d2", "d1"]})
>>> int(result.values["prefs_num_prefs_poss"][0]), round(float(result.values["prefs_simp"][0]), 4)
(3, 0.6667)

Judgments
---------
A **prefs** file has lines ``qid jg jsg docno rel_level`` (trec_eval's get_prefs.c).
Within a judgment sub-group (jsg) of a judgment group (jg), a document with a higher
``rel_level`` is preferred to one with a lower level; only the order of the levels
matters, except that ``0`` means non-relevant and ``> 0`` relevant (the "Rnonrel"
measures use that). A jg with a single jsg is a set of *equivalence classes* (ECs):
every document of a higher level is preferred to every one of a lower level. A jg
with several jsgs holds partial orders, joined and closed under transitivity (A > B
in one jsg and B > C in another give A > C). Different jgs (users, say) may
disagree. A **qrels_prefs** file is a qrels file ``qid jg docno rel`` read the same
way, the second column as the jg and one jsg per jg (get_qrels_prefs.c).

Reading rules (the file rules of :mod:`cumgain.trec_io`: UTF-8, gzip, ``"-"`` for
standard input, ``\\n`` line ends, errors that name the file and line):

* exactly 5 fields (prefs) or 4 (qrels_prefs), separated by whitespace;
* a line whose first non-blank character is ``#`` is a comment; a blank line is an
  error (trec_eval: "Malformed line");
* ``rel_level`` is a decimal number (``2``, ``0.5``, ``-1``, ``1e-3``), read as the
  double C's ``atof`` gives. *Differences from trec_eval*, which reads it with
  ``atof``: a non-numeric level (``abc``, which atof reads as 0; ``2x``, read as 2;
  hexadecimal) is an error here, and so are NaN and infinite levels;
* trec_eval 10.0 skips ``#`` lines only in column 1 and reads the line after a
  comment line as data even when it is another comment (two comment lines in a row
  give "Malformed line", or a judgment for topic ``#``), and it crashes on a
  comment as the last line (it reads past the end of its buffer). Here every
  comment line is skipped. trec_eval 9.0.8 has no comments at all;
* repeated lines are kept, as trec_eval keeps them: a document listed twice at
  one level of a single-jsg jg counts its preferences twice.

Ranking
-------
trec_eval ranks a run for these measures by score descending and breaks ties by
docno **ascending** (form_prefs_counts.c), the opposite of the docno-descending rule
of its other measures (form_res_rels.c); ``-M`` keeps the first N after ranking.
:func:`rank_for_preferences` does this; any ``{qid: [docno, ...]}`` mapping already
in rank order can be given instead.

Measures
--------
For each preference A > B of a jg: *fulfilled* if A is ranked above B, where a
retrieved document is above every unretrieved one; *retrieved* if both are
retrieved, *implied* if exactly one is, *not occurring* if neither. Per topic, with
sums over its jgs (ful_x fulfilled, poss_x possible, so poss_x >= ful_x):

======================== ===================================================================
prefs_num_prefs_poss     poss_ret + poss_imp + poss_notoccur (a count; the summary sums)
prefs_num_prefs_ful      ful_ret + ful_imp (a count)
prefs_num_prefs_ful_ret  ful_ret (a count)
prefs_simp               (ful_ret + ful_imp) / (poss_ret + poss_imp + poss_notoccur)
prefs_simp_ret           ful_ret / poss_ret
prefs_simp_imp           (ful_ret + ful_imp) / (poss_ret + poss_imp)
prefs_avgjg[_ret|_imp]   the ratio of prefs_simp[_ret|_imp] in each jg (jgs with no possible
                         preference add 0), summed over jgs / number of jgs
prefs_avgjg_Rnonrel      as prefs_avgjg, with each jg's non-relevant documents (level <= 0 in
                         one-jsg jgs, == 0 in others) set to R = its relevant ones: when
                         N < R, R * (R - N) fulfilled-or-not preferences are added
                         (fulfilled: rel_ret * (R - N), possible: rel * (R - N)); when N > R,
                         only the first R non-relevant documents in rank order count
prefs_avgjg_Rnonrel_ret  the same among retrieved documents (R = rel_ret, N = nonrel_ret;
                         the additions and cut-offs keep trec_eval's mix of rel and rel_ret)
prefs_pair[_ret|_imp]    over document pairs with a preference in some jg, the mean of
                         (jgs preferring the higher-ranked one) / (jgs with a preference);
                         _ret: pairs of retrieved documents; _imp: also pairs with one
                         retrieved; prefs_pair: also pairs with none retrieved, which count
                         in the denominator only
======================== ===================================================================

A ratio whose denominator is 0 is 0. The summary of a count is the sum over topics;
of a ratio, the mean over topics (:meth:`PreferenceValues.summary`).

trec_eval's behaviour kept, bugs included (see :mod:`cgcore._prefs`): the -3.0
sentinel that drops the lowest EC of a jg whose highest level is exactly -3; a jg
whose Rnonrel ratio is 0/0 zeroes the topic's Rnonrel value; pair counts wrap at
65536; when a one-jsg jg has negative levels and fewer documents at its lowest
level than relevant ones, Rnonrel reads the missing ones from the next jgs' entries
(trec_eval reads on past the end of that EC in its pool of ranks). Where that read
goes past the topic's entries, trec_eval reads memory left by an earlier topic or
never written, and its value is undefined: NaN here, with an
:class:`UndefinedValueWarning`.

Inconsistent judgments that trec_eval stops on raise :class:`FormatError` naming
the lines: a document at two levels of a one-jsg jg; a document with level 0 and a
non-zero level in a many-jsg jg; preferences that form a cycle in a many-jsg jg
(trec_eval aborts with a core dump). A many-jsg jg over more than 46,340 documents
(2**31 document pairs in its preference array) is refused with an
:class:`InputError`.
"""
from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any, Iterable, Optional, Sequence, get_args

import numpy as np

from cgcore import _measures as kernels
from cgcore import _prefs
from cumgain.engine.kinds import JudgmentKind, register_kind
from cumgain.engine.ranking_rules import (SCORE_PRECISIONS, _check_depth, _docno_ids,
                                          compared_scores)
from cumgain.engine.results import Evaluation, TopicsWarning, aggregate, topics_warning
from cumgain.exceptions import FormatError, InputError
from cumgain.measures import Measure
from cumgain.io.trec.lines import (_Kind, _line_start, _nth_line, _parse_numbers, _separator_in,
                                 _separator_message)
from cumgain.io.trec.byte_stream import _batches
from cumgain.trec_io import _opened, load_run, max_line_bytes
from cumgain.types import PathLike, PreferenceFormat, ScorePrecision, TopicPolicy


__all__ = [
    "COUNTS",
    "FORMATS",
    "LEVEL_PRECISIONS",
    "MEASURES",
    "PreferenceValues",
    "Preferences",
    "UndefinedValueWarning",
    "load_preferences",
    "preference_values",
    "rank_for_preferences",
]

MEASURES: tuple[str, ...] = tuple(_prefs.MEASURES)
"""The 14 measures in trec_eval's print order (``-m all_prefs``)."""

COUNTS: tuple[str, ...] = tuple(_prefs.COUNTS)
"""The measures that are counts: printed as integers, summed (not averaged) over topics."""

FORMATS: tuple[PreferenceFormat, ...] = get_args(PreferenceFormat)
LEVEL_PRECISIONS: tuple[ScorePrecision, ...] = get_args(ScorePrecision)


class UndefinedValueWarning(UserWarning):
    """A value trec_eval computes from memory outside its arrays: NaN here."""


# --------------------------------------------------------------------------- reading

@dataclass(frozen=True)
class _Layout:
    fields: int
    subgroup: Optional[int]     # the jsg column, or None: every line in jsg "0"
    docno: int
    level: int
    kind: _Kind                 # for trec_io's number parser (name of the value, finite)


_LAYOUTS = {
    "prefs": _Layout(5, 2, 3, 4, _Kind("preferences", 5, True, 4, "rel_level", True, False,
                                       "no judgments", "qid jg jsg docno rel_level", False)),
    "qrels_prefs": _Layout(4, None, 2, 3, _Kind("qrels", 4, True, 3, "relevance", True, False,
                                                "no judgments", "qid jg docno rel", False)),
}

# A carriage return followed, on the same line, by more fields (CRLF is fine).
_INNER_CR = re.compile(rb"\r[ \t\r\v\f]*[^ \t\r\v\f\n]")
_NEWLINE = b"\0"


@dataclass(frozen=True, eq=False)
class Preferences:
    """Preference judgments grouped by topic (read-only).

    Topic ``t`` (``topics[t]``; topics in byte order of their ids, trec_eval's
    order) owns rows ``offsets[t]:offsets[t + 1]``, in file order. Per row:
    ``groups`` and ``subgroups``, the jg and jsg as int64 indices into
    ``group_names`` and ``subgroup_names`` (each sorted in byte order, so the codes
    compare as trec_eval compares the names); ``docnos`` (object array of str);
    ``levels`` (float64); ``lines`` (the 1-based line in ``source``). ``format`` is
    ``"prefs"`` or ``"qrels_prefs"``.
    """

    topics: tuple[str, ...]
    offsets: np.ndarray
    groups: np.ndarray
    subgroups: np.ndarray
    docnos: np.ndarray
    levels: np.ndarray
    group_names: tuple[str, ...]
    subgroup_names: tuple[str, ...]
    lines: np.ndarray
    source: str
    format: str

    def __len__(self) -> int:
        """The number of judgment lines."""
        return len(self.levels)


def load_preferences(source: PathLike, format: PreferenceFormat = "prefs") -> Preferences:
    """Read a preference file (``format="prefs"``: ``qid jg jsg docno rel_level``) or a
    qrels file read as preferences (``format="qrels_prefs"``: ``qid jg docno rel``,
    trec_eval's ``-R qrels_prefs``: the second column is the judgment group).

    Parameters
    ----------
    source : str or os.PathLike
        The file, plain or gzip; ``"-"`` reads standard input.
    format : {"prefs", "qrels_prefs"}

    Returns
    -------
    Preferences

    Raises
    ------
    FormatError
        A malformed line (wrong number of fields, a blank line, a level that is not
        a finite number, bad UTF-8, a NUL byte), with the file and line number; or a
        file with no data line (line 0).
    OSError
        The file cannot be opened.
    """
    if format not in FORMATS:
        raise InputError(f"format must be one of {FORMATS}, got {format!r}")
    layout = _LAYOUTS[format]
    with _opened(source, layout.kind) as (stream, name):
        columns: list[list[bytes]] = [[] for _ in range(layout.fields)]
        level_parts, line_parts = [], []
        for text, first_line in _batches(stream, name, max_line_bytes()):
            batch = _parse_batch(text, first_line, name, layout)
            if batch is None:
                continue
            batch_columns, lines, levels = batch
            for column, part in zip(columns, batch_columns):
                column.extend(part)
            level_parts.append(levels)
            line_parts.append(lines)
    if not level_parts:
        raise FormatError(name, 0, "no judgments (the file has no data lines)")
    topic_names, topic_codes = _codes(columns[0])
    group_names, groups = _codes(columns[1])
    if layout.subgroup is None:
        subgroup_names, subgroups = ("0",), np.zeros(len(groups), dtype=np.int64)
    else:
        subgroup_names, subgroups = _codes(columns[layout.subgroup])
    order = np.argsort(topic_codes, kind="stable")
    offsets = np.zeros(len(topic_names) + 1, dtype=np.int64)
    np.cumsum(np.bincount(topic_codes, minlength=len(topic_names)), out=offsets[1:])
    docnos = np.empty(len(order), dtype=object)
    docnos[:] = list(map(bytes.decode, columns[layout.docno]))
    arrays = (offsets, groups[order], subgroups[order], docnos[order],
              np.concatenate(level_parts)[order], np.concatenate(line_parts)[order])
    for array in arrays:
        array.flags.writeable = False
    offsets, groups, subgroups, docnos, levels, lines = arrays
    return Preferences(topic_names, offsets, groups, subgroups, docnos, levels, group_names,
                       subgroup_names, lines, name, format)


def _codes(tokens: list[bytes]) -> tuple[tuple[str, ...], np.ndarray]:
    """The distinct values in byte order, and each token's index among them."""
    names = sorted(dict.fromkeys(tokens))
    index = {name: i for i, name in enumerate(names)}
    codes = np.fromiter(map(index.__getitem__, tokens), np.int64, len(tokens))
    return tuple(name.decode() for name in names), codes


def _parse_batch(text: bytes, first_line: int, source: str, layout: _Layout):
    """The columns (lists of bytes), line numbers and levels of the data lines of a
    run of whole lines; None when there is none. The first malformed line raises."""
    kind = layout.kind
    problems = []
    try:
        text.decode("utf-8")
    except UnicodeDecodeError as error:
        start = text.rfind(b"\n", 0, error.start) + 1
        problems.append((text.count(b"\n", 0, error.start),
                         f"not valid UTF-8: byte 0x{text[error.start]:02x} at column "
                         f"{error.start - start + 1}"))
    nul = text.find(b"\0")
    if nul >= 0:
        problems.append((text.count(b"\n", 0, nul),
                         "NUL byte in the line (not allowed in a text file)"))
    inner_cr = _INNER_CR.search(text) if b"\r" in text else None
    if inner_cr is not None:
        problems.append((text.count(b"\n", 0, inner_cr.start()),
                         "carriage return inside the line (old Mac line ends? lines must "
                         "end with \\n)"))
    separator = _separator_in(text)
    if separator is not None:
        problems.append((text.count(b"\n", 0, separator.start()), _separator_message(
            separator, text.rfind(b"\n", 0, separator.start()) + 1)))
    if problems:
        i, message = min(problems)
        _raise_at(text, first_line, i, source, layout, message)
    if not text.endswith(b"\n"):
        text += b"\n"
    n_lines = text.count(b"\n")
    tokens = text.replace(b"\n", b" \0 ").split()
    n = layout.fields
    step = n + 1
    if (len(tokens) == step * n_lines and tokens[n::step].count(_NEWLINE) == n_lines
            and b"#" not in b"".join(tokens[0::step])):
        columns = [tokens[f::step] for f in range(n)]
        lines = np.arange(first_line, first_line + n_lines, dtype=np.int64)
    else:
        texts = text.split(b"\n")
        texts.pop()                                 # the text ends with a newline
        counts = np.fromiter(map(len, map(bytes.split, texts)), np.int64, n_lines)
        starts = np.zeros(n_lines, dtype=np.int64)  # where each line's fields start
        np.cumsum(counts[:-1] + 1, out=starts[1:])
        blank = counts == 0
        comment = np.zeros(n_lines, dtype=bool)
        nonblank = np.flatnonzero(~blank)
        comment[nonblank] = [tokens[s].startswith(b"#") for s in starts[nonblank].tolist()]
        wrong = ~blank & ~comment & (counts != n)
        if blank.any() or wrong.any():
            i = int(np.argmax(blank | wrong))
            message = ("blank line (trec_eval rejects blank lines in judgment files)"
                       if blank[i] else
                       f"expected {n} fields ({kind.layout}), found {counts[i]}")
            _raise_at(text, first_line, i, source, layout, message)
        kept = np.flatnonzero(~comment)
        if not len(kept):
            return None
        starts = starts[kept].tolist()
        columns = [[tokens[s + f] for s in starts] for f in range(n)]
        lines = (kept + first_line).astype(np.int64)
    levels = _parse_numbers(columns[layout.level], lines, text, first_line, source, kind)
    return columns, lines, levels


def _raise_at(text: bytes, first_line: int, i: int, source: str, layout: _Layout,
              message: str) -> None:
    """Raise a FormatError for line ``i`` of the batch, unless a line before it has
    an error of its own (raised instead): errors come in file order."""
    start = _line_start(text, i)
    if start:
        _parse_batch(text[:start], first_line, source, layout)
    raise FormatError(source, first_line + i, message, _nth_line(text, i))


# --------------------------------------------------------------------------- ranking

def rank_for_preferences(run: Any, *, depth: Optional[int] = None,
                         score_precision: ScorePrecision = "float64"
                         ) -> dict[str, list[str]]:
    """Rank a run as trec_eval does for the preference measures.

    Score descending, ties broken by docno **ascending** in byte order
    (form_prefs_counts.c; trec_eval's other measures break ties the other way), then
    the first ``depth`` documents (trec_eval ``-M``).

    Parameters
    ----------
    run : path, dict, DataFrame or Run
        Anything :func:`cumgain.trec_io.load_run` reads (a repeated docno in a topic
        is an error there by default; trec_eval only stops on one within ``-M``).
    depth : int, optional
        Keep this many documents per topic.
    score_precision : {"float64", "float32", "float16", "bfloat16"}
        Scores rounded to that precision before they are compared (``"float32"``: as
        trec_eval 9.0.8).

    Returns
    -------
    dict
        ``{qid: [docno, ...]}`` in rank order, for every topic of the run.

    >>> rank_for_preferences({"q1": {"b": 1.0, "a": 1.0, "c": 2.0}})
    {'q1': ['c', 'a', 'b']}
    """
    _check_depth(depth)
    if score_precision not in SCORE_PRECISIONS:
        raise InputError(f"score_precision must be one of {SCORE_PRECISIONS}, "
                         f"got {score_precision!r}")
    run = load_run(run)
    scores = np.ascontiguousarray(run.scores, dtype=np.float64)
    scores = compared_scores(scores, score_precision)
    doc_ids, _ = _docno_ids(run.docnos)
    order = kernels.rank_topics(scores, np.ascontiguousarray(doc_ids, np.int64), run.offsets)
    ranked_docnos = run.docnos[order]
    starts = run.offsets[:-1].tolist()
    stops = run.offsets[1:].tolist()
    if depth is not None:
        stops = [min(stop, start + depth) for start, stop in zip(starts, stops)]
    return {topic: ranked_docnos[start:stop].tolist()
            for topic, start, stop in zip(run.topics, starts, stops)}


# --------------------------------------------------------------------------- measures

@dataclass(frozen=True, eq=False)
class PreferenceValues:
    """The preference measures of a run.

    ``topics``: the evaluated topics (in the judgments and in the ranking), in byte
    order of their ids, which is trec_eval's order. ``values``: measure name ->
    per-topic array aligned with ``topics`` (int64 for the :data:`COUNTS`, float64
    otherwise). ``missing``: judged topics absent from the ranking, not evaluated.
    """

    topics: tuple[str, ...]
    values: dict[str, np.ndarray]
    missing: tuple[str, ...] = ()

    def summary(self) -> dict[str, float]:
        """trec_eval's ``all`` values: the sum over topics for the counts (an int), the
        mean for the others, accumulated in topic order as trec_eval does.

        Raises
        ------
        InputError
            No topic was evaluated (trec_eval: "No queries with both results and
            relevance info").
        """
        if not self.topics:
            raise InputError("no topic was evaluated: none is in both the judgments and "
                             "the ranking")
        summary: dict[str, float] = {}
        for name, values in self.values.items():
            if name in COUNTS:
                summary[name] = int(values.sum())
            else:
                summary[name] = float(np.cumsum(values)[-1]) / len(values)
        return summary

    def per_topic(self) -> dict[str, dict[str, float]]:
        """``{topic: {measure: value}}``."""
        columns = {name: values.tolist() for name, values in self.values.items()}
        return {topic: {name: column[t] for name, column in columns.items()}
                for t, topic in enumerate(self.topics)}


def preference_values(prefs: Preferences, ranked: Mapping[str, Sequence[str]],
                      names: Optional[Iterable[str]] = None, *,
                      level_precision: ScorePrecision = "float64", warn: bool = True
                      ) -> PreferenceValues:
    """Compute trec_eval's preference measures for a ranked run.

    Parameters
    ----------
    prefs : Preferences
        From :func:`load_preferences`.
    ranked : mapping
        ``{qid: [docno, ...]}``, each topic's documents in rank order (already cut at
        any depth), as :func:`rank_for_preferences` gives. A topic mapped to an empty
        list is evaluated with nothing retrieved (what trec_eval ``-c`` does for a
        judged topic missing from the run).
    names : iterable of str, optional
        Measures to return (see :data:`MEASURES`); all 14 by default.
    level_precision : {"float64", "float32"}
        ``"float32"``: levels equal as 32-bit floats are equal, as in trec_eval 9.0.8.
    warn : bool
        Warn (:class:`~cumgain.engine.evaluator.TopicsWarning`) about judged topics absent
        from ``ranked``; they are listed in ``missing`` either way. trec_eval 10.0
        stops on such a topic unless given ``-c``; 9.0.8 skips it, as here.

    Returns
    -------
    PreferenceValues

    Raises
    ------
    FormatError
        Judgments trec_eval stops on (see the module docstring), naming the lines.
    InputError
        A bad argument: an unknown measure, a docno listed twice for one topic
        (trec_eval: "duplicate docs"), non-str ids, a preference array too large.
    """
    if not isinstance(prefs, Preferences):
        raise InputError(f"prefs must be a Preferences (load_preferences), "
                         f"got {type(prefs).__name__}")
    if level_precision not in LEVEL_PRECISIONS:
        raise InputError(f"level_precision must be one of {LEVEL_PRECISIONS}, "
                         f"got {level_precision!r}")
    wanted = _measure_names(names)
    if not isinstance(ranked, Mapping):
        raise InputError(f"ranked must be a mapping {{qid: [docno, ...]}}, "
                         f"got {type(ranked).__name__}")
    bad_key = next((key for key in ranked if not isinstance(key, str)), None)
    if bad_key is not None:
        raise InputError(f"ranked: topic ids must be str, got {bad_key!r}")
    chosen = [t for t, topic in enumerate(prefs.topics) if topic in ranked]
    topics = tuple(prefs.topics[t] for t in chosen)
    missing = tuple(topic for topic in prefs.topics if topic not in ranked)
    if missing and warn:
        warnings.warn(f"{len(missing)} judged topic(s) are not in the ranking and were not "
                      f"evaluated: {list(missing[:5])}", TopicsWarning, stacklevel=2)
    lists = [ranked[topic] for topic in topics]
    for topic, docs in zip(topics, lists):
        if isinstance(docs, (str, bytes)) or not hasattr(docs, "__len__"):
            raise InputError(f"ranked[{topic!r}] must be a sequence of docnos, "
                             f"got {type(docs).__name__}")
    run_docnos = np.empty(sum(map(len, lists)), dtype=object)
    run_docnos[:] = list(chain.from_iterable(lists))
    if not all(issubclass(kind, str) for kind in set(map(type, run_docnos))):
        at = next(i for i, docno in enumerate(run_docnos) if not isinstance(docno, str))
        raise InputError(f"ranked: docnos must be str, got {run_docnos[at]!r}")
    run_offsets = np.zeros(len(topics) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, lists), np.int64, len(lists)), out=run_offsets[1:])

    rows, offsets = _rows_of(prefs.offsets, np.asarray(chosen, dtype=np.int64))
    retrieved_at, doc_ids = _join(prefs.docnos[rows], offsets, run_docnos, run_offsets, topics)
    levels = prefs.levels[rows]
    if level_precision == "float32":
        levels = levels.astype(np.float32).astype(np.float64)
    values, errors = _prefs.preference_measures(
        offsets, np.ascontiguousarray(prefs.groups[rows]),
        np.ascontiguousarray(prefs.subgroups[rows]), doc_ids,
        np.ascontiguousarray(levels), retrieved_at)
    failed = np.flatnonzero(errors[:, 0])
    if len(failed):
        _raise_kernel_error(prefs, topics[failed[0]], errors[failed[0]], rows)
    result = {}
    for name in wanted:
        column = values[:, MEASURES.index(name)]
        result[name] = column.astype(np.int64) if name in COUNTS else column.copy()
        if np.isnan(column).any():
            warnings.warn(
                f"{name} is undefined (NaN) for topic(s) "
                f"{[topics[t] for t in np.flatnonzero(np.isnan(column))[:5]]}: trec_eval reads "
                f"past the topic's judgments there (a judgment group with negative levels "
                f"and fewer documents at its lowest level than relevant ones, last among "
                f"the topic's single-sub-group groups)",
                UndefinedValueWarning, stacklevel=2)
    return PreferenceValues(topics, result, missing)


def _measure_names(names: Optional[Iterable[str]]) -> tuple[str, ...]:
    if names is None:
        return MEASURES
    if isinstance(names, str):
        names = [names]
    names = tuple(names)
    for name in names:
        if name not in MEASURES:
            raise InputError(f"unknown preference measure {name!r}; known: {list(MEASURES)}")
    return names


def _rows_of(offsets: np.ndarray, topics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the chosen topics, in order, and their offsets."""
    lengths = offsets[topics + 1] - offsets[topics]
    new_offsets = np.zeros(len(topics) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    rows = np.repeat(offsets[topics] - new_offsets[:-1], lengths) + np.arange(new_offsets[-1])
    return rows.astype(np.int64), new_offsets


def _join(judged: np.ndarray, offsets: np.ndarray, run_docnos: np.ndarray,
          run_offsets: np.ndarray, topics: tuple) -> tuple[np.ndarray, np.ndarray]:
    """For each judgment row: the 0-based position of its docno in its topic's
    ranking, or -1; and docno codes in byte order (shared by judgments and run)."""
    ids, n_docs = _docno_ids(np.concatenate([judged, run_docnos]))
    judged_ids, run_ids = ids[:len(judged)], ids[len(judged):]
    run_topic = np.repeat(np.arange(len(topics), dtype=np.int64), np.diff(run_offsets))
    run_keys = run_topic * n_docs + run_ids
    order = np.argsort(run_keys, kind="stable")
    sorted_keys = run_keys[order]
    repeated = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    if len(repeated):
        row = int(order[repeated[0] + 1])
        topic = topics[int(run_topic[row])]
        raise InputError(f"ranked[{topic!r}] lists docno {run_docnos[row]!r} more than once "
                         f"(trec_eval stops on this: 'duplicate docs')")
    judged_topic = np.repeat(np.arange(len(topics), dtype=np.int64), np.diff(offsets))
    keys = judged_topic * n_docs + judged_ids
    at = np.searchsorted(sorted_keys, keys)
    at_safe = np.minimum(at, max(len(sorted_keys) - 1, 0))
    found = (sorted_keys[at_safe] == keys) if len(sorted_keys) else np.zeros(len(keys), bool)
    run_rows = order[at_safe] if len(order) else np.zeros(len(keys), np.int64)
    position = run_rows - run_offsets[:-1][judged_topic] if len(keys) else run_rows
    retrieved_at = np.where(found, position, -1).astype(np.int64)
    return retrieved_at, np.ascontiguousarray(judged_ids, dtype=np.int64)


def _raise_kernel_error(prefs: Preferences, topic: str, error: np.ndarray,
                        rows: np.ndarray) -> None:
    code, first, second = (int(x) for x in error)
    if code == _prefs.ERROR_MEMORY:
        raise MemoryError(f"no memory for the preference arrays of topic {topic!r}")

    def where(row: int) -> tuple[int, str, str, str, float]:
        r = int(rows[row])
        return (int(prefs.lines[r]), prefs.group_names[prefs.groups[r]],
                prefs.subgroup_names[prefs.subgroups[r]], prefs.docnos[r],
                float(prefs.levels[r]))

    line, group, subgroup, docno, level = where(first)
    if code == _prefs.ERROR_TOO_LARGE:
        raise InputError(
            f"{prefs.source}: topic {topic!r}, judgment group {group!r}: its {second} "
            f"documents in several sub-groups need a preference array of {second}*{second} "
            f"cells, more than {_prefs.MAX_ARRAY_CELLS} (refused)")
    if code == _prefs.ERROR_EC_LEVELS:
        other_line, _, _, _, other_level = where(second)
        raise FormatError(
            prefs.source, max(line, other_line),
            f"topic {topic!r}, judgment group {group!r} (a single sub-group, {subgroup!r}): "
            f"docno {docno!r} has two levels, {level:g} (line {line}) and {other_level:g} "
            f"(line {other_line}); trec_eval stops on this ('occurs with different "
            f"rel_level in same jsg')")
    if code == _prefs.ERROR_ZERO_AND_NONZERO:
        other = f" and {where(second)[4]:g} (line {where(second)[0]})" if second >= 0 else ""
        raise FormatError(
            prefs.source, line,
            f"topic {topic!r}, judgment group {group!r}: docno {docno!r} is non-relevant "
            f"in one sub-group and relevant in another: levels {level:g} (line {line})"
            f"{other}; trec_eval stops on this ('has both 0 and non-0 rel_level "
            f"assigned')")
    if code == _prefs.ERROR_CYCLE:
        other_line, _, _, other_docno, _ = where(second)
        raise FormatError(
            prefs.source, line,
            f"topic {topic!r}, judgment group {group!r}: docnos {docno!r} (line {line}) and "
            f"{other_docno!r} (line {other_line}) are each preferred to the other, directly "
            f"or through other documents of the group's sub-groups; trec_eval aborts on "
            f"this ('Pref inconsistency found')")
    raise AssertionError(f"unknown kernel error {code}")  # pragma: no cover


def evaluate_preferences(prefs: Preferences, run: Any, measures: list[Measure], *,
                         topics: TopicPolicy, warn: bool, depth: Optional[int],
                         score_precision: ScorePrecision, **ignored: Any) -> Evaluation:
    """:func:`cumgain.evaluate` for preference judgments: the ``prefs_*`` measures (and
    ``num_q``, ``runid``) of ``run``, ranked as trec_eval ranks for them (ties by docno
    ascending), cut at ``depth``. ``score_precision="float32"`` is trec_eval 9.0.8,
    which stores scores and levels as 32-bit floats (the half precisions round the
    scores only). ``topics``: ``"both"`` evaluates
    the judged topics the run has; ``"qrels"`` every judged topic, those the run lacks
    with nothing retrieved (trec_eval -c); ``"strict"`` raises if the sets differ.
    The relevance level and -J play no part in these measures (as in trec_eval)."""
    for measure in measures:
        if measure.spec.input != "preferences" and measure.family not in ("num_q", "runid"):
            raise InputError(f"measure {measure.name!r} cannot be computed from preference "
                             "judgments (-R prefs): only the prefs_* measures, num_q and "
                             "runid can")
    run = load_run(run)
    ranked = rank_for_preferences(run, depth=depth, score_precision=score_precision)
    judged = set(prefs.topics)
    run_only = tuple(sorted(set(ranked) - judged))
    missing = tuple(sorted(judged - set(ranked)))
    if topics == "strict" and (run_only or missing):
        raise InputError(f"topics differ: {len(run_only)} in the run only, {len(missing)} in "
                         "the preferences only (topics='strict')")
    if warn and (run_only or missing):
        warnings.warn(topics_warning(run_only, missing, (), topics), TopicsWarning,
                      stacklevel=3)
    if topics == "qrels":
        ranked.update((topic, []) for topic in missing)
    names = [m.family for m in measures if m.spec.input == "preferences"]
    computed = preference_values(prefs, ranked, names, warn=False,
                                 level_precision="float32" if score_precision == "float32"
                                 else "float64") if names else None
    evaluated = computed.topics if computed is not None else \
        tuple(sorted(judged & set(ranked), key=lambda topic: topic.encode()))
    values = {}
    for measure in measures:
        if measure.family == "num_q":
            values[measure.name] = np.ones(len(evaluated))
        elif measure.family == "runid":
            values[measure.name] = np.array([run.tag] * len(evaluated), dtype=object)
        else:
            values[measure.name] = computed.values[measure.family].astype(np.float64)
    means = {m.name: aggregate(m, values[m.name], run.tag) for m in measures}
    return Evaluation(topics=evaluated, measures=tuple(measures), values=values, means=means,
                      run_only_topics=run_only, missing_topics=missing, run_tag=run.tag,
                      policies=dict(topics=topics, depth=depth, score_precision=score_precision))


register_kind(JudgmentKind("preferences", Preferences, evaluate_preferences,
                           "trec_eval -R prefs; cumgain.load_preferences"))
