/* The small dtypes through the computing dtypes' kernels (dispatch/widen.c), for the dispatcher. */
#ifndef MT_DISPATCH_WIDEN_H
#define MT_DISPATCH_WIDEN_H

#include <stdbool.h>

#include "dispatch/dispatch.h"

/* Whether a backend kernel of op called with a needs the small dtypes widened. */
bool mt_widen_needed(mt_op op, const mt_args *a);

/* The dispatcher's run() for the keys given, which runs the front end and the kernel. */
typedef mt_status (*mt_widen_inner)(mt_op op, mt_args *a, unsigned keys);

/* Runs op's kernel for key on a with its small-dtype tensors widened, and converts back. */
mt_status mt_widen_run(mt_op op, mt_args *a, mt_key key, mt_widen_inner inner);

/* While mt_widen_run's inner call runs: the dtype its first tensor argument had before it was
 * widened (a factory's dtype= without one; else -1), for the one kernel whose numbers depend on
 * the stored dtype beyond the final rounding: uniform_, whose half-open interval PyTorch checks
 * after the cast to the stored dtype. */
extern _Thread_local int mt_widen_stored_dtype;

/* t as the caller gave it: where a is the call mt_widen_run is running and t one of its tensors
 * widened, the small-dtype tensor it was made from; else t. For a front end that runs below the
 * widening (the elementwise family's) to name the dtypes PyTorch names ('Byte', 'Half'). */
mt_tensor *mt_widen_as_given(const mt_args *a, mt_tensor *t);

#endif
