// core/math.h's scalar math as C++ overloads per dtype, for the .cu files other than the
// elementwise kernels (whose functors ops/elementwise.def generates): a kernel template calls
// exp_(x) for any T and gets mt_exp_f32 or mt_exp_f64. No formulas here.
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
template <typename T>
D T
load_(const T *p)
{
    return *p;
}
D bool
load_(const bool *p)
{
    return mt_load_b8(p);
}
#define FLOAT1(fn)               \
    D float fn##_(float x)       \
    {                            \
        return mt_##fn##_f32(x); \
    }                            \
    D double fn##_(double x)     \
    {                            \
        return mt_##fn##_f64(x); \
    }
FLOAT1(exp)
FLOAT1(log)
FLOAT1(log1p)
#undef FLOAT1
#define ALL5(fn, R)              \
    D R fn##_(bool x)            \
    {                            \
        return mt_##fn##_b8(x);  \
    }                            \
    D R fn##_(int32_t x)         \
    {                            \
        return mt_##fn##_i32(x); \
    }                            \
    D R fn##_(int64_t x)         \
    {                            \
        return mt_##fn##_i64(x); \
    }                            \
    D R fn##_(float x)           \
    {                            \
        return mt_##fn##_f32(x); \
    }                            \
    D R fn##_(double x)          \
    {                            \
        return mt_##fn##_f64(x); \
    }
ALL5(isnan, bool)
#undef ALL5
#define MINMAX(fn)                        \
    D bool fn##_(bool x, bool y)          \
    {                                     \
        return mt_##fn##_b8(x, y);        \
    }                                     \
    D int32_t fn##_(int32_t x, int32_t y) \
    {                                     \
        return mt_##fn##_i32(x, y);       \
    }                                     \
    D int64_t fn##_(int64_t x, int64_t y) \
    {                                     \
        return mt_##fn##_i64(x, y);       \
    }                                     \
    D float fn##_(float x, float y)       \
    {                                     \
        return mt_##fn##_f32(x, y);       \
    }                                     \
    D double fn##_(double x, double y)    \
    {                                     \
        return mt_##fn##_f64(x, y);       \
    }
MINMAX(maximum)
MINMAX(minimum)
#undef MINMAX

// as_<A>(x): x as the type A a kernel accumulates or stores in, (A)x for the real types
// (cuda/device_complex.h adds the complex ones, which have no C conversions)
template <typename A, typename T>
D A
as_(T x)
{
    return (A)x;
}
#undef D

// Sixteen bytes moved as one element: the complex128 element of the kernels that only move
// elements (take and put, flip, the triangles, masked_select), as uint64_t moves a complex64's
// eight bytes; aligned as complex128 is
struct alignas(16) mt_cuda_b128 {
    uint64_t lo, hi;
};

#endif
