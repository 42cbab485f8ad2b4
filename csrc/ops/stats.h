/* The statistics kernels' shared checks and rules (ops/stats_checks.c): what the CPU kernels
 * (cpu/stats.c) and the CUDA ones (cuda/ops_stats.c) both need, written once. */
#ifndef MT_OPS_STATS_H
#define MT_OPS_STATS_H

#include "dispatch/dispatch.h"

/* histc(self, bins, min, max): the range binned, [*lo, *hi]: min and max, or self's extrema
 * when they are equal (widened by 1 each way if those are equal too); PyTorch's errors for a
 * range not finite or empty. */
mt_status mt_histc_range(mt_tensor *self, mt_scalar min, mt_scalar max, double *lo, double *hi);

/* histogram(self, bins, weight): a float self, 1-D bins (at least 2 edges) and weight (or
 * NULL, else self's numel) of self's dtype. */
mt_status mt_histogram_check(const mt_tensor *self, const mt_tensor *bins, const mt_tensor *weight);

/* bincount(self, weights, minlength): the result's dtype (int64 counts; float32 for float32
 * weights, else float64 sums) and length, max(self) + 1 or minlength; PyTorch's error for a
 * negative value. */
mt_dtype mt_bincount_dtype(const mt_tensor *weights);
mt_status mt_bincount_length(mt_tensor *self, int64_t minlength, int64_t *length);

/* What a device gives histc and bincount, whose range and length _C finds first (with ops on
 * the device): histc's counts of self in equal bins of [lo, hi] into out (the result its front
 * end stated: one per bin, of self's dtype); bincount's counts (or summed weights, NULL for
 * none) of self's values into out (the stated result, of its length and dtype). */
typedef struct mt_stats_device {
    mt_status (*histc)(mt_tensor *self, double lo, double hi, mt_tensor *out);
    mt_status (*bincount)(mt_tensor *self, mt_tensor *weights, mt_tensor *out);
} mt_stats_device;

#endif
