/* Composite ops of the everyday API, written over other ops through the dispatcher, so
 * they run on every device and record autograd through their pieces: the NaN-skipping
 * reductions (nansum, nanmean), logit, dist, inner, ldexp, msort, addr, addbmm, matrix_power,
 * mvlgamma, sinc, torch.special's ndtr, xlog1py and entr, cov and corrcoef, frexp. Each follows PyTorch's
 * decomposition (aten/src/ATen/native), keeping its dtype rules and messages; none computes
 * a value itself. */
#include <math.h>

#include "core/math.h"
#include "dispatch/kernels.h"
#include "ops/op_chain.h"

/* The dims of an int[1]? argument, or NULL for None (every dim). */
static const int64_t *
dims_of(const mt_intlist *l)
{
    return l->none ? NULL : mt_intlist_values(l);
}

/* x with its NaNs replaced by 0 (x itself when it has no NaN to hold). */
static mt_tensor *
nan_to_zero(tmp *s, mt_tensor *x)
{
    if (!mt_dtype_is_float(x->dtype)) {
        return x;
    }
    return sel(s, un(s, MT_OP_isnan, x), num(s, 0), x);
}

// self (any), dim; out = sum of the non-NaN elements over dim (the CPU has a kernel of its own:
// cpu/reduce.c)
mt_status
mt_composite_nansum(mt_args *a)
{
    tmp s = {0};
    mt_tensor *clean = nan_to_zero(&s, a->t[0]), *r = NULL;
    if (!failed(&s, clean, clean)) {
        own(&s, mt_op_sum(clean, a->l[0].n, dims_of(&a->l[0]), a->b[0], a->dtype, &r), &r);
    }
    give(&s, r, &a->out[0]);
    return finish(&s);
}

// self (float), dim; out = nansum(self, dim) / (number of non-NaN elements over dim), as
// PyTorch's nanmean
mt_status
mt_composite_nanmean(mt_args *a)
{
    mt_tensor *x = a->t[0];
    if (!mt_dtype_is_float(x->dtype)) {
        return mt_fail(MT_ERUNTIME,
                       "nanmean(): expected input to have floating point or complex dtype but got "
                       "%s",
                       mt_dtype_scalar_name(x->dtype));
    }
    tmp s = {0};
    const int64_t *dims = dims_of(&a->l[0]);
    mt_tensor *total = NULL, *count = NULL;
    mt_tensor *present = un(&s, MT_OP_logical_not, un(&s, MT_OP_isnan, x));
    if (!failed(&s, present, present)) {
        own(&s, mt_op_nansum(x, a->l[0].n, dims, a->b[0], a->dtype, &total), &total);
        own(&s, mt_op_sum(present, a->l[0].n, dims, a->b[0], -1, &count), &count);
    }
    give(&s, bin(&s, MT_OP_div, total, count), &a->out[0]);
    return finish(&s);
}

/* *out = self after copying r (the op's result) into it: the in-place forms of the composites. */
static void
copy_into(tmp *s, mt_tensor *self, mt_tensor *r, mt_tensor **out)
{
    mt_tensor *done = NULL;
    if (!failed(s, r, r)) {
        own(s, mt_op_copy_(self, r, &done), &done);
    }
    give(s, done, out);
}

/* logit(self, eps): log(z / (1 - z)), z = self clamped to [eps, 1 - eps] when eps is given */
static mt_tensor *
logit_of(tmp *s, mt_tensor *x, mt_scalar eps)
{
    mt_tensor *z = x;
    if (!mt_scalar_is_none(eps)) {
        const double e = mt_scalar_to_double(eps);
        mt_tensor *r = NULL;
        mt_status st = mt_op_clamp(x, num(s, e), num(s, 1 - e), &r);
        z = s->st ? NULL : own(s, st, &r);
    }
    mt_tensor *one = num(s, 1), *one_minus = NULL;
    if (!failed(s, z, one)) {
        own(s, mt_op_sub(one, z, mt_scalar_int(1), &one_minus), &one_minus);
    }
    return un(s, MT_OP_log, bin(s, MT_OP_div, z, one_minus));
}

mt_status
mt_composite_logit(mt_args *a)
{
    tmp s = {0};
    give(&s, logit_of(&s, a->t[0], a->s[0]), &a->out[0]);
    return finish(&s);
}

mt_status
mt_composite_logit_(mt_args *a)
{
    tmp s = {0};
    copy_into(&s, a->t[0], logit_of(&s, a->t[0], a->s[0]), &a->out[0]);
    return finish(&s);
}

// self, other (broadcast); out = ||self - other||_p (0-dim)
mt_status
mt_composite_dist(mt_args *a)
{
    tmp s = {0};
    mt_tensor *d = bin(&s, MT_OP_sub, a->t[0], a->t[1]), *r = NULL;
    if (!failed(&s, d, d)) {
        own(&s, mt_op_linalg_vector_norm(d, a->s[0], 0, NULL, false, -1, &r), &r);
    }
    give(&s, r, &a->out[0]);
    return finish(&s);
}

// self (..., n), other (..., n); out (self's leading dims, other's leading dims): sums over n
mt_status
mt_composite_inner(mt_args *a)
{
    mt_tensor *x = a->t[0], *y = a->t[1];
    if (x->ndim == 0 || y->ndim == 0) {
        return mt_op_mul(x, y, &a->out[0]);
    }
    if (x->sizes[x->ndim - 1] != y->sizes[y->ndim - 1]) {
        char xs[MT_MAX_DIMS * 24], ys[MT_MAX_DIMS * 24];
        return mt_fail(MT_ERUNTIME,
                       "inner() the last dimension must match on both input tensors but got shapes "
                       "%s and %s",
                       mt_format_sizes(xs, sizeof xs, x->ndim, x->sizes),
                       mt_format_sizes(ys, sizeof ys, y->ndim, y->sizes));
    }
    const int64_t last_x = x->ndim - 1, last_y = y->ndim - 1;
    return mt_op_tensordot(x, y, 1, &last_x, 1, &last_y, &a->out[0]);
}

/* 2 ** other, with other first expanded to its broadcast shape with self: the gradient of other
 * is then reduced after the product with self, as PyTorch's LdexpBackward0 (0 * inf is NaN there) */
static mt_tensor *
powers_of_two(tmp *s, mt_tensor *self, mt_tensor *other)
{
    int64_t shape[MT_MAX_DIMS];
    int n = 0;
    mt_tensor *wide = NULL;
    s->st = s->st ? s->st
                  : mt_broadcast_shapes(self->ndim, self->sizes, other->ndim, other->sizes, &n,
                                        shape);
    if (s->st == MT_OK) {
        own(s, mt_op_expand(other, n, shape, &wide), &wide);
    }
    return un(s, MT_OP_exp2, wide);
}

// self, other (broadcast); out = self * 2 ** other
mt_status
mt_composite_ldexp(mt_args *a)
{
    tmp s = {0};
    give(&s, bin(&s, MT_OP_mul, a->t[0], powers_of_two(&s, a->t[0], a->t[1])), &a->out[0]);
    return finish(&s);
}

mt_status
mt_composite_ldexp_(mt_args *a)
{
    tmp s = {0};
    mt_tensor *p = powers_of_two(&s, a->t[0], a->t[1]), *done = NULL;
    if (!failed(&s, p, p)) {
        own(&s, mt_op_mul_(a->t[0], p, &done), &done);
    }
    give(&s, done, &a->out[0]);
    return finish(&s);
}

// self (a float); out = (mantissa, exponent): self = mantissa * 2^exponent, |mantissa| in
// [0.5, 1) (0, +-inf and NaN stay themselves with exponent 0), the exponent int32
mt_status
mt_composite_frexp(mt_args *a)
{
    mt_tensor *self = a->t[0];
    if (!mt_dtype_is_float(self->dtype)) {
        return mt_fail(MT_ERUNTIME, "torch.frexp() only supports floating-point dtypes");
    }
    tmp s = {0};
    mt_tensor *e = un(&s, MT_OP__frexp_exponent, self), *e32 = NULL;
    if (!failed(&s, e, e)) {
        own(&s, mt_op__to_copy(e, MT_INT32, mt_tensor_device(self), &e32), &e32);
    }
    give(&s, un(&s, MT_OP__frexp_mantissa, self), &a->out[0]);
    give(&s, e32, &a->out[1]);
    return finish(&s);
}

// self; out = self sorted along dim 0
mt_status
mt_composite_msort(mt_args *a)
{
    mt_tensor *indices = NULL;
    mt_status st = mt_op_sort(a->t[0], 0, false, false, &a->out[0], &indices);
    mt_tensor_clear(&indices);
    return st;
}

// self (broadcasts to (n, m)), vec1 (n), vec2 (m); out = beta * self + alpha * outer(vec1, vec2)
mt_status
mt_composite_addr(mt_args *a)
{
    mt_tensor *v1 = a->t[1], *v2 = a->t[2];
    if (v1->ndim != 1 || v2->ndim != 1) {
        return mt_fail(MT_ERUNTIME, "addr: Expected 1-D argument %s, but got %d-D",
                       v1->ndim != 1 ? "vec1" : "vec2", v1->ndim != 1 ? v1->ndim : v2->ndim);
    }
    tmp s = {0};
    mt_tensor *outer = NULL, *r = NULL;
    own(&s, mt_op_outer(v1, v2, &outer), &outer);
    /* beta == 0 ignores self, NaN and inf included, as BLAS's beta does */
    mt_tensor *base = mt_scalar_to_double(a->s[0]) == 0
                          ? bin(&s, MT_OP_mul, a->t[0], num(&s, 0))
                          : scaled(&s, a->t[0], mt_scalar_to_double(a->s[0]));
    if (mt_scalar_to_double(a->s[0]) == 0 && !failed(&s, base, base)) {
        base = sel(&s, un(&s, MT_OP_isnan, base), num(&s, 0), base);
    }
    if (!failed(&s, base, outer)) {
        own(&s, mt_op_add(base, outer, a->s[1], &r), &r);
    }
    give(&s, r, &a->out[0]);
    return finish(&s);
}

// self (n, m), batch1 (b, n, k), batch2 (b, k, m); out = beta * self + alpha * sum_b batch1[b] @ batch2[b]
mt_status
mt_composite_addbmm(mt_args *a)
{
    mt_tensor *b1 = a->t[1], *b2 = a->t[2];
    if (b1->ndim != 3 || b2->ndim != 3) {
        return mt_fail(MT_ERUNTIME, "%s must be a 3D tensor", b1->ndim != 3 ? "batch1" : "batch2");
    }
    if (b1->sizes[0] != b2->sizes[0]) {
        return mt_fail(MT_ERUNTIME,
                       "batch1 and batch2 must have same number of batches, got %lld and %lld",
                       (long long)b1->sizes[0], (long long)b2->sizes[0]);
    }
    /* the sum over b of the products is one product of (n, b*k) by (b*k, m) */
    const int64_t perm[3] = {1, 0, 2};
    const int64_t wide[2] = {b1->sizes[1], b1->sizes[0] * b1->sizes[2]};
    const int64_t tall[2] = {b2->sizes[0] * b2->sizes[1], b2->sizes[2]};
    tmp s = {0};
    mt_tensor *p = NULL, *m1 = NULL, *m2 = NULL, *r = NULL;
    own(&s, mt_op_permute(b1, 3, perm, &p), &p);
    if (!failed(&s, p, p)) {
        own(&s, mt_op_reshape(p, 2, wide, &m1), &m1);
    }
    if (!failed(&s, m1, m1)) {
        own(&s, mt_op_reshape(b2, 2, tall, &m2), &m2);
    }
    if (!failed(&s, m2, m2)) {
        own(&s, mt_op_addmm(a->t[0], m1, m2, a->s[0], a->s[1], &r), &r);
    }
    give(&s, r, &a->out[0]);
    return finish(&s);
}

// self (..., n, n), n; out = self @ self @ ... (n times; the identity for 0, inverse powers for n < 0)
mt_status
mt_composite_matrix_power(mt_args *a)
{
    mt_tensor *x = a->t[0];
    int64_t n = a->i[0];
    if (x->ndim < 2 || x->sizes[x->ndim - 1] != x->sizes[x->ndim - 2]) {
        if (x->ndim < 2) {
            return mt_fail(MT_ERUNTIME, "linalg.matrix_power: The input tensor A must have at "
                                        "least 2 dimensions.");
        }
        return mt_fail(MT_ERUNTIME,
                       "linalg.matrix_power: A must be batches of square matrices, but they are "
                       "%lld by %lld matrices",
                       (long long)x->sizes[x->ndim - 2], (long long)x->sizes[x->ndim - 1]);
    }
    tmp s = {0};
    if (n == 0) {
        /* the identity, written into a copy of self as PyTorch's, so it stays on the graph */
        mt_tensor *eye = NULL, *wide = NULL, *done = NULL;
        const int64_t k = x->sizes[x->ndim - 1];
        mt_tensor *copy = un(&s, MT_OP_clone, x);
        own(&s, mt_op_eye(k, k, x->dtype, mt_tensor_device(x), false, &eye), &eye);
        if (!failed(&s, eye, copy)) {
            own(&s, mt_op_expand(eye, x->ndim, x->sizes, &wide), &wide);
        }
        if (!failed(&s, wide, wide)) {
            own(&s, mt_op_copy_(copy, wide, &done), &done);
        }
        give(&s, done, &a->out[0]);
        return finish(&s);
    }
    mt_tensor *base = n < 0 ? un(&s, MT_OP_linalg_inv, x) : x, *result = NULL;
    uint64_t e = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
    /* binary powering: result collects the squares of base at the set bits of e */
    while (e > 0 && s.st == MT_OK) {
        if (e & 1) {
            result = result == NULL ? base : bin(&s, MT_OP_matmul, result, base);
        }
        e >>= 1;
        if (e > 0) {
            base = bin(&s, MT_OP_matmul, base, base);
        }
    }
    /* a power of one is a copy, as PyTorch's */
    give(&s, result == x ? un(&s, MT_OP_clone, x) : result, &a->out[0]);
    return finish(&s);
}

/* mvlgamma(self, p): sum over j < p of lgamma(self - j / 2) + p (p - 1) / 4 * log(pi) (PyTorch 2
 * no longer checks that every element exceeds (p - 1) / 2) */
static mt_tensor *
mvlgamma_of(tmp *s, mt_tensor *x, int64_t p)
{
    if (p < 1) {
        s->st = mt_fail(MT_ERUNTIME, "p has to be greater than or equal to 1");
        return NULL;
    }
    mt_tensor *offsets = NULL, *col = NULL, *terms = NULL, *sum = NULL;
    const mt_dtype dt = mt_dtype_is_float(x->dtype) ? x->dtype : MT_DEFAULT_FLOAT;
    if (s->st == MT_OK) {
        own(s,
            mt_op_arange(mt_scalar_float(0.5 * (double)(1 - p)), mt_scalar_float(0.5),
                         mt_scalar_float(0.5), dt, mt_tensor_device(x), false, &offsets),
            &offsets);
    }
    if (!failed(s, offsets, offsets)) {
        own(s, mt_op_unsqueeze(x, -1, &col), &col);
    }
    mt_tensor *lg = un(s, MT_OP_lgamma, bin(s, MT_OP_add, col, offsets));
    const int64_t last = -1;
    if (!failed(s, lg, lg)) {
        own(s, mt_op_sum(lg, 1, &last, false, -1, &terms), &terms);
    }
    mt_tensor *shift = num(s, (double)p * (double)(p - 1) / 4 * log(MT_PI));
    if (!failed(s, terms, shift)) {
        own(s, mt_op_add(terms, shift, mt_scalar_int(1), &sum), &sum);
    }
    return sum;
}

mt_status
mt_composite_mvlgamma(mt_args *a)
{
    tmp s = {0};
    give(&s, mvlgamma_of(&s, a->t[0], a->i[0]), &a->out[0]);
    return finish(&s);
}

mt_status
mt_composite_mvlgamma_(mt_args *a)
{
    tmp s = {0};
    copy_into(&s, a->t[0], mvlgamma_of(&s, a->t[0], a->i[0]), &a->out[0]);
    return finish(&s);
}

/* sinc(self): sin(pi x) / (pi x), 1 at 0; the quotient reads 1 where x is 0, so neither its
 * value nor its gradient meets 0 / 0 there */
static mt_tensor *
sinc_of(tmp *s, mt_tensor *x)
{
    mt_tensor *zero = bin(s, MT_OP_eq, x, num(s, 0));
    mt_tensor *safe = bin(s, MT_OP_mul, sel(s, zero, num(s, 1), x), num(s, MT_PI));
    mt_tensor *q = bin(s, MT_OP_div, un(s, MT_OP_sin, safe), safe);
    return sel(s, zero, num(s, 1), q);
}

mt_status
mt_composite_sinc(mt_args *a)
{
    tmp s = {0};
    give(&s, sinc_of(&s, a->t[0]), &a->out[0]);
    return finish(&s);
}

mt_status
mt_composite_sinc_(mt_args *a)
{
    tmp s = {0};
    copy_into(&s, a->t[0], sinc_of(&s, a->t[0]), &a->out[0]);
    return finish(&s);
}

// self; out = the standard normal's CDF at self, erfc(-self / sqrt(2)) / 2
mt_status
mt_composite_special_ndtr(mt_args *a)
{
    tmp s = {0};
    mt_tensor *e = un(&s, MT_OP_erfc,
                      bin(&s, MT_OP_mul, a->t[0],
                          num(&s, -0.70710678118654752440 /* -1 / sqrt(2) */)));
    give(&s, bin(&s, MT_OP_mul, e, num(&s, 0.5)), &a->out[0]);
    return finish(&s);
}

// self, other (broadcast); out = self * log1p(other), 0 where self is 0 and other is not NaN
mt_status
mt_composite_special_xlog1py(mt_args *a)
{
    mt_tensor *x = a->t[0], *y = a->t[1];
    tmp s = {0};
    mt_tensor *prod = bin(&s, MT_OP_mul, x, un(&s, MT_OP_log1p, y));
    mt_tensor *zero = bin(&s, MT_OP_logical_and, bin(&s, MT_OP_eq, x, num(&s, 0)),
                          un(&s, MT_OP_logical_not, un(&s, MT_OP_isnan, y)));
    give(&s, sel(&s, zero, num(&s, 0), prod), &a->out[0]);
    return finish(&s);
}

// self; out = -self * log(self) for self > 0, 0 at 0, -inf below
mt_status
mt_composite_special_entr(mt_args *a)
{
    mt_tensor *x = a->t[0];
    tmp s = {0};
    /* safe is 1 where x <= 0, so the unselected branch holds no 0 * -inf */
    mt_tensor *safe = sel(&s, bin(&s, MT_OP_le, x, num(&s, 0)), num(&s, 1), x);
    mt_tensor *r = un(&s, MT_OP_neg, bin(&s, MT_OP_mul, safe, un(&s, MT_OP_log, safe)));
    r = sel(&s, bin(&s, MT_OP_eq, x, num(&s, 0)), num(&s, 0), r);
    give(&s, sel(&s, bin(&s, MT_OP_lt, x, num(&s, 0)), num(&s, -INFINITY), r), &a->out[0]);
    return finish(&s);
}

/* ---- cov and corrcoef (PyTorch's Correlation.cpp) ---- */

/* True when the 0-dim tensor t (bool or number) is nonzero; false once s has failed. */
static bool
holds(tmp *s, mt_tensor *t)
{
    mt_scalar v;
    if (failed(s, t, t)) {
        return false;
    }
    s->st = mt_tensor_item(t, &v);
    return s->st == MT_OK && mt_scalar_to_double(v) != 0;
}

/* A weights argument's checks: at most 1-D, its dtype kind, one weight per observation, none
 * negative. */
static mt_status
check_weights(tmp *s, mt_tensor *w, const char *name, bool integral, int64_t observations)
{
    if (w->ndim > 1) {
        return mt_fail(MT_ERUNTIME,
                       "cov(): expected %s to have one or fewer dimensions but got %s with %d "
                       "dimensions",
                       name, name, w->ndim);
    }
    if (integral ? !mt_dtype_is_integral(w->dtype, false) : !mt_dtype_is_float(w->dtype)) {
        return mt_fail(MT_ERUNTIME, "cov(): expected %s to have %s dtype but got %s with %s dtype",
                       name, integral ? "integral" : "floating point", name,
                       mt_dtype_scalar_name(w->dtype));
    }
    if (mt_tensor_numel(w) != observations) {
        return mt_fail(MT_ERUNTIME,
                       "cov(): expected %s to have the same numel as there are observations in the "
                       "input but got %lld != %lld",
                       name, (long long)mt_tensor_numel(w), (long long)observations);
    }
    if (observations > 0) {
        mt_tensor *low = un(s, MT_OP_min, w);
        if (!failed(s, low, low) && holds(s, bin(s, MT_OP_lt, low, num(s, 0)))) {
            return mt_fail(MT_ERUNTIME, "cov(): %s cannot be negative", name);
        }
    }
    return s->st;
}

// self (vars, obs) or (obs); fweights, aweights (obs) or NULL; out (vars, vars), squeezed
static mt_tensor *
cov_of(tmp *s, mt_tensor *self, int64_t correction, mt_tensor *fweights, mt_tensor *aweights)
{
    if (self->ndim > 2) {
        s->st = mt_fail(MT_ERUNTIME,
                        "cov(): expected input to have two or fewer dimensions but got an input "
                        "with %d dimensions",
                        self->ndim);
        return NULL;
    }
    if (self->dtype == MT_BOOL) {
        s->st = mt_fail(MT_ERUNTIME, "cov(): bool dtype is not supported for input");
        return NULL;
    }
    mt_tensor *in = self;
    if (self->ndim < 2) {
        const int64_t row[2] = {1, -1};
        mt_tensor *r = NULL;
        in = own(s, mt_op_reshape(self, 2, row, &r), &r);
        if (in == NULL) {
            return NULL;
        }
    }
    const int64_t observations = in->sizes[1];
    mt_tensor *w = NULL;
    if (fweights != NULL &&
        (s->st = check_weights(s, fweights, "fweights", true, observations)) == MT_OK) {
        w = fweights;
    }
    if (aweights != NULL && s->st == MT_OK &&
        (s->st = check_weights(s, aweights, "aweights", false, observations)) == MT_OK) {
        w = w != NULL ? bin(s, MT_OP_mul, w, aweights) : aweights;
    }
    if (s->st) {
        return NULL;
    }
    const int64_t obs_dim = 1;
    mt_tensor *w_sum = NULL, *weighted_sum = NULL, *avg, *norm_factor;
    if (w != NULL) {
        own(s, mt_op_sum(w, 0, NULL, false, -1, &w_sum), &w_sum);
        if (!failed(s, w_sum, w_sum) && !holds(s, bin(s, MT_OP_ne, w_sum, num(s, 0))) &&
            s->st == MT_OK) {
            s->st = mt_fail(MT_ERUNTIME, "cov(): weights sum to zero, can't be normalized");
        }
    } else {
        own(s, mt_tensor_scalar(mt_scalar_int(observations), MT_INT64, &w_sum), &w_sum);
    }
    mt_tensor *scaled_in = w != NULL ? bin(s, MT_OP_mul, in, w) : in;
    if (!failed(s, scaled_in, w_sum)) {
        own(s, mt_op_sum(scaled_in, 1, &obs_dim, false, -1, &weighted_sum), &weighted_sum);
    }
    avg = bin(s, MT_OP_div, weighted_sum, w_sum);
    mt_tensor *corr = NULL;
    own(s, mt_tensor_scalar(mt_scalar_int(correction), MT_INT64, &corr), &corr);
    if (w != NULL && aweights != NULL && correction != 0) {
        mt_tensor *wa = bin(s, MT_OP_mul, w, aweights), *wa_sum = NULL;
        if (!failed(s, wa, wa)) {
            own(s, mt_op_sum(wa, 0, NULL, false, -1, &wa_sum), &wa_sum);
        }
        norm_factor = bin(s, MT_OP_sub, w_sum,
                          bin(s, MT_OP_div, bin(s, MT_OP_mul, corr, wa_sum), w_sum));
    } else {
        norm_factor = bin(s, MT_OP_sub, w_sum, corr);
    }
    /* no degrees of freedom left: PyTorch warns and divides by zero */
    if (!failed(s, norm_factor, norm_factor) &&
        holds(s, bin(s, MT_OP_le, norm_factor, num(s, 0)))) {
        norm_factor = bin(s, MT_OP_mul, norm_factor, num(s, 0));
    }
    mt_tensor *col = NULL;
    if (!failed(s, avg, avg)) {
        own(s, mt_op_unsqueeze(avg, 1, &col), &col);
    }
    mt_tensor *centred = bin(s, MT_OP_sub, in, col);
    mt_tensor *right = un(s, MT_OP_t, w != NULL ? bin(s, MT_OP_mul, centred, w) : centred);
    mt_tensor *c = bin(s, MT_OP_true_divide, bin(s, MT_OP_mm, centred, right), norm_factor),
              *out = NULL;
    if (!failed(s, c, c)) {
        own(s, mt_op_squeeze(c, 0, NULL, &out), &out);
    }
    return out;
}

mt_status
mt_composite_cov(mt_args *a)
{
    tmp s = {0};
    give(&s, cov_of(&s, a->t[0], a->i[0], a->t[1], a->t[2]), &a->out[0]);
    return finish(&s);
}

// self (vars, obs) or (obs); out = cov(self) / (stddev_i stddev_j), clipped to [-1, 1]
mt_status
mt_composite_corrcoef(mt_args *a)
{
    mt_tensor *self = a->t[0];
    if (self->ndim > 2) {
        return mt_fail(MT_ERUNTIME,
                       "corrcoef(): expected input to have two or fewer dimensions but got an "
                       "input with %d dimensions",
                       self->ndim);
    }
    tmp s = {0};
    mt_tensor *c = cov_of(&s, self, 1, NULL, NULL);
    if (failed(&s, c, c)) {
        return finish(&s);
    }
    if (c->ndim == 0) {
        give(&s, bin(&s, MT_OP_div, c, c), &a->out[0]);
        return finish(&s);
    }
    const int64_t as_col[2] = {-1, 1}, as_row[2] = {1, -1};
    mt_tensor *d = NULL, *sd_col = NULL, *sd_row = NULL, *r = NULL;
    own(&s, mt_op_diagonal(c, 0, 0, 1, &d), &d);
    mt_tensor *sd = un(&s, MT_OP_sqrt, d);
    if (!failed(&s, sd, sd)) {
        own(&s, mt_op_reshape(sd, 2, as_col, &sd_col), &sd_col);
        own(&s, mt_op_reshape(sd, 2, as_row, &sd_row), &sd_row);
    }
    mt_tensor *q = bin(&s, MT_OP_div, bin(&s, MT_OP_div, c, sd_col), sd_row);
    mt_tensor *lo = num(&s, -1), *hi = num(&s, 1);
    if (!failed(&s, q, lo) && !failed(&s, hi, hi)) {
        own(&s, mt_op_clamp(q, lo, hi, &r), &r);
    }
    give(&s, r, &a->out[0]);
    return finish(&s);
}
