"""The exceptions cumgain raises. Every input problem is a ``ValueError``."""
from __future__ import annotations


class CumgainError(Exception):
    """Base class of every error cumgain raises on purpose."""


class InputError(CumgainError, ValueError):
    """An argument has the wrong shape, type or value (bad gains, b <= 1, k < 1, ...)."""


class FormatError(InputError):
    """A line of a qrels or run file cannot be read.

    Attributes name the file, the 1-based line number and the offending text.
    """

    def __init__(self, path: str, line_number: int, message: str, text: str | None = None):
        self.path = path
        self.line_number = line_number
        self.text = text
        where = f"{path}:{line_number}" if line_number else str(path)
        shown = f": {text!r}" if text is not None else ""
        super().__init__(f"{where}: {message}{shown}")


class OutOfMemoryError(CumgainError, MemoryError):
    """The memory ran out while reading a file or a dict: a :class:`MemoryError` that
    names what was being read (``path``) and, when known, how many bytes the allocation
    that failed asked for (``requested``, else None)."""

    def __init__(self, path: str, what: str, requested: int | None = None,
                 detail: str | None = None):
        self.path = path
        self.requested = requested or None
        asked = f": an allocation of {requested:,} bytes failed" if requested else ""
        more = f" ({detail})" if detail else ""
        super().__init__(f"{path}: out of memory reading the {what}{asked}{more}")
