"""Scanning and parsing text: lines and their whitespace-separated fields (SSE2 where
compiled in, _scan.h), strict UTF-8, trec_eval's number grammar, and the UTF-8 bytes and
numbers of Python objects (for dicts and object columns). Inline, for the readers that
cimport them.
"""
from libc.stdint cimport int64_t, uint64_t, uint8_t, int32_t, uint32_t
from libc.stdlib cimport free, strtod

from cgcore._buffers cimport cg_malloc
from libc.string cimport memchr, memcpy
from libc.math cimport isnan, isinf

from cpython.exc cimport PyErr_Clear, PyErr_Occurred

cdef extern from "_scan.h":
    int CG_SIMD
    Py_ssize_t cg_split64(const char* p, Py_ssize_t available, Py_ssize_t* starts,
                          Py_ssize_t* ends, int max_fields, Py_ssize_t* length) noexcept nogil
    bint cg_ascii_no_nul(const char* p, Py_ssize_t n) noexcept nogil
    int cg_text_kind(const char* p, Py_ssize_t n) noexcept nogil
    Py_ssize_t cg_quiet_lines(const char* p, Py_ssize_t n, int comments, Py_ssize_t max_line,
                              int64_t* lines) noexcept nogil

cdef extern from "Python.h":
    # without an exception check: the callers test the result (see _utf8, _exact_number)
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size)
    bint PyUnicode_IS_COMPACT_ASCII(object o)
    void* PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    bint PyUnicode_CheckExact(object o)
    bint PyFloat_CheckExact(object o)
    bint PyLong_CheckExact(object o)
    double PyFloat_AS_DOUBLE(object o)
    double PyLong_AsDouble(object o)

cdef enum:
    MAX_FIELDS = 6


cdef inline Py_ssize_t _line_end(const char* text, Py_ssize_t position,
                                 Py_ssize_t size) noexcept nogil:
    cdef const void* found = memchr(text + position, b'\n', size - position)
    return size if found == NULL else <const char*>found - text


cdef inline Py_ssize_t _skipped_line(const char* text, Py_ssize_t position, Py_ssize_t size,
                                     bint plain, bint blank_ok,
                                     Py_ssize_t max_line) noexcept nogil:
    """Where the line at ``position`` ends (after its newline) if it is a comment line
    (``#`` in column 1) or, with ``blank_ok``, an empty one, that needs no check: the
    block is ``plain`` (ASCII without NUL or carriage return: see cg_ascii_no_nul),
    so only its length (at most ``max_line``) matters. -1 for any other line, which
    the field scanner then reads. Lets a file of comment and blank lines be read at
    about memchr's speed."""
    cdef Py_ssize_t end
    if text[position] == b'\n':
        return position + 1 if blank_ok else -1
    if not plain or text[position] != b'#':
        return -1
    end = _line_end(text, position, size)
    if end - position > max_line:
        return -1
    return end + 1 if end < size else size


cdef inline bint _is_space(char c) noexcept nogil:
    """C isspace without the newline: space, \t, \r, \v, \f."""
    cdef uint8_t u = <uint8_t>c
    return u == 32 or (9 <= u <= 13 and u != 10)


cdef inline bint _valid_utf8(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Strict UTF-8 (as Python decodes it), no NUL byte, and none of the line separators
    that are not C whitespace (U+0085 NEL, U+2028, U+2029: a line holding one was two
    records to whatever wrote it, and trec_eval would read the second as more fields)."""
    cdef Py_ssize_t i = 0
    cdef uint8_t c, c1
    cdef uint64_t word
    while i < n:
        if i + 8 <= n:          # eight ASCII bytes, none of them NUL, at a time
            memcpy(&word, s + i, 8)
            if (word & 0x8080808080808080ULL) == 0 and \
                    ((word - 0x0101010101010101ULL) & ~word & 0x8080808080808080ULL) == 0:
                i += 8
                continue
        c = s[i]
        if c < 0x80:
            if c == 0:
                return False
            i += 1
            continue
        if c >= 0xC2 and c <= 0xDF:
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80 or (c == 0xC2 and s[i + 1] == 0x85):
                return False
            i += 2
        elif c >= 0xE0 and c <= 0xEF:
            if i + 2 >= n or (s[i + 1] & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80:
                return False
            c1 = s[i + 1]
            if (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 >= 0xA0) \
                    or (c == 0xE2 and c1 == 0x80 and (s[i + 2] == 0xA8 or s[i + 2] == 0xA9)):
                return False
            i += 3
        elif c >= 0xF0 and c <= 0xF4:
            if i + 3 >= n or (s[i + 1] & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80 \
                    or (s[i + 3] & 0xC0) != 0x80:
                return False
            c1 = s[i + 1]
            if (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 >= 0x90):
                return False
            i += 4
        else:
            return False
    return True


cdef inline Py_ssize_t _split(const char* line, Py_ssize_t n, Py_ssize_t* starts,
                       Py_ssize_t* ends) noexcept nogil:
    """Split at whitespace; record the first MAX_FIELDS fields; return the field count,
    or -1 when a carriage return separates two fields (old Mac line ends would make
    a whole file one line, its rows silently lost)."""
    cdef Py_ssize_t i = 0, count = 0
    cdef bint carriage_return
    while True:
        carriage_return = False
        while i < n and _is_space(line[i]):
            carriage_return = carriage_return or line[i] == b'\r'
            i += 1
        if i >= n:
            return count
        if carriage_return:
            return -1
        if count < MAX_FIELDS:
            starts[count] = i
        while i < n and not _is_space(line[i]):
            i += 1
        if count < MAX_FIELDS:
            ends[count] = i
        count += 1


cdef inline Py_ssize_t _next_line(const char* text, Py_ssize_t position, Py_ssize_t size,
                                  Py_ssize_t* starts, Py_ssize_t* ends,
                                  Py_ssize_t* length) noexcept nogil:
    """Split the line at ``position`` as _split does (its length, without the newline,
    in ``length``): 64 bytes at a time where _scan.h can, else byte by byte."""
    cdef Py_ssize_t n_fields = cg_split64(text + position, size - position, starts, ends,
                                          MAX_FIELDS, length)
    if n_fields != -2:
        return n_fields
    length[0] = _line_end(text, position, size) - position
    return _split(text + position, length[0], starts, ends)


cdef inline bint _lower_equals(const char* s, Py_ssize_t n, const char* word,
                               Py_ssize_t m) noexcept nogil:
    cdef Py_ssize_t i
    if n != m:
        return False
    for i in range(n):
        if (s[i] | 0x20) != word[i]:
            return False
    return True


cdef extern from *:
    """
    static const double cg_powers_of_ten[23] = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
        1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    """
    const double* _POWERS_OF_TEN "cg_powers_of_ten"


cdef inline bint _fast_decimal(const char* s, Py_ssize_t n, double* value) noexcept nogil:
    """[sign] digits [. digits] with at most 15 digits in all and no exponent:
    the integer of the digits and a power of ten <= 1e22 are both exact doubles, so
    one correctly rounded division gives exactly strtod's value (Clinger 1990)."""
    cdef Py_ssize_t i = 0, first_digit, integer_digits, fraction = 0
    cdef bint negative = False
    cdef uint64_t mantissa = 0
    cdef uint8_t digit
    cdef double result
    if n > 0 and (s[0] == b'-' or s[0] == b'+'):
        negative = s[0] == b'-'
        i = 1
    if n - i > 16:                       # more than 15 digits and a point
        return False
    first_digit = i
    while i < n:
        digit = <uint8_t>s[i] - 48       # 48 = ord('0'); other bytes wrap above 9
        if digit > 9:
            break
        mantissa = mantissa * 10 + digit
        i += 1
    integer_digits = i - first_digit
    if i < n and s[i] == b'.':
        i += 1
        while i < n:
            digit = <uint8_t>s[i] - 48
            if digit > 9:
                return False
            mantissa = mantissa * 10 + digit
            i += 1
            fraction += 1
    if i != n or integer_digits + fraction == 0 or integer_digits + fraction > 15:
        return False
    result = <double>mantissa
    if fraction:
        result = result / _POWERS_OF_TEN[fraction]
    value[0] = -result if negative else result
    return True


cdef inline int _parse_number(const char* s, Py_ssize_t n, double* value) noexcept nogil:
    """The grammar of cumgain.trec_io: [sign] (digits[.digits*] | .digits) [e[sign]digits],
    or inf / infinity in any case; the value is strtod's: 1 if read, 0 if not a number,
    -1 when out of memory (a field of 128 bytes or more is copied for strtod). The
    usual short decimal is read here, in the caller's loop; the rest by _parse_general."""
    if _fast_decimal(s, n, value):
        return 1
    return _parse_general(s, n, value)


cdef inline int _parse_general(const char* s, Py_ssize_t n, double* value) noexcept nogil:
    """_parse_number for any field (the grammar checked, the value from strtod)."""
    cdef Py_ssize_t i = 0, digits = 0
    cdef char local[128]
    cdef char* copy
    if n == 0:
        return 0
    if s[0] == b'+' or s[0] == b'-':
        i = 1
    if _lower_equals(s + i, n - i, b"inf", 3) or _lower_equals(s + i, n - i, b"infinity", 8):
        pass
    else:
        while i < n and s[i] >= b'0' and s[i] <= b'9':
            i += 1
            digits += 1
        if i < n and s[i] == b'.':
            i += 1
            while i < n and s[i] >= b'0' and s[i] <= b'9':
                i += 1
                digits += 1
        if digits == 0:
            return 0
        if i < n and (s[i] == b'e' or s[i] == b'E'):
            i += 1
            if i < n and (s[i] == b'+' or s[i] == b'-'):
                i += 1
            if i >= n or not (s[i] >= b'0' and s[i] <= b'9'):
                return 0
            while i < n and s[i] >= b'0' and s[i] <= b'9':
                i += 1
        if i != n:
            return 0
    if n < 128:
        memcpy(local, s, n)
        local[n] = 0
        value[0] = strtod(local, NULL)
        return 1
    copy = <char*>cg_malloc(n + 1)
    if copy == NULL:
        return -1
    memcpy(copy, s, n)
    copy[n] = 0
    value[0] = strtod(copy, NULL)
    free(copy)
    return 1


cdef inline const char* _utf8(object text, Py_ssize_t* size) noexcept:
    """The UTF-8 bytes of a str, without a copy: a pure-ASCII str's own characters (the
    usual docno, read as CPython's PyUnicode_AsUTF8AndSize would), else the UTF-8
    that CPython caches in the str; NULL, with no exception set, for a str that has
    none (a lone surrogate: the caller stops, and the reference reader names it)."""
    cdef const char* text_bytes
    if PyUnicode_IS_COMPACT_ASCII(text):
        size[0] = PyUnicode_GET_LENGTH(text)
        return <const char*>PyUnicode_DATA(text)
    text_bytes = PyUnicode_AsUTF8AndSize(text, size)
    if text_bytes == NULL:
        PyErr_Clear()
    return text_bytes


cdef inline bint _exact_number(object value, double* out) noexcept:
    """An exact int or float (not bool, not numpy) as a double; False for anything else,
    and for an int no double holds (beyond 2**1024; with no exception set: the caller
    stops, and the reference reader words the error)."""
    if PyFloat_CheckExact(value):
        out[0] = PyFloat_AS_DOUBLE(value)
        return True
    if PyLong_CheckExact(value):
        out[0] = PyLong_AsDouble(value)
        if out[0] == -1.0 and PyErr_Occurred() != NULL:
            PyErr_Clear()
            return False
        return True
    return False
