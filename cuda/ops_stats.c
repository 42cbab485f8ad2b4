/* The CUDA key's statistics kernels: searchsorted, cummax and cummin, and the loops of histc and
 * bincount (mt_cuda_stats), whose kernels _C runs (dispatch/backend.c): stats.cu's kernels. The
 * front ends (ops/stats_checks.c) have checked the arguments and stated the results (bincount's
 * length found first, with ops on the device); the range of histc comes from _C (ops/stats.h);
 * the inputs are cast to contiguous copies of the kernels' dtypes. */
#include "cuda/elementwise.h"
#include "cuda/kernels_index_fill_nn.h" /* mt_cuda_launch_n */
#include "cuda/ops.h"
#include "cuda/stats.h"
#include "ops/plans.h"
#include "ops/stats.h"

// self (any shape) float; out (bins): counts of self's elements in equal bins of [lo, hi]
static mt_status
histc(mt_tensor *self, double lo, double hi, mt_tensor *out)
{
    mt_tensor *x = NULL;
    mt_status st = mt_cuda_use_device(mt_tensor_device(self));
    if (st || (st = mt_cuda_fill(out, mt_scalar_int(0))) ||
        (st = mt_cuda_cast(self, self->dtype, &x))) {
        goto out_release;
    }
    mt_cuda_histc p = {
        mt_tensor_data(x), mt_tensor_data(out), mt_tensor_numel(x), out->sizes[0], lo, hi};
    void *args[] = {&p};
    st = mt_cuda_launch_n(mt_cuda_histc_kernel(self->dtype == MT_FLOAT64), p.n, args);
out_release:
    mt_tensor_clear(&x);
    return st;
}

// self (n) non-negative ints, weights (n) or NULL; out (length): each value's count or summed
// weights
static mt_status
bincount(mt_tensor *self, mt_tensor *weights, mt_tensor *out)
{
    mt_tensor *x = NULL, *w = NULL;
    mt_status st = mt_cuda_use_device(mt_tensor_device(self));
    if (st || (st = mt_cuda_fill(out, mt_scalar_int(0))) ||
        (st = mt_cuda_cast(self, MT_INT64, &x)) ||
        (weights && (st = mt_cuda_cast(weights, out->dtype, &w)))) {
        goto out_release;
    }
    mt_cuda_bincount p = {(const int64_t *)mt_tensor_data(x), w ? mt_tensor_data(w) : NULL,
                          mt_tensor_data(out), mt_tensor_numel(x)};
    void *args[] = {&p};
    st = mt_cuda_launch_n(mt_cuda_bincount_kernel(out->dtype), p.n, args);
out_release:
    mt_tensor_clear(&x);
    mt_tensor_clear(&w);
    return st;
}

const mt_stats_device mt_cuda_stats = {histc, bincount};

// sorted_sequence (*, len) (or one row), self (*, k) (or a number); out (self's shape): each
// value's position in its row; compared as int64 when both are integers, else as float64
mt_status
mt_cuda_searchsorted(mt_args *a)
{
    mt_tensor *seq = a->t[0], *self = a->t[1], *sorter = a->t[2], *s = NULL, *x = NULL, *o = NULL;
    const mt_device dev = mt_tensor_device(seq);
    const bool ints = mt_dtype_is_integral(seq->dtype, true) &&
                      mt_dtype_is_integral(self->dtype, true);
    const mt_dtype dt = ints ? MT_INT64 : MT_FLOAT64;
    const bool right = a->b[1] || (a->str[0] && a->str[0][0] == 'r');
    mt_status st = mt_cuda_use_device(dev);
    if (st || (st = mt_cuda_cast(seq, dt, &s)) || (st = mt_cuda_cast(self, dt, &x)) ||
        (sorter && (st = mt_cuda_cast(sorter, MT_INT64, &o)))) {
        goto out_release;
    }
    mt_cuda_search p = {mt_tensor_data(s),
                        mt_tensor_data(x),
                        o ? (const int64_t *)mt_tensor_data(o) : NULL,
                        mt_tensor_data(a->out[0]),
                        mt_tensor_numel(x),
                        seq->sizes[seq->ndim - 1],
                        self->ndim ? self->sizes[self->ndim - 1] : 1,
                        seq->ndim == 1,
                        right,
                        a->b[0]};
    void *args[] = {&p};
    st = mt_cuda_launch_n(mt_cuda_searchsorted_kernel(ints), p.n, args);
out_release:
    mt_tensor_clear(&s);
    mt_tensor_clear(&x);
    mt_tensor_clear(&o);
    return st;
}

// self (any shape); values, indices (self's shape): the running max (cummax) or min (cummin)
// along dim. One kernel for both (ops.def's CUDA_AS(cumulative_extreme) rows).
mt_status
mt_cuda_cumulative_extreme(mt_args *a)
{
    const bool max = a->plan->op == MT_OP_cummax;
    mt_tensor *self = a->t[0], *x = NULL;
    const mt_device dev = mt_tensor_device(self);
    const int dim = a->plan->reduce.dim; /* wrapped by the front end */
    mt_status st;
    if ((st = mt_cuda_use_device(dev)) || (st = mt_cuda_cast(self, self->dtype, &x))) {
        goto out_release;
    }
    mt_cuda_cumext p = {mt_tensor_data(x),
                        mt_tensor_data(a->out[0]),
                        (int64_t *)mt_tensor_data(a->out[1]),
                        1,
                        self->ndim ? self->sizes[dim] : 1,
                        1,
                        max};
    for (int d = 0; d < self->ndim; d++) {
        p.outer *= d < dim ? self->sizes[d] : 1;
        p.inner *= d > dim ? self->sizes[d] : 1;
    }
    void *args[] = {&p};
    st = mt_cuda_launch_n(mt_cuda_cumext_kernel(self->dtype), p.outer * p.inner, args);
out_release:
    mt_tensor_clear(&x);
    return st;
}
