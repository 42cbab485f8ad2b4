/* Scalar math shared by the CPU loops and the CUDA kernels, forward and backward.
 *
 * Each formula is written once, in one of the headers this one includes, by concern; code includes
 * this header, not those. MT_HD marks the functions __host__ __device__ under nvcc. A row of
 * ops/elementwise.def names its function mt_<name>_<suffix> (suffix f32, f64, i32, i64, b8, c64,
 * c128), found in:
 *   core/math_float.h       float and double only: libm, divisions, rounding, tests, float pairs,
 *                           erfinv, digamma, trigamma, polygamma;
 *   core/math_int.h         integers and bool only: division, remainder, pow, bitwise ops, shifts;
 *   core/math_numeric.h     every real dtype: arithmetic, sign, max/min, clamp, comparisons,
 *                           selections;
 *   core/math_activation.h  the activations of torch.nn.functional, forward and backward;
 *   core/math_complex.h     complex64 and complex128;
 *   core/math_special.h     torch.special's functions and the integer and float-bit pairs. */
#ifndef MT_MATH_H
#define MT_MATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __CUDACC__
#define MT_HD __host__ __device__
#else
#define MT_HD
#endif

/* The activations (core/math_activation.h) are compositions (mish is tanh(log1p(exp(x)))); given cpu/vmath.h's
 * functions, GCC's inliner stopped part way and left a call per element in the float32 vector
 * loops (mish 10x PyTorch's time). Forced inline, the loop sees straight-line code. */
#if defined(__GNUC__) && !defined(__CUDACC__)
#define MT_ALWAYS_INLINE __attribute__((always_inline))
#else
#define MT_ALWAYS_INLINE
#endif

#define MT_SQRT1_2 0.70710678118654752440 /* 1/sqrt(2), for the exact (erf) GELU */
#define MT_PI 3.14159265358979323846

/* A bool in memory is read as its byte != 0, as PyTorch reads it: memory minitorch shares (a
 * NumPy array viewed as bool, a DLPack capsule) may hold any byte, and loading one that is not 0
 * or 1 through a C bool is undefined (GCC's code then gives ~2 == 3, and 2 + 255 as a sum;
 * UBSan flags it). Every kernel and cast reads bools through this; every bool minitorch writes
 * is 0 or 1. */
static inline MT_HD bool
mt_load_b8(const void *p)
{
    return *(const unsigned char *)p != 0;
}

#include "core/math_float.h"
#include "core/math_int.h"
#include "core/math_numeric.h"
#include "core/math_activation.h"
#include "core/math_complex.h"
#include "core/math_special.h"

#endif
