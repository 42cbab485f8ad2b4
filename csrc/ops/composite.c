/* Composite ops: written in terms of other ops through the dispatcher, for every device.
 *
 * This is where the journey's decompositions come from: linear -> t + addmm (or matmul),
 * relu -> clamp_min, matmul -> mm / mv / dot / bmm, zeros -> empty + zero_. */
#include <string.h>

#include "dispatch/deterministic.h"
#include "dispatch/kernels.h"
#include "ops/ops.h"

/* PyTorch refuses relu of a bool (clamp_min(bool, 0) would promote it to int64). */
static mt_status
check_relu(const mt_tensor *self)
{
    if (self->dtype == MT_BOOL) {
        return mt_fail(MT_ERUNTIME, "Boolean inputs not supported for relu");
    }
    return MT_OK;
}

// self (any shape); out = max(self, 0)
mt_status
mt_composite_relu(mt_args *a)
{
    mt_status st = check_relu(a->t[0]);
    return st ? st : mt_op_clamp_min(a->t[0], mt_scalar_int(0), &a->out[0]);
}

mt_status
mt_composite_relu_(mt_args *a)
{
    mt_status st = check_relu(a->t[0]);
    if (st) {
        return st;
    }
    st = mt_op_clamp_min_(a->t[0], mt_scalar_int(0), NULL);
    if (st == MT_OK) {
        a->out[0] = mt_tensor_retain(a->t[0]);
    }
    return st;
}

// input (*, in) contiguous, wt (in, out), bias (out): out (*, out) = addmm over input seen as
// (rows, in), as PyTorch's _flatten_nd_linear: one product with the bias as its epilogue (one
// cublasLtMatmul on CUDA), not a batched product and then an add
static mt_status
flat_linear(mt_tensor *input, mt_tensor *wt, mt_tensor *bias, mt_tensor **out)
{
    int64_t flat[2] = {1, input->sizes[input->ndim - 1]}, shape[MT_MAX_DIMS];
    for (int d = 0; d < input->ndim - 1; d++) {
        flat[0] *= input->sizes[d]; /* the product, not -1: a dim may be 0 */
        shape[d] = input->sizes[d];
    }
    shape[input->ndim - 1] = wt->sizes[1];
    mt_tensor *x = NULL, *prod = NULL;
    mt_status st;
    if ((st = mt_op_reshape(input, 2, flat, &x)) == MT_OK &&
        (st = mt_op_addmm(bias, x, wt, mt_scalar_int(1), mt_scalar_int(1), &prod)) == MT_OK) {
        st = mt_op_view(prod, input->ndim, shape, out);
    }
    mt_tensor_clear(&x);
    mt_tensor_clear(&prod);
    return st;
}

// input (*, in), weight (out, in), bias (out) or NULL; out (*, out) = input @ weight^T + bias
mt_status
mt_composite_linear(mt_args *a)
{
    mt_tensor *input = a->t[0], *weight = a->t[1], *bias = a->t[2], *wt = NULL;
    mt_status st = mt_op_t(weight, &wt);
    if (st) {
        return st;
    }
    if (input->ndim == 2 && bias != NULL) {
        st = mt_op_addmm(bias, input, wt, mt_scalar_int(1), mt_scalar_int(1), &a->out[0]);
    } else if (input->ndim >= 1 && bias != NULL && bias->ndim == 1 &&
               mt_tensor_is_contiguous(input)) {
        /* any other contiguous input, a 1-D one too (PyTorch's grad_fn ViewBackward0) */
        st = flat_linear(input, wt, bias, &a->out[0]);
    } else {
        /* Out of place: matmul's result may be a view (of its bmm), and autograd does not
         * take in-place ops on views. */
        mt_tensor *prod = NULL;
        st = mt_op_matmul(input, wt, &prod);
        if (st == MT_OK && bias != NULL) {
            st = mt_op_add(prod, bias, mt_scalar_int(1), &a->out[0]);
            mt_tensor_release(prod);
        } else if (st == MT_OK) {
            a->out[0] = prod;
        }
    }
    mt_tensor_release(wt);
    return st;
}

/* matmul of tensors with at least one of them 3-D or more: broadcast the batch dims and bmm.
 * A 1-D operand is made a matrix first and its dim removed from the result. */
static mt_status
matmul_batched(mt_tensor *x, mt_tensor *y, mt_tensor **out)
{
    mt_status st = MT_OK;
    mt_tensor *xm = NULL, *ym = NULL, *xe = NULL, *ye = NULL, *xb = NULL, *yb = NULL, *r = NULL;
    bool x_vec = x->ndim == 1, y_vec = y->ndim == 1;
    if (x_vec) {
        st = mt_op_unsqueeze(x, 0, &xm);
    } else {
        xm = mt_tensor_retain(x);
    }
    if (st == MT_OK && y_vec) {
        st = mt_op_unsqueeze(y, 1, &ym);
    } else if (st == MT_OK) {
        ym = mt_tensor_retain(y);
    }
    if (st) {
        goto out_release;
    }
    int nb;
    int64_t batch[MT_MAX_DIMS], shape[MT_MAX_DIMS];
    st = mt_broadcast_shapes(xm->ndim - 2, xm->sizes, ym->ndim - 2, ym->sizes, &nb, batch);
    if (st) {
        goto out_release;
    }
    int64_t bsz = mt_numel(nb, batch);
    int64_t n = xm->sizes[xm->ndim - 2], k = xm->sizes[xm->ndim - 1];
    int64_t k2 = ym->sizes[ym->ndim - 2], p = ym->sizes[ym->ndim - 1];
    if (k != k2) {
        st = mt_fail(MT_ERUNTIME,
                     "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] "
                     "but got: [%lld, %lld].",
                     (long long)bsz, (long long)k, (long long)bsz, (long long)k2);
        goto out_release;
    }
    memcpy(shape, batch, sizeof(int64_t) * (size_t)nb);
    shape[nb] = n;
    shape[nb + 1] = k;
    if ((st = mt_op_expand(xm, nb + 2, shape, &xe))) {
        goto out_release;
    }
    shape[nb] = k;
    shape[nb + 1] = p;
    if ((st = mt_op_expand(ym, nb + 2, shape, &ye))) {
        goto out_release;
    }
    int64_t s3[3] = {bsz, n, k};
    if ((st = mt_op_reshape(xe, 3, s3, &xb))) {
        goto out_release;
    }
    s3[1] = k;
    s3[2] = p;
    if ((st = mt_op_reshape(ye, 3, s3, &yb)) || (st = mt_op_bmm(xb, yb, &r))) {
        goto out_release;
    }
    /* The result's shape: batch, then n unless x was a vector, then p unless y was one. */
    int nd = nb;
    if (!x_vec) {
        shape[nd++] = n;
    }
    if (!y_vec) {
        shape[nd++] = p;
    }
    st = mt_op__unsafe_view(r, nd, shape, out);
out_release:
    mt_tensor_clear(&xm);
    mt_tensor_clear(&ym);
    mt_tensor_clear(&xe);
    mt_tensor_clear(&ye);
    mt_tensor_clear(&xb);
    mt_tensor_clear(&yb);
    mt_tensor_clear(&r);
    return st;
}

/* a's result = op(x, y), the product matmul is, which takes matmul's out= tensor (a->into,
 * dispatch.h) as its own destination: with out=, the product is written there directly where
 * it fits (as PyTorch's matmul_out calls mm_out). */
static mt_status
product_into(mt_op op, mt_tensor *x, mt_tensor *y, mt_args *a)
{
    mt_args b;
    mt_args_init(&b);
    b.t[0] = x;
    b.t[1] = y;
    if (a->into[0] && a->into_op == MT_OP_matmul) {
        b.into[0] = a->into[0];
        b.into_op = (int)op;
    }
    mt_status st = mt_dispatch(op, &b);
    if (st == MT_OK) {
        a->out[0] = b.out[0];
    }
    return st;
}

// PyTorch's matmul: dot, mv, mm, or a broadcast batched product by the operands' dims
mt_status
mt_composite_matmul(mt_args *a)
{
    mt_tensor *x = a->t[0], *y = a->t[1], *tmp = NULL, *r = NULL;
    mt_status st;
    int dx = x->ndim, dy = y->ndim;
    if (dx == 0 || dy == 0) {
        return mt_fail(MT_ERUNTIME,
                       "both arguments to matmul need to be at least 1D, but they are %dD and %dD",
                       dx, dy);
    }
    if (dx == 1 && dy == 1) {
        return product_into(MT_OP_dot, x, y, a);
    }
    if (dx == 2 && dy == 1) {
        return product_into(MT_OP_mv, x, y, a);
    }
    if (dx == 1 && dy == 2) {
        /* the product's row dim squeezed in place, as PyTorch's (grad_fn SqueezeBackward4) */
        if ((st = mt_op_unsqueeze(x, 0, &tmp)) == MT_OK && (st = mt_op_mm(tmp, y, &r)) == MT_OK) {
            st = mt_op_squeeze_(r, 1, (const int64_t[]){0}, &a->out[0]);
        }
        goto out_release;
    }
    if (dx == 2 && dy == 2) {
        return product_into(MT_OP_mm, x, y, a);
    }
    if (dx >= 3 && dy <= 2 && (dy == 2 || x->sizes[dx - 1] == y->sizes[0])) {
        /* Fold x's batch dims into its rows: one mm instead of a bmm over broadcast copies. */
        int64_t rows[2] = {-1, x->sizes[dx - 1]}, shape[MT_MAX_DIMS];
        memcpy(shape, x->sizes, sizeof(int64_t) * (size_t)(dx - 1));
        if ((st = mt_op_reshape(x, 2, rows, &tmp))) {
            goto out_release;
        }
        if (dy == 2) {
            st = mt_op_mm(tmp, y, &r);
            shape[dx - 1] = y->sizes[1];
        } else {
            st = mt_op_mv(tmp, y, &r);
        }
        if (st == MT_OK) {
            st = mt_op__unsafe_view(r, dy == 2 ? dx : dx - 1, shape, &a->out[0]);
        }
        goto out_release;
    }
    return matmul_batched(x, y, &a->out[0]);
out_release:
    mt_tensor_clear(&tmp);
    mt_tensor_clear(&r);
    return st;
}

mt_status
mt_composite_zero_(mt_args *a)
{
    mt_tensor *zero = NULL; /* a wrapped number, as fill_(0) from Python */
    mt_status st = mt_tensor_scalar(mt_scalar_int(0), MT_INT64, &zero);
    if (st == MT_OK) {
        st = mt_op_fill_(a->t[0], zero, &a->out[0]);
    }
    mt_tensor_clear(&zero);
    return st;
}

/* Copies self into *out, a tensor just made (released on failure). Filling it is no
 * modification anyone saw: it starts at version 0, as PyTorch's copies. */
static mt_status
fill_copy(mt_tensor **out, mt_tensor *self)
{
    mt_status st = mt_op_copy_(*out, self, NULL);
    if (st) {
        mt_tensor_clear(out);
        return st;
    }
    atomic_store(&(*out)->version->value, 0);
    return MT_OK;
}

/* resize_(self, size): self becomes contiguous of shape size, on its storage where that holds
 * it, else on a larger new one that starts with the old one's elements (PyTorch's resize_, which
 * out= arguments use), and its version goes up. Of the same shape, self is left as it is (its
 * strides too, and its version), as PyTorch's. Unlike PyTorch's, self's views keep the old
 * storage. */
mt_status
mt_composite_resize_(mt_args *a)
{
    mt_tensor *self = a->t[0];
    const mt_intlist *size = &a->l[0];
    if (self->requires_grad) {
        return mt_fail(MT_ERUNTIME, "cannot resize variables that require grad");
    }
    for (int d = 0; d < size->n; d++) {
        if (size->v[d] < 0) {
            return mt_fail(MT_ERUNTIME, "numel: integer multiplication overflow"); /* PyTorch's */
        }
    }
    mt_status st = mt_check_sizes(size->n, size->v);
    if (st) {
        return st;
    }
    if (size->n == self->ndim &&
        memcmp(size->v, self->sizes, sizeof(int64_t) * (size_t)size->n) == 0) {
        a->out[0] = mt_tensor_retain(self);
        return MT_OK;
    }
    size_t item = mt_dtype_size(self->dtype);
    int64_t numel = mt_numel(size->n, size->v), old_n = (int64_t)(self->storage->nbytes / item);
    if (numel > 0 && self->offset + numel > old_n) {
        mt_storage *grown = NULL;
        mt_tensor *src = NULL, *dst = NULL;
        const int64_t one = 1;
        mt_dtype dt = self->dtype;
        st = mt_storage_new((size_t)(self->offset + numel) * item, mt_tensor_device(self), &grown);
        if (st == MT_OK && old_n > 0 &&
            !(st = mt_tensor_on_storage(self->storage, 1, &old_n, &one, 0, dt, &src)) &&
            !(st = mt_tensor_on_storage(grown, 1, &old_n, &one, 0, dt, &dst))) {
            st = mt_op_copy_(dst, src, NULL);
        }
        mt_tensor_clear(&src);
        mt_tensor_clear(&dst);
        const int64_t added = self->offset + numel - old_n;
        if (st == MT_OK && mt_deterministic_on &&
            !(st = mt_tensor_on_storage(grown, 1, &added, &one, old_n, dt, &dst))) {
            st = mt_deterministic_fill(dst); /* the new elements, as PyTorch's resize_ fills them */
            mt_tensor_clear(&dst);
        }
        if (st == MT_OK) {
            mt_tensor_set_storage(self, grown);
            mt_tensor_clear(&self->view_base); /* no longer in its base's memory */
        }
        if (grown) {
            mt_storage_release(grown);
        }
        if (st) {
            return st;
        }
    }
    self->ndim = size->n;
    memcpy(self->sizes, size->v, sizeof(int64_t) * (size_t)size->n);
    mt_contiguous_strides(self->ndim, self->sizes, self->strides);
    mt_tensor_bump_version(self);
    a->out[0] = mt_tensor_retain(self);
    return MT_OK;
}

/* *out = a copy of self in dtype dt on dev with the given strides, which fill the span of its
 * elements exactly (a permutation of a row-major layout). */
static mt_status
copy_strided(mt_tensor *self, mt_dtype dt, mt_device dev, const int64_t *strides, mt_tensor **out)
{
    int64_t numel = mt_tensor_numel(self);
    mt_tensor *flat = NULL;
    mt_status st = mt_op_empty(1, &numel, dt, dev, false, &flat);
    if (st == MT_OK) {
        st = mt_tensor_on_storage(flat->storage, self->ndim, self->sizes, strides, 0, dt, out);
        mt_tensor_release(flat);
    }
    return st ? st : fill_copy(out, self);
}

/* *out = a copy of self in dtype dt on dev, contiguous or (preserve) in self's layout:
 * mt_preserve_strides. */
static mt_status
copy_as(mt_tensor *self, mt_dtype dt, mt_device dev, bool preserve, mt_tensor **out)
{
    int64_t strides[MT_MAX_DIMS];
    if (preserve) {
        mt_preserve_strides(self, strides);
        /* an empty tensor counts as dense, and keeps a broadcast dim's 0 stride that a copy
         * cannot be written through: it gets the row-major layout */
        for (int d = 0; d < self->ndim; d++) {
            preserve = preserve && (strides[d] != 0 || self->sizes[d] <= 1);
        }
    }
    if (preserve) {
        return copy_strided(self, dt, dev, strides, out);
    }
    mt_status st = mt_op_empty(self->ndim, self->sizes, dt, dev, false, out);
    return st ? st : fill_copy(out, self);
}

mt_status
mt_copy_strided(mt_tensor *self, const int64_t *strides, mt_tensor **out)
{
    return copy_strided(self, self->dtype, mt_tensor_device(self), strides, out);
}

static mt_status
copy_of(mt_tensor *self, bool preserve, mt_tensor **out)
{
    return copy_as(self, self->dtype, mt_tensor_device(self), preserve, out);
}

mt_status
mt_copy_contiguous(mt_tensor *self, mt_tensor **out)
{
    return copy_of(self, false, out);
}

mt_status
mt_call_with_number(mt_op op, mt_tensor *x, mt_scalar v, mt_tensor **out)
{
    mt_tensor *w = NULL;
    mt_status st = mt_tensor_scalar(v, v.type, &w);
    if (st == MT_OK) {
        mt_args a;
        mt_args_init(&a);
        a.t[0] = x;
        a.t[1] = w;
        if ((st = mt_dispatch(op, &a)) == MT_OK) {
            *out = a.out[0];
        }
        mt_tensor_release(w);
    }
    return st;
}

// out = a copy of self in its layout (PyTorch's memory_format=preserve_format)
mt_status
mt_composite_clone(mt_args *a)
{
    return copy_of(a->t[0], true, &a->out[0]);
}

mt_status
mt_composite_contiguous(mt_args *a)
{
    if (mt_tensor_is_contiguous(a->t[0])) {
        a->out[0] = mt_tensor_retain(a->t[0]);
        return MT_OK;
    }
    return mt_copy_contiguous(a->t[0], &a->out[0]);
}

// out = self when dtype and device are its own and copy is false, else _to_copy's copy
mt_status
mt_composite_to(mt_args *a)
{
    mt_tensor *self = a->t[0];
    bool same_dtype = a->dtype < 0 || (mt_dtype)a->dtype == self->dtype;
    bool same_device = !a->has_device || mt_device_eq(a->device, mt_tensor_device(self));
    if (same_dtype && same_device && !a->b[0]) {
        a->out[0] = mt_tensor_retain(self);
        return MT_OK;
    }
    return mt_op__to_copy(self, a->dtype, a->has_device ? a->device : mt_tensor_device(self),
                          &a->out[0]);
}

// out = self converted to dtype and/or moved to device (always a copy), in self's layout
// (PyTorch's memory_format=preserve_format: a channels_last tensor stays channels_last)
mt_status
mt_composite__to_copy(mt_args *a)
{
    mt_tensor *self = a->t[0];
    mt_dtype dt = a->dtype >= 0 ? (mt_dtype)a->dtype : self->dtype;
    mt_device dev = a->has_device ? a->device : mt_tensor_device(self);
    return copy_as(self, dt, dev, true, &a->out[0]);
}

/* A factory: empty, then fill in place with `fill` (an in-place op) and its scalars. */
static mt_status
factory(mt_args *a, mt_op fill, mt_scalar x, mt_scalar y)
{
    mt_dtype dt = a->dtype >= 0 ? (mt_dtype)a->dtype : MT_DEFAULT_FLOAT;
    mt_device dev = a->has_device ? a->device : MT_DEVICE_CPU;
    mt_tensor *t;
    mt_status st = mt_op_empty(a->l[0].n, a->l[0].v, dt, dev, false, &t);
    if (st) {
        return st;
    }
    if (fill == MT_OP_fill_) { /* its value is a tensor slot: x as a wrapped number */
        mt_tensor *w = NULL;
        if ((st = mt_tensor_scalar(x, x.is_complex ? MT_COMPLEX128 : x.type, &w)) == MT_OK) {
            st = mt_op_fill_(t, w, NULL);
        }
        mt_tensor_clear(&w);
    } else if (fill == MT_OP_zero_) {
        st = mt_op_zero_(t, NULL);
    } else if (fill == MT_OP_uniform_) {
        st = mt_op_uniform_(t, x, y, a->gen, NULL);
    } else if (fill == MT_OP_normal_) {
        st = mt_op_normal_(t, x, y, a->gen, NULL);
    } else { /* random_ */
        st = mt_op_random_(t, x, y, a->gen, NULL);
    }
    if (st) {
        mt_tensor_release(t);
        return st;
    }
    /* Filling a tensor nobody has seen yet is not a modification: it starts at version 0. */
    atomic_store(&t->version->value, 0);
    st = mt_tensor_set_requires_grad(t, a->b[0]);
    if (st) {
        mt_tensor_release(t);
        return st;
    }
    a->out[0] = t;
    return MT_OK;
}

mt_status
mt_composite_zeros(mt_args *a)
{
    /* torch 2.13's zeros checks sizes itself, with its own words; the other factories leave it to
     * the allocation ("Trying to create tensor with negative dimension"). */
    for (int i = 0; i < a->l[0].n; i++) {
        if (a->l[0].v[i] < 0) {
            return mt_fail(MT_ERUNTIME, "zeros: Dimension size must be non-negative.");
        }
    }
    return factory(a, MT_OP_zero_, mt_scalar_int(0), mt_scalar_int(0));
}

mt_status
mt_composite_ones(mt_args *a)
{
    return factory(a, MT_OP_fill_, mt_scalar_int(1), mt_scalar_int(0));
}

mt_status
mt_composite_full(mt_args *a)
{
    /* Without a dtype, full takes the fill value's: a bool, int64 (an int from 2^63 on too,
     * which then does not fit), the default float or the complex dtype of the default float. */
    if (a->dtype < 0) {
        mt_dtype t = a->s[0].type;
        a->dtype = (int)(a->s[0].is_complex ? mt_dtype_to_complex(MT_DEFAULT_FLOAT)
                         : t == MT_FLOAT64  ? MT_DEFAULT_FLOAT
                         : t == MT_UINT64   ? MT_INT64
                                            : t);
    }
    return factory(a, MT_OP_fill_, a->s[0], mt_scalar_int(0));
}

mt_status
mt_composite_rand(mt_args *a)
{
    return factory(a, MT_OP_uniform_, mt_scalar_int(0), mt_scalar_int(1));
}

mt_status
mt_composite_randn(mt_args *a)
{
    return factory(a, MT_OP_normal_, mt_scalar_int(0), mt_scalar_int(1));
}

mt_status
mt_composite_randint(mt_args *a)
{
    if (a->dtype < 0) {
        a->dtype = (int)MT_INT64;
    }
    return factory(a, MT_OP_random_, mt_scalar_int(a->i[0]), mt_scalar_int(a->i[1]));
}

// self (*), indices, values; out = a copy of self with self[indices] = values (or += values)
mt_status
mt_composite_index_put(mt_args *a)
{
    mt_status st = mt_op_clone(a->t[0], &a->out[0]);
    if (st == MT_OK && (st = mt_op_index_put_(a->out[0], a->ntl, a->tl, a->t[1], a->b[0], NULL))) {
        mt_tensor_clear(&a->out[0]);
    }
    return st;
}
