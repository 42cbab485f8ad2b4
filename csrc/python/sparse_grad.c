/* Sparse gradients (autograd/sparse_grad.h) as Python sees them: a minitorch.sparse.SparseTensor
 * whose values share the gradient's memory (so an in-place change of them, clip_grad_norm_'s
 * mul_, reaches the .grad) and whose indices are its sparse_indices, and back, for .grad and
 * autograd.grad. minitorch/sparse/__init__.py builds and reads the Python objects. */
#include "python/sparse_grad.h" /* Python.h first */

#include "autograd/sparse_grad.h"

/* minitorch.sparse.<name>(*args) */
static PyObject *
call_sparse(const char *name, PyObject *args)
{
    PyObject *mod = args ? PyImport_ImportModule("minitorch.sparse") : NULL;
    PyObject *fn = mod ? PyObject_GetAttrString(mod, name) : NULL;
    PyObject *res = fn ? PyObject_Call(fn, args, NULL) : NULL;
    Py_XDECREF(fn);
    Py_XDECREF(mod);
    Py_XDECREF(args);
    return res;
}

PyObject *
mt_py_wrap_grad(mt_tensor *g, const mt_tensor *of, PyObject *owner)
{
    if (!mt_is_sparse_grad(g)) {
        return mt_py_wrap(g);
    }
    /* the values as an unmarked alias: the mark stays inside the engine and .grad */
    mt_tensor *v = NULL;
    mt_status st = mt_tensor_view(g, g->ndim, g->sizes, g->strides, g->offset, &v);
    PyObject *indices = st ? NULL : mt_py_wrap(mt_tensor_retain(g->sparse_indices));
    PyObject *coalesced = PyBool_FromLong(g->sparse_coalesced);
    mt_tensor_release(g);
    if (st) {
        Py_DECREF(coalesced);
        return mt_py_raise(st);
    }
    PyObject *size = indices ? mt_py_size_obj(of->ndim, of->sizes) : NULL;
    PyObject *values = size ? mt_py_wrap(v) : (mt_tensor_release(v), NULL);
    PyObject *args = values ? PyTuple_Pack(5, values, indices, size, coalesced,
                                           owner ? owner : Py_None)
                            : NULL;
    Py_XDECREF(values);
    Py_XDECREF(indices);
    Py_XDECREF(size);
    Py_DECREF(coalesced);
    return call_sparse("_from_grad", args);
}

int
mt_py_sparse_grad(PyObject *v, PyObject *of, mt_tensor **out)
{
    PyObject *parts = call_sparse("_grad_parts", PyTuple_Pack(2, of, v));
    PyObject *values, *indices;
    int coalesced, res = -1;
    if (parts && PyArg_ParseTuple(parts, "OOp", &values, &indices, &coalesced)) {
        if (!mt_py_is_tensor(values) || !mt_py_is_tensor(indices)) {
            PyErr_SetString(PyExc_TypeError, "a sparse gradient's parts must be tensors");
        } else {
            mt_status st = mt_sparse_grad_new(mt_py_unwrap(values), mt_py_unwrap(indices),
                                              coalesced, out);
            res = st ? (mt_py_raise(st), -1) : 0;
        }
    }
    Py_XDECREF(parts);
    return res;
}
