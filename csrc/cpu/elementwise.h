/* The driver CPU kernels with an elementwise loop share (the elementwise family itself runs
 * through ops/elementwise.c's front end): core/elementwise.h's plan (broadcasting, in-place
 * checks, casts, the output), then one iterator run of a loop. */
#ifndef MT_CPU_ELEMENTWISE_H
#define MT_CPU_ELEMENTWISE_H

#include "core/elementwise.h"
#include "cpu/iter.h"
#include "dispatch/dispatch.h"

_Static_assert(MT_EW_MAX_OPS <= MT_ITER_MAX_OPS, "an elementwise call fits one iterator");

/* Runs loop over ins (broadcast together, cast to `compute`) into a new tensor of dtype
 * `compute` in *out, or, when inplace, into ins[0] (which must keep its shape and accept the
 * dtype); *out then holds a new reference to ins[0]. ctx goes to the loop. */
mt_status mt_cpu_elementwise(mt_tensor *const *ins, int nin, mt_dtype compute, mt_loop_fn loop,
                             void *ctx, bool inplace, mt_tensor **out);

/* The general form: input k is cast to in_dtypes[k] and the loop writes a result of dtype
 * `result` (a comparison computes in the operands' common dtype and writes bool; where's
 * condition stays bool while its values take their common dtype). In place, ins[0] must accept
 * `result`, and gets it through a temporary when its dtype differs. */
mt_status mt_cpu_elementwise_typed(mt_tensor *const *ins, int nin, const mt_dtype *in_dtypes,
                                   mt_dtype result, mt_loop_fn loop, void *ctx, bool inplace,
                                   mt_tensor **out);

#endif
