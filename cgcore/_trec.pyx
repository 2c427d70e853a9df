"""Native TREC reader: qrels and runs parsed in C, runs ranked and joined as they stream.

The caller (``cumgain.native``) reads the file in blocks of whole lines (plain or
gzip) and feeds them here. No Python object is made per line:

* :class:`QrelsTable` parses ``qid iter docno rel`` lines into flat arrays and a hash
  index keyed by (topic, docno);
* :class:`RunRanker` parses ``qid iter docno rank score tag`` lines; when a topic's
  lines end it sorts them (score descending, then the tie rule), cuts at the depth,
  looks each document up in the qrels index and appends, per rank, the relevance
  level and whether the document is judged. Only one topic's lines are held at once.

The parsers validate everything the pure-Python reference (``cumgain.trec_io``)
validates: field counts, the number grammar, strict UTF-8, NUL bytes, blank lines in
qrels, duplicate documents. They do not format messages: on any problem they stop
and report ``status`` and the line; the caller then lets the reference reader raise
its exact error. The same happens for inputs the streaming design does not cover
(a run whose topics are not contiguous). No global state: one instance per file.
"""
from libc.stdint cimport int64_t, uint64_t, uint8_t, int32_t
from libc.stdlib cimport malloc, realloc, free, strtod, qsort
from libc.string cimport memcpy, memcmp, memchr
from libc.math cimport isnan, isinf

from cpython.dict cimport PyDict_Next
from cpython.ref cimport PyObject

import numpy as np

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL
    bint PyUnicode_CheckExact(object o)
    bint PyDict_CheckExact(object o)
    bint PyFloat_CheckExact(object o)
    bint PyLong_CheckExact(object o)
    double PyFloat_AS_DOUBLE(object o)
    double PyLong_AsDouble(object o) except? -1.0

# status codes
STATUS_OK = 0
STATUS_BAD_LINE = 1        # a malformed line: the reference reader words the error
STATUS_DUPLICATE = 2       # a docno twice in one topic
STATUS_NOT_GROUPED = 3     # a run topic's lines are not contiguous
STATUS_NO_MEMORY = 4

cdef enum:
    RULE_DOCNO_DESC = 0
    RULE_DOCNO_ASC = 1
    RULE_INPUT_ORDER = 2
    RULE_RANDOM = 3

# tie rules
TIES_DOCNO_DESC = RULE_DOCNO_DESC
TIES_DOCNO_ASC = RULE_DOCNO_ASC
TIES_INPUT_ORDER = RULE_INPUT_ORDER
TIES_RANDOM = RULE_RANDOM

cdef enum:
    OK = 0
    BAD_LINE = 1
    DUPLICATE = 2
    NOT_GROUPED = 3
    NO_MEMORY = 4
    MAX_FIELDS = 6

# ---------------------------------------------------------------- growable arrays

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


cdef int _reserve(void** data, Py_ssize_t* capacity, Py_ssize_t needed,
                  Py_ssize_t item) noexcept nogil:
    cdef Py_ssize_t new_capacity
    cdef void* grown
    if needed <= capacity[0]:
        return 0
    new_capacity = capacity[0] * 2 if capacity[0] > 0 else 1024
    while new_capacity < needed:
        new_capacity *= 2
    grown = realloc(data[0], new_capacity * item)
    if grown == NULL:
        return -1
    data[0] = grown
    capacity[0] = new_capacity
    return 0


cdef inline bint _equal_bytes(const char* a, const char* b, Py_ssize_t n) noexcept nogil:
    """memcmp(a, b, n) == 0, defined for n == 0 too (where a or b may be NULL)."""
    return n == 0 or memcmp(a, b, n) == 0


cdef inline int _push_bytes(Bytes* b, const char* s, Py_ssize_t n) noexcept nogil:
    if n == 0:
        return 0        # b.data may still be NULL: memcpy(NULL, s, 0) is undefined
    if _reserve(<void**>&b.data, &b.capacity, b.size + n, 1) != 0:
        return -1
    memcpy(b.data + b.size, s, n)
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


cdef object _int64_array(Int64s* a):
    result = np.empty(a.size, dtype=np.int64)
    cdef int64_t[::1] view = result
    if a.size:
        memcpy(&view[0], a.data, a.size * 8)
    return result


cdef object _double_array(Doubles* a):
    result = np.empty(a.size, dtype=np.float64)
    cdef double[::1] view = result
    if a.size:
        memcpy(&view[0], a.data, a.size * 8)
    return result


# ---------------------------------------------------------------- interned strings

cdef inline uint64_t _mix(uint64_t z) noexcept nogil:
    """splitmix64's finaliser: every output bit depends on every input bit."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t _hash(const char* s, Py_ssize_t n, uint64_t seed) noexcept nogil:
    """FNV-1a over the bytes, then mixed (FNV's low bits alone cluster under a mask)."""
    cdef uint64_t h = 14695981039346656037ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ <uint8_t>s[i]) * 1099511628211ULL
    return _mix(h ^ seed)


cdef struct Strings:
    Bytes arena
    Int64s starts          # string i is arena[starts[i]:starts[i + 1]]
    int64_t* slots         # open addressing: string index + 1, 0 = empty
    Py_ssize_t n_slots     # a power of two


cdef int _strings_init(Strings* s) noexcept nogil:
    if _push_int64(&s.starts, 0) != 0:
        return -1
    s.n_slots = 64
    s.slots = <int64_t*>malloc(s.n_slots * 8)
    if s.slots == NULL:
        return -1
    for i in range(s.n_slots):
        s.slots[i] = 0
    return 0


cdef void _strings_free(Strings* s) noexcept nogil:
    free(s.arena.data)
    free(s.starts.data)
    free(s.slots)


cdef inline Py_ssize_t _strings_count(Strings* s) noexcept nogil:
    return s.starts.size - 1


cdef int _strings_grow(Strings* s) noexcept nogil:
    cdef Py_ssize_t n = s.n_slots * 2, i, slot
    cdef int64_t* slots = <int64_t*>malloc(n * 8)
    cdef int64_t index
    if slots == NULL:
        return -1
    for i in range(n):
        slots[i] = 0
    for index in range(_strings_count(s)):
        slot = _hash(s.arena.data + s.starts.data[index],
                     s.starts.data[index + 1] - s.starts.data[index], 0) & (n - 1)
        while slots[slot] != 0:
            slot = (slot + 1) & (n - 1)
        slots[slot] = index + 1
    free(s.slots)
    s.slots = slots
    s.n_slots = n
    return 0


cdef int64_t _strings_find(Strings* s, const char* text, Py_ssize_t n) noexcept nogil:
    """The index of ``text``, or -1."""
    cdef Py_ssize_t slot = _hash(text, n, 0) & (s.n_slots - 1)
    cdef int64_t index
    while s.slots[slot] != 0:
        index = s.slots[slot] - 1
        if s.starts.data[index + 1] - s.starts.data[index] == n and \
                _equal_bytes(s.arena.data + s.starts.data[index], text, n):
            return index
        slot = (slot + 1) & (s.n_slots - 1)
    return -1


cdef int64_t _strings_add(Strings* s, const char* text, Py_ssize_t n) noexcept nogil:
    """The index of ``text``, interning it if new; -2 when out of memory."""
    cdef int64_t index = _strings_find(s, text, n)
    cdef Py_ssize_t slot
    if index >= 0:
        return index
    if 2 * (_strings_count(s) + 1) > s.n_slots and _strings_grow(s) != 0:
        return -2
    if _push_bytes(&s.arena, text, n) != 0 or _push_int64(&s.starts, s.arena.size) != 0:
        return -2
    index = _strings_count(s) - 1
    slot = _hash(text, n, 0) & (s.n_slots - 1)
    while s.slots[slot] != 0:
        slot = (slot + 1) & (s.n_slots - 1)
    s.slots[slot] = index + 1
    return index


cdef list _strings_list(Strings* s):
    cdef Py_ssize_t i
    return [s.arena.data[s.starts.data[i]:s.starts.data[i + 1]].decode("utf-8")
            for i in range(_strings_count(s))]


# ---------------------------------------------------------------- line scanning

cdef inline Py_ssize_t _line_end(const char* text, Py_ssize_t position,
                                 Py_ssize_t size) noexcept nogil:
    cdef const void* found = memchr(text + position, b'\n', size - position)
    return size if found == NULL else <const char*>found - text


cdef bint[256] _SPACE         # C isspace without the newline: space, \t, \r, \v, \f
for _c in range(256):
    _SPACE[_c] = _c in (32, 9, 13, 11, 12)


cdef inline bint _is_space(char c) noexcept nogil:
    return _SPACE[<uint8_t>c]


cdef bint _valid_utf8(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Strict UTF-8 (as Python decodes it) and no NUL byte."""
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
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
                return False
            i += 2
        elif c >= 0xE0 and c <= 0xEF:
            if i + 2 >= n or (s[i + 1] & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80:
                return False
            c1 = s[i + 1]
            if (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 >= 0xA0):
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


cdef Py_ssize_t _split(const char* line, Py_ssize_t n, Py_ssize_t* starts,
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


cdef inline bint _lower_equals(const char* s, Py_ssize_t n, const char* word,
                               Py_ssize_t m) noexcept nogil:
    cdef Py_ssize_t i
    if n != m:
        return False
    for i in range(n):
        if (s[i] | 0x20) != word[i]:
            return False
    return True


cdef double[23] _POWERS_OF_TEN = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                  1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
                                  1e20, 1e21, 1e22]


cdef bint _fast_decimal(const char* s, Py_ssize_t n, double* value) noexcept nogil:
    """[sign] digits [. digits] with at most 15 digits in all and no exponent:
    the integer of the digits and a power of ten <= 1e22 are both exact doubles, so
    one correctly rounded division gives exactly strtod's value (Clinger 1990)."""
    cdef Py_ssize_t i = 0, digits = 0, fraction = 0
    cdef bint negative = False, point = False
    cdef uint64_t mantissa = 0
    cdef double result
    if n > 0 and (s[0] == b'-' or s[0] == b'+'):
        negative = s[0] == b'-'
        i = 1
    for i in range(i, n):
        if s[i] >= b'0' and s[i] <= b'9':
            mantissa = mantissa * 10 + <uint64_t>(s[i] - 48)  # 48 = ord('0')
            digits += 1
            if point:
                fraction += 1
        elif s[i] == b'.' and not point:
            point = True
        else:
            return False
    if digits == 0 or digits > 15:
        return False
    result = <double>mantissa
    if fraction:
        result = result / _POWERS_OF_TEN[fraction]
    value[0] = -result if negative else result
    return True


cdef bint _parse_number(const char* s, Py_ssize_t n, double* value) noexcept nogil:
    """The grammar of cumgain.trec_io: [sign] (digits[.digits*] | .digits) [e[sign]digits],
    or inf / infinity in any case; the value is strtod's."""
    cdef Py_ssize_t i = 0, digits = 0
    cdef char local[128]
    cdef char* copy
    if n == 0:
        return False
    if _fast_decimal(s, n, value):
        return True
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
            return False
        if i < n and (s[i] == b'e' or s[i] == b'E'):
            i += 1
            if i < n and (s[i] == b'+' or s[i] == b'-'):
                i += 1
            if i >= n or not (s[i] >= b'0' and s[i] <= b'9'):
                return False
            while i < n and s[i] >= b'0' and s[i] <= b'9':
                i += 1
        if i != n:
            return False
    if n < 128:
        memcpy(local, s, n)
        local[n] = 0
        value[0] = strtod(local, NULL)
        return True
    copy = <char*>malloc(n + 1)
    if copy == NULL:
        return False
    memcpy(copy, s, n)
    copy[n] = 0
    value[0] = strtod(copy, NULL)
    free(copy)
    return True


cdef bint _exact_number(object value, double* out):
    """An exact int or float (not bool, not numpy) as a double; False for anything else."""
    if PyFloat_CheckExact(value):
        out[0] = PyFloat_AS_DOUBLE(value)
        return True
    if PyLong_CheckExact(value):
        out[0] = PyLong_AsDouble(value)
        return True
    return False


# ---------------------------------------------------------------- qrels

cdef struct QrelsState:
    Strings topics
    Bytes docnos           # docno of row r: docnos[doc_starts[r]:doc_starts[r + 1]]
    Int64s doc_starts
    Int64s topic_of_row
    Doubles relevance
    Int64s lines
    int64_t* topic_starts  # rows of topic t: by_topic[topic_starts[t]:topic_starts[t + 1]]
    int64_t* by_topic      # row indices grouped by topic, file order within a topic
    int64_t lines_seen     # physical lines fed so far
    int status
    int64_t status_line


# A small hash table over one topic's judgments: docno -> qrels row.
cdef struct Lookup:
    int64_t* slots         # row + 1, 0 = empty
    Py_ssize_t n_slots     # a power of two
    Py_ssize_t capacity


cdef inline const char* _docno(QrelsState* q, int64_t row) noexcept nogil:
    return q.docnos.data + q.doc_starts.data[row]


cdef inline Py_ssize_t _docno_length(QrelsState* q, int64_t row) noexcept nogil:
    return q.doc_starts.data[row + 1] - q.doc_starts.data[row]


cdef int64_t _lookup_find(Lookup* table, QrelsState* q, const char* docno,
                          Py_ssize_t n, uint64_t hash) noexcept nogil:
    """The qrels row of ``docno`` (whose _hash is ``hash``) in the table's topic, or -1."""
    cdef Py_ssize_t slot
    cdef int64_t row
    if table.n_slots == 0:
        return -1
    slot = hash & (table.n_slots - 1)
    while table.slots[slot] != 0:
        row = table.slots[slot] - 1
        if _docno_length(q, row) == n and _equal_bytes(_docno(q, row), docno, n):
            return row
        slot = (slot + 1) & (table.n_slots - 1)
    return -1


cdef int64_t _lookup_build(Lookup* table, QrelsState* q, int64_t topic) noexcept nogil:
    """Fill the table with ``topic``'s judgments (none if topic < 0). Returns -1 if
    fine, -2 when out of memory, or the row of a duplicate docno."""
    cdef int64_t start = 0, stop = 0, i, row
    cdef Py_ssize_t n = 16, slot
    cdef uint64_t hash
    if topic >= 0:
        start, stop = q.topic_starts[topic], q.topic_starts[topic + 1]
    while n < 2 * (stop - start):
        n *= 2
    if n > table.capacity:
        free(table.slots)
        table.slots = <int64_t*>malloc(n * 8)
        if table.slots == NULL:
            table.capacity = table.n_slots = 0
            return -2
        table.capacity = n
    table.n_slots = n
    for slot in range(n):
        table.slots[slot] = 0
    for i in range(start, stop):
        row = q.by_topic[i]
        hash = _hash(_docno(q, row), _docno_length(q, row), 0)
        if _lookup_find(table, q, _docno(q, row), _docno_length(q, row), hash) >= 0:
            return row
        slot = hash & (n - 1)
        while table.slots[slot] != 0:
            slot = (slot + 1) & (n - 1)
        table.slots[slot] = row + 1
    return -1


cdef int _qrels_feed(QrelsState* q, const char* text, Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t position = 0, end, n_fields
    cdef Py_ssize_t starts[MAX_FIELDS]
    cdef Py_ssize_t ends[MAX_FIELDS]
    cdef int64_t topic
    cdef const char* row
    cdef double value
    while position < size:
        end = _line_end(text, position, size)
        q.lines_seen += 1
        row = text + position
        n_fields = _split(row, end - position, starts, ends)
        if not _valid_utf8(<const uint8_t*>row, end - position):
            q.status, q.status_line = BAD_LINE, q.lines_seen
            return -1
        position = end + 1
        if n_fields <= 0:       # blank lines are errors in qrels; so is a CR inside a line
            q.status, q.status_line = BAD_LINE, q.lines_seen
            return -1
        if row[starts[0]] == b'#':
            continue
        if n_fields != 4 or not _parse_number(row + starts[3], ends[3] - starts[3], &value) \
                or isnan(value) or isinf(value):
            q.status, q.status_line = BAD_LINE, q.lines_seen
            return -1
        topic = _strings_add(&q.topics, row + starts[0], ends[0] - starts[0])
        if topic < 0 or _push_bytes(&q.docnos, row + starts[2], ends[2] - starts[2]) != 0 \
                or _push_int64(&q.doc_starts, q.docnos.size) != 0 \
                or _push_int64(&q.topic_of_row, topic) != 0 \
                or _push_double(&q.relevance, value) != 0 or _push_int64(&q.lines, q.lines_seen) != 0:
            q.status, q.status_line = NO_MEMORY, q.lines_seen
            return -1
    return 0


cdef int _qrels_group(QrelsState* q) noexcept nogil:
    """Group the rows by topic (a counting sort, stable) and check every topic for
    duplicate docnos; a duplicate stops with DUPLICATE."""
    cdef Py_ssize_t n_topics = _strings_count(&q.topics), n_rows = q.relevance.size, t
    cdef int64_t row, found
    cdef Lookup table
    table.slots = NULL
    table.n_slots = table.capacity = 0
    q.topic_starts = <int64_t*>malloc((n_topics + 1) * 8)
    q.by_topic = <int64_t*>malloc((n_rows + 1) * 8)
    if q.topic_starts == NULL or q.by_topic == NULL:
        q.status = NO_MEMORY
        return -1
    for t in range(n_topics + 1):
        q.topic_starts[t] = 0
    for row in range(n_rows):
        q.topic_starts[q.topic_of_row.data[row] + 1] += 1
    for t in range(n_topics):
        q.topic_starts[t + 1] += q.topic_starts[t]
    for row in range(n_rows):           # topic_starts[t] walks to the end of topic t ...
        t = q.topic_of_row.data[row]
        q.by_topic[q.topic_starts[t]] = row
        q.topic_starts[t] += 1
    for t in range(n_topics, 0, -1):    # ... so shift back to the starts
        q.topic_starts[t] = q.topic_starts[t - 1]
    q.topic_starts[0] = 0
    for t in range(n_topics):
        found = _lookup_build(&table, q, t)
        if found != -1:
            free(table.slots)
            if found == -2:
                q.status = NO_MEMORY
            else:
                q.status, q.status_line = DUPLICATE, q.lines.data[found]
            return -1
    free(table.slots)
    return 0


cdef class QrelsTable:
    """Judgments parsed in C. Feed whole-line blocks, then call :meth:`finish`."""

    cdef QrelsState state
    cdef bint finished

    def __cinit__(self):
        if _strings_init(&self.state.topics) != 0 or \
                _push_int64(&self.state.doc_starts, 0) != 0:
            raise MemoryError()

    def __dealloc__(self):
        _strings_free(&self.state.topics)
        free(self.state.docnos.data)
        free(self.state.doc_starts.data)
        free(self.state.topic_of_row.data)
        free(self.state.relevance.data)
        free(self.state.lines.data)
        free(self.state.topic_starts)
        free(self.state.by_topic)

    def feed(self, const unsigned char[::1] text):
        """Parse a block of whole lines; returns the status (STATUS_OK or why it stopped)."""
        if self.finished or self.state.status != OK:
            raise ValueError("this table is finished or has stopped")
        cdef const char* data = <const char*>&text[0] if text.shape[0] else NULL
        cdef Py_ssize_t size = text.shape[0]
        with nogil:
            if size:
                _qrels_feed(&self.state, data, size)
        return self.state.status

    def add_dict(self, qrels):
        """Add ``{qid: {docno: level}}`` with str ids and int or float levels; anything
        else (other key or value types, NaN or infinite levels) stops with BAD_LINE."""
        if self.finished or self.state.status != OK:
            raise ValueError("this table is finished or has stopped")
        if not PyDict_CheckExact(qrels):
            self.state.status = BAD_LINE
            return self.state.status
        cdef Py_ssize_t topic_position = 0, doc_position, n
        cdef PyObject* qid
        cdef PyObject* docs
        cdef PyObject* docno
        cdef PyObject* level
        cdef const char* text
        cdef double value
        cdef int64_t topic
        cdef QrelsState* q = &self.state
        while PyDict_Next(qrels, &topic_position, &qid, &docs):
            if not PyUnicode_CheckExact(<object>qid) or not PyDict_CheckExact(<object>docs):
                q.status = BAD_LINE
                return q.status
            text = PyUnicode_AsUTF8AndSize(<object>qid, &n)
            topic = _strings_add(&q.topics, text, n)
            if topic < 0:
                q.status = NO_MEMORY
                return q.status
            doc_position = 0
            while PyDict_Next(<object>docs, &doc_position, &docno, &level):
                if not PyUnicode_CheckExact(<object>docno):
                    q.status = BAD_LINE
                    return q.status
                if not _exact_number(<object>level, &value) or isnan(value) or isinf(value):
                    q.status = BAD_LINE
                    return q.status
                text = PyUnicode_AsUTF8AndSize(<object>docno, &n)
                q.lines_seen += 1
                if _push_bytes(&q.docnos, text, n) != 0 \
                        or _push_int64(&q.doc_starts, q.docnos.size) != 0 \
                        or _push_int64(&q.topic_of_row, topic) != 0 \
                        or _push_double(&q.relevance, value) != 0 \
                        or _push_int64(&q.lines, q.lines_seen) != 0:
                    q.status = NO_MEMORY
                    return q.status
        return q.status

    def finish(self):
        """Group the judgments by topic and check for duplicates; returns the status."""
        if self.state.status == OK and not self.finished:
            with nogil:
                _qrels_group(&self.state)
        self.finished = True
        return self.state.status

    @property
    def status_line(self):
        return self.state.status_line

    @property
    def n_rows(self):
        return self.state.relevance.size

    def topics(self):
        """Topic ids in order of first appearance."""
        return _strings_list(&self.state.topics)

    def grouped(self):
        """(offsets, relevance): the judgments grouped by topic (topics in order of
        first appearance), file order within a topic."""
        if not self.finished or self.state.status != OK:
            raise ValueError("the table is not finished or has stopped")
        cdef Py_ssize_t n_topics = _strings_count(&self.state.topics), i
        offsets = np.empty(n_topics + 1, dtype=np.int64)
        relevance = np.empty(self.state.relevance.size, dtype=np.float64)
        cdef int64_t[::1] offsets_view = offsets
        cdef double[::1] relevance_view = relevance
        for i in range(n_topics + 1):
            offsets_view[i] = self.state.topic_starts[i]
        for i in range(self.state.relevance.size):
            relevance_view[i] = self.state.relevance.data[self.state.by_topic[i]]
        return offsets, relevance


# ---------------------------------------------------------------- runs

cdef struct Entry:
    double score
    const char* docno
    int64_t length
    int64_t key
    int64_t row
    uint64_t hash          # of the docno, for the duplicate check and the qrels lookup
    uint64_t order         # ascending order = score descending (see _descending_key)


cdef int _compare_docno(const Entry* x, const Entry* y) noexcept nogil:
    cdef int64_t n = x.length if x.length < y.length else y.length
    cdef int result = memcmp(x.docno, y.docno, n) if n > 0 else 0
    if result != 0:
        return result
    return (x.length > y.length) - (x.length < y.length)


cdef int _by_score_docno_desc(const void* a, const void* b) noexcept nogil:
    cdef const Entry* x = <const Entry*>a
    cdef const Entry* y = <const Entry*>b
    if x.score != y.score:
        return -1 if x.score > y.score else 1
    return -_compare_docno(x, y)


cdef int _by_score_docno_asc(const void* a, const void* b) noexcept nogil:
    cdef const Entry* x = <const Entry*>a
    cdef const Entry* y = <const Entry*>b
    if x.score != y.score:
        return -1 if x.score > y.score else 1
    return _compare_docno(x, y)


cdef int _by_score_key(const void* a, const void* b) noexcept nogil:
    cdef const Entry* x = <const Entry*>a
    cdef const Entry* y = <const Entry*>b
    if x.score != y.score:
        return -1 if x.score > y.score else 1
    if x.key != y.key:
        return -1 if x.key < y.key else 1
    return (x.row > y.row) - (x.row < y.row)


cdef inline int64_t random_tie_key(uint64_t seed, int64_t position) noexcept nogil:
    """The tie key of the document at ``position`` (0-based, input order) in its topic."""
    return <int64_t>_mix(seed + 0x9E3779B97F4A7C15ULL * <uint64_t>(position + 1))


cdef struct RunState:
    QrelsState* qrels
    int ties
    bint float32
    int64_t depth              # -1: no cut
    uint64_t seed
    Strings topics             # run topics in order of appearance
    int64_t current            # the topic being collected, -1 before the first line
    Lookup judgments           # the current topic's judgments
    Bytes docnos               # current topic's docnos
    Int64s doc_starts
    Doubles scores
    Int64s lines
    Entry* entries
    Py_ssize_t n_entries
    int64_t* seen              # duplicate check: entry index + 1, 0 = empty
    Py_ssize_t n_seen
    Int64s counts              # per run topic: ranked rows kept
    Doubles out_levels
    Doubles out_scores
    Bytes out_judged           # 0 / 1 per ranked row
    Bytes tag
    bint keep_scores
    Py_ssize_t n_lines_read
    int64_t lines_seen
    int status
    int64_t status_line


cdef inline uint64_t _descending_key(double score) noexcept nogil:
    """An integer whose ascending order is the score's descending order. -0.0 and 0.0
    get the same key, as they compare equal (they tie, as in trec_eval)."""
    cdef uint64_t bits
    score = score + 0.0                  # -0.0 -> 0.0
    memcpy(&bits, &score, 8)
    bits = ~bits if bits >> 63 else bits | 0x8000000000000000ULL   # ascending order
    return ~bits


cdef void _sort_by_order(Entry* entries, Py_ssize_t n) noexcept nogil:
    """Quicksort on the integer ``order`` (median of three, insertion sort below 16)."""
    cdef Py_ssize_t i, j, low, high, middle
    cdef Entry pivot_entry, swap
    cdef uint64_t pivot
    while n > 16:
        middle = n // 2
        if entries[middle].order < entries[0].order:
            swap = entries[middle]; entries[middle] = entries[0]; entries[0] = swap
        if entries[n - 1].order < entries[0].order:
            swap = entries[n - 1]; entries[n - 1] = entries[0]; entries[0] = swap
        if entries[n - 1].order < entries[middle].order:
            swap = entries[n - 1]; entries[n - 1] = entries[middle]; entries[middle] = swap
        pivot = entries[middle].order
        low = 0
        high = n - 1
        while low <= high:
            while entries[low].order < pivot:
                low += 1
            while entries[high].order > pivot:
                high -= 1
            if low <= high:
                swap = entries[low]; entries[low] = entries[high]; entries[high] = swap
                low += 1
                high -= 1
        # recurse into the smaller part, loop on the larger one
        if high + 1 < n - low:
            _sort_by_order(entries, high + 1)
            entries = entries + low
            n = n - low
        else:
            _sort_by_order(entries + low, n - low)
            n = high + 1
    for i in range(1, n):
        pivot_entry = entries[i]
        j = i
        while j > 0 and entries[j - 1].order > pivot_entry.order:
            entries[j] = entries[j - 1]
            j -= 1
        entries[j] = pivot_entry


cdef void _sort_entries(Entry* entries, Py_ssize_t n, int ties) noexcept nogil:
    """Score descending, then the tie rule: first by the score's integer key (already
    sorted for runs written in score order, the usual case), then each group of equal
    scores by the tie rule."""
    cdef Py_ssize_t i, start
    cdef bint sorted_already = True
    cdef int (*compare)(const void*, const void*) noexcept nogil
    if ties == RULE_DOCNO_DESC:
        compare = _by_score_docno_desc
    elif ties == RULE_DOCNO_ASC:
        compare = _by_score_docno_asc
    else:
        compare = _by_score_key
    for i in range(n):
        entries[i].order = _descending_key(entries[i].score)
        if i > 0 and entries[i].order < entries[i - 1].order:
            sorted_already = False
    if not sorted_already:
        _sort_by_order(entries, n)
    start = 0
    for i in range(1, n + 1):
        if i == n or entries[i].order != entries[start].order:
            if i - start > 1:
                qsort(entries + start, i - start, sizeof(Entry), compare)
            start = i


cdef int _rank_current(RunState* r) noexcept nogil:
    """Sort the current topic, check duplicates, cut at depth, join, and append."""
    cdef Py_ssize_t n = r.scores.size, i, slot, n_slots, keep
    cdef Entry* entry
    cdef int64_t row, other
    cdef bint judged
    cdef double level
    if r.current < 0:
        return 0
    if n > r.n_entries:
        free(r.entries)
        r.entries = <Entry*>malloc(n * sizeof(Entry))
        if r.entries == NULL:
            r.n_entries = 0
            r.status = NO_MEMORY
            return -1
        r.n_entries = n
    n_slots = 16
    while n_slots < 2 * n:
        n_slots *= 2
    if n_slots > r.n_seen:
        free(r.seen)
        r.seen = <int64_t*>malloc(n_slots * 8)
        if r.seen == NULL:
            r.n_seen = 0
            r.status = NO_MEMORY
            return -1
        r.n_seen = n_slots
    for slot in range(n_slots):
        r.seen[slot] = 0
    for i in range(n):
        entry = &r.entries[i]
        entry.score = r.scores.data[i]
        entry.docno = r.docnos.data + r.doc_starts.data[i]
        entry.length = r.doc_starts.data[i + 1] - r.doc_starts.data[i]
        entry.row = i
        entry.key = random_tie_key(r.seed, i) if r.ties == RULE_RANDOM else i
        entry.hash = _hash(entry.docno, entry.length, 0)
        slot = entry.hash & (n_slots - 1)
        while r.seen[slot] != 0:
            other = r.seen[slot] - 1
            if r.entries[other].length == entry.length and \
                    _equal_bytes(r.entries[other].docno, entry.docno, entry.length):
                r.status, r.status_line = DUPLICATE, r.lines.data[i]
                return -1
            slot = (slot + 1) & (n_slots - 1)
        r.seen[slot] = i + 1
    _sort_entries(r.entries, n, r.ties)
    keep = n if r.depth < 0 or r.depth > n else r.depth
    for i in range(keep):
        entry = &r.entries[i]
        row = _lookup_find(&r.judgments, r.qrels, entry.docno, entry.length, entry.hash)
        level = r.qrels.relevance.data[row] if row >= 0 else 0.0
        judged = row >= 0 and level >= 0.0
        if _push_double(&r.out_levels, level if judged else 0.0) != 0 \
                or (r.keep_scores and _push_double(&r.out_scores, entry.score) != 0) \
                or _push_bytes(&r.out_judged, "\x01" if judged else "\x00", 1) != 0:
            r.status = NO_MEMORY
            return -1
    if _push_int64(&r.counts, keep) != 0:
        r.status = NO_MEMORY
        return -1
    r.docnos.size = 0
    r.doc_starts.size = 1
    r.scores.size = 0
    r.lines.size = 0
    return 0


cdef int _run_feed(RunState* r, const char* text, Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t position = 0, end, n_fields, last_tag_start = -1, last_tag_end = -1
    cdef Py_ssize_t starts[MAX_FIELDS]
    cdef Py_ssize_t ends[MAX_FIELDS]
    cdef int64_t topic
    cdef const char* row
    cdef const char* tag_row = NULL
    cdef double score
    while position < size:
        end = _line_end(text, position, size)
        r.lines_seen += 1
        row = text + position
        n_fields = _split(row, end - position, starts, ends)
        if not _valid_utf8(<const uint8_t*>row, end - position):
            r.status, r.status_line = BAD_LINE, r.lines_seen
            return -1
        position = end + 1
        if n_fields < 0:
            r.status, r.status_line = BAD_LINE, r.lines_seen
            return -1
        if n_fields == 0 or row[starts[0]] == b'#':
            continue
        if n_fields < 6 or not _parse_number(row + starts[4], ends[4] - starts[4], &score) \
                or isnan(score):
            r.status, r.status_line = BAD_LINE, r.lines_seen
            return -1
        if r.float32:
            score = <double>(<float>score)
        if r.current < 0 or ends[0] - starts[0] != \
                r.topics.starts.data[r.current + 1] - r.topics.starts.data[r.current] or \
                not _equal_bytes(row + starts[0],
                                 r.topics.arena.data + r.topics.starts.data[r.current],
                                 ends[0] - starts[0]):
            if _rank_current(r) != 0:
                return -1
            if _strings_find(&r.topics, row + starts[0], ends[0] - starts[0]) >= 0:
                r.status, r.status_line = NOT_GROUPED, r.lines_seen
                return -1
            topic = _strings_add(&r.topics, row + starts[0], ends[0] - starts[0])
            if topic < 0:
                r.status = NO_MEMORY
                return -1
            r.current = topic
            if _lookup_build(&r.judgments, r.qrels, _strings_find(
                    &r.qrels.topics, row + starts[0], ends[0] - starts[0])) != -1:
                r.status = NO_MEMORY     # (qrels duplicates were ruled out by finish())
                return -1
        if _push_bytes(&r.docnos, row + starts[2], ends[2] - starts[2]) != 0 \
                or _push_int64(&r.doc_starts, r.docnos.size) != 0 \
                or _push_double(&r.scores, score) != 0 or _push_int64(&r.lines, r.lines_seen) != 0:
            r.status = NO_MEMORY
            return -1
        r.n_lines_read += 1
        tag_row, last_tag_start, last_tag_end = row, starts[5], ends[5]
    if tag_row != NULL:
        r.tag.size = 0
        if _push_bytes(&r.tag, tag_row + last_tag_start, last_tag_end - last_tag_start) != 0:
            r.status = NO_MEMORY
            return -1
    return 0


cdef class RunRanker:
    """Parse a run in whole-line blocks, ranking and joining each topic against
    ``qrels`` as soon as its lines end. Call :meth:`finish` after the last block."""

    cdef RunState state
    cdef QrelsTable qrels
    cdef bint finished
    cdef bint handed_over

    def __cinit__(self, QrelsTable qrels, int ties, bint float32, int64_t depth,
                  uint64_t seed, bint keep_scores=True):
        if not qrels.finished or qrels.state.status != OK:
            raise ValueError("the qrels table must be finished without error")
        if ties < RULE_DOCNO_DESC or ties > RULE_RANDOM:
            raise ValueError(f"unknown tie rule {ties}")
        self.qrels = qrels
        self.state.qrels = &qrels.state
        self.state.ties = ties
        self.state.float32 = float32
        self.state.depth = depth
        self.state.seed = seed
        self.state.keep_scores = keep_scores
        self.state.current = -1
        if _strings_init(&self.state.topics) != 0 or \
                _push_int64(&self.state.doc_starts, 0) != 0:
            raise MemoryError()

    def __dealloc__(self):
        _strings_free(&self.state.topics)
        free(self.state.docnos.data)
        free(self.state.doc_starts.data)
        free(self.state.scores.data)
        free(self.state.lines.data)
        free(self.state.entries)
        free(self.state.seen)
        free(self.state.judgments.slots)
        free(self.state.counts.data)
        free(self.state.out_levels.data)
        free(self.state.out_scores.data)
        free(self.state.out_judged.data)
        free(self.state.tag.data)

    def feed(self, const unsigned char[::1] text):
        """Parse a block of whole lines; returns the status (STATUS_OK or why it stopped)."""
        if self.finished or self.state.status != OK:
            raise ValueError("this ranker is finished or has stopped")
        cdef const char* data = <const char*>&text[0] if text.shape[0] else NULL
        cdef Py_ssize_t size = text.shape[0]
        with nogil:
            if size:
                _run_feed(&self.state, data, size)
        return self.state.status

    def add_dict(self, run):
        """Add ``{qid: {docno: score}}`` with str ids and int or float scores, ranking
        each topic as it goes; anything else (or a NaN score) stops with BAD_LINE."""
        if self.finished or self.state.status != OK:
            raise ValueError("this ranker is finished or has stopped")
        if not PyDict_CheckExact(run):
            self.state.status = BAD_LINE
            return self.state.status
        cdef Py_ssize_t topic_position = 0, doc_position, n
        cdef PyObject* qid
        cdef PyObject* docs
        cdef PyObject* docno
        cdef PyObject* score_object
        cdef const char* text
        cdef double score
        cdef int64_t topic
        cdef RunState* r = &self.state
        while PyDict_Next(run, &topic_position, &qid, &docs):
            if not PyUnicode_CheckExact(<object>qid) or not PyDict_CheckExact(<object>docs):
                r.status = BAD_LINE
                return r.status
            text = PyUnicode_AsUTF8AndSize(<object>qid, &n)
            if _rank_current(r) != 0:
                return r.status
            if _strings_find(&r.topics, text, n) >= 0:
                r.status = NOT_GROUPED
                return r.status
            topic = _strings_add(&r.topics, text, n)
            if topic < 0:
                r.status = NO_MEMORY
                return r.status
            r.current = topic
            if _lookup_build(&r.judgments, r.qrels,
                             _strings_find(&r.qrels.topics, text, n)) != -1:
                r.status = NO_MEMORY
                return r.status
            doc_position = 0
            while PyDict_Next(<object>docs, &doc_position, &docno, &score_object):
                if not PyUnicode_CheckExact(<object>docno):
                    r.status = BAD_LINE
                    return r.status
                if not _exact_number(<object>score_object, &score) or isnan(score):
                    r.status = BAD_LINE
                    return r.status
                if r.float32:
                    score = <double>(<float>score)
                text = PyUnicode_AsUTF8AndSize(<object>docno, &n)
                r.lines_seen += 1
                if _push_bytes(&r.docnos, text, n) != 0 \
                        or _push_int64(&r.doc_starts, r.docnos.size) != 0 \
                        or _push_double(&r.scores, score) != 0 \
                        or _push_int64(&r.lines, r.lines_seen) != 0:
                    r.status = NO_MEMORY
                    return r.status
                r.n_lines_read += 1
        return r.status

    def finish(self):
        """Rank the last topic; returns the status."""
        if self.state.status == OK and not self.finished:
            with nogil:
                _rank_current(&self.state)
        self.finished = True
        return self.state.status

    @property
    def status_line(self):
        return self.state.status_line

    @property
    def n_lines(self):
        """Data lines read."""
        return self.state.n_lines_read

    def result(self):
        """(topics in order of appearance, offsets, levels, judged, scores or None, tag).

        Hands the ranked columns over: each C buffer is freed as soon as it is copied,
        so the peak stays near one copy; a second call is an error.
        """
        if not self.finished or self.state.status != OK or self.handed_over:
            raise ValueError("no result: the ranker is not finished, has stopped, or gave it")
        self.handed_over = True
        counts = _int64_array(&self.state.counts)
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        levels = _double_array(&self.state.out_levels)
        _release_doubles(&self.state.out_levels)
        judged = np.zeros(self.state.out_judged.size, dtype=bool)
        cdef uint8_t[::1] judged_view = judged.view(np.uint8)
        if self.state.out_judged.size:
            memcpy(&judged_view[0], self.state.out_judged.data, self.state.out_judged.size)
        free(self.state.out_judged.data)
        self.state.out_judged.data = NULL
        self.state.out_judged.size = self.state.out_judged.capacity = 0
        scores = _double_array(&self.state.out_scores) if self.state.keep_scores else None
        _release_doubles(&self.state.out_scores)
        tag = self.state.tag.data[:self.state.tag.size].decode("utf-8") \
            if self.state.tag.size else ""
        return _strings_list(&self.state.topics), offsets, levels, judged, scores, tag


cdef void _release_doubles(Doubles* a) noexcept nogil:
    free(a.data)
    a.data = NULL
    a.size = 0
    a.capacity = 0


def random_tie_keys(uint64_t seed, const int64_t[::1] positions):
    """The random tie rule's keys for documents at these positions within their topics."""
    result = np.empty(positions.shape[0], dtype=np.int64)
    cdef int64_t[::1] out = result
    cdef Py_ssize_t i
    with nogil:
        for i in range(positions.shape[0]):
            out[i] = random_tie_key(seed, positions[i])
    return result
