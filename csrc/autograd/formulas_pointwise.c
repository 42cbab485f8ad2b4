/* Backward formulas of the everyday pointwise ops: rounding, the trigonometric and
 * special functions, the float pairs (copysign, atan2, logaddexp, xlogy, fmax/fmin), lerp,
 * addcmul/addcdiv, nan_to_num, and logcumsumexp.
 *
 * Rows in formulas.def; each formula is PyTorch's (derivatives.yaml, FunctionsManual.cpp) as a
 * chain of ops (autograd/formula_chain.h), so it runs on every device and can itself be
 * differentiated. Rounding has zero gradients (mt_grad_zeros), frac the identity
 * (mt_grad_identity); heaviside has no row: its backward refuses, as PyTorch's. */
#include <float.h>
#include <math.h>

#include "autograd/formula_chain.h"

#define SQRT_PI 1.77245385090551602730
#define PI 3.14159265358979323846

/* ---- unary functions: g times f'(x) ---- */

// erf: g * 2 / sqrt(pi) * exp(-x^2); erfc: its negative
static mt_status
erf_backward(mt_node *n, mt_tensor *g, double sign, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0];
    mt_tensor *e = un(&s, MT_OP_exp, un(&s, MT_OP_neg, bin(&s, MT_OP_mul, x, x)));
    return chain(&s, g, scaled(&s, e, sign * 2 / SQRT_PI), out);
}

mt_status
mt_grad_erf(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return erf_backward(n, g[0], 1, &gi[0]);
}

mt_status
mt_grad_erfc(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return erf_backward(n, g[0], -1, &gi[0]);
}

// erfinv: 0.5 * sqrt(pi) * exp(erfinv(x)^2) * g
mt_status
mt_grad_erfinv(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *y = un(&s, MT_OP_erfinv, n->saved[0]);
    mt_tensor *d = scaled(&s, un(&s, MT_OP_exp, bin(&s, MT_OP_mul, y, y)), 0.5 * SQRT_PI);
    give(&s, bin(&s, MT_OP_mul, d, g[0]), &gi[0]);
    return finish(&s);
}

/* g * polygamma(order, x): lgamma's derivative is digamma (order 0), digamma's trigamma */
static mt_status
polygamma_backward(mt_tensor *x, int64_t order, mt_tensor *g, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *d = NULL;
    mt_status st = mt_op_polygamma(order, x, &d);
    return chain(&s, g, own(&s, st, &d), out);
}

mt_status
mt_grad_lgamma(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return polygamma_backward(n->saved[0], 0, g[0], &gi[0]);
}

mt_status
mt_grad_digamma(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return polygamma_backward(n->saved[0], 1, g[0], &gi[0]);
}

// polygamma(n, x): g * polygamma(n + 1, x)
mt_status
mt_grad_polygamma(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return polygamma_backward(n->saved[0], n->args.i[0] + 1, g[0], &gi[0]);
}

mt_status
mt_grad_sinh(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    return chain(&s, g[0], un(&s, MT_OP_cosh, n->saved[0]), &gi[0]);
}

mt_status
mt_grad_cosh(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    return chain(&s, g[0], un(&s, MT_OP_sinh, n->saved[0]), &gi[0]);
}

// tan: g * (1 + result^2)
mt_status
mt_grad_tan(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *r = n->saved_out[0];
    return chain(&s, g[0], bin(&s, MT_OP_add, bin(&s, MT_OP_mul, r, r), num(&s, 1)), &gi[0]);
}

/* sign * g * conj(rsqrt(a * x^2 + b)): asin (-x^2 + 1), acos (its negative), asinh (x^2 + 1),
 * acosh (x^2 - 1) */
static mt_status
rsqrt_backward(mt_node *n, mt_tensor *g, double sign, double a, double b, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0];
    mt_tensor *q = bin(&s, MT_OP_add, scaled(&s, bin(&s, MT_OP_mul, x, x), a), num(&s, b));
    mt_tensor *gs = sign < 0 ? un(&s, MT_OP_neg, g) : g;
    return chain(&s, gs, un(&s, MT_OP_rsqrt, q), out);
}

mt_status
mt_grad_asin(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return rsqrt_backward(n, g[0], 1, -1, 1, &gi[0]);
}

mt_status
mt_grad_acos(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return rsqrt_backward(n, g[0], -1, -1, 1, &gi[0]);
}

mt_status
mt_grad_asinh(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return rsqrt_backward(n, g[0], 1, 1, 1, &gi[0]);
}

// acosh: g * conj(rsqrt(x^2 - 1)); of a complex x, g * conj(rsqrt(x + 1) * rsqrt(x - 1)), which
// keeps the principal branch's sign where x^2 - 1 crosses the negative reals (as PyTorch's)
mt_status
mt_grad_acosh(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0];
    if (!mt_dtype_is_complex(x->dtype)) {
        return rsqrt_backward(n, g[0], 1, 1, -1, &gi[0]);
    }
    tmp s = {0};
    mt_tensor *up = un(&s, MT_OP_rsqrt, bin(&s, MT_OP_add, x, num(&s, 1.0)));
    mt_tensor *down = un(&s, MT_OP_rsqrt, bin(&s, MT_OP_sub, x, num(&s, 1.0)));
    return chain(&s, g[0], bin(&s, MT_OP_mul, up, down), &gi[0]);
}

/* asinh_, acosh_ and atanh_: PyTorch has no formula for the in-place forms (the input is gone) */
static mt_status
inplace_refused(const char *name)
{
    return mt_fail(MT_ENOTIMPL, "the derivative for 'inplace version of %s' is not implemented.",
                   name);
}

mt_status
mt_grad_asinh_(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    (void)n, (void)g, (void)gi;
    return inplace_refused("asinh");
}

mt_status
mt_grad_acosh_(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    (void)n, (void)g, (void)gi;
    return inplace_refused("acosh");
}

mt_status
mt_grad_atanh_(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    (void)n, (void)g, (void)gi;
    return inplace_refused("atanh");
}

/* g / conj(a * x^2 + b): atan (x^2 + 1), atanh (1 - x^2) */
static mt_status
quotient_backward(mt_node *n, mt_tensor *g, double a, double b, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0];
    mt_tensor *q = bin(&s, MT_OP_add, scaled(&s, bin(&s, MT_OP_mul, x, x), a), num(&s, b));
    give(&s, bin(&s, MT_OP_div, g, conj_of(&s, q)), out);
    return finish(&s);
}

mt_status
mt_grad_atan(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return quotient_backward(n, g[0], 1, 1, &gi[0]);
}

mt_status
mt_grad_atanh(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return quotient_backward(n, g[0], -1, 1, &gi[0]);
}

// deg2rad, rad2deg: g times the constant
mt_status
mt_grad_deg2rad(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    (void)n;
    give(&s, scaled(&s, g[0], PI / 180), &gi[0]);
    return finish(&s);
}

mt_status
mt_grad_rad2deg(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    (void)n;
    give(&s, scaled(&s, g[0], 180 / PI), &gi[0]);
    return finish(&s);
}

// nan_to_num: g where x is finite, else 0 (as a product: a NaN of g stays)
mt_status
mt_grad_nan_to_num(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    return chain(&s, g[0], un(&s, MT_OP_isfinite, n->saved[0]), &gi[0]);
}

/* ---- the float pairs ---- */

// copysign(self, other): g * result / self, 0 where self is 0; other gets zeros
mt_status
mt_grad_copysign(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *self = n->saved[0];
    if (wants(n, 0)) {
        mt_tensor *ratio = bin(&s, MT_OP_div, n->saved_out[0], self);
        ratio = sel(&s, bin(&s, MT_OP_eq, self, num(&s, 0)), num(&s, 0), ratio);
        give(&s, bin(&s, MT_OP_mul, g[0], ratio), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, zeros_of(&s, &n->in_meta[1]), &gi[1]);
    }
    return finish(&s);
}

// atan2(self, other): g * other / (self^2 + other^2), g * -self / (self^2 + other^2), both 0
// where the denominator is 0 (as PyTorch's, which gives 0 at the origin, not NaN)
mt_status
mt_grad_atan2(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0], *y = n->saved[1], *zero = num(&s, 0);
    mt_tensor *denom = bin(&s, MT_OP_add, bin(&s, MT_OP_mul, x, x), bin(&s, MT_OP_mul, y, y));
    mt_tensor *recip = sel(&s, bin(&s, MT_OP_eq, denom, zero), zero,
                           un(&s, MT_OP_reciprocal, denom));
    if (wants(n, 0)) {
        give(&s, bin(&s, MT_OP_mul, bin(&s, MT_OP_mul, g[0], y), recip), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, bin(&s, MT_OP_mul, bin(&s, MT_OP_mul, g[0], un(&s, MT_OP_neg, x)), recip), &gi[1]);
    }
    return finish(&s);
}

/* logaddexp (base e) and logaddexp2: each input gets g / conj(1 + base^(the other - itself)) */
static mt_status
logaddexp_backward(mt_node *n, mt_tensor *g, bool base2, mt_tensor **gi)
{
    tmp s = {0};
    for (int e = 0; e < 2; e++) {
        if (!wants(n, e)) {
            continue;
        }
        mt_tensor *diff = bin(&s, MT_OP_sub, n->saved[1 - e], n->saved[e]);
        mt_tensor *p = base2 ? bin(&s, MT_OP_pow, num(&s, 2), diff) : un(&s, MT_OP_exp, diff);
        give(&s, bin(&s, MT_OP_div, g, conj_of(&s, bin(&s, MT_OP_add, num(&s, 1), p))), &gi[e]);
    }
    return finish(&s);
}

mt_status
mt_grad_logaddexp(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return logaddexp_backward(n, g[0], false, gi);
}

mt_status
mt_grad_logaddexp2(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return logaddexp_backward(n, g[0], true, gi);
}

// xlogy(self, other): xlogy(g, other), 0 where self is 0 and other <= 0 (PyTorch's choice where
// x log y is undefined; for a number other: unless other > 0), and g * self / other
mt_status
mt_grad_xlogy(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0], *y = n->saved[1];
    if (wants(n, 0)) {
        mt_tensor *zero = num(&s, 0);
        mt_tensor *undefined = y->is_wrapped_number
                                   ? un(&s, MT_OP_logical_not, bin(&s, MT_OP_gt, y, zero))
                                   : bin(&s, MT_OP_le, y, zero);
        mt_tensor *mask = bin(&s, MT_OP_logical_and, bin(&s, MT_OP_eq, x, zero), undefined);
        give(&s, sel(&s, mask, zero, bin(&s, MT_OP_xlogy, g[0], y)), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, bin(&s, MT_OP_div, bin(&s, MT_OP_mul, g[0], x), y), &gi[1]);
    }
    return finish(&s);
}

/* fmax (larger) and fmin: self gets g where it was chosen (self >= other, <= for fmin, or
 * other NaN), other the rest */
static mt_status
fextremum_backward(mt_node *n, mt_tensor *g, mt_tensor **gi, bool larger)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0], *y = n->saved[1], *zero = num(&s, 0);
    mt_tensor *picked = bin(&s, MT_OP_logical_or, bin(&s, larger ? MT_OP_ge : MT_OP_le, x, y),
                            un(&s, MT_OP_isnan, y));
    if (wants(n, 0)) {
        give(&s, sel(&s, picked, g, zero), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, sel(&s, picked, zero, g), &gi[1]);
    }
    return finish(&s);
}

mt_status
mt_grad_fmax(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return fextremum_backward(n, g[0], gi, true);
}

mt_status
mt_grad_fmin(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return fextremum_backward(n, g[0], gi, false);
}

/* ---- the ternaries ---- */

void
mt_saves_lerp(const mt_args *a, unsigned *save_inputs, bool *save_outputs)
{
    (void)save_outputs;
    if (a->t[2]->is_wrapped_number) { /* a number weight: only it is needed */
        *save_inputs = 0x4;
    }
}

/* 1 - w; for a number weight the number 1 - w in double (or complex128), as PyTorch's
 * (1 - weight.toComplexDouble()): two numbers would meet in the default float */
static mt_tensor *
one_minus(tmp *s, mt_tensor *w)
{
    if (s->st || !w->is_wrapped_number) {
        return bin(s, MT_OP_sub, num(s, 1), w);
    }
    mt_scalar v;
    mt_tensor *r = NULL;
    s->st = mt_tensor_item(w, &v);
    if (s->st) {
        return NULL;
    }
    const double re = 1 - mt_scalar_to_double(v);
    const mt_scalar d = v.is_complex ? mt_scalar_complex(re, -v.imag) : mt_scalar_float(re);
    return own(s, mt_tensor_scalar(d, v.is_complex ? MT_COMPLEX128 : MT_FLOAT64, &r), &r);
}

// lerp(self, end, weight): g * conj(1 - weight), g * conj(weight), g * conj(end - self)
mt_status
mt_grad_lerp(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *w = n->saved[2];
    if (wants(n, 0)) {
        give(&s, bin(&s, MT_OP_mul, g[0], conj_of(&s, one_minus(&s, w))), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, bin(&s, MT_OP_mul, g[0], conj_of(&s, w)), &gi[1]);
    }
    if (wants(n, 2)) {
        mt_tensor *d = bin(&s, MT_OP_sub, n->saved[1], n->saved[0]);
        give(&s, bin(&s, MT_OP_mul, g[0], conj_of(&s, d)), &gi[2]);
    }
    return finish(&s);
}

// addcmul(self, tensor1, tensor2, value): g, g * conj(tensor2 * value), g * conj(tensor1 * value)
mt_status
mt_grad_addcmul(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    if (wants(n, 0)) {
        give(&s, g[0], &gi[0]);
    }
    for (int e = 1; e < 3; e++) {
        if (wants(n, e)) {
            mt_tensor *other = conj_of(&s, n->saved[3 - e]);
            give(&s, bin(&s, MT_OP_mul, times_conj(&s, g[0], n->args.s[0]), other), &gi[e]);
        }
    }
    return finish(&s);
}

// addcdiv(self, tensor1, tensor2, value): g, g * conj(value / tensor2),
// -g * conj(value * tensor1 / tensor2^2)
mt_status
mt_grad_addcdiv(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *t1 = n->saved[1], *t2 = conj_of(&s, n->saved[2]);
    mt_tensor *gv = wants(n, 1) || wants(n, 2) ? times_conj(&s, g[0], n->args.s[0]) : NULL;
    if (wants(n, 0)) {
        give(&s, g[0], &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, bin(&s, MT_OP_div, gv, t2), &gi[1]);
    }
    if (wants(n, 2)) {
        mt_tensor *q = bin(&s, MT_OP_div, conj_of(&s, t1), bin(&s, MT_OP_mul, t2, t2));
        give(&s, bin(&s, MT_OP_mul, un(&s, MT_OP_neg, gv), q), &gi[2]);
    }
    return finish(&s);
}

/* ---- logcumsumexp ---- */

/* flip(logcumsumexp(flip(x))) along dim: the sums from each element to the end */
static mt_tensor *
reverse_logcumsumexp(tmp *s, mt_tensor *x, int64_t dim)
{
    mt_tensor *f = NULL, *l = NULL, *r = NULL;
    if (failed(s, x, x)) {
        return NULL;
    }
    mt_status st = mt_op_flip(x, 1, &dim, &f);
    f = own(s, st, &f);
    if (f) {
        st = mt_op_logcumsumexp(f, dim, &l);
        l = own(s, st, &l);
    }
    if (l) {
        st = mt_op_flip(l, 1, &dim, &r);
        r = own(s, st, &r);
    }
    return r;
}

// logcumsumexp(x, dim) = result: PyTorch's logcumsumexp_backward, the positive and negative
// parts of g apart in log space: exp(rev_lcse(log g+ - result) + x) - exp(rev_lcse(log g- -
// result) + x), log 0 standing in as the dtype's lowest value
mt_status
mt_grad_logcumsumexp(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0], *r = n->saved_out[0];
    if (g[0]->ndim == 0 || mt_tensor_numel(g[0]) == 0) {
        give(&s, g[0], &gi[0]);
        return finish(&s);
    }
    const int64_t dim = n->args.i[0];
    mt_tensor *lowest = num(&s, g[0]->dtype == MT_FLOAT32 ? -FLT_MAX : -DBL_MAX);
    mt_tensor *log_abs = un(&s, MT_OP_log, un(&s, MT_OP_abs, g[0]));
    mt_tensor *zero = num(&s, 0), *part[2];
    for (int k = 0; k < 2; k++) {
        mt_tensor *side = bin(&s, k == 0 ? MT_OP_gt : MT_OP_lt, g[0], zero);
        mt_tensor *log_g = sel(&s, side, log_abs, lowest);
        mt_tensor *sums = reverse_logcumsumexp(&s, bin(&s, MT_OP_sub, log_g, r), dim);
        part[k] = un(&s, MT_OP_exp, bin(&s, MT_OP_add, sums, x));
    }
    give(&s, bin(&s, MT_OP_sub, part[0], part[1]), &gi[0]);
    return finish(&s);
}

/* ---- PyTorch's overloads: one op here, several node names there ---- */

static bool
is_number(const mt_tensor *t)
{
    return t != NULL && t->is_wrapped_number;
}

const char *
mt_formula_pointwise_overload_name(mt_op op, const mt_args *a)
{
    switch (op) {
    case MT_OP_round:
    case MT_OP_round_: /* round.decimals */
        return a->i[0] != 0 ? "RoundBackward1" : NULL;
    case MT_OP_copysign:
    case MT_OP_copysign_: /* copysign.Scalar */
        return is_number(a->t[1]) ? "CopysignBackward1" : NULL;
    case MT_OP_xlogy:
    case MT_OP_xlogy_: /* xlogy.Scalar_Self, xlogy.Scalar_Other */
        return is_number(a->t[0]) ? "XlogyBackward1" : is_number(a->t[1]) ? "XlogyBackward2" : NULL;
    case MT_OP_lerp:
    case MT_OP_lerp_: /* lerp.Tensor */
        return is_number(a->t[2]) ? NULL : "LerpBackward1";
    default:
        return NULL;
    }
}
