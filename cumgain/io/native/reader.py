"""The reader of every input: parse, rank and join in C (``cgcore._trec``,
``cgcore._qrels``).

:func:`read_ranked` reads the qrels and the run and returns every run topic already
ranked (score descending, then the tie rule), cut at the depth and joined with its
judgments. It takes TREC files (plain or gzip; a plain file read in parts by several
threads), standard input (``"-"``), pipes, FIFOs, character devices and binary file
objects, ``{qid: {docno: value}}`` dicts, tables (:mod:`cumgain.io.columns`) and loaded
:class:`~cumgain.trec_io.Qrels` / :class:`~cumgain.trec_io.Run` objects, under every
policy (ties, score precision, depth, duplicates). A run whose topics are contiguous
is ranked a topic at a time as it streams; one whose topics come back (shuffled lines,
concatenated shards, any interleaving) is held by topic (about half its text) and
ranked once it ends: a file or a seekable stream is read again that way when a topic
comes back, a stream that cannot be read again (a pipe) is held from the start.

A bad input raises the error the reference reader (:mod:`cumgain.trec_io`) raises for
it, with file, line and text, worded from the line where the compiled parser stopped
(:func:`cumgain.io.trec.lines.line_error`): nothing is read a second time to word it.
Errors come in the reference reader's order: the qrels' before the run's; a file's
malformed lines (in file order) before its repeated docnos (the first by line).
Dicts whose ids are not all ``str`` or whose values are not all ``int`` / ``float``,
and tables whose columns the compiled ranker does not read in place, are checked and
converted by the reference front-ends (:func:`~cumgain.trec_io.run_from_dict`,
:func:`~cumgain.trec_io.run_from_dataframe`, ...) once, then ranked here.

Running out of memory raises :class:`~cumgain.exceptions.OutOfMemoryError` (a
``MemoryError``) at once, naming what was being read and, when known, how many bytes
the allocation that failed asked for.

:func:`cumgain.prepare_qrels` reads judgments once, for evaluating many runs against them:
a :class:`PreparedQrelsFile` for a qrels file, a :class:`PreparedQrels` for a dict
(also what the pytrec_eval drop-in uses), a :class:`PreparedQrelsTable` for a table.
"""
from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from cgcore import _columns, _trec
from cumgain.io import columns, neighbours
from cumgain.io.native.blocks import (Source, Spill, Stop, read_whole, source_of,
                                    status_stop)
from cumgain.io.native.parts import (auto_threads, available_cores, check_threads, parts_for,
                                   parts_in_turn, read_parts, topics_come_back)
from cumgain.io.native.errors import (TABLE_WORDS, _bad_row, _duplicate_error, _names_lines,
                                    _oom, _reading, _stop_error, _warn_dropped)
from cumgain.io.native.qrels import (DUPLICATE_CODES, NativeQrels, _columns_qrels,
                                   loaded_columns, native_qrels)
from cumgain.io.native.tables import (StreamedTopics, TopicCameBack, load_qrels_file,
                                    load_run_file)
from cumgain.io.trec.lines import _RUN, max_line_bytes
from cumgain.io.trec.frontends import run_from_dataframe, run_from_dict
from cumgain.io.trec.tables import Qrels, Run, _check_policy
from cumgain.exceptions import FormatError, InputError
from cumgain.types import GROUP_TIE_RULES, DuplicatePolicy, ScorePrecision, TieRule


__all__ = ["NativeQrels", "PreparedQrels", "PreparedQrelsFile", "PreparedQrelsTable",
           "RankedInput", "StreamedTopics", "TopicCameBack", "auto_threads",
           "available_cores", "check_threads", "load_qrels_file", "load_run_file",
           "native_qrels", "parts_for", "prepare_qrels_once", "read_ranked"]

TIE_CODES: dict[str, int] = {
    "docno_desc": _trec.TIES_DOCNO_DESC, "docno_asc": _trec.TIES_DOCNO_ASC,
    "input_order": _trec.TIES_INPUT_ORDER, "random": _trec.TIES_RANDOM,
    # the rules that read the groups of equal scores after the ranking (their scores
    # kept): ranked by docno descending first
    "average": _trec.TIES_DOCNO_DESC, "expected": _trec.TIES_DOCNO_DESC,
    "optimistic": _trec.TIES_DOCNO_DESC, "pessimistic": _trec.TIES_DOCNO_DESC}



@dataclass
class RankedInput:
    """Every run topic ranked and joined, and the judgments grouped by topic."""

    run_topics: list[str]         # in order of appearance in the run
    run_offsets: np.ndarray       # ranked rows of run topic i: run_offsets[i]:run_offsets[i+1]
    levels: np.ndarray            # relevance level per ranked row (0 if not in the qrels; a
                                  # negative level: pooled but not judged): int8
                                  # or float64, as the qrels table's levels
    judged: np.ndarray            # in the qrels with a level >= 0
    scores: Optional[np.ndarray]  # as compared (score_precision); kept for GROUP_TIE_RULES
    tag: str
    tags_agree: bool              # every line had that tag
    same_topics: bool             # the run ranks the qrels topics in their order (run topic
                                  # i is qrels topic i): run_topics names both
    judgments: NativeQrels
    release: Callable[[], None]   # frees a qrels table read for this ranking alone, in a
                                  # helper thread (the arrays stay valid, qrels_topics not
                                  # asked for before cannot be); a no-op for prepared qrels.
                                  # Until called, the table is kept.

    @property
    def qrels_topics(self) -> tuple[str, ...]:
        """In order of appearance in the qrels."""
        return self.judgments.topics

    @property
    def qrels_offsets(self) -> np.ndarray:
        """Judgments of qrels topic i (read-only; they do not keep the table's docnos alive)."""
        return self.judgments.offsets

    @property
    def qrels_levels(self) -> np.ndarray:
        """Read-only; int8 or float64."""
        return self.judgments.levels


RELEASE_IN_HELPER_JUDGMENTS = 100_000  # a qrels table this big is freed by a helper thread
COLUMN_TOPICS_PER_THREAD = 256  # a table's topics are cut in ranges of at least this many
DICT_TOPICS_PER_THREAD = 256    # a run dict is cut in ranges of at least this many topics


# ---------------------------------------------------------------- runs

def _one_output(rankers: list, rows: list) -> None:
    """Point each ranker of consecutive topic ranges (``rows[i]`` ranked rows for ranker
    i) at its place in one output, so that appending them moves no rows."""
    total = sum(rows)
    levels, judged = np.empty(total, rankers[0].levels_dtype), np.empty(total, np.uint8)
    scores = np.empty(total, np.float64) if rankers[0].keeps_scores else None
    for ranker, at, n in zip(rankers, np.cumsum([0] + rows[:-1]).tolist(), rows):
        ranker.write_rows_into(levels, judged, scores, at, n)


def _in_ranges(rankers: list, threads: int, read: Callable[[int], Optional[Stop]]):
    """``read(part)`` for each ranker of consecutive topic ranges by up to ``threads``
    threads, appended in order: the first ranker, or the first Stop."""
    def join(first, other) -> Optional[Stop]:
        status = first.append(other)
        return None if status == _trec.STATUS_OK else status_stop(first, status)

    stops = parts_in_turn(rankers, threads, read, join)
    stop = next((stop for stop in stops if stop is not None), None)
    return rankers[0] if stop is None else stop


def _rank_dict(make_ranker, run: dict, threads: int):
    """A finished ranker of a run dict, its topics cut in ranges of at least
    DICT_TOPICS_PER_THREAD, each ranked by a ranker of its own (see parts_in_turn)
    into its place in one output (so that joining them copies no rows, nor makes the
    process touch memory twice); a ranker holds the GIL only while it copies a batch of
    documents out of the dict. A Stop if any stopped (BAD_LINE: ids or values the
    ranker does not take)."""
    parts = max(1, min(parts_for(threads), len(run) // DICT_TOPICS_PER_THREAD))
    bounds = [len(run) * part // parts for part in range(parts + 1)]
    rankers = [make_ranker() for _ in range(parts)]
    rows = rankers[0].dict_rows(run, bounds) if parts > 1 else None
    if rows is not None:
        _one_output(rankers, rows)

    def read(part: int) -> Optional[Stop]:
        ranker = rankers[part]
        status = ranker.add_dict(run, bounds[part], bounds[part + 1])
        if status == _trec.STATUS_OK:
            status = ranker.finish()
        return None if status == _trec.STATUS_OK else status_stop(ranker, status)

    return _in_ranges(rankers, threads, read)


def _rank_columns(make_ranker, table_columns: columns.ArrowColumns, threads: int):
    """A finished ranker of a table's run columns, its topics grouped in C and cut in
    ranges of at least COLUMN_TOPICS_PER_THREAD, each ranked by a ranker of its own
    into its place in one output (as _rank_dict); or the first Stop."""
    grouped = _columns.group_rows(table_columns.query_ids)
    if grouped is None:
        return Stop("too_big")
    starts, order = grouped
    n_topics = len(starts) - 1
    parts = max(1, min(parts_for(threads), n_topics // COLUMN_TOPICS_PER_THREAD))
    bounds = [n_topics * part // parts for part in range(parts + 1)]
    rankers = [make_ranker() for _ in range(parts)]
    if parts > 1:
        _one_output(rankers, rankers[0].column_rows(starts, bounds))

    def read(part: int) -> Optional[Stop]:
        ranker = rankers[part]
        status = ranker.add_columns(table_columns.query_ids, table_columns.doc_ids,
                                    table_columns.values, starts, order, bounds[part],
                                    bounds[part + 1])
        if status == _trec.STATUS_OK:
            status = ranker.finish()
        return None if status == _trec.STATUS_OK else status_stop(ranker, status)

    return _in_ranges(rankers, threads, read)


def _run_object_columns(run: Run) -> columns.ArrowColumns:
    """A loaded Run's rows as columns the compiled ranker reads in place."""
    return loaded_columns(run.topics, run.offsets, run.docnos, run.scores, run.source)


@dataclass
class _RunRead:
    """A run read by a finished ranker: how errors name it, whether they name lines
    (else rows) and what they call a docno and a topic, its topics without documents
    (a dict's, a loaded Run's) and its tag where the ranker does not know it."""

    ranker: Any
    source: str
    lines: bool = True
    words: tuple[str, str] = ("docno", "topic")
    empty_topics: tuple[str, ...] = ()
    tag: Optional[str] = None
    tags_agree: Optional[bool] = None


class _RunReader:
    """Reads and ranks a run of any kind (see read_ranked) with rankers that
    ``make_ranker(grouping)`` makes; ``checked_qrels()`` raises the qrels' duplicate,
    if any, before a run error is raised (the reference reader's order)."""

    def __init__(self, make_ranker, threads: int, duplicates: DuplicatePolicy,
                 checked_qrels: Callable[[], None]):
        self.make_ranker, self.threads = make_ranker, threads
        self.duplicates, self.checked_qrels = duplicates, checked_qrels

    def failed(self, stop: Stop, name: str, shift: int = 0, max_line: int = -1):
        """Raise the error of a run's ``stop``, after the qrels' own, if any."""
        _oom(stop, (name, "run"))
        self.checked_qrels()
        raise _stop_error(stop, name, _RUN, shift, max_line)

    def converted(self, run: Any) -> _RunRead:
        """A run the compiled ranker does not take as it is, checked and converted by
        the reference front-ends (which raise the error of a bad one), then ranked."""
        self.checked_qrels()
        if columns.is_columnar(run):
            run = run_from_dataframe(run, duplicates=self.duplicates)
        elif not isinstance(run, Run):
            run = run_from_dict(run)
        return self.read(run)

    def read(self, run: Any) -> _RunRead:
        if type(run) is dict:
            with _reading("<dict>", "run"):
                ranked = _rank_dict(lambda: self.make_ranker(False), run, self.threads)
            if not isinstance(ranked, Stop):
                return _RunRead(ranked, "<dict>", lines=False)
            if ranked.kind != "line":       # (a "line": ids or values to convert first)
                self.failed(ranked, "<dict>")
            return self.converted(run)
        if isinstance(run, Qrels):
            raise InputError("expected a run, got Qrels")
        if isinstance(run, Run):
            counts = np.diff(run.offsets)
            empty = tuple(topic for topic, n in zip(run.topics, counts.tolist()) if n == 0)
            ranker = self.columns(_run_object_columns(run), None)
            return _RunRead(ranker, run.source, run.lines is not None, empty_topics=empty,
                            tag=run.tag, tags_agree=run.tags_agree)
        if columns.is_columnar(run):
            table_columns = columns.arrow_columns(run, "score")
            if table_columns is None:
                return self.converted(run)
            return _RunRead(self.columns(table_columns, run), table_columns.source,
                            lines=False, words=TABLE_WORDS)
        if isinstance(run, Mapping):
            return self.converted(run)
        source = source_of(run)
        if source is None:
            raise neighbours.refused(run, "run")
        return _RunRead(self.source(source), source.name)

    def columns(self, table_columns: columns.ArrowColumns, original: Any):
        """A finished ranker of a table's columns (``original``: the table, whose
        front-end words a NaN score)."""
        with _reading(table_columns.source, "run"):
            ranked = _rank_columns(lambda: self.make_ranker(False), table_columns,
                                   self.threads)
        if isinstance(ranked, Stop):
            if ranked.kind == "line":       # a NaN score
                self.checked_qrels()
                _bad_row(original, run_from_dataframe, table_columns.source)
            self.failed(ranked, table_columns.source)
        return ranked

    def source(self, source: Source):
        """A finished ranker of a run file or stream: ranked as it streams while its
        topics are contiguous (a plain file in parts), else held by topic and read
        again: a file or a seekable stream from its start, a stream that cannot be read
        twice (a pipe) from the copy made of what was read of it (see Spill), then on."""
        max_line = max_line_bytes()
        parts = source.plain and self.threads > 1
        grouping = parts and topics_come_back(source.path)     # (then held by topic at once)
        spill = Spill() if not source.again else None
        try:
            with _reading(source.name, "run"):
                while True:
                    if parts:
                        ranker, stop, shift = read_parts(
                            lambda: self.make_ranker(grouping), source, self.threads,
                            max_line, run=True, grouping=grouping)
                    else:
                        ranker, stop, shift = read_whole(self.make_ranker(grouping), source,
                                                         max_line, None if grouping else spill)
                    if stop is None and (grouping or not parts):
                        status = ranker.finish(self.threads)
                        if status != _trec.STATUS_OK:
                            ranker, stop = None, status_stop(ranker, status)
                    if stop is None:
                        break
                    if stop.kind == "not_grouped" and not grouping:
                        grouping = True     # a topic came back: held by topic this time
                        if spill is not None:   # (the copy of what was read, then the rest)
                            source = spill.then(source.name, source.stream)
                        continue
                    self.failed(stop, source.name, shift, max_line)
        finally:
            if spill is not None:
                spill.close()
        if ranker.n_lines == 0:
            self.checked_qrels()
            raise FormatError(source.name, 0, "no results (the file has no data lines)")
        return ranker


def read_ranked(qrels: Any, run: Any, *, ties: TieRule, score_precision: ScorePrecision,
                seed: int, depth: Optional[int], duplicates: DuplicatePolicy = "error",
                threads: Optional[int] = None) -> RankedInput:
    """Read (see the module's docstring), rank and join in C. Plain qrels and run files
    are read in parts of at least PART_BYTES by up to ``threads`` threads (None: the
    available cores, at most MAX_AUTO_THREADS), a run dict's topics ranked in ranges
    of at least DICT_TOPICS_PER_THREAD by as many, a held run's topics by as many; the
    result does not depend on how many. Qrels not prepared are read without their
    duplicate check, which the ranking does (see QrelsTable.finish), and their table
    is freed by a helper thread when the caller calls the result's ``release``."""
    _check_policy(duplicates)
    threads = auto_threads(threads)
    prepared = isinstance(qrels, (PreparedQrels, PreparedQrelsFile, PreparedQrelsTable))
    judgments = qrels.native if prepared \
        else native_qrels(qrels, threads=threads, check=False,   # checked as ranked
                          duplicates=duplicates)
    max_line = max_line_bytes()

    def make_ranker(grouping: bool = False):
        return _trec.RunRanker(judgments.table, TIE_CODES[ties],
                               _trec.PRECISION_CODES[score_precision],
                               -1 if depth is None else depth, seed, ties in GROUP_TIE_RULES,
                               max_line, DUPLICATE_CODES[duplicates], grouping)

    def checked_qrels() -> None:
        """The qrels' first duplicate raised, if the table has one (not checked yet:
        the ranking checks it)."""
        if judgments.table.find_duplicates():
            raise _duplicate_error(judgments.source, judgments.table.first_duplicate(),
                                   _names_lines(judgments.source))

    read = _RunReader(make_ranker, threads, duplicates, checked_qrels).read(run)
    ranker = read.ranker
    with _reading(read.source, "run"):
        status = ranker.check_unused_judgments()
        if status == _trec.STATUS_QRELS_DUPLICATE:
            checked_qrels()
        if status != _trec.STATUS_OK:
            _oom(status_stop(ranker, status), (read.source, "run"))
            raise _stop_error(status_stop(ranker, status), read.source, _RUN)
        if ranker.n_duplicates:
            if duplicates == "error":
                raise _duplicate_error(read.source, ranker.first_duplicate(), read.lines,
                                       read.words)
            _warn_dropped(read.source, ranker.n_duplicates, ranker.first_duplicate(),
                          read.lines, duplicates, read.words)
        same_topics = ranker.same_topics() and not read.empty_topics
        run_topics, run_offsets, levels, judged, scores, tag = ranker.result()
    if read.empty_topics:           # a dict's or a loaded Run's topics without documents
        run_topics = run_topics + list(read.empty_topics)
        run_offsets = np.concatenate([run_offsets, np.full(len(read.empty_topics),
                                                           run_offsets[-1], np.int64)])
    if read.tag is not None:
        tag = read.tag

    def release() -> None:      # a table of its own, no longer needed: freed by a helper
        if prepared:            # thread when big, at once when small (a thread costs more)
            return
        if len(judgments.levels) < RELEASE_IN_HELPER_JUDGMENTS:
            judgments.table.release()
        else:
            threading.Thread(target=judgments.table.release, daemon=True).start()

    return RankedInput(run_topics, run_offsets, levels, judged, scores, tag,
                       ranker.tags_agree if read.tags_agree is None else read.tags_agree,
                       same_topics, judgments, release)


# ---------------------------------------------------------------- prepared judgments

class PreparedQrels(dict[str, dict[str, float]]):
    """Judgments ``{qid: {docno: level}}`` whose native table is built once, as
    pytrec_eval's ``RelevanceEvaluator`` reads its qrels once: every run evaluated
    against them skips reading the judgments again.

    The topics' dicts are kept as they are, not copied (a copy would double the
    judgments' memory); other mappings are copied into plain dicts, which the native
    reader takes. Treat them as read-only once prepared: the table is not rebuilt if
    they change. Judgments the native reader must convert first (ids that are not
    str, levels that are not int or float) are converted once, here; bad ones raise
    here, as :func:`cumgain.evaluate` would.
    """

    def __init__(self, qrels: Mapping[str, Mapping[str, float]]):
        super().__init__(
            (qid, dict(docs) if isinstance(docs, Mapping) and type(docs) is not dict else docs)
            for qid, docs in qrels.items())
        self.native: NativeQrels = native_qrels(dict(self), indexed=True)

    def __reduce__(self) -> tuple[type[PreparedQrels], tuple[dict[str, dict[str, float]]]]:
        return PreparedQrels, (dict(self),)


class PreparedQrelsFile(os.PathLike[str]):
    """A qrels file read once by the native reader, for evaluating several runs
    against it (:func:`cumgain.prepare_qrels`; the command line's evaluate, compare and
    trec_eval): each evaluation skips reading the judgments again. It is an
    ``os.PathLike`` of the file (for the tools that read it as a path). ``source``
    and ``relevance`` (every judgment's level, grouped by topic) are those of
    :class:`cumgain.trec_io.Qrels`; ``topics`` in order of first appearance."""

    def __init__(self, native: NativeQrels, path: str):
        self.native = native
        self.source = path

    def __fspath__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return (f"PreparedQrelsFile({self.source!r}: {len(self.native.topics)} topics, "
                f"{len(self.native.levels)} judgments)")

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[str]]:
        return _read_again, (self.source,)      # another process reads the file again

    @property
    def topics(self) -> tuple[str, ...]:
        return self.native.topics

    @property
    def relevance(self) -> np.ndarray:
        levels = self.native.levels.astype(np.float64, copy=False)  # (int8 in the table)
        levels.flags.writeable = False
        return levels


@dataclasses.dataclass(frozen=True, eq=False)
class PreparedQrelsTable(columns.Renamed):
    """Judgments of a table (see :mod:`cumgain.io.columns`) read once by the native reader,
    for evaluating several runs against them, and shipped to Dask workers as the table
    (each worker prepares it once when it unpickles it). ``topics`` in order of first
    appearance; ``relevance`` every judgment's level, grouped by topic.

    ``native``: the judgments read and checked; :func:`cumgain.prepare_qrels` keeps every
    topic's index, :func:`prepare_qrels_once` none (see there)."""

    native: Any = None

    def __repr__(self) -> str:
        return (f"PreparedQrelsTable({columns.source_name(self.table)}: "
                f"{len(self.native.topics)} topics, {len(self.native.levels)} judgments)")

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any]]:
        table = columns.Renamed(self.table, self.names) if self.names else self.table
        if self.native.table.indexed:
            return _prepared_again, (table,)    # another process prepares it again
        return _rebuilt_once, (table,)          # (checked here: not again there)

    @property
    def topics(self) -> tuple[str, ...]:
        return self.native.topics

    @property
    def relevance(self) -> np.ndarray:
        levels = self.native.levels.astype(np.float64, copy=False)
        levels.flags.writeable = False
        return levels


def prepare_qrels_once(qrels: Any) -> Optional[PreparedQrelsTable]:
    """A table's judgments (see :mod:`cumgain.io.columns`) prepared for rankings that meet
    each topic at most once between them, as the partitions of one :mod:`cumgain.dask`
    evaluation do: read and checked, without :func:`cumgain.prepare_qrels`' index of every
    topic (a ranking hashes the judgments of the topics it joins, each once; an index
    would hash them all, up front, in every process). Pickled, the table is rebuilt
    on the other side without its duplicate check. None where the compiled reader
    does not read the table's columns in place."""
    judgments = _columns_qrels(qrels, indexed=False)
    return None if judgments is None else _table_of(qrels, judgments)


def _read_again(path: str) -> PreparedQrelsFile:
    """A :class:`PreparedQrelsFile` unpickled: the file read again, as
    :func:`cumgain.prepare_qrels` reads it."""
    return PreparedQrelsFile(native_qrels(path), path)


def _prepared_again(qrels: Any) -> PreparedQrelsTable:
    """A table from :func:`cumgain.prepare_qrels` unpickled: read and checked again, as
    it was prepared."""
    judgments = _columns_qrels(qrels, indexed=True, duplicates="error")
    if judgments is None:
        raise InputError(f"{columns.source_name(qrels)}: the prepared qrels could not be "
                         "read again")
    return _table_of(qrels, judgments)


def _rebuilt_once(qrels: Any) -> PreparedQrelsTable:
    """A table from :func:`prepare_qrels_once` unpickled: read again, not checked again
    (its process of origin checked it)."""
    judgments = _columns_qrels(qrels, indexed=False, unique=True)
    if judgments is None:
        raise InputError(f"{columns.source_name(qrels)}: the prepared qrels could not be "
                         "read again")
    return _table_of(qrels, judgments)


def _table_of(qrels: Any, judgments: NativeQrels) -> PreparedQrelsTable:
    table, names = (qrels.table, qrels.names) if isinstance(qrels, columns.Renamed) \
        else (qrels, ())
    return PreparedQrelsTable(table, names, native=judgments)
