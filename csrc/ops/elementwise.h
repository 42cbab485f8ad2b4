/* The elementwise family as structured ops: one front end for every device, then the device's
 * loop (PyTorch's structured kernels and TensorIterator).
 *
 * It is the one front-end mechanism of ops/front.h, with the front end run by the family's
 * generated kernels rather than by the dispatcher, since it also works with the device's data
 * (casts, allocation):
 * - the front end ("meta", here mt_ew_call, in csrc/ops/) runs once per call, whatever the
 *   device: it checks the arguments with PyTorch's messages, picks the dtypes (type promotion),
 *   broadcasts, applies the in-place and overlap rules, casts the inputs and allocates the
 *   output on the operands' device (through that device's allocator, mt_tensor_empty), all
 *   into a plan (core/elementwise.h's mt_ew_plan);
 * - a device contributes an implementation struct (mt_ew_device): its cast and copy, and the
 *   "impl" that runs the loop over a prepared plan. It checks nothing and has no message;
 * - each device's dispatcher kernel of an op is generated from the table (MT_EW_OP rows of
 *   ops/elementwise.def) as mt_ew_call(op, row, args, &that_device), so the dispatcher picks
 *   the device and the front end runs before its loop.
 * The other families' front ends are listed in front.h and run by the dispatcher, which hands
 * the kernel their plan (ops/plans.h). */
#ifndef MT_OPS_ELEMENTWISE_H
#define MT_OPS_ELEMENTWISE_H

#include "core/elementwise.h"
#include "dispatch/dispatch.h"
#include "ops/elementwise_table.h"

/* What a device contributes to the elementwise family. */
typedef struct mt_ew_device {
    const char *name;      /* "cpu", "cuda": PyTorch's suffix of its kernel names */
    mt_ew_backend backend; /* its cast and copy (and whether it reads Python numbers itself) */
    /* whether it has row's loop for dtype dt */
    bool (*has_loop)(mt_ew_id row, mt_dtype dt);
    /* Runs row's loop in dtype dt over p: inputs already in the row's operand dtypes, output
     * allocated. k[0..MT_EW_MAX_K) are the row's scalar operands (alpha, a bound, elu's alpha,
     * scale and input_scale; those a row does not use are 0), NULL for a row without any.
     * Sets *zero_div when an integer divisor was 0 (the front end raises). */
    mt_status (*run)(mt_ew_plan *p, mt_ew_id row, mt_dtype dt, const mt_scalar *k, bool *zero_div);
} mt_ew_device;

/* The kernel of ops.def's op on dev: the front end of row (which may pick another: div's
 * rounding modes, gelu's tanh form), then dev's loop; the result in a->out[0]. */
mt_status mt_ew_call(mt_op op, mt_ew_id row, mt_args *a, const mt_ew_device *dev);

/* Whether op, called with a, computes integer operands in the default float (true division,
 * exp): its row's dtype rule. False for an op outside the family. */
bool mt_ew_integers_to_float(mt_op op, const mt_args *a);

/* PyTorch's CPU kernel name of op's row (elementwise.def's kernel column) called with a, for
 * "not implemented for" messages (clamp's depends on its bounds); NULL for an op outside the
 * family. */
const char *mt_ew_kernel_name(mt_op op, const mt_args *a);

/* Whether op's row computes a bool (comparisons, logical ops): in place, self keeps its dtype
 * whatever its operands promote to. False for an op outside the family. */
bool mt_ew_bool_result(mt_op op);

/* PyTorch's refusal of complex operands for op, a family op without complex loops (its
 * kernel's "not implemented for", or the op's own words: clamp, maximum, floor, ...), on the
 * CPU (dispatch/complex.c calls it where no complex form runs). */
mt_status mt_ew_refuse_complex(mt_op op, const mt_args *a);

/* The checks of op, a family op, that PyTorch makes before it promotes its operands (clamp with
 * no bound, sub of a bool, addcdiv of integers, heaviside's and _prelu_kernel's dtypes,
 * masked_fill's value and mask, maximum of a complex), on the dtypes as given: mt_ew_call runs
 * them before the row's meta, and the dispatcher before the rules of the shell and complex
 * dtypes, whose refusals would come first otherwise. MT_OK for any other op. */
mt_status mt_ew_check_first(mt_op op, const mt_args *a);

/* Whether op's row reads its operand k as bool (where's condition, masked_fill's mask), which
 * then joins no promotion. False for an op outside the family. */
bool mt_ew_reads_bool(mt_op op, int k);

/* The Scalar arguments that PyTorch's kernels of op convert checked into the call's dtype or
 * into the dtype they compute it in (alpha, addcmul's value, clamp_min's bound, leaky_relu's
 * slope; pow's exponent and lerp's weight as numbers; masked_fill's 0-dim value): PyTorch's
 * "value cannot be converted to type c10::Half without overflow", as the scalars column of
 * op's row in ops/elementwise.def says (ops/elementwise_scalars.c). For the dtypes as given:
 * the dispatcher calls it once before dispatch/widen.c computes a small dtype in a wider one.
 * MT_OK for an op outside the family. */
mt_status mt_ew_check_scalars(mt_op op, const mt_args *a);

#endif
