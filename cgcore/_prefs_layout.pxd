"""One topic of trec_eval's preference measures laid out (form_prefs_counts.c, steps 1
and 2; see _prefs.pyx): the structs its kernels share, their sort orders and bit rows,
the internal ranks, the judgment groups with their equivalence classes or the distinct
docs of their preference arrays, and the working memory of a topic. Inline, so that
they compile into _prefs.pyx's kernels as before.
"""
from libc.stdint cimport uint8_t, uint16_t, uint64_t
from libc.stdlib cimport malloc, calloc, free, qsort
from libc.string cimport memset

from cgcore._typedefs cimport index_t


cdef extern from *:
    """
    static inline long long cg_popcount64(unsigned long long x) {
    #if defined(__GNUC__) || defined(__clang__)
        return __builtin_popcountll(x);
    #else
        x = x - ((x >> 1) & 0x5555555555555555ULL);
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
        return (long long)((x * 0x0101010101010101ULL) >> 56);
    #endif
    }
    """
    long long cg_popcount64(unsigned long long x) noexcept nogil


# The error codes of the kernels (see _prefs.pyx), as C constants.
cdef enum:
    E_EC_LEVELS = 1
    E_ZERO = 2
    E_CYCLE = 3
    E_TOO_LARGE = 4
    E_MEMORY = 5

# A preference array may hold at most this many cells (doc pairs).
cdef extern from *:
    """
    #define CG_PREFS_MAX_CELLS (((long long)1) << 31)
    """
    const index_t MAX_CELLS "CG_PREFS_MAX_CELLS"


cdef struct Entry:          # one judgment line of the topic
    index_t group
    index_t subgroup
    double level
    index_t rank            # internal docid rank
    index_t row             # the input row
    index_t doc
    index_t at              # position in the ranking, or -1


cdef struct DocKey:         # one distinct judged docno of the topic
    index_t unretrieved
    index_t key             # position in the ranking, or the docno code
    index_t start           # its entries, while the entries are sorted by docno
    index_t stop


cdef struct JG:             # one judgment group of the topic
    index_t start           # its entries [start, stop) in (jg, jsg, level, rank) order
    index_t stop
    index_t counted_stop    # EC group: the end of its counted ECs
    index_t first_ec        # EC group: its first EC
    index_t num_ecs         # EC group: trec_eval's num_ecs (may be one short); PA: -1
    index_t m               # PA group: distinct docs; their ranks at local[start:start+m]
    index_t words           # PA group: 64-bit words per bit row
    index_t bits            # PA group: offset of its m x words bit matrix
    index_t pool_start      # EC group: where its entries' ranks start in the rank pool


cdef struct Work:
    Entry* entries
    DocKey* docs
    JG* jgs
    index_t* ec_start
    index_t* ec_stop
    index_t* entry_ec       # counted EC of an entry of an EC group, else -1
    index_t* entry_jg
    index_t* entry_local    # local index of an entry of a PA group
    index_t* local          # PA group g: its docs' ranks at local[g.start : g.start + m]
    double* local_level     # ... and their final levels (trec_eval's rel_array)
    index_t* ecm_off        # per rank: its EC memberships (entries), CSR
    index_t* ecm
    index_t* pam_off        # per rank: its PA memberships (group, local index), CSR
    index_t* pam_jg
    index_t* pam_u
    uint16_t* out_count     # the current row of the pair counts: c[i][j] ...
    uint16_t* in_count      # ... and c[j][i]
    uint8_t* touched_flag
    index_t* touched
    uint64_t* bits          # this topic's PA bit matrices
    uint64_t* scratch       # one bit row
    index_t* pool           # trec_eval's rank_pool: the ranks of the EC groups' entries
    index_t pool_size
    index_t* nonrel         # the docs recalculate() reads as the non-relevant EC


cdef struct Counts:         # trec_eval's JG counts
    index_t ful_ret
    index_t poss_ret
    index_t ful_imp
    index_t poss_imp
    index_t notoccur
    index_t rel
    index_t rel_ret
    index_t nonrel
    index_t nonrel_ret


cdef struct RowSums:        # the pair measures of one topic
    double total
    index_t pairs


# ---------------------------------------------------------------- comparators

cdef inline int _order(index_t x, index_t y) noexcept nogil:
    """-1, 0 or 1 as x is below, at or above y."""
    return (x > y) - (x < y)


cdef inline int _cmp_doc(const void* a, const void* b) noexcept nogil:
    cdef const Entry* x = <const Entry*>a
    cdef const Entry* y = <const Entry*>b
    if x.doc != y.doc:
        return _order(x.doc, y.doc)
    return _order(x.row, y.row)


cdef inline int _cmp_dockey(const void* a, const void* b) noexcept nogil:
    """Retrieved docs first in ranking order, then the rest in docno order."""
    cdef const DocKey* x = <const DocKey*>a
    cdef const DocKey* y = <const DocKey*>b
    if x.unretrieved != y.unretrieved:
        return _order(x.unretrieved, y.unretrieved)
    if x.key != y.key:
        return _order(x.key, y.key)
    return _order(x.start, y.start)


cdef inline int _cmp_group(const void* a, const void* b) noexcept nogil:
    """comp_prefs_and_ranks_jg_rel_level: jg, jsg, rel_level descending, rank."""
    cdef const Entry* x = <const Entry*>a
    cdef const Entry* y = <const Entry*>b
    if x.group != y.group:
        return _order(x.group, y.group)
    if x.subgroup != y.subgroup:
        return _order(x.subgroup, y.subgroup)
    if x.level != y.level:
        return -1 if x.level > y.level else 1
    if x.rank != y.rank:
        return _order(x.rank, y.rank)
    return _order(x.row, y.row)


cdef inline int _cmp_index(const void* a, const void* b) noexcept nogil:
    return _order((<const index_t*>a)[0], (<const index_t*>b)[0])


# ---------------------------------------------------------------- bit rows

cdef inline bint _bit(const uint64_t* row, index_t v) noexcept nogil:
    return (row[v >> 6] >> (v & 63)) & 1


cdef inline void _set_bit(uint64_t* row, index_t v) noexcept nogil:
    row[v >> 6] |= (<uint64_t>1) << (v & 63)


cdef inline void _clear_bit(uint64_t* row, index_t v) noexcept nogil:
    row[v >> 6] &= ~((<uint64_t>1) << (v & 63))


cdef inline index_t _count_bits(const uint64_t* row, const uint64_t* mask,
                         index_t lo, index_t hi) noexcept nogil:
    """Set bits of row (AND mask, unless mask is NULL) at positions [lo, hi)."""
    cdef index_t w, w_lo, w_hi, total = 0
    cdef uint64_t word, low_mask, high_mask
    if lo >= hi:
        return 0
    w_lo = lo >> 6
    w_hi = (hi - 1) >> 6
    low_mask = (~(<uint64_t>0)) << (lo & 63)
    high_mask = (~(<uint64_t>0)) >> (63 - ((hi - 1) & 63))
    for w in range(w_lo, w_hi + 1):
        word = row[w]
        if mask != NULL:
            word = word & mask[w]
        if w == w_lo:
            word = word & low_mask
        if w == w_hi:
            word = word & high_mask
        total += cg_popcount64(word)
    return total


# ---------------------------------------------------------------- sorted-rank counting

cdef inline void _pairs_less_equal(const Entry* entries, index_t a0, index_t a1, index_t b0,
                            index_t b1, index_t* less, index_t* equal) noexcept nogil:
    """Over x in entries[a0:a1], y in entries[b0:b1] (each sorted by rank):
    #(rank x < rank y) and #(rank x == rank y)."""
    cdef index_t i, j_le = b0, j_lt = b0, r
    less[0] = 0
    equal[0] = 0
    for i in range(a0, a1):
        r = entries[i].rank
        while j_lt < b1 and entries[j_lt].rank < r:
            j_lt += 1
        if j_le < j_lt:
            j_le = j_lt
        while j_le < b1 and entries[j_le].rank <= r:
            j_le += 1
        equal[0] += j_le - j_lt
        less[0] += b1 - j_le


cdef inline index_t _retrieved_prefix(const Entry* entries, index_t start, index_t stop,
                               index_t njr) noexcept nogil:
    """How many entries of the rank-sorted range come before the first unretrieved."""
    cdef index_t i = start
    while i < stop and entries[i].rank < njr:
        i += 1
    return i - start


# ---------------------------------------------------------------- one topic laid out

cdef inline int _rank_documents(Work* w, index_t L, index_t* n_docs, index_t* n_retrieved) noexcept nogil:
    """Step 1: internal ranks (form_prefs_and_ranks)."""
    cdef Entry* e = w.entries
    cdef index_t i, k, d, n = 0, njr = 0
    qsort(e, L, sizeof(Entry), _cmp_doc)
    i = 0
    while i < L:
        k = i
        while k < L and e[k].doc == e[i].doc:
            k += 1
        w.docs[n].unretrieved = 0 if e[i].at >= 0 else 1
        w.docs[n].key = e[i].at if e[i].at >= 0 else e[i].doc
        w.docs[n].start = i
        w.docs[n].stop = k
        if e[i].at >= 0:
            njr += 1
        n += 1
        i = k
    qsort(w.docs, n, sizeof(DocKey), _cmp_dockey)
    for d in range(n):
        for k in range(w.docs[d].start, w.docs[d].stop):
            e[k].rank = d
    n_docs[0] = n
    n_retrieved[0] = njr
    return 0


cdef inline int _layout_groups(Work* w, index_t L, index_t* n_groups, index_t* words_total,
                        index_t* err) noexcept nogil:
    """Step 2: split the sorted entries into JGs; ECs of one-sub-group JGs; the
    distinct docs of many-sub-group JGs and the room for their bit matrices."""
    cdef Entry* e = w.entries
    cdef index_t i, k, gs, ge, n_sub, n_levels, n_ec = 0, g = 0, m, u, lo, hi, mid
    cdef index_t total = 0, ecs_here
    cdef double previous
    cdef JG* jg
    w.pool_size = 0
    i = 0
    while i < L:
        gs = i
        while i < L and e[i].group == e[gs].group:
            i += 1
        ge = i
        jg = &w.jgs[g]
        jg.start = gs
        jg.stop = ge
        n_sub = 1
        for k in range(gs + 1, ge):
            if e[k].subgroup != e[k - 1].subgroup:
                n_sub += 1
        for k in range(gs, ge):
            w.entry_jg[k] = g
            w.entry_ec[k] = -1
        if n_sub == 1:
            # trec_eval's num_rel_level: level changes from a sentinel of -3.0.
            n_levels = 0
            previous = -3.0
            for k in range(gs, ge):
                if e[k].level != previous:
                    n_levels += 1
                    previous = e[k].level
            jg.first_ec = n_ec
            jg.num_ecs = n_levels
            ecs_here = 0
            k = gs
            while k < ge:
                w.ec_start[n_ec] = k
                previous = e[k].level
                while k < ge and e[k].level == previous:
                    if ecs_here < n_levels:
                        w.entry_ec[k] = n_ec
                    k += 1
                w.ec_stop[n_ec] = k
                n_ec += 1
                ecs_here += 1
            jg.counted_stop = w.ec_stop[jg.first_ec + n_levels - 1] if n_levels > 0 else gs
            jg.pool_start = w.pool_size
            for k in range(gs, ge):
                w.pool[w.pool_size] = e[k].rank
                w.pool_size += 1
            jg.m = 0
            jg.words = 0
            jg.bits = 0
        else:
            jg.num_ecs = -1
            jg.first_ec = -1
            jg.counted_stop = gs
            jg.pool_start = -1
            for k in range(gs, ge):
                w.local[k] = e[k].rank
            qsort(&w.local[gs], ge - gs, sizeof(index_t), _cmp_index)
            m = 0
            for k in range(gs, ge):
                if m == 0 or w.local[gs + m - 1] != w.local[k]:
                    w.local[gs + m] = w.local[k]
                    m += 1
            if m > MAX_CELLS // m:
                err[0] = E_TOO_LARGE
                err[1] = e[gs].row
                err[2] = m
                return -1
            for k in range(gs, ge):
                lo = 0
                hi = m
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if w.local[gs + mid] < e[k].rank:
                        lo = mid + 1
                    else:
                        hi = mid
                w.entry_local[k] = lo
            jg.m = m
            jg.words = (m + 63) >> 6
            jg.bits = total
            total += m * jg.words
        g += 1
    n_groups[0] = g
    words_total[0] = total
    return 0


# ---------------------------------------------------------------- working memory

cdef inline void _free_work(Work* w) noexcept nogil:
    free(w.entries)
    free(w.docs)
    free(w.jgs)
    free(w.ec_start)
    free(w.ec_stop)
    free(w.entry_ec)
    free(w.entry_jg)
    free(w.entry_local)
    free(w.local)
    free(w.local_level)
    free(w.ecm_off)
    free(w.ecm)
    free(w.pam_off)
    free(w.pam_jg)
    free(w.pam_u)
    free(w.out_count)
    free(w.in_count)
    free(w.touched_flag)
    free(w.touched)
    free(w.bits)
    free(w.scratch)
    free(w.pool)
    free(w.nonrel)


cdef inline int _alloc_work(Work* w, index_t size) noexcept nogil:
    """Room for a topic of ``size`` rows (and so at most ``size`` docs, groups, ECs)."""
    memset(w, 0, sizeof(Work))
    size += 1
    w.entries = <Entry*>malloc(size * sizeof(Entry))
    w.docs = <DocKey*>malloc(size * sizeof(DocKey))
    w.jgs = <JG*>malloc(size * sizeof(JG))
    w.ec_start = <index_t*>malloc(size * sizeof(index_t))
    w.ec_stop = <index_t*>malloc(size * sizeof(index_t))
    w.entry_ec = <index_t*>malloc(size * sizeof(index_t))
    w.entry_jg = <index_t*>malloc(size * sizeof(index_t))
    w.entry_local = <index_t*>malloc(size * sizeof(index_t))
    w.local = <index_t*>malloc(size * sizeof(index_t))
    w.local_level = <double*>malloc(size * sizeof(double))
    w.ecm_off = <index_t*>malloc((size + 1) * sizeof(index_t))
    w.ecm = <index_t*>malloc(size * sizeof(index_t))
    w.pam_off = <index_t*>malloc((size + 1) * sizeof(index_t))
    w.pam_jg = <index_t*>malloc(size * sizeof(index_t))
    w.pam_u = <index_t*>malloc(size * sizeof(index_t))
    w.out_count = <uint16_t*>calloc(size, sizeof(uint16_t))
    w.in_count = <uint16_t*>calloc(size, sizeof(uint16_t))
    w.touched_flag = <uint8_t*>calloc(size, sizeof(uint8_t))
    w.touched = <index_t*>malloc(size * sizeof(index_t))
    w.scratch = <uint64_t*>malloc(((size + 63) >> 6) * sizeof(uint64_t))
    w.pool = <index_t*>malloc(size * sizeof(index_t))
    w.nonrel = <index_t*>malloc(size * sizeof(index_t))
    if (w.entries == NULL or w.docs == NULL or w.jgs == NULL or w.ec_start == NULL
            or w.ec_stop == NULL or w.entry_ec == NULL or w.entry_jg == NULL
            or w.entry_local == NULL or w.local == NULL or w.local_level == NULL
            or w.ecm_off == NULL or w.ecm == NULL or w.pam_off == NULL or w.pam_jg == NULL
            or w.pam_u == NULL or w.out_count == NULL or w.in_count == NULL
            or w.touched_flag == NULL or w.touched == NULL or w.scratch == NULL
            or w.pool == NULL or w.nonrel == NULL):
        return -1
    return 0
