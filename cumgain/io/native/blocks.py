"""How the bytes of a TREC text reach the native parsers (``cgcore._trec``,
``cgcore._qrels``): in blocks of whole lines, from a plain file (or a range of one: a
part, see :mod:`cumgain.io.native.parts`), a gzip file, standard input, a pipe, a FIFO,
a character device or a Python binary file object; and, when a parser stops, what it
stopped at (:class:`Stop`), kept so that the error is worded without reading anything
again.

Every source but a plain file by path goes through :func:`cumgain.io.trec.byte_stream._text_chunks`,
the reference reader's own decoding (gzip by its magic bytes, members and padding, the
header checks ``gzip -t`` makes, other compressions refused, a byte order mark
dropped), so that both readers take and refuse the same bytes with the same words.
"""
from __future__ import annotations

import ctypes
import io
import os
import queue
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterator, Optional

from cgcore import _trec
from cumgain.io.trec.byte_stream import _MAGIC_BYTES, _batches, _Compressed, _compression_message, \
    _Corrupt, compression_of
from cumgain.exceptions import FormatError, naming

BLOCK = 1 << 18          # read 256 KiB at a time (a block stays in the L2 cache as parsed)
GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Stop:
    """Why a parser stopped reading its part, with what the error message needs.

    ``kind``: "line" (a line the parser refused: ``text`` its bytes, at least the
    first max_line + 1 of a longer one), "long" (a line longer than the limit, met
    before it ended: ``text`` its first bytes), "gzip" (the gzip data is corrupt after
    line ``line``: ``detail`` says how), "compressed" (another compression: ``detail``),
    "not_grouped" (a run topic came back after another), "raised" (``error``, worded
    already: a gzip stream's, see stream_blocks), "qrels_duplicate" (a ranker
    met a docno twice in a topic of a table finished unchecked), "too_big" (past what
    the compiled layout holds). ``line``: 1-based within the part (0: none)."""

    kind: str
    line: int = 0
    text: bytes = b""
    detail: str = ""
    error: Optional[Exception] = None   # "raised": the error, worded already


class _LineTooLong(Exception):
    """A line longer than the limit, met before its end (``prefix``: its first bytes)."""

    def __init__(self, prefix: bytes):
        super().__init__()
        self.prefix = prefix


def _blocks(stream, limit: int = -1, bom: bool = True, buffer: Optional[bytearray] = None,
            max_line: int = -1, head: bytes = b"", rotate: int = 1, origin: int = 0):
    """Blocks of whole lines, read into one reused buffer (``buffer``, else a new one of
    BLOCK bytes; a memoryview of it each: valid until the next block is read; with
    ``rotate`` > 1, ``rotate`` buffers taken in turn: valid until ``rotate`` - 1 more
    are read, see read_ahead), from at most ``limit`` bytes (-1: to the end), after the
    bytes ``head`` already read; a UTF-8 byte order mark at the start is dropped if
    ``bom``. The unfinished line at a block's end moves to the front for the next read
    (or ALIAS_GAP bytes after it, see _front; ``origin``: the stream's offset, for
    that); a line longer than the buffer doubles it (linear overall), unless it is
    longer than ``max_line`` bytes (>= 0; -1: no limit): then _LineTooLong, so that the
    buffer never grows past about twice the limit (the parser stops at a complete line
    that long)."""
    buffer = bytearray(max(BLOCK, 2 * len(head))) if buffer is None else buffer
    buffers, turn = [buffer] + [bytearray(len(buffer)) for _ in range(rotate - 1)], 0
    remaining = limit if limit >= 0 else -1
    held = len(head)                            # bytes not yet yielded, at buffer[front:]
    buffer[:held] = head
    offset = origin + held                      # the stream's, read next
    if bom:
        while held < len(BOM) and remaining != 0:
            more = stream.read(len(BOM) - held if remaining < 0
                               else min(len(BOM) - held, remaining))
            if not more:
                break
            buffer[held:held + len(more)] = more
            held += len(more)
            offset += len(more)
            remaining -= len(more) if remaining >= 0 else 0
        if bytes(buffer[:len(BOM)]) == BOM and held >= len(BOM):
            buffer[:held - len(BOM)] = buffer[len(BOM):held]
            held -= len(BOM)
    front = _front(buffer, held, offset)
    buffer[front:front + held] = buffer[:held]
    readinto = getattr(stream, "readinto", None)
    while remaining != 0:
        if front + held == len(buffer):
            if 0 <= max_line < held:        # all of it one unfinished line
                raise _LineTooLong(bytes(buffer[front:front + max_line]))
            grown = bytearray(2 * len(buffer))
            grown[:held] = buffer[front:front + held]
            buffer = buffers[turn] = grown
            front = 0
        at = front + held
        room = len(buffer) - at if remaining < 0 else min(len(buffer) - at, remaining)
        if readinto is not None:
            with memoryview(buffer) as view:
                count = readinto(view[at:at + room])
        else:
            more = stream.read(room)
            count = len(more)
            buffer[at:at + count] = more
        if not count:
            break
        remaining -= count if remaining >= 0 else 0
        offset += count
        end = at + count
        cut = buffer.rfind(b"\n", at, end) + 1     # the held bytes have no newline
        if cut == 0:
            held += count
            continue
        yield memoryview(buffer)[front:cut]
        held = end - cut
        buffer, front = _next_buffer(buffers, turn := (turn + 1) % rotate, buffer, cut, end,
                                     offset)
    if held:
        yield memoryview(buffer)[front:front + held]


PAGE = 4096
ALIAS_GAP = 32      # see _front


def _front(buffer: bytearray, held: int, offset: int) -> int:
    """Where in ``buffer`` to put the ``held`` bytes carried over before the next read
    (from ``offset`` of the stream): 0, or ALIAS_GAP if the read would then land 1 to
    31 bytes past its source's place in a page. The kernel copies a file's cached pages
    (and a pipe's) with ``rep movsb``, which runs about 5x slower so placed on AMD Zen
    (4 KiB aliasing; measured here: 5 MB in 2.0 ms instead of 0.35 ms), and a buffer
    from malloc starts 16 bytes into a page: a file whose blocks all end on a page
    boundary (blank lines) had every read placed so. 0 for a buffer with no room to
    spare."""
    if ALIAS_GAP + held + PAGE > len(buffer):      # (a small buffer, or a long line)
        return 0
    address = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    return ALIAS_GAP if 0 < (address + held - offset) % PAGE < ALIAS_GAP else 0


def _next_buffer(buffers: list, turn: int, buffer: bytearray, cut: int, end: int,
                 offset: int) -> tuple[bytearray, int]:
    """Buffer ``turn`` of ``buffers`` (grown to the size of ``buffer`` if smaller),
    with ``buffer[cut:end]`` (an unfinished line) moved to its front (see _front:
    ``offset``, the stream's, read next), and where it starts there."""
    following = buffers[turn]
    if following is not buffer and len(following) < len(buffer):
        following = buffers[turn] = bytearray(len(buffer))
    front = _front(following, end - cut, offset)
    following[front:front + end - cut] = buffer[cut:end]
    return following, front


READ_AHEAD_ROTATE = 3       # the buffers read_ahead's blocks rotate through


class read_ahead:
    """The blocks of ``blocks`` (made with ``rotate=READ_AHEAD_ROTATE``), read by a
    helper thread one block ahead of the caller: reading a stream (a pipe's copy, a
    gzip stream's decompression, both without the GIL) overlaps the parsing of the
    block before. An exception of the reading is raised here, in its turn. Closed
    early (a bad line), the helper ends after the block it reads, and ``close`` waits
    for that: once it returns, nothing reads the input any more (a stream left to the
    helper would be read on behind the caller's back, and a file it was reading,
    closed by the caller, could hand its descriptor's number to the next file opened,
    which the helper's read in flight would then consume)."""

    _END = object()

    def __init__(self, blocks: Iterator[memoryview]):
        self.ready: queue.Queue = queue.Queue(maxsize=1)
        self.stopping = threading.Event()
        self.blocks = blocks
        self.helper = threading.Thread(target=self._read, daemon=True)
        self.helper.start()

    def _read(self) -> None:
        try:
            for block in self.blocks:
                while not self.stopping.is_set():
                    try:
                        self.ready.put((block, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if self.stopping.is_set():
                    return
            self.ready.put((self._END, None))
        except BaseException as error:  # noqa: BLE001 - raised again in the caller's thread
            self.ready.put((self._END, error))

    def __iter__(self) -> Iterator[memoryview]:
        return self

    def __next__(self) -> memoryview:
        if self.stopping.is_set():
            raise StopIteration
        block, error = self.ready.get()
        if block is self._END:
            self.stopping.set()
            self.helper.join()
            if error is not None:
                try:
                    raise error
                finally:                # (no cycle: error -> traceback -> this frame)
                    error = None
            raise StopIteration
        return block

    def close(self) -> None:
        self.stopping.set()
        while self.helper.is_alive():
            try:                        # (a helper waiting to hand a block over)
                self.ready.get(timeout=0.05)
            except queue.Empty:
                pass
        self.helper.join()

    def __del__(self) -> None:
        self.stopping.set()


class Spill:
    """A copy of a stream that cannot be read again (a pipe), kept as it is read (see
    Tee): in an anonymous temporary file (deleted by the system when closed: nothing
    is left behind), or, from the first write that fails (no room, no temporary
    folder), in memory. So that a run piped in is read as it streams, in bounded
    memory, and, if a topic comes back, read again from its start: the copy, then the
    rest of the stream (:meth:`then`)."""

    def __init__(self):
        self.memory: list = []
        try:
            self.file: Optional[BinaryIO] = tempfile.TemporaryFile(buffering=0)
        except OSError:
            self.file = None

    def write(self, data) -> None:
        if self.file is not None and not self.memory:
            try:
                self.file.write(data)
                return
            except OSError:
                pass
        self.memory.append(bytes(data))

    def then(self, name: str, stream: BinaryIO) -> "Source":
        """The stream read again from its start: this copy of what was read of it, then
        the rest of it (named as the stream, to be read once)."""
        parts = []
        if self.file is not None:
            self.file.seek(0)
            parts.append(self.file)
        if self.memory:
            parts.append(io.BytesIO(b"".join(self.memory)))
            self.memory = []
        return Source(name, stream=_Joined(parts + [stream]))

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


class Tee(io.RawIOBase):
    """``stream`` read as it is, everything read also written to a Spill."""

    def __init__(self, stream: BinaryIO, spill: Spill):
        self.stream, self.spill = stream, spill
        self._readinto = getattr(stream, "readinto", None)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._readinto is not None:
            count = self._readinto(buffer)
        else:
            data = self.stream.read(len(buffer))
            count = len(data)
            buffer[:count] = data
        if count:
            with memoryview(buffer) as view:
                self.spill.write(view[:count])
        return count or 0


class _Joined(io.RawIOBase):
    """Streams read one after the other, as one (read once)."""

    def __init__(self, parts: list):
        self.parts, self.at = parts, 0
        self._readintos = [getattr(part, "readinto", None) for part in parts]

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while self.at < len(self.parts):
            readinto = self._readintos[self.at]
            if readinto is not None:
                count = readinto(buffer)
            else:
                data = self.parts[self.at].read(len(buffer))
                count = len(data)
                buffer[:count] = data
            if count:
                return count
            self.at += 1
        return 0


def stream_blocks(stream: BinaryIO, max_line: int = -1, rotate: int = 1, name: str = ""):
    """Blocks of whole lines of a binary stream (standard input, a pipe, a file object):
    a plain stream read straight into the block buffer (``rotate``: see _blocks),
    another compression refused (_Compressed), a byte order mark dropped. A gzip
    stream (by its magic) is decoded and cut in batches of lines by the reference
    reader's own code (_batches, which raises the FormatError of a corrupt stream, a
    line too long or a compression inside, naming ``name``): the lines decoded just
    before a corrupt point can be garbage, and a batch's lines are parsed only once the
    next batch has been decoded, as the reference reader parses them."""
    head = stream.read(_MAGIC_BYTES)
    while 0 < len(head) < _MAGIC_BYTES:         # a short read must not hide a magic
        more = stream.read(_MAGIC_BYTES - len(head))
        if not more:
            break
        head += more
    if head.startswith(GZIP_MAGIC):
        return (memoryview(text) for text, _ in _batches(_Prefixed(head, stream), name,
                                                         max_line if max_line >= 0
                                                         else sys.maxsize))
    name = compression_of(head)
    if name is not None:
        raise _Compressed(_compression_message(name, False))
    return _blocks(stream, max_line=max_line, head=head, rotate=rotate)


class _Prefixed:
    """A stream whose first bytes were read already (``head``): read() gives them first."""

    def __init__(self, head: bytes, stream: BinaryIO):
        self.head, self.stream = head, stream

    def read(self, n: int = -1) -> bytes:
        if self.head:
            if n < 0 or n >= len(self.head):
                head, self.head = self.head, b""
                return head + (self.stream.read(n - len(head)) if n > len(head) else
                               self.stream.read() if n < 0 else b"")
            head, self.head = self.head[:n], self.head[n:]
            return head
        return self.stream.read(n)


def _line_of(block: memoryview, offset: int, max_line: int) -> bytes:
    """The line starting at ``offset`` of ``block``, without its newline (at most
    ``max_line`` + 1 bytes: enough to tell it is too long)."""
    end = len(block) if max_line < 0 else min(len(block), offset + max_line + 1)
    text = bytes(block[offset:end])
    newline = text.find(b"\n")
    return text if newline < 0 else text[:newline]


def status_stop(parser, status: int, block: Optional[memoryview] = None,
                max_line: int = -1) -> Stop:
    """The Stop for a parser's status that is not OK (``block``: what it was fed, for
    the bytes of a bad line)."""
    if status in (_trec.STATUS_BAD_LINE, _trec.STATUS_NOT_GROUPED) and block is not None:
        text = _line_of(block, parser.stop_offset, max_line)
    else:
        text = b""
    if status == _trec.STATUS_BAD_LINE:
        return Stop("line", parser.status_line, text)
    kind = {_trec.STATUS_NOT_GROUPED: "not_grouped", _trec.STATUS_NO_MEMORY: "memory",
            _trec.STATUS_QRELS_DUPLICATE: "qrels_duplicate",
            _trec.STATUS_TOO_BIG: "too_big"}.get(status, f"status {status}")
    return Stop(kind, getattr(parser, "status_line", 0), text,
                detail=str(parser.failed_bytes) if status == _trec.STATUS_NO_MEMORY else "")


def feed_blocks(parser, blocks, max_line: int = -1) -> Optional[Stop]:
    """Feed blocks of whole lines to ``parser`` (a RunRanker or a QrelsTable): None once
    all are in, else why it stopped (see status_stop; the bytes of a bad line are kept
    with it). Errors of the blocks themselves (a line too long, a corrupt gzip stream,
    another compression) become Stops too; OSError passes."""
    try:
        for block in blocks:
            status = parser.feed(block)
            if status != _trec.STATUS_OK:
                return status_stop(parser, status, block, max_line)
    except _LineTooLong as error:
        return Stop("long", parser.lines_seen + 1, error.prefix)
    except _Corrupt as error:
        return Stop("gzip", parser.lines_seen, detail=str(error))
    except _Compressed as error:
        return Stop("compressed", detail=str(error))
    except FormatError as error:        # (worded by the reference reader's _batches)
        return Stop("raised", error=error)
    return None


# ---------------------------------------------------------------- where the input is

@dataclass(frozen=True)
class Source:
    """An input as the native reader reads it. ``path``: a plain or gzip file by path
    (else None); ``stream``: a binary stream (standard input, a file object); ``name``:
    how errors name it; ``plain``: a plain (not compressed) regular file by path, read
    in parts; ``rewind``: for a seekable stream, the offset to read it again from
    (None: it cannot be read again; a run of it is copied as it is read, see Spill)."""

    name: str
    path: Optional[str] = None
    stream: Optional[BinaryIO] = None
    plain: bool = False
    rewind: Optional[int] = None

    def blocks(self, max_line: int, spill: Optional[Spill] = None) -> read_ahead:
        """The whole-line blocks of the input, from its start, read one block ahead by a
        helper thread (see read_ahead); what is read of a stream is also copied to
        ``spill`` if given."""
        return read_ahead(self._blocks(max_line, spill))

    def _blocks(self, max_line: int, spill: Optional[Spill]):
        if self.path is not None:
            with open(self.path, "rb") as raw:
                yield from stream_blocks(raw, max_line, READ_AHEAD_ROTATE, self.name)
            return
        if self.rewind is not None:
            self.stream.seek(self.rewind)
        stream = self.stream if spill is None else Tee(self.stream, spill)
        yield from stream_blocks(stream, max_line, READ_AHEAD_ROTATE, self.name)

    @property
    def again(self) -> bool:
        """Whether the input can be read a second time."""
        return self.path is not None or self.rewind is not None


def is_stream(obj: Any) -> bool:
    """Whether ``obj`` is a binary stream the readers take: an object with ``read``
    that is not a text stream (io.BufferedReader, io.BytesIO, gzip.GzipFile,
    sys.stdin.buffer, a socket's makefile("rb"), ...)."""
    return callable(getattr(obj, "read", None)) and not isinstance(
        obj, (str, bytes, os.PathLike, io.TextIOBase))


def is_text_stream(obj: Any) -> bool:
    """Whether ``obj`` is a text stream (sys.stdin, open(path)): refused, as its
    bytes are what the readers read (give ``.buffer`` or open it with "rb")."""
    return isinstance(obj, io.TextIOBase)


def source_of(obj: Any) -> Optional[Source]:
    """The Source of a path (``"-"``: standard input) or a binary stream, or None for
    anything else. A path is only checked to be a str or os.PathLike here: opening
    it raises what ``open`` raises, naming it."""
    if isinstance(obj, str) and obj == "-":
        return _stream_source(sys.stdin.buffer, "<stdin>")
    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        path = os.fsdecode(path) if isinstance(path, bytes) else path
        return Source(path, path=path, plain=_plain_file(path))
    if is_stream(obj):
        name = getattr(obj, "name", None)
        return _stream_source(obj, name if isinstance(name, str) else "<stream>")
    return None


def _stream_source(stream: BinaryIO, name: str) -> Source:
    rewind = None
    try:
        if stream.seekable():
            rewind = stream.tell()
    except (AttributeError, OSError, ValueError):
        rewind = None
    return Source(name, stream=stream, rewind=rewind)


def _plain_file(path: str) -> bool:
    """Whether ``path`` is a regular file that does not start with the gzip magic (one
    to read in parts); False for anything else, or anything that cannot be opened
    (then reading it says why)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as raw:
            head = raw.read(_MAGIC_BYTES)
    except OSError:
        return False
    return not head.startswith(GZIP_MAGIC) and compression_of(head) is None


def range_blocks(path: str, start: int, stop: int, buffer: bytearray, max_line: int = -1):
    """The whole-line blocks of bytes [start, stop) of a plain file, read into
    ``buffer`` (a byte order mark dropped at offset 0)."""
    with open(path, "rb") as raw:
        raw.seek(start)
        yield from _blocks(raw, stop - start, bom=start == 0, buffer=buffer,
                           max_line=max_line, origin=start)


# ---------------------------------------------------------------- reading a source

def read_whole(parser, source: Source, max_line: int, spill: Optional[Spill] = None):
    """``parser`` fed the whole source in one thread: (parser, None, 0), or (None,
    stop, 0). ``spill``: what is read of a stream is also copied there; after a stop,
    the stream is no longer being read when this returns (so that the rest can be
    copied too)."""
    blocks = source.blocks(max_line, spill)
    try:
        with naming(source.name):
            stop = feed_blocks(parser, blocks, max_line)
    finally:
        blocks.close()
    return (parser, None, 0) if stop is None else (None, stop, 0)
