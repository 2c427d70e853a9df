/* Line scanning for the TREC reader (cgcore/_trec.pyx), 64 bytes at a time.
 *
 * cg_split64 finds a line's end and its whitespace-separated fields with bit masks
 * (SSE2 compares, one bit per byte), for the usual line that ends within 64 bytes;
 * anything else is left to the scalar splitter in _trec.pyx, which defines the
 * semantics this must reproduce exactly:
 *   whitespace = space, \t, \n, \v, \f, \r (C isspace); fields are the maximal runs
 *   of other bytes; a \r followed later in the line by a field is an error (-1).
 * cg_ascii_no_nul tells whether a block is all ASCII without NUL, so the per-line
 * UTF-8 check can be skipped for it; cg_text_kind tells that and whether it holds a
 * carriage return, in one pass; cg_quiet_lines passes over blank and comment lines
 * 64 bytes at a time.
 *
 * Without SSE2 (non-x86 builds) cg_split64 always declines, cg_ascii_no_nul checks
 * eight bytes at a time and cg_quiet_lines leaves every line to the line loop.
 */
#ifndef CUMGAIN_SCAN_H
#define CUMGAIN_SCAN_H

#include "_simd.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The byte helpers below sit in the per-line loops (a topic or docno compared or
 * copied): inlined wherever they are called, not left as calls by the compiler's
 * size estimate of the loops around them. */
#if defined(__GNUC__) || defined(__clang__)
#define CG_ALWAYS_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define CG_ALWAYS_INLINE static __forceinline
#else
#define CG_ALWAYS_INLINE static inline
#endif

#if CG_SIMD
#include <emmintrin.h>

/* Bits of 16 bytes: whitespace (\t..\r or space), newline, carriage return. */
static inline void cg_masks16(const char *p, uint64_t *space, uint64_t *newline,
                              uint64_t *carriage_return, int shift) {
    const __m128i x = _mm_loadu_si128((const __m128i *)p);
    const __m128i in_range = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8(8)),
                                           _mm_cmplt_epi8(x, _mm_set1_epi8(14)));
    const __m128i is_space = _mm_or_si128(in_range, _mm_cmpeq_epi8(x, _mm_set1_epi8(' ')));
    *space |= (uint64_t)(uint32_t)_mm_movemask_epi8(is_space) << shift;
    *newline |= (uint64_t)(uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(x, _mm_set1_epi8('\n'))) << shift;
    *carriage_return |= (uint64_t)(uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(x, _mm_set1_epi8('\r'))) << shift;
}
#endif

/* Split the line starting at p, of which `available` bytes may be read.
 * Returns -2 (declined: use the scalar splitter) unless available >= 64 and the line
 * ends with a newline within its first 64 bytes; else sets *length to the line's
 * length without the newline and returns what the scalar splitter returns for it:
 * -1 for a carriage return before a field, otherwise the number of fields, the first
 * `max_fields` of them recorded as [starts[i], ends[i]) offsets from p. */
static inline ptrdiff_t cg_split64(const char *p, ptrdiff_t available, ptrdiff_t *starts,
                                   ptrdiff_t *ends, int max_fields, ptrdiff_t *length) {
#if CG_SIMD
    uint64_t space = 0, newline = 0, carriage_return = 0, line, field, start, end;
    ptrdiff_t n, count, i;
    if (available < 64)
        return -2;
    cg_masks16(p, &space, &newline, &carriage_return, 0);
    for (i = 16; newline == 0 && i < 64; i += 16)  /* up to the 16 bytes with the newline */
        cg_masks16(p + i, &space, &newline, &carriage_return, (int)i);
    if (newline == 0)
        return -2;
    n = __builtin_ctzll(newline);                 /* 0 .. 63 */
    line = (n == 0) ? 0 : (~0ULL >> (64 - n));    /* the bytes before the newline */
    field = ~space & line;
    start = field & ~(field << 1);                /* a field byte after a space (or first) */
    end = ~field & (field << 1);                  /* a space byte after a field byte */
    *length = n;
    carriage_return &= line;
    if (carriage_return != 0 &&
        (start >> __builtin_ctzll(carriage_return)) != 0)   /* a field after a \r */
        return -1;
    for (i = 0; i < max_fields && start != 0; i++) {
        starts[i] = __builtin_ctzll(start);
        ends[i] = __builtin_ctzll(end);
        start &= start - 1;
        end &= end - 1;
    }
    for (count = i; start != 0; count++)          /* fields beyond max_fields */
        start &= start - 1;
    return count;
#else
    (void)p; (void)available; (void)starts; (void)ends; (void)max_fields; (void)length;
    return -2;
#endif
}

/* 1 if the n bytes at p are all ASCII and none is NUL, else 0 (stopping early on a
 * block that is not); with `carriage_return`, also whether they hold a '\r', found in
 * the same pass. */
static inline int cg_ascii_scan(const char *p, ptrdiff_t n, int *carriage_return) {
    ptrdiff_t i = 0, tail;
    uint64_t word;
    int cr_found = 0;
#if CG_SIMD
    __m128i high = _mm_setzero_si128(), zero = _mm_setzero_si128(), cr = _mm_setzero_si128();
    for (; i + 16 <= n; i += 16) {
        const __m128i x = _mm_loadu_si128((const __m128i *)(p + i));
        high = _mm_or_si128(high, x);
        zero = _mm_or_si128(zero, _mm_cmpeq_epi8(x, _mm_setzero_si128()));
        if (carriage_return != NULL)
            cr = _mm_or_si128(cr, _mm_cmpeq_epi8(x, _mm_set1_epi8('\r')));
        if ((i & 4095) == 0 && _mm_movemask_epi8(_mm_or_si128(high, zero)) != 0)
            return 0;                              /* stop early on a non-ASCII block */
    }
    if (_mm_movemask_epi8(_mm_or_si128(high, zero)) != 0)
        return 0;
    cr_found = _mm_movemask_epi8(cr) != 0;
#endif
    tail = i;
    for (; i + 8 <= n; i += 8) {
        memcpy(&word, p + i, 8);
        if ((word & 0x8080808080808080ULL) != 0 ||
            ((word - 0x0101010101010101ULL) & ~word & 0x8080808080808080ULL) != 0)
            return 0;
    }
    for (; i < n; i++)
        if ((unsigned char)p[i] >= 0x80 || p[i] == 0)
            return 0;
    if (carriage_return != NULL)
        *carriage_return = cr_found || memchr(p + tail, '\r', (size_t)(n - tail)) != NULL;
    return 1;
}

/* 1 if the n bytes at p are all ASCII and none is NUL, else 0. */
static inline int cg_ascii_no_nul(const char *p, ptrdiff_t n) {
    return cg_ascii_scan(p, n, NULL);
}

/* What the n bytes at p are, in one pass: 2 if they are plain (all ASCII, no NUL,
 * no carriage return: then a line needs no UTF-8 check and a comment line no check
 * at all), 1 if ASCII without NUL but with a carriage return, 0 otherwise. */
static inline int cg_text_kind(const char *p, ptrdiff_t n) {
    int carriage_return = 0;
    if (!cg_ascii_scan(p, n, &carriage_return))
        return 0;
    return carriage_return ? 1 : 2;
}

/* How many bits of a mask are set (without the popcnt instruction, which the baseline
 * x86-64 the wheels target lacks: __builtin_popcountll would be a call). */
static inline unsigned cg_bits64(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}

#if CG_SIMD
/* Bits of 16 bytes at p equal to `a`, and those equal to `b`, shifted into place. */
static inline void cg_two_masks16(const char *p, __m128i a, __m128i b, uint64_t *is_a,
                                  uint64_t *is_b, int shift) {
    const __m128i x = _mm_loadu_si128((const __m128i *)p);
    *is_a |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, a)) << shift;
    *is_b |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, b)) << shift;
}
#endif

/* The lines at p that need no check, skipped 64 bytes at a time: blank lines and, with
 * `comments` (the caller has checked that the block is ASCII without NUL or carriage
 * return), lines starting with '#' of at most max_line bytes. Returns the bytes they
 * take (p + the result starts a line) and adds their number to *lines. Stops before
 * the 64 bytes where a line starts with anything else, where a comment line grows
 * longer than max_line, and where fewer than 64 bytes are left: the caller's line loop
 * reads on from there (alone where there is no SSE2 or max_line is under 64: then this
 * returns 0). A file of comments or blank lines is read at about the speed of `wc -l`:
 * a few bit operations per 64 bytes, none per line. */
static inline ptrdiff_t cg_quiet_lines(const char *p, ptrdiff_t n, int comments,
                                       ptrdiff_t max_line, int64_t *lines) {
    ptrdiff_t start = 0;                           /* the line being read */
#if CG_SIMD
    const __m128i newline = _mm_set1_epi8('\n');
    const __m128i mark = _mm_set1_epi8(comments ? '#' : '\n');
    ptrdiff_t i;
    int64_t count = 0;
    uint64_t ends, marks, starts, at_start = 1;    /* at_start: p + i starts a line */
    if (max_line < 64)
        return 0;
    for (i = 0; i + 64 <= n; i += 64) {
        ends = marks = 0;
        cg_two_masks16(p + i, newline, mark, &ends, &marks, 0);
        cg_two_masks16(p + i + 16, newline, mark, &ends, &marks, 16);
        cg_two_masks16(p + i + 32, newline, mark, &ends, &marks, 32);
        cg_two_masks16(p + i + 48, newline, mark, &ends, &marks, 48);
        starts = (ends << 1) | at_start;
        if ((starts & ~(ends | marks)) != 0)
            break;                                 /* a line that starts otherwise */
        if (ends != 0) {
            if (i + __builtin_ctzll(ends) - start > max_line)
                break;                             /* the line ending here is too long */
            count += cg_bits64(ends);
            start = i + 64 - __builtin_clzll(ends);    /* after the last newline */
        } else if (i + 64 - start > max_line) {
            break;                                 /* ... or will be */
        }
        at_start = ends >> 63;
    }
    *lines += count;
#else
    (void)p; (void)n; (void)comments; (void)max_line; (void)lines;
#endif
    return start;
}

/* Whether the n bytes at a and b are equal (n == 0: true, a and b unread). Short ids,
 * the usual topic ids and docnos, are compared a word at a time without a call. */
CG_ALWAYS_INLINE int cg_equal_bytes(const char *a, const char *b, ptrdiff_t n) {
    uint64_t x, y;
    uint32_t u, v;
    if (n >= 8 && n <= 16) {            /* two overlapping 8-byte words */
        memcpy(&x, a, 8); memcpy(&y, b, 8);
        if (x != y)
            return 0;
        memcpy(&x, a + n - 8, 8); memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    if (n >= 4 && n < 8) {              /* two overlapping 4-byte words */
        memcpy(&u, a, 4); memcpy(&v, b, 4);
        if (u != v)
            return 0;
        memcpy(&u, a + n - 4, 4); memcpy(&v, b + n - 4, 4);
        return u == v;
    }
    if (n < 4) {
        for (ptrdiff_t i = 0; i < n; i++)
            if (a[i] != b[i])
                return 0;
        return 1;
    }
    return memcmp(a, b, (size_t)n) == 0;
}

/* memcpy(to, from, n) (the buffers do not overlap; n == 0 copies nothing): short ids, the usual
 * topic ids and docnos, copied a word at a time without a call; reads and writes
 * only the n bytes, as memcpy does. */
/* The first n bytes (1 to 8) at s as a word, the rest zero, with 8 bytes readable at
 * s: equal words are equal byte strings of one length. */
CG_ALWAYS_INLINE uint64_t cg_prefix_word8(const char *s, ptrdiff_t n) {
    uint64_t x;
    memcpy(&x, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return x & (~(uint64_t)0 << (8 * (8 - n)));
#else
    return x & (~(uint64_t)0 >> (8 * (8 - n)));
#endif
}

CG_ALWAYS_INLINE void cg_copy_bytes(char *to, const char *from, ptrdiff_t n) {
    uint64_t x, y;
    uint32_t u, v;
    if (n >= 8 && n <= 16) {            /* two overlapping 8-byte words */
        memcpy(&x, from, 8); memcpy(&y, from + n - 8, 8);
        memcpy(to, &x, 8); memcpy(to + n - 8, &y, 8);
    } else if (n >= 4 && n < 8) {       /* two overlapping 4-byte words */
        memcpy(&u, from, 4); memcpy(&v, from + n - 4, 4);
        memcpy(to, &u, 4); memcpy(to + n - 4, &v, 4);
    } else if (n < 4) {
        for (ptrdiff_t i = 0; i < n; i++)
            to[i] = from[i];
    } else {
        memcpy(to, from, (size_t)n);
    }
}

#endif
