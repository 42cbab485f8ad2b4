/* What the CPU reduction files share: which dims a reduction covers and the shape of its
 * result, now device-independent in ops/reduce_dims.h (the CUDA reductions use them too), and
 * reduce_columns.c's sums of a matrix's columns. */
#ifndef MT_CPU_REDUCE_H
#define MT_CPU_REDUCE_H

#include <stdint.h>

#include "ops/reduce_dims.h"

/* acc[j] += the sum over i < rows of x[i * ld + j], for j < cols: acc (cols) float64 */
void mt_cpu_column_sum_f32(double *restrict acc, const float *x, int64_t rows, int64_t cols,
                           int64_t ld);
void mt_cpu_column_sum_f64(double *restrict acc, const double *x, int64_t rows, int64_t cols,
                           int64_t ld);

#endif
