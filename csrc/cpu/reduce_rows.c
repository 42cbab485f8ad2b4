/* Sums, maxima and minima of many short rows at once on the CPU, for rows too short to fill a
 * vector loop each (x.sum(-1) or x.amax(-1) of an (N, 16) x): reduce.c's rows loops hand them
 * here. Only computes: reduce.c picks the case and owns the threads and the accumulator.
 *
 * A block of MT_TILE_ROWS rows is transposed into a tile (mt_cpu_tile_rows, reduce.h), so that
 * column j of the tile holds element j of each row: a lane per row, and each step of the simple
 * loop over j reduces the block's rows in one vector operation. Row by row, a row of 16 floats
 * was a vector and a fold of its lanes for a sum (1.3x PyTorch's time), and a scalar loop for a
 * max (2.5x). */
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

// x (rows, cols), row i at x + i * ld; acc[i * step] += the float64 sum of row i. The simple
// loop is for (i) for (j) acc[i] += x[i][j]; here MT_TILE_ROWS rows at a time, a tile of up to
// MT_TILE_COLS of their columns at a time, each column of the tile added into the rows' float64
// lanes (as precise as the cascade of a short run: its float lanes hold a few terms each).
#define ROW_SUMS(S, T)                                                                           \
    MT_SIMD_CLONES static void row_sums_##S(double *acc, int64_t step, const T *x, int64_t rows, \
                                            int64_t cols, int64_t ld)                            \
    {                                                                                            \
        T tile[MT_TILE_COLS][MT_TILE_ROWS];                                                      \
        for (int64_t i0 = 0; i0 < rows; i0 += MT_TILE_ROWS) {                                    \
            const int64_t h = rows - i0 < MT_TILE_ROWS ? rows - i0 : MT_TILE_ROWS;               \
            if (h < MT_TILE_ROWS) { /* the lanes past the last row add zeros */                  \
                memset(tile, 0, sizeof(tile));                                                   \
            }                                                                                    \
            double s[MT_TILE_ROWS] = {0};                                                        \
            for (int64_t j0 = 0; j0 < cols; j0 += MT_TILE_COLS) {                                \
                const int64_t w = cols - j0 < MT_TILE_COLS ? cols - j0 : MT_TILE_COLS;           \
                mt_cpu_tile_rows((char *)tile, (const char *)(x + i0 * ld), ld, h, j0, w,        \
                                 sizeof(T));                                                     \
                for (int64_t j = 0; j < w; j++) {                                                \
                    for (int i = 0; i < MT_TILE_ROWS; i++) {                                     \
                        s[i] += (double)tile[j][i];                                              \
                    }                                                                            \
                }                                                                                \
            }                                                                                    \
            for (int64_t i = 0; i < h; i++) {                                                    \
                acc[(i0 + i) * step] += s[i];                                                    \
            }                                                                                    \
        }                                                                                        \
    }
ROW_SUMS(f32, float)
ROW_SUMS(f64, double)

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
mt_cpu_row_sums(mt_dtype dt, double *acc, int64_t step, const void *x, int64_t rows, int64_t cols,
                int64_t ld)
{
    if (dt == MT_FLOAT32) {
        row_sums_f32(acc, step, x, rows, cols, ld);
    } else {
        row_sums_f64(acc, step, x, rows, cols, ld);
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
