/* The plan of an elementwise call, for every device (CPU and CUDA): broadcasting, the in-place
 * checks, casting the inputs and allocating the output before the device's loop runs; writing
 * back through a temporary and the version bump after it. The elementwise family's front end
 * (ops/elementwise.c) prepares its calls with it, as do other kernels with an elementwise loop
 * (cpu/elementwise.h's driver). A backend supplies only its cast and copy (mt_ew_backend). */
#ifndef MT_CORE_ELEMENTWISE_H
#define MT_CORE_ELEMENTWISE_H

#include "core/tensor.h"

#define MT_EW_MAX_OPS 4 /* the output and up to three inputs (where) */

/* The dtype that PyTorch's type promotion gives the operands. */
mt_dtype mt_result_type(mt_tensor *const *ops, int n);

/* PyTorch's errors for an in-place result of shape (ndim, shape) and dtype result into self. */
mt_status mt_check_inplace(const mt_tensor *self, int ndim, const int64_t *shape, mt_dtype result);

typedef struct mt_ew_backend {
    /* *out = a new tensor holding src cast to dt, on src's device */
    mt_status (*cast)(mt_tensor *src, mt_dtype dt, mt_tensor **out);
    /* dst = src, of one shape and device, casting to dst's dtype */
    mt_status (*copy_into)(mt_tensor *dst, mt_tensor *src);
    /* leave a Python number (a wrapped 0-dim CPU tensor) uncast: the device loop reads it
     * as a scalar instead of a tensor on its own device */
    bool keep_numbers;
} mt_ew_backend;

/* One elementwise call between mt_ew_begin and mt_ew_end. ops[0] is the tensor the loop
 * writes, ops[k + 1] input k in its loop dtype (or an uncast Python number, see keep_numbers),
 * all broadcast to (ndim, shape). */
typedef struct mt_ew_plan {
    int ndim, nin;
    int64_t shape[MT_MAX_DIMS];
    mt_tensor *ops[MT_EW_MAX_OPS];
    mt_tensor *cast[MT_EW_MAX_OPS];
    mt_tensor *self; /* the in-place target, or NULL */
    bool need_tmp;
    bool out_is_input; /* ops[0] is also an input (in place; out= an input): its lines are read */
    const mt_ew_backend *be;
} mt_ew_plan;

/* Checks and prepares the call of a loop over ins (input k cast to in_dtypes[k]) writing a
 * result of dtype `result` into a new tensor, or, when inplace, into ins[0] (which must keep
 * its shape and accept the dtype; through a temporary when it needs a cast or another input
 * overlaps it), or into dest where not NULL (an out= tensor its caller found fit: of the
 * broadcast shape and dtype result, on the operands' device, with no internal overlap, sharing
 * memory with no input but one that is the same view; ops/front.h's mt_front_dest). On
 * failure nothing is left to release. */
mt_status mt_ew_begin(mt_ew_plan *p, const mt_ew_backend *be, mt_tensor *const *ins, int nin,
                      const mt_dtype *in_dtypes, mt_dtype result, bool inplace, mt_tensor *dest);
/* Finishes p after its loop ran with status st: on success *out is the result (a new reference;
 * ins[0] itself in place); everything else is released either way. Returns the final status. */
mt_status mt_ew_end(mt_ew_plan *p, mt_status st, mt_tensor **out);

#endif
