"""A TREC run file to a Parquet dataset, streamed: the file is never held whole.

The layout and the guarantees are those of :func:`cumgain.dask.write_parquet` (columns
``query_id, doc_id, score``; by topic: topics sorted by id, ``query_id`` the index, whole
topics per file; else rows in file order, ``rows_per_file`` per file; the folder complete
or absent, with its manifest written last).

How it streams (``cumgain.stream``'s reader: whole topics, each checked for duplicate
docnos with file and line):

* in file order, each topic's rows go to the current ``part.<i>.parquet`` as they come;
* by topic, each topic's rows are first appended to one Arrow IPC file in a private
  temporary folder (``temp_dir``), noting where each topic lies; the topics are then
  read back, memory-mapped, in id order, a file's worth at a time.

Memory: the reader's blocks (about 40 MB), one file's rows (``rows_per_file``) and, by
topic, an index entry per topic. A run whose topics are not contiguous (a topic's lines
resume after another topic's) cannot be checked topic by topic: it is converted through
the whole-file path (:func:`cumgain.trec_io.load_run`, held in memory), as before.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from cumgain import stream

from cumgain.scale import manifest
from cumgain.scale.parquet import (DEFAULT_ROWS_PER_FILE, PARQUET_OPTIONS, STRINGS, dask_frame,
                                    rows_by_file)
from cumgain.common.optional import require
from cumgain.io.atomic import atomic_dir
from cumgain.exceptions import WRITE_ERRNOS, InputError, naming
from cumgain.trec_io import load_run
from cumgain.types import DuplicatePolicy, PathLike

@dataclass(frozen=True)
class Converted:
    """What :func:`convert_run` wrote: ``files`` Parquet files, ``rows``, ``topics``, read
    from ``source``; ``streamed`` False when the run's topics were not contiguous."""

    files: int
    rows: int
    topics: int
    source: str
    streamed: bool


def _frame(topics: list, counts: list, docnos: list, scores: list, by_topic: bool):
    """One file's rows as the pandas frame :func:`cumgain.dask.write_parquet` writes."""
    pd = require("pandas", extra="dask", for_what="cumgain convert")
    frame = pd.DataFrame({
        "query_id": pd.array(np.repeat(np.array(topics, dtype=object), counts).tolist(),
                             dtype=STRINGS),
        "doc_id": pd.array(docnos, dtype=STRINGS),
        "score": np.concatenate(scores) if scores else np.zeros(0)})
    return frame.set_index("query_id") if by_topic else frame


class _Parts:
    """Writes ``part.<i>.parquet`` files of about ``rows_per_file`` rows: exactly that many
    in file order; whole topics, a file closed once it has that many, by topic."""

    def __init__(self, folder: str, rows_per_file: int, by_topic: bool):
        self.folder, self.rows_per_file, self.by_topic = folder, rows_per_file, by_topic
        self.files = self.rows = 0
        self._clear()

    def _clear(self) -> None:
        self.topics: list = []
        self.counts: list = []
        self.docnos: list = []
        self.scores: list = []
        self.held = 0

    def add(self, topic: str, docnos: list, scores: np.ndarray) -> None:
        start = 0
        while start < len(docnos):
            take = len(docnos) - start if self.by_topic else \
                min(len(docnos) - start, self.rows_per_file - self.held)
            self.topics.append(topic)
            self.counts.append(take)
            self.docnos.extend(docnos[start:start + take])
            self.scores.append(scores[start:start + take])
            self.held += take
            start += take
            if self.held >= self.rows_per_file:
                self.flush()

    def flush(self) -> None:
        if not self.held:
            return
        frame = _frame(self.topics, self.counts, self.docnos, self.scores, self.by_topic)
        frame.to_parquet(os.path.join(self.folder, f"part.{self.files}.parquet"),
                         index=self.by_topic, **PARQUET_OPTIONS)
        self.files += 1
        self.rows += self.held
        self._clear()


class _TopicSpill:
    """Topics appended to an Arrow IPC file (one record batch each), read back by id."""

    def __init__(self, path: str):
        self.pa = require("pyarrow", extra="dask", for_what="cumgain convert")
        self.path = path
        self.schema = self.pa.schema([("doc_id", self.pa.string()),
                                      ("score", self.pa.float64())])
        self.sink = self.pa.OSFile(path, "wb")
        self.writer = self.pa.ipc.new_file(self.sink, self.schema)
        self.batches: dict = {}         # topic -> its batch's number

    def add(self, topic: str, docnos: list, scores: np.ndarray) -> None:
        self.writer.write_batch(self.pa.record_batch(
            [self.pa.array(docnos, self.pa.string()), self.pa.array(scores)],
            schema=self.schema))
        self.batches[topic] = len(self.batches)

    def write_sorted(self, parts: _Parts) -> None:
        self.writer.close()
        self.sink.close()
        with self.pa.memory_map(self.path, "r") as source:
            reader = self.pa.ipc.open_file(source)
            for topic in sorted(self.batches, key=lambda t: t.encode("utf-8")):
                batch = reader.get_batch(self.batches[topic])
                parts.add(topic, batch.column(0).to_pylist(),
                          batch.column(1).to_numpy(zero_copy_only=False))


def convert_run(path: PathLike, out: PathLike, *,
                partition_by_topic: bool = False, rows_per_file: int = DEFAULT_ROWS_PER_FILE,
                duplicates: DuplicatePolicy = "error", overwrite: bool = False,
                temp_dir: Optional[str] = None) -> Converted:
    """Write the TREC run file at ``path`` (plain or gzip) to the Parquet folder ``out``,
    streamed (see the module docstring); ``duplicates``: a docno twice in a topic is an
    error naming both lines (``"error"``), or the first (``"first"``) or the last
    (``"last"``) is kept."""
    if duplicates not in ("error", "first", "last"):
        raise InputError(f"duplicates must be 'error', 'first' or 'last', got {duplicates!r}")
    if isinstance(rows_per_file, bool) or not isinstance(rows_per_file, (int, np.integer)) \
            or rows_per_file < 1:
        raise InputError(f"rows_per_file must be a positive integer, got {rows_per_file!r}")
    require("pyarrow", extra="dask", for_what="cumgain convert")
    target = os.fsdecode(os.fspath(out))
    protect = [path] if isinstance(path, (str, os.PathLike)) and os.path.isfile(path) else []
    with naming(target, WRITE_ERRNOS), \
            atomic_dir(target, overwrite=overwrite, replaceable=manifest.check_replaceable,
                       protect=protect) as folder:
        manifest.start(folder)
        try:
            converted = _streamed(path, folder, partition_by_topic, int(rows_per_file),
                                  duplicates, temp_dir)
        except stream.TopicsNotContiguous:
            if os.fspath(path) == "-":      # read once: the whole-file path cannot read it
                raise
            converted = _whole(path, folder, partition_by_topic, int(rows_per_file),
                               duplicates)
        manifest.finish(folder, rows_by_file(folder), kind="run", rows=converted.rows,
                        partitioned_by_topic=bool(partition_by_topic))
    return converted


def _streamed(path: Any, folder: str, by_topic: bool, rows_per_file: int,
              duplicates: DuplicatePolicy, temp_dir: Optional[str]) -> Converted:
    parts = _Parts(folder, rows_per_file, by_topic)
    reader = stream._TopicReader(path, duplicates)
    with tempfile.TemporaryDirectory(prefix="cumgain-convert-", dir=temp_dir) as scratch:
        spill = _TopicSpill(os.path.join(scratch, "topics.arrow")) if by_topic else None
        for topic in reader:
            documents = stream._documents(topic)
            docnos = list(documents)
            scores = np.fromiter(documents.values(), np.float64, len(documents))
            (spill or parts).add(topic.topic, docnos, scores)
        if spill is not None:
            spill.write_sorted(parts)
    parts.flush()
    stream.warn_dropped(reader.source, reader.dropped, duplicates, stacklevel=4)
    return Converted(parts.files, parts.rows, len(reader.topics), reader.source, True)


def _whole(path: Any, folder: str, by_topic: bool, rows_per_file: int,
           duplicates: DuplicatePolicy) -> Converted:
    """The run loaded whole (its topics are not contiguous), written by Dask."""
    for name in os.listdir(folder):         # what the streamed attempt wrote here
        if name.endswith(".parquet"):
            os.remove(os.path.join(folder, name))
    table = load_run(path, duplicates=duplicates)
    frame = dask_frame(table, "score", table.scores, by_topic, rows_per_file)
    frame.to_parquet(folder, write_index=by_topic, **PARQUET_OPTIONS,
                     compute_kwargs={"scheduler": "sync"})
    return Converted(frame.npartitions, int(table.offsets[-1]), len(table.topics),
                     table.source, False)
