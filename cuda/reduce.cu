// The reduction kernels of the CUDA backend: one generic strided kernel (a block per result,
// each thread folding a strided share of the reduced elements, then a shared-memory tree; or,
// for few results over many elements, several blocks per result and a second pass over their
// states, as PyTorch's Reduce.cuh) and one small reducer per op. The ops along one dim with the
// input's shape (cumsum, softmax, ...) are in reduce_dim.cu. The host code (ops_reduce.c) picks
// dims, dtypes, the grid and errors.
#include <math.h>
#include <string.h>

#include "cuda/block_sum.h"
#include "cuda/device_complex.h"
#include "cuda/device_math.h"
#include "cuda/kernels.h"

// The accumulator of sum and prod: float64 for floats (as the CPU's), complex128 for the
// complex dtypes (prod's: their sum is the parts' sums, dispatch/complex.c), int64 for the rest.
template <typename T> struct Wide {
    using type = int64_t;
};
template <> struct Wide<float> {
    using type = double;
};
template <> struct Wide<double> {
    using type = double;
};
template <> struct Wide<mt_z64> {
    using type = mt_z128;
};
template <> struct Wide<mt_z128> {
    using type = mt_z128;
};

#define D __device__ __forceinline__

// A reducer: its state S (plain data, so it can live in shared memory), the state of no
// elements, step (fold element j, value x, in; c is the result's centre), join (fold two
// states; a's elements come from threads of lower id), done (write result o).
template <typename T> struct SumR {
    using S = typename Wide<T>::type;
    D S init() const
    {
        return 0;
    }
    D S step(S s, T x, int64_t, double) const
    {
        return s + (S)x;
    }
    D S join(S a, S b) const
    {
        return a + b;
    }
    D void done(S s, const mt_cuda_red &p, int64_t o, double) const
    {
        ((S *)p.out)[o] = p.flag ? (S)(s / (S)p.nred) : s;
    }
};

template <typename T> struct ProdR {
    using S = typename Wide<T>::type;
    D S init() const
    {
        return as_<S>(1);
    }
    D S step(S s, T x, int64_t, double) const
    {
        return s * as_<S>(x);
    }
    D S join(S a, S b) const
    {
        return a * b;
    }
    D void done(S s, const mt_cuda_red &p, int64_t o, double) const
    {
        ((S *)p.out)[o] = s;
    }
};

// amax (IsMax) and amin, NaN-propagating; the host refuses an empty reduction
template <typename T, bool IsMax> struct ExtremumR {
    struct S {
        T v;
        bool has;
    };
    D static T pick(T a, T b)
    {
        return IsMax ? maximum_(a, b) : minimum_(a, b);
    }
    D S init() const
    {
        return S{T(0), false};
    }
    D S step(S s, T x, int64_t, double) const
    {
        return S{s.has ? pick(s.v, x) : x, true};
    }
    D S join(S a, S b) const
    {
        return !a.has ? b : !b.has ? a : S{pick(a.v, b.v), true};
    }
    D void done(S s, const mt_cuda_red &p, int64_t o, double) const
    {
        ((T *)p.out)[o] = s.v;
    }
};

template <bool IsAll> struct LogicalR {
    using S = bool;
    D S init() const
    {
        return IsAll;
    }
    D S step(S s, bool x, int64_t, double) const
    {
        return IsAll ? (s && x) : (s || x);
    }
    D S join(S a, S b) const
    {
        return IsAll ? (a && b) : (a || b);
    }
    D void done(S s, const mt_cuda_red &p, int64_t o, double) const
    {
        ((bool *)p.out)[o] = s;
    }
};

// The norms: Kind 0, 1, 2, 3 (general p) sum a power of |x|; 4 (inf) and 5 (-inf) keep the
// largest or smallest |x|, NaN-propagating.
template <typename T, int Kind> struct NormR {
    using S = double;
    D S init() const
    {
        return Kind == 5 ? INFINITY : 0.0;
    }
    D S step(S s, T x, int64_t, double) const
    {
        const double v = (double)x, a = fabs(v);
        switch (Kind) {
        case 0:
            return s + (v != 0);
        case 1:
            return s + a;
        case 2:
            return s + v * v;
        case 4:
            return (a > s || v != v) ? a : s;
        case 5:
            return (a < s || v != v) ? a : s;
        default:
            return s; // Kind 3 needs p: NormPR
        }
    }
    D S join(S a, S b) const
    {
        if (Kind == 4) {
            return (b > a || b != b) ? b : a;
        }
        if (Kind == 5) {
            return (b < a || b != b) ? b : a;
        }
        return a + b;
    }
    D void done(S s, const mt_cuda_red &p, int64_t o, double) const
    {
        ((double *)p.out)[o] = Kind == 2 ? sqrt(s) : s;
    }
};

template <typename T> struct NormPR {
    using S = double;
    double p;
    D S init() const
    {
        return 0.0;
    }
    D S step(S s, T x, int64_t, double) const
    {
        return s + pow(fabs((double)x), p);
    }
    D S join(S a, S b) const
    {
        return a + b;
    }
    D void done(S s, const mt_cuda_red &q, int64_t o, double) const
    {
        ((double *)q.out)[o] = pow(s, 1.0 / p);
    }
};

// var and std about a centre (the mean, from a first pass)
template <typename T> struct DevSqR {
    using S = double;
    D S init() const
    {
        return 0.0;
    }
    D S step(S s, T x, int64_t, double c) const
    {
        const double d = (double)x - c;
        return s + d * d;
    }
    D S join(S a, S b) const
    {
        return a + b;
    }
    D void done(S s, const mt_cuda_red &p, int64_t o, double) const
    {
        const double dof = (double)p.nred - p.p;
        const double v = s / (dof > 0 ? dof : 0.0);
        ((double *)p.out)[o] = p.flag ? sqrt(v) : v;
    }
};

// logsumexp about a centre (the max, from a first pass); an infinite max centres at 0, so
// that exp sees -inf - 0 and inf - 0 rather than inf - inf (as the CPU's)
static D double
finite_or_zero(double c)
{
    return isinf(c) ? 0.0 : c;
}
template <typename T> struct ExpSumR {
    using S = double;
    D S init() const
    {
        return 0.0;
    }
    D S step(S s, T x, int64_t, double c) const
    {
        return s + exp((double)x - finite_or_zero(c));
    }
    D S join(S a, S b) const
    {
        return a + b;
    }
    D void done(S s, const mt_cuda_red &p, int64_t o, double c) const
    {
        ((double *)p.out)[o] = log(s) + finite_or_zero(c);
    }
};

// argmax (IsMax) and argmin: the first position of the extreme, a NaN counting as the extreme
template <typename T, bool IsMax> struct ArgR {
    struct S {
        T v;
        int64_t i; /* -1: no element yet */
    };
    D static bool better(T x, T v)
    {
        if (isnan_(v)) {
            return false;
        }
        return isnan_(x) || (IsMax ? x > v : x < v);
    }
    D S init() const
    {
        return S{T(0), -1};
    }
    D S step(S s, T x, int64_t j, double) const
    {
        return (s.i < 0 || better(x, s.v)) ? S{x, j} : s;
    }
    D S join(S a, S b) const
    {
        if (a.i < 0 || better(b.v, a.v)) {
            return b.i < 0 ? a : b;
        }
        if (b.i < 0 || better(a.v, b.v)) {
            return a;
        }
        return a.i <= b.i ? a : b; // equal values (or both NaN): the first
    }
    D void done(S s, const mt_cuda_red &p, int64_t o, double) const
    {
        if (p.out) {
            ((T *)p.out)[o] = s.v;
        }
        if (p.idx) {
            p.idx[o] = s.i;
        }
    }
};

template <typename R> struct Make {
    D static R make(const mt_cuda_red &)
    {
        return R();
    }
};
template <typename T> struct Make<NormPR<T>> {
    D static NormPR<T> make(const mt_cuda_red &p)
    {
        return NormPR<T>{p.p};
    }
};
#undef D

// The offset in x of element j of a result whose first element is at base: j in row-major
// order of the red dims (dim 0 needs no modulo: j < nred). The host merges the dims it can,
// so a reduction over contiguous elements is one dim and no division at all.
static __device__ __forceinline__ int64_t
red_offset(const mt_cuda_red &p, int64_t base, int64_t j)
{
    int64_t off = base;
    for (int d = p.red_ndim - 1; d > 0; d--) {
        off += (j % p.red_sizes[d]) * p.red_strides[d];
        j /= p.red_sizes[d];
    }
    return p.red_ndim > 0 ? off + j * p.red_strides[0] : off;
}

// The offset in x of result o's first element (o in row-major order of the kept dims).
static __device__ __forceinline__ int64_t
out_base(const mt_cuda_red &p, int64_t o)
{
    int64_t base = 0;
    for (int d = p.out_ndim - 1; d >= 0; d--) {
        base += (o % p.out_sizes[d]) * p.out_strides[d];
        o /= p.out_sizes[d];
    }
    return base;
}

// The states of the block's threads (buf, one per thread) folded into buf[0]: a shared-memory
// tree, lower threads' states on the left (a state may be a struct: argmax's value and
// position, wider than a shuffle's 8 bytes). buf is reusable after the next __syncthreads.
template <typename R>
static __device__ __forceinline__ void
fold_block(const R &r, typename R::S *buf)
{
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) {
            buf[threadIdx.x] = r.join(buf[threadIdx.x], buf[threadIdx.x + h]);
        }
        __syncthreads();
    }
}

// The folded state s of slice k of result o, both kernels' last step: with one slice it is the
// result, written; with more (the grid-wide reduction) it goes to its place in part, which
// red_finish_kernel folds.
template <typename R>
static __device__ __forceinline__ void
write_slice(const R &r, typename R::S s, const mt_cuda_red &p, int64_t o, int64_t k, double c)
{
    if (p.slices == 1) {
        r.done(s, p, o, c);
    } else {
        memcpy(p.part + (o * p.slices + k) * MT_CUDA_RED_STATE_BYTES, &s, sizeof(s));
    }
}

// x (any strides) -> nout results; blockDim.x must be MT_CUDA_RED_THREADS. Work item b is
// slice k = b % slices of result o = b / slices; a block takes items blockIdx.x,
// blockIdx.x + gridDim.x, ...: every thread of a block runs the same number of iterations, so
// the __syncthreads() are reached by all. With one slice (many results) a block folds all of a
// result's elements and writes it; with more (few results over many elements: the grid-wide
// reduction), slice k's block folds elements k * threads + t, + slices * threads, ... into its
// state part[b], which red_finish_kernel folds.
template <typename T, typename R>
__global__ void
red_kernel(mt_cuda_red p)
{
    using S = typename R::S;
    static_assert(sizeof(S) <= MT_CUDA_RED_STATE_BYTES, "the host sizes part by this");
    __shared__ S buf[MT_CUDA_RED_THREADS];
    const R r = Make<R>::make(p);
    const T *x = (const T *)p.x;
    for (int64_t b = blockIdx.x; b < p.nout * p.slices; b += gridDim.x) {
        const int64_t o = b / p.slices, k = b % p.slices, base = out_base(p, o);
        const double c = p.centre ? p.centre[o] : 0.0;
        S s = r.init();
        const int64_t step = p.slices * blockDim.x;
        for (int64_t j = k * blockDim.x + threadIdx.x; j < p.nred; j += step) {
            s = r.step(s, load_(x + red_offset(p, base, j)), j, c);
        }
        buf[threadIdx.x] = s;
        fold_block(r, buf);
        if (threadIdx.x == 0) {
            write_slice(r, buf[0], p, o, k, c);
        }
        __syncthreads(); // buf is reused by the next item
    }
}

// The grid-wide reduction's second pass: result o (a block each, grid-stride) = its slices'
// states part[o * slices ...] folded in slice order, then written as red_kernel would.
template <typename T, typename R>
__global__ void
red_finish_kernel(mt_cuda_red p)
{
    using S = typename R::S;
    __shared__ S buf[MT_CUDA_RED_THREADS];
    const R r = Make<R>::make(p);
    for (int64_t o = blockIdx.x; o < p.nout; o += gridDim.x) {
        S s = r.init();
        for (int64_t k = threadIdx.x; k < p.slices; k += blockDim.x) {
            S q;
            memcpy(&q, p.part + (o * p.slices + k) * MT_CUDA_RED_STATE_BYTES, sizeof(S));
            s = r.join(s, q);
        }
        buf[threadIdx.x] = s;
        fold_block(r, buf);
        if (threadIdx.x == 0) {
            r.done(buf[0], p, o, p.centre ? p.centre[o] : 0.0);
        }
        __syncthreads();
    }
}

// Many results (a block per result would be one each) whose kept innermost dim lies
// contiguous in x while the reduced dims do not, e.g. a sum over dim 0 of (rows, cols):
// PyTorch's reduce kernel's "vectorize along output" case. The threads go over the results, so
// a warp reads 32 consecutive elements at each step of the reduced dims (coalesced), where a
// block per result would read one element per row. Work item b is slice k = b % slices of the
// tile of results 32 t .. 32 t + 31, t = b / slices, one result per lane (threadIdx.x % 32);
// the block's warps split the slice's reduced elements (warp w of slice k folds j = k warps + w,
// + slices warps, ...), and lane c's states of the warps are folded in shared memory, warp
// order. One slice writes the result; more (few tiles over many reduced elements) leave their
// states in part for red_finish_kernel, as red_kernel's.
template <typename T, typename R>
__global__ void
red_cols_kernel(mt_cuda_red p)
{
    using S = typename R::S;
    __shared__ S buf[MT_CUDA_RED_THREADS];
    const R r = Make<R>::make(p);
    const T *x = (const T *)p.x;
    const int64_t items = (p.nout + 31) / 32 * p.slices;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    for (int64_t b = blockIdx.x; b < items; b += gridDim.x) { // the same trips in the block
        const int64_t o = b / p.slices * 32 + lane, k = b % p.slices;
        S s = r.init();
        double c = 0;
        if (o < p.nout) {
            const int64_t base = out_base(p, o);
            c = p.centre ? p.centre[o] : 0.0;
            for (int64_t j = k * warps + warp; j < p.nred; j += p.slices * warps) {
                s = r.step(s, load_(x + red_offset(p, base, j)), j, c);
            }
        }
        buf[threadIdx.x] = s;
        __syncthreads();
        if (warp == 0 && o < p.nout) {
            for (int w = 1; w < warps; w++) {
                s = r.join(s, buf[w * 32 + lane]);
            }
            write_slice(r, s, p, o, k, c);
        }
        __syncthreads(); // buf is reused by the next item
    }
}

// ---- the table (positional: mt_dtype order bool, int32, int64, float32, float64; prod's row
// goes on past the five small dtypes, which dispatch/widen.c widens, to complex64 and 128) ----

static_assert(MT_FLOAT64 == 4 && MT_COMPLEX64 == 10 && MT_COMPLEX128 == 11,
              "prod's row lists bool to float64, five small dtypes, then the complex ones");

#define ALL(R)                                                                             \
    {K(bool, R<bool>), K(int32_t, R<int32_t>), K(int64_t, R<int64_t>), K(float, R<float>), \
     K(double, R<double>)}
#define ALL2(R, B)                                                              \
    {K(bool, R<bool, B>), K(int32_t, R<int32_t, B>), K(int64_t, R<int64_t, B>), \
     K(float, R<float, B>), K(double, R<double, B>)}
#define SMALL nullptr, nullptr, nullptr, nullptr, nullptr
#define WITH_COMPLEX(R)                                                    \
    {K(bool, R<bool>),     K(int32_t, R<int32_t>), K(int64_t, R<int64_t>), \
     K(float, R<float>),   K(double, R<double>),   SMALL,                  \
     K(mt_z64, R<mt_z64>), K(mt_z128, R<mt_z128>)}
#define FLOATS(R) {nullptr, nullptr, nullptr, K(float, R<float>), K(double, R<double>)}
#define NORM(N) {nullptr, nullptr, nullptr, K(float, NormR<float, N>), K(double, NormR<double, N>)}
#define BOOL_ONLY(R) {K(bool, R), nullptr, nullptr, nullptr, nullptr}
// The table of one kernel template K names (red_kernel or red_finish_kernel)
#define RED_TABLE                                       \
    {                                                   \
        [MT_CUDA_RED_SUM] = ALL(SumR),                  \
        [MT_CUDA_RED_PROD] = WITH_COMPLEX(ProdR),       \
        [MT_CUDA_RED_AMAX] = ALL2(ExtremumR, true),     \
        [MT_CUDA_RED_AMIN] = ALL2(ExtremumR, false),    \
        [MT_CUDA_RED_ALL] = BOOL_ONLY(LogicalR<true>),  \
        [MT_CUDA_RED_ANY] = BOOL_ONLY(LogicalR<false>), \
        [MT_CUDA_RED_NORM0] = NORM(0),                  \
        [MT_CUDA_RED_NORM1] = NORM(1),                  \
        [MT_CUDA_RED_NORM2] = NORM(2),                  \
        [MT_CUDA_RED_NORMP] = FLOATS(NormPR),           \
        [MT_CUDA_RED_NORMINF] = NORM(4),                \
        [MT_CUDA_RED_NORMNINF] = NORM(5),               \
        [MT_CUDA_RED_DEVSQ] = FLOATS(DevSqR),           \
        [MT_CUDA_RED_EXPSUM] = FLOATS(ExpSumR),         \
        [MT_CUDA_RED_ARGMAX] = ALL2(ArgR, true),        \
        [MT_CUDA_RED_ARGMIN] = ALL2(ArgR, false),       \
    }
#define K(T, ...) MT_KERNEL_PTR(red_kernel<T, __VA_ARGS__>)
static const void *const red_kernels[MT_CUDA_NUM_RED_OPS][MT_NUM_DTYPES] = RED_TABLE;
#undef K
#define K(T, ...) MT_KERNEL_PTR(red_finish_kernel<T, __VA_ARGS__>)
static const void *const red_finish_kernels[MT_CUDA_NUM_RED_OPS][MT_NUM_DTYPES] = RED_TABLE;
#undef K
#define K(T, ...) MT_KERNEL_PTR(red_cols_kernel<T, __VA_ARGS__>)
static const void *const red_cols_kernels[MT_CUDA_NUM_RED_OPS][MT_NUM_DTYPES] = RED_TABLE;
#undef RED_TABLE
#undef SMALL
#undef K

extern "C" const void *
mt_cuda_red_kernel(mt_cuda_red_op op, mt_dtype dt)
{
    return red_kernels[op][dt];
}

extern "C" const void *
mt_cuda_red_finish_kernel(mt_cuda_red_op op, mt_dtype dt)
{
    return red_finish_kernels[op][dt];
}

extern "C" const void *
mt_cuda_red_cols_kernel(mt_cuda_red_op op, mt_dtype dt)
{
    return red_cols_kernels[op][dt];
}
