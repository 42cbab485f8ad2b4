/* The typed wrappers of ops.h: box, dispatch, unbox. No logic of any op lives here. */
#include <string.h>

#include "ops/ops.h"

static mt_status
call(mt_op op, mt_args *a, mt_tensor **out)
{
    mt_status st = mt_dispatch(op, a);
    if (st) {
        return st;
    }
    if (out) {
        *out = a->out[0];
    } else {
        mt_tensor_release(a->out[0]);
    }
    return MT_OK;
}

static void
set_list(mt_intlist *l, int n, const int64_t *v)
{
    l->none = false;
    l->n = n;
    if (n > 0) {
        memcpy(l->v, v, sizeof(int64_t) * (size_t)n);
    }
}

static mt_status
tensors2(mt_op op, mt_tensor *x, mt_tensor *y, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = x;
    a.t[1] = y;
    return call(op, &a, out);
}


mt_status
mt_op_add(mt_tensor *self, mt_tensor *other, mt_tensor **out)
{
    return tensors2(MT_OP_add, self, other, out);
}

mt_status
mt_op_add_(mt_tensor *self, mt_tensor *other, mt_scalar alpha)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = self;
    a.t[1] = other;
    a.s[0] = alpha;
    return call(MT_OP_add_, &a, NULL);
}


mt_status
mt_op_clamp_min(mt_tensor *self, mt_scalar min, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = self;
    a.s[0] = min;
    return call(MT_OP_clamp_min, &a, out);
}

mt_status
mt_op_clamp_min_(mt_tensor *self, mt_scalar min)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = self;
    a.s[0] = min;
    return call(MT_OP_clamp_min_, &a, NULL);
}

mt_status
mt_op_mul(mt_tensor *self, mt_tensor *other, mt_tensor **out)
{
    return tensors2(MT_OP_mul, self, other, out);
}

mt_status
mt_op_pow(mt_tensor *self, mt_tensor *exponent, mt_tensor **out)
{
    return tensors2(MT_OP_pow, self, exponent, out);
}

mt_status
mt_op_pow_(mt_tensor *self, mt_tensor *exponent)
{
    return tensors2(MT_OP_pow_, self, exponent, NULL);
}

mt_status
mt_op_addmm(mt_tensor *self, mt_tensor *mat1, mt_tensor *mat2, mt_scalar beta, mt_scalar alpha,
            mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = self;
    a.t[1] = mat1;
    a.t[2] = mat2;
    a.s[0] = beta;
    a.s[1] = alpha;
    return call(MT_OP_addmm, &a, out);
}

mt_status
mt_op_mm(mt_tensor *self, mt_tensor *mat2, mt_tensor **out)
{
    return tensors2(MT_OP_mm, self, mat2, out);
}

mt_status
mt_op_bmm(mt_tensor *self, mt_tensor *mat2, mt_tensor **out)
{
    return tensors2(MT_OP_bmm, self, mat2, out);
}

mt_status
mt_op_mv(mt_tensor *self, mt_tensor *vec, mt_tensor **out)
{
    return tensors2(MT_OP_mv, self, vec, out);
}

mt_status
mt_op_dot(mt_tensor *self, mt_tensor *other, mt_tensor **out)
{
    return tensors2(MT_OP_dot, self, other, out);
}

mt_status
mt_op_matmul(mt_tensor *self, mt_tensor *other, mt_tensor **out)
{
    return tensors2(MT_OP_matmul, self, other, out);
}

mt_status
mt_op_as_strided(mt_tensor *self, int ndim, const int64_t *sizes, const int64_t *strides,
                 int64_t offset, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = self;
    set_list(&a.l[0], ndim, sizes);
    set_list(&a.l[1], ndim, strides);
    a.i[0] = offset;
    a.i_none = 0;
    return call(MT_OP_as_strided, &a, out);
}

static mt_status
list_op(mt_op op, mt_tensor *self, int ndim, const int64_t *sizes, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = self;
    set_list(&a.l[0], ndim, sizes);
    return call(op, &a, out);
}

mt_status
mt_op_view(mt_tensor *self, int ndim, const int64_t *sizes, mt_tensor **out)
{
    return list_op(MT_OP_view, self, ndim, sizes, out);
}

mt_status
mt_op_reshape(mt_tensor *self, int ndim, const int64_t *sizes, mt_tensor **out)
{
    return list_op(MT_OP_reshape, self, ndim, sizes, out);
}

mt_status
mt_op_expand(mt_tensor *self, int ndim, const int64_t *sizes, mt_tensor **out)
{
    return list_op(MT_OP_expand, self, ndim, sizes, out);
}

mt_status
mt_op_squeeze_dim(mt_tensor *self, int64_t dim, mt_tensor **out)
{
    return list_op(MT_OP_squeeze, self, 1, &dim, out);
}

mt_status
mt_op_t(mt_tensor *self, mt_tensor **out)
{
    return tensors2(MT_OP_t, self, NULL, out);
}

static mt_status
ints_op(mt_op op, mt_tensor *self, int n, const int64_t *v, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = self;
    for (int k = 0; k < n; k++) {
        a.i[k] = v[k];
    }
    a.i_none = 0;
    return call(op, &a, out);
}

mt_status
mt_op_transpose(mt_tensor *self, int64_t dim0, int64_t dim1, mt_tensor **out)
{
    int64_t v[2] = {dim0, dim1};
    return ints_op(MT_OP_transpose, self, 2, v, out);
}

mt_status
mt_op_unsqueeze(mt_tensor *self, int64_t dim, mt_tensor **out)
{
    return ints_op(MT_OP_unsqueeze, self, 1, &dim, out);
}

mt_status
mt_op_select(mt_tensor *self, int64_t dim, int64_t index, mt_tensor **out)
{
    int64_t v[2] = {dim, index};
    return ints_op(MT_OP_select, self, 2, v, out);
}

mt_status
mt_op_slice(mt_tensor *self, int64_t dim, int64_t start, int64_t end, int64_t step,
            mt_tensor **out)
{
    int64_t v[4] = {dim, start, end, step};
    mt_args a;
    mt_args_init(&a);
    a.t[0] = self;
    for (int k = 0; k < 4; k++) {
        a.i[k] = v[k];
    }
    a.i_none = (start == INT64_MIN ? 2u : 0u) | (end == INT64_MAX ? 4u : 0u);
    return call(MT_OP_slice, &a, out);
}

mt_status
mt_op_empty(int ndim, const int64_t *sizes, mt_dtype dtype, mt_device dev, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    set_list(&a.l[0], ndim, sizes);
    a.dtype = (int)dtype;
    a.has_device = true;
    a.device = dev;
    return call(MT_OP_empty, &a, out);
}

mt_status
mt_op_fill_(mt_tensor *self, mt_scalar value)
{
    mt_tensor *v = NULL; /* the value as a wrapped number, as from Python */
    mt_status st = mt_tensor_scalar(value, value.type, &v);
    if (st == MT_OK) {
        st = tensors2(MT_OP_fill_, self, v, NULL);
    }
    mt_tensor_clear(&v);
    return st;
}

mt_status
mt_op_copy_(mt_tensor *self, mt_tensor *src)
{
    return tensors2(MT_OP_copy_, self, src, NULL);
}

mt_status
mt_op_clone(mt_tensor *self, mt_tensor **out)
{
    return tensors2(MT_OP_clone, self, NULL, out);
}

mt_status
mt_op_where(mt_tensor *condition, mt_tensor *x, mt_tensor *y, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = condition;
    a.t[1] = x;
    a.t[2] = y;
    return call(MT_OP_where, &a, out);
}

mt_status
mt_op_alias(mt_tensor *self, mt_tensor **out)
{
    return tensors2(MT_OP_alias, self, NULL, out);
}


mt_status
mt_op_to_copy(mt_tensor *self, mt_dtype dtype, mt_device dev, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = self;
    a.dtype = (int)dtype;
    a.has_device = true;
    a.device = dev;
    return call(MT_OP__to_copy, &a, out);
}

/* ---- shape ops ---- */

mt_status
mt_op_cat(int n, mt_tensor **tensors, int64_t dim, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.tl = tensors;
    a.ntl = n;
    a.i[0] = dim;
    a.i_none = 0;
    return call(MT_OP_cat, &a, out);
}

mt_status
mt_op_narrow(mt_tensor *self, int64_t dim, int64_t start, int64_t length, mt_tensor **out)
{
    int64_t v[3] = {dim, start, length};
    return ints_op(MT_OP_narrow, self, 3, v, out);
}

mt_status
mt_op_permute(mt_tensor *self, int ndim, const int64_t *dims, mt_tensor **out)
{
    return list_op(MT_OP_permute, self, ndim, dims, out);
}

/* ---- indexing ---- */

static void
set_tensorlist(mt_args *a, int n, mt_tensor *const *indices)
{
    a->tl = (mt_tensor **)indices; /* borrowed: the kernels only read the list */
    a->ntl = n;
}

mt_status
mt_op_index(mt_tensor *self, int n, mt_tensor *const *indices, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = self;
    set_tensorlist(&a, n, indices);
    return call(MT_OP_index, &a, out);
}

mt_status
mt_op_index_put_(mt_tensor *self, int n, mt_tensor *const *indices, mt_tensor *values,
                 bool accumulate)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = self;
    a.t[1] = values;
    a.b[0] = accumulate;
    set_tensorlist(&a, n, indices);
    return call(MT_OP_index_put_, &a, NULL);
}
