/* Sparse COO gradients (sparse_grad.h): making one, adding two, and one made dense, each a few
 * ops through the dispatcher, so they run on the values' device. An op given a sparse gradient
 * reads it as its values tensor, which these pass where they mean its values. Must not read
 * elements itself. */
#include "autograd/sparse_grad.h"

#include "ops/op_chain.h"

mt_status
mt_sparse_grad_new(mt_tensor *values, mt_tensor *indices, bool coalesced, mt_tensor **out)
{
    mt_tensor *v = NULL;
    mt_status st = mt_tensor_view(values, values->ndim, values->sizes, values->strides,
                                  values->offset, &v);
    if (st == MT_OK) {
        v->sparse_indices = mt_tensor_retain(indices);
        v->sparse_coalesced = coalesced;
        *out = v;
    }
    return st;
}

/* dense[indices[:, k]] += g's values[k] for each entry k, in place */
static mt_status
put(mt_tensor *dense, mt_tensor *g)
{
    tmp s = {0};
    mt_tensor *r = NULL, *rows[MT_MAX_DIMS] = {NULL};
    int sparse_dim = (int)g->sparse_indices->sizes[0];
    for (int d = 0; d < sparse_dim; d++) {
        rows[d] = s.st ? NULL : own(&s, mt_op_select(g->sparse_indices, 0, d, &r), &r);
    }
    if (s.st == MT_OK) {
        s.st = mt_op_index_put_(dense, sparse_dim, rows, g, true, &r);
        mt_tensor_clear(&r);
    }
    return finish(&s);
}

mt_status
mt_sparse_grad_dense(mt_tensor *g, int ndim, const int64_t *sizes, mt_tensor **out)
{
    mt_tensor *dense = NULL;
    mt_status st = mt_op_zeros(ndim, sizes, g->dtype, mt_tensor_device(g), false, &dense);
    if (st == MT_OK && (st = put(dense, g)) != MT_OK) {
        mt_tensor_clear(&dense);
    }
    *out = dense;
    return st;
}

/* a + b, both sparse: the entries of both, in that order */
static mt_status
concat(mt_tensor *a, mt_tensor *b, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *iv[2] = {a->sparse_indices, b->sparse_indices};
    mt_tensor *indices = own(&s, mt_op_cat(2, iv, 1, &r), &r);
    mt_tensor *values = s.st ? NULL : own(&s, mt_op_cat(2, (mt_tensor *[]){a, b}, 0, &r), &r);
    if (s.st == MT_OK) {
        s.st = mt_sparse_grad_new(values, indices, false, out);
    }
    return finish(&s);
}

mt_status
mt_sparse_grad_add(mt_tensor *a, mt_tensor *b, int ndim, const int64_t *sizes, bool in_place,
                   mt_tensor **out)
{
    if (mt_is_sparse_grad(a) && mt_is_sparse_grad(b)) {
        return concat(a, b, out);
    }
    mt_tensor *dense = mt_is_sparse_grad(a) ? b : a, *sparse = mt_is_sparse_grad(a) ? a : b;
    if (in_place && dense == a && a->dtype == b->dtype) {
        mt_status st = put(a, b);
        *out = st == MT_OK ? mt_tensor_retain(a) : NULL;
        return st;
    }
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *d = own(&s, mt_sparse_grad_dense(sparse, ndim, sizes, &r), &r);
    give(&s, failed(&s, d, d) ? NULL : own(&s, mt_op_add(dense, d, mt_scalar_int(1), &r), &r), out);
    return finish(&s);
}

mt_status
mt_sparse_grad_to(mt_tensor *g, mt_dtype dtype, mt_device device, mt_tensor **out)
{
    if (g->dtype == dtype && mt_device_eq(mt_tensor_device(g), device)) {
        *out = mt_tensor_retain(g);
        return MT_OK;
    }
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *values = own(&s, mt_op__to_copy(g, dtype, device, &r), &r);
    mt_tensor *indices = s.st
                             ? NULL
                             : own(&s, mt_op__to_copy(g->sparse_indices, MT_INT64, device, &r), &r);
    if (s.st == MT_OK) {
        s.st = mt_sparse_grad_new(values, indices, g->sparse_coalesced, out);
    }
    return finish(&s);
}

mt_status
mt_sparse_grad_own(mt_tensor **g)
{
    mt_tensor *values = NULL, *own = NULL;
    if (atomic_load(&(*g)->storage->refcount) == 1 && (*g)->view_base == NULL) {
        return MT_OK;
    }
    mt_status st = mt_op_clone(*g, &values);
    if (st == MT_OK) {
        st = mt_sparse_grad_new(values, (*g)->sparse_indices, (*g)->sparse_coalesced, &own);
        mt_tensor_release(values);
    }
    if (st == MT_OK) {
        mt_tensor_release(*g);
        *g = own;
    }
    return st;
}

mt_status
mt_sparse_grad_densify(mt_tensor **g, int ndim, const int64_t *sizes)
{
    mt_tensor *dense = NULL;
    if (*g == NULL || !mt_is_sparse_grad(*g)) {
        return MT_OK;
    }
    mt_status st = mt_sparse_grad_dense(*g, ndim, sizes, &dense);
    if (st == MT_OK) {
        mt_tensor_release(*g);
        *g = dense;
    }
    return st;
}

mt_status
mt_sparse_grad_accumulate(mt_tensor **slot, mt_tensor *grad, int ndim, const int64_t *sizes,
                          bool in_place)
{
    if (*slot == NULL) {
        *slot = grad;
        return MT_OK;
    }
    mt_tensor *sum = NULL;
    mt_status st = mt_sparse_grad_add(*slot, grad, ndim, sizes, in_place, &sum);
    mt_tensor_release(grad);
    if (st == MT_OK) {
        mt_tensor_release(*slot);
        *slot = sum;
    }
    return st;
}
