"""Read qrels and runs: TREC files (plain or gzip), pytrec_eval-style dicts, DataFrames.

Every front-end returns a :class:`Qrels` or a :class:`Run`: the rows grouped by
topic (topic ``t`` owns rows ``offsets[t]:offsets[t+1]``, as in a CSR matrix),
topics in order of first appearance, and the rows of a topic in input order (a run's
topics may come in any order in the file: each topic's lines are gathered).
The evaluation engine takes these; nothing is sorted by score or docno here.

Files and streams are read by the compiled reader (:mod:`cumgain.io.native.reader`, which
:func:`cumgain.evaluate` also reads with); the rules below are its rules, each written
out exactly, and those of its pure-Python twin, the test oracle
(:mod:`cumgain.reference.reading`), which the tests hold it to: the same tables, the
same errors, word for word. Where a rule differs from trec_eval (``get_qrels.c`` and
``get_trec_results.c`` of trec_eval 10.0) it says so.

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
* **Paths and streams.** A path is a ``str`` or :class:`os.PathLike`; the ``str``
  ``"-"`` reads ``sys.stdin.buffer`` (trec_eval 10.0) and is reported as ``<stdin>``.
  A binary stream (an object with ``read`` returning bytes: ``open(path, "rb")``,
  ``io.BytesIO``, ``gzip.GzipFile``) is read from where it is to its end and reported
  by its ``name`` (else ``<stream>``); a text stream is refused.
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
``duplicates="last"`` keeps the last (what a dict built line by line keeps), each
with a :class:`DuplicatesDroppedWarning` giving the number dropped and the first
one (by the line of its repeat); nothing is ever dropped silently.

Blocks
------
:func:`iter_run_blocks` reads a run file a block of lines at a time, with the line
texts, for callers that must not hold the whole run and need the lines as they are
(:func:`cumgain.stream.sort_run_by_topic`): the same grammar and errors, in file order,
but duplicates are left to the caller (they need whole topics). It is read by the
pure-Python reader (about 25 times the text in Python objects per block; the
judgment files of trec_eval's other measures, ``qrels_jg``, preferences and
subtopic qrels, are read by it too); :mod:`cumgain.stream` reads topics with the
compiled reader.

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

import contextlib
import os
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterator, Optional, Union, overload

import numpy as np

from cumgain.io import columns, neighbours
from cumgain.io.native import reader as native
from cumgain.io.native.blocks import is_stream, source_of
from cumgain.io.native.parts import check_threads
from cumgain.io.native.qrels import _columns_qrels, native_qrels
from cumgain.io.native.reader import (PreparedQrels, PreparedQrelsFile, PreparedQrelsTable,
                                      _table_of)
from cumgain.io.trec.byte_stream import _batches, compression_of
from cumgain.io.trec.frontends import (qrels_from_dataframe, qrels_from_dict,
                                     run_from_dataframe, run_from_dict)
from cumgain.io.trec import lines
from cumgain.io.trec.lines import (_QRELS, _QRELS_JG, _RUN, DEFAULT_MAX_LINE_BYTES, _Kind,
                                   _parse_batch, _parse_numbers, max_line_bytes)
from cumgain.io.trec.tables import (DuplicatesDroppedWarning, Qrels, Run, _assemble,
                                  _check_policy)
from cumgain.exceptions import FormatError, InputError, naming
from cumgain.types import DuplicatePolicy, PathLike

# This module reads files (a batch of whole lines at a time, within the line limit) and
# hands each input to its front-end; behind it, in cumgain.io.trec, one job each: the
# bytes of a file (byte_stream), its lines parsed (lines), the tables and the duplicates
# policy (tables), dicts and DataFrames (frontends).

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
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

_BLOCK = 1 << 20        # iter_run_blocks: parse 1 MiB of text at a time


# --------------------------------------------------------------------------- files

def read_qrels(path: PathLike | BinaryIO, *, duplicates: DuplicatePolicy = "error",
               max_line_bytes: int | None = None, threads: int | None = None) -> Qrels:
    """Read a TREC qrels file (``qid iter docno rel``), plain or gzip, by the compiled
    reader (:mod:`cumgain.io.native.reader`).

    Parameters
    ----------
    path : str, os.PathLike or binary stream
        The file; ``"-"`` reads standard input; a binary file object (``open(path,
        "rb")``, ``io.BytesIO``, ``gzip.GzipFile``, ``sys.stdin.buffer``) is read from
        where it is to its end.
    duplicates : {"error", "first", "last"}
        What a repeated docno within a topic does: raise, or keep the first (or the
        last) occurrence with a :class:`DuplicatesDroppedWarning`.
    max_line_bytes : int, optional
        The longest line read; a longer one is an error (see :func:`max_line_bytes`
        for the default).
    threads : int, optional
        How many threads may read a plain file in parts (None: the available cores,
        at most 4).

    Returns
    -------
    Qrels
        Topics in order of first appearance, each topic's judgments in file order,
        with the line each was read from.

    Raises
    ------
    FormatError
        A malformed line, with the file and line number (see the module doc).
    OSError
        The file cannot be opened.
    """
    return native.load_qrels_file(path, duplicates=duplicates, max_line=max_line_bytes,
                                  threads=threads)


def _read_qrels_python(path: PathLike, *, duplicates: DuplicatePolicy = "error",
                       max_line_bytes: int | None = None) -> Qrels:
    """:func:`read_qrels` by the pure-Python reference reader (the test oracle; see
    :mod:`cumgain.reference.reading`)."""
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


def read_run(path: PathLike | BinaryIO, *, duplicates: DuplicatePolicy = "error",
             max_line_bytes: int | None = None, threads: int | None = None) -> Run:
    """Read a TREC run file (``qid iter docno rank score tag``), plain or gzip, by the
    compiled reader (:mod:`cumgain.io.native.reader`): its topics may come in any order (each
    topic's lines are gathered, in file order).

    Parameters and errors are those of :func:`read_qrels`.
    """
    return native.load_run_file(path, duplicates=duplicates, max_line=max_line_bytes,
                                threads=threads)


def _read_run_python(path: PathLike, *, duplicates: DuplicatePolicy = "error",
                     max_line_bytes: int | None = None) -> Run:
    """:func:`read_run` by the pure-Python reference reader (the test oracle)."""
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


def _check_path(path: Any, kind: _Kind) -> None:
    if not isinstance(path, (str, os.PathLike)) and not is_stream(path):
        raise InputError(
            f"the {kind.name} path must be a str, os.PathLike or binary stream, got "
            f"{type(path).__name__}")


@contextlib.contextmanager
def _opened(path, kind: _Kind) -> Iterator[tuple[BinaryIO, str]]:
    """``(stream, source)``: the file, closed on exit, standard input for ``"-"``, or
    a binary stream as it is (not closed)."""
    if isinstance(path, str) and path == "-":
        yield sys.stdin.buffer, "<stdin>"
        return
    _check_path(path, kind)
    if is_stream(path):
        name = getattr(path, "name", None)
        yield path, name if isinstance(name, str) else "<stream>"
        return
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
        for batch, batch_first_line in _batches(stream, source, max_line_bytes(limit)):
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
    for text, first_line in _batches(stream, source, max_line_bytes(limit)):
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


# --------------------------------------------------------------------------- dispatch

def load_qrels(obj: Any, *, duplicates: DuplicatePolicy = "error") -> Qrels:
    """Qrels from whatever was given: a :class:`Qrels` (returned as is), a path
    (``str`` or ``os.PathLike``; ``"-"`` is stdin) or a binary stream (read by
    :func:`read_qrels`), a ``{qid: {docid: rel}}`` mapping, or a DataFrame or Arrow
    table. ``duplicates`` applies to files and tables (a dict cannot repeat a
    docid)."""
    return _load(obj, duplicates, read_qrels, True)


def load_run(obj: Any, *, duplicates: DuplicatePolicy = "error") -> Run:
    """A run from whatever was given: a :class:`Run` (returned as is), a path (``str``
    or ``os.PathLike``; ``"-"`` is stdin) or a binary stream (read by
    :func:`read_run`), a ``{qid: {docid: score}}`` mapping, or a DataFrame or Arrow
    table. ``duplicates`` applies to files and tables."""
    return _load(obj, duplicates, read_run, False)


def _load(obj: Any, duplicates: DuplicatePolicy, read: Any, qrels: bool) -> Any:
    """load_qrels' and load_run's dispatch, with ``read`` for paths and streams."""
    _check_policy(duplicates)
    obj = neighbours.adapted(obj, "qrels" if qrels else "run")
    wanted, other = (Qrels, Run) if qrels else (Run, Qrels)
    if isinstance(obj, wanted):
        return obj
    if isinstance(obj, other):
        raise InputError("expected qrels, got a Run" if qrels else "expected a run, got Qrels")
    if isinstance(obj, (str, os.PathLike)) or is_stream(obj):
        return read(obj, duplicates=duplicates)
    if columns.is_columnar(obj):
        return (qrels_from_dataframe if qrels else run_from_dataframe)(obj,
                                                                       duplicates=duplicates)
    if isinstance(obj, Mapping):
        return (qrels_from_dict if qrels else run_from_dict)(obj)
    raise neighbours.refused(obj, "qrels" if qrels else "run")


def _load_qrels_python(obj: Any, *, duplicates: DuplicatePolicy = "error") -> Qrels:
    """:func:`load_qrels` with the pure-Python reference reader for paths and streams."""
    return _load(obj, duplicates, _read_qrels_python, True)


def _load_run_python(obj: Any, *, duplicates: DuplicatePolicy = "error") -> Run:
    """:func:`load_run` with the pure-Python reference reader for paths and streams."""
    return _load(obj, duplicates, _read_run_python, False)


def _is_dataframe(obj: Any) -> bool:
    """Whether obj is a pandas DataFrame, without importing pandas."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(obj, pandas.DataFrame)



# --------------------------------------------------------------------------- prepared

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
    (:mod:`cumgain.io.columns`) or a loaded :class:`~cumgain.trec_io.Qrels` a
    :class:`PreparedQrelsTable` where its columns are read in place, else the
    :class:`~cumgain.trec_io.Qrels` the reference front-end makes of it; standard
    input or a stream is loaded (:func:`cumgain.trec_io.load_qrels`: it can be read
    only once). Prepared qrels are returned as they are.

    Parameters
    ----------
    qrels : str, os.PathLike, dict, DataFrame, Arrow table, rows or Qrels
        The judgments, as :func:`cumgain.evaluate` takes them.
    duplicates : {"error", "first", "last"}, default "error"
        A docno judged twice in a topic (files and tables): an error naming both lines,
        or keep the first or the last (with a warning).
    threads : int, optional
        Threads reading a plain file in parts (None: the available cores, at most 4).

    Returns
    -------
    PreparedQrelsFile, PreparedQrels, PreparedQrelsTable or Qrels
        Judgments each evaluation reads without reading them again.

    Raises
    ------
    InputError
        A bad input, naming the file and line (or row and column)."""
    check_threads(threads)
    _check_policy(duplicates)
    qrels = neighbours.adapted(qrels, "qrels")
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


class _Module(types.ModuleType):
    """This module, whose :data:`MAX_LINE_BYTES` is the line limit of
    :mod:`cumgain.io.trec.lines`, where every reader looks it up: read or set here, it is
    read or set there."""

    @property
    def MAX_LINE_BYTES(self) -> int | None:
        return lines.MAX_LINE_BYTES

    @MAX_LINE_BYTES.setter
    def MAX_LINE_BYTES(self, value: int | None) -> None:
        lines.MAX_LINE_BYTES = value


sys.modules[__name__].__class__ = _Module
