/* Where a backward run's gradients land (autograd/accumulate.c), for the engine (autograd/engine.c)
 * alone: a node's input buffers, a leaf's .grad, a retained .grad, and the hooks that see them on
 * the way. Nothing here walks the graph. */
#ifndef MT_AUTOGRAD_ENGINE_H
#define MT_AUTOGRAD_ENGINE_H

#include "autograd/autograd.h"

/* Adds grad into n's buffer for output nr (takes the reference to grad). */
mt_status mt_engine_accumulate(mt_node *n, int nr, mt_tensor *grad);
/* grad, node n's gradient for its input e, made to match m (takes the reference). */
mt_status mt_engine_conform(mt_tensor *grad, const mt_meta *m, const mt_node *n, int e,
                            mt_tensor **out);
/* x.grad for a tensor that retains its gradient: a copy of, or a sum with, g. */
mt_status mt_engine_retain(mt_tensor *x, mt_tensor *g);
/* The gradient hooks on n's outputs (an AccumulateGrad's: on its leaf). */
mt_status mt_engine_grad_hooks(mt_node *n, bool create_graph);
/* A view node's gradient g added into its part of the input's buffer; false: not done. */
bool mt_engine_add_into_region(mt_node *n, mt_tensor *g, bool create_graph, mt_status *st);
/* The hooks on node n itself: pre (gin NULL) or post. */
mt_status mt_engine_node_hooks(mt_node *n, mt_tensor **grads, mt_tensor **gin, int nin,
                               bool create_graph);
/* AccumulateGrad node n: grad (owned) into its leaf's .grad, then the hooks. */
mt_status mt_engine_accumulate_leaf(mt_node *n, mt_tensor *grad, bool create_graph);

#endif
