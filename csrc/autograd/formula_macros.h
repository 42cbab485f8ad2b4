/* The shorthand every formulas*.c file writes its backward functions with (private to them).
 *
 *   G(mul_backward) { SAVED(1, other); return mt_ag_binary(MT_OP_mul, g[0], other, &gi[0]); }
 *
 * G declares a backward function (n: the node, g: output gradients, gi: input gradients to
 * fill); SAVED and RESULT fetch a saved input or the saved result, checking its version, and
 * return the error from the function when the check fails. */
#ifndef MT_FORMULA_MACROS_H
#define MT_FORMULA_MACROS_H

#include "autograd/autograd.h"

#define G(name) static mt_status name(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
#define SAVED(slot, var)                                   \
    mt_tensor *var = NULL;                                 \
    do {                                                   \
        mt_status st_ = mt_saved_input(n, slot, &var);     \
        if (st_) {                                         \
            return st_;                                    \
        }                                                  \
    } while (0)
#define RESULT(var)                                        \
    mt_tensor *var = NULL;                                 \
    do {                                                   \
        mt_status st_ = mt_saved_output(n, 0, &var);       \
        if (st_) {                                         \
            return st_;                                    \
        }                                                  \
    } while (0)

#endif
