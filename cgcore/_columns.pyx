"""Arrow string columns read in place (see _columns.pxd), checked before use, and
grouped by topic (:func:`group_rows`)."""
from libc.stdint cimport int64_t, uint8_t, int32_t, uint32_t
from libc.stdlib cimport free
from libc.string cimport memset

from cpython.ref cimport PyObject

from cgcore._buffers cimport (Int64s, _push_int64, cg_malloc, cg_set_allocation_limit,
                              cg_take_failed_bytes)
from cgcore._strings cimport (Strings, _strings_add, _strings_equal, _strings_free,
                              _strings_init)
from cgcore._text cimport (PyUnicode_CheckExact, PyUnicode_IS_COMPACT_ASCII, _utf8,
                           _valid_utf8, cg_ascii_no_nul)

import numpy as np


def _set_allocation_limit(size_t n):
    """This module's allocation limit (see cgcore._trec._set_allocation_limit)."""
    return cg_set_allocation_limit(n)


cdef char _NO_BYTES = 0     # the data of a column without text


cdef class TextColumn:
    """The buffers of an Arrow string column (utf8 or large_utf8, or a dictionary of
    them with int32 indices), read in place: ``offsets`` (int32 or int64, the array's
    slice of them: n + 1 for n entries), ``data`` (the bytes they point into) and, if
    dictionary-encoded, ``indices`` (int32, a row's entry). ``valid`` says whether the
    buffers hold together: offsets in order and inside the data, indices inside the
    dictionary, every entry UTF-8 without NUL or line separators (ids the file reader
    would read as written). A column that is not valid is not ranked (the reference
    reader takes the input)."""

    def __cinit__(self, offsets, const unsigned char[::1] data, indices=None, views=None,
                  addresses=None, sizes=None, owner=None):
        """``TextColumn(offsets, data, indices=None)``, or for a string_view column
        ``TextColumn(None, None, indices, views, addresses, sizes, owner)``: the views'
        bytes (16 per entry) and the address (uintp) and size (int64) of each data
        buffer, which ``owner`` keeps alive."""
        cdef const int32_t[::1] offsets32
        cdef const int64_t[::1] offsets64
        cdef Py_ssize_t n_entries
        cdef int64_t size
        self.buffers = (offsets, data, indices, views, addresses, sizes, owner)
        if views is not None:
            self._views(views, addresses, sizes, indices)
            return
        if offsets is None or data is None:
            raise ValueError("offsets and data, or views")
        n_entries, size = len(offsets) - 1, data.shape[0]
        self.column.data = <const char*>&data[0] if size else &_NO_BYTES
        if n_entries < 0:
            return
        if offsets.dtype == np.int32:
            offsets32 = offsets
            self.column.offsets32 = &offsets32[0]
        elif offsets.dtype == np.int64:
            offsets64 = offsets
            self.column.offsets64 = &offsets64[0]
        else:
            raise ValueError("offsets must be int32 or int64")
        self._index(indices, n_entries)
        with nogil:
            self.valid = _column_valid(&self.column, n_entries, size)

    cdef _index(self, indices, Py_ssize_t n_entries):
        """The rows: the entries, or (dictionary-encoded) ``indices`` into them."""
        cdef const int32_t[::1] entries
        self.column.n_rows = n_entries
        if indices is not None:
            entries = indices
            self.column.n_rows = entries.shape[0]
            self.column.indices = &entries[0] if entries.shape[0] else NULL

    cdef _views(self, const unsigned char[::1] views, const size_t[::1] addresses,
                const int64_t[::1] sizes, indices):
        cdef Py_ssize_t n_entries = views.shape[0] // 16
        if views.shape[0] % 16 or addresses.shape[0] != sizes.shape[0]:
            raise ValueError("views are 16 bytes each, a size per buffer")
        self.column.views = &views[0] if n_entries else <const uint8_t*>&_NO_BYTES
        self.column.view_buffers = <const char**>&addresses[0] if addresses.shape[0] else NULL
        self.column.view_sizes = &sizes[0] if sizes.shape[0] else NULL
        self._index(indices, n_entries)
        with nogil:
            self.valid = _views_valid(&self.column, n_entries, addresses.shape[0])

    @staticmethod
    def of_strs(strs not None):
        """A column of Python strs (a pandas object column's values), read in place:
        pure-ASCII strs (the usual ids) through the array's own pointers; if any is not,
        each str's UTF-8 bytes (CPython's cached UTF-8) noted once, with the GIL held,
        in arrays of this column's (16 bytes per row). Not valid if an item is not an
        exact str or has no UTF-8 (a lone surrogate)."""
        cdef TextColumn column = TextColumn(None, None, views=np.zeros(0, np.uint8),
                                            addresses=np.zeros(0, np.uintp),
                                            sizes=np.zeros(0, np.int64), owner=strs)
        cdef Py_ssize_t n, i, length
        cdef const char* text
        cdef PyObject** items
        if not isinstance(strs, np.ndarray) or strs.dtype != object or strs.ndim != 1 \
                or not strs.flags.c_contiguous:
            raise ValueError("of_strs takes a contiguous 1-d numpy array of objects")
        n = strs.shape[0]
        items = <PyObject**><size_t>strs.ctypes.data   # borrowed: the array holds them
        for i in range(n):
            if not (PyUnicode_CheckExact(<object>items[i])
                    and PyUnicode_IS_COMPACT_ASCII(<object>items[i])):
                break
        else:
            column.column.strs, column.column.views = items, NULL
            column.column.n_rows, column.valid = n, True
            return column
        column.texts = <const char**>cg_malloc(max(n, 1) * sizeof(char*))
        column.text_lengths = <Py_ssize_t*>cg_malloc(max(n, 1) * sizeof(Py_ssize_t))
        if column.texts == NULL or column.text_lengths == NULL:
            raise MemoryError()
        column.column.texts, column.column.text_lengths = column.texts, column.text_lengths
        column.column.views, column.column.n_rows = NULL, n
        column.valid = True
        for i in range(n):
            text = _utf8(<object>items[i], &length) \
                if PyUnicode_CheckExact(<object>items[i]) else NULL
            if text == NULL:
                column.valid = False
                break
            column.texts[i], column.text_lengths[i] = text, length
        return column

    def __dealloc__(self):
        free(self.texts)
        free(self.text_lengths)

    @property
    def n_rows(self):
        return self.column.n_rows


cdef bint _views_valid(Column* c, Py_ssize_t n_entries, Py_ssize_t n_buffers) noexcept nogil:
    """As _column_valid, for a string_view column."""
    cdef Py_ssize_t i
    cdef int32_t length, buffer, offset
    cdef const uint8_t* view
    cdef const char* text
    if not _indices_valid(c, n_entries):
        return False
    for i in range(n_entries):
        view = c.views + 16 * i
        length = _int32_at(view)
        if length < 0:
            return False
        if length > 12:
            buffer, offset = _int32_at(view + 8), _int32_at(view + 12)
            if buffer < 0 or buffer >= n_buffers or offset < 0 \
                    or <int64_t>offset + length > c.view_sizes[buffer]:
                return False
        text = <const char*>view + 4 if length <= 12 \
            else c.view_buffers[_int32_at(view + 8)] + _int32_at(view + 12)
        if not cg_ascii_no_nul(text, length) and not _valid_utf8(<const uint8_t*>text, length):
            return False
    return True


cdef bint _indices_valid(Column* c, Py_ssize_t n_entries) noexcept nogil:
    """Every row's entry is one of the ``n_entries``."""
    cdef Py_ssize_t i
    if c.indices != NULL:
        for i in range(c.n_rows):
            if c.indices[i] < 0 or c.indices[i] >= n_entries:
                return False
    return c.n_rows == 0 or n_entries > 0


cdef bint _column_valid(Column* c, Py_ssize_t n_entries, int64_t size) noexcept nogil:
    """See TextColumn.valid."""
    cdef Py_ssize_t i, n
    cdef int64_t start, stop, first
    cdef const char* text
    for i in range(n_entries + 1):
        stop = c.offsets32[i] if c.offsets32 != NULL else c.offsets64[i]
        if stop < 0 or stop > size or (i > 0 and stop < start):
            return False
        if i == 0:
            first = stop
        start = stop
    if not _indices_valid(c, n_entries):
        return False
    if cg_ascii_no_nul(c.data + first, <Py_ssize_t>(stop - first)):
        return True
    for i in range(n_entries):
        if c.offsets32 != NULL:
            text, n = c.data + c.offsets32[i], c.offsets32[i + 1] - c.offsets32[i]
        else:
            text, n = c.data + c.offsets64[i], c.offsets64[i + 1] - c.offsets64[i]
        if not _valid_utf8(<const uint8_t*>text, n):
            return False
    return True


def group_rows(TextColumn topics not None):
    """The rows of each topic of a run column, topics in order of first appearance:
    ``(starts, order)``, topic g's rows being ``order[starts[g]:starts[g + 1]]`` in row
    order, ``order`` None when every topic's rows are contiguous already (the rows
    ``starts[g]:starts[g + 1]``). None past what the layout holds; MemoryError when
    out of memory."""
    cdef Column* c = &topics.column
    cdef Py_ssize_t n = c.n_rows, i, n_topics
    cdef Strings seen
    cdef Int64s counts
    cdef int64_t topic, previous = -1, failure = 0
    cdef bint grouped = True
    cdef const char* text
    cdef Py_ssize_t length
    cdef uint32_t[::1] row_topics = np.empty(n, np.uint32)
    cdef int64_t[::1] starts_view
    cdef int64_t[::1] order_view
    cdef int64_t[::1] slots
    if not topics.valid:
        raise ValueError("the column is not valid")
    memset(&seen, 0, sizeof(Strings))
    memset(&counts, 0, sizeof(Int64s))
    cg_take_failed_bytes()
    with nogil:
        if _strings_init(&seen) != 0:
            failure = -2
        for i in range(n):
            if failure != 0:
                break
            text = _cell(c, i, &length)
            if previous >= 0 and _strings_equal(&seen, previous, text, length):
                topic = previous
            else:
                topic = _strings_add(&seen, text, length)
                if topic < 0:
                    failure = topic
                    break
                if topic < counts.size:
                    grouped = False         # back to a topic met before
                elif _push_int64(&counts, 0) != 0:
                    failure = -2
                    break
                previous = topic
            counts.data[topic] += 1
            row_topics[i] = <uint32_t>topic
        n_topics = counts.size
    failed = cg_take_failed_bytes()
    _strings_free(&seen)
    if failure != 0:
        free(counts.data)
        if failure == -3:
            return None
        raise MemoryError(f"grouping a run's rows by topic: an allocation of {failed} "
                          "bytes failed")
    starts = np.zeros(n_topics + 1, np.int64)
    starts_view = starts
    for i in range(n_topics):
        starts_view[i + 1] = starts_view[i] + counts.data[i]
    free(counts.data)
    if grouped:
        return starts, None
    order = np.empty(n, np.int64)
    order_view = order
    slots = starts[:-1].copy()
    with nogil:
        for i in range(n):
            order_view[slots[row_topics[i]]] = i
            slots[row_topics[i]] += 1
    return starts, order
