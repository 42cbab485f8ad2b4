/* What the factories (arange, linspace, logspace, eye, empty, randperm) and cat share on every
 * device besides their front ends (factory_args.c, shape_checks.c; their plans are
 * ops/plans.h's mt_range_spec and mt_shape_plan). */
#ifndef MT_OPS_FACTORY_ARGS_H
#define MT_OPS_FACTORY_ARGS_H

#include "dispatch/dispatch.h"
#include "ops/plans.h"

/* The device a factory makes its result on: its device argument, else the CPU. */
static inline mt_device
mt_factory_device(const mt_args *a)
{
    return a->has_device ? a->device : MT_DEVICE_CPU;
}

/* A factory's result (stated by its front end, allocated by the dispatcher) with its
 * requires_grad set. Inline: each device's kernels compile their own. */
static inline mt_status
mt_factory_finish(mt_args *a)
{
    return mt_tensor_set_requires_grad(a->out[0], a->b[0]);
}

/* cat's kernel for any device: each input copied into its slot of the result (the front end's
 * plan) by copy_into (dst = src cast to dst's dtype, on one device). */
mt_status mt_cat_with(mt_args *a, mt_status (*copy_into)(mt_tensor *dst, mt_tensor *src));

#endif
