"""Scores as a model of lower precision would emit them: rounded to float32, float16
or bfloat16, to nearest with ties to even, and widened back to a double (compared as
such). Beyond the format's largest finite value: +-inf, as a cast in C gives."""
from libc.math cimport INFINITY, copysign, fabs, frexp, isfinite, ldexp, nearbyint

cdef enum:
    PRECISION_FLOAT64 = 0
    PRECISION_FLOAT32 = 1
    PRECISION_FLOAT16 = 2       # IEEE binary16: 11 significant bits, 2^-14 .. 65504
    PRECISION_BFLOAT16 = 3      # bfloat16: 8 significant bits, float32's exponents


cdef inline double _rounded(double x, int bits, int min_exponent, double largest) noexcept nogil:
    """``x`` rounded to ``bits`` significant bits, to nearest (ties to even), with
    ``2**min_exponent`` the smallest normal value (below it, the subnormals' fixed
    step); +-inf beyond ``largest``. ``x * 2**-q`` and back are exact in a double."""
    cdef int exponent
    if not isfinite(x) or x == 0.0:
        return x
    frexp(x, &exponent)             # |x| = m 2^exponent, 0.5 <= m < 1
    exponent -= 1                   # floor(log2 |x|)
    if exponent < min_exponent:
        exponent = min_exponent
    cdef int step = exponent - (bits - 1)
    cdef double rounded = ldexp(nearbyint(ldexp(x, -step)), step)
    if fabs(rounded) > largest:
        return copysign(INFINITY, x)
    return rounded


cdef inline double _compared_score(double score, int precision) noexcept nogil:
    """``score`` as compared under ``precision`` (a PRECISION_ code)."""
    if precision == PRECISION_FLOAT64:
        return score
    if precision == PRECISION_FLOAT32:
        return <double>(<float>score)
    if precision == PRECISION_FLOAT16:
        return _rounded(score, 11, -14, 65504.0)
    return _rounded(score, 8, -126, 3.3895313892515355e38)    # (2 - 2^-7) 2^127
