"""Exact expectations of the order-dependent binary measures over every order of the
documents inside each group of equal scores (McSherry & Najork, ECIR 2008).

A topic's ranked rows are in rank order; its groups are the runs of equal scores. Each
group is ordered uniformly at random, independently of the others: a group of ``n``
documents, ``m`` of them relevant, starting at rank ``s + 1`` (``s`` documents before
it, ``C`` of them relevant) puts a relevant document at each of its ranks with
probability ``m / n``, two given ranks both relevant with ``m (m - 1) / (n (n - 1))``.
``relevant`` holds flags (1.0 or 0.0). Each kernel is one C loop over the topics with
the GIL released; the wrappers check every length first.
"""
from libc.stdint cimport int64_t, int8_t, uint8_t
from libc.stdlib cimport free, malloc, qsort

from cgcore._checks cimport check_offsets, check_per_topic
from cgcore._typedefs cimport gain_t, index_t

import numpy as np

cdef enum:
    NONRELEVANT = 2         # cumgain.measures.batch's status codes
    RELEVANT = 3


cdef struct Tied:
    double level        # the judged level (0 without a judgment)
    int judged
    int64_t row


cdef int _best_first(const void* a, const void* b) noexcept nogil:
    """Highest level first; among equal levels, documents without a judgment first;
    then in the order given."""
    cdef const Tied* x = <const Tied*>a
    cdef const Tied* y = <const Tied*>b
    if x.level != y.level:
        return -1 if x.level > y.level else 1
    if x.judged != y.judged:
        return x.judged - y.judged
    return (x.row > y.row) - (x.row < y.row)


cdef int _worst_first(const void* a, const void* b) noexcept nogil:
    """Lowest level first; among equal levels, judged documents first; then in the
    order given."""
    cdef const Tied* x = <const Tied*>a
    cdef const Tied* y = <const Tied*>b
    if x.level != y.level:
        return -1 if x.level < y.level else 1
    if x.judged != y.judged:
        return y.judged - x.judged
    return (x.row > y.row) - (x.row < y.row)


cdef inline Py_ssize_t _group_end(const gain_t* scores, Py_ssize_t start,
                                  Py_ssize_t stop) noexcept nogil:
    """The end of the group of equal scores that starts at ``start`` (before ``stop``)."""
    cdef Py_ssize_t end = start + 1
    while end < stop and scores[end] == scores[start]:
        end += 1
    return end


cdef inline gain_t _count(const gain_t* relevant, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    cdef gain_t m = 0.0
    cdef Py_ssize_t i
    for i in range(start, end):
        if relevant[i] != 0.0:
            m += 1.0
    return m


cdef Py_ssize_t _check(const gain_t[::1] relevant, const gain_t[::1] scores,
                       const index_t[::1] offsets, Py_ssize_t cutoff) except -1:
    cdef Py_ssize_t n_topics = check_offsets(offsets, relevant.shape[0], "offsets")
    check_per_topic(scores.shape[0], relevant.shape[0], "scores")
    if cutoff < 1:
        raise ValueError(f"cutoff must be >= 1, got {cutoff}")
    return n_topics


def expected_average_precision(const gain_t[::1] relevant, const gain_t[::1] scores,
                               const index_t[::1] offsets, const gain_t[::1] num_relevant,
                               Py_ssize_t cutoff):
    """E[AP] = (1/R) sum_{i <= cutoff} E[rel(i) found(i)] / i, with, at the k-th rank
    (from 0) of a group: E[rel(i) found(i)] = (m/n) (1 + C) + k m (m - 1) / (n (n - 1));
    0 when R = 0."""
    cdef Py_ssize_t n_topics = _check(relevant, scores, offsets, cutoff)
    check_per_topic(num_relevant.shape[0], n_topics, "num_relevant")
    result = np.empty(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, start, end, stop, i
    cdef gain_t m, n, before, pair, total
    with nogil:
        for t in range(n_topics):
            start, stop, total, before = offsets[t], offsets[t + 1], 0.0, 0.0
            while start < stop and start - offsets[t] < cutoff:
                end = _group_end(&scores[0], start, stop)
                m, n = _count(&relevant[0], start, end), <gain_t>(end - start)
                pair = m * (m - 1.0) / (n * (n - 1.0)) if n > 1.0 else 0.0
                if m > 0.0:
                    for i in range(start, end):
                        if i - offsets[t] >= cutoff:
                            break
                        total += (m / n * (1.0 + before) + (i - start) * pair) \
                            / <gain_t>(i - offsets[t] + 1)
                before += m
                start = end
            out[t] = total / num_relevant[t] if num_relevant[t] > 0.0 else 0.0
    return result


def expected_reciprocal_rank(const gain_t[::1] relevant, const gain_t[::1] scores,
                             const index_t[::1] offsets, Py_ssize_t cutoff):
    """E[1 / rank of the first relevant document within the cutoff] (0 if none): in
    the first group with m > 0, its j-th rank (from 0) comes first with probability
    P_0 = m / n, P_{j+1} = P_j (n - m - j) / (n - 1 - j)."""
    cdef Py_ssize_t n_topics = _check(relevant, scores, offsets, cutoff)
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, start, end, stop, j
    cdef gain_t m, n, chance, total
    with nogil:
        for t in range(n_topics):
            start, stop = offsets[t], offsets[t + 1]
            while start < stop and start - offsets[t] < cutoff:
                end = _group_end(&scores[0], start, stop)
                m, n = _count(&relevant[0], start, end), <gain_t>(end - start)
                if m > 0.0:
                    chance, total = m / n, 0.0
                    for j in range(end - start - <Py_ssize_t>m + 1):
                        if start + j - offsets[t] >= cutoff:
                            break
                        total += chance / <gain_t>(start + j - offsets[t] + 1)
                        if n - m - j > 0.0:
                            chance *= (n - m - j) / (n - 1.0 - j)
                    out[t] = total
                    break
                start = end
    return result


def expected_success(const gain_t[::1] relevant, const gain_t[::1] scores,
                     const index_t[::1] offsets, const index_t[::1] cutoffs):
    """P(found(k) > 0) with k = ``cutoffs[t]`` (at least 1): 1 if a group wholly within
    the top k has a relevant document, else, for the group the cut-off splits with
    ``a`` of its ranks within it, 1 - prod_{j < a} (n - m - j) / (n - j)."""
    cdef Py_ssize_t n_topics = check_offsets(offsets, relevant.shape[0], "offsets")
    check_per_topic(scores.shape[0], relevant.shape[0], "scores")
    check_per_topic(cutoffs.shape[0], n_topics, "cutoffs")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, start, end, stop, j, within
    cdef gain_t m, n, none
    with nogil:
        for t in range(n_topics):
            start, stop = offsets[t], offsets[t + 1]
            while start < stop and start - offsets[t] < cutoffs[t]:
                end = _group_end(&scores[0], start, stop)
                m, n = _count(&relevant[0], start, end), <gain_t>(end - start)
                if m > 0.0:
                    within = offsets[t] + cutoffs[t] - start
                    none = 1.0
                    if within < end - start:
                        for j in range(within):
                            none *= (n - m - j) / (n - j)
                    else:
                        none = 0.0
                    out[t] = 1.0 - none
                    break           # (a group within the top k: none = 0, found)
                start = end
    return result


def expected_binary_preference(const int8_t[::1] status, const gain_t[::1] scores,
                               const index_t[::1] offsets, const gain_t[::1] num_relevant,
                               const gain_t[::1] num_nonrelevant):
    """E[bpref] (m_bpref.c): a relevant document of a group with q judged non-relevant
    documents (B above the group) has c of them above it, c uniform on 0..q (its place
    among those q + 1 is uniform), so each of the group's m relevant documents adds
    (1 / (q + 1)) sum_{c=0}^{q} f(B + c), f(0) = 1, f(k) = 1 - min(k, R) / min(N, R)
    (N all judged non-relevant); summed, divided by R (0 when R = 0). ``status``: the
    codes of cumgain.measures.batch (NONRELEVANT 2, RELEVANT 3)."""
    cdef Py_ssize_t n_topics = check_offsets(offsets, status.shape[0], "offsets")
    check_per_topic(scores.shape[0], status.shape[0], "scores")
    check_per_topic(num_relevant.shape[0], n_topics, "num_relevant")
    check_per_topic(num_nonrelevant.shape[0], n_topics, "num_nonrelevant")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, start, end, stop, i
    cdef int64_t relevant_here, nonrelevant_here, above, c, low, num_rel, num_nonrel
    cdef gain_t total, sum_f
    with nogil:
        for t in range(n_topics):
            num_rel, num_nonrel = <int64_t>num_relevant[t], <int64_t>num_nonrelevant[t]
            low = num_nonrel if num_nonrel < num_rel else num_rel
            start, stop, above, total = offsets[t], offsets[t + 1], 0, 0.0
            while start < stop:
                end = _group_end(&scores[0], start, stop)
                relevant_here, nonrelevant_here = 0, 0
                for i in range(start, end):
                    if status[i] == RELEVANT:
                        relevant_here += 1
                    elif status[i] == NONRELEVANT:
                        nonrelevant_here += 1
                if relevant_here > 0:
                    sum_f = 0.0
                    for c in range(above, above + nonrelevant_here + 1):
                        if c == 0:
                            sum_f += 1.0
                        else:
                            sum_f += 1.0 - <gain_t>(c if c < num_rel else num_rel) / <gain_t>low
                    total += relevant_here * sum_f / <gain_t>(nonrelevant_here + 1)
                above += nonrelevant_here
                start = end
            out[t] = total / <gain_t>num_rel if num_rel > 0 else 0.0
    return result


def group_means(const gain_t[::1] values, const gain_t[::1] scores, const index_t[::1] offsets):
    """Each value replaced by the mean over its group of equal scores within its topic:
    the expected value at each rank of the group over its orders."""
    cdef Py_ssize_t n_topics = check_offsets(offsets, values.shape[0], "offsets")
    check_per_topic(scores.shape[0], values.shape[0], "scores")
    result = np.empty(values.shape[0], dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, start, end, stop, i
    cdef gain_t total
    with nogil:
        for t in range(n_topics):
            start, stop = offsets[t], offsets[t + 1]
            while start < stop:
                end = _group_end(&scores[0], start, stop)
                if end == start + 1:
                    out[start] = values[start]
                else:
                    total = 0.0
                    for i in range(start, end):
                        total += values[i]
                    total = total / <gain_t>(end - start)
                    for i in range(start, end):
                        out[i] = total
                start = end
    return result


def order_within_groups(const gain_t[::1] levels, const uint8_t[::1] judged,
                        const gain_t[::1] scores, const index_t[::1] offsets, bint best):
    """The rows in rank order with each group of equal scores sorted for the system's
    best case (``best``: the highest level first, documents without a judgment before
    judged ones of the same level) or worst (the reverse); else in the order given.
    ``levels``: 0 where a document has no judgment."""
    cdef Py_ssize_t n_topics = check_offsets(offsets, levels.shape[0], "offsets")
    check_per_topic(judged.shape[0], levels.shape[0], "judged")
    check_per_topic(scores.shape[0], levels.shape[0], "scores")
    result = np.arange(levels.shape[0], dtype=np.int64)
    cdef int64_t[::1] rows = result
    cdef Py_ssize_t t, start, end, stop, i, longest = 0
    for t in range(n_topics):
        if offsets[t + 1] - offsets[t] > longest:
            longest = offsets[t + 1] - offsets[t]
    cdef Tied* group = <Tied*>malloc(max(longest, 1) * sizeof(Tied))
    if group == NULL:
        raise MemoryError()
    try:
        with nogil:
            for t in range(n_topics):
                start, stop = offsets[t], offsets[t + 1]
                while start < stop:
                    end = _group_end(&scores[0], start, stop)
                    if end - start > 1:
                        for i in range(start, end):
                            group[i - start].level = levels[i]
                            group[i - start].judged = judged[i]
                            group[i - start].row = i
                        qsort(group, end - start, sizeof(Tied),
                              _best_first if best else _worst_first)
                        for i in range(start, end):
                            rows[i] = group[i - start].row
                    start = end
    finally:
        free(group)
    return result


cdef int _compare_doubles(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*>a)[0]
    cdef double y = (<const double*>b)[0]
    return (x > y) - (x < y)


def expected_err(const gain_t[::1] probabilities, const gain_t[::1] scores,
                 const index_t[::1] offsets, Py_ssize_t cutoff):
    """E[ERR@k], ERR = sum_i R_i (1/i) prod_{j<i} (1 - R_j): at the k-th rank (from 0)
    of a group of n, E[R prod of (1 - R) over the k above it in the group] = (1/n)
    sum_d R_d M_k(d), M_k(d) the mean over the k-subsets of the group's other documents
    of the product of their (1 - R) (elementary symmetric polynomials, kept as means:
    M'_k = ((m + 1 - k) M_k + k x M_{k-1}) / (m + 1) as the m-th element x joins, each a
    convex combination); times the product of (1 - R) over the groups above, which no
    order changes. Documents of equal R share M (computed once per distinct R)."""
    cdef Py_ssize_t n_topics = check_offsets(offsets, probabilities.shape[0], "offsets")
    check_per_topic(scores.shape[0], probabilities.shape[0], "scores")
    if cutoff < 1:
        raise ValueError(f"cutoff must be >= 1, got {cutoff}")
    cdef Py_ssize_t i
    for i in range(probabilities.shape[0]):
        if not (probabilities[i] >= 0.0 and probabilities[i] <= 1.0):
            raise ValueError(f"probabilities[{i}] = {probabilities[i]} is not in [0, 1]")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t longest = 1
    for i in range(n_topics):
        if offsets[i + 1] - offsets[i] > longest:
            longest = offsets[i + 1] - offsets[i]
    cdef double* values = <double*>malloc(longest * sizeof(double))
    cdef double* means = <double*>malloc((longest + 1) * sizeof(double))
    cdef double* chance = <double*>malloc(longest * sizeof(double))    # per rank of a group
    if values == NULL or means == NULL or chance == NULL:
        free(values)
        free(means)
        free(chance)
        raise MemoryError()
    cdef Py_ssize_t t, start, end, stop, n, j, k, m, first, count, shown
    cdef double above, total, v, x, skipped
    try:
        with nogil:
            for t in range(n_topics):
                start, stop, above, total = offsets[t], offsets[t + 1], 1.0, 0.0
                while start < stop and start - offsets[t] < cutoff:
                    end = _group_end(&scores[0], start, stop)
                    n = end - start
                    shown = n if start - offsets[t] + n <= cutoff else cutoff - (start - offsets[t])
                    for j in range(n):
                        values[j] = probabilities[start + j]
                        chance[j] = 0.0
                    qsort(values, n, sizeof(double), _compare_doubles)
                    first = 0
                    while first < n:                    # each distinct R, once
                        count = 1
                        while first + count < n and values[first + count] == values[first]:
                            count += 1
                        v = values[first]
                        if v > 0.0:
                            means[0] = 1.0
                            m = 0
                            skipped = 0
                            for j in range(n):          # every other document joins
                                if j == first and not skipped:
                                    skipped = 1
                                    continue
                                x = 1.0 - values[j]
                                means[m + 1] = 0.0
                                for k in range(m + 1, 0, -1):
                                    means[k] = ((m + 1 - k) * means[k] + k * x * means[k - 1]) \
                                        / <double>(m + 1)
                                m += 1
                            for k in range(shown):
                                chance[k] += count * v * means[k] / <double>n
                        first += count
                    for k in range(shown):
                        total += above * chance[k] / <double>(start - offsets[t] + k + 1)
                    for j in range(n):
                        above *= 1.0 - values[j]
                    start = end
                out[t] = total
    finally:
        free(values)
        free(means)
        free(chance)
    return result
