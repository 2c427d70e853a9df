"""trec_eval 10.0's preference measures (form_prefs_counts.c, m_prefs_*.c), batched.
This file counts; a topic's layout (steps 1 and 2 below), the structs and the working
memory are in _prefs_layout.pxd.

Input: the judgment lines of every topic in the flat + offsets layout (topic ``t``
owns rows ``offsets[t]:offsets[t + 1]``), each row one line ``qid jg jsg docno
rel_level`` reduced to integers and a double:

* ``groups`` / ``subgroups``: the judgment group (jg) and sub-group (jsg), as codes
  whose order is the byte order of the names (trec_eval sorts them with strcmp);
* ``docs``: the docno, as a code whose order is the byte order of the docnos;
* ``levels``: rel_level (not NaN);
* ``retrieved_at``: the 0-based position of the docno in the topic's ranking (after
  any -M cut), or -1 if it was not retrieved. All rows of one docno must agree.

What trec_eval does, and so what this does (form_prefs_counts.c):

1. Every judged docno gets an internal rank: the retrieved ones 0 .. NJR-1 in ranking
   order, then the unretrieved ones NJR .. n-1 in docno order.
2. The lines are sorted by (jg, jsg, rel_level descending, internal rank). A judgment
   group (JG) with one sub-group is a list of equivalence classes (ECs): runs of equal
   rel_level, each preferred to every later one. A JG with several sub-groups is a
   preference array: A > B when some sub-group gives A a higher level than B, closed
   under transitivity.
3. Each preference A > B of a JG counts as fulfilled or not, retrieved (both
   retrieved), implied (one retrieved) or not occurring (neither); a count array
   over doc pairs, summed over JGs, gives the "pair" measures.

Policies reproduced from trec_eval, bugs included (each is a test case):

* The EC count of a JG starts from a sentinel level of -3.0: when a JG's highest level
  is exactly -3.0, its last (lowest) EC is left out of every count.
* A JG whose Rnonrel ratio is 0/0 makes the topic's Rnonrel sum NaN, and a NaN sum
  leaves the measure at 0 for the topic.
* Pair counts are ``unsigned short`` in trec_eval: they wrap at 65536 here too.
* Rnonrel / Rnonrel_ret of an EC group read the first R documents of its last EC
  out of trec_eval's rank pool; when that EC is smaller (possible only with negative
  levels) trec_eval reads on into the next groups' ranks, reproduced here, and past
  the topic's entries into memory left by an earlier topic or never written: the
  value is then undefined, NaN here.

Errors trec_eval stops on (it reports them and exits, or aborts) are reported per
topic in ``errors`` as (code, row, row) and the kernel stops at the first:
1 a doc at two levels in a one-sub-group JG, 2 a doc with level 0 and a non-0 level
in a many-sub-group JG, 3 a preference cycle in a many-sub-group JG, 4 a preference
array over more than 2**31 doc pairs (refused here), 5 no memory.

Memory: O(rows) per topic, plus a bit matrix of m*m bits for each many-sub-group JG
over m docnos (trec_eval holds n*n bytes for each, n the topic's judged docnos, and
an n*n count array per topic; here the pair counts are built one row at a time).
"""
from libc.stdint cimport uint16_t, uint64_t
from libc.stdlib cimport calloc, free, qsort
from libc.string cimport memset
from libc.math cimport isnan, NAN

from cgcore._prefs_layout cimport (
    Entry, JG, Work, Counts, RowSums, E_EC_LEVELS, E_ZERO, E_CYCLE, E_MEMORY,
    cg_popcount64, _cmp_group, _cmp_index, _bit, _set_bit, _clear_bit, _count_bits,
    _pairs_less_equal, _retrieved_prefix, _rank_documents, _layout_groups, _free_work,
    _alloc_work)
from cgcore._typedefs cimport index_t

import numpy as np


# trec_eval's print order (measures.c); the columns of the values array.
MEASURES = (
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
    "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel",
    "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
)
COUNTS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")

cdef enum:
    N_MEASURES = 14
    M_POSS = 0
    M_FUL = 1
    M_FUL_RET = 2
    M_SIMP = 3
    M_PAIR = 4
    M_AVGJG = 5
    M_RNONREL = 6
    M_SIMP_RET = 7
    M_PAIR_RET = 8
    M_AVGJG_RET = 9
    M_RNONREL_RET = 10
    M_SIMP_IMP = 11
    M_PAIR_IMP = 12
    M_AVGJG_IMP = 13

ERROR_EC_LEVELS = 1
ERROR_ZERO_AND_NONZERO = 2
ERROR_CYCLE = 3
ERROR_TOO_LARGE = 4
ERROR_MEMORY = 5


# A preference array may hold at most this many cells (doc pairs).
MAX_ARRAY_CELLS = 1 << 31


# ---------------------------------------------------------------- one topic counted
# (laid out by _prefs_layout.pxd: steps 1 and 2)

cdef int _ec_counts(Work* w, JG* jg, index_t njr, Counts* c, index_t* err) noexcept nogil:
    """add_ec_pref_to_jg: the counts of an EC group, over its counted ECs."""
    cdef Entry* e = w.entries
    cdef index_t e1, e2, a0, a1, b0, b1, a_ret, b_ret, less, equal, x, y
    cdef index_t last = jg.first_ec + jg.num_ecs
    memset(c, 0, sizeof(Counts))
    for e1 in range(jg.first_ec, last):
        a0 = w.ec_start[e1]
        a1 = w.ec_stop[e1]
        a_ret = _retrieved_prefix(e, a0, a1, njr)
        if e[a0].level > 0.0:
            c.rel_ret += a_ret
            c.rel += a1 - a0
        else:
            c.nonrel_ret += a_ret
            c.nonrel += a1 - a0
        for e2 in range(e1 + 1, last):
            b0 = w.ec_start[e2]
            b1 = w.ec_stop[e2]
            b_ret = _retrieved_prefix(e, b0, b1, njr)
            _pairs_less_equal(e, a0, a0 + a_ret, b0, b0 + b_ret, &less, &equal)
            if equal == 0:
                _pairs_less_equal(e, a0 + a_ret, a1, b0 + b_ret, b1, &x, &equal)
            if equal != 0:
                # The same docno in two ECs: find the two lines for the message.
                for x in range(a0, a1):
                    for y in range(b0, b1):
                        if e[x].rank == e[y].rank:
                            err[0] = E_EC_LEVELS
                            err[1] = e[x].row
                            err[2] = e[y].row
                            return -1
            c.ful_ret += less
            c.poss_ret += a_ret * b_ret - less
            c.ful_imp += a_ret * (b1 - b0 - b_ret)
            c.poss_imp += (a1 - a0 - a_ret) * b_ret
            c.notoccur += (a1 - a0 - a_ret) * (b1 - b0 - b_ret)
    c.poss_ret += c.ful_ret
    c.poss_imp += c.ful_imp
    return 0


cdef index_t _less_than(const Entry* entries, index_t a0, index_t a1, const index_t* b,
                        index_t n_b) noexcept nogil:
    """#(rank x < y) over x in entries[a0:a1] (sorted by rank), y in b (sorted)."""
    cdef index_t i, j = 0, less = 0
    for i in range(a0, a1):
        while j < n_b and b[j] <= entries[i].rank:
            j += 1
        less += n_b - j
    return less


cdef double _ec_rnonrel(Work* w, JG* jg, index_t njr, const Counts* c, bint retrieved_only,
                        bint* undefined) noexcept nogil:
    """recalculate() of m_prefs_avgjg_Rnonrel[_ret].c for an EC group: ful / poss with
    the last EC replaced by its first R docs (R = num_rel, or num_rel_ret for _ret;
    for _ret, up to its first unretrieved doc).

    trec_eval takes those R docs from its rank pool, where the ranks of the entries
    of the topic's EC groups lie one group after another: when the last EC has
    fewer than R docs (possible only with negative levels), it reads on into the
    group's uncounted EC (the -3.0 sentinel) and the next EC groups, which is
    reproduced from ``w.pool``; reading past the topic's entries (memory left by an
    earlier topic, or never written) sets ``undefined`` instead."""
    cdef Entry* e = w.entries
    cdef index_t e1, e2, a0, a1, a_ret, a_n, b0, b_n, less, equal, nonrel_n = 0
    cdef index_t last, at, ful = 0, poss = 0
    cdef index_t wanted = c.rel_ret if retrieved_only else c.rel
    cdef index_t* nonrel = w.nonrel
    if jg.num_ecs <= 0:
        undefined[0] = True     # unreachable (no counted EC means R = N = 0)
        return 0.0
    last = jg.first_ec + jg.num_ecs - 1
    at = jg.pool_start + (w.ec_start[last] - jg.start)
    while nonrel_n < wanted:
        if at + nonrel_n >= w.pool_size:
            undefined[0] = True
            return 0.0
        if retrieved_only and w.pool[at + nonrel_n] >= njr:
            break
        nonrel[nonrel_n] = w.pool[at + nonrel_n]
        nonrel_n += 1
    qsort(nonrel, nonrel_n, sizeof(index_t), _cmp_index)
    for e1 in range(jg.first_ec, last + 1):
        a0 = w.ec_start[e1]
        a1 = w.ec_stop[e1]
        a_ret = _retrieved_prefix(e, a0, a1, njr)
        a_n = a_ret if retrieved_only else a1 - a0
        for e2 in range(e1 + 1, last):
            b0 = w.ec_start[e2]
            b_n = _retrieved_prefix(e, b0, w.ec_stop[e2], njr) if retrieved_only \
                else w.ec_stop[e2] - b0
            # fulfilled: rank x < rank y and x retrieved
            _pairs_less_equal(e, a0, a0 + a_ret, b0, b0 + b_n, &less, &equal)
            ful += less
            poss += a_n * b_n - less
        less = _less_than(e, a0, a0 + a_ret, nonrel, nonrel_n)
        ful += less
        poss += a_n * nonrel_n - less
    poss += ful
    return <double>ful / <double>poss


cdef int _pa_build(Work* w, JG* jg, index_t njr, Counts* c, index_t* err) noexcept nogil:
    """form_jg_pa + add_transitives + add_pa_pref_to_jg: the closed preference
    array of a many-sub-group JG as a bit matrix, and its counts."""
    cdef Entry* e = w.entries
    cdef index_t m = jg.m, W = jg.words, gs = jg.start, ge = jg.stop
    cdef uint64_t* bits = w.bits + jg.bits
    cdef uint64_t* acc = w.scratch
    cdef uint64_t* row
    cdef uint64_t* row_k
    cdef const index_t* ranks = &w.local[gs]
    cdef double* level = &w.local_level[gs]
    cdef index_t k, kk, i, j, u, v, s0, s1, r0, r1, m_ret = 0, q
    cdef double previous, current
    memset(c, 0, sizeof(Counts))
    for u in range(m):
        level[u] = -1.0
        if ranks[u] < njr:
            m_ret += 1
    # Levels, checked as trec_eval checks them, line by line in sorted order.
    for k in range(gs, ge):
        u = w.entry_local[k]
        previous = level[u]
        current = e[k].level
        if (previous > 0.0 and current == 0.0) or (previous == 0.0 and current > 0.0):
            err[0] = E_ZERO
            err[1] = e[k].row
            err[2] = -1
            for kk in range(gs, k):
                if w.entry_local[kk] == u:
                    err[2] = e[kk].row
            return -1
        level[u] = current
    # Each doc is preferred to the docs of lower levels in each of its sub-groups:
    # the runs of one sub-group from the lowest level up, ORing the lower runs in.
    s0 = gs
    while s0 < ge:
        s1 = s0
        while s1 < ge and e[s1].subgroup == e[s0].subgroup:
            s1 += 1
        memset(acc, 0, W * sizeof(uint64_t))
        r1 = s1
        while r1 > s0:
            r0 = r1 - 1
            while r0 > s0 and e[r0 - 1].level == e[r1 - 1].level:
                r0 -= 1
            for k in range(r0, r1):
                row = bits + w.entry_local[k] * W
                for q in range(W):
                    row[q] |= acc[q]
            for k in range(r0, r1):
                _set_bit(acc, w.entry_local[k])
            r1 = r0
        s0 = s1
    # Transitive closure (Warshall; trec_eval squares the array until it is stable,
    # which gives the same relation). The diagonal is set, then cleared, as there.
    for u in range(m):
        _set_bit(bits + u * W, u)
    for kk in range(m):
        row_k = bits + kk * W
        for i in range(m):
            row = bits + i * W
            if i != kk and _bit(row, kk):
                for q in range(W):
                    row[q] |= row_k[q]
    for u in range(m):
        _clear_bit(bits + u * W, u)
    for i in range(m):
        row = bits + i * W
        for j in range(i + 1, m):
            if _bit(row, j) and _bit(bits + j * W, i):
                err[0] = E_CYCLE
                err[1] = -1
                err[2] = -1
                for k in range(gs, ge):
                    if err[1] < 0 and w.entry_local[k] == i:
                        err[1] = e[k].row
                    if err[2] < 0 and w.entry_local[k] == j:
                        err[2] = e[k].row
                return -1
    for u in range(m):
        if level[u] > 0.0:
            c.rel += 1
            if u < m_ret:
                c.rel_ret += 1
        elif level[u] == 0.0:
            c.nonrel += 1
            if u < m_ret:
                c.nonrel_ret += 1
    # Local indices are in rank order, so the retrieved docs are 0 .. m_ret-1.
    for u in range(m):
        row = bits + u * W
        if u < m_ret:
            c.poss_ret += _count_bits(row, NULL, 0, u)              # A2
            c.ful_ret += _count_bits(row, NULL, u + 1, m_ret)       # A1
            c.ful_imp += _count_bits(row, NULL, m_ret, m)           # A3
        else:
            c.poss_imp += _count_bits(row, NULL, 0, m_ret)          # A4
            c.notoccur += _count_bits(row, NULL, m_ret, m)          # A5
    c.poss_ret += c.ful_ret
    c.poss_imp += c.ful_imp
    return 0


cdef double _pa_rnonrel(Work* w, JG* jg, index_t njr, const Counts* c,
                        bint retrieved_only) noexcept nogil:
    """recalculate() for a PA group: nonrel docs after the (R+1)-th one in rank order
    are left out (R = num_rel in both variants, as in trec_eval)."""
    cdef index_t m = jg.m, W = jg.words, gs = jg.start
    cdef uint64_t* bits = w.bits + jg.bits
    cdef uint64_t* keep = w.scratch
    cdef const index_t* ranks = &w.local[gs]
    cdef const double* level = &w.local_level[gs]
    cdef index_t u, m_ret = 0, scan, first_discarded, seen = 0, ful = 0, poss = 0
    cdef index_t limit
    cdef uint64_t* row
    for u in range(m):
        if ranks[u] < njr:
            m_ret += 1
    scan = m_ret if retrieved_only else m
    first_discarded = scan
    for u in range(scan):
        if level[u] == 0.0:
            seen += 1
            if seen == c.rel + 1:
                first_discarded = u
                break
    memset(keep, 0, W * sizeof(uint64_t))
    for u in range(m):
        if not (u >= first_discarded and level[u] == 0.0):
            _set_bit(keep, u)
    limit = m_ret if retrieved_only else m
    for u in range(limit):
        if not _bit(keep, u):
            continue
        row = bits + u * W
        if u < m_ret:
            poss += _count_bits(row, keep, 0, u)
            ful += _count_bits(row, keep, u + 1, limit)
        else:
            poss += _count_bits(row, keep, 0, limit)
    poss += ful
    return <double>ful / <double>poss


cdef int _memberships(Work* w, index_t L, index_t n, index_t n_groups) noexcept nogil:
    """Per internal rank: the EC entries and the PA (group, local index) pairs of that
    doc, the sources of its row of pair counts."""
    cdef index_t k, g, u, r
    cdef JG* jg
    memset(w.ecm_off, 0, (n + 1) * sizeof(index_t))
    memset(w.pam_off, 0, (n + 1) * sizeof(index_t))
    for k in range(L):
        if w.entry_ec[k] >= 0:
            w.ecm_off[w.entries[k].rank + 1] += 1
    for g in range(n_groups):
        jg = &w.jgs[g]
        for u in range(jg.m):
            w.pam_off[w.local[jg.start + u] + 1] += 1
    for r in range(n):
        w.ecm_off[r + 1] += w.ecm_off[r]
        w.pam_off[r + 1] += w.pam_off[r]
    # fill, using touched[] as the per-rank cursor
    for r in range(n):
        w.touched[r] = w.ecm_off[r]
    for k in range(L):
        if w.entry_ec[k] >= 0:
            r = w.entries[k].rank
            w.ecm[w.touched[r]] = k
            w.touched[r] += 1
    for r in range(n):
        w.touched[r] = w.pam_off[r]
    for g in range(n_groups):
        jg = &w.jgs[g]
        for u in range(jg.m):
            r = w.local[jg.start + u]
            w.pam_jg[w.touched[r]] = g
            w.pam_u[w.touched[r]] = u
            w.touched[r] += 1
    return 0


cdef inline void _touch(Work* w, index_t j, index_t* n_touched) noexcept nogil:
    if not w.touched_flag[j]:
        w.touched_flag[j] = 1
        w.touched[n_touched[0]] = j
        n_touched[0] += 1


cdef void _pair_row(Work* w, index_t i, index_t lo, index_t hi, bint accumulate,
                    RowSums* sums) noexcept nogil:
    """Row i of trec_eval's count array over columns [lo, hi) (all > i): for each j
    with c[i][j] or c[j][i] non-zero, in increasing j, count the pair and (if
    accumulate) add c[i][j] / (c[i][j] + c[j][i]) to the running total."""
    cdef Entry* e = w.entries
    cdef index_t p, k, k2, ec, g, u, v, j, q, W, m, n_touched = 0
    cdef uint64_t word
    cdef uint64_t* bits
    cdef JG* jg
    cdef const index_t* ranks
    cdef uint16_t a, b
    if lo >= hi:
        return
    for p in range(w.ecm_off[i], w.ecm_off[i + 1]):
        k = w.ecm[p]
        ec = w.entry_ec[k]
        jg = &w.jgs[w.entry_jg[k]]
        for k2 in range(w.ec_stop[ec], jg.counted_stop):      # lower ECs: i > them
            j = e[k2].rank
            if lo <= j < hi:
                _touch(w, j, &n_touched)
                w.out_count[j] += 1
        for k2 in range(jg.start, w.ec_start[ec]):            # higher ECs: them > i
            j = e[k2].rank
            if lo <= j < hi:
                _touch(w, j, &n_touched)
                w.in_count[j] += 1
    for p in range(w.pam_off[i], w.pam_off[i + 1]):
        jg = &w.jgs[w.pam_jg[p]]
        u = w.pam_u[p]
        W = jg.words
        m = jg.m
        bits = w.bits + jg.bits
        ranks = &w.local[jg.start]
        for q in range(W):
            word = bits[u * W + q]
            while word:
                v = q * 64 + <index_t>cg_popcount64((word & (~word + 1)) - 1)
                word &= word - 1
                j = ranks[v]
                if lo <= j < hi:
                    _touch(w, j, &n_touched)
                    w.out_count[j] += 1
        for v in range(m):
            if _bit(bits + v * W, u):
                j = ranks[v]
                if lo <= j < hi:
                    _touch(w, j, &n_touched)
                    w.in_count[j] += 1
    if n_touched == 0:
        return
    if n_touched * 16 < hi - lo:
        qsort(w.touched, n_touched, sizeof(index_t), _cmp_index)
    else:       # dense: walk the columns instead of sorting
        n_touched = 0
        for j in range(lo, hi):
            if w.touched_flag[j]:
                w.touched[n_touched] = j
                n_touched += 1
    for q in range(n_touched):
        j = w.touched[q]
        a = w.out_count[j]
        b = w.in_count[j]
        if a != 0 or b != 0:
            sums.pairs += 1
            if accumulate:
                sums.total = sums.total + <double>a / <double>(<int>a + <int>b)
        w.out_count[j] = 0
        w.in_count[j] = 0
        w.touched_flag[j] = 0


cdef int _topic(Work* w, const index_t* groups, const index_t* subgroups, const index_t* docs,
                const double* levels, const index_t* retrieved_at, index_t start, index_t stop,
                double* out, index_t* err) noexcept nogil:
    cdef index_t L = stop - start, k, g, n, njr, n_groups, words_total, i
    cdef Entry* e = w.entries
    cdef JG* jg
    cdef Counts c
    cdef index_t total_poss = 0, total_ful = 0, total_ful_ret = 0
    cdef index_t total_poss_ret = 0, total_poss_imp = 0, total_ful_imp = 0
    cdef index_t ful, poss, R, N, num_ful, num_poss
    cdef double sum_avgjg = 0.0, sum_ret = 0.0, sum_imp = 0.0
    cdef double sum_rn = 0.0, sum_rn_ret = 0.0
    cdef bint undefined_rn = False, undefined_rn_ret = False
    cdef RowSums sums
    cdef index_t pairs_ret, pairs_imp
    cdef double total_ret
    for k in range(N_MEASURES):
        out[k] = 0.0
    if L == 0:
        return 0
    for k in range(L):
        e[k].group = groups[start + k]
        e[k].subgroup = subgroups[start + k]
        e[k].level = levels[start + k]
        e[k].row = start + k
        e[k].doc = docs[start + k]
        e[k].at = retrieved_at[start + k]
    _rank_documents(w, L, &n, &njr)
    qsort(e, L, sizeof(Entry), _cmp_group)
    if _layout_groups(w, L, &n_groups, &words_total, err) != 0:
        return -1
    w.bits = NULL
    if words_total > 0:
        w.bits = <uint64_t*>calloc(words_total, sizeof(uint64_t))
        if w.bits == NULL:
            err[0] = E_MEMORY
            return -1
    for g in range(n_groups):
        jg = &w.jgs[g]
        if jg.num_ecs >= 0:
            if _ec_counts(w, jg, njr, &c, err) != 0:
                return -1
        elif _pa_build(w, jg, njr, &c, err) != 0:
            return -1
        ful = c.ful_ret + c.ful_imp
        poss = c.poss_ret + c.poss_imp + c.notoccur
        total_poss += poss
        total_ful += ful
        total_ful_ret += c.ful_ret
        total_poss_ret += c.poss_ret
        total_ful_imp += ful
        total_poss_imp += c.poss_ret + c.poss_imp
        if poss:
            sum_avgjg += <double>ful / <double>poss
        if c.poss_ret:
            sum_ret += <double>c.ful_ret / <double>c.poss_ret
        if c.poss_ret + c.poss_imp:
            sum_imp += <double>ful / <double>(c.poss_ret + c.poss_imp)
        # prefs_avgjg_Rnonrel
        R = c.rel
        N = c.nonrel
        if R >= N:
            num_ful = ful + c.rel_ret * (R - N)
            num_poss = poss + c.rel * (R - N)
            sum_rn += <double>num_ful / <double>num_poss
        elif jg.num_ecs >= 0:
            sum_rn += _ec_rnonrel(w, jg, njr, &c, False, &undefined_rn)
        else:
            sum_rn += _pa_rnonrel(w, jg, njr, &c, False)
        # prefs_avgjg_Rnonrel_ret
        R = c.rel_ret
        N = c.nonrel_ret
        if R >= N:
            num_ful = c.ful_ret + c.rel_ret * (R - N)
            num_poss = c.poss_ret + c.rel * (R - N)
            sum_rn_ret += <double>num_ful / <double>num_poss
        elif jg.num_ecs >= 0:
            sum_rn_ret += _ec_rnonrel(w, jg, njr, &c, True, &undefined_rn_ret)
        else:
            sum_rn_ret += _pa_rnonrel(w, jg, njr, &c, True)
    out[M_POSS] = <double>total_poss
    out[M_FUL] = <double>total_ful
    out[M_FUL_RET] = <double>total_ful_ret
    if total_poss:
        out[M_SIMP] = <double>total_ful / <double>total_poss
    if total_poss_ret:
        out[M_SIMP_RET] = <double>total_ful_ret / <double>total_poss_ret
    if total_poss_imp:
        out[M_SIMP_IMP] = <double>total_ful_imp / <double>total_poss_imp
    if sum_avgjg > 0.0:
        out[M_AVGJG] = sum_avgjg / <double>n_groups
    if sum_ret > 0.0:
        out[M_AVGJG_RET] = sum_ret / <double>n_groups
    if sum_imp > 0.0:
        out[M_AVGJG_IMP] = sum_imp / <double>n_groups
    if sum_rn > 0.0:            # a NaN sum (some 0/0) leaves 0, as in trec_eval
        out[M_RNONREL] = sum_rn / <double>n_groups
    if sum_rn_ret > 0.0:
        out[M_RNONREL_RET] = sum_rn_ret / <double>n_groups
    if undefined_rn:
        out[M_RNONREL] = NAN
    if undefined_rn_ret:
        out[M_RNONREL_RET] = NAN
    # The pair measures: rows of the count array in trec_eval's three loops.
    _memberships(w, L, n, n_groups)
    sums.total = 0.0
    sums.pairs = 0
    for i in range(njr):                    # both retrieved
        _pair_row(w, i, i + 1, njr, True, &sums)
    pairs_ret = sums.pairs
    total_ret = sums.total
    for i in range(njr):                    # i retrieved, j not
        _pair_row(w, i, njr, n, True, &sums)
    pairs_imp = sums.pairs
    for i in range(njr, n):                 # neither: counted, not summed
        _pair_row(w, i, i + 1, n, False, &sums)
    if pairs_ret:
        out[M_PAIR_RET] = total_ret / <double>pairs_ret
    if pairs_imp:
        out[M_PAIR_IMP] = sums.total / <double>pairs_imp
    if sums.pairs:
        out[M_PAIR] = sums.total / <double>sums.pairs
    return 0


# ---------------------------------------------------------------- the wrapper

def preference_measures(const index_t[::1] offsets, const index_t[::1] groups,
                        const index_t[::1] subgroups, const index_t[::1] docs,
                        const double[::1] levels, const index_t[::1] retrieved_at):
    """The 14 measures of every topic (columns in the order of ``MEASURES``; the
    counts are exact integers stored as float64) and an (n_topics, 3) int64 array
    of errors: (code, row, row) for the first topic trec_eval would stop on (rows
    are input rows, -1 if none; for code 4 the second is the group's size), zeros
    elsewhere. Topics after an erroneous one are not computed (their values are 0).
    """
    cdef Py_ssize_t n_rows = groups.shape[0]
    cdef Py_ssize_t t, i
    cdef index_t n_topics, longest = 0, code = 0
    if offsets.shape[0] < 1:
        raise ValueError("offsets must hold at least one entry")
    n_topics = offsets.shape[0] - 1
    if offsets[0] != 0:
        raise ValueError(f"offsets[0] must be 0, got {offsets[0]}")
    for t in range(n_topics):
        if offsets[t + 1] < offsets[t]:
            raise ValueError(f"offsets must be non-decreasing (at {t + 1})")
        if offsets[t + 1] - offsets[t] > longest:
            longest = offsets[t + 1] - offsets[t]
    if offsets[n_topics] != n_rows:
        raise ValueError(f"offsets[-1] = {offsets[n_topics]} but there are {n_rows} rows")
    for name, length in (("subgroups", subgroups.shape[0]), ("docs", docs.shape[0]),
                         ("levels", levels.shape[0]), ("retrieved_at", retrieved_at.shape[0])):
        if length != n_rows:
            raise ValueError(f"{name} has {length} entries for {n_rows} rows")
    for i in range(n_rows):
        if isnan(levels[i]):
            raise ValueError(f"levels[{i}] is NaN (it has no order)")
        if retrieved_at[i] < -1:
            raise ValueError(f"retrieved_at[{i}] = {retrieved_at[i]} (must be >= -1)")
    values = np.zeros((n_topics, N_MEASURES), dtype=np.float64)
    errors = np.zeros((n_topics, 3), dtype=np.int64)
    cdef double[:, ::1] out = values
    cdef index_t[:, ::1] err = errors
    cdef Work w
    if n_rows == 0:
        return values, errors
    with nogil:
        if _alloc_work(&w, longest) != 0:
            code = E_MEMORY
        else:
            for t in range(n_topics):
                if _topic(&w, &groups[0], &subgroups[0], &docs[0], &levels[0],
                          &retrieved_at[0], offsets[t], offsets[t + 1], &out[t, 0],
                          &err[t, 0]) != 0:
                    free(w.bits)
                    w.bits = NULL
                    break
                free(w.bits)
                w.bits = NULL
        _free_work(&w)
    if code == E_MEMORY:
        raise MemoryError(f"no memory for a topic of {longest} judgment lines")
    return values, errors
