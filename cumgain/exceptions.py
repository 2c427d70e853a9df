"""The exceptions cumgain raises. Every input problem is a ``ValueError``."""
from __future__ import annotations

import contextlib
import errno
import os
import re
from typing import Any, Container, Iterator, Optional


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
        shown = f": {shown_text(text)}" if text is not None else ""
        super().__init__(f"{where}: {message}{shown}")


SHOWN_CHARACTERS = 200      # the most of a bad line an error shows, escapes included
_SURROGATE = re.compile(r"(?<!\\)((?:\\\\)*)\\udc([89a-f][0-9a-f])")


def shown_text(text: str) -> str:
    """``text`` as an error quotes it: its repr, each byte that was not valid UTF-8
    (decoded as a surrogate) shown once as ``\\xNN``, cut to SHOWN_CHARACTERS."""
    shown = _SURROGATE.sub(r"\1\\x\2", repr(text))
    if len(shown) > SHOWN_CHARACTERS:
        shown = shown[:SHOWN_CHARACTERS - 4] + "..." + shown[0]
    return shown


class GainMappingError(InputError):
    """A gain mapping (``-g``, ``gains=``) without a gain for a relevance level the
    judgments use: the mapping given does not fit the data (on the command line, a
    usage error, exit 1)."""


class SumOverflowError(InputError):
    """Gains so large that a sum of them leaves float64's range (beyond about 1.8e308):
    a cumulated gain, an ideal, a normalised value or a mean would be infinite or NaN.

    ``topic``: the topic (its id, or its 0-based index in a batch; None for one list or
    a sum over topics); ``rank``: the 1-based rank where the sum first overflows (None
    when not known); ``sum``: which sum (``"run"``, ``"ideal"``, ``"ratio"``,
    ``"topics"``, ``"ranks"``, or a measure's name).
    """

    def __init__(self, message: str, *, topic: Any = None, rank: Optional[int] = None,
                 sum: str = ""):
        self.topic = topic
        self.rank = rank
        self.sum = sum
        super().__init__(message)


@contextlib.contextmanager
def naming(path: Any, errnos: Optional[Container[int]] = None) -> Iterator[None]:
    """Inside, an :class:`OSError` without a file name (a failed ``write`` or ``read``:
    ``[Errno 27] File too large``, ``[Errno 28] No space left on device``) is raised
    again naming ``path``; with ``errnos``, only those errors (where other errors of
    the block may concern other files: a writer's, say :data:`WRITE_ERRNOS`)."""
    try:
        yield
    except OSError as error:
        if error.filename is not None or error.errno is None \
                or errnos is not None and error.errno not in errnos:
            raise
        raise OSError(error.errno, error.strerror, os.fsdecode(os.fspath(path))) from error


#: The errors of writing a file that fills its disk or quota or passes ``ulimit -f``.
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})


class MissingDependencyError(CumgainError, ModuleNotFoundError):
    """An optional dependency is not installed (or cannot be imported); the message says
    what needs it and which extra installs it (:func:`cumgain.common.optional.require`).
    ``name``: the module; ``extra``: the cumgain extra (``plot``, ``pandas``, ``dask``)."""

    def __init__(self, message: str, *, name: str | None = None, extra: str | None = None):
        super().__init__(message, name=name)
        self.extra = extra


class OutOfMemoryError(CumgainError, MemoryError):
    """The memory ran out while reading a file or a dict: a :class:`MemoryError` that
    names what was being read (``path``) and, when known, how many bytes the allocation
    that failed asked for (``requested``, else None)."""

    def __init__(self, path: str, what: str, requested: int | None = None,
                 detail: str | None = None):
        self.path = path
        self.requested: int | None = requested or None
        asked = f": an allocation of {requested:,} bytes failed" if requested else ""
        more = f" ({detail})" if detail else ""
        super().__init__(f"{path}: out of memory reading the {what}{asked}{more}")
