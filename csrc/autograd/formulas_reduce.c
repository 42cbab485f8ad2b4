/* Backward formulas of the reductions and scans: prod, amax/amin, max/min (full and along a dim),
 * norm, var/std, logsumexp, cumsum, cumprod, softmax, log_softmax (PyTorch's derivatives.yaml and
 * FunctionsManual.cpp, as ops). argmax/argmin are not differentiable and have no row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/formulas.h"

static mt_status
mul(mt_tensor *x, mt_tensor *y, mt_tensor **out)
{
    return mt_op_mul(x, y, out);
}

static mt_status
ones(const mt_tensor *like, int ndim, const int64_t *sizes, mt_tensor **out)
{
    return mt_op_ones(ndim, sizes, like->dtype, mt_tensor_device(like), false, out);
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
            st = mt_op_cumprod(cat, d, -1, &left);
        }
        mt_tensor_clear(&cat);
    }
    if (st == MT_OK && (st = mt_op_narrow(x, d, 1, size - 1, &tail)) == MT_OK &&
        (st = mt_op_flip(tail, 1, (const int64_t[]){d}, &rtail)) == MT_OK) {
        mt_tensor *parts[2] = {o, rtail};
        if ((st = mt_op_cat(2, parts, d, &cat)) == MT_OK &&
            (st = mt_op_cumprod(cat, d, -1, &rc)) == MT_OK) {
            st = mt_op_flip(rc, 1, (const int64_t[]){d}, &right);
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

/* *count = the number of zeros in x (a device sync, as in PyTorch's prod_backward). */
static mt_status
count_zeros(mt_tensor *x, int64_t *count)
{
    bool every[MT_MAX_DIMS];
    memset(every, 1, sizeof(every));
    mt_tensor *z = NULL, *s = NULL;
    mt_scalar v;
    mt_status st = mt_ags_with_number(MT_OP_eq, x, 0, &z);
    if (st == MT_OK && (st = mt_ags_sum_keep(z, every, &s)) == MT_OK &&
        (st = mt_tensor_item(s, &v)) == MT_OK) {
        *count = mt_scalar_to_int(v);
    }
    mt_tensor_clear(&z);
    mt_tensor_clear(&s);
    return st;
}

// self (S) -> y = prod over dim (or all): gi = g * (the product of the other elements). As in
// PyTorch's prod_backward, that is g * y / x when no element is 0 (so an inf among the others
// gives inf / inf = NaN there too), and 0 when two or more are and no graph is being made.
static mt_status
prod_backward(mt_node *n, mt_tensor *self, mt_tensor *res, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_meta *m = &n->in_meta[0];
    int64_t numel = mt_numel(m->ndim, m->sizes), one = 1, zeros = 0;
    if (numel == 0) {
        return mt_ag_zeros(m, &gi[0]);
    }
    if (m->ndim == 0) { /* the product of one element is itself (inf included) */
        gi[0] = mt_tensor_retain(g[0]);
        return MT_OK;
    }
    bool all = n->args.i_none & 1u;
    bool red[MT_MAX_DIMS] = {false};
    mt_tensor *x = NULL, *gk = NULL, *yk = NULL, *others = NULL, *p = NULL;
    mt_status st = MT_OK;
    int d = 0;
    if (all) { /* the product of everything is the product along the flattened input */
        if ((st = mt_op_reshape(self, 1, &numel, &x)) == MT_OK &&
            (st = mt_op_reshape(g[0], 1, &one, &gk)) == MT_OK) {
            st = mt_op_reshape(res, 1, &one, &yk);
        }
    } else if ((st = mt_wrap_dim(n->args.i[0], m->ndim, &d)) == MT_OK) {
        red[d] = true;
        x = mt_tensor_retain(self);
        if ((st = mt_ags_keep(g[0], m, red, &gk)) == MT_OK) {
            st = mt_ags_keep(res, m, red, &yk);
        }
    }
    if (st == MT_OK) {
        st = count_zeros(x, &zeros);
    }
    if (st == MT_OK && zeros == 0) {
        st = mt_op_div(yk, x, NULL, &others);
    } else if (st == MT_OK && all && zeros > 1 && !mt_grad_enabled()) {
        st = mt_ag_zeros(m, &gi[0]);
        goto out_clear;
    } else if (st == MT_OK) {
        st = others_product(x, d, &others);
    }
    if (st == MT_OK && (st = mul(gk, others, &p)) == MT_OK) {
        st = mt_op_reshape(p, m->ndim, m->sizes, &gi[0]);
    }
out_clear:
    mt_tensor_clear(&x);
    mt_tensor_clear(&gk);
    mt_tensor_clear(&yk);
    mt_tensor_clear(&others);
    mt_tensor_clear(&p);
    return st;
}

/* *out = (x == y) | (isnan(x) & isnan(y)): where x is the value y that a NaN-propagating max
 * picked, a NaN counting as equal to a NaN result. */
static mt_status
eq_or_nan(mt_tensor *x, mt_tensor *y, mt_tensor **out)
{
    mt_tensor *eq = NULL, *xn = NULL, *yn = NULL, *both = NULL;
    mt_status st = mt_op_eq(x, y, &eq);
    if (st == MT_OK && (st = mt_op_isnan(x, &xn)) == MT_OK && (st = mt_op_isnan(y, &yn)) == MT_OK &&
        (st = mt_op_logical_and(xn, yn, &both)) == MT_OK) {
        st = mt_op_logical_or(eq, both, out);
    }
    mt_tensor_clear(&eq);
    mt_tensor_clear(&xn);
    mt_tensor_clear(&yn);
    mt_tensor_clear(&both);
    return st;
}

/* amax, amin, max, min: g split evenly among the elements equal to the result. max and min
 * (nan_ties) give it to the NaNs of a NaN result, as PyTorch's evenly_distribute_backward;
 * amax and amin find no element equal to a NaN and, as PyTorch's, give NaN. */
static mt_status
evenly(mt_node *n, const mt_intlist *dims, bool nan_ties, mt_tensor *g, mt_tensor **out)
{
    mt_tensor *self = n->saved[0];
    mt_tensor *res = n->saved_out[0];
    bool red[MT_MAX_DIMS];
    mt_ags_reduced(&n->in_meta[0], dims, red);
    mt_tensor *rk = NULL, *gk = NULL, *mask = NULL, *count = NULL, *q = NULL;
    mt_status st = mt_ags_keep(res, &n->in_meta[0], red, &rk);
    if (st == MT_OK && (st = mt_ags_keep(g, &n->in_meta[0], red, &gk)) == MT_OK &&
        (st = nan_ties ? eq_or_nan(self, rk, &mask) : mt_op_eq(self, rk, &mask)) == MT_OK &&
        (st = mt_ags_sum_keep(mask, red, &count)) == MT_OK &&
        (st = mt_op_div(gk, count, NULL, &q)) == MT_OK) {
        st = mul(q, mask, out);
    }
    mt_tensor_clear(&rk);
    mt_tensor_clear(&gk);
    mt_tensor_clear(&mask);
    mt_tensor_clear(&count);
    mt_tensor_clear(&q);
    return st;
}

mt_status
mt_grad_amax(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return evenly(n, &n->args.l[0], false, g[0], &gi[0]);
}

mt_status
mt_grad_max(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_intlist all = {.n = 0, .none = true};
    return evenly(n, &all, true, g[0], &gi[0]);
}

/* max_dim, min_dim, sort, topk (their rows share it): g goes to the positions the values came
 * from. Those indices are an integer output, which the node does not keep, so the op runs again
 * on the saved input (the same deterministic kernel, hence the same indices). */
mt_status
mt_grad_to_indices(mt_node *n, mt_tensor *const *grads, mt_tensor **gi)
{
    const mt_op op = n->formula->op;
    const int dim_slot = op == MT_OP_topk ? 1 : 0; /* the int slot of dim */
    mt_tensor *self = n->saved[0], *g = grads[0], **out = &gi[0];
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
    mt_tensor *idx = NULL, *gk = NULL, *z = NULL;
    /* max_dim and min_dim with keepdim: indices shaped for scatter */
    if ((st = mt_ags_rerun_indices(n, self, op == MT_OP_max_dim || op == MT_OP_min_dim, &idx))) {
        return st;
    }
    bool red[MT_MAX_DIMS] = {false};
    red[d] = true;
    if (op == MT_OP_max_dim || op == MT_OP_min_dim) {
        st = mt_ags_keep(g, m, red, &gk);
    } else {
        gk = mt_tensor_retain(g); /* sort, topk: values shaped like their indices */
    }
    if (st == MT_OK && (st = mt_ag_zeros(m, &z)) == MT_OK) {
        st = mt_op_scatter(z, d, idx, gk, NULL, out);
    }
    mt_tensor_release(idx);
    mt_tensor_clear(&gk);
    mt_tensor_clear(&z);
    return st;
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
    mt_status st = mt_op_sign(self, &sg);
    if (st == MT_OK) {
        st = mt_op_abs(self, &ab);
    }
    if (st == MT_OK && isinf(p)) { /* the derivative of max |x|, split among the ties (NaNs) */
        mt_tensor *count = NULL;
        if ((st = eq_or_nan(ab, nk, &t)) == MT_OK &&
            (st = mt_ags_sum_keep(t, red, &count)) == MT_OK && (st = mul(sg, t, scaled)) == MT_OK) {
            st = mt_op_div(gk, count, NULL, scale);
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
            st = mt_op_div(gk, den, NULL, scale);
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
mt_status
mt_grad_norm(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *self = n->saved[0];
    mt_tensor *res = n->saved_out[0];
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
        if ((st = mt_op_sign(self, &scaled)) == MT_OK) {
            st = mul(scaled, gk, &gi[0]);
        }
    } else if (st == MT_OK && (st = mt_ags_keep(res, m, red, &nk)) == MT_OK && p == 2) {
        if ((st = mt_ags_nonzero(nk, &den)) == MT_OK &&
            (st = mt_op_div(gk, den, NULL, &scale)) == MT_OK) {
            st = mul(self, scale, &gi[0]);
        }
    } else if (st == MT_OK && (st = norm_factors(self, nk, gk, p, red, &scaled, &scale)) == MT_OK) {
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
    int64_t dims[MT_MAX_DIMS];
    int ndims = 0;
    for (int d = 0; d < m->ndim; d++) {
        if (red[d]) {
            dims[ndims++] = d;
        }
    }
    mt_tensor *mean = NULL, *dev = NULL, *gk = NULL, *p = NULL;
    mt_status st = mt_op_mean(self, ndims, m->ndim == 0 ? NULL : dims, true, -1, &mean);
    if (st == MT_OK && (m->ndim == 0 || n->args.l[0].none) && count - correction <= 0) {
        /* PyTorch's var_backward without dims and no degrees of freedom: 2 / 0 is inf, so
         * g * inf, and NaN where x equals the mean (inf * 0); a NaN x gives inf there */
        mt_tensor *same = NULL, *nan = NULL, *inf = NULL;
        if ((st = mt_ags_keep(gv, m, red, &gk)) == MT_OK &&
            (st = mt_op_eq(self, mean, &same)) == MT_OK &&
            (st = mt_ag_scale(gk, INFINITY, &inf)) == MT_OK &&
            (st = mt_tensor_scalar(mt_scalar_float(NAN), MT_FLOAT64, &nan)) == MT_OK) {
            st = mt_op_where(same, nan, inf, out);
        }
        mt_tensor_clear(&same);
        mt_tensor_clear(&nan);
        mt_tensor_clear(&inf);
    } else if (st == MT_OK && (st = mt_op_sub(self, mean, mt_scalar_int(1), &dev)) == MT_OK &&
               (st = mt_ags_keep(gv, m, red, &gk)) == MT_OK && (st = mul(gk, dev, &p)) == MT_OK) {
        st = mt_ag_scale(p, 2.0 / (count - correction), out);
    }
    mt_tensor_clear(&mean);
    mt_tensor_clear(&dev);
    mt_tensor_clear(&gk);
    mt_tensor_clear(&p);
    return st;
}

mt_status
mt_grad_var(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *self = n->saved[0];
    return var_grad(n, self, g[0], &gi[0]);
}

// std = sqrt(var): g / (2 std) through var's gradient; where std is 0, x - mean is 0 too and
// 2 std is taken at 1, which gives PyTorch's 0
mt_status
mt_grad_std(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *self = n->saved[0];
    mt_tensor *res = n->saved_out[0];
    mt_tensor *twice = NULL, *den = NULL, *gv = NULL;
    mt_status st = mt_ag_scale(res, 2.0, &twice);
    if (st == MT_OK && (st = mt_ags_nonzero(twice, &den)) == MT_OK &&
        (st = mt_op_div(g[0], den, NULL, &gv)) == MT_OK) {
        st = var_grad(n, self, gv, &gi[0]);
    }
    mt_tensor_clear(&twice);
    mt_tensor_clear(&den);
    mt_tensor_clear(&gv);
    return st;
}

// self (S) -> logsumexp over dims: g * exp(x - result)
mt_status
mt_grad_logsumexp(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *self = n->saved[0];
    mt_tensor *res = n->saved_out[0];
    const mt_meta *m = &n->in_meta[0];
    bool red[MT_MAX_DIMS];
    mt_ags_reduced(m, &n->args.l[0], red);
    mt_tensor *rk = NULL, *gk = NULL, *d = NULL, *e = NULL;
    mt_status st = mt_ags_keep(res, m, red, &rk);
    if (st == MT_OK && (st = mt_ags_keep(g[0], m, red, &gk)) == MT_OK &&
        (st = mt_op_sub(self, rk, mt_scalar_int(1), &d)) == MT_OK &&
        (st = mt_op_exp(d, &e)) == MT_OK) {
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
    mt_status st = mt_op_flip(x, 1, (const int64_t[]){d}, &f);
    if (st == MT_OK && (st = mt_op_cumsum(f, d, -1, &c)) == MT_OK) {
        st = mt_op_flip(c, 1, (const int64_t[]){d}, out);
    }
    mt_tensor_clear(&f);
    mt_tensor_clear(&c);
    return st;
}

mt_status
mt_grad_cumsum(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    int d;
    if (n->in_meta[0].ndim == 0) {
        gi[0] = mt_tensor_retain(g[0]);
        return MT_OK;
    }
    mt_status st = mt_wrap_dim(n->args.i[0], n->in_meta[0].ndim, &d);
    return st ? st : reversed_cumsum(g[0], d, &gi[0]);
}

/* cumprod's gradient at the first zero z of each line, 0 elsewhere: y[z-1] (1 for z = 0) times
 * the sum over i in [z, z2) of g[i] * prod(x[z+1..i]), z2 the second zero (PyTorch's
 * cumprod_backward). cz is the running count of zeros, zero x == 0, after cz != 0. */
static mt_status
at_first_zero(mt_tensor *x, mt_tensor *g, mt_tensor *cz, mt_tensor *zero, mt_tensor *after, int d,
              mt_tensor **out)
{
    mt_tensor *one = NULL, *first = NULL, *not_one = NULL, *not_mid = NULL, *xb = NULL;
    mt_tensor *head = NULL, *last = NULL, *xm = NULL, *tail = NULL, *gm = NULL, *gt = NULL;
    mt_tensor *s = NULL, *hs = NULL, *not_first = NULL;
    bool red[MT_MAX_DIMS] = {false};
    red[d] = true;
    mt_status st = mt_ags_with_number(MT_OP_eq, cz, 1, &one);
    if (st == MT_OK && (st = mt_op_logical_and(zero, one, &first)) == MT_OK &&
        (st = mt_op_logical_not(one, &not_one)) == MT_OK &&
        /* not strictly between the first and second zeros */
        (st = mt_op_logical_or(not_one, first, &not_mid)) == MT_OK &&
        /* head: the products before the first zero, its last one y[z-1] */
        (st = mt_ags_where_number(after, 1, x, &xb)) == MT_OK &&
        (st = mt_op_cumprod(xb, d, -1, &head)) == MT_OK &&
        (st = mt_op_narrow(head, d, x->sizes[d] - 1, 1, &last)) == MT_OK &&
        /* tail[i] = prod(x[z+1..i]) */
        (st = mt_ags_where_number(not_mid, 1, x, &xm)) == MT_OK &&
        (st = mt_op_cumprod(xm, d, -1, &tail)) == MT_OK &&
        (st = mt_ags_where_number(not_one, 0, g, &gm)) == MT_OK &&
        (st = mul(gm, tail, &gt)) == MT_OK && (st = mt_ags_sum_keep(gt, red, &s)) == MT_OK &&
        (st = mul(last, s, &hs)) == MT_OK && (st = mt_op_logical_not(first, &not_first)) == MT_OK) {
        st = mt_ags_where_number(not_first, 0, hs, out);
    }
    mt_tensor *all[] = {one, first, not_one, not_mid, xb, head, last,
                        xm,  tail,  gm,      gt,      s,  hs,   not_first};
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
        mt_tensor_clear(&all[k]);
    }
    return st;
}

/* cumprod's gradient for an input with zeros, without a graph of it (PyTorch's O(n) path):
 * gi[k] = sum over i >= k of g[i] * y[i] / x[k] before the first zero of each line, the
 * at_first_zero term at it, 0 after it. Each part is selected, never multiplied by a mask, so
 * an inf or NaN of one (0 * inf in y after a zero) stays out of the others, as in PyTorch. */
static mt_status
cumprod_at_zeros(mt_tensor *x, mt_tensor *y, mt_tensor *g, int d, mt_tensor **out)
{
    mt_tensor *gy = NULL, *w = NULL, *rc = NULL, *zero = NULL, *cz = NULL, *after = NULL;
    mt_tensor *xs = NULL, *q = NULL, *a = NULL, *b = NULL;
    mt_status st;
    if ((st = mt_ags_with_number(MT_OP_eq, x, 0, &zero)) == MT_OK &&
        (st = mt_op_cumsum(zero, d, -1, &cz)) == MT_OK &&
        (st = mt_ags_with_number(MT_OP_ne, cz, 0, &after)) == MT_OK &&
        (st = mul(g, y, &gy)) == MT_OK && (st = mt_ags_where_number(after, 0, gy, &w)) == MT_OK &&
        (st = reversed_cumsum(w, d, &rc)) == MT_OK &&
        (st = mt_ags_where_number(after, 1, x, &xs)) == MT_OK &&
        (st = mt_op_div(rc, xs, NULL, &q)) == MT_OK &&
        (st = mt_ags_where_number(after, 0, q, &a)) == MT_OK &&
        (st = at_first_zero(x, g, cz, zero, after, d, &b)) == MT_OK) {
        st = mt_op_add(a, b, mt_scalar_int(1), out);
    }
    mt_tensor *all[] = {gy, w, rc, zero, cz, after, xs, q, a, b};
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
        mt_tensor_clear(&all[k]);
    }
    return st;
}

/* *out = the product of x along d over [0, k), kept as size 1 (1 for k = 0). */
static mt_status
prod_before(mt_tensor *x, int d, int64_t k, mt_tensor **out)
{
    if (k == 0) {
        int64_t one[MT_MAX_DIMS];
        memcpy(one, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
        one[d] = 1;
        return ones(x, x->ndim, one, out);
    }
    mt_tensor *head = NULL;
    mt_status st = mt_op_narrow(x, d, 0, k, &head);
    if (st == MT_OK) {
        st = mt_op_prod(head, d, true, -1, out); /* keepdim */
    }
    mt_tensor_clear(&head);
    return st;
}

/* cumprod's gradient for an input with zeros when a graph of it is made (PyTorch's O(n^2) path,
 * whose ops differentiate to the second derivative, which the masks of the O(n) path do not):
 * gi[k] = sum over i >= k of g[i] * the product of x[0..i] but x[k]. */
static mt_status
cumprod_omitting(mt_tensor *x, mt_tensor *g, int d, mt_tensor **out)
{
    int64_t size = x->sizes[d];
    bool red[MT_MAX_DIMS] = {false};
    red[d] = true;
    mt_tensor **parts = calloc((size_t)size, sizeof(*parts));
    if (parts == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory in cumprod's backward");
    }
    mt_status st = MT_OK;
    for (int64_t k = 0; st == MT_OK && k < size; k++) {
        mt_tensor *before = NULL, *rest = NULL, *after = NULL, *both = NULL, *omit = NULL;
        mt_tensor *gk = NULL, *p = NULL;
        st = prod_before(x, d, k, &before);
        if (st == MT_OK && k == size - 1) {
            omit = mt_tensor_retain(before);
        } else if (st == MT_OK && (st = mt_op_narrow(x, d, k + 1, size - k - 1, &rest)) == MT_OK &&
                   (st = mt_op_cumprod(rest, d, -1, &after)) == MT_OK &&
                   (st = mul(before, after, &both)) == MT_OK) {
            mt_tensor *pieces[2] = {before, both};
            st = mt_op_cat(2, pieces, d, &omit);
        }
        if (st == MT_OK && (st = mt_op_narrow(g, d, k, size - k, &gk)) == MT_OK &&
            (st = mul(gk, omit, &p)) == MT_OK) {
            st = mt_ags_sum_keep(p, red, &parts[k]);
        }
        mt_tensor *all[] = {before, rest, after, both, omit, gk, p};
        for (size_t j = 0; j < sizeof(all) / sizeof(all[0]); j++) {
            mt_tensor_clear(&all[j]);
        }
    }
    if (st == MT_OK) {
        st = mt_op_cat((int)size, parts, d, out);
    }
    for (int64_t k = 0; k < size; k++) {
        mt_tensor_clear(&parts[k]);
    }
    free(parts);
    return st;
}

// self (S) -> y = cumprod along d: reversed_cumsum(g * y) / x when no element is 0, else one
// of the two paths above (PyTorch's cumprod_backward)
static mt_status
cumprod_backward(mt_node *n, mt_tensor *self, mt_tensor *res, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_meta *m = &n->in_meta[0];
    int d = 0;
    int64_t zeros = 0;
    mt_status st = m->ndim ? mt_wrap_dim(n->args.i[0], m->ndim, &d) : MT_OK;
    if (st) {
        return st;
    }
    if (m->ndim == 0 || m->sizes[d] == 1 || mt_numel(m->ndim, m->sizes) == 0) {
        gi[0] = mt_tensor_retain(g[0]);
        return MT_OK;
    }
    if ((st = count_zeros(self, &zeros)) || zeros > 0) {
        return st                  ? st
               : mt_grad_enabled() ? cumprod_omitting(self, g[0], d, &gi[0])
                                   : cumprod_at_zeros(self, res, g[0], d, &gi[0]);
    }
    mt_tensor *gy = NULL, *rc = NULL;
    if ((st = mul(g[0], res, &gy)) == MT_OK && (st = reversed_cumsum(gy, d, &rc)) == MT_OK) {
        st = mt_op_div(rc, self, NULL, &gi[0]);
    }
    mt_tensor_clear(&gy);
    mt_tensor_clear(&rc);
    return st;
}

/* softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g), sums along dim */
static mt_status
softmax_grad(mt_node *n, mt_tensor *g, bool log, mt_tensor **out)
{
    mt_tensor *y = n->saved_out[0];
    bool red[MT_MAX_DIMS] = {false};
    int d;
    mt_status st = mt_wrap_dim(n->args.i[0], n->in_meta[0].ndim, &d);
    if (st) {
        return st;
    }
    red[d] = n->in_meta[0].ndim > 0;
    mt_tensor *gy = NULL, *s = NULL, *e = NULL, *p = NULL;
    if (!mt_grad_enabled() && g->dtype == y->dtype) {
        /* one pass over each row (the CPU's and CUDA's kernels, the composite's chain
         * elsewhere); under create_graph the chain below, which autograd can differentiate */
        st = log ? mt_op__log_softmax_backward_data(g, y, d, y->dtype, out)
                 : mt_op__softmax_backward_data(g, y, d, y->dtype, out);
    } else if (log) {
        if ((st = mt_ags_sum_keep(g, red, &s)) == MT_OK && (st = mt_op_exp(y, &e)) == MT_OK &&
            (st = mul(e, s, &p)) == MT_OK) {
            st = mt_op_sub(g, p, mt_scalar_int(1), out);
        }
    } else if ((st = mul(g, y, &gy)) == MT_OK && (st = mt_ags_sum_keep(gy, red, &s)) == MT_OK &&
               (st = mt_op_sub(g, s, mt_scalar_int(1), &p)) == MT_OK) {
        st = mul(y, p, out);
    }
    mt_tensor_clear(&gy);
    mt_tensor_clear(&s);
    mt_tensor_clear(&e);
    mt_tensor_clear(&p);
    return st;
}

mt_status
mt_grad_softmax(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return softmax_grad(n, g[0], false, &gi[0]);
}

mt_status
mt_grad_log_softmax(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return softmax_grad(n, g[0], true, &gi[0]);
}

/* prod's and cumprod's gradients are g times the conjugate of products of the inputs (PyTorch's
 * conjugate Wirtinger convention): the real formulas run on the conjugated input and result,
 * whose products are the conjugates of x's. *x and *y: the saved ones, conjugated when complex. */
static mt_status
conj_saved(const mt_node *n, mt_tensor **x, mt_tensor **y)
{
    if (!mt_dtype_is_complex(n->saved[0]->dtype)) {
        *x = mt_tensor_retain(n->saved[0]);
        *y = mt_tensor_retain(n->saved_out[0]);
        return MT_OK;
    }
    mt_status st = mt_op_conj_physical(n->saved[0], x);
    if (st == MT_OK && (st = mt_op_conj_physical(n->saved_out[0], y))) {
        mt_tensor_clear(x);
    }
    return st;
}

typedef mt_status (*product_backward_fn)(mt_node *n, mt_tensor *self, mt_tensor *res,
                                         mt_tensor *const *g, mt_tensor **gi);

static mt_status
conj_product_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi, product_backward_fn fn)
{
    mt_tensor *x = NULL, *y = NULL;
    mt_status st = conj_saved(n, &x, &y);
    if (st == MT_OK) {
        st = fn(n, x, y, g, gi);
        mt_tensor_clear(&x);
        mt_tensor_clear(&y);
    }
    return st;
}

mt_status
mt_grad_prod(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return conj_product_backward(n, g, gi, prod_backward);
}

mt_status
mt_grad_cumprod(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return conj_product_backward(n, g, gi, cumprod_backward);
}
