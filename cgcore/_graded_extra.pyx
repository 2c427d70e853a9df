"""Kernels of the graded measures that trec_eval lacks: the cascade measures (gdeval's
ERR, NTCIREVAL's nERR and iRBU), Sakai's Q-measure and NCU, Robertson et al.'s graded AP,
Clarke et al.'s compatibility, ir_measures' pairwise accuracy, and torchmetrics' retrieval
AUROC.

Every kernel is one C loop over all topics (flat values + ``offsets``: topic ``t`` owns
rows ``offsets[t]:offsets[t + 1]`` in rank order) with the GIL released; the ``def``
wrappers check every length, offset and parameter first. Where a kernel reproduces a
reference implementation, it does its arithmetic in the reference's order (named in the
docstring), so that the values are bit-identical to it.
"""
from libc.math cimport exp, isfinite, lgamma, pow, NAN
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free

from cgcore._checks cimport check_offsets, check_per_topic
from cgcore._typedefs cimport gain_t, index_t

import numpy as np

cdef enum:
    ORDER_GDEVAL_C = 0          # gdeval.pl:      score += r * decay / i
    ORDER_NTCIREVAL_C = 1       # (py)NTCIREVAL:  score += r * ((1 / i) * decay)

ORDER_GDEVAL = ORDER_GDEVAL_C
ORDER_NTCIREVAL = ORDER_NTCIREVAL_C


cdef int _check_probabilities(const gain_t[::1] values, str name) except -1:
    cdef Py_ssize_t i
    for i in range(values.shape[0]):
        if not (values[i] >= 0.0 and values[i] <= 1.0):
            raise ValueError(f"{name}[{i}] = {values[i]} is not a probability in [0, 1]")
    return 0


cdef int _check_gains(const gain_t[::1] values, str name) except -1:
    cdef Py_ssize_t i
    for i in range(values.shape[0]):
        if not (isfinite(values[i]) and values[i] >= 0.0):
            raise ValueError(f"{name}[{i}] = {values[i]} is not a finite gain >= 0")
    return 0


cdef int _check_cutoff(Py_ssize_t cutoff) except -1:
    if cutoff < 1:
        raise ValueError(f"cutoff must be >= 1, got {cutoff}")
    return 0


cdef inline gain_t _blended_ratio(Py_ssize_t found, Py_ssize_t rank, gain_t cg,
                                  gain_t ideal_cg, gain_t beta) noexcept nogil:
    """Sakai's blended ratio at a rank: BR = (C + beta cg) / (rank + beta cg*), C the
    relevant documents and cg / cg* the cumulative gains of the run / the ideal so far."""
    return (<gain_t>found + beta * cg) / (<gain_t>rank + beta * ideal_cg)


cdef inline Py_ssize_t _depth(const index_t[::1] offsets, Py_ssize_t t,
                              Py_ssize_t cutoff) noexcept nogil:
    """min(N_t, cutoff): the ranks of topic t a measure at ``cutoff`` looks at."""
    cdef Py_ssize_t n = offsets[t + 1] - offsets[t]
    return n if n < cutoff else cutoff


# ---------------------------------------------------------------- cascade measures

def expected_reciprocal_rank(const gain_t[::1] probabilities, const index_t[::1] offsets,
                             Py_ssize_t cutoff, int order):
    """ERR@k = sum_{i <= min(k, N)} R_i (1/i) prod_{j < i} (1 - R_j) per topic, R_i the
    probability that the document at rank i satisfies the user.

    ``order`` fixes the order of the floating-point operations: ``ORDER_GDEVAL``
    as gdeval.pl's ``err`` (``$score += $r*$decay/($i + 1); $decay *= (1 - $r)``),
    ``ORDER_NTCIREVAL`` as pyNTCIREVAL's ``Metric.compute`` with ``nERR.discount``
    (``result += g * (1.0 / rank * prod(1 - r for the ranks above))``).
    """
    cdef index_t n_topics = check_offsets(offsets, probabilities.shape[0], "offsets")
    _check_probabilities(probabilities, "probabilities")
    _check_cutoff(cutoff)
    if order != ORDER_GDEVAL_C and order != ORDER_NTCIREVAL_C:
        raise ValueError(f"unknown order {order}")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i, start, depth
    cdef gain_t score, decay, r
    with nogil:
        for t in range(n_topics):
            start = offsets[t]
            depth = _depth(offsets, t, cutoff)
            score = 0.0
            decay = 1.0
            for i in range(depth):
                r = probabilities[start + i]
                if order == ORDER_GDEVAL_C:
                    score = score + r * decay / <gain_t>(i + 1)
                else:
                    score = score + r * ((1.0 / <gain_t>(i + 1)) * decay)
                decay = decay * (1.0 - r)
            out[t] = score
    return result


def rank_biased_utility(const gain_t[::1] probabilities, const index_t[::1] offsets,
                        Py_ssize_t cutoff, double p, double effort):
    """Intentwise RBU for one intent (Sakai & Zeng, SIGIR 2019; Amigo et al., SIGIR 2018):
    sum_{i <= min(k, N)} p^i R_i prod_{j < i} (1 - R_j) - effort * sum_{i <= min(k, N)} p^i,
    R_i as in :func:`expected_reciprocal_rank` (p^i as a running product)."""
    cdef index_t n_topics = check_offsets(offsets, probabilities.shape[0], "offsets")
    _check_probabilities(probabilities, "probabilities")
    _check_cutoff(cutoff)
    if not (p >= 0.0 and p <= 1.0):
        raise ValueError(f"p must be in [0, 1], got {p}")
    if not (isfinite(effort) and effort >= 0.0):
        raise ValueError(f"effort must be a finite number >= 0, got {effort}")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i, start, depth
    cdef gain_t score, decay, weight, weights, r
    with nogil:
        for t in range(n_topics):
            start = offsets[t]
            depth = _depth(offsets, t, cutoff)
            score = 0.0
            decay = 1.0
            weight = 1.0
            weights = 0.0
            for i in range(depth):
                r = probabilities[start + i]
                weight = weight * p
                score = score + weight * r * decay
                weights = weights + weight
                decay = decay * (1.0 - r)
            out[t] = score - effort * weights
    return result


# ---------------------------------------------------------------- Q-measure

def q_measure(const gain_t[::1] gains, const index_t[::1] offsets, const gain_t[::1] ideal,
              const index_t[::1] ideal_offsets, double beta, Py_ssize_t cutoff):
    """Q@k = (1 / min(R, k)) sum_{i <= min(k, N), g_i > 0} (C(i) + beta cg(i)) /
    (i + beta cg*(i)), with C(i) the relevant documents (gain > 0) in the top i, cg(i)
    their cumulative gain, cg*(i) the ideal's (the first i of ``ideal``, the topic's
    positive gains in descending order) and R the length of ``ideal``; 0 when R = 0.
    In pyNTCIREVAL's order (``QMeasure``: ``result += BR(i) * (1.0 / min(R, k))``,
    the cumulative gains summed from rank 1)."""
    cdef index_t n_topics = check_offsets(offsets, gains.shape[0], "offsets")
    cdef index_t n_ideal = check_offsets(ideal_offsets, ideal.shape[0], "ideal_offsets")
    check_per_topic(n_ideal, n_topics, "ideal_offsets")
    _check_gains(gains, "gains")
    _check_gains(ideal, "ideal")
    _check_cutoff(cutoff)
    if not (isfinite(beta) and beta >= 0.0):
        raise ValueError(f"beta must be a finite number >= 0, got {beta}")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i, start, depth, ideal_start, num_rel, found
    cdef gain_t score, share, cg, ideal_cg, g
    with nogil:
        for t in range(n_topics):
            num_rel = ideal_offsets[t + 1] - ideal_offsets[t]
            if num_rel == 0:
                continue
            start = offsets[t]
            ideal_start = ideal_offsets[t]
            depth = _depth(offsets, t, cutoff)
            share = 1.0 / <gain_t>(num_rel if num_rel < cutoff else cutoff)
            found = 0
            cg = 0.0
            ideal_cg = 0.0
            score = 0.0
            for i in range(depth):
                g = gains[start + i]
                cg = cg + g
                if i < num_rel:
                    ideal_cg = ideal_cg + ideal[ideal_start + i]
                if g > 0.0:
                    found += 1
                    score = score + _blended_ratio(found, i + 1, cg, ideal_cg, beta) * share
            out[t] = score
    return result


# ---------------------------------------------------------------- one highly relevant document

cdef enum:
    KIND_O = 0          # the first relevant document
    KIND_P = 1          # the first document of the highest level retrieved
    KIND_P_PLUS = 2     # the relevant documents down to that one, averaged

PREFERRED_O, PREFERRED_P, PREFERRED_P_PLUS = KIND_O, KIND_P, KIND_P_PLUS


def blended_ratio_at_preferred(const gain_t[::1] gains, const gain_t[::1] levels,
                               const index_t[::1] offsets, const gain_t[::1] ideal,
                               const index_t[::1] ideal_offsets, double beta,
                               Py_ssize_t cutoff, int kind):
    """Sakai's measures for finding one highly relevant document (IPSJ TOD 2007), as
    pyNTCIREVAL computes them, from the blended ratio BR(i) = (C(i) + beta cg(i)) /
    (i + beta cg*(i)) (C(i) the relevant documents, gain > 0, in the top i; cg / cg* the
    cumulative gains of the run / the ideal): O = BR at the first relevant rank; P = BR at
    p, the first rank of the highest level in the whole ranking (0 if p is past the
    cut-off); P+ = (1 / C(p)) sum of BR at the relevant ranks down to p (and the cut-off).
    0 without a relevant document."""
    cdef index_t n_topics = check_offsets(offsets, gains.shape[0], "offsets")
    cdef index_t n_ideal = check_offsets(ideal_offsets, ideal.shape[0], "ideal_offsets")
    check_per_topic(n_ideal, n_topics, "ideal_offsets")
    check_per_topic(levels.shape[0], gains.shape[0], "levels")
    _check_gains(gains, "gains")
    _check_gains(ideal, "ideal")
    _check_cutoff(cutoff)
    if not (isfinite(beta) and beta >= 0.0):
        raise ValueError(f"beta must be a finite number >= 0, got {beta}")
    if kind < KIND_O or kind > KIND_P_PLUS:
        raise ValueError(f"unknown measure kind {kind}")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i, start, n, depth, ideal_start, num_rel, found, preferred, found_there
    cdef gain_t cg, ideal_cg, ratio, total, top
    with nogil:
        for t in range(n_topics):
            start, n = offsets[t], offsets[t + 1] - offsets[t]
            ideal_start, num_rel = ideal_offsets[t], ideal_offsets[t + 1] - ideal_offsets[t]
            depth = _depth(offsets, t, cutoff)
            preferred = -1
            if kind != KIND_O:         # over the whole ranking, as pyNTCIREVAL
                top = 0.0
                for i in range(n):
                    if levels[start + i] > top:
                        top, preferred = levels[start + i], i
                if preferred < 0:
                    continue
            found_there = 0
            if kind == KIND_P_PLUS:
                for i in range(preferred + 1):
                    if gains[start + i] > 0.0:
                        found_there += 1
                if found_there == 0:
                    continue
            found, cg, ideal_cg, total = 0, 0.0, 0.0, 0.0
            for i in range(depth):
                cg = cg + gains[start + i]
                if i < num_rel:
                    ideal_cg = ideal_cg + ideal[ideal_start + i]
                if gains[start + i] > 0.0:
                    found += 1
                ratio = _blended_ratio(found, i + 1, cg, ideal_cg, beta)
                if kind == KIND_O:
                    if gains[start + i] > 0.0:
                        total = ratio
                        break
                elif kind == KIND_P:
                    if i == preferred:
                        total = ratio
                        break
                else:
                    if i > preferred:
                        break
                    if gains[start + i] > 0.0:
                        total = total + ratio * (1.0 / <gain_t>found_there)  # (its order)
            out[t] = total
    return result


# ---------------------------------------------------------------- NCU

cdef enum:
    STOP_GU = 0         # graded-uniform: Pr(i) proportional to the stop value of i's level
    STOP_RB = 1         # rank-biased: Pr(i) proportional to gamma^(C(i) - 1)

STOP_GRADED_UNIFORM, STOP_RANK_BIASED = STOP_GU, STOP_RB


def graded_stop_totals(const gain_t[::1] levels, const gain_t[::1] stops,
                       const index_t[::1] offsets):
    """Per topic, sum_l n_l s_l over its distinct levels l in ascending order, n_l the
    judgments at level l and s_l their stop value: the normaliser of NCU's
    graded-uniform stopping distribution, in pyNTCIREVAL's order (``p_gu``:
    ``sum(num * stops[l - 1] for each level l >= 1)``). ``levels`` must be ascending
    within each topic, and the judgments of one level must share one stop value."""
    cdef index_t n_topics = check_offsets(offsets, levels.shape[0], "offsets")
    check_per_topic(stops.shape[0], levels.shape[0], "stops")
    _check_gains(stops, "stops")
    cdef Py_ssize_t t, i, start, end, run
    for t in range(n_topics):
        for i in range(offsets[t] + 1, offsets[t + 1]):
            if not levels[i] >= levels[i - 1]:
                raise ValueError(f"topic {t}: levels must be ascending (at {i})")
            if levels[i] == levels[i - 1] and stops[i] != stops[i - 1]:
                raise ValueError(f"topic {t}: level {levels[i]} has two stop values")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef gain_t total
    with nogil:
        for t in range(n_topics):
            start, end = offsets[t], offsets[t + 1]
            total = 0.0
            i = start
            while i < end:
                run = 1
                while i + run < end and levels[i + run] == levels[i]:
                    run += 1
                total = total + <gain_t>run * stops[i]
                i += run
            out[t] = total
    return result


def normalised_cumulative_utility(const gain_t[::1] gains, const gain_t[::1] stops,
                                  const index_t[::1] offsets, const gain_t[::1] ideal,
                                  const index_t[::1] ideal_offsets,
                                  const gain_t[::1] stop_totals, double beta, double gamma,
                                  Py_ssize_t cutoff, int stopping):
    """NCU@k = sum_{i <= min(k, N), g_i > 0} Pr(i) BR(i) (Sakai & Robertson, EVIA 2008):
    the utility BR(i) = (C(i) + beta cg(i)) / (i + beta cg*(i)) (C(i) the relevant
    documents, gain > 0, in the top i; cg / cg* the cumulative gains of the run / the
    ideal; beta = 0 gives precision C(i) / i), Pr the chance that a user stops at the
    relevant document at rank i:

    * ``STOP_GRADED_UNIFORM``: Pr(i) = s_i / stop_totals[t], s_i = ``stops[i]`` (the
      stop value of its level; 0 for every document when the total is 0);
    * ``STOP_RANK_BIASED``: Pr(i) = gamma^(C(i) - 1) / sum_{j < R} gamma^j, R the length
      of ``ideal`` (``stops`` and ``stop_totals`` unused).

    0 when R = 0. In pyNTCIREVAL's order (``NCU``: ``result += BR(i) * Pr(i)``, the
    cumulative gains and the powers of gamma, computed with pow, summed from the first)."""
    cdef index_t n_topics = check_offsets(offsets, gains.shape[0], "offsets")
    cdef index_t n_ideal = check_offsets(ideal_offsets, ideal.shape[0], "ideal_offsets")
    check_per_topic(n_ideal, n_topics, "ideal_offsets")
    check_per_topic(stops.shape[0], gains.shape[0], "stops")
    check_per_topic(stop_totals.shape[0], n_topics, "stop_totals")
    _check_gains(gains, "gains")
    _check_gains(ideal, "ideal")
    _check_gains(stops, "stops")
    _check_gains(stop_totals, "stop_totals")
    _check_cutoff(cutoff)
    if not (isfinite(beta) and beta >= 0.0):
        raise ValueError(f"beta must be a finite number >= 0, got {beta}")
    if not (gamma >= 0.0 and gamma <= 1.0):
        raise ValueError(f"gamma must be in [0, 1], got {gamma}")
    if stopping != STOP_GU and stopping != STOP_RB:
        raise ValueError(f"unknown stopping distribution {stopping}")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i, j, start, depth, ideal_start, num_rel, found
    cdef gain_t score, cg, ideal_cg, g, ratio, total
    with nogil:
        for t in range(n_topics):
            num_rel = ideal_offsets[t + 1] - ideal_offsets[t]
            if num_rel == 0:
                continue
            if stopping == STOP_GU:
                total = stop_totals[t]
                if not total > 0.0:
                    continue
            else:
                total = 0.0
                for j in range(num_rel):
                    total = total + pow(gamma, <gain_t>j)
            start = offsets[t]
            ideal_start = ideal_offsets[t]
            depth = _depth(offsets, t, cutoff)
            found = 0
            cg = 0.0
            ideal_cg = 0.0
            score = 0.0
            for i in range(depth):
                g = gains[start + i]
                cg = cg + g
                if i < num_rel:
                    ideal_cg = ideal_cg + ideal[ideal_start + i]
                if g > 0.0:
                    found += 1
                    ratio = _blended_ratio(found, i + 1, cg, ideal_cg, beta)
                    if stopping == STOP_GU:
                        score = score + ratio * (stops[start + i] / total)
                    else:
                        score = score + ratio * (pow(gamma, <gain_t>(found - 1)) / total)
            out[t] = score
    return result


# ---------------------------------------------------------------- graded AP

def graded_average_precision(const gain_t[::1] gains, const index_t[::1] offsets,
                             const gain_t[::1] ideal, const index_t[::1] ideal_offsets,
                             Py_ssize_t cutoff):
    """GAP@k (Robertson, Kanoulas & Yilmaz, SIGIR 2010) with gains as the probabilities
    that a document of each grade is relevant to a user (scaled freely):
    sum_{i <= min(k, N)} (1/i) sum_{j <= i} min(g_j, g_i) / sum(ideal), the denominator
    over all the topic's positive judged gains; 0 when it is 0. A ranked document's
    positive gain must be among its topic's ``ideal`` gains (those of its judgments)."""
    cdef index_t n_topics = check_offsets(offsets, gains.shape[0], "offsets")
    cdef index_t n_ideal = check_offsets(ideal_offsets, ideal.shape[0], "ideal_offsets")
    check_per_topic(n_ideal, n_topics, "ideal_offsets")
    _check_gains(gains, "gains")
    _check_gains(ideal, "ideal")
    _check_cutoff(cutoff)
    cdef index_t t, longest = 0
    for t in range(n_topics):
        if ideal_offsets[t + 1] - ideal_offsets[t] > longest:
            longest = ideal_offsets[t + 1] - ideal_offsets[t]
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    # per distinct gain of a topic: its value, and the documents of that gain seen so far
    # (how many, and the sum of their gains)
    cdef gain_t* values = <gain_t*>malloc((longest + 1) * sizeof(gain_t))
    cdef gain_t* sums = <gain_t*>malloc((longest + 1) * sizeof(gain_t))
    cdef int64_t* counts = <int64_t*>malloc((longest + 1) * sizeof(int64_t))
    if values == NULL or sums == NULL or counts == NULL:
        free(values)
        free(sums)
        free(counts)
        raise MemoryError("no memory for graded AP's gain table")
    cdef Py_ssize_t i, j, start, depth, ideal_start, n_values, unknown = -1
    cdef gain_t total, score, inner, g
    with nogil:
        for t in range(n_topics):
            ideal_start = ideal_offsets[t]
            total = 0.0
            n_values = 0
            for j in range(ideal_offsets[t + 1] - ideal_start):
                total = total + ideal[ideal_start + j]
                if n_values == 0 or ideal[ideal_start + j] != values[n_values - 1]:
                    values[n_values] = ideal[ideal_start + j]
                    sums[n_values] = 0.0
                    counts[n_values] = 0
                    n_values += 1
            if not total > 0.0:
                continue
            start = offsets[t]
            depth = _depth(offsets, t, cutoff)
            score = 0.0
            for i in range(depth):
                g = gains[start + i]
                if not g > 0.0:
                    continue
                inner = g                   # j = i: min(g_i, g_i)
                for j in range(n_values):   # values descending
                    if values[j] > g:
                        inner = inner + g * <gain_t>counts[j]
                    else:
                        inner = inner + sums[j]
                score = score + inner / <gain_t>(i + 1)
                for j in range(n_values):
                    if values[j] == g:
                        counts[j] += 1
                        sums[j] = sums[j] + g
                        break
                else:
                    unknown = t
            out[t] = score / total
    free(values)
    free(sums)
    free(counts)
    if unknown >= 0:
        raise ValueError(f"topic {unknown}: a ranked document's gain is not among the "
                         "topic's judged gains")
    return result


# ---------------------------------------------------------------- compatibility

cdef inline Py_ssize_t _group_of(const gain_t* starts_values, Py_ssize_t n_groups,
                                 gain_t level) noexcept nogil:
    """The index of ``level`` among the descending distinct levels, or -1."""
    cdef Py_ssize_t low = 0, high = n_groups - 1, middle
    while low <= high:
        middle = (low + high) // 2
        if starts_values[middle] == level:
            return middle
        if starts_values[middle] > level:
            low = middle + 1
        else:
            high = middle - 1
    return -1


def compatibility(const gain_t[::1] levels, const index_t[::1] offsets,
                  const gain_t[::1] ideal, const index_t[::1] ideal_offsets, double p,
                  bint normalize):
    """Compatibility (Clarke, Vtyurina & Smucker, TOIS 2021): RBO(run, ideal, p) over
    depth D = max(N, M), divided by RBO(ideal, ideal, p) when ``normalize`` and that is
    > 0, in the order of ir_measures' compat provider's sums.

    ``levels``: per ranked row its level if judged > 0, else 0; ``ideal``: the topic's
    positive levels in descending order (M of them). The ideal ranking is Clarke's
    (compatibility.py, ``idealize``): the judged documents by level, and within a level
    the retrieved ones in run order before the unretrieved ones. A document then joins
    the overlap at depth max(its rank, its ideal rank); RBO = sum_{d <= D} p^(d-1)
    overlap(d) / d / sum_{d <= D} p^(d-1).
    """
    cdef index_t n_topics = check_offsets(offsets, levels.shape[0], "offsets")
    cdef index_t n_ideal = check_offsets(ideal_offsets, ideal.shape[0], "ideal_offsets")
    check_per_topic(n_ideal, n_topics, "ideal_offsets")
    _check_gains(levels, "levels")
    _check_gains(ideal, "ideal")
    if not (p >= 0.0 and p <= 1.0):
        raise ValueError(f"p must be in [0, 1], got {p}")
    cdef index_t t, longest = 1
    for t in range(n_topics):
        if ideal_offsets[t + 1] - ideal_offsets[t] > longest:
            longest = ideal_offsets[t + 1] - ideal_offsets[t]
        if offsets[t + 1] - offsets[t] > longest:
            longest = offsets[t + 1] - offsets[t]
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef gain_t* group_level = <gain_t*>malloc(longest * sizeof(gain_t))
    cdef int64_t* group_start = <int64_t*>malloc(longest * sizeof(int64_t))
    cdef int64_t* group_seen = <int64_t*>malloc(longest * sizeof(int64_t))
    cdef int64_t* arrivals = <int64_t*>malloc(longest * sizeof(int64_t))
    if group_level == NULL or group_start == NULL or group_seen == NULL or arrivals == NULL:
        free(group_level)
        free(group_start)
        free(group_seen)
        free(arrivals)
        raise MemoryError("no memory for the compatibility tables")
    cdef Py_ssize_t i, j, start, n, m, ideal_start, n_groups, depth, g, position
    cdef Py_ssize_t unknown = -1
    cdef int64_t overlap
    cdef gain_t score, normalizer, weight, best, best_normalizer
    with nogil:
        for t in range(n_topics):
            start = offsets[t]
            n = offsets[t + 1] - start
            ideal_start = ideal_offsets[t]
            m = ideal_offsets[t + 1] - ideal_start
            depth = n if n > m else m
            if depth == 0:
                continue
            n_groups = 0
            for j in range(m):
                if n_groups == 0 or ideal[ideal_start + j] != group_level[n_groups - 1]:
                    group_level[n_groups] = ideal[ideal_start + j]
                    group_start[n_groups] = j
                    group_seen[n_groups] = 0
                    n_groups += 1
            for i in range(depth):
                arrivals[i] = 0
            for i in range(n):
                if levels[start + i] > 0.0:
                    g = _group_of(group_level, n_groups, levels[start + i])
                    if g < 0:
                        unknown = t
                        continue
                    position = group_start[g] + group_seen[g]
                    group_seen[g] += 1
                    arrivals[position if position > i else i] += 1
            score = 0.0
            normalizer = 0.0
            weight = 1.0
            overlap = 0
            for i in range(depth):
                overlap = overlap + arrivals[i]
                score = score + weight * <gain_t>overlap / <gain_t>(i + 1)
                normalizer = normalizer + weight
                weight = weight * p
            score = score / normalizer
            if normalize:
                best = 0.0
                best_normalizer = 0.0
                weight = 1.0
                for i in range(depth):
                    best = best + weight * <gain_t>(i + 1 if i + 1 < m else m) / <gain_t>(i + 1)
                    best_normalizer = best_normalizer + weight
                    weight = weight * p
                best = best / best_normalizer
                if best > 0.0:
                    score = score / best
            out[t] = score
    free(group_level)
    free(group_start)
    free(group_seen)
    free(arrivals)
    if unknown >= 0:
        raise ValueError(f"topic {unknown}: a ranked document's level is not among the "
                         "topic's judged levels")
    return result


# ---------------------------------------------------------------- pairwise accuracy

def pairwise_accuracy(const gain_t[::1] relevant, const index_t[::1] offsets,
                      Py_ssize_t cutoff):
    """Per topic, over the top min(k, N) documents with n relevant (``relevant`` != 0)
    and m non-relevant ones: 1 - sum over relevant documents of the non-relevant ones
    above it / (n m), the fraction of (relevant, non-relevant) pairs in the right
    order, as ir_measures' accuracy provider computes it; NaN when n = 0 (the provider
    reports nothing) or m = 0 (it divides by zero)."""
    cdef index_t n_topics = check_offsets(offsets, relevant.shape[0], "offsets")
    _check_cutoff(cutoff)
    result = np.empty(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i, start, depth
    cdef int64_t n_relevant, n_nonrelevant, above
    with nogil:
        for t in range(n_topics):
            start = offsets[t]
            depth = _depth(offsets, t, cutoff)
            n_relevant = 0
            n_nonrelevant = 0
            above = 0
            for i in range(depth):
                if relevant[start + i] != 0.0:
                    n_relevant += 1
                    above = above + n_nonrelevant
                else:
                    n_nonrelevant += 1
            if n_relevant == 0 or n_nonrelevant == 0:
                out[t] = NAN
            else:
                out[t] = 1.0 - <gain_t>above / (<gain_t>n_nonrelevant * <gain_t>n_relevant)
    return result


# ---------------------------------------------------------------- retrieval AUROC

cdef gain_t _auroc(const gain_t* relevant, const gain_t* scores, Py_ssize_t n,
                   gain_t extra_pos, gain_t extra_neg, gain_t max_fpr) noexcept nogil:
    """ROC AUC of rows [0, n) in rank order (grouped by equal scores unless ``scores``
    is NULL, tied pairs counting 1/2: the trapezoids between the ROC points of the
    distinct scores) followed by one more group of ``extra_pos`` relevant and
    ``extra_neg`` non-relevant rows below them all; 0 without a relevant or a
    non-relevant row. ``max_fpr`` < 1: the standardized partial AUC over [0, max_fpr]
    (McClish), the last ROC segment interpolated at max_fpr."""
    cdef Py_ssize_t i, end
    cdef gain_t positives = extra_pos, negatives = extra_neg
    cdef gain_t tp = 0.0, fp = 0.0, x0 = 0.0, y0 = 0.0, x1, y1, area = 0.0, y_max, low
    cdef bint last
    for i in range(n):
        if relevant[i] != 0.0:
            positives += 1.0
        else:
            negatives += 1.0
    if positives == 0.0 or negatives == 0.0:
        return 0.0
    i = 0
    while True:
        last = i >= n
        if last:
            if extra_pos + extra_neg == 0.0:
                break
            tp += extra_pos
            fp += extra_neg
        else:
            end = i + 1
            while scores != NULL and end < n and scores[end] == scores[i]:
                end += 1
            while i < end:
                if relevant[i] != 0.0:
                    tp += 1.0
                else:
                    fp += 1.0
                i += 1
        x1 = fp / negatives
        y1 = tp / positives
        if max_fpr < 1.0 and x1 > max_fpr:
            y_max = y0 + (y1 - y0) * (max_fpr - x0) / (x1 - x0)
            area += (max_fpr - x0) * (y0 + y_max) / 2.0
            low = 0.5 * max_fpr * max_fpr
            return 0.5 * (1.0 + (area - low) / (max_fpr - low))
        area += (x1 - x0) * (y0 + y1) / 2.0
        x0 = x1
        y0 = y1
        if last:
            break
    if max_fpr < 1.0:      # (reached only if max_fpr >= the last point's fpr, 1)
        low = 0.5 * max_fpr * max_fpr
        return 0.5 * (1.0 + (area - low) / (max_fpr - low))
    return area


cdef inline gain_t _log_choose(gain_t n, gain_t k) noexcept nogil:
    return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0)


def retrieval_auroc(const gain_t[::1] relevant, const gain_t[::1] scores,
                    const index_t[::1] offsets, Py_ssize_t cutoff, double max_fpr,
                    bint expected):
    """Per topic, torchmetrics' retrieval_auroc: the ROC AUC of the top min(k, N)
    documents (binary_auroc's trapezoids), the standardized partial AUC over
    [0, max_fpr] if ``max_fpr`` < 1; 0 when the top k lacks a relevant (``relevant``
    != 0) or a non-relevant document.

    Without ``expected`` the rows are in the ranking's order, each its own ROC point
    (``scores`` unused). With ``expected``, the exact expectation over the orders within
    each group of equal scores: a tied (relevant, non-relevant) pair counts 1/2, as in
    binary_auroc; where the cut-off splits a group of g equal scores (r relevant) and
    keeps m of them, which m is uniform over the group's orders, so the value is the
    expectation over the hypergeometric number j of relevant ones kept (the rest of the
    top k is the same set in every order)."""
    cdef index_t n_topics = check_offsets(offsets, relevant.shape[0], "offsets")
    check_per_topic(scores.shape[0], relevant.shape[0], "scores")
    _check_cutoff(cutoff)
    if not (max_fpr > 0.0 and max_fpr <= 1.0):
        raise ValueError(f"max_fpr must be in (0, 1], got {max_fpr}")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t t, i, start, n, depth, group_start, group_end, kept, j, j_low, j_high
    cdef gain_t group_relevant, value, weight, log_total
    with nogil:
        for t in range(n_topics):
            start = offsets[t]
            n = offsets[t + 1] - start
            depth = _depth(offsets, t, cutoff)
            if depth == 0:
                continue
            if not expected:
                out[t] = _auroc(&relevant[start], NULL, depth, 0.0, 0.0, max_fpr)
                continue
            if depth == n or scores[start + depth] != scores[start + depth - 1]:
                out[t] = _auroc(&relevant[start], &scores[start], depth, 0.0, 0.0, max_fpr)
                continue
            group_start = depth - 1
            while group_start > 0 and scores[start + group_start - 1] == scores[start + depth - 1]:
                group_start -= 1
            group_end = depth + 1
            while group_end < n and scores[start + group_end] == scores[start + depth - 1]:
                group_end += 1
            group_relevant = 0.0
            for i in range(group_start, group_end):
                if relevant[start + i] != 0.0:
                    group_relevant += 1.0
            kept = depth - group_start
            j_low = kept - (group_end - group_start - <Py_ssize_t>group_relevant)
            if j_low < 0:
                j_low = 0
            j_high = kept if kept < <Py_ssize_t>group_relevant else <Py_ssize_t>group_relevant
            log_total = _log_choose(<gain_t>(group_end - group_start), <gain_t>kept)
            value = 0.0
            for j in range(j_low, j_high + 1):
                weight = exp(_log_choose(group_relevant, <gain_t>j)
                             + _log_choose(<gain_t>(group_end - group_start) - group_relevant,
                                           <gain_t>(kept - j)) - log_total)
                value += weight * _auroc(&relevant[start], &scores[start], group_start,
                                         <gain_t>j, <gain_t>(kept - j), max_fpr)
            out[t] = value
    return result
