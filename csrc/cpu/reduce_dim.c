/* Reductions along one dim on the CPU, which need a whole row at a time: max and min with
 * their indices, argmax, argmin, cumsum, cumprod, softmax, log_softmax.
 *
 * The input is made contiguous in the compute dtype and seen as (outer, n, inner), n the
 * reduced dim: element (o, j, i) is at (o * n + j) * inner + i. Loops run j outside i so that
 * the inner lanes are read in memory order. */
#include <math.h>
#include <string.h>

#include "core/math.h"
#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "cpu/reduce.h"
#include "cpu/vmath.h"
#include "dispatch/kernels.h"
#include "ops/fails.h"
#include "ops/front.h"

typedef struct lanes {
    mt_tensor *x; /* contiguous, owned */
    int64_t outer, n, inner;
} lanes;

/* self as (outer, n, inner) around dim, contiguous and of dtype dt. */
static mt_status
lanes_of(mt_tensor *self, int dim, mt_dtype dt, lanes *l)
{
    l->outer = l->inner = 1;
    l->n = self->ndim ? self->sizes[dim] : 1;
    for (int d = 0; d < self->ndim; d++) {
        if (d < dim) {
            l->outer *= self->sizes[d];
        } else if (d > dim) {
            l->inner *= self->sizes[d];
        }
    }
    if (self->dtype == dt && mt_tensor_is_contiguous(self)) {
        l->x = mt_tensor_retain(self);
        return MT_OK;
    }
    return mt_cpu_cast(self, dt, &l->x);
}

/* ---- max, min, argmax, argmin: the extreme value of each row and its first index ---- */

/* A row op's lanes (o, i) go in blocks of up to LANE_COLS neighbouring i, each block walked row by
 * row in memory order (a lane at a time would read with stride inner); the blocks of all outer
 * rows are split between threads: an op along the last dim (inner 1) splits its rows, one along
 * dim 0 (outer 1) its columns. */
#define LANE_COLS 128

/* The blocks of a row of inner lanes. */
static inline int64_t
lane_blocks(int64_t inner)
{
    return (inner + LANE_COLS - 1) / LANE_COLS;
}

/* The threads worth splitting `items` blocks of n rows of inner lanes between. */
static int
block_parts(int64_t items, int64_t n, int64_t inner)
{
    const int64_t cols = inner < LANE_COLS ? inner : LANE_COLS;
    return mt_parallel_parts(items, 32768 / (n * cols + 1) + 1);
}

/* Block ob (numbered across all outer rows) of an (outer, n, inner) layout: where its first lane
 * starts in x (o * n * inner + i0) and in an (outer, inner) result (o * inner + i0), and its
 * width (LANE_COLS, or the rest of a row). */
typedef struct lane_block {
    int64_t at, res, w;
} lane_block;

static inline lane_block
lane_block_at(int64_t ob, int64_t n, int64_t inner)
{
    const int64_t blocks = lane_blocks(inner);
    if (blocks == 1) { /* a block is a whole row of lanes: no division */
        return (lane_block){ob * n * inner, ob * inner, inner};
    }
    const int64_t o = ob / blocks, i0 = ob % blocks * LANE_COLS;
    return (lane_block){o * n * inner + i0, o * inner + i0,
                        inner - i0 < LANE_COLS ? inner - i0 : LANE_COLS};
}

/* The blocks [first, last) of a row op: x (outer, n, inner) in, y (and idx, argmax's indices,
 * else NULL) out. With inner 1, block o is row o. */
typedef void (*block_fn)(const void *x, void *y, int64_t *idx, int64_t first, int64_t last,
                         int64_t n, int64_t inner);

/* fn over every block of the (outer, n, inner) lanes, split between threads when `split`. */
static void
run_blocks(block_fn fn, const void *x, void *y, int64_t *idx, int64_t outer, int64_t n,
           int64_t inner, bool split)
{
    const int64_t items = outer * lane_blocks(inner);
    const int parts = split ? block_parts(items, n, inner) : 1;
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; p++) {
        fn(x, y, idx, items * p / parts, items * (p + 1) / parts, n, inner);
    }
}

/* x (outer, n, inner) -> values (outer, inner), indices (outer, inner) int64. BETTER(v, best)
 * says v replaces best; a NaN wins and then stays (as PyTorch). Only a strictly better value
 * replaces, so ties keep the first index. A block's lanes keep their best values and indices in
 * arrays of their own, and the update has no branch (& and |, not && and ||), so that it is a
 * vector select.
 * Rows along the last dim (inner 1) go MT_TILE_ROWS at a time through a tile (reduce.h): column
 * j of the tile holds element j of each row, a row a lane, as with inner lanes (a row by a
 * scalar loop took 1.9-2.5x PyTorch's time on rows under 64); a last few rows go alone. */
#define ARG_LOOP(name, T, BETTER)                                                                 \
    /* best, at (w) = the best of themselves and rows j0 .. j0 + m of a block, row j0 + j at   */ \
    /* x + j * inner                                                                           */ \
    static inline MT_ALWAYS_INLINE void name##_lanes(T *restrict best, int64_t *restrict at,      \
                                                     const T *restrict x, int64_t j0, int64_t m,  \
                                                     int64_t inner, int64_t w)                    \
    {                                                                                             \
        for (int64_t j = 0; j < m; j++) {                                                         \
            for (int64_t i = 0; i < w; i++) {                                                     \
                const T v = MT_LOAD(T, x + j * inner + i);                                        \
                const bool take = (best[i] == best[i]) & (BETTER(v, best[i]) | (v != v));         \
                best[i] = take ? v : best[i];                                                     \
                at[i] = take ? j0 + j : at[i];                                                    \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
    /* rows first .. last of x (rows, n): whole tiles of rows; returns the first row not done */  \
    static inline MT_ALWAYS_INLINE int64_t name##_tiles(const T *x, T *values, int64_t *idx,      \
                                                        int64_t first, int64_t last, int64_t n)   \
    {                                                                                             \
        T tile[MT_TILE_COLS][MT_TILE_ROWS], best[MT_TILE_ROWS];                                   \
        int64_t at[MT_TILE_ROWS], o = first;                                                      \
        for (; o + MT_TILE_ROWS <= last; o += MT_TILE_ROWS) {                                     \
            for (int64_t j0 = 0; j0 < n; j0 += MT_TILE_COLS) {                                    \
                const int64_t m = n - j0 < MT_TILE_COLS ? n - j0 : MT_TILE_COLS;                  \
                mt_cpu_tile_rows((char *)tile, (const char *)(x + o * n), n, MT_TILE_ROWS, j0, m, \
                                 sizeof(T));                                                      \
                const int skip = j0 == 0; /* row element 0 starts the lanes */                    \
                for (int i = 0; skip && i < MT_TILE_ROWS; i++) {                                  \
                    best[i] = MT_LOAD(T, &tile[0][i]);                                            \
                    at[i] = 0;                                                                    \
                }                                                                                 \
                name##_lanes(best, at, tile[skip], j0 + skip, m - skip, MT_TILE_ROWS,             \
                             MT_TILE_ROWS);                                                       \
            }                                                                                     \
            memcpy(values + o, best, sizeof(best));                                               \
            memcpy(idx + o, at, sizeof(at));                                                      \
        }                                                                                         \
        return o;                                                                                 \
    }                                                                                             \
    MT_SIMD_CLONES static void name##_blocks(const void *xv, void *vv, int64_t *idx,              \
                                             int64_t first, int64_t last, int64_t n,              \
                                             int64_t inner)                                       \
    {                                                                                             \
        if (inner == 1 && n > 0) {                                                                \
            first = name##_tiles((const T *)xv, (T *)vv, idx, first, last, n);                    \
        }                                                                                         \
        T best[LANE_COLS];                                                                        \
        int64_t at[LANE_COLS];                                                                    \
        for (int64_t ob = first; ob < last; ob++) {                                               \
            const lane_block blk = lane_block_at(ob, n, inner);                                   \
            const T *row = (const T *)xv + blk.at;                                                \
            for (int64_t i = 0; i < blk.w; i++) {                                                 \
                best[i] = MT_LOAD(T, row + i);                                                    \
                at[i] = 0;                                                                        \
            }                                                                                     \
            name##_lanes(best, at, row + inner, 1, n - 1, inner, blk.w);                          \
            memcpy((T *)vv + blk.res, best, (size_t)blk.w * sizeof(T));                           \
            memcpy(idx + blk.res, at, (size_t)blk.w * sizeof(int64_t));                           \
        }                                                                                         \
    }                                                                                             \
    static void name(const void *x, void *values, int64_t *idx, int64_t outer, int64_t n,         \
                     int64_t inner)                                                               \
    {                                                                                             \
        run_blocks(name##_blocks, x, values, idx, outer, n, inner, true);                         \
    }
typedef void (*arg_fn)(const void *x, void *values, int64_t *idx, int64_t outer, int64_t n,
                       int64_t inner);
#define ARG_LOOPS(op, BETTER)                                                               \
    ARG_LOOP(op##_b8, bool, BETTER)                                                         \
    ARG_LOOP(op##_i32, int32_t, BETTER)                                                     \
    ARG_LOOP(op##_i64, int64_t, BETTER)                                                     \
    ARG_LOOP(op##_f32, float, BETTER)                                                       \
    ARG_LOOP(op##_f64, double, BETTER)                                                      \
    static const arg_fn op##_loops[MT_NUM_DTYPES] = {op##_b8, op##_i32, op##_i64, op##_f32, \
                                                     op##_f64};
#define GREATER(v, best) ((v) > (best))
#define LESS(v, best) ((v) < (best))
ARG_LOOPS(argmax, GREATER)
ARG_LOOPS(argmin, LESS)

/* max_dim and min_dim: the values and int64 indices of the extreme of self along the plan's dim,
 * into out[0] and out[1]; argmax and argmin (a->plan->op tells the four apart): the indices
 * alone, into out[0], a dim of None (i[0] absent) reducing the flattened tensor. The results
 * are contiguous, so (outer, inner) in memory order whether keepdim or not. */
mt_status
mt_cpu_arg_extreme(mt_args *a)
{
    const mt_op op = a->plan->op;
    const bool want_values = op == MT_OP_max_dim || op == MT_OP_min_dim;
    const arg_fn *loops = op == MT_OP_max_dim || op == MT_OP_argmax ? argmax_loops : argmin_loops;
    const bool flat = !want_values && (a->i_none & 1u);
    mt_tensor *self = a->t[0], *scratch = NULL;
    lanes l = {0};
    mt_status st;
    if (flat) {
        int64_t n = mt_tensor_numel(self);
        st = lanes_of(self, 0, self->dtype, &l);
        l.outer = l.inner = 1;
        l.n = n;
    } else {
        st = lanes_of(self, a->plan->reduce.dim, self->dtype, &l);
    }
    if (st) {
        return st;
    }
    int64_t lanes_n = l.outer * l.inner;
    if (!want_values) { /* the loop keeps the best values somewhere: a workspace */
        st = mt_tensor_empty(1, &lanes_n, self->dtype, MT_DEVICE_CPU, &scratch);
    }
    if (st == MT_OK) {
        mt_tensor *values = want_values ? a->out[0] : scratch;
        mt_tensor *indices = a->out[want_values ? 1 : 0];
        loops[self->dtype](mt_tensor_data(l.x), mt_tensor_data(values),
                           (int64_t *)mt_tensor_data(indices), l.outer, l.n, l.inner);
    }
    mt_tensor_clear(&scratch);
    mt_tensor_clear(&l.x);
    return st;
}

/* ---- scans and softmax: the output has the input's shape ---- */

/* out = fn over the blocks of the rows of self along the plan's dim, in dtype dt (the result:
 * contiguous, self's shape); the blocks are split between threads (run_blocks). */
static mt_status
row_op(mt_args *a, mt_dtype dt, block_fn fn)
{
    mt_tensor *self = a->t[0];
    lanes l;
    mt_status st = lanes_of(self, a->plan->reduce.dim, dt, &l);
    if (st) {
        return st;
    }
    run_blocks(fn, mt_tensor_data(l.x), mt_tensor_data(a->out[0]), NULL, l.outer, l.n, l.inner,
               true);
    mt_tensor_release(l.x);
    return MT_OK;
}

// x, y (outer, n, inner); y[o, j, i] = x[o, 0, i] (op) ... (op) x[o, j, i], each step
// acc = COMBINE(acc, x) in ACC from INIT: each lane in the order of j, whatever the blocks
// (LANE_COLS lanes at a time, in memory order). One slab (outer 1, as cumsum over dim 0) splits
// its column blocks between threads; more slabs are split by row_op.
#define SCAN_LOOP(name, T, ACC, COMBINE, INIT)                                            \
    static void name(const void *xv, void *yv, int64_t *idx, int64_t first, int64_t last, \
                     int64_t n, int64_t inner)                                            \
    {                                                                                     \
        (void)idx;                                                                        \
        if (inner == 1) { /* rows along the last dim: one running value in a register */  \
            for (int64_t o = first; o < last; o++) {                                      \
                const T *x = (const T *)xv + o * n;                                       \
                T *y = (T *)yv + o * n;                                                   \
                ACC acc = INIT;                                                           \
                for (int64_t j = 0; j < n; j++) {                                         \
                    acc = COMBINE(acc, (ACC)x[j]);                                        \
                    y[j] = (T)acc;                                                        \
                }                                                                         \
            }                                                                             \
            return;                                                                       \
        }                                                                                 \
        for (int64_t ob = first; ob < last; ob++) {                                       \
            const lane_block blk = lane_block_at(ob, n, inner);                           \
            const T *x = (const T *)xv + blk.at;                                          \
            T *y = (T *)yv + blk.at;                                                      \
            ACC acc[LANE_COLS];                                                           \
            for (int64_t i = 0; i < blk.w; i++) {                                         \
                acc[i] = INIT;                                                            \
            }                                                                             \
            for (int64_t j = 0; j < n; j++) {                                             \
                for (int64_t i = 0; i < blk.w; i++) {                                     \
                    acc[i] = COMBINE(acc[i], (ACC)x[j * inner + i]);                      \
                    y[j * inner + i] = (T)acc[i];                                         \
                }                                                                         \
            }                                                                             \
        }                                                                                 \
    }
#define SCAN_ADD(acc, v) ((acc) + (v))
#define SCAN_MUL(acc, v) ((acc) * (v))
#define SCAN_LOG_ADD_EXP(acc, v) mt_log_add_exp((v), (acc))
SCAN_LOOP(cumsum_i32, int32_t, int64_t, SCAN_ADD, 0)
SCAN_LOOP(cumsum_i64, int64_t, int64_t, SCAN_ADD, 0)
SCAN_LOOP(cumsum_f32, float, double, SCAN_ADD, 0)
SCAN_LOOP(cumsum_f64, double, double, SCAN_ADD, 0)
SCAN_LOOP(cumprod_i32, int32_t, int64_t, SCAN_MUL, 1)
SCAN_LOOP(cumprod_i64, int64_t, int64_t, SCAN_MUL, 1)
SCAN_LOOP(cumprod_f32, float, double, SCAN_MUL, 1)
SCAN_LOOP(cumprod_f64, double, double, SCAN_MUL, 1)
SCAN_LOOP(cumprod_c64, float _Complex, double _Complex, mt_cmul_c128, 1)
SCAN_LOOP(cumprod_c128, double _Complex, double _Complex, mt_cmul_c128, 1)
SCAN_LOOP(logcumsumexp_f32, float, double, SCAN_LOG_ADD_EXP, -INFINITY)
SCAN_LOOP(logcumsumexp_f64, double, double, SCAN_LOG_ADD_EXP, -INFINITY)

static mt_status
scan(mt_args *a, const block_fn *loops)
{
    mt_dtype dt = a->plan->reduce.out_dt;
    if (loops[dt] == NULL) {
        return mt_fail_not_implemented("cumsum", "_cpu", dt);
    }
    return row_op(a, dt, loops[dt]);
}

mt_status
mt_cpu_cumsum(mt_args *a)
{
    static const block_fn loops[] = {NULL, cumsum_i32, cumsum_i64, cumsum_f32, cumsum_f64};
    return scan(a, loops);
}

mt_status
mt_cpu_cumprod(mt_args *a)
{
    static const block_fn loops[MT_NUM_DTYPES] = {NULL,
                                                  cumprod_i32,
                                                  cumprod_i64,
                                                  cumprod_f32,
                                                  cumprod_f64,
                                                  [MT_COMPLEX64] = cumprod_c64,
                                                  [MT_COMPLEX128] = cumprod_c128};
    return scan(a, loops);
}

// self (any shape), dim; out = log(cumsum(exp(self))) along dim, in self's (float) dtype
mt_status
mt_cpu_logcumsumexp(mt_args *a)
{
    static const block_fn loops[] = {NULL, NULL, NULL, logcumsumexp_f32, logcumsumexp_f64};
    return scan(a, loops);
}

/* x, y (outer, n, inner); y = softmax (or log_softmax when LOG) of x along n. Subtracting the
 * max keeps exp from overflowing; sums accumulate in double. log_softmax is (x - max) - log(sum):
 * x - max is exact near the max, where x - (max + log(sum)) would round max + log(sum) to max's
 * precision first (a confident logit of 100 kept about 3 digits of its log-probability). The inner dim is contiguous, so a
 * block of LANE_COLS neighbouring lanes is done together, walking rows of the block in memory
 * order (a lane at a time would read a column with stride inner: 6x slower on (1024, 1024), dim 0). */
#define SOFTMAX_LOOP(name, T, EXP, LOG)                                                    \
    MT_SIMD_CLONES static void name(const void *xv, void *yv, int64_t *idx, int64_t first, \
                                    int64_t last, int64_t n, int64_t inner)                \
    {                                                                                      \
        (void)idx;                                                                         \
        for (int64_t ob = first; ob < last; ob++) {                                        \
            const lane_block blk = lane_block_at(ob, n, inner);                            \
            const int64_t w = blk.w;                                                       \
            const T *xb = (const T *)xv + blk.at;                                          \
            T *yb = (T *)yv + blk.at;                                                      \
            T m[LANE_COLS];                                                                \
            double sum[LANE_COLS];                                                         \
            for (int64_t c = 0; c < w; c++) {                                              \
                m[c] = -INFINITY;                                                          \
                sum[c] = 0;                                                                \
            }                                                                              \
            for (int64_t j = 0; j < n; j++) {                                              \
                const T *xr = xb + j * inner;                                              \
                for (int64_t c = 0; c < w; c++) {                                          \
                    m[c] = xr[c] > m[c] || xr[c] != xr[c] ? xr[c] : m[c];                  \
                }                                                                          \
            }                                                                              \
            for (int64_t c = 0; c < w; c++) {                                              \
                /* a lane of -inf: exp(x - 0) gives 0/0 = NaN, as PyTorch */               \
                m[c] = isinf(m[c]) ? (m[c] > 0 ? m[c] : 0) : m[c];                         \
            }                                                                              \
            for (int64_t j = 0; j < n; j++) {                                              \
                const T *xr = xb + j * inner;                                              \
                T *yr = yb + j * inner;                                                    \
                for (int64_t c = 0; c < w; c++) {                                          \
                    const T e = EXP(xr[c] - m[c]);                                         \
                    sum[c] += e;                                                           \
                    if (!(LOG)) {                                                          \
                        yr[c] = e;                                                         \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
            T fin[LANE_COLS]; /* log_softmax: log(sum); softmax: 1 / sum */                \
            for (int64_t c = 0; c < w; c++) {                                              \
                fin[c] = (LOG) ? (T)log(sum[c]) : (T)(1.0 / sum[c]);                       \
            }                                                                              \
            for (int64_t j = 0; j < n; j++) {                                              \
                const T *xr = xb + j * inner;                                              \
                T *yr = yb + j * inner;                                                    \
                for (int64_t c = 0; c < w; c++) {                                          \
                    yr[c] = (LOG) ? (xr[c] - m[c]) - fin[c] : yr[c] * fin[c];              \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

/* x - max is <= 0 (or NaN): float takes the vectorisable exp of vmath.h */
SOFTMAX_LOOP(softmax_f32, float, mt_vexp_nonpos_f32, false)
SOFTMAX_LOOP(softmax_f64, double, mt_exp_f64, false)
SOFTMAX_LOOP(log_softmax_f32, float, mt_vexp_nonpos_f32, true)
SOFTMAX_LOOP(log_softmax_f64, double, mt_exp_f64, true)

/* The float32 row loops of softmax, log_softmax and the latter's backward compute their exp with
 * multiply-adds contracted (the build's C11 mode turns contraction off): vmath.h's exp is some
 * 40 vector instructions an element without, and these loops are its time. Contracted, exp's
 * error (mt_vexp_nonpos_f32) measured 1.016 ulp at most over every float32 in [-87.3, 0], 0.992
 * without (PyTorch's softmax takes its exp_u20). */
#define CONTRACTED __attribute__((optimize("fp-contract=fast")))

/* x, y (rows, n), float, rows contiguous: the common case (softmax over the last dim) with the
 * vectorised exp of vmath.h and a float partial sum per SIMD lane. */
CONTRACTED MT_SIMD_CLONES static void
softmax_rows_f32(const float *x, float *y, int64_t rows, int64_t n, bool log)
{
    for (int64_t o = 0; o < rows; o++) {
        const float *xr = x + o * n;
        float *yr = y + o * n;
        float m = -INFINITY;
#pragma omp simd reduction(max : m)
        for (int64_t j = 0; j < n; j++) {
            m = xr[j] > m ? xr[j] : m;
        }
        m = isinf(m) && m < 0 ? 0 : m; /* as in SOFTMAX_LOOP */
        float sum = 0;
        if (log) {
#pragma omp simd reduction(+ : sum)
            for (int64_t j = 0; j < n; j++) {
                sum += mt_vexp_nonpos_f32(xr[j] - m);
            }
            const float log_sum = logf(sum);
#pragma omp simd
            for (int64_t j = 0; j < n; j++) {
                yr[j] = (xr[j] - m) - log_sum; /* as in SOFTMAX_LOOP: exact near the max */
            }
            continue;
        }
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < n; j++) {
            yr[j] = mt_vexp_nonpos_f32(xr[j] - m);
            sum += yr[j];
        }
        const float scale = 1.0f / sum;
#pragma omp simd
        for (int64_t j = 0; j < n; j++) {
            yr[j] *= scale;
        }
    }
}

/* Softmax along the last dim (inner 1: block o is row o) takes softmax_rows_f32. */
static void
softmax_fast_f32(const void *x, void *y, int64_t *idx, int64_t first, int64_t last, int64_t n,
                 int64_t inner)
{
    if (inner == 1) {
        softmax_rows_f32((const float *)x + first * n, (float *)y + first * n, last - first, n,
                         false);
    } else {
        softmax_f32(x, y, idx, first, last, n, inner);
    }
}

static void
log_softmax_fast_f32(const void *x, void *y, int64_t *idx, int64_t first, int64_t last, int64_t n,
                     int64_t inner)
{
    if (inner == 1) {
        softmax_rows_f32((const float *)x + first * n, (float *)y + first * n, last - first, n,
                         true);
    } else {
        log_softmax_f32(x, y, idx, first, last, n, inner);
    }
}

// self (any shape), dim; out = exp(self) / sum of exp(self) along dim, or its log for
// log_softmax (a->plan->op tells them apart)
mt_status
mt_cpu_softmax(mt_args *a)
{
    const mt_dtype dt = a->plan->reduce.out_dt;
    const bool log = a->plan->op == MT_OP_log_softmax;
    const block_fn f32 = log ? log_softmax_fast_f32 : softmax_fast_f32;
    const block_fn f64 = log ? log_softmax_f64 : softmax_f64;
    return row_op(a, dt, dt == MT_FLOAT32 ? f32 : f64);
}

// g, y, gx (rows, n): the backward of one row in one pass, s = sum of TERM over the row (in
// double), then gx[j] = GRAD: log_softmax's gx = g - exp(y) * sum(g) (exp vectorised, vmath.h),
// softmax's gx = y * (g - sum(g * y))
#define SOFTMAX_BACK_ROW(name, T, TERM, GRAD)                                                 \
    MT_SIMD_CLONES static void name(const T *restrict g, const T *restrict y, T *restrict gx, \
                                    int64_t n)                                                \
    {                                                                                         \
        double s = 0;                                                                         \
        _Pragma("omp simd reduction(+ : s)") for (int64_t j = 0; j < n; j++)                  \
        {                                                                                     \
            s += TERM;                                                                        \
        }                                                                                     \
        const T sum = (T)s;                                                                   \
        _Pragma("omp simd") for (int64_t j = 0; j < n; j++)                                   \
        {                                                                                     \
            gx[j] = GRAD;                                                                     \
        }                                                                                     \
    }
SOFTMAX_BACK_ROW(log_softmax_back_any_f32, float, (double)g[j], g[j] - mt_vexp_f32(y[j]) * sum)
SOFTMAX_BACK_ROW(log_softmax_back_f64, double, (double)g[j], g[j] - mt_exp_f64(y[j]) * sum)
SOFTMAX_BACK_ROW(softmax_back_f32, float, (double)g[j] * (double)y[j], y[j] * (g[j] - sum))
SOFTMAX_BACK_ROW(softmax_back_f64, double, (double)g[j] * (double)y[j], y[j] * (g[j] - sum))

/* log_softmax_back_any_f32 for a row whose outputs y are all <= 0 (or NaN), as log_softmax's
 * are: exp without its overflow and subnormal cases (mt_vexp_nonpos_f32), which made the row
 * 1.3x slower (4096x1000: 2.45 ms against 1.85 ms, one thread). A y above 0 (the op called
 * directly with other values) takes the general row. An exp below FLT_MIN (y < -87.3) counts as
 * 0 here, not as a subnormal: gx moves by under 1.2e-38 * |sum(g)|. */
CONTRACTED MT_SIMD_CLONES static void
log_softmax_back_f32(const float *restrict g, const float *restrict y, float *restrict gx,
                     int64_t n)
{
    double s = 0;
    float top = 0;
#pragma omp simd reduction(+ : s) reduction(max : top)
    for (int64_t j = 0; j < n; j++) {
        s += (double)g[j];
        top = y[j] > top ? y[j] : top;
    }
    if (top > 0) {
        log_softmax_back_any_f32(g, y, gx, n);
        return;
    }
    const float sum = (float)s;
#pragma omp simd
    for (int64_t j = 0; j < n; j++) {
        gx[j] = g[j] - mt_vexp_nonpos_f32(y[j]) * sum;
    }
}

/* The result, a->out[0], = what the op's composite (its chain of ops) computes. */
static mt_status
composite_into(const mt_args *a, mt_kernel_fn composite)
{
    mt_args c = *a;
    c.out[0] = NULL;
    mt_status st = composite(&c);
    if (st == MT_OK) {
        st = mt_cpu_copy_into(a->out[0], c.out[0]);
    }
    mt_tensor_clear(&c.out[0]);
    return st;
}

typedef void (*back_row_f32)(const float *g, const float *y, float *gx, int64_t n);
typedef void (*back_row_f64)(const double *g, const double *y, double *gx, int64_t n);

// grad_output, output (any shape), dim; out = _softmax_backward_data's result along dim:
// output * (grad_output - sum(grad_output * output)); _log_softmax_backward_data's (a->plan->op):
// grad_output - exp(output) * sum(grad_output). Along the last dim (inner 1) rows go to the
// threads, a row's loop each; along another the op's composite (its chain of ops) runs.
mt_status
mt_cpu_softmax_backward(mt_args *a)
{
    const bool log = a->plan->op == MT_OP__log_softmax_backward_data;
    const back_row_f32 f32 = log ? log_softmax_back_f32 : softmax_back_f32;
    const back_row_f64 f64 = log ? log_softmax_back_f64 : softmax_back_f64;
    const mt_kernel_fn composite = log ? mt_composite__log_softmax_backward_data
                                       : mt_composite__softmax_backward_data;
    const mt_dtype dt = a->plan->reduce.out_dt;
    const int dim = a->plan->reduce.dim;
    lanes g, y;
    mt_status st = lanes_of(a->t[0], dim, dt, &g);
    if (st) {
        return st;
    }
    if ((st = lanes_of(a->t[1], dim, dt, &y)) == MT_OK) {
        if (g.inner != 1) {
            st = composite_into(a, composite);
        } else {
            const int64_t rows = g.outer, n = g.n;
            const char *gd = mt_tensor_data(g.x), *yd = mt_tensor_data(y.x);
            char *od = mt_tensor_data(a->out[0]);
            const int64_t row = n * (int64_t)mt_dtype_size(dt);
            const int parts = mt_parallel_parts(rows * n, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
            for (int64_t r = 0; r < rows; r++) {
                if (dt == MT_FLOAT32) {
                    f32((const float *)(gd + r * row), (const float *)(yd + r * row),
                        (float *)(od + r * row), n);
                } else {
                    f64((const double *)(gd + r * row), (const double *)(yd + r * row),
                        (double *)(od + r * row), n);
                }
            }
        }
        mt_tensor_release(y.x);
    }
    mt_tensor_release(g.x);
    return st;
}
