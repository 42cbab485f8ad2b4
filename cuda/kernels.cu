// The elementwise and cast kernels of the CUDA backend, and the tables the host code picks
// them from. Kernels only index and compute: one functor per row of ops/elementwise.def and
// dtype, generated from the table, calls the row's core/math.h function (complex64 and
// complex128: the MT_EW_COMPLEX rows', core/math_complex_parts.h); the argument checks,
// promotion and output are the front end's (csrc/ops/elementwise.c), the launch the host
// code's (elementwise.c).
#include <stdbool.h>
#include <stdint.h>

#include "core/half.h"
#include "cuda/device_math.h"
#include "cuda/grid_stride.h"
#include "cuda/kernels.h"
#include "ops/elementwise_table.h"

extern "C" {
#include "core/math_complex_parts.h"
}

// The functor of row name on dtype T (suffix S): f(x, y, z, k, k2, k3) with the form's operand
// types (T1, T2, T3, the scalars k, k2, k3 of type T) and result type R.
namespace ew
{
#define FUNCTOR(name, form, T, S)                                                        \
    struct name##_##S {                                                                  \
        typedef MT_EW_T1(form, T) T1;                                                    \
        typedef MT_EW_T2(form, T) T2;                                                    \
        typedef MT_EW_T3(form, T) T3;                                                    \
        typedef MT_EW_R(form, T) R;                                                      \
        typedef T K;                                                                     \
        __device__ __forceinline__ R operator()(T1 x, T2 y, T3 z, K k, K k2, K k3) const \
        {                                                                                \
            (void)x, (void)y, (void)z, (void)k, (void)k2, (void)k3;                      \
            return (R)MT_EW_CALL_##form(mt_##name##_##S);                                \
        }                                                                                \
    };
#define NO_FUNCTOR(name, form, T, S)
#define MT_EW(name, form, dtypes, meta, scalars, kernel) \
    MT_EW_DTYPES_##dtypes(FUNCTOR, NO_FUNCTOR, name, form)
#define MT_EW_COMPLEX(name, form) \
    FUNCTOR(name, form, mt_z64, z64) FUNCTOR(name, form, mt_z128, z128)
#include "ops/elementwise.def"
#undef FUNCTOR
#undef NO_FUNCTOR
} // namespace ew

// ---- loading operands ----

template <typename T>
static __device__ __forceinline__ T
scalar_as(const mt_cuda_scalar &s)
{
    return (T)s.f;
}
template <>
__device__ __forceinline__ int32_t
scalar_as<int32_t>(const mt_cuda_scalar &s)
{
    return (int32_t)s.i;
}
template <>
__device__ __forceinline__ int64_t
scalar_as<int64_t>(const mt_cuda_scalar &s)
{
    return s.i;
}
template <>
__device__ __forceinline__ bool
scalar_as<bool>(const mt_cuda_scalar &s)
{
    return s.i != 0 || s.f != 0;
}

// The small dtypes (core/dtype.h) only move here: fills and casts. Integers take the scalar's
// int, float16 and bfloat16 its double through float.
#define SCALAR_AS_INT(T)                                                           \
    template <> __device__ __forceinline__ T scalar_as<T>(const mt_cuda_scalar &s) \
    {                                                                              \
        return (T)s.i;                                                             \
    }
SCALAR_AS_INT(uint8_t)
SCALAR_AS_INT(int8_t)
SCALAR_AS_INT(int16_t)
#undef SCALAR_AS_INT
template <>
__device__ __forceinline__ mt_half
scalar_as<mt_half>(const mt_cuda_scalar &s)
{
    return mt_float_to_half((float)s.f);
}
template <>
__device__ __forceinline__ mt_bf16
scalar_as<mt_bf16>(const mt_cuda_scalar &s)
{
    return mt_float_to_bf16((float)s.f);
}
// a complex number's parts: its double and im (a real number's im is 0)
template <>
__device__ __forceinline__ mt_z64
scalar_as<mt_z64>(const mt_cuda_scalar &s)
{
    return mt_z_z64((float)s.f, (float)s.im);
}
template <>
__device__ __forceinline__ mt_z128
scalar_as<mt_z128>(const mt_cuda_scalar &s)
{
    return mt_z_z128(s.f, s.im);
}

// A cast's value as a C number (float16 and bfloat16 as float), and its store with PyTorch's
// conversions (csrc/cpu/loops.h's MT_ST_*: to uint8 through int64, int8/int16 through int32).
template <typename T>
static __device__ __forceinline__ T
as_number(T v)
{
    return v;
}
static __device__ __forceinline__ float
as_number(mt_half v)
{
    return mt_half_to_float(v);
}
static __device__ __forceinline__ float
as_number(mt_bf16 v)
{
    return mt_bf16_to_float(v);
}
template <typename To> struct store_as {
    template <typename V> static __device__ __forceinline__ To go(V v)
    {
        return (To)v;
    }
};
template <> struct store_as<uint8_t> {
    template <typename V> static __device__ __forceinline__ uint8_t go(V v)
    {
        return (uint8_t)(int64_t)v;
    }
};
template <> struct store_as<int8_t> {
    template <typename V> static __device__ __forceinline__ int8_t go(V v)
    {
        return (int8_t)(int32_t)v;
    }
};
template <> struct store_as<int16_t> {
    template <typename V> static __device__ __forceinline__ int16_t go(V v)
    {
        return (int16_t)(int32_t)v;
    }
};
template <> struct store_as<mt_half> {
    template <typename V> static __device__ __forceinline__ mt_half go(V v)
    {
        return mt_float_to_half((float)v);
    }
};
template <> struct store_as<mt_bf16> {
    template <typename V> static __device__ __forceinline__ mt_bf16 go(V v)
    {
        return mt_float_to_bf16((float)v);
    }
};

// A cast from From to To: the value through as_number and store_as; a real number becomes the
// real part of a complex one, a complex number gives a real dtype its real part (the front end
// warns, as PyTorch's) and bool whether it is nonzero, and complex dtypes convert part by part.
template <typename To, typename From> struct convert {
    static __device__ __forceinline__ To go(From v)
    {
        return store_as<To>::go(as_number(v));
    }
};
template <typename From> struct convert<mt_z64, From> {
    static __device__ __forceinline__ mt_z64 go(From v)
    {
        return mt_z_z64((float)as_number(v), 0);
    }
};
template <typename From> struct convert<mt_z128, From> {
    static __device__ __forceinline__ mt_z128 go(From v)
    {
        return mt_z_z128((double)as_number(v), 0);
    }
};
#define FROM_COMPLEX(Z)                                   \
    template <typename To> struct convert<To, Z> {        \
        static __device__ __forceinline__ To go(Z v)      \
        {                                                 \
            return store_as<To>::go(v.re);                \
        }                                                 \
    };                                                    \
    template <> struct convert<bool, Z> {                 \
        static __device__ __forceinline__ bool go(Z v)    \
        {                                                 \
            return v.re != 0 || v.im != 0;                \
        }                                                 \
    };                                                    \
    template <> struct convert<mt_z64, Z> {               \
        static __device__ __forceinline__ mt_z64 go(Z v)  \
        {                                                 \
            return mt_z_z64((float)v.re, (float)v.im);    \
        }                                                 \
    };                                                    \
    template <> struct convert<mt_z128, Z> {              \
        static __device__ __forceinline__ mt_z128 go(Z v) \
        {                                                 \
            return mt_z_z128(v.re, v.im);                 \
        }                                                 \
    };
FROM_COMPLEX(mt_z64)
FROM_COMPLEX(mt_z128)
#undef FROM_COMPLEX

// Input k (1 to 3) at element offset off, or its scalar when it has no data.
template <typename T>
static __device__ __forceinline__ T
load(const mt_cuda_ew &p, int k, int64_t off)
{
    return p.data[k] ? load_((const T *)p.data[k] + off) : scalar_as<T>(p.scalar[k]);
}

// The element offsets of linear index i in each operand (strided path).
static __device__ __forceinline__ void
offsets(const mt_cuda_ew &p, int64_t i, int64_t *off)
{
    for (int k = 0; k < MT_CUDA_MAX_OPERANDS; k++) {
        off[k] = 0;
    }
    for (int d = p.ndim - 1; d >= 0; d--) {
        const int64_t idx = i % p.sizes[d];
        i /= p.sizes[d];
        for (int k = 0; k < MT_CUDA_MAX_OPERANDS; k++) {
            off[k] += idx * p.strides[k][d];
        }
    }
}

// The same with 32-bit indices (p.idx32: n and every offset below 2^31): a fast division by
// each size (its divider computed on the host), the remainder by a multiply-subtract.
static __device__ __forceinline__ void
offsets32(const mt_cuda_ew &p, uint32_t i, int64_t *off)
{
    uint32_t o[MT_CUDA_MAX_OPERANDS] = {0, 0, 0, 0};
    for (int d = p.ndim - 1; d >= 0; d--) {
        const uint32_t q = mt_cuda_div(p.div[d], i), idx = i - q * (uint32_t)p.sizes[d];
        i = q;
        for (int k = 0; k < MT_CUDA_MAX_OPERANDS; k++) {
            o[k] += idx * (uint32_t)p.strides[k][d];
        }
    }
    for (int k = 0; k < MT_CUDA_MAX_OPERANDS; k++) {
        off[k] = o[k];
    }
}

// The element offsets of index i in each operand: i itself when every operand is contiguous.
static __device__ __forceinline__ void
offsets_of(const mt_cuda_ew &p, int64_t i, int64_t *off)
{
    if (p.contig) {
        return; // off holds i
    }
    if (p.idx32) {
        offsets32(p, (uint32_t)i, off);
    } else {
        offsets(p, i, off);
    }
}

// N elements of T in one aligned load or store
template <typename T, int N> struct alignas(sizeof(T) * N) pack {
    T v[N];
};

// A loaded pack's elements as values: bools read as byte != 0, as load_ reads one.
template <typename T, int N>
static __device__ __forceinline__ void
settle(pack<T, N> &)
{
}
template <int N>
static __device__ __forceinline__ void
settle(pack<bool, N> &q)
{
#pragma unroll
    for (int e = 0; e < N; e++) {
        q.v[e] = load_(&q.v[e]);
    }
}

// Input k's elements j*N to j*N+N-1 of a contiguous, aligned operand (or its scalar N times).
template <typename T, int N>
static __device__ __forceinline__ void
load_pack(const mt_cuda_ew &p, int k, int64_t j, pack<T, N> &q)
{
    if (p.data[k]) {
        q = ((const pack<T, N> *)p.data[k])[j];
        settle(q);
        return;
    }
#pragma unroll
    for (int e = 0; e < N; e++) {
        q.v[e] = scalar_as<T>(p.scalar[k]);
    }
}

// The p.vec case of ew_kernel: contiguous operands, each 32-byte aligned. A thread reads N
// elements of each input with one vector load and writes N with one store (scalar loads
// leave bandwidth unused on a wide memory bus); the last n % N elements one by one.
template <typename F, int N>
static __device__ __forceinline__ void
ew_vec(const mt_cuda_ew &p, const F &f, const typename F::K k, const typename F::K k2,
       const typename F::K k3)
{
    typedef typename F::T1 T1;
    typedef typename F::T2 T2;
    typedef typename F::T3 T3;
    typedef typename F::R R;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t npack = p.n / N;
    for (int64_t j = first; j < npack; j += step) {
        pack<T1, N> x;
        pack<T2, N> y;
        pack<T3, N> z;
        load_pack(p, 1, j, x);
        load_pack(p, 2, j, y);
        load_pack(p, 3, j, z);
        pack<R, N> out;
#pragma unroll
        for (int e = 0; e < N; e++) {
            out.v[e] = f(x.v[e], y.v[e], z.v[e], k, k2, k3);
        }
        ((pack<R, N> *)p.data[0])[j] = out;
    }
    for (int64_t i = npack * N + first; i < p.n; i += step) {
        ((R *)p.data[0])[i] = f(load<T1>(p, 1, i), load<T2>(p, 2, i), load<T3>(p, 3, i), k, k2, k3);
    }
}

// out (R), x, y, z (T1, T2, T3) broadcast to one shape (p.sizes); out = F(x, y, z, k, k2, k3).
// A grid-stride loop: any grid size covers any n.
template <typename F>
__global__ void
ew_kernel(mt_cuda_ew p)
{
    const F f;
    typedef typename F::K K;
    const K k = scalar_as<K>(p.k), k2 = scalar_as<K>(p.k2), k3 = scalar_as<K>(p.k3);
    if (p.vec) {
        ew_vec<F, 4>(p, f, k, k2, k3);
        return;
    }
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
        int64_t off[MT_CUDA_MAX_OPERANDS] = {i, i, i, i};
        offsets_of(p, i, off);
        const typename F::T1 x = load<typename F::T1>(p, 1, off[1]);
        const typename F::T2 y = load<typename F::T2>(p, 2, off[2]);
        const typename F::T3 z = load<typename F::T3>(p, 3, off[3]);
        ((typename F::R *)p.data[0])[off[0]] = f(x, y, z, k, k2, k3);
    }
}

// out (T); every element = k
template <typename T>
__global__ void
fill_kernel(mt_cuda_ew p)
{
    const T k = scalar_as<T>(p.k);
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
        int64_t off[MT_CUDA_MAX_OPERANDS] = {i, i, i, i};
        offsets_of(p, i, off);
        ((T *)p.data[0])[off[0]] = k;
    }
}

// out (dtype To), src (dtype From) broadcast to out's shape; out = (To)src
template <typename To, typename From>
__global__ void
cast_kernel(mt_cuda_ew p)
{
    MT_CUDA_GRID_STRIDE(i, p.n)
    {
        int64_t off[MT_CUDA_MAX_OPERANDS] = {i, i, i, i};
        offsets_of(p, i, off);
        const From v = load_((const From *)p.data[1] + off[1]);
        ((To *)p.data[0])[off[0]] = convert<To, From>::go(v);
    }
}

// ---- the tables (positional: ops/elementwise.def's row order, mt_dtype order bool, int32,
// int64, float32, float64, then for fills and casts uint8 to bfloat16, complex64, complex128) ----

#define ENTRY(name, form, T, S) MT_KERNEL_PTR(ew_kernel<ew::name##_##S>),
#define NO_ENTRY(name, form, T, S) nullptr,
static const void *const ew_kernels[MT_NUM_EW][MT_NUM_DTYPES] = {
#define MT_EW(name, form, dtypes, meta, scalars, kernel) \
    {MT_EW_DTYPES_##dtypes(ENTRY, NO_ENTRY, name, form)},
#include "ops/elementwise.def"
};
#undef ENTRY
#undef NO_ENTRY

// The MT_EW_COMPLEX rows' kernels, [row][0] complex64 and [row][1] complex128 (filled by name:
// those rows are not the first rows, and C++ has no array designators); NULL for the others.
static const struct complex_table {
    const void *k[MT_NUM_EW][2];
    complex_table() : k()
    {
#define MT_EW_COMPLEX(name, form)                                  \
    k[MT_EW_##name][0] = MT_KERNEL_PTR(ew_kernel<ew::name##_z64>); \
    k[MT_EW_##name][1] = MT_KERNEL_PTR(ew_kernel<ew::name##_z128>);
#include "ops/elementwise.def"
    }
} complex_kernels;

static_assert(MT_BFLOAT16 == 9 && MT_COMPLEX64 == 10 && MT_COMPLEX128 == 11,
              "the fill and cast tables list the dtypes up to complex128 in mt_dtype order");
static const void *const fill_kernels[MT_NUM_DTYPES] = {
    MT_KERNEL_PTR(fill_kernel<bool>),    MT_KERNEL_PTR(fill_kernel<int32_t>),
    MT_KERNEL_PTR(fill_kernel<int64_t>), MT_KERNEL_PTR(fill_kernel<float>),
    MT_KERNEL_PTR(fill_kernel<double>),  MT_KERNEL_PTR(fill_kernel<uint8_t>),
    MT_KERNEL_PTR(fill_kernel<int8_t>),  MT_KERNEL_PTR(fill_kernel<int16_t>),
    MT_KERNEL_PTR(fill_kernel<mt_half>), MT_KERNEL_PTR(fill_kernel<mt_bf16>),
    MT_KERNEL_PTR(fill_kernel<mt_z64>),  MT_KERNEL_PTR(fill_kernel<mt_z128>),
};

#define C(To, From) MT_KERNEL_PTR(cast_kernel<To, From>)
#define FROM(To)                                                                                   \
    {C(To, bool),   C(To, int32_t), C(To, int64_t), C(To, float),   C(To, double), C(To, uint8_t), \
     C(To, int8_t), C(To, int16_t), C(To, mt_half), C(To, mt_bf16), C(To, mt_z64), C(To, mt_z128)}
static const void *const cast_kernels[MT_NUM_DTYPES][MT_NUM_DTYPES] = {
    FROM(bool),   FROM(int32_t), FROM(int64_t), FROM(float),   FROM(double), FROM(uint8_t),
    FROM(int8_t), FROM(int16_t), FROM(mt_half), FROM(mt_bf16), FROM(mt_z64), FROM(mt_z128),
};
#undef C

extern "C" const void *
mt_cuda_ew_kernel(mt_ew_id row, mt_dtype dt)
{
    if (dt == MT_COMPLEX64 || dt == MT_COMPLEX128) {
        return complex_kernels.k[row][dt - MT_COMPLEX64];
    }
    return ew_kernels[row][dt];
}

extern "C" const void *
mt_cuda_fill_kernel(mt_dtype dt)
{
    return fill_kernels[dt];
}

extern "C" const void *
mt_cuda_cast_kernel(mt_dtype to, mt_dtype from)
{
    return cast_kernels[to][from];
}
