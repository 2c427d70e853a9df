"""Averaged Jarvelin & Kekalainen vectors on Dask (:func:`cumgain.dask.average_vectors`):
each partition ranks its topics and returns, per rank, the sum of their CG, DCG, ideal
and normalised vectors and how many topics were summed; the client adds them. The run's
partitions, the judgments' tasks and the computing come from
:mod:`cumgain.scale.dask_partitions`, as for :func:`cumgain.dask.evaluate`.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from cumgain import stream
from cumgain.measures.batch import TIE_MEAN_RULES
from cumgain.engine.results import TopicsWarning
from cumgain.scale.dask_judgments import _Judgments
from cumgain.scale.dask_partitions import (RUN_COLUMNS, _check_one_partition_per_topic, _compute,
                                           _dict_task, _in_input_order, _inputs,
                                           _prepared_task, _run_by_topic)
from cumgain.common.optional import require
from cumgain.common.batch import Ragged
from cumgain.engine.evaluator import Ranking, rank
from cumgain.engine.results import topics_warning
from cumgain.exceptions import InputError
from cumgain.gains import GainMapping, gain_mapping
from cumgain.common.limits import real_number, whole_number
from cumgain.measures import DISCOUNT_NAMES
from cumgain.io.native.reader import PreparedQrelsTable
from cumgain.common.progress import ProgressOption, check_progress
from cumgain.trec_io import DuplicatesDroppedWarning
from cumgain.types import (
    DiscountRule,
    DuplicatePolicy,
    NormalisedVector,
    ScorePrecision,
    TieRule,
    TopicPolicy,
)
from cumgain.vectors import cg as cg_vectors
from cumgain.vectors import dcg as dcg_vectors
from cumgain.vectors import ideal_gains, norm_vect

if TYPE_CHECKING:
    import dask
    import pandas as pd
else:
    dask = require("dask", extra="dask", for_what="cumgain.dask")
    pd = require("pandas", extra="dask", for_what="cumgain.dask")

CURVES = ("cg", "dcg", "ideal_cg", "ideal_dcg", "ncg", "ndcg")


@dataclass(frozen=True)
class AveragedVectors:
    """Averaged Jarvelin & Kekalainen vectors over the evaluated topics, ranks 1..depth.

    ``cg``, ``dcg``, ``ideal_cg``, ``ideal_dcg``: avg-vect (eq. 3) of each topic's
    vector; ``ncg``, ``ndcg``: normalise each topic, then average
    (``avg_norm_vect(order="normalise_then_average")``), over ``ncg_counts`` /
    ``ndcg_counts`` topics per rank (fewer than ``n_topics`` only where
    ``zero_ideal=nan`` leaves topics out). ``shuffled`` as in :class:`DaskEvaluation`.
    """

    cg: np.ndarray
    dcg: np.ndarray
    ideal_cg: np.ndarray
    ideal_dcg: np.ndarray
    ncg: np.ndarray
    ndcg: np.ndarray
    ncg_counts: np.ndarray
    ndcg_counts: np.ndarray
    n_topics: int
    shuffled: bool

    def average_then_normalise(self, kind: NormalisedVector = "ndcg", zero_ideal: float = 0.0
                               ) -> np.ndarray:
        """The paper's other order: norm-vect(avg-vect(V), avg-vect(ideal V)), for
        ``kind`` "ncg" or "ndcg"."""
        if kind not in ("ncg", "ndcg"):
            raise InputError(f"kind must be 'ncg' or 'ndcg', got {kind!r}")
        values, ideal = (self.cg, self.ideal_cg) if kind == "ncg" else (self.dcg, self.ideal_dcg)
        return norm_vect(values, ideal, zero_ideal=zero_ideal)


@dataclass(frozen=True)
class _VectorSpec:
    depth: int
    gains: Any
    discount: DiscountRule
    base: float
    zero_ideal: float


def _gains_parameter(gains: Any) -> str:
    if isinstance(gains, str):
        gain_mapping(gains)
        return f"gains={gains.strip()}"
    if isinstance(gains, dict):
        gain_mapping(gains)               # checks the entries
        return "gains={" + ",".join(f"{float(level)!r}:{float(gain)!r}"
                                    for level, gain in sorted(gains.items())) + "}"
    raise InputError(f"gains must be a scheme name or a {{level: gain}} dict, got {gains!r}")


def _vector_spellings(spec: _VectorSpec) -> list:
    """CG@1 and DCG@1 with the vectors' gains, discount and base, for
    :func:`stream.prepare` to check them (and the ranking policies) with the engine's
    own messages; the vectors themselves are not computed by the engine."""
    gains = "" if spec.gains is None else _gains_parameter(spec.gains)
    discount = f"discount={spec.discount}, base={spec.base!r}"
    return [f"CG@1({gains})" if gains else "CG@1",
            f"DCG@1({discount}{', ' + gains if gains else ''})"]


def _rank_topics(qrels_by_topic: dict, run_by_topic: dict, setup: stream.EvaluationSetup,
                 topics: TopicPolicy) -> Ranking:
    """These topics ranked by :func:`cumgain.rank` under the setup's policies.

    ``judged_only`` with ``ties="average"`` or ``"expected"``: the engine forms the tie groups after
    dropping the unjudged documents, so only the judged documents are ranked. That is
    the engine's ranking: there is no depth cut here, and the average rule has no tie
    keys that depend on a document's position in its topic (``"random"`` has)."""
    policies = setup.policies
    if policies["judged_only"] and policies["ties"] in TIE_MEAN_RULES:
        run_by_topic = {topic: {doc: score for doc, score in documents.items()
                                if qrels_by_topic[topic].get(doc, -1.0) >= 0}
                        for topic, documents in run_by_topic.items()}
    return rank(qrels_by_topic, run_by_topic, ties=policies["ties"],
                score_precision=policies["score_precision"], topics=topics,
                duplicates="error", seed=policies["seed"], warn=False)


def _ranked_gains(ranking: Ranking, mapping: GainMapping, judged_only: bool) -> Ragged:
    """Per topic, the gain of each ranked document; with ``judged_only`` (trec_eval -J)
    the documents without a judgment >= 0 are dropped and the ranks close up."""
    gains = ranking.gains(mapping)
    if not judged_only:
        return gains
    kept_before = np.concatenate([[0], np.cumsum(ranking.judged, dtype=np.int64)])
    return Ragged(np.ascontiguousarray(gains.values[ranking.judged]),
                  kept_before[gains.offsets])


def _vector_sums(ranking: Ranking, setup: stream.EvaluationSetup, spec: _VectorSpec) -> dict:
    """Per curve, the sum over the ranked topics by rank and the number of topics summed.

    Each topic's vectors to rank n = ``spec.depth`` from its gains: CG and DCG (eqs. 1-2),
    the ideal CG and DCG from its judged gains (eq. 4), and nCG, nDCG = norm-vect
    (eq. 5); linear in n per topic. A NaN (``zero_ideal=nan``) is left out of its
    rank's sum and count."""
    n = spec.depth
    mapping = gain_mapping("identity" if spec.gains is None else spec.gains)
    gains = _ranked_gains(ranking, mapping, setup.policies["judged_only"])
    ideal = ideal_gains(ranking.judged_gains(mapping), n)
    curves = {"cg": cg_vectors(gains, n),
              "dcg": dcg_vectors(gains, n, discount=spec.discount, base=spec.base),
              "ideal_cg": cg_vectors(ideal, n),
              "ideal_dcg": dcg_vectors(ideal, n, discount=spec.discount, base=spec.base)}
    curves["ncg"] = norm_vect(curves["cg"], curves["ideal_cg"], zero_ideal=spec.zero_ideal)
    curves["ndcg"] = norm_vect(curves["dcg"], curves["ideal_dcg"], zero_ideal=spec.zero_ideal)
    sums = {}
    for name in CURVES:
        matrix = np.asarray(curves[name], dtype=np.float64).reshape(len(ranking.topics), n)
        present = ~np.isnan(matrix)
        sums[name] = (np.where(present, matrix, 0.0).sum(axis=0), present.sum(axis=0))
    return sums


def _vector_partition(frame: pd.DataFrame, judged: Any, setup: stream.EvaluationSetup,
                      spec: _VectorSpec) -> tuple:
    """``(run topics, sums by curve, rows dropped)`` of one partition: ranked by
    :func:`cumgain.rank` from its columns against prepared judgments (see
    :func:`_vector_task`), otherwise from dicts."""
    if isinstance(judged, PreparedQrelsTable):
        policies = setup.policies
        ranking = rank(judged, _in_input_order(frame)[list(RUN_COLUMNS)],
                       ties=policies["ties"], score_precision=policies["score_precision"],
                       topics="both", duplicates="error", seed=policies["seed"], warn=False,
                       threads=1)
        return (list(ranking.topics) + list(ranking.run_only_topics),
                _vector_sums(ranking, setup, spec), 0)
    run_by_topic, dropped = _run_by_topic(frame, setup.duplicates)
    topics = [topic for topic in run_by_topic if topic in judged.by_topic]
    ranking = _rank_topics(judged.subset(topics), {topic: run_by_topic[topic] for topic in topics},
                           setup, "both")
    return list(run_by_topic), _vector_sums(ranking, setup, spec), sum(dropped.values())


def _vector_task(judged: _Judgments, setup: stream.EvaluationSetup) -> Any:
    """The judgments for :func:`_vector_partition`: prepared (see
    :func:`cumgain.scale.dask_partitions._prepared_task`), except under ``judged_only`` with
    ``ties="average"``, whose tie groups are formed after dropping the unjudged
    documents (see :func:`_rank_topics`): dicts."""
    if setup.policies["judged_only"] and setup.policies["ties"] in TIE_MEAN_RULES:
        return _dict_task(judged)
    return _prepared_task(judged, setup.duplicates)


def average_vectors(qrels: Any, run: Any, depth: int, *, gains: Any = None,
                    discount: DiscountRule = "trec_eval", base: float = 2.0,
                    zero_ideal: float = 0.0, relevance_level: float = 1,
                    judged_only: bool = False, topics: TopicPolicy = "both",
                    ties: TieRule = "docno_desc", score_precision: ScorePrecision = "float64",
                    seed: Optional[int] = 0, duplicates: DuplicatePolicy = "error",
                    warn: bool = True,
                    partitioned_by_topic: Optional[bool] = None,
                    progress: ProgressOption = False,
                    **compute_options: Any) -> AveragedVectors:
    """The averaged CG, DCG, ideal and normalised vectors to rank ``depth``, over the
    topics :func:`evaluate` would evaluate, computed as a reduction (see the module
    docstring for the floating-point bound against :func:`cumgain.vectors.avg_vect`).

    ``gains``: None (gain = level), a scheme ("0-1-10-100", "exponential") or a
    ``{level: gain}`` dict; ``discount`` / ``base``: as in :func:`cumgain.dcg` (default
    trec_eval's, as :func:`cumgain.evaluate`; the paper's: ``"tois"``, b = 2); ``zero_ideal``: the normalised value where the ideal is 0
    (``nan`` leaves such topics out of that rank's average). Ranking policies as in
    :func:`evaluate` (``judged_only`` drops the unjudged documents, closing the gaps).
    Each partition ranks its topics with :func:`cumgain.rank` and builds their vectors
    with the kernels of :mod:`cumgain.vectors`, in time linear in ``depth`` (the
    per-topic vectors of :func:`cumgain.curves.compute`, which has no ``judged_only``).
    ``progress``: False, True or "auto" (see the module docstring); ``compute_options``
    go to ``dask.compute``.
    """
    depth = whole_number(depth, "depth")
    check_progress(progress)
    if discount not in DISCOUNT_NAMES:
        raise InputError(f"discount must be one of {DISCOUNT_NAMES}, got {discount!r}")
    if isinstance(zero_ideal, bool) or not isinstance(zero_ideal, (int, float)):
        raise InputError(f"zero_ideal must be a number (0.0 or nan), got {zero_ideal!r}")
    zero_ideal = zero_ideal if isinstance(zero_ideal, float) and math.isnan(zero_ideal) \
        else real_number(zero_ideal, "zero_ideal", "a number (0.0 or nan)")
    if isinstance(base, bool) or not isinstance(base, (int, float)):
        raise InputError(f"base must be a number > 1, got {base!r}")
    base = real_number(base, "base", "a number > 1")
    spec = _VectorSpec(depth, gains, discount, base, float(zero_ideal))
    setup = stream.prepare(_vector_spellings(spec), relevance_level=relevance_level,
                           judged_only=judged_only, topics=topics, ties=ties,
                           score_precision=score_precision, seed=seed, duplicates=duplicates,
                           warn=warn)
    frame, shuffled, judged, _ = _inputs(qrels, run, partitioned_by_topic, ties,
                                               duplicates)
    task = _vector_task(judged, setup)
    parts = [dask.delayed(_vector_partition)(part, task, setup, spec)
             for part in frame.to_delayed()]
    partials = _compute(tuple(parts), progress, "cumgain.dask: average vectors",
                              compute_options)

    run_topics = pd.Index([], dtype=str).append([pd.Index(p[0], dtype=str) for p in partials])
    _check_one_partition_per_topic(run_topics)
    dropped = sum(p[2] for p in partials)
    if dropped:
        warnings.warn(f"run: dropped {dropped} duplicate (query_id, doc_id) row(s), keeping "
                      "the first occurrence of each", DuplicatesDroppedWarning, stacklevel=2)
    run_only, missing = stream.topic_sets(run_topics, judged, setup)
    sums = [p[1] for p in partials]
    n_topics = len(run_topics) - len(run_only)
    if topics == "qrels" and missing:
        ranking = _rank_topics(judged.subset(missing), {}, setup, "qrels")
        sums.append(_vector_sums(ranking, setup, spec))
        n_topics += len(missing)
    if warn and (run_only or missing or judged.empty):
        warnings.warn(topics_warning(run_only, missing, judged.empty, topics),
                      TopicsWarning, stacklevel=2)
    totals = {}
    for name in CURVES:
        total = np.zeros(spec.depth)
        count = np.zeros(spec.depth, dtype=np.int64)
        for partial in sums:
            total = total + partial[name][0]
            count = count + partial[name][1]
        with np.errstate(invalid="ignore", divide="ignore"):
            totals[name] = (np.where(count > 0, total / np.maximum(count, 1), np.nan), count)
    return AveragedVectors(
        cg=totals["cg"][0], dcg=totals["dcg"][0], ideal_cg=totals["ideal_cg"][0],
        ideal_dcg=totals["ideal_dcg"][0], ncg=totals["ncg"][0], ndcg=totals["ndcg"][0],
        ncg_counts=totals["ncg"][1], ndcg_counts=totals["ndcg"][1], n_topics=n_topics,
        shuffled=shuffled)


# documented, imported and pickled as cumgain.dask's
AveragedVectors.__module__ = average_vectors.__module__ = "cumgain.dask"
