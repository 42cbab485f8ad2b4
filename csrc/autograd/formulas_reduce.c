/* Backward formulas of the reductions and scans: prod, amax/amin, max/min (full and along a dim),
 * norm, var/std, logsumexp, cumsum, cumprod, softmax, log_softmax (PyTorch's derivatives.yaml and
 * FunctionsManual.cpp, as ops). argmax/argmin are not differentiable and have no row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/formula_chain.h"

static mt_tensor *
ones(tmp *s, const mt_tensor *like, int ndim, const int64_t *sizes)
{
    mt_tensor *r = NULL;
    return s->st ? NULL
                 : own(s, mt_op_ones(ndim, sizes, like->dtype, mt_tensor_device(like), false, &r),
                       &r);
}

/* x flipped along d */
static mt_tensor *
flipped(tmp *s, mt_tensor *x, int d)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_flip(x, 1, (const int64_t[]){d}, &r), &r);
}

static mt_tensor *
cumprod_of(tmp *s, mt_tensor *x, int d)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_cumprod(x, d, -1, &r), &r);
}

static mt_tensor *
cumsum_of(tmp *s, mt_tensor *x, int d)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_cumsum(x, d, -1, &r), &r);
}

/* x along dim d with every element replaced by the product of the others on its line: the
 * exclusive cumulative products from the left times those from the right (PyTorch's
 * prod_safe_zeros_backward: no division, so zeros are fine). */
static mt_tensor *
others_product(tmp *s, mt_tensor *x, int d)
{
    if (failed(s, x, x)) {
        return NULL;
    }
    int64_t size = x->sizes[d], one[MT_MAX_DIMS];
    memcpy(one, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    one[d] = 1;
    mt_tensor *o = ones(s, x, x->ndim, one);
    mt_tensor *left = cumprod_of(s, cat2(s, o, narrowed(s, x, d, 0, size - 1), d), d);
    mt_tensor *rtail = flipped(s, narrowed(s, x, d, 1, size - 1), d);
    mt_tensor *right = flipped(s, cumprod_of(s, cat2(s, o, rtail, d), d), d);
    return bin(s, MT_OP_mul, left, right);
}

/* *count = the number of zeros in x (a device sync, as in PyTorch's prod_backward). */
static mt_status
count_zeros(mt_tensor *x, int64_t *count)
{
    bool every[MT_MAX_DIMS];
    memset(every, 1, sizeof(every));
    tmp s = {0};
    mt_tensor *total = sum_kept(&s, with_number(&s, MT_OP_eq, x, 0), every);
    mt_scalar v;
    if (total && (s.st = mt_tensor_item(total, &v)) == MT_OK) {
        *count = mt_scalar_to_int(v);
    }
    return finish(&s);
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
    tmp s = {0};
    mt_tensor *x = self, *gk = NULL, *yk = NULL, *r = NULL;
    int d = 0;
    if (all) { /* the product of everything is the product along the flattened input */
        x = own(&s, mt_op_reshape(self, 1, &numel, &r), &r);
        gk = s.st ? NULL : own(&s, mt_op_reshape(g[0], 1, &one, &r), &r);
        yk = s.st ? NULL : own(&s, mt_op_reshape(res, 1, &one, &r), &r);
    } else if ((s.st = mt_wrap_dim(n->args.i[0], m->ndim, &d)) == MT_OK) {
        red[d] = true;
        gk = kept(&s, g[0], m, red);
        yk = kept(&s, res, m, red);
    }
    if (s.st == MT_OK) {
        s.st = count_zeros(x, &zeros);
    }
    if (s.st == MT_OK && all && zeros > 1 && !mt_grad_enabled()) {
        s.st = mt_ag_zeros(m, &gi[0]);
        return finish(&s);
    }
    mt_tensor *others = zeros == 0 ? bin(&s, MT_OP_div, yk, x) : others_product(&s, x, d);
    mt_tensor *p = bin(&s, MT_OP_mul, gk, others);
    if (p) {
        s.st = mt_op_reshape(p, m->ndim, m->sizes, &gi[0]);
    }
    return finish(&s);
}

/* amax, amin, max, min: g split evenly among the elements equal to the result. max and min
 * (nan_ties) give it to the NaNs of a NaN result, as PyTorch's evenly_distribute_backward;
 * amax and amin find no element equal to a NaN and, as PyTorch's, give NaN. */
static mt_status
evenly(mt_node *n, const mt_intlist *dims, bool nan_ties, mt_tensor *g, mt_tensor **out)
{
    mt_tensor *self = n->saved[0];
    const mt_meta *m = &n->in_meta[0];
    bool red[MT_MAX_DIMS];
    mt_ags_reduced(m, dims, red);
    tmp s = {0};
    mt_tensor *rk = kept(&s, n->saved_out[0], m, red), *gk = kept(&s, g, m, red);
    mt_tensor *mask = nan_ties ? eq_or_nan(&s, self, rk) : bin(&s, MT_OP_eq, self, rk);
    mt_tensor *q = bin(&s, MT_OP_div, gk, sum_kept(&s, mask, red));
    give(&s, bin(&s, MT_OP_mul, q, mask), out);
    return finish(&s);
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
    tmp s = {0};
    mt_tensor *r = NULL;
    /* max_dim and min_dim with keepdim: indices shaped for scatter */
    bool keepdim = op == MT_OP_max_dim || op == MT_OP_min_dim;
    mt_tensor *idx = own(&s, mt_ags_rerun_indices(n, self, keepdim, &r), &r);
    bool red[MT_MAX_DIMS] = {false};
    red[d] = true;
    /* sort, topk: values shaped like their indices */
    mt_tensor *gk = keepdim ? kept(&s, g, m, red) : g;
    mt_tensor *z = zeros_of(&s, m);
    if (!failed(&s, gk, z)) {
        s.st = mt_op_scatter(z, d, idx, gk, NULL, out);
    }
    return finish(&s);
}

/* The two factors of norm's gradient, gi = scaled * scale, for p not 0, 1, 2 (PyTorch's
 * norm_backward): sign(x) |x|^(p-1) and g / norm^(p-1). Where x or the norm is 0, the factors
 * are taken at 1 instead of 0 (so nothing is inf): the other factor is 0 there, which gives
 * PyTorch's 0 with ops that all have formulas, so the backward is differentiable. */
static void
norm_factors(tmp *s, mt_tensor *self, mt_tensor *nk, mt_tensor *gk, double p, const bool *red,
             mt_tensor **scaled, mt_tensor **scale)
{
    mt_tensor *sg = un(s, MT_OP_sign, self), *ab = un(s, MT_OP_abs, self);
    if (isinf(p)) { /* the derivative of max |x|, split among the ties (NaNs) */
        mt_tensor *t = eq_or_nan(s, ab, nk);
        mt_tensor *count = sum_kept(s, t, red);
        *scaled = bin(s, MT_OP_mul, sg, t);
        *scale = bin(s, MT_OP_div, gk, count);
        return;
    }
    bool small = p < 1, big = p >= 2;
    /* x |x|^(p-2) for p >= 2, else sign(x) |x|^(p-1) with |x| taken at 1 where x is 0 */
    mt_tensor *base = small ? nonzero_of(s, ab) : ab;
    mt_tensor *pw = with_number(s, MT_OP_pow, base, big ? p - 2 : p - 1);
    *scaled = bin(s, MT_OP_mul, big ? self : sg, pw);
    if (small) { /* g * norm^(1-p) */
        *scale = bin(s, MT_OP_mul, gk, with_number(s, MT_OP_pow, nk, 1 - p));
    } else { /* g / norm^(p-1) */
        *scale = bin(s, MT_OP_div, gk, nonzero_of(s, with_number(s, MT_OP_pow, nk, p - 1)));
    }
}

// self (S) -> the p-norm over dims: p = 1: sign(x) g; p = 2: x g / norm (0 where norm is 0,
// where x is 0 too: the norm is taken at 1 there)
mt_status
mt_grad_norm(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *self = n->saved[0];
    const mt_meta *m = &n->in_meta[0];
    double p = mt_scalar_is_none(n->args.s[0]) ? 2.0 : mt_scalar_to_double(n->args.s[0]);
    if (p == 0) {
        return mt_ag_zeros(m, &gi[0]);
    }
    bool red[MT_MAX_DIMS];
    mt_ags_reduced(m, &n->args.l[0], red);
    tmp s = {0};
    mt_tensor *gk = kept(&s, g[0], m, red);
    if (p == 1) {
        give(&s, bin(&s, MT_OP_mul, un(&s, MT_OP_sign, self), gk), &gi[0]);
        return finish(&s);
    }
    mt_tensor *nk = kept(&s, n->saved_out[0], m, red);
    if (p == 2) {
        give(&s, bin(&s, MT_OP_mul, self, bin(&s, MT_OP_div, gk, nonzero_of(&s, nk))), &gi[0]);
        return finish(&s);
    }
    mt_tensor *scaled = NULL, *scale = NULL;
    norm_factors(&s, self, nk, gk, p, red, &scaled, &scale);
    give(&s, bin(&s, MT_OP_mul, scaled, scale), &gi[0]);
    return finish(&s);
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
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *mean = own(&s, mt_op_mean(self, ndims, m->ndim == 0 ? NULL : dims, true, -1, &r),
                          &r);
    if ((m->ndim == 0 || n->args.l[0].none) && count - correction <= 0) {
        /* PyTorch's var_backward without dims and no degrees of freedom: 2 / 0 is inf, so
         * g * inf, and NaN where x equals the mean (inf * 0); a NaN x gives inf there */
        mt_tensor *gk = kept(&s, gv, m, red);
        mt_tensor *same = bin(&s, MT_OP_eq, self, mean);
        mt_tensor *inf = bin(&s, MT_OP_mul, gk, num(&s, INFINITY));
        give(&s, sel(&s, same, num(&s, NAN), inf), out);
    } else {
        mt_tensor *dev = bin(&s, MT_OP_sub, self, mean);
        mt_tensor *p = bin(&s, MT_OP_mul, kept(&s, gv, m, red), dev);
        give(&s, bin(&s, MT_OP_mul, p, num(&s, 2.0 / (count - correction))), out);
    }
    return finish(&s);
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
    tmp s = {0};
    mt_tensor *twice = bin(&s, MT_OP_mul, n->saved_out[0], num(&s, 2.0));
    mt_tensor *gv = bin(&s, MT_OP_div, g[0], nonzero_of(&s, twice));
    if (gv) {
        s.st = var_grad(n, n->saved[0], gv, &gi[0]);
    }
    return finish(&s);
}

// self (S) -> logsumexp over dims: g * exp(x - result)
mt_status
mt_grad_logsumexp(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_meta *m = &n->in_meta[0];
    bool red[MT_MAX_DIMS];
    mt_ags_reduced(m, &n->args.l[0], red);
    tmp s = {0};
    mt_tensor *rk = kept(&s, n->saved_out[0], m, red), *gk = kept(&s, g[0], m, red);
    mt_tensor *e = un(&s, MT_OP_exp, bin(&s, MT_OP_sub, n->saved[0], rk));
    give(&s, bin(&s, MT_OP_mul, gk, e), &gi[0]);
    return finish(&s);
}

/* the cumulative sum of x along dim d taken from the end */
static mt_tensor *
reversed_cumsum(tmp *s, mt_tensor *x, int d)
{
    return flipped(s, cumsum_of(s, flipped(s, x, d), d), d);
}

mt_status
mt_grad_cumsum(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    int d;
    if (n->in_meta[0].ndim == 0) {
        gi[0] = mt_tensor_retain(g[0]);
        return MT_OK;
    }
    tmp s = {0};
    s.st = mt_wrap_dim(n->args.i[0], n->in_meta[0].ndim, &d);
    give(&s, s.st ? NULL : reversed_cumsum(&s, g[0], d), &gi[0]);
    return finish(&s);
}

/* cumprod's gradient at the first zero z of each line, 0 elsewhere: y[z-1] (1 for z = 0) times
 * the sum over i in [z, z2) of g[i] * prod(x[z+1..i]), z2 the second zero (PyTorch's
 * cumprod_backward). cz is the running count of zeros, zero x == 0, after cz != 0. */
static mt_tensor *
at_first_zero(tmp *s, mt_tensor *x, mt_tensor *g, mt_tensor *cz, mt_tensor *zero, mt_tensor *after,
              int d)
{
    bool red[MT_MAX_DIMS] = {false};
    red[d] = true;
    mt_tensor *one = with_number(s, MT_OP_eq, cz, 1);
    mt_tensor *first = bin(s, MT_OP_logical_and, zero, one);
    mt_tensor *not_one = un(s, MT_OP_logical_not, one);
    /* not strictly between the first and second zeros */
    mt_tensor *not_mid = bin(s, MT_OP_logical_or, not_one, first);
    /* head: the products before the first zero, its last one y[z-1] */
    mt_tensor *head = cumprod_of(s, where_number(s, after, 1, x), d);
    mt_tensor *last = narrowed(s, head, d, x->sizes[d] - 1, 1);
    /* tail[i] = prod(x[z+1..i]) */
    mt_tensor *tail = cumprod_of(s, where_number(s, not_mid, 1, x), d);
    mt_tensor *gt = bin(s, MT_OP_mul, where_number(s, not_one, 0, g), tail);
    mt_tensor *hs = bin(s, MT_OP_mul, last, sum_kept(s, gt, red));
    return where_number(s, un(s, MT_OP_logical_not, first), 0, hs);
}

/* cumprod's gradient for an input with zeros, without a graph of it (PyTorch's O(n) path):
 * gi[k] = sum over i >= k of g[i] * y[i] / x[k] before the first zero of each line, the
 * at_first_zero term at it, 0 after it. Each part is selected, never multiplied by a mask, so
 * an inf or NaN of one (0 * inf in y after a zero) stays out of the others, as in PyTorch. */
static mt_status
cumprod_at_zeros(mt_tensor *x, mt_tensor *y, mt_tensor *g, int d, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *zero = with_number(&s, MT_OP_eq, x, 0);
    mt_tensor *cz = cumsum_of(&s, zero, d);
    mt_tensor *after = with_number(&s, MT_OP_ne, cz, 0);
    mt_tensor *w = where_number(&s, after, 0, bin(&s, MT_OP_mul, g, y));
    mt_tensor *q = bin(&s, MT_OP_div, reversed_cumsum(&s, w, d), where_number(&s, after, 1, x));
    mt_tensor *a = where_number(&s, after, 0, q);
    mt_tensor *b = at_first_zero(&s, x, g, cz, zero, after, d);
    give(&s, bin(&s, MT_OP_add, a, b), out);
    return finish(&s);
}

/* the product of x along d over [0, k), kept as size 1 (1 for k = 0) */
static mt_tensor *
prod_before(tmp *s, mt_tensor *x, int d, int64_t k)
{
    if (k == 0) {
        int64_t one[MT_MAX_DIMS];
        memcpy(one, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
        one[d] = 1;
        return ones(s, x, x->ndim, one);
    }
    mt_tensor *head = narrowed(s, x, d, 0, k), *r = NULL;
    return failed(s, head, head) ? NULL : own(s, mt_op_prod(head, d, true, -1, &r), &r);
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
    mt_tensor **parts = calloc((size_t)size, sizeof(*parts)); /* borrowed from s */
    if (parts == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory in cumprod's backward");
    }
    tmp s = {0};
    for (int64_t k = 0; s.st == MT_OK && k < size; k++) {
        mt_tensor *before = prod_before(&s, x, d, k), *omit = before;
        if (k < size - 1) {
            mt_tensor *after = cumprod_of(&s, narrowed(&s, x, d, k + 1, size - k - 1), d);
            omit = cat2(&s, before, bin(&s, MT_OP_mul, before, after), d);
        }
        parts[k] = sum_kept(&s, bin(&s, MT_OP_mul, narrowed(&s, g, d, k, size - k), omit), red);
    }
    if (s.st == MT_OK) {
        s.st = mt_op_cat((int)size, parts, d, out);
    }
    free(parts);
    return finish(&s);
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
    tmp s = {0};
    mt_tensor *rc = reversed_cumsum(&s, bin(&s, MT_OP_mul, g[0], res), d);
    give(&s, bin(&s, MT_OP_div, rc, self), &gi[0]);
    return finish(&s);
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
    if (!mt_grad_enabled() && g->dtype == y->dtype) {
        /* one pass over each row (the CPU's and CUDA's kernels, the composite's chain
         * elsewhere); under create_graph the chain below, which autograd can differentiate */
        return log ? mt_op__log_softmax_backward_data(g, y, d, y->dtype, out)
                   : mt_op__softmax_backward_data(g, y, d, y->dtype, out);
    }
    tmp s = {0};
    if (log) {
        mt_tensor *p = bin(&s, MT_OP_mul, un(&s, MT_OP_exp, y), sum_kept(&s, g, red));
        give(&s, bin(&s, MT_OP_sub, g, p), out);
    } else {
        mt_tensor *p = bin(&s, MT_OP_sub, g, sum_kept(&s, bin(&s, MT_OP_mul, g, y), red));
        give(&s, bin(&s, MT_OP_mul, y, p), out);
    }
    return finish(&s);
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
 * whose products are the conjugates of x's (the saved ones themselves when real). */
typedef mt_status (*product_backward_fn)(mt_node *n, mt_tensor *self, mt_tensor *res,
                                         mt_tensor *const *g, mt_tensor **gi);

static mt_status
conj_product_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi, product_backward_fn fn)
{
    tmp s = {0};
    mt_tensor *x = conj_of(&s, n->saved[0]), *y = conj_of(&s, n->saved_out[0]);
    if (!failed(&s, x, y)) {
        s.st = fn(n, x, y, g, gi);
    }
    return finish(&s);
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
