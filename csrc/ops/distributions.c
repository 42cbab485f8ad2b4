/* The random ops' device-independent parts, PyTorch's ATen/native/Distributions.cpp: the front
 * ends of exponential_, geometric_, log_normal_, cauchy_, bernoulli_, poisson and multinomial
 * (checks with PyTorch's messages; values are read back from a device where a check needs
 * them, at once, but for bernoulli_'s p, which a device's kernel checks), multinomial's driver,
 * and the composites bernoulli and normal. The kernels draw: csrc/cpu/random.c, sampling.c and
 * cuda/ops_random.c. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/arg_checks.h"
#include "ops/distributions.h"
#include "ops/front.h"
#include "ops/ops.h"

static const char *
device_name(const mt_tensor *t)
{
    return mt_tensor_device(t).type == MT_CUDA ? "cuda" : "cpu";
}

/* The values of the 0-dim tensors vals[0..n) (n <= 3) as doubles, read back from their device
 * together: one wait for the device, not one per value. */
static mt_status
read_back(int n, mt_tensor *const *vals, double *out)
{
    mt_tensor *wide[3] = {NULL}, *all = NULL, *host = NULL;
    mt_status st = MT_OK;
    for (int k = 0; k < n && st == MT_OK; k++) {
        st = mt_op__to_copy(vals[k], MT_FLOAT64, mt_tensor_device(vals[k]), &wide[k]);
    }
    if (st == MT_OK && (st = mt_op_stack(n, wide, 0, &all)) == MT_OK &&
        (st = mt_op__to_copy(all, MT_FLOAT64, MT_DEVICE_CPU, &host)) == MT_OK) {
        memcpy(out, mt_tensor_data(host), sizeof(double) * (size_t)n);
    }
    for (int k = 0; k < n; k++) {
        mt_tensor_clear(&wide[k]);
    }
    mt_tensor_clear(&all);
    mt_tensor_clear(&host);
    return st;
}

/* v[0], v[1] = the smallest and largest element of t (not empty), NaN where t holds one (amin and
 * amax propagate it); with row_sums, v[2] = the smallest sum of a row (along the last dim). One
 * read back on a device. */
static mt_status
summary(mt_tensor *t, bool row_sums, double *v)
{
    mt_tensor *r[3] = {NULL}, *sums = NULL;
    int64_t last = -1;
    mt_status st = mt_op_amin(t, 0, NULL, false, &r[0]);
    if (st == MT_OK && (st = mt_op_amax(t, 0, NULL, false, &r[1])) == MT_OK && row_sums &&
        (st = mt_op_sum(t, 1, &last, false, -1, &sums)) == MT_OK) {
        st = mt_op_amin(sums, 0, NULL, false, &r[2]);
    }
    if (st == MT_OK) {
        st = read_back(row_sums ? 3 : 2, r, v);
    }
    for (int k = 0; k < 3; k++) {
        mt_tensor_clear(&r[k]);
    }
    mt_tensor_clear(&sums);
    return st;
}

/* *bad = whether t (not empty) has a NaN or an element outside [lo, hi]. */
static mt_status
any_outside(mt_tensor *t, double lo, double hi, bool *bad)
{
    double v[2];
    mt_status st = summary(t, false, v);
    *bad = st == MT_OK && !(v[0] >= lo && v[1] <= hi); /* a NaN compares false */
    return st;
}

/* ---- the fills' front ends ---- */

mt_status
mt_bernoulli_tensor_p(const mt_args *a, const char *device, mt_tensor **p_out)
{
    mt_tensor *self = a->t[0], *p = a->t[1];
    mt_status st = mt_op_expand(p, self->ndim, self->sizes, p_out);
    if (st == MT_OK && !mt_dtype_is_float(p->dtype)) {
        mt_tensor_clear(p_out);
        return mt_fail(MT_ENOTIMPL, "\"bernoulli_tensor_%s_p_\" not implemented for '%s'", device,
                       mt_dtype_scalar_name(p->dtype));
    }
    return st;
}

mt_status
mt_front_bernoulli_(const mt_args *a, mt_plan *plan)
{
    mt_status st = mt_check_writable(a->t[0]);
    if (st || a->t[1] == NULL || a->t[1]->is_wrapped_number) {
        return st ? st : mt_random_spec_of(a, MT_RANDOM_BERNOULLI, &plan->random);
    }
    mt_tensor *p = NULL;
    bool bad = false;
    st = mt_bernoulli_tensor_p(a, device_name(a->t[0]), &p);
    /* a device's kernel checks p there (a device-side assertion), as PyTorch's CUDA bernoulli_ */
    if (st == MT_OK && mt_tensor_numel(p) > 0 && mt_tensor_device(p).type == MT_CPU) {
        st = any_outside(p, 0, 1, &bad);
    }
    mt_tensor_clear(&p);
    if (st == MT_OK && bad) {
        return mt_fail(MT_ERUNTIME,
                       "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this "
                       "error message be improved?  If so, please report an enhancement request "
                       "to PyTorch.)");
    }
    return st;
}

/* A draw's result (poisson, the gamma and Dirichlet draws and their gradients): the first n
 * tensors broadcast together, contiguous, of the first one's dtype. */
static mt_status
draw_output(mt_status st, const mt_args *a, mt_plan *plan, int n)
{
    int ndim = 0;
    int64_t shape[MT_MAX_DIMS];
    for (int k = 0; k < n && st == MT_OK; k++) {
        st = mt_broadcast_shapes(ndim, shape, a->t[k]->ndim, a->t[k]->sizes, &ndim, shape);
    }
    return st ? st : mt_front_output(plan, a->t[0]->dtype, ndim, shape);
}

mt_status
mt_check_poisson(const mt_args *a, const char *device)
{
    mt_tensor *rates = a->t[0];
    bool bad = false;
    if (!mt_dtype_is_float(rates->dtype)) {
        return mt_fail(MT_ENOTIMPL, "\"poisson_%s\" not implemented for '%s'", device,
                       mt_dtype_scalar_name(rates->dtype));
    }
    mt_status st = mt_tensor_numel(rates) > 0 ? any_outside(rates, 0, INFINITY, &bad) : MT_OK;
    if (st == MT_OK && bad) {
        return mt_fail(MT_ERUNTIME, "invalid Poisson rate, expected rate to be non-negative");
    }
    return st;
}

mt_status
mt_front_poisson(const mt_args *a, mt_plan *plan)
{
    return draw_output(mt_check_poisson(a, device_name(a->t[0])), a, plan, 1);
}

/* ---- multinomial ---- */

mt_status
mt_multinomial_shape(const mt_args *a, int *ndim, int64_t *shape)
{
    const mt_tensor *self = a->t[0];
    int64_t n_sample = a->i[0];
    if (self->ndim < 1 || self->ndim > 2) {
        return mt_fail(MT_ERUNTIME, "prob_dist must be 1 or 2 dim");
    }
    if (!mt_dtype_is_float(self->dtype)) {
        return mt_fail(MT_ERUNTIME,
                       "multinomial only supports floating-point dtypes for input, got: %s",
                       mt_dtype_scalar_name(self->dtype));
    }
    if (n_sample <= 0) {
        return mt_fail(MT_ERUNTIME, "cannot sample n_sample <= 0 samples");
    }
    int64_t n = self->sizes[self->ndim - 1];
    if (!a->b[0] && n_sample > n) {
        return mt_fail(MT_ERUNTIME,
                       "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
    }
    if (n > (INT64_C(1) << 24)) { /* the indices pass through a float in PyTorch's CUDA kernel */
        return mt_fail(MT_ERUNTIME, "number of categories cannot exceed 2^24");
    }
    *ndim = self->ndim;
    shape[0] = self->ndim == 2 ? self->sizes[0] : n_sample;
    shape[1] = n_sample;
    return MT_OK;
}

mt_status
mt_front_multinomial(const mt_args *a, mt_plan *plan)
{
    int ndim = 0;
    int64_t shape[2] = {0, 0};
    mt_status st = mt_multinomial_shape(a, &ndim, shape);
    return st ? st : mt_front_output(plan, MT_INT64, ndim, shape); /* the indices drawn */
}

/* The largest p / E, E ~ Exp(1) (the Gumbel-max trick without its logs), per row: PyTorch's
 * path without replacement and for one sample. */
static mt_status
exponential_race(mt_args *a, int64_t n_sample)
{
    mt_tensor *self = a->t[0], *q = NULL, *keys = NULL, *values = NULL, *drawn = NULL;
    double v[3]; /* PyTorch reads its two checks back one by one; here both come in one read */
    mt_status st = summary(self, true, v);
    if (st == MT_OK && !(v[0] >= 0 && v[1] <= DBL_MAX)) {
        st = mt_fail(MT_ERUNTIME, "probability tensor contains either `inf`, `nan` or element < 0");
    }
    if (st == MT_OK && !(v[2] > 0)) {
        st = mt_fail(MT_ERUNTIME, "invalid multinomial distribution (sum of probabilities <= 0)");
    }
    /* q as self's layout (empty_like), filled in memory order as PyTorch's */
    if (st || (st = mt_op_clone(self, &q)) ||
        (st = mt_op_exponential_(q, mt_scalar_int(1), a->gen, NULL)) ||
        (st = mt_op_div(self, q, NULL, &keys))) {
        goto out_release;
    }
    if (n_sample == 1) {
        st = mt_op_argmax(keys, -1, true, &drawn);
    } else {
        st = mt_op_topk(keys, n_sample, -1, true, true, &values, &drawn);
    }
    if (st == MT_OK) {
        st = mt_front_write_result(a->out[0], drawn);
    }
out_release:
    mt_tensor_clear(&drawn);
    mt_tensor_clear(&q);
    mt_tensor_clear(&keys);
    mt_tensor_clear(&values);
    return st;
}

/* PyTorch's with-replacement kernel checks each probability as it sums it: the first failing
 * check names the problem. */
static mt_status
check_probabilities(mt_tensor *self, const mt_multinomial_device *dev)
{
    double v[3]; /* lowest (NaN where one is), highest, smallest row sum: one read back */
    mt_status st = MT_OK;
    if (dev->summary) { /* the device's one pass, not nine ops: the checks of a small draw */
        dev->summary(self, v);
    } else if ((st = summary(self, true, v))) {
        return st;
    }
    if (isnan(v[0]) || v[0] < 0) {
        return mt_fail(MT_ERUNTIME,
                       "invalid multinomial distribution (encountering probability entry < 0)");
    }
    if (isinf(v[1])) {
        return mt_fail(MT_ERUNTIME, "invalid multinomial distribution (encountering probability "
                                    "entry = infinity or NaN)");
    }
    return v[2] > 0 ? MT_OK
                    : mt_fail(MT_ERUNTIME,
                              "invalid multinomial distribution (sum of probabilities <= 0)");
}

mt_status
mt_multinomial_with(mt_args *a, const mt_multinomial_device *dev)
{
    mt_tensor *self = a->t[0];
    int64_t n_sample = a->i[0];
    mt_generator *g;
    mt_status st = mt_generator_for(a->gen, mt_tensor_device(self), &g);
    if (st || mt_tensor_numel(a->out[0]) == 0) {
        return st;
    }
    if (!a->b[0] || n_sample == 1) {
        return exponential_race(a, n_sample);
    }
    if ((st = check_probabilities(self, dev)) == MT_OK) {
        st = dev->draws(self, n_sample, g, a->out[0]);
    }
    return st;
}

/* ---- composites ---- */

// self (any shape) probabilities, or p (a number); out (self's shape, contiguous) = 0 or 1
mt_status
mt_composite_bernoulli(mt_args *a)
{
    mt_tensor *self = a->t[0], *out = NULL, *p = NULL;
    mt_status st = mt_op_empty(self->ndim, self->sizes, self->dtype, mt_tensor_device(self), false,
                               &out);
    if (st == MT_OK && !mt_scalar_is_none(a->s[0])) {
        st = mt_tensor_scalar(a->s[0], MT_FLOAT64, &p);
    }
    if (st || (st = mt_op_bernoulli_(out, p ? p : self, a->gen, NULL))) {
        mt_tensor_clear(&out);
    }
    mt_tensor_clear(&p);
    a->out[0] = out;
    return st;
}

static mt_status
check_std_tensor(mt_tensor *std)
{
    bool bad = false;
    mt_status st = mt_tensor_numel(std) > 0 ? any_outside(std, 0, HUGE_VAL, &bad) : MT_OK;
    return st    ? st
           : bad ? mt_fail(MT_ERUNTIME, "normal expects all elements of std >= 0.0")
                 : MT_OK;
}

// mean, std: tensors or numbers, at least one a tensor; out (their broadcast shape) =
// N(mean, std^2) draws, PyTorch's normal_out_impl: normal_ then scaled and shifted by ops
mt_status
mt_composite_normal(mt_args *a)
{
    mt_tensor *mean = a->t[0], *std = a->t[1], *out = NULL;
    bool mean_number = mean->is_wrapped_number, std_number = std->is_wrapped_number;
    mt_scalar v;
    mt_status st = MT_OK;
    if (mean_number && std_number) {
        return mt_fail(MT_ETYPE, "normal(): a float mean and std need a size");
    }
    if (std_number) { /* normal(Tensor mean, float std): normal_(0, std), + mean */
        if ((st = mt_tensor_item(std, &v))) {
            return st;
        }
        if (!(mt_scalar_to_double(v) >= 0)) {
            return mt_fail(MT_ERUNTIME, "normal expects std >= 0.0, but found std %g",
                           mt_scalar_to_double(v));
        }
        if ((st = mt_op_empty(mean->ndim, mean->sizes, mean->dtype, mt_tensor_device(mean), false,
                              &out)) ||
            (st = mt_op_normal_(out, mt_scalar_int(0), v, a->gen, NULL)) ||
            (st = mt_op_add_(out, mean, mt_scalar_int(1), NULL))) {
            goto out_fail;
        }
        a->out[0] = out;
        return MT_OK;
    }
    /* normal(float mean, Tensor std) and normal(Tensor mean, Tensor std): normal_(0, 1), * std,
     * + mean, in the shape they broadcast to and the dtype of mean (of std for a float mean) */
    mt_tensor *like = mean_number ? std : mean;
    int ndim;
    int64_t shape[MT_MAX_DIMS];
    if ((st = check_std_tensor(std)) ||
        (st = mt_broadcast_shapes(mean->ndim, mean->sizes, std->ndim, std->sizes, &ndim, shape)) ||
        (st = mt_op_empty(ndim, shape, like->dtype, mt_tensor_device(like), false, &out)) ||
        (st = mt_op_normal_(out, mt_scalar_int(0), mt_scalar_int(1), a->gen, NULL)) ||
        (st = mt_op_mul_(out, std, NULL)) || (st = mt_op_add_(out, mean, mt_scalar_int(1), NULL))) {
        goto out_fail;
    }
    a->out[0] = out;
    return MT_OK;
out_fail:
    mt_tensor_clear(&out);
    return st;
}

/* ---- gamma and Dirichlet draws and gradients (cpu/gamma.c) ---- */

/* PyTorch's CPU kernels of the gamma family have no float16/bfloat16 loops (its CUDA ones do) */
static mt_status
float_only(const mt_tensor *t, const char *name, const char *device)
{
    bool small_on_cpu = mt_dtype_is_small(t->dtype) && mt_tensor_device(t).type == MT_CPU;
    if (!mt_dtype_is_float(t->dtype) || small_on_cpu) {
        return mt_fail(MT_ENOTIMPL, "\"%s%s\" not implemented for '%s'", name, device,
                       mt_dtype_scalar_name(t->dtype));
    }
    return MT_OK;
}

mt_status
mt_front_gamma(const mt_args *a, mt_plan *plan)
{
    return draw_output(float_only(a->t[0], "gamma_", device_name(a->t[0])), a, plan, 1);
}

mt_status
mt_front_dirichlet(const mt_args *a, mt_plan *plan)
{
    return draw_output(float_only(a->t[0], "dirichlet", ""), a, plan, 1);
}

/* a float first input and the others of its dtype (TensorIterator's check, its message) */
static mt_status
same_dtype(const mt_args *a, int n, const char *name)
{
    mt_status st = float_only(a->t[0], name, device_name(a->t[0]));
    for (int k = 1; st == MT_OK && k < n; k++) {
        if (a->t[k]->dtype != a->t[0]->dtype) {
            return mt_fail(MT_ERUNTIME, "Found dtype %s but expected %s",
                           mt_dtype_scalar_name(a->t[k]->dtype),
                           mt_dtype_scalar_name(a->t[0]->dtype));
        }
    }
    return st;
}

/* binomial: count and prob floating (ValueErrors, ATen's _s_binomial_cpu), of one dtype
 * (TensorIterator's check), one the device's kernel takes; the result in their broadcast shape
 * (ATen resizes its output, count's shape, to it) */
mt_status
mt_front_binomial(const mt_args *a, mt_plan *plan)
{
    static const char *const names[2] = {"count", "prob"};
    for (int k = 0; k < 2; k++) {
        mt_dtype dt = a->t[k]->dtype;
        if (!mt_dtype_is_float(dt)) {
            return mt_fail(MT_EVALUE,
                           "binomial only supports floating-point dtypes for %s, got: %s", names[k],
                           mt_dtype_scalar_name(dt));
        }
    }
    mt_status st = MT_OK;
    if (a->t[1]->dtype != a->t[0]->dtype) {
        st = mt_fail(MT_ERUNTIME, "Found dtype %s but expected %s",
                     mt_dtype_scalar_name(a->t[1]->dtype), mt_dtype_scalar_name(a->t[0]->dtype));
    }
    return draw_output(st ? st : float_only(a->t[0], "binomial_", device_name(a->t[0])), a, plan,
                       2);
}

/* _standard_gamma_grad (2 tensors) and _dirichlet_grad (3): MT_FRONTS maps both here */
mt_status
mt_front_gamma_grad(const mt_args *a, mt_plan *plan)
{
    const bool dirichlet = plan->op == MT_OP__dirichlet_grad;
    mt_status st = dirichlet ? same_dtype(a, 3, "_dirichlet_grad_")
                             : same_dtype(a, 2, "_standard_gamma_grad_");
    return draw_output(st, a, plan, dirichlet ? 3 : 2);
}
