"""Growable arrays handed to numpy without a copy (see _buffers.pxd)."""
from libc.stdint cimport int64_t
from libc.stdlib cimport free
from libc.string cimport memcpy

from cpython.buffer cimport PyBuffer_FillInfo

import numpy as np


cdef object _level_dtype(const Levels* a):
    return np.float64 if a.wide else np.int8


cdef object _int64_array(Int64s* a):
    result = np.empty(a.size, dtype=np.int64)
    cdef int64_t[::1] view = result
    if a.size:
        memcpy(&view[0], a.data, a.size * 8)
    return result


cdef class _Buffer:
    """Memory that numpy arrays use in place (np.frombuffer): a malloc'd block this
    object owns and frees when the last array goes, or, when ``owner`` is set, a
    read-only window on memory that the owner keeps (and that stays unchanged)."""

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, self.data, self.size, self.owner is not None, flags)

    def __releasebuffer__(self, Py_buffer* view):
        pass

    def __dealloc__(self):
        if self.owner is None:
            free(self.data)


cdef object _array(void* data, Py_ssize_t n, object dtype, object owner):
    """``n`` items at ``data`` as a numpy array, without a copy (see _Buffer)."""
    cdef _Buffer buffer
    if n == 0:
        result = np.zeros(0, dtype=dtype)
        result.flags.writeable = owner is None
        return result
    buffer = _Buffer.__new__(_Buffer)
    buffer.data, buffer.owner = data, owner
    buffer.size = n * np.dtype(dtype).itemsize
    return np.frombuffer(buffer, dtype=dtype)


cdef _Buffer _owning_buffer(void* data):
    """A _Buffer that frees ``data`` when it goes (the owner of _array windows)."""
    cdef _Buffer buffer = _Buffer.__new__(_Buffer)
    buffer.data, buffer.size, buffer.owner = data, 0, None
    return buffer


cdef object _hand_over(void** data, Py_ssize_t* size, Py_ssize_t* capacity, object dtype):
    """A growable array's items as a numpy array of ``dtype`` that takes its block
    over, without a copy; the growable array is left empty."""
    if size[0] == 0:
        free(data[0])
        result = np.zeros(0, dtype=dtype)
    else:
        result = _array(data[0], size[0], dtype, None)
    data[0] = NULL
    size[0] = capacity[0] = 0
    return result
