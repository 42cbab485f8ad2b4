/* The sum of a matrix's columns for the CPU reductions (reduce.c's sum and mean over an outer
 * dim: x.sum(0) of a row-major matrix): the rows added into a row of sums, as NumPy adds them,
 * in the input's own float type a block of rows at a time. Only computes: reduce.c picks the
 * case and owns the threads and the accumulator. */
#include <string.h>

#include "cpu/loops.h"
#include "cpu/reduce.h"

/* Rows a block sums in T before its sums meet the float64 ones: four rows add pairwise, then
 * into the block's partial sums, so a partial sum is a chain of 16 such adds (PyTorch's cascade
 * adds 16 terms a level too), and the float64 sums take one add per 64 rows. Summed in float64
 * row by row instead (a conversion, and twice the bytes through L1, for each element), a (512,
 * 512) float32 x.sum(0) took 1.3x PyTorch's time and a (2048, 2048) one twice NumPy's. */
#define COLUMN_BLOCK_ROWS 64
/* Columns a pass over the rows takes: its partial sums (4 KiB of float32) and float64 sums
 * (8 KiB) stay in L1 while the rows stream past. */
#define COLUMN_TILE 1024

// x (rows, cols), row i at x + i * ld; acc (cols) float64; acc[j] += the sum of x[i][j] over i.
// The simple loop is for (i) for (j) acc[j] += x[i][j]; here, for each tile of columns and each
// block of rows, the rows four at a time into p (T), the block's partial sums, then p into acc.
#define COLUMN_SUM(name, T)                                                                      \
    MT_SIMD_CLONES void name(double *restrict acc, const T *x, int64_t rows, int64_t cols,       \
                             int64_t ld)                                                         \
    {                                                                                            \
        T p[COLUMN_TILE];                                                                        \
        for (int64_t j0 = 0; j0 < cols; j0 += COLUMN_TILE) {                                     \
            const int64_t w = cols - j0 < COLUMN_TILE ? cols - j0 : COLUMN_TILE;                 \
            for (int64_t i0 = 0; i0 < rows; i0 += COLUMN_BLOCK_ROWS) {                           \
                const int64_t h = rows - i0 < COLUMN_BLOCK_ROWS ? rows - i0 : COLUMN_BLOCK_ROWS; \
                const T *r = x + i0 * ld + j0;                                                   \
                memset(p, 0, (size_t)w * sizeof(T));                                             \
                int64_t i = 0;                                                                   \
                for (; i + 4 <= h; i += 4, r += 4 * ld) {                                        \
                    const T *r1 = r + ld, *r2 = r1 + ld, *r3 = r2 + ld;                          \
                    for (int64_t j = 0; j < w; j++) {                                            \
                        p[j] += (r[j] + r1[j]) + (r2[j] + r3[j]);                                \
                    }                                                                            \
                }                                                                                \
                for (; i < h; i++, r += ld) {                                                    \
                    for (int64_t j = 0; j < w; j++) {                                            \
                        p[j] += r[j];                                                            \
                    }                                                                            \
                }                                                                                \
                for (int64_t j = 0; j < w; j++) {                                                \
                    acc[j0 + j] += (double)p[j];                                                 \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }
COLUMN_SUM(mt_cpu_column_sum_f32, float)
COLUMN_SUM(mt_cpu_column_sum_f64, double)
