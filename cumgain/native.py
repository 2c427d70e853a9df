"""The reader of every input: parse, rank and join in C (``cgcore._trec``,
``cgcore._qrels``).

:func:`read_ranked` reads the qrels and the run and returns every run topic already
ranked (score descending, then the tie rule), cut at the depth and joined with its
judgments. It takes TREC files (plain or gzip; a plain file read in parts by several
threads), standard input (``"-"``), pipes, FIFOs, character devices and binary file
objects, ``{qid: {docno: value}}`` dicts, tables (:mod:`cumgain.columns`) and loaded
:class:`~cumgain.trec_io.Qrels` / :class:`~cumgain.trec_io.Run` objects, under every
policy (ties, score precision, depth, duplicates). A run whose topics are contiguous
is ranked a topic at a time as it streams; one whose topics come back (shuffled lines,
concatenated shards, any interleaving) is held by topic (about half its text) and
ranked once it ends: a file or a seekable stream is read again that way when a topic
comes back, a stream that cannot be read again (a pipe) is held from the start.

A bad input raises the error the reference reader (:mod:`cumgain.trec_io`) raises for
it, with file, line and text, worded from the line where the compiled parser stopped
(:func:`cumgain._trec_lines.line_error`): nothing is read a second time to word it.
Errors come in the reference reader's order: the qrels' before the run's; a file's
malformed lines (in file order) before its repeated docnos (the first by line).
Dicts whose ids are not all ``str`` or whose values are not all ``int`` / ``float``,
and tables whose columns the compiled ranker does not read in place, are checked and
converted by the reference front-ends (:func:`~cumgain.trec_io.run_from_dict`,
:func:`~cumgain.trec_io.run_from_dataframe`, ...) once, then ranked here.

Running out of memory raises :class:`~cumgain.exceptions.OutOfMemoryError` (a
``MemoryError``) at once, naming what was being read and, when known, how many bytes
the allocation that failed asked for.

:func:`prepare_qrels` reads judgments once, for evaluating many runs against them:
a :class:`PreparedQrelsFile` for a qrels file, a :class:`PreparedQrels` for a dict
(also what the pytrec_eval drop-in uses), a :class:`PreparedQrelsTable` for a table.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union, overload

import numpy as np

from cgcore import _columns, _qrels, _trec
from cumgain import columns, trec_io
from cumgain._native_blocks import (BLOCK, SHORT_PARTS_PER_THREAD, Source, Stop, _LineTooLong,
                                    auto_threads, available_cores, check_threads,
                                    feed_blocks, is_text_stream, part_starts, parts_for,
                                    parts_in_turn, range_blocks, source_of, spread_order,
                                    status_stop)
from cumgain._trec_bytes import _Compressed, _Corrupt
from cumgain._trec_lines import _QRELS, _RUN, _Kind, _long_line_error, line_error
from cumgain._trec_tables import DuplicatesDroppedWarning, _check_policy, _user_stacklevel
from cumgain.exceptions import FormatError, InputError, OutOfMemoryError, naming
from cumgain.types import DuplicatePolicy, PathLike, ScorePrecision, TieRule

if TYPE_CHECKING:
    from cumgain.trec_io import Qrels, Run

__all__ = ["NativeQrels", "PreparedQrels", "PreparedQrelsFile", "PreparedQrelsTable",
           "RankedInput", "auto_threads", "available_cores", "check_threads", "native_qrels",
           "parts_for", "prepare_qrels", "prepare_qrels_once", "read_ranked"]

TIE_CODES: dict[str, int] = {
    "docno_desc": _trec.TIES_DOCNO_DESC, "average": _trec.TIES_DOCNO_DESC,
    "docno_asc": _trec.TIES_DOCNO_ASC, "input_order": _trec.TIES_INPUT_ORDER,
    "random": _trec.TIES_RANDOM}
DUPLICATE_CODES: dict[str, int] = {
    "error": _trec.DUPLICATES_ERROR, "first": _trec.DUPLICATES_FIRST,
    "last": _trec.DUPLICATES_LAST}


class NativeQrels:
    """A finished qrels table and its judgments grouped by topic. Only read once
    built, so one instance serves any number of rankings, in any number of threads.
    ``empty_topics``: qrels topics without judgments (a dict's empty topics), which
    the table does not hold."""

    def __init__(self, table: _qrels.QrelsTable, offsets: np.ndarray, levels: np.ndarray,
                 empty_topics: tuple[str, ...] = (), source: str = ""):
        self.table = table          # _qrels.QrelsTable
        self.offsets = offsets      # judgments of topic i: offsets[i]:offsets[i+1] (read-only)
        self.levels = levels        # int8 or float64 (see QrelsTable.grouped; read-only)
        self.empty_topics = empty_topics
        self.source = source        # how errors name the judgments
        self._topics: Optional[tuple[str, ...]] = None
        self._topic_index: Optional[dict[str, int]] = None
        self._sorted_topics: Optional[tuple[str, ...]] = None

    @property
    def topics(self) -> tuple[str, ...]:
        """The topic ids in order of appearance in the qrels, decoded when first asked
        for (an evaluation whose run ranks the same topics needs only the run's), which
        must be before the table is released. Threads asking at once decode them twice."""
        if self._topics is None:
            self._topics = tuple(self.table.topics())
        return self._topics

    @property
    def topic_index(self) -> dict[str, int]:
        """``{topic: i}`` over :attr:`topics`, built when first asked for and kept: a
        table prepared once is ranked against many runs (each partition of a Dask run,
        each run of the command line), each needing it for its own few topics."""
        if self._topic_index is None:
            self._topic_index = {topic: i for i, topic in enumerate(self.topics)}
        return self._topic_index

    @property
    def sorted_topics(self) -> tuple[str, ...]:
        """:attr:`topics` sorted, built when first asked for and kept (as topic_index)."""
        if self._sorted_topics is None:
            self._sorted_topics = tuple(sorted(self.topics))
        return self._sorted_topics


@dataclass
class RankedInput:
    """Every run topic ranked and joined, and the judgments grouped by topic."""

    run_topics: list[str]         # in order of appearance in the run
    run_offsets: np.ndarray       # ranked rows of run topic i: run_offsets[i]:run_offsets[i+1]
    levels: np.ndarray            # relevance level per ranked row (0 if not in the qrels; a
                                  # negative level: pooled but not judged): int8
                                  # or float64, as the qrels table's levels
    judged: np.ndarray            # in the qrels with a level >= 0
    scores: Optional[np.ndarray]  # as compared (after float32 rounding); kept for ties="average"
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


@contextlib.contextmanager
def _reading(source: str, what: str):
    """Turn a MemoryError raised while reading ``source`` (the ``what``: "qrels" or
    "run") into an OutOfMemoryError naming it."""
    try:
        yield
    except OutOfMemoryError:
        raise
    except MemoryError as error:
        raise OutOfMemoryError(source, what, detail=str(error) or None) from error


# ---------------------------------------------------------------- errors

TOO_BIG = ("past what the compiled reader's layout holds (at most 4,294,967,294 topic ids, "
           "4,294,967,295 documents in a topic and 4 GiB of docnos in a qrels table)")


def _stop_error(stop: Stop, source: str, kind: _Kind, shift: int = 0,
                max_line: int = -1) -> Exception:
    """The error for ``stop`` (of a part whose lines are ``shift`` lines into
    ``source``), as the reference reader words it."""
    if stop.kind == "line":
        return line_error(source, kind, shift + stop.line, stop.text, max_line)
    if stop.kind == "long":
        return _long_line_error(source, shift + stop.line, stop.text[:max_line], max_line)
    if stop.kind == "gzip":
        done = shift + stop.line
        where = f"after line {done}" if done else "before the first complete line"
        return FormatError(source, done, f"truncated or corrupt gzip data {where} (the last "
                           f"line read in full): {stop.detail}")
    if stop.kind == "compressed":
        return FormatError(source, 0, stop.detail)
    if stop.kind == "raised":    # (raised where the blocks were read: a helper thread,
        return stop.error.with_traceback(None)  # whose frames hold the blocks' buffers)
    if stop.kind == "memory":
        return OutOfMemoryError(source, kind.name, int(stop.detail or 0) or None)
    if stop.kind == "too_big":
        return InputError(f"{source}: {TOO_BIG}")
    return InputError(f"{source}: the native reader stopped ({stop.kind})")


def _duplicate_error(source: str, report: tuple, lines: bool,
                     words: tuple[str, str] = ("docno", "topic")) -> InputError:
    """The error for a docno twice in a topic (``report``: topic, docno, line of the
    first, line of the repeat; for rows, line = row + 1; ``words``: what a docno and
    a topic are called: a table's columns are doc_id and query_id)."""
    topic, docno, first, repeat = report
    what = f"duplicate {words[0]} {docno!r} in {words[1]} {topic!r}"
    if not lines:
        return InputError(f"{source}: {what}: rows {first - 1} and {repeat - 1} "
                          f"(0-based positions)")
    return FormatError(source, repeat, f"{what}: lines {first} and {repeat}")


def _warn_dropped(source: str, count: int, report: tuple, lines: bool, duplicates: str,
                  words: tuple[str, str] = ("docno", "topic")) -> None:
    """The warning of duplicates="first" / "last" (as the reference reader words it)."""
    topic, docno, first, repeat = report
    where = f"lines {first} and {repeat}" if lines \
        else f"rows {first - 1} and {repeat - 1} (0-based positions)"
    warnings.warn(
        f"{source}: dropped {count} duplicate ({words[1]}, {words[0]}) row(s), keeping "
        f"the {duplicates} occurrence of each; the first was duplicate {words[0]} "
        f"{docno!r} in {words[1]} {topic!r}: {where}", DuplicatesDroppedWarning,
        stacklevel=_user_stacklevel())


TABLE_WORDS = ("doc_id", "query_id")     # what a table's docnos and topics are called


def _first_stop(stops: list, own_lines: list) -> tuple[Optional[Stop], int]:
    """The first part's Stop among ``stops`` and how many lines the parts before it
    hold (``own_lines``: each part's own)."""
    shift = 0
    for stop, lines in zip(stops, own_lines):
        if stop is not None:
            return stop, shift
        shift += lines
    return None, 0


def _oom(stop: Stop, where: tuple) -> None:
    if stop.kind == "memory":
        raise OutOfMemoryError(*where, int(stop.detail or 0) or None)


# ---------------------------------------------------------------- reading a source

GROUPING_PARTS_PER_THREAD = 1   # a file held by topic is read in this many parts a thread
                                # (each part holds each topic's lines apart, with the
                                # unused end of its last chunk)


def _read_parts(make_parser, source: Source, threads: int, max_line: int, run: bool,
                grouping: bool = False):
    """A parser (a QrelsTable, not finished; or a RunRanker, finished unless
    ``grouping``) that read all of a plain file, in parts from topic starts by up to
    ``threads`` threads, joined in order; or ``(None, stop, shift)`` for the first
    part that stopped."""
    path = source.path
    if grouping:    # (each part holds every topic's lines apart: a few large parts)
        starts = part_starts(path, GROUPING_PARTS_PER_THREAD * threads)
    else:
        starts = part_starts(path, parts_for(threads), SHORT_PARTS_PER_THREAD * threads)
    stops_at = starts[1:] + [os.path.getsize(path)]
    parsers = [make_parser() for _ in starts]
    own_lines = [0] * len(starts)
    buffers = threading.local()     # a thread's read buffer, for part after part (a new
                                    # one each time was faulted in again each time)

    streaming = run and not grouping
    seen: dict[str, int] = {}           # (streaming) the topics of the parts read: a topic
    seen_lock = threading.Lock()        # in two parts stops the reading at once

    def read(part: int) -> Optional[Stop]:
        if not hasattr(buffers, "block"):
            buffers.block = bytearray(BLOCK)
        parser = parsers[part]
        stop = feed_blocks(parser, range_blocks(path, starts[part], stops_at[part],
                                                buffers.block, max_line), max_line)
        own_lines[part] = parser.lines_seen
        if stop is None and streaming:
            status = parser.finish()
            if status != _trec.STATUS_OK:
                stop = status_stop(parser, status)
        if stop is None and streaming:
            topics = parser.topic_list()
            with seen_lock:
                if any(seen.setdefault(topic, part) != part for topic in topics):
                    stop = Stop("not_grouped")
        return stop

    def join(first, other) -> Optional[Stop]:
        status = first.append_held(other) if grouping else first.append(other)
        return None if status == _trec.STATUS_OK else status_stop(first, status)

    with naming(path):
        stops = parts_in_turn(parsers, threads, read, join,
                              spread_order(len(parsers)) if streaming else None)
    stop, shift = _first_stop(stops, own_lines)
    if stop is not None:
        return None, stop, shift
    return parsers[0], None, 0


def _read_whole(parser, source: Source, max_line: int):
    """``parser`` fed the whole source in one thread: (parser, None, 0), or (None,
    stop, 0)."""
    with naming(source.name):
        stop = feed_blocks(parser, source.blocks(max_line), max_line)
    return (parser, None, 0) if stop is None else (None, stop, 0)


# ---------------------------------------------------------------- qrels

def native_qrels(qrels: Any, indexed: bool = False, threads: Optional[int] = 1,
                 check: bool = True, duplicates: DuplicatePolicy = "error") -> NativeQrels:
    """Read judgments in C: a TREC file (``"-"``: standard input), a binary stream, a
    ``{qid: {docid: level}}`` mapping, a table (:mod:`cumgain.columns`) or a loaded
    :class:`~cumgain.trec_io.Qrels`. Raises the reference reader's error for a bad
    input. ``indexed``: keep every topic's docno index, for a table many runs will be
    ranked against. ``threads``: how many may read a plain file in parts (None: the
    available cores, at most MAX_AUTO_THREADS). ``check=False``: a file's table is
    finished without its duplicate check, for one ranking that checks each topic as it
    joins it (see QrelsTable.finish); a policy that drops duplicates checks anyway."""
    _check_policy(duplicates)
    check = check or duplicates != "error" or indexed
    if isinstance(qrels, trec_io.Run):
        raise InputError("expected qrels, got a Run")
    if isinstance(qrels, trec_io.Qrels):
        return _qrels_object(qrels, indexed, duplicates)
    if columns.is_columnar(qrels):
        judgments = _columns_qrels(qrels, indexed, duplicates=duplicates)
        if judgments is None:       # not read in place: checked and converted first
            judgments = _qrels_object(trec_io.qrels_from_dataframe(qrels, duplicates=duplicates),
                                      indexed, "error")
        return judgments
    if isinstance(qrels, Mapping):
        return _dict_qrels(qrels, indexed)
    source = source_of(qrels)
    if source is None:
        if is_text_stream(qrels):
            raise InputError("qrels: a text stream; give its bytes (sys.stdin.buffer, or "
                             "a file opened with \"rb\")")
        raise InputError(
            "qrels must be a path, a binary stream, a {qid: {docid: relevance}} mapping, a "
            "pandas or Polars DataFrame, an Arrow table or a loaded Qrels, got "
            f"{type(qrels).__name__}")
    return _source_qrels(source, indexed, auto_threads(threads), check, duplicates)


def _source_qrels(source: Source, indexed: bool, threads: int, check: bool,
                  duplicates: DuplicatePolicy) -> NativeQrels:
    """A qrels file or stream read in C (see native_qrels)."""
    max_line = trec_io.max_line_bytes()
    where = (source.name, "qrels")

    def make():
        return _qrels.QrelsTable(indexed, max_line)

    with _reading(*where):
        if source.plain and threads > 1:
            table, stop, shift = _read_parts(make, source, threads, max_line, run=False)
        else:
            table, stop, shift = _read_whole(make(), source, max_line)
        if stop is not None:
            raise _stop_error(stop, source.name, _QRELS, shift, max_line)
        if table.n_rows == 0:
            raise FormatError(source.name, 0, "no judgments (the file has no data lines)")
        status = table.finish(threads, check, duplicates=DUPLICATE_CODES[duplicates])
        _finished(table, status, source.name, lines=True)
    if duplicates != "error" and table.n_duplicates:
        _warn_dropped(source.name, table.n_duplicates, table.first_duplicate(), True,
                      duplicates)
    return _native_of(table, (), source.name)


def _finished(table, status: int, name: str, lines: bool) -> None:
    """Raise what a table's finish() status says, if not OK."""
    if status == _trec.STATUS_DUPLICATE:
        raise _duplicate_error(name, table.first_duplicate(), lines)
    if status == _trec.STATUS_NO_MEMORY:
        raise OutOfMemoryError(name, "qrels", table.failed_bytes)
    if status == _trec.STATUS_TOO_BIG:
        raise InputError(f"{name}: {TOO_BIG}")
    if status != _trec.STATUS_OK:
        raise InputError(f"{name}: the native reader stopped (status {status})")


def _native_of(table, empty: tuple[str, ...], source: str) -> NativeQrels:
    offsets, levels = table.grouped()
    offsets.flags.writeable = levels.flags.writeable = False
    return NativeQrels(table, offsets, levels, empty, source)


def _dict_qrels(qrels: Mapping, indexed: bool) -> NativeQrels:
    """A ``{qid: {docid: level}}`` mapping read in C; its topics without judgments kept
    aside as ``empty_topics``. Ids that are not all str, or levels not all int /
    float, are checked and converted by the reference front-end first."""
    where = ("<dict>", "qrels")
    if type(qrels) is dict:
        empty = tuple(qid for qid, docs in qrels.items()
                      if isinstance(docs, (dict, Mapping)) and len(docs) == 0)
        judged = {qid: docs for qid, docs in qrels.items() if qid not in empty} \
            if empty else qrels
        if all(type(qid) is str for qid in empty):
            with _reading(*where):
                table = _qrels.QrelsTable(indexed)
                status = table.add_dict(judged)
                if status == _trec.STATUS_OK:
                    status = table.finish()
                if status == _trec.STATUS_OK:
                    return _native_of(table, empty, "<dict>")
                if status not in (_trec.STATUS_BAD_LINE, _trec.STATUS_DUPLICATE):
                    _finished(table, status, "<dict>", lines=False)
    return _qrels_object(trec_io.qrels_from_dict(qrels), indexed, "error")


def _qrels_object(qrels: Qrels, indexed: bool, duplicates: DuplicatePolicy) -> NativeQrels:
    """A loaded Qrels (or one a front-end made) read in C, rows as its own."""
    counts = np.diff(qrels.offsets)
    empty = tuple(topic for topic, n in zip(qrels.topics, counts.tolist()) if n == 0)
    topic_ids = np.repeat(np.array(qrels.topics, dtype=object), counts) \
        if len(qrels.topics) else np.zeros(0, object)
    docnos = np.ascontiguousarray(qrels.docnos, dtype=object)
    query_ids, doc_ids = _columns.TextColumn.of_strs(topic_ids), _columns.TextColumn.of_strs(
        docnos)
    if not (query_ids.valid and doc_ids.valid):
        raise InputError(f"{qrels.source}: the topic ids and docnos must be str with UTF-8")
    table_columns = columns.ArrowColumns(query_ids, doc_ids, np.ascontiguousarray(
        qrels.relevance, dtype=np.float64), qrels.source, (topic_ids, docnos))
    return _table_qrels(table_columns, indexed, duplicates, empty,
                        lines=qrels.lines is not None)


def _columns_qrels(qrels: Any, indexed: bool, unique: bool = False,
                   duplicates: DuplicatePolicy = "error") -> Optional[NativeQrels]:
    """A table's judgments (see cumgain.columns) in C, or None where the compiled
    reader does not read its columns in place. ``unique``: known to hold no
    duplicate (checked where they were read), so not checked again."""
    table_columns = columns.arrow_columns(qrels, "relevance")
    if table_columns is None:
        return None
    return _table_qrels(table_columns, indexed, duplicates, (), unique=unique,
                        words=TABLE_WORDS, original=qrels)


def _table_qrels(table_columns: columns.ArrowColumns, indexed: bool,
                 duplicates: DuplicatePolicy, empty: tuple[str, ...], unique: bool = False,
                 lines: bool = False, words: tuple[str, str] = ("docno", "topic"),
                 original: Any = None) -> NativeQrels:
    where = (table_columns.source, "qrels")
    with _reading(*where):
        table = _qrels.QrelsTable(indexed)
        status = table.add_columns(table_columns.query_ids, table_columns.doc_ids,
                                   table_columns.values)
        if status == _trec.STATUS_BAD_LINE:     # a NaN or infinite level: worded by the
            _bad_row(original, trec_io.qrels_from_dataframe, table_columns.source)
        if status == _trec.STATUS_OK:
            status = table.finish(unique=unique, duplicates=DUPLICATE_CODES[duplicates])
        if status == _trec.STATUS_DUPLICATE:
            raise _duplicate_error(table_columns.source, table.first_duplicate(), lines, words)
        _finished(table, status, table_columns.source, lines=lines)
    if table.n_duplicates and duplicates != "error":
        _warn_dropped(table_columns.source, table.n_duplicates, table.first_duplicate(),
                      lines, duplicates, words)
    return _native_of(table, empty, table_columns.source)


def _bad_row(original: Any, front_end: Callable[[Any], Any], source: str) -> None:
    """Raise the error of a table's value the compiled reader refused (NaN, or an
    infinite level), worded by the reference front-end that reads the table."""
    if original is not None:
        front_end(original)
    raise InputError(f"{source}: a value is NaN, or infinite where it must be finite")


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
    counts = np.diff(run.offsets)
    topic_ids = np.repeat(np.array(run.topics, dtype=object), counts) \
        if len(run.topics) else np.zeros(0, object)
    docnos = np.ascontiguousarray(run.docnos, dtype=object)
    query_ids, doc_ids = _columns.TextColumn.of_strs(topic_ids), _columns.TextColumn.of_strs(
        docnos)
    if not (query_ids.valid and doc_ids.valid):
        raise InputError(f"{run.source}: the topic ids and docnos must be str with UTF-8")
    return columns.ArrowColumns(query_ids, doc_ids, np.ascontiguousarray(
        run.scores, dtype=np.float64), run.source, (topic_ids, docnos))


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
            run = trec_io.run_from_dataframe(run, duplicates=self.duplicates)
        elif not isinstance(run, trec_io.Run):
            run = trec_io.run_from_dict(run)
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
        if isinstance(run, trec_io.Qrels):
            raise InputError("expected a run, got Qrels")
        if isinstance(run, trec_io.Run):
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
            if is_text_stream(run):
                raise InputError("run: a text stream; give its bytes (sys.stdin.buffer, or "
                                 "a file opened with \"rb\")")
            raise InputError(
                "a run must be a path, a binary stream, a {qid: {docid: score}} mapping, a "
                "pandas or Polars DataFrame, an Arrow table or a loaded Run, got "
                f"{type(run).__name__}")
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
                _bad_row(original, trec_io.run_from_dataframe, table_columns.source)
            self.failed(ranked, table_columns.source)
        return ranked

    def source(self, source: Source):
        """A finished ranker of a run file or stream: ranked as it streams while its
        topics are contiguous (a plain file in parts), else held by topic (the input
        read again; a stream that cannot be read again is held from the start)."""
        max_line = trec_io.max_line_bytes()
        grouping = not source.again
        parts = source.plain and self.threads > 1
        with _reading(source.name, "run"):
            while True:
                if parts:
                    ranker, stop, shift = _read_parts(
                        lambda: self.make_ranker(grouping), source, self.threads, max_line,
                        run=True, grouping=grouping)
                else:
                    ranker, stop, shift = _read_whole(self.make_ranker(grouping), source,
                                                      max_line)
                if stop is None and (grouping or not parts):
                    status = ranker.finish(self.threads)
                    if status != _trec.STATUS_OK:
                        ranker, stop = None, status_stop(ranker, status)
                if stop is None:
                    break
                if stop.kind == "not_grouped" and not grouping:
                    grouping = True         # a topic came back: held by topic this time
                    continue
                self.failed(stop, source.name, shift, max_line)
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
    max_line = trec_io.max_line_bytes()

    def make_ranker(grouping: bool = False):
        return _trec.RunRanker(judgments.table, TIE_CODES[ties], score_precision == "float32",
                               -1 if depth is None else depth, seed, ties == "average",
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


def _names_lines(source: str) -> bool:
    """Whether errors about judgments read from ``source`` name lines (a file, a
    stream) rather than rows (a dict, a table)."""
    return not source.startswith("<") or source in ("<stdin>", "<stream>")


# ---------------------------------------------------------------- loaded tables

def load_qrels_file(qrels: Any, *, duplicates: DuplicatePolicy = "error",
                    max_line: Optional[int] = None, threads: Optional[int] = None) -> Qrels:
    """A qrels file (``"-"``: standard input) or binary stream read in C into a loaded
    :class:`~cumgain.trec_io.Qrels` (what :func:`cumgain.trec_io.read_qrels` returns):
    topics in order of first appearance, each topic's judgments in input order with
    their lines, docnos as str; errors as the reference reader's."""
    _check_policy(duplicates)
    source = source_of(qrels)
    if source is None:
        raise InputError(f"the qrels path must be a str or os.PathLike, got "
                         f"{type(qrels).__name__}")
    max_line = trec_io.max_line_bytes(max_line)
    threads = auto_threads(threads)

    def make():
        return _qrels.QrelsTable(False, max_line, True)

    with _reading(source.name, "qrels"):
        if source.plain and threads > 1:
            table, stop, shift = _read_parts(make, source, threads, max_line, run=False)
        else:
            table, stop, shift = _read_whole(make(), source, max_line)
        if stop is not None:
            raise _stop_error(stop, source.name, _QRELS, shift, max_line)
        if table.n_rows == 0:
            raise FormatError(source.name, 0, "no judgments (the file has no data lines)")
        _finished(table, table.finish(threads, duplicates=DUPLICATE_CODES[duplicates]),
                  source.name, lines=True)
        if duplicates != "error" and table.n_duplicates:
            _warn_dropped(source.name, table.n_duplicates, table.first_duplicate(), True,
                          duplicates)
        offsets, levels = table.grouped()
        return trec_io.Qrels(tuple(table.topics()), offsets.copy(),
                             table.docno_strs(), levels.astype(np.float64),
                             source.name, table.row_lines())


def load_run_file(run: Any, *, duplicates: DuplicatePolicy = "error",
                  max_line: Optional[int] = None, threads: Optional[int] = None) -> Run:
    """A run file (``"-"``: standard input) or binary stream read in C into a loaded
    :class:`~cumgain.trec_io.Run` (what :func:`cumgain.trec_io.read_run` returns): each
    topic's lines held by topic, in input order, with their lines; errors as the
    reference reader's."""
    _check_policy(duplicates)
    source = source_of(run)
    if source is None:
        raise InputError(f"the run path must be a str or os.PathLike, got "
                         f"{type(run).__name__}")
    max_line = trec_io.max_line_bytes(max_line)
    threads = auto_threads(threads)
    empty = _qrels.QrelsTable()
    empty.finish()

    def make():
        return _trec.RunRanker(empty, _trec.TIES_INPUT_ORDER, False, -1, 0, False, max_line,
                               DUPLICATE_CODES[duplicates], True)

    with _reading(source.name, "run"):
        if source.plain and threads > 1:
            ranker, stop, shift = _read_parts(make, source, threads, max_line, run=True,
                                              grouping=True)
        else:
            ranker, stop, shift = _read_whole(make(), source, max_line)
        if stop is not None:
            raise _stop_error(stop, source.name, _RUN, shift, max_line)
        if ranker.n_lines == 0:
            raise FormatError(source.name, 0, "no results (the file has no data lines)")
        held = ranker.held_run()
        if held is None:
            raise _stop_error(status_stop(ranker, ranker.status), source.name, _RUN)
    if ranker.n_duplicates:
        if duplicates == "error":
            raise _duplicate_error(source.name, ranker.first_duplicate(), True)
        _warn_dropped(source.name, ranker.n_duplicates, ranker.first_duplicate(), True,
                      duplicates)
    topics, offsets, docnos, scores, lines, tag = held
    return trec_io.Run(tuple(topics), offsets, docnos, scores, tag, source.name, lines,
                       ranker.tags_agree)


class TopicCameBack(Exception):
    """A topic came back after another while streaming (:class:`StreamedTopics`), at
    ``line``; ``first_line``: where its lines began, if still held (else -1)."""

    def __init__(self, source: str, line: int, topic: str, first_line: int):
        super().__init__(source, line, topic, first_line)
        self.source, self.line, self.topic, self.first_line = source, line, topic, first_line


class StreamedTopics:
    """The topics of a run (a path, ``"-"`` or a binary stream) read by the compiled
    reader in blocks and handed out one by one as their lines end, for runs whose
    topics are contiguous (:mod:`cumgain.stream`): each ``(topic, docnos, scores,
    lines)`` in input order, a repeated docno dropped by the ``duplicates`` policy
    (``"error"``: raised when its topic is handed out). A topic that comes back
    raises :class:`TopicCameBack`; other errors are the reference reader's, in file
    order. Memory: the topic being read and a block. Once iterated, ``tag`` is the
    last line's tag and ``n_duplicates`` / ``first_duplicate`` what was dropped."""

    def __init__(self, run: Any, duplicates: DuplicatePolicy = "error",
                 max_line: Optional[int] = None):
        _check_policy(duplicates)
        source = source_of(run)
        if source is None:
            raise InputError(f"the run path must be a str, os.PathLike or binary stream, "
                             f"got {type(run).__name__}")
        self.source, self.duplicates = source, duplicates
        self.max_line = trec_io.max_line_bytes(max_line)
        self.name = source.name
        self.tag = ""
        self.n_duplicates, self.first_duplicate = 0, None

    def __iter__(self):
        empty = _qrels.QrelsTable()
        empty.finish()
        ranker = _trec.RunRanker(empty, _trec.TIES_INPUT_ORDER, False, -1, 0, False,
                                 self.max_line, DUPLICATE_CODES[self.duplicates], True, True)
        blocks = self.source.blocks(self.max_line)
        stop = None
        with contextlib.closing(blocks), naming(self.name), _reading(self.name, "run"):
            while stop is None:
                try:
                    block = next(blocks, None)
                except _LineTooLong as error:
                    stop = Stop("long", ranker.lines_seen + 1, error.prefix)
                    break
                except _Corrupt as error:
                    stop = Stop("gzip", ranker.lines_seen, detail=str(error))
                    break
                except _Compressed as error:
                    stop = Stop("compressed", detail=str(error))
                    break
                except FormatError as error:
                    stop = Stop("raised", error=error)
                    break
                if block is None:
                    break
                status = ranker.feed(block)
                if status != _trec.STATUS_OK:
                    stop = status_stop(ranker, status, block, self.max_line)
                    break
                yield from self._taken(ranker, ranker.take_held())
            if stop is not None:
                if stop.kind == "not_grouped":
                    topic = stop.text.split(None, 1)[0].decode("utf-8", "replace")
                    raise TopicCameBack(self.name, stop.line, topic, ranker.first_line(topic))
                _oom(stop, (self.name, "run"))
                raise _stop_error(stop, self.name, _RUN, 0, self.max_line)
            yield from self._taken(ranker, ranker.take_held(last=True))
        if ranker.n_lines == 0:
            raise FormatError(self.name, 0, "no results (the file has no data lines)")
        self.tag = ranker.tag

    def _taken(self, ranker, taken):
        if taken is None:
            raise _stop_error(status_stop(ranker, ranker.status), self.name, _RUN)
        if ranker.n_duplicates:
            if self.duplicates == "error":
                raise _duplicate_error(self.name, ranker.first_duplicate(), True)
            self.n_duplicates, self.first_duplicate = \
                ranker.n_duplicates, ranker.first_duplicate()
        return taken


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
    against it (:func:`prepare_qrels`; the command line's evaluate, compare and
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
        return prepare_qrels, (self.source,)    # another process reads the file again

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
    """Judgments of a table (see :mod:`cumgain.columns`) read once by the native reader,
    for evaluating several runs against them, and shipped to Dask workers as the table
    (each worker prepares it once when it unpickles it). ``topics`` in order of first
    appearance; ``relevance`` every judgment's level, grouped by topic.

    ``native``: the judgments read and checked; :func:`prepare_qrels` keeps every
    topic's index, :func:`prepare_qrels_once` none (see there)."""

    native: Any = None

    def __repr__(self) -> str:
        return (f"PreparedQrelsTable({columns.source_name(self.table)}: "
                f"{len(self.native.topics)} topics, {len(self.native.levels)} judgments)")

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any]]:
        table = columns.Renamed(self.table, self.names) if self.names else self.table
        if self.native.table.indexed:
            return prepare_qrels, (table,)      # another process prepares it again
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
    """A table's judgments (see :mod:`cumgain.columns`) prepared for rankings that meet
    each topic at most once between them, as the partitions of one :mod:`cumgain.dask`
    evaluation do: read and checked, without :func:`prepare_qrels`' index of every
    topic (a ranking hashes the judgments of the topics it joins, each once; an index
    would hash them all, up front, in every process). Pickled, the table is rebuilt
    on the other side without its duplicate check. None where the compiled reader
    does not read the table's columns in place."""
    judgments = _columns_qrels(qrels, indexed=False)
    return None if judgments is None else _table_of(qrels, judgments)


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


PreparedJudgments = Union[PreparedQrels, PreparedQrelsFile, PreparedQrelsTable, "Qrels"]
"""What :func:`prepare_qrels` returns."""


@overload
def prepare_qrels(qrels: Mapping[str, Mapping[str, float]], *,
                  duplicates: DuplicatePolicy = ..., threads: Optional[int] = ...
                  ) -> Union[PreparedQrels, Qrels]: ...
@overload
def prepare_qrels(qrels: PathLike, *, duplicates: DuplicatePolicy = ...,
                  threads: Optional[int] = ...) -> Union[PreparedQrelsFile, Qrels]: ...
@overload
def prepare_qrels(qrels: Any, *, duplicates: DuplicatePolicy = ...,
                  threads: Optional[int] = ...) -> PreparedJudgments: ...


def prepare_qrels(qrels: Any, *, duplicates: DuplicatePolicy = "error",
                  threads: Optional[int] = None) -> PreparedJudgments:
    """Judgments read once, to evaluate many runs against: pass the result to
    :func:`cumgain.evaluate`, :func:`cumgain.rank` or the curves in place of ``qrels``
    (as pytrec_eval's ``RelevanceEvaluator`` and ir_measures' ``evaluator`` read their
    qrels once). Each evaluation then reads and ranks only its run; the numbers are
    those of the unprepared qrels.

    A qrels file (plain or gzip; read in parts by up to ``threads`` threads; None: the
    available cores, at most MAX_AUTO_THREADS) becomes a :class:`PreparedQrelsFile`;
    a ``{qid: {docid: level}}`` dict a :class:`PreparedQrels`; a table
    (:mod:`cumgain.columns`) or a loaded :class:`~cumgain.trec_io.Qrels` a
    :class:`PreparedQrelsTable` where its columns are read in place, else the
    :class:`~cumgain.trec_io.Qrels` the reference front-end makes of it; standard
    input or a stream is loaded (:func:`cumgain.trec_io.load_qrels`: it can be read
    only once). ``duplicates`` ("error", "first", "last") applies to files and tables.
    Errors (naming file and line) are raised here. Prepared qrels are returned as they
    are."""
    from cumgain.trec_io import Qrels, load_qrels
    check_threads(threads)
    _check_policy(duplicates)
    if isinstance(qrels, (PreparedQrels, PreparedQrelsFile, PreparedQrelsTable, Qrels)):
        return qrels
    if columns.is_columnar(qrels):
        judgments = _columns_qrels(qrels, indexed=True, duplicates=duplicates)
        if judgments is not None:
            return _table_of(qrels, judgments)
        return load_qrels(qrels, duplicates=duplicates)
    if type(qrels) is dict:
        return PreparedQrels(qrels)
    source = source_of(qrels) if isinstance(qrels, (str, os.PathLike)) else None
    if source is not None and source.path is not None:
        judgments = native_qrels(qrels, threads=threads, duplicates=duplicates)
        return PreparedQrelsFile(judgments, source.path)
    return load_qrels(qrels, duplicates=duplicates)
