"""Growable arrays of plain C (bytes, int64, double, uint32, relevance levels) for the
native readers, and handing them to numpy without a copy. Every allocation goes through
_alloc.h, so a failed one stops a reader with NO_MEMORY and the bytes it asked for.

The ``nogil`` helpers are defined here (inline) so that the modules that cimport them
compile them in place; the few that make Python objects live in _buffers.pyx.
"""
from libc.stdint cimport int64_t, uint64_t, int8_t, uint8_t, int32_t, uint32_t
from libc.stdlib cimport free
from libc.string cimport memcpy
from libc.math cimport signbit

cdef extern from "_alloc.h":
    void* cg_malloc(size_t n) noexcept nogil
    void* cg_calloc(size_t count, size_t item) noexcept nogil
    void* cg_realloc(void* old, size_t n) noexcept nogil
    void* cg_slab_malloc(size_t n) noexcept nogil
    size_t cg_take_failed_bytes() noexcept nogil
    size_t cg_set_allocation_limit(size_t n) noexcept nogil

cdef extern from "_scan.h":
    bint cg_equal_bytes(const char* a, const char* b, Py_ssize_t n) noexcept nogil
    void cg_copy_bytes(char* to, const char* from_, Py_ssize_t n) noexcept nogil
    uint64_t cg_prefix_word8(const char* s, Py_ssize_t n) noexcept nogil


cdef struct Bytes:
    char* data
    Py_ssize_t size
    Py_ssize_t capacity

cdef struct Int64s:
    int64_t* data
    Py_ssize_t size
    Py_ssize_t capacity

cdef struct Doubles:
    double* data
    Py_ssize_t size
    Py_ssize_t capacity

cdef struct UInt32s:
    uint32_t* data
    Py_ssize_t size
    Py_ssize_t capacity

cdef struct Levels:         # a relevance level per row: int8 while every level is a
    void* data              # small whole number (see _small_level, the usual graded
    Py_ssize_t size         # levels: an eighth of the memory), else double ("wide",
    Py_ssize_t capacity     # from the first level that is not, see _push_level)
    bint wide


cdef enum:
    LARGE_BYTES = 1 << 20      # a growing array past this size ...
    MAPPED_BYTES = 1 << 25     # ... gets room for at least this many bytes at once


cdef inline Py_ssize_t _large(Py_ssize_t capacity, Py_ssize_t item) noexcept nogil:
    """``capacity``, raised to MAPPED_BYTES (32 MiB) of items for an array past
    LARGE_BYTES. glibc serves a block that large with mmap (its threshold is at most
    32 MiB), so that growing it is an mremap, not a copy, and freeing it gives the
    memory back at once (the arrays of a file read in parts, each a few MiB, would
    otherwise leave holes in the heap). Only the pages written become resident."""
    if capacity * item > LARGE_BYTES and capacity * item < MAPPED_BYTES:
        return (MAPPED_BYTES + item - 1) // item
    return capacity


cdef inline int _reserve(void** data, Py_ssize_t* capacity, Py_ssize_t needed,
                  Py_ssize_t item) noexcept nogil:
    cdef Py_ssize_t new_capacity
    cdef void* grown
    if needed <= capacity[0]:
        return 0
    new_capacity = capacity[0] * 2 if capacity[0] > 0 else 1024
    while new_capacity < needed:
        new_capacity *= 2
    new_capacity = _large(new_capacity, item)
    grown = cg_realloc(data[0], new_capacity * item)
    if grown == NULL:
        return -1
    data[0] = grown
    capacity[0] = new_capacity
    return 0


cdef inline int _extend(void** data, Py_ssize_t* size, Py_ssize_t* capacity, const void* more,
                 Py_ssize_t n, Py_ssize_t item, bint replace=False) noexcept nogil:
    """Append (or with ``replace``, set) ``n`` items of ``item`` bytes, growing the
    array to exactly its new size (see _large); -1 when out of memory."""
    cdef Py_ssize_t at = 0 if replace else size[0], new_capacity
    cdef void* grown
    if n == 0:
        size[0] = at
        return 0
    if at + n > capacity[0]:
        new_capacity = _large(at + n, item)
        grown = cg_realloc(data[0], new_capacity * item)
        if grown == NULL:
            return -1
        data[0], capacity[0] = grown, new_capacity
    memcpy(<char*>data[0] + at * item, more, n * item)
    size[0] = at + n
    return 0


cdef inline bint _equal_bytes(const char* a, const char* b, Py_ssize_t n) noexcept nogil:
    """memcmp(a, b, n) == 0, defined for n == 0 too (where a or b may be NULL)."""
    return cg_equal_bytes(a, b, n)


cdef inline bint _same_bytes(Bytes* a, const char* b, Py_ssize_t n) noexcept nogil:
    """Whether ``a`` holds exactly the ``n`` bytes at ``b``."""
    return a.size == n and cg_equal_bytes(a.data, b, n)


cdef inline int _push_bytes(Bytes* b, const char* s, Py_ssize_t n) noexcept nogil:
    if n == 0:
        return 0        # b.data may still be NULL: memcpy(NULL, s, 0) is undefined
    if _reserve(<void**>&b.data, &b.capacity, b.size + n, 1) != 0:
        return -1
    cg_copy_bytes(b.data + b.size, s, n)
    b.size += n
    return 0


cdef inline int _push_int64(Int64s* a, int64_t value) noexcept nogil:
    if a.size == a.capacity and _reserve(<void**>&a.data, &a.capacity, a.size + 1, 8) != 0:
        return -1
    a.data[a.size] = value
    a.size += 1
    return 0


cdef inline int _push_double(Doubles* a, double value) noexcept nogil:
    if a.size == a.capacity and _reserve(<void**>&a.data, &a.capacity, a.size + 1, 8) != 0:
        return -1
    a.data[a.size] = value
    a.size += 1
    return 0


cdef inline int _push_uint32(UInt32s* a, uint32_t value) noexcept nogil:
    if a.size == a.capacity and _reserve(<void**>&a.data, &a.capacity, a.size + 1, 4) != 0:
        return -1
    a.data[a.size] = value
    a.size += 1
    return 0


cdef inline bint _small_level(double value) noexcept nogil:
    """Whether ``value`` is held exactly as int8: a whole number in [-128, 127], not
    -0.0 (whose sign an int8 would drop)."""
    return -128.0 <= value <= 127.0 and value == <double>(<int8_t>value) \
        and not (value == 0.0 and signbit(value))


cdef inline Py_ssize_t _level_bytes(const Levels* a) noexcept nogil:
    return 8 if a.wide else 1


cdef inline double _level_at(const Levels* a, Py_ssize_t i) noexcept nogil:
    if a.wide:
        return (<double*>a.data)[i]
    return <double>(<int8_t*>a.data)[i]


cdef inline void _set_level(Levels* a, Py_ssize_t i, double value) noexcept nogil:
    """Item ``i`` = ``value`` (which an int8 array must hold exactly, see _small_level)."""
    if a.wide:
        (<double*>a.data)[i] = value
    else:
        (<int8_t*>a.data)[i] = <int8_t>value


cdef inline int _widen(Levels* a) noexcept nogil:
    """Hold the levels as doubles from now on; -1 when out of memory."""
    cdef double* wide = NULL
    cdef Py_ssize_t capacity = 0, i
    if a.wide:
        return 0
    if a.capacity > 0 and _reserve(<void**>&wide, &capacity, a.capacity, 8) != 0:
        return -1
    for i in range(a.size):
        wide[i] = <double>(<int8_t*>a.data)[i]
    free(a.data)
    a.data, a.capacity, a.wide = wide, capacity, True
    return 0


cdef inline int _push_level(Levels* a, double value) noexcept nogil:
    """Append ``value``, widening the array first if it is int8 and ``value`` is not
    small; -1 when out of memory."""
    if not a.wide and not _small_level(value) and _widen(a) != 0:
        return -1
    return _push_small_level(a, value)


cdef inline int _push_small_level(Levels* a, double value) noexcept nogil:
    """Append ``value``, which the array holds as it is (small, see _small_level, or
    the array wide: a one-digit level, say); -1 when out of memory."""
    if a.size == a.capacity and _reserve(&a.data, &a.capacity, a.size + 1,
                                         _level_bytes(a)) != 0:
        return -1
    _set_level(a, a.size, value)
    a.size += 1
    return 0


cdef inline int _extend_levels(Levels* a, Levels* more) noexcept nogil:
    """Append ``more``'s levels (widening ``a`` or ``more`` so that both are held
    alike: wide if either is); -1 when out of memory."""
    if (more.wide and _widen(a) != 0) or (a.wide and _widen(more) != 0):
        return -1
    return _extend(&a.data, &a.size, &a.capacity, more.data, more.size, _level_bytes(a))


cdef inline int _extend_int64s(Int64s* into, Int64s* more, Py_ssize_t first, int64_t shift,
                        const int64_t* mapping) noexcept nogil:
    """Append ``more[first:]`` (each value mapped through ``mapping`` if given, plus
    ``shift``) to ``into``, growing it to exactly its new size, then release ``more``;
    -1 when out of memory."""
    cdef Py_ssize_t i, n = more.size - first
    cdef int64_t* grown
    cdef int64_t value
    if n > 0 and into.size + n > into.capacity:
        grown = <int64_t*>cg_realloc(into.data, (into.size + n) * 8)
        if grown == NULL:
            return -1
        into.data, into.capacity = grown, into.size + n
    for i in range(n if n > 0 else 0):
        value = more.data[first + i]
        into.data[into.size + i] = (mapping[value] if mapping != NULL else value) + shift
    into.size += n if n > 0 else 0
    _release_int64s(more)
    return 0


cdef inline void _release(void** data, Py_ssize_t* size, Py_ssize_t* capacity) noexcept nogil:
    """Free a growable array and leave it empty."""
    free(data[0])
    data[0] = NULL
    size[0] = capacity[0] = 0


cdef inline void _release_int64s(Int64s* a) noexcept nogil:
    _release(<void**>&a.data, &a.size, &a.capacity)


# ---------------------------------------------------------------- to numpy (_buffers.pyx)

cdef object _level_dtype(const Levels* a)
cdef object _int64_array(Int64s* a)


cdef class _Buffer:
    cdef void* data
    cdef Py_ssize_t size       # bytes
    cdef object owner


cdef object _array(void* data, Py_ssize_t n, object dtype, object owner)
cdef _Buffer _owning_buffer(void* data)
cdef object _hand_over(void** data, Py_ssize_t* size, Py_ssize_t* capacity, object dtype)
