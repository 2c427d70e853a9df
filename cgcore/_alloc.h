/* Memory for the TREC reader (cgcore/_trec.pyx): malloc, calloc and realloc that
 * remember how many bytes the last request that failed asked for, so that the reader
 * can raise a MemoryError saying so instead of stepping aside.
 *
 * The record is per thread (each parser runs in the thread that called it, and reads
 * the record right after the call that failed; cg_take_failed_bytes clears it), so
 * threads reading parts side by side do not see each other's failures. The one other
 * variable, cg_allocation_limit, is a test hook: requests above it fail as if the
 * memory had run out (cgcore._trec._set_allocation_limit); it is only written by the
 * tests, between readings.
 */
#ifndef CUMGAIN_ALLOC_H
#define CUMGAIN_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(_MSC_VER)
#define CG_THREAD_LOCAL __declspec(thread)
#else
#define CG_THREAD_LOCAL _Thread_local
#endif

static CG_THREAD_LOCAL size_t cg_failed_request = 0;
static size_t cg_allocation_limit = SIZE_MAX;

static inline void *cg_failed(size_t n) {
    cg_failed_request = n > 0 ? n : 1;
    return NULL;
}

static inline void *cg_malloc(size_t n) {
    void *p = n > cg_allocation_limit ? NULL : malloc(n);
    return p != NULL ? p : cg_failed(n);
}

static inline void *cg_calloc(size_t count, size_t item) {
    void *p;
    if (item != 0 && count > SIZE_MAX / item)
        return cg_failed(SIZE_MAX);
    p = count * item > cg_allocation_limit ? NULL : calloc(count, item);
    return p != NULL ? p : cg_failed(count * item);
}

static inline void *cg_realloc(void *old, size_t n) {
    void *p = n > cg_allocation_limit ? NULL : realloc(old, n);
    return p != NULL ? p : cg_failed(n);
}

/* A slab of n bytes (a multiple of 2 MiB) for the records of a run held by topic
 * (cgcore/_held.pxd), freed with free(). On Linux it is aligned to 2 MiB and asked to
 * be backed by huge pages (where transparent huge pages are on, "always" or
 * "madvise"): records land in thousands of topics' chunks across the slabs, and with
 * 4 KiB pages nearly every one costs a TLB miss and, the first time, a page fault.
 * Elsewhere, plain malloc. */
#if defined(__linux__)
#include <sys/mman.h>
#endif

static inline void *cg_slab_malloc(size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    void *p = NULL;
    if (n > cg_allocation_limit || posix_memalign(&p, (size_t)1 << 21, n) != 0)
        return cg_failed(n);
    (void)madvise(p, n, MADV_HUGEPAGE);    /* a hint: refused is as good as 4 KiB pages */
    return p;
#else
    return cg_malloc(n);
#endif
}

/* The bytes the last failed request of this thread asked for (0: none since the last
 * call), cleared. */
static inline size_t cg_take_failed_bytes(void) {
    size_t n = cg_failed_request;
    cg_failed_request = 0;
    return n;
}

static inline size_t cg_set_allocation_limit(size_t n) {
    size_t previous = cg_allocation_limit;
    cg_allocation_limit = n;
    return previous;
}

#endif
