/* What formulas_shape.c and formulas_reduce.c share: formulas.c's macros for writing a backward
 * function and a formula row (this one with the Tensor[] flag), and small op calls. Private to
 * those two files; no formula lives here. */
#ifndef MT_FORMULAS_SHAPE_H
#define MT_FORMULAS_SHAPE_H

#include "autograd/autograd.h"
#include "ops/ops.h"

#include "autograd/formula_macros.h"

/* op, node name, backward, differentiable slots, Tensor[] differentiable, saved slots, saves
 * result, is a view */
#define ROW(op, nm, fn, diff, list, save_in, save_out, view)                                  \
    static const mt_formula f_##op = {nm, fn, diff, list, save_in, save_out, view};         \
    mt_autograd_set_formula(MT_OP_##op, &f_##op)

/* Dispatches op with a; *out = its first result (others released). */
mt_status mt_ags_call(mt_op op, mt_args *a, mt_tensor **out);
/* A wrapped 0-dim number, weak in type promotion: it takes the other operand's dtype. */
mt_status mt_ags_number(double v, mt_tensor **out);
/* *out = op(x, v) for a binary op and a number v (eq(x, 0), pow(x, p)...). */
mt_status mt_ags_with_number(mt_op op, mt_tensor *x, double v, mt_tensor **out);
/* *out = x with v where the bool mask holds: where(mask, v, x), a select (an inf or NaN of x
 * there is gone, as masked_fill's) made of an op with a formula, so a backward built on it can
 * be differentiated. */
mt_status mt_ags_where_number(mt_tensor *mask, double v, mt_tensor *x, mt_tensor **out);
/* *out = x with 1 where x is 0: a denominator that is never 0. */
mt_status mt_ags_nonzero(mt_tensor *x, mt_tensor **out);
/* *out = x summed over the dims d with red[d], kept as size 1. */
mt_status mt_ags_sum_keep(mt_tensor *x, const bool *red, mt_tensor **out);
/* *out = x reshaped to m's shape with size 1 at the reduced dims (red[d]): a reduction's result
 * (keepdim or not) lined up with its input. */
mt_status mt_ags_keep(mt_tensor *x, const mt_meta *m, const bool *red, mt_tensor **out);
/* red[d] for each dim of m a reduction over dims (None or empty: all) reduces. */
void mt_ags_reduced(const mt_meta *m, const mt_intlist *dims, bool *red);
/* *out = op(x) for an op taking a tensor and one dim list (flip) or one int dim (cumsum). */
mt_status mt_ags_along(mt_op op, mt_tensor *x, int64_t dim, mt_tensor **out);

void mt_autograd_register_reduce(void);

#endif
