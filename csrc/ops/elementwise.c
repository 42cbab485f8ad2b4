/* The front end of the elementwise family (ops/elementwise.h), for every device: each row's
 * meta (its dtype rule and PyTorch's checks, with PyTorch's messages), then the shared plan
 * (core/elementwise.c: broadcasting, in-place and overlap rules, casts, the output), then the
 * device's loop. No device repeats any of this. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/widen.h"
#include "ops/arg_checks.h"
#include "ops/elementwise.h"
#include "ops/elementwise_table.h"
#include "ops/front.h"
#include "ops/ops.h"

/* What a row's meta prepares: the loop's inputs (in the row's operand order) and its dtype. */
typedef struct ew_call {
    const mt_ew_device *dev;
    mt_op op;
    const mt_args *args; /* the call, for the names of its messages */
    mt_ew_id row;
    bool inplace;
    mt_tensor *ins[MT_EW_MAX_OPS - 1];
    mt_dtype dt;       /* the loop's dtype (T of its form) */
    bool uses_k;       /* the row has a scalar operand: k, or 1 when k is None */
    mt_scalar k;
    mt_scalar k2, k3;  /* the second and third of a row with several (XKK, XYKKK...) */
    mt_tensor *owned[2]; /* operands the meta made (a bound, masked_fill's value) */
    bool done;         /* the meta computed the result itself (pow by a root) */
} ew_call;

typedef mt_status (*ew_meta)(ew_call *c, mt_args *a);

static mt_status not_implemented(const ew_call *c);

/* ---- the rows' metas: dtype rules and checks ---- */

static mt_status
meta_same(ew_call *c, mt_args *a)
{
    (void)a;
    c->dt = c->ins[1] ? mt_result_type(c->ins, 2) : c->ins[0]->dtype;
    return MT_OK;
}

/* as same, but integer and bool operands compute in the default float (true division, exp);
 * complex ones stay complex */
static mt_status
meta_to_float(ew_call *c, mt_args *a)
{
    meta_same(c, a);
    c->dt = mt_dtype_is_float(c->dt) || mt_dtype_is_complex(c->dt) ? c->dt : MT_DEFAULT_FLOAT;
    return MT_OK;
}

/* sub of a bool operand (of two) */
static mt_status
check_sub_bool(const mt_args *a)
{
    if (a->t[0]->dtype == MT_BOOL && a->t[1]->dtype == MT_BOOL) {
        return mt_fail(MT_ERUNTIME,
                       "Subtraction, the `-` operator, with two bool tensors is not supported. Use "
                       "the `^` or `logical_xor()` operator instead.");
    }
    if (a->t[0]->dtype == MT_BOOL || a->t[1]->dtype == MT_BOOL) {
        /* PyTorch refuses a bool operand of any kind, even x - True for a float x. */
        return mt_fail(MT_ERUNTIME,
                       "Subtraction, the `-` operator, with a bool tensor is not supported. If you "
                       "are trying to invert a mask, use the `~` or `logical_not()` operator "
                       "instead.");
    }
    return MT_OK;
}

/* add and sub: PyTorch's alpha rules (sub's bool operands: mt_ew_check_first) */
static mt_status
check_alpha(ew_call *c, mt_args *a, bool is_sub)
{
    meta_same(c, a);
    c->uses_k = true;
    c->k = a->s[0];
    if (mt_scalar_is_none(c->k)) {
        return MT_OK;
    }
    /* PyTorch's alpha_check: any alpha scales a bool result (as a truth value), but a bool
     * alpha scales nothing else. */
    if (c->k.type == MT_BOOL && c->dt != MT_BOOL) {
        return mt_fail(MT_ERUNTIME, "Boolean alpha only supported for Boolean results.");
    }
    if (mt_dtype_is_integral(c->dt, true) && c->k.type == MT_FLOAT64) {
        return mt_fail(MT_ERUNTIME,
                       "For integral input tensors, argument alpha must not be a floating point "
                       "number.");
    }
    if (c->k.is_complex && !mt_dtype_is_complex(c->dt)) {
        return mt_fail(MT_ERUNTIME,
                       "For non-complex input tensors, argument alpha must not be a complex "
                       "number.");
    }
    if (c->k.imag != 0.0) { /* the complex loops scale by a real alpha only */
        return mt_fail(MT_ENOTIMPL,
                       "%s: a complex alpha with an imaginary part is not supported by minitorch",
                       is_sub ? "sub" : "add");
    }
    return MT_OK;
}

static mt_status
meta_add(ew_call *c, mt_args *a)
{
    return check_alpha(c, a, false);
}

static mt_status
meta_sub(ew_call *c, mt_args *a)
{
    return check_alpha(c, a, true);
}

static mt_status
meta_neg(ew_call *c, mt_args *a)
{
    if (a->t[0]->dtype == MT_BOOL) {
        return mt_fail(MT_ERUNTIME,
                       "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                       "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
    }
    return meta_same(c, a);
}

/* remainder, fmod, pow: not two Python numbers (floor_divide and div with a rounding mode take
 * them, as PyTorch's torch.floor_divide(7, 2)); pow of an integer tensor to a negative Python
 * number is refused (what its loop could only truncate to 0) */
static mt_status
meta_arith(ew_call *c, mt_args *a)
{
    meta_same(c, a);
    if (a->t[0]->is_wrapped_number && a->t[1]->is_wrapped_number && c->op != MT_OP_div &&
        c->op != MT_OP_floor_divide) {
        const char *name = mt_op_names[c->op];
        size_t n = strlen(name) - (c->inplace ? 1 : 0);
        return mt_fail(MT_ETYPE,
                       "%.*s() received an invalid combination of arguments - got (Number, Number)",
                       (int)n, name);
    }
    if (c->row != MT_EW_pow || mt_dtype_is_float(c->dt) || mt_dtype_is_complex(c->dt) ||
        !a->t[1]->is_wrapped_number) {
        return MT_OK;
    }
    mt_scalar e;
    mt_status st = mt_tensor_item(a->t[1], &e);
    if (st == MT_OK && mt_scalar_to_double(e) < 0) {
        st = mt_fail(MT_ERUNTIME, "Integers to negative integer powers are not allowed.");
    }
    return st;
}

/* pow(Tensor, Scalar) of a float self to 0.5 or -0.5: as PyTorch's kernels, sqrt or rsqrt
 * instead (their values differ from pow's at -inf and -0) */
static mt_status
meta_pow(ew_call *c, mt_args *a)
{
    mt_status st = meta_arith(c, a);
    mt_tensor *self = a->t[0], *e = a->t[1];
    mt_scalar v;
    if (st || !mt_dtype_is_float(c->dt) || self->dtype != c->dt || self->is_wrapped_number ||
        !e->is_wrapped_number || mt_tensor_item(e, &v) != MT_OK) {
        return st;
    }
    double x = mt_scalar_to_double(v);
    if (x != 0.5 && x != -0.5) {
        return MT_OK;
    }
    const bool ip = c->inplace;
    mt_tensor *r = NULL;
    st = x > 0 ? (ip ? mt_op_sqrt_(self, &r) : mt_op_sqrt(self, &r))
               : (ip ? mt_op_rsqrt_(self, &r) : mt_op_rsqrt(self, &r));
    if (st == MT_OK) {
        a->out[0] = r;
        c->done = true;
    }
    return st;
}

/* In place with Scalar bounds, PyTorch's clamp kernels name self's dtype by its C type ("long
 * int", "bool") where a result self cannot hold is refused. */
static mt_status
check_scalar_bound_in_place(const ew_call *c, const mt_tensor *self)
{
    if (c->inplace && !mt_can_cast(c->dt, self->dtype)) {
        return mt_fail(MT_ERUNTIME, "result type %s can't be cast to the desired output type %s",
                       mt_dtype_scalar_name(c->dt), mt_dtype_c_name(self->dtype));
    }
    return MT_OK;
}

/* clamp_min and clamp_max with a Scalar bound: in the dtype the bound promotes self to */
static mt_status
meta_bound(ew_call *c, mt_args *a)
{
    mt_promotion p;
    mt_promotion_init(&p);
    mt_promotion_add(&p, a->t[0]->dtype, a->t[0]->ndim, a->t[0]->is_wrapped_number);
    mt_promotion_add(&p, a->s[0].type, 0, true);
    c->dt = mt_promotion_result(&p);
    c->uses_k = true;
    c->k = a->s[0];
    return check_scalar_bound_in_place(c, a->t[0]);
}

/* The bound that clamps nothing, standing in for an absent min (lowest) or max (highest). */
static mt_scalar
no_bound(mt_dtype dt, bool highest)
{
    switch (dt) {
    case MT_BOOL:
        return mt_scalar_bool(highest);
    case MT_INT32:
        return mt_scalar_int(highest ? INT32_MAX : INT32_MIN);
    case MT_INT64:
        return mt_scalar_int(highest ? INT64_MAX : INT64_MIN);
    default:
        return mt_scalar_float(highest ? INFINITY : -INFINITY);
    }
}

/* clamp's bounds given as Python numbers (and absent ones) pass as the row's scalars, as
 * clamp_min's does: clamp_min, clamp_max or hardtanh's row (min(max(x, lo), hi), clamp's own
 * formula) over self alone. As 0-dim operands they took the broadcast path, reading both
 * bounds for every element. Whether it did; otherwise clamp's row runs as it was. */
static bool
numbers_as_scalars(ew_call *c, mt_args *a, int missing)
{
    mt_scalar lo = mt_scalar_int(0), hi = lo;
    if ((a->t[1] && (!a->t[1]->is_wrapped_number || mt_tensor_item(a->t[1], &lo) != MT_OK)) ||
        (a->t[2] && (!a->t[2]->is_wrapped_number || mt_tensor_item(a->t[2], &hi) != MT_OK))) {
        return false;
    }
    const mt_ew_id row = missing == 2   ? MT_EW_clamp_min
                         : missing == 1 ? MT_EW_clamp_max
                                        : MT_EW_hardtanh;
    if (!c->dev->has_loop(row, c->dt)) {
        return false;
    }
    c->row = row;
    c->uses_k = true;
    c->k = missing == 1 ? hi : lo;
    c->k2 = hi;
    c->ins[1] = c->ins[2] = NULL;
    return true;
}

static mt_status
check_some_bound(const mt_args *a)
{
    if (a->t[1] == NULL && a->t[2] == NULL) {
        return mt_fail(MT_ERUNTIME, "torch.clamp: At least one of 'min' or 'max' must not be None");
    }
    return MT_OK;
}

/* clamp(self, min, max): one bound may be absent (a number that clamps nothing stands in), not
 * both; all three in their promoted dtype */
static mt_status
meta_clamp(ew_call *c, mt_args *a)
{
    mt_tensor *given[3] = {a->t[0]};
    int n = 1;
    bool scalar_bound = false;
    for (int k = 1; k < 3; k++) {
        if (a->t[k]) {
            scalar_bound |= a->t[k]->is_wrapped_number;
            given[n++] = a->t[k];
        }
    }
    c->dt = mt_result_type(given, n); /* n > 1: mt_ew_check_first */
    int missing = a->t[1] == NULL ? 1 : a->t[2] == NULL ? 2 : 0;
    bool tensor_bound = false;
    for (int k = 1; k < 3; k++) {
        tensor_bound |= a->t[k] && !a->t[k]->is_wrapped_number;
    }
    mt_status st = tensor_bound ? MT_OK : check_scalar_bound_in_place(c, a->t[0]);
    if (st) {
        return st;
    }
    if (c->dt == MT_BOOL && scalar_bound) {
        return mt_fail(MT_ENOTIMPL, "\"clamp_scalar_%s\" not implemented for 'Bool'", c->dev->name);
    }
    /* two tensor bounds are PyTorch's clamp_cpu kernel, which has no bool loop (one bound alone
     * is maximum or minimum, which has) */
    if (c->dt == MT_BOOL && missing == 0) {
        return not_implemented(c);
    }
    if (numbers_as_scalars(c, a, missing)) {
        return MT_OK;
    }
    if (missing == 0) {
        return MT_OK;
    }
    st = mt_tensor_scalar(no_bound(c->dt, missing == 2), c->dt, &c->owned[0]);
    c->ins[missing] = c->owned[0];
    return st;
}

/* where(condition, input, other): a bool condition; the values in their promoted dtype */
static mt_status
meta_where(ew_call *c, mt_args *a)
{
    if (a->t[0]->dtype != MT_BOOL) {
        return mt_fail(MT_ERUNTIME,
                       "where expected condition to be a boolean tensor, but got a tensor with "
                       "dtype %s",
                       mt_dtype_scalar_name(a->t[0]->dtype));
    }
    c->dt = mt_result_type(a->t + 1, 2);
    return MT_OK;
}

/* masked_fill(self, mask, value): a bool mask, a 0-dim value that fits self's dtype */
static mt_status
meta_masked_fill(ew_call *c, mt_args *a)
{
    mt_scalar v;
    c->dt = a->t[0]->dtype;
    mt_status st = mt_check_masked_fill(a->t[0], mt_widen_as_given(a, a->t[1]), a->t[2], &v);
    if (st == MT_OK) {
        st = mt_tensor_scalar(v, c->dt, &c->owned[0]);
        c->ins[2] = c->owned[0];
    }
    return st;
}

/* ---- everyday pointwise ---- */

/* round(self, decimals): with decimals, the float-only loop that scales first */
static mt_status
meta_round(ew_call *c, mt_args *a)
{
    meta_same(c, a);
    if (a->i[0] != 0) {
        c->row = MT_EW_round_decimals;
        c->uses_k = true;
        c->k = mt_scalar_int(a->i[0]);
    }
    return MT_OK;
}

/* polygamma(n, self): n >= 0, the loop's scalar; integer self in the default float */
static mt_status
meta_polygamma(ew_call *c, mt_args *a)
{
    if (a->i[0] < 0) {
        return mt_fail(MT_ERUNTIME, "polygamma(n, x) does not support negative n.");
    }
    c->uses_k = true;
    c->k = mt_scalar_int(a->i[0]);
    return meta_to_float(c, a);
}

/* xlogy: as arith (not two Python numbers), computing in a float */
static mt_status
meta_arith_to_float(ew_call *c, mt_args *a)
{
    mt_status st = meta_arith(c, a);
    c->dt = mt_dtype_is_float(c->dt) ? c->dt : MT_DEFAULT_FLOAT;
    return st;
}

/* the dtype of a->t[k] as the caller gave it (before dispatch/widen.c widened it) */
static mt_dtype
given_dtype(const mt_args *a, int k)
{
    return mt_widen_as_given(a, a->t[k])->dtype;
}

/* heaviside(self, values): one dtype, and not a complex one */
static mt_status
check_heaviside(const mt_args *a)
{
    if (mt_dtype_is_complex(a->t[0]->dtype) || mt_dtype_is_complex(a->t[1]->dtype)) {
        return mt_fail(MT_ERUNTIME, "heaviside is not yet implemented for complex tensors.");
    }
    if (given_dtype(a, 0) != given_dtype(a, 1)) {
        return mt_fail(MT_ERUNTIME,
                       "heaviside is not yet implemented for tensors with different dtypes.");
    }
    return MT_OK;
}

/* heaviside(self, values), one dtype (mt_ew_check_first) */
static mt_status
meta_heaviside(ew_call *c, mt_args *a)
{
    c->dt = a->t[0]->dtype;
    return MT_OK;
}

/* a->t[k] in self's dtype, as given */
static mt_status
expect_dtype(const mt_args *a, int k, const char *what)
{
    const mt_dtype self = given_dtype(a, 0), t = given_dtype(a, k);
    if (t == self) {
        return MT_OK;
    }
    return mt_fail(MT_ERUNTIME, "expected dtype %s for `%s` but got dtype %s",
                   mt_dtype_c_name(self), what, mt_dtype_c_name(t));
}

/* lerp(self, end, weight): end in self's dtype, and a weight tensor too unless 0-dim (as
 * PyTorch's); floats only */
static mt_status
meta_lerp(ew_call *c, mt_args *a)
{
    const bool scalar_weight = a->t[2]->is_wrapped_number;
    mt_status st = expect_dtype(a, 1, "end");
    if (st == MT_OK && a->t[2]->ndim != 0) {
        st = expect_dtype(a, 2, "weight");
    }
    c->dt = a->t[0]->dtype;
    if (st == MT_OK && !mt_dtype_is_float(c->dt) && !mt_dtype_is_complex(c->dt)) {
        bool cpu = strcmp(c->dev->name, "cpu") == 0;
        st = mt_fail(MT_ENOTIMPL, "\"lerp_%s%s\" not implemented for '%s'", cpu ? "kernel_" : "",
                     cpu ? (scalar_weight ? "scalar" : "tensor") : c->dev->name,
                     mt_dtype_scalar_name(given_dtype(a, 0)));
    }
    return st;
}

/* _prelu_kernel(self, weight): weight in self's dtype */
static mt_status
check_prelu(const mt_args *a)
{
    const mt_dtype self = given_dtype(a, 0), weight = given_dtype(a, 1);
    if (weight != self) {
        return mt_fail(MT_ERUNTIME, "Found dtype %s but expected %s", mt_dtype_scalar_name(weight),
                       mt_dtype_scalar_name(self));
    }
    return MT_OK;
}

/* addcmul and addcdiv(self, tensor1, tensor2, *, value): the three promoted, value the scalar */
static mt_status
meta_addcmul(ew_call *c, mt_args *a)
{
    c->dt = mt_result_type(a->t, 3);
    c->uses_k = true;
    c->k = a->s[0];
    return MT_OK;
}

static mt_status
check_addcdiv(const mt_args *a)
{
    if (mt_dtype_is_integral(a->t[1]->dtype, true) && mt_dtype_is_integral(a->t[2]->dtype, true)) {
        return mt_fail(MT_ERUNTIME,
                       "Integer division with addcdiv is no longer supported, and in a future  "
                       "release addcdiv will perform a true division of tensor1 and tensor2. The "
                       "historic addcdiv behavior can be implemented as (input + value * "
                       "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                       "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                       "behavior is just the latter implementation: (input + value * tensor1 / "
                       "tensor2), for all dtypes.");
    }
    return MT_OK;
}

/* addcdiv: as addcmul, not of two integers (mt_ew_check_first) */
static mt_status
meta_addcdiv(ew_call *c, mt_args *a)
{
    return meta_addcmul(c, a);
}

/* nan_to_num(self, nan, posinf, neginf): the replacements in self's dtype (+-inf by default
 * become the dtype's largest and lowest finite values); an integer or bool self has nothing to
 * replace and comes back as a copy (in place: itself) */
static mt_status
meta_nan_to_num(ew_call *c, mt_args *a)
{
    mt_tensor *self = a->t[0];
    c->dt = self->dtype;
    if (!mt_dtype_is_float(c->dt) && !mt_dtype_is_complex(c->dt)) {
        c->done = true;
        if (c->inplace) {
            a->out[0] = mt_tensor_retain(self);
            return MT_OK;
        }
        return mt_op_clone(self, &a->out[0]);
    }
    /* a complex self's parts are each replaced, by their real dtype's values */
    const double big = c->dt == MT_FLOAT32 || c->dt == MT_COMPLEX64 ? FLT_MAX : DBL_MAX;
    mt_scalar hi = mt_scalar_is_none(a->s[1]) ? mt_scalar_float(big) : a->s[1];
    mt_scalar lo = mt_scalar_is_none(a->s[2]) ? mt_scalar_float(-big) : a->s[2];
    c->uses_k = true;
    c->k = mt_scalar_is_none(a->s[0]) ? mt_scalar_float(0) : a->s[0];
    mt_status st = mt_tensor_scalar(hi, c->dt, &c->owned[0]);
    if (st == MT_OK) {
        st = mt_tensor_scalar(lo, c->dt, &c->owned[1]);
    }
    c->ins[1] = c->owned[0];
    c->ins[2] = c->owned[1];
    return st;
}

/* ---- activations ---- */

/* A row whose Scalar arguments are its k, k2, k3 (leaky_relu's slope, softplus's beta and
 * threshold, elu's alpha, scale and input_scale), cast to the dtype of its tensors. */
static mt_status
meta_scalars(ew_call *c, mt_args *a)
{
    meta_same(c, a);
    c->uses_k = true;
    mt_scalar *ks[MT_EW_MAX_K] = {&c->k, &c->k2, &c->k3};
    for (int j = 0; j < MT_EW_MAX_K; j++) {
        *ks[j] = mt_scalar_is_none(a->s[j]) ? mt_scalar_int(0) : a->s[j];
    }
    return MT_OK;
}

static mt_status
meta_hardtanh(ew_call *c, mt_args *a)
{
    if (a->t[0]->dtype == MT_BOOL) {
        return mt_fail(MT_ERUNTIME, "Bool inputs not supported for hardtanh");
    }
    return meta_scalars(c, a);
}

/* lambda within [0, the dtype's largest] (an integer self fails later, in the loop lookup) */
static mt_status
meta_softshrink(ew_call *c, mt_args *a)
{
    meta_scalars(c, a);
    double lambd = mt_scalar_to_double(c->k);
    double top = c->dt == MT_FLOAT32 ? FLT_MAX : DBL_MAX;
    if (mt_dtype_is_float(c->dt) && !(lambd >= 0 && lambd <= top)) {
        return mt_fail(MT_ERUNTIME,
                       "lambda must be in range [0, %g] for input dtype %s, but found %g", top,
                       mt_dtype_scalar_name(c->dt), lambd);
    }
    return MT_OK;
}

/* leaky_relu_backward and elu_backward from the result of an in-place call (self_is_result,
 * is_result): only for a slope that keeps signs */
static mt_status
meta_result_backward(ew_call *c, mt_args *a)
{
    meta_scalars(c, a);
    if (!a->b[0] || mt_scalar_to_double(c->k) >= 0) {
        return MT_OK;
    }
    if (c->row == MT_EW_leaky_relu_backward) {
        return mt_fail(MT_ERUNTIME,
                       "In-place leakyReLu backward calculation is triggered with a negative slope "
                       "which is not supported. This is caused by calling in-place forward "
                       "function "
                       "with a negative slope, please call out-of-place version instead. File an "
                       "issue at https://github.com/pytorch/pytorch if you do require supporting "
                       "in-place leakRelu backward calculation with negative slope");
    }
    return mt_fail(MT_ERUNTIME,
                   "In-place elu backward calculation is triggered with a negative slope which is "
                   "not supported. This is caused by calling in-place forward function with a "
                   "negative slope, please call out-of-place version instead.");
}

/* ---- the table ---- */

typedef struct ew_row {
    const char *name;
    const char *kernel; /* PyTorch's CPU kernel name */
    ew_meta meta;
    int nin;
    unsigned bool_in; /* bit k: input k is read as bool */
    bool bool_out;
} ew_row;

static const ew_row rows[MT_NUM_EW] = {
#define MT_EW(name, form, dtypes, meta, scalars, kernel) \
    [MT_EW_##name] = {                                   \
        #name, kernel, meta_##meta, MT_EW_NIN_##form, MT_EW_BOOLIN_##form, MT_EW_BOOLOUT_##form},
#include "ops/elementwise.def"
};

/* each family op's row, plus one (0: no row) */
static const short op_rows[MT_NUM_OPS] = {
#define MT_EW_OP(op, row, flags, shell, schema) [MT_OP_##op] = MT_EW_##row + 1,
#include "ops/elementwise.def"
};

const char *
mt_ew_kernel_name(mt_op op, const mt_args *a)
{
    const int row = op_rows[op] - 1;
    if (row == MT_EW_polygamma) { /* PyTorch's polygamma is digamma and trigamma for n 0 and 1 */
        return a->i[0] == 0 ? "digamma" : a->i[0] == 1 ? "trigamma" : rows[row].kernel;
    }
    if (row == MT_EW_lerp) { /* lerp_kernel_scalar's weight is a number */
        return a->t[2] && !a->t[2]->is_wrapped_number ? "lerp_kernel_tensor" : rows[row].kernel;
    }
    if ((row == MT_EW_fmax || row == MT_EW_fmin) && a->t[0] &&
        mt_dtype_is_integral(a->t[0]->dtype, true)) { /* PyTorch's fmax of integers is maximum */
        return row == MT_EW_fmax ? "maximum_cpu" : "minimum_cpu";
    }
    if (row != MT_EW_clamp) {
        return row < 0 ? NULL : rows[row].kernel;
    }
    /* clamp is PyTorch's clamp_cpu with a tensor bound, clamp_scalar_cpu with two numbers, and
     * one bound alone is clamp_min or clamp_max: maximum and minimum with a tensor */
    const mt_tensor *lo = a->t[1], *hi = a->t[2];
    const bool tensor_bound = (lo && !lo->is_wrapped_number) || (hi && !hi->is_wrapped_number);
    if (lo && hi) {
        return tensor_bound ? rows[row].kernel : "clamp_scalar_cpu";
    }
    if (lo || hi) {
        return tensor_bound ? (lo ? "maximum_cpu" : "minimum_cpu")
                            : rows[lo ? MT_EW_clamp_min : MT_EW_clamp_max].kernel;
    }
    return rows[row].kernel;
}

bool
mt_ew_bool_result(mt_op op)
{
    const int row = op_rows[op] - 1;
    return row >= 0 && rows[row].bool_out;
}

/* row's own refusal of complex operands, in its op's words; MT_OK for a row without one (its
 * kernel's "not implemented for" then) */
static mt_status
own_complex_refusal(int row)
{
    switch (row) {
    case MT_EW_clamp:
    case MT_EW_clamp_min:
    case MT_EW_clamp_max:
    case MT_EW_hardtanh:
        return mt_fail(MT_ENOTIMPL, "clamp is not supported for complex types");
    case MT_EW_maximum:
    case MT_EW_minimum:
    case MT_EW_fmax:
    case MT_EW_fmin:
        return mt_fail(MT_ERUNTIME, "%s not implemented for complex tensors.", rows[row].name);
    case MT_EW_heaviside:
        return mt_fail(MT_ERUNTIME, "heaviside is not yet implemented for complex tensors.");
    case MT_EW_floor:
    case MT_EW_ceil:
    case MT_EW_trunc:
        return mt_fail(MT_ENOTIMPL, "%s is not supported for complex inputs", rows[row].name);
    case MT_EW_isposinf:
    case MT_EW_isneginf:
        return mt_fail(MT_ERUNTIME, "%s does not support complex inputs.", rows[row].name);
    case MT_EW_signbit:
        return mt_fail(MT_ENOTIMPL, "signbit is not implemented for complex tensors.");
    case MT_EW_deg2rad:
    case MT_EW_rad2deg:
        return mt_fail(MT_ERUNTIME, "%s is not supported for complex tensors.", rows[row].name);
    case MT_EW_abs: /* abs itself has a complex form (dispatch/complex.c); abs_ has none */
        return mt_fail(MT_ERUNTIME, "In-place abs is not supported for complex tensors.");
    default:
        return MT_OK;
    }
}

/* the promoted dtype of op's operands in a (its row's; those read as bool aside) */
static mt_dtype
operands_dtype(int row, const mt_args *a)
{
    mt_tensor *given[MT_EW_MAX_OPS - 1];
    int n = 0;
    for (int k = 0; row >= 0 && k < rows[row].nin; k++) {
        if (a->t[k] && !(rows[row].bool_in >> k & 1u)) {
            given[n++] = a->t[k];
        }
    }
    return n > 0 ? mt_result_type(given, n) : MT_COMPLEX64;
}

mt_status
mt_ew_refuse_complex(mt_op op, const mt_args *a)
{
    const int row = op_rows[op] - 1;
    mt_status st = own_complex_refusal(row);
    if (st) {
        return st;
    }
    /* in place, a complex result self cannot hold is PyTorch's cast error, before the missing
     * loop (int.xlogy_(complex)) */
    const mt_dtype dt = operands_dtype(row, a);
    const mt_tensor *self = a->t[0];
    if ((mt_op_flags[op] & INPLACE) && !rows[row].bool_out && !mt_can_cast(dt, self->dtype)) {
        return mt_check_inplace(self, self->ndim, self->sizes, dt);
    }
    return mt_fail(MT_ENOTIMPL, "\"%s\" not implemented for '%s'", mt_ew_kernel_name(op, a),
                   mt_dtype_scalar_name(dt));
}

bool
mt_ew_reads_bool(mt_op op, int k)
{
    const int row = op_rows[op] - 1;
    return row >= 0 && k < rows[row].nin && (rows[row].bool_in >> k & 1u);
}

mt_status
mt_ew_check_first(mt_op op, const mt_args *a)
{
    const int row = op_rows[op] - 1;
    const bool has_complex = row >= 0 && rows[row].nin == 2 &&
                             (mt_dtype_is_complex(a->t[0]->dtype) ||
                              mt_dtype_is_complex(a->t[1]->dtype));
    switch (row) {
    case MT_EW_clamp:
        return check_some_bound(a);
    case MT_EW_sub:
        return check_sub_bool(a);
    case MT_EW_addcdiv:
        return check_addcdiv(a);
    case MT_EW_heaviside:
        return check_heaviside(a);
    case MT_EW_masked_fill:
        return mt_check_masked_fill_args(mt_widen_as_given(a, a->t[1]), a->t[2]);
    case MT_EW_prelu:
        return check_prelu(a);
    case MT_EW_maximum:
    case MT_EW_minimum:
    case MT_EW_fmax:
    case MT_EW_fmin:
        return has_complex ? own_complex_refusal(row) : MT_OK;
    default:
        return MT_OK;
    }
}

bool
mt_ew_integers_to_float(mt_op op, const mt_args *a)
{
    const int row = op_rows[op] - 1;
    if (row < 0 || (row == MT_EW_div && a->str[0])) { /* div with a rounding mode stays */
        return false;
    }
    return rows[row].meta == meta_to_float || rows[row].meta == meta_arith_to_float;
}

/* The row op runs with its string argument (div's rounding mode, gelu's approximation) or its
 * flag (elu_backward's is_result). */
static mt_status
pick_row(mt_args *a, mt_ew_id *row)
{
    const char *s = a->str[0];
    switch (*row) {
    case MT_EW_div:
        if (s == NULL) {
            return MT_OK;
        }
        if (strcmp(s, "floor") == 0 || strcmp(s, "trunc") == 0) {
            *row = s[0] == 'f' ? MT_EW_div_floor : MT_EW_div_trunc;
            return MT_OK;
        }
        return mt_fail(MT_ERUNTIME,
                       "div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       "found '%s'",
                       s);
    case MT_EW_gelu:
    case MT_EW_gelu_backward:
        s = s ? s : "none";
        if (strcmp(s, "tanh") == 0) {
            *row = *row == MT_EW_gelu ? MT_EW_gelu_tanh : MT_EW_gelu_tanh_backward;
            return MT_OK;
        }
        if (strcmp(s, "none") == 0) {
            return MT_OK;
        }
        return mt_fail(MT_ERUNTIME, "approximate argument must be either none or tanh.");
    case MT_EW_elu_backward: /* is_result: the derivative from the result */
        *row = a->b[0] ? MT_EW_elu_backward_result : *row;
        return MT_OK;
    default:
        return MT_OK;
    }
}

/* dt, a dtype of c's loop, as PyTorch names it: where the dispatcher widened the call's small
 * dtypes (dispatch/widen.c) and dt is the computing dtype of its operands' dtypes as given, those
 * (uint8 with uint8 computes in int32 and is named 'Byte', as PyTorch's Byte loop would be) */
static mt_dtype
named_dtype(const ew_call *c, mt_dtype dt)
{
    const ew_row *r = &rows[c->row];
    mt_tensor *given[MT_EW_MAX_OPS - 1];
    int n = 0;
    bool widened = false;
    for (int k = 0; k < r->nin; k++) {
        if (c->ins[k] && !(r->bool_in >> k & 1u)) {
            given[n] = mt_widen_as_given(c->args, c->ins[k]);
            widened |= given[n] != c->ins[k];
            n++;
        }
    }
    if (!widened) {
        return dt;
    }
    const mt_dtype as_given = mt_result_type(given, n);
    return mt_dtype_compute(as_given) == dt ? as_given : dt;
}

static mt_status
not_implemented(const ew_call *c)
{
    const ew_row *r = &rows[c->row];
    char name[64];
    if (strcmp(c->dev->name, "cpu") == 0) { /* the op's own row: the kernel its arguments pick */
        snprintf(name, sizeof(name), "%s",
                 op_rows[c->op] - 1 == (int)c->row ? mt_ew_kernel_name(c->op, c->args) : r->kernel);
    } else {
        snprintf(name, sizeof(name), "%s_%s", r->name, c->dev->name);
    }
    return mt_fail(MT_ENOTIMPL, "\"%s\" not implemented for '%s'", name,
                   mt_dtype_scalar_name(named_dtype(c, c->dt)));
}

/* The out= tensor the caller offers (a->into[0]) where the loop can write c's result of dtype
 * dt there directly (ops/front.h's mt_front_dest: any layout, and an input that is out itself
 * computes in place), else NULL. */
static mt_tensor *
ew_dest(const ew_call *c, mt_args *a, int nin, mt_dtype dt)
{
    if (a->into[0] == NULL || c->inplace) {
        return NULL;
    }
    int ndim = 0;
    int64_t shape[MT_MAX_DIMS];
    mt_device dev = mt_tensor_device(c->ins[0]);
    for (int k = nin - 1; k >= 0; k--) { /* the first input's that is not a Python number */
        const mt_tensor *t = c->ins[k];
        dev = t->is_wrapped_number && mt_tensor_device(t).type == MT_CPU ? dev
                                                                         : mt_tensor_device(t);
        if (mt_broadcast_shapes(ndim, shape, t->ndim, t->sizes, &ndim, shape) != MT_OK) {
            return NULL; /* mt_ew_begin says why */
        }
    }
    return mt_front_dest(a, c->op, 0, dt, ndim, shape, NULL, dev, true);
}

mt_status
mt_ew_call(mt_op op, mt_ew_id row, mt_args *a, const mt_ew_device *dev)
{
    ew_call c;
    c.dev = dev;
    c.op = op;
    c.args = a;
    c.row = row;
    c.inplace = (mt_op_flags[op] & INPLACE) != 0;
    c.uses_k = false;
    c.k2 = c.k3 = mt_scalar_int(0);
    c.owned[0] = c.owned[1] = NULL;
    c.done = false;
    mt_status st = pick_row(a, &c.row);
    if (st) {
        return st;
    }
    const ew_row *r = &rows[c.row];
    for (int k = 0; k < MT_EW_MAX_OPS - 1; k++) {
        c.ins[k] = k < r->nin ? a->t[k] : NULL;
    }
    if ((st = mt_ew_check_first(op, a)) || (st = r->meta(&c, a)) || c.done) {
        goto out_release;
    }
    r = &rows[c.row]; /* the meta may pick another row of the same operands (round's decimals) */
    /* in place, a result self cannot hold is refused before the loop is looked for (PyTorch's
     * order: int.bitwise_left_shift_(float) is a cast error, not a missing float loop) */
    if (c.inplace &&
        (st = mt_check_inplace(mt_widen_as_given(a, a->t[0]), a->t[0]->ndim, a->t[0]->sizes,
                               r->bool_out ? MT_BOOL : named_dtype(&c, c.dt)))) {
        goto out_release;
    }
    if (!dev->has_loop(c.row, c.dt)) {
        st = not_implemented(&c);
        goto out_release;
    }
    mt_dtype in_dtypes[MT_EW_MAX_OPS - 1];
    for (int k = 0; k < r->nin; k++) {
        in_dtypes[k] = (r->bool_in >> k & 1u) ? MT_BOOL : c.dt;
    }
    const mt_dtype result = r->bool_out ? MT_BOOL : c.dt;
    mt_ew_plan p;
    st = mt_ew_begin(&p, &dev->backend, c.ins, r->nin, in_dtypes, result, c.inplace,
                     ew_dest(&c, a, r->nin, result));
    if (st) {
        goto out_release;
    }
    bool zero_div = false;
    if (c.uses_k && mt_scalar_is_none(c.k)) {
        c.k = mt_scalar_int(1);
    }
    const mt_scalar ks[MT_EW_MAX_K] = {c.k, c.k2, c.k3};
    st = mt_ew_end(&p, dev->run(&p, c.row, c.dt, c.uses_k ? ks : NULL, &zero_div), &a->out[0]);
    if (st == MT_OK && zero_div) {
        mt_tensor_clear(&a->out[0]);
        st = mt_fail(MT_ERUNTIME, "ZeroDivisionError");
    }
out_release:
    mt_tensor_clear(&c.owned[0]);
    mt_tensor_clear(&c.owned[1]);
    return st;
}
