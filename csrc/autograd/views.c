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
 * PyTorch's error. Only floating-point views take part; the others just know their base. A view
 * may count in other elements than its base (view_as_real, view_as_complex: PyTorch replays
 * those views): its part of the base's gradient is then read through view_as_real (base_and_view). */
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
    g->dtype = t->dtype;
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

mt_status
mt_autograd_pieces(mt_args *a, mt_op op)
{
    mt_tensor *self = a->t[0];
    /* unbind(self, dim); split(self, split_size, dim); split_with_sizes(self, sizes, dim) */
    const int64_t given = op == MT_OP_split ? a->i[1] : a->i[0];
    const bool was = mt_grad_enabled();
    mt_set_grad_enabled(false);
    mt_status st = mt_redispatch(op, a, MT_KEY_AUTOGRAD);
    mt_set_grad_enabled(was);
    int d = 0;
    if (st || (st = mt_wrap_dim(given, self->ndim, &d))) {
        return st;
    }
    /* each piece as its view op records it: select(self, d, k), slice(self, d, start, end) */
    int64_t start = 0;
    for (int k = 0; k < a->noutl && st == MT_OK; k++) {
        mt_args p;
        mt_args_init(&p);
        p.t[0] = self;
        p.i[0] = d;
        p.i_none = 0; /* every int given */
        p.out[0] = a->outl[k];
        if (op == MT_OP_unbind) {
            p.i[1] = k;
            st = mt_autograd_record_made(MT_OP_select, &p);
        } else {
            const int64_t len = a->outl[k]->sizes[d];
            p.i[1] = start;
            p.i[2] = start + len;
            p.i[3] = 1;
            start += len;
            st = mt_autograd_record_made(MT_OP_slice, &p);
        }
    }
    if (st) {
        mt_args_clear_outl(a);
        return st;
    }
    mt_autograd_multi_output_views(a->outl, a->noutl,
                                   op == MT_OP_unbind  ? "UnbindBackward0"
                                   : op == MT_OP_split ? "SplitBackward0"
                                                       : "SplitWithSizesBackward0");
    return MT_OK;
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

/* Fresh memory for a gradient of the base b (*result, laid out as b, of dtype dt: b's, or the
 * gradient's where it differs) and the view v's part of it (*slice), zeroed or not. Where one of
 * them is complex and the other real, the memory is complex and the real one reads it through
 * view_as_real: positions count in real numbers then, from an even one. */
static mt_status
base_and_view(const mt_geometry *b, const mt_geometry *v, mt_dtype dt, mt_device dev, bool zero,
              mt_tensor **result, mt_tensor **slice)
{
    const bool cb = mt_dtype_is_complex(b->dtype), cv = mt_dtype_is_complex(v->dtype);
    const int64_t unit = cb != cv ? 2 : 1; /* positions per element of the memory */
    const int64_t ub = cb && unit == 2 ? 2 : 1, uv = cv && unit == 2 ? 2 : 1;
    const int64_t rb = b->offset * ub, rv = v->offset * uv;
    const int64_t from = (rb < rv ? rb : rv) / unit * unit;
    const int64_t eb = rb + span_of(b) * ub, ev = rv + span_of(v) * uv;
    int64_t n = ((eb > ev ? eb : ev) - from + unit - 1) / unit;
    const mt_dtype flat_dt = unit == 2 && !cb ? mt_dtype_to_complex(dt) : dt;
    mt_tensor *flat = NULL, *real = NULL;
    mt_status st = zero ? mt_op_zeros(1, &n, flat_dt, dev, false, &flat)
                        : mt_op_empty(1, &n, flat_dt, dev, false, &flat);
    if (st == MT_OK && unit == 2) {
        st = mt_op_view_as_real(flat, &real);
    }
    if (st == MT_OK) {
        mt_tensor *in = ub == 1 && unit == 2 ? real : flat;
        st = mt_op_as_strided(in, b->ndim, b->sizes, b->ndim, b->strides, (rb - from) / ub, result);
    }
    if (st == MT_OK) {
        mt_tensor *in = uv == 1 && unit == 2 ? real : flat;
        st = mt_op_as_strided(in, v->ndim, v->sizes, v->ndim, v->strides, (rv - from) / uv, slice);
        if (st) {
            mt_tensor_clear(result);
        }
    }
    mt_tensor_clear(&flat);
    mt_tensor_clear(&real);
    return st;
}

// g[0] (the view, of other elements than the base): the base's gradient, zero but for the
// view's elements, which are g[0]
static mt_status
replay_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_view_state *s = n->user;
    mt_tensor *result = NULL, *slice = NULL;
    mt_status st = base_and_view(&s->base, &s->view, s->base.dtype, mt_tensor_device(g[0]), true,
                                 &result, &slice);
    if (st == MT_OK && (st = mt_op_copy_(slice, g[0], NULL)) == MT_OK) {
        gi[0] = mt_tensor_retain(result);
    }
    mt_tensor_clear(&result);
    mt_tensor_clear(&slice);
    return st;
}

/* the history of a view of other elements than its base's, named as PyTorch's replay of its
 * last view op names it (ViewAsRealBackward0) */
static const mt_formula view_replay = {
    .name = "AsStridedBackward0",
    .backward = replay_backward,
};

/* t's grad_fn becomes an AsStridedBackward0 taking t's gradient into the base's geometry,
 * over the base's current history (for a view of other elements, a node named after t's last
 * view op doing the same). */
static mt_status
regenerate(mt_tensor *t)
{
    mt_tensor *base = t->view_base;
    const bool replay = t->dtype != base->dtype;
    const mt_node *old = t->grad_fn;
    const char *name = !replay || old == NULL         ? "AsStridedBackward0"
                       : old->formula == &view_replay ? old->name
                                                      : old->formula->name;
    mt_view_state *s = calloc(1, sizeof(*s));
    mt_node *n = s ? mt_node_new(replay ? &view_replay : mt_autograd_formula(MT_OP_as_strided),
                                 name, 1)
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

// g[0] (base): gi[0] is g[0] but for the view's elements, which get what the in-place op's
// formula makes of their gradient; gi[e] for e >= 1 are the formula's for its other inputs
static mt_status
copy_slices_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_view_state *s = n->user;
    mt_node *fn = s->fn;
    mt_tensor *result = NULL, *slice = NULL, *fg[MT_NODE_MAX_OUT] = {NULL};
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
        (st = base_and_view(&s->base, &s->view, g[0]->dtype, mt_tensor_device(g[0]), false, &result,
                            &slice)) == MT_OK &&
        (st = mt_op_copy_(result, g[0], NULL)) == MT_OK &&
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
