"""Evaluate runs on Dask: the same numbers as :func:`cumgain.evaluate`, at any size.

Install with ``pip install ".[dask]"`` (from the source tree) (dask[dataframe], distributed, pyarrow); without
it, importing this module raises a :class:`~cumgain.exceptions.MissingDependencyError`
that says so.

How it works
------------
1. **Partition by topic.** The run (a Dask DataFrame with columns ``query_id, doc_id,
   score``, or a path or glob of Parquet files) must have every topic's rows in one
   partition. A run with a ``query_id`` index and known divisions (what
   ``cumgain convert --partition-by-topic`` writes) is taken as it is; so is any run
   when ``partitioned_by_topic=True``. Otherwise it is **shuffled** on ``query_id``
   (hash partitioning, dask's shuffle), with a :class:`ShuffleWarning` and
   ``result.shuffled`` set. The shuffle keeps each topic's rows in input order when
   that order matters (``ties="input_order"`` or ``"random"``, ``duplicates="first"``
   or ``"last"``).
2. **Evaluate each partition with the engine.** Every partition (a pandas frame) goes
   to :func:`cumgain.evaluate` as it is, in one thread: the native ranker reads its
   columns in place (:mod:`cumgain.io.columns`). The qrels are read once on the client
   (they are small next to a run) and shipped to each worker once, as an Arrow table
   (topic ids dictionary-encoded) that the worker prepares natively when it receives it
   (:class:`cumgain.io.native.reader.PreparedQrelsTable`, from
   :func:`cumgain.io.native.reader.prepare_qrels_once`: checked once, on the client, and not
   indexed, as each topic is ranked once). Qrels that are a table (pandas, Arrow,
   Dask, Parquet) or a TREC file are read natively on the client too; a dict goes
   through :func:`cumgain.trec_io.load_qrels` first (about
   1 us per judgment; see :mod:`cumgain.scale.dask_judgments`). A run dataset cumgain wrote
   partitioned by topic is read file by file by pyarrow straight into Arrow (no pandas
   frame). Under ``duplicates="first"`` or ``"last"``, or with ids the native reader
   does not take, partitions and qrels go as ``{topic: {doc: score}}`` dicts instead.
3. **Combine exactly.** Every measure is a per-topic value and every ranking policy
   (``ties``, ``score_precision``, ``depth``, ``judged_only``, ``relevance_level``) looks
   only inside a topic, so the per-topic values are the single-machine ones, bit for
   bit. The means are computed from the per-topic values (one float per topic and
   measure is gathered on the client), in topic order and with the evaluator's rule,
   so they are **bit-identical** to :func:`cumgain.evaluate` as well. Topic policies
   (``topics="both"``, ``"qrels"``, ``"strict"``) and the reports of run-only, missing
   and empty topics are applied to the whole run, as the evaluator does.

:func:`average_vectors` gives the averaged CG/DCG/ideal/nCG/nDCG vectors as a true
reduction: each partition returns, per rank, the sum over its topics and their count
(``6 x depth`` floats), and the client adds them. That is
:func:`cumgain.vectors.avg_vect` over all topics up to the order of the additions:
with n topics and unit roundoff u = 2**-53, each component differs from
``avg_vect`` by at most ``2 n u mean_t |x_t|`` (two sequential summations of the same
n terms, each within ``(n - 1) u sum |x_t|`` of the exact sum; Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., eq. 4.4); in practice a few ulps.

Progress: ``progress=True`` (or ``"auto"``, on a terminal only) of :func:`evaluate`,
:meth:`DaskEvaluation.compute` and :func:`average_vectors` shows a bar on stderr
(:func:`cumgain.common.progress.progress_bar`). On dask's local schedulers (threads, processes,
sync) it counts the graph's tasks as they finish (a :class:`dask.callbacks.Callback`); on
a distributed client it counts the partitions' results as they finish (the collection is
persisted, its futures followed, then gathered as ``dask.compute`` would). The results
are the same with or without it.

``import dask.dataframe`` here is the dask package: this module's own name does not
shadow it (absolute imports).
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Optional, Union

import numpy as np

from cumgain.common.optional import require
from cumgain.common.progress import ProgressOption, check_progress, shown
from cumgain.engine.evaluator import evaluate as evaluate_in_memory
from cumgain.engine.results import Evaluation
from cumgain.exceptions import WRITE_ERRNOS, InputError, naming
from cumgain.io import columns
from cumgain.io.atomic import atomic_dir
from cumgain.io.native.reader import PreparedQrelsTable
from cumgain.measures import Measure
from cumgain import stream
from cumgain.scale import manifest
from cumgain.scale.dask_judgments import _judged, _natural_key
from cumgain.scale.dask_partitions import (DROPPED, EVALUATED, RUN_COLUMNS, ShuffleWarning,
                                           _check_one_partition_per_topic, _compute,
                                           _distributed_client, _in_input_order, _inputs,
                                           _prepared_task, _run_by_topic, _show_progress,
                                           read_run)
from cumgain.scale.dask_vectors import AveragedVectors, average_vectors
from cumgain.scale.parquet import DEFAULT_ROWS_PER_FILE, PARQUET_OPTIONS, dask_frame, rows_by_file
from cumgain.trec_io import DuplicatesDroppedWarning, Qrels, Run
from cumgain.types import (
    DuplicatePolicy,
    PathLike,
    ScorePrecision,
    TieRule,
    TopicPolicy,
)

if TYPE_CHECKING:
    import dask
    import dask.dataframe as dd
    import pandas as pd
else:
    dask = require("dask", extra="dask", for_what="cumgain.dask")
    dd = require("dask.dataframe", extra="dask", for_what="cumgain.dask")
    pd = require("pandas", extra="dask", for_what="cumgain.dask")

__all__ = ["AveragedVectors", "DaskEvaluation", "ShuffleWarning", "average_vectors",
           "evaluate", "read_run", "write_parquet"]

# ---------------------------------------------------------------- writing

def write_parquet(table: Union[Run, Qrels], path: PathLike, *,
                  partition_by_topic: bool = False, rows_per_file: int = DEFAULT_ROWS_PER_FILE,
                  overwrite: bool = False) -> int:
    """Write a loaded run or qrels (:func:`cumgain.trec_io.load_run` / ``load_qrels``) to
    a Parquet folder through Dask; return the number of files written.

    Columns ``query_id, doc_id, score`` (runs) or ``query_id, doc_id, relevance``
    (qrels); ids as strings, values as float64; each topic's rows in input order.

    * ``partition_by_topic=False``: rows in the table's order (topics by first
      appearance), ``rows_per_file`` rows per file ``part.<i>.parquet``, no index.
    * ``partition_by_topic=True``: topics sorted by id (byte order), ``query_id`` written
      as the index, each file ``part.<i>.parquet`` holding about ``rows_per_file``
      rows of **whole topics** (a topic never spans two files, so a file that holds a
      large topic is larger). The files' min/max statistics give Dask the divisions, so
      :func:`read_run` / :func:`evaluate` use the layout without a shuffle.

    The folder is complete or absent (:mod:`cumgain.scale.manifest`): it is written as a
    temporary sibling marked unfinished, gets the manifest ``_cumgain_manifest.json``
    last, and is renamed to ``path`` only then. An existing ``path`` is refused unless
    ``overwrite=True``, and even then replaced only if it is a dataset cumgain wrote
    (its manifest lists every file in it), not the current directory or a parent of
    it, and does not hold the table's source file.
    """
    if isinstance(table, Run):
        kind, value_name, values = "run", "score", table.scores
    elif isinstance(table, Qrels):
        kind, value_name, values = "qrels", "relevance", table.relevance
    else:
        raise InputError(f"expected a Run or Qrels, got {type(table).__name__}")
    if isinstance(rows_per_file, bool) or not isinstance(rows_per_file, (int, np.integer)) \
            or rows_per_file < 1:
        raise InputError(f"rows_per_file must be a positive integer, got {rows_per_file!r}")
    protect = [table.source] if os.path.isfile(table.source) else []
    with naming(path, WRITE_ERRNOS), \
            atomic_dir(os.fsdecode(os.fspath(path)), overwrite=overwrite,
                       replaceable=manifest.check_replaceable, protect=protect) as folder:
        manifest.start(folder)
        frame = dask_frame(table, value_name, values, partition_by_topic, rows_per_file)
        # In this process, one file at a time: an error stops every writer before
        # the folder is removed (dask's threads would go on writing into it).
        frame.to_parquet(folder, write_index=partition_by_topic,
                         **PARQUET_OPTIONS,
                         compute_kwargs={"scheduler": "sync"})
        manifest.finish(folder, rows_by_file(folder), kind=kind, rows=int(len(values)),
                        partitioned_by_topic=bool(partition_by_topic))
    return frame.npartitions


# ---------------------------------------------------------------- partitions

def _results_frame(topics: list, values: np.ndarray, evaluated: np.ndarray,
                   dropped: np.ndarray, measures: tuple) -> pd.DataFrame:
    """Per-topic rows: a float64 column per measure (object for text measures)."""
    columns = {m.name: np.ascontiguousarray(values[:, j], dtype=object if m.kind == "text"
                                            else np.float64)
               for j, m in enumerate(measures)}
    columns[EVALUATED] = np.asarray(evaluated, dtype=bool)
    columns[DROPPED] = np.asarray(dropped, dtype=np.int64)
    return pd.DataFrame(columns, index=pd.Index(topics, dtype=str, name="query_id"))


def _evaluate_partition(frame: pd.DataFrame, judged: Any,
                        setup: stream.EvaluationSetup) -> pd.DataFrame:
    """One row per topic of the partition: the measures of the judged topics, and
    NaN rows flagged not evaluated for topics without judgments. With prepared
    judgments (see _prepared_task) the partition goes to :func:`cumgain.evaluate` as
    it is (the native reader ranks its columns in place); with dicts, as dicts."""
    if isinstance(judged, PreparedQrelsTable):
        return _evaluate_columns(frame, judged, setup)
    run_by_topic, dropped = _run_by_topic(frame, setup.duplicates)
    topics, values = stream.evaluate_piece(run_by_topic, judged, setup)
    run_only = [topic for topic in run_by_topic if topic not in judged.by_topic]
    values = np.concatenate([values, np.full((len(run_only), len(setup.names)), np.nan)])
    index = topics + run_only
    return _results_frame(index, values, np.arange(len(index)) < len(topics),
                          np.array([dropped.get(topic, 0) for topic in index]), setup.measures)


def _evaluate_columns(frame: Any, judged: PreparedQrelsTable,
                      setup: stream.EvaluationSetup) -> pd.DataFrame:
    """_evaluate_partition for prepared judgments: the partition's rows (in input
    order when the shuffle noted it) evaluated by the columnar path, in the one thread
    Dask gives the task (``threads_per_worker`` sets a worker's parallelism).
    ``frame``: a pandas frame, or a table :mod:`cumgain.io.columns` reads."""
    if isinstance(frame, pd.DataFrame):
        frame = _in_input_order(frame)[list(RUN_COLUMNS)]
    result = evaluate_in_memory(judged, frame,
                                list(setup.spellings),
                                topics="both", duplicates="error", warn=False, threads=1,
                                **setup.piece_policies())
    topics, run_only = list(result.topics), list(result.run_only_topics)
    values = np.column_stack([result.values[name] for name in setup.names]) \
        .reshape(len(topics), len(setup.names)) if topics else \
        np.zeros((0, len(setup.names)))
    values = np.concatenate([values, np.full((len(run_only), len(setup.names)), np.nan)])
    index = topics + run_only
    return _results_frame(index, values, np.arange(len(index)) < len(topics),
                          np.zeros(len(index), dtype=np.int64), setup.measures)


def _topic_files(run: Any, partitioned_by_topic: Optional[bool]) -> Optional[list]:
    """The files of a run dataset cumgain wrote partitioned by topic (its manifest says
    so: ``cumgain convert --partition-by-topic``, :func:`write_parquet`), given as its
    folder, in Dask's order; None for any other run (read through Dask)."""
    if partitioned_by_topic is False or not isinstance(run, (str, os.PathLike)):
        return None
    folder = os.fsdecode(os.fspath(run))
    if not os.path.isdir(folder):
        return None
    info = manifest.check_dataset(folder)
    if info is None or info.get("kind") != "run" or not info.get("partitioned_by_topic"):
        return None
    names = sorted((entry["name"] for entry in info["files"]), key=_natural_key)
    return [os.path.join(folder, name) for name in names]


def _evaluate_file(path: str, judged: PreparedQrelsTable,
                   setup: stream.EvaluationSetup) -> pd.DataFrame:
    """_evaluate_columns for one file of a topic-partitioned dataset, read by pyarrow
    straight into Arrow (query ids dictionary-encoded, as they repeat) and ranked from
    its buffers, without a pandas frame; errors name the file."""
    pq = require("pyarrow.parquet", extra="dask", for_what="cumgain.dask")
    try:
        table = pq.ParquetFile(path, read_dictionary=["query_id"]).read(   # (a chunk per
            columns=list(RUN_COLUMNS), use_threads=False)                  # row group)
    except (OSError, ValueError) as error:   # pyarrow's ArrowInvalid is a ValueError
        raise InputError(f"{path}: {error}") from None
    return _evaluate_columns(columns.Renamed(table, (), source=path), judged, setup)


def _file_tasks(files: Iterable[str], judgments: Any, setup: stream.EvaluationSetup
                ) -> tuple:
    """A task per file of a topic-partitioned dataset (:func:`_evaluate_file`), all
    taking ``judgments`` (the prepared table as a task, or the Future of one) and
    the setup as one task (passed as it is, Dask rebuilds a dataclass in a task of its
    own for each file)."""
    setup_task = dask.delayed(setup, pure=False, traverse=False)
    return tuple(dask.delayed(_evaluate_file, pure=True)(path, judgments, setup_task)
                 for path in files)


def _warn_dropped(results: pd.DataFrame, duplicates: DuplicatePolicy,
                  stacklevel: int) -> None:
    dropped = results[DROPPED]
    if dropped.sum():
        warnings.warn(
            f"run: dropped {int(dropped.sum())} duplicate (query_id, doc_id) row(s), keeping "
            f"the {duplicates} occurrence of each (e.g. in query_id {dropped[dropped > 0].index[0]!r})",
            DuplicatesDroppedWarning, stacklevel=stacklevel + 1)


def _missing_rows(flags: list, judged: stream.JudgedTopics,
                  setup: stream.EvaluationSetup) -> pd.DataFrame:
    """The per-topic rows that come from the qrels alone: the missing topics under
    ``topics="qrels"`` (after checking ``"strict"`` and one partition per topic)."""
    run_topics = pd.Index([], dtype=str).append([flag.index for flag in flags])
    _check_one_partition_per_topic(run_topics)
    _, missing = stream.topic_sets(run_topics, judged, setup)
    if setup.policies["topics"] != "qrels":
        missing = ()
    topics, values = stream.evaluate_missing(list(missing), judged, setup)
    return _results_frame(topics, values, np.ones(len(topics), dtype=bool),
                          np.zeros(len(topics), dtype=np.int64), setup.measures)[setup.names]


# ---------------------------------------------------------------- evaluate

@dataclass
class DaskEvaluation:
    """A lazy evaluation: :attr:`per_topic` as a Dask DataFrame, :meth:`compute` for
    the :class:`~cumgain.Evaluation` (per-topic values and means) that
    :func:`cumgain.evaluate` would give on the whole run.

    ``shuffled`` says whether the run was shuffled on query_id to partition it by topic.
    """

    setup: stream.EvaluationSetup
    shuffled: bool
    partition_results: Any        # dd.DataFrame: a row per run topic, with the flag columns
    judged: stream.JudgedTopics
    judged_task: Any              # the qrels as one dask task, shared by all partitions
    progress: ProgressOption = False      # compute()'s default
    partition_files: tuple = ()   # a topic-partitioned dataset's files, a task each (see
                                  # _file_tasks), which compute() runs as they are

    @property
    def measures(self) -> tuple[Measure, ...]:
        return self.setup.measures

    @property
    def partition_tasks(self) -> tuple:
        """A task per file of :attr:`partition_files`, the judgments a task in the graph
        (what :attr:`partition_results` wraps); on a distributed cluster :meth:`compute`
        submits the judgments' task and the files' tasks itself instead."""
        return _file_tasks(self.partition_files, _prepared_task(self.judged, "error"),
                           self.setup)

    @property
    def per_topic(self) -> dd.DataFrame:
        """One row per evaluated topic (index ``query_id``, a column per measure), lazy
        and in no particular order; under ``topics="qrels"`` it includes the missing
        topics. ``topics="strict"`` and the one-partition-per-topic check raise when
        it is computed."""
        results = self.partition_results
        names = self.setup.names
        evaluated = results[results[EVALUATED]][names]
        extra = dask.delayed(_missing_rows)(results[EVALUATED].to_delayed(), self.judged_task,
                                            self.setup)
        meta = _results_frame([], np.zeros((0, len(names))), np.zeros(0, dtype=bool),
                              np.zeros(0, dtype=np.int64), self.setup.measures)[names]
        return dd.concat([evaluated, dd.from_delayed([extra], meta=meta, verify_meta=False)])

    def compute(self, *, progress: Optional[ProgressOption] = None,
                **compute_options: Any) -> Evaluation:
        """Run the evaluation; ``compute_options`` go to ``dask.compute``. ``progress``:
        False, True or "auto" (see the module docstring); None takes :func:`evaluate`'s.

        Returns the :class:`~cumgain.Evaluation` of the whole run: per-topic values
        bit-identical to :func:`cumgain.evaluate`'s, and means bit-identical too
        (computed from them in topic order with the evaluator's rule).
        """
        progress = self.progress if progress is None else check_progress(progress)
        if self.partition_files:    # a task per file and nothing else: fewer round trips
            client = _distributed_client((self.partition_results,), compute_options)
            if client is None:
                parts = _compute(self.partition_tasks, progress, "cumgain.dask: evaluate",
                                 compute_options)
            else:
                parts = _files_on_cluster(client, self, progress, compute_options)
            results = pd.concat(parts)
        else:
            (results,) = _compute((self.partition_results,), progress,
                                  "cumgain.dask: evaluate", compute_options)
        _check_one_partition_per_topic(results.index)
        _warn_dropped(results, self.setup.duplicates, stacklevel=2)
        evaluated = results[results[EVALUATED]]
        text = any(m.kind == "text" for m in self.setup.measures)
        # the topics as lists first: iterating an Arrow-backed index costs 1.4 us a topic
        piece = (evaluated.index.tolist(),
                 evaluated[self.setup.names].to_numpy(dtype=object if text else np.float64))
        return stream.combine([piece], results.index.tolist(), self.judged, self.setup,
                              stacklevel=2)   # (a Parquet run has no tag: runid is "")


def _held(judgments: PreparedQrelsTable) -> PreparedQrelsTable:
    """The judgments, as the result of a task whose definition holds them (so that the
    scheduler can compute them again wherever it needs them)."""
    return judgments


def _files_on_cluster(client: Any, lazy: DaskEvaluation, progress: ProgressOption,
                      compute_options: dict) -> list:
    """The results of :attr:`DaskEvaluation.partition_files` computed on a distributed
    cluster: the prepared judgments as one task that holds them (:func:`_held`), which
    the scheduler can run again on another worker if the one holding its result is
    lost (data scattered to a worker cannot be recomputed: losing that worker failed
    the job with "lost dependencies"; the task costs about 0.02 s more for 1.1M
    judgments, 0.070-0.091 s against 0.053-0.066 s scattered straight to a worker);
    other workers fetch them from the worker holding them when their first file needs
    them, which was faster than a broadcast (0.46-0.49 s against 0.50-0.52 s for 10M
    rows on 2 workers); and a task submitted per file as it is (``client.map``: no
    graph to build and optimise, 0.02-0.03 s less for 16 files than
    ``dask.compute``); with compute options other than ``scheduler`` (``retries``,
    ``resources``, ...), the tasks go through ``dask.compute``, which takes them all."""
    judgments = client.submit(_held, lazy.judged.prepared, pure=False)
    if set(compute_options) - {"scheduler"}:
        return list(_compute(_file_tasks(lazy.partition_files, judgments, lazy.setup),
                             progress, "cumgain.dask: evaluate", compute_options))
    futures = client.map(_evaluate_file, list(lazy.partition_files), judged=judgments,
                         setup=lazy.setup, pure=False)
    if shown(progress):
        _show_progress(futures, "cumgain.dask: evaluate", progress)
    return client.gather(futures)


def evaluate(qrels: Any, run: Any, measures: Union[str, Iterable[Union[str, Measure]]], *,
             relevance_level: float = 1, judged_only: bool = False,
             depth: Optional[int] = None, topics: TopicPolicy = "both",
             ties: TieRule = "docno_desc", score_precision: ScorePrecision = "float64",
             seed: Optional[int] = 0, duplicates: DuplicatePolicy = "error",
             warn: bool = True, partitioned_by_topic: Optional[bool] = None,
             progress: ProgressOption = False) -> DaskEvaluation:
    """Evaluate a Dask run against qrels; lazy until :meth:`DaskEvaluation.compute`.

    ``run``: a Dask DataFrame with columns ``query_id, doc_id, score`` (``query_id``
    may be the index) or a path / glob of Parquet files. ``qrels``: a Dask or pandas
    DataFrame ``query_id, doc_id, relevance``, Parquet, a TREC qrels file or a dict.
    Measures and policies are those of :func:`cumgain.evaluate`, checked here, now.
    ``partitioned_by_topic``: None (trust a query_id index with known divisions,
    otherwise shuffle), True (each topic is in one partition: no shuffle; checked when
    computed), False (always shuffle). ``progress``: the default of
    :meth:`DaskEvaluation.compute` (False, True or "auto"; see the module docstring).

    Example::

        run = dd.from_pandas(pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"],
                                           "score": [0.9, 0.8, 0.1]}), npartitions=1)
        evaluate({"q1": {"a": 2, "b": 0, "c": 1}}, run, ["P_2"]).compute().means["P_2"]  # 0.5
    """
    if partitioned_by_topic not in (None, True, False):
        raise InputError(f"partitioned_by_topic must be None, True or False, "
                         f"got {partitioned_by_topic!r}")
    check_progress(progress)
    setup = stream.prepare(measures, relevance_level=relevance_level, judged_only=judged_only,
                           depth=depth, topics=topics, ties=ties,
                           score_precision=score_precision, seed=seed, duplicates=duplicates,
                           warn=warn)
    meta = _results_frame([], np.zeros((0, len(setup.names))), np.zeros(0, dtype=bool),
                          np.zeros(0, dtype=np.int64), setup.measures)
    files = _topic_files(run, partitioned_by_topic) if duplicates == "error" else None
    judged = _judged(qrels, duplicates) if files is not None else None
    if judged is not None and judged.prepared is not None:
        # cumgain's own topic-partitioned dataset: a task per file, read into Arrow
        # and ranked from its buffers (no Dask Parquet reader, no pandas frames)
        judged_task = dask.delayed(judged, pure=False, traverse=False)
        results = dd.from_delayed(list(_file_tasks(files, _prepared_task(judged, duplicates),
                                                   setup)), meta=meta, verify_meta=False)
        shuffled = False
    else:
        frame, shuffled, judged, judged_task = _inputs(qrels, run, partitioned_by_topic, ties,
                                                       duplicates, judged)
        files = ()
        results = frame.map_partitions(_evaluate_partition, _prepared_task(judged, duplicates),
                                       setup, meta=meta,
                                       enforce_metadata=False, align_dataframes=False)
    return DaskEvaluation(setup=setup, shuffled=shuffled, partition_results=results,
                          judged=judged, judged_task=judged_task, progress=progress,
                          partition_files=tuple(files))
