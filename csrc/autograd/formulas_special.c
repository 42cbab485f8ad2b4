/* Backward formulas of torch.special's functions with kernels of their own (i0, i0e, i1, i1e,
 * ndtri, log_ndtr, erfcx, zeta), the incomplete gamma functions, nextafter and frexp's mantissa.
 *
 * Rows in formulas.def; each formula is PyTorch's (derivatives.yaml, FunctionsManual.cpp) as a
 * chain of ops (autograd/formula_chain.h), so it runs on every device and can itself be
 * differentiated. Where PyTorch has no formula for an input (zeta's and igamma's first argument)
 * the backward refuses with its message; the Bessel functions of special, gcd and lcm record
 * nothing (MT_NO_GRADIENT rows: their results have no grad_fn, as PyTorch's). */
#include <float.h>
#include <math.h>

#include "autograd/formula_chain.h"

#define SQRT_PI 1.77245385090551602730
#define SQRT_2PI 2.50662827463100050242

// i0: g * i1(x)
mt_status
mt_grad_i0(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    return chain(&s, g[0], un(&s, MT_OP_special_i1, n->saved[0]), &gi[0]);
}

// i0e: g * (i1e(x) - sgn(x) * i0e(x))
mt_status
mt_grad_special_i0e(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0];
    mt_tensor *signed_r = bin(&s, MT_OP_mul, un(&s, MT_OP_sign, x), n->saved_out[0]);
    return chain(&s, g[0], bin(&s, MT_OP_sub, un(&s, MT_OP_special_i1e, x), signed_r), &gi[0]);
}

/* i1 and i1e: g * (i0(x) - i1(x) / x), g * (i0e(x) - i1e(x) * (sgn(x) + 1 / x)); 1/2 where |x|
 * is within the dtype's epsilon of 0 (the limit; the formula there is 0/0), x kept away from 0
 * in the discarded branch so that its gradient stays finite (PyTorch's i1_backward) */
static mt_status
i1_backward(mt_node *n, mt_tensor *g, bool scaled, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0], *r = n->saved_out[0];
    const double eps = x->dtype == MT_FLOAT64 ? DBL_EPSILON : FLT_EPSILON;
    mt_tensor *big = bin(&s, MT_OP_gt, un(&s, MT_OP_abs, x), num(&s, eps));
    mt_tensor *safe = sel(&s, big, x, num(&s, eps));
    mt_tensor *inv = un(&s, MT_OP_reciprocal, safe);
    mt_tensor *d = NULL;
    if (scaled) {
        mt_tensor *factor = bin(&s, MT_OP_add, un(&s, MT_OP_sign, safe), inv);
        d = bin(&s, MT_OP_sub, un(&s, MT_OP_special_i0e, safe), bin(&s, MT_OP_mul, r, factor));
    } else {
        d = bin(&s, MT_OP_sub, un(&s, MT_OP_i0, safe), bin(&s, MT_OP_mul, r, inv));
    }
    return chain(&s, g, sel(&s, big, d, num(&s, 0.5)), out);
}

mt_status
mt_grad_special_i1(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return i1_backward(n, g[0], false, &gi[0]);
}

mt_status
mt_grad_special_i1e(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return i1_backward(n, g[0], true, &gi[0]);
}

// ndtri: g * sqrt(2 pi) * exp(ndtri(x)^2 / 2)
mt_status
mt_grad_special_ndtri(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *r = n->saved_out[0];
    mt_tensor *e = un(&s, MT_OP_exp, scaled(&s, bin(&s, MT_OP_mul, r, r), 0.5));
    return chain(&s, g[0], scaled(&s, e, SQRT_2PI), &gi[0]);
}

// log_ndtr: g / sqrt(2 pi) * exp(-(log_ndtr(x) + x^2 / 2)), the normal density over its cdf
mt_status
mt_grad_special_log_ndtr(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0];
    mt_tensor *half_sq = scaled(&s, bin(&s, MT_OP_mul, x, x), 0.5);
    mt_tensor *e = un(&s, MT_OP_exp,
                      un(&s, MT_OP_neg, bin(&s, MT_OP_add, n->saved_out[0], half_sq)));
    return chain(&s, g[0], scaled(&s, e, 1 / SQRT_2PI), &gi[0]);
}

// erfcx: g * (2 x erfcx(x) - 2 / sqrt(pi))
mt_status
mt_grad_special_erfcx(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *xr = scaled(&s, bin(&s, MT_OP_mul, n->saved[0], n->saved_out[0]), 2);
    return chain(&s, g[0], bin(&s, MT_OP_sub, xr, num(&s, 2 / SQRT_PI)), &gi[0]);
}

/* PyTorch's refusal of an input it has no formula for (derivatives.yaml's not_implemented) */
static mt_status
refused(const char *what)
{
    return mt_fail(MT_ENOTIMPL, "the derivative for '%s' is not implemented.", what);
}

// zeta(x, q): x has no formula; q gets g * -x * zeta(x + 1, q)
mt_status
mt_grad_special_zeta(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    if (wants(n, 0)) {
        return refused("zeta");
    }
    tmp s = {0};
    mt_tensor *x = n->saved[0];
    mt_tensor *z = bin(&s, MT_OP_special_zeta, bin(&s, MT_OP_add, x, num(&s, 1)), n->saved[1]);
    return chain(&s, g[0], un(&s, MT_OP_neg, bin(&s, MT_OP_mul, x, z)), &gi[1]);
}

/* igamma(a, x) and igammac: a has no formula; x gets +-g * exp((a - 1) log(x) - x - lgamma(a)),
 * the gamma density */
static mt_status
igamma_backward(mt_node *n, mt_tensor *g, double sign, const char *what, mt_tensor **gi)
{
    if (wants(n, 0)) {
        return refused(what);
    }
    tmp s = {0};
    mt_tensor *a = n->saved[0], *x = n->saved[1];
    mt_tensor *p = bin(&s, MT_OP_mul, bin(&s, MT_OP_sub, a, num(&s, 1)), un(&s, MT_OP_log, x));
    mt_tensor *e = bin(&s, MT_OP_sub, bin(&s, MT_OP_sub, p, x), un(&s, MT_OP_lgamma, a));
    return chain(&s, g, scaled(&s, un(&s, MT_OP_exp, e), sign), &gi[1]);
}

mt_status
mt_grad_igamma(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return igamma_backward(n, g[0], 1, "igamma: input", gi);
}

mt_status
mt_grad_igammac(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return igamma_backward(n, g[0], -1, "igammac: input", gi);
}

// nextafter(self, other): self gets g, 0 where self == other (the result is other there); other
// gets zeros
mt_status
mt_grad_nextafter(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    if (wants(n, 0)) {
        mt_tensor *same = bin(&s, MT_OP_eq, n->saved[0], n->saved[1]);
        give(&s, sel(&s, same, num(&s, 0), g[0]), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, zeros_of(&s, &n->in_meta[1]), &gi[1]);
    }
    return finish(&s);
}

// frexp's mantissa x / 2^e: g / 2^e
mt_status
mt_grad__frexp_mantissa(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *p = un(&s, MT_OP_exp2, un(&s, MT_OP__frexp_exponent, n->saved[0]));
    give(&s, bin(&s, MT_OP_div, g[0], p), &gi[0]);
    return finish(&s);
}

/* special_zeta's overloads: zeta.self_scalar, zeta.other_scalar (PyTorch's node names) */
const char *
mt_formula_special_overload_name(mt_op op, const mt_args *a)
{
    (void)op;
    if (a->t[0] != NULL && a->t[0]->is_wrapped_number) {
        return "SpecialZetaBackward1";
    }
    return a->t[1] != NULL && a->t[1]->is_wrapped_number ? "SpecialZetaBackward2" : NULL;
}
