"""Judgments read by the compiled reader (``cgcore._qrels``) from any input: a TREC file
(in parts), a stream, a dict, a table or a loaded :class:`~cumgain.trec_io.Qrels`
(:func:`native_qrels`), into a :class:`NativeQrels` that any number of rankings read.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

from cgcore import _columns, _qrels, _trec
from cumgain.io import columns, neighbours
from cumgain.io.native.blocks import Source, read_whole, source_of
from cumgain.io.native.parts import auto_threads, read_parts
from cumgain.io.native.errors import (TABLE_WORDS, _bad_row, _duplicate_error, _finished,
                                    _reading, _stop_error, _warn_dropped)
from cumgain.io.trec.lines import _QRELS, max_line_bytes
from cumgain.io.trec.frontends import qrels_from_dataframe, qrels_from_dict
from cumgain.io.trec.tables import Qrels, Run, _check_policy
from cumgain.exceptions import FormatError, InputError
from cumgain.types import DuplicatePolicy


DUPLICATE_CODES: dict[str, int] = {
    "error": _trec.DUPLICATES_ERROR, "first": _trec.DUPLICATES_FIRST,
    "last": _trec.DUPLICATES_LAST}


class NativeQrels:
    """A finished qrels table and its judgments grouped by topic. Only read once
    built, so one instance serves any number of rankings, in any number of threads.
    ``empty_topics``: qrels topics without judgments (a dict's empty topics), which
    the table does not hold."""

    def __init__(self, table: _qrels.QrelsTable, offsets: np.ndarray, levels: np.ndarray,
                 empty_topics: tuple[str, ...] = (), source: str = ""):
        self.table = table          # _qrels.QrelsTable
        self.offsets = offsets      # judgments of topic i: offsets[i]:offsets[i+1] (read-only)
        self.levels = levels        # int8 or float64 (see QrelsTable.grouped; read-only)
        self.empty_topics = empty_topics
        self.source = source        # how errors name the judgments
        self._topics: Optional[tuple[str, ...]] = None
        self._topic_index: Optional[dict[str, int]] = None
        self._sorted_topics: Optional[tuple[str, ...]] = None

    @property
    def topics(self) -> tuple[str, ...]:
        """The topic ids in order of appearance in the qrels, decoded when first asked
        for (an evaluation whose run ranks the same topics needs only the run's), which
        must be before the table is released. Threads asking at once decode them twice."""
        if self._topics is None:
            self._topics = tuple(self.table.topics())
        return self._topics

    @property
    def topic_index(self) -> dict[str, int]:
        """``{topic: i}`` over :attr:`topics`, built when first asked for and kept: a
        table prepared once is ranked against many runs (each partition of a Dask run,
        each run of the command line), each needing it for its own few topics."""
        if self._topic_index is None:
            self._topic_index = {topic: i for i, topic in enumerate(self.topics)}
        return self._topic_index

    @property
    def sorted_topics(self) -> tuple[str, ...]:
        """:attr:`topics` sorted, built when first asked for and kept (as topic_index)."""
        if self._sorted_topics is None:
            self._sorted_topics = tuple(sorted(self.topics))
        return self._sorted_topics


def native_qrels(qrels: Any, indexed: bool = False, threads: Optional[int] = 1,
                 check: bool = True, duplicates: DuplicatePolicy = "error") -> NativeQrels:
    """Read judgments in C: a TREC file (``"-"``: standard input), a binary stream, a
    ``{qid: {docid: level}}`` mapping, a table (:mod:`cumgain.io.columns`) or a loaded
    :class:`~cumgain.trec_io.Qrels`. Raises the reference reader's error for a bad
    input. ``indexed``: keep every topic's docno index, for a table many runs will be
    ranked against. ``threads``: how many may read a plain file in parts (None: the
    available cores, at most MAX_AUTO_THREADS). ``check=False``: a file's table is
    finished without its duplicate check, for one ranking that checks each topic as it
    joins it (see QrelsTable.finish); a policy that drops duplicates checks anyway."""
    _check_policy(duplicates)
    check = check or duplicates != "error" or indexed
    if isinstance(qrels, Run):
        raise InputError("expected qrels, got a Run")
    if isinstance(qrels, Qrels):
        return _qrels_object(qrels, indexed, duplicates)
    if columns.is_columnar(qrels):
        judgments = _columns_qrels(qrels, indexed, duplicates=duplicates)
        if judgments is None:       # not read in place: checked and converted first
            judgments = _qrels_object(qrels_from_dataframe(qrels, duplicates=duplicates),
                                      indexed, "error")
        return judgments
    if isinstance(qrels, Mapping):
        return _dict_qrels(qrels, indexed)
    source = source_of(qrels)
    if source is None:
        raise neighbours.refused(qrels, "qrels")
    return _source_qrels(source, indexed, auto_threads(threads), check, duplicates)


def _source_qrels(source: Source, indexed: bool, threads: int, check: bool,
                  duplicates: DuplicatePolicy) -> NativeQrels:
    """A qrels file or stream read in C (see native_qrels)."""
    max_line = max_line_bytes()
    table = read_qrels_table(source, lambda: _qrels.QrelsTable(indexed, max_line), threads,
                             max_line, duplicates, check)
    return _native_of(table, (), source.name)


def read_qrels_table(source: Source, make: Any, threads: int, max_line: int,
                     duplicates: DuplicatePolicy, check: bool = True) -> Any:
    """The finished QrelsTable (made by ``make()``) of a qrels file or stream: a plain
    file read in parts by ``threads`` threads, else whole; a bad line, a file without
    data lines and (``check``) a repeated docno raise the reference reader's errors;
    the rows ``duplicates`` drops are warned of."""
    with _reading(source.name, "qrels"):
        if source.plain and threads > 1:
            table, stop, shift = read_parts(make, source, threads, max_line, run=False)
        else:
            table, stop, shift = read_whole(make(), source, max_line)
        if stop is not None:
            raise _stop_error(stop, source.name, _QRELS, shift, max_line)
        if table.n_rows == 0:
            raise FormatError(source.name, 0, "no judgments (the file has no data lines)")
        status = table.finish(threads, check, duplicates=DUPLICATE_CODES[duplicates])
        _finished(table, status, source.name, lines=True)
    if duplicates != "error" and table.n_duplicates:
        _warn_dropped(source.name, table.n_duplicates, table.first_duplicate(), True,
                      duplicates)
    return table


def _native_of(table, empty: tuple[str, ...], source: str) -> NativeQrels:
    offsets, levels = table.grouped()
    offsets.flags.writeable = levels.flags.writeable = False
    return NativeQrels(table, offsets, levels, empty, source)


def _dict_qrels(qrels: Mapping, indexed: bool) -> NativeQrels:
    """A ``{qid: {docid: level}}`` mapping read in C; its topics without judgments kept
    aside as ``empty_topics``. Ids that are not all str, or levels not all int /
    float, are checked and converted by the reference front-end first."""
    where = ("<dict>", "qrels")
    if type(qrels) is dict:
        empty = tuple(qid for qid, docs in qrels.items()
                      if isinstance(docs, (dict, Mapping)) and len(docs) == 0)
        judged = {qid: docs for qid, docs in qrels.items() if qid not in empty} \
            if empty else qrels
        if all(type(qid) is str for qid in empty):
            with _reading(*where):
                table = _qrels.QrelsTable(indexed)
                status = table.add_dict(judged)
                if status == _trec.STATUS_OK:
                    status = table.finish()
                if status == _trec.STATUS_OK:
                    return _native_of(table, empty, "<dict>")
                if status not in (_trec.STATUS_BAD_LINE, _trec.STATUS_DUPLICATE):
                    _finished(table, status, "<dict>", lines=False)
    return _qrels_object(qrels_from_dict(qrels), indexed, "error")


def loaded_columns(topics: tuple, offsets: np.ndarray, docnos: Any, values: Any,
                   source: str) -> columns.ArrowColumns:
    """A loaded Qrels' or Run's rows (``topics`` and their ``offsets``, ``docnos``,
    ``values``) as columns the compiled reader reads in place."""
    topic_ids = np.repeat(np.array(topics, dtype=object), np.diff(offsets)) \
        if len(topics) else np.zeros(0, object)
    docnos = np.ascontiguousarray(docnos, dtype=object)
    query_ids, doc_ids = _columns.TextColumn.of_strs(topic_ids), _columns.TextColumn.of_strs(
        docnos)
    if not (query_ids.valid and doc_ids.valid):
        raise InputError(f"{source}: the topic ids and docnos must be str with UTF-8")
    return columns.ArrowColumns(query_ids, doc_ids, np.ascontiguousarray(
        values, dtype=np.float64), source, (topic_ids, docnos))


def _qrels_object(qrels: Qrels, indexed: bool, duplicates: DuplicatePolicy) -> NativeQrels:
    """A loaded Qrels (or one a front-end made) read in C, rows as its own."""
    counts = np.diff(qrels.offsets)
    empty = tuple(topic for topic, n in zip(qrels.topics, counts.tolist()) if n == 0)
    table_columns = loaded_columns(qrels.topics, qrels.offsets, qrels.docnos,
                                   qrels.relevance, qrels.source)
    return _table_qrels(table_columns, indexed, duplicates, empty,
                        lines=qrels.lines is not None)


def _columns_qrels(qrels: Any, indexed: bool, unique: bool = False,
                   duplicates: DuplicatePolicy = "error") -> Optional[NativeQrels]:
    """A table's judgments (see cumgain.io.columns) in C, or None where the compiled
    reader does not read its columns in place. ``unique``: known to hold no
    duplicate (checked where they were read), so not checked again."""
    table_columns = columns.arrow_columns(qrels, "relevance")
    if table_columns is None:
        return None
    return _table_qrels(table_columns, indexed, duplicates, (), unique=unique,
                        words=TABLE_WORDS, original=qrels)


def _table_qrels(table_columns: columns.ArrowColumns, indexed: bool,
                 duplicates: DuplicatePolicy, empty: tuple[str, ...], unique: bool = False,
                 lines: bool = False, words: tuple[str, str] = ("docno", "topic"),
                 original: Any = None) -> NativeQrels:
    where = (table_columns.source, "qrels")
    with _reading(*where):
        table = _qrels.QrelsTable(indexed)
        status = table.add_columns(table_columns.query_ids, table_columns.doc_ids,
                                   table_columns.values)
        if status == _trec.STATUS_BAD_LINE:     # a NaN or infinite level: worded by the
            _bad_row(original, qrels_from_dataframe, table_columns.source)
        if status == _trec.STATUS_OK:
            status = table.finish(unique=unique, duplicates=DUPLICATE_CODES[duplicates])
        if status == _trec.STATUS_DUPLICATE:
            raise _duplicate_error(table_columns.source, table.first_duplicate(), lines, words)
        _finished(table, status, table_columns.source, lines=lines)
    if table.n_duplicates and duplicates != "error":
        _warn_dropped(table_columns.source, table.n_duplicates, table.first_duplicate(),
                      lines, duplicates, words)
    return _native_of(table, empty, table_columns.source)
