"""Ranking and per-topic measure kernels for the evaluator.

Inputs are batches in the flat + offsets layout: topic ``t`` owns rows
``offsets[t]:offsets[t + 1]``. After ranking, the rows of a topic are in rank
order and carry, per rank, a ``gain`` (graded measures) and a ``relevant``
weight (binary measures: 1 or 0, or a fraction under tie averaging). Every
kernel is one C loop over all topics with the GIL released; the ``def``
wrappers check every length first, so no input can index out of bounds.
Formulas follow trec_eval (see cumgain.measures for the definitions).
"""
from libc.math cimport log, log2, isnan, isfinite, NAN
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free, qsort

from cgcore._checks cimport check_offsets, check_per_topic
from cgcore._typedefs cimport gain_t, index_t

import numpy as np


# ---------------------------------------------------------------- ranking

cdef struct RankEntry:
    gain_t score
    index_t tie_key
    index_t row


cdef int _cmp_rank(const void* a, const void* b) noexcept nogil:
    """Score descending, then tie key ascending (a total order: rows are distinct)."""
    cdef const RankEntry* x = <const RankEntry*>a
    cdef const RankEntry* y = <const RankEntry*>b
    if x.score > y.score:
        return -1
    if x.score < y.score:
        return 1
    if x.tie_key < y.tie_key:
        return -1
    if x.tie_key > y.tie_key:
        return 1
    return (x.row > y.row) - (x.row < y.row)


def rank_topics(const gain_t[::1] scores, const index_t[::1] tie_keys,
                const index_t[::1] offsets):
    """The permutation that sorts each topic's rows by score descending, then
    tie key ascending (then row). Returns global row indices, topic by topic.

    Scores must not be NaN (the caller rejects them): NaN has no order.
    """
    cdef index_t n_topics = check_offsets(offsets, scores.shape[0], "offsets")
    if tie_keys.shape[0] != scores.shape[0]:
        raise ValueError(f"{tie_keys.shape[0]} tie keys for {scores.shape[0]} scores")
    order = np.empty(scores.shape[0], dtype=np.int64)
    cdef index_t[::1] out = order
    cdef Py_ssize_t t, i, start, length, longest = 0
    for t in range(n_topics):
        if offsets[t + 1] - offsets[t] > longest:
            longest = offsets[t + 1] - offsets[t]
    cdef RankEntry* entries
    with nogil:
        entries = <RankEntry*>malloc((longest + 1) * sizeof(RankEntry))
        if entries != NULL:
            for t in range(n_topics):
                start = offsets[t]
                length = offsets[t + 1] - start
                for i in range(length):
                    entries[i].score = scores[start + i]
                    entries[i].tie_key = tie_keys[start + i]
                    entries[i].row = start + i
                qsort(entries, length, sizeof(RankEntry), _cmp_rank)
                for i in range(length):
                    out[start + i] = entries[i].row
            free(entries)
    if entries == NULL:
        raise MemoryError("no memory for ranking")
    return order


# ---------------------------------------------------------------- binary measures

def count_at_least(const gain_t[::1] levels, const index_t[::1] offsets, double level):
    """#{i in topic t : levels[i] >= level} per topic, as float64 (R, the number of
    relevant judgments, from a topic's judgment levels)."""
    cdef index_t n_topics = check_offsets(offsets, levels.shape[0], "offsets")
    result = np.empty(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i
    cdef int64_t count
    with nogil:
        for t in range(n_topics):
            count = 0
            for i in range(offsets[t], offsets[t + 1]):
                count += levels[i] >= level
            out[t] = <gain_t>count
    return result


def relevant_in_top(const gain_t[::1] relevant, const index_t[::1] offsets,
                    const index_t[::1] cutoffs):
    """sum_{i <= min(k_t, N_t)} relevant[i] per topic, k_t = cutoffs[t]
    (P@k = this / k, recall@k = this / R, success@k = this > 0, Rprec with k_t = R)."""
    cdef index_t n_topics = check_offsets(offsets, relevant.shape[0], "offsets")
    check_per_topic(cutoffs.shape[0], n_topics, "cutoffs")
    result = np.empty(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i, stop
    cdef gain_t total
    with nogil:
        for t in range(n_topics):
            stop = offsets[t + 1]
            if cutoffs[t] < stop - offsets[t]:
                stop = offsets[t] + (cutoffs[t] if cutoffs[t] > 0 else 0)
            total = 0.0
            for i in range(offsets[t], stop):
                total = total + relevant[i]
            out[t] = total
    return result


def average_precision(const gain_t[::1] relevant, const index_t[::1] offsets,
                      const gain_t[::1] num_relevant, Py_ssize_t cutoff):
    """AP: sum over relevant ranks i <= cutoff of (relevant so far) / i, divided by R
    (R counts unretrieved relevant documents too); 0 when R = 0. Binary weights only."""
    cdef index_t n_topics = check_offsets(offsets, relevant.shape[0], "offsets")
    check_per_topic(num_relevant.shape[0], n_topics, "num_relevant")
    if cutoff < 1:
        raise ValueError(f"cutoff must be >= 1, got {cutoff}")
    result = np.empty(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i, length
    cdef gain_t found, total
    with nogil:
        for t in range(n_topics):
            length = offsets[t + 1] - offsets[t]
            if length > cutoff:
                length = cutoff
            found = 0.0
            total = 0.0
            for i in range(length):
                if relevant[offsets[t] + i] != 0.0:
                    found = found + 1.0
                    total = total + found / <gain_t>(i + 1)
            out[t] = total / num_relevant[t] if num_relevant[t] > 0.0 else 0.0
    return result


def reciprocal_rank(const gain_t[::1] relevant, const index_t[::1] offsets, Py_ssize_t cutoff):
    """1 / (rank of the first relevant document within the cutoff), else 0."""
    cdef index_t n_topics = check_offsets(offsets, relevant.shape[0], "offsets")
    if cutoff < 1:
        raise ValueError(f"cutoff must be >= 1, got {cutoff}")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i, length
    with nogil:
        for t in range(n_topics):
            length = offsets[t + 1] - offsets[t]
            if length > cutoff:
                length = cutoff
            for i in range(length):
                if relevant[offsets[t] + i] != 0.0:
                    out[t] = 1.0 / <gain_t>(i + 1)
                    break
    return result


# ---------------------------------------------------------------- trec_eval's graded extras

cdef inline gain_t _trec_discount(Py_ssize_t i) noexcept nogil:
    """trec_eval's divisor for 0-based position i: log2(i + 2)."""
    return log2(<gain_t>(i + 2))


cdef gain_t _ndcg_rel_topic(const gain_t* gains, Py_ssize_t n_ret,
                            const gain_t* ideal, Py_ssize_t n_ideal) noexcept nogil:
    """trec_eval's ndcg_rel (m_ndcg_rel.c): the mean over positive-gain ideal
    documents of nDCG at each retrieved positive-gain document; an unretrieved
    one contributes the final dcg / ideal dcg."""
    cdef gain_t results_dcg = 0.0, ideal_dcg = 0.0, total = 0.0
    cdef Py_ssize_t num_rel = 0, num_rel_ret = 0, i = 0
    cdef bint ideal_positive = n_ideal > 0
    if n_ideal == 0:
        return 0.0
    while i < n_ret and ideal_positive:
        if gains[i] != 0.0:
            results_dcg = results_dcg + gains[i] / _trec_discount(i)
        ideal_positive = i < n_ideal
        if ideal_positive:
            num_rel += 1
            ideal_dcg = ideal_dcg + ideal[i] / _trec_discount(i)
        if gains[i] > 0.0:
            total = total + results_dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while i < n_ret:
        if gains[i] != 0.0:
            results_dcg = results_dcg + gains[i] / _trec_discount(i)
        if gains[i] > 0.0:
            total = total + results_dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while ideal_positive:
        ideal_positive = i < n_ideal
        if ideal_positive:
            num_rel += 1
            ideal_dcg = ideal_dcg + ideal[i] / _trec_discount(i)
        i += 1
    total = total + <gain_t>(num_rel - num_rel_ret) * results_dcg / ideal_dcg
    if not (isfinite(results_dcg) and isfinite(ideal_dcg) and isfinite(total)):
        return NAN      # a sum left float64's range: the evaluator refuses it
    if total > 0.0:
        return total / <gain_t>num_rel
    return 0.0


cdef gain_t _rndcg_topic(const gain_t* gains, Py_ssize_t n_ret,
                         const gain_t* ideal, Py_ssize_t n_ideal) noexcept nogil:
    """trec_eval's Rndcg (m_Rndcg.c): the mean of nDCG taken at each rank where the
    ideal gain changes (the R-levels), plus one point at the end of the run if it
    goes past the last positive ideal document."""
    cdef gain_t results_dcg = 0.0, ideal_dcg = 0.0, total = 0.0
    cdef gain_t ideal_gain, old_ideal_gain
    cdef Py_ssize_t points = 0, i = 0
    if n_ideal == 0:
        return 0.0
    ideal_gain = ideal[0]
    old_ideal_gain = ideal_gain
    while i < n_ret and ideal_gain > 0.0:
        ideal_gain = ideal[i] if i < n_ideal else 0.0
        if old_ideal_gain != ideal_gain:
            if ideal_dcg > 0.0:
                total = total + results_dcg / ideal_dcg
                points += 1
            old_ideal_gain = ideal_gain
        if gains[i] != 0.0:
            results_dcg = results_dcg + gains[i] / _trec_discount(i)
        if ideal_gain > 0.0:
            ideal_dcg = ideal_dcg + ideal_gain / _trec_discount(i)
        i += 1
    if i < n_ret:
        while i < n_ret:
            if gains[i] != 0.0:
                results_dcg = results_dcg + gains[i] / _trec_discount(i)
            i += 1
        if ideal_dcg > 0.0:
            total = total + results_dcg / ideal_dcg
            points += 1
    while ideal_gain > 0.0:
        ideal_gain = ideal[i] if i < n_ideal else 0.0
        if old_ideal_gain != ideal_gain:
            if ideal_dcg > 0.0:
                total = total + results_dcg / ideal_dcg
                points += 1
            old_ideal_gain = ideal_gain
        if ideal_gain > 0.0:
            ideal_dcg = ideal_dcg + ideal_gain / _trec_discount(i)
        i += 1
    if not (isfinite(results_dcg) and isfinite(ideal_dcg) and isfinite(total)):
        return NAN      # a sum left float64's range: the evaluator refuses it
    return total / <gain_t>points if points > 0 else 0.0


def trec_ndcg_rel_and_rndcg(const gain_t[::1] gains, const index_t[::1] offsets,
                            const gain_t[::1] ideal, const index_t[::1] ideal_offsets):
    """Per topic (ndcg_rel, Rndcg) from ranked gains and the topic's ideal gains
    (positive, sorted descending). Rndcg's "0 when num_rel = 0" rule is the caller's.
    NaN for a topic whose DCG, ideal DCG or sum of ratios leaves float64's range
    (trec_eval would print 0 or NaN): the evaluator refuses non-finite values."""
    cdef index_t n_topics = check_offsets(offsets, gains.shape[0], "offsets")
    if check_offsets(ideal_offsets, ideal.shape[0], "ideal_offsets") != n_topics:
        raise ValueError("gains and ideal cover different numbers of topics")
    ndcg_rel = np.empty(n_topics, dtype=np.float64)
    rndcg = np.empty(n_topics, dtype=np.float64)
    cdef gain_t[::1] rel_out = ndcg_rel
    cdef gain_t[::1] r_out = rndcg
    cdef Py_ssize_t t
    cdef const gain_t* gain_rows = &gains[0] if gains.shape[0] > 0 else NULL
    cdef const gain_t* ideal_rows = &ideal[0] if ideal.shape[0] > 0 else NULL
    with nogil:
        for t in range(n_topics):
            rel_out[t] = _ndcg_rel_topic(
                gain_rows + offsets[t] if gain_rows != NULL else NULL,
                offsets[t + 1] - offsets[t],
                ideal_rows + ideal_offsets[t] if ideal_rows != NULL else NULL,
                ideal_offsets[t + 1] - ideal_offsets[t])
            r_out[t] = _rndcg_topic(
                gain_rows + offsets[t] if gain_rows != NULL else NULL,
                offsets[t + 1] - offsets[t],
                ideal_rows + ideal_offsets[t] if ideal_rows != NULL else NULL,
                ideal_offsets[t + 1] - ideal_offsets[t])
    return ndcg_rel, rndcg


def log_floored(const gain_t[::1] values, double floor):
    """log(max(v, floor)) per value with libm's log, as trec_eval's gm_map does
    (numpy's vectorised log may differ from libm in the last bit)."""
    result = np.empty(values.shape[0], dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t i
    with nogil:
        for i in range(values.shape[0]):
            out[i] = log(values[i] if values[i] > floor else floor)
    return result
