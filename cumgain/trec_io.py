"""Read qrels and runs: TREC files (plain or gzip), pytrec_eval-style dicts, DataFrames.

Every front-end returns a :class:`Qrels` or a :class:`Run`: the rows grouped by
topic (topic ``t`` owns rows ``offsets[t]:offsets[t+1]``, as in a CSR matrix),
topics in order of first appearance, and the rows of a topic in input order.
The evaluation engine takes these; nothing is sorted by score or docno here.

This module is the pure-Python reference for a future C parser, so each rule
below is meant to be exact. Where a rule differs from trec_eval
(``get_qrels.c`` and ``get_trec_results.c`` of trec_eval 10.0) it says so.

Files
-----
* **Lines and fields.** Lines end at ``\\n``. Fields are separated by runs of
  ASCII whitespace (space, ``\\t``, ``\\r``, ``\\v``, ``\\f``: C ``isspace``),
  as in trec_eval, so CRLF files read like LF files. A final line without a
  newline is read. Line numbers in errors count every physical line from 1
  (trec_eval counts only the data lines).
* **Line length.** A line may have at most :func:`max_line_bytes` bytes before its
  newline: 1 MiB unless ``max_line_bytes=`` (:func:`read_qrels`, :func:`read_run`,
  :func:`iter_run_blocks`), :data:`MAX_LINE_BYTES` or the environment variable
  ``CUMGAIN_MAX_LINE_BYTES`` says otherwise. A longer line is an error naming it,
  raised as soon as the reader has read past the limit (the lines before it are
  checked first), so that a file without newlines (``/dev/zero``, a binary file, a
  gzip bomb) costs a few MiB, not its size. Its message says what is wrong within its
  first ``limit`` bytes, by the checks below in their order (invalid UTF-8, a NUL
  byte, a carriage return inside the line), else that it is too long. trec_eval has
  no limit (it reads the whole file at once).
* **Comments.** A line whose first non-blank character is ``#`` is skipped, in
  qrels and runs (trec_eval 10.0; 9.0.8 has no comments). In qrels, trec_eval
  10.0 only treats ``#`` in column 1 as a comment; we also skip indented ones.
  A ``#`` later in a line is data (MS MARCO v2.1 docids contain ``#``).
* **Qrels line** ``qid iter docno rel``: exactly 4 fields, otherwise an error
  (trec_eval: "Malformed line"). ``iter`` is ignored and may be anything
  (TREC-COVID puts ``0.5`` there). ``rel`` is read as a float64 number, so
  ``1.9`` stays 1.9 and ``-2`` stays -2. *Difference:* trec_eval reads ``rel``
  with ``atol``, which truncates ``1.9`` to 1 and reads ``abc`` as 0 without a
  word; here a non-numeric, NaN or infinite ``rel`` is an error. A **blank line
  (empty or whitespace only) is an error in qrels**, as in trec_eval.
* **Run line** ``qid iter docno rank score tag [extra ...]``: at least 6 fields
  (5 is an error, as in trec_eval); fields after the tag are ignored. ``iter``
  and ``rank`` are ignored and not validated: the ranking comes from the score
  alone (trec_eval). Blank lines are skipped (trec_eval). The run's ``tag`` is
  the tag of the **last** data line (what trec_eval prints as ``runid``).
  *Difference:* a line with fields after a tag that is a number (by the grammar
  of scores, below) is an error. That is how a docno with a space in it shows:
  ``q1 Q0 doc 7 3 12.5 run`` has its columns shifted by one, and trec_eval would
  read docno ``doc`` with the rank ``3`` as its score, silently. (Words after a
  tag that is not a number are ignored, however many: trec_eval's test suite has
  them, "reserved for future expansion".)
* **Numbers** (``score`` and ``rel``) follow one grammar: an optional sign, then
  decimal digits with an optional point and an optional exponent
  (``1``, ``-0.5``, ``.5``, ``5.``, ``1e-3``, ``1E+7``), or ``inf`` /
  ``infinity`` in any case. The value is the correctly rounded double, the
  same as C ``strtod`` / ``atof`` gives; ``1e400`` becomes ``inf`` as in C.
  *Differences from atof:* anything else is an error instead of a silent
  prefix parse (``abc`` -> 0, ``12abc`` -> 12), including hexadecimal
  (``0x10``, which atof reads as 16) and Python-only underscores (``1_0``).
  A NaN score is an error, because NaN leaves the ranking undefined
  (trec_eval accepts it and sorts it unpredictably). Scores may be ``inf``;
  relevance values must be finite.
* **Encoding.** The whole file, comments included, must be valid UTF-8
  (decoded strictly); otherwise an error names the line. A UTF-8 byte-order
  mark at the very start is dropped (trec_eval would glue it to the first
  qid). Ids are compared as decoded strings, which is the same as comparing
  the bytes. A NUL byte anywhere is an error (trec_eval's C strings would
  silently end the field there).
* **gzip.** A file (or stdin) whose first two bytes are ``1f 8b`` is gunzipped
  on the fly, whatever its name; concatenated gzip members and zero padding
  after the last member are accepted, as by :mod:`gzip`. trec_eval cannot read
  gzip at all. A truncated or corrupt stream (bad header, bad data, bad CRC or
  length, non-gzip bytes after a member) is an error naming the last complete
  line that was read. Files are read in blocks of a few MiB. A file that starts
  with the magic bytes of another compression (bzip2, xz, zstd, zip, 7z, lz4,
  Unix compress; see :func:`compression_of`), or a gzip file whose content starts
  with one (gzip twice), is an error at line 0, "compressed with bzip2, not
  supported", rather than "not valid UTF-8" at line 1.
* **Paths.** A path is a ``str`` or :class:`os.PathLike`; the ``str`` ``"-"``
  reads ``sys.stdin.buffer`` (trec_eval 10.0) and is reported as ``<stdin>``.
  A file that cannot be opened raises the :class:`OSError` that ``open``
  raises (:class:`FileNotFoundError`, :class:`IsADirectoryError`,
  :class:`PermissionError`), whose message names the path.
* **Line ends.** Only ``\\n`` ends a line, as in trec_eval; ``\\r`` is
  whitespace, so CRLF files read like LF files. A ``\\r`` followed by more
  fields on the same line is an error: a file with old Mac (CR-only) line ends
  would otherwise be one long line, read by trec_eval as a single row with the
  rest silently ignored. For the same reason a Unicode line separator anywhere in
  a line (U+0085 NEXT LINE, U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR,
  which C ``isspace`` does not know: trec_eval would read what follows as more
  fields, after a run's tag silently ignored) is an error naming the line and
  column. Other characters that are not C whitespace (U+00A0, U+3000, the ASCII
  separators 0x1C-0x1F) are data, as in trec_eval.
* **Empty input.** A file with no data line (empty, or only comments, or for
  runs only blank lines) is an error with line number 0: "no judgments" /
  "no results" (trec_eval: "Cannot read ... file").

Errors
------
A :class:`~cumgain.exceptions.FormatError` (an ``InputError``, so a
``ValueError``) carries the path, the 1-based line number and the line's text,
and its message starts ``path:line:``. Errors come in file order: the first
malformed line (fields, encoding, NUL, number) is the one reported.
Duplicates are looked for once the whole input has been read. Dicts and
DataFrames raise :class:`~cumgain.exceptions.InputError`.

Duplicates
----------
A docno that occurs twice in one topic is an error by default, in qrels and
runs alike, naming the topic, the docno and both line numbers. trec_eval
also treats it as fatal, but only when it meets the duplicate while
evaluating (for runs: only within the ``-M`` cut-off, for qrels: only in a
topic that is evaluated); here every duplicate is found when reading.
``duplicates="first"`` keeps the first occurrence and drops the later ones,
with a :class:`DuplicatesDroppedWarning` giving the number dropped and the
first one; nothing is ever dropped silently.

Blocks
------
:func:`iter_run_blocks` reads a run file a block of lines at a time, for callers
that must not hold the whole run (:mod:`cumgain.stream`): the same grammar and
errors, in file order, but duplicates are left to the caller (they need whole
topics).

Dicts (pytrec_eval style)
-------------------------
``{qid: {docid: value}}``. Ids are converted with ``str()``; two keys that
become the same string (``1`` and ``"1"``) are an :class:`InputError`, since
a dict cannot otherwise hold a duplicate. An id must have UTF-8 bytes (ids are
compared by them, as in files): a ``str`` holding a lone surrogate
(``"q\\udcff"``, what ``os.fsdecode`` makes of a byte that is not UTF-8) is an
:class:`InputError` naming the topic (and docid), on the native path too. Values
must be real numbers (``int``, ``float``, numpy integers and floats, other
:class:`numbers.Real`) that a float64 holds; ``bool`` (also ``numpy.bool_``),
``str``, an ``int`` beyond a float64's range (``10**400``) and anything else are
an :class:`InputError` naming the qid and docid, as is NaN, and for qrels an
infinite value. A topic whose inner dict is empty is kept with zero rows, so
the engine can report it. An empty outer dict gives zero topics (not an
error: pytrec_eval evaluates it to ``{}``). The run tag is ``""``.

DataFrames
----------
Columns ``query_id, doc_id, relevance`` (qrels) or ``query_id, doc_id, score``
(runs); other columns are ignored; missing ones are an :class:`InputError`
listing them. Ids are converted with ``str()`` (note that a float column gives
``"5.0"``, not ``"5"``); a missing id (NaN, None, NA) is an error. The value
column must be numeric and not boolean, with the same NaN / infinity rules as
files. The duplicates policy applies, with rows named by 0-based position. Ids follow the
dict rules (a lone surrogate is an error naming the row).
pandas is imported only when a DataFrame is converted.

The arrays of a :class:`Qrels` or :class:`Run` are freshly allocated and
writable; treat them as read-only. The classes compare by identity (numpy
arrays have no single truth value).
"""
from __future__ import annotations

import codecs
import contextlib
import math
import os
import re
import sys
import warnings
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import compress, repeat
from numbers import Real
from typing import Any, BinaryIO, Callable, Iterator, Sequence, get_args

import numpy as np

from cumgain import columns
from cumgain._optional import require
from cumgain.exceptions import FormatError, InputError, naming
from cumgain.types import DuplicatePolicy, PathLike

__all__ = [
    "DuplicatesDroppedWarning",
    "Qrels",
    "Run",
    "RunBlock",
    "compression_of",
    "iter_run_blocks",
    "load_qrels",
    "load_run",
    "max_line_bytes",
    "qrels_from_dataframe",
    "qrels_from_dict",
    "read_qrels",
    "read_run",
    "run_from_dataframe",
    "run_from_dict",
]

DEFAULT_MAX_LINE_BYTES = 1 << 20
MAX_LINE_BYTES: int | None = None   # the longest line read (bytes, without the newline);
                                    # None: CUMGAIN_MAX_LINE_BYTES, else the default 1 MiB
_BATCH = 1 << 23        # parse about 8 MiB of text at a time
_BLOCK = 1 << 20        # iter_run_blocks: parse 1 MiB of text at a time
_READ = 1 << 20         # read 1 MiB at a time from a file or a gzip stream
_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
_SHOWN = 200            # at most this many characters of a bad line in an error
_POLICIES: tuple[DuplicatePolicy, ...] = get_args(DuplicatePolicy)
_NEWLINE = b"\0"        # the token that stands for a line end while splitting


class DuplicatesDroppedWarning(UserWarning):
    """``duplicates="first"`` dropped repeated (topic, docno) rows."""


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments grouped by topic.

    Topic ``t`` (``topics[t]``) owns ``docnos[offsets[t]:offsets[t+1]]`` and the
    matching ``relevance`` values, in input order. ``offsets`` is int64 with
    ``len(topics) + 1`` entries, ``docnos`` an object array of ``str``,
    ``relevance`` float64 (negative and fractional levels kept as read), and
    ``lines`` the int64 1-based line of each row in ``source`` (``None`` for
    dicts and DataFrames).
    """

    topics: tuple[str, ...]
    offsets: np.ndarray
    docnos: np.ndarray
    relevance: np.ndarray
    source: str
    lines: np.ndarray | None

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The judgments as ``{qid: {docno: relevance}}``."""
        return _to_dict(self.topics, self.offsets, self.docnos, self.relevance)


@dataclass(frozen=True, eq=False)
class Run:
    """Retrieved documents and their scores grouped by topic.

    Topic ``t`` owns ``docnos[offsets[t]:offsets[t+1]]`` and the matching
    float64 ``scores`` in input order (not sorted: ranking is the engine's
    job). The arrays are laid out as in :class:`Qrels`. ``tag`` is the run
    tag of the last line read (``""`` for dicts and DataFrames); ``tags_agree``: whether
    every line has that tag.
    """

    topics: tuple[str, ...]
    offsets: np.ndarray
    docnos: np.ndarray
    scores: np.ndarray
    tag: str
    source: str
    lines: np.ndarray | None
    tags_agree: bool = True

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The run as ``{qid: {docno: score}}``."""
        return _to_dict(self.topics, self.offsets, self.docnos, self.scores)


def _to_dict(topics, offsets, docnos, values) -> dict[str, dict[str, float]]:
    return {
        topic: dict(zip(docnos[offsets[t]:offsets[t + 1]].tolist(),
                        values[offsets[t]:offsets[t + 1]].tolist()))
        for t, topic in enumerate(topics)
    }


# --------------------------------------------------------------------------- files

@dataclass(frozen=True)
class _Kind:
    """What differs between reading qrels and reading runs."""

    name: str
    n_fields: int           # the exact field count (qrels) or the minimum (runs)
    exact: bool
    value_field: int
    value_name: str
    finite: bool            # reject infinite values too, not only NaN
    blank_ok: bool
    empty: str
    layout: str
    has_tag: bool
    group_field: int = 0    # > 0: a topic is this field with the qid ("qid\tfield")


_QRELS = _Kind("qrels", 4, True, 3, "relevance", True, False, "no judgments",
               "qid iter docno rel", False)
_QRELS_JG = _Kind("qrels", 4, True, 3, "relevance", True, False, "no judgments",
                  "qid jg docno rel", False, group_field=1)
_RUN = _Kind("run", 6, False, 4, "score", False, True, "no results",
             "qid iter docno rank score tag", True)


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


def read_qrels(path: PathLike, *, duplicates: DuplicatePolicy = "error",
               max_line_bytes: int | None = None) -> Qrels:
    """Read a TREC qrels file (``qid iter docno rel``), plain or gzip.

    Parameters
    ----------
    path : str or os.PathLike
        The file; ``"-"`` reads standard input.
    duplicates : {"error", "first"}
        What a repeated docno within a topic does: raise, or keep the first
        occurrence with a :class:`DuplicatesDroppedWarning`.
    max_line_bytes : int, optional
        The longest line read; a longer one is an error (see :func:`max_line_bytes`
        for the default).

    Raises
    ------
    FormatError
        A malformed line, with the file and line number (see the module doc).
    OSError
        The file cannot be opened.
    """
    _check_policy(duplicates)
    source, topics, tidx, docnos, values, lines, _ = _read_file(path, _QRELS, max_line_bytes)
    offsets, docnos, values, lines = _assemble(
        source, topics, tidx, docnos, values, lines, duplicates, "docno", "topic")
    return Qrels(topics, offsets, docnos, values, source, lines)


def read_grouped_qrels(path: PathLike) -> Qrels:
    """Read a qrels file with judgment groups (trec_eval's ``qrels_jg``: ``qid jg
    docno rel``, the second field naming the group): a :class:`Qrels` whose topics
    are ``"qid\tjg"``, one per group (a docno twice in one group is an error; in two
    groups of a topic it is not). Lines, numbers and errors as in :func:`read_qrels`.
    """
    source, topics, tidx, docnos, values, lines, _ = _read_file(path, _QRELS_JG)
    offsets, docnos, values, lines = _assemble(
        source, topics, tidx, docnos, values, lines, "error", "docno", "judgment group")
    return Qrels(topics, offsets, docnos, values, source, lines)


def read_run(path: PathLike, *, duplicates: DuplicatePolicy = "error",
             max_line_bytes: int | None = None) -> Run:
    """Read a TREC run file (``qid iter docno rank score tag``), plain or gzip.

    Parameters and errors are those of :func:`read_qrels`.
    """
    _check_policy(duplicates)
    source, topics, tidx, docnos, values, lines, (tag, agree) = _read_file(path, _RUN,
                                                                         max_line_bytes)
    offsets, docnos, values, lines = _assemble(
        source, topics, tidx, docnos, values, lines, duplicates, "docno", "topic")
    return Run(topics, offsets, docnos, values, tag, source, lines, agree)


def _read_file(path, kind: _Kind, max_line: int | None = None):
    limit = max_line_bytes(max_line)
    with _opened(path, kind) as (stream, source):
        return _read_stream(stream, source, kind, limit)


def max_line_bytes(value: int | None = None) -> int:
    """The longest line the readers take, in bytes without the newline: ``value`` if
    given, else :data:`MAX_LINE_BYTES` if set, else the environment variable
    ``CUMGAIN_MAX_LINE_BYTES`` if set, else 1 MiB (:data:`DEFAULT_MAX_LINE_BYTES`).

    A longer line is an error naming it, met while the file is read, so that a file
    without line ends (``/dev/zero``, a binary file) costs no more than the limit.
    ``cumgain.evaluate`` and the native reader follow the same limit.

    >>> max_line_bytes(), max_line_bytes(64)
    (1048576, 64)
    """
    for what, limit in (("max_line_bytes", value), ("cumgain.trec_io.MAX_LINE_BYTES",
                                                    MAX_LINE_BYTES)):
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) \
                    or limit < 1:
                raise InputError(f"{what} must be a positive integer, got {limit!r}")
            return int(limit)
    text = os.environ.get("CUMGAIN_MAX_LINE_BYTES", "").strip()
    if not text:
        return DEFAULT_MAX_LINE_BYTES
    if not text.isdigit() or int(text) < 1:
        raise InputError(f"CUMGAIN_MAX_LINE_BYTES must be a positive integer, got {text!r}")
    return int(text)


def _check_path(path: Any, kind: _Kind) -> None:
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(
            f"the {kind.name} path must be a str or os.PathLike, got {type(path).__name__}")


@contextlib.contextmanager
def _opened(path, kind: _Kind) -> Iterator[tuple[BinaryIO, str]]:
    """``(stream, source)``: the file, closed on exit, or standard input for ``"-"``."""
    if isinstance(path, str) and path == "-":
        yield sys.stdin.buffer, "<stdin>"
        return
    _check_path(path, kind)
    source = os.fspath(path)
    if isinstance(source, bytes):
        source = os.fsdecode(source)
    with naming(source), open(source, "rb") as stream:   # a failed read names the file
        yield stream, source


@dataclass(frozen=True, eq=False)
class RunBlock:
    """The data lines of one block of a run file, parsed (see :func:`iter_run_blocks`).

    ``qids`` and ``docnos``: the qid and docno of each data line in file order, as the
    file's bytes (checked to be UTF-8: ``bytes.decode`` gives the ``str`` ids that
    :func:`read_run` returns; they are left undecoded for callers that look at a few,
    e.g. at topic boundaries); ``scores``: float64; ``lines``: the int64 1-based line
    numbers in ``source``; ``tag``: the tag of the block's last data line. ``text`` is
    the block as read, whole lines from line ``first_line`` on (comment and blank lines
    included, the file's last newline possibly missing).
    """

    source: str
    qids: list[bytes]
    docnos: list[bytes]
    scores: np.ndarray
    lines: np.ndarray
    tag: str
    text: bytes
    first_line: int

    def line_texts(self) -> list[bytes]:
        """The text of each data line as read, without its newline."""
        every_line = self.text.split(b"\n")
        return list(map(every_line.__getitem__, (self.lines - self.first_line).tolist()))


def iter_run_blocks(path: PathLike, *, block_bytes: int = _BLOCK,
                    max_line_bytes: int | None = None) -> Iterator[RunBlock]:
    """Read a TREC run file (plain or gzip; ``"-"`` is standard input) a block of whole
    lines at a time, for callers that must not hold the whole run (:mod:`cumgain.stream`).

    Each :class:`RunBlock` holds about ``block_bytes`` of text (more when a single line
    is longer) and its data lines, parsed with :func:`read_run`'s grammar. Its errors
    are :func:`read_run`'s, with file, line and text, raised in file order as the
    iteration reaches them; a file without data lines raises the "no results" error
    once it is read through. Blocks without data lines are not yielded. Duplicate
    docnos are **not** looked for (that needs whole topics: the caller's job). Memory:
    one 8 MiB read block plus the current block, whose parse takes about 25 times its
    text in Python objects. A path of the wrong type is an :class:`InputError` at once.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "run.txt")
    ...     with open(path, "w") as out:
    ...         _ = out.write("q1 Q0 d1 1 2.5 bm25\\n# note\\nq1 Q0 d2 2 1 bm25\\n")
    ...     blocks = list(iter_run_blocks(path))
    >>> [(b.qids, b.docnos, b.scores.tolist(), b.lines.tolist(), b.tag) for b in blocks]
    [([b'q1', b'q1'], [b'd1', b'd2'], [2.5, 1.0], [1, 3], 'bm25')]
    """
    _check_path(path, _RUN)
    if isinstance(block_bytes, bool) or not isinstance(block_bytes, (int, np.integer)) \
            or block_bytes < 1:
        raise InputError(f"block_bytes must be a positive integer, got {block_bytes!r}")
    return _run_blocks(path, int(block_bytes), _line_limit(max_line_bytes))


def _run_blocks(path, block_bytes: int, limit: int) -> Iterator[RunBlock]:
    kind = _RUN
    found = False
    with _opened(path, kind) as (stream, source):
        for batch, batch_first_line in _batches(stream, source, limit):
            for text, first_line in _split_lines(batch, batch_first_line, block_bytes):
                parsed = _parse_batch(text, first_line, source, kind)
                if parsed is None:
                    continue
                qids, docnos, tokens, lines, tag, _ = parsed
                scores = _parse_numbers(tokens, lines, text, first_line, source, kind)
                found = True
                yield RunBlock(source, qids, docnos, scores, lines, tag.decode(), text,
                               first_line)
    if not found:
        raise FormatError(source, 0, f"{kind.empty} (the file has no data lines)")


def _split_lines(text: bytes, first_line: int, size: int) -> Iterator[tuple[bytes, int]]:
    """Cut whole lines into pieces of about ``size`` bytes of whole lines, with the
    number of each piece's first line."""
    start = 0
    while start < len(text):
        end = start + size
        if end < len(text):
            cut = text.rfind(b"\n", start, end)
            if cut < 0:                        # a line longer than a piece
                cut = text.find(b"\n", end)
            end = len(text) if cut < 0 else cut + 1
        piece = text[start:end]
        yield piece, first_line
        first_line += piece.count(b"\n")
        start = end


_line_limit = max_line_bytes     # (for functions with an argument of that name)


def _read_stream(stream: BinaryIO, source: str, kind: _Kind, limit: int):
    topic_index: dict[bytes, int] = {}
    tidx_parts, value_parts, line_parts = [], [], []
    docnos: list[str] = []
    tag = b""
    tags: set[bytes] = set()    # the distinct tags, up to two
    for text, first_line in _batches(stream, source, limit):
        batch = _parse_batch(text, first_line, source, kind)
        if batch is None:
            continue
        qids, batch_docnos, tokens, lines, batch_tag, batch_tags = batch
        for qid in dict.fromkeys(qids):
            if qid not in topic_index:
                topic_index[qid] = len(topic_index)
        tidx_parts.append(np.fromiter(map(topic_index.__getitem__, qids), np.int64, len(qids)))
        docnos.extend(map(bytes.decode, batch_docnos))
        value_parts.append(_parse_numbers(tokens, lines, text, first_line, source, kind))
        line_parts.append(lines)
        if batch_tag is not None:
            tag = batch_tag
            if len(tags) < 2:
                tags.update(batch_tags)
    if not docnos:
        raise FormatError(source, 0, f"{kind.empty} (the file has no data lines)")
    topics = tuple(qid.decode() for qid in topic_index)
    return (source, topics, np.concatenate(tidx_parts), docnos,
            np.concatenate(value_parts), np.concatenate(line_parts), (tag.decode(), len(tags) < 2))


def _batches(stream: BinaryIO, source: str, limit: int | None = None
             ) -> Iterator[tuple[bytes, int]]:
    """Yield ``(text, first_line)``: runs of whole lines of the decompressed
    input, each about ``_BATCH`` bytes, and the number of their first line.

    A line longer than ``limit`` bytes (see :func:`max_line_bytes`) raises its
    FormatError as soon as it is met, once the lines before it have been yielded (their
    errors come first); so at most a batch, the limit and a read are ever held, whatever
    the input (a file without newlines, ``/dev/zero``, a gzip bomb)."""
    limit = max_line_bytes(limit)
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


def _long_line_error(source: str, line: int, prefix: bytes, limit: int) -> FormatError:
    """The error for line ``line``, longer than ``limit`` bytes, whose first ``limit``
    bytes are ``prefix``: what is wrong within them, in the order the checks of
    :func:`_parse_batch` come (UTF-8, NUL, carriage return), else its length."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(prefix, final=False)
        bad = -1
    except UnicodeDecodeError as error:
        bad = error.start
    if bad >= 0:
        message = f"not valid UTF-8: byte 0x{prefix[bad]:02x} at column {bad + 1}"
    elif b"\0" in prefix:
        message = _NUL_MESSAGE
    elif b"\r" in prefix and _INNER_CR.search(prefix):
        message = _CR_MESSAGE
    elif _separator_in(prefix) is not None:
        message = _separator_message(_separator_in(prefix), 0)
    else:
        message = (f"line longer than {limit:,} bytes, the most a line may have (set "
                   f"CUMGAIN_MAX_LINE_BYTES or cumgain.trec_io.MAX_LINE_BYTES to read it)")
    return FormatError(source, line, message, _shown(prefix))


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


# A carriage return followed, on the same line, by more fields (CRLF is fine).
_INNER_CR = re.compile(rb"\r[ \t\r\v\f]*[^ \t\r\v\f\n]")
_NUL_MESSAGE = "NUL byte in the line (not allowed in a text file)"
_CR_MESSAGE = ("carriage return inside the line (old Mac line ends? lines must end with "
               "\\n)")
# The line separators of Unicode that C isspace does not know (so trec_eval would read
# what follows one as more fields of the same line).
_SEPARATOR = re.compile(rb"\xc2\x85|\xe2\x80[\xa8\xa9]")
_SEPARATOR_NAMES = {b"\xc2\x85": "U+0085 NEXT LINE", b"\xe2\x80\xa8": "U+2028 LINE SEPARATOR",
                    b"\xe2\x80\xa9": "U+2029 PARAGRAPH SEPARATOR"}


def _separator_in(text: bytes):
    """The first Unicode line separator in ``text`` (valid UTF-8), or None."""
    if b"\xc2\x85" not in text and b"\xe2\x80" not in text:
        return None
    return _SEPARATOR.search(text)


def _separator_message(found, line_start: int) -> str:
    return (f"{_SEPARATOR_NAMES[found.group()]} at column {found.start() - line_start + 1}: "
            f"only \\n ends a line, so the rest would be read as more fields of this one")


def _parse_batch(text: bytes, first_line: int, source: str, kind: _Kind):
    """Split whole lines into fields; return the columns of the data lines, or
    None when the batch has none.

    Each newline becomes a NUL token (NUL bytes are refused in the input), so
    one ``bytes.split()`` gives the fields of every line without a Python
    object per line. When every line has exactly ``kind.n_fields`` fields (the
    usual case) the columns are plain slices; otherwise a second split, line
    by line, gives each line's field count and so where its fields start.
    """
    try:
        text.decode("utf-8")
        bad = -1
    except UnicodeDecodeError as error:
        bad = error.start
    if bad >= 0:
        start = text.rfind(b"\n", 0, bad) + 1
        _raise_first(text, first_line, text.count(b"\n", 0, bad), source, kind,
                     f"not valid UTF-8: byte 0x{text[bad]:02x} at column {bad - start + 1}")
    nul = text.find(b"\0")
    if nul >= 0:
        _raise_first(text, first_line, text.count(b"\n", 0, nul), source, kind, _NUL_MESSAGE)
    inner_cr = _INNER_CR.search(text) if b"\r" in text else None
    if inner_cr is not None:
        _raise_first(text, first_line, text.count(b"\n", 0, inner_cr.start()), source, kind,
                     _CR_MESSAGE)
    separator = _separator_in(text)
    if separator is not None:
        _raise_first(text, first_line, text.count(b"\n", 0, separator.start()), source, kind,
                     _separator_message(separator, text.rfind(b"\n", 0, separator.start()) + 1))
    if not text.endswith(b"\n"):
        text += b"\n"
    n_lines = text.count(b"\n")
    tokens = text.replace(b"\n", b" \0 ").split()
    step = kind.n_fields + 1
    if (len(tokens) == step * n_lines
            and tokens[kind.n_fields::step].count(_NEWLINE) == n_lines
            and b"#" not in b"".join(tokens[0::step])):
        # every line has exactly n_fields fields and none is a comment
        line_numbers = np.arange(first_line, first_line + n_lines, dtype=np.int64)
        qids = tokens[0::step] if not kind.group_field else \
            list(map(b"\t".join, zip(tokens[0::step], tokens[kind.group_field::step])))
        return (qids, tokens[2::step], tokens[kind.value_field::step],
                line_numbers, tokens[-2] if kind.has_tag else None,
                set(tokens[5::step]) if kind.has_tag else None)
    lines = text.split(b"\n")
    lines.pop()                                 # the text ends with a newline
    counts = np.fromiter(map(len, map(bytes.split, lines)), np.int64, n_lines)
    starts = np.zeros(n_lines, dtype=np.int64)  # where each line's fields start in tokens
    np.cumsum(counts[:-1] + 1, out=starts[1:])
    keep = counts > 0
    if not kind.blank_ok and not keep.all():
        _raise_first(text, first_line, int(np.argmin(keep)), source, kind,
                     "blank line (trec_eval rejects blank lines in qrels files)")
    nonblank = np.flatnonzero(keep)
    firsts = map(tokens.__getitem__, starts[nonblank].tolist())
    comment = np.fromiter(map(bytes.startswith, firsts, repeat(b"#")), bool, len(nonblank))
    keep[nonblank[comment]] = False
    bad = (counts != kind.n_fields) if kind.exact else (counts < kind.n_fields)
    if kind.has_tag:            # fields after a tag that is a number: see _shifted
        longer = np.flatnonzero(keep & (counts > kind.n_fields))
        bad[longer[_shifted([tokens[i] for i in (starts[longer] + 5).tolist()])]] = True
    bad &= keep
    if bad.any():
        i = int(np.argmax(bad))
        if counts[i] < kind.n_fields or kind.exact:
            expected = "" if kind.exact else "at least "
            message = f"expected {expected}{kind.n_fields} fields ({kind.layout}), found " \
                      f"{counts[i]}"
        else:
            tag = tokens[starts[i] + 5].decode()
            message = (f"the tag {tag!r} is a number and {counts[i] - kind.n_fields} more "
                       f"field(s) follow it: the columns of a docno with a space in it, "
                       f"shifted by one (trec_eval would read the rank as the score); "
                       f"docnos cannot contain whitespace")
        _raise_first(text, first_line, i, source, kind, message)
    kept = np.flatnonzero(keep)
    if not len(kept):
        return None
    starts = starts[kept]
    column = tokens.__getitem__
    qids = list(map(column, starts.tolist()))
    if kind.group_field:
        qids = list(map(b"\t".join, zip(qids, map(column, (starts + kind.group_field)
                                                  .tolist()))))
    return (qids,
            list(map(column, (starts + 2).tolist())),
            list(map(column, (starts + kind.value_field).tolist())),
            (kept + first_line).astype(np.int64),
            tokens[starts[-1] + 5] if kind.has_tag else None,
            set(map(column, (starts + 5).tolist())) if kind.has_tag else None)


def _shifted(tags: list[bytes]) -> np.ndarray:
    """For the tags of run lines that have fields after the tag: whether each is a
    number (by the grammar of scores: not NaN). A docno with a space in it (``q1 Q0
    doc 7 3 12.5 run``) shifts the columns by one, so that the rank is read as the
    score and the score as the tag, with the tag after it; trec_eval reads such a
    line without a word, so it is an error here."""
    return np.fromiter((_is_float(tag) and b"_" not in tag and not math.isnan(float(tag))
                        for tag in tags), bool, len(tags))


def _is_float(token: bytes) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _raise_first(text: bytes, first_line: int, i: int, source: str, kind: _Kind,
                 message: str) -> None:
    """Raise a FormatError for line ``i`` of the batch, unless a line before it
    has an error of its own (which is then raised): errors come in file order."""
    start = _line_start(text, i)
    if start:
        head = text[:start]
        batch = _parse_batch(head, first_line, source, kind)
        if batch is not None:
            _parse_numbers(batch[2], batch[3], head, first_line, source, kind)
    raise FormatError(source, first_line + i, message, _nth_line(text, i))


def _parse_numbers(tokens: list[bytes], lines: np.ndarray, text: bytes, first_line: int,
                   source: str, kind: _Kind) -> np.ndarray:
    """Parse the score or relevance column (see the number grammar above)."""
    name = kind.value_name

    def fail(i: int, why: str):
        line = int(lines[i])
        raise FormatError(source, line, f"{name} {tokens[i].decode()!r} {why}",
                          _nth_line(text, line - first_line))

    try:
        values = np.fromiter(map(float, tokens), np.float64, len(tokens))
    except ValueError:
        values = None
    if values is None:
        fail(next(i for i, token in enumerate(tokens) if not _is_float(token)),
             "is not a number")
    if b"_" in b"".join(tokens):        # Python's float() takes 1_000; strtod does not
        fail(next(i for i, token in enumerate(tokens) if b"_" in token), "is not a number")
    bad = ~np.isfinite(values) if kind.finite else np.isnan(values)
    if bad.any():
        i = int(np.argmax(bad))
        if np.isnan(values[i]):
            fail(i, "is NaN" + ("" if kind.finite else ", which leaves the ranking undefined"))
        fail(i, "is infinite; relevance values must be finite")
    return values


def _line_start(text: bytes, i: int) -> int:
    """Where line ``i`` (0-based) of ``text`` starts."""
    start = 0
    for _ in range(i):
        start = text.index(b"\n", start) + 1
    return start


def _nth_line(text: bytes, i: int) -> str:
    return _line_text(text, _line_start(text, i))


def _line_text(text: bytes, at: int) -> str:
    start = text.rfind(b"\n", 0, at) + 1
    end = text.find(b"\n", at)
    return _shown(text[start:end if end >= 0 else len(text)])


def _shown(line: bytes) -> str:
    shown = line.decode("utf-8", "backslashreplace")
    return shown if len(shown) <= _SHOWN else shown[:_SHOWN] + "..."


# --------------------------------------------------------------------------- shared

def _check_policy(duplicates: Any) -> None:
    if duplicates not in _POLICIES:
        raise InputError(f"duplicates must be one of {_POLICIES}, got {duplicates!r}")


def _assemble(source: str, topics: Sequence[str], tidx: np.ndarray, docnos: list[str],
              values: np.ndarray, lines: np.ndarray | None, duplicates: DuplicatePolicy,
              doc_word: str, topic_word: str):
    """Group the rows by topic (a stable sort), then apply the duplicates policy.

    Returns ``offsets, docnos, values, lines`` with ``docnos`` as an object array.
    """
    n = len(docnos)
    position = None                     # grouped row -> input row, when they differ
    if n > 1 and (np.diff(tidx) < 0).any():
        position = np.argsort(tidx, kind="stable")
        tidx, values = tidx[position], values[position]
        docnos = list(map(docnos.__getitem__, position.tolist()))
        lines = None if lines is None else lines[position]
    offsets = np.zeros(len(topics) + 1, dtype=np.int64)
    np.cumsum(np.bincount(tidx, minlength=len(topics)), out=offsets[1:])
    dropped = []                        # (first, repeat) grouped rows
    bounds = offsets.tolist()
    for t in range(len(topics)):
        a, b = bounds[t], bounds[t + 1]
        if b - a > 1 and len(set(docnos[a:b])) != b - a:
            seen: dict[str, int] = {}
            for i in range(a, b):
                j = seen.setdefault(docnos[i], i)
                if j != i:
                    dropped.append((j, i))
    if dropped:
        def row(i: int) -> int:
            return i if position is None else int(position[i])

        dropped.sort(key=lambda pair: row(pair[1]))   # in input order of the repeats
        j, i = dropped[0]
        what = f"duplicate {doc_word} {docnos[i]!r} in {topic_word} {topics[tidx[i]]!r}"
        if lines is None:
            where = f"rows {row(j)} and {row(i)} (0-based positions)"
        else:
            where = f"lines {lines[j]} and {lines[i]}"
        if duplicates == "error":
            if lines is None:
                raise InputError(f"{source}: {what}: {where}")
            raise FormatError(source, int(lines[i]), f"{what}: {where}")
        warnings.warn(
            f"{source}: dropped {len(dropped)} duplicate ({topic_word}, {doc_word}) "
            f"row(s), keeping the first occurrence of each; the first was {what}: {where}",
            DuplicatesDroppedWarning, stacklevel=_user_stacklevel())
        keep = np.ones(n, dtype=bool)
        keep[[i for _, i in dropped]] = False
        tidx, values = tidx[keep], values[keep]
        lines = None if lines is None else lines[keep]
        docnos = list(compress(docnos, keep.tolist()))
        n = len(docnos)
        np.cumsum(np.bincount(tidx, minlength=len(topics)), out=offsets[1:])
    docno_array = np.empty(n, dtype=object)
    docno_array[:] = docnos
    values = np.ascontiguousarray(values, dtype=np.float64)
    return offsets, docno_array, values, lines


def _user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the first caller outside this module."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
        level += 1
    return level


def _is_number(value: Any) -> bool:
    return isinstance(value, (Real, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_))


def _number(value: Any, describe: Callable[[], str], finite: bool, name: str) -> float:
    if not _is_number(value):
        raise InputError(
            f"{describe()}: {name} must be a real number, got {type(value).__name__} {value!r}")
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError) as error:
        raise InputError(f"{describe()}: {name} {_short_repr(value)} cannot be a float64: "
                         f"{error}") from None
    if number != number:
        raise InputError(f"{describe()}: {name} is NaN")
    if finite and number in (float("inf"), float("-inf")):
        raise InputError(f"{describe()}: {name} {value!r} is infinite; it must be finite")
    return number


def _short_repr(value: Any) -> str:
    """``repr(value)``, an int of more than 30 digits shortened to its first 20 and its
    number of digits (a 401-digit int is not worth printing whole)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** 30:
        digits = len(str(abs(value)))
        return f"{str(value)[:20 + (value < 0)]}... ({digits} digits)"
    return repr(value)


def _check_text(ids: list[str], describe: Callable[[int], str]) -> None:
    """Raise an InputError naming the first id (``describe(i)`` says which) that has no
    UTF-8 bytes: a str holding a lone surrogate (``os.fsdecode`` makes them of bytes
    that are not UTF-8), which neither a file nor the native reader can hold."""
    try:
        "".join(ids).encode("utf-8")
        return
    except UnicodeEncodeError:
        pass
    for i, text in enumerate(ids):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise InputError(
                f"{describe(i)} is not valid text: a lone surrogate "
                f"{text[error.start]!r} at position {error.start}, which has no UTF-8 "
                f"bytes") from None


# --------------------------------------------------------------------------- dicts

def qrels_from_dict(d: Mapping[Any, Mapping[Any, Any]], *, source: str = "<dict>") -> Qrels:
    """Qrels from a pytrec_eval-style ``{qid: {docid: relevance}}`` dict.

    Ids become ``str``; relevance values must be finite real numbers (not bool).
    A topic with an empty inner dict is kept with zero rows.

    >>> q = qrels_from_dict({"1": {"d1": 2, "d2": 0}, 2: {}})
    >>> q.topics, q.offsets.tolist(), q.relevance.tolist()
    (('1', '2'), [0, 2, 2], [2.0, 0.0])
    """
    topics, offsets, docnos, values = _from_dict(d, source, "relevance", finite=True)
    return Qrels(topics, offsets, docnos, values, source, None)


def run_from_dict(d: Mapping[Any, Mapping[Any, Any]], *, source: str = "<dict>") -> Run:
    """A run from a pytrec_eval-style ``{qid: {docid: score}}`` dict.

    Ids become ``str``; scores must be real numbers (not bool), not NaN; the
    tag is ``""``.

    >>> r = run_from_dict({"q1": {"d1": 0.5, "d2": 1.5}})
    >>> r.topics, r.docnos.tolist(), r.scores.tolist()
    (('q1',), ['d1', 'd2'], [0.5, 1.5])
    """
    topics, offsets, docnos, values = _from_dict(d, source, "score", finite=False)
    return Run(topics, offsets, docnos, values, "", source, None)


def _from_dict(d, source: str, name: str, finite: bool):
    if not isinstance(d, Mapping):
        raise InputError(
            f"{source}: expected a mapping {{qid: {{docid: {name}}}}}, got {type(d).__name__}")
    topics: dict[str, Any] = {}
    docnos: list[str] = []
    value_parts = []
    counts = []
    for qid, docs in d.items():
        topic = str(qid)
        _check_text([topic], lambda _: f"{source}: topic {topic!r}")
        if topic in topics:
            raise InputError(
                f"{source}: topic ids {topics[topic]!r} and {qid!r} are both {topic!r} "
                f"once converted to str")
        topics[topic] = qid
        if not isinstance(docs, Mapping):
            raise InputError(
                f"{source}: topic {qid!r} must map docids to {name} values, "
                f"got {type(docs).__name__}")
        ids = list(map(str, docs))
        _check_text(ids, lambda i: f"{source}: topic {qid!r}, docid {ids[i]!r}")
        if len(set(ids)) != len(ids):
            firsts: dict[str, Any] = {}
            for key in docs:
                other = firsts.setdefault(str(key), key)
                if other is not key:
                    raise InputError(
                        f"{source}: in topic {qid!r}, docids {other!r} and {key!r} are both "
                        f"{str(key)!r} once converted to str")
        raw = list(docs.values())
        if set(map(type, raw)) <= {int, float}:
            try:
                values = np.array(raw, dtype=np.float64)
            except OverflowError:
                values = None
        else:
            values = None
        if values is None or (not np.isfinite(values).all() if finite
                              else np.isnan(values).any()):
            values = np.array(
                [_number(value, lambda key=key: f"{source}: topic {qid!r}, docid {key!r}",
                         finite, name)
                 for key, value in docs.items()], dtype=np.float64)
        docnos.extend(ids)
        value_parts.append(values.reshape(-1))
        counts.append(len(ids))
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    docno_array = np.empty(len(docnos), dtype=object)
    docno_array[:] = docnos
    values = np.concatenate(value_parts) if value_parts else np.zeros(0)
    return tuple(topics), offsets, docno_array, np.ascontiguousarray(values, dtype=np.float64)


# --------------------------------------------------------------------------- DataFrames

def qrels_from_dataframe(df: Any, *, duplicates: DuplicatePolicy = "error") -> Qrels:
    """Qrels from a pandas DataFrame with columns ``query_id, doc_id, relevance``.

    Other columns are ignored. ``duplicates`` is as in :func:`read_qrels`.
    """
    _check_policy(duplicates)
    source = columns.source_name(df)
    topics, offsets, docnos, values = _from_frame(columns.as_pandas(df, "relevance"),
                                                  "relevance", True, duplicates, source)
    return Qrels(topics, offsets, docnos, values, source, None)


def run_from_dataframe(df: Any, *, duplicates: DuplicatePolicy = "error") -> Run:
    """A run from a pandas DataFrame with columns ``query_id, doc_id, score``.

    Other columns are ignored. ``duplicates`` is as in :func:`read_run`.
    """
    _check_policy(duplicates)
    source = columns.source_name(df)
    topics, offsets, docnos, values = _from_frame(columns.as_pandas(df, "score"), "score",
                                                  False, duplicates, source)
    return Run(topics, offsets, docnos, values, "", source, None)


def _from_frame(df: Any, value_column: str, finite: bool, duplicates: DuplicatePolicy,
                source: str):
    pd = require("pandas", extra="pandas", for_what="reading a DataFrame")

    if not isinstance(df, pd.DataFrame):
        raise InputError(f"expected a pandas DataFrame, got {type(df).__name__}")
    needed = ("query_id", "doc_id", value_column)
    missing = [column for column in needed if column not in df.columns]
    if missing:
        raise InputError(
            f"{source}: missing column(s) {missing}; need {list(needed)}, "
            f"found {list(df.columns)}")
    columns = {}
    for column in needed:
        series = df[column]
        if isinstance(series, pd.DataFrame):
            raise InputError(f"{source}: column {column!r} appears more than once")
        columns[column] = series
    ids = {}
    for column in ("query_id", "doc_id"):
        array = columns[column].to_numpy(dtype=object)
        missing_ids = pd.isna(array)
        if missing_ids.any():
            i = int(np.argmax(missing_ids))
            raise InputError(f"{source}: {column} is missing at row {i} (0-based position)")
        ids[column] = list(map(str, array))
        _check_text(ids[column], lambda i, column=column:
                    f"{source}: row {i} (0-based position), {column} {ids[column][i]!r}")
    qids, docnos = ids["query_id"], ids["doc_id"]

    def describe(i: int) -> str:
        return f"{source}: row {i} (query_id {qids[i]!r}, doc_id {docnos[i]!r})"

    series = columns[value_column]
    if pd.api.types.is_bool_dtype(series.dtype):
        raise InputError(f"{source}: column {value_column!r} is boolean; it must hold numbers")
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_complex_dtype(
            series.dtype):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(values) if finite else np.isnan(values)
        if bad.any():
            i = int(np.argmax(bad))
            what = "NaN or missing" if np.isnan(values[i]) else "infinite; it must be finite"
            raise InputError(f"{describe(i)}: {value_column} is {what}")
    else:
        raw = series.to_numpy(dtype=object)
        values = np.array(
            [_number(value, lambda i=i: describe(i), finite, value_column)
             for i, value in enumerate(raw)], dtype=np.float64)
    order = dict.fromkeys(qids)
    index = {qid: t for t, qid in enumerate(order)}
    tidx = np.fromiter(map(index.__getitem__, qids), np.int64, len(qids))
    topics = tuple(order)
    offsets, docno_array, values, _ = _assemble(
        source, topics, tidx, docnos, values, None, duplicates, "doc_id", "query_id")
    return topics, offsets, docno_array, values


# --------------------------------------------------------------------------- dispatch

def load_qrels(obj: Any, *, duplicates: DuplicatePolicy = "error") -> Qrels:
    """Qrels from whatever was given: a :class:`Qrels` (returned as is), a path
    (``str`` or ``os.PathLike``; ``"-"`` is stdin), a ``{qid: {docid: rel}}``
    mapping, or a pandas DataFrame. ``duplicates`` applies to files and
    DataFrames (a dict cannot repeat a docid)."""
    _check_policy(duplicates)
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, Run):
        raise InputError("expected qrels, got a Run")
    if isinstance(obj, (str, os.PathLike)):
        return read_qrels(obj, duplicates=duplicates)
    if columns.is_columnar(obj):
        return qrels_from_dataframe(obj, duplicates=duplicates)
    if isinstance(obj, Mapping):
        return qrels_from_dict(obj)
    raise InputError(
        "qrels must be a Qrels, a path, a {qid: {docid: relevance}} mapping or a "
        f"pandas DataFrame, got {type(obj).__name__}")


def load_run(obj: Any, *, duplicates: DuplicatePolicy = "error") -> Run:
    """A run from whatever was given: a :class:`Run` (returned as is), a path
    (``str`` or ``os.PathLike``; ``"-"`` is stdin), a ``{qid: {docid: score}}``
    mapping, or a pandas DataFrame. ``duplicates`` applies to files and
    DataFrames."""
    _check_policy(duplicates)
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, Qrels):
        raise InputError("expected a run, got Qrels")
    if isinstance(obj, (str, os.PathLike)):
        return read_run(obj, duplicates=duplicates)
    if columns.is_columnar(obj):
        return run_from_dataframe(obj, duplicates=duplicates)
    if isinstance(obj, Mapping):
        return run_from_dict(obj)
    raise InputError(
        "a run must be a Run, a path, a {qid: {docid: score}} mapping or a "
        f"pandas DataFrame, got {type(obj).__name__}")


def _is_dataframe(obj: Any) -> bool:
    """Whether obj is a pandas DataFrame, without importing pandas."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(obj, pandas.DataFrame)
