"""Progress of long work on stderr: a bar on a terminal, nothing otherwise.

:func:`progress_bar` is the one switch for every long loop of the library (the randomization
test and the bootstrap of :func:`cumgain.stats.compare`, the computations of
:mod:`cumgain.dask`); each takes a ``progress=`` keyword with one of :data:`PROGRESS`:

* ``False`` (the default of every function): nothing is written;
* ``True``: a bar on stderr, a terminal or not;
* ``"auto"``: a bar only when stderr is a terminal (``sys.stderr.isatty()``), so
  redirected output and logs stay clean. The command line passes ``"auto"`` by default,
  ``True`` for ``--progress always`` and ``False`` for ``--progress never`` or ``--quiet``.

The bar is tqdm's when tqdm is installed (it is optional), else a one-line bar drawn
here. Either way it is written to stderr, erased when the work ends, and never changes
what is computed.
"""
from __future__ import annotations

import shutil
import sys
import time
from typing import Any, Literal, Union

from cumgain.exceptions import InputError

#: The values of every ``progress=`` keyword.
PROGRESS = (False, True, "auto")
ProgressOption = Union[bool, Literal["auto"]]
"""``progress=``: False, True or "auto" (:data:`PROGRESS`)."""
REDRAW_SECONDS = 0.1        # the built-in bar redraws at most this often (and at the end)
BAR_CHARS = 24


def check_progress(enabled: Any) -> ProgressOption:
    """``enabled`` if it is one of :data:`PROGRESS`, else an :class:`InputError`."""
    if enabled is True or enabled is False or enabled == "auto":
        return enabled
    raise InputError(f"progress must be False, True or 'auto', got {enabled!r}")


def shown(enabled: Any) -> bool:
    """Whether a bar is drawn: ``True``, or ``"auto"`` with stderr a terminal."""
    enabled = check_progress(enabled)
    if enabled is False or sys.stderr is None:
        return False
    if enabled is True:
        return True
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def progress_bar(total: int, description: str, enabled: ProgressOption = False) -> Any:
    """A bar for ``total`` steps of work, on stderr when :func:`shown` says so.

    The object returned has ``update(n=1)`` (``n`` more steps done) and ``close()``
    (erase the bar), and is a context manager that closes it. With nothing to show
    (``enabled`` False, ``"auto"`` off a terminal, or ``total`` 0) both do nothing.

    >>> with progress_bar(3, "pairs", enabled=False) as bar:
    ...     for _ in range(3):
    ...         bar.update()
    """
    if not shown(enabled) or total <= 0:
        return _Silent()
    try:
        from tqdm import tqdm
    except ImportError:
        return _Bar(total, description)
    return tqdm(total=total, desc=description, file=sys.stderr, leave=False,
                dynamic_ncols=True, disable=False)


class _Silent:
    """What :func:`progress_bar` returns when nothing is shown."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> "_Silent":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        pass


class _Bar:
    """A one-line bar on stderr, redrawn in place (``\\r``) and erased on close:
    ``description [#######-----------------] 7/24``."""

    def __init__(self, total: int, description: str):
        self.total, self.description, self.done = total, description, 0
        self.stream = sys.stderr
        self.drawn_at, self.length = 0.0, 0
        self._draw()

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.done >= self.total or time.monotonic() - self.drawn_at >= REDRAW_SECONDS:
            self._draw()

    def _draw(self) -> None:
        done = min(self.done, self.total)
        filled = BAR_CHARS * done // self.total
        text = f"{self.description} [{'#' * filled}{'-' * (BAR_CHARS - filled)}] " \
               f"{done}/{self.total}"
        text = text[:shutil.get_terminal_size((80, 24)).columns - 1]
        self.stream.write("\r" + text.ljust(self.length))
        self.stream.flush()
        self.length, self.drawn_at = len(text), time.monotonic()

    def close(self) -> None:
        if self.length:
            self.stream.write("\r" + " " * self.length + "\r")
            self.stream.flush()
            self.length = 0

    def __enter__(self) -> "_Bar":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()
