"""The run's partitions for :mod:`cumgain.dask` and its averaged vectors
(:mod:`cumgain.scale.dask_vectors`): the run read and checked as a Dask DataFrame, each
topic brought into one partition (shuffled on query_id unless known to be), a
partition's rows normalised and put back in input order, the judgments as one task,
and the computing (``dask.compute``, with a progress bar on a local scheduler or a
distributed cluster).
"""
from __future__ import annotations

import os
import warnings
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from cumgain.common.optional import require
from cumgain.common.progress import ProgressOption, progress_bar, shown
from cumgain.exceptions import InputError
from cumgain.scale import manifest
from cumgain.scale.dask_judgments import _is_parquet, _judged, _Judgments
from cumgain.types import DuplicatePolicy, PathLike, TieRule

if TYPE_CHECKING:
    import dask
    import dask.dataframe as dd
    import pandas as pd
else:
    dask = require("dask", extra="dask", for_what="cumgain.dask")
    dd = require("dask.dataframe", extra="dask", for_what="cumgain.dask")
    pd = require("pandas", extra="dask", for_what="cumgain.dask")

RUN_COLUMNS = ("query_id", "doc_id", "score")
EVALUATED = "__evaluated__"      # per-topic row: evaluated (True) or a run-only topic
DROPPED = "__dropped__"          # per-topic row: duplicate rows dropped ("first", "last")
INPUT_PARTITION = "__input_partition__"
INPUT_ROW = "__input_row__"
ORDER_SENSITIVE_TIES = ("input_order", "random")


class ShuffleWarning(UserWarning):
    """The run was not known to be partitioned by topic and is shuffled on query_id."""


def read_run(path: PathLike) -> dd.DataFrame:
    """A Parquet run (file, folder or glob) as a Dask DataFrame, with divisions read
    from the files' statistics (so a topic-partitioned layout is recognised).

    A dataset cumgain wrote must match its manifest, and an unfinished one is refused
    (:func:`cumgain.scale.manifest.check_dataset`); other Parquet is read as it is."""
    manifest.check_dataset(path)
    if not _is_parquet(path):
        raise InputError(
            f"{os.fsdecode(os.fspath(path))} is not Parquet; cumgain.dask reads Parquet "
            "runs: convert a TREC run with 'cumgain convert RUN OUT.parquet "
            "--partition-by-topic', or stream it with cumgain.stream.evaluate_stream")
    return dd.read_parquet(os.fsdecode(os.fspath(path)), calculate_divisions=True)


# ---------------------------------------------------------------- partitions

def _as_run(run: Any) -> tuple:
    """``(frame, partitioned)``: the run as a Dask DataFrame with a query_id column,
    and whether a query_id index with known divisions says it is partitioned by topic."""
    if isinstance(run, (str, os.PathLike)):
        run = read_run(run)
    if isinstance(run, pd.DataFrame):
        raise InputError("the run is a pandas DataFrame: evaluate it with cumgain.evaluate, "
                         "or make it a Dask DataFrame (dask.dataframe.from_pandas)")
    if not isinstance(run, dd.DataFrame):
        raise InputError("the run must be a Dask DataFrame or a path to Parquet files, "
                         f"got {type(run).__name__}")
    indexed = run.index.name == "query_id"
    partitioned = indexed and run.known_divisions
    if indexed and "query_id" not in run.columns:
        run = run.reset_index()
    missing = [column for column in RUN_COLUMNS if column not in run.columns]
    if missing:
        raise InputError(f"run: missing column(s) {missing}; need {list(RUN_COLUMNS)}, "
                         f"found {list(run.columns)}")
    dtype = run.dtypes["score"]
    if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype) \
            or pd.api.types.is_complex_dtype(dtype):
        raise InputError(f"run: column 'score' must have a real numeric dtype, got {dtype}")
    return run[list(RUN_COLUMNS)], partitioned


def _normalise_run(frame: pd.DataFrame, keep_order: bool,
                   partition_info: Optional[dict] = None) -> pd.DataFrame:
    """Ids as str (as the evaluator reads them), scores as float64, nothing missing;
    with ``keep_order``, each row's input partition and position."""
    number = partition_info["number"] if partition_info else 0
    ids = {}
    for name in ("query_id", "doc_id"):
        series = frame[name].reset_index(drop=True)
        missing = series.isna().to_numpy()
        if missing.any():
            raise InputError(f"run partition {number}: {name} is missing at row "
                             f"{int(np.argmax(missing))} (0-based position in the partition)")
        ids[name] = series if isinstance(series.dtype, pd.StringDtype) else series.astype(str)
    scores = frame["score"].to_numpy(dtype=np.float64, na_value=np.nan)
    if np.isnan(scores).any():
        row = int(np.argmax(np.isnan(scores)))
        raise InputError(f"run partition {number}, row {row} (query_id "
                         f"{ids['query_id'].iloc[row]!r}, doc_id {ids['doc_id'].iloc[row]!r}): "
                         "score is NaN or missing")
    columns = {"query_id": ids["query_id"], "doc_id": ids["doc_id"], "score": scores}
    if keep_order:
        columns[INPUT_PARTITION] = np.full(len(frame), number, dtype=np.int64)
        columns[INPUT_ROW] = np.arange(len(frame), dtype=np.int64)
    return pd.DataFrame(columns)


def _inputs(qrels: Any, run: Any, partitioned_by_topic: Optional[bool], ties: TieRule,
            duplicates: DuplicatePolicy, judged: Optional[_Judgments] = None) -> tuple:
    """``(frame, shuffled, judged, judged_task)``: the run partitioned by topic (see
    :func:`_partitioned_run`), the judgments (read here unless given), and a task that
    hands them to workers."""
    keep_order = ties in ORDER_SENSITIVE_TIES or duplicates != "error"
    frame, shuffled = _partitioned_run(run, partitioned_by_topic, keep_order)
    if judged is None:
        judged = _judged(qrels, duplicates)
    return frame, shuffled, judged, dask.delayed(judged, pure=False, traverse=False)


def _prepared_task(judged: _Judgments, duplicates: DuplicatePolicy) -> Any:
    """The judgments as one task for the partitions' evaluations: the prepared table
    (see :class:`_Judgments`); or, where the native path does not take the run's policy
    (``duplicates="first"`` or ``"last"``) or the qrels, the judgments evaluated as dicts."""
    if duplicates == "error" and judged.prepared is not None:
        return dask.delayed(judged.prepared, pure=False, traverse=False)
    return _dict_task(judged)


def _dict_task(judged: _Judgments) -> Any:
    """The judgments for the dict paths, as one task: ``by_topic`` (the table travels
    once, in it, and each worker builds the dicts of the topics it is asked for)."""
    return dask.delayed(replace(judged, prepared=None), pure=False, traverse=False)


def _partitioned_run(run: Any, partitioned_by_topic: Optional[bool], keep_order: bool) -> tuple:
    """``(frame, shuffled)``: the normalised run with each topic in one partition."""
    frame, partitioned = _as_run(run)
    if partitioned_by_topic is not None:
        partitioned = bool(partitioned_by_topic)
    keep_order = keep_order and not partitioned
    meta = _normalise_run(frame._meta, keep_order)
    frame = frame.map_partitions(_normalise_run, keep_order, meta=meta)
    if partitioned:
        return frame, False
    if partitioned_by_topic is None:      # the caller did not ask for the shuffle: say so
        warnings.warn(
            "the run is not known to be partitioned by topic, so it is shuffled on query_id "
            "(write it with 'cumgain convert --partition-by-topic', or pass "
            "partitioned_by_topic=True if each topic is already in one partition)",
            ShuffleWarning, stacklevel=3)
    return frame.shuffle("query_id", ignore_index=True), True


def _in_input_order(frame: pd.DataFrame) -> pd.DataFrame:
    """The partition's rows in input order, where the shuffle noted it (the native
    ranker keeps each topic's rows in the order given)."""
    if INPUT_ROW not in frame.columns:
        return frame
    return frame.iloc[np.lexsort((frame[INPUT_ROW].to_numpy(),
                                  frame[INPUT_PARTITION].to_numpy()))]


def _run_by_topic(frame: pd.DataFrame, duplicates: DuplicatePolicy) -> tuple:
    """``({topic: {doc: score}}, {topic: rows dropped})`` of one partition, each
    topic's documents in input order, under the duplicates policy."""
    if INPUT_ROW in frame.columns:
        order = np.lexsort((frame[INPUT_ROW].to_numpy(), frame[INPUT_PARTITION].to_numpy()))
        frame = frame.iloc[order]
    codes, topics = pd.factorize(frame["query_id"].to_numpy(dtype=object))
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(topics) + 1)).tolist()
    docs = frame["doc_id"].to_numpy(dtype=object)[order].tolist()
    scores = frame["score"].to_numpy(dtype=np.float64)[order].tolist()
    run_by_topic, dropped = {}, {}
    for t, topic in enumerate(topics.tolist()):
        a, b = bounds[t], bounds[t + 1]
        documents = dict(zip(docs[a:b], scores[a:b]))
        if len(documents) != b - a:
            rows = list(zip(docs[a:b], scores[a:b]))
            if duplicates == "last":    # the last occurrence, in its place: the rows
                rows.reverse()          # backwards, each docno's first kept
            documents = {}
            for doc, score in rows:
                if doc in documents:
                    if duplicates == "error":
                        raise InputError(f"run: duplicate doc_id {doc!r} in query_id {topic!r} "
                                         "(duplicates='first' keeps the first occurrence, "
                                         "'last' the last)")
                    dropped[topic] = dropped.get(topic, 0) + 1
                    continue
                documents[doc] = score
            if duplicates == "last":
                documents = dict(reversed(documents.items()))
        run_by_topic[topic] = documents
    return run_by_topic, dropped


def _check_one_partition_per_topic(topics: pd.Index) -> None:
    repeated = topics[topics.duplicated()]
    if len(repeated):
        raise InputError(
            f"query_id {repeated[0]!r} has rows in several partitions of the run, which was "
            "taken as partitioned by topic (partitioned_by_topic=True, or a query_id index "
            "with divisions); pass partitioned_by_topic=False to shuffle it")


# ---------------------------------------------------------------- computing

_Callback = require("dask.callbacks", extra="dask", for_what="cumgain.dask").Callback


class _TaskBar(_Callback):
    """A progress bar counting the tasks of a local scheduler as they finish."""

    def __init__(self, description: str, progress: ProgressOption):
        super().__init__()
        self.description, self.progress, self.bar = description, progress, None

    def _start_state(self, dsk: Any, state: dict) -> None:
        if self.bar is None:            # the outermost computation only
            total = sum(len(state[name]) for name in ("ready", "waiting", "running",
                                                      "finished"))
            self.bar = progress_bar(total, self.description, self.progress)

    def _posttask(self, key: Any, result: Any, dsk: Any, state: dict, worker_id: Any) -> None:
        self.bar.update()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _distributed_client(collections: tuple, compute_options: dict) -> Any:
    """The distributed Client ``dask.compute`` would use, or None for a local scheduler."""
    get = dask.base.get_scheduler(scheduler=compute_options.get("scheduler"),
                                  collections=list(collections))
    client = getattr(get, "__self__", None)
    return client if type(client).__name__ == "Client" and hasattr(client, "persist") \
        else None


def _compute(collections: tuple, progress: ProgressOption, description: str,
             compute_options: dict) -> tuple:
    """``dask.compute(*collections, **compute_options)``, with a progress bar when
    :func:`cumgain.common.progress.shown` says so (see the module docstring)."""
    if not shown(progress):
        return dask.compute(*collections, **compute_options)
    client = _distributed_client(collections, compute_options)
    if client is None:
        bar = _TaskBar(description, progress)
        try:
            with bar:
                return dask.compute(*collections, **compute_options)
        finally:
            bar.close()
    distributed = require("distributed", extra="dask", for_what="progress on a Dask cluster")
    persisted = client.persist(list(collections))
    _show_progress(distributed.futures_of(persisted), description, progress)
    return dask.compute(*persisted, **compute_options)


def _show_progress(futures: list, description: str, progress: ProgressOption) -> None:
    """A progress bar counting a distributed cluster's ``futures`` as they finish."""
    distributed = require("distributed", extra="dask", for_what="progress on a Dask cluster")
    with progress_bar(len(futures), description, progress) as bar:
        for _ in distributed.as_completed(futures):
            bar.update()



ShuffleWarning.__module__ = read_run.__module__ = "cumgain.dask"   # (where users find them)
