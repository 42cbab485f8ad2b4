/* group_norm and instance_norm, composites over the normalisations that have kernels: a group
 * of channels is one row of layer_norm (whose kernels accumulate the mean and the variance in
 * double, two passes, on every device, and whose backward kernel gives the input's gradient),
 * then the per-channel weight and bias are a multiply and an add (whose gradients autograd sums);
 * instance_norm is batch_norm over a (1, N * C, *) view, as ATen's instance_norm writes it,
 * with the running statistics repeated N times and averaged back; rms_norm, as ATen writes it,
 * over square, mean and rsqrt. PyTorch's checks and messages; every device. */
#include <float.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/arg_checks.h"
#include "ops/fails.h"
#include "ops/front.h"
#include "ops/nn.h"
#include "ops/op_chain.h"
#include "ops/ops.h"

/* PyTorch's message for input.size(1) of a tensor with fewer than two dims */
static mt_status
need_channels(const mt_tensor *input)
{
    if (input->ndim < 2) {
        int n = input->ndim ? input->ndim : 1;
        return mt_fail(MT_EINDEX,
                       "Dimension out of range (expected to be in range of [%d, %d], but got 1)",
                       -n, n - 1);
    }
    return MT_OK;
}

/* PyTorch's group_norm check of weight or bias p (or NULL): a vector of C elements. Its
 * message shows weight's shape (w; [0] where NULL) for bias too, as PyTorch's does. */
static mt_status
channel_vector(const char *what, const mt_tensor *p, const mt_tensor *w, const mt_tensor *input)
{
    if (p && (p->ndim != 1 || p->sizes[0] != input->sizes[1])) {
        char b1[256], b2[256];
        int64_t none = 0;
        return mt_fail(MT_ERUNTIME,
                       "Expected %s to be a vector of size equal to the number of channels in "
                       "input, but got %s of shape %s and input of shape %s",
                       what, what,
                       w ? mt_format_sizes(b1, sizeof(b1), w->ndim, w->sizes)
                         : mt_format_sizes(b1, sizeof(b1), 1, &none),
                       mt_format_sizes(b2, sizeof(b2), input->ndim, input->sizes));
    }
    return MT_OK;
}

static mt_status
group_norm_checks(const mt_tensor *input, int64_t groups, const mt_tensor *w, const mt_tensor *b)
{
    mt_status st;
    if ((st = need_channels(input))) {
        return st;
    }
    if (groups <= 0) {
        return mt_fail(MT_ERUNTIME, "Expected num groups to be greater than 0, got %lld",
                       (long long)groups);
    }
    if (input->sizes[1] % groups != 0) {
        char buf[256];
        return mt_fail(MT_ERUNTIME,
                       "Expected number of channels in input to be divisible by num_groups, but "
                       "got input of shape %s and num_groups=%lld",
                       mt_format_sizes(buf, sizeof(buf), input->ndim, input->sizes),
                       (long long)groups);
    }
    if ((st = channel_vector("weight", w, w, input)) ||
        (st = channel_vector("bias", b, w, input))) {
        return st;
    }
    if (!mt_dtype_is_float(input->dtype)) {
        return mt_fail_not_implemented("GroupNormKernelImpl", "", input->dtype);
    }
    const char *device = mt_front_on_cuda(input) ? "CUDA" : "CPU";
    if ((st = mt_check_param_dtype(input, w, device)) ||
        (st = mt_check_param_dtype(input, b, device))) {
        return st;
    }
    return MT_OK;
}

/* y * p + q, p and q (C) or NULL seen as (C, 1, ..., 1) against y (N, C, *); *out a new
 * reference to y where both are NULL */
static mt_status
channel_affine(mt_tensor *y, mt_tensor *p, mt_tensor *q, mt_tensor **out)
{
    int64_t shape[MT_MAX_DIMS];
    shape[0] = y->sizes[1];
    for (int d = 1; d < y->ndim - 1; d++) {
        shape[d] = 1;
    }
    mt_tensor *cur = mt_tensor_retain(y), *pv = NULL, *next = NULL;
    mt_tensor *params[2] = {p, q};
    mt_status st = MT_OK;
    for (int k = 0; k < 2 && st == MT_OK; k++) {
        if (params[k] == NULL) {
            continue;
        }
        if ((st = mt_op_view(params[k], y->ndim - 1, shape, &pv)) == MT_OK) {
            st = k == 0 ? mt_op_mul(cur, pv, &next) : mt_op_add(cur, pv, mt_scalar_int(1), &next);
            mt_tensor_clear(&pv);
        }
        if (st == MT_OK) {
            mt_tensor_release(cur);
            cur = next;
        }
    }
    if (st) {
        mt_tensor_release(cur);
        return st;
    }
    *out = cur;
    return MT_OK;
}

// input (N, C, *), weight and bias (C) or NULL; each (sample, group of C / num_groups
// channels) normalised by its own mean and biased variance, then weight * y + bias per channel
mt_status
mt_composite_group_norm(mt_args *a)
{
    mt_tensor *input = a->t[0], *w = a->t[1], *b = a->t[2];
    int64_t groups = a->i[0];
    mt_status st = group_norm_checks(input, groups, w, b);
    if (st) {
        return st;
    }
    int64_t inner = 1;
    for (int d = 2; d < input->ndim; d++) {
        inner *= input->sizes[d];
    }
    /* float32 weight or bias on a float16/bfloat16 input (PyTorch's mixed type): normalised
     * and scaled in float32, rounded once to the input's dtype */
    const mt_tensor *p = w ? w : b;
    bool mixed = p && p->dtype == MT_FLOAT32 &&
                 (input->dtype == MT_FLOAT16 || input->dtype == MT_BFLOAT16);
    /* one row of layer_norm per (sample, group): (N, G, C / G * inner) */
    int64_t rows[3] = {input->sizes[0], groups, input->sizes[1] / groups * inner};
    mt_tensor *wide = NULL, *x = NULL, *y = NULL, *yv = NULL, *res = NULL;
    if (mixed) {
        st = mt_op__to_copy(input, MT_FLOAT32, mt_tensor_device(input), &wide);
    }
    if (st == MT_OK && (st = mt_op_reshape(mixed ? wide : input, 3, rows, &x)) == MT_OK &&
        (st = mt_op_layer_norm(x, 1, &rows[2], NULL, NULL, mt_scalar_float(a->f[0]), true, &y)) ==
            MT_OK &&
        (st = mt_op_view(y, input->ndim, input->sizes, &yv)) == MT_OK &&
        (st = channel_affine(yv, w, b, &res)) == MT_OK) {
        mt_tensor *y_in = NULL;
        if (mixed) {
            st = mt_op__to_copy(res, (int)input->dtype, mt_tensor_device(input), &y_in);
        } else {
            y_in = mt_tensor_retain(res);
        }
        /* in the memory format input suggests, as ATen's native_group_norm */
        if (st == MT_OK) {
            st = mt_in_format(y_in, mt_suggest_memory_format(input), &a->out[0]);
        }
        mt_tensor_clear(&y_in);
    }
    mt_tensor_clear(&wide);
    mt_tensor_clear(&res);
    mt_tensor_clear(&x);
    mt_tensor_clear(&y);
    mt_tensor_clear(&yv);
    return st;
}

/* p (C) or NULL repeated n times (N * C), or NULL */
static mt_status
repeated(mt_tensor *p, int64_t n, mt_tensor **out)
{
    return p ? mt_op_repeat(p, 1, &n, out) : MT_OK;
}

/* running (C) = the mean over the N copies of rep (N * C), in place, where running is given */
static mt_status
average_back(mt_tensor *running, mt_tensor *rep, int64_t n)
{
    if (running == NULL) {
        return MT_OK;
    }
    int64_t shape[2] = {n, running->sizes[0]}, dim = 0;
    mt_tensor *v = NULL, *m = NULL, *r = NULL;
    mt_status st;
    if ((st = mt_op_view(rep, 2, shape, &v)) == MT_OK &&
        (st = mt_op_mean(v, 1, &dim, false, -1, &m)) == MT_OK) {
        st = mt_op_copy_(running, m, &r);
    }
    mt_tensor_clear(&v);
    mt_tensor_clear(&m);
    mt_tensor_clear(&r);
    return st;
}

// input (N, C, *), weight, bias, running_mean, running_var (C) or NULL; each (sample, channel)
// normalised over its * elements, by its own statistics when use_input_stats, else by the
// running ones (which training moves towards the average over the batch of its statistics)
mt_status
mt_composite_instance_norm(mt_args *a)
{
    mt_tensor *input = a->t[0], *rm = a->t[3], *rv = a->t[4];
    bool use_input_stats = a->b[0];
    mt_status st;
    if (!use_input_stats && (rm == NULL || rv == NULL)) {
        return mt_fail(MT_ERUNTIME, "Expected running_mean and running_var to be defined when "
                                    "use_input_stats is false");
    }
    if ((st = need_channels(input))) {
        return st;
    }
    int64_t n = input->sizes[0], shape[MT_MAX_DIMS];
    memcpy(shape, input->sizes, sizeof(int64_t) * (size_t)input->ndim);
    shape[0] = 1;
    shape[1] = n * input->sizes[1];
    /* weight, bias, running_mean, running_var repeated per sample */
    mt_tensor *rep[4] = {NULL, NULL, NULL, NULL}, *x = NULL, *y = NULL;
    for (int k = 0; k < 4 && st == MT_OK; k++) {
        st = repeated(a->t[1 + k], n, &rep[k]);
    }
    if (st == MT_OK && (st = mt_op_reshape(input, input->ndim, shape, &x)) == MT_OK &&
        (st = mt_op_batch_norm(x, rep[0], rep[1], rep[2], rep[3], use_input_stats,
                               mt_scalar_float(a->f[0]), mt_scalar_float(a->f[1]), a->b[1], &y)) ==
            MT_OK &&
        (st = average_back(rm, rep[2], n)) == MT_OK &&
        (st = average_back(rv, rep[3], n)) == MT_OK) {
        st = mt_op_view(y, input->ndim, input->sizes, &a->out[0]);
    }
    for (int k = 0; k < 4; k++) {
        mt_tensor_clear(&rep[k]);
    }
    mt_tensor_clear(&x);
    mt_tensor_clear(&y);
    return st;
}

// input (*, normalized_shape), weight (normalized_shape) or NULL: x / sqrt(mean of x^2 over the
// normalized dims + eps) * weight, as ATen's rms_norm composite: computed in x's opmath dtype
// (float32 for a 16-bit x), weight promoting with it, the result in input's dtype; eps defaults
// to the opmath dtype's machine epsilon
mt_status
mt_composite_rms_norm(mt_args *a)
{
    mt_tensor *input = a->t[0], *weight = a->t[1];
    const mt_intlist *shape = &a->l[0];
    mt_status st = mt_check_norm_shapes(input, shape, weight, NULL, true);
    if (st) {
        return st;
    }
    if (!mt_dtype_is_float(input->dtype)) {
        return mt_fail_not_implemented("rms_norm", "", input->dtype);
    }
    mt_dtype opmath = input->dtype == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32;
    double eps = !mt_scalar_is_none(a->s[0]) ? mt_scalar_to_double(a->s[0])
                 : opmath == MT_FLOAT64      ? DBL_EPSILON
                                             : (double)FLT_EPSILON;
    int64_t dims[MT_MAX_DIMS];
    for (int k = 0; k < shape->n; k++) {
        dims[k] = input->ndim - 1 - k;
    }
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_device dev = mt_tensor_device(input);
    mt_tensor *x = input->dtype == opmath ? input
                                          : own(&s, mt_op__to_copy(input, opmath, dev, &r), &r);
    mt_tensor *sq = un(&s, MT_OP_square, x);
    mt_tensor *ms = failed(&s, sq, sq) ? NULL
                                       : own(&s, mt_op_mean(sq, shape->n, dims, true, -1, &r), &r);
    mt_tensor *y = bin(&s, MT_OP_mul, x, un(&s, MT_OP_rsqrt, bin(&s, MT_OP_add, ms, num(&s, eps))));
    if (weight) {
        y = bin(&s, MT_OP_mul, y, weight);
    }
    if (!failed(&s, y, y) && y->dtype != input->dtype) {
        y = own(&s, mt_op__to_copy(y, input->dtype, dev, &r), &r);
    }
    give(&s, y, &a->out[0]);
    return finish(&s);
}
