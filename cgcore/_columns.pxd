"""Arrow string columns read in place (offsets + bytes, string views, dictionary
indices, or Python strs): the columnar entry's view of a table's id columns. The
readers (_trec.pyx) take rows through :func:`_cell`.
"""
from libc.stdint cimport int64_t, uint64_t, uint8_t, int32_t, uint32_t
from libc.string cimport memcpy

from cpython.ref cimport PyObject

cdef extern from "Python.h":
    # a pure-ASCII str's characters and length: plain reads of an immutable object
    Py_ssize_t cg_str_length "PyUnicode_GET_LENGTH"(PyObject* o) noexcept nogil
    void* cg_str_data "PyUnicode_DATA"(PyObject* o) noexcept nogil


cdef struct Column:         # an Arrow string column: row i's text is data[offsets[e]:
    const char* data        # offsets[e + 1]], e = indices[i] if dictionary-encoded, else i
    const int32_t* offsets32    # (one of the two offset widths, the other NULL)
    const int64_t* offsets64
    const uint8_t* views        # or a string_view column: 16 bytes per entry, the length
    const char** view_buffers   # (int32), then the text if <= 12 bytes, else a prefix,
    const int64_t* view_sizes   # the buffer's index and the offset in it (int32 each)
    const int32_t* indices
    PyObject** strs             # or Python strs, every one pure ASCII (read in place)
    const char** texts          # or the UTF-8 bytes of Python strs (see TextColumn.of_strs)
    const Py_ssize_t* text_lengths
    Py_ssize_t n_rows


cdef inline int32_t _int32_at(const uint8_t* p) noexcept nogil:
    cdef int32_t value
    memcpy(&value, p, 4)
    return value


cdef inline const char* _cell(const Column* c, Py_ssize_t row, Py_ssize_t* n) noexcept nogil:
    """Row ``row``'s text (its length in ``n``): a pointer into the column's data."""
    cdef Py_ssize_t entry = c.indices[row] if c.indices != NULL else row
    cdef int64_t start, stop
    cdef const uint8_t* view
    if c.strs != NULL:
        n[0] = cg_str_length(c.strs[row])
        return <const char*>cg_str_data(c.strs[row])
    if c.texts != NULL:
        n[0] = c.text_lengths[row]
        return c.texts[row]
    if c.views != NULL:
        view = c.views + 16 * entry
        n[0] = _int32_at(view)
        if n[0] <= 12:
            return <const char*>view + 4
        return c.view_buffers[_int32_at(view + 8)] + _int32_at(view + 12)
    if c.offsets32 != NULL:
        start, stop = c.offsets32[entry], c.offsets32[entry + 1]
    else:
        start, stop = c.offsets64[entry], c.offsets64[entry + 1]
    n[0] = <Py_ssize_t>(stop - start)
    return c.data + start


cdef class TextColumn:
    cdef Column column
    cdef object buffers         # what the pointers point into, kept alive
    cdef readonly bint valid
    cdef const char** texts     # of_strs: owned here
    cdef Py_ssize_t* text_lengths
    cdef _index(self, indices, Py_ssize_t n_entries)
    cdef _views(self, const unsigned char[::1] views, const size_t[::1] addresses,
                const int64_t[::1] sizes, indices)
