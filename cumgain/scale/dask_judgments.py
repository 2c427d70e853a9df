"""The judgments for :mod:`cumgain.dask`: read once on the client and shipped to the
workers as a compact Arrow table that each prepares natively.

Qrels that are a table (pandas, Arrow, Dask, Parquet read by pyarrow) are read by the
native reader on the client; a TREC file too, its judgments made an Arrow table from the
native table's buffers; anything the native reader does not take (a dict,
``duplicates="first"`` / ``"last"``, ids Arrow cannot hold) by
:func:`cumgain.trec_io.load_qrels` (which words any error).
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Optional

import numpy as np

from cumgain import stream

from cumgain.io import columns

from cumgain.scale import manifest
from cumgain.common.optional import require
from cumgain.exceptions import InputError
from cumgain.io.native.reader import PreparedQrelsTable, native_qrels, prepare_qrels_once
from cumgain.trec_io import load_qrels
from cumgain.types import DuplicatePolicy, PathLike

if TYPE_CHECKING:
    import dask.dataframe as dd
    import pandas as pd
else:
    dd = require("dask.dataframe", extra="dask", for_what="cumgain.dask")
    pd = require("pandas", extra="dask", for_what="cumgain.dask")


def _is_parquet(path: Any) -> bool:
    """A folder, a glob, or a file that starts with Parquet's magic bytes."""
    text = os.fsdecode(os.fspath(path))
    if os.path.isdir(text) or any(char in text for char in "*?["):
        return True
    if not os.path.isfile(text):
        return "://" in text         # a remote URL: let dask read it
    with open(text, "rb") as handle:
        return handle.read(4) == b"PAR1"


class _TopicJudgments(Mapping):
    """A qrels table's judgments as a read-only ``{topic: {doc: level}}`` mapping for
    :mod:`cumgain.stream`'s bookkeeping and the dict paths: membership and iteration
    from the topics, and a topic's dict built only when asked for (the columnar path
    asks for none; missing topics under ``topics="qrels"`` and :func:`average_vectors`
    ask for theirs). Ids as the native reader reads them (integers as their digits)."""

    def __init__(self, table: Any, topics: Iterable[str]):
        self.table = table                    # pyarrow: query_id, doc_id, relevance
        self.topics = dict.fromkeys(topics)   # topics with judgments, in qrels order
        self._rows: Optional[dict] = None     # topic -> its row numbers, when first needed
        self._docs: Optional[np.ndarray] = None
        self._levels: Optional[np.ndarray] = None

    def __iter__(self):
        return iter(self.topics)

    def __len__(self) -> int:
        return len(self.topics)

    def __contains__(self, topic: object) -> bool:
        return topic in self.topics

    def __getitem__(self, topic: str) -> dict:
        if topic not in self.topics:
            raise KeyError(topic)
        if self._rows is None:
            topic_ids = _text(self.table.column(0))
            codes, names = pd.factorize(topic_ids, sort=False)
            order = np.argsort(codes, kind="stable")
            bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
            self._rows = {name: order[bounds[i]:bounds[i + 1]]
                          for i, name in enumerate(names.tolist())}
            self._docs = _text(self.table.column(1))
            self._levels = self.table.column(2).to_numpy().astype(np.float64)
        rows = self._rows[topic]
        return dict(zip(self._docs[rows].tolist(), self._levels[rows].tolist()))

    def __reduce__(self):       # the table and topics, not the rows found on the client
        return _TopicJudgments, (self.table, list(self.topics))


def _text(column: Any) -> np.ndarray:
    """An id column of a qrels table as an object array of str."""
    pa = require("pyarrow", extra="dask", for_what="cumgain.dask")
    return column.cast(pa.string()).to_numpy(zero_copy_only=False)


@dataclass(frozen=True)
class _Judgments(stream.JudgedTopics):
    """The qrels, read once on the client. ``prepared``: their Arrow table prepared by
    the native reader (:class:`cumgain.io.native.reader.PreparedQrelsTable`), what the partitions
    are evaluated against (:func:`cumgain.io.native.reader.prepare_qrels_once`: no index, as each
    topic is ranked once): it travels as the table's buffers (``query_id``
    dictionary-encoded: ~4 bytes per judgment plus the doc id and a level of 1 or 8
    bytes), and each process that receives it prepares it once, without checking it
    again; None where the native reader does not take the table (then the dict path).
    ``by_topic``: a :class:`_TopicJudgments` over the same table (plain dicts in the
    fallback)."""

    prepared: Any = None


def _judged(qrels: Any, duplicates: DuplicatePolicy) -> _Judgments:
    """Qrels from a Dask or pandas DataFrame, Parquet, an Arrow table, a TREC file or a
    dict. A table the native reader takes is prepared as it is; anything else (a TREC
    file, a dict, ``duplicates="first"`` / ``"last"``, a table the native reader refuses)
    is read by :func:`cumgain.trec_io.load_qrels` (which words any error) and
    its judgments made a table."""
    if isinstance(qrels, (str, os.PathLike)):
        manifest.check_dataset(qrels)
    if isinstance(qrels, (str, os.PathLike)) and _is_parquet(qrels):   # read here, not
        qrels = _read_parquet_here(qrels)
    if isinstance(qrels, dd.DataFrame):                                  # by a worker
        qrels = qrels.compute()
    if isinstance(qrels, pd.DataFrame) and "query_id" not in qrels.columns \
            and qrels.index.name == "query_id":
        qrels = qrels.reset_index()
    if duplicates == "error" and columns.is_columnar(qrels):
        table = _columns_table(qrels)
        try:
            prepared = _prepared(table) if table is not None else None
        except InputError:      # the reference reader words it, naming the caller's table
            prepared = None
        if prepared is not None:
            return _Judgments(by_topic=_TopicJudgments(prepared.table, prepared.topics),
                             empty=(), prepared=prepared)
    if duplicates == "error" and isinstance(qrels, (str, os.PathLike)):
        judged = _native_file_judgments(qrels)
        if judged is not None:
            return judged
    loaded = load_qrels(qrels, duplicates=duplicates)
    counts = np.diff(loaded.offsets)
    empty = tuple(topic for topic, n in zip(loaded.topics, counts) if n == 0)
    pa = require("pyarrow", extra="dask", for_what="cumgain.dask")
    try:
        table = _judgments_table(loaded.topics, counts, pa.array(loaded.docnos, pa.string()),
                                 loaded.relevance)
    except (pa.ArrowException, UnicodeError):   # ids Arrow cannot hold: dicts, as before
        return _Judgments(by_topic={topic: docs for topic, docs in loaded.to_dict().items()
                                   if docs}, empty=empty)
    prepared = _prepared(table) if len(table) else None
    return _Judgments(by_topic=_TopicJudgments(table if prepared is None else prepared.table,
                                               (topic for topic, n in
                                                zip(loaded.topics, counts) if n)),
                     empty=empty, prepared=prepared)


def _prepared(table: Any) -> Optional[PreparedQrelsTable]:
    """A ``query_id, doc_id, relevance`` Arrow table prepared natively
    (:func:`cumgain.io.native.reader.prepare_qrels_once`), its levels made int8 where the native
    table holds them so (every level a whole number in [-128, 127], none -0.0: 7 bytes
    less a judgment to ship, the same levels); None where the native reader does not
    take it."""
    pa = require("pyarrow", extra="dask", for_what="cumgain.dask")
    prepared = prepare_qrels_once(table)
    if prepared is None or prepared.native.levels.dtype != np.int8 \
            or pa.types.is_int8(table.column(2).type):
        return prepared
    narrow = table.set_column(2, "relevance", table.column(2).cast(pa.int8()))
    return PreparedQrelsTable(narrow, (), native=prepared.native)


def _judgments_table(topics: Any, counts: np.ndarray, doc_ids: Any, levels: np.ndarray) -> Any:
    """Judgments grouped by topic (``counts[i]`` rows of ``topics[i]``) as the Arrow table
    that travels: ``query_id`` dictionary-encoded, ``doc_id``, ``relevance`` (float64,
    or int8 where every level is a whole number that fits: 7 bytes less a judgment)."""
    pa = require("pyarrow", extra="dask", for_what="cumgain.dask")
    return pa.table({
        "query_id": pa.DictionaryArray.from_arrays(
            np.repeat(np.arange(len(counts), dtype=np.int32), counts),
            pa.array(list(topics), pa.string())),
        "doc_id": doc_ids, "relevance": levels})


def _native_file_judgments(path: PathLike) -> Optional[_Judgments]:
    """A TREC qrels file read by the native reader (as :func:`prepare_qrels` reads it),
    its judgments made an Arrow table from the native table's buffers (no Python object
    per judgment); None where the native reader does not take the file (the reference
    reader then reads it and words any error)."""
    pa = require("pyarrow", extra="dask", for_what="cumgain.dask")
    judgments = native_qrels(path, threads=None)     # checked, not indexed (see
    if judgments is None:                               # prepare_qrels_once)
        return None
    topics = judgments.topics
    doc_offsets, doc_bytes = judgments.table.docno_buffers()
    try:
        small = len(doc_bytes) < 2 ** 31      # int32 offsets, as pa.array(strs) makes
        doc_ids = (pa.StringArray if small else pa.LargeStringArray).from_buffers(
            len(judgments.levels),
            pa.py_buffer(doc_offsets.astype(np.int32) if small else doc_offsets),
            pa.py_buffer(doc_bytes))
        doc_ids.validate()    # (not its UTF-8 again, 6 ms a million: the native reader
                              # took UTF-8 lines only; a reader checks the offsets again)
        table = _judgments_table(topics, np.diff(judgments.offsets), doc_ids,
                                 judgments.levels)      # (int8 where the table holds int8)
    except (pa.ArrowException, UnicodeError):
        return None
    prepared = PreparedQrelsTable(table, (), native=judgments)
    return _Judgments(by_topic=_TopicJudgments(table, topics), empty=(), prepared=prepared)


def _read_parquet_here(path: PathLike) -> Any:
    """Parquet qrels read in this process: a local file or folder by pyarrow (its files
    in Dask's order), anything else (a glob, a URL) through Dask."""
    text = os.fsdecode(os.fspath(path))
    if os.path.isfile(text) or os.path.isdir(text):
        pq = require("pyarrow.parquet", extra="dask", for_what="cumgain.dask")
        files = _parquet_files(text) if os.path.isdir(text) else [text]
        if files:
            try:        # query ids decoded straight into a dictionary (they repeat):
                names = pq.read_schema(files[0]).names    # 2-3x faster, no encoding after
                return pq.read_table(files, read_dictionary=[
                    name for name in columns.NAMES["query_id"] if name in names])
            except (OSError, ValueError) as error:     # ArrowInvalid is a ValueError
                raise InputError(f"{text}: {error}") from None
    return dd.read_parquet(text).compute(scheduler="sync")


def _parquet_files(folder: str) -> list:
    """A folder's Parquet files as Dask lists them: names not starting with ``_`` or
    ``.``, in natural order (``part.2`` before ``part.10``)."""
    names = [name for name in os.listdir(folder) if not name.startswith(("_", "."))
             and os.path.isfile(os.path.join(folder, name))]
    return [os.path.join(folder, name) for name in sorted(names, key=_natural_key)]


def _natural_key(name: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _columns_table(qrels: Any) -> Optional[Any]:
    """A qrels table's ``query_id, doc_id, relevance`` columns (by the names
    :mod:`cumgain.io.columns` accepts) as a pyarrow Table, the query ids
    dictionary-encoded; None if Arrow does not take them (the reference reader then
    words why)."""
    pa = require("pyarrow", extra="dask", for_what="cumgain.dask")
    source = columns.source_name(qrels)
    names = qrels.names if isinstance(qrels, columns.Renamed) else ()
    table = qrels.table if isinstance(qrels, columns.Renamed) else qrels
    try:
        if isinstance(table, pd.DataFrame):
            chosen = columns.pick_columns(list(table.columns), "relevance", source, names)
            table = pa.Table.from_pandas(table[chosen], preserve_index=False)
        else:
            table = pa.table(table)
            chosen = columns.pick_columns(table.column_names, "relevance", source, names)
            table = table.select(chosen)
        topic_ids, doc_ids, levels = (_compact(table.column(i)) for i in range(3))
        if pa.types.is_string(topic_ids.type) or pa.types.is_large_string(topic_ids.type):
            topic_ids = topic_ids.dictionary_encode()
        return pa.table([topic_ids, doc_ids, levels], names=["query_id", "doc_id", "relevance"])
    except (pa.ArrowException, TypeError, ValueError):
        return None


def _compact(column: Any) -> Any:
    """A column as one array holding only its own rows: the table travels to every
    worker pickled, and a chunk that is a slice (Parquet's batches, a user's slice)
    pickles its parent's whole buffers (4-8x the bytes, measured)."""
    pa = require("pyarrow", extra="dask", for_what="cumgain.dask")
    if pa.types.is_dictionary(column.type):
        column = column.unify_dictionaries()
    if column.num_chunks == 0:
        return pa.array([], type=column.type)
    return pa.concat_arrays(column.chunks)
