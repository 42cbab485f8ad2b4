/* The CUDA key's factories that compute their values (arange, linspace, logspace, eye) and its
 * shape kernels (cat, flip, tril/triu and in place, one_hot), from their front ends' plans
 * (ops/factory_args.c, shape_checks.c); the kernels factory.cu's, and index.cu's move for flip
 * and one_hot. */
#include <stdint.h>

#include "cuda/device_assert.h"
#include "cuda/elementwise.h"
#include "cuda/kernels_index_fill_nn.h"
#include "cuda/ops.h"

// out (n) of the plan's dtype on the factory's device: arange's start + i * step (ints or
// floats), linspace(start, end, steps), or base ** linspace(...) for logspace: the kernel's
// modes 0 to 3 (kernels_index_fill_nn.h). One kernel for the three (ops.def's
// CUDA_AS(range_factory) rows; the plan's op tells them apart).
mt_status
mt_cuda_range_factory(mt_args *a)
{
    const mt_op op = a->plan->op;
    const mt_range_spec *r = &a->plan->range;
    const int mode = op == MT_OP_arange ? (r->ints ? 0 : 1) : op == MT_OP_linspace ? 2 : 3;
    mt_status st;
    mt_cuda_range p = {mt_tensor_data(a->out[0]),
                       r->n,
                       mode,
                       r->dt == MT_FLOAT32,
                       r->si,
                       r->di,
                       r->s,
                       r->d,
                       r->e,
                       r->base};
    void *args[] = {&p};
    if ((st = mt_cuda_use_device(a->device)) ||
        (st = mt_cuda_launch_n(mt_cuda_range_kernel(r->dt), r->n, args))) {
        return st;
    }
    return mt_factory_finish(a);
}

// out (n, m) = 1 on the diagonal, else 0
mt_status
mt_cuda_eye(mt_args *a)
{
    const mt_dtype dt = a->plan->range.dt;
    int64_t n = a->plan->range.n, m = a->plan->range.m;
    mt_status st;
    char *data = mt_tensor_data(a->out[0]);
    void *args[] = {&data, &n, &m};
    if ((st = mt_cuda_use_device(a->device)) ||
        (st = mt_cuda_launch_n(mt_cuda_eye_kernel(dt), n * m, args))) {
        return st;
    }
    return mt_factory_finish(a);
}

// self (..., M, N); out (the result, contiguous (..., M, N)): self inside the triangle of
// diagonal i[0], else 0 (in place: into self). One kernel for tril, triu and their in-place forms (the plan's op tells them apart).
mt_status
mt_cuda_triangle(mt_args *a)
{
    const mt_op op = a->plan->op;
    const bool lower = op == MT_OP_tril || op == MT_OP_tril_;
    const bool inplace = op == MT_OP_tril_ || op == MT_OP_triu_;
    /* out of place into the result; in place through a contiguous copy of self */
    mt_tensor *self = a->t[0], *x = inplace ? NULL : mt_tensor_retain(a->out[0]);
    mt_status st = inplace ? mt_cuda_cast(self, self->dtype, &x) : mt_cuda_copy_into(x, self);
    if (st) {
        goto out_release;
    }
    char *data = mt_tensor_data(x);
    int64_t total = mt_tensor_numel(x), rows = x->sizes[x->ndim - 2], cols = x->sizes[x->ndim - 1];
    int64_t k = a->i[0];
    int low = lower;
    void *args[] = {&data, &data, &total, &rows, &cols, &k, &low};
    if ((st = mt_cuda_use_device(mt_tensor_device(x))) ||
        (st = mt_cuda_launch_n(mt_cuda_triangle_kernel(x->dtype), total, args))) {
        goto out_release;
    }
    if (inplace && (st = mt_cuda_copy_into(self, x)) == MT_OK) {
        mt_tensor_bump_version(self);
        a->out[0] = mt_tensor_retain(self);
    }
out_release:
    mt_tensor_clear(&x);
    return st;
}


/* One move (index.h) of mode with a position of 0 everywhere except where pos is given. */
static mt_status
launch_move(mt_cuda_move *p, int mode, mt_dtype dt, mt_device dev)
{
    void *args[] = {p};
    mt_status st = mt_cuda_use_device(dev);
    return st ? st : mt_cuda_launch_n(mt_cuda_move_kernel(mode, dt), p->n, args);
}

/* *out = a 0-dim tensor of dt on dev holding v. */
static mt_status
device_scalar(mt_scalar v, mt_dtype dt, mt_device dev, mt_tensor **out)
{
    mt_status st = mt_tensor_empty(0, NULL, dt, dev, out);
    if (st == MT_OK && (st = mt_cuda_fill(*out, v))) {
        mt_tensor_clear(out);
    }
    return st;
}

// self (any shape), dims; out (the result: same shape, contiguous) with the dims in dims
// reversed: a take through negative strides, which no tensor may hold but a kernel may walk
mt_status
mt_cuda_flip(mt_args *a)
{
    mt_tensor *self = a->t[0], *out = a->out[0], *zero = NULL;
    const bool *flip = a->plan->shape.dims;
    mt_device dev = mt_tensor_device(self);
    mt_status st = device_scalar(mt_scalar_int(0), MT_INT64, dev, &zero);
    if (st) {
        return st;
    }
    mt_cuda_move p = {0};
    p.ndim = self->ndim;
    p.n = mt_tensor_numel(self);
    const char *src = mt_tensor_data(self);
    int64_t esize = (int64_t)mt_dtype_size(self->dtype);
    mt_contiguous_strides(self->ndim, self->sizes, p.strides[0]);
    for (int d = 0; d < self->ndim; d++) {
        p.sizes[d] = self->sizes[d];
        p.strides[1][d] = flip[d] ? -self->strides[d] : self->strides[d];
        if (flip[d] && self->sizes[d] > 0) {
            src += (self->sizes[d] - 1) * self->strides[d] * esize;
        }
    }
    p.dst = mt_tensor_data(out);
    p.src = src;
    p.pos = (const int64_t *)mt_tensor_data(zero);
    st = launch_move(&p, 0, self->dtype, dev);
    mt_tensor_clear(&zero);
    return st;
}

/* *hi = the largest value of idx (not empty), read back from the device. */
static mt_status
largest(mt_tensor *idx, int64_t *hi)
{
    mt_tensor *max = NULL, *host = NULL;
    mt_scalar v;
    mt_status st = mt_op_max(idx, &max);
    if (st == MT_OK && (st = mt_op__to_copy(max, MT_INT64, MT_DEVICE_CPU, &host)) == MT_OK &&
        (st = mt_tensor_item(host, &v)) == MT_OK) {
        *hi = mt_scalar_to_int(v);
    }
    mt_tensor_clear(&host);
    mt_tensor_clear(&max);
    return st;
}

// self (*) int64 class indices, num_classes (-1: max + 1); out (*, num_classes) int64 of 0/1
mt_status
mt_cuda_one_hot(mt_args *a)
{
    mt_tensor *self = a->t[0], *idx = NULL, *one = NULL;
    int64_t classes = a->plan->shape.classes, n = mt_tensor_numel(self), hi = -1;
    mt_device dev = mt_tensor_device(self);
    mt_status st = mt_cuda_cast(self, MT_INT64, &idx);
    if (st) {
        return st;
    }
    /* as PyTorch's on CUDA: num_classes -1 reads the largest class back (a synchronisation);
     * a class outside [0, num_classes) fails scatter's device-side assertion */
    if (classes == -1) {
        if ((st = largest(idx, &hi))) {
            goto out_release;
        }
        if (hi < 0) {
            st = mt_fail_one_hot_class(true); /* no class at all: nothing to size the output */
            goto out_release;
        }
        classes = hi + 1;
    }
    if ((st = mt_cuda_check_range(idx, 0, classes, MT_CUDA_ASSERT_POSITION))) {
        goto out_release;
    }
    if ((a->out[0] == NULL && (st = mt_one_hot_result(a, classes))) ||
        (st = mt_cuda_fill(a->out[0], mt_scalar_int(0))) ||
        (st = device_scalar(mt_scalar_int(1), MT_INT64, dev, &one))) {
        goto out_release;
    }
    /* out row i (stride classes), column idx[i] = 1 */
    mt_cuda_move p = {0};
    p.ndim = 1;
    p.n = n;
    p.sizes[0] = n;
    p.strides[0][0] = classes;
    p.strides[2][0] = 1;
    p.dst = mt_tensor_data(a->out[0]);
    p.src = mt_tensor_data(one);
    p.pos = (const int64_t *)mt_tensor_data(idx);
    p.step = (int64_t)sizeof(int64_t);
    st = launch_move(&p, 1, MT_INT64, dev);
out_release:
    mt_tensor_clear(&one);
    mt_tensor_clear(&idx);
    return st;
}
