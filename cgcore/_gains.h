/* Counting whole gains for the ideal ranking (cgcore/_vectors.pyx).
 *
 * cg_count_whole_gains adds each value's bucket to counts[0 .. limit]: values <= 0 and
 * NaN to bucket 0, whole values 1 .. limit - 1 to their own bucket, values >= limit to
 * bucket `limit`; it returns nonzero if some value in (0, limit) is not whole. Free of
 * branches per value (SSE2 max/min): the zeros and levels of a recall base come in no
 * predictable order, and a mispredicted branch per judgment cost more than the count.
 */
#ifndef CUMGAIN_GAINS_H
#define CUMGAIN_GAINS_H

#include "_simd.h"

#include <stddef.h>
#include <stdint.h>

#if CG_SIMD
#include <emmintrin.h>
#endif

static inline int cg_count_whole_gains(const double *values, ptrdiff_t n, int64_t *counts,
                                       int limit) {
    int fractional = 0;
    ptrdiff_t i;
#if CG_SIMD
    const __m128d zero = _mm_setzero_pd(), top = _mm_set_sd((double)limit);
    for (i = 0; i < n; i++) {
        /* maxsd returns its second operand when either is NaN: NaN -> 0 */
        __m128d clamped = _mm_min_sd(_mm_max_sd(_mm_load_sd(values + i), zero), top);
        int level = _mm_cvttsd_si32(clamped);
        counts[level] += 1;
        fractional |= (double)level != _mm_cvtsd_f64(clamped);
    }
#else
    for (i = 0; i < n; i++) {
        double clamped = values[i] > 0.0 ? values[i] : 0.0;
        int level;
        clamped = clamped < (double)limit ? clamped : (double)limit;
        level = (int)clamped;
        counts[level] += 1;
        fractional |= (double)level != clamped;
    }
#endif
    return fractional;
}

#endif
