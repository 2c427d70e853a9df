"""What every subcommand shares: exit statuses, the one-line errors, the parsers, writing
the output (to standard output or, with ``-o``, a file written whole or not at all), and
small argument types.

A user error (a malformed or unreadable file, an unknown measure, a bad option)
prints one line on stderr, ``<prog>: error: <file>:<line>: <what is wrong>``, and
exits non-zero, without a traceback. Exit statuses follow trec_eval: 1 for usage
errors (of ``cumgain`` and of every subcommand, named by its prog: ``cumgain
evaluate: error: ...``), unknown or unsupported measures and optional dependencies
that are not installed, 2 for unreadable or malformed input, 7 when no topic has
both results and judgments; 3 when the memory ran out (the line names the file
being read and the bytes asked for, when known); 130 when interrupted.
:data:`EXIT_STATUS_HELP` says so at the end of every ``-h``.
"""
from __future__ import annotations

import argparse
import os
import sys
import textwrap
from typing import Callable, Optional, Sequence

from cumgain.common.version import __version__
from cumgain.exceptions import (CumgainError, GainMappingError, InputError, MissingDependencyError,
                                naming)
from cumgain.io import atomic

EXIT_USAGE = 1          # trec_eval: usage, illegal measure
EXIT_INPUT = 2          # trec_eval: cannot read / malformed file
EXIT_NO_MEMORY = 3      # the memory ran out (a MemoryError)
EXIT_NO_TOPICS = 7      # trec_eval 9.0.8: "No queries with both results and relevance info"
EXIT_INTERRUPTED = 130
EXIT_STATUS_HELP = textwrap.fill(
    f"Exit status: 0 ok; {EXIT_USAGE} usage error (a bad option or argument, an unknown "
    "measure, an output that exists without --overwrite, an optional dependency not "
    f"installed); {EXIT_INPUT} unreadable or malformed input, or an output that cannot be "
    f"written; {EXIT_NO_MEMORY} out of memory; {EXIT_NO_TOPICS} no topic in both the run "
    f"and the qrels; {EXIT_INTERRUPTED} interrupted.", width=79)


class Failure(Exception):
    """A user error with its exit status; printed as one line, never as a traceback."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, named by its prog, and exit
    with :data:`EXIT_USAGE`; options only as spelled in full (``--out`` is not taken
    for ``--output``: an old spelling must fail, not mean something else)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} -h)\n")


class SubcommandParser(Parser):
    """A subcommand's parser: it reports arguments it does not know itself (argparse
    leaves them to the top-level parser, whose message would name ``cumgain``)."""

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error("unrecognized arguments: " + " ".join(extras))
        return namespace, extras


def refuse_existing(path, overwrite: bool, folder: bool = False) -> None:
    """A usage error, before any work, unless ``path`` may receive what the command
    writes: a file (:func:`cumgain.io.atomic.check_file_target`: a new name, a stream
    such as ``/dev/stdout``, ``/dev/null`` or a FIFO, or with --overwrite a regular
    file) or, with ``folder``, a folder (a new name, or with --overwrite one that
    cumgain.io.atomic.check_folder accepts). cumgain.io.atomic checks again when it
    writes."""
    try:
        if folder:
            atomic.refuse_existing(path, overwrite, "--overwrite")
        else:
            atomic.check_file_target(path, overwrite, "--overwrite")
    except InputError as error:
        raise Failure(EXIT_USAGE, str(error)) from None


def one_line(text: str) -> str:
    return " ".join(str(text).split("\n"))


def describe_os_error(error: OSError) -> str:
    if error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error)


STDOUT = "standard output"      # the name a failed write to stdout gives in messages


class NamedOutput:
    """sys.stdout while a command runs: a write or flush that fails without a file name
    (a full disk, a file size limit: ``[Errno 27] File too large``) names
    ``standard output``."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        with naming(STDOUT):
            return self._stream.write(text)

    def flush(self) -> None:
        with naming(STDOUT):
            self._stream.flush()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def run(handler: Callable, args: argparse.Namespace, prog: str) -> int:
    """Call a subcommand; turn user errors into one line on stderr and an exit status."""
    stdout, sys.stdout = sys.stdout, NamedOutput(sys.stdout)
    try:
        status = handler(args)
        sys.stdout.flush()
        return status or 0
    except Failure as failure:
        message, status = str(failure), failure.status
    except (MissingDependencyError, GainMappingError) as error:
        message, status = str(error), EXIT_USAGE
    except MemoryError as error:    # OutOfMemoryError names the file; any other says so
        message = str(error) if isinstance(error, CumgainError) \
            else "out of memory" + (f": {error}" if str(error) else "")
        status = EXIT_NO_MEMORY
    except CumgainError as error:
        message, status = str(error), EXIT_INPUT
    except BrokenPipeError:
        # The reader went away (`... | head`): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        drop_stdout()
        return 0
    except OSError as error:
        message, status = describe_os_error(error), EXIT_INPUT
        if error.filename == STDOUT:    # what could not be written would fail again at exit
            drop_stdout()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        sys.stdout = stdout
    print(f"{prog}: error: {one_line(message)}", file=sys.stderr)
    return status


def drop_stdout() -> None:
    """Point stdout's file descriptor at the null device."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def write_text(text: str) -> None:
    """Write to stdout as UTF-8 bytes with "\n" line ends, whatever the platform; all of
    it (an unbuffered stdout, under ``python -u``, may take part of a write: the rest
    is written again, and a write that then fails names ``standard output``)."""
    buffer = getattr(sys.stdout, "buffer", None)
    with naming(STDOUT):
        if buffer is None:
            sys.stdout.write(text)
            return
        sys.stdout.flush()
        data = memoryview(text.encode("utf-8"))
        while len(data):
            written = buffer.write(data)
            data = data[written if written is not None else 0:]
        buffer.flush()


def write_output(text: str, path: Optional[str], overwrite: bool) -> None:
    """The command's output: to standard output (``path`` None or ``-``), or to ``path``,
    written whole or not at all (:mod:`cumgain.io.atomic`); an existing file is replaced
    only with ``overwrite``."""
    if path is None or path == "-":
        write_text(text)
        return
    from cumgain.io.atomic import atomic_open
    with naming(path), atomic_open(path, "wb", overwrite=overwrite,
                                          hint="--overwrite") as stream:
        stream.write(text.encode("utf-8"))


def number(text: str):
    """An int if the text is one, else a float (for -l)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def truncated(text: str) -> int:
    """A number truncated toward zero, as C's atol reads trec_eval's -l and -M ("2.5" -> 2);
    unlike atol, text that is not a number is an error, not 0."""
    value = number(text)
    return value if isinstance(value, int) else int(value)


def truncated_count(text: str) -> int:
    """:func:`truncated`, at least 0 (trec_eval -M 0 keeps no document)."""
    value = truncated(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 0")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def version() -> str:
    return __version__


def topic_list(topics: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(topics[:limit])
    return shown + (f", ... ({len(topics) - limit} more)" if len(topics) > limit else "")


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"



def topic_notes(label: str, result, topics: str) -> list:
    notes = []
    if result.run_only_topics:
        run_only = list(result.run_only_topics)
        notes.append(f"{label}: {plural(len(run_only), 'run topic')} without judgments, "
                     f"not evaluated: {topic_list(run_only)}")
    if result.missing_topics:
        missing = list(result.missing_topics)
        fate = "scored 0" if topics == "qrels" else "skipped"
        notes.append(f"{label}: {plural(len(missing), 'qrels topic')} missing from the run, "
                     f"{fate}: {topic_list(missing)}")
    if result.empty_qrels_topics:
        empty = list(result.empty_qrels_topics)
        notes.append(f"{label}: {plural(len(empty), 'qrels topic')} without judgments: "
                     f"{topic_list(empty)}")
    return notes

