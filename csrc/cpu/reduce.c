/* Reductions on the CPU over a set of dims: sum, nansum, mean, prod, amax, amin, all, any, norm.
 *
 * The accumulator is viewed with stride 0 along reduced dims, so the shared iterator walks the
 * input once and the inner loop accumulates. Float products and norms accumulate in double,
 * integer sums and products in int64; a contiguous run of floats is summed in its own dtype by
 * a cascade (cascade.h) and added to a double; amax and amin keep the input dtype. The two-pass
 * reductions (var, std, logsumexp) are in reduce_two_pass.c, on the accumulators below; those
 * that need a whole row at once (max with indices, softmax, ...) in reduce_dim.c. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "cpu/cascade.h"
#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "cpu/reduce.h"
#include "cpu/vmath.h"
#include "dispatch/kernels.h"
#include "ops/fails.h"
#include "ops/front.h"

typedef struct reduce_ctx {
    double p;     /* the norm's order */
    int64_t cols; /* the columns a column loop (below) sums at a call */
} reduce_ctx;

/* The sum of a contiguous run x (n) for a loop below: the simd sum of TERM in ACC (the
 * compiler keeps a partial sum per lane), or the cascade of floats (RUN_CASCADE). */
#define RUN_SIMD(name, ACC, T, TERM)                                          \
    static inline MT_ALWAYS_INLINE ACC name(const T *xs, int64_t n, double p) \
    {                                                                         \
        (void)p;                                                              \
        ACC s = 0;                                                            \
        _Pragma("omp simd reduction(+ : s)") for (int64_t i = 0; i < n; i++)  \
        {                                                                     \
            const ACC x = (ACC)MT_LOAD(T, xs + i);                            \
            s += (TERM);                                                      \
        }                                                                     \
        return s;                                                             \
    }
#define RUN_CASCADE_f32(xs, n, p) ((double)cascade_sum_f32(xs, n))
#define RUN_CASCADE_f64(xs, n, p) cascade_sum_f64(xs, n)
#define RUN_NAN_CASCADE_f32(xs, n, p) ((double)cascade_nansum_f32(xs, n))
#define RUN_NAN_CASCADE_f64(xs, n, p) cascade_nansum_f64(xs, n)

// acc (input shape, stride 0 on reduced dims), in; acc += TERM(x) for each x of in (read as
// ACC; p is a norm's order), a contiguous run into one value by RUN: the sums' and the norms'
// loops
#define RUN_SUM_LOOP(name, ACC, T, TERM, RUN)                                                  \
    MT_SIMD_CLONES static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                                          \
        const double p = ctx ? ((const reduce_ctx *)ctx)->p : 0;                               \
        (void)p;                                                                               \
        if (strides[0] == 0 && strides[1] == sizeof(T)) {                                      \
            *(ACC *)data[0] += RUN((const T *)data[1], n, p);                                  \
            return;                                                                            \
        }                                                                                      \
        if (strides[0] == 0) {                                                                 \
            ACC s = 0;                                                                         \
            for (int64_t i = 0; i < n; i++) {                                                  \
                const ACC x = (ACC)MT_GET(T, 1, i);                                            \
                s += (TERM);                                                                   \
            }                                                                                  \
            *(ACC *)data[0] += s;                                                              \
            return;                                                                            \
        }                                                                                      \
        if (strides[0] == sizeof(ACC) && strides[1] == sizeof(T)) {                            \
            /* a reduced outer dim: one row of x into the row of sums, vectorised */           \
            ACC *restrict acc = (ACC *)data[0];                                                \
            const T *restrict xs = (const T *)data[1];                                         \
            for (int64_t i = 0; i < n; i++) {                                                  \
                const ACC x = (ACC)MT_LOAD(T, xs + i);                                         \
                acc[i] += (TERM);                                                              \
            }                                                                                  \
            return;                                                                            \
        }                                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                      \
            const ACC x = (ACC)MT_GET(T, 1, i);                                                \
            MT_AT(ACC, 0, i) += (TERM);                                                        \
        }                                                                                      \
    }                                                                                          \
    /* the rows loop (see rows() below): n rows of ctx->cols contiguous elements, row i at */  \
    /* data[1] + i * strides[1], each summed by RUN into element i of acc */                   \
    MT_SIMD_CLONES static void name##_rows(char **data, const int64_t *strides, int64_t n,     \
                                           void *ctx)                                          \
    {                                                                                          \
        const reduce_ctx *c = ctx;                                                             \
        for (int64_t i = 0; i < n; i++) {                                                      \
            MT_AT(ACC, 0, i) += RUN((const T *)(data[1] + i * strides[1]), c->cols, c->p);     \
        }                                                                                      \
    }
#define TERM_SUM_LOOP(name, ACC, T, TERM) \
    RUN_SIMD(name##_run, ACC, T, TERM)    \
    RUN_SUM_LOOP(name, ACC, T, TERM, name##_run)
#define SUM_LOOP(name, ACC, T) TERM_SUM_LOOP(name, ACC, T, x)
SUM_LOOP(sum_b8, int64_t, bool)
SUM_LOOP(sum_i32, int64_t, int32_t)
SUM_LOOP(sum_i64, int64_t, int64_t)
RUN_SUM_LOOP(sum_f32, double, float, x, RUN_CASCADE_f32)
RUN_SUM_LOOP(sum_f64, double, double, x, RUN_CASCADE_f64)
static const mt_loop_fn sum_loops[MT_NUM_DTYPES] = {sum_b8, sum_i32, sum_i64, sum_f32, sum_f64};
/* The rows loops of the float sums and nansums: rows shorter than MT_ROW_VECTORS_MAX go together
 * to reduce_rows.c (a row a call of the cascade, one vector and a fold of its lanes, took 1.3x
 * PyTorch's time on rows of 16, 1.5-1.9x on float32 rows of 24-100; nansum 2.8-3.9x on rows of
 * 50-100), longer ones each to the cascade (sum_f32_rows). */
#define SUM_ROWS_TILED(name, S, T, E, skip_nan)                                                    \
    static void name##_##S##_rows_tiled(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                                              \
        const int64_t cols = ((const reduce_ctx *)ctx)->cols;                                      \
        if (cols >= MT_ROW_VECTORS_MAX) {                                                          \
            name##_##S##_rows(data, strides, n, ctx);                                              \
            return;                                                                                \
        }                                                                                          \
        mt_cpu_row_sums(E, skip_nan, (double *)data[0], strides[0] / (int64_t)sizeof(double),      \
                        data[1], n, cols, strides[1] / (int64_t)sizeof(T));                        \
    }
SUM_ROWS_TILED(sum, f32, float, MT_FLOAT32, false)
SUM_ROWS_TILED(sum, f64, double, MT_FLOAT64, false)
static const mt_loop_fn sum_rows_loops[MT_NUM_DTYPES] = {sum_b8_rows, sum_i32_rows, sum_i64_rows,
                                                         sum_f32_rows_tiled, sum_f64_rows_tiled};
/* nansum: floats skip their NaNs (x == x only when x is no NaN); integers have none */
RUN_SUM_LOOP(nansum_f32, double, float, x == x ? x : 0, RUN_NAN_CASCADE_f32)
RUN_SUM_LOOP(nansum_f64, double, double, x == x ? x : 0, RUN_NAN_CASCADE_f64)
SUM_ROWS_TILED(nansum, f32, float, MT_FLOAT32, true)
SUM_ROWS_TILED(nansum, f64, double, MT_FLOAT64, true)
static const mt_loop_fn nansum_loops[MT_NUM_DTYPES] = {sum_b8, sum_i32, sum_i64, nansum_f32,
                                                       nansum_f64};
static const mt_loop_fn nansum_rows_loops[MT_NUM_DTYPES] = {sum_b8_rows, sum_i32_rows, sum_i64_rows,
                                                            nansum_f32_rows_tiled,
                                                            nansum_f64_rows_tiled};
/* nansum of floats into an integer (or bool) dtype, as PyTorch's: each element converted to
 * that dtype first, its NaNs skipped before (they have no integer value). A term is what a cast
 * to the result's dtype makes of the element (loops.h's MT_ST_: toward zero; out of range, an
 * infinity too, x86's "indefinite"), added into an int64 accumulator wrapping around, whose
 * sum the result's dtype then wraps. (Summed in double and converted once, [inf, -inf, 3.9]
 * gave INT64_MIN; PyTorch's is 3.) Accumulator: int64, read as uint64 (the same bits). */
#define NANSUM_TO_INT_LOOP(TO_T, TO_S, FROM_T, FROM_S)                                      \
    static void nansum_##FROM_S##_to_##TO_S(char **data, const int64_t *strides, int64_t n, \
                                            void *ctx)                                      \
    {                                                                                       \
        (void)ctx;                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                   \
            const FROM_T x = MT_GET(FROM_T, 1, i);                                          \
            TO_T v = 0;                                                                     \
            if (x == x) {                                                                   \
                MT_ST_##TO_S(&v, x);                                                        \
            }                                                                               \
            MT_AT(uint64_t, 0, i) += (uint64_t)v;                                           \
        }                                                                                   \
    }
#define NANSUM_TO_INT_LOOPS(TO_T, TO_S)        \
    NANSUM_TO_INT_LOOP(TO_T, TO_S, float, f32) \
    NANSUM_TO_INT_LOOP(TO_T, TO_S, double, f64)
NANSUM_TO_INT_LOOPS(bool, b8)
NANSUM_TO_INT_LOOPS(int32_t, i32)
NANSUM_TO_INT_LOOPS(int64_t, i64)
NANSUM_TO_INT_LOOPS(uint8_t, u8)
NANSUM_TO_INT_LOOPS(int8_t, i8)
NANSUM_TO_INT_LOOPS(int16_t, i16)
NANSUM_TO_INT_LOOPS(uint16_t, u16)
NANSUM_TO_INT_LOOPS(uint32_t, u32)
NANSUM_TO_INT_LOOPS(uint64_t, u64)
#define NANSUM_TO_INT_ROW(E, S) \
    [E] = {[MT_FLOAT32] = nansum_f32_to_##S, [MT_FLOAT64] = nansum_f64_to_##S}
/* nansum_to_int_loops[the result's dtype][the input's] */
static const mt_loop_fn nansum_to_int_loops[MT_NUM_DTYPES][MT_NUM_DTYPES] = {
    NANSUM_TO_INT_ROW(MT_BOOL, b8),    NANSUM_TO_INT_ROW(MT_INT32, i32),
    NANSUM_TO_INT_ROW(MT_INT64, i64),  NANSUM_TO_INT_ROW(MT_UINT8, u8),
    NANSUM_TO_INT_ROW(MT_INT8, i8),    NANSUM_TO_INT_ROW(MT_INT16, i16),
    NANSUM_TO_INT_ROW(MT_UINT16, u16), NANSUM_TO_INT_ROW(MT_UINT32, u32),
    NANSUM_TO_INT_ROW(MT_UINT64, u64),
};

// acc (input shape, stride 0 on reduced dims), in; acc = COMBINE(acc, x) for each x of in
#define REDUCE_LOOP(name, ACC, T, COMBINE)                                      \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                           \
        const double p = ((const reduce_ctx *)ctx)->p;                          \
        (void)p;                                                                \
        if (strides[0] == 0) {                                                  \
            ACC acc = *(ACC *)data[0];                                          \
            for (int64_t i = 0; i < n; i++) {                                   \
                const ACC x = (ACC)MT_GET(T, 1, i);                             \
                acc = (COMBINE);                                                \
            }                                                                   \
            *(ACC *)data[0] = acc;                                              \
            return;                                                             \
        }                                                                       \
        for (int64_t i = 0; i < n; i++) {                                       \
            const ACC acc = MT_AT(ACC, 0, i), x = (ACC)MT_GET(T, 1, i);         \
            MT_AT(ACC, 0, i) = (COMBINE);                                       \
        }                                                                       \
    }
/* The lanes of a contiguous run reduced into one value: 256 bytes of partial results (64 floats:
 * four AVX-512 vectors, eight AVX2 ones), so the combines of a block are independent chains that
 * overlap (one running value, or one vector of them, waits on each combine). */
#define REDUCE_LANE_BYTES 256
/* max and min of floats and integers (BETTER(x, acc): x replaces acc), a NaN winning and then
 * staying (KEEP: x != x is true only for NaN, and BETTER(x, NaN) is false). A contiguous run
 * into one value goes by lanes: they start from the run's first block and take every block, the
 * last one the run's final L elements (which may overlap the block before: the combine is
 * idempotent), by BETTER alone, one compare and select (a max instruction); then fold in
 * halves. For floats (FLOAT) a probe sums the blocks, finite unless a NaN or an infinity came
 * (or the sum overflowed), and only then is the run searched for a NaN, which is the result. */
#define EXTREMUM_LOOP(name, T, BETTER, FLOAT)                                                  \
    MT_SIMD_CLONES static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                                          \
        (void)ctx;                                                                             \
        enum { L = REDUCE_LANE_BYTES / sizeof(T) };                                            \
        T *accp = (T *)data[0];                                                                \
        if (strides[0] == 0 && strides[1] == sizeof(T) && n >= L) {                            \
            const T *xs = (const T *)data[1];                                                  \
            T lane[L], probe[L] = {0};                                                         \
            memcpy(lane, xs, sizeof(lane));                                                    \
            for (int64_t i = 0; i < n; i += L) {                                               \
                const T *blk = xs + (i + L <= n ? i : n - L);                                  \
                _Pragma("omp simd") for (int l = 0; l < L; l++)                                \
                {                                                                              \
                    lane[l] = BETTER(blk[l], lane[l]) ? blk[l] : lane[l];                      \
                    if (FLOAT) {                                                               \
                        probe[l] += blk[l];                                                    \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
            _Pragma("GCC unroll 8") for (int w = L / 2; w > 0; w /= 2)                         \
            {                                                                                  \
                for (int l = 0; l < w; l++) {                                                  \
                    lane[l] = BETTER(lane[l + w], lane[l]) ? lane[l + w] : lane[l];            \
                    probe[l] += probe[l + w];                                                  \
                }                                                                              \
            }                                                                                  \
            for (int64_t i = 0; FLOAT && !isfinite((double)probe[0]) && i < n; i++) {          \
                if (xs[i] != xs[i]) {                                                          \
                    lane[0] = xs[i];                                                           \
                    break;                                                                     \
                }                                                                              \
            }                                                                                  \
            *accp = EXTREMUM_KEEP(BETTER, lane[0], *accp);                                     \
            return;                                                                            \
        }                                                                                      \
        if (strides[0] == sizeof(T) && strides[1] == sizeof(T)) {                              \
            /* a reduced outer dim, vectorised: 1.7-1.9x PyTorch's time by element */          \
            T *restrict acc = accp;                                                            \
            const T *restrict xs = (const T *)data[1];                                         \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++)                                \
            {                                                                                  \
                acc[i] = EXTREMUM_KEEP(BETTER, xs[i], acc[i]);                                 \
            }                                                                                  \
            return;                                                                            \
        }                                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                      \
            T *a = (T *)(data[0] + i * strides[0]);                                            \
            *a = EXTREMUM_KEEP(BETTER, MT_GET(T, 1, i), *a);                                   \
        }                                                                                      \
    }
#define EXTREMUM_KEEP(BETTER, x, acc) ((BETTER((x), (acc)) || (x) != (x)) ? (x) : (acc))
#define GREATER(x, y) ((x) > (y))
#define LESS(x, y) ((x) < (y))
/* Every dtype, accumulating in ACC_INT for bool and integers and ACC_FLOAT for floats. */
#define REDUCE_LOOPS(op, ACC_INT, ACC_FLOAT, COMBINE)                                           \
    REDUCE_LOOP(op##_b8, ACC_INT, bool, COMBINE)                                                \
    REDUCE_LOOP(op##_i32, ACC_INT, int32_t, COMBINE)                                            \
    REDUCE_LOOP(op##_i64, ACC_INT, int64_t, COMBINE)                                            \
    REDUCE_LOOP(op##_f32, ACC_FLOAT, float, COMBINE)                                            \
    REDUCE_LOOP(op##_f64, ACC_FLOAT, double, COMBINE)                                           \
    static const mt_loop_fn op##_loops[MT_NUM_DTYPES] = {op##_b8, op##_i32, op##_i64, op##_f32, \
                                                         op##_f64};
/* The same over the input's own type: max and min keep the dtype. A NaN, once met, stays
 * (x != x is true only for NaN; acc > NaN is false). A bool is read through MT_LOAD (its byte
 * normalised), so it takes the plain loop. */
#define EXTREMUM_LOOPS(op, BETTER, LANE_BETTER)                                                 \
    REDUCE_LOOP(op##_b8, bool, bool, (BETTER) ? x : acc)                                        \
    EXTREMUM_LOOP(op##_i32, int32_t, LANE_BETTER, false)                                        \
    EXTREMUM_LOOP(op##_i64, int64_t, LANE_BETTER, false)                                        \
    EXTREMUM_LOOP(op##_f32, float, LANE_BETTER, true)                                           \
    EXTREMUM_LOOP(op##_f64, double, LANE_BETTER, true)                                          \
    static const mt_loop_fn op##_loops[MT_NUM_DTYPES] = {op##_b8, op##_i32, op##_i64, op##_f32, \
                                                         op##_f64};
/* Norms: floats only, accumulating in double: sums of a term, or (inf, -inf) an extremum. */
#define NORM_LOOPS(op, COMBINE)                   \
    REDUCE_LOOP(op##_f32, double, float, COMBINE) \
    REDUCE_LOOP(op##_f64, double, double, COMBINE)
#define NORM_SUM_LOOPS(op, TERM)                 \
    TERM_SUM_LOOP(op##_f32, double, float, TERM) \
    TERM_SUM_LOOP(op##_f64, double, double, TERM)

/* prod: complex products accumulate in complex128, as core/math.h's PyTorch-valued product */
REDUCE_LOOP(prod_b8, int64_t, bool, acc *x)
REDUCE_LOOP(prod_i32, int64_t, int32_t, acc *x)
REDUCE_LOOP(prod_i64, int64_t, int64_t, acc *x)
REDUCE_LOOP(prod_f32_strided, double, float, acc *x)
REDUCE_LOOP(prod_f64_strided, double, double, acc *x)
// acc, in as REDUCE_LOOP's; acc *= x, a contiguous run into one value by a simd product (the
// compiler keeps a partial product per lane: one running product waits on each multiply, and a
// row of 512 floats took 9x PyTorch's time, whose products go by vector lanes too)
#define FLOAT_PROD_LOOP(name, T)                                                               \
    MT_SIMD_CLONES static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                                          \
        if (strides[0] == 0 && strides[1] == sizeof(T)) {                                      \
            const T *xs = (const T *)data[1];                                                  \
            double s = 1;                                                                      \
            _Pragma("omp simd reduction(* : s)") for (int64_t i = 0; i < n; i++)               \
            {                                                                                  \
                s *= (double)xs[i];                                                            \
            }                                                                                  \
            *(double *)data[0] *= s;                                                           \
            return;                                                                            \
        }                                                                                      \
        name##_strided(data, strides, n, ctx);                                                 \
    }
FLOAT_PROD_LOOP(prod_f32, float)
FLOAT_PROD_LOOP(prod_f64, double)
REDUCE_LOOP(prod_c64, double _Complex, float _Complex, mt_cmul_c128(acc, x))
REDUCE_LOOP(prod_c128, double _Complex, double _Complex, mt_cmul_c128(acc, x))
static const mt_loop_fn prod_loops[MT_NUM_DTYPES] = {prod_b8,
                                                     prod_i32,
                                                     prod_i64,
                                                     prod_f32,
                                                     prod_f64,
                                                     [MT_COMPLEX64] = prod_c64,
                                                     [MT_COMPLEX128] = prod_c128};
REDUCE_LOOPS(all, bool, bool, acc &&x)
REDUCE_LOOPS(any, bool, bool, acc || x)
EXTREMUM_LOOPS(amax, x > acc, GREATER)
EXTREMUM_LOOPS(amin, x < acc, LESS)
/* The rows loops of max and min (rows() below): a call takes n rows of ctx->cols contiguous
 * elements, row i at data[1] + i * strides[1] into element i of acc. Rows shorter than
 * MT_SHORT_ROW go together to reduce_rows.c (a row a call took 2.5-2.9x PyTorch's time on rows
 * of 16 and 50 floats: the lanes above want 64, and a shorter row took the scalar loop), longer
 * ones each to the loop of a run (its lanes). */
#define EXTREMUM_ROWS_LOOP(op, S, T, E, MAX)                                               \
    static void op##_##S##_rows(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                                      \
        const int64_t cols = ((const reduce_ctx *)ctx)->cols, item = sizeof(T);            \
        if (cols < MT_SHORT_ROW) {                                                         \
            mt_cpu_row_extrema(E, MAX, data[0], strides[0] / item, data[1], n, cols,       \
                               strides[1] / item);                                         \
            return;                                                                        \
        }                                                                                  \
        const int64_t run[2] = {0, item};                                                  \
        for (int64_t i = 0; i < n; i++) {                                                  \
            char *row[2] = {data[0] + i * strides[0], data[1] + i * strides[1]};           \
            op##_##S(row, run, cols, ctx);                                                 \
        }                                                                                  \
    }
#define EXTREMUM_ROWS_LOOPS(op, MAX)                                                              \
    EXTREMUM_ROWS_LOOP(op, i32, int32_t, MT_INT32, MAX)                                           \
    EXTREMUM_ROWS_LOOP(op, i64, int64_t, MT_INT64, MAX)                                           \
    EXTREMUM_ROWS_LOOP(op, f32, float, MT_FLOAT32, MAX)                                           \
    EXTREMUM_ROWS_LOOP(op, f64, double, MT_FLOAT64, MAX)                                          \
    static const mt_loop_fn op##_rows_loops[MT_NUM_DTYPES] = {NULL, op##_i32_rows, op##_i64_rows, \
                                                              op##_f32_rows, op##_f64_rows};
EXTREMUM_ROWS_LOOPS(amax, true)
EXTREMUM_ROWS_LOOPS(amin, false)
NORM_SUM_LOOPS(norm0, (double)(x != 0))
NORM_SUM_LOOPS(norm1, fabs(x))
/* The 2-norm of float32 sums its squares by the cascade in float (the float64 simd sum, a chain
 * of adds to each vector of 8 lanes, took 1.16x PyTorch's time on rows of 1024; PyTorch adds
 * the squares in float too, in one vector). Where float's range may not hold the sum (a square
 * or the sum past FLT_MAX, squares so small that underflow took bits from them: a sum under
 * NORM2_FLOAT_MIN), or it is NaN, the run is summed again in float64. */
#define NORM2_FLOAT_MIN 0x1p-60f /* n squares' underflow, at most n * 2^-150, is lost in it */
RUN_SIMD(norm2_f32_wide, double, float, x *x)
static inline MT_ALWAYS_INLINE double
norm2_f32_run(const float *xs, int64_t n, double p)
{
    const float s = cascade_squares_f32(xs, n);
    return s >= NORM2_FLOAT_MIN && s <= FLT_MAX ? (double)s : norm2_f32_wide(xs, n, p);
}
RUN_SUM_LOOP(norm2_f32, double, float, x *x, norm2_f32_run)
TERM_SUM_LOOP(norm2_f64, double, double, x *x)
NORM_SUM_LOOPS(normp, pow(fabs(x), p))
NORM_LOOPS(norminf, fabs(x) > acc || x != x ? fabs(x) : acc)
NORM_LOOPS(normninf, fabs(x) < acc || x != x ? fabs(x) : acc)

/* One reduction: the input cast to `in_dt`, accumulated by `loops` into `acc_dt` from `init`. */
typedef struct reduction {
    const char *name;
    const mt_loop_fn *loops; /* by in_dt; NULL where the dtype is not supported */
    mt_dtype in_dt, acc_dt;
    mt_scalar init;
    reduce_ctx ctx;
    const mt_loop_fn *combine; /* by acc_dt: folds one partial result into another; NULL: loops */
    const mt_loop_fn *rows; /* by in_dt: rows loops (rows() below); NULL: none */
} reduction;

/* Runs loop over it (operand 0 the accumulator acc, contiguous) on `parts` threads (at most
 * mt_iter_parts' count). Threads that split a reduced dim would add into the same elements, so
 * each extra thread then accumulates into its own copy of acc, filled with init, and `combine`
 * folds the copies in. */
static mt_status
run_reduction(const mt_iter *it, int parts, mt_tensor *acc, mt_scalar init, mt_loop_fn loop,
              mt_loop_fn combine, void *ctx)
{
    if (parts == 1) {
        mt_iter_run(it, loop, ctx);
        return MT_OK;
    }
    if (it->strides[it->ndim - 1][0] != 0) { /* the threads write apart */
#pragma omp parallel for num_threads(parts) schedule(static, 1)
        for (int p = 0; p < parts; p++) {
            mt_iter sub;
            mt_iter_part(it, parts, p, &sub);
            mt_iter_run(&sub, loop, ctx);
        }
        return MT_OK;
    }
    const int64_t n = mt_tensor_numel(acc), bytes = n * (int64_t)mt_dtype_size(acc->dtype);
    int64_t total = (parts - 1) * n;
    mt_tensor *partial = NULL;
    mt_status st = mt_tensor_empty(1, &total, acc->dtype, mt_tensor_device(acc), &partial);
    if (st) {
        return st;
    }
    mt_cpu_fill(partial, init);
    char *base = mt_tensor_data(acc), *copies = mt_tensor_data(partial);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; p++) {
        mt_iter sub;
        mt_iter_part(it, parts, p, &sub);
        if (p > 0) {
            sub.data[0] = copies + (p - 1) * bytes + (sub.data[0] - base);
        }
        mt_iter_run(&sub, loop, ctx);
    }
    const int64_t step = (int64_t)mt_dtype_size(acc->dtype), strides[2] = {step, step};
    for (int p = 1; p < parts; p++) {
        char *data[2] = {base, copies + (p - 1) * bytes};
        combine(data, strides, n, ctx);
    }
    mt_tensor_release(partial);
    return MT_OK;
}

/* *it without its innermost dim, whose length goes to *cols: each call of the loop then takes
 * n whole runs of that dim (the outer dims and the threads stay the iterator's). */
static void
drop_inner(mt_iter *it, int64_t *cols)
{
    *cols = it->shape[0];
    it->ndim--;
    memmove(it->shape, it->shape + 1, (size_t)it->ndim * sizeof(it->shape[0]));
    memmove(it->strides, it->strides + 1, (size_t)it->ndim * sizeof(it->strides[0]));
}

/* A float sum over an outer dim (x.sum(0) of a row-major matrix): the iterator's innermost dim
 * runs along a contiguous row of x and of the float64 sums, the next one over the rows into
 * the same sums (stride 0). Then each call of a column loop below takes n whole rows,
 * strides[1] bytes apart, summed by reduce_columns.c. */
static bool
columns(mt_iter *it, int64_t *cols)
{
    if (it->ndim < 2 || it->strides[0][0] != (int64_t)sizeof(double) ||
        it->strides[0][1] != it->item[1] || it->strides[1][0] != 0) {
        return false;
    }
    drop_inner(it, cols);
    return true;
}

/* A reduction over the last dim (x.sum(-1)): the iterator's innermost dim runs along a
 * contiguous row of x into one result (stride 0), the next one from row to row and result to
 * result. Then each call of a rows loop (RUN_SUM_LOOP's) takes n whole rows, with no call of
 * the loop a row: rows of 64 floats took 2x PyTorch's time so, of 16 1.8x. */
static bool
rows(mt_iter *it, int64_t *cols)
{
    if (it->ndim < 2 || it->strides[0][0] != 0 || it->strides[0][1] != it->item[1] ||
        it->strides[1][0] == 0) {
        return false;
    }
    drop_inner(it, cols);
    return true;
}

#define COLUMN_LOOP(name, T)                                                                     \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)                  \
    {                                                                                            \
        mt_cpu_##name((double *)data[0], (const T *)data[1], n, ((const reduce_ctx *)ctx)->cols, \
                      strides[1] / (int64_t)sizeof(T));                                          \
    }
COLUMN_LOOP(column_sum_f32, float)
COLUMN_LOOP(column_sum_f64, double)

/* *acc = the reduction of self over reduce[] (self's rank, size 1 on reduced dims), of acc_dt:
 * an accumulator, which the caller stores into its stated result; *count = the number of
 * elements reduced into each result. */
static mt_status
accumulate(mt_tensor *self, const bool *reduce, const reduction *r, mt_tensor **acc, int64_t *count)
{
    mt_tensor *in = self, *cast = NULL;
    if (r->loops[r->in_dt] == NULL) {
        return mt_fail_not_implemented(r->name, "_cpu", r->in_dt);
    }
    int64_t keep[MT_MAX_DIMS];
    *count = 1;
    for (int d = 0; d < self->ndim; d++) {
        keep[d] = reduce[d] ? 1 : self->sizes[d];
        *count *= reduce[d] ? self->sizes[d] : 1;
    }
    mt_status st = MT_OK;
    if (in->dtype != r->in_dt) {
        st = mt_cpu_cast(self, r->in_dt, &cast);
        if (st) {
            return st;
        }
        in = cast;
    }
    st = mt_tensor_empty(self->ndim, keep, r->acc_dt, mt_tensor_device(self), acc);
    if (st) {
        goto out_release_cast;
    }
    mt_cpu_fill(*acc, r->init);
    mt_iter it;
    mt_tensor *ops[2] = {*acc, in};
    st = mt_iter_build(&it, self->ndim, self->sizes, ops, 2);
    if (st) {
        mt_tensor_clear(acc);
        goto out_release_cast;
    }
    reduce_ctx ctx = r->ctx;
    mt_loop_fn loop = r->loops[r->in_dt];
    const int parts = mt_iter_parts(&it); /* counted on every element, columns included */
    if (r->loops == sum_loops && (r->in_dt == MT_FLOAT32 || r->in_dt == MT_FLOAT64) &&
        columns(&it, &ctx.cols)) {
        loop = r->in_dt == MT_FLOAT32 ? column_sum_f32 : column_sum_f64;
    } else if (r->rows && r->rows[r->in_dt] && rows(&it, &ctx.cols)) {
        loop = r->rows[r->in_dt];
    }
    st = run_reduction(&it, parts, *acc, r->init, loop,
                       (r->combine ? r->combine : r->loops)[r->acc_dt], &ctx);
    if (st) {
        mt_tensor_clear(acc);
    }
out_release_cast:
    mt_tensor_clear(&cast);
    return st;
}

void
mt_cpu_map_double(mt_tensor *acc, double (*fn)(double, double), double arg)
{
    double *v = (double *)mt_tensor_data(acc);
    for (int64_t i = 0, n = mt_tensor_numel(acc); i < n; i++) {
        v[i] = fn(v[i], arg);
    }
}

/* A plain loop, not mt_cpu_map_double's call a value: inlined, two doubles a divide. The
 * divider stays the cost (about 2 cycles a double at any vector width: 10% of a mean of 65536
 * rows of 16 floats); a multiply by 1 / n would round differently. */
void
mt_cpu_divide_double(mt_tensor *acc, double n)
{
    double *v = (double *)mt_tensor_data(acc);
    for (int64_t i = 0, len = mt_tensor_numel(acc); i < len; i++) {
        v[i] /= n;
    }
}

static double
root(double x, double p)
{
    return p == 2 ? sqrt(x) : p == 1 ? x : pow(x, 1.0 / p);
}

/* Runs r over the plan's dims of self into the result, a->out[0] (finish, if given, maps each
 * accumulated value with r's p; a mean divides each by the count it took). */
static mt_status
run(mt_args *a, const reduction *r, double (*finish)(double, double), bool mean)
{
    mt_tensor *self = a->t[0], *acc = NULL;
    int64_t count;
    mt_status st = accumulate(self, a->plan->reduce.reduce, r, &acc, &count);
    if (st) {
        return st;
    }
    if (mean) {
        mt_cpu_divide_double(acc, (double)count);
    } else if (finish) {
        mt_cpu_map_double(acc, finish, r->ctx.p);
    }
    st = mt_reduce_store(acc, a->out[0], mt_cpu_copy_into);
    mt_tensor_release(acc);
    return st;
}

/* The accumulator of a sum-like reduction of dtype dt. */
static mt_dtype
wide(mt_dtype dt)
{
    return mt_dtype_is_complex(dt) ? MT_COMPLEX128 : mt_dtype_is_float(dt) ? MT_FLOAT64 : MT_INT64;
}

// self (any shape), dims; out = sum of self over dims (kept as size 1 when keepdim)
mt_status
mt_cpu_sum(mt_args *a)
{
    const mt_reduce_plan *p = &a->plan->reduce;
    reduction r = {"sum", sum_loops, p->in_dt,      wide(p->out_dt), mt_scalar_int(0),
                   {0},   NULL,      sum_rows_loops};
    return run(a, &r, NULL, false);
}

// self (any shape), dims; out = sum of the elements of self that are no NaN, over dims. The
// threads' partial sums fold by sum's loops: a NaN among them (inf + -inf) is the sum's.
mt_status
mt_cpu_nansum(mt_args *a)
{
    const mt_reduce_plan *p = &a->plan->reduce;
    const mt_dtype self_dt = a->t[0]->dtype;
    const bool int_terms = mt_dtype_is_float(self_dt) && !mt_dtype_is_float(p->in_dt);
    reduction r = {"nansum",
                   int_terms ? nansum_to_int_loops[p->out_dt] : nansum_loops,
                   int_terms ? self_dt : p->in_dt,
                   int_terms ? MT_INT64 : wide(p->out_dt),
                   mt_scalar_int(0),
                   {0},
                   sum_loops,
                   int_terms ? NULL : nansum_rows_loops};
    return run(a, &r, NULL, false);
}

mt_status
mt_cpu_mean(mt_args *a)
{
    reduction r = {"mean", sum_loops, a->plan->reduce.in_dt, MT_FLOAT64, mt_scalar_int(0),
                   {0},    NULL,      sum_rows_loops};
    return run(a, &r, NULL, true);
}

mt_status
mt_cpu_prod(mt_args *a)
{
    const mt_reduce_plan *p = &a->plan->reduce;
    reduction r = {"prod", prod_loops, p->in_dt, wide(p->out_dt), mt_scalar_int(1), {0}};
    return run(a, &r, NULL, false);
}

/* The identity of max (lowest) or min (highest) in dtype dt. */
static mt_scalar
extremum_init(mt_dtype dt, bool lowest)
{
    switch (dt) {
    case MT_BOOL:
        return mt_scalar_bool(!lowest);
    case MT_INT32:
        return mt_scalar_int(lowest ? INT32_MIN : INT32_MAX);
    case MT_INT64:
        return mt_scalar_int(lowest ? INT64_MIN : INT64_MAX);
    default:
        return mt_scalar_float(lowest ? -INFINITY : INFINITY);
    }
}

/* amax, amin, max and min (a->plan->op tells them apart): the largest (smallest) element over
 * the plan's dims in the input's dtype; max and min reduce every dim to a 0-dim result. */
mt_status
mt_cpu_extremum(mt_args *a)
{
    const mt_op op = a->plan->op;
    const bool is_max = op == MT_OP_amax || op == MT_OP_max;
    const mt_dtype dt = a->t[0]->dtype;
    reduction r = {mt_op_names[op],
                   is_max ? amax_loops : amin_loops,
                   dt,
                   dt,
                   extremum_init(dt, is_max),
                   {0},
                   NULL,
                   is_max ? amax_rows_loops : amin_rows_loops};
    return run(a, &r, NULL, false);
}

// all and any (a->plan->op tells them apart) over the plan's dims, a bool result
mt_status
mt_cpu_logical(mt_args *a)
{
    const bool all = a->plan->op == MT_OP_all;
    reduction r = {all ? "all" : "any",
                   all ? all_loops : any_loops,
                   MT_BOOL,
                   MT_BOOL,
                   mt_scalar_bool(all),
                   {0}};
    return run(a, &r, NULL, false);
}

// self (float), p (default 2), dims; out = (sum |x|^p)^(1/p), max |x| for p = inf
mt_status
mt_cpu_norm(mt_args *a)
{
    mt_dtype out_dt = a->plan->reduce.out_dt;
    double p = a->plan->reduce.p;
    static const mt_loop_fn l0[] = {NULL, NULL, NULL, norm0_f32, norm0_f64};
    static const mt_loop_fn l1[] = {NULL, NULL, NULL, norm1_f32, norm1_f64};
    static const mt_loop_fn l2[] = {NULL, NULL, NULL, norm2_f32, norm2_f64};
    static const mt_loop_fn lp[] = {NULL, NULL, NULL, normp_f32, normp_f64};
    static const mt_loop_fn linf[] = {NULL, NULL, NULL, norminf_f32, norminf_f64};
    static const mt_loop_fn lninf[] = {NULL, NULL, NULL, normninf_f32, normninf_f64};
    static const mt_loop_fn r0[] = {NULL, NULL, NULL, norm0_f32_rows, norm0_f64_rows};
    static const mt_loop_fn r1[] = {NULL, NULL, NULL, norm1_f32_rows, norm1_f64_rows};
    static const mt_loop_fn r2[] = {NULL, NULL, NULL, norm2_f32_rows, norm2_f64_rows};
    static const mt_loop_fn rp[] = {NULL, NULL, NULL, normp_f32_rows, normp_f64_rows};
    bool inf = isinf(p);
    reduction r = {"norm",
                   inf      ? (p > 0 ? linf : lninf)
                   : p == 0 ? l0
                   : p == 1 ? l1
                   : p == 2 ? l2
                            : lp,
                   out_dt,
                   MT_FLOAT64,
                   mt_scalar_float(inf && p < 0 ? INFINITY : 0),
                   {p},
                   inf ? NULL : sum_loops, /* partial sums of |x|^p add up */
                   inf      ? NULL
                   : p == 0 ? r0
                   : p == 1 ? r1
                   : p == 2 ? r2
                            : rp};
    return run(a, &r, inf || p == 0 || p == 1 ? NULL : root, false);
}

/* ---- the accumulators of the two-pass reductions (reduce_two_pass.c) ---- */

mt_status
mt_cpu_mean_acc(mt_tensor *self, const bool *reduce, mt_tensor **acc, int64_t *count)
{
    reduction r = {"var", sum_loops, self->dtype, MT_FLOAT64, mt_scalar_int(0), {0}};
    mt_status st = accumulate(self, reduce, &r, acc, count);
    if (st == MT_OK) {
        mt_cpu_divide_double(*acc, (double)*count);
    }
    return st;
}

mt_status
mt_cpu_amax_acc(mt_tensor *self, const bool *reduce, mt_dtype dt, mt_tensor **acc)
{
    int64_t count;
    reduction r = {"logsumexp", amax_loops,     dt, dt, mt_scalar_float(-INFINITY), {0},
                   NULL,        amax_rows_loops};
    return accumulate(self, reduce, &r, acc, &count);
}

mt_status
mt_cpu_run_sum(const mt_iter *it, mt_tensor *acc, mt_loop_fn loop)
{
    return run_reduction(it, mt_iter_parts(it), acc, mt_scalar_int(0), loop, sum_loops[MT_FLOAT64],
                         NULL);
}
