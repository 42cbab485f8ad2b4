/* The dispatcher's rule for complex tensors (complex.c): which ops take them and how. */
#ifndef MT_DISPATCH_COMPLEX_H
#define MT_DISPATCH_COMPLEX_H

#include <stdbool.h>

#include "dispatch/dispatch.h"

/* Whether a call has a complex tensor or asks for a complex dtype: the one check that every
 * call pays (a few pointer reads), before mt_complex_dispatch. */
static inline bool
mt_complex_involved(const mt_args *a)
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (a->t[k] && a->t[k]->dtype >= MT_COMPLEX64) {
            return true;
        }
    }
    for (int k = 0; k < a->ntl; k++) {
        if (a->tl[k] && a->tl[k]->dtype >= MT_COMPLEX64) {
            return true;
        }
    }
    return a->dtype >= MT_COMPLEX64;
}

/* A call with complex tensors or dtype: refused (the op takes none, or the device has no
 * complex kernels), left to the dispatcher (*handled false: the op takes them), or run on the
 * real views (*handled true: a->out holds the result). */
mt_status mt_complex_dispatch(mt_op op, mt_args *a, bool *handled);

/* The CUDA device's refusal of complex tensors, naming op (NotImplementedError); also for an op
 * that would make one there from real tensors (view_as_complex). */
mt_status mt_complex_refuse_cuda(mt_op op);

#endif
