/* The dispatcher's rule for PyTorch's shell dtypes (shell.c): uint16, uint32, uint64 and the
 * float8 formats, which only some ops take. */
#ifndef MT_DISPATCH_SHELL_H
#define MT_DISPATCH_SHELL_H

#include <stdbool.h>

#include "dispatch/complex.h"
#include "dispatch/dispatch.h"

/* Whether a call has a tensor of a shell dtype or asks for one: a few pointer reads. */
static inline bool
mt_shell_involved(const mt_args *a)
{
    return mt_args_any_dtype(a, mt_dtype_is_shell);
}

/* MT_OK where op takes the call's shell dtype; else PyTorch's NotImplementedError naming its
 * kernel, or its promotion error, recorded. *guard true: the call runs between mt_shell_enter
 * and mt_shell_leave, and the ops it calls are not checked again (false for a call inside one
 * such, for none of a shell dtype, and for a composite whose steps are checked). */
mt_status mt_shell_check(mt_op op, const mt_args *a, bool *guard);
void mt_shell_enter(void);
void mt_shell_leave(void);

/* The rest of the dispatch, below the shell dtypes' rule. */
typedef mt_status (*mt_shell_next)(mt_op op, mt_args *a, unsigned mask);
/* A checked call: next(op, a, mask), or the form shell.c computes it in (uint64 orderings, true
 * division of the uints). */
mt_status mt_shell_run(mt_op op, mt_args *a, unsigned mask, mt_shell_next next);

#endif
