"""How the TREC parsers read lines, for the Python side: where the first data line of a
text starts (the reader's search for where the parallel parts of a file begin), and the
line rules themselves as test hooks (a line split into fields, the block check, id
comparison), so that tests can hold the parsers' C to them."""
from libc.string cimport memchr

from cgcore._buffers cimport _equal_bytes
from cgcore._text cimport (
    MAX_FIELDS, _is_space, _line_end, _split, cg_ascii_no_nul, cg_quiet_lines, cg_split64,
    cg_text_kind)
from libc.stdint cimport int64_t


def split_line(const unsigned char[::1] text, bint fast):
    """The line at the start of ``text`` split as the parsers split it (a test hook):
    (field count or -1, [(start, end), ...] for the first MAX_FIELDS fields, length),
    or None when ``fast`` and the 64-byte scanner declines the line."""
    cdef Py_ssize_t starts[MAX_FIELDS]
    cdef Py_ssize_t ends[MAX_FIELDS]
    cdef Py_ssize_t length = 0, n_fields, size = text.shape[0]
    cdef const char* data = <const char*>&text[0] if size else NULL
    if fast:
        n_fields = cg_split64(data, size, starts, ends, MAX_FIELDS, &length)
        if n_fields == -2:
            return None
    else:
        length = _line_end(data, 0, size) if size else 0
        n_fields = _split(data, length, starts, ends)
    shown = min(n_fields, MAX_FIELDS) if n_fields > 0 else 0
    return n_fields, [(starts[i], ends[i]) for i in range(shown)], length


def first_data_line(const unsigned char[::1] text, Py_ssize_t at):
    """Where the first data line of ``text`` at or after ``at`` (a line start) starts:
    a line whose first byte other than C whitespace (the newline aside) is neither a
    newline nor "#", as the parsers tell data from blank and comment lines, which are
    passed over 64 bytes at a time (cg_quiet_lines), else at memchr's speed. -1 if
    there is none: every line from ``at`` is blank or a comment, or the last one holds
    only spaces so far."""
    cdef Py_ssize_t size = text.shape[0], position = at, p, found = -1
    cdef const char* data
    cdef const void* newline
    cdef int64_t passed = 0
    if at < 0 or at > size:
        raise ValueError(f"at must be within the text (0..{size}), got {at}")
    if size == 0:
        return -1
    data = <const char*>&text[0]
    with nogil:
        while position < size:
            position += cg_quiet_lines(data + position, size - position, 1, size, &passed)
            p = position                # (blank and comment lines 64 bytes at a time)
            while p < size and _is_space(data[p]):
                p += 1
            if p == size:
                break
            if data[p] == b'\n':
                position = p + 1
                continue
            if data[p] != b'#':
                found = position
                break
            newline = memchr(data + p, b'\n', size - p)
            if newline == NULL:
                break
            position = <const char*>newline - data + 1
    return found


def ascii_no_nul(const unsigned char[::1] text):
    """Whether ``text`` is all ASCII without NUL (a test hook for the block check)."""
    return bool(cg_ascii_no_nul(<const char*>&text[0] if text.shape[0] else NULL,
                                text.shape[0]))


def text_kind(const unsigned char[::1] text):
    """The block check (a test hook): 2 for plain text (ASCII, no NUL, no carriage
    return), 1 for ASCII without NUL with a carriage return, else 0."""
    return cg_text_kind(<const char*>&text[0] if text.shape[0] else NULL, text.shape[0])


def quiet_lines(const unsigned char[::1] text, bint comments, Py_ssize_t max_line):
    """The blank (and, with ``comments``, comment) lines the run parser skips 16 bytes at
    a time from the start of ``text`` (a test hook): (bytes they take, how many)."""
    cdef int64_t lines = 0
    cdef Py_ssize_t taken = cg_quiet_lines(
        <const char*>&text[0] if text.shape[0] else NULL, text.shape[0], comments,
        max_line, &lines)
    return taken, lines


def equal_bytes(const unsigned char[::1] a, const unsigned char[::1] b):
    """Whether two byte strings of the same length are equal, compared as the parsers
    compare ids (a test hook)."""
    if a.shape[0] != b.shape[0]:
        raise ValueError("equal_bytes compares strings of the same length")
    return bool(_equal_bytes(<const char*>&a[0] if a.shape[0] else NULL,
                             <const char*>&b[0] if b.shape[0] else NULL, a.shape[0]))
