/* Backward formulas of the elementwise math: unary functions, activations, powers, division
 * with rounding, remainders, clamps, maximum/minimum, where, masked_fill; and baddbmm, addmv.
 *
 * Rows in formulas.def (PyTorch's derivatives.yaml as C; the same inputs saved as PyTorch
 * saves, so in-place changes fail alike). Each formula is a chain of ops through the
 * dispatcher (autograd/formula_chain.h): a scratch list (tmp) owns the intermediates, a failed
 * step makes every later one a no-op, and finish() releases them all on every path. */
#include <math.h>
#include <string.h>

#include "autograd/formula_chain.h"

/* ---- unary math: g times f'(x), from the input or the result, as PyTorch saves ---- */

#define LN2 0.69314718055994530942
#define LN10 2.30258509299404568402

// sqrt: g / (2 * conj(result))
mt_status
mt_grad_sqrt(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    give(&s, bin(&s, MT_OP_div, g[0], scaled(&s, conj_of(&s, n->saved_out[0]), 2.0)), &gi[0]);
    return finish(&s);
}

// rsqrt: -0.5 * g * result^3
mt_status
mt_grad_rsqrt(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *cube = bin(&s, MT_OP_pow, n->saved_out[0], num(&s, 3.0));
    return chain(&s, g[0], scaled(&s, cube, -0.5), &gi[0]);
}

mt_status
mt_grad_sin(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    return chain(&s, g[0], un(&s, MT_OP_cos, n->saved[0]), &gi[0]);
}

mt_status
mt_grad_cos(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    return chain(&s, g[0], un(&s, MT_OP_neg, un(&s, MT_OP_sin, n->saved[0])), &gi[0]);
}

// abs: g * sign(x), so 0 at 0 as PyTorch
mt_status
mt_grad_abs(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    return chain(&s, g[0], un(&s, MT_OP_sign, n->saved[0]), &gi[0]);
}

// sign: a step, zero gradient almost everywhere (PyTorch gives zeros, not None)
// sign, and the in-place comparisons of a float self (eq_ ...): 0 for each input
mt_status
mt_grad_zeros(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    (void)g;
    mt_status st = MT_OK;
    for (int e = 0; st == MT_OK && e < n->nedges; e++) {
        st = wants(n, e) ? mt_ag_zeros(&n->in_meta[e], &gi[e]) : MT_OK;
    }
    return st;
}

// bernoulli(self): zeros for the probabilities; bernoulli(self, p) has no derivative in PyTorch
mt_status
mt_grad_bernoulli(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    if (!mt_scalar_is_none(n->args.s[0])) {
        return mt_fail(MT_ERUNTIME, "derivative for aten::bernoulli is not implemented");
    }
    return mt_grad_zeros(n, g, gi);
}

// log1p: g / conj(x + 1)
mt_status
mt_grad_log1p(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *x1 = bin(&s, MT_OP_add, n->saved[0], num(&s, 1.0));
    give(&s, bin(&s, MT_OP_div, g[0], conj_of(&s, x1)), &gi[0]);
    return finish(&s);
}

// exp2: g * result * ln 2
mt_status
mt_grad_exp2(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    return chain(&s, g[0], scaled(&s, n->saved_out[0], LN2), &gi[0]);
}

// expm1: g * (result + 1)
mt_status
mt_grad_expm1(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    return chain(&s, g[0], bin(&s, MT_OP_add, n->saved_out[0], num(&s, 1.0)), &gi[0]);
}

/* log_b: g / conj(x * ln b) */
static mt_status
log_base_backward(mt_node *n, mt_tensor *g, double ln_base, mt_tensor **out)
{
    tmp s = {0};
    give(&s, bin(&s, MT_OP_div, g, scaled(&s, conj_of(&s, n->saved[0]), ln_base)), out);
    return finish(&s);
}

mt_status
mt_grad_log2(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return log_base_backward(n, g[0], LN2, &gi[0]);
}

mt_status
mt_grad_log10(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return log_base_backward(n, g[0], LN10, &gi[0]);
}

// reciprocal: -g * result^2
mt_status
mt_grad_reciprocal(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *r = n->saved_out[0];
    return chain(&s, g[0], un(&s, MT_OP_neg, bin(&s, MT_OP_mul, r, r)), &gi[0]);
}

// gelu: a kernel of its own (the exact form's derivative needs erf)
mt_status
mt_grad_gelu(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_gelu_backward(g[0], n->saved[0], n->args.str[0], &gi[0]);
}

// silu: g * sigmoid(x) * (1 + x * (1 - sigmoid(x))): silu_backward's one pass, or, where the
// backward itself records (create_graph), these ops (silu_backward has no derivative; PyTorch's
// SiluBackward0 chooses alike)
mt_status
mt_grad_silu(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0];
    if (!mt_grad_enabled()) {
        return mt_op_silu_backward(g[0], x, &gi[0]);
    }
    tmp s = {0};
    mt_tensor *sig = un(&s, MT_OP_sigmoid, x);
    mt_tensor *one = num(&s, 1.0);
    mt_tensor *inner = bin(&s, MT_OP_mul, x, bin(&s, MT_OP_sub, one, sig));
    return chain(&s, g[0], bin(&s, MT_OP_mul, sig, bin(&s, MT_OP_add, inner, one)), &gi[0]);
}

/* ---- powers ---- */

static double
item(const mt_tensor *t)
{
    mt_scalar v;
    return mt_tensor_item(t, &v) == MT_OK ? mt_scalar_to_double(v) : NAN;
}

void
mt_saves_pow(const mt_args *a, unsigned *save_inputs, bool *save_outputs)
{
    (void)save_inputs;
    if (a->t[1] && a->t[1]->is_wrapped_number) { /* the exponent's gradient is none */
        *save_outputs = false;
    }
}

/* e >= 0; for a complex e, a real number >= 0 (imaginary part 0), as PyTorch's */
static mt_tensor *
nonnegative(tmp *s, mt_tensor *e)
{
    if (!mt_dtype_is_complex(e->dtype)) {
        return bin(s, MT_OP_ge, e, num(s, 0.0));
    }
    mt_tensor *r = NULL, *re = NULL, *im = NULL;
    mt_tensor *parts = s->st ? NULL : own(s, mt_op_view_as_real(e, &r), &r);
    mt_tensor *real = s->st ? NULL : own(s, mt_op_select(parts, parts->ndim - 1, 0, &re), &re);
    mt_tensor *imag = s->st ? NULL : own(s, mt_op_select(parts, parts->ndim - 1, 1, &im), &im);
    return bin(s, MT_OP_logical_and, bin(s, MT_OP_ge, real, num(s, 0.0)),
               bin(s, MT_OP_eq, imag, num(s, 0.0)));
}

// pow(self, exponent), either a Python number:
//   d/dself = g * exponent * self^(exponent - 1), 0 where exponent is 0
//   d/dexponent = g * result * log(self), 0 where self is 0 and exponent >= 0
mt_status
mt_grad_pow(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *self = n->saved[0], *e = n->saved[1];
    if (wants(n, 0) && e && e->is_wrapped_number && !mt_dtype_is_complex(e->dtype)) {
        double v = item(e);
        mt_tensor *d = v == 0.0 ? zeros_of(&s, &n->in_meta[0])
                                : scaled(&s, bin(&s, MT_OP_pow, self, num(&s, v - 1.0)), v);
        give(&s, v == 0.0 ? d : bin(&s, MT_OP_mul, g[0], conj_of(&s, d)), &gi[0]);
    } else if (wants(n, 0)) {
        mt_tensor *power = bin(&s, MT_OP_pow, self, bin(&s, MT_OP_sub, e, num(&s, 1.0)));
        mt_tensor *d = bin(&s, MT_OP_mul, e, power);
        mt_tensor *zero_e = bin(&s, MT_OP_eq, e, num(&s, 0.0));
        give(&s, sel(&s, zero_e, num(&s, 0.0), bin(&s, MT_OP_mul, g[0], conj_of(&s, d))), &gi[0]);
    }
    if (wants(n, 1) && s.st == MT_OK) {
        mt_tensor *r = n->saved_out[0], *log_self;
        if (self->is_wrapped_number && !mt_dtype_is_complex(n->out_meta[0].dtype)) {
            log_self = num(&s, log(item(self)));
        } else if (self->dtype != n->out_meta[0].dtype) {
            /* an integer base, or a number base of a complex result: its log in the result's
             * dtype, as PyTorch promotes it */
            mt_tensor *c = NULL;
            mt_status st = mt_op__to_copy(self, n->out_meta[0].dtype, n->out_meta[0].device, &c);
            log_self = un(&s, MT_OP_log, own(&s, st, &c));
        } else {
            log_self = un(&s, MT_OP_log, self);
        }
        mt_tensor *flat = bin(&s, MT_OP_logical_and, bin(&s, MT_OP_eq, self, num(&s, 0.0)),
                              nonnegative(&s, e));
        mt_tensor *d = sel(&s, flat, num(&s, 0.0), bin(&s, MT_OP_mul, r, log_self));
        give(&s, bin(&s, MT_OP_mul, g[0], conj_of(&s, d)), &gi[1]);
    }
    return finish(&s);
}

/* ---- division and remainders ---- */

// self / other: d/dself = g / conj(other), d/dother = -g * conj((self / other) / other) (conj: of
// a complex value, PyTorch's convention; real values as they are), rounded in PyTorch's order: the
// two terms of x / x's gradient then cancel to the same residue; with a rounding mode the result
// is a step function of both, and PyTorch gives them zero gradients
mt_status
mt_grad_div(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    if (n->args.str[0]) {
        for (int e = 0; e < 2; e++) {
            if (wants(n, e)) {
                give(&s, zeros_of(&s, &n->in_meta[e]), &gi[e]);
            }
        }
        return finish(&s);
    }
    mt_tensor *other = n->saved[1];
    if (wants(n, 0)) {
        give(&s, bin(&s, MT_OP_div, g[0], conj_of(&s, other)), &gi[0]);
    }
    if (wants(n, 1)) {
        mt_tensor *x = bin(&s, MT_OP_div, bin(&s, MT_OP_div, n->saved[0], other), other);
        give(&s, un(&s, MT_OP_neg, bin(&s, MT_OP_mul, g[0], conj_of(&s, x))), &gi[1]);
    }
    return finish(&s);
}

/* self - other * rounded(self / other): d/dself = g, d/dother = -g * rounded(self / other) */
static mt_status
mod_backward(mt_node *n, mt_tensor *g, mt_tensor **gi, const char *rounding, const char *op)
{
    tmp s = {0};
    if (wants(n, 0)) {
        give(&s, g, &gi[0]);
    }
    mt_tensor *self = wants(n, 1) ? n->saved[0] : NULL;
    if (self && self->is_wrapped_number) {
        /* PyTorch has no formula for a Python-number dividend either */
        s.st = mt_fail(MT_ERUNTIME, "derivative for aten::%s is not implemented", op);
    } else if (self) {
        mt_tensor *other = n->saved[1], *r = NULL;
        mt_tensor *q = other ? own(&s, mt_op_div(self, other, rounding, &r), &r) : NULL;
        give(&s, un(&s, MT_OP_neg, bin(&s, MT_OP_mul, g, q)), &gi[1]);
    }
    return finish(&s);
}

mt_status
mt_grad_remainder(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mod_backward(n, g[0], gi, "floor", "remainder");
}

mt_status
mt_grad_fmod(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mod_backward(n, g[0], gi, "trunc", "fmod");
}

// floor_divide, _addmm_activation: PyTorch records a node (NotImplemented) whose backward refuses
mt_status
mt_grad_not_implemented(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    (void)g, (void)gi;
    const char *op = mt_op_names[n->formula->op];
    /* the in-place form's node names the op itself */
    size_t len = strlen(op) - (op[strlen(op) - 1] == '_' ? 1 : 0);
    return mt_fail(MT_ERUNTIME, "derivative for aten::%.*s is not implemented", (int)len, op);
}

/* ---- clamps and selections: the gradient goes where the value came from ---- */

/* mask ? g : 0 */
static mt_tensor *
pass(tmp *s, mt_tensor *mask, mt_tensor *g)
{
    return sel(s, mask, g, num(s, 0.0));
}

// clamp(self, min, max), bounds numbers or tensors: self gets g where min <= self <= max; a
// tensor min gets g where self < min (and min < max), a tensor max where self > max (or
// max < min, where max wins), PyTorch's subgradients at the bounds
mt_status
mt_grad_clamp(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *self = n->saved[0], *lo = n->saved[1], *hi = n->saved[2] /* NULL: absent */;
    if (wants(n, 0)) {
        mt_tensor *ge = lo ? bin(&s, MT_OP_ge, self, lo) : NULL;
        mt_tensor *le = hi ? bin(&s, MT_OP_le, self, hi) : NULL;
        mt_tensor *in = ge && le ? bin(&s, MT_OP_logical_and, ge, le) : ge ? ge : le;
        give(&s, pass(&s, in, g[0]), &gi[0]);
    }
    if (wants(n, 1)) {
        mt_tensor *below = bin(&s, MT_OP_lt, self, lo);
        if (hi) {
            below = bin(&s, MT_OP_logical_and, below, bin(&s, MT_OP_lt, lo, hi));
        }
        give(&s, pass(&s, below, g[0]), &gi[1]);
    }
    if (wants(n, 2)) {
        mt_tensor *above = bin(&s, MT_OP_gt, self, hi);
        if (lo) {
            above = bin(&s, MT_OP_logical_or, above, bin(&s, MT_OP_lt, hi, lo));
        }
        give(&s, pass(&s, above, g[0]), &gi[2]);
    }
    return finish(&s);
}

// clamp_max(self, max): g where self <= max
mt_status
mt_grad_clamp_max(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *hi = NULL;
    mt_status st = mt_tensor_scalar(n->args.s[0], n->args.s[0].type, &hi);
    mt_tensor *le = bin(&s, MT_OP_le, n->saved[0], own(&s, st, &hi));
    give(&s, pass(&s, le, g[0]), &gi[0]);
    return finish(&s);
}

/* maximum (larger) or minimum: g goes to the chosen input, half to each on a tie */
static mt_status
extremum_backward(mt_node *n, mt_tensor *g, mt_tensor **gi, bool larger)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0], *y = n->saved[1];
    mt_tensor *split = sel(&s, bin(&s, MT_OP_eq, x, y), scaled(&s, g, 0.5), g);
    mt_tensor *zero = num(&s, 0.0);
    if (wants(n, 0)) {
        give(&s, sel(&s, bin(&s, larger ? MT_OP_lt : MT_OP_gt, x, y), zero, split), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, sel(&s, bin(&s, larger ? MT_OP_gt : MT_OP_lt, x, y), zero, split), &gi[1]);
    }
    return finish(&s);
}

mt_status
mt_grad_maximum(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return extremum_backward(n, g[0], gi, true);
}

mt_status
mt_grad_minimum(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return extremum_backward(n, g[0], gi, false);
}

// hypot(self, other): g * self / result, g * other / result
mt_status
mt_grad_hypot(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *q = bin(&s, MT_OP_div, g[0], n->saved_out[0]);
    for (int e = 0; e < 2; e++) {
        if (wants(n, e)) {
            give(&s, bin(&s, MT_OP_mul, q, n->saved[e]), &gi[e]);
        }
    }
    return finish(&s);
}

// where(condition, input, other): edges input, other
mt_status
mt_grad_where(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *cond = n->saved[0], *zero = num(&s, 0.0);
    if (wants(n, 0)) {
        give(&s, sel(&s, cond, g[0], zero), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, sel(&s, cond, zero, g[0]), &gi[1]);
    }
    return finish(&s);
}

// masked_fill(self, mask, value): edges self, value; a 0-dim tensor value gets the sum of g
// over the mask (the engine sums the broadcast gradient down to its shape)
mt_status
mt_grad_masked_fill(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *mask = n->saved[1], *zero = num(&s, 0.0);
    if (wants(n, 0)) {
        give(&s, sel(&s, mask, zero, g[0]), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, sel(&s, mask, g[0], zero), &gi[1]);
    }
    return finish(&s);
}

/* ---- products ---- */

// self (b, n, m) or broadcast to it, batch1 (b, n, k), batch2 (b, k, m):
// beta * self + alpha * batch1 @ batch2; complex: d/dbatch1 = conj(alpha) g @ batch2^H,
// d/dbatch2 = conj(alpha) batch1^H @ g, d/dself = conj(beta) g
mt_status
mt_grad_baddbmm(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    const mt_scalar beta = n->args.s[0], alpha = n->args.s[1];
    if (wants(n, 0)) {
        give(&s, times_conj(&s, g[0], beta), &gi[0]);
    }
    for (int e = 1; e < 3 && s.st == MT_OK; e++) {
        if (!wants(n, e)) {
            continue;
        }
        mt_tensor *t = NULL, *p = NULL;
        /* batch1's gradient needs batch2, and back */
        mt_tensor *other = conj_of(&s, n->saved[3 - e]);
        mt_status st = other ? mt_op_transpose(other, 1, 2, &t) : s.st;
        t = own(&s, st, &t);
        if (t) {
            st = e == 1 ? mt_op_bmm(g[0], t, &p) : mt_op_bmm(t, g[0], &p);
            give(&s, times_conj(&s, own(&s, st, &p), alpha), &gi[e]);
        }
    }
    return finish(&s);
}

// self (n) or broadcast to it, mat (n, k), vec (k): beta * self + alpha * mat @ vec; complex:
// d/dmat = conj(alpha) g outer conj(vec), d/dvec = conj(alpha) mat^H @ g, d/dself = conj(beta) g
mt_status
mt_grad_addmv(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    const mt_scalar beta = n->args.s[0], alpha = n->args.s[1];
    mt_tensor *t = NULL;
    mt_status st;
    if (wants(n, 0)) {
        give(&s, times_conj(&s, g[0], beta), &gi[0]);
    }
    if (wants(n, 1) && s.st == MT_OK) {
        st = mt_op_unsqueeze(g[0], 1, &t);
        mt_tensor *outer = bin(&s, MT_OP_mul, own(&s, st, &t), conj_of(&s, n->saved[2]));
        give(&s, times_conj(&s, outer, alpha), &gi[1]);
    }
    mt_tensor *mat = wants(n, 2) && s.st == MT_OK ? conj_of(&s, n->saved[1]) : NULL;
    if (mat) {
        mt_tensor *mt = NULL, *p = NULL;
        st = mt_op_t(mat, &mt);
        mt = own(&s, st, &mt);
        if (mt) {
            st = mt_op_mv(mt, g[0], &p);
            give(&s, times_conj(&s, own(&s, st, &p), alpha), &gi[2]);
        }
    }
    return finish(&s);
}

/* ---- PyTorch's overloads: one op here, several node names there ---- */

static bool
is_number(const mt_tensor *t)
{
    return t != NULL && t->is_wrapped_number;
}

/* The overloads PyTorch numbers apart (pow(Tensor, Tensor): PowBackward1 ...). */
const char *
mt_formula_math_overload_name(mt_op op, const mt_args *a)
{
    switch (op) {
    case MT_OP_rsub: /* rsub.Scalar (1 - x is x.__rsub__(1)), rsub.Tensor */
        return is_number(a->t[1]) ? "RsubBackward1" : NULL;
    case MT_OP_pow:
    case MT_OP_pow_:
        return is_number(a->t[0])   ? "PowBackward2"
               : is_number(a->t[1]) ? "PowBackward0"
                                    : "PowBackward1";
    case MT_OP_div:
    case MT_OP_div_:
        return a->str[0] ? "DivBackward2" : NULL;
    case MT_OP_remainder:
    case MT_OP_remainder_:
        return is_number(a->t[0])   ? "NotImplemented"
               : is_number(a->t[1]) ? "RemainderBackward0"
                                    : "RemainderBackward1";
    case MT_OP_fmod:
    case MT_OP_fmod_:
        return is_number(a->t[1]) ? "FmodBackward0" : "FmodBackward1";
    case MT_OP_clamp:
    case MT_OP_clamp_:
        /* clamp.Tensor when a bound is a tensor, else clamp (Scalar bounds) */
        return (a->t[1] && !is_number(a->t[1])) || (a->t[2] && !is_number(a->t[2]))
                   ? "ClampBackward0"
                   : "ClampBackward1";
    case MT_OP_masked_fill:
    case MT_OP_masked_fill_:
        return is_number(a->t[2]) ? "MaskedFillBackward0" : "MaskedFillBackward1";
    case MT_OP_eq_: /* eq_.Scalar: EqBackward0, eq_.Tensor: EqBackward1 */
        return is_number(a->t[1]) ? "EqBackward0" : "EqBackward1";
    case MT_OP_ne_:
        return is_number(a->t[1]) ? "NeBackward0" : "NeBackward1";
    case MT_OP_lt_:
        return is_number(a->t[1]) ? "LtBackward0" : "LtBackward1";
    case MT_OP_le_:
        return is_number(a->t[1]) ? "LeBackward0" : "LeBackward1";
    case MT_OP_gt_:
        return is_number(a->t[1]) ? "GtBackward0" : "GtBackward1";
    case MT_OP_ge_:
        return is_number(a->t[1]) ? "GeBackward0" : "GeBackward1";
    case MT_OP_normal: /* normal.Tensor_float, float_Tensor, Tensor_Tensor */
        return is_number(a->t[1])   ? "NormalBackward1"
               : is_number(a->t[0]) ? "NormalBackward2"
                                    : "NormalBackward3";
    case MT_OP_bernoulli_: /* bernoulli_.float, bernoulli_.Tensor */
        return is_number(a->t[1]) ? "BernoulliBackward2" : NULL;
    case MT_OP_random_: /* random_(), random_.to, random_.from */
        return mt_scalar_is_none(a->s[0])   ? "RandomBackward2"
               : mt_scalar_is_none(a->s[1]) ? "RandomBackward1"
                                            : NULL;
    case MT_OP_bernoulli: /* bernoulli.p has no derivative */
        return mt_scalar_is_none(a->s[0]) ? NULL : "NotImplemented";
    default:
        return NULL;
    }
}

// _standard_gamma: g times the draws' reparameterised derivative in the concentrations
mt_status
mt_grad__standard_gamma(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    return chain(&s, g[0], bin(&s, MT_OP__standard_gamma_grad, n->saved[0], n->saved_out[0]),
                 &gi[0]);
}
