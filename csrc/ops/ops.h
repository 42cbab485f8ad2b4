/* Typed entry points to the dispatcher, for C callers (formulas, composites, kernels, the
 * binding layer): mt_op_<name> for every op of ops.def, generated into dispatch/ops_api.h by
 * tools/gen_ops_api.py (see it for the conventions: arguments in schema order, every one
 * given, results last, new references).
 *
 * Each boxes its arguments and calls mt_dispatch, so every call shows up as Op::<name> in the
 * journey. */
#ifndef MT_OPS_H
#define MT_OPS_H

#include <stdatomic.h>
#include <stdbool.h>

#include "dispatch/dispatch.h"
#include "dispatch/ops_api.h"

/* clone(memory_format=contiguous_format): empty + copy_, for callers that need a row-major
 * result (contiguous(), reshape's copy); mt_op_clone keeps self's layout, as PyTorch's
 * preserve_format. Not an op (csrc/ops/composite.c). */
mt_status mt_copy_contiguous(mt_tensor *self, mt_tensor **out);
/* A copy of self with the given strides, which fill its span exactly (a permutation of a
 * row-major layout: another tensor's strides when mt_tensor_is_dense says so). Not an op. */
mt_status mt_copy_strided(mt_tensor *self, const int64_t *strides, mt_tensor **out);

/* *out = op(x, v) for an op (Tensor self, Tensor|Scalar other) whose other arguments are at
 * their defaults (mul, div, eq, pow ...), v a Python number: a wrapped 0-dim tensor, weak in
 * type promotion, so x keeps its dtype. Not an op (csrc/ops/composite.c). */
mt_status mt_call_with_number(mt_op op, mt_tensor *x, mt_scalar v, mt_tensor **out);

/* out = relu(out), or gelu(out, approximate): _addmm_activation's activation where no product
 * epilogue applied it (PyTorch's relu_/gelu_ after its gemm). out is the call's new result,
 * whose version stays 0. Inline: each device's kernels compile their own. */
static inline mt_status
mt_activate_result(mt_tensor *out, bool gelu, const char *approximate)
{
    mt_tensor *act = NULL;
    mt_status st = gelu ? mt_op_gelu(out, approximate, &act) : mt_op_relu(out, &act);
    if (st == MT_OK && (st = mt_op_copy_(out, act, NULL)) == MT_OK) {
        atomic_store(&out->version->value, 0);
    }
    mt_tensor_clear(&act);
    return st;
}

#endif
