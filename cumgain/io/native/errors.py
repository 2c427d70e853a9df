"""The errors of the native reader (:mod:`cumgain.io.native.reader`), worded as the reference
reader words them: from a parser's :class:`~cumgain.io.native.blocks.Stop` (the line it
stopped at, kept with its bytes: nothing is read again), a table's status, a docno
twice in a topic; and the warning of the duplicates policies that drop rows.
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable

from cgcore import _trec
from cumgain.io.native.blocks import Stop
from cumgain.io.trec.lines import _Kind, _long_line_error, line_error
from cumgain.io.trec.tables import DuplicatesDroppedWarning, _user_stacklevel
from cumgain.exceptions import FormatError, InputError, OutOfMemoryError


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


def _oom(stop: Stop, where: tuple) -> None:
    if stop.kind == "memory":
        raise OutOfMemoryError(*where, int(stop.detail or 0) or None)


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


def _names_lines(source: str) -> bool:
    """Whether errors about judgments read from ``source`` name lines (a file, a
    stream) rather than rows (a dict, a table)."""
    return not source.startswith("<") or source in ("<stdin>", "<stream>")


def _bad_row(original: Any, front_end: Callable[[Any], Any], source: str) -> None:
    """Raise the error of a table's value the compiled reader refused (NaN, or an
    infinite level), worded by the reference front-end that reads the table."""
    if original is not None:
        front_end(original)
    raise InputError(f"{source}: a value is NaN, or infinite where it must be finite")
