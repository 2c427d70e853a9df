"""Per-row DCG over a dense (n_samples x n_labels) matrix, as scikit-learn computes it.

The kernels behind ``cumgain.compat.sklearn`` (``ndcg_score`` / ``dcg_score``).
Row ``r`` holds one query: ``y_true[r, j]`` is the gain of label ``j`` and
``y_score[r, j]`` its score. Ranks are 1-based in the docstrings, 0-based in
the loops. Every kernel takes the caller's ``discount`` (length >= n_labels;
scikit-learn's is ``1 / log_b(rank + 1)``) and a cut-off ``k``: ranks beyond
``k`` get discount 0, exactly as scikit-learn's ``discount[k:] = 0``.

Policies (scikit-learn's, written once here):

* Ties in ``y_score`` (``tie_averaged_dcg``): every group of equal scores gets
  the mean gain of the group times the sum of the group's discounts
  (McSherry & Najork 2008; scikit-learn's ``_tie_averaged_dcg``). A group that
  straddles rank ``k`` is averaged over all its members. The arithmetic is
  scikit-learn's, step for step: the group sum is accumulated in column order
  (``np.add.at``), divided by the count, multiplied by a difference of the
  cumulated discounts (``np.cumsum`` then ``np.diff``), and the group terms are
  added with numpy's pairwise summation (``ndarray.sum``), so results are
  normally bit-identical to scikit-learn's.
* ``ignore_ties`` (``ranked_dcg``): the gains in descending score order. Where
  a tie group that reaches the top ``k`` mixes different gains, the value
  depends on how the tie is broken; such rows are *flagged, not computed*,
  because scikit-learn breaks them with ``np.argsort``'s unstable order, which
  only numpy can reproduce. The caller sorts those rows with numpy and finishes
  them with ``ordered_dcg``.
* The ideal DCG (``ideal_dcg``) sums the ``k`` largest gains, descending.
  Tie order cannot change it.
* ``ranked_dcg``, ``ordered_dcg`` and ``ideal_dcg`` add discount x gain in
  rank order; scikit-learn forms these sums with a BLAS dot product, whose
  order depends on the BLAS build, so they may differ in the last bits.

The top ``k`` of a row is found with a size-``k`` heap when ``k`` is at most
``SELECT_MAX`` and less than the row length: one pass computes the maximum of
every block of ``BLOCK`` columns, the heap first selects the ``k`` largest
block maxima, and then only the blocks that can hold one of the ``k`` largest
values are looked into (no sort of the row). Otherwise the whole row is sorted
(a stable radix sort). All loops run with the GIL released; the ``def``
wrappers check every shape and index first.

Input types: gains may be float64, float32, int64, int32 or uint8 (pass a
bool matrix as ``.view(np.uint8)``), scores float64 or float32, all
C-contiguous; values are widened to float64 as they are read, exactly as
numpy converts them, so no converted copy of a matrix is needed. Everything
computed (discounts, sums, results) is float64.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

from cgcore._typedefs cimport gain_t, index_t

import numpy as np

# Heap selection of the top k when k <= SELECT_MAX (and k < n_labels). It
# must stay <= 64: see _numpy_sum for why the pairwise-sum emulation then
# needs no more than 8 distinct values below the cut-off.
cdef enum:
    SELECT_MAX = 64
    BLOCK = 8               # values tested together when scanning a row

SELECT_MAX_K = SELECT_MAX

# Element types the kernels read without a converted copy.
ctypedef fused gains_t:
    double
    float
    int64_t
    int32_t
    uint8_t

ctypedef fused scores_t:
    double
    float

ctypedef fused values_t:     # the helpers, for either of the above
    double
    float
    int64_t
    int32_t
    uint8_t


ctypedef struct entry_t:
    gain_t value
    index_t index


ctypedef struct scratch_t:
    entry_t* entries        # the row as (value, column) pairs, for the full sort
    entry_t* buffer         # radix-sort buffer
    gain_t* top             # the k largest values, descending
    gain_t* block_max       # the largest value of each full block of BLOCK columns
    gain_t* group_value     # distinct values reaching the top k, descending
    gain_t* group_sum       # per group: sum of gains (or the common gain)
    index_t* group_count    # per group: number of members in the whole row
    gain_t* terms           # per group: mean gain x discount sum


cdef int _scratch_alloc(scratch_t* s, Py_ssize_t n) noexcept nogil:
    cdef size_t m = <size_t>(n if n > 0 else 1)
    s.entries = <entry_t*>malloc(m * sizeof(entry_t))
    s.buffer = <entry_t*>malloc(m * sizeof(entry_t))
    s.top = <gain_t*>malloc(m * sizeof(gain_t))
    s.block_max = <gain_t*>malloc((m // BLOCK + 1) * sizeof(gain_t))
    s.group_value = <gain_t*>malloc(m * sizeof(gain_t))
    s.group_sum = <gain_t*>malloc(m * sizeof(gain_t))
    s.group_count = <index_t*>malloc(m * sizeof(index_t))
    s.terms = <gain_t*>malloc(m * sizeof(gain_t))
    if (s.entries == NULL or s.buffer == NULL or s.top == NULL or s.block_max == NULL
            or s.group_value == NULL or s.group_sum == NULL or s.group_count == NULL
            or s.terms == NULL):
        _scratch_free(s)
        return -1
    return 0


cdef void _scratch_free(scratch_t* s) noexcept nogil:
    free(s.entries)
    free(s.buffer)
    free(s.top)
    free(s.block_max)
    free(s.group_value)
    free(s.group_sum)
    free(s.group_count)
    free(s.terms)
    s.entries = NULL
    s.buffer = NULL
    s.top = NULL
    s.block_max = NULL
    s.group_value = NULL
    s.group_sum = NULL
    s.group_count = NULL
    s.terms = NULL


# ---------------------------------------------------------------- checks
# All with the GIL held, before any nogil loop.

cdef int _check_shapes(object y_true, object y_score) except -1:
    if y_true.shape[0] != y_score.shape[0] or y_true.shape[1] != y_score.shape[1]:
        raise ValueError(
            f"y_true has shape ({y_true.shape[0]}, {y_true.shape[1]}) but y_score has "
            f"shape ({y_score.shape[0]}, {y_score.shape[1]})")
    return 0


cdef int _check_labels(Py_ssize_t n_labels) except -1:
    if n_labels < 1:
        raise ValueError("the matrices need at least one column (label)")
    return 0


cdef int _check_discount(const gain_t[::1] discount, Py_ssize_t n_labels) except -1:
    if discount.shape[0] < n_labels:
        raise ValueError(
            f"the discount holds {discount.shape[0]} values, fewer than the "
            f"{n_labels} labels")
    return 0


cdef Py_ssize_t _check_k(Py_ssize_t k, Py_ssize_t n_labels) except -1:
    """k >= 1; returns min(k, n_labels)."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return k if k < n_labels else n_labels


def _new_vector(Py_ssize_t rows, out):
    if out is None:
        return np.empty(rows, dtype=np.float64)
    if out.ndim != 1 or out.shape[0] != rows:
        raise ValueError(f"out has shape {tuple(out.shape)}, expected ({rows},)")
    return out


# ---------------------------------------------------------------- top k

cdef inline gain_t _block_max(const values_t* v) noexcept nogil:
    """The largest of v[0:BLOCK], as float64 (written so that compilers vectorise it)."""
    cdef values_t m0 = v[0] if v[0] > v[1] else v[1]
    cdef values_t m1 = v[2] if v[2] > v[3] else v[3]
    cdef values_t m2 = v[4] if v[4] > v[5] else v[5]
    cdef values_t m3 = v[6] if v[6] > v[7] else v[7]
    m0 = m0 if m0 > m1 else m1
    m2 = m2 if m2 > m3 else m3
    return <gain_t>(m0 if m0 > m2 else m2)


cdef inline void _sift_down(gain_t* heap, Py_ssize_t size, gain_t x) noexcept nogil:
    """Put x at the root of the min-heap heap[0:size] and restore the heap."""
    cdef Py_ssize_t j = 0, c
    while True:
        c = 2 * j + 1
        if c >= size:
            break
        if c + 1 < size and heap[c + 1] < heap[c]:
            c += 1
        if heap[c] >= x:
            break
        heap[j] = heap[c]
        j = c
    heap[j] = x


cdef inline Py_ssize_t _heap_push(gain_t* heap, Py_ssize_t size, Py_ssize_t k,
                                  gain_t x) noexcept nogil:
    """Offer x to the min-heap heap[0:size] of at most k values; returns the new size."""
    cdef Py_ssize_t j, p
    if size == k:
        if x > heap[0]:
            _sift_down(heap, k, x)
        return k
    j = size
    while j > 0:
        p = (j - 1) >> 1
        if heap[p] <= x:
            break
        heap[j] = heap[p]
        j = p
    heap[j] = x
    return size + 1


cdef void _heap_top(const values_t* row, Py_ssize_t n, Py_ssize_t k, scratch_t* s) noexcept nogil:
    """s.top[0:k] = the k largest values of row[0:n] (as a multiset), descending. 1 <= k <= n.

    Also fills s.block_max for the row's full blocks of BLOCK columns. The k
    largest block maxima are k values of the row, so the k-th largest value
    is at least the k-th largest block maximum, t0: only blocks whose maximum
    reaches t0 (and the last, partial block) need to be looked into, and of
    those only the ones whose maximum beats the heap's smallest value.
    """
    cdef Py_ssize_t n_blocks = n // BLOCK
    cdef Py_ssize_t b, i, j, size = 0
    cdef gain_t x, t0
    cdef gain_t* top = s.top
    cdef gain_t* bmax = s.block_max
    for b in range(n_blocks):
        bmax[b] = _block_max(row + b * BLOCK)
    if n_blocks >= k:
        for b in range(n_blocks):
            size = _heap_push(top, size, k, bmax[b])
        t0 = top[0]
        size = 0
        for b in range(n_blocks):
            # Skip blocks below t0, and blocks that cannot beat the full heap.
            if bmax[b] < t0 or (size == k and bmax[b] <= top[0]):
                continue
            for j in range(b * BLOCK, b * BLOCK + BLOCK):
                x = <gain_t>row[j]
                if x >= t0:
                    size = _heap_push(top, size, k, x)
        for j in range(n_blocks * BLOCK, n):
            size = _heap_push(top, size, k, <gain_t>row[j])
    else:
        for j in range(n):
            size = _heap_push(top, size, k, <gain_t>row[j])
    for i in range(1, k):                   # insertion sort, descending (k is small)
        x = top[i]
        j = i
        while j > 0 and top[j - 1] < x:
            top[j] = top[j - 1]
            j -= 1
        top[j] = x


cdef inline uint64_t _descending_key(gain_t value) noexcept nogil:
    """An unsigned key whose ascending order is the descending order of the value.

    IEEE-754 bits, made to sort as unsigned integers (flip every bit of a
    negative value, the sign bit of a positive one), then inverted; -0.0 is
    read as 0.0 so that the two zeros, which tie, get one key.
    """
    cdef uint64_t bits
    if value == 0.0:
        value = 0.0
    memcpy(&bits, &value, sizeof(bits))
    if bits >> 63:
        bits = ~bits
    else:
        bits = bits | (<uint64_t>1 << 63)
    return ~bits


cdef void _sort_entries(entry_t* a, entry_t* buffer, Py_ssize_t n) noexcept nogil:
    """Stable sort of a[0:n] by value, descending: equal values keep column order.

    A least-significant-digit radix sort on _descending_key, one byte per
    pass (stable, and free of the unpredictable branches of a comparison
    sort); a pass is skipped where every key has the same byte.
    """
    cdef index_t counts[8 * 256]
    cdef index_t* count
    cdef index_t total, c
    cdef uint64_t key
    cdef Py_ssize_t i, b, v
    cdef int shift
    cdef entry_t* src = a
    cdef entry_t* dst = buffer
    cdef entry_t* swap
    if n < 2:
        return
    memset(counts, 0, sizeof(counts))
    for i in range(n):
        key = _descending_key(a[i].value)
        for b in range(8):
            counts[b * 256 + <Py_ssize_t>((key >> (8 * b)) & 255)] += 1
    for b in range(8):
        shift = <int>(8 * b)
        count = &counts[b * 256]
        if count[<Py_ssize_t>((_descending_key(src[0].value) >> shift) & 255)] == n:
            continue                        # one byte value everywhere
        total = 0
        for v in range(256):                # bucket starts
            c = count[v]
            count[v] = total
            total += c
        for i in range(n):
            v = <Py_ssize_t>((_descending_key(src[i].value) >> shift) & 255)
            dst[count[v]] = src[i]
            count[v] += 1
        swap = src
        src = dst
        dst = swap
    if src != a:
        memcpy(a, src, <size_t>n * sizeof(entry_t))


cdef void _sorted_row(const values_t* row, Py_ssize_t n, scratch_t* s) noexcept nogil:
    """s.entries[0:n] = the row's (value, column) pairs by value descending, then column."""
    cdef Py_ssize_t j
    for j in range(n):
        s.entries[j].value = <gain_t>row[j]
        s.entries[j].index = j
    _sort_entries(s.entries, s.buffer, n)


cdef inline bint _use_heap(Py_ssize_t k, Py_ssize_t n) noexcept nogil:
    return k <= SELECT_MAX and k < n


cdef Py_ssize_t _distinct_desc(const gain_t* values, Py_ssize_t k, gain_t* out) noexcept nogil:
    """out = the distinct values of the descending values[0:k]; returns their number."""
    cdef Py_ssize_t i, m = 1
    out[0] = values[0]
    for i in range(1, k):
        if values[i] != out[m - 1]:
            out[m] = values[i]
            m += 1
    return m


cdef inline Py_ssize_t _find_desc(const gain_t* values, Py_ssize_t m, gain_t x) noexcept nogil:
    """Index of x in the strictly descending values[0:m] (x must be there)."""
    cdef Py_ssize_t lo = 0, hi = m - 1, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] > x:
            lo = mid + 1
        else:
            hi = mid
    return lo


# ---------------------------------------------------------------- numpy's sum

cdef gain_t _numpy_sum(const gain_t* a, Py_ssize_t given, Py_ssize_t n) noexcept nogil:
    """``np.sum`` of n float64 values of which a[0:given] are given and the rest are 0.

    numpy adds a contiguous float64 array pairwise: fewer than 8 values in a
    plain loop; up to 128 in 8 interleaved partial sums combined as
    ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the n % 8 leftovers; more by
    splitting at n/2 rounded down to a multiple of 8. Trailing zeros change
    the result only through this structure, so n (the number of tie groups)
    matters. If n >= given + 8 and given <= 64, every structure numpy can
    choose adds the given values in the 8 partial sums of one block, which
    is what n = 128 computes: the tie-averaged kernel relies on this when it
    has only counted the groups below the cut-off up to 8.
    """
    cdef gain_t r[8]
    cdef gain_t res
    cdef Py_ssize_t i, j, n8, n2, stop
    if given <= 0:
        return 0.0
    if n < 8:
        res = 0.0
        stop = n if n < given else given
        for i in range(stop):
            res = res + a[i]
        return res
    if n <= 128:
        n8 = n - n % 8
        for j in range(8):
            r[j] = a[j] if j < given else 0.0
        i = 8
        while i < n8 and i < given:
            for j in range(8):
                if i + j < given:
                    r[j] = r[j] + a[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        stop = n if n < given else given
        for i in range(n8, stop):
            res = res + a[i]
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _numpy_sum(a, given, n2) + _numpy_sum(a + n2, given - n2, n - n2)


# ---------------------------------------------------------------- tie groups

cdef Py_ssize_t _top_groups(const scores_t* scores, Py_ssize_t n, Py_ssize_t k,
                            scratch_t* s) noexcept nogil:
    """Heap path: s.group_value = the distinct scores among the row's top k, descending.

    Returns their number; the smallest is the k-th largest score of the row.
    Leaves the row's block maxima in s.block_max for _skip_block.
    """
    _heap_top(scores, n, k, s)
    return _distinct_desc(s.top, k, s.group_value)


cdef inline bint _skip_block(const gain_t* bmax, Py_ssize_t j, Py_ssize_t n,
                             gain_t t) noexcept nogil:
    """True if column j starts a full block whose values are all < t."""
    return j % BLOCK == 0 and j + BLOCK <= n and bmax[j // BLOCK] < t


# ---------------------------------------------------------------- tie-averaged DCG

cdef gain_t _tie_averaged_row(const gains_t* gains, const scores_t* scores, Py_ssize_t n,
                              Py_ssize_t k, const gain_t* cumsum,
                              scratch_t* s) noexcept nogil:
    """scikit-learn's _tie_averaged_dcg for one row; discounts zero beyond rank k <= n."""
    cdef Py_ssize_t j, g, i, n_top, n_groups, start, last, prev
    cdef Py_ssize_t n_rest = 0, t_count
    cdef gain_t x, t, total, dsum, t_sum
    cdef gain_t rest[8]
    if _use_heap(k, n):
        n_top = _top_groups(scores, n, k, s)
        t = s.group_value[n_top - 1]
        for g in range(n_top):
            s.group_sum[g] = 0.0
            s.group_count[g] = 0
        j = 0
        # numpy's sum of the group terms depends on the number of groups,
        # including the zero terms of those below the cut-off, but only up to
        # 8 of them, and not at all for fewer than 4 terms (see _numpy_sum).
        if n_top >= 4:
            while j < n and n_rest < 8:
                x = <gain_t>scores[j]
                if x >= t:
                    g = n_top - 1 if x == t else _find_desc(s.group_value, n_top, x)
                    s.group_sum[g] = s.group_sum[g] + <gain_t>gains[j]
                    s.group_count[g] += 1
                else:
                    i = 0
                    while i < n_rest and rest[i] != x:
                        i += 1
                    if i == n_rest:
                        rest[n_rest] = x
                        n_rest += 1
                j += 1
        # The group at t (often large under ties) is summed in registers.
        t_sum = s.group_sum[n_top - 1]
        t_count = s.group_count[n_top - 1]
        while j < n:                        # column order, as np.add.at adds
            if _skip_block(s.block_max, j, n, t):
                j += BLOCK
                continue
            x = <gain_t>scores[j]
            if x == t:
                t_sum = t_sum + <gain_t>gains[j]
                t_count += 1
            elif x > t:
                g = _find_desc(s.group_value, n_top, x)
                s.group_sum[g] = s.group_sum[g] + <gain_t>gains[j]
                s.group_count[g] += 1
            j += 1
        s.group_sum[n_top - 1] = t_sum
        s.group_count[n_top - 1] = t_count
        n_groups = n_top + n_rest if n_rest < 8 else 128
    else:
        _sorted_row(scores, n, s)
        n_top = 0
        n_groups = 0
        j = 0
        while j < n:
            x = s.entries[j].value
            start = j
            if start < k:
                total = 0.0
                while j < n and s.entries[j].value == x:
                    total = total + <gain_t>gains[s.entries[j].index]
                    j += 1
                s.group_sum[n_top] = total
                s.group_count[n_top] = j - start
                n_top += 1
            else:
                while j < n and s.entries[j].value == x:
                    j += 1
            n_groups += 1
    prev = -1
    for g in range(n_top):
        last = prev + s.group_count[g]
        dsum = cumsum[last] if prev < 0 else cumsum[last] - cumsum[prev]
        s.terms[g] = (s.group_sum[g] / <gain_t>s.group_count[g]) * dsum
        prev = last
    return _numpy_sum(s.terms, n_top, n_groups)


def tie_averaged_dcg(const gains_t[:, ::1] y_true, const scores_t[:, ::1] y_score,
                     const gain_t[::1] discount, Py_ssize_t k, out=None):
    """Per-row DCG@k with tied scores averaged (scikit-learn's default). Shape (n_samples,).

    Each group of equal ``y_score`` values in a row contributes the mean of its
    gains times the sum of its ranks' discounts; ``discount`` is zero beyond
    rank ``k`` (``k`` >= n_labels means no cut-off).
    """
    _check_shapes(y_true, y_score)
    cdef Py_ssize_t n_rows = y_true.shape[0], n = y_true.shape[1]
    _check_labels(n)
    _check_discount(discount, n)
    cdef Py_ssize_t kk = _check_k(k, n)
    result = _new_vector(n_rows, out)
    cdef gain_t[::1] view = result
    cumsum_array = np.empty(n, dtype=np.float64)
    cdef gain_t[::1] cumsum = cumsum_array
    cdef scratch_t s
    cdef Py_ssize_t r, i
    cdef int status
    with nogil:
        cumsum[0] = discount[0]             # np.cumsum of discount with [k:] = 0
        for i in range(1, n):
            cumsum[i] = cumsum[i - 1] + (discount[i] if i < kk else 0.0)
        status = _scratch_alloc(&s, n)
        if status == 0:
            for r in range(n_rows):
                view[r] = _tie_averaged_row(&y_true[r, 0], &y_score[r, 0], n, kk,
                                            &cumsum[0], &s)
            _scratch_free(&s)
    if status != 0:
        raise MemoryError("no memory for the per-row scratch buffers")
    return result


# ---------------------------------------------------------------- ranked DCG

cdef gain_t _ranked_row(const gains_t* gains, const scores_t* scores, Py_ssize_t n,
                        Py_ssize_t k, const gain_t* discount, scratch_t* s,
                        bint* ambiguous) noexcept nogil:
    """DCG@k of the gains in descending score order, if the tie order cannot change it."""
    cdef Py_ssize_t j, g, n_top, rank, c
    cdef gain_t x, t, first, gain
    cdef gain_t total = 0.0
    ambiguous[0] = False
    if _use_heap(k, n):
        n_top = _top_groups(scores, n, k, s)
        t = s.group_value[n_top - 1]
        for g in range(n_top):
            s.group_count[g] = 0
        j = 0
        while j < n:
            if _skip_block(s.block_max, j, n, t):
                j += BLOCK
                continue
            x = <gain_t>scores[j]
            if x >= t:
                gain = <gain_t>gains[j]
                g = n_top - 1 if x == t else _find_desc(s.group_value, n_top, x)
                if s.group_count[g] == 0:
                    s.group_sum[g] = gain
                elif gain != s.group_sum[g]:
                    ambiguous[0] = True
                    return 0.0
                s.group_count[g] += 1
            j += 1
        rank = 0
        for g in range(n_top):
            for c in range(s.group_count[g]):
                if rank >= k:
                    break
                total = total + discount[rank] * s.group_sum[g]
                rank += 1
        return total
    _sorted_row(scores, n, s)
    j = 0
    while j < k:                            # every tie group reaching the top k
        x = s.entries[j].value
        first = <gain_t>gains[s.entries[j].index]
        while j < n and s.entries[j].value == x:
            if <gain_t>gains[s.entries[j].index] != first:
                ambiguous[0] = True
                return 0.0
            j += 1
    for rank in range(k):
        total = total + discount[rank] * <gain_t>gains[s.entries[rank].index]
    return total


def ranked_dcg(const gains_t[:, ::1] y_true, const scores_t[:, ::1] y_score,
               const gain_t[::1] discount, Py_ssize_t k, out=None):
    """Per-row DCG@k of the gains in descending score order (``ignore_ties``).

    Returns ``(values, rows)``: ``rows`` (int64) lists the rows where a tie
    group reaching the top ``k`` mixes different gains, so that the value
    depends on how ties are broken; their ``values`` entries are left at 0
    for the caller to fill (``ordered_dcg``).
    """
    _check_shapes(y_true, y_score)
    cdef Py_ssize_t n_rows = y_true.shape[0], n = y_true.shape[1]
    _check_labels(n)
    _check_discount(discount, n)
    cdef Py_ssize_t kk = _check_k(k, n)
    result = _new_vector(n_rows, out)
    cdef gain_t[::1] view = result
    flags_array = np.zeros(n_rows, dtype=np.uint8)
    cdef unsigned char[::1] flags = flags_array
    cdef scratch_t s
    cdef Py_ssize_t r
    cdef bint ambiguous
    cdef int status
    with nogil:
        status = _scratch_alloc(&s, n)
        if status == 0:
            for r in range(n_rows):
                view[r] = _ranked_row(&y_true[r, 0], &y_score[r, 0], n, kk,
                                      &discount[0], &s, &ambiguous)
                flags[r] = ambiguous
            _scratch_free(&s)
    if status != 0:
        raise MemoryError("no memory for the per-row scratch buffers")
    return result, np.flatnonzero(flags_array).astype(np.int64)


def ordered_dcg(const gains_t[:, ::1] y_true, const index_t[::1] rows,
                const index_t[:, ::1] order, const gain_t[::1] discount, out):
    """out[rows[i]] = sum over ranks r < order.shape[1] of discount[r] * y_true[rows[i], order[i, r]].

    ``order[i]`` lists row ``rows[i]``'s columns in rank order (at least the
    top k of them: pass ``order[:, :k]``). Returns ``out``.
    """
    cdef Py_ssize_t n_rows = y_true.shape[0], n = y_true.shape[1]
    cdef Py_ssize_t m = rows.shape[0], depth = order.shape[1]
    cdef Py_ssize_t i, r
    if order.shape[0] != m:
        raise ValueError(f"order has {order.shape[0]} rows but {m} row indices were given")
    if depth > n:
        raise ValueError(f"order has {depth} ranks per row, more than the {n} labels")
    _check_discount(discount, depth)
    if out.ndim != 1 or out.shape[0] != n_rows:
        raise ValueError(f"out has shape {tuple(out.shape)}, expected ({n_rows},)")
    cdef gain_t[::1] view = out
    for i in range(m):
        if rows[i] < 0 or rows[i] >= n_rows:
            raise ValueError(f"rows[{i}] = {rows[i]} is outside [0, {n_rows})")
        for r in range(depth):
            if order[i, r] < 0 or order[i, r] >= n:
                raise ValueError(f"order[{i}, {r}] = {order[i, r]} is outside [0, {n})")
    cdef gain_t total
    with nogil:
        for i in range(m):
            total = 0.0
            for r in range(depth):
                total = total + discount[r] * <gain_t>y_true[rows[i], order[i, r]]
            view[rows[i]] = total
    return out


# ---------------------------------------------------------------- ideal DCG

cdef gain_t _ideal_row(const gains_t* gains, Py_ssize_t n, Py_ssize_t k,
                       const gain_t* discount, scratch_t* s) noexcept nogil:
    cdef Py_ssize_t rank
    cdef gain_t total = 0.0
    if _use_heap(k, n):
        _heap_top(gains, n, k, s)
        for rank in range(k):
            total = total + discount[rank] * s.top[rank]
        return total
    _sorted_row(gains, n, s)
    for rank in range(k):
        total = total + discount[rank] * s.entries[rank].value
    return total


def ideal_dcg(const gains_t[:, ::1] y_true, const gain_t[::1] discount, Py_ssize_t k,
              out=None):
    """Per-row ideal DCG@k: the k largest gains, descending, discounted. Shape (n_samples,)."""
    cdef Py_ssize_t n_rows = y_true.shape[0], n = y_true.shape[1]
    _check_labels(n)
    _check_discount(discount, n)
    cdef Py_ssize_t kk = _check_k(k, n)
    result = _new_vector(n_rows, out)
    cdef gain_t[::1] view = result
    cdef scratch_t s
    cdef Py_ssize_t r
    cdef int status
    with nogil:
        status = _scratch_alloc(&s, n)
        if status == 0:
            for r in range(n_rows):
                view[r] = _ideal_row(&y_true[r, 0], n, kk, &discount[0], &s)
            _scratch_free(&s)
    if status != 0:
        raise MemoryError("no memory for the per-row scratch buffers")
    return result
