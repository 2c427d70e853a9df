"""The native readers' status codes (``STATUS_*`` in _trec.pyx say what each means) and
how a helper's failure becomes one."""
from libc.stdint cimport int64_t

from cgcore._buffers cimport cg_take_failed_bytes

cdef enum:
    OK = 0
    BAD_LINE = 1
    DUPLICATE = 2
    NOT_GROUPED = 3
    NO_MEMORY = 4
    APPENDED = 5
    QRELS_DUPLICATE = 6
    RELEASED = 7
    TOO_BIG = 8


cdef enum:
    KEEP_ERROR = 0         # the duplicates policy: a docno twice in a topic is noted (the
    KEEP_FIRST = 1         # caller raises), or the first occurrence is kept, or the last
    KEEP_LAST = 2


cdef inline int _stop_code(int64_t failure) noexcept nogil:
    """The status for a helper's failure code: -3 (past what the layout holds) TOO_BIG,
    else (-2, or -1 where that is the only failure) NO_MEMORY."""
    return TOO_BIG if failure == -3 else NO_MEMORY


cdef inline int _settled(int* status, size_t* failed_bytes) noexcept nogil:
    """``status``, noting (once) the bytes this thread's failed request asked for when it
    is NO_MEMORY (see _alloc.h). Called by every method, in the thread that did the
    work, once the work is done; the methods clear the record before they start."""
    if status[0] == NO_MEMORY and failed_bytes[0] == 0:
        failed_bytes[0] = cg_take_failed_bytes()
    return status[0]
