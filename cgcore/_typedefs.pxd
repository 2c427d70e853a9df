# Types shared by the cgcore kernels, in one place.
from libc.stdint cimport int64_t

ctypedef double gain_t      # gains, discounts and every computed value
ctypedef int64_t index_t    # offsets into flat (CSR-style) arrays
