"""Loaded tables and streamed topics read by the compiled reader: a qrels or run file
(or stream) into the :class:`~cumgain.trec_io.Qrels` / :class:`~cumgain.trec_io.Run`
that :func:`cumgain.trec_io.read_qrels` and :func:`~cumgain.trec_io.read_run` return
(:func:`load_qrels_file`, :func:`load_run_file`), and a contiguous run's topics one by
one as they end (:class:`StreamedTopics`, for :mod:`cumgain.stream`).
"""
from __future__ import annotations

import contextlib
from typing import Any, Optional

import numpy as np

from cgcore import _qrels, _trec
from cumgain.io.native.blocks import (Stop, _LineTooLong, read_whole, source_of,
                                    status_stop)
from cumgain.io.native.parts import auto_threads, read_parts
from cumgain.io.native.errors import (_duplicate_error, _oom, _reading, _stop_error,
                                    _warn_dropped)
from cumgain.io.native.qrels import DUPLICATE_CODES, read_qrels_table
from cumgain.io.trec.byte_stream import _Compressed, _Corrupt
from cumgain.io.trec.lines import _RUN, max_line_bytes
from cumgain.io.trec.tables import Qrels, Run, _check_policy
from cumgain.exceptions import FormatError, InputError, naming
from cumgain.types import DuplicatePolicy

def load_qrels_file(qrels: Any, *, duplicates: DuplicatePolicy = "error",
                    max_line: Optional[int] = None, threads: Optional[int] = None) -> Qrels:
    """A qrels file (``"-"``: standard input) or binary stream read in C into a loaded
    :class:`~cumgain.trec_io.Qrels` (what :func:`cumgain.trec_io.read_qrels` returns):
    topics in order of first appearance, each topic's judgments in input order with
    their lines, docnos as str; errors as the reference reader's."""
    _check_policy(duplicates)
    source = source_of(qrels)
    if source is None:
        raise InputError(f"the qrels path must be a str or os.PathLike, got "
                         f"{type(qrels).__name__}")
    max_line = max_line_bytes(max_line)
    table = read_qrels_table(source, lambda: _qrels.QrelsTable(False, max_line, True),
                             auto_threads(threads), max_line, duplicates)
    with _reading(source.name, "qrels"):
        offsets, levels = table.grouped()
        return Qrels(tuple(table.topics()), offsets.copy(),
                             table.docno_strs(), levels.astype(np.float64),
                             source.name, table.row_lines())


def load_run_file(run: Any, *, duplicates: DuplicatePolicy = "error",
                  max_line: Optional[int] = None, threads: Optional[int] = None) -> Run:
    """A run file (``"-"``: standard input) or binary stream read in C into a loaded
    :class:`~cumgain.trec_io.Run` (what :func:`cumgain.trec_io.read_run` returns): each
    topic's lines held by topic, in input order, with their lines; errors as the
    reference reader's."""
    _check_policy(duplicates)
    source = source_of(run)
    if source is None:
        raise InputError(f"the run path must be a str or os.PathLike, got "
                         f"{type(run).__name__}")
    max_line = max_line_bytes(max_line)
    threads = auto_threads(threads)
    empty = _qrels.QrelsTable()
    empty.finish()

    def make():
        return _trec.RunRanker(empty, _trec.TIES_INPUT_ORDER, False, -1, 0, False, max_line,
                               DUPLICATE_CODES[duplicates], True)

    with _reading(source.name, "run"):
        if source.plain and threads > 1:
            ranker, stop, shift = read_parts(make, source, threads, max_line, run=True,
                                              grouping=True)
        else:
            ranker, stop, shift = read_whole(make(), source, max_line)
        if stop is not None:
            raise _stop_error(stop, source.name, _RUN, shift, max_line)
        if ranker.n_lines == 0:
            raise FormatError(source.name, 0, "no results (the file has no data lines)")
        held = ranker.held_run()
        if held is None:
            raise _stop_error(status_stop(ranker, ranker.status), source.name, _RUN)
    if ranker.n_duplicates:
        if duplicates == "error":
            raise _duplicate_error(source.name, ranker.first_duplicate(), True)
        _warn_dropped(source.name, ranker.n_duplicates, ranker.first_duplicate(), True,
                      duplicates)
    topics, offsets, docnos, scores, lines, tag = held
    return Run(tuple(topics), offsets, docnos, scores, tag, source.name, lines,
                       ranker.tags_agree)


class TopicCameBack(Exception):
    """A topic came back after another while streaming (:class:`StreamedTopics`), at
    ``line``; ``first_line``: where its lines began, if still held (else -1)."""

    def __init__(self, source: str, line: int, topic: str, first_line: int):
        super().__init__(source, line, topic, first_line)
        self.source, self.line, self.topic, self.first_line = source, line, topic, first_line


class StreamedTopics:
    """The topics of a run (a path, ``"-"`` or a binary stream) read by the compiled
    reader in blocks and handed out one by one as their lines end, for runs whose
    topics are contiguous (:mod:`cumgain.stream`): each ``(topic, docnos, scores,
    lines)`` in input order, a repeated docno dropped by the ``duplicates`` policy
    (``"error"``: raised when its topic is handed out). A topic that comes back
    raises :class:`TopicCameBack`; other errors are the reference reader's, in file
    order. Memory: the topic being read and a block. Once iterated, ``tag`` is the
    last line's tag and ``n_duplicates`` / ``first_duplicate`` what was dropped."""

    def __init__(self, run: Any, duplicates: DuplicatePolicy = "error",
                 max_line: Optional[int] = None):
        _check_policy(duplicates)
        source = source_of(run)
        if source is None:
            raise InputError(f"the run path must be a str, os.PathLike or binary stream, "
                             f"got {type(run).__name__}")
        self.source, self.duplicates = source, duplicates
        self.max_line = max_line_bytes(max_line)
        self.name = source.name
        self.tag = ""
        self.n_duplicates, self.first_duplicate = 0, None

    def __iter__(self):
        empty = _qrels.QrelsTable()
        empty.finish()
        ranker = _trec.RunRanker(empty, _trec.TIES_INPUT_ORDER, False, -1, 0, False,
                                 self.max_line, DUPLICATE_CODES[self.duplicates], True, True)
        blocks = self.source.blocks(self.max_line)
        stop = None
        with contextlib.closing(blocks), naming(self.name), _reading(self.name, "run"):
            while stop is None:
                try:
                    block = next(blocks, None)
                except _LineTooLong as error:
                    stop = Stop("long", ranker.lines_seen + 1, error.prefix)
                    break
                except _Corrupt as error:
                    stop = Stop("gzip", ranker.lines_seen, detail=str(error))
                    break
                except _Compressed as error:
                    stop = Stop("compressed", detail=str(error))
                    break
                except FormatError as error:
                    stop = Stop("raised", error=error)
                    break
                if block is None:
                    break
                status = ranker.feed(block)
                if status != _trec.STATUS_OK:
                    stop = status_stop(ranker, status, block, self.max_line)
                    break
                yield from self._taken(ranker, ranker.take_held())
            if stop is not None:
                if stop.kind == "not_grouped":
                    topic = stop.text.split(None, 1)[0].decode("utf-8", "replace")
                    raise TopicCameBack(self.name, stop.line, topic, ranker.first_line(topic))
                _oom(stop, (self.name, "run"))
                raise _stop_error(stop, self.name, _RUN, 0, self.max_line)
            yield from self._taken(ranker, ranker.take_held(last=True))
        if ranker.n_lines == 0:
            raise FormatError(self.name, 0, "no results (the file has no data lines)")
        self.tag = ranker.tag

    def _taken(self, ranker, taken):
        if taken is None:
            raise _stop_error(status_stop(ranker, ranker.status), self.name, _RUN)
        if ranker.n_duplicates:
            if self.duplicates == "error":
                raise _duplicate_error(self.name, ranker.first_duplicate(), True)
            self.n_duplicates, self.first_duplicate = \
                ranker.n_duplicates, ranker.first_duplicate()
        return taken
