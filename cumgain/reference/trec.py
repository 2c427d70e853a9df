"""A pure-Python port of trec_eval 10.0's per-topic measures, as a test oracle.

Each function is a literal, statement-by-statement translation of one ``m_<name>.c``
(``te_calc_<name>``), with the same loops, the same special cases and the same order
of floating-point operations, so that its value is bit-identical to trec_eval's
(``math.log`` and ``math.log2`` are libm's ``log`` and ``log2``; :func:`_log` and
:func:`_log2` give C's -inf and NaN where Python would raise). Integer arithmetic
that C does in ``long`` is done on Python ints before the conversion to float, as
in C. Far too slow for real use; read beside the C file it names.

The input of every measure is a :class:`ResRels`, form_res_rels.c's ``RES_RELS``:
built by :func:`form_res_rels` from a topic's ranked list of trec_eval "rel" values
(after ranking, ``-M`` and ``-J``; see :func:`rank`) and the topic's qrels levels. A
rel value is the qrels level (>= 0) of a judged document, ``RELVALUE_UNJUDGED`` (-2)
for a document in the qrels with a negative level, ``RELVALUE_NONPOOL`` (-1) for a
document not in the qrels.

Where trec_eval's C is undefined, this port chooses, and says so:

* a topic whose qrels levels are all negative: C leaves ``num_rel_levels`` (and the
  ``rel_levels`` buffer) as the previous topic left them; here they are the topic's own
  (no level, ``num_rel_levels`` 0).
* ``rbp``: m_rbp.c reads its ``min`` and ``max`` uninitialised; here they are the
  smallest and largest gain of the gain table (no normalisation if it is empty).
* ``setup_gains`` sorts the gain table with a comparator that truncates the gain
  difference to ``int`` (gains less than 1 apart compare equal, and qsort's order is
  then unspecified); here the table is sorted by gain correctly (stable, so entries of
  equal gain keep setup_gains' order, which no measure's value depends on).

Divisions that C may do by zero are done in IEEE arithmetic (:func:`_div`), so the
port gives trec_eval's NaN or inf where trec_eval does (e.g. ``iprec_at_recall`` of a
topic with no retrieved document).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Mapping, Optional, Sequence, Tuple

import numpy as np

RELVALUE_NONPOOL = -1       # trec_eval.h
RELVALUE_UNJUDGED = -2
MIN_GEO_MEAN = .00001
INFAP_EPSILON = .00001

DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)   # P, recall, map_cut, ...
DEFAULT_SUCCESS_CUTOFFS = (1, 5, 10)
DEFAULT_UNJ_CUTOFFS = (5, 10, 20)
DEFAULT_RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
DEFAULT_RPREC_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
DEFAULT_UTILITY = (1.0, -1.0, 0.0, 0.0)


def _div(a: float, b: float) -> float:
    """``a / b`` in IEEE double arithmetic, as C does it (Python raises on b == 0)."""
    a, b = float(a), float(b)
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _log(x: float) -> float:
    """libm's log, with C's results where Python raises: -inf at 0, NaN below."""
    if x > 0.0 or math.isnan(x):
        return math.log(x)
    return -math.inf if x == 0.0 else math.nan


def _log2(x: float) -> float:
    """libm's log2, with C's results where Python raises: -inf at 0, NaN below."""
    if x > 0.0 or math.isnan(x):
        return math.log2(x)
    return -math.inf if x == 0.0 else math.nan


# ----------------------------------------------------------------- ranking, RES_RELS

def rank(qrels_topic: Mapping[str, int], run_topic: Mapping[str, float],
         depth: Optional[int] = None, judged_only: bool = False,
         float32: bool = False) -> List[int]:
    """The ranked list of rel values, as form_res_rels.c builds it.

    Sort by score descending, ties by docno descending (its UTF-8 bytes: strcmp); with
    ``float32`` the scores are first rounded to float32 (trec_eval <= 9.0.8). Keep the
    first ``depth`` (-M); give each its rel value; with ``judged_only`` (-J) drop those
    whose value is < 0, keeping their order. A level is truncated towards 0 (atol).
    """
    def score(docno):
        value = float(run_topic[docno])
        if not float32:
            return value
        with np.errstate(over="ignore"):        # C's (float) conversion: +-inf
            return float(np.float32(value))

    order = sorted(run_topic, key=lambda docno: (score(docno), docno.encode("utf-8")),
                   reverse=True)
    if depth is not None:
        order = order[:depth]
    ranked = []
    for docno in order:
        if docno not in qrels_topic:
            ranked.append(RELVALUE_NONPOOL)
        elif int(qrels_topic[docno]) < 0:
            ranked.append(RELVALUE_UNJUDGED)
        else:
            ranked.append(int(qrels_topic[docno]))
    if judged_only:
        ranked = [rel for rel in ranked if rel >= 0]
    return ranked


@dataclass(frozen=True)
class ResRels:
    """form_res_rels.c's ``RES_RELS`` plus the ``-l`` it was formed with."""

    results_rel_list: Tuple[int, ...]
    num_ret: int
    num_rel_ret: int
    num_nonpool: int
    num_unjudged_in_pool: int
    num_rel: int
    num_rel_levels: int
    rel_levels: Tuple[int, ...]        # rel_levels[L] for L in 0..max(0, max_rel)
    relevance_level: int


def form_res_rels(ranked: Sequence[int], qrels_levels: Sequence[int],
                  relevance_level: int = 1) -> ResRels:
    """form_res_rels.c's counts, from the ranked rel values and the qrels levels.

    ``ranked`` is already cut (-M) and filtered (-J); ``qrels_levels`` are all the
    topic's qrels levels, negative ones included.
    """
    ranked = tuple(int(rel) for rel in ranked)
    max_rel = max((int(level) for level in qrels_levels), default=-1)
    rel_levels = [0] * (max(max_rel, 0) + 1)
    for level in qrels_levels:
        if int(level) >= 0:
            rel_levels[int(level)] += 1
    num_rel_ret = num_nonpool = num_unjudged_in_pool = 0
    for rel in ranked:
        if RELVALUE_NONPOOL == rel:
            num_nonpool += 1
        elif RELVALUE_UNJUDGED == rel:
            num_unjudged_in_pool += 1
        elif rel >= relevance_level:
            num_rel_ret += 1
    num_rel = 0
    num_rel_levels = 0
    for i in range(max_rel + 1):
        if rel_levels[i]:
            num_rel_levels = i + 1
            if i >= relevance_level:
                num_rel += rel_levels[i]
    return ResRels(ranked, len(ranked), num_rel_ret, num_nonpool, num_unjudged_in_pool,
                   num_rel, num_rel_levels, tuple(rel_levels), relevance_level)


# ------------------------------------------------------------------------ gains

@dataclass
class RelGain:
    """gain_init.c's ``REL_GAIN``."""

    rel_level: int
    gain: float
    num_at_level: int


def setup_gains(rr: ResRels, pairs: Mapping[str, float] = ()) -> List[RelGain]:
    """gain_init.c's ``setup_gains``: the gain table sorted by increasing gain.

    ``pairs``: the measure's ``name=value`` parameters in order (a dict, or a sequence of
    (name, value)); names that are not integers (``p``) are skipped. Every level
    0..num_rel_levels-1 without a pair gets gain = level. Sorted correctly (see the
    module docstring), where C's comparator truncates.
    """
    items = list(pairs.items()) if isinstance(pairs, Mapping) else list(pairs)
    gains = []
    for name, value in items:
        if not _valid_int(name):
            continue
        gains.append(RelGain(int(name), float(value), 0))
    num_pairs_kept = len(gains)
    for i in range(rr.num_rel_levels):
        j = 0
        while j < num_pairs_kept and gains[j].rel_level != i:
            j += 1
        if j < num_pairs_kept:
            gains[j].num_at_level = rr.rel_levels[i]
        else:
            gains.append(RelGain(i, float(i), rr.rel_levels[i]))
    gains.sort(key=lambda entry: entry.gain)
    return gains


def _valid_int(name: str) -> bool:
    """gain_init.c's ``valid_int``: optional sign, then one or more digits."""
    digits = name[1:] if name[:1] in ("-", "+") else name
    return bool(digits) and all(c in "0123456789" for c in digits)


def get_gain(rel_level: int, gains: Sequence[RelGain]) -> float:
    """gain_init.c's ``get_gain``: the first entry for the level, else 0."""
    for entry in gains:
        if rel_level == entry.rel_level:
            return entry.gain
    return 0.0


def _next_ideal(gains, cur_level, num_at_level):
    """The ideal walk's step shared by m_ndcg.c, m_ndcg_rel.c, m_Rndcg.c and m_G.c:
    ``num_at_level++`` and move down the table past exhausted levels."""
    num_at_level += 1
    ideal_gain = None
    while cur_level >= 0 and num_at_level > gains[cur_level].num_at_level:
        num_at_level = 1
        cur_level -= 1
        ideal_gain = gains[cur_level].gain if cur_level >= 0 else 0.0
    return cur_level, num_at_level, ideal_gain


# --------------------------------------------------------------- binary measures

def map_(rr: ResRels) -> float:
    """m_map.c: sum of precision at each relevant retrieved doc, over num_rel."""
    rel_so_far = 0
    total = 0.0
    for i in range(rr.num_ret):
        if rr.results_rel_list[i] >= rr.relevance_level:
            rel_so_far += 1
            total += float(rel_so_far) / float(i + 1)
    if rel_so_far:
        return _div(total, rr.num_rel)
    return 0.0


def gm_map(rr: ResRels) -> float:
    """m_gm_map.c: the per-topic value, log(max(AP, MIN_GEO_MEAN))."""
    rel_so_far = 0
    total = 0.0
    for i in range(rr.num_ret):
        if rr.results_rel_list[i] >= rr.relevance_level:
            rel_so_far += 1
            total += float(rel_so_far) / float(i + 1)
    if rel_so_far:
        total = _div(total, rr.num_rel)
    return _log(max(total, MIN_GEO_MEAN))


def rprec(rr: ResRels) -> float:
    """m_Rprec.c: precision after num_rel docs."""
    rel_so_far = 0
    num_to_look_at = min(rr.num_ret, rr.num_rel)
    if 0 == num_to_look_at:
        return 0.0
    for i in range(num_to_look_at):
        if rr.results_rel_list[i] >= rr.relevance_level:
            rel_so_far += 1
    return float(rel_so_far) / float(rr.num_rel)


def recip_rank(rr: ResRels) -> float:
    """m_recip_rank.c: 1 / rank of the first relevant doc."""
    i = 0
    while i < rr.num_ret:
        if rr.results_rel_list[i] >= rr.relevance_level:
            break
        i += 1
    if i < rr.num_ret:
        return 1.0 / float(i + 1)
    return 0.0


def _at_cutoffs(rr: ResRels, cutoffs: Sequence[int], value_at, counts) -> List[float]:
    """The loop shared by m_P.c, m_recall.c, m_success.c, m_rel_P.c and m_unj.c: at
    rank index i == cutoffs[k] store value_at(so_far, i); count with counts(rel); the
    cut-offs not reached get value_at(so_far, cutoff)."""
    values = [0.0] * len(cutoffs)
    cutoff_index = 0
    so_far = 0
    for i in range(rr.num_ret):
        if i == cutoffs[cutoff_index]:
            values[cutoff_index] = value_at(so_far, i)
            cutoff_index += 1
            if cutoff_index == len(cutoffs):
                break
        if counts(rr.results_rel_list[i]):
            so_far += 1
    while cutoff_index < len(cutoffs):
        values[cutoff_index] = value_at(so_far, cutoffs[cutoff_index])
        cutoff_index += 1
    return values


def p(rr: ResRels, cutoffs: Sequence[int] = DEFAULT_CUTOFFS) -> List[float]:
    """m_P.c: relevant in the top k, over k."""
    return _at_cutoffs(rr, cutoffs, lambda rel_so_far, i: float(rel_so_far) / float(i),
                       lambda rel: rel >= rr.relevance_level)


def recall(rr: ResRels, cutoffs: Sequence[int] = DEFAULT_CUTOFFS) -> List[float]:
    """m_recall.c: relevant in the top k, over num_rel; 0 if num_rel is 0."""
    if 0 == rr.num_rel:
        return [0.0] * len(cutoffs)
    return _at_cutoffs(rr, cutoffs,
                       lambda rel_so_far, i: float(rel_so_far) / float(rr.num_rel),
                       lambda rel: rel >= rr.relevance_level)


def map_cut(rr: ResRels, cutoffs: Sequence[int] = DEFAULT_CUTOFFS) -> List[float]:
    """m_map_cut.c: map's sum restricted to the top k, over num_rel."""
    values = [0.0] * len(cutoffs)
    if rr.num_rel == 0:
        return values
    cutoff_index = 0
    rel_so_far = 0
    total = 0.0
    for i in range(rr.num_ret):
        if i == cutoffs[cutoff_index]:
            values[cutoff_index] = total / float(rr.num_rel)
            cutoff_index += 1
            if cutoff_index == len(cutoffs):
                break
        if rr.results_rel_list[i] >= rr.relevance_level:
            rel_so_far += 1
            total += float(rel_so_far) / float(i + 1)
    while cutoff_index < len(cutoffs):
        values[cutoff_index] = total / float(rr.num_rel)
        cutoff_index += 1
    return values


def success(rr: ResRels, cutoffs: Sequence[int] = DEFAULT_SUCCESS_CUTOFFS) -> List[float]:
    """m_success.c: 1 if a relevant doc is in the top k."""
    return _at_cutoffs(rr, cutoffs, lambda rel_so_far, i: 1.0 if rel_so_far else 0.0,
                       lambda rel: rel >= rr.relevance_level)


def relative_p(rr: ResRels, cutoffs: Sequence[int] = DEFAULT_CUTOFFS) -> List[float]:
    """m_rel_P.c: relevant in the top k, over min(k, num_rel); 0 if num_rel is 0."""
    if rr.num_rel == 0:
        return [0.0] * len(cutoffs)
    return _at_cutoffs(
        rr, cutoffs,
        lambda rel_so_far, i: float(rel_so_far) / float(rr.num_rel if i > rr.num_rel else i),
        lambda rel: rel >= rr.relevance_level)


def rprec_mult(rr: ResRels, multiples: Sequence[float] = DEFAULT_RPREC_MULTIPLES
               ) -> List[float]:
    """m_Rprec_mult.c: precision at (long)(x * num_rel + 0.9) docs."""
    values = [0.0] * len(multiples)
    cutoffs = [int(x * rr.num_rel + 0.9) for x in multiples]
    precis = _div(rr.num_rel_ret, rr.num_ret)
    int_precis = precis   # computed and never used, as in C
    current_cut = len(multiples) - 1
    while current_cut >= 0 and cutoffs[current_cut] > rr.num_ret:
        values[current_cut] = _div(rr.num_rel_ret, cutoffs[current_cut])
        current_cut -= 1
    rel_so_far = rr.num_rel_ret
    i = rr.num_ret
    while i > 0 and rel_so_far > 0:
        precis = float(rel_so_far) / float(i)
        if int_precis < precis:
            int_precis = precis
        while current_cut >= 0 and i == cutoffs[current_cut]:
            values[current_cut] = precis
            current_cut -= 1
        if rr.results_rel_list[i - 1] >= rr.relevance_level:
            rel_so_far -= 1
        i -= 1
    return values


def _lround(x: float) -> int:
    """C's lround: to the nearest, halves away from zero (x - floor(x) is exact, where
    floor(x + 0.5) would round 0.49999999999999994 up)."""
    if x < 0:
        return -_lround(-x)
    whole = math.floor(x)
    return int(whole) + (1 if x - whole >= 0.5 else 0)


def recall_cutoffs(rr: ResRels, levels: Sequence[float], rounding: str = "nearest"
                   ) -> List[int]:
    """The number of relevant docs for each recall level: ``lround(x * num_rel)``
    (10.0, ``"nearest"``) or ``(long)(x * num_rel + 0.9)`` (9.0.8, ``"trec_eval9"``)."""
    if rounding == "nearest":
        return [_lround(x * rr.num_rel) for x in levels]
    if rounding == "trec_eval9":
        return [int(x * rr.num_rel + 0.9) for x in levels]
    raise ValueError(f"unknown rounding {rounding!r}")


def _interpolated(rr: ResRels, levels: Sequence[float], rounding: str, store) -> None:
    """The loop shared by m_iprec_at_recall.c and m_11pt_avg.c; store(cut, int_precis)."""
    cutoffs = recall_cutoffs(rr, levels, rounding)
    current_cut = len(levels) - 1
    while current_cut >= 0 and cutoffs[current_cut] > rr.num_rel_ret:
        current_cut -= 1
    precis = _div(rr.num_rel_ret, rr.num_ret)
    int_precis = precis
    rel_so_far = rr.num_rel_ret
    i = rr.num_ret
    while i > 0 and rel_so_far > 0:
        precis = float(rel_so_far) / float(i)
        if int_precis < precis:
            int_precis = precis
        if rr.results_rel_list[i - 1] >= rr.relevance_level:
            while current_cut >= 0 and rel_so_far == cutoffs[current_cut]:
                store(current_cut, int_precis)
                current_cut -= 1
            rel_so_far -= 1
        i -= 1
    while current_cut >= 0:
        store(current_cut, int_precis)
        current_cut -= 1


def iprec_at_recall(rr: ResRels, levels: Sequence[float] = DEFAULT_RECALL_LEVELS,
                    rounding: str = "nearest") -> List[float]:
    """m_iprec_at_recall.c: interpolated precision at recall levels (NaN where C divides
    0 by 0: no doc retrieved)."""
    values = [0.0] * len(levels)

    def store(cut, value):
        values[cut] = value
    _interpolated(rr, levels, rounding, store)
    return values


def avg_11pt(rr: ResRels, levels: Sequence[float] = DEFAULT_RECALL_LEVELS,
             rounding: str = "nearest") -> float:
    """m_11pt_avg.c: interpolated precision summed over the levels (in the order the
    walk reaches them: highest first), over their number."""
    total = [0.0]

    def store(cut, value):
        total[0] += value
    _interpolated(rr, levels, rounding, store)
    return total[0] / float(len(levels))


def utility(rr: ResRels, params: Sequence[float] = DEFAULT_UTILITY,
            num_docs_in_coll: int = 0) -> float:
    """m_utility.c: p1 a + p2 b + p3 c + p4 d over the contingency table."""
    return (params[0] * rr.num_rel_ret
            + params[1] * (rr.num_ret - rr.num_rel_ret)
            + params[2] * (rr.num_rel - rr.num_rel_ret)
            + params[3] * (num_docs_in_coll + rr.num_rel_ret - rr.num_ret - rr.num_rel))


def set_p(rr: ResRels) -> float:
    """m_set_P.c: num_rel_ret / num_ret."""
    if rr.num_ret:
        return float(rr.num_rel_ret) / float(rr.num_ret)
    return 0.0


def set_relative_p(rr: ResRels) -> float:
    """m_set_rel_P.c: num_rel_ret / min(num_ret, num_rel)."""
    if rr.num_ret and rr.num_rel:
        return float(rr.num_rel_ret) / float(min(rr.num_ret, rr.num_rel))
    return 0.0


def set_recall(rr: ResRels) -> float:
    """m_set_recall.c: num_rel_ret / num_rel."""
    if rr.num_rel:
        return float(rr.num_rel_ret) / float(rr.num_rel)
    return 0.0


def set_map(rr: ResRels) -> float:
    """m_set_map.c: num_rel_ret^2 / (num_ret num_rel)."""
    if rr.num_ret and rr.num_rel:
        return ((float(rr.num_rel_ret) * float(rr.num_rel_ret))
                / (float(rr.num_ret) * float(rr.num_rel)))
    return 0.0


def set_f(rr: ResRels, x: float = 1.0) -> float:
    """m_set_F.c: (x + 1) P R / (x P + R)."""
    if rr.num_rel_ret:
        precision = float(rr.num_rel_ret) / float(rr.num_ret)
        rec = float(rr.num_rel_ret) / float(rr.num_rel)
        return _div((x + 1.0) * precision * rec, x * precision + rec)
    return 0.0


def num_nonrel_judged_ret(rr: ResRels) -> float:
    """m_num_nonrel_judged_ret.c: retrieved docs judged below relevance_level."""
    return float(rr.num_ret - rr.num_nonpool - rr.num_unjudged_in_pool - rr.num_rel_ret)


def bpref(rr: ResRels) -> float:
    """m_bpref.c: for each relevant retrieved doc, 1 - (judged nonrelevant above it,
    at most num_rel) / min(num_nonrel, num_rel); over num_rel."""
    num_nonrel = 0
    for j in range(rr.relevance_level):
        num_nonrel += rr.rel_levels[j] if j < len(rr.rel_levels) else 0
    nonrel_so_far = 0
    rel_so_far = 0
    pool_unjudged_so_far = 0
    value = 0.0
    for j in range(rr.num_ret):
        rel = rr.results_rel_list[j]
        if rel == RELVALUE_NONPOOL:
            continue
        if rel == RELVALUE_UNJUDGED:
            pool_unjudged_so_far += 1
            continue
        if 0 <= rel < rr.relevance_level:
            nonrel_so_far += 1
        else:
            rel_so_far += 1
            if nonrel_so_far > 0:
                value += 1.0 - _div(min(nonrel_so_far, rr.num_rel),
                                    min(num_nonrel, rr.num_rel))
            else:
                value += 1.0
    if rr.num_rel:
        value /= rr.num_rel
    return value


def gm_bpref(rr: ResRels) -> float:
    """m_gm_bpref.c: the per-topic value, log(max(bpref, MIN_GEO_MEAN))."""
    return _log(max(bpref(rr), MIN_GEO_MEAN))


def infap(rr: ResRels) -> float:
    """m_infap.c: inferred AP (Yilmaz & Aslam); pooled-unjudged docs (-2) count in the
    docs above, judged ones in the estimate, non-pool docs (-1) are skipped."""
    nonrel_so_far = 0
    rel_so_far = 0
    pool_unjudged_so_far = 0
    inf_ap = 0.0
    for j in range(rr.num_ret):
        rel = rr.results_rel_list[j]
        if rel == RELVALUE_NONPOOL:
            continue
        if rel == RELVALUE_UNJUDGED:
            pool_unjudged_so_far += 1
            continue
        if 0 <= rel < rr.relevance_level:
            nonrel_so_far += 1
        else:
            rel_so_far += 1
            if 0 == j:
                inf_ap += 1.0
            else:
                fj = float(j)
                inf_ap += (1.0 / (fj + 1.0)
                           + (fj / (fj + 1.0))
                           * ((rel_so_far - 1 + nonrel_so_far + pool_unjudged_so_far) / fj)
                           * (((rel_so_far - 1) + INFAP_EPSILON)
                              / ((rel_so_far - 1 + nonrel_so_far) + 2 * INFAP_EPSILON)))
    if rr.num_rel:
        inf_ap /= rr.num_rel
    return inf_ap


def bin_g(rr: ResRels) -> float:
    """m_binG.c: sum over relevant docs of 1 / log2(2 + nonrelevant above), over num_rel."""
    rel_so_far = 0
    total = 0.0
    for i in range(rr.num_ret):
        if rr.results_rel_list[i] >= rr.relevance_level:
            rel_so_far += 1
            total += _div(1.0, _log2(float(3 + i - rel_so_far)))
    if rel_so_far:
        return _div(total, rr.num_rel)
    return 0.0


def yaap(rr: ResRels) -> float:
    """m_yaap.c: log((1 + sum) / (1 + num_rel - sum)), sum as in map."""
    rel_so_far = 0
    total = 0.0
    for i in range(rr.num_ret):
        if rr.results_rel_list[i] >= rr.relevance_level:
            rel_so_far += 1
            total += float(rel_so_far) / float(i + 1)
    return _log(_div(1.0 + total, 1.0 + float(rr.num_rel) - total))


def unj(rr: ResRels, cutoffs: Sequence[int] = DEFAULT_UNJ_CUTOFFS) -> List[float]:
    """m_unjudged.c: docs with value -1 or -2 in the top k, over k."""
    return _at_cutoffs(rr, cutoffs, lambda unj_so_far, i: float(unj_so_far) / float(i),
                       lambda rel: rel in (RELVALUE_NONPOOL, RELVALUE_UNJUDGED))


def relstring(rr: ResRels, length: float = 10.0) -> str:
    """m_relstring.c: one character per doc of the top (long) length."""
    n = max(min(int(length), rr.num_ret), 0)
    chars = []
    for i in range(n):
        rel = rr.results_rel_list[i]
        if rel > 9:
            chars.append(">")
        elif rel >= 0:
            chars.append(chr(ord("0") + rel))
        elif rel == RELVALUE_NONPOOL:
            chars.append("-")
        elif rel == RELVALUE_UNJUDGED:
            chars.append(".")
        else:
            chars.append("<")
    return "".join(chars)


def rbp(rr: ResRels, pairs: Mapping[str, float] = ()) -> float:
    """m_rbp.c: (1 - p) sum_i gain(i) p^(i-1); p from the pair ``p`` (default 0.9); gains
    from the gain table, mapped to [0, 1] by (g - min) / (max - min) if any lies outside.
    C's min and max are uninitialised: here the table's smallest and largest gain."""
    items = list(pairs.items()) if isinstance(pairs, Mapping) else list(pairs)
    pers = 0.9
    for name, value in items:
        if name == "p":
            pers = float(value)
    gains = setup_gains(rr, items)
    if gains:
        lo = min(entry.gain for entry in gains)
        hi = max(entry.gain for entry in gains)
        if lo < 0 or hi > 1:
            for entry in gains:
                entry.gain = _div(entry.gain - lo, hi - lo)
    total = 0.0
    cur_p = 1.0
    for i in range(rr.num_ret):
        gain = get_gain(rr.results_rel_list[i], gains)
        if gain != 0:
            total += gain * cur_p
        cur_p = cur_p * pers
    return (1.0 - pers) * total


def rbp_resid(rr: ResRels, pairs: Mapping[str, float] = ()) -> float:
    """m_rbp_resid.c: p^N + (1 - p) sum over unjudged (value < 0) docs of p^(i-1); 0 if
    no retrieved doc is unjudged."""
    items = list(pairs.items()) if isinstance(pairs, Mapping) else list(pairs)
    pers = 0.9
    for name, value in items:
        if name == "p":
            pers = float(value)
    unj_so_far = 0
    total = 0.0
    cur_p = 1.0
    for i in range(rr.num_ret):
        if rr.results_rel_list[i] < 0:
            unj_so_far += 1
            total += cur_p
        cur_p = cur_p * pers
    if unj_so_far:
        return cur_p + (1 - pers) * total
    return 0.0


# ----------------------------------------------------------------- gain measures

def g(rr: ResRels, pairs: Mapping[str, float] = ()) -> float:
    """m_G.c: sum of gain(i) / log2(2 + cost so far - gain so far), over the ideal gain."""
    gains = setup_gains(rr, pairs)
    results_g = 0.0
    sum_results = 0.0
    sum_ideal = 0.0
    sum_cost = 0.0
    cur_level = len(gains) - 1
    ideal_gain = gains[cur_level].gain if cur_level >= 0 else 0.0
    num_at_level = 0
    min_cost = 1.0
    i = 0
    while i < rr.num_ret and ideal_gain > 0.0:
        results_gain = get_gain(rr.results_rel_list[i], gains)
        sum_results += results_gain
        cur_level, num_at_level, changed = _next_ideal(gains, cur_level, num_at_level)
        if changed is not None:
            ideal_gain = changed
        if ideal_gain > 0.0:
            sum_ideal += ideal_gain
        if ideal_gain >= min_cost:
            sum_cost += ideal_gain
        else:
            sum_cost += min_cost
        if results_gain != 0:
            results_g += _div(results_gain, _log2(2 + sum_cost - sum_results))
        i += 1
    while i < rr.num_ret:
        results_gain = get_gain(rr.results_rel_list[i], gains)
        sum_results += results_gain
        sum_cost += min_cost
        if results_gain != 0:
            results_g += _div(results_gain, _log2(2 + sum_cost - sum_results))
        i += 1
    while ideal_gain > 0.0:
        cur_level, num_at_level, changed = _next_ideal(gains, cur_level, num_at_level)
        if changed is not None:
            ideal_gain = changed
        if ideal_gain > 0.0:
            sum_ideal += ideal_gain
        i += 1
    if sum_ideal > 0.0:
        return results_g / sum_ideal
    return 0.0


def _ndcg_sums(rr: ResRels, pairs: Mapping[str, float] = ()) -> Tuple[float, float]:
    """m_ndcg.c's te_calc_ndcg: (results_dcg, ideal_dcg), no cut-off."""
    gains = setup_gains(rr, pairs)
    results_dcg = 0.0
    ideal_dcg = 0.0
    cur_level = len(gains) - 1
    ideal_gain = gains[cur_level].gain if cur_level >= 0 else 0.0
    num_at_level = 0
    i = 0
    while i < rr.num_ret and ideal_gain > 0.0:
        results_gain = get_gain(rr.results_rel_list[i], gains)
        if results_gain != 0:
            results_dcg += results_gain / _log2(float(i + 2))
        cur_level, num_at_level, changed = _next_ideal(gains, cur_level, num_at_level)
        if changed is not None:
            ideal_gain = changed
        if ideal_gain > 0.0:
            ideal_dcg += ideal_gain / _log2(float(i + 2))
        i += 1
    while i < rr.num_ret:
        results_gain = get_gain(rr.results_rel_list[i], gains)
        if results_gain != 0:
            results_dcg += results_gain / _log2(float(i + 2))
        i += 1
    while ideal_gain > 0.0:
        cur_level, num_at_level, changed = _next_ideal(gains, cur_level, num_at_level)
        if changed is not None:
            ideal_gain = changed
        if ideal_gain > 0.0:
            ideal_dcg += ideal_gain / _log2(float(i + 2))
        i += 1
    return results_dcg, ideal_dcg


def ndcg(rr: ResRels, pairs: Mapping[str, float] = ()) -> float:
    """m_ndcg.c (ndcg): dcg / ideal_dcg, 0 if ideal_dcg <= 0."""
    results_dcg, ideal_dcg_ = _ndcg_sums(rr, pairs)
    if ideal_dcg_ > 0.0:
        return results_dcg / ideal_dcg_
    return 0.0


def dcg(rr: ResRels, pairs: Mapping[str, float] = ()) -> float:
    """m_ndcg.c (dcg): sum of gain(i) / log2(i + 1) over all retrieved docs."""
    return _ndcg_sums(rr, pairs)[0]


def ideal_dcg(rr: ResRels, pairs: Mapping[str, float] = ()) -> float:
    """m_ndcg.c (ideal_dcg): the same over all positive-gain judged docs, best first."""
    return _ndcg_sums(rr, pairs)[1]


def ndcg_cut(rr: ResRels, cutoffs: Sequence[int] = DEFAULT_CUTOFFS) -> List[float]:
    """m_ndcg_cut.c: gain = the rel value if > 0 (no gain table); ideal from rel_levels."""
    values = [0.0] * len(cutoffs)
    cutoff_index = 0
    total = 0.0
    for i in range(rr.num_ret):
        if i == cutoffs[cutoff_index]:
            values[cutoff_index] = total
            cutoff_index += 1
            if cutoff_index == len(cutoffs):
                break
        gain = float(rr.results_rel_list[i])
        if gain > 0:
            total += gain / _log2(float(i + 2))
    while cutoff_index < len(cutoffs):
        values[cutoff_index] = total
        cutoff_index += 1
    cutoff_index = 0
    cur_lvl = rr.num_rel_levels - 1
    lvl_count = 0
    ideal = 0.0
    i = 0
    while True:
        lvl_count += 1
        while cur_lvl > 0 and lvl_count > rr.rel_levels[cur_lvl]:
            cur_lvl -= 1
            lvl_count = 1
        if cur_lvl == 0:
            break
        if i == cutoffs[cutoff_index]:
            if ideal > 0.0:
                values[cutoff_index] /= ideal
            cutoff_index += 1
            if cutoff_index == len(cutoffs):
                break
        gain = float(cur_lvl)
        ideal += gain / _log2(float(i + 2))
        i += 1
    while cutoff_index < len(cutoffs):
        if ideal > 0.0:
            values[cutoff_index] /= ideal
        cutoff_index += 1
    return values


def ndcg_rel(rr: ResRels, pairs: Mapping[str, float] = ()) -> float:
    """m_ndcg_rel.c: ndcg averaged over the ranks of positive-gain docs (an unretrieved
    one counts the final ndcg), over the number of positive-gain judged docs."""
    gains = setup_gains(rr, pairs)
    total = 0.0
    num_rel_ret = 0
    num_rel = 0
    results_dcg = 0.0
    ideal = 0.0
    cur_level = len(gains) - 1
    ideal_gain = gains[cur_level].gain if cur_level >= 0 else 0.0
    num_at_level = 0
    i = 0
    while i < rr.num_ret and ideal_gain > 0.0:
        results_gain = get_gain(rr.results_rel_list[i], gains)
        if results_gain != 0:
            results_dcg += results_gain / _log2(float(i + 2))
        cur_level, num_at_level, changed = _next_ideal(gains, cur_level, num_at_level)
        if changed is not None:
            ideal_gain = changed
        if ideal_gain > 0.0:
            num_rel += 1
            ideal += ideal_gain / _log2(float(i + 2))
        if results_gain > 0:
            total += _div(results_dcg, ideal)
            num_rel_ret += 1
        i += 1
    if i < rr.num_ret:
        while i < rr.num_ret:
            results_gain = get_gain(rr.results_rel_list[i], gains)
            if results_gain != 0:
                results_dcg += results_gain / _log2(float(i + 2))
            if results_gain > 0:
                total += _div(results_dcg, ideal)
                num_rel_ret += 1
            i += 1
    while ideal_gain > 0.0:
        cur_level, num_at_level, changed = _next_ideal(gains, cur_level, num_at_level)
        if changed is not None:
            ideal_gain = changed
        if ideal_gain > 0.0:
            num_rel += 1
            ideal += ideal_gain / _log2(float(i + 2))
        i += 1
    total += _div(float(num_rel - num_rel_ret) * results_dcg, ideal)
    if total > 0.0:
        return _div(total, num_rel)
    return 0.0


def rndcg(rr: ResRels, pairs: Mapping[str, float] = ()) -> float:
    """m_Rndcg.c: ndcg averaged at each rank where the ideal gain changes (plus one point
    at num_ret if the run goes past the positive ideal); 0 if num_rel is 0."""
    gains = setup_gains(rr, pairs)
    if rr.num_rel == 0:
        return 0.0
    total = 0.0
    results_dcg = 0.0
    ideal = 0.0
    cur_level = len(gains) - 1
    ideal_gain = gains[cur_level].gain if cur_level >= 0 else 0.0
    old_ideal_gain = ideal_gain
    num_changed_ideal_gain = 0
    num_at_level = 0
    i = 0
    while i < rr.num_ret and ideal_gain > 0.0:
        results_gain = get_gain(rr.results_rel_list[i], gains)
        cur_level, num_at_level, changed = _next_ideal(gains, cur_level, num_at_level)
        if changed is not None:
            ideal_gain = changed
        if old_ideal_gain != ideal_gain:
            if ideal > 0.0:
                total += results_dcg / ideal
                num_changed_ideal_gain += 1
            old_ideal_gain = ideal_gain
        if results_gain != 0:
            results_dcg += results_gain / _log2(float(i + 2))
        if ideal_gain > 0.0:
            ideal += ideal_gain / _log2(float(i + 2))
        i += 1
    if i < rr.num_ret:
        while i < rr.num_ret:
            results_gain = get_gain(rr.results_rel_list[i], gains)
            if results_gain != 0:
                results_dcg += results_gain / _log2(float(i + 2))
            i += 1
        if ideal > 0.0:
            total += results_dcg / ideal
            num_changed_ideal_gain += 1
    while ideal_gain > 0.0:
        cur_level, num_at_level, changed = _next_ideal(gains, cur_level, num_at_level)
        if changed is not None:
            ideal_gain = changed
        if old_ideal_gain != ideal_gain:
            if ideal > 0.0:
                total += results_dcg / ideal
                num_changed_ideal_gain += 1
            old_ideal_gain = ideal_gain
        if ideal_gain > 0.0:
            ideal += ideal_gain / _log2(float(i + 2))
        i += 1
    return _div(total, num_changed_ideal_gain)
