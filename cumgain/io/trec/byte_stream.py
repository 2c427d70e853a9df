"""The bytes of a TREC text file for the reader of :mod:`cumgain.trec_io`: gunzipped if
gzip, a UTF-8 byte order mark dropped, other compressions refused.

gzip is known by its magic bytes, whatever the file's name; so are the compressions the
reader does not read (:func:`compression_of`), at the start or inside the gzip.
"""
from __future__ import annotations

import re
import zlib
from typing import BinaryIO, Iterator

import numpy as np

from cumgain.io.trec.lines import _long_line_error
from cumgain.exceptions import FormatError

_READ = 1 << 20         # read 1 MiB at a time from a file or a gzip stream
_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"


class _Corrupt(Exception):
    """The gzip stream cannot be decompressed; the reason is the argument."""


class _Compressed(Exception):
    """The input is compressed in a way the readers do not read; the argument says how."""


# Formats the readers do not decompress, by their magic bytes (bzip2: "BZh", the block
# size, then a block's or the end's magic, so that a topic named "BZh9" stays a topic).
_COMPRESSED = re.compile(
    rb"(?P<bzip2>BZh[1-9](?:1AY&SY|\x17rE8P\x90))|(?P<xz>\xfd7zXZ\x00)|"
    rb"(?P<zstd>\x28\xb5\x2f\xfd)|(?P<zip>PK(?:\x03\x04|\x05\x06|\x07\x08))|"
    rb"(?P<_7z>7z\xbc\xaf\x27\x1c)|(?P<lz4>\x04\x22\x4d\x18)|"
    rb"(?P<compress>\x1f\x9d)|(?P<gzip>\x1f\x8b)")
_MAGIC_BYTES = 10           # the longest magic above


def compression_of(head: bytes) -> str | None:
    """The compression whose magic bytes ``head`` (the first bytes of a file, or of a
    gzip file's content) starts with, among those the readers do not read: "bzip2",
    "xz", "zstd", "zip", "7z", "lz4", "compress" or "gzip" (in a file: read; inside a
    gzip file: gzip twice); None for anything else.

    >>> compression_of(b"BZh91AY&SY..."), compression_of(b"BZh9 Q0 d1 1 2 t")
    ('bzip2', None)
    """
    found = _COMPRESSED.match(head)
    return None if found is None else found.lastgroup.lstrip("_")


def _compression_message(name: str, inside_gzip: bool) -> str:
    if inside_gzip and name == "gzip":
        return "compressed with gzip twice, not supported: gunzip it once first"
    where = " inside gzip" if inside_gzip else ""
    return (f"compressed with {name}{where}, not supported: decompress it first (plain "
            f"text and gzip are read)")


def _text_chunks(stream: BinaryIO) -> Iterator[bytes]:
    """The chunks of :func:`_chunks`, a UTF-8 byte order mark at the start dropped."""
    head = b""
    chunks = _chunks(stream)
    for chunk in chunks:
        head += chunk
        if len(head) >= len(_BOM):
            break
    yield head[len(_BOM):] if head.startswith(_BOM) else head
    yield from chunks


def _chunks(stream: BinaryIO) -> Iterator[bytes]:
    """The bytes of the stream, gunzipped when it starts with the gzip magic, in pieces
    of at most ``_READ`` bytes (a gzip bomb is decompressed a piece at a time); another
    compression's magic, at the start or inside the gzip, raises _Compressed."""
    head = stream.read(_READ)
    while 0 < len(head) < _MAGIC_BYTES:         # a short read must not hide a magic
        more = stream.read(_READ)
        if not more:
            break
        head += more
    if not head.startswith(_GZIP_MAGIC):
        name = compression_of(head)
        if name is not None:
            raise _Compressed(_compression_message(name, False))
        while head:
            yield head
            head = stream.read(_READ)
        return
    content = _gunzipped(stream, head)
    start = b""
    try:
        for piece in content:                   # the content's first bytes, for a magic
            start += piece
            if len(start) >= _MAGIC_BYTES:
                break
    except _Corrupt:
        yield start                             # (the lines read in full before it)
        raise
    name = compression_of(start)
    if name is not None:
        raise _Compressed(_compression_message(name, True))
    if start:
        yield start
    yield from content


def _gunzipped(stream: BinaryIO, head: bytes) -> Iterator[bytes]:
    """The gzip stream that starts with ``head``, decompressed (see _chunks)."""
    data = head
    decoder = None                  # None between gzip members
    while True:
        if decoder is None:
            if not data:
                data = stream.read(_READ)
                if not data:
                    return
            data = data.lstrip(b"\0")   # zero padding after a member, as gzip allows
            if not data:
                continue
            decoder = zlib.decompressobj(wbits=31)
        backup = decoder.copy()
        try:
            out = decoder.decompress(data, _READ)
        except zlib.error as error:
            yield from _salvage(backup, data)
            raise _Corrupt(str(error)) from None
        if out:
            yield out
        if decoder.eof:
            data, decoder = decoder.unused_data, None
            continue
        data = decoder.unconsumed_tail
        if not data and not out:        # the decoder wants more input
            data = stream.read(_READ)
            if not data:
                raise _Corrupt("the compressed stream ends early")


def _salvage(decoder, data: bytes) -> Iterator[bytes]:
    """What ``decoder`` can decompress from ``data`` before the error that
    decompressing it raised (zlib discards the output of the call that fails), in
    pieces of at most about ``_READ`` bytes."""
    for start in range(0, len(data), 4096):
        piece = data[start:start + 4096]
        while piece:
            backup = decoder.copy()
            try:
                out = decoder.decompress(piece, _READ)
            except zlib.error:
                for i in range(len(piece)):
                    try:
                        yield backup.decompress(piece[i:i + 1])
                    except zlib.error:
                        return
                return
            yield out
            piece = decoder.unconsumed_tail
            if decoder.eof:
                return


_BATCH = 1 << 23        # _batches yields about 8 MiB of text at a time


def _batches(stream: BinaryIO, source: str, limit: int) -> Iterator[tuple[bytes, int]]:
    """Yield ``(text, first_line)``: runs of whole lines of the decompressed
    input, each about ``_BATCH`` bytes, and the number of their first line.

    A line longer than ``limit`` bytes (see :func:`max_line_bytes`) raises its
    FormatError as soon as it is met, once the lines before it have been yielded (their
    errors come first); so at most a batch, the limit and a read are ever held, whatever
    the input (a file without newlines, ``/dev/zero``, a gzip bomb)."""
    parts: list[bytes] = []  # read, not yet yielded: whole lines, then the unfinished one
    size = 0                 # bytes in parts
    complete = 0             # of which the first `complete` end with a newline
    first_line = 1           # the number of the first line in parts
    try:
        for chunk in _text_chunks(stream):
            tail = size - complete              # the unfinished line before this chunk
            first = chunk.find(b"\n")
            if first < 0:
                long_at = size - tail if tail + len(chunk) > limit else -1
            elif tail + first > limit:          # the unfinished line ends too long
                long_at = size - tail
            else:
                last = chunk.rfind(b"\n")
                inner = _long_line_at(chunk, first, last, limit)
                if inner >= 0:
                    long_at = size + inner
                elif len(chunk) - last - 1 > limit:
                    long_at = size + last + 1
                else:
                    long_at = -1
                    complete = size + last + 1
            parts.append(chunk)
            size += len(chunk)
            if long_at >= 0:
                text = b"".join(parts)
                if long_at > 0:
                    yield text[:long_at], first_line        # whole lines: parsed first
                    first_line += text.count(b"\n", 0, long_at)
                raise _long_line_error(source, first_line, text[long_at:long_at + limit],
                                       limit)
            if complete >= _BATCH:
                text = b"".join(parts)
                yield text[:complete], first_line
                first_line += text.count(b"\n", 0, complete)
                parts = [text[complete:]] if complete < size else []
                size -= complete
                complete = 0
    except _Compressed as error:
        raise FormatError(source, 0, str(error)) from None
    except _Corrupt as error:
        done = first_line - 1 + sum(part.count(b"\n") for part in parts)
        where = f"after line {done}" if done else "before the first complete line"
        raise FormatError(
            source, done,
            f"truncated or corrupt gzip data {where} (the last line read in full): {error}",
        ) from None
    text = b"".join(parts)
    if text:
        yield text, first_line


def _long_line_at(chunk: bytes, first: int, last: int, limit: int) -> int:
    """Where the first line longer than ``limit`` bytes starts among the whole lines of
    ``chunk`` after its newline at ``first`` up to its newline at ``last``; -1 if none."""
    if last - first - 1 <= limit:
        return -1
    ends = np.flatnonzero(np.frombuffer(chunk, np.uint8, last - first + 1, first) == 10)
    lengths = np.diff(ends) - 1
    long = np.flatnonzero(lengths > limit)
    return -1 if not len(long) else first + int(ends[long[0]]) + 1
