"""Evaluate a run file larger than memory, one chunk of whole topics at a time.

:func:`evaluate_stream` reads a TREC run file (plain or gzip, a path, ``"-"`` or a binary
stream) block by block with the compiled reader
(:class:`cumgain.io.native.tables.StreamedTopics`: the grammar and errors of
:mod:`cumgain.trec_io`, with file, line and text), gathers
``topics_per_chunk`` complete topics, evaluates them with :func:`cumgain.evaluate`, keeps
only their per-topic values, and moves on. Memory is bounded by one chunk plus a few
1 MiB read blocks, not by the file. The qrels are held in memory (they are small next to
the run).

The input must be **topic-contiguous**: each topic's lines together (any topic order).
A topic that appears again after another topic is a :class:`FormatError` naming the
line. :func:`sort_run_by_topic` makes any run file contiguous by an external merge sort.

Exactness. Every measure is computed per topic, so evaluating topics in pieces gives
the single-machine per-topic values bit for bit: the ranking policies (``ties``,
``score_precision``, ``depth``, ``judged_only``, ``relevance_level``) only look inside a
topic, and one seed is drawn once for ``ties="random"``. The means are then computed
from all per-topic values, in the evaluator's topic order (byte order of the id) and
with its rule (:func:`cumgain.engine.evaluator.aggregate`), so they are bit-identical too.
:mod:`cumgain.dask` combines its partitions with the same functions (:func:`prepare`,
:func:`evaluate_piece`, :func:`combine`).

Differences from :func:`cumgain.evaluate` on the same file: errors are raised in file
order as the file streams (a duplicate docno early in the file is reported before a
malformed line later on; the whole-file reader reports format errors first), and
chunks before the error have been evaluated in vain.
"""
from __future__ import annotations

import contextlib
import heapq
import os
import tempfile
import warnings
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterable, Iterator, Mapping, Optional, Union

import numpy as np

from cumgain import trec_io
from cumgain.engine.evaluator import evaluate
from cumgain.engine.results import Evaluation, TopicsWarning
from cumgain.io.atomic import atomic_open, check_file_target
from cumgain.engine.results import aggregate, topics_warning
from cumgain.exceptions import FormatError, InputError, naming
from cumgain.measures import Measure
from cumgain.types import DuplicatePolicy, PathLike, ScorePrecision, TieRule, TopicPolicy

__all__ = ["EvaluationSetup", "JudgedTopics", "combine", "evaluate_missing", "evaluate_piece",
           "evaluate_stream", "judged_topics", "prepare", "sort_run_by_topic", "topic_sets"]

DEFAULT_TOPICS_PER_CHUNK = 1000
DEFAULT_MEMORY_LIMIT = 256 << 20   # bytes of run lines held by sort_run_by_topic
LINE_OVERHEAD = 120                # bytes per held line beyond its text (Python objects)
MERGE_FAN_IN = 64                  # sorted temporary files merged at once
PARSE_BYTES = 1 << 20              # parse the run text 1 MiB at a time (see _TopicReader)

#: A piece's per-topic values: its evaluated topics and a topics x measures matrix.
Piece = tuple[list[str], np.ndarray]


# ---------------------------------------------------------------- pieces and their sum

@dataclass(frozen=True)
class EvaluationSetup:
    """Measures and policies, checked once by the engine and applied to every piece.

    ``policies`` are :attr:`Evaluation.policies` as the engine normalised them (with
    the seed drawn once, so every piece breaks random ties with the same seed).
    """

    spellings: tuple[Union[str, Measure], ...]
    measures: tuple[Measure, ...]
    policies: dict[str, Any]
    duplicates: DuplicatePolicy
    warn: bool

    @property
    def names(self) -> list[str]:
        return [measure.name for measure in self.measures]

    def piece_policies(self) -> dict[str, Any]:
        """The ranking policies of one piece (the topic policy is applied at the end)."""
        return {key: value for key, value in self.policies.items() if key != "topics"}


def prepare(measures: Union[str, Iterable[Union[str, Measure]]], *,
            relevance_level: float = 1, judged_only: bool = False,
            depth: Optional[int] = None, topics: TopicPolicy = "both",
            ties: TieRule = "docno_desc", score_precision: ScorePrecision = "float64",
            seed: Optional[int] = 0, duplicates: DuplicatePolicy = "error",
            warn: bool = True) -> EvaluationSetup:
    """Check the measures and policies with the engine itself (an evaluation of no
    topics, which raises exactly what :func:`cumgain.evaluate` raises for them)."""
    spellings = (measures,) if isinstance(measures, str) else tuple(measures)
    probe = evaluate({}, {}, list(spellings), relevance_level=relevance_level,
                     judged_only=judged_only, depth=depth, topics=topics, ties=ties,
                     score_precision=score_precision, seed=seed, duplicates=duplicates,
                     warn=False)
    return EvaluationSetup(spellings=spellings, measures=tuple(probe.measures),
                           policies=dict(probe.policies), duplicates=duplicates,
                           warn=bool(warn))


@dataclass(frozen=True)
class JudgedTopics:
    """The qrels as ``{topic: {docid: level}}`` for topics with judgments, and the
    qrels topics without any (reported, never evaluated)."""

    by_topic: Mapping[str, Mapping[str, float]]
    empty: tuple[str, ...]

    def subset(self, topics: Iterable[str]) -> dict[str, Mapping[str, float]]:
        return {topic: self.by_topic[topic] for topic in topics}


def judged_topics(qrels: Any, duplicates: DuplicatePolicy = "error") -> JudgedTopics:
    """Load qrels in any form :func:`cumgain.trec_io.load_qrels` takes."""
    table = trec_io.load_qrels(qrels, duplicates=duplicates)
    by_topic = {topic: docs for topic, docs in table.to_dict().items() if docs}
    empty = tuple(topic for topic, n in zip(table.topics, np.diff(table.offsets)) if n == 0)
    return JudgedTopics(by_topic=by_topic, empty=empty)


def evaluate_piece(run_by_topic: dict[str, dict[str, float]], judged: JudgedTopics,
                   setup: EvaluationSetup) -> Piece:
    """Evaluate the judged topics of a piece of the run (whole topics only).

    ``run_by_topic`` is ``{topic: {docid: score}}`` with each topic's documents in
    input order. Returns ``(topics, values)``: the evaluated topics (sorted) and a
    ``len(topics) x len(measures)`` float64 matrix. Topics without judgments are
    left out (the caller reports them as run-only topics).
    """
    topics = [topic for topic in run_by_topic if topic in judged.by_topic]
    if not topics:
        return [], np.zeros((0, len(setup.measures)))
    result = evaluate(judged.subset(topics), {topic: run_by_topic[topic] for topic in topics},
                      list(setup.spellings), topics="both", duplicates="error", warn=False,
                      **setup.piece_policies())
    values = np.column_stack([result.values[name] for name in setup.names])
    return list(result.topics), values.reshape(len(result.topics), len(setup.measures))


def evaluate_missing(missing: list[str], judged: JudgedTopics, setup: EvaluationSetup
                     ) -> Piece:
    """Per-topic values of qrels topics absent from the run (``topics="qrels"``): the
    engine's own values for an empty ranking (0 for most measures, but ``num_rel``
    counts the judgments and ``gm_map`` is log(1e-5))."""
    if not missing:
        return [], np.zeros((0, len(setup.measures)))
    result = evaluate(judged.subset(missing), {}, list(setup.spellings), topics="qrels",
                      duplicates="error", warn=False, **setup.piece_policies())
    values = np.column_stack([result.values[name] for name in setup.names])
    return list(result.topics), values.reshape(len(result.topics), len(setup.measures))


def topic_sets(run_topics: Iterable[str], judged: JudgedTopics, setup: EvaluationSetup
               ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(run_only, missing)``: run topics without judgments and judged topics absent
    from the run, each sorted; under ``topics="strict"`` an error if either is not empty
    (the evaluator's message)."""
    run_topics = set(run_topics)
    qrels_topics = set(judged.by_topic)
    run_only = tuple(sorted(run_topics - qrels_topics))
    missing = tuple(sorted(qrels_topics - run_topics))
    if setup.policies["topics"] == "strict" and (run_only or missing):
        raise InputError(
            f"topics differ: {len(run_only)} in the run only {list(run_only[:5])}, "
            f"{len(missing)} in the qrels only {list(missing[:5])} (topics='strict')")
    return run_only, missing


def combine(pieces: Iterable[Piece], run_topics: Iterable[str], judged: JudgedTopics,
            setup: EvaluationSetup, *, run_tag: str = "", stacklevel: int = 2) -> Evaluation:
    """Join the pieces' per-topic values into the :class:`Evaluation` that one call of
    :func:`cumgain.evaluate` on the whole run would return, bit for bit.

    ``pieces``: ``(topics, values)`` pairs as :func:`evaluate_piece` returns them, no
    topic in two pieces; ``run_topics``: every topic of the run (to report run-only
    topics and find the missing ones). Applies the topic policy (``"qrels"``: the
    missing topics are evaluated here; ``"strict"``: an error if the sets differ) and
    warns as the evaluator does.
    """
    topic_lists, value_blocks = [], []
    for topics, values in pieces:
        topic_lists.extend(topics)
        value_blocks.append(values)
    run_only, missing = topic_sets(run_topics, judged, setup)
    policy = setup.policies["topics"]
    if policy == "qrels":
        topics, values = evaluate_missing(list(missing), judged, setup)
        topic_lists.extend(topics)
        value_blocks.append(values)
    if setup.warn and (run_only or missing or judged.empty):
        warnings.warn(topics_warning(run_only, missing, judged.empty, policy), TopicsWarning,
                      stacklevel=stacklevel + 1)
    matrix = np.concatenate(value_blocks) if value_blocks else \
        np.zeros((0, len(setup.measures)))
    order = sorted(range(len(topic_lists)), key=topic_lists.__getitem__)
    matrix = matrix[np.array(order, dtype=np.int64)] if order else matrix
    values = {measure.name: np.ascontiguousarray(
        matrix[:, j], dtype=object if measure.kind == "text" else np.float64)
        for j, measure in enumerate(setup.measures)}
    for measure in setup.measures:
        if measure.aggregate == "first":    # runid: the run's tag (the pieces had none)
            values[measure.name][:] = run_tag
    means = {measure.name: aggregate(measure, values[measure.name], run_tag)
             for measure in setup.measures}
    return Evaluation(topics=tuple(topic_lists[i] for i in order), measures=setup.measures,
                      values=values, means=means, run_only_topics=run_only,
                      missing_topics=missing, empty_qrels_topics=judged.empty,
                      run_tag=run_tag, policies=dict(setup.policies))


# ---------------------------------------------------------------- reading whole topics

class TopicsNotContiguous(FormatError):
    """A topic's lines resume after another topic's: the file cannot be read topic by
    topic (sort it with :func:`sort_run_by_topic`)."""


@dataclass
class _Topic:
    """One topic's rows in file order."""

    topic: str
    docnos: list
    scores: np.ndarray
    lines: np.ndarray


class _TopicReader:
    """Iterate the topics of a topic-contiguous run (a path, ``"-"`` or a binary
    stream), read by the compiled reader in blocks
    (:class:`cumgain.io.native.tables.StreamedTopics`: the topic being read and a block
    held at once); a repeated docno is dropped by the ``duplicates`` policy
    (``"error"``: raised as its topic ends). ``source`` names the file, ``tag`` is the
    last line's tag and ``topics`` every topic met (with the line of its first row) once
    the iteration is done; ``dropped`` (count, first) what the policy dropped."""

    def __init__(self, path: Any, duplicates: DuplicatePolicy = "error"):
        self.path = path
        self.duplicates = duplicates
        self.source = ""
        self.tag = ""
        self.topics: dict = {}     # topic -> line of its first row
        self.dropped: tuple = (0, None)

    def __iter__(self) -> Iterator[_Topic]:
        from cumgain.io.native.reader import StreamedTopics, TopicCameBack
        streamed = StreamedTopics(self.path, self.duplicates)
        self.source = streamed.name
        try:
            for topic, docnos, scores, lines in streamed:
                self.topics[topic] = int(lines[0]) if len(lines) else 0
                yield _Topic(topic, docnos.tolist(), scores, lines)
        except TopicCameBack as error:
            raise TopicsNotContiguous(
                error.source, error.line,
                f"topic {error.topic!r} appears again after other topics (its lines "
                f"began at line {self.topics.get(error.topic, error.first_line)}); streaming "
                "needs each "
                "topic's lines together: sort the file with "
                "cumgain.stream.sort_run_by_topic, or use cumgain.evaluate") from None
        self.tag = streamed.tag
        self.dropped = (streamed.n_duplicates, streamed.first_duplicate)


def _documents(topic: _Topic) -> dict[str, float]:
    """``{docno: score}`` of a topic in file order (its repeated docnos dropped already
    by the reader's policy)."""
    return dict(zip(topic.docnos, topic.scores.tolist()))


def warn_dropped(source: str, dropped: tuple, duplicates: DuplicatePolicy,
                 stacklevel: int) -> None:
    """One DuplicatesDroppedWarning for the rows the reader's policy dropped, if any
    (``dropped``: how many, and the first as (topic, docno, first line, line))."""
    count, first = dropped
    if count:
        topic, docno, first_line, line = first
        warnings.warn(
            f"{source}: dropped {count} duplicate (topic, docno) row(s), keeping the "
            f"{duplicates} occurrence of each; the first was duplicate docno {docno!r} in "
            f"topic {topic!r}: lines {first_line} and {line}",
            trec_io.DuplicatesDroppedWarning, stacklevel=stacklevel)


def evaluate_stream(qrels: Any, run_path: Any,
                    measures: Union[str, Iterable[Union[str, Measure]]], *,
                    topics_per_chunk: int = DEFAULT_TOPICS_PER_CHUNK,
                    relevance_level: float = 1, judged_only: bool = False,
                    depth: Optional[int] = None, topics: TopicPolicy = "both",
                    ties: TieRule = "docno_desc", score_precision: ScorePrecision = "float64",
                    seed: Optional[int] = 0, duplicates: DuplicatePolicy = "error",
                    warn: bool = True) -> Evaluation:
    """Evaluate a topic-contiguous TREC run file in bounded memory.

    Same arguments, policies and result as :func:`cumgain.evaluate` (the run: a file
    path, ``"-"`` or a binary stream); ``topics_per_chunk`` whole topics are evaluated
    at a time. Peak memory is one chunk's rows (roughly 150 bytes per run line while
    they are evaluated) plus the compiled reader's few 1 MiB blocks, whatever the size
    of the file; the qrels are held whole. (:func:`cumgain.evaluate` itself reads a run
    whose topics are contiguous a topic at a time, holding its ranked rows, 2-10 bytes
    a line, and takes any order of topics.)

    Raises :class:`~cumgain.exceptions.FormatError` when a topic's lines are not
    together (sort the file first with :func:`sort_run_by_topic`, or use
    :func:`cumgain.evaluate`), and every error of :func:`cumgain.evaluate`, with file
    and line, as the file streams.
    """
    if isinstance(topics_per_chunk, bool) or not isinstance(topics_per_chunk, (int, np.integer)) \
            or topics_per_chunk < 1:
        raise InputError(f"topics_per_chunk must be a positive integer, got {topics_per_chunk!r}")
    setup = prepare(measures, relevance_level=relevance_level, judged_only=judged_only,
                    depth=depth, topics=topics, ties=ties, score_precision=score_precision,
                    seed=seed, duplicates=duplicates, warn=warn)
    judged = judged_topics(qrels, duplicates)
    reader = _TopicReader(run_path, duplicates)
    pieces, chunk = [], {}
    for topic in reader:
        chunk[topic.topic] = _documents(topic)
        if len(chunk) == topics_per_chunk:
            pieces.append(evaluate_piece(chunk, judged, setup))
            chunk = {}
    if chunk:
        pieces.append(evaluate_piece(chunk, judged, setup))
    warn_dropped(reader.source, reader.dropped, duplicates, stacklevel=3)
    return combine(pieces, reader.topics, judged, setup, run_tag=reader.tag, stacklevel=2)


# ---------------------------------------------------------------- external sort

def _topic_key(line: bytes) -> bytes:
    return line.split(None, 1)[0]


def _write_lines(out: BinaryIO, lines: Iterable[bytes]) -> int:
    count = 0
    for line in lines:
        out.write(line)
        out.write(b"\n")
        count += 1
    return count


def _write_file(path: str, lines: Iterable[bytes]) -> int:
    """A temporary file of the sort (in its private folder: no atomic rename needed)."""
    with naming(path), open(path, "wb") as out:     # a failed write (or close) names it
        return _write_lines(out, lines)


def _read_lines(path: str) -> Iterator[bytes]:
    with naming(path), open(path, "rb") as stream:
        for line in stream:
            yield line.rstrip(b"\n")


def _merged(paths: list) -> Iterator[bytes]:
    """The lines of topic-sorted files, merged; equal topics keep the order of ``paths``
    (heapq.merge is stable), so each topic's lines stay in input order."""
    return heapq.merge(*map(_read_lines, paths), key=_topic_key)


def sort_run_by_topic(in_path: Any, out_path: PathLike,
                      memory_limit: int = DEFAULT_MEMORY_LIMIT, *,
                      temp_dir: Optional[str] = None, overwrite: bool = False) -> int:
    """Write the run's lines grouped by topic (topics in byte order, each topic's lines
    in input order), holding about ``memory_limit`` bytes of lines at a time.

    An external merge sort: runs of lines that fit in ``memory_limit`` are sorted
    (stably, by topic id) into temporary files in ``temp_dir``, which are then merged,
    at most 64 at a time. Every line is checked by the reference reader on the way in,
    so errors name the input file and line; comment and blank lines are dropped. The
    output is plain text (the input may be gzip). Returns the number of lines written.

    The output is written under a temporary name beside ``out_path`` and renamed to it
    when complete (:mod:`cumgain.io.atomic`): if the sort fails or is interrupted,
    ``out_path`` is left as it was. An existing ``out_path`` is refused unless
    ``overwrite=True`` (then the output may be the input itself).
    """
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, (int, np.integer)) \
            or memory_limit < 1:
        raise InputError(f"memory_limit must be a positive number of bytes, got {memory_limit!r}")
    out_path = os.fsdecode(os.fspath(out_path))
    check_file_target(out_path, overwrite)
    blocks = trec_io.iter_run_blocks(in_path, block_bytes=PARSE_BYTES)
    with tempfile.TemporaryDirectory(prefix="cumgain-sort-", dir=temp_dir) as folder, \
            contextlib.closing(blocks):
        runs: list = []
        held: list = []
        size = 0

        def spill() -> None:
            held.sort(key=_topic_key)          # list.sort is stable
            runs.append(os.path.join(folder, f"run{len(runs)}.txt"))
            _write_file(runs[-1], held)
            held.clear()

        for block in blocks:               # raises for a file without data lines
            for line in block.line_texts():
                held.append(line)
                size += len(line) + LINE_OVERHEAD
                if size >= memory_limit:
                    spill()
                    size = 0
        if not runs:                           # everything fitted: no merge needed
            held.sort(key=_topic_key)
            lines: Iterable[bytes] = held
        else:
            if held:
                spill()
            while len(runs) > MERGE_FAN_IN:
                merged = []
                for start in range(0, len(runs), MERGE_FAN_IN):
                    merged.append(os.path.join(folder, f"merge{len(runs)}-{start}.txt"))
                    _write_file(merged[-1], _merged(runs[start:start + MERGE_FAN_IN]))
                runs = merged
            lines = _merged(runs)
        with naming(out_path), atomic_open(out_path, "wb", overwrite=overwrite) as out:
            return _write_lines(out, lines)
