/* Sparse COO gradients (sparse_grad.h): making one, adding two, and one made dense, each a few
 * ops through the dispatcher, so they run on the values' device. An op given a sparse gradient
 * reads it as its values tensor, which these pass where they mean its values. Must not read
 * elements itself. */
#include "autograd/sparse_grad.h"

#include <string.h>

#include "autograd/formulas.h"
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

/* g's values times f: a number (0-dim) or a tensor of g's dense size (read at g's entries) */
static mt_status
times_factor(mt_tensor *g, mt_tensor *f, bool divide, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *r = NULL, *at = f, *rows[MT_MAX_DIMS] = {NULL};
    int sparse_dim = (int)g->sparse_indices->sizes[0];
    if (f->ndim > 0) { /* f at each entry's index: (nnz, *dense dims) as g's values */
        for (int d = 0; d < sparse_dim; d++) {
            rows[d] = s.st ? NULL : own(&s, mt_op_select(g->sparse_indices, 0, d, &r), &r);
        }
        at = s.st ? NULL : own(&s, mt_op_index(f, sparse_dim, rows, &r), &r);
    }
    mt_op op = divide ? MT_OP_div : MT_OP_mul;
    mt_tensor *v = bin(&s, op, g, at);
    if (s.st == MT_OK) {
        s.st = mt_sparse_grad_new(v, g->sparse_indices, g->sparse_coalesced, out);
    }
    return finish(&s);
}

static bool
same_size(const mt_meta *a, const mt_meta *b)
{
    return a->ndim == b->ndim && memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) == 0;
}

/* a factor of g's gradient: a number or a tensor of the output's size, on g's device */
static bool
factor_ok(const mt_node *n, const mt_tensor *f)
{
    return f && mt_device_eq(mt_tensor_device(f), n->out_meta[0].device) &&
           (f->ndim == 0 ||
            (f->ndim == n->out_meta[0].ndim &&
             memcmp(f->sizes, n->out_meta[0].sizes, sizeof(int64_t) * (size_t)f->ndim) == 0));
}

mt_status
mt_sparse_grad_through(mt_node *n, mt_tensor *g, mt_tensor **gi, bool *handled)
{
    const mt_op op = n->formula->op;
    bool want[2] = {false, false}, ok = n->nout == 1;
    for (int e = 0; e < n->nedges && e < 2; e++) {
        want[e] = n->edges[e].node != NULL;
        ok = ok && (!want[e] || same_size(&n->in_meta[e], &n->out_meta[0]));
    }
    const bool sum = op == MT_OP_add || op == MT_OP_add_ || op == MT_OP_sub || op == MT_OP_sub_;
    const bool product = op == MT_OP_mul || op == MT_OP_mul_;
    const bool quotient = (op == MT_OP_div || op == MT_OP_div_) && !n->args.str[0];
    if (product) { /* each input's gradient is g times the other */
        ok = ok && (!want[0] || factor_ok(n, n->saved[1])) &&
             (!want[1] || factor_ok(n, n->saved[0]));
    } else if (quotient) { /* by a number only (PyTorch refuses a sparse one by a tensor) */
        ok = ok && !want[1] && factor_ok(n, n->saved[1]) && n->saved[1]->ndim == 0;
    } else {
        ok = ok &&
             (sum || op == MT_OP_clone || op == MT_OP_alias || op == MT_OP_neg || op == MT_OP_neg_);
    }
    *handled = ok && !mt_tensor_requires_grad(g);
    if (!*handled) {
        return MT_OK;
    }
    /* the factors as the formula would read them: unchanged since they were saved */
    mt_status st = product || quotient ? mt_saved_check(n) : MT_OK;
    for (int e = 0; st == MT_OK && e < 2; e++) {
        if (!want[e]) {
            continue;
        }
        if (product || quotient) {
            st = times_factor(g, n->saved[1 - e], quotient, &gi[e]);
        } else if (op == MT_OP_neg || op == MT_OP_neg_ || (e == 1 && sum)) {
            /* -g, or alpha * g (sub: -alpha * g) */
            const mt_scalar alpha = n->args.s[0];
            double a = e == 0 ? -1.0 : mt_scalar_is_none(alpha) ? 1.0 : mt_scalar_to_double(alpha);
            a = e == 1 && (op == MT_OP_sub || op == MT_OP_sub_) ? -a : a;
            mt_tensor *num = NULL;
            st = mt_ags_number(a, &num);
            st = st ? st : times_factor(g, num, false, &gi[e]);
            mt_tensor_release(num);
        } else {
            gi[e] = mt_tensor_retain(g);
        }
    }
    return st;
}
