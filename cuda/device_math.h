// core/math.h's scalar math as C++ overloads per dtype, for the .cu files only (nvcc): a kernel
// template calls exp_(x) for any T and gets mt_exp_f32 or mt_exp_f64. No formulas here.
#ifndef MT_CUDA_DEVICE_MATH_H
#define MT_CUDA_DEVICE_MATH_H

#include <stdbool.h>
#include <stdint.h>

extern "C" {
#include "core/math.h"
}

#define D static __device__ __forceinline__
// The element at p: a bool as its byte != 0 (core/math.h's mt_load_b8: bool memory may hold
// any byte), any other T as it is. Kernels read every input element through it.
template <typename T> D T load_(const T *p) { return *p; }
D bool load_(const bool *p) { return mt_load_b8(p); }
#define FLOAT1(fn)                                       \
    D float fn##_(float x) { return mt_##fn##_f32(x); } \
    D double fn##_(double x) { return mt_##fn##_f64(x); }
#define FLOAT2(fn)                                                 \
    D float fn##_(float x, float y) { return mt_##fn##_f32(x, y); } \
    D double fn##_(double x, double y) { return mt_##fn##_f64(x, y); }
#define INT2(fn)                                                         \
    D int32_t fn##_(int32_t x, int32_t y) { return mt_##fn##_i32(x, y); } \
    D int64_t fn##_(int64_t x, int64_t y) { return mt_##fn##_i64(x, y); }
FLOAT1(exp)
FLOAT1(log)
FLOAT1(log1p)
FLOAT1(sqrt)
FLOAT1(rsqrt)
FLOAT1(sin)
FLOAT1(cos)
FLOAT1(tanh)
FLOAT1(sigmoid)
FLOAT1(reciprocal)
FLOAT1(exp2)
FLOAT1(expm1)
FLOAT1(log2)
FLOAT1(log10)
FLOAT1(gelu)
FLOAT1(gelu_tanh)
FLOAT1(silu)
FLOAT2(gelu_backward)
FLOAT2(gelu_tanh_backward)
FLOAT2(div_floor)
FLOAT2(div_trunc)
FLOAT2(remainder)
FLOAT2(fmod)
FLOAT2(pow)
// core/math.h's integer division leaves a zero divisor to its caller (the CPU raises
// ZeroDivisionError); a kernel cannot raise, and x / 0 is undefined behaviour in CUDA C++ as in
// C++ (a trap on the host). PyTorch's CUDA kernels give an unspecified value there: ours give
// -1 for a quotient (all bits set, as the GPU's unsigned division sequence does) and x for a
// remainder, instead of undefined behaviour.
#define INT_DIV(fn, zero)                                                                   \
    D int32_t fn##_(int32_t x, int32_t y) { return y == 0 ? (zero) : mt_##fn##_i32(x, y); } \
    D int64_t fn##_(int64_t x, int64_t y) { return y == 0 ? (zero) : mt_##fn##_i64(x, y); }
INT_DIV(div_floor, -1)
INT_DIV(div_trunc, -1)
INT_DIV(remainder, x)
INT_DIV(fmod, x)
#undef INT_DIV
INT2(pow)
FLOAT2(clamp_min)
FLOAT2(clamp_max)
#undef FLOAT1
#undef FLOAT2
#undef INT2
// Integer bounds cannot be NaN: a plain comparison.
template <typename T> D T clamp_min_(T x, T k) { return x < k ? k : x; }
template <typename T> D T clamp_max_(T x, T k) { return x > k ? k : x; }
D float abs_(float x) { return mt_abs_f32(x); }
D double abs_(double x) { return mt_abs_f64(x); }
D int32_t abs_(int32_t x) { return mt_abs_i32(x); }
D int64_t abs_(int64_t x) { return mt_abs_i64(x); }
D bool sign_(bool x) { return x; } // a bool's sign is itself, as on the CPU
D int32_t sign_(int32_t x) { return mt_sign_i32(x); }
D int64_t sign_(int64_t x) { return mt_sign_i64(x); }
D float sign_(float x) { return mt_sign_f32(x); }
D double sign_(double x) { return mt_sign_f64(x); }
#define ALL5(fn, R)                                                           \
    D R fn##_(bool x) { return mt_##fn##_b8(x); }                              \
    D R fn##_(int32_t x) { return mt_##fn##_i32(x); }                          \
    D R fn##_(int64_t x) { return mt_##fn##_i64(x); }                          \
    D R fn##_(float x) { return mt_##fn##_f32(x); }                            \
    D R fn##_(double x) { return mt_##fn##_f64(x); }
ALL5(isnan, bool)
ALL5(isinf, bool)
#undef ALL5
#define MINMAX(fn)                                                             \
    D bool fn##_(bool x, bool y) { return mt_##fn##_b8(x, y); }                \
    D int32_t fn##_(int32_t x, int32_t y) { return mt_##fn##_i32(x, y); }      \
    D int64_t fn##_(int64_t x, int64_t y) { return mt_##fn##_i64(x, y); }      \
    D float fn##_(float x, float y) { return mt_##fn##_f32(x, y); }            \
    D double fn##_(double x, double y) { return mt_##fn##_f64(x, y); }
MINMAX(maximum)
MINMAX(minimum)
#undef MINMAX
D bool bitwise_not_(bool x) { return !x; }
template <typename T> D T bitwise_not_(T x) { return (T)~x; }
#undef D

#endif
