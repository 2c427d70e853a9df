"""Kernels of the C/W/L measures of cwl_eval (ireval/cwl, as ir_measures calls it).

In the C/W/L framework a user model gives, per rank i (0-based here), the probability
c_i of going on to rank i + 1; the weight of rank i is
W_i = prod_{j < i} c_j / sum_{r < n} prod_{j < r} c_j over n = 1000 ranks (cwl_eval's
``max_n``: the ranking is cut or padded to exactly n ranks), and the measure is the
expected utility sum_i W_i g_i. Each ``c_i`` below is cwl_eval's expression, evaluated in
its order, and W is built as cwl_eval builds it (``CWLMetric.w_vector``): the products by
sequential multiplication (np.cumprod), their sum by numpy's pairwise summation
(np.sum), w_0 = 1 / sum and w_i = prod_i * w_0; so every W_i is bit-identical.

The one operation whose order cannot be followed is the final sum_i W_i g_i: cwl_eval
takes it with np.dot, that is the BLAS ``ddot`` numpy links (OpenBLAS picks a vectorised
kernel for the CPU at run time, Accelerate on macOS), whose order of additions and use
of fused multiply-adds depend on the machine. Here it is the exact sum of the exact
products rounded once (Shewchuk's algorithm, as math.fsum), which does not depend on
any order: cwl_eval's value is within a few units in the last place of it, and equal to
it in most topics.

Every kernel is one C loop over all topics (flat gains + ``offsets``, topic ``t`` owns
rows ``offsets[t]:offsets[t + 1]`` in rank order) with the GIL released; the ``def``
wrappers check every length and value first.
"""
from libc.math cimport fabs, fma, isfinite, log, pow
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc

from cgcore._checks cimport check_offsets
from cgcore._typedefs cimport gain_t, index_t

import numpy as np

# The user models (cwl_eval's class in cwl/ruler/measures/).
cdef enum:
    MODEL_RBP_C = 0      # cwl_rbp.py RBPCWLMetric(theta): c_i = p
    MODEL_INSQ_C = 1     # cwl_insq.py INSQCWLMetric(T)
    MODEL_INST_C = 2     # cwl_inst.py INSTCWLMetric(T)
    MODEL_BPM_C = 3      # cwl_bpm.py BPMCWLMetric(T, K), unit costs
    MODEL_SDCG_C = 4     # cwl_dcg.py NDCGCWLMetric(k)
    MODEL_NERR8_C = 5    # cwl_nerr.py NERReq8CWLMetric(k)
    MODEL_NERR9_C = 6    # cwl_nerr.py NERReq9CWLMetric(k)
    MODEL_NERR10_C = 7   # cwl_nerr.py NERReq10CWLMetric(phi)
    MODEL_NERR11_C = 8   # cwl_nerr.py NERReq11CWLMetric(T)
    N_MODELS = 9

MODEL_RBP = MODEL_RBP_C
MODEL_INSQ = MODEL_INSQ_C
MODEL_INST = MODEL_INST_C
MODEL_BPM = MODEL_BPM_C
MODEL_SDCG = MODEL_SDCG_C
MODEL_NERR8 = MODEL_NERR8_C
MODEL_NERR9 = MODEL_NERR9_C
MODEL_NERR10 = MODEL_NERR10_C
MODEL_NERR11 = MODEL_NERR11_C

#: cwl_eval's max_n, which ir_measures passes: every ranking is cut or padded to this.
DEPTH = 1000

# Python's float ** 2.0 (cwl_eval's "** 2.0") calls the C library's pow(); a compiler
# may turn pow(x, 2.0) with a constant 2.0 into x * x, which rounds differently in about
# one case in a thousand. The exponent is a variable so that pow() itself is called.
cdef double _SQUARE = 2.0
# math.log(x, 2.0) is log(x) / log(2.0), both from the C library.
cdef double _BASE = 2.0


cdef inline bint _gain_dependent(int model) noexcept nogil:
    """Whether the model's c_i depend on the gains (else W is the same for every topic)."""
    return not (model == MODEL_RBP_C or model == MODEL_INSQ_C or model == MODEL_SDCG_C)


cdef inline gain_t _continuation(int model, Py_ssize_t i, gain_t g, gain_t total,
                                 gain_t parameter, int64_t k) noexcept nogil:
    """c_i: the probability of going on from rank i (0-based) to rank i + 1, given the
    gain g there and the gain ``total`` of ranks 0 .. i (np.cumsum), in cwl_eval's
    order of operations."""
    cdef gain_t rank = <gain_t>(i + 1)
    cdef gain_t t_i
    if model == MODEL_RBP_C:
        return parameter
    if model == MODEL_INSQ_C:        # (((i+1.0)+(2.0*T)-1.0) / ((i+1.0)+(2.0*T)))**2.0
        return pow((rank + 2.0 * parameter - 1.0) / (rank + 2.0 * parameter), _SQUARE)
    if model == MODEL_INST_C:        # Ti = T - cumsum; (((i+1.0)+T+Ti-1.0) / ((i+1.0)+T+Ti))**2.0
        t_i = parameter - total
        return pow((rank + parameter + t_i - 1.0) / (rank + parameter + t_i), _SQUARE)
    if model == MODEL_BPM_C:         # gain so far < T and cost so far (i + 1) < K
        return 1.0 if total < parameter and i + 1 < k else 0.0
    if model == MODEL_SDCG_C:        # for j = i + 1 < k: log(j+1, 2) / log(j+2, 2)
        if i + 1 < k:
            return (log(rank + 1.0) / log(_BASE)) / (log(rank + 2.0) / log(_BASE))
        return 0.0
    if model == MODEL_NERR8_C:       # 1 - g for i < k - 1
        return 1.0 - g if i < k - 1 else 0.0
    if model == MODEL_NERR9_C:       # (1.0*rank/(rank+1.0)) * (1.0-g) for i < k - 1
        return (rank / (rank + 1.0)) * (1.0 - g) if i < k - 1 else 0.0
    if model == MODEL_NERR10_C:      # phi * (1 - g)
        return parameter * (1.0 - g)
    # MODEL_NERR11_C: (((rank + (2.0*T)-1.0) / (rank + (2.0*T)))**2.0) * (1.0-g)
    return pow((rank + 2.0 * parameter - 1.0) / (rank + 2.0 * parameter), _SQUARE) * (1.0 - g)


cdef gain_t _pairwise_sum(const gain_t* a, Py_ssize_t n) noexcept nogil:
    """np.sum of a contiguous float64 array: numpy's pairwise summation
    (``pairwise_sum`` in numpy/_core/src/umath/loops_utils.h.src, blocks of 128 summed
    with 8 accumulators), in its order."""
    cdef Py_ssize_t i, half
    cdef gain_t res, r0, r1, r2, r3, r4, r5, r6, r7
    if n < 8:
        res = 0.0
        for i in range(n):
            res = res + a[i]
        return res
    if n <= 128:
        r0 = a[0]; r1 = a[1]; r2 = a[2]; r3 = a[3]
        r4 = a[4]; r5 = a[5]; r6 = a[6]; r7 = a[7]
        i = 8
        while i < n - (n % 8):
            r0 = r0 + a[i]; r1 = r1 + a[i + 1]; r2 = r2 + a[i + 2]; r3 = r3 + a[i + 3]
            r4 = r4 + a[i + 4]; r5 = r5 + a[i + 5]; r6 = r6 + a[i + 6]; r7 = r7 + a[i + 7]
            i = i + 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res = res + a[i]
            i = i + 1
        return res
    half = n // 2
    half = half - half % 8
    return _pairwise_sum(a, half) + _pairwise_sum(a + half, n - half)


cdef inline Py_ssize_t _add_exact(gain_t* partials, Py_ssize_t n, gain_t x) noexcept nogil:
    """Add x to the non-overlapping partials (Shewchuk; CPython's math.fsum loop);
    returns their new number (at most one more)."""
    cdef Py_ssize_t i = 0, j
    cdef gain_t y, t, hi, lo
    for j in range(n):
        y = partials[j]
        if fabs(x) < fabs(y):
            t = x
            x = y
            y = t
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            partials[i] = lo
            i = i + 1
        x = hi
    if x != 0.0:
        partials[i] = x
        i = i + 1
    return i


cdef gain_t _round_partials(const gain_t* partials, Py_ssize_t n) noexcept nogil:
    """The sum of the partials rounded once, half to even (CPython's math.fsum)."""
    cdef gain_t hi = 0.0, lo = 0.0, x, y, yr
    if n > 0:
        n = n - 1
        hi = partials[n]
        while n > 0:
            x = hi
            n = n - 1
            y = partials[n]
            hi = x + y
            yr = hi - x
            lo = y - yr
            if lo != 0.0:
                break
        if n > 0 and ((lo < 0.0 and partials[n - 1] < 0.0) or
                      (lo > 0.0 and partials[n - 1] > 0.0)):
            y = lo * 2.0
            x = hi + y
            yr = x - hi
            if y == yr:
                hi = x
    return hi


cdef inline Py_ssize_t _add_product(gain_t* partials, Py_ssize_t n, gain_t a,
                                    gain_t b) noexcept nogil:
    """Add the exact product a * b (its rounded value and the rounding error, by fma)."""
    cdef gain_t product = a * b
    n = _add_exact(partials, n, product)
    return _add_exact(partials, n, fma(a, b, -product))


cdef void _weights(int model, const gain_t* gains, Py_ssize_t n, gain_t parameter,
                   int64_t k, gain_t* products) noexcept nogil:
    """prod_{j < i} c_j for i < n (cwl_eval's cvec_prod: 1, then np.cumprod of c_0 ..
    c_{n-2}); ``gains``: the n gains of the ranks (NULL for models that ignore them)."""
    cdef Py_ssize_t i
    cdef gain_t total = 0.0, g = 0.0
    products[0] = 1.0
    for i in range(n - 1):
        if gains != NULL:
            g = gains[i]
            total = total + g
        products[i + 1] = products[i] * _continuation(model, i, g, total, parameter, k)


cdef gain_t _expected_utility(const gain_t* gains, const gain_t* products, gain_t first,
                              Py_ssize_t n, gain_t* partials) noexcept nogil:
    """sum_i W_i g_i, W_0 = first = 1 / sum(products), W_i = products[i] * first, as the
    exact sum of exact products rounded once."""
    cdef Py_ssize_t i, count = 0
    cdef gain_t weight
    for i in range(n):
        if gains[i] != 0.0:
            weight = first if i == 0 else products[i] * first
            count = _add_product(partials, count, weight, gains[i])
    return _round_partials(partials, count)


def expected_utility(const gain_t[::1] gains, const index_t[::1] offsets, int model,
                     double parameter, int64_t cutoff, int64_t limit, double pad,
                     int64_t depth=DEPTH):
    """Per topic, cwl_eval's expected utility (``CWLMetric.measure``) of a user model.

    Topic t's ranking is its first min(N_t, ``limit``) rows, cut or padded to ``depth``
    ranks with gain ``pad`` (0: cwl_eval's worst case, unjudged and missing documents
    gain nothing; 1: its best case, for residuals). Gains must lie in [0, 1].
    ``parameter``: p (RBP, NERR10) or T (INSQ, INST, BPM, NERR11); ``cutoff``: k (SDCG,
    NERR8, NERR9) or K (BPM). Returns float64 values, one per topic.
    """
    cdef index_t n_topics = check_offsets(offsets, gains.shape[0], "offsets")
    if not 0 <= model < N_MODELS:
        raise ValueError(f"unknown user model {model}")
    if not isfinite(parameter) or parameter < 0:
        raise ValueError(f"parameter must be a finite number >= 0, got {parameter}")
    if (model == MODEL_RBP_C or model == MODEL_NERR10_C) and parameter > 1:
        raise ValueError(f"p must be in [0, 1], got {parameter}")
    if (model == MODEL_INSQ_C or model == MODEL_INST_C or model == MODEL_NERR11_C) \
            and not parameter > 0:
        raise ValueError(f"T must be > 0, got {parameter}")
    if cutoff < 0 or limit < 0:
        raise ValueError(f"cutoff ({cutoff}) and limit ({limit}) must be >= 0")
    if not 1 <= depth <= 10_000_000:
        raise ValueError(f"depth must be in [1, 1e7], got {depth}")
    if not 0 <= pad <= 1:
        raise ValueError(f"pad must be in [0, 1], got {pad}")
    cdef Py_ssize_t i
    for i in range(gains.shape[0]):
        if not 0 <= gains[i] <= 1:
            raise ValueError(f"gains[{i}] = {gains[i]} is outside [0, 1]")
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef Py_ssize_t n = depth, t, start, length
    cdef bint dependent = _gain_dependent(model)
    cdef gain_t* ranked = <gain_t*>malloc(n * sizeof(gain_t))
    cdef gain_t* products = <gain_t*>malloc(n * sizeof(gain_t))
    cdef gain_t* partials = <gain_t*>malloc((2 * n + 2) * sizeof(gain_t))
    if ranked == NULL or products == NULL or partials == NULL:
        free(ranked)
        free(products)
        free(partials)
        raise MemoryError("no memory for the C/W/L vectors")
    cdef gain_t first = 0.0
    with nogil:
        if not dependent:           # the same W for every topic
            _weights(model, NULL, n, parameter, cutoff, products)
            first = 1.0 / _pairwise_sum(products, n)
        for t in range(n_topics):
            start = offsets[t]
            length = offsets[t + 1] - start
            if length > limit:
                length = limit
            if length > n:
                length = n
            for i in range(length):
                ranked[i] = gains[start + i]
            for i in range(length, n):
                ranked[i] = pad
            if dependent:
                _weights(model, ranked, n, parameter, cutoff, products)
                first = 1.0 / _pairwise_sum(products, n)
            out[t] = _expected_utility(ranked, products, first, n, partials)
    free(ranked)
    free(products)
    free(partials)
    return result


def geometric_utility(const gain_t[::1] gains, const index_t[::1] offsets, double p,
                      int64_t limit):
    """Per topic, sum over the first min(N_t, ``limit``) rows of ((1 - p) * p^i) * g_i
    (i 0-based; p^i by the C library's pow): RBP as trectools' get_rbp computes it
    (the weight, then the weight times the gain, summed), the sum taken exactly and
    rounded once (trectools sums with pandas' compensated sum)."""
    cdef index_t n_topics = check_offsets(offsets, gains.shape[0], "offsets")
    if not (isfinite(p) and 0 <= p <= 1):
        raise ValueError(f"p must be in [0, 1], got {p}")
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    cdef Py_ssize_t i, t, start, length, count, longest = 0
    for i in range(gains.shape[0]):
        if not isfinite(gains[i]):
            raise ValueError(f"gains[{i}] = {gains[i]} is not finite")
    for t in range(n_topics):
        if offsets[t + 1] - offsets[t] > longest:
            longest = offsets[t + 1] - offsets[t]
    result = np.zeros(n_topics, dtype=np.float64)
    cdef gain_t[::1] out = result
    cdef gain_t* partials = <gain_t*>malloc((longest + 2) * sizeof(gain_t))
    if partials == NULL:
        raise MemoryError("no memory for the partial sums")
    with nogil:
        for t in range(n_topics):
            start = offsets[t]
            length = offsets[t + 1] - start
            if length > limit:
                length = limit
            count = 0
            for i in range(length):
                if gains[start + i] != 0.0:
                    count = _add_exact(partials, count,
                                       ((1.0 - p) * pow(p, <gain_t>i)) * gains[start + i])
            out[t] = _round_partials(partials, count)
    free(partials)
    return result
