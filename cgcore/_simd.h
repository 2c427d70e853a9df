/* CG_SIMD: whether the SSE2 paths of _scan.h and _gains.h are compiled: on x86 unless
 * the build defines CUMGAIN_NO_SIMD (CUMGAIN_NO_SIMD=1 pip install ., to test the
 * portable code that ARM and MSVC builds use). */
#ifndef CUMGAIN_SIMD_H
#define CUMGAIN_SIMD_H

#if defined(__SSE2__) && !defined(CUMGAIN_NO_SIMD)
#define CG_SIMD 1
#else
#define CG_SIMD 0
#endif

#endif
