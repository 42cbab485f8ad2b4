/* Backward formulas of the reductions and scans: prod, amax/amin, max/min (full and along a dim),
 * norm, var/std, logsumexp, cumsum, cumprod, softmax, log_softmax (PyTorch's derivatives.yaml and
 * FunctionsManual.cpp, as ops). argmax/argmin are not differentiable and have no row. */
#include <math.h>
#include <string.h>

#include "autograd/formulas_shape.h"

static mt_status
mul(mt_tensor *x, mt_tensor *y, mt_tensor **out)
{
    return mt_ag_binary(MT_OP_mul, x, y, out);
}

static mt_status
ones(const mt_tensor *like, int ndim, const int64_t *sizes, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.l[0].none = false;
    a.l[0].n = ndim;
    memcpy(a.l[0].v, sizes, sizeof(int64_t) * (size_t)ndim);
    a.dtype = (int)like->dtype;
    a.has_device = true;
    a.device = mt_tensor_device(like);
    return mt_ags_call(MT_OP_ones, &a, out);
}

/* *out = x along dim d with every element replaced by the product of the others on its line:
 * the exclusive cumulative products from the left times those from the right (PyTorch's
 * prod_safe_zeros_backward: no division, so zeros are fine). */
static mt_status
others_product(mt_tensor *x, int d, mt_tensor **out)
{
    int64_t size = x->sizes[d], one[MT_MAX_DIMS];
    memcpy(one, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    one[d] = 1;
    mt_tensor *o = NULL, *head = NULL, *tail = NULL, *rtail = NULL, *cat = NULL, *left = NULL;
    mt_tensor *rc = NULL, *right = NULL;
    mt_status st = ones(x, x->ndim, one, &o);
    if (st == MT_OK && (st = mt_op_narrow(x, d, 0, size - 1, &head)) == MT_OK) {
        mt_tensor *parts[2] = {o, head};
        if ((st = mt_op_cat(2, parts, d, &cat)) == MT_OK) {
            st = mt_ags_along(MT_OP_cumprod, cat, d, &left);
        }
        mt_tensor_clear(&cat);
    }
    if (st == MT_OK && (st = mt_op_narrow(x, d, 1, size - 1, &tail)) == MT_OK &&
        (st = mt_ags_along(MT_OP_flip, tail, d, &rtail)) == MT_OK) {
        mt_tensor *parts[2] = {o, rtail};
        if ((st = mt_op_cat(2, parts, d, &cat)) == MT_OK &&
            (st = mt_ags_along(MT_OP_cumprod, cat, d, &rc)) == MT_OK) {
            st = mt_ags_along(MT_OP_flip, rc, d, &right);
        }
    }
    if (st == MT_OK) {
        st = mul(left, right, out);
    }
    mt_tensor_clear(&o);
    mt_tensor_clear(&head);
    mt_tensor_clear(&tail);
    mt_tensor_clear(&rtail);
    mt_tensor_clear(&cat);
    mt_tensor_clear(&left);
    mt_tensor_clear(&rc);
    mt_tensor_clear(&right);
    return st;
}

// self (S) -> prod over dim (or all): gi = g * (the product of the other elements)
G(prod_backward)
{
    SAVED(0, self);
    const mt_meta *m = &n->in_meta[0];
    int64_t numel = mt_numel(m->ndim, m->sizes), one = 1;
    if (numel == 0) {
        return mt_ag_zeros(m, &gi[0]);
    }
    bool all = (n->args.i_none & 1u) || m->ndim == 0;
    bool red[MT_MAX_DIMS] = {false};
    mt_tensor *x = NULL, *gk = NULL, *others = NULL, *p = NULL;
    mt_status st = MT_OK;
    int d = 0;
    if (all) { /* the product of everything is the product along the flattened input */
        if ((st = mt_op_reshape(self, 1, &numel, &x)) == MT_OK) {
            st = mt_op_reshape(g[0], 1, &one, &gk);
        }
    } else if ((st = mt_wrap_dim(n->args.i[0], m->ndim, &d)) == MT_OK) {
        red[d] = true;
        x = mt_tensor_retain(self);
        st = mt_ags_keep(g[0], m, red, &gk);
    }
    if (st == MT_OK && (st = others_product(x, d, &others)) == MT_OK &&
        (st = mul(gk, others, &p)) == MT_OK) {
        st = mt_op_reshape(p, m->ndim, m->sizes, &gi[0]);
    }
    mt_tensor_clear(&x);
    mt_tensor_clear(&gk);
    mt_tensor_clear(&others);
    mt_tensor_clear(&p);
    return st;
}

/* amax, amin, max, min: g split evenly among the elements equal to the result. */
static mt_status
evenly(mt_node *n, const mt_intlist *dims, mt_tensor *g, mt_tensor **out)
{
    SAVED(0, self);
    RESULT(res);
    bool red[MT_MAX_DIMS];
    mt_ags_reduced(&n->in_meta[0], dims, red);
    mt_tensor *rk = NULL, *gk = NULL, *mask = NULL, *count = NULL, *q = NULL;
    mt_status st = mt_ags_keep(res, &n->in_meta[0], red, &rk);
    if (st == MT_OK && (st = mt_ags_keep(g, &n->in_meta[0], red, &gk)) == MT_OK &&
        (st = mt_ag_binary(MT_OP_eq, self, rk, &mask)) == MT_OK &&
        (st = mt_ags_sum_keep(mask, red, &count)) == MT_OK &&
        (st = mt_ag_binary(MT_OP_div, gk, count, &q)) == MT_OK) {
        st = mul(q, mask, out);
    }
    mt_tensor_clear(&rk);
    mt_tensor_clear(&gk);
    mt_tensor_clear(&mask);
    mt_tensor_clear(&count);
    mt_tensor_clear(&q);
    return st;
}

G(amax_backward)
{
    return evenly(n, &n->args.l[0], g[0], &gi[0]);
}

G(max_backward)
{
    mt_intlist all = {.n = 0, .none = true};
    return evenly(n, &all, g[0], &gi[0]);
}

/* max_dim, min_dim, sort, topk: g goes to the positions the values came from. Those indices
 * are an integer output, which the node does not keep, so the op runs again on the saved input
 * (the same deterministic kernel, hence the same indices); dim_slot is the int slot of dim. */
static mt_status
to_indices(mt_node *n, mt_op op, int dim_slot, mt_tensor *g, mt_tensor **out)
{
    SAVED(0, self);
    const mt_meta *m = &n->in_meta[0];
    if (m->ndim == 0) {
        *out = mt_tensor_retain(g);
        return MT_OK;
    }
    int d;
    mt_status st = mt_wrap_dim(n->args.i[dim_slot], m->ndim, &d);
    if (st) {
        return st;
    }
    mt_args a = n->args;
    a.t[0] = self;
    if (op == MT_OP_max_dim || op == MT_OP_min_dim) {
        a.b[0] = true; /* keepdim: indices shaped for scatter */
    }
    bool was = mt_grad_enabled();
    mt_set_grad_enabled(false);
    st = mt_dispatch(op, &a);
    mt_set_grad_enabled(was);
    if (st) {
        return st;
    }
    mt_tensor *idx = a.out[1], *gk = NULL, *z = NULL;
    mt_tensor_release(a.out[0]);
    bool red[MT_MAX_DIMS] = {false};
    red[d] = true;
    if (op == MT_OP_max_dim || op == MT_OP_min_dim) {
        st = mt_ags_keep(g, m, red, &gk);
    } else {
        gk = mt_tensor_retain(g); /* sort, topk: values shaped like their indices */
    }
    if (st == MT_OK && (st = mt_ag_zeros(m, &z)) == MT_OK) {
        mt_args s;
        mt_args_init(&s);
        s.t[0] = z;
        s.i[0] = d;
        s.t[1] = idx;
        s.t[2] = gk;
        st = mt_ags_call(MT_OP_scatter, &s, out);
    }
    mt_tensor_release(idx);
    mt_tensor_clear(&gk);
    mt_tensor_clear(&z);
    return st;
}

G(max_dim_backward)
{
    return to_indices(n, MT_OP_max_dim, 0, g[0], &gi[0]);
}

G(min_dim_backward)
{
    return to_indices(n, MT_OP_min_dim, 0, g[0], &gi[0]);
}

G(sort_backward)
{
    return to_indices(n, MT_OP_sort, 0, g[0], &gi[0]);
}

G(topk_backward)
{
    return to_indices(n, MT_OP_topk, 1, g[0], &gi[0]);
}

/* The two factors of norm's gradient, gi = scaled * scale, for p not 0, 1, 2 (PyTorch's
 * norm_backward): sign(x) |x|^(p-1) and g / norm^(p-1). Where x or the norm is 0, the factors
 * are taken at 1 instead of 0 (so nothing is inf): the other factor is 0 there, which gives
 * PyTorch's 0 with ops that all have formulas, so the backward is differentiable. */
static mt_status
norm_factors(mt_tensor *self, mt_tensor *nk, mt_tensor *gk, double p, const bool *red,
             mt_tensor **scaled, mt_tensor **scale)
{
    mt_tensor *sg = NULL, *ab = NULL, *base = NULL, *pw = NULL, *t = NULL, *den = NULL;
    mt_status st = mt_ag_unary(MT_OP_sign, self, &sg);
    if (st == MT_OK) {
        st = mt_ag_unary(MT_OP_abs, self, &ab);
    }
    if (st == MT_OK && isinf(p)) { /* the derivative of max |x|, split among the ties */
        mt_tensor *count = NULL;
        if ((st = mt_ag_binary(MT_OP_eq, ab, nk, &t)) == MT_OK &&
            (st = mt_ags_sum_keep(t, red, &count)) == MT_OK &&
            (st = mul(sg, t, scaled)) == MT_OK) {
            st = mt_ag_binary(MT_OP_div, gk, count, scale);
        }
        mt_tensor_clear(&count);
    } else if (st == MT_OK) {
        bool small = p < 1, big = p >= 2;
        /* x |x|^(p-2) for p >= 2, else sign(x) |x|^(p-1) with |x| taken at 1 where x is 0 */
        if ((st = small ? mt_ags_nonzero(ab, &base) : (base = mt_tensor_retain(ab), MT_OK)) ==
                MT_OK &&
            (st = mt_ags_with_number(MT_OP_pow, base, big ? p - 2 : p - 1, &pw)) == MT_OK) {
            st = mul(big ? self : sg, pw, scaled);
        }
        if (st == MT_OK && small) { /* g * norm^(1-p) */
            if ((st = mt_ags_with_number(MT_OP_pow, nk, 1 - p, &t)) == MT_OK) {
                st = mul(gk, t, scale);
            }
        } else if (st == MT_OK && (st = mt_ags_with_number(MT_OP_pow, nk, p - 1, &t)) == MT_OK &&
                   (st = mt_ags_nonzero(t, &den)) == MT_OK) { /* g / norm^(p-1) */
            st = mt_ag_binary(MT_OP_div, gk, den, scale);
        }
    }
    mt_tensor_clear(&sg);
    mt_tensor_clear(&ab);
    mt_tensor_clear(&base);
    mt_tensor_clear(&pw);
    mt_tensor_clear(&t);
    mt_tensor_clear(&den);
    return st;
}

// self (S) -> the p-norm over dims: p = 1: sign(x) g; p = 2: x g / norm (0 where norm is 0,
// where x is 0 too: the norm is taken at 1 there)
G(norm_backward)
{
    SAVED(0, self);
    RESULT(res);
    const mt_meta *m = &n->in_meta[0];
    double p = mt_scalar_is_none(n->args.s[0]) ? 2.0 : mt_scalar_to_double(n->args.s[0]);
    if (p == 0) {
        return mt_ag_zeros(m, &gi[0]);
    }
    bool red[MT_MAX_DIMS];
    mt_ags_reduced(m, &n->args.l[0], red);
    mt_tensor *gk = NULL, *nk = NULL, *den = NULL, *scaled = NULL, *scale = NULL;
    mt_status st = mt_ags_keep(g[0], m, red, &gk);
    if (st == MT_OK && p == 1) {
        if ((st = mt_ag_unary(MT_OP_sign, self, &scaled)) == MT_OK) {
            st = mul(scaled, gk, &gi[0]);
        }
    } else if (st == MT_OK && (st = mt_ags_keep(res, m, red, &nk)) == MT_OK && p == 2) {
        if ((st = mt_ags_nonzero(nk, &den)) == MT_OK &&
            (st = mt_ag_binary(MT_OP_div, gk, den, &scale)) == MT_OK) {
            st = mul(self, scale, &gi[0]);
        }
    } else if (st == MT_OK &&
               (st = norm_factors(self, nk, gk, p, red, &scaled, &scale)) == MT_OK) {
        st = mul(scaled, scale, &gi[0]);
    }
    mt_tensor_clear(&gk);
    mt_tensor_clear(&nk);
    mt_tensor_clear(&den);
    mt_tensor_clear(&scaled);
    mt_tensor_clear(&scale);
    return st;
}

/* var's gradient for a gradient gv of the variance: 2 / (N - correction) * gv * (x - mean). */
static mt_status
var_grad(mt_node *n, mt_tensor *self, mt_tensor *gv, mt_tensor **out)
{
    const mt_meta *m = &n->in_meta[0];
    bool red[MT_MAX_DIMS];
    mt_ags_reduced(m, &n->args.l[0], red);
    double count = 1, correction;
    for (int d = 0; d < m->ndim; d++) {
        count *= red[d] ? (double)m->sizes[d] : 1.0;
    }
    if (mt_scalar_is_none(n->args.s[0])) {
        correction = n->args.b[0] ? 1.0 : 0.0;
    } else {
        correction = mt_scalar_to_double(n->args.s[0]);
    }
    mt_args a;
    mt_args_init(&a);
    a.t[0] = self;
    a.l[0].none = m->ndim == 0;
    for (int d = 0; d < m->ndim; d++) {
        if (red[d]) {
            a.l[0].v[a.l[0].n++] = d;
        }
    }
    a.b[0] = true;
    mt_tensor *mean = NULL, *dev = NULL, *gk = NULL, *p = NULL;
    mt_status st = mt_ags_call(MT_OP_mean, &a, &mean);
    if (st == MT_OK && (st = mt_ag_binary(MT_OP_sub, self, mean, &dev)) == MT_OK &&
        (st = mt_ags_keep(gv, m, red, &gk)) == MT_OK && (st = mul(gk, dev, &p)) == MT_OK) {
        st = mt_ag_scale(p, 2.0 / (count - correction), out);
    }
    mt_tensor_clear(&mean);
    mt_tensor_clear(&dev);
    mt_tensor_clear(&gk);
    mt_tensor_clear(&p);
    return st;
}

G(var_backward)
{
    SAVED(0, self);
    return var_grad(n, self, g[0], &gi[0]);
}

// std = sqrt(var): g / (2 std) through var's gradient; where std is 0, x - mean is 0 too and
// 2 std is taken at 1, which gives PyTorch's 0
G(std_backward)
{
    SAVED(0, self);
    RESULT(res);
    mt_tensor *twice = NULL, *den = NULL, *gv = NULL;
    mt_status st = mt_ag_scale(res, 2.0, &twice);
    if (st == MT_OK && (st = mt_ags_nonzero(twice, &den)) == MT_OK &&
        (st = mt_ag_binary(MT_OP_div, g[0], den, &gv)) == MT_OK) {
        st = var_grad(n, self, gv, &gi[0]);
    }
    mt_tensor_clear(&twice);
    mt_tensor_clear(&den);
    mt_tensor_clear(&gv);
    return st;
}

// self (S) -> logsumexp over dims: g * exp(x - result)
G(logsumexp_backward)
{
    SAVED(0, self);
    RESULT(res);
    const mt_meta *m = &n->in_meta[0];
    bool red[MT_MAX_DIMS];
    mt_ags_reduced(m, &n->args.l[0], red);
    mt_tensor *rk = NULL, *gk = NULL, *d = NULL, *e = NULL;
    mt_status st = mt_ags_keep(res, m, red, &rk);
    if (st == MT_OK && (st = mt_ags_keep(g[0], m, red, &gk)) == MT_OK &&
        (st = mt_ag_binary(MT_OP_sub, self, rk, &d)) == MT_OK &&
        (st = mt_ag_unary(MT_OP_exp, d, &e)) == MT_OK) {
        st = mul(gk, e, &gi[0]);
    }
    mt_tensor_clear(&rk);
    mt_tensor_clear(&gk);
    mt_tensor_clear(&d);
    mt_tensor_clear(&e);
    return st;
}

/* *out = the cumulative sum of x along dim d taken from the end. */
static mt_status
reversed_cumsum(mt_tensor *x, int d, mt_tensor **out)
{
    mt_tensor *f = NULL, *c = NULL;
    mt_status st = mt_ags_along(MT_OP_flip, x, d, &f);
    if (st == MT_OK && (st = mt_ags_along(MT_OP_cumsum, f, d, &c)) == MT_OK) {
        st = mt_ags_along(MT_OP_flip, c, d, out);
    }
    mt_tensor_clear(&f);
    mt_tensor_clear(&c);
    return st;
}

G(cumsum_backward)
{
    int d;
    if (n->in_meta[0].ndim == 0) {
        gi[0] = mt_tensor_retain(g[0]);
        return MT_OK;
    }
    mt_status st = mt_wrap_dim(n->args.i[0], n->in_meta[0].ndim, &d);
    return st ? st : reversed_cumsum(g[0], d, &gi[0]);
}

/* cumprod's gradient at the first zero z of each line (0 elsewhere): y[z-1] times
 * sum over i >= z of g[i] * prod(x[z+1..i]). cz is the running count of zeros, zero x == 0. */
static mt_status
at_first_zero(mt_tensor *x, mt_tensor *g, mt_tensor *cz, mt_tensor *zero, int d, mt_tensor **out)
{
    mt_tensor *nz = NULL, *before = NULL, *one = NULL, *first = NULL, *upto = NULL, *xb = NULL;
    mt_tensor *xa = NULL, *head = NULL, *tail = NULL, *gt = NULL, *from = NULL, *gtm = NULL;
    mt_tensor *s = NULL, *hs = NULL;
    bool red[MT_MAX_DIMS] = {false};
    red[d] = true;
    mt_status st = mt_ags_with_number(MT_OP_ne, cz, 0, &nz);
    if (st == MT_OK && (st = mt_ags_with_number(MT_OP_eq, cz, 0, &before)) == MT_OK &&
        (st = mt_ags_with_number(MT_OP_eq, cz, 1, &one)) == MT_OK &&
        (st = mt_ag_binary(MT_OP_logical_and, zero, one, &first)) == MT_OK &&
        (st = mt_ag_binary(MT_OP_logical_or, before, first, &upto)) == MT_OK &&
        /* head: the product before the first zero; tail: cumprod with 1s up to it */
        (st = mt_ags_one_where(x, nz, &xb)) == MT_OK &&
        (st = mt_ags_along(MT_OP_cumprod, xb, d, &head)) == MT_OK &&
        (st = mt_ags_one_where(x, upto, &xa)) == MT_OK &&
        (st = mt_ags_along(MT_OP_cumprod, xa, d, &tail)) == MT_OK &&
        (st = mul(g, tail, &gt)) == MT_OK &&
        (st = mt_ags_with_number(MT_OP_ge, cz, 1, &from)) == MT_OK &&
        (st = mul(gt, from, &gtm)) == MT_OK && (st = mt_ags_sum_keep(gtm, red, &s)) == MT_OK) {
        /* head's last element along d is the whole product before the first zero */
        mt_tensor *last = NULL;
        if ((st = mt_op_narrow(head, d, x->sizes[d] - 1, 1, &last)) == MT_OK &&
            (st = mul(last, s, &hs)) == MT_OK) {
            st = mul(hs, first, out);
        }
        mt_tensor_clear(&last);
    }
    mt_tensor *all[] = {nz, before, one, first, upto, xb, xa, head, tail, gt, from, gtm, s, hs};
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
        mt_tensor_clear(&all[k]);
    }
    return st;
}

// self (S) -> cumprod along d: gi[k] = sum over i >= k of g[i] * y[i] / x[k] before the first
// zero of the line, the at_first_zero term at it, 0 after it (PyTorch's cumprod_backward)
G(cumprod_backward)
{
    SAVED(0, self);
    RESULT(res);
    const mt_meta *m = &n->in_meta[0];
    int d;
    if (m->ndim == 0 || mt_numel(m->ndim, m->sizes) <= 1) {
        gi[0] = mt_tensor_retain(g[0]);
        return MT_OK;
    }
    mt_status st = mt_wrap_dim(n->args.i[0], m->ndim, &d);
    if (st) {
        return st;
    }
    mt_tensor *gy = NULL, *rc = NULL, *zero = NULL, *cz = NULL, *nz = NULL, *xs = NULL;
    mt_tensor *a = NULL, *b = NULL;
    if ((st = mul(g[0], res, &gy)) == MT_OK && (st = reversed_cumsum(gy, d, &rc)) == MT_OK &&
        (st = mt_ags_with_number(MT_OP_eq, self, 0, &zero)) == MT_OK &&
        (st = mt_ags_along(MT_OP_cumsum, zero, d, &cz)) == MT_OK &&
        (st = mt_ags_with_number(MT_OP_ne, cz, 0, &nz)) == MT_OK &&
        /* from the first zero on, y and so rc are exactly 0: divide by 1 there instead */
        (st = mt_ags_one_where(self, nz, &xs)) == MT_OK &&
        (st = mt_ag_binary(MT_OP_div, rc, xs, &a)) == MT_OK &&
        (st = at_first_zero(self, g[0], cz, zero, d, &b)) == MT_OK) {
        st = mt_ag_binary(MT_OP_add, a, b, &gi[0]);
    }
    mt_tensor *all[] = {gy, rc, zero, cz, nz, xs, a, b};
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
        mt_tensor_clear(&all[k]);
    }
    return st;
}

/* softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g), sums along dim */
static mt_status
softmax_grad(mt_node *n, mt_tensor *g, bool log, mt_tensor **out)
{
    RESULT(y);
    bool red[MT_MAX_DIMS] = {false};
    int d;
    mt_status st = mt_wrap_dim(n->args.i[0], n->in_meta[0].ndim, &d);
    if (st) {
        return st;
    }
    red[d] = n->in_meta[0].ndim > 0;
    mt_tensor *gy = NULL, *s = NULL, *e = NULL, *p = NULL;
    if (log) {
        if ((st = mt_ags_sum_keep(g, red, &s)) == MT_OK &&
            (st = mt_ag_unary(MT_OP_exp, y, &e)) == MT_OK && (st = mul(e, s, &p)) == MT_OK) {
            st = mt_ag_binary(MT_OP_sub, g, p, out);
        }
    } else if ((st = mul(g, y, &gy)) == MT_OK && (st = mt_ags_sum_keep(gy, red, &s)) == MT_OK &&
               (st = mt_ag_binary(MT_OP_sub, g, s, &p)) == MT_OK) {
        st = mul(y, p, out);
    }
    mt_tensor_clear(&gy);
    mt_tensor_clear(&s);
    mt_tensor_clear(&e);
    mt_tensor_clear(&p);
    return st;
}

G(softmax_backward)
{
    return softmax_grad(n, g[0], false, &gi[0]);
}

G(log_softmax_backward)
{
    return softmax_grad(n, g[0], true, &gi[0]);
}

void
mt_autograd_register_reduce(void)
{
    /* prod's node is ProdBackward0 for the full product; PyTorch's prod(dim) is ProdBackward1,
     * an overload the table cannot tell apart (as sum's, which autograd.c names by hand) */
    ROW(prod, "ProdBackward0", prod_backward, 0x1, false, 0x1, false, false);
    ROW(amax, "AmaxBackward0", amax_backward, 0x1, false, 0x1, true, false);
    ROW(amin, "AminBackward0", amax_backward, 0x1, false, 0x1, true, false);
    ROW(max, "MaxBackward1", max_backward, 0x1, false, 0x1, true, false);
    ROW(min, "MinBackward1", max_backward, 0x1, false, 0x1, true, false);
    ROW(max_dim, "MaxBackward0", max_dim_backward, 0x1, false, 0x1, false, false);
    ROW(min_dim, "MinBackward0", min_dim_backward, 0x1, false, 0x1, false, false);
    ROW(sort, "SortBackward0", sort_backward, 0x1, false, 0x1, false, false);
    ROW(topk, "TopkBackward0", topk_backward, 0x1, false, 0x1, false, false);
    ROW(norm, "LinalgVectorNormBackward0", norm_backward, 0x1, false, 0x1, true, false);
    ROW(var, "VarBackward0", var_backward, 0x1, false, 0x1, false, false);
    ROW(std, "StdBackward0", std_backward, 0x1, false, 0x1, true, false);
    ROW(logsumexp, "LogsumexpBackward0", logsumexp_backward, 0x1, false, 0x1, true, false);
    ROW(cumsum, "CumsumBackward0", cumsum_backward, 0x1, false, 0, false, false);
    ROW(cumprod, "CumprodBackward0", cumprod_backward, 0x1, false, 0x1, true, false);
    ROW(softmax, "SoftmaxBackward0", softmax_backward, 0x1, false, 0, true, false);
    ROW(log_softmax, "LogSoftmaxBackward0", log_softmax_backward, 0x1, false, 0, true, false);
}
