/* What the host code (C) and the kernels (.cu) share: the parameter blocks of the elementwise
 * and reduction launches, the op ids, and the kernel tables the .cu files export. */
#ifndef MT_CUDA_KERNELS_H
#define MT_CUDA_KERNELS_H

#include <stdint.h>

#include "core/dtype.h"
#include "core/pool_window.h"
#include "cuda/int_divider.h"
/* core/tensor.h is C only (stdatomic.h); its MT_MAX_DIMS is checked equal in elementwise.c */
#define MT_CUDA_MAX_DIMS 64

/* The address cudaLaunchKernel takes for a __global__ function (the .cu files' tables hold
 * these). The emulated build (cuda/emu/kernel.h) defines its own: a descriptor that knows the
 * kernel's parameters. Variadic: a template-id holds commas. */
#ifndef MT_KERNEL_PTR
#define MT_KERNEL_PTR(...) ((const void *)(__VA_ARGS__))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define MT_CUDA_THREADS 256 /* threads per block of the elementwise kernels */
#define MT_CUDA_MAX_OPERANDS 4 /* out and up to three inputs (where, clamp) */

/* A value stored both ways, so a kernel of any dtype reads it without a host-side switch; im
 * is a complex number's imaginary part (0 for the others), which the complex loops read. */
typedef struct mt_cuda_scalar {
    double f;
    int64_t i;
    double im;
} mt_cuda_scalar;

/* One elementwise launch, passed by value. Operand 0 is the output. Inputs already have the
 * kernel's operand dtypes; an input whose data is NULL is a Python number held in scalar[k] (or an
 * absent operand, read as 0). Sizes and strides (in elements) are after broadcasting and
 * dimension coalescing; contig says every operand with data is contiguous, so element i sits
 * at offset i everywhere. */
typedef struct mt_cuda_ew {
    int ndim, nin, contig;
    int vec; /* contiguous, every operand's data 32-byte aligned: 4 elements a thread, vector
              * loads and stores (what reaches copy bandwidth; elementwise.c decides) */
    int idx32; /* not contig, n and every operand's offsets below 2^31: 32-bit indexing with
                * div (a fast divider of each size) in place of 64-bit divisions */
    int64_t n;
    int64_t sizes[MT_CUDA_MAX_DIMS];
    int64_t strides[MT_CUDA_MAX_OPERANDS][MT_CUDA_MAX_DIMS];
    mt_cuda_divider div[MT_CUDA_MAX_DIMS];
    char *data[MT_CUDA_MAX_OPERANDS];
    mt_cuda_scalar scalar[MT_CUDA_MAX_OPERANDS];
    mt_cuda_scalar k; /* the op's own scalar: alpha of add/sub, the bound of clamp_min */
    mt_cuda_scalar k2, k3; /* a row's second and third scalars (elu's scale, input_scale) */
} mt_cuda_ew;

/* The kernel that sets every element of operand 0 (dtype dt) to k. */
const void *mt_cuda_fill_kernel(mt_dtype dt);
/* The kernel that copies operand 1 (dtype from) into operand 0 (dtype to), casting. */
const void *mt_cuda_cast_kernel(mt_dtype to, mt_dtype from);

/* ---- reductions (reduce.cu; the ops along one dim: reduce_dim.cu) ---- */

#define MT_CUDA_RED_THREADS 256 /* threads per block (a power of two: the tree halves it) */

/* One reduction launch, passed by value: x (input dtype) reduced over the red dims into nout
 * results, by `slices` blocks per result: one (a block folds all of a result's elements and
 * writes it), or more (the grid-wide reduction of few results over many elements: block k of
 * result o folds elements k * MT_CUDA_RED_THREADS + t + m * slices * MT_CUDA_RED_THREADS into
 * its state part[o * slices + k], and the finishing kernel folds a result's slices). Result o is the o-th in row-major order of the kept dims
 * (out_sizes; out_strides are x's strides of them); the elements it covers are x's at the
 * red dims, j-th in row-major order of red_sizes. Strides are in elements, x points at the
 * tensor's first element. */
typedef struct mt_cuda_red {
    int out_ndim, red_ndim;
    int64_t nout, nred;
    int64_t out_sizes[MT_CUDA_MAX_DIMS], out_strides[MT_CUDA_MAX_DIMS];
    int64_t red_sizes[MT_CUDA_MAX_DIMS], red_strides[MT_CUDA_MAX_DIMS];
    const char *x;
    char *out;             /* nout results in the op's result dtype, or NULL (argmax) */
    int64_t *idx;          /* nout int64 positions j (argmax, argmin, max_dim), or NULL */
    const double *centre;  /* nout values the two-pass ops reduce about, or NULL */
    double p;              /* the norm's order; var's correction */
    int flag;              /* sum: divide by nred (mean); var: take the root (std) */
    int64_t slices;        /* blocks per result (at least 1) */
    char *part;            /* slices > 1: nout * slices states of MT_CUDA_RED_STATE_BYTES each */
} mt_cuda_red;

#define MT_CUDA_RED_STATE_BYTES 16 /* the largest reducer state (argmax's value and position) */

/* The result dtype: float64 (sum and prod of floats, norms, var, logsumexp), complex128 (prod
 * of complex64 and complex128), int64 (sum and prod of integers and bools), the input's (amax,
 * amin, argmax's values), bool (all, any). */
typedef enum mt_cuda_red_op {
    MT_CUDA_RED_SUM,
    MT_CUDA_RED_PROD,
    MT_CUDA_RED_AMAX,
    MT_CUDA_RED_AMIN,
    MT_CUDA_RED_ALL, /* bool input */
    MT_CUDA_RED_ANY,
    MT_CUDA_RED_NORM0, /* count of nonzeros */
    MT_CUDA_RED_NORM1,
    MT_CUDA_RED_NORM2,
    MT_CUDA_RED_NORMP,
    MT_CUDA_RED_NORMINF,  /* max |x| */
    MT_CUDA_RED_NORMNINF, /* min |x| */
    MT_CUDA_RED_DEVSQ,    /* sum (x - centre)^2 / max(0, nred - p), its root when flag */
    MT_CUDA_RED_EXPSUM,   /* log(sum exp(x - c)) + c, c = centre or 0 where that is infinite */
    MT_CUDA_RED_ARGMAX,   /* first position of the largest (NaN counts largest) */
    MT_CUDA_RED_ARGMIN,
    MT_CUDA_NUM_RED_OPS
} mt_cuda_red_op;

/* The kernel (a __global__ taking one mt_cuda_red) of op on input dtype dt, or NULL; and the
 * one that finishes a grid-wide reduction (slices > 1: a block per result folds its slices'
 * states, then writes it), launched after it with the same mt_cuda_red. */
const void *mt_cuda_red_kernel(mt_cuda_red_op op, mt_dtype dt);
const void *mt_cuda_red_finish_kernel(mt_cuda_red_op op, mt_dtype dt);
/* The same reduction with the threads over the results: a tile of 32 consecutive results per
 * block of MT_CUDA_RED_THREADS (times slices: slice k of a tile folds its warps' shares of the
 * reduced elements k * warps + w + m * slices * warps into part, as above), any grid; for
 * results that lie consecutive in x (the innermost kept dim of stride 1) over reduced dims that
 * do not, so that a warp's reads are coalesced. */
const void *mt_cuda_red_cols_kernel(mt_cuda_red_op op, mt_dtype dt);

/* Ops along one dim with the input's shape: args (const T *x, T *y, int64_t outer, int64_t n,
 * int64_t inner), x and y contiguous (outer, n, inner), any grid of MT_CUDA_THREADS threads. */
typedef enum mt_cuda_row_op {
    MT_CUDA_ROW_CUMSUM, /* int32, int64, floats; accumulated in int64 or float64 */
    MT_CUDA_ROW_CUMPROD, /* the same, and complex64 and complex128, accumulated in complex128 */
    MT_CUDA_ROW_SOFTMAX, /* floats */
    MT_CUDA_ROW_LOG_SOFTMAX,
    MT_CUDA_ROW_LOGCUMSUMEXP, /* floats; accumulated in float64 */
    MT_CUDA_NUM_ROW_OPS
} mt_cuda_row_op;
const void *mt_cuda_row_kernel(mt_cuda_row_op op, mt_dtype dt);
/* The same ops along the last dim (inner 1), a row per block (a block scan; softmax's max and
 * sum as warp shuffles then shared memory), or for softmax and log_softmax with per_warp a
 * row per warp (short rows): args (const T *x, T *y, int64_t rows, int64_t n), any grid of
 * MT_CUDA_ROW_BLOCK threads; NULL where op has none. */
#define MT_CUDA_ROW_BLOCK 256
const void *mt_cuda_row_block_kernel(mt_cuda_row_op op, mt_dtype dt, int per_warp);
/* softmax's backward (log: log_softmax's) on float dtype dt, gx from the gradient g and the
 * forward's output y: form 0 a thread per lane, args (const T *g, const T *y, T *gx, int64_t
 * outer, int64_t n, int64_t inner), any grid of MT_CUDA_THREADS; form 1 a row per block, 2 a
 * row per warp, along the last dim: args (g, y, gx, int64_t rows, int64_t n), any grid of
 * MT_CUDA_ROW_BLOCK threads. All contiguous. NULL for other dtypes. */
const void *mt_cuda_softmax_back_kernel(mt_dtype dt, int log, int form);

/* ---- 2-D and 3-D pooling (pool.cu) ----
 * args (pool_geom g, const T *in, T *out, int64_t *idx, mt_cuda_assert_record *bad), one
 * thread per element of
 * the (P, OD, OH, OW) output side, any grid of MT_CUDA_THREADS (a grid-stride loop). Forward: in
 * x (P, D, H, W), out (P, OD, OH, OW), idx the argmax or NULL. Backward: in grad (P, OD, OH,
 * OW), out gx (P, D, H, W) zeroed beforehand (D = OD = 1 in 2-D), idx the forward's (max), an index outside its plane failing a
 * device-side assertion in bad (device_assert.h). All contiguous; floats only, but for MT_CUDA_POOL_MAX also int32 and int64. */
typedef enum mt_cuda_pool_op {
    MT_CUDA_POOL_MAX,
    MT_CUDA_POOL_AVG,
    MT_CUDA_POOL_ADAPTIVE,
    MT_CUDA_POOL_MAX_BACK,
    MT_CUDA_POOL_AVG_BACK,
    MT_CUDA_POOL_ADAPTIVE_BACK,
    MT_CUDA_POOL_ADAPTIVE_MAX, /* idx not NULL */
    MT_CUDA_NUM_POOL_OPS
} mt_cuda_pool_op;
const void *mt_cuda_pool_kernel(mt_cuda_pool_op op, mt_dtype dt);

#ifdef __cplusplus
}
#endif

#endif
