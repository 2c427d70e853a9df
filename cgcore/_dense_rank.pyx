"""Rank dense (n_queries x n_candidates) score matrices into the evaluator's ranked rows.

Row ``q`` is one query: ``scores[q, j]`` is candidate ``j``'s score, ``labels[q, j]`` its
relevance level. The valid candidates of a row are its first ``lengths[q]`` (ragged
batches), or those where ``mask[q, j]`` is true (padding), or all. Each row's valid
candidates are ranked by score descending; equal scores by the tie rule: the column
order (``input_order``: candidate ``j`` before ``j + 1``), or ``random``, the file
reader's random rule with candidate position i (among the row's valid ones) as the
line position. The output is the CSR layout of ``cumgain.measures.ranked.RankedBatch``: per row
the ranked levels cut at ``depth``, whether each is judged (level >= 0), the scores in
rank order (for ``ties="average"``), and the row's judgments: every valid candidate's
level in column order.

Everything runs with the GIL released, rows split between threads by the caller.
"""
# cython: language_level=3

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.math cimport isnan, isinf

from cgcore._rank_keys cimport descending_key, random_tie_key

import numpy as np

ctypedef fused score_t:
    float
    double

ctypedef fused label_t:
    int32_t
    int64_t
    float
    double

cdef enum:
    TIES_INPUT_ORDER = 0
    TIES_RANDOM = 1

RULE_INPUT_ORDER = TIES_INPUT_ORDER
RULE_RANDOM = TIES_RANDOM


cdef struct Item:           # a candidate being ranked
    uint64_t key            # the score's descending key, then (in a tie group) the tie key
    uint32_t column
    uint32_t position       # among the row's valid candidates


cdef inline uint64_t _random_tie_key(uint64_t seed, int64_t position) noexcept nogil:
    """The file reader's random tie key, in unsigned order (signed int64 order flipped)."""
    return <uint64_t>random_tie_key(seed, position) ^ 0x8000000000000000ULL


cdef inline bint _before(const Item* x, const Item* y, bint by_position) noexcept nogil:
    """By key; on equal keys by position if ``by_position`` (else in any order)."""
    if x.key != y.key or not by_position:
        return x.key < y.key
    return x.position < y.position


cdef void _sort(Item* items, Py_ssize_t n, bint by_position) noexcept nogil:
    """Quicksort by _before (median of three, insertion sort below 16 items)."""
    cdef Py_ssize_t i, j, low, high, middle
    cdef Item pivot, swap
    while n > 16:
        middle = n // 2
        if _before(&items[middle], &items[0], by_position):
            swap = items[middle]; items[middle] = items[0]; items[0] = swap
        if _before(&items[n - 1], &items[0], by_position):
            swap = items[n - 1]; items[n - 1] = items[0]; items[0] = swap
        if _before(&items[n - 1], &items[middle], by_position):
            swap = items[n - 1]; items[n - 1] = items[middle]; items[middle] = swap
        pivot = items[middle]
        low, high = 0, n - 1
        while low <= high:
            while _before(&items[low], &pivot, by_position):
                low += 1
            while _before(&pivot, &items[high], by_position):
                high -= 1
            if low <= high:
                swap = items[low]; items[low] = items[high]; items[high] = swap
                low += 1
                high -= 1
        if high + 1 < n - low:
            _sort(items, high + 1, by_position)
            items, n = items + low, n - low
        else:
            _sort(items + low, n - low, by_position)
            n = high + 1
    for i in range(1, n):
        pivot = items[i]
        j = i
        while j > 0 and _before(&pivot, &items[j - 1], by_position):
            items[j] = items[j - 1]
            j -= 1
        items[j] = pivot


cdef void _rank(Item* items, Py_ssize_t n, int ties, uint64_t seed) noexcept nogil:
    """Score descending (one integer comparison each), then each group of equal scores
    by the tie rule: position (input_order), or the random key, then position."""
    cdef Py_ssize_t start = 0, end, i
    _sort(items, n, False)
    while start < n:
        end = start + 1
        while end < n and items[end].key == items[start].key:
            end += 1
        if end - start > 1:
            for i in range(start, end):
                items[i].key = _random_tie_key(seed, items[i].position) \
                    if ties == TIES_RANDOM else items[i].position
            _sort(items + start, end - start, True)
        start = end


def count_valid(Py_ssize_t n_rows, Py_ssize_t n_columns, const int64_t[::1] lengths,
                const uint8_t[:, ::1] mask):
    """Per row, the number of valid candidates (see the module's docstring); None for
    lengths or mask means every candidate."""
    counts = np.empty(n_rows, np.int64)
    cdef int64_t[::1] out = counts
    cdef Py_ssize_t q, j, n
    with nogil:
        for q in range(n_rows):
            if lengths is not None:
                out[q] = lengths[q]
            elif mask is not None:
                n = 0
                for j in range(n_columns):
                    n += mask[q, j] != 0
                out[q] = n
            else:
                out[q] = n_columns
    return counts


cdef inline uint64_t _column_bits(Py_ssize_t n_columns) noexcept nogil:
    """The low bits of a packed word that hold the column (see pack_rows)."""
    cdef uint64_t bits = 0
    while (<uint64_t>1 << bits) < <uint64_t>n_columns:
        bits += 1
    return bits


def pack_rows(const score_t[:, ::1] scores, const label_t[:, ::1] labels,
              const int64_t[::1] lengths, const uint8_t[:, ::1] mask,
              const int64_t[::1] qrels_offsets, double[::1] qrels_levels,
              uint64_t[:, ::1] words, Py_ssize_t first, Py_ssize_t stop):
    """Rows ``first`` to ``stop``: each valid candidate's label into the row's
    judgments (at ``qrels_offsets``, column order; unless ``qrels_levels`` is None: the
    labels are those already) and its packed word into ``words``
    (row ``q`` into ``words[q - first]``):
    its score's descending key with the low bits (as many as columns need) replaced by
    its column, so that sorting a row's words as integers ranks it by score (exactly
    where scores differ above those bits; see finish_rows); padding gets the largest
    word and sorts last. Returns -1, or the flat index (row * n_columns + column) of the
    first NaN score or NaN or infinite label (nothing is written past it)."""
    cdef Py_ssize_t n_columns = scores.shape[1], q, j, n
    cdef uint64_t low = (<uint64_t>1 << _column_bits(n_columns)) - 1
    cdef double label
    cdef int64_t bad = -1
    if labels.shape[0] != scores.shape[0] or labels.shape[1] != n_columns \
            or words.shape[0] < stop - first or words.shape[1] != n_columns \
            or first < 0 or stop > scores.shape[0]:
        raise ValueError("labels and scores must have one shape, words a row per row")
    with nogil:
        for q in range(first, stop):
            n = 0
            for j in range(n_columns):
                if (lengths is not None and j >= lengths[q]) or \
                        (mask is not None and mask[q, j] == 0):
                    words[q - first, j] = 0xFFFFFFFFFFFFFFFFULL
                    continue
                label = <double>labels[q, j]
                if isnan(scores[q, j]) or isnan(label) or isinf(label):
                    bad = q * n_columns + j
                    break
                if qrels_levels is not None:
                    qrels_levels[qrels_offsets[q] + n] = label
                words[q - first, j] = (descending_key(<double>scores[q, j]) & ~low) \
                    | <uint64_t>j
                n += 1
            if bad >= 0:
                break
    return bad


def finish_rows(const score_t[:, ::1] scores, const label_t[:, ::1] labels,
                const uint8_t[:, ::1] mask, uint64_t[:, ::1] words,
                const int64_t[::1] offsets, const int64_t[::1] qrels_offsets,
                double[::1] levels, uint8_t[::1] judged, double[::1] ranked_scores,
                Py_ssize_t first, Py_ssize_t stop, int ties, uint64_t seed):
    """Rows ``first`` to ``stop``, their words (row ``q`` in ``words[q - first]``,
    see pack_rows) sorted, each row ascending: rank exactly
    each run of words that agree above the column bits (equal scores, or scores a few
    ulps apart) by the whole score key, then the tie rule (the candidate's position
    among the row's valid ones: column order, or the random key); then write each row's
    ranked levels, judged flags and (unless None) scores at ``offsets``, cut there."""
    cdef Py_ssize_t n_columns = scores.shape[1], q, j, n, i, keep, start, end
    cdef uint64_t low = (<uint64_t>1 << _column_bits(n_columns)) - 1
    cdef Item* items = <Item*>malloc(max(n_columns, 1) * sizeof(Item))
    cdef uint32_t* positions = <uint32_t*>malloc(max(n_columns, 1) * sizeof(uint32_t))
    cdef bint positions_known
    cdef double label
    cdef uint64_t* row
    if labels.shape[0] != scores.shape[0] or labels.shape[1] != n_columns \
            or words.shape[0] < stop - first or words.shape[1] != n_columns \
            or first < 0 or stop > scores.shape[0]:
        free(items)
        free(positions)
        raise ValueError("labels and scores must have one shape, words a row per row")
    if items == NULL or positions == NULL:
        free(items)
        free(positions)
        raise MemoryError()
    with nogil:
        for q in range(first, stop):
            row = &words[q - first, 0]
            n = qrels_offsets[q + 1] - qrels_offsets[q]
            positions_known = mask is None      # else counted when first needed
            start = 0
            while start < n:
                end = start + 1
                while end < n and (row[end] & ~low) == (row[start] & ~low):
                    end += 1
                if end - start > 1:
                    if not positions_known:
                        i = 0
                        for j in range(n_columns):
                            positions[j] = <uint32_t>i
                            i += mask[q, j] != 0
                        positions_known = True
                    for i in range(start, end):
                        j = row[i] & low
                        items[i - start].key = descending_key(<double>scores[q, j])
                        items[i - start].column = <uint32_t>j
                        items[i - start].position = positions[j] if mask is not None \
                            else <uint32_t>j
                    _rank(items, end - start, ties, seed)
                    for i in range(start, end):
                        row[i] = (row[i] & ~low) | items[i - start].column
                start = end
            keep = offsets[q + 1] - offsets[q]
            for i in range(keep):
                j = row[i] & low
                label = <double>labels[q, j]
                levels[offsets[q] + i] = label
                judged[offsets[q] + i] = label >= 0.0
                if ranked_scores is not None:
                    ranked_scores[offsets[q] + i] = <double>scores[q, j]
    free(items)
    free(positions)
