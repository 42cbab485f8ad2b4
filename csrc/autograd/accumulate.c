/* Where a backward run's gradients land, for the engine (autograd/engine.c): a node's input
 * buffers (summed in place where only the engine sees them), a gradient made to match what the
 * node's input was, a leaf's .grad in AccumulateGrad's layout, a retained .grad, and the hooks that
 * see gradients on the way. It walks no graph and orders nothing: the engine does. */
#include <stdatomic.h>
#include <string.h>

#include "autograd/engine.h"
#include "autograd/sparse_grad.h"
#include "ops/ops.h"

/* Whether only the engine can see t (no other reference to it or its memory, no history, no
 * element twice), so that writing into it in place changes nothing anyone else reads. */
static bool
engine_only(const mt_tensor *t)
{
    return atomic_load(&t->refcount) == 1 && atomic_load(&t->storage->refcount) == 1 &&
           t->view_base == NULL && t->grad_fn == NULL && !t->requires_grad &&
           !mt_tensor_has_internal_overlap(t);
}

/* mt_engine_accumulate() where grad or the buffer is a sparse gradient: sparse + sparse stays
 * sparse, as PyTorch's InputBuffer keeps it (the node's hooks, retain_grad() and
 * autograd.grad see it so; run_node makes it dense for a formula that needs it dense). */
static mt_status
accumulate_sparse(mt_tensor **slot, const mt_meta *m, mt_tensor *grad)
{
    return mt_sparse_grad_accumulate(slot, grad, m->ndim, m->sizes, false);
}

/* Adds grad into *slot, a node's buffer for an output shaped as m (takes the reference to
 * grad): in place where the buffer is the engine's alone, as PyTorch's InputBuffer (a weight used at every step of a loop
 * gets one buffer, not a new one per step). Never in place when either is a __torch_dispatch__
 * wrapper: an in-place add returns its plain self, so a wrapper's gradient summed into a plain
 * buffer would lose its class, or not, by the buffer's reference count of the moment. */
mt_status
mt_engine_accumulate(mt_tensor **slot, const mt_meta *m, mt_tensor *grad)
{
    if (mt_is_sparse_grad(grad)) {
        return accumulate_sparse(slot, m, grad);
    }
    mt_tensor *b = *slot;
    if (b == NULL) {
        *slot = grad;
        return MT_OK;
    }
    if (mt_is_sparse_grad(b)) {
        return accumulate_sparse(slot, m, grad);
    }
    if (engine_only(b) && !b->python_dispatch && !grad->python_dispatch && !grad->requires_grad &&
        b->dtype == grad->dtype && b->ndim == grad->ndim &&
        memcmp(b->sizes, grad->sizes, sizeof(int64_t) * (size_t)b->ndim) == 0) {
        mt_status st = mt_op_add_(b, grad, mt_scalar_int(1), NULL);
        mt_tensor_release(grad);
        return st;
    }
    mt_tensor *sum = NULL;
    mt_status st = mt_op_add(b, grad, mt_scalar_int(1), &sum);
    mt_tensor_release(grad);
    if (st == MT_OK) {
        mt_tensor_release(b);
        *slot = sum;
    }
    return st;
}

static bool
same_shape(const mt_tensor *t, const mt_meta *m)
{
    return t->ndim == m->ndim && memcmp(t->sizes, m->sizes, sizeof(int64_t) * (size_t)m->ndim) == 0;
}

/* grad, node n's gradient for its input e, made to match m: summed over broadcast dims, cast
 * to m's dtype (takes the reference). */
mt_status
mt_engine_conform(mt_tensor *grad, const mt_meta *m, const mt_node *n, int e, mt_tensor **out)
{
    mt_status st = MT_OK;
    mt_tensor *g = grad;
    if (mt_is_sparse_grad(g)) { /* its values are cast; its size is m's by construction */
        st = mt_sparse_grad_to(g, m->dtype, m->device, out);
        mt_tensor_release(g);
        return st;
    }
    if (!same_shape(g, m)) {
        char b1[128], b2[128];
        mt_format_sizes(b1, sizeof(b1), g->ndim, g->sizes);
        mt_tensor *r = NULL;
        st = mt_ag_sum_to(g, m, &r);
        mt_tensor_release(g);
        if (st) {
            return mt_fail(MT_ERUNTIME,
                           "Function %s returned an invalid gradient at index %d - got %s but "
                           "expected shape compatible with %s",
                           n->name, e, b1, mt_format_sizes(b2, sizeof(b2), m->ndim, m->sizes));
        }
        g = r;
    }
    if (g->dtype != m->dtype || !mt_device_eq(mt_tensor_device(g), m->device)) {
        mt_tensor *c = NULL;
        st = mt_op__to_copy(g, m->dtype, m->device, &c);
        mt_tensor_release(g);
        g = c;
    }
    *out = g;
    return st;
}

/* Whether grad is laid out as PyTorch's AccumulateGrad lays out a leaf's new .grad (its layout
 * contract): with the leaf's strides (size-1 dims aside) when the leaf's elements fill their span
 * exactly (a transposed or channels_last parameter), else row-major. */
static bool
obeys_layout(const mt_tensor *grad, const mt_tensor *leaf)
{
    if (!mt_tensor_is_dense(leaf)) {
        return mt_tensor_is_contiguous(grad);
    }
    for (int d = 0; d < grad->ndim; d++) {
        if (grad->sizes[d] != 1 ? grad->strides[d] != leaf->strides[d] : grad->strides[d] == 0) {
            return false;
        }
    }
    return true;
}

/* leaf.grad += grad, or = grad (takes the reference), grad first cast to the leaf's grad_dtype
 * where one is set (Tensor.grad_dtype) */
static mt_status
accumulate_grad(mt_tensor *leaf, mt_tensor *grad, bool create_graph)
{
    mt_status st = MT_OK;
    const int want = leaf->grad_dtype - 1; /* -1: the leaf's own (grad is in it already) */
    if (want >= 0 && want < MT_NUM_DTYPES && grad->dtype != (mt_dtype)want &&
        !mt_is_sparse_grad(grad)) {
        mt_tensor *c = NULL;
        st = mt_op__to_copy(grad, (mt_dtype)want, mt_tensor_device(grad), &c);
        mt_tensor_release(grad);
        if (st) {
            return st;
        }
        grad = c;
    }
    if (mt_is_sparse_grad(grad) || (leaf->grad && mt_is_sparse_grad(leaf->grad))) {
        if (leaf->grad == NULL && (st = mt_sparse_grad_own(&grad)) != MT_OK) {
            mt_tensor_release(grad);
            return st;
        }
        return mt_sparse_grad_accumulate(&leaf->grad, grad, leaf->ndim, leaf->sizes, !create_graph);
    }
    if (leaf->grad == NULL) {
        /* Keep the gradient itself when nobody else can see it, else a copy of its own, in the
         * layout of the contract. */
        if (!create_graph &&
            (atomic_load(&grad->refcount) > 1 || grad->grad_fn || !obeys_layout(grad, leaf))) {
            mt_tensor *c = NULL;
            /* a __torch_dispatch__ subclass's copy is its class's (clone) */
            st = grad->python_dispatch      ? mt_op_clone(grad, &c)
                 : mt_tensor_is_dense(leaf) ? mt_copy_strided(grad, leaf->strides, &c)
                                            : mt_copy_contiguous(grad, &c);
            mt_tensor_release(grad);
            grad = c;
        } else if (!create_graph && grad->view_base) {
            /* A kept view is kept as PyTorch keeps it, detached: .grad shares its memory but is
             * never a view, so that in-place changes of its own (grad.detach_()) are allowed. */
            mt_tensor *d = NULL;
            st = mt_op_detach(grad, &d);
            mt_tensor_release(grad);
            grad = d;
        }
        if (st == MT_OK) {
            leaf->grad = grad;
        }
        return st;
    }
    if (create_graph) {
        mt_tensor *sum = NULL;
        st = mt_op_add(leaf->grad, grad, mt_scalar_int(1), &sum);
        if (st == MT_OK) {
            mt_tensor_release(leaf->grad);
            leaf->grad = sum;
        }
    } else {
        st = mt_op_add_(leaf->grad, grad, mt_scalar_int(1), NULL);
    }
    mt_tensor_release(grad);
    return st;
}

/* x.grad for a tensor that retains its gradient: a copy of, or a sum with, g (sparse kept
 * sparse, as PyTorch's). */
mt_status
mt_engine_retain(mt_tensor *x, mt_tensor *g)
{
    mt_tensor *r = NULL;
    mt_status st;
    if (mt_is_sparse_grad(g) || (x->grad && mt_is_sparse_grad(x->grad))) {
        mt_tensor *v = NULL; /* without a .grad yet, a copy of g's values: g goes on */
        st = x->grad ? mt_sparse_grad_add(x->grad, g, x->ndim, x->sizes, false, &r)
                     : mt_op_clone(g, &v);
        if (st == MT_OK && v) {
            st = mt_sparse_grad_new(v, g->sparse_indices, g->sparse_coalesced, &r);
        }
        mt_tensor_release(v);
    } else {
        st = x->grad ? mt_op_add(x->grad, g, mt_scalar_int(1), &r) : mt_op_clone(g, &r);
    }
    if (st == MT_OK) {
        mt_tensor_clear(&x->grad);
        x->grad = r;
    }
    return st;
}

/* The gradient hooks on n's outputs (an AccumulateGrad's: on its leaf) replace the gradients
 * that reached them, before they are captured, kept by retain_grad() or used. */
mt_status
mt_engine_grad_hooks(mt_node *n, mt_tensor **buffer, bool create_graph)
{
    mt_hook *h = mt_hook_next(n->formula ? &n->hooks : &n->variable->hooks);
    mt_status st = MT_OK;
    bool was = mt_grad_enabled();
    mt_set_grad_enabled(create_graph);
    for (; st == MT_OK && h; h = mt_hook_next(&h->next)) {
        /* a sparse gradient as it is (the binding layer shows it as a sparse tensor) */
        mt_tensor **g = &buffer[h->output_nr];
        if (!h->post_accumulate && *g) {
            st = h->fn(h->ctx, g);
        }
    }
    mt_set_grad_enabled(was);
    return st;
}

static mt_status
run_post_accumulate_hooks(mt_tensor *leaf, bool create_graph)
{
    mt_status st = MT_OK;
    bool was = mt_grad_enabled();
    mt_set_grad_enabled(create_graph);
    for (mt_hook *h = mt_hook_next(&leaf->hooks); st == MT_OK && h; h = mt_hook_next(&h->next)) {
        mt_tensor *arg = leaf;
        if (h->post_accumulate) {
            st = h->fn(h->ctx, &arg);
        }
    }
    mt_set_grad_enabled(was);
    return st;
}

/* A view node's gradient g added into its part of the input's gradient buffer, in place (zeros
 * first where nothing arrived yet): the pieces of a split, unbind or slicing loop then cost their
 * own size each, not the input's. false (nothing done) where the buffer is not the engine's
 * alone, or g not a plain gradient: the formula runs instead. */
bool
mt_engine_add_into_region(mt_node *n, mt_tensor **buf, mt_tensor *g, bool create_graph,
                          mt_status *st)
{
    if (create_graph || n->nedges != 1 || buf == NULL || !g || g->requires_grad ||
        mt_is_sparse_grad(g) || mt_tensor_has_internal_overlap(g)) {
        return false;
    }
    const mt_meta *m = &n->in_meta[0];
    if (*buf && !(engine_only(*buf) && !mt_is_sparse_grad(*buf) && (*buf)->dtype == m->dtype &&
                  (*buf)->ndim == m->ndim &&
                  memcmp((*buf)->sizes, m->sizes, sizeof(int64_t) * (size_t)m->ndim) == 0)) {
        return false;
    }
    bool was = mt_grad_enabled();
    mt_set_grad_enabled(false);
    mt_tensor *part = NULL;
    *st = *buf ? MT_OK : mt_ag_zeros(m, buf);
    if (*st == MT_OK && (*st = n->formula->region(n, *buf, &part)) == MT_OK) {
        *st = mt_op_add_(part, g, mt_scalar_int(1), NULL);
    }
    mt_tensor_clear(&part);
    mt_set_grad_enabled(was);
    return true;
}

/* The hooks on node n itself (mt_node_hooks): pre with the gradients of its outputs, or (gin
 * not NULL) post with those and the gradients of its nin inputs; in grad mode only with
 * create_graph. */
mt_status
mt_engine_node_hooks(mt_node *n, mt_tensor **grads, mt_tensor **gin, int nin, bool create_graph)
{
    if (n->node_hooks == NULL) {
        return MT_OK;
    }
    bool was = mt_grad_enabled();
    mt_set_grad_enabled(create_graph);
    mt_status st = gin ? n->node_hooks->post(n->node_hooks_ctx, gin, nin, grads, n->nout)
                       : n->node_hooks->pre(n->node_hooks_ctx, grads, n->nout);
    mt_set_grad_enabled(was);
    return st;
}

/* AccumulateGrad node n: grad (owned) into its leaf's .grad, then the leaf's post-accumulate
 * hooks and n's own post-hooks (which see no input gradients: a leaf has no inputs). */
mt_status
mt_engine_accumulate_leaf(mt_node *n, mt_tensor *grad, bool create_graph)
{
    mt_status st = mt_engine_conform(grad, &n->out_meta[0], n, 0, &grad);
    mt_tensor *given = st == MT_OK && n->node_hooks ? mt_tensor_retain(grad) : NULL;
    if (st == MT_OK) {
        st = accumulate_grad(n->variable, grad, create_graph);
    }
    if (st == MT_OK) {
        st = run_post_accumulate_hooks(n->variable, create_graph);
    }
    if (st == MT_OK && given) {
        mt_tensor *none = NULL;
        st = mt_engine_node_hooks(n, &given, &none, 0, create_graph);
    }
    if (given) {
        mt_tensor_release(given);
    }
    return st;
}
