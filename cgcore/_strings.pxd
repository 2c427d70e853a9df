"""Interned strings: each distinct byte string stored once in an arena and numbered in
order of arrival, found again by an open-addressing hash table (topic ids, docnos of a
run dict, group ids). Inline, for the readers that cimport them.
"""
from libc.stdint cimport int64_t, uint64_t, uint8_t, uint32_t
from libc.stdlib cimport free
from libc.string cimport memcpy

from cgcore._buffers cimport (Bytes, Int64s, _equal_bytes, _push_bytes, _push_int64,
                              cg_calloc)
from cgcore._prefetch cimport cg_prefetch_read
from cgcore._rank_keys cimport mix


cdef inline uint64_t _hash(const char* s, Py_ssize_t n, uint64_t seed) noexcept nogil:
    """Eight bytes at a time, each word mixed in (splitmix64's finaliser); the last
    1 to 8 bytes read as two overlapping 4-byte words, or 3 bytes when shorter (as
    wyhash does), so every byte counts; the length is mixed in first."""
    cdef uint64_t h = seed ^ (<uint64_t>n * 0x9E3779B97F4A7C15ULL), word = 0
    cdef uint32_t low, high
    while n > 8:
        memcpy(&word, s, 8)
        h = mix(h ^ word)
        s += 8
        n -= 8
    if n >= 4:
        memcpy(&low, s, 4)
        memcpy(&high, s + n - 4, 4)
        word = (<uint64_t>high << 32) | low
    elif n > 0:
        word = (<uint64_t>(<uint8_t>s[0]) << 16) | (<uint64_t>(<uint8_t>s[n >> 1]) << 8) \
            | <uint8_t>s[n - 1]
    else:
        word = 0
    return mix(h ^ word)


cdef inline uint64_t _tag(uint64_t hash) noexcept nogil:
    """The part of a hash kept in a hash table's slot (a Strings or Lookup slot)."""
    return hash & 0xFFFFFFFF00000000ULL


cdef inline Py_ssize_t _first_slot(uint64_t hash, Py_ssize_t n_slots) noexcept nogil:
    """Where a probe for ``hash`` (or its _tag: the same bits) starts in a hash table of
    ``n_slots`` slots (a Strings or Lookup table)."""
    return <Py_ssize_t>((hash >> 32) & <uint64_t>(n_slots - 1))


cdef struct Strings:
    Bytes arena
    Int64s starts          # string i is arena[starts[i]:starts[i + 1]]
    uint64_t* slots        # open addressing: tag | (string index + 1), 0 = empty
    Py_ssize_t n_slots     # a power of two
    Py_ssize_t spread      # slots per string, at least (2; 4 where lines look strings up
                           # in no order: the ranker's topics of more than 8 bytes, whose
                           # first slot then holds them nine times in ten)


# A string's tag is its hash's upper 32 bits: it chooses the first slot, and a probe
# reads a string's bytes only where the tags match (a miss, as when a string is added,
# stays in the slots), and the table grows without hashing the strings again.
cdef extern from *:
    """
    #define CG_MAX_STRINGS 0xFFFFFFFEULL
    """
    const uint64_t MAX_STRINGS "CG_MAX_STRINGS"    # index + 1 fits a slot's low half


cdef inline int _strings_init(Strings* s) noexcept nogil:
    if _push_int64(&s.starts, 0) != 0:
        return -1
    s.n_slots = 64
    s.spread = 2
    s.slots = <uint64_t*>cg_calloc(s.n_slots, 8)
    return 0 if s.slots != NULL else -1


cdef inline void _strings_free(Strings* s) noexcept nogil:
    free(s.arena.data)
    free(s.starts.data)
    free(s.slots)


cdef inline Py_ssize_t _strings_count(Strings* s) noexcept nogil:
    return s.starts.size - 1


cdef inline const char* _strings_text(Strings* s, int64_t index) noexcept nogil:
    return s.arena.data + s.starts.data[index]


cdef inline Py_ssize_t _strings_length(Strings* s, int64_t index) noexcept nogil:
    return s.starts.data[index + 1] - s.starts.data[index]


cdef inline bint _strings_equal(Strings* s, int64_t index, const char* text,
                                Py_ssize_t n) noexcept nogil:
    """Whether string ``index`` (which must exist) is ``text``."""
    return _strings_length(s, index) == n and _equal_bytes(_strings_text(s, index), text, n)


cdef inline int _strings_grow(Strings* s) noexcept nogil:
    """Twice the slots, each string placed by the tag its slot holds."""
    cdef Py_ssize_t n = s.n_slots * 2, i, slot
    cdef uint64_t* slots = <uint64_t*>cg_calloc(n, 8)
    if slots == NULL:
        return -1
    for i in range(s.n_slots):
        if s.slots[i] != 0:
            slot = _first_slot(s.slots[i], n)
            while slots[slot] != 0:
                slot = (slot + 1) & (n - 1)
            slots[slot] = s.slots[i]
    free(s.slots)
    s.slots = slots
    s.n_slots = n
    return 0


cdef inline int64_t _strings_probe(Strings* s, const char* text, Py_ssize_t n, uint64_t tag,
                                   Py_ssize_t* slot) noexcept nogil:
    """The index of ``text`` (of ``tag``), or -1 with ``slot`` at the empty slot where
    it would go."""
    cdef int64_t index
    slot[0] = _first_slot(tag, s.n_slots)
    while s.slots[slot[0]] != 0:
        if _tag(s.slots[slot[0]]) == tag:
            index = <int64_t>(s.slots[slot[0]] & 0xFFFFFFFFULL) - 1
            if _strings_equal(s, index, text, n):
                return index
        slot[0] = (slot[0] + 1) & (s.n_slots - 1)
    return -1


cdef inline int64_t _strings_find(Strings* s, const char* text, Py_ssize_t n) noexcept nogil:
    """The index of ``text``, or -1."""
    cdef Py_ssize_t slot
    return _strings_probe(s, text, n, _tag(_hash(text, n, 0)), &slot)


cdef inline int64_t _strings_find_after(Strings* s, int64_t previous, const char* text,
                                        Py_ssize_t n) noexcept nogil:
    """The index of ``text``, or -1; tried first as the string after ``previous`` (a
    run usually lists its topics in the qrels' order), so that the usual lookup
    compares bytes next to the last ones compared instead of hashing."""
    if 0 <= previous + 1 < _strings_count(s) and _strings_equal(s, previous + 1, text, n):
        return previous + 1
    return _strings_find(s, text, n)


cdef inline int64_t _strings_add(Strings* s, const char* text, Py_ssize_t n) noexcept nogil:
    """The index of ``text``, interning it if new; -2 when out of memory, -3 past
    MAX_STRINGS (see _stop_code)."""
    return _strings_add_tagged(s, text, n, _tag(_hash(text, n, 0)))


cdef inline int64_t _strings_add_tagged(Strings* s, const char* text, Py_ssize_t n,
                                        uint64_t tag) noexcept nogil:
    """_strings_add for ``text`` whose _tag(_hash(...)) is ``tag``, computed before
    (and its slot fetched ahead, see _prefetch_slot)."""
    cdef Py_ssize_t slot
    cdef int64_t index = _strings_probe(s, text, n, tag, &slot)
    if index >= 0:
        return index
    if <uint64_t>_strings_count(s) >= MAX_STRINGS:
        return -3
    if s.spread * (_strings_count(s) + 1) > s.n_slots:
        if _strings_grow(s) != 0:
            return -2
        _strings_probe(s, text, n, tag, &slot)      # its empty slot in the new table
    if _push_bytes(&s.arena, text, n) != 0 or _push_int64(&s.starts, s.arena.size) != 0:
        return -2
    index = _strings_count(s) - 1
    s.slots[slot] = tag | <uint64_t>(index + 1)
    return index


cdef inline int64_t _strings_add_new(Strings* s, const char* text, Py_ssize_t n) noexcept nogil:
    """Intern ``text`` if it is new: its index; -1 if it was there already, -2 when out
    of memory, -3 past MAX_STRINGS."""
    cdef Py_ssize_t before = _strings_count(s)
    cdef int64_t index = _strings_add(s, text, n)
    return -1 if 0 <= index < before else index


cdef inline void _prefetch_slot(Strings* s, uint64_t tag) noexcept nogil:
    """Ask for the slot a lookup of ``tag`` starts at (see _strings_add_tagged), so that
    it is in the cache when the lookup comes, some lines later."""
    cg_prefetch_read(&s.slots[_first_slot(tag, s.n_slots)])


cdef inline list _strings_list(Strings* s):
    cdef Py_ssize_t i
    return [s.arena.data[s.starts.data[i]:s.starts.data[i + 1]].decode("utf-8")
            for i in range(_strings_count(s))]


# Short keys: a cache of a Strings' indices for strings of at most 8 bytes, found by
# their bytes as one word (no hash of the bytes, no read of the arena): where every
# line of a run in no order looks its topic up, the lookup that waits on no memory but
# its slot (asked for ahead, _short_prefetch). A key's word is cg_prefix_word8 of its
# bytes (8 bytes readable from its start); an empty slot has length 0.

cdef struct ShortKey:
    uint64_t word
    uint32_t length
    uint32_t index


cdef struct ShortKeys:
    ShortKey* slots
    Py_ssize_t n_slots         # a power of two (0: none yet), at most a quarter full
    int shift                  # 64 - log2(n_slots): a slot is a product's top bits
    Py_ssize_t count


cdef inline Py_ssize_t _short_slot(const ShortKeys* k, uint64_t word,
                                   Py_ssize_t length) noexcept nogil:
    """Where the probe for a key starts: the top bits of a product of its word (every
    byte of the word moves them)."""
    return <Py_ssize_t>(((word + <uint64_t>length) * 0x9E3779B97F4A7C15ULL) >> k.shift)


cdef inline void _short_prefetch(const ShortKeys* k, uint64_t word,
                                 Py_ssize_t length) noexcept nogil:
    if k.n_slots:
        cg_prefetch_read(&k.slots[_short_slot(k, word, length)])


cdef inline int64_t _short_find(const ShortKeys* k, uint64_t word,
                                Py_ssize_t length) noexcept nogil:
    """The index cached for the key, or -1."""
    cdef Py_ssize_t slot
    if not k.n_slots:
        return -1
    slot = _short_slot(k, word, length)
    while k.slots[slot].length:
        if k.slots[slot].word == word and k.slots[slot].length == length:
            return k.slots[slot].index
        slot = (slot + 1) & (k.n_slots - 1)
    return -1


cdef inline void _short_put(ShortKeys* k, uint64_t word, Py_ssize_t length,
                            int64_t index) noexcept nogil:
    """Place a key not in the table (there must be an empty slot)."""
    cdef Py_ssize_t slot = _short_slot(k, word, length)
    while k.slots[slot].length:
        slot = (slot + 1) & (k.n_slots - 1)
    k.slots[slot].word = word
    k.slots[slot].length = <uint32_t>length
    k.slots[slot].index = <uint32_t>index
    k.count += 1


cdef inline int _short_add(ShortKeys* k, uint64_t word, Py_ssize_t length,
                           int64_t index) noexcept nogil:
    """Cache ``index`` for a key not cached (``length`` 1 to 8, ``index`` below
    MAX_STRINGS), the table grown to stay at most a quarter full; -1 when out of
    memory (then nothing changed)."""
    cdef ShortKey* old = k.slots
    cdef Py_ssize_t n_old = k.n_slots, i
    cdef ShortKey* grown
    if 4 * (k.count + 1) > k.n_slots:
        grown = <ShortKey*>cg_calloc(2 * n_old if n_old else 256, sizeof(ShortKey))
        if grown == NULL:
            return -1
        k.slots, k.n_slots, k.count = grown, 2 * n_old if n_old else 256, 0
        k.shift = 64
        i = k.n_slots
        while i > 1:
            i >>= 1
            k.shift -= 1
        for i in range(n_old):
            if old[i].length:
                _short_put(k, old[i].word, old[i].length, old[i].index)
        free(old)
    _short_put(k, word, length, index)
    return 0
