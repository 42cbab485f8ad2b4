/* The random ops' device-independent parts (ops/distributions.c): the front ends of the
 * distributions added to the fills, multinomial's driver, and the composites bernoulli and
 * normal. */
#ifndef MT_OPS_DISTRIBUTIONS_H
#define MT_OPS_DISTRIBUTIONS_H

#include "dispatch/dispatch.h"

/* What a device gives multinomial: its name for messages, its draws with replacement of
 * n_sample indices per row of self ((n) or (rows, n), checked probabilities on the device)
 * into result, a contiguous int64 tensor of the result's shape, and optionally the values the
 * checks read in one pass of its own: v[0] the lowest probability (NaN where one is), v[1] the
 * highest (0 at least), v[2] the smallest row sum (NULL: the driver computes them with ops). */
typedef struct mt_multinomial_device {
    const char *name;
    mt_status (*draws)(mt_tensor *self, int64_t n_sample, mt_generator *g, mt_tensor *result);
    void (*summary)(const mt_tensor *self, double v[3]);
} mt_multinomial_device;

/* multinomial on dev, as PyTorch's: without replacement (or for one sample) the largest
 * p / E, E ~ Exp(1) drawn by exponential_ (argmax, topk), else dev's draws; the value checks of
 * each path. */
mt_status mt_multinomial_with(mt_args *a, const mt_multinomial_device *dev);

#endif
