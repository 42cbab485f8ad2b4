// The complex numbers of the kernels that compute on them outside the elementwise family: the
// products of prod and cumprod (reduce.cu, reduce_dim.cu), as C++ overloads on
// core/math_complex_parts.h's structs (mt_z64, mt_z128, which index.cu's accumulating move also
// takes from here), so that those kernels' templates take complex64 and complex128 unchanged. A
// product is math_complex_parts.h's mt_zmul; a sum adds the parts. Both dtypes accumulate in
// complex128, as the real ones in double.
#ifndef MT_CUDA_DEVICE_COMPLEX_H
#define MT_CUDA_DEVICE_COMPLEX_H

#include "cuda/device_math.h"

extern "C" {
#include "core/math_complex_parts.h"
}

#define D static __device__ __forceinline__
D mt_z128
operator*(mt_z128 a, mt_z128 b)
{
    return mt_zmul_z128(a, b);
}
D mt_z128
operator+(mt_z128 a, mt_z128 b)
{
    return mt_z_z128(a.re + b.re, a.im + b.im);
}
#undef D

// the conversions as_ makes: an identity (0 or 1) into the accumulator, an element into it and
// back
template <>
__device__ __forceinline__ mt_z128
as_<mt_z128, int>(int v)
{
    return mt_z_z128(v, 0);
}
template <>
__device__ __forceinline__ mt_z128
as_<mt_z128, mt_z64>(mt_z64 x)
{
    return mt_z_z128(x.re, x.im);
}
template <>
__device__ __forceinline__ mt_z64
as_<mt_z64, mt_z128>(mt_z128 x)
{
    return mt_z_z64((float)x.re, (float)x.im);
}

#endif
