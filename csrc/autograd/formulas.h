/* What the formula files (csrc/autograd/formulas*.c) share: the backward function of every row
 * of formulas.def, and small op calls. No formula lives here. */
#ifndef MT_FORMULAS_H
#define MT_FORMULAS_H

#include "autograd/autograd.h"
#include "ops/ops.h"

/* mt_grad_<op>(n, g, gi) for each row: g[k] the gradient of output k, gi[e] to fill for each
 * edge e. The saved tensors are checked before the call (formulas.def). */
#define MT_FORMULA(op, node, backward, ...) \
    mt_status backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi);
#include "autograd/formulas.def"
#undef MT_FORMULA

/* The rows with .saves: batch_norm keeps no running statistics when training (its forward
 * updates them in place and its backward does not read them); pow with a number exponent keeps
 * no result. */
void mt_saves_batch_norm(const mt_args *a, unsigned *save_inputs, bool *save_outputs);
void mt_saves_pow(const mt_args *a, unsigned *save_inputs, bool *save_outputs);
void mt_saves_mul(const mt_args *a, unsigned *save_inputs, bool *save_outputs);
/* lerp with a number weight keeps only the weight (formulas_pointwise.c) */
void mt_saves_lerp(const mt_args *a, unsigned *save_inputs, bool *save_outputs);

/* The Autograd kernels of max_pool2d and layer_norm, which record max_pool2d_with_indices and
 * (on the CPU) native_layer_norm (formulas_nn.c and formulas_norm.c) */
mt_status mt_autograd_max_pool2d(mt_args *a);
mt_status mt_autograd_layer_norm(mt_args *a);
/* max_pool3d's, which records max_pool3d_with_indices (formulas_nn.c) */
mt_status mt_autograd_max_pool3d(mt_args *a);

/* The node name of the rows with .overload: PyTorch numbers an op's overloads apart (sum() is
 * SumBackward0, sum(dim) SumBackward1); NULL for the row's name. */
const char *mt_formula_overload_name(mt_op op, const mt_args *a);
/* The node name of formulas_math.c's numbered ops, or NULL (called by the one above). */
const char *mt_formula_math_overload_name(mt_op op, const mt_args *a);
/* The node name of formulas_pointwise.c's numbered ops (round.decimals, lerp.Tensor...), or NULL
 * (the rows name the function themselves). */
const char *mt_formula_pointwise_overload_name(mt_op op, const mt_args *a);
const char *mt_formula_special_overload_name(mt_op op, const mt_args *a);

/* A wrapped 0-dim number, weak in type promotion: it takes the other operand's dtype. */
mt_status mt_ags_number(double v, mt_tensor **out);
/* *out = op(x, v) for a binary op and a number v (eq(x, 0), pow(x, p)...). */
mt_status mt_ags_with_number(mt_op op, mt_tensor *x, double v, mt_tensor **out);
/* *indices = the positions a value-selecting op (max_dim, sort, cummax, kthvalue ...) picked,
 * its second output, which the node does not keep: the node's op run again, grad mode off, on
 * its recorded arguments with self as input (and keepdim, bool slot 0, set when keepdim). */
mt_status mt_ags_rerun_indices(const mt_node *n, mt_tensor *self, bool keepdim,
                               mt_tensor **indices);
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
/* *out = zeros of the input's shape with g written into the part the view op took (select,
 * slice, diagonal, narrow_copy's narrow; trace's diagonal, filled with the 0-dim g). */
mt_status mt_ags_embed(mt_node *n, mt_tensor *g, mt_op view, mt_tensor **out);
/* The rows with .region (select, slice): the part of base (shaped like n's input) that n's
 * output views. */
mt_status mt_region_select(mt_node *n, mt_tensor *base, mt_tensor **out);
mt_status mt_region_slice(mt_node *n, mt_tensor *base, mt_tensor **out);

#endif
