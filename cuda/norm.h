/* What ops_norm.c shares with its kernels (norm.cu): the kernel getters of batch_norm and the
 * backward ops of layer_norm, batch_norm and nll_loss; and ops_nn.c's check of nll targets.
 * Every kernel takes contiguous tensors, a float dtype dt (float32 or float64) for the tensor
 * data, and double for the statistics and per-feature parameters (weight, bias, running stats;
 * NULL when absent), as the CPU kernels (csrc/cpu/nn.c, nn_backward.c) accumulate in double. */
#ifndef MT_CUDA_NORM_H
#define MT_CUDA_NORM_H

#include <stdint.h>

#include "cuda/kernels_index_fill_nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-channel kernels: one block of MT_CUDA_ROW_THREADS per channel (a grid-stride loop over
 * the channels), x (outer, C, inner).
 * (const char *x, int64_t outer, int64_t C, int64_t inner, double *mean, double *var): the
 * mean and biased variance of each channel, two passes */
const void *mt_cuda_bn_stats_kernel(mt_dtype dt);
/* (const char *g, const char *x, char *gx, int64_t outer, int64_t C, int64_t inner, double eps,
 * const double *w, const double *mean, const double *var, char *gw, char *gb): g, x, gx
 * (outer, C, inner), gw, gb (C) of dtype dt; mean and var NULL in training (the batch's,
 * recomputed), else the running ones */
const void *mt_cuda_bn_backward_kernel(mt_dtype dt);

/* Elementwise kernels (any grid of MT_CUDA_THREADS, a grid-stride loop).
 * (const char *x, char *y, int64_t n, int64_t C, int64_t inner, const double *mean,
 * const double *var, double eps, const double *w, const double *b): x, y (n elements,
 * (outer, C, inner)); y = (x - mean[c]) * w[c] / sqrt(var[c] + eps) + b[c] */
const void *mt_cuda_bn_apply_kernel(mt_dtype dt);
/* (double *running, const double *stat, int64_t C, double momentum, double correction):
 * running = (1 - momentum) * running + momentum * stat * correction */
const void *mt_cuda_bn_update_kernel(void);

/* (const char *g, const char *x, char *gx, int64_t rows, int64_t n, double eps, const double *w,
 * double *stats): g, x, gx (rows, n), w (n); one block per row: gx, and stats (rows, 2) its mean
 * and rstd for the column kernel */
const void *mt_cuda_ln_backward_rows_kernel(mt_dtype dt);
/* (const char *g, const char *x, int64_t rows, int64_t n, const double *stats, char *gw,
 * char *gb): gw, gb (n) of dtype dt, a thread per column summing the rows in order */
const void *mt_cuda_ln_backward_cols_kernel(mt_dtype dt);

/* (const int64_t *t, const double *w, int64_t n, int64_t C, int64_t ignore, double *total,
 * mt_cuda_assert_record *rec): one block; *total = the summed weight of the kept targets
 * t (n); a t[e] outside [0, C) and not ignore fails a device-side assertion */
const void *mt_cuda_nll_back_total_kernel(void);
/* (const double *g, const int64_t *t, const double *w, char *gx, int64_t N, int64_t C,
 * int64_t K, int64_t ignore, int none, const double *total): gx (N, C, K) zeroed beforehand;
 * gx[n, t, k] = -w[t] * (none ? g[n, k] : g[0] / *total (total NULL: 1)), a target outside
 * [0, C) skipped */
const void *mt_cuda_nll_back_kernel(mt_dtype dt);


#ifdef __cplusplus
}
#endif

#endif
