/* Where a backward run's gradients land (autograd/accumulate.c), for the engine (autograd/engine.c)
 * alone: a node's input buffers, a leaf's .grad, a retained .grad, and the hooks that see them on
 * the way. Nothing here walks the graph. */
#ifndef MT_AUTOGRAD_ENGINE_H
#define MT_AUTOGRAD_ENGINE_H

#include "autograd/autograd.h"

/* Adds grad into *slot, a node's input buffer (of this run) for an output shaped as m (takes
 * the reference to grad). */
mt_status mt_engine_accumulate(mt_tensor **slot, const mt_meta *m, mt_tensor *grad);
/* grad, node n's gradient for its input e, made to match m (takes the reference). */
mt_status mt_engine_conform(mt_tensor *grad, const mt_meta *m, const mt_node *n, int e,
                            mt_tensor **out);
/* x.grad for a tensor that retains its gradient: a copy of, or a sum with, g. */
mt_status mt_engine_retain(mt_tensor *x, mt_tensor *g);
/* The gradient hooks on n's outputs (an AccumulateGrad's: on its leaf), on buffer, the
 * gradients of its outputs in this run. */
mt_status mt_engine_grad_hooks(mt_node *n, mt_tensor **buffer, bool create_graph);
/* A view node's gradient g added into its part of the input's buffer *buf (that of its edge 0's
 * node in this run; NULL: none); false: not done. */
bool mt_engine_add_into_region(mt_node *n, mt_tensor **buf, mt_tensor *g, bool create_graph,
                               mt_status *st);
/* The hooks on node n itself: pre (gin NULL) or post. */
mt_status mt_engine_node_hooks(mt_node *n, mt_tensor **grads, mt_tensor **gin, int nin,
                               bool create_graph);
/* AccumulateGrad node n: grad (owned) into its leaf's .grad, then the hooks. */
mt_status mt_engine_accumulate_leaf(mt_node *n, mt_tensor *grad, bool create_graph);

#endif
