/* Sparse gradients as Python sees them (python/sparse_grad.c): minitorch.sparse.SparseTensor. */
#ifndef MT_PYTHON_SPARSE_GRAD_H
#define MT_PYTHON_SPARSE_GRAD_H

#include "pyminitorch.h"

/* g (a reference, stolen) as Python shows a gradient of `of`: a SparseTensor of of's size when
 * g is a sparse gradient, else the tensor itself. owner: of's wrapper when g is its .grad (a
 * sparse .grad's zero_() assigns it back), else NULL. */
PyObject *mt_py_wrap_grad(mt_tensor *g, const mt_tensor *of, PyObject *owner);

/* v, a sparse COO tensor assigned as the .grad of tensor `of`, as a sparse gradient (*out, a new
 * reference); -1 with PyTorch's error where v is not one that fits `of`. */
int mt_py_sparse_grad(PyObject *v, PyObject *of, mt_tensor **out);

#endif
