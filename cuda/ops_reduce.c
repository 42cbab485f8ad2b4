/* The CUDA key's reductions (sum, mean, prod, amax, amin, all, any, norm, var, std, logsumexp,
 * max, min, max_dim, min_dim, argmax, argmin) and the ops along one dim (cumsum, cumprod,
 * softmax, log_softmax): the dims and dtypes are the front end's plan (ops/reduce_checks.c),
 * the result's shape the shared ops/reduce_dims.h's, the loops reduce.cu's and reduce_dim.cu's kernels. */
#include <math.h>
#include <string.h>

#include "cuda/capi_import.h"
#include "cuda/elementwise.h"
#include "cuda/ops.h"

/* One reduction's request: op over the dims marked in reduce[] of self cast to in_dt. */
typedef struct red_req {
    const char *name;
    mt_cuda_red_op op;
    mt_dtype in_dt, acc_dt; /* acc_dt: the kernel's result dtype (kernels.h) */
    double p;
    int flag;
    const mt_tensor *centre; /* float64, the shape of the result, or NULL */
} red_req;

/* *acc (and *idx, when idx is given: int64 positions) = r over reduce[] of self, of self's
 * rank with size 1 on the reduced dims, contiguous. acc is NULL to skip the values. A tensor
 * already in *acc or *idx (a result, contiguous: the same elements in the same order) is
 * written and stays the caller's; a NULL *acc (an accumulator in r's dtype, or a centre, that
 * the caller converts into its result) is made, and left only on success. *idx is always a
 * result (argmax's and max_dim's, stated by the front end). */
static mt_status
reduce_into(mt_tensor *self, const bool *reduce, const red_req *r, mt_tensor **acc, mt_tensor **idx)
{
    const void *kernel = mt_cuda_red_kernel(r->op, r->in_dt);
    if (kernel == NULL) {
        return mt_fail_not_implemented(r->name, "_cuda", r->in_dt);
    }
    mt_status st = MT_OK;
    mt_tensor *x = NULL, *part = NULL;
    const bool make_acc = acc && *acc == NULL;
    if (self->dtype == r->in_dt) {
        x = mt_tensor_retain(self);
    } else if ((st = mt_cuda_cast(self, r->in_dt, &x))) {
        return st;
    }
    mt_device dev = mt_tensor_device(self);
    mt_cuda_red p;
    memset(&p, 0, sizeof(p));
    int64_t keep[MT_MAX_DIMS];
    p.nout = p.nred = 1;
    int last = -1; /* the kind of the last dim of size > 1: 1 reduced, 0 kept */
    for (int d = 0; d < x->ndim; d++) {
        keep[d] = reduce[d] ? 1 : x->sizes[d];
        if (x->sizes[d] == 1) {
            continue; /* covered by offset 0 either way */
        }
        const int64_t n = x->sizes[d], stride = x->strides[d];
        int *nd = reduce[d] ? &p.red_ndim : &p.out_ndim;
        int64_t *sizes = reduce[d] ? p.red_sizes : p.out_sizes;
        int64_t *strides = reduce[d] ? p.red_strides : p.out_strides;
        if (last == (int)reduce[d] && strides[*nd - 1] == n * stride) {
            /* one dim with the previous (the same kind, laid out one after it): the same
             * row-major order, one division less per element */
            sizes[*nd - 1] *= n;
            strides[*nd - 1] = stride;
        } else {
            sizes[*nd] = n;
            strides[(*nd)++] = stride;
        }
        *(reduce[d] ? &p.nred : &p.nout) *= n;
        last = reduce[d];
    }
    if (make_acc && (st = mt_tensor_empty(x->ndim, keep, r->acc_dt, dev, acc))) {
        goto out_release;
    }
    p.x = mt_tensor_data(x);
    p.out = acc ? mt_tensor_data(*acc) : NULL;
    p.idx = idx ? (int64_t *)mt_tensor_data(*idx) : NULL;
    p.centre = r->centre ? (const double *)mt_tensor_data(r->centre) : NULL;
    p.p = r->p;
    p.flag = r->flag;
    if (p.nout > 0 && (st = mt_cuda_use_device(dev)) == MT_OK) {
        /* Results lying consecutive in x over reduced elements that do not (a sum over dim 0):
         * the threads over the results, a tile of 32 per block, reading coalesced; else a
         * block per result. Few results (or tiles) over many elements: slices blocks per
         * result or tile (a few blocks per SM in all, each folding a thousand elements, or
         * rows of a tile, at least), then a second pass over their states. */
        const bool cols = p.nout >= 32 && p.out_ndim > 0 && p.out_strides[p.out_ndim - 1] == 1 &&
                          p.out_sizes[p.out_ndim - 1] >= 32 && p.red_ndim > 0 &&
                          p.red_strides[p.red_ndim - 1] != 1;
        const int64_t units = cols ? (p.nout + 31) / 32 : p.nout;
        const int64_t per_block = 4 * MT_CUDA_RED_THREADS;
        const int64_t want = 4 * (int64_t)mt_cuda_sm_count() / units;
        const int64_t have = (p.nred + per_block - 1) / per_block;
        p.slices = want < have ? want : have;
        p.slices = p.slices > 1 ? p.slices : 1;
        if (p.slices > 1) {
            int64_t bytes = p.nout * p.slices * MT_CUDA_RED_STATE_BYTES;
            if ((st = mt_tensor_empty(1, &bytes, MT_UINT8, dev, &part))) {
                goto out_release;
            }
            p.part = mt_tensor_data(part);
        }
        const int64_t items = units * p.slices;
        kernel = cols ? mt_cuda_red_cols_kernel(r->op, r->in_dt) : kernel;
        int64_t blocks = items < (1 << 20) ? items : (1 << 20); /* the kernel strides over them */
        void *args[] = {&p};
        if ((st = mt_cuda_launch(kernel, (unsigned)blocks, MT_CUDA_RED_THREADS, args))) {
            goto out_release;
        }
        if (p.slices > 1) {
            st = mt_cuda_launch(mt_cuda_red_finish_kernel(r->op, r->in_dt), (unsigned)p.nout,
                                MT_CUDA_RED_THREADS, args);
        }
    }
out_release:
    mt_tensor_clear(&part);
    if (st && make_acc) {
        mt_tensor_clear(acc);
    }
    mt_tensor_clear(&x);
    return st;
}

/* out (the result the front end stated) = r over reduce[] of self, converted to out's dtype:
 * the kernel writes out itself when it computes in that dtype. */
static mt_status
reduce_to(mt_tensor *self, const bool *reduce, const red_req *r, mt_tensor *out)
{
    if (out->dtype == r->acc_dt) {
        return reduce_into(self, reduce, r, &out, NULL);
    }
    mt_tensor *acc = NULL;
    mt_status st = reduce_into(self, reduce, r, &acc, NULL);
    if (st == MT_OK) {
        st = mt_reduce_store(acc, out, mt_cuda_copy_into);
    }
    mt_tensor_clear(&acc);
    return st;
}

/* a->out[0] = r over the plan's dims of self. */
static mt_status
run(mt_args *a, const red_req *r)
{
    return reduce_to(a->t[0], a->plan->reduce.reduce, r, a->out[0]);
}

/* The kernel's result dtype of a sum or prod of dt (kernels.h): a complex one's is complex128. */
static mt_dtype
wide(mt_dtype dt)
{
    return mt_dtype_is_complex(dt) ? MT_COMPLEX128 : mt_dtype_is_float(dt) ? MT_FLOAT64 : MT_INT64;
}

// self (any shape), dims; out = sum (prod) of self over dims. One kernel for both (ops.def's
// CUDA_AS(sum_or_prod) rows; the plan's op tells them apart).
mt_status
mt_cuda_sum_or_prod(mt_args *a)
{
    const mt_op op = a->plan->op;
    const mt_reduce_plan *p = &a->plan->reduce;
    red_req r = {mt_cuda_op_name(op),
                 op == MT_OP_sum ? MT_CUDA_RED_SUM : MT_CUDA_RED_PROD,
                 p->in_dt,
                 wide(p->in_dt),
                 0,
                 0,
                 NULL};
    return run(a, &r);
}

mt_status
mt_cuda_mean(mt_args *a)
{
    mt_dtype out_dt = a->plan->reduce.out_dt;
    red_req r = {"mean", MT_CUDA_RED_SUM, out_dt, MT_FLOAT64, 0, 1, NULL};
    return run(a, &r);
}

// amax, amin, max and min (a->plan->op tells them apart): the largest (smallest) element over
// the plan's dims in the input's dtype; max and min reduce every dim to a 0-dim result
mt_status
mt_cuda_extremum(mt_args *a)
{
    const mt_op op = a->plan->op;
    const bool is_max = op == MT_OP_amax || op == MT_OP_max;
    const mt_dtype dt = a->t[0]->dtype;
    red_req r = {
        mt_cuda_op_name(op), is_max ? MT_CUDA_RED_AMAX : MT_CUDA_RED_AMIN, dt, dt, 0, 0, NULL};
    return run(a, &r);
}

// all and any (a->plan->op tells them apart) over the plan's dims, a bool result
mt_status
mt_cuda_logical(mt_args *a)
{
    const bool all = a->plan->op == MT_OP_all;
    red_req r = {
        all ? "all" : "any", all ? MT_CUDA_RED_ALL : MT_CUDA_RED_ANY, MT_BOOL, MT_BOOL, 0, 0, NULL};
    return run(a, &r);
}

// self (float), p (default 2), dims; out = (sum |x|^p)^(1/p), max |x| for p = inf
mt_status
mt_cuda_norm(mt_args *a)
{
    mt_dtype out_dt = a->plan->reduce.out_dt;
    double p = a->plan->reduce.p;
    mt_cuda_red_op op = isinf(p) ? (p > 0 ? MT_CUDA_RED_NORMINF : MT_CUDA_RED_NORMNINF)
                        : p == 0 ? MT_CUDA_RED_NORM0
                        : p == 1 ? MT_CUDA_RED_NORM1
                        : p == 2 ? MT_CUDA_RED_NORM2
                                 : MT_CUDA_RED_NORMP;
    red_req r = {"norm", op, out_dt, MT_FLOAT64, p, 0, NULL};
    return run(a, &r);
}

// self (float), dims; out = sum (x - mean)^2 / max(0, N - correction) for var, its root for
// std (a->plan->op tells them apart)
mt_status
mt_cuda_moment(mt_args *a)
{
    const bool root = a->plan->op == MT_OP_std;
    mt_tensor *self = a->t[0], *mean = NULL;
    const double correction = a->plan->reduce.p;
    const bool *reduce = a->plan->reduce.reduce;
    red_req first = {"var", MT_CUDA_RED_SUM, self->dtype, MT_FLOAT64, 0, 1, NULL};
    mt_status st = reduce_into(self, reduce, &first, &mean, NULL);
    if (st) {
        return st;
    }
    red_req second = {"var", MT_CUDA_RED_DEVSQ, self->dtype, MT_FLOAT64, correction, root, mean};
    st = reduce_to(self, reduce, &second, a->out[0]);
    mt_tensor_clear(&mean);
    return st;
}

// self, dims; out = log(sum exp(self)) over dims, as m + log(sum exp(self - m)), m the max
mt_status
mt_cuda_logsumexp(mt_args *a)
{
    mt_tensor *self = a->t[0], *in = NULL, *m = NULL, *centre = NULL;
    mt_dtype dt = a->plan->reduce.out_dt;
    const bool *reduce = a->plan->reduce.reduce;
    mt_status st = mt_cuda_cast(self, dt, &in);
    if (st) {
        return st;
    }
    int64_t count = 1;
    for (int d = 0; d < in->ndim; d++) {
        count *= reduce[d] ? in->sizes[d] : 1;
    }
    red_req first = {"logsumexp", MT_CUDA_RED_AMAX, dt, dt, 0, 0, NULL};
    if (count == 0) {
        /* nothing to sum: log(0) = -inf, as the CPU's centre of -inf (then 0) gives */
        st = mt_cuda_fill(a->out[0], mt_scalar_float(-INFINITY));
    } else if ((st = reduce_into(in, reduce, &first, &m, NULL)) == MT_OK &&
               (st = mt_cuda_cast(m, MT_FLOAT64, &centre)) == MT_OK) {
        red_req second = {"logsumexp", MT_CUDA_RED_EXPSUM, dt, MT_FLOAT64, 0, 0, centre};
        st = reduce_to(in, reduce, &second, a->out[0]);
    }
    mt_tensor_clear(&centre);
    mt_tensor_clear(&m);
    mt_tensor_clear(&in);
    return st;
}

/* max_dim and min_dim: the values and int64 indices of the extreme of self over the plan's dim;
 * argmax and argmin (a->plan->op tells the four apart): the indices alone, over the plan's dims
 * (one, or all of them for a dim of None: the flattened tensor). */
mt_status
mt_cuda_arg_extreme(mt_args *a)
{
    const mt_op which = a->plan->op;
    const bool want_values = which == MT_OP_max_dim || which == MT_OP_min_dim;
    const bool is_max = which == MT_OP_max_dim || which == MT_OP_argmax;
    const char *name = !want_values ? mt_cuda_op_name(which) : is_max ? "max" : "min";
    mt_tensor *self = a->t[0];
    const bool *reduce = a->plan->reduce.reduce;
    red_req r = {name,        is_max ? MT_CUDA_RED_ARGMAX : MT_CUDA_RED_ARGMIN,
                 self->dtype, self->dtype,
                 0,           0,
                 NULL};
    mt_tensor *values = a->out[0], *indices = a->out[want_values ? 1 : 0];
    return reduce_into(self, reduce, &r, want_values ? &values : NULL, &indices);
}

/* ---- along one dim, the result shaped like the input ---- */

/* How a kernel along one dim of (outer, n, inner) is launched: along the last dim (inner 1) a
 * row per block (block_k), or per warp for short rows when warp_k is given, its threads reading
 * consecutive elements; along another a thread per lane (lanes_k), consecutive threads reading
 * consecutive lanes (coalesced all the same). */
typedef struct row_launch {
    const void *kernel;
    int64_t blocks;
    unsigned threads;
} row_launch;

static row_launch
row_shape(const void *lanes_k, const void *block_k, const void *warp_k, int64_t outer, int64_t n,
          int64_t inner)
{
    row_launch r = {lanes_k, (outer * inner + MT_CUDA_THREADS - 1) / MT_CUDA_THREADS,
                    MT_CUDA_THREADS};
    if (inner == 1 && block_k != NULL) {
        const bool per_warp = warp_k != NULL && n <= 128;
        const int64_t rows_per_block = per_warp ? MT_CUDA_ROW_BLOCK / 32 : 1;
        r.kernel = per_warp ? warp_k : block_k;
        r.blocks = (outer + rows_per_block - 1) / rows_per_block;
        r.threads = MT_CUDA_ROW_BLOCK;
        while (!per_warp && r.threads > 32 && r.threads / 2 >= n) {
            r.threads /= 2; /* a short row: a smaller block (a warp at least, a power of two) */
        }
    }
    r.blocks = r.blocks < (1 << 20) ? r.blocks : (1 << 20); /* the kernels stride over the rest */
    return r;
}

/* t's sizes seen along dim: (outer, n, inner). */
static void
along(const mt_tensor *t, int dim, int64_t *outer, int64_t *n, int64_t *inner)
{
    *outer = *inner = 1;
    *n = t->ndim ? t->sizes[dim] : 1;
    for (int d = 0; d < t->ndim; d++) {
        *outer *= d < dim ? t->sizes[d] : 1;
        *inner *= d > dim ? t->sizes[d] : 1;
    }
}

/* out = op over the lanes of self along the plan's dim, in dtype dt (the result: contiguous,
 * self's shape). */
static mt_status
row_op(mt_args *a, mt_dtype dt, mt_cuda_row_op op)
{
    mt_tensor *self = a->t[0], *x = NULL;
    const int dim = a->plan->reduce.dim;
    mt_status st;
    if ((st = mt_cuda_dense_as(self, dt, &x))) {
        return st;
    }
    int64_t outer, n, inner;
    along(self, dim, &outer, &n, &inner);
    const void *block_k = mt_cuda_row_block_kernel(op, dt, false);
    row_launch r = row_shape(mt_cuda_row_kernel(op, dt), block_k,
                             mt_cuda_row_block_kernel(op, dt, true), outer, n, inner);
    if (outer * inner > 0 && n > 0) {
        void *xd = mt_tensor_data(x), *yd = mt_tensor_data(a->out[0]);
        void *args[] = {&xd, &yd, &outer, &n, &inner}; /* (x, y, rows, n) for a row kernel */
        if ((st = mt_cuda_use_device(mt_tensor_device(self))) == MT_OK) {
            st = mt_cuda_launch(r.kernel, (unsigned)r.blocks, r.threads, args);
        }
    }
    mt_tensor_clear(&x);
    return st;
}

// grad_output, output (any shape, the plan's float dtype), dim; out = _softmax_backward_data's
// result (_log_softmax_backward_data's: a->plan->op) along dim, one pass over each row
// (cuda/reduce_dim.cu), no host sync
mt_status
mt_cuda_softmax_backward(mt_args *a)
{
    const bool log = a->plan->op == MT_OP__log_softmax_backward_data;
    const mt_dtype dt = a->plan->reduce.out_dt;
    mt_tensor *g = NULL, *y = NULL;
    mt_status st;
    if ((st = mt_cuda_dense_as(a->t[0], dt, &g)) || (st = mt_cuda_dense_as(a->t[1], dt, &y))) {
        goto out_release;
    }
    int64_t outer, n, inner;
    along(g, a->plan->reduce.dim, &outer, &n, &inner);
    row_launch r = row_shape(mt_cuda_softmax_back_kernel(dt, log, 0),
                             mt_cuda_softmax_back_kernel(dt, log, 1),
                             mt_cuda_softmax_back_kernel(dt, log, 2), outer, n, inner);
    if (outer * inner > 0 && n > 0) {
        void *gd = mt_tensor_data(g), *yd = mt_tensor_data(y), *od = mt_tensor_data(a->out[0]);
        void *args[] = {&gd, &yd, &od, &outer, &n, &inner}; /* (g, y, gx, rows, n) by row */
        if ((st = mt_cuda_use_device(mt_tensor_device(g))) == MT_OK) {
            st = mt_cuda_launch(r.kernel, (unsigned)r.blocks, r.threads, args);
        }
    }
out_release:
    mt_tensor_clear(&g);
    mt_tensor_clear(&y);
    return st;
}

// cumsum, cumprod and logcumsumexp (a->plan->op tells them apart) of self along the plan's dim
mt_status
mt_cuda_scan(mt_args *a)
{
    const mt_op op = a->plan->op;
    const mt_cuda_row_op row = op == MT_OP_cumsum    ? MT_CUDA_ROW_CUMSUM
                               : op == MT_OP_cumprod ? MT_CUDA_ROW_CUMPROD
                                                     : MT_CUDA_ROW_LOGCUMSUMEXP;
    mt_dtype dt = a->plan->reduce.out_dt;
    if (mt_cuda_row_kernel(row, dt) == NULL) {
        return mt_fail_not_implemented(mt_cuda_op_name(op), "_cuda", dt);
    }
    return row_op(a, dt, row);
}

// softmax and log_softmax (a->plan->op tells them apart) of self along the plan's dim
mt_status
mt_cuda_softmax(mt_args *a)
{
    const bool log = a->plan->op == MT_OP_log_softmax;
    return row_op(a, a->plan->reduce.out_dt, log ? MT_CUDA_ROW_LOG_SOFTMAX : MT_CUDA_ROW_SOFTMAX);
}
