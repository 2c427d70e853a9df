# The keys rankings sort by, shared by the file/dict/table ranker (_trec) and the dense
# ranker (_dense_rank), so that both order scores and break ties alike, bit for bit.
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy


cdef inline uint64_t mix(uint64_t z) noexcept nogil:
    """splitmix64's finaliser: every output bit depends on every input bit."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline int64_t random_tie_key(uint64_t seed, int64_t position) noexcept nogil:
    """The tie key of the document at ``position`` (0-based, input order) in its topic."""
    return <int64_t>mix(seed + 0x9E3779B97F4A7C15ULL * <uint64_t>(position + 1))


cdef inline uint64_t descending_key(double score) noexcept nogil:
    """An integer whose ascending order is the score's descending order. -0.0 and 0.0
    get the same key, as they compare equal (they tie, as in trec_eval)."""
    cdef uint64_t bits
    score = score + 0.0                  # -0.0 -> 0.0
    memcpy(&bits, &score, 8)
    bits = ~bits if bits >> 63 else bits | 0x8000000000000000ULL   # ascending order
    return ~bits
