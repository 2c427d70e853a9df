"""Kernels of trec_eval's rank-wise measures beyond precision, recall and AP.

Every kernel is one C loop over all topics (flat values + ``offsets``, topic ``t`` owns
rows ``offsets[t]:offsets[t + 1]`` in rank order) with the GIL released; the ``def``
wrappers check every length first. Each follows its trec_eval source (named in the
docstring) statement by statement, so that the sums are accumulated in the same order
and the values are bit-identical. Where trec_eval divides 0 by 0 (a topic with no
retrieved document, possible under -J), the value is 0 here.
"""
from libc.math cimport log2, lround, isfinite, NAN
from libc.stdint cimport int8_t, int64_t
from libc.stdlib cimport malloc, free

from cgcore._checks cimport check_offsets, check_per_topic
from cgcore._typedefs cimport gain_t, index_t

import numpy as np

# Codes of the status array (cumgain.measures.batch): what each ranked document is.
cdef enum:
    NOT_POOLED = 0
    UNJUDGED = 1
    NONRELEVANT = 2
    RELEVANT = 3

cdef enum:
    ROUND_NEAREST_C = 0         # trec_eval 10.0: lround(x * R)
    ROUND_UP_FROM_TENTH_C = 1   # trec_eval <= 9.0.8: (long) (x * R + 0.9)

ROUND_NEAREST = ROUND_NEAREST_C
ROUND_UP_FROM_TENTH = ROUND_UP_FROM_TENTH_C


cdef int _check_counts(const gain_t[::1] counts, str name) except -1:
    """Counts (R) must be whole, >= 0 and small enough to index with."""
    cdef Py_ssize_t t
    for t in range(counts.shape[0]):
        if not (counts[t] >= 0 and counts[t] <= 1e12) or counts[t] != <int64_t>counts[t]:
            raise ValueError(f"{name}[{t}] = {counts[t]} is not a count")
    return 0


cdef int _check_fractions(const gain_t[::1] points) except -1:
    cdef Py_ssize_t j
    for j in range(points.shape[0]):
        if not (isfinite(points[j]) and points[j] >= 0 and points[j] <= 1e6):
            raise ValueError(f"cut-off {points[j]} must be a finite number in [0, 1e6]")
    return 0


# ---------------------------------------------------------------- interpolated precision

cdef inline int64_t _count_relevant(const gain_t[::1] relevant, Py_ssize_t start,
                                    Py_ssize_t n) noexcept nogil:
    """How many of rows start .. start + n are relevant (num_rel_ret)."""
    cdef Py_ssize_t i
    cdef int64_t count = 0
    for i in range(start, start + n):
        if relevant[i] != 0.0:
            count += 1
    return count


cdef inline void _relevant_cutoffs(int64_t* cutoffs, const gain_t[::1] points, int64_t num_rel,
                                   int rounding) noexcept nogil:
    """Each fraction of R as a number of documents, rounded as trec_eval rounds."""
    cdef Py_ssize_t j
    for j in range(points.shape[0]):
        if rounding == ROUND_NEAREST_C:
            cutoffs[j] = lround(points[j] * <gain_t>num_rel)
        else:
            cutoffs[j] = <int64_t>(points[j] * <gain_t>num_rel + 0.9)


def interpolated_precision(const gain_t[::1] relevant, const index_t[::1] offsets,
                           const gain_t[::1] num_relevant, const gain_t[::1] points,
                           int rounding):
    """iprec_at_recall and 11pt_avg (m_iprec_at_recall.c, m_11pt_avg.c).

    Per topic, cut-off j in relevant documents c_j = lround(points[j] * R) (trec_eval
    10; ``ROUND_UP_FROM_TENTH``: (long) (points[j] * R + 0.9), trec_eval 9.0.8);
    walking the ranking from the end, the interpolated precision max_{Y >= X} P(Y)
    is assigned to each cut-off reached, from the last parameter down. Returns
    (values, sums): a topics x points table (0 where never assigned), and per topic
    the sum of the assigned values in the order assigned (11pt_avg = sum / n).
    """
    cdef index_t n_topics = check_offsets(offsets, relevant.shape[0], "offsets")
    check_per_topic(num_relevant.shape[0], n_topics, "num_relevant")
    _check_counts(num_relevant, "num_relevant")
    _check_fractions(points)
    if rounding != ROUND_NEAREST_C and rounding != ROUND_UP_FROM_TENTH_C:
        raise ValueError(f"unknown rounding {rounding}")
    cdef Py_ssize_t n_points = points.shape[0]
    values = np.zeros((n_topics, n_points), dtype=np.float64)
    sums = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[:, ::1] out = values
    cdef gain_t[::1] out_sums = sums
    cdef int64_t* cutoffs = <int64_t*>malloc((n_points + 1) * sizeof(int64_t))
    if cutoffs == NULL:
        raise MemoryError("no memory for the recall cut-offs")
    cdef Py_ssize_t t, i, j, start, num_ret, current_cut
    cdef int64_t num_rel, num_rel_ret, rel_so_far
    cdef gain_t precis, int_precis, total
    with nogil:
        for t in range(n_topics):
            start = offsets[t]
            num_ret = offsets[t + 1] - start
            num_rel = <int64_t>num_relevant[t]
            num_rel_ret = _count_relevant(relevant, start, num_ret)
            _relevant_cutoffs(cutoffs, points, num_rel, rounding)
            if num_ret == 0:
                continue        # trec_eval: 0 / 0; here every value stays 0
            current_cut = n_points - 1
            while current_cut >= 0 and cutoffs[current_cut] > num_rel_ret:
                current_cut -= 1
            precis = <gain_t>num_rel_ret / <gain_t>num_ret
            int_precis = precis
            rel_so_far = num_rel_ret
            total = 0.0
            i = num_ret
            while i > 0 and rel_so_far > 0:
                precis = <gain_t>rel_so_far / <gain_t>i
                if int_precis < precis:
                    int_precis = precis
                if relevant[start + i - 1] != 0.0:
                    while current_cut >= 0 and rel_so_far == cutoffs[current_cut]:
                        out[t, current_cut] = int_precis
                        total = total + int_precis
                        current_cut -= 1
                    rel_so_far -= 1
                i -= 1
            while current_cut >= 0:
                out[t, current_cut] = int_precis
                total = total + int_precis
                current_cut -= 1
            out_sums[t] = total
    free(cutoffs)
    return values, sums


def precision_at_r_multiples(const gain_t[::1] relevant, const index_t[::1] offsets,
                             const gain_t[::1] num_relevant, const gain_t[::1] points):
    """Rprec_mult (m_Rprec_mult.c): precision at c_j = (long) (points[j] * R + 0.9)
    documents, c_j beyond the ranking counting the missing ones as non-relevant.
    Returns a topics x points table (0 where trec_eval assigns nothing)."""
    cdef index_t n_topics = check_offsets(offsets, relevant.shape[0], "offsets")
    check_per_topic(num_relevant.shape[0], n_topics, "num_relevant")
    _check_counts(num_relevant, "num_relevant")
    _check_fractions(points)
    cdef Py_ssize_t n_points = points.shape[0]
    values = np.zeros((n_topics, n_points), dtype=np.float64)
    cdef gain_t[:, ::1] out = values
    cdef int64_t* cutoffs = <int64_t*>malloc((n_points + 1) * sizeof(int64_t))
    if cutoffs == NULL:
        raise MemoryError("no memory for the cut-offs")
    cdef Py_ssize_t t, i, j, start, num_ret, current_cut
    cdef int64_t num_rel, num_rel_ret, rel_so_far
    cdef gain_t precis
    with nogil:
        for t in range(n_topics):
            start = offsets[t]
            num_ret = offsets[t + 1] - start
            num_rel = <int64_t>num_relevant[t]
            num_rel_ret = _count_relevant(relevant, start, num_ret)
            _relevant_cutoffs(cutoffs, points, num_rel, ROUND_UP_FROM_TENTH_C)
            current_cut = n_points - 1
            while current_cut >= 0 and cutoffs[current_cut] > num_ret:
                out[t, current_cut] = <gain_t>num_rel_ret / <gain_t>cutoffs[current_cut]
                current_cut -= 1
            rel_so_far = num_rel_ret
            i = num_ret
            while i > 0 and rel_so_far > 0:
                precis = <gain_t>rel_so_far / <gain_t>i
                while current_cut >= 0 and i == cutoffs[current_cut]:
                    out[t, current_cut] = precis
                    current_cut -= 1
                if relevant[start + i - 1] != 0.0:
                    rel_so_far -= 1
                i -= 1
    free(cutoffs)
    return values


# ---------------------------------------------------------------- judged documents only

def binary_preference(const int8_t[::1] status, const index_t[::1] offsets,
                      const gain_t[::1] num_relevant, const gain_t[::1] num_nonrelevant):
    """bpref (m_bpref.c): over the relevant retrieved documents, 1 - min(n, R) /
    min(N, R), n the judged non-relevant ranked above it and N all judged non-relevant
    (1 when n = 0); summed, divided by R (0 when R = 0). Documents not judged are
    skipped."""
    cdef index_t n_topics = check_offsets(offsets, status.shape[0], "offsets")
    check_per_topic(num_relevant.shape[0], n_topics, "num_relevant")
    check_per_topic(num_nonrelevant.shape[0], n_topics, "num_nonrelevant")
    _check_counts(num_relevant, "num_relevant")
    _check_counts(num_nonrelevant, "num_nonrelevant")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i
    cdef int64_t nonrel_so_far, num_rel, num_nonrel, low_rel, low_all
    cdef gain_t bpref
    with nogil:
        for t in range(n_topics):
            num_rel = <int64_t>num_relevant[t]
            num_nonrel = <int64_t>num_nonrelevant[t]
            nonrel_so_far = 0
            bpref = 0.0
            for i in range(offsets[t], offsets[t + 1]):
                if status[i] == NONRELEVANT:
                    nonrel_so_far += 1
                elif status[i] == RELEVANT:
                    if nonrel_so_far > 0:
                        low_rel = nonrel_so_far if nonrel_so_far < num_rel else num_rel
                        low_all = num_nonrel if num_nonrel < num_rel else num_rel
                        bpref = bpref + (1.0 - <gain_t>low_rel / <gain_t>low_all)
                    else:
                        bpref = bpref + 1.0
            if num_rel:
                bpref = bpref / <gain_t>num_rel
            out[t] = bpref
    return result


def inferred_average_precision(const int8_t[::1] status, const index_t[::1] offsets,
                               const gain_t[::1] num_relevant):
    """infAP (m_infap.c, Yilmaz & Aslam 2006): at the relevant document at 0-based rank
    j > 0, 1/(j+1) + (j/(j+1)) * ((r - 1 + n + u) / j) * ((r - 1 + e) / (r - 1 + n + 2e)),
    r the relevant so far (itself included), n judged non-relevant and u pooled but
    unjudged above it, e = 1e-5; 1 at rank 0; summed, divided by R (0 when R = 0)."""
    cdef index_t n_topics = check_offsets(offsets, status.shape[0], "offsets")
    check_per_topic(num_relevant.shape[0], n_topics, "num_relevant")
    _check_counts(num_relevant, "num_relevant")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i, j
    cdef int64_t nonrel_so_far, rel_so_far, unjudged_so_far, num_rel
    cdef gain_t inf_ap, fj
    cdef gain_t epsilon = 0.00001
    with nogil:
        for t in range(n_topics):
            num_rel = <int64_t>num_relevant[t]
            nonrel_so_far = 0
            rel_so_far = 0
            unjudged_so_far = 0
            inf_ap = 0.0
            for i in range(offsets[t], offsets[t + 1]):
                j = i - offsets[t]
                if status[i] == NOT_POOLED:
                    continue
                if status[i] == UNJUDGED:
                    unjudged_so_far += 1
                    continue
                if status[i] == NONRELEVANT:
                    nonrel_so_far += 1
                else:
                    rel_so_far += 1
                    if j == 0:
                        inf_ap = inf_ap + 1.0
                    else:
                        fj = <gain_t>j
                        inf_ap = inf_ap + (1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                            <gain_t>(rel_so_far - 1 + nonrel_so_far + unjudged_so_far) / fj)
                            * ((<gain_t>(rel_so_far - 1) + epsilon)
                               / (<gain_t>(rel_so_far - 1 + nonrel_so_far) + 2 * epsilon)))
            if num_rel:
                inf_ap = inf_ap / <gain_t>num_rel
            out[t] = inf_ap
    return result


# ---------------------------------------------------------------- discounted sums

def binary_gain(const gain_t[::1] relevant, const index_t[::1] offsets,
                const gain_t[::1] num_relevant):
    """binG (m_binG.c): sum over relevant retrieved documents (0-based rank i, the r-th
    relevant) of 1 / log2(2 + i - r + 1), divided by R; 0 when none is retrieved."""
    cdef index_t n_topics = check_offsets(offsets, relevant.shape[0], "offsets")
    check_per_topic(num_relevant.shape[0], n_topics, "num_relevant")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i
    cdef int64_t rel_so_far
    cdef gain_t total
    with nogil:
        for t in range(n_topics):
            rel_so_far = 0
            total = 0.0
            for i in range(offsets[t + 1] - offsets[t]):
                if relevant[offsets[t] + i] != 0.0:
                    rel_so_far += 1
                    total = total + 1.0 / log2(<gain_t>(3 + i - rel_so_far))
            if rel_so_far:
                out[t] = total / num_relevant[t]
    return result


def geometric_sums(const gain_t[::1] weights, const index_t[::1] offsets, double p):
    """Per topic, sum_i w_i p^i over the ranked rows with w_i != 0 (p^i by repeated
    multiplication, as m_rbp.c and m_rbp_resid.c compute it), and p^N. Returns
    (sums, p_to_the_n)."""
    cdef index_t n_topics = check_offsets(offsets, weights.shape[0], "offsets")
    if not isfinite(p):
        raise ValueError(f"p must be finite, got {p}")
    sums = np.zeros(n_topics, dtype=np.float64)
    powers = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = sums
    cdef gain_t[::1] out_powers = powers
    cdef Py_ssize_t t, i
    cdef gain_t total, cur_p
    with nogil:
        for t in range(n_topics):
            total = 0.0
            cur_p = 1.0
            for i in range(offsets[t], offsets[t + 1]):
                if weights[i] != 0:
                    total = total + weights[i] * cur_p
                cur_p = cur_p * p
            out[t] = total
            out_powers[t] = cur_p
    return sums, powers


def cost_gain(const gain_t[::1] gains, const index_t[::1] offsets,
              const gain_t[::1] ideal, const index_t[::1] ideal_offsets):
    """G (m_G.c): sum over ranked documents with gain g_i != 0 of
    g_i / log2(2 + C_i - S_i), S_i the gain so far and C_i = sum_{j <= i} max(I_j, 1)
    (I the ideal gains, 0 past their end); divided by the sum of the ideal gains (0 when
    that is 0). ``ideal``: each topic's positive judged gains, sorted descending. NaN
    for a topic where one of these sums leaves float64's range (trec_eval would print
    a wrong finite value or NaN): the evaluator refuses non-finite values."""
    cdef index_t n_topics = check_offsets(offsets, gains.shape[0], "offsets")
    if check_offsets(ideal_offsets, ideal.shape[0], "ideal_offsets") != n_topics:
        raise ValueError("gains and ideal cover different numbers of topics")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i, n_ret, n_ideal
    cdef gain_t results_gain, sum_results, sum_ideal, sum_cost, results_g, ideal_gain
    with nogil:
        for t in range(n_topics):
            n_ret = offsets[t + 1] - offsets[t]
            n_ideal = ideal_offsets[t + 1] - ideal_offsets[t]
            results_g = 0.0
            sum_results = 0.0
            sum_ideal = 0.0
            sum_cost = 0.0
            i = 0
            # trec_eval's first loop runs while the ideal gain of the rank before is
            # positive, and its last pass is the first rank past the ideal list
            ideal_gain = ideal[ideal_offsets[t]] if n_ideal > 0 else 0.0
            while i < n_ret and ideal_gain > 0.0:
                results_gain = gains[offsets[t] + i]
                sum_results = sum_results + results_gain
                ideal_gain = ideal[ideal_offsets[t] + i] if i < n_ideal else 0.0
                if ideal_gain > 0.0:
                    sum_ideal = sum_ideal + ideal_gain
                if ideal_gain >= 1.0:
                    sum_cost = sum_cost + ideal_gain
                else:
                    sum_cost = sum_cost + 1.0
                if results_gain != 0:
                    results_g = results_g + results_gain / log2(2 + sum_cost - sum_results)
                i += 1
            while i < n_ret:
                results_gain = gains[offsets[t] + i]
                sum_results = sum_results + results_gain
                sum_cost = sum_cost + 1.0
                if results_gain != 0:
                    results_g = results_g + results_gain / log2(2 + sum_cost - sum_results)
                i += 1
            while ideal_gain > 0.0:
                ideal_gain = ideal[ideal_offsets[t] + i] if i < n_ideal else 0.0
                if ideal_gain > 0.0:
                    sum_ideal = sum_ideal + ideal_gain
                i += 1
            if not (isfinite(results_g) and isfinite(sum_ideal) and isfinite(sum_cost)
                    and isfinite(sum_results)):
                out[t] = NAN        # a sum left float64's range: the caller refuses it
            elif sum_ideal > 0.0:
                out[t] = results_g / sum_ideal
    return result
