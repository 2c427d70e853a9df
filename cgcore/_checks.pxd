# Argument checks shared by the kernels' def wrappers: they raise ValueError before any
# C loop runs, so no input can make a kernel index out of bounds.
from cgcore._typedefs cimport index_t


cdef inline index_t check_offsets(const index_t[::1] offsets, Py_ssize_t n_values,
                                  str name) except -1:
    """The number of topics of a CSR ``offsets`` array over ``n_values`` values:
    at least one entry, starting >= 0, non-decreasing, ending within the values."""
    cdef Py_ssize_t t
    if offsets.shape[0] < 1:
        raise ValueError(f"{name} must hold at least one entry")
    if offsets[0] < 0:
        raise ValueError(f"{name}[0] is negative")
    for t in range(offsets.shape[0] - 1):
        if offsets[t + 1] < offsets[t]:
            raise ValueError(f"{name} must be non-decreasing (at {t + 1})")
    if offsets[offsets.shape[0] - 1] > n_values:
        raise ValueError(f"{name}[-1] = {offsets[offsets.shape[0] - 1]} runs past {n_values} values")
    return offsets.shape[0] - 1


cdef inline int check_per_topic(Py_ssize_t length, index_t n_topics, str name) except -1:
    """A per-topic array must have one entry per topic."""
    if length != n_topics:
        raise ValueError(f"{name} has {length} entries for {n_topics} topics")
    return 0
