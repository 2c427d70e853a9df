# Ranking and joining one run topic: the part of the native reader that every run input
# (a file's lines, a dict, Arrow columns: cgcore/_trec.pyx) feeds. A topic's documents
# become entries (Entry); they are checked for duplicates and looked up in the qrels
# table's index (_index_entries, _join_judgments), sorted by score descending and the
# tie rule (_sort_topic: 16-byte items, integer keys, docno prefixes), cut at the depth
# and appended to the ranked output (_rank_entries). A docno twice in a topic is noted
# (the first by line, and how many) and dropped by the duplicates policy. RunState is a
# ranker's whole state. A topic's documents come from the collected lines of a topic
# that has just ended (_rank_current), a batch of a dict (_rank_batch), or the lines held
# by topic for a run whose topics are not contiguous (_rank_group, _held.pxd).
# Only nogil C, inline, so it compiles into _trec's loops.
from libc.stdint cimport int64_t, uint64_t, uint8_t
from libc.stdlib cimport free
from libc.string cimport memcmp, memcpy, memset

from cgcore._buffers cimport (
    Bytes, Doubles, Int64s, Levels, _equal_bytes, _level_at, _level_bytes, _push_bytes,
    _push_int64, _reserve, _set_level, cg_malloc)
from cgcore._held cimport (STAGED, Group, Held, Reading, Staged, _next_record,
                           _start_reading)
from cgcore._prefetch cimport cg_prefetch_read
from cgcore._qrels cimport (
    Lookup, QrelsState, _docno, _docno_length, _judgment_count, _lookup_find, _point_at,
    _row_has, _scratch_room)
from cgcore._rank_keys cimport descending_key, random_tie_key
from cgcore._status cimport (BAD_LINE, DUPLICATE, KEEP_LAST, NO_MEMORY, QRELS_DUPLICATE,
                             TOO_BIG)
from cgcore._strings cimport (ShortKeys, Strings, _first_slot, _hash, _strings_find_after,
                              _strings_length, _strings_text)


cdef enum:
    RULE_DOCNO_DESC = 0
    RULE_DOCNO_ASC = 1
    RULE_INPUT_ORDER = 2
    RULE_RANDOM = 3

cdef enum:
    DROPPED = -2           # Entry.judgment of a repeated docno the policy drops


cdef struct Entry:          # a run document of the topic being ranked, in input order
    double score
    const char* docno
    int64_t length
    int64_t key            # the tie key of the input_order and random rules
    int64_t row            # position in the input
    uint64_t hash          # of the docno, for the duplicate check and the qrels lookup
    int64_t judgment       # its qrels row once joined (see _join_judgments), else -1


cdef struct Ranked:         # what is sorted: 16 bytes, the entries stay where they are
    uint64_t key           # ascending = the order sought (see _sort_topic)
    Entry* entry


cdef inline uint64_t _big_endian_32(const char* s) noexcept nogil:
    cdef const uint8_t* b = <const uint8_t*>s
    return (<uint64_t>b[0] << 24) | (<uint64_t>b[1] << 16) | (<uint64_t>b[2] << 8) | b[3]


cdef inline uint64_t _docno_prefix(const char* s, Py_ssize_t n) noexcept nogil:
    """The first 8 bytes, big-endian, zero-padded. Where two prefixes differ, their
    integer order is the docnos' byte order (a docno that ends first is padded with
    0 < any byte where they differ); equal prefixes need the full comparison.
    From 4 to 7 bytes, two overlapping 4-byte reads (the overlap ORs equal bytes)."""
    cdef uint64_t prefix = 0
    cdef Py_ssize_t i
    if n >= 8:
        return (_big_endian_32(s) << 32) | _big_endian_32(s + 4)
    if n >= 4:
        return (_big_endian_32(s) << 32) | (_big_endian_32(s + n - 4) << (8 * (8 - n)))
    for i in range(n):
        prefix |= <uint64_t>(<uint8_t>s[i]) << (8 * (7 - i))
    return prefix


cdef inline int _compare_docno(const Entry* x, const Entry* y) noexcept nogil:
    """Byte order of the docnos: memcmp, then the shorter first."""
    cdef int64_t n = x.length if x.length < y.length else y.length
    cdef int result = memcmp(x.docno, y.docno, n) if n > 0 else 0
    if result != 0:
        return result
    return (x.length > y.length) - (x.length < y.length)


cdef struct RunState:
    QrelsState* qrels
    int ties
    int precision              # a PRECISION_ code (cgcore/_precision.pxd)
    int64_t depth              # -1: no cut
    uint64_t seed
    Strings topics             # run topics in order of appearance
    ShortKeys short_topics     # (grouping) the indices of topics of up to 8 bytes
    int64_t current            # the topic being collected, -1 before the first line
    Lookup judgments           # the current topic's judgments (see _use_topic)
    int64_t judgments_topic    # their qrels topic (-1: none; where the next is looked for first)
    uint64_t* scratch          # their hashes while they are joined (see _join_judgments)
    Py_ssize_t n_scratch
    Bytes docnos               # current topic's docnos
    Int64s doc_starts
    Doubles scores
    Int64s lines
    Entry* entries
    Ranked* ranked             # the entries being sorted
    Py_ssize_t n_entries       # room in both
    uint64_t* seen             # the topic's docnos and judgments (see _index_entries):
    Py_ssize_t n_seen          # (stamp << 32) | entry index, or n + judgment position;
    int64_t stamp              # a slot is in use for the topic being ranked if its stamp
    Py_ssize_t seen_slots      # is this one (wraps after 2^32 - 1 topics); slots in use
    Int64s batch_judgments     # add_dict: per topic of the batch collected, its qrels
    Int64s batch_ends          # topic (-1: none) and the end of its documents
    Int64s counts              # per run topic: ranked rows kept
    Int64s judgment_topics     # per run topic, in order: its qrels topic (-1: none)
    Levels out_levels          # held as the table's levels are (int8 or wide)
    Doubles out_scores
    Bytes out_judged           # 0 / 1 per ranked row
    bint rows_borrowed         # the out_ arrays point into arrays the caller owns (see
                               # RunRanker.write_rows_into): never grown nor freed here
    Bytes tag
    Bytes first_tag            # the first data line's tag, and whether a later line's
    bint tags_differ           # differs from it (run names: cumgain.io.run_names)
    bint keep_scores
    Py_ssize_t n_lines_read
    int64_t lines_seen
    int status
    int64_t status_line
    Py_ssize_t stop_offset # BAD_LINE from feed: where the line starts in the block fed
    size_t failed_bytes    # NO_MEMORY: what the request that failed asked for (0: unknown)
    Py_ssize_t max_line    # a longer line (bytes, without the newline) stops with BAD_LINE
    int duplicates         # KEEP_ERROR, KEEP_FIRST or KEEP_LAST
    int64_t ranking_topic  # the run topic being ranked (for naming a duplicate)
    int64_t n_duplicates   # repeated docnos found (each a row the policy drops)
    int64_t duplicate_line         # the first found by line (the repeat's line, or a
    int64_t duplicate_first_line   # column's row + 1), the line of the docno's first
    int64_t duplicate_topic        # occurrence, its run topic and its docno
    Bytes duplicate_docno
    bint grouping          # every line held by topic until finish (see _held.pxd)
    bint contiguous        # (grouping) a topic coming back after another stops with
                           # NOT_GROUPED: topics handed out as they end (take_held)
    Held held
    Staged staged[STAGED]  # (grouping) lines parsed from the block being fed, to hold
    Py_ssize_t n_staged


cdef enum:
    KEY_ONLY = -1          # _sort_ranked: equal keys in any order


cdef inline bint _before(const Ranked* x, const Ranked* y, int ties) noexcept nogil:
    """Whether ``x`` comes first: the smaller key, or on equal keys the tie rule (the
    keys are docno prefixes for the docno rules, see _tie_keys)."""
    if x.key != y.key:
        return x.key < y.key
    if ties == RULE_DOCNO_DESC:
        return _compare_docno(x.entry, y.entry) > 0
    if ties == RULE_DOCNO_ASC:
        return _compare_docno(x.entry, y.entry) < 0
    if ties == KEY_ONLY:
        return False
    return x.entry.row < y.entry.row


cdef inline void _sort_ranked(Ranked* items, Py_ssize_t n, int ties) noexcept nogil:
    """Quicksort by _before (median of three, insertion sort below 16 items)."""
    cdef Py_ssize_t i, j, low, high, middle
    cdef Ranked pivot, swap
    while n > 16:
        middle = n // 2
        if _before(&items[middle], &items[0], ties):
            swap = items[middle]; items[middle] = items[0]; items[0] = swap
        if _before(&items[n - 1], &items[0], ties):
            swap = items[n - 1]; items[n - 1] = items[0]; items[0] = swap
        if _before(&items[n - 1], &items[middle], ties):
            swap = items[n - 1]; items[n - 1] = items[middle]; items[middle] = swap
        pivot = items[middle]
        low = 0
        high = n - 1
        while low <= high:
            while _before(&items[low], &pivot, ties):
                low += 1
            while _before(&pivot, &items[high], ties):
                high -= 1
            if low <= high:
                swap = items[low]; items[low] = items[high]; items[high] = swap
                low += 1
                high -= 1
        # recurse into the smaller part, loop on the larger one
        if high + 1 < n - low:
            _sort_ranked(items, high + 1, ties)
            items = items + low
            n = n - low
        else:
            _sort_ranked(items + low, n - low, ties)
            n = high + 1
    for i in range(1, n):
        pivot = items[i]
        j = i
        while j > 0 and _before(&pivot, &items[j - 1], ties):
            items[j] = items[j - 1]
            j -= 1
        items[j] = pivot


cdef inline void _tie_keys(Ranked* items, Py_ssize_t n, int ties) noexcept nogil:
    """Keys whose ascending order is the tie rule's (equal keys: see _before)."""
    cdef Py_ssize_t i
    cdef Entry* entry
    for i in range(n):
        entry = items[i].entry
        if ties == RULE_DOCNO_DESC:
            items[i].key = ~_docno_prefix(entry.docno, entry.length)
        elif ties == RULE_DOCNO_ASC:
            items[i].key = _docno_prefix(entry.docno, entry.length)
        else:                           # signed order as unsigned
            items[i].key = <uint64_t>entry.key ^ 0x8000000000000000ULL


cdef enum:
    BUCKETS_MIN = 128      # a topic of this many documents not in score order is sorted by
                           # key ranges (_bucket_sort), a smaller one by comparisons


cdef inline void _radix_sort(Ranked* items, Ranked* buffer, Py_ssize_t n) noexcept nogil:
    """Sort ``items`` by key, ascending and stable: least significant byte first, each
    byte a pass from one array to the other (``buffer``, room for ``n``), skipping the
    bytes that every key shares (the high bytes of scores of one magnitude). For the
    crowded buckets of _bucket_sort (many ties, scores bunched apart from a few others):
    linear however the keys fall, where a quicksort's comparisons would not be."""
    cdef Py_ssize_t counts[8][256]
    cdef Py_ssize_t i, d, at, count
    cdef uint64_t key
    cdef Ranked* source = items
    cdef Ranked* target = buffer
    cdef Ranked* swap
    memset(counts, 0, sizeof(counts))
    for i in range(n):
        key = items[i].key
        for d in range(8):
            counts[d][(key >> (8 * d)) & 0xFF] += 1
    for d in range(8):
        if counts[d][(source[0].key >> (8 * d)) & 0xFF] == n:
            continue                    # every key has this byte
        at = 0
        for i in range(256):            # each byte's first place
            count = counts[d][i]
            counts[d][i] = at
            at += count
        for i in range(n):
            key = (source[i].key >> (8 * d)) & 0xFF
            target[counts[d][key]] = source[i]
            counts[d][key] += 1
        swap = source
        source = target
        target = swap
    if source != items:
        memcpy(items, source, n * sizeof(Ranked))


cdef enum:
    BUCKET_BITS = 11       # _bucket_sort: at most 2**11 buckets (about one per item)
    BUCKET_SMALL = 32      # ... a bucket of at most this many items is left to the
                           # insertion pass, a larger one is radix sorted


cdef inline int _bit_length(uint64_t value) noexcept nogil:
    cdef int n = 0
    while value:
        value >>= 1
        n += 1
    return n


cdef inline Ranked* _bucket_sort(Ranked* items, Ranked* buffer, Py_ssize_t n, uint64_t low,
                                 uint64_t high) noexcept nogil:
    """``items`` (keys from ``low`` to ``high``) sorted by key, ascending and stable, in
    ``buffer`` (returned; ``items`` is left as scratch): each item into one of about
    ``n`` buckets of equal key ranges (the key's top bits above ``low``), moved to
    ``buffer`` bucket by bucket (room for ``n``), a bucket of more than BUCKET_SMALL
    items radix sorted (_radix_sort: scores bunched in a few buckets, many ties), then
    one insertion pass (each item is at most a small bucket from its place). Scores
    spread over a range, as a retrieval model's are, fall about one to a bucket: two
    passes over the items instead of the radix sort's six to eight."""
    cdef Py_ssize_t starts[(1 << BUCKET_BITS) + 1]
    cdef Py_ssize_t i, j, b, n_buckets, size
    cdef int bits = 1, shift
    cdef Ranked item
    while (<Py_ssize_t>1 << bits) < n and bits < BUCKET_BITS:
        bits += 1
    shift = _bit_length(high - low) - bits
    if shift < 0:
        shift = 0
    n_buckets = <Py_ssize_t>((high - low) >> shift) + 1
    memset(starts, 0, (n_buckets + 1) * sizeof(Py_ssize_t))
    for i in range(n):
        starts[((items[i].key - low) >> shift) + 1] += 1
    for b in range(n_buckets):
        starts[b + 1] += starts[b]      # starts[b]: bucket b's first place
    for i in range(n):
        b = <Py_ssize_t>((items[i].key - low) >> shift)
        buffer[starts[b]] = items[i]
        starts[b] += 1                  # (then: bucket b's end)
    i = 0
    for b in range(n_buckets):
        size = starts[b] - i
        if size > BUCKET_SMALL:         # (sorted into place in buffer, items as scratch)
            _radix_sort(buffer + i, items + i, size)
        i = starts[b]
    for i in range(1, n):
        item = buffer[i]
        j = i
        while j > 0 and item.key < buffer[j - 1].key:
            buffer[j] = buffer[j - 1]
            j -= 1
        buffer[j] = item
    return buffer


cdef enum:
    MERGED_RUNS = 16       # a topic in at most this many runs of score order (merged
                           # shards) is sorted by merging them (_merge_runs)


cdef inline Ranked* _merge_runs(Ranked* items, Ranked* buffer, Py_ssize_t n) noexcept nogil:
    """``items`` sorted by key (ascending, stable) if they are at most MERGED_RUNS runs
    already in order (a topic of concatenated shards, each in score order), merging
    neighbouring runs pass by pass between ``items`` and ``buffer``: linear per pass,
    log2(runs) passes; the array it ends in is returned. NULL (and nothing moved) for
    more runs."""
    cdef Py_ssize_t bounds[MERGED_RUNS + 1]
    cdef Py_ssize_t n_runs = 1, i, run, a, b, middle, stop, out
    cdef Ranked* source = items
    cdef Ranked* target = buffer
    cdef Ranked* swap
    bounds[0] = 0
    for i in range(1, n):
        if items[i].key < items[i - 1].key:
            if n_runs == MERGED_RUNS:
                return NULL
            bounds[n_runs] = i
            n_runs += 1
    bounds[n_runs] = n
    while n_runs > 1:
        out = 0
        for run in range(0, n_runs, 2):
            if run + 1 == n_runs:       # the odd run out: copied as it is
                memcpy(target + bounds[run], source + bounds[run],
                       (bounds[run + 1] - bounds[run]) * sizeof(Ranked))
                bounds[out] = bounds[run]
                out += 1
                continue
            a, middle, stop = bounds[run], bounds[run + 1], bounds[run + 2]
            b, i = middle, a
            while a < middle and b < stop:
                if source[b].key < source[a].key:
                    target[i] = source[b]
                    b += 1
                else:
                    target[i] = source[a]
                    a += 1
                i += 1
            while a < middle:
                target[i] = source[a]
                a += 1
                i += 1
            while b < stop:
                target[i] = source[b]
                b += 1
                i += 1
            bounds[out] = bounds[run]
            out += 1
        bounds[out] = n
        n_runs = out
        swap = source
        source = target
        target = swap
    return source


cdef inline Ranked* _sort_topic(Ranked* items, Entry* entries, Py_ssize_t n,
                                int ties) noexcept nogil:
    """The entries, score descending, then the tie rule: first by the score's integer
    key (already in order for runs written in score order, the usual case), then each
    group of equal scores by the tie rule. ``items`` has room for ``2 n``: the entries'
    items are made in the first half, the second is the sorts' buffer; the half they
    end sorted in is returned."""
    cdef Py_ssize_t i, start, end
    cdef bint sorted_already = True
    cdef uint64_t low = <uint64_t>-1, high = 0
    cdef Ranked* merged
    for i in range(n):
        items[i].key = descending_key(entries[i].score)
        items[i].entry = &entries[i]
        if i > 0 and items[i].key < items[i - 1].key:
            sorted_already = False
        if items[i].key < low:
            low = items[i].key
        if items[i].key > high:
            high = items[i].key
    if not sorted_already:
        merged = _merge_runs(items, items + n, n)
        if merged != NULL:
            items = merged
        elif n >= BUCKETS_MIN:
            items = _bucket_sort(items, items + n, n, low, high)
        else:
            _sort_ranked(items, n, KEY_ONLY)
    start = 0
    while start < n:
        end = start + 1
        while end < n and items[end].key == items[start].key:
            end += 1
        if end - start > 1:
            _tie_keys(items + start, end - start, ties)
            _sort_ranked(items + start, end - start, ties)
        start = end
    return items


cdef inline int _use_topic(RunState* r, int64_t topic) noexcept nogil:
    """Point ``r.judgments`` at qrels topic ``topic`` (none if < 0) and its index if the
    table keeps one (else n_slots = 0: the ranking joins the topic's judgments itself,
    see _join_judgments). Called once per run topic, in order (noting its qrels topic
    in ``r.judgment_topics``); -1 when out of memory."""
    cdef QrelsState* q = r.qrels
    r.judgments_topic = topic
    if _push_int64(&r.judgment_topics, topic) != 0:
        r.status = NO_MEMORY
        return -1
    r.judgments.slots, r.judgments.n_slots, r.judgments.first_row = NULL, 0, 0
    if topic >= 0:
        _point_at(q, topic, &r.judgments)
        if q.slots != NULL:
            r.judgments.slots = q.slots + q.slot_starts[topic]
            r.judgments.n_slots = q.slot_starts[topic + 1] - q.slot_starts[topic]
    return 0


cdef extern from *:
    """
    #define CG_STAMP_MASK 0xFFFFFFFF00000000ULL
    #define CG_INDEX_MASK 0x00000000FFFFFFFFULL
    """
    const uint64_t STAMP_MASK "CG_STAMP_MASK"
    const uint64_t INDEX_MASK "CG_INDEX_MASK"    # also the most stamps, and entries


cdef inline bint _entry_has(const Entry* entry, const char* docno, Py_ssize_t n,
                            uint64_t hash) noexcept nogil:
    """Whether ``entry`` has the docno ``docno`` (whose _hash is ``hash``)."""
    return entry.hash == hash and entry.length == n and _equal_bytes(entry.docno, docno, n)


cdef inline int64_t _unjoined_judgments(RunState* r, Py_ssize_t n) noexcept nogil:
    """How many judgments the ranking of the current topic, of ``n`` documents, joins
    itself (see _join_judgments): its qrels topic's, unless there is none, or the table
    keeps an index and the topic has more judgments than documents, which are then
    looked up in the index instead (_rank_entries). A topic's judgments are hashed
    into a table that stays in the cache, where a kept index, a table's whole, is too
    big for it: measured, joining took 20% less time with 1,000 documents and 110
    judgments a topic (10,000 topics), the same with 999 and 1,000 (2,000 topics)."""
    cdef int64_t count
    if r.judgments_topic < 0:
        return 0
    count = _judgment_count(r.qrels, r.judgments_topic)
    return count if r.qrels.slots == NULL or count <= n else 0


cdef inline int _note_duplicate(RunState* r, const Entry* entry, int64_t line,
                                int64_t first_line) noexcept nogil:
    """Count a repeated docno (``entry``, at ``line``; its first occurrence at
    ``first_line``), keeping it as the one to name if it is the first by line; -1 when
    out of memory."""
    r.n_duplicates += 1
    if r.n_duplicates > 1 and line >= r.duplicate_line:
        return 0
    r.duplicate_line, r.duplicate_first_line = line, first_line
    r.duplicate_topic = r.ranking_topic
    r.duplicate_docno.size = 0
    if _push_bytes(&r.duplicate_docno, entry.docno, entry.length) != 0:
        r.status = NO_MEMORY
        return -1
    return 0


cdef inline Py_ssize_t _index_pass(RunState* r, Py_ssize_t n, bint check) noexcept nogil:
    """_index_entries' indexing: how many entries the policy drops, -1 on error."""
    cdef Py_ssize_t i, slot, mask, dropped = 0
    cdef int64_t n_items = n + _unjoined_judgments(r, n)
    cdef Entry* entry
    cdef Entry* other
    cdef uint64_t stamp, index = 0
    cdef bint repeated
    if <uint64_t>n_items > INDEX_MASK:   # an index must fit a slot's low half
        r.status = TOO_BIG
        return -1
    r.seen_slots = 16
    while r.seen_slots < 4 * n_items:
        r.seen_slots *= 2
    if _scratch_room(&r.seen, &r.n_seen, r.seen_slots) != 0:   # zeroed: no stamp
        r.status = NO_MEMORY
        return -1
    r.stamp += 1        # slots stamped by earlier topics count as empty: no clearing
    if <uint64_t>r.stamp > INDEX_MASK:  # after 2^32 - 1 topics: clear once, start again
        memset(r.seen, 0, r.n_seen * 8)
        r.stamp = 1
    stamp = <uint64_t>r.stamp << 32
    mask = r.seen_slots - 1
    for i in range(n):
        entry = &r.entries[i]
        slot = entry.hash & mask
        repeated = False
        while (r.seen[slot] & STAMP_MASK) == stamp:
            index = r.seen[slot] & INDEX_MASK
            other = &r.entries[index]
            if check and _entry_has(other, entry.docno, entry.length, entry.hash):
                repeated = True
                break
            slot = (slot + 1) & mask
        if not repeated:
            r.seen[slot] = stamp | <uint64_t>i
            continue
        if _note_duplicate(r, entry, r.lines.data[i], r.lines.data[index]) != 0:
            return -1
        dropped += 1
        if r.duplicates == KEEP_LAST:       # the later one takes the slot
            r.entries[index].judgment = DROPPED
            r.seen[slot] = stamp | <uint64_t>i
        else:
            entry.judgment = DROPPED
    return dropped


cdef inline Py_ssize_t _index_entries(RunState* r, Py_ssize_t n, bint check) noexcept nogil:
    """Put the current topic's ``n`` entries (see _set_entry) in ``r.seen`` under a new
    stamp, in room for its unjoined judgments too (see _join_judgments): open
    addressing by the docno hash, at most a quarter full (a judgment not retrieved
    probes on to an empty slot: fewer steps than at half full). With ``check``, a docno
    the topic already has is noted (_note_duplicate) and dropped by the policy (the
    first occurrence kept, or with KEEP_LAST the last): the entries that stay (and
    their lines) move to the front, numbered again as a topic of that many documents,
    and are indexed again. Returns how many entries stay, -1 on error."""
    cdef Py_ssize_t i, k = 0
    cdef Py_ssize_t dropped = _index_pass(r, n, check)
    if dropped <= 0:
        return n if dropped == 0 else -1
    for i in range(n):
        if r.entries[i].judgment == DROPPED:
            continue
        r.entries[k] = r.entries[i]
        r.lines.data[k] = r.lines.data[i]
        r.entries[k].row = k
        r.entries[k].key = random_tie_key(r.seed, k) if r.ties == RULE_RANDOM else k
        k += 1
    return n - dropped if _index_pass(r, n - dropped, False) == 0 else -1


cdef inline int _join_judgments(RunState* r, Py_ssize_t n) noexcept nogil:
    """Give the current topic's entries, in ``r.seen`` (see _index_entries), their
    qrels rows (Entry.judgment; -1 stays for unjudged) by looking the topic's unjoined
    judgments up there, hashing each docno once (the hashes kept in ``r.scratch``). A
    judgment no entry has goes in as ``n`` + its position, so that a docno judged
    twice in the topic is found either way: QRELS_DUPLICATE (a table finished unchecked
    is checked here, the topics a run uses; a checked one has none). -1 on error."""
    cdef int64_t count = _unjoined_judgments(r, n), position, earlier, other
    cdef Lookup* table = &r.judgments
    cdef Py_ssize_t slot, mask = r.seen_slots - 1, length
    cdef uint64_t stamp = <uint64_t>r.stamp << 32, hash
    cdef const char* docno
    cdef Entry* entry
    cdef bint joined
    if _scratch_room(&r.scratch, &r.n_scratch, count) != 0:
        r.status = NO_MEMORY
        return -1
    for position in range(count):       # first all the hashes: a loop without branches
        r.scratch[position] = _hash(_docno(table.segment, table.first_row + position),
                                    _docno_length(table.segment, table.first_row + position), 0)
    for position in range(count):
        docno = _docno(table.segment, table.first_row + position)
        length = _docno_length(table.segment, table.first_row + position)
        hash = r.scratch[position]
        slot = hash & mask
        joined = False
        while not joined and (r.seen[slot] & STAMP_MASK) == stamp:
            other = <int64_t>(r.seen[slot] & INDEX_MASK)
            if other < n:
                entry = &r.entries[other]
                if _entry_has(entry, docno, length, hash):
                    if entry.judgment >= 0:
                        r.status = QRELS_DUPLICATE
                        return -1
                    entry.judgment = table.first_row + position
                    joined = True
            elif r.scratch[other - n] == hash:
                earlier = table.first_row + other - n
                if _row_has(table.segment, earlier, docno, length):
                    r.status = QRELS_DUPLICATE
                    return -1
            if not joined:
                slot = (slot + 1) & mask
        if not joined:
            r.seen[slot] = stamp | <uint64_t>(n + position)
    return 0


cdef inline int _reserve_entries(RunState* r, Py_ssize_t n) noexcept nogil:
    """Room for ``n`` entries and their Ranked items (their contents are not kept)."""
    if n <= r.n_entries:
        return 0
    free(r.entries)
    free(r.ranked)
    r.entries = <Entry*>cg_malloc(n * sizeof(Entry))
    r.ranked = <Ranked*>cg_malloc(2 * n * sizeof(Ranked))     # (and the sort's buffer)
    if r.entries == NULL or r.ranked == NULL:
        free(r.entries)
        free(r.ranked)
        r.entries, r.ranked, r.n_entries = NULL, NULL, 0
        r.status = NO_MEMORY
        return -1
    r.n_entries = n
    return 0


cdef inline Py_ssize_t _kept(int64_t depth, Py_ssize_t n) noexcept nogil:
    """How many of a topic's ``n`` ranked documents are kept at ``depth`` (-1: all)."""
    return n if depth < 0 or depth > n else depth


cdef inline int _reserve_outputs(RunState* r, Py_ssize_t n) noexcept nogil:
    """Room for ``n`` more ranked rows. Borrowed rows hold exactly the rows counted
    before ranking: more means the run dict changed meanwhile (BAD_LINE, so that the
    reference reader reads it again)."""
    if r.rows_borrowed:
        if r.out_levels.size + n > r.out_levels.capacity:
            r.status = BAD_LINE
            return -1
        return 0
    if _reserve(&r.out_levels.data, &r.out_levels.capacity, r.out_levels.size + n,
                _level_bytes(&r.out_levels)) != 0 \
            or _reserve(<void**>&r.out_judged.data, &r.out_judged.capacity,
                        r.out_judged.size + n, 1) != 0 \
            or (r.keep_scores and _reserve(<void**>&r.out_scores.data, &r.out_scores.capacity,
                                           r.out_scores.size + n, 8) != 0):
        r.status = NO_MEMORY
        return -1
    return 0


cdef inline int _rank_entries(RunState* r, Py_ssize_t n) noexcept nogil:
    """Rank the current topic's ``n`` entries (score descending, then the tie rule),
    cut at the depth, join each with its judgment (joined already, see
    _join_judgments, or looked up in the table's index) and append the ranked rows."""
    cdef Py_ssize_t i, keep, at
    cdef Entry* entry
    cdef int64_t row
    cdef bint judged
    cdef double level
    cdef Ranked* ranked
    cdef bint look_up = r.judgments.n_slots > 0 and _unjoined_judgments(r, n) == 0
    if look_up:                     # a kept index is too big for the cache: ask for
        for i in range(n):          # the slots now, the sort gives them time to arrive
            cg_prefetch_read(
                &r.judgments.slots[_first_slot(r.entries[i].hash, r.judgments.n_slots)])
    ranked = _sort_topic(r.ranked, r.entries, n, r.ties)
    keep = _kept(r.depth, n)
    if _reserve_outputs(r, keep) != 0:
        return -1
    if _push_int64(&r.counts, keep) != 0:
        r.status = NO_MEMORY
        return -1
    at = r.out_levels.size
    for i in range(keep):
        entry = ranked[i].entry
        row = _lookup_find(&r.judgments, entry.docno, entry.length, entry.hash) \
            if look_up else entry.judgment
        level = _level_at(&r.qrels.relevance, row) if row >= 0 else 0.0
        judged = row >= 0 and level >= 0.0
        _set_level(&r.out_levels, at + i, level)       # negative: pooled, not judged
        r.out_judged.data[at + i] = judged
    if r.keep_scores:
        for i in range(keep):
            r.out_scores.data[at + i] = ranked[i].entry.score
        r.out_scores.size += keep
    r.out_levels.size += keep
    r.out_judged.size += keep
    return 0


cdef inline void _set_entry(RunState* r, Py_ssize_t i, const char* docno, Py_ssize_t n,
                            double score) noexcept nogil:
    """Entry ``i`` of the topic being ranked: its docno (hashed), score and tie key."""
    cdef Entry* entry = &r.entries[i]
    entry.score = score
    entry.docno = docno
    entry.length = n
    entry.row = i
    entry.key = random_tie_key(r.seed, i) if r.ties == RULE_RANDOM else i
    entry.hash = _hash(docno, n, 0)
    entry.judgment = -1


cdef inline void _clear_collected(RunState* r) noexcept nogil:
    """Empty the documents collected (a topic's in feed, a batch's in add_dict)."""
    r.docnos.size = 0
    r.doc_starts.size = 1
    r.scores.size = 0
    r.lines.size = 0


cdef inline int _rank_batch(RunState* r) noexcept nogil:
    """Rank the topics add_dict collected (their documents one after another in
    ``r.docnos``, ``r.doc_starts`` and ``r.scores``; a dict's keys are distinct, so
    no duplicate check), each against its qrels topic; -1 on error."""
    cdef Py_ssize_t b, i, first = 0, n
    for b in range(r.batch_ends.size):
        n = r.batch_ends.data[b] - first
        if _use_topic(r, r.batch_judgments.data[b]) != 0 or _reserve_entries(r, n) != 0:
            return -1
        for i in range(n):
            _set_entry(r, i, r.docnos.data + r.doc_starts.data[first + i],
                       r.doc_starts.data[first + i + 1] - r.doc_starts.data[first + i],
                       r.scores.data[first + i])
        if (_unjoined_judgments(r, n) > 0 and (_index_entries(r, n, False) < 0
                                            or _join_judgments(r, n) != 0)) \
                or _rank_entries(r, n) != 0:
            return -1
        first += n
    r.batch_judgments.size = 0
    r.batch_ends.size = 0
    _clear_collected(r)
    return 0


cdef inline int _rank_current(RunState* r) noexcept nogil:
    """Rank the topic collected from the file: check duplicates, join, rank."""
    cdef Py_ssize_t n = r.scores.size, i
    if r.current < 0:
        return 0
    if _reserve_entries(r, n) != 0:
        return -1
    for i in range(n):
        _set_entry(r, i, r.docnos.data + r.doc_starts.data[i],
                   r.doc_starts.data[i + 1] - r.doc_starts.data[i], r.scores.data[i])
    r.ranking_topic = r.current
    n = _index_entries(r, n, True)
    if n < 0 or _join_judgments(r, n) != 0 or _rank_entries(r, n) != 0:
        return -1
    _clear_collected(r)
    return 0


cdef inline Py_ssize_t _load_group(RunState* r, Held* held, Py_ssize_t group) noexcept nogil:
    """The lines held for run topic ``group`` (see _held.pxd) as the entries (pointing
    into the held records, in input order) and lines of the topic being ranked: how
    many, -1 when out of memory."""
    cdef Group* g = &held.groups[group]
    cdef Py_ssize_t n = g.n, i, length
    cdef const char* docno
    cdef double score
    cdef int64_t line
    cdef Reading reading
    if _reserve_entries(r, n) != 0:
        return -1
    if _reserve(<void**>&r.lines.data, &r.lines.capacity, n, 8) != 0:
        r.status = NO_MEMORY
        return -1
    if group + 1 < held.n_groups and held.groups[group + 1].head != NULL:
        cg_prefetch_read(held.groups[group + 1].head)    # (the next topic's first chunk)
    _start_reading(g, &reading)
    for i in range(n):
        _next_record(&reading, &docno, &length, &score, &line)
        _set_entry(r, i, docno, length, score)
        r.lines.data[i] = line
    r.ranking_topic = group
    return n


cdef inline int _rank_group(RunState* r, Held* held, Strings* topics,
                            Py_ssize_t group) noexcept nogil:
    """Rank the lines held for run topic ``group`` (named in ``topics``): as a topic
    collected from a file. -1 on error."""
    cdef Py_ssize_t n
    if _use_topic(r, _strings_find_after(&r.qrels.topics, r.judgments_topic,
                                         _strings_text(topics, group),
                                         _strings_length(topics, group))) != 0:
        return -1
    n = _load_group(r, held, group)
    if n >= 0:
        n = _index_entries(r, n, True)
    if n < 0 or _join_judgments(r, n) != 0 or _rank_entries(r, n) != 0:
        return -1
    return 0
