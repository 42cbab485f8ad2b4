/* Sums, maxima and minima of many short rows at once on the CPU, for rows too short to fill a
 * vector loop each (x.sum(-1) or x.amax(-1) of an (N, 16) x): reduce.c's rows loops hand them
 * here. Only computes: reduce.c picks the case and owns the threads and the accumulator.
 *
 * A block of MT_TILE_ROWS rows is transposed into a tile (mt_cpu_tile_rows, reduce.h), so that
 * column j of the tile holds element j of each row: a lane per row, and each step of the simple
 * loop over j reduces the block's rows in one vector operation. Row by row, a row of 16 floats
 * was a vector and a fold of its lanes for a sum (1.3x PyTorch's time), and a scalar loop for a
 * max (2.5x). Sums and nansums of rows of a vector (16 floats, 8 doubles) to 511 need no tile:
 * each row's vectors add into one, and a vector's lanes of rows fold their vectors together
 * (ROW_SUMS_BY_VECTORS; a row's own cascade took 1.4-1.7x PyTorch's time on float32 rows of
 * 24-100, these 0.6-1.0x; float32 nansum's cascade 2.8-3.9x on rows of 50-100). */
#include <string.h>

#include "cpu/copy.h"
#include "cpu/loops.h"
#include "cpu/reduce.h"

void
mt_cpu_tile_rows(char *tile, const char *x, int64_t ld, int64_t h, int64_t j0, int64_t w, size_t es)
{
    /* copy.c's dst[i dr + j dc] = src[i sr + j sc], i over the columns, j over the rows: its
     * transposing case (sr = dc = 1), 16 x 16 blocks of 4-byte elements in registers */
    mt_cpu_copy_tiles(x + j0 * (int64_t)es, 1, ld, tile, MT_TILE_ROWS, 1, w, h, es);
}

/* A term of a sum: the element, or for nansum the element with its NaNs as zeros (x == x only
 * when x is no NaN; a select, which vectorises). */
#define TERM_SUM(x) (x)
#define TERM_NANSUM(x) ((x) == (x) ? (x) : 0)

// x (rows, cols), row i at x + i * ld; acc[i * step] += the float64 sum of TERM(row i). The
// simple loop is for (i) for (j) acc[i] += TERM(x[i][j]); here MT_TILE_ROWS rows at a time, a
// tile of up to MT_TILE_COLS of their columns at a time, each column of the tile added into the
// rows' float64 lanes (as precise as the cascade of a short run: its float lanes hold a few terms
// each).
#define ROW_SUMS(name, T, TERM)                                                           \
    MT_SIMD_CLONES static void name(double *acc, int64_t step, const T *x, int64_t rows,  \
                                    int64_t cols, int64_t ld)                             \
    {                                                                                     \
        T tile[MT_TILE_COLS][MT_TILE_ROWS];                                               \
        for (int64_t i0 = 0; i0 < rows; i0 += MT_TILE_ROWS) {                             \
            const int64_t h = rows - i0 < MT_TILE_ROWS ? rows - i0 : MT_TILE_ROWS;        \
            if (h < MT_TILE_ROWS) { /* the lanes past the last row add zeros */           \
                memset(tile, 0, sizeof(tile));                                            \
            }                                                                             \
            double s[MT_TILE_ROWS] = {0};                                                 \
            for (int64_t j0 = 0; j0 < cols; j0 += MT_TILE_COLS) {                         \
                const int64_t w = cols - j0 < MT_TILE_COLS ? cols - j0 : MT_TILE_COLS;    \
                mt_cpu_tile_rows((char *)tile, (const char *)(x + i0 * ld), ld, h, j0, w, \
                                 sizeof(T));                                              \
                for (int64_t j = 0; j < w; j++) {                                         \
                    for (int i = 0; i < MT_TILE_ROWS; i++) {                              \
                        s[i] += (double)TERM(tile[j][i]);                                 \
                    }                                                                     \
                }                                                                         \
            }                                                                             \
            for (int64_t i = 0; i < h; i++) {                                             \
                acc[(i0 + i) * step] += s[i];                                             \
            }                                                                             \
        }                                                                                 \
    }
ROW_SUMS(row_sums_f32, float, TERM_SUM)
ROW_SUMS(row_sums_f64, double, TERM_SUM)
ROW_SUMS(row_nansums_f32, float, TERM_NANSUM)
ROW_SUMS(row_nansums_f64, double, TERM_NANSUM)

/* Rows of a vector's elements or more are no tile's work: each row's vectors add into one
 * vector of partial sums, and a block of a vector's lanes of rows (16 floats, 8 doubles) is then
 * folded into one vector of their sums (fold_halves), where a row's own fold of its lanes took
 * four steps a row. */
typedef float f32x16 __attribute__((vector_size(64)));
typedef int32_t i32x16 __attribute__((vector_size(64)));
typedef double f64x8 __attribute__((vector_size(64)));
typedef int64_t i64x8 __attribute__((vector_size(64)));

/* out[l] = a[l] + a[l + h] where bit h of l is clear, b[l - h] + b[l] where it is set: the
 * halves of a and b in spans of h lanes, added pairwise (for h = 8: the first 8 lanes a's two
 * halves added, the last 8 b's); Ph and Qh pick the two addends. Four such steps (h = 8, 4, 2,
 * 1) fold 16 vectors of floats into one, three (D4, D2, D1) 8 vectors of doubles. */
#define FOLD(a, b, P, Q) (__builtin_shufflevector(a, b, P) + __builtin_shufflevector(a, b, Q))
#define P8 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define Q8 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define P4 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define Q4 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define P2 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define Q2 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define P1 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define Q1 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31
#define DP4 0, 1, 2, 3, 8, 9, 10, 11
#define DQ4 4, 5, 6, 7, 12, 13, 14, 15
#define DP2 0, 1, 8, 9, 4, 5, 12, 13
#define DQ2 2, 3, 10, 11, 6, 7, 14, 15
#define DP1 0, 8, 2, 10, 4, 12, 6, 14
#define DQ1 1, 9, 3, 11, 5, 13, 7, 15

/* v[16] (a vector of partial sums a row) -> *sums, the 16 rows' sums. sums[l] is the sum of
 * the row whose number is l's 4 bits reversed (the first step puts rows 0 and 1 in lanes 0-7 and
 * 8-15, the next rows 0 and 2 in lanes 0-3 and 4-7, ...): BIT_REVERSED_16[l]. */
static inline MT_ALWAYS_INLINE void
fold_halves_f32(f32x16 *sums, const f32x16 *v)
{
    f32x16 s8[8], s4[4], s2[2];
    for (int k = 0; k < 8; k++) {
        s8[k] = FOLD(v[2 * k], v[2 * k + 1], P8, Q8);
    }
    for (int k = 0; k < 4; k++) {
        s4[k] = FOLD(s8[2 * k], s8[2 * k + 1], P4, Q4);
    }
    for (int k = 0; k < 2; k++) {
        s2[k] = FOLD(s4[2 * k], s4[2 * k + 1], P2, Q2);
    }
    *sums = FOLD(s2[0], s2[1], P1, Q1);
}
static const int BIT_REVERSED_16[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};

/* The same for 8 rows of doubles: v[8] -> *sums, the 8 rows' sums, row BIT_REVERSED_8[l] in lane l. */
static inline MT_ALWAYS_INLINE void
fold_halves_f64(f64x8 *sums, const f64x8 *v)
{
    f64x8 s4[4], s2[2];
    for (int k = 0; k < 4; k++) {
        s4[k] = FOLD(v[2 * k], v[2 * k + 1], DP4, DQ4);
    }
    for (int k = 0; k < 2; k++) {
        s2[k] = FOLD(s4[2 * k], s4[2 * k + 1], DP2, DQ2);
    }
    *sums = FOLD(s2[0], s2[1], DP1, DQ1);
}
static const int BIT_REVERSED_8[8] = {0, 4, 2, 6, 1, 5, 3, 7};

// x (rows, cols), cols >= L (a vector's lanes: 16 floats, 8 doubles), row i at x + i * ld;
// acc[i * step] += the float64 sum of TERM(row i). The simple loop is for (i) for (j) acc[i] +=
// TERM(x[i][j]); here row i's L-element vectors add into two vectors, alternately (two chains of
// adds that overlap; its last vector, x[i][cols - L ..], with the lanes already added masked
// off), so that a lane holds cols / 2L terms: as precise as the cascade, whose lanes hold 16
// terms before a level adds them up (hence MT_ROW_VECTORS_MAX). Then L rows' vectors fold into
// their L sums. float32 (20000, 100): 0.13 ms, 60 GB/s, in cache.
#define ROW_SUMS_BY_VECTORS(name, T, V, IV, L, TERM)                                            \
    MT_SIMD_CLONES static void name(double *acc, int64_t step, const T *x, int64_t rows,        \
                                    int64_t cols, int64_t ld)                                   \
    {                                                                                           \
        IV index;                                                                               \
        for (int l = 0; l < L; l++) {                                                           \
            index[l] = l;                                                                       \
        }                                                                                       \
        const int64_t whole = cols / L * L;                                                     \
        const IV keep = index >= (__typeof__(index[0]))(L - (cols - whole)); /* all if none */  \
        for (int64_t i0 = 0; i0 < rows; i0 += L) {                                              \
            const int64_t h = rows - i0 < L ? rows - i0 : L;                                    \
            V v[L];                                                                             \
            if (h < L) { /* the rows past the last one fold zeros */                            \
                memset(v, 0, sizeof(v));                                                        \
            }                                                                                   \
            for (int64_t i = 0; i < h; i++) {                                                   \
                const T *row = x + (i0 + i) * ld;                                               \
                V s0 = {0}, s1 = {0}, t0, t1;                                                   \
                int64_t j = 0;                                                                  \
                for (; j + 2 * L <= whole; j += 2 * L) { /* two chains of adds, side by side */ \
                    memcpy(&t0, row + j, sizeof(t0));                                           \
                    memcpy(&t1, row + j + L, sizeof(t1));                                       \
                    s0 += TERM(t0);                                                             \
                    s1 += TERM(t1);                                                             \
                }                                                                               \
                if (j < whole) {                                                                \
                    memcpy(&t0, row + j, sizeof(t0));                                           \
                    s0 += TERM(t0);                                                             \
                }                                                                               \
                if (whole < cols) {                                                             \
                    memcpy(&t1, row + cols - L, sizeof(t1));                                    \
                    /* masked before TERM: the other order made GCC load lane by lane */        \
                    t1 = (V)((IV)t1 & keep);                                                    \
                    s1 += TERM(t1);                                                             \
                }                                                                               \
                v[i] = s0 + s1;                                                                 \
            }                                                                                   \
            V all;                                                                              \
            fold_halves_##T(&all, v);                                                           \
            for (int l = 0; l < L; l++) {                                                       \
                if (BIT_REVERSED_##L[l] < h) {                                                  \
                    acc[(i0 + BIT_REVERSED_##L[l]) * step] += (double)all[l];                   \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }
#define fold_halves_float fold_halves_f32
#define fold_halves_double fold_halves_f64
/* a vector's NaNs as zeros: x == x is all ones in a lane that is no NaN */
#define VEC_NANSUM_f32(t) ((f32x16)((i32x16)(t) & ((t) == (t))))
#define VEC_NANSUM_f64(t) ((f64x8)((i64x8)(t) & ((t) == (t))))
ROW_SUMS_BY_VECTORS(row_sums_by_vectors_f32, float, f32x16, i32x16, 16, TERM_SUM)
ROW_SUMS_BY_VECTORS(row_sums_by_vectors_f64, double, f64x8, i64x8, 8, TERM_SUM)
ROW_SUMS_BY_VECTORS(row_nansums_by_vectors_f32, float, f32x16, i32x16, 16, VEC_NANSUM_f32)
ROW_SUMS_BY_VECTORS(row_nansums_by_vectors_f64, double, f64x8, i64x8, 8, VEC_NANSUM_f64)

/* x replaces best when BETTER, or when x is NaN: a NaN wins and then stays (BETTER(x, NaN) is
 * false), as reduce.c's EXTREMUM_KEEP; integers have no NaN (x != x is false). A bitwise or, with
 * no branch, so that the compiler makes a vector select of it (|| left a branch a lane). */
#define KEEP(BETTER, x, best) ((BETTER((x), (best)) | ((x) != (x))) ? (x) : (best))
#define GREATER(x, y) ((x) > (y))
#define LESS(x, y) ((x) < (y))

// x (rows, cols) as above; acc[i * step] = the extremum (BETTER: greater for max) of itself and
// row i's elements. The simple loop is for (i) for (j) acc[i] = KEEP(x[i][j], acc[i]); here by
// tiles as the sums are, each column of the tile kept into the rows' lanes.
#define ROW_EXTREMA(name, T, BETTER)                                                              \
    MT_SIMD_CLONES static void name(T *acc, int64_t step, const T *x, int64_t rows, int64_t cols, \
                                    int64_t ld)                                                   \
    {                                                                                             \
        T tile[MT_TILE_COLS][MT_TILE_ROWS];                                                       \
        for (int64_t i0 = 0; i0 < rows; i0 += MT_TILE_ROWS) {                                     \
            const int64_t h = rows - i0 < MT_TILE_ROWS ? rows - i0 : MT_TILE_ROWS;                \
            if (h < MT_TILE_ROWS) { /* the lanes past the last row compare zeros, unread */       \
                memset(tile, 0, sizeof(tile));                                                    \
            }                                                                                     \
            T best[MT_TILE_ROWS] = {0};                                                           \
            for (int64_t i = 0; i < h; i++) {                                                     \
                best[i] = acc[(i0 + i) * step];                                                   \
            }                                                                                     \
            for (int64_t j0 = 0; j0 < cols; j0 += MT_TILE_COLS) {                                 \
                const int64_t w = cols - j0 < MT_TILE_COLS ? cols - j0 : MT_TILE_COLS;            \
                mt_cpu_tile_rows((char *)tile, (const char *)(x + i0 * ld), ld, h, j0, w,         \
                                 sizeof(T));                                                      \
                for (int64_t j = 0; j < w; j++) {                                                 \
                    _Pragma("omp simd") for (int i = 0; i < MT_TILE_ROWS; i++)                    \
                    {                                                                             \
                        best[i] = KEEP(BETTER, tile[j][i], best[i]);                              \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
            for (int64_t i = 0; i < h; i++) {                                                     \
                acc[(i0 + i) * step] = best[i];                                                   \
            }                                                                                     \
        }                                                                                         \
    }
#define ROW_EXTREMA_OF(S, T)             \
    ROW_EXTREMA(row_max_##S, T, GREATER) \
    ROW_EXTREMA(row_min_##S, T, LESS)
ROW_EXTREMA_OF(i32, int32_t)
ROW_EXTREMA_OF(i64, int64_t)
ROW_EXTREMA_OF(f32, float)
ROW_EXTREMA_OF(f64, double)

void
mt_cpu_row_sums(mt_dtype dt, bool skip_nan, double *acc, int64_t step, const void *x, int64_t rows,
                int64_t cols, int64_t ld)
{
    if (dt == MT_FLOAT32 && cols >= 16) { /* a whole vector */
        (skip_nan ? row_nansums_by_vectors_f32 : row_sums_by_vectors_f32)(acc, step, x, rows, cols,
                                                                          ld);
    } else if (dt == MT_FLOAT32) {
        (skip_nan ? row_nansums_f32 : row_sums_f32)(acc, step, x, rows, cols, ld);
    } else if (cols >= 8) {
        (skip_nan ? row_nansums_by_vectors_f64 : row_sums_by_vectors_f64)(acc, step, x, rows, cols,
                                                                          ld);
    } else {
        (skip_nan ? row_nansums_f64 : row_sums_f64)(acc, step, x, rows, cols, ld);
    }
}

void
mt_cpu_row_extrema(mt_dtype dt, bool max, void *acc, int64_t step, const void *x, int64_t rows,
                   int64_t cols, int64_t ld)
{
    switch (dt) {
    case MT_INT32:
        (max ? row_max_i32 : row_min_i32)(acc, step, x, rows, cols, ld);
        break;
    case MT_INT64:
        (max ? row_max_i64 : row_min_i64)(acc, step, x, rows, cols, ld);
        break;
    case MT_FLOAT32:
        (max ? row_max_f32 : row_min_f32)(acc, step, x, rows, cols, ld);
        break;
    default:
        (max ? row_max_f64 : row_min_f64)(acc, step, x, rows, cols, ld);
        break;
    }
}
