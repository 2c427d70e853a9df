"""Whole lines of TREC text split into fields and parsed into columns, by the rules
written in :mod:`cumgain.trec_io`; a malformed line is a FormatError naming the file,
the line and its text.
"""
from __future__ import annotations

import codecs
import math
import os
import re
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from cumgain.exceptions import FormatError, InputError

DEFAULT_MAX_LINE_BYTES = 1 << 20
MAX_LINE_BYTES: int | None = None   # the longest line read (bytes, without the newline);
                                    # None: CUMGAIN_MAX_LINE_BYTES, else the default 1 MiB;
                                    # users set it as cumgain.trec_io.MAX_LINE_BYTES


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


_SHOWN = 200            # at most this many characters of a bad line in an error
_NEWLINE = b"\0"        # the token that stands for a line end while splitting


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
            if tokens[starts[i]][:1] in (b"{", b"["):
                message += (" (this looks like JSON, as ranx and ir_datasets write runs and "
                            "qrels: cumgain reads TREC text files; in Python, json.load the "
                            "file and pass the {qid: {docid: value}} dict instead)")
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
    """Parse the score or relevance column (see the number grammar of
    :mod:`cumgain.trec_io`)."""
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
    """The line as an error shows it: its bytes decoded with the undecodable ones kept
    as surrogates (FormatError shows each as ``\\xNN``, once), at most _SHOWN
    characters."""
    shown = line.decode("utf-8", "surrogateescape")
    return shown if len(shown) <= _SHOWN else shown[:_SHOWN] + "..."


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


def line_error(source: str, kind: _Kind, line_number: int, line: bytes,
               limit: int) -> FormatError:
    """The error of one line that the native reader stopped at: ``line`` (its bytes,
    without the newline; at least the first ``limit`` + 1 bytes of a longer one), read
    from line ``line_number`` of ``source``, worded as the reference reader words it
    (its checks in their order, on this line alone: the lines before it were read
    without a fault). A line the rules find nothing wrong with gets an error that says
    so (the two readers disagree: a bug to report)."""
    if len(line) > limit:
        return _long_line_error(source, line_number, line[:limit], limit)
    text = line + b"\n"
    try:
        batch = _parse_batch(text, line_number, source, kind)
        if batch is not None:
            _parse_numbers(batch[2], batch[3], text, line_number, source, kind)
    except FormatError as error:
        return error
    return FormatError(source, line_number, "the native reader could not read this line "
                       "(please report it: the reference reader reads it)", _shown(line))
