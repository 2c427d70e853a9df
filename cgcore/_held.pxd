# A run's lines held by topic until the input ends: what the ranker keeps of a run whose
# topics are not contiguous (shuffled lines, concatenated shards, a stream that may be
# either), so that every topic is ranked once all its lines are in. Each topic holds a
# list of chunks; a chunk holds records packed one after another:
#
#     line delta (2 bytes, see _put_delta) | docno length (varint) | docno bytes
#     | score (8 bytes)
#
# the line delta counted from the chunk's previous record (the first record's from the
# chunk's first_line: 0). A record costs its docno, the score and 3-4 bytes, about half
# the line's text. Where the next record goes (the last chunk's end) is kept in the
# topic's Group, so that holding a line touches the group and the chunk's end only.
# Chunks are carved from slabs (SLAB_BYTES each, freed together; on huge pages where the
# system gives them, see cg_slab_malloc in _alloc.h) and grow with their topic
# (FIRST_CHUNK bytes, then half as much again as the last, at most MAX_CHUNK), so a topic
# wastes at most the free end of its last chunk (on average a sixth of its records, at
# most half of MAX_CHUNK). A topic's chunks are read back with the next one asked for
# ahead (_prefetch_next). Only nogil C, inline.
from libc.stdint cimport int64_t, uint16_t, uint64_t, uint8_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memset

from cgcore._buffers cimport cg_copy_bytes, cg_malloc, cg_realloc, cg_slab_malloc
from cgcore._prefetch cimport cg_prefetch_read, cg_prefetch_write


cdef enum:
    SLAB_BYTES = 1 << 22       # chunks are carved from slabs of 4 MiB
    FIRST_CHUNK = 64           # record bytes of a topic's first chunk
    MAX_CHUNK = 1024           # ... and of its later ones, at most (unless a record is
                               # larger: then a chunk of its own size)


cdef struct Chunk:
    Chunk* next
    int64_t first_line         # the line of its first record
    Py_ssize_t used            # record bytes written (of the last chunk: see Group.used)
    Py_ssize_t capacity        # record bytes it holds (they follow the header)


cdef struct Group:             # one topic's held lines, in input order
    Chunk* head
    Chunk* tail
    int64_t n                  # records
    bint taken                 # handed out while streaming (RunRanker.take_held): the
                               # topic must not come back
    char* end                  # where the next record goes in the last chunk,
    Py_ssize_t room            # the bytes left there,
    int64_t last_line          # and the line of the last record (the next delta's base)


cdef struct Held:
    Group* groups              # per run topic (the ranker's topic index)
    Py_ssize_t n_groups
    Py_ssize_t groups_capacity
    char** slabs               # every slab allocated (freed with the holder)
    Py_ssize_t n_slabs
    Py_ssize_t slabs_capacity
    char* free_at              # the unused end of the last slab
    Py_ssize_t free_left
    int64_t n_records


cdef inline char* _records(Chunk* chunk) noexcept nogil:
    return <char*>chunk + sizeof(Chunk)


cdef inline int _add_slab(Held* h, char* slab) noexcept nogil:
    cdef char** grown
    cdef Py_ssize_t capacity
    if h.n_slabs == h.slabs_capacity:
        capacity = 2 * h.slabs_capacity if h.slabs_capacity else 16
        grown = <char**>cg_realloc(h.slabs, capacity * sizeof(char*))
        if grown == NULL:
            return -1
        h.slabs, h.slabs_capacity = grown, capacity
    h.slabs[h.n_slabs] = slab
    h.n_slabs += 1
    return 0


cdef inline Chunk* _new_chunk(Held* h, Py_ssize_t capacity, int64_t line) noexcept nogil:
    """A chunk of ``capacity`` record bytes, its first record at ``line``; NULL when
    out of memory. A chunk bigger than a quarter slab gets a slab of its own."""
    cdef Py_ssize_t size = (sizeof(Chunk) + capacity + 7) & ~(<Py_ssize_t>7)
    cdef char* memory
    cdef Chunk* chunk
    if size > SLAB_BYTES // 4:
        memory = <char*>cg_malloc(size)
        if memory == NULL or _add_slab(h, memory) != 0:
            free(memory)
            return NULL
    else:
        if size > h.free_left:
            memory = <char*>cg_slab_malloc(SLAB_BYTES)
            if memory == NULL or _add_slab(h, memory) != 0:
                free(memory)
                return NULL
            h.free_at, h.free_left = memory, SLAB_BYTES
        memory = h.free_at
        h.free_at += size
        h.free_left -= size
    chunk = <Chunk*>memory
    chunk.next = NULL
    chunk.first_line = line
    chunk.used = 0
    chunk.capacity = capacity
    return chunk


cdef inline void _seal(Group* g) noexcept nogil:
    """Note in the last chunk how much of it is written (before the group is read or
    linked to another)."""
    if g.tail != NULL:
        g.tail.used = g.tail.capacity - g.room


cdef inline Py_ssize_t _varint_size(uint64_t value) noexcept nogil:
    cdef Py_ssize_t n = 1
    while value >= 0x80:
        value >>= 7
        n += 1
    return n


cdef inline char* _put_varint(char* at, uint64_t value) noexcept nogil:
    while value >= 0x80:
        at[0] = <char>((value & 0x7F) | 0x80)
        value >>= 7
        at += 1
    at[0] = <char>value
    return at + 1


cdef enum:
    LONG_DELTA = 0xFFFF        # a line delta field that says: the delta's 8 bytes follow


cdef inline char* _put_delta(char* at, uint64_t delta) noexcept nogil:
    """A line delta: 2 bytes (native order), or LONG_DELTA and 8 more. Fixed, not a
    varint: a shuffled run's deltas (about as many lines as it has topics) would
    change a varint's length from record to record, and each change cost a
    mispredicted branch where it is written and where it is read."""
    cdef uint16_t short_delta = <uint16_t>delta if delta < LONG_DELTA else LONG_DELTA
    memcpy(at, &short_delta, 2)
    if delta < LONG_DELTA:
        return at + 2
    memcpy(at + 2, &delta, 8)
    return at + 10


cdef inline Py_ssize_t _delta_size(uint64_t delta) noexcept nogil:
    return 2 if delta < LONG_DELTA else 10


cdef inline const char* _get_delta(const char* at, uint64_t* delta) noexcept nogil:
    cdef uint16_t short_delta
    memcpy(&short_delta, at, 2)
    if short_delta != LONG_DELTA:
        delta[0] = short_delta
        return at + 2
    memcpy(delta, at + 2, 8)
    return at + 10


cdef inline const char* _get_varint(const char* at, uint64_t* value) noexcept nogil:
    cdef uint64_t result = 0
    cdef int shift = 0
    while (<uint8_t>at[0]) & 0x80:
        result |= <uint64_t>((<uint8_t>at[0]) & 0x7F) << shift
        shift += 7
        at += 1
    value[0] = result | (<uint64_t>(<uint8_t>at[0]) << shift)
    return at + 1


cdef inline int _hold_group(Held* h, Py_ssize_t group) noexcept nogil:
    """Make room for groups up to ``group`` (new ones empty); -1 when out of memory."""
    cdef Py_ssize_t capacity
    cdef Group* grown
    if group < h.n_groups:
        return 0
    if group >= h.groups_capacity:
        capacity = h.groups_capacity * 2 if h.groups_capacity else 256
        while capacity <= group:
            capacity *= 2
        grown = <Group*>cg_realloc(h.groups, capacity * sizeof(Group))
        if grown == NULL:
            return -1
        h.groups, h.groups_capacity = grown, capacity
    memset(&h.groups[h.n_groups], 0, (group + 1 - h.n_groups) * sizeof(Group))
    h.n_groups = group + 1
    return 0


cdef inline void _put_record(Held* h, Group* g, const char* docno, Py_ssize_t n,
                             double score, int64_t line) noexcept nogil:
    """Write a record at the end of ``g``'s last chunk, which has room for it."""
    cdef char* at = _put_delta(g.end, <uint64_t>(line - g.last_line))
    at = _put_varint(at, <uint64_t>n)
    cg_copy_bytes(at, docno, n)
    memcpy(at + n, &score, 8)
    at += n + 8
    g.room -= at - g.end
    g.end = at
    g.last_line = line
    g.n += 1
    h.n_records += 1


cdef inline int _hold(Held* h, Py_ssize_t group, const char* docno, Py_ssize_t n,
                      double score, int64_t line) noexcept nogil:
    """Append a record (docno, score, line) to ``group``'s chunks (the group must
    exist, see _hold_group), in a new chunk if the last has no room; -1 when out of
    memory. (The usual record goes by _hold_in_room.)"""
    cdef Group* g = &h.groups[group]
    cdef Chunk* chunk
    cdef Py_ssize_t size, capacity
    size = _delta_size(<uint64_t>(line - g.last_line)) + _varint_size(<uint64_t>n) + n + 8
    if g.tail == NULL or size > g.room:
        capacity = FIRST_CHUNK if g.tail == NULL else g.tail.capacity + g.tail.capacity // 2
        if capacity > MAX_CHUNK:
            capacity = MAX_CHUNK
        if capacity < size:
            capacity = size
        chunk = _new_chunk(h, capacity, line)
        if chunk == NULL:
            return -1
        if g.tail == NULL:
            g.head = chunk
        else:
            _seal(g)
            g.tail.next = chunk
        g.tail, g.end, g.room = chunk, _records(chunk), capacity
        g.last_line = line              # (a chunk's first record: delta 0 from first_line)
    _put_record(h, g, docno, n, score, line)
    return 0


cdef enum:
    RECORD_SLACK = 20          # a record's bytes beyond its docno and score, at most (a
                               # long line delta, 10, and a length's varint, at most 10)


cdef inline bint _hold_in_room(Held* h, Py_ssize_t group, const char* docno, Py_ssize_t n,
                               double score, int64_t line) noexcept nogil:
    """_hold where the last chunk has room for the longest record of this docno: written
    at once, its size known after (the varints not measured first). False (nothing
    done) where it may not fit."""
    cdef Group* g = &h.groups[group]
    if g.room < n + 8 + RECORD_SLACK:
        return False
    _put_record(h, g, docno, n, score, line)
    return True


cdef enum:
    STAGED = 256               # lines staged before they are held (see _hold_staged)
    STAGE_AHEAD = 8            # ... whose group's next record place is fetched this
                               # many records ahead


cdef struct Staged:            # a line parsed, to be held (its docno in the block fed)
    Py_ssize_t group           # its run topic; -1: to be looked up (topic, tag), -2: the
    const char* docno          # previous staged line's
    Py_ssize_t n
    double score
    int64_t line
    const char* topic
    Py_ssize_t topic_length
    uint64_t word              # a topic of up to 8 bytes: cg_prefix_word8 of it (its short
                               # key's slot asked for ahead), else
    uint64_t tag               # the topic's _tag(_hash(...)) (its slot asked for ahead)
    Py_ssize_t offset          # where the line starts in the block fed


cdef inline int _hold_staged(Held* h, Staged* staged, Py_ssize_t n) noexcept nogil:
    """Hold ``n`` staged lines, in order: the groups and the places their records go
    are fetched a few records ahead, so that the cache misses of lines whose topics
    come in no order (a shuffled run: each line's topic a random one of thousands)
    overlap instead of waiting one after another. -1 when out of memory."""
    cdef Py_ssize_t i
    for i in range(n if n < 2 * STAGE_AHEAD else 2 * STAGE_AHEAD):
        cg_prefetch_write(&h.groups[staged[i].group])
    for i in range(n):
        if i + 2 * STAGE_AHEAD < n:
            cg_prefetch_write(&h.groups[staged[i + 2 * STAGE_AHEAD].group])
        if i + STAGE_AHEAD < n:
            cg_prefetch_write(h.groups[staged[i + STAGE_AHEAD].group].end)
        if not _hold_in_room(h, staged[i].group, staged[i].docno, staged[i].n,
                             staged[i].score, staged[i].line) \
                and _hold(h, staged[i].group, staged[i].docno, staged[i].n, staged[i].score,
                          staged[i].line) != 0:
            return -1
    return 0


cdef struct Reading:           # where a walk through a group's records is
    Chunk* chunk
    Py_ssize_t at
    int64_t line


cdef inline void _prefetch_next(const Chunk* chunk) noexcept nogil:
    """Ask for the cache lines of the chunk after ``chunk`` ahead of reading it: a
    group's chunks lie apart, between other topics' chunks, and one chunk is too short
    for the hardware to see a stream in it. Its size is taken from the growth rule (see
    _hold), not from its header, which is not here yet."""
    cdef const char* at = <const char*>chunk.next
    cdef const char* end
    cdef Py_ssize_t capacity = chunk.capacity + chunk.capacity // 2
    if at == NULL:
        return
    end = at + sizeof(Chunk) + (capacity if capacity < MAX_CHUNK else MAX_CHUNK)
    while at < end:
        cg_prefetch_read(at)
        at += 64


cdef inline void _start_reading(Group* g, Reading* reading) noexcept nogil:
    _seal(g)
    reading.chunk = g.head
    reading.at = 0
    reading.line = g.head.first_line if g.head != NULL else 0
    if g.head != NULL:
        _prefetch_next(g.head)


cdef inline void _next_record(Reading* reading, const char** docno, Py_ssize_t* n,
                              double* score, int64_t* line) noexcept nogil:
    """The next record of the walk (there must be one)."""
    cdef const char* at
    cdef uint64_t value
    if reading.at == reading.chunk.used:
        reading.chunk = reading.chunk.next
        reading.at = 0
        reading.line = reading.chunk.first_line
        _prefetch_next(reading.chunk)       # (read while this one is)
    at = _records(reading.chunk) + reading.at
    at = _get_delta(at, &value)
    reading.line += <int64_t>value
    at = _get_varint(at, &value)
    docno[0], n[0] = at, <Py_ssize_t>value
    memcpy(score, at + value, 8)
    line[0] = reading.line
    reading.at = (at + value + 8) - _records(reading.chunk)


cdef inline void _shift_lines(Held* h, int64_t shift) noexcept nogil:
    """Add ``shift`` to the line of every record (a part read on its own, appended
    after parts of that many lines)."""
    cdef Py_ssize_t g
    cdef Chunk* chunk
    if shift == 0:
        return
    for g in range(h.n_groups):
        h.groups[g].last_line += shift
        chunk = h.groups[g].head
        while chunk != NULL:
            chunk.first_line += shift
            chunk = chunk.next
    

cdef inline int _take_slabs(Held* h, Held* other) noexcept nogil:
    """Move ``other``'s slabs to ``h`` (their chunks are now ``h``'s to free); -1 when
    out of memory (then nothing moved)."""
    cdef Py_ssize_t i, capacity
    cdef char** grown
    if h.n_slabs + other.n_slabs > h.slabs_capacity:
        capacity = h.n_slabs + other.n_slabs + 16
        grown = <char**>cg_realloc(h.slabs, capacity * sizeof(char*))
        if grown == NULL:
            return -1
        h.slabs, h.slabs_capacity = grown, capacity
    for i in range(other.n_slabs):
        h.slabs[h.n_slabs + i] = other.slabs[i]
    h.n_slabs += other.n_slabs
    other.n_slabs = 0
    other.free_at, other.free_left = NULL, 0
    return 0


cdef inline void _link_group(Held* h, Py_ssize_t group, Group* more) noexcept nogil:
    """Append the records of ``more`` (whose chunks ``h`` holds) after ``group``'s."""
    cdef Group* g = &h.groups[group]
    if more.head == NULL:
        return
    _seal(more)
    if g.tail == NULL:
        g.head = more.head
    else:
        _seal(g)
        g.tail.next = more.head
    g.tail, g.end, g.room, g.last_line = more.tail, more.end, more.room, more.last_line
    g.n += more.n
    h.n_records += more.n
    more.head = more.tail = NULL
    more.n = 0


cdef inline void _free_slabs(Held* h) noexcept nogil:
    """Free every record (the groups stay, empty)."""
    cdef Py_ssize_t i
    for i in range(h.n_slabs):
        free(h.slabs[i])
    free(h.slabs)
    h.slabs, h.n_slabs, h.slabs_capacity = NULL, 0, 0
    h.free_at, h.free_left, h.n_records = NULL, 0, 0
    for i in range(h.n_groups):
        h.groups[i].head = h.groups[i].tail = NULL
        h.groups[i].n = 0


cdef inline void _held_free(Held* h) noexcept nogil:
    _free_slabs(h)
    free(h.groups)
    memset(h, 0, sizeof(Held))


cdef inline int _hold_again(Held* h, Py_ssize_t group) noexcept nogil:
    """Free every slab but what ``group``'s records need, which are copied into new
    chunks (a topic being collected while the topics before it were handed out); -1
    when out of memory (then nothing changed)."""
    cdef Held kept
    cdef Group* g = &h.groups[group]
    cdef Reading reading
    cdef Py_ssize_t i, n
    cdef const char* docno
    cdef double score
    cdef int64_t line
    cdef char** old_slabs = h.slabs
    cdef Py_ssize_t n_old = h.n_slabs
    memset(&kept, 0, sizeof(Held))
    if _hold_group(&kept, 0) != 0:
        return -1
    if g.n > 0:
        _start_reading(g, &reading)
        for i in range(g.n):
            _next_record(&reading, &docno, &n, &score, &line)
            if _hold(&kept, 0, docno, n, score, line) != 0:
                _held_free(&kept)
                return -1
    for i in range(n_old):
        free(old_slabs[i])
    free(old_slabs)
    h.slabs, h.n_slabs, h.slabs_capacity = kept.slabs, kept.n_slabs, kept.slabs_capacity
    h.free_at, h.free_left = kept.free_at, kept.free_left
    kept.groups[0].taken = g.taken
    h.groups[group] = kept.groups[0]
    h.n_records = kept.groups[0].n
    free(kept.groups)
    return 0
