// The elementwise and cast kernels of the CUDA backend, and the tables the host code picks
// them from. Kernels only index and compute: the scalar math is core/math.h's (MT_HD, through
// device_math.h), the argument checks, promotion and launches are the host code's
// (elementwise.c, ops_ew.c).
#include <stdbool.h>
#include <stdint.h>

#include "cuda/device_math.h"
#include "cuda/kernels.h"

// One functor per op: f(x, y, z, k) with k the op's scalar; the kernel casts the value to the
// output dtype (T, or bool for comparisons).
#define OP(Name, EXPR)                                                                     \
    struct Name {                                                                          \
        template <typename T>                                                              \
        __device__ __forceinline__ auto operator()(T x, T y, T z, T k) const               \
        {                                                                                  \
            (void)x, (void)y, (void)z, (void)k;                                            \
            return EXPR;                                                                   \
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
OP(Log1p, log1p_(x))
OP(Exp2, exp2_(x))
OP(Expm1, expm1_(x))
OP(Log2, log2_(x))
OP(Log10, log10_(x))
OP(Sign, sign_(x))
OP(Gelu, gelu_(x))
OP(GeluTanh, gelu_tanh_(x))
OP(Silu, silu_(x))
OP(GeluBackward, gelu_backward_(x, y))
OP(GeluTanhBackward, gelu_tanh_backward_(x, y))
OP(DivFloor, div_floor_(x, y))
OP(DivTrunc, div_trunc_(x, y))
OP(Remainder, remainder_(x, y))
OP(Fmod, fmod_(x, y))
OP(Pow, pow_(x, y))
OP(Maximum, maximum_(x, y))
OP(Minimum, minimum_(x, y))
OP(BitwiseAnd, x & y)
OP(BitwiseOr, x | y)
OP(BitwiseNot, bitwise_not_(x))
OP(Clamp, minimum_(maximum_(x, y), z))
OP(Where, x != (T)0 ? y : z)
OP(MaskedFill, y != (T)0 ? z : x)
OP(Eq, x == y)
OP(Ne, x != y)
OP(Lt, x < y)
OP(Le, x <= y)
OP(Gt, x > y)
OP(Ge, x >= y)
OP(LogicalAnd, x != (T)0 && y != (T)0)
OP(LogicalOr, x != (T)0 || y != (T)0)
OP(LogicalNot, x == (T)0)
OP(Isnan, isnan_(x))
OP(Isinf, isinf_(x))
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
    return s.i != 0 || s.f != 0;
}

// Input k (1 to 3) at element offset off, or its scalar when it has no data.
template <typename T>
static __device__ __forceinline__ T load(const mt_cuda_ew &p, int k, int64_t off)
{
    return p.data[k] ? load_((const T *)p.data[k] + off) : scalar_as<T>(p.scalar[k]);
}

// The element offsets of linear index i in each operand (strided path).
static __device__ __forceinline__ void offsets(const mt_cuda_ew &p, int64_t i, int64_t *off)
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

// N elements of T in one aligned load or store
template <typename T, int N> struct alignas(sizeof(T) * N) pack {
    T v[N];
};

// A loaded pack's elements as values: bools read as byte != 0, as load_ reads one.
template <typename T, int N> static __device__ __forceinline__ void settle(pack<T, N> &) {}
template <int N> static __device__ __forceinline__ void settle(pack<bool, N> &q)
{
#pragma unroll
    for (int e = 0; e < N; e++) {
        q.v[e] = load_(&q.v[e]);
    }
}

// The p.vec case of ew_kernel: contiguous operands, each 32-byte aligned. A thread reads N
// elements of each input with one vector load and writes N with one store (scalar loads
// leave bandwidth unused on a wide memory bus); the last n % N elements one by one.
template <typename T, typename R, typename Op, int N>
static __device__ __forceinline__ void ew_vec(const mt_cuda_ew &p, const Op &op, const T k)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t npack = p.n / N;
    for (int64_t j = first; j < npack; j += step) {
        pack<T, N> in[3];
#pragma unroll
        for (int a = 0; a < 3; a++) {
            if (p.data[a + 1]) {
                in[a] = ((const pack<T, N> *)p.data[a + 1])[j];
                settle(in[a]);
            } else {
#pragma unroll
                for (int e = 0; e < N; e++) {
                    in[a].v[e] = scalar_as<T>(p.scalar[a + 1]);
                }
            }
        }
        pack<R, N> out;
#pragma unroll
        for (int e = 0; e < N; e++) {
            out.v[e] = (R)op(in[0].v[e], in[1].v[e], in[2].v[e], k);
        }
        ((pack<R, N> *)p.data[0])[j] = out;
    }
    for (int64_t i = npack * N + first; i < p.n; i += step) {
        ((R *)p.data[0])[i] = (R)op(load<T>(p, 1, i), load<T>(p, 2, i), load<T>(p, 3, i), k);
    }
}

// out (R), x, y, z (T) broadcast to one shape (p.sizes); out = Op(x, y, z, k). A grid-stride
// loop: any grid size covers any n.
template <typename T, typename R, typename Op> __global__ void ew_kernel(mt_cuda_ew p)
{
    const Op op;
    const T k = scalar_as<T>(p.k);
    if (p.vec) {
        ew_vec<T, R, Op, 4>(p, op, k);
        return;
    }
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
        int64_t off[MT_CUDA_MAX_OPERANDS] = {i, i, i, i};
        if (!p.contig) {
            offsets(p, i, off);
        }
        const T x = load<T>(p, 1, off[1]), y = load<T>(p, 2, off[2]), z = load<T>(p, 3, off[3]);
        ((R *)p.data[0])[off[0]] = (R)op(x, y, z, k);
    }
}

// out (dtype To), src (dtype From) broadcast to out's shape; out = (To)src
template <typename To, typename From> __global__ void cast_kernel(mt_cuda_ew p)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t off[MT_CUDA_MAX_OPERANDS] = {i, i, i, i};
        if (!p.contig) {
            offsets(p, i, off);
        }
        const From v = load_((const From *)p.data[1] + off[1]);
        ((To *)p.data[0])[off[0]] = (To)v;
    }
}

// ---- the tables (positional: mt_dtype order bool, int32, int64, float32, float64) ----

#define K(T, R, Op) MT_KERNEL_PTR(ew_kernel<T, R, Op>)
#define ALL(Op) {K(bool, bool, Op), K(int32_t, int32_t, Op), K(int64_t, int64_t, Op), K(float, float, Op), K(double, double, Op)}
#define ALL_B(Op) {K(bool, bool, Op), K(int32_t, bool, Op), K(int64_t, bool, Op), K(float, bool, Op), K(double, bool, Op)}
#define NUMERIC(Op) {nullptr, K(int32_t, int32_t, Op), K(int64_t, int64_t, Op), K(float, float, Op), K(double, double, Op)}
#define INTS(Op) {K(bool, bool, Op), K(int32_t, int32_t, Op), K(int64_t, int64_t, Op), nullptr, nullptr}
#define FLOATS(Op) {nullptr, nullptr, nullptr, K(float, float, Op), K(double, double, Op)}
// Indexed by mt_cuda_ew_op (checked by the designators' order) and dtype.
static const void *const ew_kernels[MT_CUDA_NUM_EW_OPS][MT_NUM_DTYPES] = {
    [MT_CUDA_FILL] = ALL(Fill),
    [MT_CUDA_ADD] = ALL(Add),
    [MT_CUDA_SUB] = NUMERIC(Sub),
    [MT_CUDA_MUL] = ALL(Mul),
    [MT_CUDA_DIV] = FLOATS(Div),
    [MT_CUDA_NEG] = NUMERIC(Neg),
    [MT_CUDA_CLAMP_MIN] = NUMERIC(ClampMin),
    [MT_CUDA_CLAMP_MAX] = NUMERIC(ClampMax),
    [MT_CUDA_EXP] = FLOATS(Exp),
    [MT_CUDA_LOG] = FLOATS(Log),
    [MT_CUDA_SQRT] = FLOATS(Sqrt),
    [MT_CUDA_RSQRT] = FLOATS(Rsqrt),
    [MT_CUDA_SIN] = FLOATS(Sin),
    [MT_CUDA_COS] = FLOATS(Cos),
    [MT_CUDA_TANH] = FLOATS(Tanh),
    [MT_CUDA_SIGMOID] = FLOATS(Sigmoid),
    [MT_CUDA_ABS] = NUMERIC(Abs),
    [MT_CUDA_RECIPROCAL] = FLOATS(Reciprocal),
    [MT_CUDA_LOG1P] = FLOATS(Log1p),
    [MT_CUDA_EXP2] = FLOATS(Exp2),
    [MT_CUDA_EXPM1] = FLOATS(Expm1),
    [MT_CUDA_LOG2] = FLOATS(Log2),
    [MT_CUDA_LOG10] = FLOATS(Log10),
    [MT_CUDA_SIGN] = ALL(Sign),
    [MT_CUDA_GELU] = FLOATS(Gelu),
    [MT_CUDA_GELU_TANH] = FLOATS(GeluTanh),
    [MT_CUDA_SILU] = FLOATS(Silu),
    [MT_CUDA_GELU_BACKWARD] = FLOATS(GeluBackward),
    [MT_CUDA_GELU_TANH_BACKWARD] = FLOATS(GeluTanhBackward),
    [MT_CUDA_DIV_FLOOR] = NUMERIC(DivFloor),
    [MT_CUDA_DIV_TRUNC] = NUMERIC(DivTrunc),
    [MT_CUDA_REMAINDER] = NUMERIC(Remainder),
    [MT_CUDA_FMOD] = NUMERIC(Fmod),
    [MT_CUDA_POW] = NUMERIC(Pow),
    [MT_CUDA_MAXIMUM] = ALL(Maximum),
    [MT_CUDA_MINIMUM] = ALL(Minimum),
    [MT_CUDA_BITWISE_AND] = INTS(BitwiseAnd),
    [MT_CUDA_BITWISE_OR] = INTS(BitwiseOr),
    [MT_CUDA_BITWISE_NOT] = INTS(BitwiseNot),
    [MT_CUDA_CLAMP] = ALL(Clamp),
    [MT_CUDA_WHERE] = ALL(Where),
    [MT_CUDA_MASKED_FILL] = ALL(MaskedFill),
    [MT_CUDA_EQ] = ALL_B(Eq),
    [MT_CUDA_NE] = ALL_B(Ne),
    [MT_CUDA_LT] = ALL_B(Lt),
    [MT_CUDA_LE] = ALL_B(Le),
    [MT_CUDA_GT] = ALL_B(Gt),
    [MT_CUDA_GE] = ALL_B(Ge),
    [MT_CUDA_LOGICAL_AND] = ALL_B(LogicalAnd),
    [MT_CUDA_LOGICAL_OR] = ALL_B(LogicalOr),
    [MT_CUDA_LOGICAL_NOT] = ALL_B(LogicalNot),
    [MT_CUDA_ISNAN] = ALL_B(Isnan),
    [MT_CUDA_ISINF] = ALL_B(Isinf),
};
#undef K

#define C(To, From) MT_KERNEL_PTR(cast_kernel<To, From>)
#define FROM(To) {C(To, bool), C(To, int32_t), C(To, int64_t), C(To, float), C(To, double)}
static const void *const cast_kernels[MT_NUM_DTYPES][MT_NUM_DTYPES] = {
    FROM(bool), FROM(int32_t), FROM(int64_t), FROM(float), FROM(double),
};
#undef C

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
