/* Sparse COO gradients: what embedding(sparse=True) gives its weight (PyTorch's layout=sparse_coo
 * .grad, read by optim.SparseAdam). A sparse gradient is a tensor holding its values (nnz, *dense
 * dims) and marked with its indices (mt_tensor's sparse_indices, (sparse_dim, nnz) int64); its
 * dense size is that of the variable it is the gradient of, which every holder knows (a node's
 * meta, a leaf). The engine keeps one sparse in the nodes' buffers, through gradient hooks,
 * retain_grad() and autograd.grad, through the formulas that keep it sparse in PyTorch
 * (mt_sparse_grad_through) and into a leaf's .grad; any other formula gets it dense.
 * csrc/python/ shows it as a minitorch.sparse.SparseTensor. Nothing here holds a Python
 * object. */
#ifndef MT_AUTOGRAD_SPARSE_GRAD_H
#define MT_AUTOGRAD_SPARSE_GRAD_H

#include "autograd/autograd.h"

static inline bool
mt_is_sparse_grad(const mt_tensor *t)
{
    return t->sparse_indices != NULL;
}

/* A sparse gradient with values (nnz, *dense) at indices (sparse_dim, nnz): a fresh alias of
 * values (never a view, no history) marked with indices. Both are retained. */
mt_status mt_sparse_grad_new(mt_tensor *values, mt_tensor *indices, bool coalesced,
                             mt_tensor **out);

/* g as a dense tensor of ndim, sizes (zeros, each entry added at its index: repeats sum). */
mt_status mt_sparse_grad_dense(mt_tensor *g, int ndim, const int64_t *sizes, mt_tensor **out);

/* a + b, either or both sparse, as gradients of a variable of ndim, sizes (PyTorch's
 * AccumulateGrad): sparse + sparse concatenates the entries (uncoalesced); dense + sparse is
 * dense, written into a itself when in_place and a is the dense one. *out: a new reference (a
 * itself, retained, when added in place). */
mt_status mt_sparse_grad_add(mt_tensor *a, mt_tensor *b, int ndim, const int64_t *sizes,
                             bool in_place, mt_tensor **out);

/* g with values of dtype and device (g itself, retained, when they already are). */
mt_status mt_sparse_grad_to(mt_tensor *g, mt_dtype dtype, mt_device device, mt_tensor **out);

/* *g with values of its own (a copy when their memory is shared), for a leaf's new .grad. */
mt_status mt_sparse_grad_own(mt_tensor **g);

/* *g made dense (of ndim, sizes) where it is a sparse gradient; as it is otherwise. */
mt_status mt_sparse_grad_densify(mt_tensor **g, int ndim, const int64_t *sizes);

/* *slot (a gradient buffer or a leaf's .grad, or NULL) += grad (taken), one of them sparse:
 * mt_sparse_grad_add's sum, or grad itself into an empty slot. */
mt_status mt_sparse_grad_accumulate(mt_tensor **slot, mt_tensor *grad, int ndim,
                                    const int64_t *sizes, bool in_place);

/* The gradients gi of node n's inputs from its sparse gradient g, kept sparse where PyTorch's
 * formula keeps them so (clone, alias, neg, add, sub, mul by a number or by a tensor of g's
 * size, div by a number), *handled true; else *handled false and nothing done: the formula
 * gets g dense. */
mt_status mt_sparse_grad_through(mt_node *n, mt_tensor *g, mt_tensor **gi, bool *handled);

#endif
