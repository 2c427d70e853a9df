"""The qrels table's layout and its per-topic docno index: what the ranker (_trec.pyx)
reads while it joins a run topic with its judgments. Inline, so that the lookups compile
into the ranker's loops (and its allocations go through the ranker's _alloc.h record).
"""
from libc.stdint cimport int64_t, uint64_t, uint8_t, uint32_t
from libc.stdlib cimport free

from cgcore._buffers cimport Bytes, Int64s, Levels, UInt32s, _equal_bytes, cg_calloc
from cgcore._strings cimport Strings, _first_slot, _hash, _tag


cdef struct Segment:        # the docnos of the table's rows first_row, first_row + 1, ...
    Bytes docnos           # docno of its row r: docnos[doc_starts[r]:doc_starts[r + 1]]
    UInt32s doc_starts     # (so a segment holds at most MAX_SEGMENT_BYTES of docnos)
    int64_t first_row


cdef struct QrelsState:
    Strings topics
    Segment* segments      # the rows' docnos: one segment per part read (an appended
    Py_ssize_t n_segments  # table's become the next, without a copy); once finished, a
                           # topic's rows are all in one segment
    Int64s stretch_topics  # (until finished) stretch i: rows stretch_starts[i] to the next
    Int64s stretch_starts  # stretch's start, all of topic stretch_topics[i]
    Levels relevance
    Int64s comment_rows    # a comment line came before data row r, for each r here (in
                           # order; so that a row's line is known without storing it)
    int64_t* by_topic      # while finishing: grouped position -> row as read (NULL: the same)
    int64_t* topic_starts  # once finished, the rows are grouped by topic (file order
                           # within a topic): topic t has rows topic_starts[t]:[t + 1]
    int64_t* slot_starts   # an indexed table keeps the index of every topic t:
    uint64_t* slots        # slots[slot_starts[t]:slot_starts[t + 1]] (else NULL)
    int64_t lines_seen     # physical lines fed so far
    bint unchecked         # finished without the duplicate check: the rankers check
                           # the topics they join, and check_unused_judgments the rest
                           # (comment_rows and by_topic are kept until then, to name a
                           # duplicate's lines)
    int status
    int64_t status_line
    Py_ssize_t stop_offset # BAD_LINE from feed: where the line starts in the block fed
    bint keep_lines        # note each row's line when grouping (row_lines, grouped order)
    int64_t* row_lines
    int64_t n_duplicates   # once checked (see _find_duplicates): the rows that repeat a
    int64_t duplicate_line         # docno of their topic; the first by line, its line,
    int64_t duplicate_first_line   # the line of the docno's first occurrence, its topic
    int64_t duplicate_topic        # and docno
    Bytes duplicate_docno
    size_t failed_bytes    # NO_MEMORY: what the request that failed asked for (0: unknown)
    Py_ssize_t max_line    # a longer line (bytes, without the newline) stops with BAD_LINE


# One topic's judgments index: docno -> qrels row, by open addressing. Only the
# docno hash's upper 32 bits (its tag) are used: they choose the first slot, and a
# slot holds them (so that a probe rarely reads a docno that does not match) and the
# judgment's position within the topic + 1; 0 = empty. The judgments are hashed as
# their topic is indexed (keeping each one's hash from the read cost 4 bytes a
# judgment, 44 MB at L, whose writing and page faults cost more than the hashing).
cdef struct Lookup:
    uint64_t* slots
    Py_ssize_t n_slots     # a power of two; 0 for a topic without judgments
    int64_t first_row      # the topic's row at position 0
    Segment* segment       # the segment holding the topic's rows


cdef inline Segment* _segment_of(QrelsState* q, int64_t row) noexcept nogil:
    """The segment holding ``row`` (a table has a segment per part it was read in)."""
    cdef Py_ssize_t k = q.n_segments - 1
    while k > 0 and q.segments[k].first_row > row:
        k -= 1
    return &q.segments[k]


cdef inline const char* _docno(Segment* segment, int64_t row) noexcept nogil:
    """The docno of the table's row ``row``, which ``segment`` holds."""
    return segment.docnos.data + segment.doc_starts.data[row - segment.first_row]


cdef inline Py_ssize_t _docno_length(Segment* segment, int64_t row) noexcept nogil:
    cdef int64_t local = row - segment.first_row
    return segment.doc_starts.data[local + 1] - segment.doc_starts.data[local]


cdef inline bint _row_has(Segment* segment, int64_t row, const char* docno,
                          Py_ssize_t n) noexcept nogil:
    """Whether the table's row ``row`` (in ``segment``) has the docno ``docno``."""
    return _docno_length(segment, row) == n and _equal_bytes(_docno(segment, row), docno, n)


cdef inline void _point_at(QrelsState* q, int64_t topic, Lookup* table) noexcept nogil:
    """Where ``table`` (of a finished table's topic ``topic``) finds its rows."""
    table.first_row = q.topic_starts[topic]
    table.segment = _segment_of(q, table.first_row)


cdef inline Py_ssize_t _index_size(int64_t n_judgments) noexcept nogil:
    """Slots for a topic's index: a power of two, at least 16 and twice the judgments."""
    cdef Py_ssize_t n = 16
    while n < 2 * n_judgments:
        n *= 2
    return n


cdef inline int64_t _judgment_count(QrelsState* q, int64_t topic) noexcept nogil:
    return q.topic_starts[topic + 1] - q.topic_starts[topic]


cdef inline int64_t _lookup_probe(Lookup* table, const char* docno, Py_ssize_t n,
                                  uint64_t hash, Py_ssize_t* slot) noexcept nogil:
    """The qrels row of ``docno`` (whose _hash is ``hash``) in the table's topic, or -1
    with ``slot`` at the empty slot where it would go."""
    cdef uint64_t value
    cdef int64_t row
    slot[0] = _first_slot(hash, table.n_slots)
    while True:
        value = table.slots[slot[0]]
        if value == 0:
            return -1
        if _tag(value) == _tag(hash):
            row = table.first_row + <int64_t>(value & 0xFFFFFFFFULL) - 1
            if _row_has(table.segment, row, docno, n):
                return row
        slot[0] = (slot[0] + 1) & (table.n_slots - 1)


cdef inline int64_t _lookup_find(Lookup* table, const char* docno, Py_ssize_t n,
                                 uint64_t hash) noexcept nogil:
    """The qrels row of ``docno`` (whose _hash is ``hash``) in the table's topic, or -1."""
    cdef Py_ssize_t slot
    if table.n_slots == 0:
        return -1
    return _lookup_probe(table, docno, n, hash, &slot)


cdef inline int64_t _index_topic(QrelsState* q, int64_t topic, Lookup* table) noexcept nogil:
    """Fill a zeroed ``table`` (pointed at ``topic``, see _point_at) with the topic's
    judgments. Returns -1 if fine, or the row of a docno already in the topic."""
    cdef int64_t position, row
    cdef Py_ssize_t slot, n
    cdef uint64_t hash
    cdef const char* docno
    cdef Segment* segment = table.segment
    for position in range(_judgment_count(q, topic)):
        row = table.first_row + position
        docno, n = _docno(segment, row), _docno_length(segment, row)
        hash = _hash(docno, n, 0)
        if _lookup_probe(table, docno, n, hash, &slot) >= 0:
            return row
        table.slots[slot] = _tag(hash) | <uint64_t>(position + 1)
    return -1


cdef inline int _scratch_room(uint64_t** data, Py_ssize_t* capacity, Py_ssize_t n) noexcept nogil:
    """Room for ``n`` values in a scratch array reused from one topic to the next (its
    contents are not kept when it grows; new memory is zeroed); -1 when out of memory."""
    if n <= capacity[0]:
        return 0
    free(data[0])
    data[0] = <uint64_t*>cg_calloc(n, 8)
    if data[0] == NULL:
        capacity[0] = 0
        return -1
    capacity[0] = n
    return 0


cdef inline int _scratch_index(QrelsState* q, int64_t topic, Lookup* table, uint64_t** slots,
                        Py_ssize_t* capacity) noexcept nogil:
    """``table`` = a fresh index of ``topic`` in the reusable ``slots``; -2 when out of
    memory, else as _index_topic."""
    cdef Py_ssize_t n = _index_size(_judgment_count(q, topic)), i
    if _scratch_room(slots, capacity, n) != 0:
        return -2
    for i in range(n):
        slots[0][i] = 0
    table.slots, table.n_slots = slots[0], n
    _point_at(q, topic, table)
    return _index_topic(q, topic, table)


cdef inline int64_t _check_topics(QrelsState* q, Py_ssize_t first, Py_ssize_t stop,
                           const uint8_t* skip) noexcept nogil:
    """Check the (grouped) topics [first, stop) for duplicate docnos, but those with
    ``skip[t]`` set (unless NULL): -1 if there are none, the grouped row of the first
    found, -2 when out of memory, or -3 for a topic past what a Lookup holds. Only reads the table, so ranges can be checked
    side by side."""
    cdef Py_ssize_t capacity = 0, t
    cdef int64_t found = -1
    cdef uint64_t* scratch = NULL
    cdef Lookup table
    for t in range(first, stop):
        if skip != NULL and skip[t]:
            continue
        if _judgment_count(q, t) >= 0xFFFFFFFFLL:
            found = -3                  # a Lookup slot holds a position + 1 in 32 bits
        else:
            found = _scratch_index(q, t, &table, &scratch, &capacity)
        if found != -1:
            break
    free(scratch)
    return found


cdef class QrelsTable:
    cdef QrelsState state
    cdef bint finished
    cdef readonly bint indexed
    cdef object grouped_owners     # once grouped(): the buffers that own topic_starts and
    cdef bint handed_over          # relevance (so those arrays outlive the table; a C
                                   # flag, as __dealloc__ must not read object fields)

    cdef int64_t _check_duplicates(self, int threads) except? -4
