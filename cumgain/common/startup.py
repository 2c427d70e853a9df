"""Ctrl-C while cumgain's own command line starts: ``cumgain: interrupted`` and exit
status 130, as during the command's work, not a ``KeyboardInterrupt`` traceback.

A console script (``cumgain``, ``cumgain-trec-eval``) first imports :mod:`cumgain`, whose
libraries (numpy, scipy, the compiled core) take a few tenths of a second to load,
before :func:`cumgain.cli.main` and its handling of interrupts run. :func:`guard`, called
first thing by ``cumgain/__init__.py``, covers that time, only when the process is one of
those scripts (its ``__main__`` is the script file) and nothing else has taken SIGINT;
:func:`release`, called by the command line before it does any work, restores Python's
own handler (the work's interrupts remove what they were writing, then say so).
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

SCRIPTS = ("cumgain", "cumgain-trec-eval")
EXIT_INTERRUPTED = 130
_guarded: list = []


def _script_name() -> str:
    """The console script this process runs, or ''."""
    main = sys.modules.get("__main__")
    name = os.path.basename(getattr(main, "__file__", None) or "")
    return name if name in SCRIPTS else ""


def guard() -> None:
    """Make Ctrl-C end the starting command line quietly (see the module docstring)."""
    name = _script_name()
    if not name or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return

    def interrupted(signum: int, frame: Any) -> None:
        try:
            sys.stderr.write(f"{name}: interrupted\n")
            sys.stderr.flush()
        finally:
            os._exit(EXIT_INTERRUPTED)      # (nothing written yet: nothing to clean up)

    signal.signal(signal.SIGINT, interrupted)
    _guarded.append(interrupted)


def release() -> None:
    """Give SIGINT back to Python (KeyboardInterrupt), if :func:`guard` took it."""
    if _guarded and signal.getsignal(signal.SIGINT) is _guarded[-1]:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    _guarded.clear()
