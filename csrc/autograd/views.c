/* Views under autograd, as PyTorch's (variable.cpp's grad_fn and rebase_history, CopySlices).
 *
 * Every view op ends in as_strided, view or alias (ops/views.c), which make their result a
 * view of the input's base: the first tensor that is not a view, whose version counter it
 * shares. Two things follow under autograd:
 * - an in-place op on a view changes its base: the base's history becomes a CopySlices node,
 *   which hands the op's formula the view's slice of the base's gradient and the rest through;
 * - a view whose base changed in place (through the base, the view or another view of it: the
 *   shared version moved) no longer comes from its old history: when its grad_fn is next read
 *   it becomes an AsStridedBackward0 over the base's current history.
 * Views made in no_grad mode, by unbind/split/chunk or as an autograd.Function's output may not
 * be rebased (PyTorch's CreationMeta): modifying them, or their base while they are used, raises
 * PyTorch's error. Only floating-point views take part; the others just know their base. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "ops/ops.h"

void
mt_geometry_of(const mt_tensor *t, mt_geometry *g)
{
    g->ndim = t->ndim;
    memcpy(g->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(g->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    g->offset = t->offset;
}

void
mt_autograd_as_view(mt_tensor *self, mt_tensor *out)
{
    out->view_base = mt_tensor_retain(self->view_base ? self->view_base : self);
    out->view_version = mt_tensor_version(out);
    /* PyTorch's propagate_creation_meta: made in no_grad mode, a view is one of that kind
     * whatever its input was; in grad mode it is what its input was, if a view. (A view op
     * under autograd runs here with grad mode off; autograd.c's link_outputs corrects it.) */
    out->view_creation = !mt_grad_enabled() ? MT_VIEW_NO_GRAD
                         : self->view_base  ? self->view_creation
                                            : MT_VIEW_DEFAULT;
    out->view_output_nr = 0;
}

void
mt_autograd_multi_output_views(mt_tensor **views, int64_t n, const char *node_name)
{
    if (!mt_grad_enabled()) {
        return; /* made in no_grad mode: views of that kind already */
    }
    for (int64_t k = 0; k < n; k++) {
        mt_tensor *t = views[k];
        if (t->view_base) {
            t->view_creation = MT_VIEW_MULTI_OUTPUT;
            t->view_output_nr = (int)k;
        }
        if (t->grad_fn) { /* each piece has a node of its own, named after PyTorch's one */
            t->grad_fn->name = node_name;
        }
    }
}

/* The length of the name PyTorch's messages give a node: without a last "Backward" and the
 * digits after it ("Output 0 of Mul", of MulBackward0). */
static int
short_name_len(const char *name)
{
    int len = (int)strlen(name), end = len;
    while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') {
        end--;
    }
    if (end >= 8 && strncmp(name + end - 8, "Backward", 8) == 0) {
        return end - 8;
    }
    return len;
}

/* PyTorch's handle_view_on_rebase: MT_OK for a view that may be rebased, else its error for an
 * in-place op on the view itself (direct) or on its base or another view (indirect). */
static mt_status
view_error(const mt_tensor *t, bool indirect)
{
    const mt_node *fn = t->grad_fn;
    const char *modified = indirect ? "its base or another view of its base has been" : "is being";
    const char *why;
    char head[384];
    switch (t->view_creation) {
    case MT_VIEW_DEFAULT:
        return MT_OK;
    case MT_VIEW_MULTI_OUTPUT:
        why = " This view is the output of a function that returns multiple views. Such "
              "functions do not allow the output views to be modified inplace. You should "
              "replace the inplace operation by an out-of-place one.";
        break;
    case MT_VIEW_NO_GRAD:
        why = " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
              "clarify your code by moving both the view and the inplace either both inside the "
              "no_grad block (if you don't want the inplace to be tracked) or both outside (if "
              "you want the inplace to be tracked).";
        break;
    default:
        why = " This view was created inside a custom Function (or because an input was "
              "returned as-is) and the autograd logic to handle view+inplace would override the "
              "custom backward associated with the custom Function, leading to incorrect "
              "gradients. This behavior is forbidden. You can fix this by cloning the output of "
              "the custom Function.";
        break;
    }
    if (fn == NULL) { /* a view without history was made in no_grad mode, as PyTorch sees it */
        snprintf(head, sizeof(head),
                 "A view was created in no_grad mode and %s modified inplace with grad mode "
                 "enabled.",
                 modified);
    } else if (t->view_creation == MT_VIEW_NO_GRAD) {
        snprintf(head, sizeof(head),
                 "Output %d of %.*s is a view of a view which was created in no_grad mode and %s "
                 "modified inplace with grad mode enabled.",
                 t->view_output_nr, short_name_len(fn->name), fn->name, modified);
    } else {
        snprintf(head, sizeof(head), "Output %d of %.*s is a view and %s modified inplace.",
                 t->view_output_nr, short_name_len(fn->name), fn->name, modified);
    }
    return mt_fail(MT_ERUNTIME, "%s%s", head, why);
}

/* t's grad_fn becomes an AsStridedBackward0 taking t's gradient into the base's geometry,
 * over the base's current history. */
static mt_status
regenerate(mt_tensor *t)
{
    mt_tensor *base = t->view_base;
    mt_view_state *s = calloc(1, sizeof(*s));
    mt_node *n = s ? mt_node_new(mt_autograd_formula(MT_OP_as_strided), "AsStridedBackward0", 1)
                   : NULL;
    if (n == NULL) {
        free(s);
        return mt_fail(MT_ENOMEM, "out of memory recording the autograd graph");
    }
    n->user = s;
    n->user_free = free;
    mt_geometry_of(base, &s->base);
    mt_geometry_of(t, &s->view);
    mt_meta_of(base, &n->in_meta[0]);
    n->nout = 1;
    mt_meta_of(t, &n->out_meta[0]);
    n->out_diff[0] = true;
    mt_status st = mt_autograd_edge_of(base, &n->edges[0]);
    if (st == MT_OK) {
        mt_autograd_set_grad_fn(t, n, 0);
        t->view_version = mt_tensor_version(t);
    }
    mt_node_release(n);
    return st;
}

mt_status
mt_autograd_grad_fn(mt_tensor *t, mt_node **out)
{
    mt_tensor *base = t->view_base;
    *out = t->grad_fn;
    if (base == NULL || !mt_autograd_dtype(t->dtype) ||
        (t->grad_fn == NULL && !base->requires_grad) || t->view_version == mt_tensor_version(t)) {
        return MT_OK;
    }
    mt_status st = view_error(t, true);
    if (st == MT_OK && (st = regenerate(t)) == MT_OK) {
        *out = t->grad_fn;
    }
    return st;
}

mt_status
mt_autograd_check_inplace(mt_tensor *self)
{
    bool requires_grad = mt_tensor_requires_grad(self);
    mt_node *fn = self->grad_fn;
    if (self->view_base && mt_autograd_dtype(self->dtype)) {
        mt_status st = view_error(self, false);
        if (st) {
            return st;
        }
        if (requires_grad && self->view_base->grad_fn == NULL) {
            return mt_fail(MT_ERUNTIME, "a view of a leaf Variable that requires grad is being "
                                        "used in an in-place operation.");
        }
        if ((st = mt_autograd_grad_fn(self, &fn))) {
            return st;
        }
    }
    if (requires_grad && fn == NULL) {
        return mt_fail(MT_ERUNTIME, "a leaf Variable that requires grad is being used in an "
                                    "in-place operation.");
    }
    return MT_OK;
}

static void
view_state_free(void *user)
{
    mt_view_state *s = user;
    if (s->fn) {
        mt_node_release(s->fn);
    }
    free(s);
}

/* The number of elements of the memory g spans from its offset on. */
static int64_t
span_of(const mt_geometry *g)
{
    int64_t span = 1;
    for (int d = 0; d < g->ndim; d++) {
        if (g->sizes[d] == 0) {
            return 0;
        }
        span += (g->sizes[d] - 1) * g->strides[d];
    }
    return span;
}

// g[0] (base): gi[0] is g[0] but for the view's elements, which get what the in-place op's
// formula makes of their gradient; gi[e] for e >= 1 are the formula's for its other inputs
static mt_status
copy_slices_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_view_state *s = n->user;
    mt_node *fn = s->fn;
    const mt_geometry *b = &s->base, *v = &s->view;
    int64_t span = span_of(b);
    mt_tensor *flat = NULL, *result = NULL, *slice = NULL, *fg[MT_NODE_MAX_OUT] = {NULL};
    mt_tensor **fgi = calloc((size_t)fn->nedges, sizeof(*fgi));
    mt_status st = fgi ? MT_OK : mt_fail(MT_ENOMEM, "out of memory running the autograd graph");
    const bool unpack = st == MT_OK && fn->has_packed && !fn->released;
    if (unpack) {
        st = mt_saved_unpack(fn);
    }
    if (st == MT_OK) {
        st = mt_saved_check(fn);
    }
    /* result: the base's gradient laid out as the base, so the view's geometry finds its slice */
    if (st == MT_OK &&
        (st = mt_op_empty(1, &span, g[0]->dtype, mt_tensor_device(g[0]), false, &flat)) == MT_OK &&
        (st = mt_op_as_strided(flat, b->ndim, b->sizes, b->ndim, b->strides, 0, &result)) ==
            MT_OK &&
        (st = mt_op_copy_(result, g[0], NULL)) == MT_OK &&
        (st = mt_op_as_strided(result, v->ndim, v->sizes, v->ndim, v->strides,
                               v->offset - b->offset, &slice)) == MT_OK &&
        (st = mt_op_clone(slice, &fg[0])) == MT_OK) {
        for (int k = 0; k < fn->nout; k++) { /* the view's slice is fn's only gradient */
            fn->grad_given[k] = k == 0;
        }
        st = fn->formula->backward(fn, fg, fgi);
    }
    /* no gradient for the view from the formula: none for the base either, as PyTorch */
    if (st == MT_OK && fgi[0] && n->edges[0].node &&
        (st = mt_op_copy_(slice, fgi[0], NULL)) == MT_OK) {
        gi[0] = mt_tensor_retain(result);
    }
    for (int e = 0; fgi && e < fn->nedges; e++) {
        if (st == MT_OK && e > 0) {
            gi[e] = fgi[e];
        } else {
            mt_tensor_clear(&fgi[e]);
        }
    }
    free(fgi);
    if (unpack) {
        mt_saved_unpacked_clear(fn);
    }
    mt_tensor_clear(&flat);
    mt_tensor_clear(&result);
    mt_tensor_clear(&slice);
    mt_tensor_clear(&fg[0]);
    return st;
}

static void
copy_slices_release(mt_node *n)
{
    mt_node_release_saved(((mt_view_state *)n->user)->fn);
}

/* named as PyTorch's C++ node (its name() and its messages say so; its class is CopySlices) */
static const mt_formula copy_slices = {
    .name = "torch::autograd::CopySlices",
    .backward = copy_slices_backward,
    .release = copy_slices_release,
};

mt_status
mt_autograd_rebase_history(mt_tensor *self, mt_node *n)
{
    mt_tensor *base = self->view_base;
    if (base == NULL || !mt_autograd_dtype(self->dtype)) {
        mt_autograd_set_grad_fn(self, n, 0);
        return MT_OK;
    }
    /* CopySlices sends the base's gradient to the base's history (edge 0, in place of the
     * view's in n) and the formula's for the op's other inputs along n's other edges */
    mt_view_state *s = calloc(1, sizeof(*s));
    mt_node *cs = s ? mt_node_new(&copy_slices, copy_slices.name, n->nedges) : NULL;
    if (cs == NULL) {
        free(s);
        return mt_fail(MT_ENOMEM, "out of memory recording the autograd graph");
    }
    cs->user = s;
    cs->user_free = view_state_free;
    s->fn = mt_node_retain(n);
    mt_geometry_of(base, &s->base);
    mt_geometry_of(self, &s->view);
    mt_meta_of(base, &cs->in_meta[0]);
    for (int e = 1; e < n->nedges; e++) {
        cs->edges[e] = n->edges[e];
        if (cs->edges[e].node) {
            mt_node_retain(cs->edges[e].node);
        }
        cs->in_meta[e] = n->in_meta[e];
    }
    cs->nout = 1;
    mt_meta_of(base, &cs->out_meta[0]);
    cs->out_diff[0] = true;
    cs->has_saved = true; /* n's saved tensors, freed with them (copy_slices_release) */
    mt_status st = mt_autograd_edge_of(base, &cs->edges[0]);
    if (st == MT_OK) {
        mt_autograd_set_grad_fn(base, cs, 0);
        st = regenerate(self); /* the view's history: its slice of the base's new one */
    }
    mt_node_release(cs);
    return st;
}
