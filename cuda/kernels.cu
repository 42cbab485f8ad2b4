// The elementwise, cast and sum kernels of the CUDA backend, and the tables the host code picks
// them from. Kernels only index and compute: the scalar math is core/math.h's (MT_HD), the
// argument checks, promotion and launches are the host code's (elementwise.c, ops.c, blas.c).
#include <stdbool.h>
#include <stdint.h>

extern "C" {
#include "core/math.h"
}
#include "cuda/kernels.h"

// ---- the scalar math of each op, per dtype: a thin overload layer over core/math.h ----

#define FLOAT_MATH(fn)                                                                    \
    static __device__ __forceinline__ float fn##_(float x) { return mt_##fn##_f32(x); }   \
    static __device__ __forceinline__ double fn##_(double x) { return mt_##fn##_f64(x); }
FLOAT_MATH(exp)
FLOAT_MATH(log)
FLOAT_MATH(sqrt)
FLOAT_MATH(rsqrt)
FLOAT_MATH(sin)
FLOAT_MATH(cos)
FLOAT_MATH(tanh)
FLOAT_MATH(sigmoid)
FLOAT_MATH(reciprocal)
#undef FLOAT_MATH
static __device__ __forceinline__ float abs_(float x) { return mt_abs_f32(x); }
static __device__ __forceinline__ double abs_(double x) { return mt_abs_f64(x); }
static __device__ __forceinline__ int32_t abs_(int32_t x) { return mt_abs_i32(x); }
static __device__ __forceinline__ int64_t abs_(int64_t x) { return mt_abs_i64(x); }
static __device__ __forceinline__ float clamp_min_(float x, float k) { return mt_clamp_min_f32(x, k); }
static __device__ __forceinline__ double clamp_min_(double x, double k) { return mt_clamp_min_f64(x, k); }
template <typename T> static __device__ __forceinline__ T clamp_min_(T x, T k) { return x < k ? k : x; }
static __device__ __forceinline__ float clamp_max_(float x, float k) { return mt_clamp_max_f32(x, k); }
static __device__ __forceinline__ double clamp_max_(double x, double k) { return mt_clamp_max_f64(x, k); }
template <typename T> static __device__ __forceinline__ T clamp_max_(T x, T k) { return x > k ? k : x; }

// One functor per op: out = f(x, y, k) with k the op's scalar.
#define OP(Name, EXPR)                                                                     \
    struct Name {                                                                          \
        template <typename T>                                                              \
        __device__ __forceinline__ T operator()(T x, T y, T k) const                       \
        {                                                                                  \
            (void)x, (void)y, (void)k;                                                     \
            return (T)(EXPR);                                                              \
        }                                                                                  \
    };
OP(Fill, k)
OP(Add, x + k * y)
OP(Sub, x - k * y)
OP(Mul, x * y)
OP(Div, x / y)
OP(Neg, -x)
OP(ClampMin, clamp_min_(x, k))
OP(ClampMax, clamp_max_(x, k))
OP(Exp, exp_(x))
OP(Log, log_(x))
OP(Sqrt, sqrt_(x))
OP(Rsqrt, rsqrt_(x))
OP(Sin, sin_(x))
OP(Cos, cos_(x))
OP(Tanh, tanh_(x))
OP(Sigmoid, sigmoid_(x))
OP(Abs, abs_(x))
OP(Reciprocal, reciprocal_(x))
#undef OP

// ---- loading operands ----

template <typename T> static __device__ __forceinline__ T scalar_as(const mt_cuda_scalar &s)
{
    return (T)s.f;
}
template <> __device__ __forceinline__ int32_t scalar_as<int32_t>(const mt_cuda_scalar &s)
{
    return (int32_t)s.i;
}
template <> __device__ __forceinline__ int64_t scalar_as<int64_t>(const mt_cuda_scalar &s)
{
    return s.i;
}
template <> __device__ __forceinline__ bool scalar_as<bool>(const mt_cuda_scalar &s)
{
    return s.i != 0;
}

// Input k (1 or 2) at element offset off, or its scalar when it has no data.
template <typename T>
static __device__ __forceinline__ T load(const mt_cuda_ew &p, int k, int64_t off)
{
    return p.data[k] ? ((const T *)p.data[k])[off] : scalar_as<T>(p.scalar[k]);
}

// The element offsets of linear index i in each operand (strided path).
static __device__ __forceinline__ void offsets(const mt_cuda_ew &p, int64_t i, int64_t *off)
{
    off[0] = off[1] = off[2] = 0;
    for (int d = p.ndim - 1; d >= 0; d--) {
        const int64_t idx = i % p.sizes[d];
        i /= p.sizes[d];
        off[0] += idx * p.strides[0][d];
        off[1] += idx * p.strides[1][d];
        off[2] += idx * p.strides[2][d];
    }
}

// Elements per thread on the contiguous path: one 16-byte load per operand when aligned.
template <typename T> struct Vec {
    static constexpr int N = sizeof(T) >= 16 ? 1 : 16 / (int)sizeof(T);
};
template <typename T, int N> struct __align__(sizeof(T) * N) Pack {
    T v[N];
};

static __device__ __forceinline__ bool aligned16(const void *p)
{
    return p == nullptr || ((uintptr_t)p & 15) == 0;
}

// out, x, y broadcast to one shape (p.sizes); out = Op(x, y, k)
template <typename T, typename Op> __global__ void ew_kernel(mt_cuda_ew p)
{
    const Op op;
    const T k = scalar_as<T>(p.k);
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p.contig) {
        constexpr int N = Vec<T>::N;
        const int64_t base = tid * N;
        if (base >= p.n) {
            return;
        }
        T *out = (T *)p.data[0];
        if (base + N <= p.n && aligned16(out + base) &&
            aligned16(p.data[1] ? (const T *)p.data[1] + base : nullptr) &&
            aligned16(p.data[2] ? (const T *)p.data[2] + base : nullptr)) {
            Pack<T, N> x, y, o;
            for (int j = 0; j < N; j++) {
                x.v[j] = scalar_as<T>(p.scalar[1]);
                y.v[j] = scalar_as<T>(p.scalar[2]);
            }
            if (p.data[1]) {
                x = *(const Pack<T, N> *)((const T *)p.data[1] + base);
            }
            if (p.data[2]) {
                y = *(const Pack<T, N> *)((const T *)p.data[2] + base);
            }
#pragma unroll
            for (int j = 0; j < N; j++) {
                o.v[j] = op(x.v[j], y.v[j], k);
            }
            *(Pack<T, N> *)(out + base) = o;
            return;
        }
        for (int64_t i = base; i < base + N && i < p.n; i++) {
            out[i] = op(load<T>(p, 1, i), load<T>(p, 2, i), k);
        }
        return;
    }
    for (int64_t i = tid; i < p.n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t off[3];
        offsets(p, i, off);
        ((T *)p.data[0])[off[0]] = op(load<T>(p, 1, off[1]), load<T>(p, 2, off[2]), k);
    }
}

// out (dtype To), src (dtype From) broadcast to out's shape; out = (To)src
template <typename To, typename From> __global__ void cast_kernel(mt_cuda_ew p)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t off[3] = {i, i, i};
        if (!p.contig) {
            offsets(p, i, off);
        }
        const From v = ((const From *)p.data[1])[off[1]];
        ((To *)p.data[0])[off[0]] = (To)v;
    }
}

// x (n) contiguous -> acc (gridDim.x) partial sums, one per block; a second launch with one
// block reduces the partials.
template <typename T, typename Acc> __global__ void sum_kernel(const T *x, int64_t n, Acc *acc)
{
    __shared__ Acc part[MT_CUDA_SUM_THREADS];
    Acc s = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        s += (Acc)x[i];
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half) {
            part[threadIdx.x] += part[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        acc[blockIdx.x] = part[0];
    }
}

// ---- the tables (positional: mt_dtype order bool, int32, int64, float32, float64) ----

#define K(T, Op) (const void *)ew_kernel<T, Op>
#define ALL(Op) {K(bool, Op), K(int32_t, Op), K(int64_t, Op), K(float, Op), K(double, Op)}
#define NUMERIC(Op) {nullptr, K(int32_t, Op), K(int64_t, Op), K(float, Op), K(double, Op)}
#define FLOATS(Op) {nullptr, nullptr, nullptr, K(float, Op), K(double, Op)}
static const void *const ew_kernels[MT_CUDA_NUM_EW_OPS][MT_NUM_DTYPES] = {
    ALL(Fill),      NUMERIC(Add),   NUMERIC(Sub),     NUMERIC(Mul),  FLOATS(Div),
    NUMERIC(Neg),   NUMERIC(ClampMin), NUMERIC(ClampMax), FLOATS(Exp), FLOATS(Log),
    FLOATS(Sqrt),   FLOATS(Rsqrt),  FLOATS(Sin),      FLOATS(Cos),   FLOATS(Tanh),
    FLOATS(Sigmoid), NUMERIC(Abs),  FLOATS(Reciprocal),
};
#undef K

#define C(To, From) (const void *)cast_kernel<To, From>
#define FROM(To) {C(To, bool), C(To, int32_t), C(To, int64_t), C(To, float), C(To, double)}
static const void *const cast_kernels[MT_NUM_DTYPES][MT_NUM_DTYPES] = {
    FROM(bool), FROM(int32_t), FROM(int64_t), FROM(float), FROM(double),
};
#undef C

static const void *const sum_kernels[MT_NUM_DTYPES] = {
    (const void *)sum_kernel<bool, int64_t>,  (const void *)sum_kernel<int32_t, int64_t>,
    (const void *)sum_kernel<int64_t, int64_t>, (const void *)sum_kernel<float, float>,
    (const void *)sum_kernel<double, double>,
};

extern "C" const void *
mt_cuda_ew_kernel(mt_cuda_ew_op op, mt_dtype dt)
{
    return ew_kernels[op][dt];
}

extern "C" const void *
mt_cuda_cast_kernel(mt_dtype to, mt_dtype from)
{
    return cast_kernels[to][from];
}

extern "C" const void *
mt_cuda_sum_kernel(mt_dtype dt)
{
    return sum_kernels[dt];
}

extern "C" mt_dtype
mt_cuda_sum_acc(mt_dtype dt)
{
    return dt == MT_FLOAT32 || dt == MT_FLOAT64 ? dt : MT_INT64;
}
