"""The novelty and diversity measures of the TREC Web track's ndeval (ndeval.c, version
4.5, as pyndeval 0.0.8 and ir_measures' pyndeval provider run it), batched over topics.

Input, in the flat + offsets layout (topic ``t`` owns entries ``offsets[t]:offsets[t+1]``):

* ``judged_offsets``: each topic's judged documents (every document with a subtopic
  judgment, relevant or not), **in docno byte order**: a tie in the greedy ideal
  ranking goes to the later one (ndeval: ``strcmp(docno, best) > 0``);
* ``relevant_offsets`` / ``relevant_subtopics``: per judged document, the subtopics it
  is relevant to, as the topic's subtopic indices ``0 .. n_subtopics[t] - 1``, strictly
  ascending (the order ndeval sums the gains in);
* ``ranked_offsets`` / ``ranked_docs``: each topic's ranking, rank by rank: the index of
  the judged document (an entry of the topic's ``judged_offsets`` range), or -1 for a
  document without a judgment (gain 0);
* ``cutoffs``: the cut-offs k of the cut-off measures, increasing, >= 1.

Per topic, with S the subtopics that have a relevant document, g(i) = sum over the
subtopics s the document at rank i is relevant to of (1 - alpha)^(documents relevant to
s above rank i), and the "ideal ideal" gain I(i) = S (1 - alpha)^(i - 1):

* alpha-DCG@k = sum_{i<=k} g(i)/log2(i+1) / sum_{i<=k} I(i)/log2(i+1) (ndeval's
  discount is log(2.0)/log(i+1.0), and 1 at rank 1);
* ERR-IA@k = sum_{i<=k} g(i)/i / sum_{i<=k} I(i)/i;
* alpha-nDCG@k, nERR-IA@k: the same divided by the value of the ideal ranking, which
  ndeval builds greedily (at each rank the judged document of greatest g, ties to the
  greater docno) and which is not always optimal, so these can exceed 1. They are
  divided only where alpha-DCG@k is not 0 (else 0), as ndeval does;
* NRBP = (1 - (1 - alpha) beta) / S * sum_i g(i) beta^(i-1) over the whole ranking;
  nNRBP = NRBP / NRBP of the ideal ranking;
* MAP-IA (AP_IA) = mean over the S subtopics of the subtopic's AP;
* P-IA@k = (relevant (document, subtopic) pairs in the top k) / (k S);
* strec@k (StRecall) = (subtopics with a relevant document in the top k) / S.

ndeval's behaviour kept, statement by statement, so that every value is bit-identical
to pyndeval's: sums in rank order and in subtopic order; at k = 1 alpha-DCG and ERR-IA
are **not normalised** (ndeval's normalising loops start at rank 2: the value is g(1));
a topic with S = 0 (no relevant judgment) scores 0 on every measure. Beyond ndeval:
cut-offs above 20 (ndeval's DEPTH, pyndeval refuses them) follow the same formulas, and
where ndeval divides 0 by 0 (nNRBP when S = 0, or when alpha = 0 and beta = 1) the value
is 0, not NaN.

Cost per topic: O(n + k + R m) for a ranking of n documents, the largest cut-off k, and
the greedy ideal over the m judged documents that are relevant to some subtopic (R
relevant pairs in all), which is quadratic in m as in ndeval ("horrible quadratic
greedy approximation"); only those m take part (ndeval scans every judged document,
but those relevant to nothing have gain 0 and change no value).
"""
from libc.math cimport log, isfinite
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, calloc, free

from cgcore._checks cimport check_offsets, check_per_topic
from cgcore._typedefs cimport gain_t, index_t

import numpy as np

#: Rows of the first output (values at each cut-off), in this order.
AT_CUTOFF = ("ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG", "P_IA", "StRecall")
#: Rows of the second output (values of the whole ranking), in this order.
WHOLE = ("NRBP", "nNRBP", "AP_IA")

cdef enum:
    C_ERR = 0
    C_NERR = 1
    C_DCG = 2
    C_NDCG = 3
    C_P = 4
    C_STREC = 5
    N_AT = 6
    W_NRBP = 0
    W_NNRBP = 1
    W_AP = 2
    N_WHOLE = 3


cdef inline gain_t _discount(index_t i) noexcept nogil:
    """ndeval's discount(i) at 0-based rank i: 1 at rank 0, else log(2)/log(i + 2)."""
    if i <= 0:
        return 1.0
    return log(2.0) / log(<gain_t>i + 2.0)


cdef struct Scratch:
    gain_t* gain            # per subtopic: (1 - alpha)^(relevant documents seen)
    int64_t* count          # per subtopic: relevant documents seen (MAP-IA)
    gain_t* total           # per subtopic: sum of precisions at them (MAP-IA)
    int64_t* relevant       # per subtopic: relevant judged documents (ndeval's nrelSub)
    char* seen              # per subtopic: covered yet (strec)
    gain_t* run_score       # per rank of the run: g(i)
    int64_t* run_pairs      # per rank of the run: relevant subtopics of the document
    int64_t* run_fresh      # per rank of the run: subtopics first covered there
    index_t* candidates     # the judged documents relevant to some subtopic
    gain_t* ideal_score     # per rank of the greedy ideal: g(i)


cdef void _free_scratch(Scratch* s) noexcept nogil:
    free(s.gain)
    free(s.count)
    free(s.total)
    free(s.relevant)
    free(s.seen)
    free(s.run_score)
    free(s.run_pairs)
    free(s.run_fresh)
    free(s.candidates)
    free(s.ideal_score)


cdef int _alloc_scratch(Scratch* s, index_t subtopics, index_t ranked,
                        index_t judged) noexcept nogil:
    """0 on success, -1 if out of memory (everything freed)."""
    s.gain = <gain_t*>malloc((subtopics + 1) * sizeof(gain_t))
    s.count = <int64_t*>malloc((subtopics + 1) * sizeof(int64_t))
    s.total = <gain_t*>malloc((subtopics + 1) * sizeof(gain_t))
    s.relevant = <int64_t*>malloc((subtopics + 1) * sizeof(int64_t))
    s.seen = <char*>malloc((subtopics + 1) * sizeof(char))
    s.run_score = <gain_t*>malloc((ranked + 1) * sizeof(gain_t))
    s.run_pairs = <int64_t*>malloc((ranked + 1) * sizeof(int64_t))
    s.run_fresh = <int64_t*>malloc((ranked + 1) * sizeof(int64_t))
    s.candidates = <index_t*>malloc((judged + 1) * sizeof(index_t))
    s.ideal_score = <gain_t*>malloc((judged + 1) * sizeof(gain_t))
    if (s.gain == NULL or s.count == NULL or s.total == NULL or s.relevant == NULL
            or s.seen == NULL or s.run_score == NULL or s.run_pairs == NULL
            or s.run_fresh == NULL or s.candidates == NULL or s.ideal_score == NULL):
        _free_scratch(s)
        return -1
    return 0


cdef index_t _greedy_ideal(const index_t* rel_offsets, const index_t* rel_subtopics,
                           index_t first, index_t n_judged, index_t n_subtopics,
                           gain_t alpha, Scratch* s, gain_t beta,
                           gain_t* ideal_nrbp) noexcept nogil:
    """ndeval's idealResult + computeNRBP on it: fills s.ideal_score with g(i) of the
    greedy ideal ranking of the judged documents first .. first + n_judged - 1 that
    are relevant to some subtopic, and returns how many there are (the ranks after
    them have g = 0). ``ideal_nrbp``: the ideal's sum_i g(i) beta^(i-1)."""
    cdef index_t m = 0, d, c, best, rank, remaining
    cdef index_t p
    cdef gain_t score, best_score, decay = 1.0, nrbp = 0.0
    for d in range(first, first + n_judged):
        if rel_offsets[d + 1] > rel_offsets[d]:
            s.candidates[m] = d
            m += 1
    for c in range(n_subtopics):
        s.gain[c] = 1.0
    remaining = m
    for rank in range(m):
        best = -1
        best_score = 0.0
        for c in range(remaining):
            d = s.candidates[c]
            score = 0.0
            for p in range(rel_offsets[d], rel_offsets[d + 1]):
                score += s.gain[rel_subtopics[p]]
            # ties to the greater docno (the later judged document)
            if best == -1 or score > best_score or (score == best_score
                                                    and d > s.candidates[best]):
                best_score = score
                best = c
        d = s.candidates[best]
        for p in range(rel_offsets[d], rel_offsets[d + 1]):
            s.gain[rel_subtopics[p]] *= (1.0 - alpha)
        s.ideal_score[rank] = best_score
        nrbp += best_score * decay
        decay *= beta
        remaining -= 1
        s.candidates[best] = s.candidates[remaining]
    ideal_nrbp[0] = nrbp
    return m


cdef void _topic(const index_t* rel_offsets, const index_t* rel_subtopics,
                 index_t first_judged, index_t n_judged, index_t n_subtopics,
                 const index_t* ranked, index_t n_ranked,
                 const index_t* cutoffs, index_t n_cutoffs,
                 gain_t alpha, gain_t beta, Scratch* s,
                 gain_t* at_out, index_t at_stride, gain_t* whole_out,
                 index_t whole_stride) noexcept nogil:
    """Every measure of one topic. ``at_out[m * at_stride + c]``: measure m (AT_CUTOFF)
    at cutoffs[c]; ``whole_out[m * whole_stride]``: measure m (WHOLE)."""
    cdef index_t i, j, c, d, m, k_max
    cdef index_t p
    cdef int64_t actual = 0, pairs = 0, covered = 0
    cdef gain_t score, decay, nrbp, ideal_nrbp, factor, map_ia
    cdef gain_t gain_a, dcg, ideal_dcg, ideal_ideal_dcg, err, ideal_err, ideal_ideal_err
    cdef gain_t dcg_n, ideal_dcg_n, err_n, ideal_err_n, run_g, ideal_g, disc

    # nrelSub and actualSubtopics
    for j in range(n_subtopics):
        s.relevant[j] = 0
    for d in range(first_judged, first_judged + n_judged):
        for p in range(rel_offsets[d], rel_offsets[d + 1]):
            s.relevant[rel_subtopics[p]] += 1
    for j in range(n_subtopics):
        if s.relevant[j]:
            actual += 1
    if actual == 0:
        return                  # ndeval: every measure 0 (nNRBP: 0 / 0, here 0)

    # the run, rank by rank (computeNRBP, computeMAP; g(i) for the rest)
    for j in range(n_subtopics):
        s.gain[j] = 1.0
        s.count[j] = 0
        s.total[j] = 0.0
        s.seen[j] = 0
    decay = 1.0
    nrbp = 0.0
    for i in range(n_ranked):
        d = ranked[i]
        score = 0.0
        s.run_pairs[i] = 0
        s.run_fresh[i] = 0
        if d >= 0:
            for p in range(rel_offsets[d], rel_offsets[d + 1]):
                j = rel_subtopics[p]
                score += s.gain[j]
                s.gain[j] *= (1.0 - alpha)
                s.count[j] += 1
                s.total[j] += <gain_t>s.count[j] / (<gain_t>(i + 1))
                s.run_pairs[i] += 1
                if s.seen[j] == 0:
                    s.seen[j] = 1
                    s.run_fresh[i] += 1
        s.run_score[i] = score
        nrbp += score * decay
        decay *= beta
    factor = (1.0 - (1.0 - alpha) * beta) / <gain_t>actual
    nrbp *= factor
    map_ia = 0.0
    for j in range(n_subtopics):
        if s.relevant[j]:
            map_ia += s.total[j] / <gain_t>s.relevant[j]
    map_ia /= <gain_t>actual

    m = _greedy_ideal(rel_offsets, rel_subtopics, first_judged, n_judged, n_subtopics,
                      alpha, s, beta, &ideal_nrbp)
    ideal_nrbp *= factor
    whole_out[W_NRBP * whole_stride] = nrbp
    whole_out[W_NNRBP * whole_stride] = nrbp / ideal_nrbp if ideal_nrbp != 0.0 else 0.0
    whole_out[W_AP * whole_stride] = map_ia

    # computeDCG, computeERR (run and ideal), renormalize, computePrecision,
    # computeSTRecall: cumulated rank by rank up to the largest cut-off
    k_max = cutoffs[n_cutoffs - 1] if n_cutoffs > 0 else 0
    gain_a = <gain_t>actual
    dcg = ideal_dcg = ideal_ideal_dcg = err = ideal_err = ideal_ideal_err = 0.0
    c = 0
    for i in range(k_max):
        run_g = s.run_score[i] if i < n_ranked else 0.0
        ideal_g = s.ideal_score[i] if i < m else 0.0
        disc = _discount(i)
        dcg += run_g * disc
        ideal_dcg += ideal_g * disc
        ideal_ideal_dcg += gain_a * disc
        err += run_g / (<gain_t>(i + 1))
        ideal_err += ideal_g / (<gain_t>(i + 1))
        ideal_ideal_err += gain_a / (<gain_t>(i + 1))
        gain_a *= (1.0 - alpha)
        if i < n_ranked:
            pairs += s.run_pairs[i]
            covered += s.run_fresh[i]
        if i + 1 < cutoffs[c]:
            continue
        if i == 0:              # ndeval leaves rank 1 unnormalised
            dcg_n, ideal_dcg_n, err_n, ideal_err_n = dcg, ideal_dcg, err, ideal_err
        else:
            dcg_n = dcg / ideal_ideal_dcg
            ideal_dcg_n = ideal_dcg / ideal_ideal_dcg
            err_n = err / ideal_ideal_err
            ideal_err_n = ideal_err / ideal_ideal_err
        at_out[C_ERR * at_stride + c] = err_n
        at_out[C_DCG * at_stride + c] = dcg_n
        if dcg_n != 0.0:
            at_out[C_NDCG * at_stride + c] = dcg_n / ideal_dcg_n
            at_out[C_NERR * at_stride + c] = err_n / ideal_err_n
        at_out[C_P * at_stride + c] = <gain_t>pairs / <gain_t>((i + 1) * actual)
        at_out[C_STREC * at_stride + c] = <gain_t>covered / <gain_t>actual
        c += 1


def diversity_measures(const index_t[::1] judged_offsets, const index_t[::1] relevant_offsets,
                       const index_t[::1] relevant_subtopics, const index_t[::1] n_subtopics,
                       const index_t[::1] ranked_offsets, const index_t[::1] ranked_docs,
                       const index_t[::1] cutoffs, double alpha, double beta):
    """ndeval's measures of every topic (see the module docstring for the layout).

    Returns ``(at_cutoff, whole)``: float64 arrays of shape (6, topics, len(cutoffs))
    (rows AT_CUTOFF) and (3, topics) (rows WHOLE).
    """
    cdef index_t n_judged = check_offsets(relevant_offsets, relevant_subtopics.shape[0],
                                          "relevant_offsets")
    cdef index_t n_topics = check_offsets(judged_offsets, n_judged, "judged_offsets")
    if judged_offsets[n_topics] != n_judged:
        raise ValueError(f"relevant_offsets describes {n_judged} judged documents, "
                         f"judged_offsets {judged_offsets[n_topics]}")
    if relevant_offsets[n_judged] != relevant_subtopics.shape[0]:
        raise ValueError("relevant_offsets[-1] must be the number of relevant_subtopics")
    check_per_topic(n_subtopics.shape[0], n_topics, "n_subtopics")
    check_per_topic(check_offsets(ranked_offsets, ranked_docs.shape[0], "ranked_offsets"),
                    n_topics, "ranked_offsets")
    if not (isfinite(alpha) and 0.0 <= alpha <= 1.0):
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if not (isfinite(beta) and 0.0 <= beta <= 1.0):
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    cdef Py_ssize_t n_cutoffs = cutoffs.shape[0]
    cdef Py_ssize_t c
    for c in range(n_cutoffs):
        if cutoffs[c] < 1 or (c > 0 and cutoffs[c] <= cutoffs[c - 1]):
            raise ValueError("cutoffs must be increasing whole numbers >= 1")
    cdef index_t t, d, p, r, most_subtopics = 0, most_ranked = 0, most_judged = 0
    for t in range(n_topics):
        if n_subtopics[t] < 0:
            raise ValueError(f"n_subtopics[{t}] is negative")
        most_subtopics = max(most_subtopics, n_subtopics[t])
        most_judged = max(most_judged, judged_offsets[t + 1] - judged_offsets[t])
        most_ranked = max(most_ranked, ranked_offsets[t + 1] - ranked_offsets[t])
        for d in range(judged_offsets[t], judged_offsets[t + 1]):
            for p in range(relevant_offsets[d], relevant_offsets[d + 1]):
                if not 0 <= relevant_subtopics[p] < n_subtopics[t]:
                    raise ValueError(f"relevant_subtopics[{p}] = {relevant_subtopics[p]} is "
                                     f"not a subtopic of topic {t} (0 .. {n_subtopics[t] - 1})")
                if p > relevant_offsets[d] and relevant_subtopics[p] <= relevant_subtopics[p - 1]:
                    raise ValueError(f"the subtopics of judged document {d} must be strictly "
                                     f"increasing (at relevant_subtopics[{p}])")
        for r in range(ranked_offsets[t], ranked_offsets[t + 1]):
            if ranked_docs[r] != -1 and not (judged_offsets[t] <= ranked_docs[r]
                                             < judged_offsets[t + 1]):
                raise ValueError(f"ranked_docs[{r}] = {ranked_docs[r]} is neither -1 nor a "
                                 f"judged document of topic {t}")
    at_cutoff = np.zeros((N_AT, n_topics, n_cutoffs), dtype=np.float64)
    whole = np.zeros((N_WHOLE, n_topics), dtype=np.float64)
    cdef gain_t[:, :, ::1] at_view = at_cutoff
    cdef gain_t[:, ::1] whole_view = whole
    cdef Scratch scratch
    cdef int failed
    cdef const index_t* subtopics_at = &relevant_subtopics[0] \
        if relevant_subtopics.shape[0] > 0 else NULL
    cdef const index_t* ranks_at
    cdef gain_t* at_row
    if n_topics == 0:
        return at_cutoff, whole
    with nogil:
        failed = _alloc_scratch(&scratch, most_subtopics, most_ranked, most_judged)
        if failed == 0:
            for t in range(n_topics):
                ranks_at = &ranked_docs[ranked_offsets[t]] \
                    if ranked_offsets[t + 1] > ranked_offsets[t] else NULL
                at_row = &at_view[0, t, 0] if n_cutoffs > 0 else NULL
                _topic(&relevant_offsets[0], subtopics_at,
                       judged_offsets[t], judged_offsets[t + 1] - judged_offsets[t],
                       n_subtopics[t], ranks_at, ranked_offsets[t + 1] - ranked_offsets[t],
                       &cutoffs[0] if n_cutoffs > 0 else NULL, n_cutoffs,
                       alpha, beta, &scratch, at_row, n_topics * n_cutoffs,
                       &whole_view[0, t], n_topics)
            _free_scratch(&scratch)
    if failed:
        raise MemoryError("no memory for the diversity measures' scratch arrays")
    return at_cutoff, whole
