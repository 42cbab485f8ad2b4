/* The Autograd dispatch key: recording nodes, and their life (saved tensors: autograd/saved.c;
 * nodes recorded by hand, autograd.Function's: autograd/custom.c).
 *
 * One kernel serves every op with a formula: it runs the op below the Autograd key with grad
 * mode off (so nothing inside records), then links the outputs to a new node. In-place ops on
 * tensors that require grad move the tensor's history to the new node. */
#define _DEFAULT_SOURCE /* PTHREAD_MUTEX_RECURSIVE */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "autograd/formulas.h"
#include "ops/ops.h"

/* The formula table, one row per differentiable op (formulas.def) */
static const mt_formula table[MT_NUM_OPS] = {
#define MT_FORMULA(row_op, node, fn, ...) \
    [MT_OP_##row_op] = {.name = node, .backward = fn, .op = MT_OP_##row_op, __VA_ARGS__},
#include "autograd/formulas.def"
#undef MT_FORMULA
};
/* the ops that record nothing (MT_NO_GRADIENT rows): no refusing formula either */
static const bool no_gradient[MT_NUM_OPS] = {
#define MT_FORMULA(op, node, backward, ...)
#define MT_NO_GRADIENT(op) [MT_OP_##op] = true,
#include "autograd/formulas.def"
#undef MT_FORMULA
};
/* the rows, and the refusing formula of each differentiable op without one (mt_autograd_init) */
static const mt_formula *formulas[MT_NUM_OPS];
static atomic_ullong next_sequence_nr;
static atomic_llong live_nodes; /* for leak tests */

int64_t
mt_live_nodes(void)
{
    return atomic_load_explicit(&live_nodes, memory_order_relaxed);
}
/* Guards every tensor's grad_acc, a weak reference: threads without the GIL may record edges to
 * a leaf's AccumulateGrad while another drops its last reference. */
static pthread_mutex_t grad_acc_lock = PTHREAD_MUTEX_INITIALIZER;

const mt_formula *
mt_autograd_formula(mt_op op)
{
    return formulas[op];
}

static void
free_node(mt_node *n)
{
    mt_saved_drop_packed(n);
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        mt_tensor_clear(&n->saved[k]);
    }
    for (int k = 0; k < MT_NODE_MAX_OUT; k++) {
        mt_tensor_clear(&n->saved_out[k]);
    }
    for (int e = 0; e < n->nedges; e++) {
        if (n->edges[e].node) {
            mt_node_release(n->edges[e].node);
        }
    }
    if (n->variable) {
        pthread_mutex_lock(&grad_acc_lock);
        if (n->variable->grad_acc == n) { /* not already replaced by a new one */
            n->variable->grad_acc = NULL;
        }
        pthread_mutex_unlock(&grad_acc_lock);
        mt_tensor_release(n->variable);
    }
    if (n->user_free) {
        n->user_free(n->user);
    }
    mt_hooks_free(n->hooks);
    if (n->node_hooks) {
        n->node_hooks->free_ctx(n->node_hooks_ctx);
    }
    free(n->edges);
    free(n->in_meta);
    pthread_mutex_destroy(&n->lock);
    free(n);
    atomic_fetch_sub_explicit(&live_nodes, 1, memory_order_relaxed);
}

void
mt_hooks_free(mt_hook *h)
{
    while (h) {
        mt_hook *next = h->next;
        if (h->free_ctx) {
            h->free_ctx(h->ctx);
        }
        free(h);
        h = next;
    }
}

/* The hooks registry's: lists of hooks grow (mt_autograd_add_hook, with the GIL) while a
 * backward on another thread walks them (mt_hook_next, without). Held for a pointer's read or
 * write only, never while a hook runs, so that it never waits on the GIL. */
static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;

mt_status
mt_autograd_add_hook(mt_tensor *t, bool post_accumulate, mt_hook_fn fn, void *ctx,
                     void (*free_ctx)(void *ctx))
{
    mt_node *fn_node = NULL;
    mt_status st = mt_tensor_requires_grad(t) ? mt_autograd_grad_fn(t, &fn_node)
                                              : mt_fail(MT_ERUNTIME, "cannot register a hook on a "
                                                                     "tensor that doesn't require "
                                                                     "gradient");
    mt_hook *h = st ? NULL : calloc(1, sizeof(*h));
    if (st == MT_OK && h == NULL) {
        st = mt_fail(MT_ENOMEM, "out of memory adding a hook");
    }
    if (st == MT_OK && post_accumulate && fn_node) {
        st = mt_fail(MT_ERUNTIME, "post accumulate grad hooks cannot be registered on non-leaf "
                                  "tensors");
    }
    if (st) {
        free(h);
        if (free_ctx) {
            free_ctx(ctx);
        }
        return st;
    }
    *h = (mt_hook){fn, ctx, free_ctx, fn_node ? t->output_nr : 0, post_accumulate, NULL};
    mt_hook **end = fn_node ? &fn_node->hooks : &t->hooks;
    pthread_mutex_lock(&hooks_lock);
    while (*end) {
        end = &(*end)->next;
    }
    *end = h;
    pthread_mutex_unlock(&hooks_lock);
    return MT_OK;
}

mt_hook *
mt_hook_next(mt_hook *const *link)
{
    pthread_mutex_lock(&hooks_lock);
    mt_hook *h = *link;
    pthread_mutex_unlock(&hooks_lock);
    return h;
}

/* Nodes whose count reached zero on this thread, waiting for free_node. Freeing a node drops
 * its edges, saved tensors, leaf and Python state, and any of those may free further nodes (a
 * saved input's grad_fn, a Function's ctx holding tensors): those join the queue instead of
 * recursing, so a graph of any depth and shape is freed in constant stack (CPython's trashcan).
 * Thread-local: each thread drains what it dropped, without a lock. */
static _Thread_local mt_node *dead_nodes;
static _Thread_local bool freeing_nodes;

void
mt_node_release(mt_node *n)
{
    if (atomic_fetch_sub_explicit(&n->refcount, 1, memory_order_acq_rel) != 1) {
        return;
    }
    n->next_dead = dead_nodes;
    dead_nodes = n;
    if (freeing_nodes) {
        return; /* an outer call on this thread is draining the queue */
    }
    freeing_nodes = true;
    while (dead_nodes) {
        mt_node *x = dead_nodes;
        dead_nodes = x->next_dead;
        free_node(x);
    }
    freeing_nodes = false;
}

void
mt_autograd_forget(mt_tensor *t)
{
    mt_node *n = t->grad_fn;
    if (t->retains_grad && n->retains[t->output_nr] == t) {
        n->retains[t->output_nr] = NULL;
    }
    t->grad_fn = NULL;
    mt_node_release(n);
}

void
mt_meta_of(const mt_tensor *t, mt_meta *m)
{
    m->ndim = t->ndim;
    memcpy(m->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    m->dtype = t->dtype;
    m->device = mt_tensor_device(t);
}

/* kept = a's non-tensor arguments, for a node (zeroed: its tensor slots stay NULL). Of the int
 * lists only the first n values: the rest of their MT_MAX_DIMS slots (2 KB) is never read. */
static void
keep_args(mt_args *kept, const mt_args *a)
{
    memcpy(kept->s, a->s, sizeof(a->s));
    memcpy(kept->i, a->i, sizeof(a->i));
    kept->i_none = a->i_none;
    for (size_t k = 0; k < sizeof(a->l) / sizeof(a->l[0]); k++) {
        const mt_intlist *l = &a->l[k];
        /* An int[*] list's ext values live only for the call: a node keeps what fits in v and
         * drops the rest (no formula reads an int[*] list; their ops are composites). */
        const int64_t *values = mt_intlist_values(l);
        kept->l[k].n = l->n <= MT_MAX_DIMS ? l->n : 0;
        kept->l[k].none = l->none;
        kept->l[k].ext = NULL;
        if (kept->l[k].n > 0) {
            memcpy(kept->l[k].v, values, sizeof(int64_t) * (size_t)kept->l[k].n);
        }
    }
    memcpy(kept->b, a->b, sizeof(a->b));
    kept->str[0] = a->str[0];
    memcpy(kept->f, a->f, sizeof(a->f));
    kept->dtype = a->dtype;
    kept->has_device = a->has_device;
    kept->device = a->device;
    kept->gen = a->gen;
    kept->ntl = a->ntl;
}

/* Every node's lock is recursive (mt_node.lock): one attribute for all, made once. */
static pthread_mutexattr_t node_lock_attr;
static pthread_once_t node_lock_attr_once = PTHREAD_ONCE_INIT;

static void
init_node_lock_attr(void)
{
    pthread_mutexattr_init(&node_lock_attr);
    pthread_mutexattr_settype(&node_lock_attr, PTHREAD_MUTEX_RECURSIVE);
}

mt_node *
mt_node_new(const mt_formula *f, const char *name, int nedges)
{
    mt_node *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        return NULL;
    }
    n->edges = calloc(nedges > 0 ? (size_t)nedges : 1, sizeof(*n->edges));
    n->in_meta = calloc(nedges > 0 ? (size_t)nedges : 1, sizeof(*n->in_meta));
    if (n->edges == NULL || n->in_meta == NULL) {
        free(n->edges);
        free(n->in_meta);
        free(n);
        return NULL;
    }
    pthread_once(&node_lock_attr_once, init_node_lock_attr);
    pthread_mutex_init(&n->lock, &node_lock_attr);
    atomic_init(&n->refcount, 1);
    atomic_fetch_add_explicit(&live_nodes, 1, memory_order_relaxed);
    n->formula = f;
    n->name = name;
    n->nedges = nedges;
    n->sequence_nr = atomic_fetch_add(&next_sequence_nr, 1);
    return n;
}

mt_status
mt_autograd_edge_of(mt_tensor *t, mt_edge *e)
{
    e->node = NULL;
    e->input_nr = 0;
    if (t == NULL || !mt_tensor_requires_grad(t)) {
        return MT_OK;
    }
    mt_node *fn = t->grad_fn;
    mt_status st = t->view_base ? mt_autograd_grad_fn(t, &fn) : MT_OK;
    if (st) {
        return st;
    }
    if (fn) {
        e->node = mt_node_retain(fn);
        e->input_nr = t->output_nr;
        return MT_OK;
    }
    pthread_mutex_lock(&grad_acc_lock);
    mt_node *acc = t->grad_acc;
    /* A node whose count reached 0 is being freed: it is replaced, not revived. */
    long count = acc ? atomic_load(&acc->refcount) : 0;
    while (count > 0 && !atomic_compare_exchange_weak(&acc->refcount, &count, count + 1)) {
    }
    if (count > 0) {
        e->node = acc;
        pthread_mutex_unlock(&grad_acc_lock);
        return MT_OK;
    }
    acc = mt_node_new(NULL, "AccumulateGrad", 0);
    if (acc == NULL) {
        pthread_mutex_unlock(&grad_acc_lock);
        return mt_fail(MT_ENOMEM, "out of memory recording the autograd graph");
    }
    acc->variable = mt_tensor_retain(t);
    acc->nout = 1;
    acc->out_diff[0] = true;
    mt_meta_of(t, &acc->out_meta[0]);
    t->grad_acc = acc; /* borrowed; the first edge below owns it */
    e->node = acc;
    pthread_mutex_unlock(&grad_acc_lock);
    return MT_OK;
}

/* A tensor the node keeps: the same memory and version counter, but no grad_fn, so that a
 * saved output does not keep its own node alive through itself. */
static mt_status
detached(mt_tensor *t, mt_tensor **out)
{
    if (t->python_dispatch) { /* a subclass's: its __torch_dispatch__ makes it (aten.detach) */
        return mt_op_detach(t, out);
    }
    return mt_tensor_view(t, t->ndim, t->sizes, t->strides, t->offset, out);
}

mt_status
mt_saved_set_hooks(mt_node *n, bool output, int k, mt_saved_pack_fn pack, void *ctx)
{
    if (k < 0 || k >= (output ? MT_NODE_MAX_OUT : MT_MAX_TENSOR_ARGS)) {
        return mt_fail(MT_ERUNTIME, "Calling register_hooks on a saved tensor with value None is "
                                    "forbidden");
    }
    mt_tensor **slot = output ? &n->saved_out[k] : &n->saved[k];
    void **handle = output ? &n->packed_out[k] : &n->packed[k];
    if (n->released) {
        return mt_fail(MT_ERUNTIME,
                       "Calling register_hooks on a saved tensor after it has been freed. Saved "
                       "intermediate values of the graph are freed when you call .backward() or "
                       "autograd.grad(). Specify retain_graph=True if you need to backward through "
                       "the graph a second time or if you need to access saved variables after "
                       "calling backward.");
    }
    if (*handle) {
        return mt_fail(MT_ERUNTIME, "Calling register_hooks on a saved tensor whose hooks have "
                                    "already been set. Hint: only one pair of hooks is allowed at "
                                    "a time.");
    }
    if (*slot == NULL || (*slot)->is_wrapped_number) {
        return mt_fail(MT_ERUNTIME, "Calling register_hooks on a saved tensor with value None is "
                                    "forbidden");
    }
    mt_tensor *t = NULL; /* pack sees the kept values without their history, as PyTorch's */
    mt_status st = detached(*slot, &t);
    if (st) {
        return st;
    }
    bool was = mt_grad_enabled();
    mt_set_grad_enabled(false);
    st = pack(t, handle, ctx);
    mt_set_grad_enabled(was);
    mt_tensor_release(t);
    if (st == MT_OK) {
        mt_tensor_clear(slot);
        n->has_packed = true;
    }
    return st;
}

/* What a node keeps of an input: the tensor, or for a view a tensor like it (memory, version
 * counter, history) without the link to its base. The base's later history may lead back to
 * the node (`h[1:] = h[:-1] * w`: h's CopySlices reaches the mul that saved h[:-1]), and that
 * link would close a cycle never freed (PyTorch keeps the view, and leaks there). */
static mt_status
saved_input(mt_tensor *in, mt_tensor **out)
{
    if (in->view_base == NULL) {
        *out = mt_tensor_retain(in);
        return MT_OK;
    }
    mt_status st = detached(in, out);
    if (st == MT_OK && in->grad_fn) {
        (*out)->grad_fn = mt_node_retain(in->grad_fn);
        (*out)->output_nr = in->output_nr;
        (*out)->requires_grad = true;
    }
    return st;
}

/* Whether any differentiable input of the call requires grad. */
static bool
needs_node(const mt_formula *f, const mt_args *a)
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if ((f->diff_inputs >> k & 1u) && a->t[k] && mt_tensor_requires_grad(a->t[k])) {
            return true;
        }
    }
    for (int k = 0; f->diff_list && k < a->ntl; k++) {
        if (a->tl[k] && mt_tensor_requires_grad(a->tl[k])) {
            return true;
        }
    }
    return false;
}

void
mt_node_release_saved(mt_node *n)
{
    mt_saved_drop_packed(n);
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        mt_tensor_clear(&n->saved[k]);
    }
    for (int k = 0; k < MT_NODE_MAX_OUT; k++) {
        mt_tensor_clear(&n->saved_out[k]);
    }
    n->released = true;
    if (n->formula && n->formula->release) {
        n->formula->release(n);
    }
}

void
mt_autograd_set_grad_fn(mt_tensor *t, mt_node *n, int nr)
{
    bool retains = t->retains_grad;
    if (t->grad_fn) {
        mt_autograd_forget(t);
    }
    t->grad_fn = mt_node_retain(n);
    t->output_nr = nr;
    t->requires_grad = true;
    if (retains) { /* retain_grad() follows the tensor to its new history, as PyTorch's */
        n->retains[nr] = t;
    }
}

/* The node of one call, made before the op runs (as PyTorch's): edges to the inputs' nodes,
 * the saved inputs at their versions now (so that `a.mul_(a)` fails in backward, as in
 * PyTorch, rather than reading a changed a), the arguments. An in-place op saves original_self
 * (a copy of self) in place of self. */
static mt_status
record_inputs(mt_op op, const mt_formula *f, mt_args *a, mt_tensor *original_self, mt_node **out)
{
    int nedges = 0;
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        nedges += (f->diff_inputs >> k & 1u) != 0;
    }
    nedges += f->diff_list ? a->ntl : 0;
    mt_node *n = mt_node_new(f, f->name, nedges);
    if (n == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory recording the autograd graph");
    }
    if (f->overload) {
        const char *name = f->overload(op, a); /* pow(2, x): PowBackward2 */
        if (name) {
            n->name = name;
        }
    }
    mt_status st = MT_OK;
    int e = 0;
    const unsigned scalar_slots = mt_op_scalar_slots(op); /* ops.def's SCALAR_SLOTS */
    /* PyTorch's Scalar overload serves the call unless a tensor fills one of those slots */
    bool scalar_overload = true;
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if ((scalar_slots >> k & 1u) && a->t[k] && !a->t[k]->is_wrapped_number) {
            scalar_overload = false;
        }
    }
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (!(f->diff_inputs >> k & 1u)) {
            continue;
        }
        mt_tensor *in = a->t[k];
        if ((in ? in->is_wrapped_number : scalar_overload) && (scalar_slots >> k & 1u) && e < 32) {
            /* clamp(x, min=0)'s absent max: no input of clamp.Scalar's node either (clamp.Tensor's
             * keeps it, as None) */
            n->scalar_edges |= 1u << e;
        }
        if (in && !in->is_wrapped_number) {
            mt_meta_of(in, &n->in_meta[e]);
            if (st == MT_OK && mt_autograd_dtype(in->dtype)) {
                st = mt_autograd_edge_of(in, &n->edges[e]);
            }
        }
        e++;
    }
    for (int k = 0; f->diff_list && k < a->ntl; k++, e++) {
        if (a->tl[k]) {
            mt_meta_of(a->tl[k], &n->in_meta[e]);
            if (st == MT_OK && mt_autograd_dtype(a->tl[k]->dtype)) {
                st = mt_autograd_edge_of(a->tl[k], &n->edges[e]);
            }
        }
    }
    unsigned save = f->save_inputs;
    bool save_outputs = f->save_outputs;
    if (f->saves) {
        f->saves(a, &save, &save_outputs);
    }
    for (int k = 0; st == MT_OK && k < MT_MAX_TENSOR_ARGS; k++) {
        mt_tensor *in = k == 0 && original_self ? original_self : a->t[k];
        if ((save >> k & 1u) && in && (st = mt_check_inference_saved(in))) {
            break;
        }
        if ((save >> k & 1u) && in) {
            /* with saved-tensor hooks, pack sees a detached alias, as PyTorch's */
            st = mt_saved_hooks_active && !in->is_wrapped_number ? detached(in, &n->saved[k])
                                                                 : saved_input(in, &n->saved[k]);
            n->saved_version[k] = mt_tensor_version(in);
            n->has_saved = true;
            if (st == MT_OK) {
                st = mt_saved_pack(n, &n->saved[k], &n->packed[k]);
            }
        }
    }
    keep_args(&n->args, a);
    if (a->str[0]) {
        snprintf(n->str, sizeof(n->str), "%s", a->str[0]);
        n->args.str[0] = n->str;
    }
    if (st) {
        mt_node_release(n);
        return st;
    }
    *out = n;
    return MT_OK;
}

/* The rest of the node once the op ran: its outputs' metadata, the saved outputs, and for a
 * row that keeps geometry (as_strided) its input's and output's. */
static mt_status
record_outputs(mt_op op, const mt_formula *f, mt_args *a, mt_node *n)
{
    unsigned save = f->save_inputs;
    bool save_outputs = f->save_outputs;
    if (f->saves) {
        f->saves(a, &save, &save_outputs);
    }
    mt_status st = MT_OK;
    n->nout = mt_op_nout[op] > 0 ? mt_op_nout[op] : 0;
    for (int k = 0; st == MT_OK && k < n->nout; k++) {
        mt_tensor *o = a->out[k];
        mt_meta_of(o, &n->out_meta[k]);
        n->out_diff[k] = mt_autograd_dtype(o->dtype) && !(f->nondiff_outputs >> k & 1u);
        if ((save_outputs && n->out_diff[k]) || (f->save_index_outputs >> k & 1u)) {
            st = detached(o, &n->saved_out[k]);
            n->saved_out_version[k] = mt_tensor_version(o);
            n->has_saved = true;
            if (st == MT_OK) {
                st = mt_saved_pack(n, &n->saved_out[k], &n->packed_out[k]);
            }
        }
    }
    if (st == MT_OK && f->keep_geometry) {
        mt_view_state *s = calloc(1, sizeof(*s));
        if (s == NULL) {
            return mt_fail(MT_ENOMEM, "out of memory recording the autograd graph");
        }
        mt_geometry_of(a->t[0], &s->base);
        mt_geometry_of(a->out[0], &s->view);
        n->user = s;
        n->user_free = free;
    }
    return st;
}

/* Makes the outputs of a call (not in place) the results of its node n. A view op's output
 * is a view made in grad mode (it was made below with grad mode off). */
static void
link_outputs(const mt_formula *f, mt_args *a, mt_node *n)
{
    for (int k = 0; k < n->nout; k++) {
        mt_tensor *o = a->out[k];
        if (!n->out_diff[k]) {
            continue;
        }
        mt_autograd_set_grad_fn(o, n, k);
        if (o->view_base && f->is_view) {
            mt_tensor *self = a->t[0];
            o->view_creation = self->view_base ? self->view_creation : MT_VIEW_DEFAULT;
            o->view_version = mt_tensor_version(o);
            o->view_output_nr = k;
        }
    }
}

/* The name of op's tensor slot k in its schema ("weight" of nll_loss's t[2]), in buf. */
static const char *
tensor_arg_name(mt_op op, int k, char *buf, size_t size)
{
    const char *p = strchr(mt_op_schemas[op], '(');
    snprintf(buf, size, "%d", k);
    while (p && *p && *p != ')') {
        p += strspn(p, "(, *");
        size_t type_len = strcspn(p, " "), name_len = strcspn(p + type_len + 1, " =,)");
        /* Tensor, Tensor?, Tensor|Scalar(?) fill t[]; Tensor[] and Tensor?[] fill tl */
        bool slot = strncmp(p, "Tensor", 6) == 0 && p[type_len - 1] != ']';
        if (slot && k-- == 0) {
            snprintf(buf, size, "%.*s", (int)name_len, p + type_len + 1);
            break;
        }
        p = strchr(p, ',');
    }
    return buf;
}

/* PyTorch's error when an input it does not differentiate requires grad (see refuse_inputs). */
static mt_status
check_refused(mt_op op, const mt_formula *f, const mt_args *a)
{
    for (int k = 0; f->refuse_inputs && k < MT_MAX_TENSOR_ARGS; k++) {
        if ((f->refuse_inputs >> k & 1u) && a->t[k] && mt_tensor_requires_grad(a->t[k])) {
            char name[64];
            return mt_fail(MT_ERUNTIME,
                           "The function '%s' is not differentiable with respect to argument '%s'. "
                           "This input cannot have requires_grad True.",
                           f->native ? f->native : mt_op_names[op],
                           tensor_arg_name(op, k, name, sizeof(name)));
        }
    }
    return MT_OK;
}

/* *out = a copy of self as it is before an in-place op, for the op's node to save. PyTorch's
 * self.clone() records a CloneBackward0 so that a double backward reaches self's history; the
 * copy gets self's history itself instead (clone's backward is the identity), a node fewer
 * per in-place call. */
static mt_status
original_of(mt_tensor *self, mt_tensor **out)
{
    bool was = mt_grad_enabled();
    mt_set_grad_enabled(false);
    mt_status st = mt_op_clone(self, out);
    mt_set_grad_enabled(was);
    mt_edge e = {NULL, 0};
    if (st == MT_OK && (st = mt_autograd_edge_of(self, &e)) == MT_OK && e.node &&
        e.node->formula) { /* not a leaf's AccumulateGrad: an in-place op refuses those */
        (*out)->grad_fn = e.node;
        (*out)->output_nr = e.input_nr;
        (*out)->requires_grad = true;
        e.node = NULL;
    }
    if (e.node) {
        mt_node_release(e.node);
    }
    if (st) {
        mt_tensor_clear(out);
    }
    return st;
}

/* The Autograd key's kernel of op: its node's inputs, the op below, then the node's outputs. */
static mt_status
autograd_call(mt_op op, mt_args *a)
{
    const mt_formula *f = formulas[op];
    bool inplace = (mt_op_flags[op] & INPLACE) != 0;
    mt_tensor *original_self = NULL;
    mt_node *n = NULL;
    mt_status st = check_refused(op, f, a);
    if (st) {
        return st;
    }
    bool record_it = needs_node(f, a);
    if (record_it && inplace) {
        if ((st = mt_autograd_check_inplace(a->t[0]))) {
            return st;
        }
        /* The formula may need self as it was: keep a copy (the op overwrites it). */
        unsigned save = f->save_inputs;
        bool save_outputs = f->save_outputs;
        if (f->saves) {
            f->saves(a, &save, &save_outputs);
        }
        if ((save & 1u) && (st = original_of(a->t[0], &original_self))) {
            return st;
        }
    }
    if (record_it) {
        st = record_inputs(op, f, a, original_self, &n);
        mt_tensor_clear(&original_self);
        if (st) {
            return st;
        }
    }
    bool was = mt_grad_enabled();
    mt_set_grad_enabled(false);
    st = mt_redispatch(op, a, MT_KEY_AUTOGRAD);
    mt_set_grad_enabled(was);
    if (st || n == NULL) {
        if (n) {
            mt_node_release(n);
        }
        return st;
    }
    if ((st = record_outputs(op, f, a, n)) == MT_OK) {
        if (!inplace) {
            link_outputs(f, a, n);
        } else if (n->out_diff[0] && f->is_view) {
            /* an in-place view op (transpose_): self's geometry changed, not its base's data,
             * so self's history continues in n and the base's stays */
            mt_autograd_set_grad_fn(a->t[0], n, 0);
            a->t[0]->view_version = mt_tensor_version(a->t[0]);
        } else if (n->out_diff[0]) {
            /* self's edge in n is its history before this op: self moves to n */
            st = mt_autograd_rebase_history(a->t[0], n);
        }
    }
    mt_node_release(n);
    for (int k = 0; st && !inplace && k < MT_MAX_OUTPUTS; k++) {
        mt_tensor_clear(&a->out[k]);
    }
    return st;
}

#define PER_OP_CALL autograd_call
#define PER_OP_PREFIX autograd
#include "dispatch/per_op_kernels.h" /* autograd_<op>, autograd_kernels */

mt_status
mt_autograd_record_call(mt_op op, mt_args *a)
{
    return autograd_call(op, a);
}

mt_status
mt_autograd_record_made(mt_op op, mt_args *a)
{
    const mt_formula *f = formulas[op];
    mt_node *n = NULL;
    if (f == NULL || !needs_node(f, a)) {
        return MT_OK;
    }
    mt_status st = record_inputs(op, f, a, NULL, &n);
    if (st == MT_OK && (st = record_outputs(op, f, a, n)) == MT_OK) {
        link_outputs(f, a, n);
    }
    if (n) {
        mt_node_release(n);
    }
    return st;
}

/* An op with a kernel but no formula still records, so that a backward through it fails with
 * PyTorch's message rather than its inputs silently getting no gradient. */
static mt_formula refusing[MT_NUM_OPS];

static mt_status
refuse(mt_node *n, mt_tensor *const *grads, mt_tensor **grad_inputs)
{
    (void)grads;
    (void)grad_inputs;
    return mt_fail(MT_ENOTIMPL, "the derivative for '%s' is not implemented.",
                   mt_op_names[n->formula - refusing]);
}

void
mt_autograd_init(void)
{
    for (int op = 0; op < MT_NUM_OPS; op++) {
        formulas[op] = table[op].backward ? &table[op] : NULL;
        if (formulas[op] == NULL && !no_gradient[op] && mt_kernel_for((mt_op)op, MT_KEY_CPU)->fn) {
            refusing[op] = (mt_formula){
                "NotImplemented", refuse, (1u << MT_MAX_TENSOR_ARGS) - 1u, true, 0, false, false,
                .op = (mt_op)op};
            formulas[op] = &refusing[op];
        }
        if (formulas[op] && !formulas[op]->own_kernel) {
            mt_register_kernel((mt_op)op, MT_KEY_AUTOGRAD, autograd_kernels[op],
                               "mt_autograd_kernel");
        }
    }
    mt_autograd_register_own_kernels();
}
