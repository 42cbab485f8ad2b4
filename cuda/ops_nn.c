/* The CUDA key's nn layers and losses: layer_norm, binary_cross_entropy (with logits), nll_loss
 * and embedding_dense_backward (nn.cu), from their front ends' plans (ops/nn_checks.c), with the
 * shared reduction of a loss (ops/nn.c) and messages of what the data shows (ops/fails.h). */
#include "cuda/device_assert.h"
#include "cuda/elementwise.h"
#include "cuda/kernels_index_fill_nn.h"
#include "cuda/norm.h"
#include "cuda/ops.h"

/* *out = t as a contiguous float64 copy, or NULL for an absent t. */
static mt_status
as_double(mt_tensor *t, mt_tensor **out)
{
    *out = NULL;
    return t ? mt_cuda_cast(t, MT_FLOAT64, out) : MT_OK;
}

// input (*, normalized_shape), weight and bias (normalized_shape) or NULL; out like input
mt_status
mt_cuda_layer_norm(mt_args *a)
{
    mt_tensor *input = a->t[0], *x = NULL, *w = NULL, *b = NULL, *out = a->out[0];
    int64_t n = a->plan->norm.n, rows = a->plan->norm.rows;
    double eps = a->plan->norm.eps;
    mt_status st;
    if ((st = as_double(a->t[1], &w)) || (st = as_double(a->t[2], &b)) ||
        (st = mt_cuda_cast(input, input->dtype, &x))) {
        goto out_release;
    }
    const char *xd = mt_tensor_data(x);
    char *yd = mt_tensor_data(out);
    const double *wd = w ? (const double *)mt_tensor_data(w) : NULL;
    const double *bd = b ? (const double *)mt_tensor_data(b) : NULL;
    void *args[] = {&xd, &yd, &rows, &n, &eps, &wd, &bd};
    int64_t blocks = rows < 65535 ? rows : 65535; /* the kernel strides over the rows */
    if (rows > 0 && n > 0 && (st = mt_cuda_use_device(mt_tensor_device(input))) == MT_OK) {
        st = mt_cuda_launch(mt_cuda_layer_norm_kernel(input->dtype), (unsigned)blocks,
                            MT_CUDA_ROW_THREADS, args);
    }
out_release:
    mt_tensor_clear(&x);
    mt_tensor_clear(&w);
    mt_tensor_clear(&b);
    return st;
}

/* The backend's bce loop (ops/nn.h's mt_bce_fn): the per-element loss of x, t (and pw), dense
 * and of loss's shape and dtype, into loss; _C's kernels prepared them and weigh and reduce it. */
// x, t, pw (n) or NULL, loss (n); loss = bce(x, t) or, with logits, bce(sigmoid(x), t) with pw
mt_status
mt_cuda_bce(mt_tensor *const *ins, bool logits, mt_tensor *loss)
{
    mt_cuda_assert_record *rec = NULL;
    mt_dtype dt = loss->dtype;
    const char *x = mt_tensor_data(ins[0]), *t = mt_tensor_data(ins[1]);
    const char *pw = ins[2] ? mt_tensor_data(ins[2]) : NULL;
    char *out = mt_tensor_data(loss);
    int64_t n = mt_tensor_numel(loss);
    /* an x or t outside [0, 1] fails a device-side assertion: nothing waits for the kernel */
    void *args[] = {&x, &t, &pw, &out, &n, &rec};
    mt_status st = mt_cuda_assert_record_get(&rec);
    if (st == MT_OK && (st = mt_cuda_use_device(mt_tensor_device(loss))) == MT_OK) {
        st = mt_cuda_launch_n(mt_cuda_bce_kernel(logits, dt), n, args);
    }
    return st;
}

// grad_output (*, D), indices (*) int64 or int32; out (num_weights, D): row v is the sum of
// the gradient rows whose index is v (divided by v's count with scale_grad_by_freq), 0 for
// padding_idx
mt_status
mt_cuda_embedding_dense_backward(mt_args *a)
{
    mt_tensor *grad = a->t[0], *g = NULL, *ix = NULL, *counts = NULL, *out = a->out[0];
    int64_t num_weights = a->i[0], padding_idx = a->i[1];
    int64_t n = a->plan->loss.n, dim = a->plan->loss.dim;
    mt_device dev = mt_tensor_device(grad);
    mt_status st;
    mt_dtype dt = grad->dtype;
    if ((st = mt_cuda_cast(grad, dt, &g)) || (st = mt_cuda_cast(a->t[1], MT_INT64, &ix)) ||
        (st = mt_cuda_check_range(ix, 0, num_weights, MT_CUDA_ASSERT_POSITION))) {
        goto out_release;
    }
    if ((st = mt_cuda_fill(out, mt_scalar_int(0))) || (st = mt_cuda_use_device(dev))) {
        goto out_release;
    }
    const int64_t *ixd = (const int64_t *)mt_tensor_data(ix);
    const char *cd = NULL, *gd = mt_tensor_data(g);
    char *od = mt_tensor_data(out);
    if (a->b[0]) {
        /* scale_grad_by_freq: each index's count first */
        if ((st = mt_tensor_empty(1, &num_weights, dt, dev, &counts)) ||
            (st = mt_cuda_fill(counts, mt_scalar_int(0)))) {
            goto out_release;
        }
        char *c = mt_tensor_data(counts);
        void *cargs[] = {&ixd, &c, &n};
        if ((st = mt_cuda_launch_n(mt_cuda_count_kernel(dt), n, cargs))) {
            goto out_release;
        }
        cd = c;
    }
    void *args[] = {&gd, &ixd, &cd, &od, &n, &dim, &padding_idx};
    st = mt_cuda_launch_n(mt_cuda_embedding_backward_kernel(dt), n * dim, args);
out_release:
    mt_tensor_clear(&counts);
    mt_tensor_clear(&ix);
    mt_tensor_clear(&g);
    return st;
}

// self (C) or (N, C, d1, ...) log-probabilities, target (N, d1, ...) int64 class indices,
// weight (C) or NULL; out = -weight[target] * self[target], reduced
mt_status
mt_cuda_nll_loss(mt_args *a)
{
    mt_tensor *self = a->t[0], *target = a->t[1], *x = NULL, *t = NULL, *w = NULL, *loss = NULL;
    mt_tensor *wt = NULL, *total = NULL, *wsum = NULL, *mean = NULL;
    mt_cuda_assert_record *rec = NULL;
    int64_t reduction = a->i[0], ignore = a->i[1];
    int64_t N = a->plan->loss.N, C = a->plan->loss.C, K = a->plan->loss.K;
    mt_device dev = mt_tensor_device(self);
    mt_status st;
    int64_t nk = N * K;
    /* the per-element losses are the result without a reduction, else summed below (loss and
     * wt, each target's weight summed for the mean, are then workspaces) */
    bool none = reduction == MT_REDUCTION_NONE;
    if ((st = mt_cuda_cast(self, self->dtype, &x)) || (st = mt_cuda_cast(target, MT_INT64, &t)) ||
        (st = as_double(a->t[2], &w)) ||
        (!none && (st = mt_tensor_empty(1, &nk, self->dtype, dev, &loss))) ||
        (st = mt_tensor_empty(1, &nk, MT_FLOAT64, dev, &wt)) ||
        (st = mt_cuda_assert_record_get(&rec)) || (st = mt_cuda_use_device(dev))) {
        goto out_release;
    }
    const char *xd = mt_tensor_data(x);
    const int64_t *td = (const int64_t *)mt_tensor_data(t);
    const double *wd = w ? (const double *)mt_tensor_data(w) : NULL;
    char *ld = mt_tensor_data(none ? a->out[0] : loss);
    double *wtd = (double *)mt_tensor_data(wt);
    /* a target outside [0, C) fails a device-side assertion: nothing waits for the kernel */
    void *args[] = {&xd, &td, &wd, &ld, &wtd, &N, &C, &K, &ignore, &rec};
    if ((st = mt_cuda_launch_n(mt_cuda_nll_kernel(self->dtype), nk, args)) || none) {
        goto out_release;
    }
    /* the sum in double on the device (the mean over the kept targets' weight: 0 / 0 = nan
     * when none is kept), then self's dtype */
    if ((st = mt_op_sum(loss, 0, NULL, false, MT_FLOAT64, &total))) {
        goto out_release;
    }
    if (reduction == MT_REDUCTION_MEAN &&
        ((st = mt_op_sum(wt, 0, NULL, false, MT_FLOAT64, &wsum)) ||
         (st = mt_op_div(total, wsum, NULL, &mean)))) {
        goto out_release;
    }
    st = mt_cuda_copy_into(a->out[0], mean ? mean : total); /* a new result: no version bump */
out_release:
    mt_tensor_clear(&mean);
    mt_tensor_clear(&wsum);
    mt_tensor_clear(&total);
    mt_tensor_clear(&wt);
    mt_tensor_clear(&loss);
    mt_tensor_clear(&w);
    mt_tensor_clear(&t);
    mt_tensor_clear(&x);
    return st;
}
