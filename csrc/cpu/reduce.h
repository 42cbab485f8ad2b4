/* What the CPU reduction files share: which dims a reduction covers and the shape of its
 * result, now device-independent in ops/reduce_dims.h (the CUDA reductions use them too),
 * reduce_columns.c's sums of a matrix's columns, reduce_rows.c's reductions of many short rows at
 * once, and the accumulators reduce.c lends the two-pass reductions (reduce_two_pass.c). */
#ifndef MT_CPU_REDUCE_H
#define MT_CPU_REDUCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "cpu/iter.h"
#include "ops/reduce_dims.h"

/* acc[j] += the sum over i < rows of x[i * ld + j], for j < cols: acc (cols) float64 */
void mt_cpu_column_sum_f32(double *restrict acc, const float *x, int64_t rows, int64_t cols,
                           int64_t ld);
void mt_cpu_column_sum_f64(double *restrict acc, const double *x, int64_t rows, int64_t cols,
                           int64_t ld);

/* The max and min of rows shorter than this are reduced many rows at a time (reduce_rows.c): a
 * row's own loop wants 64 floats. (The float sums tile float32 rows under 16 and float64 ones under 32; reduce_dim.c's max and
 * argmax along the last dim tile rows of any length.) */
#define MT_SHORT_ROW 64
#define MT_TILE_ROWS 16 /* rows a tile holds, a lane each: a 512-bit vector of floats */
#define MT_TILE_COLS 64 /* columns a tile holds: 4 KiB of floats, 8 KiB of doubles, on the stack */
/* The float sums and nansums of rows of a vector (16 floats, 8 doubles) to MT_ROW_VECTORS_MAX - 1
 * elements add each row's vectors into two and fold a vector's lanes of rows together
 * (reduce_rows.c), shorter rows through a tile; from MAX on, a row's own cascade (a lane would
 * hold more than 16 terms, more than the cascade's level 0 adds) */
#define MT_ROW_VECTORS_MAX 512

/* tile (MT_TILE_COLS, MT_TILE_ROWS) = columns j0 .. j0 + w of the h <= MT_TILE_ROWS rows of x
 * (row i at x + i * ld elements of es bytes) transposed: tile[j][i] = x[i][j0 + j]. The lanes
 * past h are left as they were. */
void mt_cpu_tile_rows(char *tile, const char *x, int64_t ld, int64_t h, int64_t j0, int64_t w,
                      size_t es);
/* x (rows, cols) of dtype dt, row i at x + i * ld elements. acc[i * step] += the float64 sum of
 * row i (dt float32 or float64; its NaNs skipped when skip_nan); acc[i * step] = the max (or min) of itself and row i's
 * elements, of dt (int32, int64, float32 or float64), a NaN winning. */
void mt_cpu_row_sums(mt_dtype dt, bool skip_nan, double *acc, int64_t step, const void *x,
                     int64_t rows, int64_t cols, int64_t ld);
void mt_cpu_row_extrema(mt_dtype dt, bool max, void *acc, int64_t step, const void *x, int64_t rows,
                        int64_t cols, int64_t ld);

/* An accumulator is self's rank, of size 1 on the reduced dims (reduce[]), contiguous. *acc = the
 * float64 mean of self over reduce[], *count the elements each mean took; or self's max in dt. */
mt_status mt_cpu_mean_acc(mt_tensor *self, const bool *reduce, mt_tensor **acc, int64_t *count);
mt_status mt_cpu_amax_acc(mt_tensor *self, const bool *reduce, mt_dtype dt, mt_tensor **acc);
/* Runs loop over it, whose operand 0 is acc, a float64 accumulator of zeros, on the iterator's
 * threads; threads that split a reduced dim sum into copies of acc, added in after. */
mt_status mt_cpu_run_sum(const mt_iter *it, mt_tensor *acc, mt_loop_fn loop);
/* acc's float64 elements v = fn(v, arg), in place; v = v / n. */
void mt_cpu_map_double(mt_tensor *acc, double (*fn)(double, double), double arg);
void mt_cpu_divide_double(mt_tensor *acc, double n);

#endif
