"""A plain file read in parts by several threads: where its parts start (topic starts,
found by a bounded search; or line starts among blank and comment lines), the order they
are handed out in, whether a run's topics are seen to come back before it is read, and
the reading itself (:func:`read_parts`: each part's blocks fed to its own parser, the
parsers joined in file order). The blocks come from :mod:`cumgain.io.native.blocks`.
"""
from __future__ import annotations

import os
import re
import threading
from typing import Any, Callable, Optional

from cgcore import _lines, _trec
from cumgain.io.native import blocks
from cumgain.io.native.blocks import (GZIP_MAGIC, Source, Stop, feed_blocks, range_blocks,
                                      status_stop)
from cumgain.exceptions import naming
from cumgain.common.limits import MAX_THREADS, whole_number

# ---------------------------------------------------------------- threads

PARTS_PER_THREAD = 8        # work split between threads is cut in up to this many parts
                            # per thread, handed out in turn (the cores of a virtual
                            # machine may run at unequal speeds, and a thread left
                            # without a part waits for the others' last ones)


def parts_for(threads: int) -> int:
    """How many parts work for ``threads`` threads is cut in: PARTS_PER_THREAD per
    thread, or one for one thread."""
    return threads * PARTS_PER_THREAD if threads > 1 else 1


def in_threads(work, parts: int) -> None:
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


def parts_in_turn(parsers: list, threads: int, read: Callable[[int], Optional[Stop]],
                  join: Callable[[Any, Any], Optional[Stop]],
                  order: Optional[list] = None):
    """``read(part)`` (None if the part was read without a stop, else the Stop) for
    each part, by whichever of ``threads`` threads is free (the first is this one), so
    that a thread on a slower core reads fewer parts; the thread that completes the
    next parts in order joins them to ``parsers[0]`` (``join(first, other)``: None, or
    the Stop of the joined part) while the others read on. ``order``: the order the
    parts are handed out in (default: 0, 1, ...). Returns the per-part Stops (all
    None: ``parsers[0]`` holds every part). After a stop in a part, only parts before
    it are still taken, so that the first stop in file order is known; after a
    "not_grouped" stop, none. An exception in any thread stops the others' work and
    is raised here."""
    stops: list = [None] * len(parsers)
    done = [False] * len(parsers)
    errors: list = []
    lock = threading.Lock()
    order = list(range(len(parsers))) if order is None else order
    taken = merged = 0                  # parts handed out (of order); parts in parsers[0]
    merging = failed = False
    below = len(parsers)                # only parts before this one are still taken

    def merge() -> None:
        """Join the parts read, in order, until the next is not read yet."""
        nonlocal merged, merging, failed, below
        while True:
            with lock:
                if failed or merged == len(parsers) or not done[merged]:
                    merging = False
                    return
                part = merged
            stop = join(parsers[0], parsers[part]) if part > 0 else None
            with lock:
                if stop is not None:
                    stops[part], failed, merging = stop, True, False
                    below = 0 if stop.kind == "not_grouped" else min(below, part)
                    return
                merged += 1

    def work(_: int) -> None:
        nonlocal taken, merging, failed, below
        try:
            while True:
                with lock:
                    while taken < len(order) and order[taken] >= below:
                        taken += 1              # (past a stop: not needed)
                    if taken == len(order):
                        return
                    part, taken = order[taken], taken + 1
                stop = read(part)
                with lock:
                    done[part] = stop is None
                    if stop is not None:
                        stops[part], failed = stop, True
                        below = 0 if stop.kind == "not_grouped" else min(below, part)
                    if merging:
                        continue
                    merging = True
                merge()
        except BaseException as error:  # noqa: BLE001 - raised again in the caller's thread
            with lock:
                errors.append(error)
                failed, below = True, 0

    in_threads(work, min(threads, len(parsers)))
    if errors:
        raise errors[0]
    return stops


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
    """``threads`` is None or a whole number from 1 to MAX_THREADS (cumgain.common.limits)."""
    if threads is not None:
        whole_number(threads, "threads", high=MAX_THREADS)


def auto_threads(threads: Optional[int]) -> int:
    """``threads``, or for None the available cores, at most MAX_AUTO_THREADS."""
    return min(available_cores(), MAX_AUTO_THREADS) if threads is None else threads


PROBE_BYTES = 1 << 21       # a probe for a line's topic reads at most this much
_FIRST_READ = 1 << 12       # ... starting with this much (the usual line is < 100 bytes)
QUIET_BYTES = 1 << 16       # a run's part may start among this many bytes of blank and
                            # comment lines (see _next_start)
_END = object()             # what a probe finds past the last data line
_LONG = object()            # ... and where it would read more than PROBE_BYTES


# The first field of a data line (C isspace but the newline separates fields) and what
# ends it: a space, the newline, or nothing (the end of what was read). The data line
# itself is found by _lines.first_data_line, which passes over blank and comment lines in
# C.
_FIRST_FIELD = re.compile(rb"[ \t\r\v\f]*([^ \t\r\v\f\n]*)([ \t\r\v\f\n]?)")


def _probe(raw, x: int, quiet: bool = False):
    """The first data line that starts at or after offset ``x`` of ``raw`` (comment and
    blank lines passed over, as the parsers do): ``(start, topic)``; _END if there is
    none, _LONG if finding it takes reading more than PROBE_BYTES. Only the topic of
    the line is read, not the rest (a line with a long docno costs nothing more). With
    ``quiet``, ``(start, None)`` for the first line start at or after ``x`` if the
    lines from there fill QUIET_BYTES with no data line."""
    base = max(x - 1, 0)
    raw.seek(base)
    window = bytearray(raw.read(_FIRST_READ))     # (grown in place)
    eof = len(window) < _FIRST_READ
    at = -1 if x > 0 else 0     # a line start to search from (-1: past the first newline)
    first = at                  # the first line start
    while True:
        if at < 0:
            newline = window.find(b"\n")
            at = first = newline + 1 if newline >= 0 else -1
        if at >= 0:
            start = _lines.first_data_line(window, at)
            if start >= 0:
                field = _FIRST_FIELD.match(window, start)
                if field.group(2) or eof:
                    return base + start, bytes(field.group(1))
                at = start                      # the field goes on past what was read
            else:
                if quiet and len(window) - first >= QUIET_BYTES:
                    return base + first, None
                at = window.rfind(b"\n", at) + 1 or at   # (the unfinished last line)
        if eof:
            return _END
        if len(window) >= PROBE_BYTES:
            return _LONG
        wanted = min(len(window), PROBE_BYTES - len(window))
        more = raw.read(wanted)
        eof = len(more) < wanted
        window += more


def _next_start(raw, offset: int, quiet: bool = False) -> Optional[int]:
    """The file offset of a line after the line holding ``offset`` that starts a run
    topic: its topic (first field) differs from the data line before it; for topics
    that come one after another, the first such line. Comment and blank lines are
    passed over, as the parsers do. None if there is none within SEARCH_BYTES, or if a
    line longer than PROBE_BYTES is in the way. With ``quiet`` (a run's parts), the
    first line after ``offset``'s if QUIET_BYTES of blank and comment lines start
    there: a file, or a stretch of one, with no data lines is read in parts too,
    instead of searched through for a data line and read by one thread (should a
    topic go on after such a stretch, the parts meet it twice and the run is read held
    by topic, see read_parts).

    A bounded search, not a scan: it probes the lines at doubling distances until one
    has another topic (or the file ends), then halves the gap between a line of the
    first topic and one of another until they are next to each other. Each probe reads
    a few KiB (at most PROBE_BYTES), and there are about 2 log2(SEARCH_BYTES / 4 KiB)
    of them, however long the topic: a file that is one topic costs a dozen small
    reads, not a search through 16 MiB per part."""
    first = _probe(raw, offset + 1, quiet)
    if first is _END or first is _LONG:
        return None
    low, topic = first
    if topic is None:
        return low
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
    matter: the last ``short`` parts SHORT_PART_SHARE times smaller than the others,
    unless there are no more parts than that (a file of a few PART_BYTES: then parts
    of one size, which the threads share evenly, not one part four times another)."""
    short = short if parts > short else 0
    units = (parts - short) * SHORT_PART_SHARE + short
    targets, at = [], 0
    for k in range(parts):
        targets.append(size * at // units)
        at += SHORT_PART_SHARE if k < parts - short else 1
    return targets


COME_BACK_SAMPLES = 48     # where topics_come_back looks (at k / 48 of the file: the
                           # shard starts of 2, 3, 4, 6, 8, 12, 16, 24 shards of one size)


def topics_come_back(path: str) -> bool:
    """Whether a few probes of a plain file already show a run topic coming back after
    another (so that reading it as it streams would only find that out later): the
    topics of the data lines at COME_BACK_SAMPLES evenly spaced offsets, one topic at
    two of them and another between. Never True for a file whose topics are
    contiguous; True for concatenated shards of about one size, whose starts hold the
    same topics (others are found when their parts are read, see read_parts)."""
    size = os.path.getsize(path)
    if size < 2 * PART_BYTES:
        return False
    topics: list = []
    with open(path, "rb") as raw:
        if raw.read(2) == GZIP_MAGIC:
            return False
        for k in range(COME_BACK_SAMPLES):
            found = _probe(raw, size * k // COME_BACK_SAMPLES, quiet=True)
            if found is _END:
                break
            if found is _LONG or found[1] is None:
                return False        # (long lines, or long stretches of no data: no more
            if not topics or found[1] != topics[-1]:            # probes that read far)
                if found[1] in topics:
                    return True
                topics.append(found[1])
    return False


def spread_order(starts: list, size: int) -> list:
    """The order the parts starting at ``starts`` (of a file of ``size`` bytes) are
    handed out in when its topics may come back (a run read as it streams): first the
    parts that start nearest the start, the half, the quarter and the three quarters
    of the file, so that a file of 2, 4 or 8 concatenated shards of about one size
    (each starting with the same topics) shows a topic in two parts at their first
    blocks; then the rest in order (the last, shorter parts last)."""
    first: list = []
    for fraction in (0, 1 / 2, 1 / 4, 3 / 4):
        nearest = min(range(len(starts)), key=lambda k: abs(starts[k] - fraction * size))
        if nearest not in first:
            first.append(nearest)
    return first + [k for k in range(len(starts)) if k not in first]


def part_starts(path: str, parts: int, short: int = 0, quiet: bool = False) -> list:
    """Where each part of a plain file starts: 0, then topic starts near the
    _part_targets (``short``: how many of the last parts are shorter; ``quiet``: or
    line starts among blank and comment lines, see _next_start); fewer parts for a
    file below parts x PART_BYTES, where no start is found, and for a gzip file (one
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
            start = _next_start(raw, target, quiet)
            if start is not None and starts[-1] < start < size:
                starts.append(start)
    return starts


# ---------------------------------------------------------------- reading a source

def _first_stop(stops: list, own_lines: list) -> tuple[Optional[Stop], int]:
    """The first part's Stop among ``stops`` and how many lines the parts before it
    hold (``own_lines``: each part's own)."""
    shift = 0
    for stop, lines in zip(stops, own_lines):
        if stop is not None:
            return stop, shift
        shift += lines
    return None, 0


GROUPING_PARTS_PER_THREAD = 1   # a file held by topic is read in this many parts a thread
                                # (each part holds each topic's lines apart, with the
                                # unused end of its last chunk)


def read_parts(make_parser, source: Source, threads: int, max_line: int, run: bool,
                grouping: bool = False):
    """A parser (a QrelsTable, not finished; or a RunRanker, finished unless
    ``grouping``) that read all of a plain file, in parts from topic starts by up to
    ``threads`` threads, joined in order; or ``(None, stop, shift)`` for the first
    part that stopped."""
    path = source.path
    if grouping:    # (each part holds every topic's lines apart: a few large parts)
        starts = part_starts(path, GROUPING_PARTS_PER_THREAD * threads, quiet=True)
    else:
        starts = part_starts(path, parts_for(threads), SHORT_PARTS_PER_THREAD * threads,
                             quiet=run)
    stops_at = starts[1:] + [os.path.getsize(path)]
    parsers = [make_parser() for _ in starts]
    own_lines = [0] * len(starts)
    buffers = threading.local()     # a thread's read buffer, for part after part (a new
                                    # one each time was faulted in again each time)

    streaming = run and not grouping
    seen: dict[str, int] = {}           # (streaming) the topics of the parts read: a topic
    seen_lock = threading.Lock()        # in two parts stops the reading at once
    came_back = threading.Event()       # ... of every part, at its next block

    def in_one_part(topics: list, part: int) -> bool:
        """Note ``topics`` as read in ``part``: False if another part has one of them."""
        with seen_lock:
            if any(seen.setdefault(topic, part) != part for topic in topics):
                came_back.set()
        return not came_back.is_set()

    def watched(part_blocks, parser, part: int):
        """``part_blocks`` while no topic has come back in another part, its topics so far
        noted after its first block: concatenated shards (each topic in every shard)
        show it after a block of the first parts read (see spread_order), not after
        whole parts."""
        first = True
        for block in part_blocks:
            yield block
            if came_back.is_set() or (first and not in_one_part(parser.topic_list(), part)):
                return
            first = False

    def read(part: int) -> Optional[Stop]:
        size = min(blocks.BLOCK, stops_at[part] - starts[part] + 1)     # (a small file: a
        if len(getattr(buffers, "block", b"")) < size:      # small buffer, not faulted in)
            buffers.block = bytearray(size)
        parser = parsers[part]
        part_blocks = range_blocks(path, starts[part], stops_at[part], buffers.block,
                                   max_line)
        stop = feed_blocks(parser, watched(part_blocks, parser, part) if streaming
                           else part_blocks, max_line)
        own_lines[part] = parser.lines_seen
        if stop is None and streaming and came_back.is_set():
            return Stop("not_grouped")
        if stop is None and streaming:
            status = parser.finish()
            if status != _trec.STATUS_OK:
                stop = status_stop(parser, status)
        if stop is None and streaming and not in_one_part(parser.topic_list(), part):
            stop = Stop("not_grouped")
        return stop

    def join(first, other) -> Optional[Stop]:
        status = first.append_held(other) if grouping else first.append(other)
        return None if status == _trec.STATUS_OK else status_stop(first, status)

    with naming(path):
        stops = parts_in_turn(parsers, threads, read, join,
                              spread_order(starts, stops_at[-1]) if streaming else None)
    stop, shift = _first_stop(stops, own_lines)
    if stop is not None:
        return None, stop, shift
    return parsers[0], None, 0
