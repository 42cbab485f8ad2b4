/* What the CPU reduction files share: which dims a reduction covers and the shape of its
 * result, now device-independent in ops/reduce_dims.h (the CUDA reductions use them too),
 * reduce_columns.c's sums of a matrix's columns, and the accumulators reduce.c lends the
 * two-pass reductions (reduce_two_pass.c). */
#ifndef MT_CPU_REDUCE_H
#define MT_CPU_REDUCE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"
#include "cpu/iter.h"
#include "ops/reduce_dims.h"

/* acc[j] += the sum over i < rows of x[i * ld + j], for j < cols: acc (cols) float64 */
void mt_cpu_column_sum_f32(double *restrict acc, const float *x, int64_t rows, int64_t cols,
                           int64_t ld);
void mt_cpu_column_sum_f64(double *restrict acc, const double *x, int64_t rows, int64_t cols,
                           int64_t ld);

/* An accumulator is self's rank, of size 1 on the reduced dims (reduce[]), contiguous. *acc = the
 * float64 mean of self over reduce[], *count the elements each mean took; or self's max in dt. */
mt_status mt_cpu_mean_acc(mt_tensor *self, const bool *reduce, mt_tensor **acc, int64_t *count);
mt_status mt_cpu_amax_acc(mt_tensor *self, const bool *reduce, mt_dtype dt, mt_tensor **acc);
/* Runs loop over it, whose operand 0 is acc, a float64 accumulator of zeros, on the iterator's
 * threads; threads that split a reduced dim sum into copies of acc, added in after. */
mt_status mt_cpu_run_sum(const mt_iter *it, mt_tensor *acc, mt_loop_fn loop);
/* acc's float64 elements v = fn(v, arg), in place. */
void mt_cpu_map_double(mt_tensor *acc, double (*fn)(double, double), double arg);

#endif
