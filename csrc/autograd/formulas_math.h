/* The elementwise math's backward formulas (formulas_math.c): what the autograd kernel needs
 * beyond their rows. */
#ifndef MT_FORMULAS_MATH_H
#define MT_FORMULAS_MATH_H

#include "dispatch/dispatch.h"

/* PyTorch's node name for this call of op where it depends on the overload PyTorch would pick
 * (pow of a number or by a number, clamp with tensor bounds, div with a rounding mode ...);
 * NULL where the row's name holds. For the recording of a node (autograd.c). */
const char *mt_autograd_math_node_name(mt_op op, const mt_args *a);

#endif
