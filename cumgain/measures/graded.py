"""Graded measures: trec_eval's ``ndcg``, ``dcg``, ``ideal_dcg``, ``ndcg_cut``,
``ndcg_rel``, ``Rndcg``, ``G``, ``rbp``, and the cumulated-gain family of Jarvelin &
Kekalainen (2002): ``CG``, ``DCG``, ``nCG``, ``nDCG``, ``avg_pos_nCG``, ``avg_pos_nDCG``.

g(i) = the gain of the document at rank i (its level, or the measure's gains of it; 0
if not judged), I = the topic's positive judged gains sorted descending (the ideal).
DCG@k = sum_{i<=k} g(i) / df(i) with trec_eval's df(i) = log2(i + 1) unless a measure
names another discount; nDCG@k = DCG@k / IDCG@k, 0 when IDCG@k = 0. The relevance level
(-l) never changes a gain.
"""
from __future__ import annotations

import numpy as np

import cgcore
from cgcore import _measures as kernels
from cgcore import _trec_measures as trec_kernels
from cumgain.common.batch import Ragged
from cumgain.exceptions import SumOverflowError
from cumgain.measures.base import Family, register
from cumgain.measures.batch import Batch, mapping_key
from cumgain.measures.binary import TREC_CUTOFFS
from cumgain.vectors import discount_divisors, ncg, ndcg

DEFAULT_P = 0.9     # trec_eval's rbp


def _divisors(measure, batch: Batch, k: int) -> np.ndarray:
    """The divisors a sum to cut-off k needs: for the ranks it can reach, min(k, the
    evaluation's full depth) (bit for bit the first of the divisors to k; a cut-off of
    10**8 needs no array of 10**8)."""
    return discount_divisors(measure.discount, measure.base, _reach(batch, measure, k))


def _reach(batch: Batch, measure, k: int) -> int:
    return min(k, batch.full_depth(measure))


def _cutoff(batch: Batch, measure) -> int:
    """The measure's cut-off, or the full depth of the evaluation."""
    return measure.cutoff if measure.cutoff is not None else batch.full_depth(measure)


def _ndcg(measures: list, batch: Batch) -> list:
    """ndcg, ndcg_cut and nDCG: the cut-offs of measures with the same gains, discount
    and judged_only computed in one pass over each topic (``ndcg`` is nDCG at the full
    depth)."""
    groups: dict = {}
    for measure in measures:
        key = (batch.judged_only(measure), mapping_key(measure), measure.discount,
               measure.base)
        groups.setdefault(key, []).append(measure)
    out = {}
    for group in groups.values():
        first = group[0]
        cutoffs = sorted({_cutoff(batch, m) for m in group})
        ranked = batch.ranked(first)
        table = cgcore.ndcg_at_cutoffs(
            batch.gains(first), ranked.offsets, batch.judged_gains(first),
            ranked.qrels_offsets, _divisors(first, batch, max(cutoffs)),
            np.array(cutoffs, dtype=np.int64), 0.0)
        for measure in group:
            out[measure.name] = np.ascontiguousarray(
                table[:, cutoffs.index(_cutoff(batch, measure))])
    return [out[m.name] for m in measures]


def _dcg(measures: list, batch: Batch) -> list:
    """dcg and DCG@k (CG@k with no discount)."""
    columns = []
    for measure in measures:
        k = _cutoff(batch, measure)
        divisors = np.ones(_reach(batch, measure, k)) if measure.family == "CG" \
            else _divisors(measure, batch, k)
        columns.append(cgcore.dcg_at(batch.gains(measure), batch.ranked(measure).offsets,
                                     divisors, k))
    return columns


def _ideal_dcg(measures: list, batch: Batch) -> list:
    columns = []
    for measure in measures:
        k = _cutoff(batch, measure)
        columns.append(cgcore.ideal_dcg_at(batch.judged_gains(measure),
                                           batch.ranked(measure).qrels_offsets,
                                           _divisors(measure, batch, k), k))
    return columns


def _ncg(measures: list, batch: Batch) -> list:
    columns = []
    for measure in measures:
        k = _cutoff(batch, measure)
        ranked = batch.ranked(measure)
        columns.append(cgcore.ndcg_at(batch.gains(measure), ranked.offsets,
                                      batch.judged_gains(measure), ranked.qrels_offsets,
                                      np.ones(_reach(batch, measure, k)), k, 0.0))
    return columns


def _average_position(measures: list, batch: Batch) -> list:
    """avg-pos (eq. 6): (1/k) sum_{i<=k} of the topic's nCG or nDCG vector.

    A topic's vector is constant from rank L_t = max(1, min(k, the longer of its
    ranking and its judgments)) on (no gain is added to the run's sum nor to the
    ideal's): its first L_t entries are added in rank order, then the constant tail as
    one product, (k - L_t) * V[L_t]. So memory and time follow the lists, not k (a
    cut-off of 10**8 on two documents needs two columns), and a topic's value does
    not depend on the other topics evaluated with it (a Dask partition, a stream's
    piece)."""
    columns = []
    for measure in measures:
        k = measure.cutoff
        ranked = batch.ranked(measure)
        lengths = np.maximum(np.diff(ranked.offsets), np.diff(ranked.qrels_offsets))
        reach = np.clip(lengths, 1, k)
        depth = int(reach.max()) if len(reach) else 1
        run = Ragged(batch.gains(measure), ranked.offsets)
        judged = Ragged(batch.judged_gains(measure), ranked.qrels_offsets)
        vectors = ncg(run, judged, depth) if measure.family == "avg_pos_nCG" else \
            ndcg(run, judged, depth, discount=measure.discount, base=measure.base)
        vectors = np.ascontiguousarray(vectors).reshape(len(reach), depth)
        columns.append(_average_over_ranks(measure, vectors, reach, k))
    return columns


def _average_over_ranks(measure, vectors: np.ndarray, reach: np.ndarray, k: int
                        ) -> np.ndarray:
    """(1/k) (sum_{i < reach_t} V[t, i] + (k - reach_t) V[t, reach_t - 1]) per topic t,
    the sum in rank order; a sum that leaves float64's range is a SumOverflowError."""
    rows = np.arange(len(reach))
    with np.errstate(over="ignore", invalid="ignore"):
        prefix = np.cumsum(vectors, axis=1)          # (sequential: rank order)
        last = vectors[rows, reach - 1]
        total = prefix[rows, reach - 1] + (k - reach).astype(np.float64) * last
    overflow = ~np.isfinite(total) & np.isfinite(vectors).all(axis=1)
    if overflow.any():
        t = int(np.argmax(overflow))
        raise SumOverflowError(f"{measure.name}: the sum over {k} ranks of topic {t}'s "
                               "vector leaves float64's range", topic=t, sum="ranks")
    return total / float(k)


def _ndcg_rel_and_rndcg(batch: Batch, measure) -> tuple:
    ranked = batch.ranked(measure)

    def build():
        ideal, ideal_offsets = batch.ideal(measure)
        return kernels.trec_ndcg_rel_and_rndcg(batch.gains(measure), ranked.offsets, ideal,
                                               ideal_offsets)
    return batch.cached(("ndcg_rel", id(ranked), mapping_key(measure)), build)


def _ndcg_rel(measures: list, batch: Batch) -> list:
    return [_ndcg_rel_and_rndcg(batch, m)[0] for m in measures]


def _rndcg(measures: list, batch: Batch) -> list:
    """Rndcg is 0 when R (which depends on -l) is 0."""
    return [np.where(batch.num_relevant(m) > 0, _ndcg_rel_and_rndcg(batch, m)[1], 0.0)
            for m in measures]


def _cost_gain(measures: list, batch: Batch) -> list:
    columns = []
    for measure in measures:
        ranked = batch.ranked(measure)
        ideal, ideal_offsets = batch.ideal(measure)
        columns.append(trec_kernels.cost_gain(batch.gains(measure), ranked.offsets, ideal,
                                              ideal_offsets))
    return columns


def _gain_range(batch: Batch, measure) -> tuple:
    """Per topic, the least and greatest gain of trec_eval's gain table (gain_init.c):
    the levels the gain table names, with their gains, and every level 0 .. the
    topic's highest judged level (its own value as gain) that it does not name
    (fractional levels, a cumgain extension, count with their value too)."""
    ranked = batch.ranked(measure)
    levels = batch.qrels_levels(measure)
    named = dict(measure.gains) if isinstance(measure.gains, tuple) else {}
    topic = np.repeat(np.arange(batch.n_topics), np.diff(ranked.qrels_offsets))
    judged = levels >= 0
    top = np.full(batch.n_topics, -1.0)
    np.maximum.at(top, topic[judged], np.floor(levels[judged]))
    low = np.full(batch.n_topics, np.inf)
    high = np.full(batch.n_topics, -np.inf)
    if named:
        low[:] = min(named.values())
        high[:] = max(named.values())
    # the smallest and largest whole level in 0 .. top that the table does not name
    smallest = 0.0
    while smallest in named:
        smallest += 1
    low = np.where(top >= smallest, np.minimum(low, smallest), low)
    largest = top.copy()
    for _ in range(len(named)):
        largest = np.where(np.isin(largest, list(named)), largest - 1, largest)
    high = np.where(largest >= 0, np.maximum(high, largest), high)
    fractional = judged & (levels != np.floor(levels)) & ~np.isin(levels, list(named))
    np.minimum.at(low, topic[fractional], levels[fractional])
    np.maximum.at(high, topic[fractional], levels[fractional])
    return low, high


def _rank_biased_precision(measures: list, batch: Batch) -> list:
    """(1 - p) sum_i g'(i) p^(i-1), g' the gains scaled to [0, 1] by (g - min) /
    (max - min) over the gain table when some gain lies outside [0, 1]."""
    columns = []
    for measure in measures:
        p = measure.param("p", DEFAULT_P)
        ranked = batch.ranked(measure)
        gains = batch.gains(measure)
        low, high = _gain_range(batch, measure)
        scale = (low < 0) | (high > 1)
        topic = np.repeat(np.arange(batch.n_topics), np.diff(ranked.offsets))
        rescale = scale[topic] & ranked.judged
        span = high - low          # every gain of the table the same: 0 / 0 is 0 here
        with np.errstate(divide="ignore", invalid="ignore"):
            scaled = np.where(rescale, np.where(span[topic] > 0, (gains - low[topic])
                                                / span[topic], 0.0), gains)
        sums, _ = trec_kernels.geometric_sums(np.ascontiguousarray(scaled), ranked.offsets, p)
        columns.append((1.0 - p) * sums)
    return columns


def _check_p(measure, spelling: str) -> None:
    from cumgain.exceptions import InputError
    p = measure.param("p", DEFAULT_P)
    if not 0 <= p <= 1:
        raise InputError(f"measure {spelling!r}: p must be in [0, 1], got {p:g}")


_JK = "Jarvelin & Kekalainen, ACM TOIS 2002"
register(
    Family("G", "sum_{i: g(i) != 0} g(i) / log2(2 + C(i) - S(i)) / sum I, S the gain so "
           "far, C the ideal's cost so far (gains below 1 cost 1)", _cost_gain, trec="pairs",
           ordered=True, source="trec_eval m_G.c"),
    Family("dcg", "DCG over the whole ranking", _dcg, trec="pairs", since="10",
           source="trec_eval m_ndcg.c"),
    Family("ideal_dcg", "DCG of the whole ideal ranking", _ideal_dcg, trec="pairs",
           since="10", source="trec_eval m_ndcg.c"),
    Family("ndcg", "DCG / IDCG over the whole ranking and all judged documents", _ndcg,
           trec="pairs", source="trec_eval m_ndcg.c"),
    Family("ndcg_rel", "mean over the ideal's documents of nDCG at each relevant retrieved "
           "document (unretrieved ones: the final nDCG)", _ndcg_rel, trec="pairs",
           ordered=True, source="trec_eval m_ndcg_rel.c"),
    Family("Rndcg", "mean of nDCG at each rank where the ideal gain changes", _rndcg,
           trec="pairs", ordered=True, source="trec_eval m_Rndcg.c"),
    Family("ndcg_cut", "DCG@k / IDCG@k", _ndcg, trec="cutoffs", trec_defaults=TREC_CUTOFFS,
           source="trec_eval m_ndcg_cut.c"),
    Family("rbp", "rank-biased precision (1 - p) sum_i g(i) p^(i-1), gains scaled to [0, 1] "
           "(p = 0.9)", _rank_biased_precision, trec="pairs", since="10", ordered=True,
           source="trec_eval m_rbp.c; Moffat & Zobel, TOIS 2008"),
    Family("CG", "CG@k = sum_{i<=k} g(i) (eq. 1)", _dcg, ir_names=("CG",),
           ir_params=("gains", "judged_only"), at="cutoff", source=_JK),
    Family("DCG", "DCG@k = sum_{i<=k} g(i) / df(i) (eq. 2)", _dcg, ir_names=("DCG",),
           ir_params=("gains", "judged_only", "discount", "base"), at="cutoff", source=_JK),
    Family("nCG", "CG@k / CG_I@k (eq. 5)", _ncg, ir_names=("nCG",),
           ir_params=("gains", "judged_only"), at="cutoff", source=_JK),
    Family("nDCG", "DCG@k / DCG_I@k (eq. 5)", _ndcg, ir_names=("nDCG", "NDCG"),
           ir_params=("gains", "dcg", "judged_only", "discount", "base"), at="cutoff",
           trec_twin="ndcg_cut", source=_JK),
    Family("avg_pos_nCG", "(1/k) sum_{i<=k} nCG[i] (eq. 6)", _average_position,
           ir_names=("avg_pos_nCG",), ir_params=("gains", "judged_only"),
           at="cutoff_required", source=_JK),
    Family("avg_pos_nDCG", "(1/k) sum_{i<=k} nDCG[i] (eq. 6)", _average_position,
           ir_names=("avg_pos_nDCG",),
           ir_params=("gains", "judged_only", "discount", "base"), at="cutoff_required",
           source=_JK),
)

from cumgain.measures.parse import PARAMETER_CHECKS  # noqa: E402 - after the families

PARAMETER_CHECKS["rbp"] = _check_p
PARAMETER_CHECKS["rbp_resid"] = _check_p
