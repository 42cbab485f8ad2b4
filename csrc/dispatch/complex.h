/* The dispatcher's rule for complex tensors (complex.c): which ops take them and how. */
#ifndef MT_DISPATCH_COMPLEX_H
#define MT_DISPATCH_COMPLEX_H

#include <stdbool.h>

#include "dispatch/dispatch.h"

/* Whether a call has a tensor of a dtype that is(dtype) says yes to, or asks for one: a few
 * pointer reads (the complex and the shell dtypes' rules start with it). */
static inline bool
mt_args_any_dtype(const mt_args *a, bool (*is)(mt_dtype))
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (a->t[k] && is(a->t[k]->dtype)) {
            return true;
        }
    }
    for (int k = 0; k < a->ntl; k++) {
        if (a->tl[k] && is(a->tl[k]->dtype)) {
            return true;
        }
    }
    return a->dtype >= 0 && is((mt_dtype)a->dtype);
}

/* Whether a call has a complex tensor or asks for a complex dtype, before mt_complex_dispatch
 * (a call with neither a complex nor a shell dtype skips it: mt_dtype_has_own_rule). */
static inline bool
mt_complex_involved(const mt_args *a)
{
    return mt_args_any_dtype(a, mt_dtype_is_complex);
}

/* The first dtype of the call's tensors (a->t, then its list), then of its dtype=, that is(dtype)
 * says yes to; -1 for none. */
int mt_args_first_dtype(const mt_args *a, bool (*is)(mt_dtype));

/* Whether a call is on the CUDA device: a tensor there (not a wrapped number) or device=. */
bool mt_args_on_cuda(const mt_args *a);

/* A call with complex tensors or dtype: refused (the op takes none, or the device has no
 * complex kernels), left to the dispatcher (*handled false: the op takes them), or run on the
 * real views (*handled true: a->out holds the result). */
mt_status mt_complex_dispatch(mt_op op, mt_args *a, bool *handled);

/* The CUDA device's refusal of complex tensors, naming op (NotImplementedError); also for an op
 * that would make one there from real tensors (view_as_complex). */
mt_status mt_complex_refuse_cuda(mt_op op);

#endif
