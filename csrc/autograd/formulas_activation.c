/* Backward formulas of the activations. Most call their backward op (ops.def's rows
 * after gelu_backward) with the input or, for the in-place forms PyTorch numbers 1 (elu_,
 * leaky_relu_, celu_) and hardtanh_, with the result; glu and prelu's kernel are written with
 * ops. The backward ops have rows too, for double backward as derivatives.yaml has them: each
 * is linear in grad_output, so that gradient is the op applied to the incoming one; with
 * respect to self it is PyTorch's *_double_backward, zero for the piecewise-linear ones.
 * mish's derivative is written with ops under create_graph (PyTorch's
 * infinitely_differentiable_mish_backward), so mish_backward itself has none, as in PyTorch;
 * hardsigmoid_backward has one although PyTorch has none (see there). */
#include <string.h>

#include "autograd/formula_chain.h"

/* The tensor the row saved for x: the input, or (the in-place rows) the result. */
static mt_tensor *
self_or_result(const mt_node *n)
{
    return n->saved[0] ? n->saved[0] : n->saved_out[0];
}

static bool
from_result(const mt_node *n)
{
    return n->saved[0] == NULL;
}

mt_status
mt_grad_leaky_relu(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_leaky_relu_backward(g[0], self_or_result(n), n->args.s[0], from_result(n), &gi[0]);
}

// elu(self, alpha, scale, input_scale)
mt_status
mt_grad_elu(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_scalar *s = n->args.s;
    return mt_op_elu_backward(g[0], s[0], s[1], s[2], from_result(n), self_or_result(n), &gi[0]);
}

// celu(self, alpha) = elu(self, alpha, 1, 1 / alpha)
mt_status
mt_grad_celu(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_scalar inv = mt_scalar_float(1.0 / mt_scalar_to_double(n->args.s[0]));
    return mt_op_elu_backward(g[0], n->args.s[0], mt_scalar_float(1.0), inv, from_result(n),
                              self_or_result(n), &gi[0]);
}

mt_status
mt_grad_softplus(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_softplus_backward(g[0], n->saved[0], n->args.s[0], n->args.s[1], &gi[0]);
}

// hardtanh(self, min, max): from the result in place, inside (min, max) exactly where self is
mt_status
mt_grad_hardtanh(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_hardtanh_backward(g[0], self_or_result(n), n->args.s[0], n->args.s[1], &gi[0]);
}

// mish: g * (t + x * sigmoid(x) * (1 - t^2)), t = tanh(softplus(x))
mt_status
mt_grad_mish(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0];
    if (!mt_grad_enabled()) {
        return mt_op_mish_backward(g[0], x, &gi[0]);
    }
    tmp s = {0};
    mt_tensor *sp = NULL;
    mt_status st = mt_op_softplus(x, mt_scalar_int(1), mt_scalar_int(20), &sp);
    mt_tensor *t = un(&s, MT_OP_tanh, own(&s, st, &sp));
    mt_tensor *one_minus = bin(&s, MT_OP_sub, num(&s, 1.0), bin(&s, MT_OP_mul, t, t));
    mt_tensor *xs = bin(&s, MT_OP_mul, x, un(&s, MT_OP_sigmoid, x));
    return chain(&s, g[0], bin(&s, MT_OP_add, t, bin(&s, MT_OP_mul, xs, one_minus)), &gi[0]);
}

mt_status
mt_grad_hardswish(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_hardswish_backward(g[0], n->saved[0], &gi[0]);
}

mt_status
mt_grad_hardsigmoid(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_hardsigmoid_backward(g[0], n->saved[0], &gi[0]);
}

mt_status
mt_grad_log_sigmoid(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_log_sigmoid_backward(g[0], n->saved[0], &gi[0]);
}

mt_status
mt_grad_softshrink(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_softshrink_backward(g[0], n->saved[0], n->args.s[0], &gi[0]);
}

mt_status
mt_grad_hardshrink(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_hardshrink_backward(g[0], n->saved[0], n->args.s[0], &gi[0]);
}

// threshold(self, threshold, value) and threshold_ (the input kept as it was)
mt_status
mt_grad_threshold(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_threshold_backward(g[0], n->saved[0], n->args.s[0], &gi[0]);
}

// glu(self, dim) = a * sigmoid(b), a and b the halves of self along dim:
// d/da = g * sigmoid(b), d/db = g * a * sigmoid(b) * (1 - sigmoid(b)), joined along dim
mt_status
mt_grad_glu(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0], *r = NULL;
    int dim;
    if ((s.st = mt_wrap_dim(n->args.i[0], x->ndim, &dim))) {
        return finish(&s);
    }
    int64_t h = x->sizes[dim] / 2;
    mt_tensor *a = own(&s, mt_op_narrow(x, dim, 0, h, &r), &r);
    mt_tensor *b = s.st ? NULL : own(&s, mt_op_narrow(x, dim, h, h, &r), &r);
    mt_tensor *sig = un(&s, MT_OP_sigmoid, b);
    mt_tensor *halves[2];
    halves[0] = bin(&s, MT_OP_mul, g[0], sig);
    mt_tensor *dsig = bin(&s, MT_OP_mul, sig, bin(&s, MT_OP_sub, num(&s, 1.0), sig));
    halves[1] = bin(&s, MT_OP_mul, bin(&s, MT_OP_mul, g[0], a), dsig);
    if (!failed(&s, halves[0], halves[1])) {
        s.st = mt_op_cat(2, halves, dim, &gi[0]);
    }
    return finish(&s);
}

// _prelu_kernel(self, weight) = self > 0 ? self : weight * self: d/dself = g or weight * g,
// d/dweight = 0 or self * g (summed to weight's shape by the engine)
mt_status
mt_grad__prelu_kernel(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0], *w = n->saved[1];
    mt_tensor *pos = bin(&s, MT_OP_gt, x, num(&s, 0.0));
    if (wants(n, 0)) {
        give(&s, sel(&s, pos, g[0], bin(&s, MT_OP_mul, w, g[0])), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, sel(&s, pos, num(&s, 0.0), bin(&s, MT_OP_mul, x, g[0])), &gi[1]);
    }
    return finish(&s);
}

/* ---- the backward ops (double backward) ---- */

/* A backward op f(grad_output, x, ...)'s derivative with respect to x, written on s; gg_go is
 * the incoming gradient times grad_output (every such derivative has that factor). */
typedef mt_tensor *(*self_term_fn)(tmp *s, const mt_node *n, mt_tensor *gg_go, mt_tensor *x);

/* The gradients of a backward op f(grad_output, x, ...), t[0] and t[1]: f is linear in
 * grad_output, so that one is r = f(g, x, ...) (computed by the caller, with status st; taken
 * over); x's is self_term's, or zeros without one (piecewise-linear activations). */
static mt_status
backward_op_grads(mt_node *n, mt_tensor *g, mt_status st, mt_tensor *r, self_term_fn self_term,
                  mt_tensor **gi)
{
    tmp s = {0};
    r = own(&s, st, &r);
    if (r && wants(n, 0)) {
        give(&s, r, &gi[0]);
    }
    if (s.st == MT_OK && wants(n, 1)) {
        if (self_term) {
            give(&s, self_term(&s, n, bin(&s, MT_OP_mul, g, n->saved[0]), n->saved[1]), &gi[1]);
        } else {
            s.st = mt_ag_zeros(&n->in_meta[1], &gi[1]);
        }
    }
    return finish(&s);
}

mt_status
mt_grad_leaky_relu_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *r = NULL;
    mt_status st = mt_op_leaky_relu_backward(g[0], n->saved[1], n->args.s[0], n->args.b[0], &r);
    return backward_op_grads(n, g[0], st, r, NULL, gi);
}

mt_status
mt_grad_hardtanh_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *r = NULL;
    mt_status st = mt_op_hardtanh_backward(g[0], n->saved[1], n->args.s[0], n->args.s[1], &r);
    return backward_op_grads(n, g[0], st, r, NULL, gi);
}

// hardsigmoid_backward: PyTorch has no derivative of it (it refuses a second backward through
// hardsigmoid); it is linear in grad_output and constant in self, so this gives that one
mt_status
mt_grad_hardsigmoid_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *r = NULL;
    mt_status st = mt_op_hardsigmoid_backward(g[0], n->saved[1], &r);
    return backward_op_grads(n, g[0], st, r, NULL, gi);
}

mt_status
mt_grad_softshrink_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *r = NULL;
    mt_status st = mt_op_softshrink_backward(g[0], n->saved[1], n->args.s[0], &r);
    return backward_op_grads(n, g[0], st, r, NULL, gi);
}

mt_status
mt_grad_hardshrink_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *r = NULL;
    mt_status st = mt_op_hardshrink_backward(g[0], n->saved[1], n->args.s[0], &r);
    return backward_op_grads(n, g[0], st, r, NULL, gi);
}

mt_status
mt_grad_threshold_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *r = NULL;
    mt_status st = mt_op_threshold_backward(g[0], n->saved[1], n->args.s[0], &r);
    return backward_op_grads(n, g[0], st, r, NULL, gi);
}

/* elu_backward(grad_output, alpha, scale, input_scale, is_result, x): PyTorch's
 * elu_double_backward, where x <= 0 gg_go * input_scale (from the result), else
 * elu_backward(gg_go * input_scale, ..., x) */
static mt_tensor *
elu_self_term(tmp *s, const mt_node *n, mt_tensor *gg_go, mt_tensor *x)
{
    const mt_scalar *a = n->args.s;
    mt_tensor *base = scaled(s, gg_go, mt_scalar_to_double(a[2]));
    if (!n->args.b[0] && !failed(s, base, base)) {
        mt_tensor *e = NULL;
        mt_status st = mt_op_elu_backward(base, a[0], a[1], a[2], false, x, &e);
        base = own(s, st, &e);
    }
    return sel(s, bin(s, MT_OP_le, x, num(s, 0.0)), base, num(s, 0.0));
}

mt_status
mt_grad_elu_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_scalar *a = n->args.s;
    mt_tensor *r = NULL;
    mt_status st = mt_op_elu_backward(g[0], a[0], a[1], a[2], n->args.b[0], n->saved[1], &r);
    return backward_op_grads(n, g[0], st, r, elu_self_term, gi);
}

/* softplus_backward(grad_output, x, beta, threshold): PyTorch's softplus_double_backward,
 * gg_go * beta * z * (1 - z) where beta x < threshold, z = sigmoid(beta x) */
static mt_tensor *
softplus_self_term(tmp *s, const mt_node *n, mt_tensor *gg_go, mt_tensor *x)
{
    double beta = mt_scalar_to_double(n->args.s[0]);
    mt_tensor *bx = scaled(s, x, beta);
    mt_tensor *z = un(s, MT_OP_sigmoid, bx);
    mt_tensor *dz = bin(s, MT_OP_mul, z, bin(s, MT_OP_sub, num(s, 1.0), z));
    mt_tensor *below = bin(s, MT_OP_lt, bx, num(s, mt_scalar_to_double(n->args.s[1])));
    return sel(s, below, scaled(s, bin(s, MT_OP_mul, gg_go, dz), beta), num(s, 0.0));
}

mt_status
mt_grad_softplus_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *r = NULL;
    mt_status st = mt_op_softplus_backward(g[0], n->saved[1], n->args.s[0], n->args.s[1], &r);
    return backward_op_grads(n, g[0], st, r, softplus_self_term, gi);
}

/* hardswish_backward(grad_output, x): gg_go / 3 inside (-3, 3), else 0 */
static mt_tensor *
hardswish_self_term(tmp *s, const mt_node *n, mt_tensor *gg_go, mt_tensor *x)
{
    (void)n;
    mt_tensor *inside = bin(s, MT_OP_logical_and, bin(s, MT_OP_gt, x, num(s, -3.0)),
                            bin(s, MT_OP_lt, x, num(s, 3.0)));
    return sel(s, inside, bin(s, MT_OP_div, gg_go, num(s, 3.0)), num(s, 0.0));
}

mt_status
mt_grad_hardswish_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *r = NULL;
    mt_status st = mt_op_hardswish_backward(g[0], n->saved[1], &r);
    return backward_op_grads(n, g[0], st, r, hardswish_self_term, gi);
}

/* log_sigmoid_backward(grad_output, x): gg_go * (z - 1) * z, z = sigmoid(x) */
static mt_tensor *
log_sigmoid_self_term(tmp *s, const mt_node *n, mt_tensor *gg_go, mt_tensor *x)
{
    (void)n;
    mt_tensor *z = un(s, MT_OP_sigmoid, x);
    return bin(s, MT_OP_mul, gg_go, bin(s, MT_OP_mul, bin(s, MT_OP_sub, z, num(s, 1.0)), z));
}

mt_status
mt_grad_log_sigmoid_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *r = NULL;
    mt_status st = mt_op_log_sigmoid_backward(g[0], n->saved[1], &r);
    return backward_op_grads(n, g[0], st, r, log_sigmoid_self_term, gi);
}

/* gelu_backward(grad_output, x, approximate): gelu's second derivative times gg_go. Exact:
 * phi(x) (2 - x^2), phi the normal density. tanh: with u = k (x + c x^3) (k = sqrt(2 / pi),
 * c = 0.044715) and t = tanh(u), (1 - t^2) (u' - x t u'^2 + x u'' / 2), u' = k (1 + 3 c x^2)
 * and u'' = 6 k c x. */
static mt_tensor *
gelu_self_term(tmp *s, const mt_node *n, mt_tensor *gg_go, mt_tensor *x)
{
    mt_tensor *x2 = bin(s, MT_OP_mul, x, x);
    const char *approximate = n->args.str[0];
    if (approximate == NULL || strcmp(approximate, "tanh") != 0) {
        mt_tensor *phi = scaled(s, un(s, MT_OP_exp, scaled(s, x2, -0.5)), 0.3989422804014327);
        mt_tensor *d2 = bin(s, MT_OP_mul, phi, bin(s, MT_OP_sub, num(s, 2.0), x2));
        return bin(s, MT_OP_mul, gg_go, d2);
    }
    const double k = 0.7978845608028654, c = 0.044715;
    mt_tensor *u = scaled(s, bin(s, MT_OP_add, x, scaled(s, bin(s, MT_OP_mul, x2, x), c)), k);
    mt_tensor *t = un(s, MT_OP_tanh, u);
    mt_tensor *sech2 = bin(s, MT_OP_sub, num(s, 1.0), bin(s, MT_OP_mul, t, t));
    mt_tensor *du = scaled(s, bin(s, MT_OP_add, num(s, 1.0), scaled(s, x2, 3 * c)), k);
    mt_tensor *xt = bin(s, MT_OP_mul, x, t);
    mt_tensor *inner = bin(s, MT_OP_sub, du, bin(s, MT_OP_mul, xt, bin(s, MT_OP_mul, du, du)));
    inner = bin(s, MT_OP_add, inner, scaled(s, x2, 3 * k * c)); /* x u'' / 2 */
    return bin(s, MT_OP_mul, gg_go, bin(s, MT_OP_mul, sech2, inner));
}

mt_status
mt_grad_gelu_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *r = NULL;
    mt_status st = mt_op_gelu_backward(g[0], n->saved[1], n->args.str[0], &r);
    return backward_op_grads(n, g[0], st, r, gelu_self_term, gi);
}
