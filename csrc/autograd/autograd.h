/* Autograd: the graph that differentiable ops record, and the engine that runs it backwards.
 *
 * The Autograd dispatch key's kernel (autograd.c) runs an op below the key with grad mode off,
 * then, when an input requires grad, records a node: the op's backward formula (a row of the
 * formula table, formulas.def), its saved tensors with their versions, a copy of its non-tensor
 * arguments, and one edge per differentiable input to the node that produced it (or to the
 * AccumulateGrad node of a leaf). backward() (engine.c) counts dependencies over the nodes
 * reachable from the roots and runs each once all its gradients have arrived. Formulas compute
 * with ops, through the dispatcher, so they run on any device. No Python here.
 *
 * Views and in-place ops (views.c), as PyTorch: a view knows its base (mt_tensor.view_base) and
 * shares its version counter. An in-place op on a view gives the base a CopySlices node (the
 * op's formula applied to the view's slice of the base's gradient); a view whose base changed
 * in place (through it, the base, or another view) gets, when its grad_fn is next read, an
 * AsStridedBackward0 node over the base's new history. */
#ifndef MT_AUTOGRAD_H
#define MT_AUTOGRAD_H

#include <pthread.h>
#include <stdatomic.h>

#include "dispatch/dispatch.h"

typedef struct mt_node mt_node;

/* Where a gradient goes: input `input_nr` of `node` (the node's output slot it fills). */
typedef struct mt_edge {
    mt_node *node; /* owned; NULL: the input needs no gradient */
    int input_nr;
} mt_edge;

/* Shape, dtype and device of a tensor, to check (and reduce, cast) gradients against. */
/* Whether tensors of dt carry gradients: the floating-point and the complex dtypes (PyTorch's
 * isDifferentiableType). */
static inline bool
mt_autograd_dtype(mt_dtype dt)
{
    return mt_dtype_is_float(dt) || mt_dtype_is_complex(dt);
}

typedef struct mt_meta {
    int ndim;
    int64_t sizes[MT_MAX_DIMS];
    mt_dtype dtype;
    mt_device device;
} mt_meta;

/* grads[k]: the gradient of output k (never NULL: zeros when nothing flowed there). Writes
 * grad_inputs[e] for each edge e (NULL: no gradient, e.g. for an input that needs none). */
typedef mt_status (*mt_backward_fn)(mt_node *n, mt_tensor *const *grads, mt_tensor **grad_inputs);

/* PyTorch names the node of one op differently by overload (pow(2, x) is PowBackward2, sum()
 * SumBackward0 but sum(dim) SumBackward1): the name for a call, or NULL for the row's. */
typedef const char *(*mt_overload_name_fn)(mt_op op, const mt_args *a);

/* What one call keeps, narrowed from the row's save_inputs and save_outputs (pow with a number
 * exponent does not keep its result, as PyTorch's pow.Tensor_Scalar). */
typedef void (*mt_saves_fn)(const mt_args *a, unsigned *save_inputs, bool *save_outputs);

/* Sizes, strides and storage offset: what AsStridedBackward0 and CopySlices keep of a tensor
 * (not the tensor, which would keep its memory alive and fail version checks). */
typedef struct mt_geometry {
    int ndim;
    int64_t sizes[MT_MAX_DIMS];
    int64_t strides[MT_MAX_DIMS];
    int64_t offset;
    mt_dtype dtype; /* the elements the geometry counts in (a complex view of real memory) */
} mt_geometry;

/* n->user of a node that moves gradients between a tensor and a strided view of its memory:
 * as_strided's (AsStridedBackward0: base is the input, view the output) and CopySlices. */
typedef struct mt_view_state {
    mt_geometry base, view;
    mt_node *fn; /* CopySlices: the node of the in-place op on the view, owned */
} mt_view_state;

/* A row of the formula table (formulas.def): what a differentiable op records. */
typedef struct mt_formula {
    const char *name;      /* PyTorch's node name: "AddmmBackward0" */
    mt_backward_fn backward;
    unsigned diff_inputs;  /* bit k: tensor slot t[k] is differentiable (gets an edge) */
    bool diff_list;        /* the Tensor[] argument's tensors are differentiable (cat, stack) */
    unsigned save_inputs;  /* bit k: keep t[k] for the backward */
    bool save_outputs;     /* keep the outputs for the backward */
    /* bit k: keep output k though it has no gradient (max_pool2d_with_indices' indices) */
    unsigned save_index_outputs;
    /* bit k: float output k gets no gradient (lu_unpack's P: PyTorch's output_differentiability) */
    unsigned nondiff_outputs;
    bool is_view; /* the output shares its input's memory */
    /* bit k: t[k] is an input PyTorch does not differentiate and refuses to see requiring grad
     * ("The function 'native' is not differentiable with respect to argument ..."), rather than
     * silently giving it no gradient; native: PyTorch's name of the function there, if not the
     * op's */
    unsigned refuse_inputs;
    const char *native;
    mt_overload_name_fn overload; /* NULL: every call's node is named `name` */
    bool own_kernel; /* the op's Autograd kernel is its own (index, index_put_: formulas_shape.c) */
    /* narrows what a call keeps for an overload that needs less: NULL, the row's masks */
    mt_saves_fn saves;
    /* the node keeps its input's and output's geometry (an mt_view_state in n->user) rather
     * than the input (as_strided) */
    bool keep_geometry;
    /* frees what the node keeps for its backward besides its saved tensors, once a backward
     * without retain_graph is done with it (CopySlices: its op's node's saved tensors) */
    void (*release)(mt_node *n);
    /* a view op's: the part of base (shaped like the input) its output views, so that the
     * engine adds a gradient straight into that part of the input's gradient, rather than into
     * a zero tensor of the input's size (each step's slice of a recurrent loop, each piece of a
     * split or unbind, would otherwise cost the whole input's size) */
    mt_status (*region)(mt_node *n, mt_tensor *base, mt_tensor **out);
    /* the op of the row (set by the table): a backward function that several rows name (the 2-D
     * and 3-D poolings') tells them apart by it */
    mt_op op;
} mt_formula;

/* A hook on a gradient, from the binding layer (Tensor.register_hook and
 * register_post_accumulate_grad_hook). A gradient hook sees the gradient of output output_nr of
 * its node (a leaf's: of the leaf) before anything uses it, and may replace *grad (releasing the
 * reference it replaces); a post-accumulate hook runs after a leaf's .grad was accumulated, with
 * the leaf in *grad, which it leaves. Hooks run in the order they were added, in grad mode only
 * with create_graph, and before retain_grad() keeps a gradient (as PyTorch's). */
typedef mt_status (*mt_hook_fn)(void *ctx, mt_tensor **grad);

typedef struct mt_hook {
    mt_hook_fn fn;
    void *ctx;
    void (*free_ctx)(void *ctx);
    int output_nr;
    bool post_accumulate;
    struct mt_hook *next;
} mt_hook;

/* Adds a hook to t's gradient (t requires grad): a leaf keeps it, a non-leaf's grad_fn keeps it
 * for t's output, so that it runs even after t is gone. ctx is freed with free_ctx when the
 * hook goes, also when this fails. */
mt_status mt_autograd_add_hook(mt_tensor *t, bool post_accumulate, mt_hook_fn fn, void *ctx,
                               void (*free_ctx)(void *ctx));
/* The hook after *link in a list that mt_autograd_add_hook may append to on another thread
 * (the engine walks it while Python code adds hooks): read under the registry's lock, which
 * is never held while a hook runs. */
mt_hook *mt_hook_next(mt_hook *const *link);

/* Hooks on a node itself (Node.register_prehook and Node.register_hook), from the binding layer:
 * pre runs before the node, with the gradients of its outputs (grad_outputs, NULL where none
 * came), post after it, with the gradients it computed for its inputs (grad_inputs, NULL for an
 * input that takes none) as well. Each may replace entries of its first array (releasing what
 * it replaces). A node has one pair; their ctx keeps the functions registered. */
typedef struct mt_node_hooks {
    mt_status (*pre)(void *ctx, mt_tensor **grad_outputs, int nout);
    mt_status (*post)(void *ctx, mt_tensor **grad_inputs, int nin, mt_tensor *const *grad_outputs,
                      int nout);
    void (*free_ctx)(void *ctx);
} mt_node_hooks;

#define MT_NODE_MAX_OUT MT_MAX_OUTPUTS

struct mt_node {
    atomic_long refcount;
    const mt_formula *formula; /* NULL for AccumulateGrad */
    const char *name;
    uint64_t sequence_nr; /* creation order: later nodes run first among the ready ones */
    mt_args args; /* the op's non-tensor arguments (tensor slots NULL) */
    char str[32]; /* a copy of args.str[0] */
    mt_tensor *saved[MT_MAX_TENSOR_ARGS]; /* owned, per save_inputs */
    long saved_version[MT_MAX_TENSOR_ARGS];
    mt_tensor *saved_out[MT_NODE_MAX_OUT]; /* owned detached aliases, per save_outputs */
    long saved_out_version[MT_NODE_MAX_OUT];
    bool has_saved;
    bool released; /* its saved tensors were freed by a backward without retain_graph */
    /* saved-tensor hooks' handles (mt_saved_hooks), owned, kept in place of saved[k] and
     * saved_out[k], which hold the unpacked tensors only while a backward runs the node */
    void *packed[MT_MAX_TENSOR_ARGS];
    void *packed_out[MT_NODE_MAX_OUT];
    bool has_packed;
    int nedges;
    mt_edge *edges; /* nedges, owned */
    /* edges (bit e) of numbers that PyTorch's overload takes as a Scalar (x.pow(2)'s 2): kept
     * for the formula, left out of next_functions */
    uint32_t scalar_edges;
    mt_meta *in_meta; /* per edge: the input's metadata */
    int nout;
    mt_meta out_meta[MT_NODE_MAX_OUT];
    bool out_diff[MT_NODE_MAX_OUT]; /* whether output k is differentiable (a float) */
    mt_tensor *retains[MT_NODE_MAX_OUT]; /* borrowed: outputs that retain_grad() */
    mt_tensor *variable; /* AccumulateGrad: the leaf, owned */
    void *user; /* a formula's own state (a Python autograd.Function's ctx), owned */
    void (*user_free)(void *user);
    void *pyobj; /* borrowed: its live Python wrapper, if any */
    mt_hook *hooks; /* owned: hooks on its outputs' gradients (a non-leaf tensor's) */
    const mt_node_hooks *node_hooks; /* hooks on the node itself, or NULL */
    void *node_hooks_ctx; /* owned (freed by node_hooks->free_ctx) */
    mt_node *next_dead; /* its link in the thread's queue of nodes to free (autograd.c) */
    /* Held by a backward run while it runs the node (its formula, the edges it hides, the saved
     * tensors it unpacks or frees; an AccumulateGrad's: the leaf's .grad) and while it reads
     * the node's edges: runs on other threads share nodes (a parameter's AccumulateGrad).
     * Recursive: a node's backward may start a run that reaches it again. A run's own state
     * (dependency counts, input buffers) is the run's, not the node's (engine.c). */
    pthread_mutex_t lock;
    /* while its formula runs: whether a gradient reached output k (else grads[k] is zeros,
     * which a formula may skip, as PyTorch's skip an undefined gradient: svd's gU) */
    bool grad_given[MT_NODE_MAX_OUT];
};

static inline void
mt_node_lock(mt_node *n)
{
    pthread_mutex_lock(&n->lock);
}

static inline void
mt_node_unlock(mt_node *n)
{
    pthread_mutex_unlock(&n->lock);
}

static inline mt_node *
mt_node_retain(mt_node *n)
{
    atomic_fetch_add_explicit(&n->refcount, 1, memory_order_relaxed);
    return n;
}
void mt_node_release(mt_node *n);
/* A node of formula f (NULL: AccumulateGrad) named name, with nedges empty edges, or NULL when
 * out of memory. */
mt_node *mt_node_new(const mt_formula *f, const char *name, int nedges);
/* m = t's shape, dtype and device */
void mt_meta_of(const mt_tensor *t, mt_meta *m);
/* The number of autograd nodes now alive (for leak tests). */
int64_t mt_live_nodes(void);

/* Registers the Autograd kernel of every op with a row in formulas.def (and a refusing one for
 * the differentiable ops without); called once at import. */
void mt_autograd_init(void);
/* The formula op records (NULL: none; the refusing "NotImplemented" one for a differentiable
 * op without a formula). */
const mt_formula *mt_autograd_formula(mt_op op);
/* The Autograd kernels of the ops whose rows say .own_kernel (formulas_shape.c). */
void mt_autograd_register_own_kernels(void);
/* The Autograd key's common kernel of op (its node's inputs, the op below, its outputs), for
 * an own kernel (.own_kernel) that records op as its row says in some calls. */
mt_status mt_autograd_record_call(mt_op op, mt_args *a);
/* The node of a call of op whose result a->out[0] is made already (below the Autograd key):
 * what the common kernel records around the op, without running it; nothing unless an input
 * requires grad. */
mt_status mt_autograd_record_made(mt_op op, mt_args *a);

/* The node a gradient for t flows into: its grad_fn, or its leaf's AccumulateGrad (made on
 * first use, then shared). NULL edge when t does not require grad. New reference in e->node. */
mt_status mt_autograd_edge_of(mt_tensor *t, mt_edge *e);
/* t's grad_fn (borrowed; NULL for a leaf): for a view whose base was changed in place since its
 * grad_fn was set, a new AsStridedBackward0 over the base's history, or PyTorch's error for a
 * view that may not be rebased (made in no_grad mode, by unbind/split/chunk, by a Function). */
mt_status mt_autograd_grad_fn(mt_tensor *t, mt_node **out);
/* Saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks), from the binding layer. While
 * hooks are active on a thread (mt_saved_hooks_set_active), each tensor a node recorded there
 * saves goes through pack (with grad mode off; a saved input as a detached alias), and the node
 * keeps pack's handle instead of the tensor. Each run of the node's formula gets the tensor
 * back through unpack (a new reference), kept for that run only; drop frees a handle (with the
 * node, or after a backward without retain_graph). As PyTorch's SavedVariable with hooks. */
typedef struct mt_saved_hooks {
    mt_status (*pack)(mt_tensor *t, void **handle);
    mt_status (*unpack)(void *handle, mt_tensor **out);
    void (*drop)(void *handle);
} mt_saved_hooks;
void mt_saved_hooks_install(const mt_saved_hooks *hooks);
void mt_saved_hooks_set_active(bool active);
/* The engine's, around a formula's run: n's packed tensors unpacked into n->saved and
 * n->saved_out, and those released again. */
mt_status mt_saved_unpack(mt_node *n);
void mt_saved_unpacked_clear(mt_node *n);
/* For recording (autograd.c; saved.c holds them): whether the hooks are on for this thread; n's
 * packed handles dropped; *slot, a tensor n just saved, through the pack hook when they are on. */
extern _Thread_local bool mt_saved_hooks_active;
void mt_saved_drop_packed(mt_node *n);
mt_status mt_saved_pack(mt_node *n, mt_tensor **slot, void **handle);

/* Frees n's saved tensors (after a backward without retain_graph): a later backward through n
 * fails with PyTorch's 'backward through the graph a second time'. */
void mt_node_release_saved(mt_node *n);

/* ---- views (views.c; mt_autograd_as_view and mt_autograd_multi_output_views: tensor.h) ---- */

/* The Autograd kernel of unbind, split and split_with_sizes: the op runs below Autograd whole
 * (as aten.unbind.int for __torch_dispatch__), then each piece gets its view op's node. */
mt_status mt_autograd_pieces(mt_args *a, mt_op op);

/* Before an in-place op on self with an input that requires grad: PyTorch's errors for a leaf
 * that requires grad, a view of one, and a view that may not be modified in place. */
mt_status mt_autograd_check_inplace(mt_tensor *self);
/* n (whose edge 0 is self's) recorded an in-place op on self: self's history moves to n or,
 * for a view, its base's to a CopySlices node around n and the view's to a slice of that. */
mt_status mt_autograd_rebase_history(mt_tensor *self, mt_node *n);
/* Sets t's grad_fn to output nr of n (a new reference), moving retain_grad() to it. */
void mt_autograd_set_grad_fn(mt_tensor *t, mt_node *n, int nr);
/* The geometry of t. */
void mt_geometry_of(const mt_tensor *t, mt_geometry *g);

/* MT_OK if t is still at version `saved` (that of its storage), else PyTorch's 'modified by an
 * inplace operation' error. */
mt_status mt_autograd_check_version(const mt_tensor *t, long saved);
/* A saved tensor of node n, checked against its version at save time. Borrowed. */
mt_status mt_saved_input(mt_node *n, int slot, mt_tensor **out);
mt_status mt_saved_output(mt_node *n, int k, mt_tensor **out);
/* What n keeps of input slot k (output k when output), as a new reference through the unpack
 * hook where a pack hook took it; *out NULL when nothing is kept there. The released-graph and
 * version errors as for a backward. For grad_fn._saved_<name>. */
mt_status mt_saved_peek(mt_node *n, bool output, int k, mt_tensor **out);
/* grad_fn._raw_saved_<name>.register_hooks(pack, unpack): the tensor n keeps in input slot k
 * (output k when output) goes through pack (grad mode off) and n keeps pack's handle in its
 * place, unpacked and dropped by the installed mt_saved_hooks as a handle of the thread-wide
 * hooks is. PyTorch's errors for a freed graph, hooks already set, and no tensor kept. */
typedef mt_status (*mt_saved_pack_fn)(mt_tensor *t, void **handle, void *ctx);
mt_status mt_saved_set_hooks(mt_node *n, bool output, int k, mt_saved_pack_fn pack, void *ctx);
/* Checks every tensor node n saved (the engine, before its backward function runs): then the
 * formula reads n->saved[k] and n->saved_out[k] as they are. */
mt_status mt_saved_check(mt_node *n);

/* A node of formula f named f->name with an edge (and in_meta) per input; NULL inputs get
 * none. For an own kernel: made before its op runs, as autograd.c's are. */
mt_status mt_autograd_node(const mt_formula *f, int nin, mt_tensor *const *inputs, mt_node **out);
/* Makes each float tensor of outputs[0..nout) output k of n (fresh results, not in place). */
void mt_autograd_set_outputs(mt_node *n, int nout, mt_tensor *const *outputs);

/* A node for a Python autograd.Function (formula f, with its own state `user`), named name
 * (which must live as long as user): edges to the inputs that require grad, and each float
 * output made its result. dirty (NULL: none) marks the
 * outputs that are inputs the Function changed in place (ctx.mark_dirty): checked as an
 * in-place op's self, their version bumped, a view's base given the new history (CopySlices). */
mt_status mt_autograd_record_custom(const mt_formula *f, const char *name, void *user,
                                    void (*user_free)(void *), int nin, mt_tensor *const *inputs,
                                    int nout, mt_tensor *const *outputs, const bool *dirty);

/* Anomaly mode, as torch.autograd.set_detect_anomaly: when on and check_nan, a node whose
 * backward returns a NaN fails the backward with "Function 'XBackward0' returned nan values in
 * its 0th output." Process-wide, as PyTorch's. */
void mt_autograd_set_anomaly(bool enabled, bool check_nan);
bool mt_autograd_anomaly_enabled(void);
bool mt_autograd_anomaly_check_nan(void);

/* Runs the graph backwards from roots[k] with grads[k] (NULL: ones, for a one-element root).
 * With inputs (n_inputs > 0) it returns their gradients in captured[] (new references, NULL
 * where none flowed) instead of accumulating into leaves' .grad (autograd.grad). */
mt_status mt_backward(int n_roots, mt_tensor *const *roots, mt_tensor *const *grads,
                      bool retain_graph, bool create_graph, int n_inputs, mt_tensor *const *inputs,
                      mt_tensor **captured);

/* The backward run going on in this thread (the innermost): its id, 0 when none (PyTorch's
 * _current_graph_task_id), and whether it runs node n: n was reached from its roots and, with
 * inputs given, leads to one of them (_will_engine_execute_node); -1 when none runs. */
uint64_t mt_autograd_current_run(void);
int mt_autograd_will_execute(const mt_node *n);

/* ---- helpers for formulas: one op each, through the dispatcher ---- */

/* *out = x * s (s a number) */
mt_status mt_ag_scale(mt_tensor *x, double s, mt_tensor **out);
/* *out = op(g, conj(x)) for op mul or div (x itself when real): PyTorch's gradients of complex
 * functions take the conjugate of the derivative (the conjugate Wirtinger convention) */
mt_status mt_ag_by_conj(mt_op op, mt_tensor *g, mt_tensor *x, mt_tensor **out);
/* *out = x summed to the shape of m (the reduction of a broadcast). */
mt_status mt_ag_sum_to(mt_tensor *x, const mt_meta *m, mt_tensor **out);
/* *out = x expanded (a view) to the shape of m. */
mt_status mt_ag_expand_to(mt_tensor *x, const mt_meta *m, mt_tensor **out);
/* *out = zeros of m's shape and dtype */
mt_status mt_ag_zeros(const mt_meta *m, mt_tensor **out);

#endif
