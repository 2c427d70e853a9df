"""Cumulated-gain vector kernels (Jarvelin & Kekalainen 2002, section 2).

Three tiers, as in scikit-learn: ``cdef ... noexcept nogil`` loops over typed
memoryviews; thin ``def`` wrappers that check every length and index *before*
the GIL is released; and the public, validating functions in
``cumgain.vectors``.

Batches use a flat-values + offsets layout (like a CSR matrix): topic ``t``
owns ``values[offsets[t]:offsets[t + 1]]``, so one call covers a whole run.
A dense topics x ranks matrix is the special case ``offsets = arange(T+1)*L``.
Ranks are 1-based in the docstrings and 0-based in the loops.
"""
from libc.math cimport log, log2, log10, isnan, isfinite, NAN
from libc.stdlib cimport malloc, free, qsort

from libc.stdint cimport int64_t

from cgcore._typedefs cimport gain_t, index_t

cdef extern from "_gains.h":
    int cg_count_whole_gains(const double* values, Py_ssize_t n, int64_t* counts,
                             int limit) noexcept nogil

import numpy as np

cdef extern from *:
    """
    #ifndef CUMGAIN_DEBUG
    #define CUMGAIN_DEBUG 0
    #endif
    #ifndef CUMGAIN_SANITIZE
    #define CUMGAIN_SANITIZE 0
    #endif
    """
    int CUMGAIN_DEBUG
    int CUMGAIN_SANITIZE

# True in the debug build (CUMGAIN_DEBUG=1): Cython bounds checks are compiled in.
BOUNDS_CHECKED = bool(CUMGAIN_DEBUG)
# True in the sanitizer build (CUMGAIN_SANITIZE=1): compiled with ASan + UBSan.
SANITIZED = bool(CUMGAIN_SANITIZE)


class SumOverflow(ArithmeticError):
    """A sum of finite values left float64's range (the kernels' only error after their
    loops). ``topic``: the batch row (0-based; None for avg-vect's sum over topics);
    ``rank``: the 1-based rank whose term made the sum infinite or NaN; ``of``: which
    sum, ``"run"`` (a topic's gains), ``"ideal"`` (its ideal gains), ``"ratio"`` (a
    normalised value V / I of finite V and I > 0), ``"topics"`` (avg-vect's sum at a
    rank) or ``"ranks"`` (avg-pos's sum of a topic). Gains that are themselves NaN or
    infinite are the caller's to refuse: they give NaN or infinite values, no error."""

    def __init__(self, topic, rank, of):
        self.topic = topic
        self.rank = rank
        self.of = of
        where = f" of topic {topic}" if topic is not None else ""
        what = "the ratio V / I" if of == "ratio" else f"the {of} sum"
        super().__init__(f"{what}{where} overflows float64 at rank {rank}")


# Discount rules, by number (names live in cumgain.vectors).
cdef enum:
    RULE_NONE = 0        # df(i) = 1: DCG = CG
    RULE_RANK = 1        # df(i) = i
    RULE_TOIS = 2        # df(i) = 1 for i < b, log_b(i) for i >= b   (TOIS 2002, eq. 2)
    RULE_NOTE = 3        # df(1) = 1, log_b(i) for i >= 2             (research note 2002)
    RULE_TREC_EVAL = 4   # df(i) = log2(i + 1) for every i >= 1       (trec_eval >= 9.0.4)

DISCOUNT_NONE = RULE_NONE
DISCOUNT_RANK = RULE_RANK
DISCOUNT_TOIS = RULE_TOIS
DISCOUNT_NOTE = RULE_NOTE
DISCOUNT_TREC_EVAL = RULE_TREC_EVAL


# ---------------------------------------------------------------- checks
# Every check runs with the GIL held, before any nogil loop, so that no input
# can make a kernel read or write out of bounds.

cdef index_t _check_batch(const gain_t[::1] values, const index_t[::1] offsets) except -1:
    """Offsets must be non-decreasing and stay inside ``values``; returns n_topics."""
    cdef Py_ssize_t n_offsets = offsets.shape[0]
    cdef Py_ssize_t t
    if n_offsets < 1:
        raise ValueError("offsets must hold at least one entry (n_topics + 1 in all)")
    if offsets[0] < 0:
        raise ValueError(f"offsets[0] = {offsets[0]} is negative")
    for t in range(n_offsets - 1):
        if offsets[t + 1] < offsets[t]:
            raise ValueError(
                f"offsets must be non-decreasing: offsets[{t + 1}] = {offsets[t + 1]} "
                f"< offsets[{t}] = {offsets[t]}")
    if offsets[n_offsets - 1] > values.shape[0]:
        raise ValueError(
            f"offsets[-1] = {offsets[n_offsets - 1]} runs past the {values.shape[0]} values")
    return n_offsets - 1


cdef int _check_out(object out, Py_ssize_t rows, Py_ssize_t cols) except -1:
    if out.shape[0] != rows or out.shape[1] != cols:
        raise ValueError(f"out has shape {tuple(out.shape)}, expected ({rows}, {cols})")
    return 0


cdef int _check_depth(Py_ssize_t depth) except -1:
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    return 0


cdef int _check_divisors(const gain_t[::1] divisors, Py_ssize_t depth) except -1:
    """The first ``depth`` divisors exist and are finite and > 0 (``depth``: the most
    ranks a kernel sums; for scalars at k, min(k, the longest list))."""
    cdef Py_ssize_t i
    if divisors.shape[0] < depth:
        raise ValueError(
            f"the discount holds {divisors.shape[0]} divisors, fewer than depth {depth}")
    for i in range(depth):
        if not (isfinite(divisors[i]) and divisors[i] > 0.0):
            raise ValueError(
                f"discount divisor at rank {i + 1} is {divisors[i]}; "
                "divisors must be finite and > 0")
    return 0


def _new_matrix(Py_ssize_t rows, Py_ssize_t cols, out):
    if out is None:
        return np.empty((rows, cols), dtype=np.float64)
    _check_out(out, rows, cols)
    return out


def _new_vector(Py_ssize_t rows, out):
    if out is None:
        return np.empty(rows, dtype=np.float64)
    if out.shape[0] != rows:
        raise ValueError(f"out has length {out.shape[0]}, expected {rows}")
    return out


# ---------------------------------------------------------------- discounts

cdef inline gain_t _log_base(gain_t x, gain_t base) noexcept nogil:
    """log_b(x), with the exact libm function for the common bases."""
    if base == 2.0:
        return log2(x)
    if base == 10.0:
        return log10(x)
    return log(x) / log(base)


def discount_divisors(int rule, double base, Py_ssize_t depth):
    """Divisors df(i) for ranks i = 1..depth: DCG[i] = DCG[i-1] + G[i] / df(i).

    rule: one of the DISCOUNT_* constants. ``base`` (> 1) is used by the
    TOIS and research-note rules. Computed with libm's log2/log10/log so the
    trec_eval rule is bit-identical to trec_eval's ``log2((double)(i + 2))``.
    """
    _check_depth(depth)
    if rule < RULE_NONE or rule > RULE_TREC_EVAL:
        raise ValueError(f"unknown discount rule {rule}")
    if (rule == RULE_TOIS or rule == RULE_NOTE) and not (isfinite(base) and base > 1.0):
        raise ValueError(f"the logarithm base must be a finite number > 1, got {base}")
    divisors = np.empty(depth, dtype=np.float64)
    cdef gain_t[::1] df = divisors
    cdef Py_ssize_t i
    cdef gain_t rank
    with nogil:
        for i in range(depth):
            rank = <gain_t>(i + 1)
            if rule == RULE_NONE:
                df[i] = 1.0
            elif rule == RULE_RANK:
                df[i] = rank
            elif rule == RULE_TOIS:
                df[i] = 1.0 if rank < base else _log_base(rank, base)
            elif rule == RULE_NOTE:
                df[i] = 1.0 if i == 0 else _log_base(rank, base)
            else:
                df[i] = log2(rank + 1.0)
    return divisors


# ---------------------------------------------------------------- overflow
# A sum of finite terms that leaves float64's range stays infinite or NaN to its end
# (inf + finite = inf, inf - inf = NaN), so one isfinite per sum, after its loop, tells
# whether any partial sum overflowed; the rank is looked for only then, with the GIL.

cdef Py_ssize_t _overflow_rank(const gain_t* gains, Py_ssize_t length,
                               const gain_t* divisors) noexcept nogil:
    """The 1-based rank at which sum_{i <= rank} gains[i] / divisors[i] (divisors NULL:
    1), added in rank order, is first not finite; 0 if it stays finite or a gain is
    itself not finite (not an overflow: the caller's input)."""
    cdef Py_ssize_t i
    cdef gain_t total = 0.0
    for i in range(length):
        if not isfinite(gains[i]):
            return 0
    for i in range(length):
        total = total + (gains[i] / divisors[i] if divisors != NULL else gains[i])
        if not isfinite(total):
            return i + 1
    return 0


cdef int _raise_overflow(const gain_t* gains, Py_ssize_t length, const gain_t* divisors,
                         Py_ssize_t topic, str of) except -1:
    """Raise SumOverflow for ``topic`` if its sum of finite gains overflowed."""
    cdef Py_ssize_t rank = _overflow_rank(gains, length, divisors) if length > 0 else 0
    if rank > 0:
        raise SumOverflow(topic, rank, of)
    return 0


# ---------------------------------------------------------------- vectors

cdef Py_ssize_t _cumulate(const gain_t[::1] gains, const index_t[::1] offsets,
                          const gain_t[::1] divisors, bint discounted,
                          gain_t[:, ::1] out) noexcept nogil:
    """out[t, i] = sum_{j <= i} G_t[j] / df(j), padded past the list's end; returns the
    first topic whose sum is not finite, or -1."""
    cdef Py_ssize_t n_topics = offsets.shape[0] - 1
    cdef Py_ssize_t depth = out.shape[1]
    cdef Py_ssize_t t, i, start, length, first_bad = -1
    cdef gain_t total
    for t in range(n_topics):
        start = offsets[t]
        length = offsets[t + 1] - start
        if length > depth:
            length = depth
        total = 0.0
        for i in range(length):
            if discounted:
                total = total + gains[start + i] / divisors[i]
            else:
                total = total + gains[start + i]
            out[t, i] = total
        for i in range(length, depth):
            out[t, i] = total
        if not isfinite(total) and first_bad < 0:
            first_bad = t
    return first_bad


cdef int _check_cumulated(const gain_t[::1] gains, const index_t[::1] offsets,
                          const gain_t[::1] divisors, bint discounted, Py_ssize_t depth,
                          Py_ssize_t first_bad) except -1:
    """SumOverflow for the first topic whose cumulated sum of finite gains overflowed."""
    cdef Py_ssize_t t, length
    if first_bad < 0:
        return 0
    for t in range(first_bad, offsets.shape[0] - 1):
        length = min(offsets[t + 1] - offsets[t], depth)
        if length > 0:
            _raise_overflow(&gains[offsets[t]], length, &divisors[0] if discounted else NULL,
                            t, "run")
    return 0


def cg_vectors(const gain_t[::1] gains, const index_t[::1] offsets,
               Py_ssize_t depth, out=None):
    """CG vectors (eq. 1): CG[1] = G[1]; CG[i] = CG[i-1] + G[i]. Shape (T, depth).

    Raises SumOverflow where a topic's sum of finite gains leaves float64's range."""
    _check_depth(depth)
    cdef index_t n_topics = _check_batch(gains, offsets)
    result = _new_matrix(n_topics, depth, out)
    cdef gain_t[:, ::1] view = result
    cdef gain_t[::1] no_divisors = np.ones(1, dtype=np.float64)
    cdef Py_ssize_t first_bad
    with nogil:
        first_bad = _cumulate(gains, offsets, no_divisors, False, view)
    _check_cumulated(gains, offsets, no_divisors, False, depth, first_bad)
    return result


def dcg_vectors(const gain_t[::1] gains, const index_t[::1] offsets,
                const gain_t[::1] divisors, Py_ssize_t depth, out=None):
    """DCG vectors (eq. 2): DCG[i] = DCG[i-1] + G[i] / df(i). Shape (T, depth).

    Raises SumOverflow where a topic's sum of finite gains leaves float64's range."""
    _check_depth(depth)
    _check_divisors(divisors, depth)
    cdef index_t n_topics = _check_batch(gains, offsets)
    result = _new_matrix(n_topics, depth, out)
    cdef gain_t[:, ::1] view = result
    cdef Py_ssize_t first_bad
    with nogil:
        first_bad = _cumulate(gains, offsets, divisors, True, view)
    _check_cumulated(gains, offsets, divisors, True, depth, first_bad)
    return result


cdef int _cmp_descending(const void* a, const void* b) noexcept nogil:
    cdef gain_t x = (<const gain_t*>a)[0]
    cdef gain_t y = (<const gain_t*>b)[0]
    return (x < y) - (x > y)


cdef Py_ssize_t _max_length(const index_t[::1] offsets) noexcept nogil:
    cdef Py_ssize_t t, longest = 0
    for t in range(offsets.shape[0] - 1):
        if offsets[t + 1] - offsets[t] > longest:
            longest = offsets[t + 1] - offsets[t]
    return longest


cdef enum:
    WHOLE_GAINS = 16     # gains 1 .. 15 in whole numbers are counted, not sorted


cdef Py_ssize_t _counted_positive(const gain_t[::1] judged, Py_ssize_t start,
                                  Py_ssize_t stop, Py_ssize_t k,
                                  gain_t* scratch) noexcept nogil:
    """The k largest gains > 0 of judged[start:stop], descending, into scratch[0:k],
    by counting each value (_gains.h), when every gain > 0 is a whole number below
    WHOLE_GAINS (graded levels and most gain tables); -1 otherwise (the caller sorts)."""
    cdef int64_t[WHOLE_GAINS + 1] counts       # counts[WHOLE_GAINS]: gains beyond
    cdef Py_ssize_t level, count = 0, n
    for level in range(WHOLE_GAINS + 1):
        counts[level] = 0
    if stop > start and (cg_count_whole_gains(&judged[start], stop - start, counts,
                                              WHOLE_GAINS) or counts[WHOLE_GAINS] > 0):
        return -1
    for level in range(WHOLE_GAINS - 1, 0, -1):
        n = counts[level]
        while n > 0 and count < k:
            scratch[count] = <gain_t>level
            count += 1
            n -= 1
    return count


cdef Py_ssize_t _sorted_positive(const gain_t[::1] judged, Py_ssize_t start,
                                 Py_ssize_t stop, gain_t* scratch) noexcept nogil:
    """Copy the gains > 0 of judged[start:stop] to scratch, sorted descending."""
    cdef Py_ssize_t count = _counted_positive(judged, start, stop, stop - start, scratch)
    return count if count >= 0 else _sort_positive(judged, start, stop, scratch)


cdef Py_ssize_t _sort_positive(const gain_t[::1] judged, Py_ssize_t start,
                               Py_ssize_t stop, gain_t* scratch) noexcept nogil:
    """_sorted_positive by a sort (any gains)."""
    cdef Py_ssize_t j, count = 0
    for j in range(start, stop):
        if judged[j] > 0.0:
            scratch[count] = judged[j]
            count += 1
    qsort(scratch, count, sizeof(gain_t), _cmp_descending)
    return count


cdef int _ideal_rows(const gain_t[::1] judged, const index_t[::1] offsets,
                     gain_t[:, ::1] out) noexcept nogil:
    """BV (eq. 4): each topic's positive judged gains, descending, then zeros."""
    cdef Py_ssize_t n_topics = offsets.shape[0] - 1
    cdef Py_ssize_t depth = out.shape[1]
    cdef Py_ssize_t t, i, count
    cdef gain_t* scratch = <gain_t*>malloc((_max_length(offsets) + 1) * sizeof(gain_t))
    if scratch == NULL:
        return -1
    for t in range(n_topics):
        count = _sorted_positive(judged, offsets[t], offsets[t + 1], scratch)
        for i in range(depth):
            out[t, i] = scratch[i] if i < count else 0.0
    free(scratch)
    return 0


def ideal_gain_vectors(const gain_t[::1] judged, const index_t[::1] offsets,
                       Py_ssize_t depth, out=None):
    """Ideal gain vectors BV (eq. 4) from each topic's recall base. Shape (T, depth).

    Only gains > 0 enter the ideal (a document with gain <= 0 never improves
    a ranking); they are sorted descending and padded with zeros to depth.
    """
    _check_depth(depth)
    cdef index_t n_topics = _check_batch(judged, offsets)
    result = _new_matrix(n_topics, depth, out)
    cdef gain_t[:, ::1] view = result
    cdef int status
    with nogil:
        status = _ideal_rows(judged, offsets, view)
    if status != 0:
        raise MemoryError("no memory for the ideal-vector scratch buffer")
    return result


def normalise(const gain_t[:, ::1] values, const gain_t[:, ::1] ideal,
              double zero_ideal, out=None):
    """norm-vect (eq. 5): out = values / ideal where ideal > 0, else ``zero_ideal``.

    Raises SumOverflow (of "ratio") where a finite value over a finite ideal > 0
    leaves float64's range."""
    if values.shape[0] != ideal.shape[0] or values.shape[1] != ideal.shape[1]:
        raise ValueError(
            f"values have shape ({values.shape[0]}, {values.shape[1]}) but the ideal has "
            f"shape ({ideal.shape[0]}, {ideal.shape[1]})")
    result = _new_matrix(values.shape[0], values.shape[1], out)
    cdef gain_t[:, ::1] view = result
    cdef Py_ssize_t t, i, bad_topic = -1, bad_rank = -1
    cdef gain_t ratio
    with nogil:
        for t in range(values.shape[0]):
            for i in range(values.shape[1]):
                if ideal[t, i] > 0.0:
                    ratio = values[t, i] / ideal[t, i]
                    view[t, i] = ratio
                    if not isfinite(ratio) and isfinite(values[t, i]) and bad_topic < 0:
                        bad_topic = t       # finite / finite > 0: only an overflow
                        bad_rank = i + 1
                else:
                    view[t, i] = zero_ideal
    if bad_topic >= 0:
        raise SumOverflow(bad_topic, bad_rank, "ratio")
    return result


cdef bint _column_overflows(const gain_t[:, ::1] vectors, Py_ssize_t i, bint ignore_nan):
    """Whether avg-vect's sum of column i overflows with every entry it adds finite."""
    cdef Py_ssize_t t
    cdef gain_t total = 0.0
    for t in range(vectors.shape[0]):
        if ignore_nan and isnan(vectors[t, i]):
            continue
        if not isfinite(vectors[t, i]):
            return False
        total = total + vectors[t, i]
    return not isfinite(total)


def average_vector(const gain_t[:, ::1] vectors, bint ignore_nan=False, out=None):
    """avg-vect (eq. 3): the component-wise mean over topics (rows).

    With ``ignore_nan`` each component averages only its non-NaN entries
    (NaN if there are none): the "skip topics with a zero ideal" policy.
    Raises SumOverflow (of "topics") where the sum of a component's finite
    entries leaves float64's range.
    """
    if vectors.shape[0] < 1:
        raise ValueError("avg-vect needs at least one vector")
    result = _new_vector(vectors.shape[1], out)
    cdef gain_t[::1] view = result
    cdef Py_ssize_t t, i, counted, bad_rank = -1
    cdef gain_t total
    with nogil:
        for i in range(vectors.shape[1]):
            total = 0.0
            counted = 0
            for t in range(vectors.shape[0]):
                if ignore_nan and isnan(vectors[t, i]):
                    continue
                total = total + vectors[t, i]
                counted += 1
            view[i] = total / counted if counted > 0 else NAN
            if not isfinite(total) and bad_rank < 0:
                bad_rank = i
    if bad_rank >= 0:
        for i in range(bad_rank, vectors.shape[1]):
            if _column_overflows(vectors, i, ignore_nan):
                raise SumOverflow(None, i + 1, "topics")
    return result


def average_position(const gain_t[:, ::1] vectors, Py_ssize_t k, out=None):
    """avg-pos(V, k) (eq. 6) per topic: (1/k) * sum_{i=1..k} V[i].

    Raises SumOverflow (of "ranks") where a topic's sum of finite entries leaves
    float64's range."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if k > vectors.shape[1]:
        raise ValueError(f"k = {k} exceeds the vectors' depth {vectors.shape[1]}")
    result = _new_vector(vectors.shape[0], out)
    cdef gain_t[::1] view = result
    cdef Py_ssize_t t, i, first_bad = -1
    cdef gain_t total
    with nogil:
        for t in range(vectors.shape[0]):
            total = 0.0
            for i in range(k):
                total = total + vectors[t, i]
            view[t] = total / <gain_t>k
            if not isfinite(total) and first_bad < 0:
                first_bad = t
    if first_bad >= 0:
        for t in range(first_bad, vectors.shape[0]):
            _raise_overflow(&vectors[t, 0], k, NULL, t, "ranks")
    return result


# ---------------------------------------------------------------- scalars at k

cdef inline gain_t _discounted_sum(const gain_t* gains, Py_ssize_t length,
                                   const gain_t[::1] divisors, gain_t* prefix) noexcept nogil:
    """sum_{i < length} gains[i] / divisors[i], added in rank order (every DCG here is
    this sum, so that they agree bit for bit); the sum to each rank i + 1 also into
    prefix[i + 1] unless prefix is NULL."""
    cdef Py_ssize_t i
    cdef gain_t total = 0.0
    for i in range(length):
        total = total + gains[i] / divisors[i]
        if prefix != NULL:
            prefix[i + 1] = total
    return total


cdef Py_ssize_t _cumulated_at(const gain_t[::1] gains, const index_t[::1] offsets,
                              const gain_t[::1] divisors, Py_ssize_t k,
                              gain_t[::1] out) noexcept nogil:
    """DCG@k per topic into out; returns the first topic whose sum is not finite, or -1."""
    cdef Py_ssize_t t, length, first_bad = -1
    for t in range(offsets.shape[0] - 1):
        length = min(offsets[t + 1] - offsets[t], k)
        out[t] = _discounted_sum(&gains[offsets[t]], length, divisors, NULL) if length > 0 \
            else 0.0
        if not isfinite(out[t]) and first_bad < 0:
            first_bad = t
    return first_bad


cdef Py_ssize_t _top_positive(const gain_t[::1] judged, Py_ssize_t start, Py_ssize_t stop,
                              Py_ssize_t k, gain_t* scratch) noexcept nogil:
    """The k largest gains > 0 of judged[start:stop], descending, into scratch[0:k].

    Whole gains below WHOLE_GAINS are counted; other gains go by insertion into a
    sorted buffer of size k (O(n) for the small k of nDCG@k), or a full sort when k
    is large.
    """
    cdef Py_ssize_t j, position, count = _counted_positive(judged, start, stop, k, scratch)
    cdef gain_t value
    if count >= 0:
        return count
    count = 0
    if k > 64:
        count = _sort_positive(judged, start, stop, scratch)
        return count if count < k else k
    for j in range(start, stop):
        value = judged[j]
        if not value > 0.0 or (count == k and value <= scratch[k - 1]):    # NaN too
            continue
        position = count if count < k else k - 1
        while position > 0 and scratch[position - 1] < value:
            scratch[position] = scratch[position - 1]
            position -= 1
        scratch[position] = value
        if count < k:
            count += 1
    return count


cdef int _ideal_at(const gain_t[::1] judged, const index_t[::1] offsets,
                   const gain_t[::1] divisors, Py_ssize_t k,
                   gain_t[::1] out, Py_ssize_t* first_bad) noexcept nogil:
    """Ideal DCG@k per topic into out, and the first topic whose sum is not finite (or
    -1) into first_bad; -1 when out of memory. The scratch holds one topic's judged
    gains: the top k of a list are never more than the list."""
    cdef Py_ssize_t t, count
    cdef gain_t* scratch = <gain_t*>malloc((_max_length(offsets) + 1) * sizeof(gain_t))
    if scratch == NULL:
        return -1
    first_bad[0] = -1
    for t in range(offsets.shape[0] - 1):
        count = _top_positive(judged, offsets[t], offsets[t + 1], k, scratch)
        out[t] = _discounted_sum(scratch, count, divisors, NULL)
        if not isfinite(out[t]) and first_bad[0] < 0:
            first_bad[0] = t
    free(scratch)
    return 0


cdef int _raise_topic_overflow(const gain_t[::1] gains, const index_t[::1] offsets,
                               const gain_t[::1] judged, const index_t[::1] judged_offsets,
                               const gain_t[::1] divisors, Py_ssize_t k, Py_ssize_t first,
                               Py_ssize_t stop, bint run, bint ideal) except -1:
    """SumOverflow for the first topic of [first, stop) whose DCG@k (``run``) or ideal
    DCG@k (``ideal``) is a sum of finite terms that overflowed, or (both) whose DCG@k
    over a finite ideal DCG@k > 0 does; nothing if none (non-finite gains are the
    caller's to refuse). With the GIL: the error path only."""
    cdef Py_ssize_t t, length, count
    cdef gain_t run_sum = 0.0, ideal_sum = 0.0
    cdef gain_t* scratch = NULL
    if ideal:
        scratch = <gain_t*>malloc((_max_length(judged_offsets) + 1) * sizeof(gain_t))
        if scratch == NULL:
            raise MemoryError("no memory for the ideal scratch buffer")
    try:
        for t in range(first, stop):
            length = min(offsets[t + 1] - offsets[t], k)
            if run and length > 0:
                _raise_overflow(&gains[offsets[t]], length, &divisors[0], t, "run")
                run_sum = _discounted_sum(&gains[offsets[t]], length, divisors, NULL)
            if ideal:
                count = _top_positive(judged, judged_offsets[t], judged_offsets[t + 1], k,
                                      scratch)
                _raise_overflow(scratch, count, &divisors[0], t, "ideal")
                ideal_sum = _discounted_sum(scratch, count, divisors, NULL)
            if run and ideal and length > 0 and isfinite(run_sum) and isfinite(ideal_sum) \
                    and ideal_sum > 0.0 and not isfinite(run_sum / ideal_sum):
                raise SumOverflow(t, k, "ratio")
    finally:
        free(scratch)
    return 0


cdef int _ndcg_at_cutoffs(const gain_t[::1] gains, const index_t[::1] offsets,
                           const gain_t[::1] judged, const index_t[::1] judged_offsets,
                           const gain_t[::1] divisors, const index_t[::1] ks,
                           Py_ssize_t k_max, double zero_ideal,
                           gain_t[:, ::1] out, Py_ssize_t* first_bad) noexcept nogil:
    """ndcg_at for each cut-off in ``ks`` (at most k_max): each topic's DCG and ideal
    DCG summed once, to k_max, in the same order as _cumulated_at and _ideal_at, so
    each column equals ndcg_at's value bit for bit; the first topic with a sum or a
    ratio that is not finite into first_bad (or -1); -1 when out of memory. The
    prefix sums need room for the ranks summed, min(k_max, the longest list), not k_max."""
    cdef Py_ssize_t t, j, length, count, k
    cdef Py_ssize_t reach = min(k_max, max(_max_length(offsets), _max_length(judged_offsets)))
    cdef gain_t ideal
    cdef gain_t* scratch = <gain_t*>malloc((_max_length(judged_offsets) + 1) * sizeof(gain_t))
    cdef gain_t* dcg = <gain_t*>malloc((reach + 1) * sizeof(gain_t))      # dcg[i]: to rank i
    cdef gain_t* best = <gain_t*>malloc((reach + 1) * sizeof(gain_t))     # the ideal's
    if scratch == NULL or dcg == NULL or best == NULL:
        free(scratch)
        free(dcg)
        free(best)
        return -1
    first_bad[0] = -1
    dcg[0] = best[0] = 0.0
    for t in range(offsets.shape[0] - 1):
        length = min(offsets[t + 1] - offsets[t], k_max)
        if length > 0:
            _discounted_sum(&gains[offsets[t]], length, divisors, dcg)
        count = _top_positive(judged, judged_offsets[t], judged_offsets[t + 1], k_max, scratch)
        _discounted_sum(scratch, count, divisors, best)
        for j in range(ks.shape[0]):
            k = ks[j]
            ideal = best[k if k < count else count]
            out[t, j] = dcg[k if k < length else length] / ideal if ideal > 0.0 \
                else zero_ideal
            if first_bad[0] < 0 and not (isfinite(dcg[length]) and isfinite(best[count])
                                        and (isfinite(out[t, j]) or not ideal > 0.0)):
                first_bad[0] = t
    free(scratch)
    free(dcg)
    free(best)
    return 0


cdef Py_ssize_t _longest_summed(const index_t[::1] offsets, Py_ssize_t k) noexcept nogil:
    """How many ranks a scalar at k sums at most: min(k, the longest list), at least 1."""
    cdef Py_ssize_t longest = _max_length(offsets)
    return max(min(k, longest), 1)


def dcg_at(const gain_t[::1] gains, const index_t[::1] offsets,
           const gain_t[::1] divisors, Py_ssize_t k, out=None):
    """DCG@k per topic, sum_{i <= min(k, len)} G[i] / df(i), with no vector built.

    With all divisors 1 this is CG@k. ``divisors`` must cover the ranks summed,
    min(k, the longest list); memory does not grow with k. Raises SumOverflow where
    a topic's sum of finite gains leaves float64's range.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    cdef index_t n_topics = _check_batch(gains, offsets)
    _check_divisors(divisors, _longest_summed(offsets, k))
    result = _new_vector(n_topics, out)
    cdef gain_t[::1] view = result
    cdef Py_ssize_t first_bad
    with nogil:
        first_bad = _cumulated_at(gains, offsets, divisors, k, view)
    if first_bad >= 0:
        _raise_topic_overflow(gains, offsets, gains, offsets, divisors, k, first_bad,
                              n_topics, True, False)
    return result


def ideal_dcg_at(const gain_t[::1] judged, const index_t[::1] offsets,
                 const gain_t[::1] divisors, Py_ssize_t k, out=None):
    """Ideal DCG@k per topic: the top-k positive judged gains, descending, discounted.

    ``divisors`` must cover min(k, the longest list). Raises SumOverflow (of
    "ideal") where a sum of finite gains leaves float64's range."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    cdef index_t n_topics = _check_batch(judged, offsets)
    _check_divisors(divisors, _longest_summed(offsets, k))
    result = _new_vector(n_topics, out)
    cdef gain_t[::1] view = result
    cdef int status
    cdef Py_ssize_t first_bad = -1
    with nogil:
        status = _ideal_at(judged, offsets, divisors, k, view, &first_bad)
    if status != 0:
        raise MemoryError("no memory for the ideal scratch buffer")
    if first_bad >= 0:
        _raise_topic_overflow(judged, offsets, judged, offsets, divisors, k, first_bad,
                              n_topics, False, True)
    return result


cdef index_t _check_run_and_judged(const gain_t[::1] gains, const index_t[::1] offsets,
                                   const gain_t[::1] judged,
                                   const index_t[::1] judged_offsets) except -1:
    """Both batches checked (_check_batch), with as many topics; returns n_topics."""
    cdef index_t n_topics = _check_batch(gains, offsets)
    if _check_batch(judged, judged_offsets) != n_topics:
        raise ValueError(
            f"the run has {n_topics} topics but the judgments have "
            f"{judged_offsets.shape[0] - 1}")
    return n_topics


def ndcg_at(const gain_t[::1] gains, const index_t[::1] offsets,
            const gain_t[::1] judged, const index_t[::1] judged_offsets,
            const gain_t[::1] divisors, Py_ssize_t k, double zero_ideal, out=None):
    """nDCG@k per topic = DCG@k / ideal DCG@k, or ``zero_ideal`` where the ideal is 0.

    ``divisors`` must cover min(k, the longest run or judged list). Raises
    SumOverflow where a sum of finite gains, or the ratio of two finite sums, leaves
    float64's range."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    cdef index_t n_topics = _check_run_and_judged(gains, offsets, judged, judged_offsets)
    _check_divisors(divisors, max(_longest_summed(offsets, k),
                                  _longest_summed(judged_offsets, k)))
    result = _new_vector(n_topics, out)
    cdef gain_t[::1] view = result
    ideal_sums = np.empty(n_topics, dtype=np.float64)
    cdef gain_t[::1] ideal = ideal_sums
    cdef Py_ssize_t t, run_bad, ideal_bad = -1, ratio_bad = -1
    cdef int status
    with nogil:
        run_bad = _cumulated_at(gains, offsets, divisors, k, view)
        status = _ideal_at(judged, judged_offsets, divisors, k, ideal, &ideal_bad)
    if status != 0:
        raise MemoryError("no memory for the ideal scratch buffer")
    if run_bad >= 0 or ideal_bad >= 0:
        _raise_topic_overflow(gains, offsets, judged, judged_offsets, divisors, k,
                              min(run_bad if run_bad >= 0 else n_topics,
                                  ideal_bad if ideal_bad >= 0 else n_topics), n_topics,
                              True, True)
    with nogil:
        for t in range(n_topics):
            if ideal[t] > 0.0:
                view[t] = view[t] / ideal[t]
                if not isfinite(view[t]) and ratio_bad < 0:
                    ratio_bad = t
            else:
                view[t] = zero_ideal
    if ratio_bad >= 0:      # the sums are finite (or a gain was not): only an overflow
        _raise_topic_overflow(gains, offsets, judged, judged_offsets, divisors, k,
                              ratio_bad, n_topics, True, True)
    return result


def ndcg_at_cutoffs(const gain_t[::1] gains, const index_t[::1] offsets,
                    const gain_t[::1] judged, const index_t[::1] judged_offsets,
                    const gain_t[::1] divisors, const index_t[::1] ks,
                    double zero_ideal, out=None):
    """ndcg_at at each cut-off of ``ks``, one column each (shape (T, len(ks))): every
    topic's run and judgments are gone through once for all of them, and each column
    equals ndcg_at(..., ks[j], zero_ideal) exactly. ``divisors`` must cover
    min(max(ks), the longest run or judged list); memory does not grow with the
    cut-offs. Raises SumOverflow as ndcg_at does."""
    cdef Py_ssize_t j, k_max = 0
    for j in range(ks.shape[0]):
        if ks[j] < 1:
            raise ValueError(f"every k must be >= 1, got {ks[j]}")
        k_max = max(k_max, ks[j])
    cdef index_t n_topics = _check_run_and_judged(gains, offsets, judged, judged_offsets)
    _check_divisors(divisors, max(_longest_summed(offsets, max(k_max, 1)),
                                  _longest_summed(judged_offsets, max(k_max, 1))))
    result = _new_matrix(n_topics, ks.shape[0], out)
    if ks.shape[0] == 0:
        return result
    cdef gain_t[:, ::1] view = result
    cdef int status
    cdef Py_ssize_t first_bad = -1
    with nogil:
        status = _ndcg_at_cutoffs(gains, offsets, judged, judged_offsets, divisors, ks, k_max,
                                  zero_ideal, view, &first_bad)
    if status != 0:
        raise MemoryError("no memory for the ideal scratch buffer")
    if first_bad >= 0:
        _raise_cutoffs_overflow(gains, offsets, judged, judged_offsets, divisors, ks,
                                first_bad)
    return result


cdef int _raise_cutoffs_overflow(const gain_t[::1] gains, const index_t[::1] offsets,
                                 const gain_t[::1] judged, const index_t[::1] judged_offsets,
                                 const gain_t[::1] divisors, const index_t[::1] ks,
                                 Py_ssize_t first) except -1:
    """ndcg_at_cutoffs's error path: for each topic from ``first`` on and each cut-off
    in ascending order, SumOverflow for the first sum of finite gains (run, then ideal)
    or ratio of finite sums that left float64's range."""
    cdef Py_ssize_t t
    for t in range(first, offsets.shape[0] - 1):
        for k in sorted(set(ks)):
            _raise_topic_overflow(gains, offsets, judged, judged_offsets, divisors, k, t,
                                  t + 1, True, True)
    return 0
