// The CUDA kernels of the ops along one dim whose result has the input's shape (cumsum, cumprod,
// logcumsumexp, softmax, log_softmax, and softmax's and log_softmax's backward): a thread per
// lane, or along the last dim a row per block (block scans; softmax's folds as warp shuffles) or
// per warp. The reductions to fewer elements are in reduce.cu; the host code (ops_reduce.c)
// picks the dims, dtypes, the grid and errors.
#include <math.h>

#include "cuda/block_sum.h"
#include "cuda/device_complex.h"
#include "cuda/device_math.h"
#include "cuda/grid_stride.h"
#include "cuda/kernels.h"

// ---- ops along one dim whose result has the input's shape: one thread per lane ----

// x, y (outer, n, inner) contiguous; the lanes are the outer * inner rows along n, each walked
// by one thread (simple and obviously correct; fast enough while n is moderate).
#define LANES(BODY)                                                             \
    const int64_t lanes = outer * inner;                                        \
    for (int64_t l = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; l < lanes; \
         l += (int64_t)gridDim.x * blockDim.x) {                                \
        const int64_t o = l / inner, i = l % inner;                             \
        const T *xr = x + o * n * inner + i;                                    \
        T *yr = y + o * n * inner + i;                                          \
        BODY                                                                    \
    }

// y = running sum (IsProd: product) of x along n, accumulated in A
template <typename T, typename A, bool IsProd>
__global__ void
scan_kernel(const T *x, T *y, int64_t outer, int64_t n, int64_t inner)
{
    LANES({
        A acc = as_<A>(IsProd ? 1 : 0);
        for (int64_t j = 0; j < n; j++) {
            const A v = as_<A>(load_(xr + j * inner));
            acc = IsProd ? acc * v : acc + v;
            yr[j * inner] = as_<T>(acc);
        }
    })
}

// y = log(running sum of exp(x)) along n, each step core/math.h's mt_log_add_exp in double
template <typename T>
__global__ void
logcumsumexp_kernel(const T *x, T *y, int64_t outer, int64_t n, int64_t inner)
{
    LANES({
        double acc = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
            acc = mt_log_add_exp((double)xr[j * inner], acc);
            yr[j * inner] = (T)acc;
        }
    })
}

// y = softmax (IsLog: log_softmax) of x along n: the CPU's SOFTMAX_LOOP (cpu/reduce_dim.c)
template <typename T, bool IsLog>
__global__ void
softmax_kernel(const T *x, T *y, int64_t outer, int64_t n, int64_t inner)
{
    LANES({
        T m = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
            const T v = xr[j * inner];
            m = v > m || v != v ? v : m;
        }
        if (isinf(m)) {
            m = m > 0 ? m : 0; // a row of -inf: exp(x - 0) gives 0/0 = NaN
        }
        double sum = 0;
        for (int64_t j = 0; j < n; j++) {
            const T e = exp_((T)(xr[j * inner] - m));
            sum += e;
            if (!IsLog) {
                yr[j * inner] = e;
            }
        }
        if (IsLog) {
            const T log_sum = (T)log(sum);
            for (int64_t j = 0; j < n; j++) {
                yr[j * inner] = (xr[j * inner] - m) - log_sum; // exact near the max, as the CPU's
            }
        } else {
            const T scale = (T)(1.0 / sum);
            for (int64_t j = 0; j < n; j++) {
                yr[j * inner] *= scale;
            }
        }
    })
}
#undef LANES

// ---- the same along the last dim (inner 1): a row per block, or per warp ----

// The rows a thread's group takes, first, first + step, ...: PerWarp (short rows), warp w of
// the block takes rows blockIdx.x * warps + w, + gridDim.x * warps, ...; else the block takes
// rows blockIdx.x, + gridDim.x, .... lane is the thread's place in its group of group threads.
template <bool PerWarp> struct RowGroup {
    int64_t group, lane, first, step;
    __device__ RowGroup()
    {
        const int64_t warps = blockDim.x / 32;
        group = PerWarp ? 32 : blockDim.x;
        lane = threadIdx.x % group;
        first = PerWarp ? blockIdx.x * warps + threadIdx.x / 32 : blockIdx.x;
        step = PerWarp ? gridDim.x * warps : gridDim.x;
    }
};

// x, y (rows, n) contiguous; y = softmax (IsLog: log_softmax) of each row, as softmax_kernel.
// A row per block, or per warp (PerWarp, short rows): RowGroup's rows. The group's threads read
// consecutive elements (coalesced); the max and the sum are folded by warp shuffles (then
// shared memory across the block's warps), in double.
template <typename T, bool IsLog, bool PerWarp>
__global__ void
softmax_rows_kernel(const T *x, T *y, int64_t rows, int64_t n)
{
    __shared__ double buf[32];
    const RowGroup<PerWarp> rg;
    const int64_t group = rg.group, lane = rg.lane;
    for (int64_t r = rg.first; r < rows; r += rg.step) { // the same trip count in a whole group
        const T *xr = x + r * n;
        T *yr = y + r * n;
        double m = -INFINITY;
        for (int64_t j = lane; j < n; j += group) {
            m = MaxNanOp()(m, (double)xr[j]);
        }
        m = PerWarp ? warp_all(m, MaxNanOp()) : block_all(m, MaxNanOp(), buf);
        T c = (T)m;
        if (isinf(c)) {
            c = c > 0 ? c : 0; // a row of -inf: exp(x - 0) gives 0/0 = NaN, as the CPU's
        }
        double sum = 0;
        for (int64_t j = lane; j < n; j += group) {
            const T e = exp_((T)(xr[j] - c));
            sum += e;
            if (!IsLog) {
                yr[j] = e;
            }
        }
        sum = PerWarp ? warp_all(sum, AddOp()) : block_all(sum, AddOp(), buf);
        const T log_sum = (T)log(sum), scale = (T)(1.0 / sum);
        for (int64_t j = lane; j < n; j += group) { // each thread rereads what it wrote
            yr[j] = IsLog ? (T)((xr[j] - c) - log_sum) : (T)(yr[j] * scale);
        }
    }
}

// ---- softmax's and log_softmax's backward ----

// softmax: gx = y * (g - s), s = sum(g * y); log_softmax: gx = g - exp(y) * s, s = sum(g); the
// sums along the row in double, as the CPU's (cpu/reduce_dim.c)
template <typename T, bool IsLog> struct SoftmaxBack {
    static __device__ __forceinline__ double term(T g, T y)
    {
        return IsLog ? (double)g : (double)g * (double)y;
    }
    static __device__ __forceinline__ T grad(T g, T y, T s)
    {
        return IsLog ? (T)(g - exp_(y) * s) : (T)(y * (g - s));
    }
};

// g, y, gx (outer, n, inner) contiguous: a thread per lane along n (consecutive threads,
// consecutive lanes)
template <typename T, bool IsLog>
__global__ void
softmax_back_kernel(const T *g, const T *y, T *gx, int64_t outer, int64_t n, int64_t inner)
{
    using B = SoftmaxBack<T, IsLog>;
    const int64_t lanes = outer * inner;
    MT_CUDA_GRID_STRIDE(l, lanes)
    {
        const int64_t base = l / inner * n * inner + l % inner;
        double s = 0;
        for (int64_t j = 0; j < n; j++) {
            s += B::term(g[base + j * inner], y[base + j * inner]);
        }
        for (int64_t j = 0; j < n; j++) {
            gx[base + j * inner] = B::grad(g[base + j * inner], y[base + j * inner], (T)s);
        }
    }
}

// g, y, gx (rows, n) contiguous: a row per block, or per warp (PerWarp, short rows), as
// softmax_rows_kernel; the row's sum folded by warp shuffles (then shared memory), in double
template <typename T, bool IsLog, bool PerWarp>
__global__ void
softmax_back_rows_kernel(const T *g, const T *y, T *gx, int64_t rows, int64_t n)
{
    using B = SoftmaxBack<T, IsLog>;
    __shared__ double buf[32];
    const RowGroup<PerWarp> rg;
    const int64_t group = rg.group, lane = rg.lane;
    for (int64_t r = rg.first; r < rows; r += rg.step) { // the same trip count in a whole group
        const T *gr = g + r * n, *yr = y + r * n;
        double s = 0;
        for (int64_t j = lane; j < n; j += group) {
            s += B::term(gr[j], yr[j]);
        }
        s = PerWarp ? warp_all(s, AddOp()) : block_all(s, AddOp(), buf);
        for (int64_t j = lane; j < n; j += group) {
            gx[r * n + j] = B::grad(gr[j], yr[j], (T)s);
        }
    }
}

// The scans' operations on the accumulator A, and their identities.
template <int Op> struct ScanOp {
    template <typename A> __device__ __forceinline__ static A id()
    {
        if constexpr (Op == 2) {
            return A(-INFINITY);
        } else {
            return as_<A>(Op); // 0 for a sum, 1 for a product
        }
    }
    template <typename A> __device__ __forceinline__ static A apply(A a, A b)
    {
        if constexpr (Op == 0) {
            return a + b;
        } else if constexpr (Op == 1) {
            return a * b;
        } else {
            return mt_log_add_exp(b, a);
        }
    }
};

// x, y (rows, n) contiguous; y = the inclusive scan of each row under ScanOp<Op> (0 cumsum,
// 1 cumprod, 2 logcumsumexp), accumulated in A. A block per row (grid-stride) walks it in tiles
// of blockDim.x elements: thread t loads element t of the tile (coalesced), a Hillis-Steele scan
// in shared memory (log2(blockDim.x) steps: after the step of distance d, buf[t] folds the
// tile's elements t - 2d + 1 .. t) gives each its prefix within the tile, and the carry (the
// fold of the earlier tiles) is put in front. The simple form is scan_kernel's loop.
template <typename T, typename A, int Op>
__global__ void
scan_rows_kernel(const T *x, T *y, int64_t rows, int64_t n)
{
    __shared__ A buf[MT_CUDA_ROW_BLOCK];
    const unsigned t = threadIdx.x;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *xr = x + r * n;
        T *yr = y + r * n;
        A carry = ScanOp<Op>::template id<A>();
        for (int64_t tile = 0; tile < n; tile += blockDim.x) {
            const int64_t j = tile + t;
            A v = j < n ? as_<A>(load_(xr + j)) : ScanOp<Op>::template id<A>();
            buf[t] = v;
            __syncthreads();
            for (unsigned d = 1; d < blockDim.x; d *= 2) {
                const A left = t >= d ? buf[t - d] : ScanOp<Op>::template id<A>();
                __syncthreads(); // every read of this step before any write
                if (t >= d) {
                    v = ScanOp<Op>::apply(left, v);
                    buf[t] = v;
                }
                __syncthreads();
            }
            if (j < n) {
                yr[j] = as_<T>(ScanOp<Op>::apply(carry, v));
            }
            carry = ScanOp<Op>::apply(carry, buf[blockDim.x - 1]);
            __syncthreads(); // buf is reused by the next tile
        }
    }
}

#define R(...) MT_KERNEL_PTR(__VA_ARGS__)
// positional, in mt_dtype order; cumprod's rows go on past the five small dtypes (which
// dispatch/widen.c widens) to complex64 and complex128, accumulated in complex128
static_assert(MT_FLOAT64 == 4 && MT_COMPLEX64 == 10 && MT_COMPLEX128 == 11,
              "cumprod's rows list bool to float64, five small dtypes, then the complex ones");
#define SMALL nullptr, nullptr, nullptr, nullptr, nullptr
static const void *const row_kernels[MT_CUDA_NUM_ROW_OPS][MT_NUM_DTYPES] = {
    [MT_CUDA_ROW_CUMSUM] = {nullptr, R(scan_kernel<int32_t, int64_t, false>),
                            R(scan_kernel<int64_t, int64_t, false>),
                            R(scan_kernel<float, double, false>),
                            R(scan_kernel<double, double, false>)},
    [MT_CUDA_ROW_CUMPROD] = {nullptr, R(scan_kernel<int32_t, int64_t, true>),
                             R(scan_kernel<int64_t, int64_t, true>),
                             R(scan_kernel<float, double, true>),
                             R(scan_kernel<double, double, true>), SMALL,
                             R(scan_kernel<mt_z64, mt_z128, true>),
                             R(scan_kernel<mt_z128, mt_z128, true>)},
    [MT_CUDA_ROW_SOFTMAX] = {nullptr, nullptr, nullptr, R(softmax_kernel<float, false>),
                             R(softmax_kernel<double, false>)},
    [MT_CUDA_ROW_LOG_SOFTMAX] = {nullptr, nullptr, nullptr, R(softmax_kernel<float, true>),
                                 R(softmax_kernel<double, true>)},
    [MT_CUDA_ROW_LOGCUMSUMEXP] = {nullptr, nullptr, nullptr, R(logcumsumexp_kernel<float>),
                                  R(logcumsumexp_kernel<double>)},
};
#undef R

extern "C" const void *
mt_cuda_row_kernel(mt_cuda_row_op op, mt_dtype dt)
{
    return row_kernels[op][dt];
}

#define R(...) MT_KERNEL_PTR(__VA_ARGS__)
#define SCANS(Op)                                                                       \
    {nullptr, R(scan_rows_kernel<int32_t, int64_t, Op>),                                \
     R(scan_rows_kernel<int64_t, int64_t, Op>), R(scan_rows_kernel<float, double, Op>), \
     R(scan_rows_kernel<double, double, Op>)}
#define SOFTMAX(IsLog, PerWarp)                                                \
    {nullptr, nullptr, nullptr, R(softmax_rows_kernel<float, IsLog, PerWarp>), \
     R(softmax_rows_kernel<double, IsLog, PerWarp>)}
static const void *const row_block_kernels[2][MT_CUDA_NUM_ROW_OPS][MT_NUM_DTYPES] = {
    {
        [MT_CUDA_ROW_CUMSUM] = SCANS(0),
        [MT_CUDA_ROW_CUMPROD] = {nullptr, R(scan_rows_kernel<int32_t, int64_t, 1>),
                                 R(scan_rows_kernel<int64_t, int64_t, 1>),
                                 R(scan_rows_kernel<float, double, 1>),
                                 R(scan_rows_kernel<double, double, 1>), SMALL,
                                 R(scan_rows_kernel<mt_z64, mt_z128, 1>),
                                 R(scan_rows_kernel<mt_z128, mt_z128, 1>)},
        [MT_CUDA_ROW_SOFTMAX] = SOFTMAX(false, false),
        [MT_CUDA_ROW_LOG_SOFTMAX] = SOFTMAX(true, false),
        [MT_CUDA_ROW_LOGCUMSUMEXP] = {nullptr, nullptr, nullptr,
                                      R(scan_rows_kernel<float, double, 2>),
                                      R(scan_rows_kernel<double, double, 2>)},
    },
    {
        [MT_CUDA_ROW_CUMSUM] = {},
        [MT_CUDA_ROW_CUMPROD] = {},
        [MT_CUDA_ROW_SOFTMAX] = SOFTMAX(false, true),
        [MT_CUDA_ROW_LOG_SOFTMAX] = SOFTMAX(true, true),
        [MT_CUDA_ROW_LOGCUMSUMEXP] = {},
    },
};
#undef SMALL
#undef R

extern "C" const void *
mt_cuda_row_block_kernel(mt_cuda_row_op op, mt_dtype dt, int per_warp)
{
    return row_block_kernels[per_warp ? 1 : 0][op][dt];
}

#define R(...) MT_KERNEL_PTR(__VA_ARGS__)
#define BACK(T, IsLog)                                                               \
    {R(softmax_back_kernel<T, IsLog>), R(softmax_back_rows_kernel<T, IsLog, false>), \
     R(softmax_back_rows_kernel<T, IsLog, true>)}
static const void *const softmax_back_kernels[2][2][3] = {
    {BACK(float, false), BACK(float, true)},
    {BACK(double, false), BACK(double, true)},
};
#undef BACK
#undef R

extern "C" const void *
mt_cuda_softmax_back_kernel(mt_dtype dt, int log, int form)
{
    if ((dt != MT_FLOAT32 && dt != MT_FLOAT64) || form < 0 || form > 2) {
        return nullptr;
    }
    return softmax_back_kernels[dt == MT_FLOAT64][log ? 1 : 0][form];
}
