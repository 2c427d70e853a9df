# Asking for memory ahead of its use (GCC and Clang; nothing elsewhere): the ranker's
# hash lookups, held records and qrels slots are cache misses that overlap only when
# asked for before they are needed.


cdef extern from *:
    """
    #if defined(__GNUC__)
    #define cg_prefetch_read(address) __builtin_prefetch((address), 0)
    #define cg_prefetch_write(address) __builtin_prefetch((address), 1)
    #else
    #define cg_prefetch_read(address) ((void)0)
    #define cg_prefetch_write(address) ((void)0)
    #endif
    """
    void cg_prefetch_read(const void* address) noexcept nogil
    void cg_prefetch_write(const void* address) noexcept nogil
