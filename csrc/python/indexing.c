/* Basic indexing: t[ints, slices, None, ...] as select / slice / unsqueeze views (PyTorch's
 * applySlicing), and t[index] = value as a view followed by copy_ or fill_. */
#include <inttypes.h>
#include <string.h>

#include "ops/ops.h"
#include "python/pyminitorch.h"

static int
is_int_index(PyObject *o)
{
    return !PyBool_Check(o) && (PyLong_Check(o) || (PyIndex_Check(o) && !mt_py_is_tensor(o)));
}

static int
is_int_tensor_scalar(PyObject *o)
{
    return mt_py_is_tensor(o) && mt_py_unwrap(o)->ndim == 0 &&
           mt_dtype_is_integral(mt_py_unwrap(o)->dtype, false);
}

static PyObject *
unsupported(PyObject *item)
{
    if (PyUnicode_Check(item)) {
        /* PyTorch reads a str as data for an index tensor and rejects its type. */
        return PyErr_Format(PyExc_TypeError, "new(): invalid data type 'str'");
    }
    if (mt_py_is_tensor(item) || PyList_Check(item) || PyBool_Check(item)) {
        return PyErr_Format(PyExc_IndexError,
                            "advanced indexing (tensors, lists and bools as indices) is not "
                            "supported yet; use ints, slices, None and ...");
    }
    return PyErr_Format(PyExc_IndexError,
                        "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                        "Variables are valid indices (got %s)",
                        Py_TYPE(item)->tp_name);
}

/* Replaces *cur by a new view (steals the old reference); NULL on failure with it released. */
static int
step(mt_tensor **cur, mt_status st, mt_tensor *next)
{
    mt_tensor_release(*cur);
    *cur = st ? NULL : next;
    if (st) {
        mt_py_raise(st);
        return -1;
    }
    return 0;
}

static mt_tensor *
index_view(PyObject *self, PyObject *index)
{
    mt_tensor *cur = mt_tensor_retain(mt_py_unwrap(self)), *next = NULL;
    int self_ndim = cur->ndim;
    PyObject *items = PyTuple_Check(index) ? Py_NewRef(index) : PyTuple_Pack(1, index);
    if (items == NULL) {
        mt_tensor_release(cur);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(items);
    int consumed = 0, ellipses = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *it = PyTuple_GET_ITEM(items, k);
        if (it == Py_Ellipsis) {
            ellipses++;
        } else if (it != Py_None) {
            consumed++;
        }
    }
    if (ellipses > 1) {
        PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis ('...')");
        goto out_fail;
    }
    if (consumed > self_ndim) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", self_ndim);
        goto out_fail;
    }
    int64_t dim = 0;  /* the dim of cur the next item applies to */
    int self_dim = 0; /* its position among the dims indexed so far, PyTorch's in messages */
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *it = PyTuple_GET_ITEM(items, k);
        mt_status st;
        if (it == Py_None) {
            st = mt_op_unsqueeze(cur, dim, &next);
            if (step(&cur, st, next) < 0) {
                goto out_fail;
            }
            dim++;
            self_dim++;
        } else if (it == Py_Ellipsis) {
            dim += self_ndim - consumed;
            self_dim += self_ndim - consumed;
        } else if (is_int_index(it) || is_int_tensor_scalar(it)) {
            PyObject *as_int = PyNumber_Index(it);
            long long i = as_int ? PyLong_AsLongLong(as_int) : -1;
            Py_XDECREF(as_int);
            if (i == -1 && PyErr_Occurred()) {
                if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
                    PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
                }
                goto out_fail;
            }
            int64_t size = cur->sizes[dim];
            if (i < -size || i >= size) {
                PyErr_Format(PyExc_IndexError,
                             "index %lld is out of bounds for dimension %d with size %" PRId64, i,
                             self_dim, size);
                goto out_fail;
            }
            st = mt_op_select(cur, dim, i, &next);
            if (step(&cur, st, next) < 0) {
                goto out_fail;
            }
            self_dim++;
        } else if (PySlice_Check(it)) {
            Py_ssize_t start, stop, stp;
            if (PySlice_Unpack(it, &start, &stop, &stp) < 0) {
                goto out_fail;
            }
            if (stp <= 0) {
                PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
                goto out_fail;
            }
            PySliceObject *sl = (PySliceObject *)it;
            bool full = sl->start == Py_None && sl->stop == Py_None && stp == 1;
            if (!full) {
                st = mt_op_slice(cur, dim, sl->start == Py_None ? INT64_MIN : start,
                                 sl->stop == Py_None ? INT64_MAX : stop, stp, &next);
                if (step(&cur, st, next) < 0) {
                    goto out_fail;
                }
            }
            dim++;
            self_dim++;
        } else {
            unsupported(it);
            goto out_fail;
        }
    }
    Py_DECREF(items);
    return cur;
out_fail:
    Py_DECREF(items);
    if (cur) {
        mt_tensor_release(cur);
    }
    return NULL;
}

PyObject *
mt_py_getitem(PyObject *self, PyObject *index)
{
    mt_tensor *v = index_view(self, index);
    if (v == NULL) {
        return NULL;
    }
    /* t[...] and t[:] return a new view, never self (as PyTorch's alias). */
    if (v == mt_py_unwrap(self)) {
        mt_tensor *alias;
        mt_status st = mt_tensor_view(v, v->ndim, v->sizes, v->strides, v->offset, &alias);
        mt_tensor_release(v);
        if (st) {
            return mt_py_raise(st);
        }
        v = alias;
    }
    return mt_py_wrap(v);
}

int
mt_py_setitem(PyObject *self, PyObject *index, PyObject *value)
{
    mt_tensor *v = index_view(self, index);
    if (v == NULL) {
        return -1;
    }
    mt_status st;
    mt_scalar s;
    int overflow = 0;
    if (PyLong_Check(value) && mt_dtype_is_integral(v->dtype, false)) {
        PyLong_AsLongLongAndOverflow(value, &overflow);
    }
    if (overflow) {
        mt_tensor_release(v);
        PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
        return -1;
    }
    int r = mt_py_is_tensor(value) ? -1 : mt_py_to_scalar(value, &s);
    if (mt_py_is_tensor(value)) {
        /* As PyTorch: leading size-1 dims of the value beyond the view's dims are dropped. */
        mt_tensor *src = mt_py_unwrap(value), stripped = *src;
        int extra = 0;
        while (extra < src->ndim - v->ndim && src->sizes[extra] == 1) {
            extra++;
        }
        if (extra) {
            stripped.ndim -= extra;
            memmove(stripped.sizes, src->sizes + extra, sizeof(int64_t) * (size_t)stripped.ndim);
            memmove(stripped.strides, src->strides + extra, sizeof(int64_t) * (size_t)stripped.ndim);
            src = &stripped;
        }
        st = mt_op_copy_(v, src);
    } else if (r == 0) {
        st = mt_op_fill_(v, s);
    } else {
        mt_tensor_release(v);
        if (r == -1) {
            PyErr_Format(PyExc_TypeError,
                         "can't assign a %s to a minitorch.%sTensor", Py_TYPE(value)->tp_name,
                         mt_dtype_scalar_name(mt_py_unwrap(self)->dtype));
        }
        return -1;
    }
    mt_tensor_release(v);
    if (st) {
        mt_py_raise(st);
        return -1;
    }
    return 0;
}
