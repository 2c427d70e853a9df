"""The fast path for TREC files and plain dicts: parse, rank and join in C
(``cgcore._trec``).

:func:`read_ranked` streams the qrels and the run through the native reader and
returns every run topic already ranked (score descending, then the tie rule), cut at
the depth and joined with its judgments. It returns None when the native path
cannot take the input (standard input, a run whose topics are not contiguous, the
"first" duplicates policy, a table past what the C layout holds) or finds a problem
in it; the caller then reads the files with the pure-Python reference reader
(:mod:`cumgain.trec_io`), which handles those inputs and words every error with file,
line and text.

Running out of memory is not such a problem: it raises
:class:`~cumgain.exceptions.OutOfMemoryError` (a ``MemoryError``) at once, naming
what was being read and, when known, how many bytes the allocation that failed asked
for. The reference reader needs 30-50 times the memory and the time: it is for the
inputs the native path does not take, never a retry after a failure.

:func:`prepare_qrels` reads judgments once, for evaluating many runs against them:
a :class:`PreparedQrelsFile` for a qrels file, a :class:`PreparedQrels` for a dict
(also what the pytrec_eval drop-in uses).
"""
from __future__ import annotations

import contextlib
import dataclasses
import gzip
import os
import re
import threading
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union, overload

import numpy as np

from cgcore import _columns, _qrels, _trec
from cumgain import columns, trec_io
from cumgain._trec_bytes import _MAGIC_BYTES
from cumgain.exceptions import InputError, OutOfMemoryError
from cumgain.limits import MAX_THREADS, whole_number
from cumgain.types import DuplicatePolicy, PathLike, ScorePrecision, TieRule

if TYPE_CHECKING:
    from cumgain.trec_io import Qrels

TIE_CODES: dict[str, int] = {
    "docno_desc": _trec.TIES_DOCNO_DESC, "average": _trec.TIES_DOCNO_DESC,
    "docno_asc": _trec.TIES_DOCNO_ASC, "input_order": _trec.TIES_INPUT_ORDER,
    "random": _trec.TIES_RANDOM}


class NativeQrels:
    """A finished qrels table and its judgments grouped by topic. Only read once
    built, so one instance serves any number of rankings, in any number of threads."""

    def __init__(self, table: _qrels.QrelsTable, offsets: np.ndarray, levels: np.ndarray):
        self.table = table          # _qrels.QrelsTable
        self.offsets = offsets      # judgments of topic i: offsets[i]:offsets[i+1] (read-only)
        self.levels = levels        # int8 or float64 (see QrelsTable.grouped; read-only)
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


def _fine(parser, status: int, where: tuple) -> bool:
    """Whether ``status`` (``parser``'s latest) is STATUS_OK; out of memory raises an
    OutOfMemoryError naming ``where`` (source, what)."""
    if status == _trec.STATUS_NO_MEMORY:
        raise OutOfMemoryError(*where, parser.failed_bytes)
    return status == _trec.STATUS_OK


def _is_file(path: Any) -> bool:
    if not isinstance(path, (str, os.PathLike)):
        return False
    path = os.fspath(path)
    return path != "-" and os.path.isfile(path)


BLOCK = 1 << 20          # read 1 MiB at a time (the block stays in the L2 cache while parsed)
GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"


class _LineTooLong(Exception):
    """A line longer than the limit (the reference reader words the error)."""


def _blocks(stream, limit: int = -1, bom: bool = True, buffer: Optional[bytearray] = None,
            max_line: int = -1):
    """Blocks of whole lines, read into one reused buffer (``buffer``, else a new one of
    BLOCK bytes; a memoryview of it each: valid until the next block is read), from at
    most ``limit`` bytes (-1: to the end); a UTF-8 byte order mark at the start is
    dropped if ``bom``. The unfinished line at a block's end moves to the front for the
    next read; a line longer than the buffer doubles it (linear overall), unless it is
    longer than ``max_line`` bytes (>= 0; -1: no limit): then _LineTooLong, so that the
    buffer never grows past about twice the limit (the parser stops at a complete line
    that long)."""
    buffer = bytearray(BLOCK) if buffer is None else buffer
    remaining = limit if limit >= 0 else -1
    held = 0                                    # bytes at the front not yet yielded
    if bom:
        head = stream.read(len(BOM) if remaining < 0 else min(len(BOM), remaining))
        held = 0 if head == BOM else len(head)
        buffer[:held] = head
        remaining -= len(head) if remaining >= 0 else 0
    while remaining != 0:
        if held == len(buffer):
            if 0 <= max_line < held:        # all of it one unfinished line
                raise _LineTooLong
            grown = bytearray(2 * len(buffer))
            grown[:held] = buffer
            buffer = grown
        room = len(buffer) - held if remaining < 0 else min(len(buffer) - held, remaining)
        with memoryview(buffer) as view:
            count = stream.readinto(view[held:held + room])
        if not count:
            break
        remaining -= count if remaining >= 0 else 0
        end = held + count
        cut = buffer.rfind(b"\n", held, end) + 1    # the held bytes have no newline
        if cut == 0:
            held = end
            continue
        yield memoryview(buffer)[:cut]
        held = end - cut
        buffer[:held] = buffer[cut:end]
    if held:
        yield memoryview(buffer)[:held]


def _feed_blocks(parser, blocks, where: tuple) -> bool:
    """Feed blocks of whole lines; False if the parser stopped or a read failed (the
    reference reader then reports why). Out of memory raises (see _fine)."""
    try:
        for block in blocks:
            if not _fine(parser, parser.feed(block), where):
                return False
    except (OSError, EOFError, zlib.error, _LineTooLong):
        return False
    return True


def _feed(parser, path, where: tuple, max_line: int = -1) -> bool:
    """Feed a whole file (plain or gzip); False if the parser stopped or the file is
    not readable as such."""
    source = os.fsdecode(os.fspath(path))
    with open(source, "rb") as raw:
        gzipped = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        stream = gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw
        return _feed_blocks(parser, _blocks(stream, max_line=max_line), where)


def _compressed(path: str) -> bool:
    """Whether the file starts with the magic bytes of a compression the readers do not
    read (bzip2, xz, zstd, zip, ...; gzip inside gzip), see trec_io.compression_of."""
    with open(path, "rb") as raw:
        head = raw.read(_MAGIC_BYTES)
        if head[:2] != GZIP_MAGIC:
            return trec_io.compression_of(head) is not None
        raw.seek(0)
        try:
            with gzip.GzipFile(fileobj=raw, mode="rb") as content:
                head = content.read(_MAGIC_BYTES)
        except (OSError, EOFError, zlib.error):
            return False        # the reading says what is wrong
        return trec_io.compression_of(head) is not None


def _add_dict(parser, source: dict, where: tuple) -> bool:
    """Add a plain dict of dicts and finish; False if the parser stopped."""
    return _fine(parser, parser.add_dict(source), where) \
        and _fine(parser, parser.finish(), where)


DICT_TOPICS_PER_THREAD = 256    # a run dict is cut in ranges of at least this many topics


PARTS_PER_THREAD = 8        # work split between threads is cut in up to this many parts
                            # per thread, handed out in turn (the cores of a virtual
                            # machine may run at unequal speeds, and a thread left
                            # without a part waits for the others' last ones)


def parts_for(threads: int) -> int:
    """How many parts work for ``threads`` threads is cut in: PARTS_PER_THREAD per
    thread, or one for one thread."""
    return threads * PARTS_PER_THREAD if threads > 1 else 1


def _in_threads(work, parts: int) -> None:
    """``work(part)`` for each part in range(parts), each in its own thread (the first
    in this one)."""
    helpers = [threading.Thread(target=work, args=(part,)) for part in range(1, parts)]
    for helper in helpers:
        helper.start()
    try:
        work(0)
    finally:
        for helper in helpers:
            helper.join()


def _parts_in_turn(parsers: list, threads: int, read, where: tuple = ("", "")):
    """``read(part)`` (whether the part was read without a stop) for each part, by
    whichever of ``threads`` threads is free (the first is this one), so that a thread
    on a slower core reads fewer parts; the thread that completes the next parts in
    order appends them to ``parsers[0]`` while the others read on. ``parsers[0]``,
    holding every part; None if any stopped. An exception in any thread (out of
    memory while appending: see _fine, of ``where``) stops the others' work and is
    raised here."""
    done: list = [None] * len(parsers)  # per part: None until read, then whether fine
    errors: list = []
    lock = threading.Lock()
    taken = merged = 0                  # parts handed out; parts in parsers[0]
    merging = failed = False

    def merge() -> None:
        """Append the parts read, in order, until the next is not read yet."""
        nonlocal merged, merging, failed
        while True:
            with lock:
                if failed or merged == len(parsers) or not done[merged]:
                    merging = False
                    return
                part = merged
            if part > 0 and not _fine(parsers[0], parsers[0].append(parsers[part]), where):
                with lock:
                    failed, merging = True, False
                return
            with lock:
                merged += 1

    def work(_: int) -> None:
        nonlocal taken, merging, failed
        try:
            while True:
                with lock:
                    if failed or taken == len(parsers):
                        return
                    part, taken = taken, taken + 1
                fine = read(part)
                with lock:
                    done[part], failed = fine, failed or not fine
                    if merging:
                        continue
                    merging = True
                merge()
        except BaseException as error:  # noqa: BLE001 - raised again in the caller's thread
            with lock:
                errors.append(error)
                failed = True

    _in_threads(work, min(threads, len(parsers)))
    if errors:
        raise errors[0]
    return parsers[0] if not failed and merged == len(parsers) else None


def _one_output(rankers: list, rows: list) -> None:
    """Point each ranker of consecutive topic ranges (``rows[i]`` ranked rows for ranker
    i) at its place in one output, so that appending them moves no rows."""
    total = sum(rows)
    levels, judged = np.empty(total, rankers[0].levels_dtype), np.empty(total, np.uint8)
    scores = np.empty(total, np.float64) if rankers[0].keeps_scores else None
    for ranker, at, n in zip(rankers, np.cumsum([0] + rows[:-1]).tolist(), rows):
        ranker.write_rows_into(levels, judged, scores, at, n)


def _rank_dict(make_ranker, run: dict, threads: int, where: tuple = ("<dict>", "run")):
    """A finished ranker of a run dict, its topics cut in ranges of at least
    DICT_TOPICS_PER_THREAD, each ranked by a ranker of its own (see _parts_in_turn)
    into its place in one output (so that joining them copies no rows, nor makes the
    process touch memory twice); a ranker holds the GIL only while it copies a batch of
    documents out of the dict. None if any stopped."""
    parts = max(1, min(parts_for(threads), len(run) // DICT_TOPICS_PER_THREAD))
    bounds = [len(run) * part // parts for part in range(parts + 1)]
    rankers = [make_ranker() for _ in range(parts)]
    rows = rankers[0].dict_rows(run, bounds) if parts > 1 else None
    if rows is not None:
        _one_output(rankers, rows)

    def read(part: int) -> bool:
        ranker = rankers[part]
        return _fine(ranker, ranker.add_dict(run, bounds[part], bounds[part + 1]), where) \
            and _fine(ranker, ranker.finish(), where)

    return _parts_in_turn(rankers, threads, read, where)


# ---------------------------------------------------------------- files in parts

PART_BYTES = 1 << 22        # a plain file is read in parallel parts of at least 4 MiB
MAX_AUTO_THREADS = 4        # threads=None uses the available cores, at most this many
SEARCH_BYTES = 1 << 24      # how far to look for the start of a line or a run topic
SHORT_PARTS_PER_THREAD = 2  # a file's last parts, this many per thread, are a quarter the
SHORT_PART_SHARE = 4        # size of the others: the threads run out of parts closer
                            # together (the last part read is the one waited for)


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # not on Linux
        return os.cpu_count() or 1


def check_threads(threads: Any) -> None:
    """``threads`` is None or a whole number from 1 to MAX_THREADS (cumgain.limits)."""
    if threads is not None:
        whole_number(threads, "threads", high=MAX_THREADS)


def auto_threads(threads: Optional[int]) -> int:
    """``threads``, or for None the available cores, at most MAX_AUTO_THREADS."""
    return min(available_cores(), MAX_AUTO_THREADS) if threads is None else threads


PROBE_BYTES = 1 << 21       # a probe for a line's topic reads at most this much
_FIRST_READ = 1 << 12       # ... starting with this much (the usual line is < 100 bytes)
_END = object()             # what a probe finds past the last data line
_LONG = object()            # ... and where it would read more than PROBE_BYTES


# The first field of a line (C isspace but the newline separates fields), and what ends
# it: a space, the newline, or nothing (the end of what was read).
_FIRST_FIELD = re.compile(rb"[ \t\r\v\f]*([^ \t\r\v\f\n]*)([ \t\r\v\f\n]?)")


def _probe(raw, x: int):
    """The first data line that starts at or after offset ``x`` of ``raw`` (comment and
    blank lines passed over, as the parsers do): ``(start, topic)``; _END if there is
    none, _LONG if finding it takes reading more than PROBE_BYTES. Only the topic of
    the line is read, not the rest (a line with a long docno costs nothing more)."""
    base = max(x - 1, 0)
    raw.seek(base)
    window = raw.read(_FIRST_READ)
    eof = len(window) < _FIRST_READ
    at, skip = 0, x > 0                 # at: where the line read starts; skip: to its end
    while True:
        if skip:
            newline = window.find(b"\n", at)
            if newline >= 0:
                at, skip = newline + 1, False
                continue
        else:
            field = _FIRST_FIELD.match(window, at)
            topic, after = field.group(1), field.group(2)
            if after or eof:
                if topic and not topic.startswith(b"#"):
                    return base + at, topic
                if not topic and (after == b"\n" or eof):
                    if eof and after != b"\n":
                        return _END
                    at = field.end()            # a blank line
                    continue
                skip = True                     # a comment: on to the next line
                continue
        if eof:
            return _END
        if len(window) >= PROBE_BYTES:
            return _LONG
        wanted = min(len(window), PROBE_BYTES - len(window))
        more = raw.read(wanted)
        eof = len(more) < wanted
        window += more


def _next_start(raw, offset: int) -> Optional[int]:
    """The file offset of a line after the line holding ``offset`` that starts a run
    topic: its topic (first field) differs from the data line before it; for topics
    that come one after another, the first such line. Comment and blank lines are
    passed over, as the parsers do. None if there is none within SEARCH_BYTES, or if a
    line longer than PROBE_BYTES is in the way.

    A bounded search, not a scan: it probes the lines at doubling distances until one
    has another topic (or the file ends), then halves the gap between a line of the
    first topic and one of another until they are next to each other. Each probe reads
    a few KiB (at most PROBE_BYTES), and there are about 2 log2(SEARCH_BYTES / 4 KiB)
    of them, however long the topic: a file that is one topic costs a dozen small
    reads, not a search through 16 MiB per part."""
    first = _probe(raw, offset + 1)
    if first is _END or first is _LONG:
        return None
    low, topic = first
    step, high = _FIRST_READ, None
    while high is None:                 # a line of another topic, or the end
        if low + step - offset > SEARCH_BYTES:
            return None
        found = _probe(raw, low + step)
        if found is _LONG:
            return None
        if found is _END or found[1] != topic:
            high = low + step
        else:
            low, step = found[0], step * 2
    while high - low > 1:               # probe(low) has the topic, probe(high) has not
        middle = (low + high) // 2
        found = _probe(raw, middle)
        if found is _LONG:
            return None
        if found is not _END and found[1] == topic:
            low = middle
        else:
            high = middle
    found = _probe(raw, high)
    return None if found is _END or found is _LONG else found[0]


def _part_targets(size: int, parts: int, short: int) -> list:
    """Where ``parts`` parts of ``size`` bytes would start if lines and topics did not
    matter: the last ``short`` parts (at most all but the first) SHORT_PART_SHARE
    times smaller than the others."""
    short = min(short, parts - 1)
    units = (parts - short) * SHORT_PART_SHARE + short
    targets, at = [], 0
    for k in range(parts):
        targets.append(size * at // units)
        at += SHORT_PART_SHARE if k < parts - short else 1
    return targets


def _part_starts(path: str, parts: int, short: int = 0) -> list:
    """Where each part of a plain file starts: 0, then topic starts near the
    _part_targets (``short``: how many of the last parts are shorter); fewer parts for
    a file below parts x PART_BYTES, where no start is found, and for a gzip file (one
    part)."""
    size = os.path.getsize(path)
    parts = max(1, min(parts, size // PART_BYTES))
    starts = [0]
    if parts == 1:
        return starts
    with open(path, "rb") as raw:
        if raw.read(2) == GZIP_MAGIC:
            return starts
        for target in _part_targets(size, parts, short)[1:]:
            start = _next_start(raw, target)
            if start is not None and starts[-1] < start < size:
                starts.append(start)
    return starts


def _feed_range(parser, path: str, start: int, stop: int, buffer: bytearray,
                where: tuple, max_line: int = -1) -> bool:
    """Feed bytes [start, stop) of a plain file (whole lines), read into ``buffer``;
    False if the parser stopped or the file could not be read."""
    with open(path, "rb") as raw:
        raw.seek(start)
        return _feed_blocks(parser, _blocks(raw, stop - start, bom=start == 0, buffer=buffer,
                                            max_line=max_line), where)


def _feed_in_parts(make_parser, path: str, starts: list, threads: int, run: bool,
                   where: tuple, max_line: int = -1):
    """The parts [starts[i], starts[i + 1]) of a plain file, each fed to a parser of its
    own (and, for a run, finished) by up to ``threads`` threads (see _parts_in_turn):
    the first parser, holding every part; None if any stopped."""
    stops = starts[1:] + [os.path.getsize(path)]
    parsers = [make_parser() for _ in starts]
    buffers = threading.local()     # a thread's read buffer, for part after part (a new
                                    # one each time was faulted in again each time)

    def read(part: int) -> bool:
        if not hasattr(buffers, "block"):
            buffers.block = bytearray(BLOCK)
        parser = parsers[part]
        return _feed_range(parser, path, starts[part], stops[part], buffers.block, where,
                           max_line) and (not run or _fine(parser, parser.finish(), where))

    return _parts_in_turn(parsers, threads, read, where)


def _read_file(make_parser, path, threads: int, run: bool, check: bool = True,
               max_line: int = -1):
    """A finished parser (a QrelsTable, finished with or without its duplicate
    ``check``, or with ``run`` a RunRanker) of a file, read in
    up to PARTS_PER_THREAD parts per thread by up to ``threads`` threads and joined.
    Parts start at topic starts: qrels parts are appended before the table is finished
    (their docnos kept where they are, which needs each topic within one part, else
    finish() joins them; the duplicate check is also split between the threads); run
    parts are each finished (their last topic ranked) before they are appended. None
    if any part stopped, or if a run topic spans two parts (an interleaved run: the
    reference reader takes it). ``max_line``: the longest line taken (-1: any), which
    make_parser's parsers must apply too."""
    source = os.fsdecode(os.fspath(path))
    where = (source, "run" if run else "qrels")
    if _compressed(source):
        return None             # the reference reader says with what
    with _reading(*where):
        starts = _part_starts(source, parts_for(threads), SHORT_PARTS_PER_THREAD * threads)
        if len(starts) == 1:
            parser = make_parser()
            if not _feed(parser, source, where, max_line) \
                    or (run and not _fine(parser, parser.finish(), where)):
                return None
        else:
            parser = _feed_in_parts(make_parser, source, starts, threads, run, where, max_line)
            if parser is None:
                return None
        return parser if run or _fine(parser, parser.finish(threads, check), where) else None


def native_qrels(qrels: Any, indexed: bool = False, threads: Optional[int] = 1,
                 check: bool = True) -> Optional[NativeQrels]:
    """Read judgments (a TREC file, or a dict with str ids and int/float levels) in C;
    or None when the reference reader must take over. ``indexed``: keep every topic's
    docno index, for a table many runs will be ranked against. ``threads``: how many
    may read a plain file in parts (None: the available cores, at most
    MAX_AUTO_THREADS). ``check=False``: a file's table is finished without its
    duplicate check, for one ranking that checks each topic as it joins it (see
    QrelsTable.finish; a dict has no duplicates to check)."""
    if columns.is_columnar(qrels):
        return _columns_qrels(qrels, indexed)
    if not (_is_file(qrels) or type(qrels) is dict):
        return None
    if type(qrels) is dict:
        if any(len(docs) == 0 for docs in qrels.values()):
            return None     # empty qrels topics are reported by the reference path
        with _reading("<dict>", "qrels"):
            table = _qrels.QrelsTable(indexed)
            if not _add_dict(table, qrels, ("<dict>", "qrels")):
                return None
    else:
        max_line = trec_io.max_line_bytes()
        table = _read_file(lambda: _qrels.QrelsTable(indexed, max_line), qrels,
                           auto_threads(threads), run=False, check=check, max_line=max_line)
        if table is None or table.n_rows == 0:
            return None
    offsets, levels = table.grouped()
    offsets.flags.writeable = levels.flags.writeable = False
    return NativeQrels(table, offsets, levels)


def _columns_qrels(qrels: Any, indexed: bool, unique: bool = False) -> Optional[NativeQrels]:
    """A table's judgments (see cumgain.columns) in C, or None. ``unique``: known to
    hold no duplicate (checked where they were read), so not checked again."""
    table_columns = columns.arrow_columns(qrels, "relevance")
    if table_columns is None or len(table_columns) == 0:
        return None
    where = (table_columns.source, "qrels")
    with _reading(*where):
        table = _qrels.QrelsTable(indexed)
        if not (_fine(table, table.add_columns(table_columns.query_ids, table_columns.doc_ids,
                                               table_columns.values), where)
                and _fine(table, table.finish(unique=unique), where)):
            return None
        offsets, levels = table.grouped()
    offsets.flags.writeable = levels.flags.writeable = False
    return NativeQrels(table, offsets, levels)


RELEASE_IN_HELPER_JUDGMENTS = 100_000  # a qrels table this big is freed by a helper thread
COLUMN_TOPICS_PER_THREAD = 256  # a table's topics are cut in ranges of at least this many


def _rank_columns(make_ranker, run: Any, threads: int):
    """A finished ranker of a table's run (see cumgain.columns), its topics grouped
    in C and cut in ranges of at least COLUMN_TOPICS_PER_THREAD, each ranked by a
    ranker of its own into its place in one output (as _rank_dict); None if the
    native path does not take the table or a ranker stopped."""
    table_columns = columns.arrow_columns(run, "score")
    if table_columns is None or len(table_columns) == 0:
        return None
    where = (table_columns.source, "run")
    with _reading(*where):
        grouped = _columns.group_rows(table_columns.query_ids)
        if grouped is None:
            return None
        starts, order = grouped
        n_topics = len(starts) - 1
        parts = max(1, min(parts_for(threads), n_topics // COLUMN_TOPICS_PER_THREAD))
        bounds = [n_topics * part // parts for part in range(parts + 1)]
        rankers = [make_ranker() for _ in range(parts)]
        if parts > 1:
            _one_output(rankers, rankers[0].column_rows(starts, bounds))

        def read(part: int) -> bool:
            ranker = rankers[part]
            return _fine(ranker, ranker.add_columns(
                table_columns.query_ids, table_columns.doc_ids, table_columns.values,
                starts, order, bounds[part], bounds[part + 1]), where) \
                and _fine(ranker, ranker.finish(), where)

        return _parts_in_turn(rankers, threads, read, where)


class PreparedQrels(dict[str, dict[str, float]]):
    """Judgments ``{qid: {docno: level}}`` whose native table is built once, as
    pytrec_eval's ``RelevanceEvaluator`` reads its qrels once: every run evaluated
    against them skips reading the judgments again.

    The topics' dicts are kept as they are, not copied (a copy would double the
    judgments' memory); other mappings are copied into plain dicts, which the native
    reader takes. Treat them as read-only once prepared: the table is not rebuilt if
    they change. ``native`` is None when the native reader does not take these
    judgments (other id or level types, a topic without judgments, ...); each
    evaluation then takes the reference path, which ends as it does for the original
    (a result or the same error).
    """

    def __init__(self, qrels: Mapping[str, Mapping[str, float]]):
        super().__init__(
            (qid, dict(docs) if isinstance(docs, Mapping) and type(docs) is not dict else docs)
            for qid, docs in qrels.items())
        self.native: Optional[NativeQrels] = native_qrels(dict(self), indexed=True)

    def __reduce__(self) -> tuple[type[PreparedQrels], tuple[dict[str, dict[str, float]]]]:
        return PreparedQrels, (dict(self),)


class PreparedQrelsFile(os.PathLike[str]):
    """A qrels file read once by the native reader, for evaluating several runs
    against it (:func:`prepare_qrels`; the command line's evaluate, compare and
    trec_eval): each evaluation skips reading the judgments again. It is an
    ``os.PathLike`` of the file, so where an evaluation needs the reference reader (an
    interleaved run, say), that reader reads the file itself. ``source`` and
    ``relevance`` (every judgment's level, grouped by topic) are those of
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
    (each worker prepares it once when it unpickles it). Where an evaluation needs the
    reference reader, it reads the table itself, as a table. ``topics`` in order of
    first appearance; ``relevance`` every judgment's level, grouped by topic.

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
    on the other side without its duplicate check. None where the native reader does
    not take the table."""
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

    A plain or gzip qrels file the native reader takes becomes a
    :class:`PreparedQrelsFile` (read in parts by up to ``threads`` threads; None: the
    available cores, at most MAX_AUTO_THREADS); a ``{qid: {docid: level}}`` dict a
    :class:`PreparedQrels`; a table it takes (:mod:`cumgain.columns`) a
    :class:`PreparedQrelsTable`; anything else (standard input, a file with
    duplicate judgments and ``duplicates="first"``) is loaded by the reference reader,
    :func:`cumgain.trec_io.load_qrels`, which raises the error if any (naming file and
    line). Prepared qrels are returned as they are. Keep a prepared file (and a
    prepared dict) unchanged while in use: a run the native reader does not take is
    evaluated by the reference reader, which reads them again."""
    from cumgain.trec_io import Qrels, load_qrels
    check_threads(threads)
    if isinstance(qrels, (PreparedQrels, PreparedQrelsFile, PreparedQrelsTable, Qrels)):
        return qrels
    if duplicates == "error" and columns.is_columnar(qrels):
        judgments = native_qrels(qrels, indexed=True)
        if judgments is not None:
            return _table_of(qrels, judgments)
    if duplicates == "error" and _is_file(qrels):
        judgments = native_qrels(qrels, threads=threads)
        if judgments is not None:
            return PreparedQrelsFile(judgments, os.fsdecode(os.fspath(qrels)))
    if duplicates == "error" and type(qrels) is dict:
        return PreparedQrels(qrels)
    return load_qrels(qrels, duplicates=duplicates)


def read_ranked(qrels: Any, run: Any, *, ties: TieRule, score_precision: ScorePrecision,
                seed: int, depth: Optional[int], duplicates: DuplicatePolicy = "error",
                threads: Optional[int] = None) -> Optional[RankedInput]:
    """Read (TREC files, dicts with str ids and int/float values, or
    :class:`PreparedQrels`), rank and join in C; or None when the reference reader
    must take over. Plain qrels and run files are read in parts of at least
    PART_BYTES by up to ``threads`` threads (None: the available cores, at most
    MAX_AUTO_THREADS), a run dict's topics ranked in ranges of at least
    DICT_TOPICS_PER_THREAD by as many; the result does not depend on how many.
    Qrels not prepared are read without their duplicate check, which the ranking
    does (see QrelsTable.finish), and their table is freed by a helper thread when
    the caller calls the result's ``release``."""
    table = columns.is_columnar(run)
    if duplicates != "error" or not (_is_file(run) or type(run) is dict or table):
        return None
    threads = auto_threads(threads)
    prepared = isinstance(qrels, (PreparedQrels, PreparedQrelsFile, PreparedQrelsTable))
    judgments = qrels.native if prepared \
        else native_qrels(qrels, threads=threads, check=False)   # checked as ranked
    if judgments is None:
        return None

    max_line = trec_io.max_line_bytes()

    def make_ranker():
        return _trec.RunRanker(judgments.table, TIE_CODES[ties], score_precision == "float32",
                               -1 if depth is None else depth, seed, ties == "average",
                               max_line)

    if type(run) is dict:
        with _reading("<dict>", "run"):
            ranker = _rank_dict(make_ranker, run, threads)
        if ranker is None:
            return None
    elif table:
        ranker = _rank_columns(make_ranker, run, threads)
        if ranker is None:
            return None
    else:
        ranker = _read_file(make_ranker, run, threads, run=True, max_line=max_line)
        if ranker is None or ranker.n_lines == 0:
            return None
    where = ("<dict>" if type(run) is dict else columns.source_name(run) if table
             else os.fsdecode(os.fspath(run)), "run")
    with _reading(*where):
        if not _fine(ranker, ranker.check_unused_judgments(), where):
            return None         # a duplicate judgment: the reference reader names it
        same_topics = ranker.same_topics()
        run_topics, run_offsets, levels, judged, scores, tag = ranker.result()

    def release() -> None:      # a table of its own, no longer needed: freed by a helper
        if prepared:            # thread when big, at once when small (a thread costs more)
            return
        if len(judgments.levels) < RELEASE_IN_HELPER_JUDGMENTS:
            judgments.table.release()
        else:
            threading.Thread(target=judgments.table.release, daemon=True).start()

    return RankedInput(run_topics, run_offsets, levels, judged, scores, tag,
                       ranker.tags_agree, same_topics, judgments, release)
