/* The backward engine: dependency counting over the reachable graph, then the nodes in reverse
 * creation order as their gradients complete (PyTorch's engine, on the calling thread).
 *
 * Gradients are checked against what each node's input was: summed back over broadcast dims
 * and cast to its dtype, as PyTorch's validate_outputs does, so formulas need not. A sparse
 * gradient (embedding(sparse=True), sparse_grad.h) stays sparse into a leaf's .grad, through
 * the hooks, retain_grad() and autograd.grad, and through the formulas that keep it so in
 * PyTorch (mt_sparse_grad_through); any other formula gets it dense.
 *
 * A run's state (dependency counts, input buffers, which nodes it needs) is the run's own, in
 * a table of slots by node (PyTorch's GraphTask), so runs on several threads, and runs started
 * inside a node's backward, go on side by side; they share only the nodes, each locked while a
 * run reads its edges or runs it (a parameter's AccumulateGrad: its leaf's .grad). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "autograd/engine.h"
#include "autograd/sparse_grad.h"
#include "ops/ops.h"

static atomic_ullong run_ids;

/* A node's state in one run: PyTorch's GraphTask keeps it per run, not in the node, so that
 * runs on other threads (and runs started inside a node's backward) that reach the same node
 * each count and buffer their own. */
typedef struct slot {
    mt_node *node; /* owned */
    int deps;      /* the edges of this run's nodes into it whose gradient has not come yet */
    uint8_t need;  /* with inputs given (mark_needed): NEED_* */
    mt_tensor *buffer[MT_NODE_MAX_OUT]; /* the gradients of its outputs summed so far */
} slot;

/* The nodes of one run: all reached, found by address through an open-addressing table, and a
 * max-heap (by sequence_nr) of the ready ones. Slots do not move once discover is done. */
typedef struct graph {
    uint64_t run;
    slot *slots;
    int nslots, capslots;
    int *index; /* capindex entries (a power of two, at most half full): a slot's number, or -1 */
    int capindex;
    int *heap; /* slot numbers */
    int nheap, capheap;
    bool prune; /* inputs were given: only the nodes that reach one run (mark_needed) */
} graph;

static mt_status
grow(void **v, int *cap, int need, size_t size)
{
    if (need <= *cap) {
        return MT_OK;
    }
    int c = *cap ? *cap * 2 : 64;
    while (c < need) {
        c *= 2;
    }
    void *p = realloc(*v, size * (size_t)c);
    if (p == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory running the autograd graph");
    }
    *v = p;
    *cap = c;
    return MT_OK;
}

static size_t
hash_node(const mt_node *n, int cap)
{
    uint64_t h = (uint64_t)(uintptr_t)n * UINT64_C(0x9E3779B97F4A7C15); /* Fibonacci hashing */
    return (size_t)(h >> 32) & (size_t)(cap - 1);
}

/* n's slot in run g, or NULL where g never reached it. */
static slot *
find(const graph *g, const mt_node *n)
{
    if (n == NULL || g->capindex == 0) {
        return NULL;
    }
    for (size_t i = hash_node(n, g->capindex);; i = (i + 1) & (size_t)(g->capindex - 1)) {
        int k = g->index[i];
        if (k < 0) {
            return NULL;
        }
        if (g->slots[k].node == n) {
            return &g->slots[k];
        }
    }
}

static void
index_slot(graph *g, int k)
{
    size_t i = hash_node(g->slots[k].node, g->capindex);
    while (g->index[i] >= 0) {
        i = (i + 1) & (size_t)(g->capindex - 1);
    }
    g->index[i] = k;
}

/* x joins run g with a fresh slot (a new reference). */
static mt_status
join(graph *g, mt_node *x)
{
    mt_status st = grow((void **)&g->slots, &g->capslots, g->nslots + 1, sizeof(slot));
    if (st == MT_OK && 2 * (g->nslots + 1) > g->capindex) {
        int cap = g->capindex ? 2 * g->capindex : 128;
        int *index = malloc(sizeof(*index) * (size_t)cap);
        if (index == NULL) {
            return mt_fail(MT_ENOMEM, "out of memory running the autograd graph");
        }
        memset(index, 0xff, sizeof(*index) * (size_t)cap); /* -1 everywhere */
        free(g->index);
        g->index = index;
        g->capindex = cap;
        for (int k = 0; k < g->nslots; k++) {
            index_slot(g, k);
        }
    }
    if (st == MT_OK) {
        g->slots[g->nslots] = (slot){.node = mt_node_retain(x)};
        index_slot(g, g->nslots++);
    }
    return st;
}

static bool
later(const graph *g, int a, int b)
{
    return g->slots[a].node->sequence_nr > g->slots[b].node->sequence_nr;
}

static mt_status
ready(graph *g, slot *x)
{
    mt_status st = grow((void **)&g->heap, &g->capheap, g->nheap + 1, sizeof(int));
    if (st) {
        return st;
    }
    g->heap[g->nheap++] = (int)(x - g->slots);
    for (int i = g->nheap - 1; i > 0;) {
        int parent = (i - 1) / 2;
        if (!later(g, g->heap[i], g->heap[parent])) {
            break;
        }
        int t = g->heap[parent];
        g->heap[parent] = g->heap[i];
        g->heap[i] = t;
        i = parent;
    }
    return MT_OK;
}

static slot *
pop(graph *g)
{
    int top = g->heap[0];
    g->heap[0] = g->heap[--g->nheap];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < g->nheap && later(g, g->heap[l], g->heap[m])) {
            m = l;
        }
        if (r < g->nheap && later(g, g->heap[r], g->heap[m])) {
            m = r;
        }
        if (m == i) {
            break;
        }
        int t = g->heap[m];
        g->heap[m] = g->heap[i];
        g->heap[i] = t;
        i = m;
    }
    return &g->slots[top];
}

/* The run this thread is in (the innermost: a node's backward may start another), for the
 * hooks that ask about it while it runs. */
static _Thread_local const graph *current_run;

uint64_t
mt_autograd_current_run(void)
{
    return current_run ? current_run->run : 0;
}

/* Gives every node reachable from root a slot in run g and counts its incoming edges. A node's
 * edges are read under its lock: a run on another thread may be hiding some (run_node). */
static mt_status
discover(graph *g, mt_node *root)
{
    int *stack = NULL; /* slot numbers whose edges are still to walk */
    int n = 0, cap = 0;
    mt_status st = MT_OK;
    if (find(g, root) == NULL) {
        st = join(g, root);
        if (st == MT_OK && (st = grow((void **)&stack, &cap, 1, sizeof(int))) == MT_OK) {
            stack[n++] = g->nslots - 1;
        }
    }
    while (st == MT_OK && n > 0) {
        mt_node *x = g->slots[stack[--n]].node;
        mt_node_lock(x);
        for (int e = 0; st == MT_OK && e < x->nedges; e++) {
            mt_node *next = x->edges[e].node;
            if (next == NULL) {
                continue;
            }
            slot *s = find(g, next);
            if (s == NULL && (st = join(g, next)) == MT_OK &&
                (st = grow((void **)&stack, &cap, n + 1, sizeof(int))) == MT_OK) {
                stack[n++] = g->nslots - 1;
                s = &g->slots[g->nslots - 1];
            }
            if (st == MT_OK) {
                s->deps++;
            }
        }
        mt_node_unlock(x);
    }
    free(stack);
    return st;
}

/* With inputs given (autograd.grad, backward(inputs=)) only the nodes through which one of
 * them is reached run, as PyTorch's exec_info: a node's other edges carry no gradient, and the
 * formula skips those inputs (a conv's weight gradient when only the input's is asked for). */
enum { NEED_UNSEEN, NEED_VISITING, NEED_NO, NEED_YES };

typedef struct need_frame {
    slot *s;
    int edge; /* the next edge to visit */
} need_frame;

/* Whether edge e of n leads to a node of this run that reaches a target (after mark_needed). */
static bool
edge_needed(const graph *g, const mt_node *n, int e)
{
    const slot *next = find(g, n->edges[e].node);
    return next != NULL && next->need == NEED_YES;
}

/* Sets need of every slot of g: NEED_YES where it is one of the targets' nodes or one of its
 * edges leads to such a node (children first: a depth-first walk, finished in post-order). */
static mt_status
mark_needed(graph *g, const mt_edge *targets, int n_targets)
{
    for (int i = 0; i < g->nslots; i++) {
        g->slots[i].need = NEED_UNSEEN;
    }
    need_frame *stack = malloc(sizeof(*stack) * (size_t)(g->nslots > 0 ? g->nslots : 1));
    if (stack == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory starting backward");
    }
    for (int i = 0; i < g->nslots; i++) {
        if (g->slots[i].need != NEED_UNSEEN) {
            continue;
        }
        int top = 0;
        stack[0] = (need_frame){&g->slots[i], 0};
        g->slots[i].need = NEED_VISITING;
        while (top >= 0) {
            need_frame *f = &stack[top];
            mt_node *x = f->s->node;
            mt_node_lock(x);
            if (f->edge < x->nedges) {
                slot *next = find(g, x->edges[f->edge++].node);
                mt_node_unlock(x);
                if (next != NULL && next->need == NEED_UNSEEN) {
                    next->need = NEED_VISITING;
                    stack[++top] = (need_frame){next, 0};
                }
                continue;
            }
            bool yes = false;
            for (int t = 0; t < n_targets && !yes; t++) {
                yes = targets[t].node == x;
            }
            for (int e = 0; e < x->nedges && !yes; e++) {
                yes = edge_needed(g, x, e);
            }
            mt_node_unlock(x);
            f->s->need = yes ? NEED_YES : NEED_NO;
            top--;
        }
    }
    free(stack);
    return MT_OK;
}

static atomic_bool anomaly_enabled = false, anomaly_check_nan = true; /* PyTorch's defaults */

void
mt_autograd_set_anomaly(bool enabled, bool check_nan)
{
    atomic_store(&anomaly_enabled, enabled);
    atomic_store(&anomaly_check_nan, check_nan);
}

bool
mt_autograd_anomaly_enabled(void)
{
    return atomic_load(&anomaly_enabled);
}

bool
mt_autograd_anomaly_check_nan(void)
{
    return atomic_load(&anomaly_check_nan);
}

/* Anomaly mode's check of what node n returned: a floating gradient with a NaN fails, naming n
 * and the output (PyTorch's words). */
static mt_status
check_nan(const mt_node *n, mt_tensor **gin)
{
    for (int e = 0; e < n->nedges; e++) {
        mt_tensor *gi = gin[e], *nan = NULL, *any = NULL;
        if (gi == NULL || !mt_autograd_dtype(gi->dtype) || mt_tensor_numel(gi) == 0) {
            continue;
        }
        bool was = mt_grad_enabled();
        mt_set_grad_enabled(false);
        mt_scalar v;
        mt_status st = mt_op_isnan(gi, &nan);
        if (st == MT_OK && (st = mt_op_any(nan, 0, NULL, false, &any)) == MT_OK) {
            st = mt_tensor_item(any, &v);
        }
        mt_tensor_clear(&nan);
        mt_tensor_clear(&any);
        mt_set_grad_enabled(was);
        if (st != MT_OK) {
            return st;
        }
        if (mt_scalar_to_double(v) > 0) {
            return mt_fail(MT_ERUNTIME, "Function '%s' returned nan values in its %dth output.",
                           n->name, e);
        }
    }
    return MT_OK;
}

/* Zeros for the differentiable outputs of n that no gradient reached. */
static mt_status
zeros_where_missing(mt_node *n, mt_tensor **grads)
{
    mt_status st = MT_OK;
    for (int k = 0; st == MT_OK && k < n->nout; k++) {
        if (grads[k] == NULL && n->out_diff[k]) {
            st = mt_ag_zeros(&n->out_meta[k], &grads[k]);
        }
    }
    return st;
}

/* The seed gradient of a root of a __torch_dispatch__ subclass: ones that its class makes (a
 * clone of the root filled with 1), as PyTorch's ones_like reaches it, so that the backward's ops
 * go to it too; recorded by no node. */
static mt_status
python_seed(mt_tensor *root, mt_tensor **out)
{
    mt_tensor *one = NULL, *copy = NULL, *filled = NULL;
    bool grad = mt_grad_enabled();
    mt_set_grad_enabled(false);
    mt_status st = mt_tensor_scalar(mt_scalar_int(1), MT_INT64, &one);
    if (st == MT_OK && (st = mt_op_clone(root, &copy)) == MT_OK &&
        (st = mt_op_fill_(copy, one, &filled)) == MT_OK) {
        mt_tensor_release(filled); /* copy itself */
        *out = copy;
        copy = NULL;
    }
    mt_set_grad_enabled(grad);
    mt_tensor_clear(&copy);
    mt_tensor_clear(&one);
    return st;
}

/* An alias of saved output o for a formula run under create_graph: a __torch_dispatch__
 * subclass's is its class's aten.alias (a plain view of it would have no class to run ops). */
static mt_status
saved_alias(mt_tensor *o, mt_tensor **out)
{
    if (!o->python_dispatch) {
        return mt_tensor_view(o, o->ndim, o->sizes, o->strides, o->offset, out);
    }
    bool grad = mt_grad_enabled();
    mt_set_grad_enabled(false);
    mt_status st = mt_op_alias(o, out);
    mt_set_grad_enabled(grad);
    return st;
}

/* Runs the node of slot x (its lock held): its formula on its completed buffers, the results
 * sent along its edges into the slots of this run. */
static mt_status
run_node(graph *g, slot *x, bool retain_graph, bool create_graph)
{
    mt_node *n = x->node;
    mt_tensor *grads[MT_NODE_MAX_OUT] = {NULL};
    mt_tensor **gin = NULL;
    for (int k = 0; k < n->nout; k++) {
        grads[k] = x->buffer[k];
        x->buffer[k] = NULL;
        n->grad_given[k] = grads[k] != NULL;
    }
    mt_status st = zeros_where_missing(n, grads);
    for (int k = 0; st == MT_OK && k < n->nout; k++) {
        if (n->retains[k] && grads[k]) {
            st = mt_engine_retain(n->retains[k], grads[k]);
        }
    }
    /* a sparse gradient stays so through a formula that keeps it so, else it is made dense
     * for the node's hooks and formula */
    bool through = false;
    if (st == MT_OK && n->nout == 1 && grads[0] && mt_is_sparse_grad(grads[0]) && !n->node_hooks &&
        !n->has_packed && !create_graph) {
        gin = calloc(n->nedges > 0 ? (size_t)n->nedges : 1, sizeof(*gin));
        st = gin ? mt_sparse_grad_through(n, grads[0], gin, &through)
                 : mt_fail(MT_ENOMEM, "out of memory running the autograd graph");
    }
    for (int k = 0; st == MT_OK && !through && k < n->nout; k++) {
        st = grads[k] ? mt_sparse_grad_densify(&grads[k], n->out_meta[k].ndim, n->out_meta[k].sizes)
                      : MT_OK;
    }
    /* the node's pre-hooks see what retain_grad() kept, as PyTorch's */
    if (st == MT_OK && n->node_hooks &&
        (st = mt_engine_node_hooks(n, grads, NULL, 0, create_graph)) == MT_OK) {
        st = zeros_where_missing(n, grads);
    }
    /* the edges that reach no target, hidden from the formula (allocated only where there are) */
    mt_node **hidden = NULL;
    bool hides = false;
    for (int e = 0; g->prune && e < n->nedges && !hides; e++) {
        hides = n->edges[e].node && !edge_needed(g, n, e);
    }
    if (st == MT_OK) {
        gin = gin ? gin : calloc(n->nedges > 0 ? (size_t)n->nedges : 1, sizeof(*gin));
        hidden = hides ? calloc((size_t)n->nedges, sizeof(*hidden)) : NULL;
        if (gin == NULL || (hides && hidden == NULL)) {
            st = mt_fail(MT_ENOMEM, "out of memory running the autograd graph");
        }
    }
    for (int e = 0; st == MT_OK && hidden && e < n->nedges; e++) {
        if (n->edges[e].node && !edge_needed(g, n, e)) {
            hidden[e] = n->edges[e].node;
            n->edges[e].node = NULL;
        }
    }
    /* tensors saved through saved-tensor hooks: unpacked for this run of the formula */
    bool unpacked = false;
    if (st == MT_OK && n->has_packed && !n->released) {
        st = mt_saved_unpack(n);
        unpacked = st == MT_OK;
    }
    /* With create_graph the formula's ops record too, and a saved output must lead back to
     * this node (it is a function of the inputs). The formula sees, for the call only, a fresh
     * alias of it linked to n; n's own slot stays unlinked (no cycle node -> saved output ->
     * node). A recorded node that saves the alias keeps the link for good, so differentiating
     * it again (a third derivative of tanh) still reaches n through that saved tensor. */
    mt_tensor *unlinked[MT_NODE_MAX_OUT] = {NULL};
    for (int k = 0; st == MT_OK && create_graph && k < n->nout; k++) {
        mt_tensor *o = n->saved_out[k];
        if (o && o->grad_fn == NULL) {
            mt_tensor *alias = NULL;
            st = saved_alias(o, &alias);
            if (st == MT_OK) {
                alias->grad_fn = mt_node_retain(n);
                alias->output_nr = k;
                alias->requires_grad = true;
                unlinked[k] = o;
                n->saved_out[k] = alias;
            }
        }
    }
    /* a view's gradient added straight into its input's (gin stays empty: the edge only counts) */
    slot *into = n->nedges == 1 ? find(g, n->edges[0].node) : NULL;
    bool direct = st == MT_OK && !through && n->formula->region && n->grad_given[0] &&
                  !n->node_hooks &&
                  mt_engine_add_into_region(n, into ? &into->buffer[n->edges[0].input_nr] : NULL,
                                            grads[0], create_graph, &st);
    if (!direct && !through && st == MT_OK && (st = mt_saved_check(n)) == MT_OK) {
        bool was = mt_grad_enabled();
        mt_set_grad_enabled(create_graph);
        st = n->formula->backward(n, grads, gin);
        mt_set_grad_enabled(was);
        if (st == MT_OK && atomic_load(&anomaly_enabled) && atomic_load(&anomaly_check_nan)) {
            st = check_nan(n, gin);
        }
        for (int e = 0; st == MT_OK && n->node_hooks && e < n->nedges; e++) {
            if (n->edges[e].node == NULL) { /* an input that takes no gradient: None */
                mt_tensor_clear(&gin[e]);
            }
        }
        if (st == MT_OK) {
            st = mt_engine_node_hooks(n, grads, gin, n->nedges, create_graph);
        }
    }
    for (int k = 0; k < n->nout; k++) {
        if (unlinked[k]) {
            mt_tensor_clear(&n->saved_out[k]);
            n->saved_out[k] = unlinked[k];
        }
    }
    if (unpacked) {
        mt_saved_unpacked_clear(n);
    }
    for (int e = 0; hidden && e < n->nedges; e++) {
        if (hidden[e]) {
            n->edges[e].node = hidden[e];
        }
    }
    for (int e = 0; e < n->nedges && gin; e++) {
        mt_edge *edge = &n->edges[e];
        mt_tensor *gi = gin[e];
        gin[e] = NULL;
        slot *next = edge->node && !(hidden && hidden[e]) ? find(g, edge->node) : NULL;
        if (next == NULL) {
            mt_tensor_clear(&gi);
            continue;
        }
        if (st == MT_OK && gi) {
            st = mt_engine_conform(gi, &n->in_meta[e], n, e, &gi);
            if (st == MT_OK) {
                st = mt_engine_accumulate(&next->buffer[edge->input_nr],
                                          &edge->node->out_meta[edge->input_nr], gi);
            }
        } else {
            mt_tensor_clear(&gi);
        }
        if (--next->deps == 0 && st == MT_OK) {
            st = ready(g, next);
        }
    }
    free(gin);
    free(hidden);
    for (int k = 0; k < MT_NODE_MAX_OUT; k++) {
        mt_tensor_clear(&grads[k]);
    }
    if (st == MT_OK && !retain_graph && n->has_saved) {
        mt_node_release_saved(n);
    }
    return st;
}

static mt_status
root_grad(int k, mt_tensor *root, mt_tensor *given, mt_tensor **out)
{
    char b1[128], b2[128];
    if (!mt_tensor_requires_grad(root)) {
        return mt_fail(MT_ERUNTIME,
                       "element %d of tensors does not require grad and does not have a grad_fn",
                       k);
    }
    if (given) {
        if (given->ndim != root->ndim ||
            memcmp(given->sizes, root->sizes, sizeof(int64_t) * (size_t)root->ndim) != 0) {
            return mt_fail(MT_ERUNTIME,
                           "Mismatch in shape: grad_output[%d] has a shape of minitorch.Size(%s) "
                           "and output[%d] has a shape of minitorch.Size(%s).",
                           k, mt_format_sizes(b1, sizeof(b1), given->ndim, given->sizes), k,
                           mt_format_sizes(b2, sizeof(b2), root->ndim, root->sizes));
        }
        *out = mt_tensor_retain(given);
        return MT_OK;
    }
    if (mt_tensor_numel(root) != 1) {
        return mt_fail(MT_ERUNTIME, "grad can be implicitly created only for scalar outputs");
    }
    *out = NULL;
    if (root->python_dispatch) {
        return python_seed(root, out);
    }
    return mt_op_ones(root->ndim, root->sizes, root->dtype, mt_tensor_device(root), false, out);
}

int
mt_autograd_will_execute(const mt_node *n)
{
    const graph *g = current_run;
    if (g == NULL) {
        return -1;
    }
    const slot *x = find(g, n);
    return x != NULL && (!g->prune || x->need == NEED_YES);
}

/* Runs the AccumulateGrad node of slot x (its lock held, which guards the leaf's .grad against
 * runs on other threads): the gradient into the leaf's .grad, unless captured. */
static mt_status
run_accumulate(slot *x, bool capture, bool create_graph)
{
    mt_node *n = x->node;
    mt_tensor *grad = x->buffer[0];
    x->buffer[0] = NULL;
    mt_status st = MT_OK;
    if (!capture && grad) {
        const mt_meta *m = &n->out_meta[0]; /* node hooks take dense tensors too */
        st = n->node_hooks ? mt_sparse_grad_densify(&grad, m->ndim, m->sizes) : MT_OK;
        if (st == MT_OK) {
            st = mt_engine_node_hooks(n, &grad, NULL, 0, create_graph);
        }
        if (st == MT_OK && grad) {
            st = mt_engine_accumulate_leaf(n, grad, create_graph);
            grad = NULL; /* taken */
        }
    }
    mt_tensor_clear(&grad);
    return st;
}

/* Runs the ready nodes of g, latest first, each under its lock. */
static mt_status
run_graph(graph *g, bool retain_graph, bool create_graph, int n_inputs, const mt_edge *targets,
          mt_tensor **captured)
{
    mt_status st = MT_OK;
    while (st == MT_OK && g->nheap > 0) {
        slot *x = pop(g);
        mt_node *n = x->node;
        mt_node_lock(n);
        st = mt_engine_grad_hooks(n, x->buffer, create_graph);
        for (int i = 0; st == MT_OK && i < n_inputs; i++) {
            mt_tensor *b = x->buffer[targets[i].input_nr];
            if (targets[i].node == n && b && captured[i] == NULL) {
                captured[i] = mt_tensor_retain(b);
            }
        }
        if (st == MT_OK && n->formula == NULL) {
            st = run_accumulate(x, n_inputs > 0, create_graph);
        } else if (st == MT_OK) {
            bool runs = !g->prune;
            for (int e = 0; e < n->nedges && !runs; e++) {
                runs = edge_needed(g, n, e);
            }
            if (runs) { /* else n is a target through which no other is reached */
                st = run_node(g, x, retain_graph, create_graph);
            }
        }
        mt_node_unlock(n);
    }
    return st;
}

/* Runs of the engine go on side by side, on as many threads as call it: each keeps its state
 * in its own slots, and a node is locked only while a run reads its edges or runs it. Callers
 * release the GIL first (an autograd.Function's backward takes it back), so that a run waiting
 * for a node's lock never holds what the running one needs. */
mt_status
mt_backward(int n_roots, mt_tensor *const *roots, mt_tensor *const *grads, bool retain_graph,
            bool create_graph, int n_inputs, mt_tensor *const *inputs, mt_tensor **captured)
{
    graph g = {.run = atomic_fetch_add(&run_ids, 1) + 1};
    const graph *outer_run = current_run;
    mt_edge *targets = calloc(n_inputs > 0 ? (size_t)n_inputs : 1, sizeof(*targets));
    mt_status st = targets ? MT_OK : mt_fail(MT_ENOMEM, "out of memory starting backward");
    for (int i = 0; st == MT_OK && i < n_inputs; i++) {
        captured[i] = NULL;
        if (!mt_tensor_requires_grad(inputs[i])) {
            st = mt_fail(MT_ERUNTIME, "One of the differentiated Tensors does not require grad");
        } else {
            st = mt_autograd_edge_of(inputs[i], &targets[i]);
        }
    }
    /* Roots: find the graph, then seed the roots' buffers. */
    mt_edge *root_edges = calloc(n_roots > 0 ? (size_t)n_roots : 1, sizeof(*root_edges));
    if (st == MT_OK && root_edges == NULL) {
        st = mt_fail(MT_ENOMEM, "out of memory starting backward");
    }
    for (int k = 0; st == MT_OK && k < n_roots; k++) {
        if (!mt_tensor_requires_grad(roots[k])) {
            mt_tensor *unused;
            st = root_grad(k, roots[k], NULL, &unused);
            break;
        }
        st = mt_autograd_edge_of(roots[k], &root_edges[k]);
        if (st == MT_OK) {
            st = discover(&g, root_edges[k].node);
        }
    }
    for (int k = 0; st == MT_OK && k < n_roots; k++) {
        mt_tensor *grad = NULL;
        st = root_grad(k, roots[k], grads[k], &grad);
        if (st == MT_OK) {
            mt_node *r = root_edges[k].node;
            int nr = root_edges[k].input_nr;
            st = mt_engine_accumulate(&find(&g, r)->buffer[nr], &r->out_meta[nr], grad);
        }
    }
    g.prune = n_inputs > 0;
    if (st == MT_OK && g.prune) {
        st = mark_needed(&g, targets, n_inputs);
    }
    for (int i = 0; st == MT_OK && i < g.nslots; i++) {
        if (g.slots[i].deps == 0 && (!g.prune || g.slots[i].need == NEED_YES)) {
            st = ready(&g, &g.slots[i]);
        }
    }
    current_run = &g;
    if (st == MT_OK) {
        st = run_graph(&g, retain_graph, create_graph, n_inputs, targets, captured);
    }
    current_run = outer_run;
    for (int i = 0; i < g.nslots; i++) {
        for (int k = 0; k < MT_NODE_MAX_OUT; k++) {
            mt_tensor_clear(&g.slots[i].buffer[k]);
        }
        mt_node_release(g.slots[i].node);
    }
    for (int k = 0; root_edges && k < n_roots; k++) {
        if (root_edges[k].node) {
            mt_node_release(root_edges[k].node);
        }
    }
    for (int i = 0; i < n_inputs; i++) {
        if (targets[i].node) {
            mt_node_release(targets[i].node);
        }
        if (st) {
            mt_tensor_clear(&captured[i]);
        }
    }
    free(root_edges);
    free(targets);
    free(g.slots);
    free(g.index);
    free(g.heap);
    return st;
}
