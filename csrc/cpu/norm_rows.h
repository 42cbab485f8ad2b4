/* The per-channel loops over the rows (N*H*W, C) of a channels-last batch_norm input, which its
 * forward (nn.c) and backward (nn_backward.c) both take: written once, in nn_backward.c. */
#ifndef MT_CPU_NORM_ROWS_H
#define MT_CPU_NORM_ROWS_H

#include <stdbool.h>
#include <stdint.h>

/* Rows summed as one block: the sums are sums of blocks in a fixed order, the same whatever
 * the number of threads. */
#define MT_BN_BLOCK_ROWS 256

/* The blocks of M rows. */
static inline int64_t
mt_bn_blocks(int64_t M)
{
    return (M + MT_BN_BLOCK_ROWS - 1) / MT_BN_BLOCK_ROWS;
}

/* x and g (M, C) rows of float (f32) or double, g NULL for none (its sums are then 0), K (C)
 * each channel's shift; total (4, C): the sums over all rows of d = x - K, d^2, g and g * d,
 * channel by channel, in double. sums: scratch of mt_bn_blocks(M) * 4 * C doubles. */
void mt_cpu_batch_norm_cl_sums(const void *g, const void *x, bool f32, int64_t M, int64_t C,
                               const double *K, double *sums, double *total);

/* g (or NULL), x, y (M, C) rows of float (f32) or double: y = a * g + b * (x - m) + e channel
 * by channel (the g term only with g), with coef (4, C) each channel's a, b, m and e in double,
 * rounded to the rows' dtype in t (4 * C doubles of scratch) first. */
void mt_cpu_batch_norm_cl_apply(const void *g, const void *x, void *y, bool f32, int64_t M,
                                int64_t C, const double *coef, double *t);

#endif
