/* The CUDA key's batch_norm and the backward ops of layer_norm, batch_norm and nll_loss
 * (kernels in norm.cu), from their front ends' plans (ops/norm_checks.c): outputs from the
 * caching allocator, per-feature parameters as float64. */

#include "cuda/device_assert.h"
#include "cuda/elementwise.h"
#include "cuda/norm.h"
#include "cuda/ops.h"

/* Launches kernel with a block of MT_CUDA_ROW_THREADS per channel or row (n of them). */
static mt_status
launch_blocks(const void *kernel, int64_t n, void **args)
{
    int64_t blocks = n < 65535 ? n : 65535; /* the kernels stride over the rest */
    return n > 0 ? mt_cuda_launch(kernel, (unsigned)blocks, MT_CUDA_ROW_THREADS, args) : MT_OK;
}

/* *out = p (checked by the front end) as a contiguous float64 copy, NULL for an absent p. */
static mt_status
as_double(mt_tensor *p, mt_tensor **out)
{
    *out = NULL;
    return p ? mt_cuda_cast(p, MT_FLOAT64, out) : MT_OK;
}

static const double *
doubles(const mt_tensor *t)
{
    return t ? (const double *)mt_tensor_data(t) : NULL;
}

static void
release_all(mt_tensor **t, int n)
{
    for (int k = 0; k < n; k++) {
        mt_tensor_clear(&t[k]);
    }
}

/* running = (1 - momentum) * running + momentum * stat * correction, in double, written back
 * into running (any dtype and strides) in place. */
static mt_status
update_running(mt_tensor *running, const double *stat, double momentum, double correction)
{
    mt_tensor *r = NULL;
    mt_status st = mt_cuda_cast(running, MT_FLOAT64, &r);
    if (st) {
        return st;
    }
    double *rd = (double *)mt_tensor_data(r);
    int64_t C = mt_tensor_numel(r);
    void *args[] = {&rd, &stat, &C, &momentum, &correction};
    if ((st = mt_cuda_launch_n(mt_cuda_bn_update_kernel(), C, args)) == MT_OK &&
        (st = mt_cuda_copy_into(running, r)) == MT_OK) {
        mt_tensor_bump_version(running);
    }
    mt_tensor_release(r);
    return st;
}

// input (N, C, *), weight, bias, running_mean, running_var (C) or NULL; out like input.
// Training normalises by the batch's statistics and moves the running ones towards them (the
// variance unbiased, as PyTorch); evaluation uses the running statistics.
mt_status
mt_cuda_batch_norm(mt_args *a)
{
    mt_tensor *input = a->t[0], *rm = a->t[3], *rv = a->t[4];
    mt_tensor *t[5] = {NULL}, *out = a->out[0]; /* x, weight, bias, mean, var (float64) */
    bool training = a->b[0];
    const mt_norm_plan *p = &a->plan->norm;
    double eps = p->eps;
    int64_t outer = p->outer, C = p->C, inner = p->inner;
    mt_status st;
    mt_device dev = mt_tensor_device(input);
    int64_t two[2] = {2, C};
    if ((st = mt_cuda_cast(input, input->dtype, &t[0])) || (st = as_double(a->t[1], &t[1])) ||
        (st = as_double(a->t[2], &t[2])) ||
        (training ? (st = mt_tensor_empty(2, two, MT_FLOAT64, dev, &t[3]))
                  : ((st = as_double(rm, &t[3])) || (st = as_double(rv, &t[4])))) ||
        (st = mt_cuda_use_device(dev))) {
        goto out_release;
    }
    const char *xd = mt_tensor_data(t[0]);
    char *yd = mt_tensor_data(out);
    const double *mean = doubles(t[3]), *var = training ? mean + C : doubles(t[4]);
    const double *wd = doubles(t[1]), *bd = doubles(t[2]);
    int64_t n = mt_tensor_numel(input);
    void *sargs[] = {&xd, &outer, &C, &inner, &mean, &var};
    void *args[] = {&xd, &yd, &n, &C, &inner, &mean, &var, &eps, &wd, &bd};
    if ((training && (st = launch_blocks(mt_cuda_bn_stats_kernel(input->dtype), C, sargs))) ||
        (st = mt_cuda_launch_n(mt_cuda_bn_apply_kernel(input->dtype), n, args))) {
        goto out_release;
    }
    if (training) {
        st = mt_batch_norm_update_running(a, mean, var, outer * inner, update_running);
    }
out_release:
    release_all(t, 5);
    return st;
}

// grad_out, input (N, C, *), weight, running_mean, running_var (C) or NULL (the running
// statistics are read when not training); out: the gradients of input, weight and bias (C)
mt_status
mt_cuda_batch_norm_backward(mt_args *a)
{
    mt_tensor *t[5] = {NULL}; /* grad_out, input, weight, mean, var; the results gx, gw, gb */
    mt_tensor *input = a->t[1];
    const mt_norm_plan *p = &a->plan->norm;
    double eps = p->eps;
    int64_t outer = p->outer, C = p->C, inner = p->inner;
    mt_status st;
    mt_dtype dt = a->t[0]->dtype;
    mt_device dev = mt_tensor_device(input);
    if ((st = mt_norm_backward_inputs(a, a->b[0] ? 1 : 3, mt_cuda_cast, t)) ||
        (st = mt_cuda_use_device(dev))) {
        goto out_release;
    }
    const char *gd = mt_tensor_data(t[0]), *xd = mt_tensor_data(t[1]);
    char *gxd = mt_tensor_data(a->out[0]), *gwd = mt_tensor_data(a->out[1]);
    char *gbd = mt_tensor_data(a->out[2]);
    const double *wd = doubles(t[2]), *md = doubles(t[3]), *vd = doubles(t[4]);
    void *args[] = {&gd, &xd, &gxd, &outer, &C, &inner, &eps, &wd, &md, &vd, &gwd, &gbd};
    st = launch_blocks(mt_cuda_bn_backward_kernel(dt), C, args);
out_release:
    release_all(t, 5);
    return st;
}

/* ---- layer_norm ---- */

// grad_out, input (*, normalized_shape), weight (normalized_shape) or NULL; out: the gradients
// of input, weight and bias (the last two shaped normalized_shape)
mt_status
mt_cuda_layer_norm_backward(mt_args *a)
{
    mt_tensor *t[4] = {NULL}; /* grad_out, input, weight, stats; the results gx, gw, gb */
    mt_tensor *input = a->t[1];
    double eps = a->plan->norm.eps;
    int64_t n = a->plan->norm.n, rows = a->plan->norm.rows;
    mt_status st;
    mt_dtype dt = a->t[0]->dtype;
    mt_device dev = mt_tensor_device(input);
    int64_t two[2] = {rows, 2};
    if ((st = mt_norm_backward_inputs(a, 1, mt_cuda_cast, t)) ||
        (st = mt_tensor_empty(2, two, MT_FLOAT64, dev, &t[3])) || (st = mt_cuda_use_device(dev))) {
        goto out_release;
    }
    const char *gd = mt_tensor_data(t[0]), *xd = mt_tensor_data(t[1]);
    const double *wd = doubles(t[2]);
    double *sd = (double *)mt_tensor_data(t[3]);
    char *gxd = mt_tensor_data(a->out[0]), *gwd = mt_tensor_data(a->out[1]);
    char *gbd = mt_tensor_data(a->out[2]);
    void *rargs[] = {&gd, &xd, &gxd, &rows, &n, &eps, &wd, &sd};
    void *cargs[] = {&gd, &xd, &rows, &n, &sd, &gwd, &gbd};
    if (n == 0 || (st = launch_blocks(mt_cuda_ln_backward_rows_kernel(dt), rows, rargs)) == MT_OK) {
        st = mt_cuda_launch_n(mt_cuda_ln_backward_cols_kernel(dt), n, cargs);
    }
out_release:
    release_all(t, 4);
    return st;
}

/* ---- nll_loss ---- */

// grad_output (scalar, or target's shape for reduction none), self (C) or (N, C, d1, ...),
// target (N, d1, ...), weight (C) or NULL, total_weight (one element) or NULL; out (self's
// shape): -w[t] * grad at each target class (divided by total_weight for the mean, by default the
// kept targets' total weight), 0 elsewhere
mt_status
mt_cuda_nll_loss_backward(mt_args *a)
{
    mt_tensor *grad = a->t[0], *self = a->t[1], *target = a->t[2];
    /* grad_output, target, weight as float64, the total the kernel sums, total_weight as float64 */
    mt_tensor *t[5] = {NULL}, *gx = a->out[0];
    mt_cuda_assert_record *rec = NULL;
    int64_t reduction = a->i[0], ignore = a->i[1], one = 1;
    int64_t N = a->plan->loss.N, C = a->plan->loss.C, K = a->plan->loss.K;
    mt_status st;
    int none = reduction == MT_REDUCTION_NONE;
    mt_dtype dt = grad->dtype;
    mt_device dev = mt_tensor_device(self);
    int64_t nk = N * K;
    if ((st = mt_cuda_cast(grad, MT_FLOAT64, &t[0])) ||
        (st = mt_cuda_cast(target, MT_INT64, &t[1])) || (st = as_double(a->t[3], &t[2])) ||
        (st = mt_tensor_empty(1, &one, MT_FLOAT64, dev, &t[3])) ||
        (st = as_double(a->t[4], &t[4])) || (st = mt_cuda_assert_record_get(&rec)) ||
        (st = mt_cuda_fill(gx, mt_scalar_int(0))) || (st = mt_cuda_use_device(dev))) {
        goto out_release;
    }
    const double *gd = doubles(t[0]), *wd = doubles(t[2]);
    const int64_t *td = (const int64_t *)mt_tensor_data(t[1]);
    double *total = (double *)mt_tensor_data(t[3]);
    const double *given = doubles(t[4]);
    const double *mean_total = reduction != MT_REDUCTION_MEAN ? NULL : given ? given : total;
    char *gxd = mt_tensor_data(gx);
    /* a target outside [0, C) fails a device-side assertion; the gradient kernel skips it */
    void *targs[] = {&td, &wd, &nk, &C, &ignore, &total, &rec};
    void *args[] = {&gd, &td, &wd, &gxd, &N, &C, &K, &ignore, &none, &mean_total};
    if ((st = mt_cuda_launch(mt_cuda_nll_back_total_kernel(), 1, MT_CUDA_ROW_THREADS, targs)) ==
        MT_OK) {
        st = mt_cuda_launch_n(mt_cuda_nll_back_kernel(dt), nk, args);
    }
out_release:
    release_all(t, 5);
    return st;
}
