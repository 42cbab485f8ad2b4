/* Indexing: t[index] and t[index] = value, as PyTorch's applySlicing.
 *
 * Basic items (ints, slices, None, ...) become views: select, slice, unsqueeze. Advanced items
 * (integer and bool tensors, lists, NumPy arrays, Python bools) are collected, one entry per dim
 * of that view they apply to, and handed to the index op (reading) or index_put_ (assignment),
 * whose loops are in csrc/cpu/index.c. Without advanced items, reading returns the view and
 * assignment copies or fills into it. */
#include <inttypes.h>
#include <string.h>

#include "ops/ops.h"
#include "python/pyminitorch.h"

/* The view after the basic items and the advanced items that remain to apply to it. */
typedef struct indexing {
    mt_tensor *view; /* owned */
    int n;
    mt_tensor *idx[MT_MAX_DIMS]; /* per dim of view from the left: an index (owned) or NULL */
    bool advanced;               /* whether any idx is set */
} indexing;

static void
indexing_clear(indexing *ix)
{
    mt_tensor_clear(&ix->view);
    for (int k = 0; k < ix->n; k++) {
        mt_tensor_clear(&ix->idx[k]);
    }
}

static int
is_int_index(PyObject *o)
{
    if (PyBool_Check(o) || mt_py_is_tensor(o) || !PyIndex_Check(o)) {
        return 0;
    }
    /* A NumPy array has __index__, but is an integer only without dims (np.int64 has none). */
    PyObject *nd = PyLong_Check(o) ? NULL : PyObject_GetAttrString(o, "ndim");
    long ndim = nd ? PyLong_AsLong(nd) : 0;
    Py_XDECREF(nd);
    PyErr_Clear();
    return ndim == 0;
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
    return PyErr_Format(PyExc_IndexError,
                        "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                        "Variables are valid indices (got %s)",
                        Py_TYPE(item)->tp_name);
}

/* PyTorch's treatSequenceAsTuple: a list (or other sequence, such as a range) holding a sequence,
 * slice, tensor, None or ... is read as a tuple of items (x[[0, slice(None)]] is x[0, :]), any
 * other sequence as one index. */
static bool
list_is_tuple(PyObject *index)
{
    if (PyTuple_Check(index) || mt_py_is_tensor(index) || PyUnicode_Check(index) ||
        !PySequence_Check(index) || PyObject_HasAttrString(index, "__array_interface__")) {
        return false;
    }
    PyObject *seq = PySequence_Fast(index, "");
    if (seq == NULL) {
        PyErr_Clear();
        return false;
    }
    bool res = false;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t k = 0; k < n && n < 32 && !res; k++) {
        PyObject *it = PySequence_Fast_GET_ITEM(seq, k);
        res = mt_py_is_tensor(it) || PySequence_Check(it) || PySlice_Check(it) ||
              it == Py_Ellipsis || it == Py_None;
    }
    Py_DECREF(seq);
    return res;
}

/* A NumPy array of a dtype minitorch lacks, as one it has: uint8 is a mask (PyTorch's byte
 * indexing, with its deprecation warning), other integer and float dtypes index as int64.
 * A new reference; item itself when its dtype is fine. */
static PyObject *
index_array(PyObject *item)
{
    PyObject *dt = PyObject_GetAttrString(item, "dtype");
    PyObject *kind = dt ? PyObject_GetAttrString(dt, "kind") : NULL;
    PyObject *size = dt ? PyObject_GetAttrString(dt, "itemsize") : NULL;
    const char *k = kind ? PyUnicode_AsUTF8(kind) : NULL;
    long n = size ? PyLong_AsLong(size) : -1;
    PyObject *res = NULL;
    if (k == NULL || n < 0) {
        goto out;
    }
    const char *as = NULL;
    if (k[0] == 'u' && n == 1) {
        if (PyErr_WarnEx(PyExc_UserWarning,
                         "indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                         "torch.bool instead.",
                         1) < 0) {
            goto out;
        }
        as = "bool";
    } else if ((k[0] == 'u' || (k[0] == 'i' && n < 4)) || (k[0] == 'f' && n != 4 && n != 8)) {
        as = "int64";
    }
    res = as ? PyObject_CallMethod(item, "astype", "s", as) : Py_NewRef(item);
out:
    Py_XDECREF(size);
    Py_XDECREF(kind);
    Py_XDECREF(dt);
    return res;
}

/* A uint8 index tensor as the bool mask PyTorch reads it as, with its deprecation warning; NULL
 * with an exception set. */
static mt_tensor *
byte_mask(mt_tensor *t)
{
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                     "torch.bool instead.",
                     1) < 0) {
        return NULL;
    }
    mt_tensor *mask = NULL;
    mt_status st = mt_op__to_copy(t, MT_BOOL, mt_tensor_device(t), &mask);
    return st ? mt_py_raise(st), NULL : mask;
}

/* A sequence (a list, tuple, range, NumPy array) as an index tensor: bool stays bool, anything
 * else becomes int64 (PyTorch's indexing_tensor_from_data). NULL with an exception, or with none
 * if item is no sequence at all (a NumPy bool scalar is none, as in PyTorch). */
static mt_tensor *
data_index(PyObject *item)
{
    bool array = PyObject_HasAttrString(item, "__array_interface__");
    if (!PySequence_Check(item) || (array && !PyObject_HasAttrString(item, "ndim"))) {
        return NULL;
    }
    /* tensor() reads any other sequence as its items, and refuses a str as PyTorch does */
    PyObject *data = array ? index_array(item) : Py_NewRef(item);
    PyObject *args = data ? PyTuple_Pack(1, data) : NULL;
    /* on the CPU whatever the default device (index and index_put_ take CPU indices) */
    PyObject *kw = args ? Py_BuildValue("{s:s}", "device", "cpu") : NULL;
    PyObject *obj = kw ? mt_py_tensor_new(NULL, args, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(args);
    Py_XDECREF(data);
    if (obj == NULL) {
        return NULL;
    }
    mt_tensor *t = mt_tensor_retain(mt_py_unwrap(obj)), *cast = NULL;
    Py_DECREF(obj);
    if (t->dtype == MT_BOOL || t->dtype == MT_INT64) {
        return t;
    }
    mt_status st = mt_op__to_copy(t, MT_INT64, MT_DEVICE_CPU, &cast);
    mt_tensor_release(t);
    return st ? mt_py_raise(st), NULL : cast;
}

/* The one-element (true) or empty (false) int64 index a Python bool stands for, on a new dim. */
static mt_tensor *
bool_index(bool on)
{
    mt_tensor *t = NULL;
    int64_t n = on;
    mt_status st = mt_tensor_empty(1, &n, MT_INT64, MT_DEVICE_CPU, &t);
    if (st) {
        mt_py_raise(st);
        return NULL;
    }
    if (on) {
        *(int64_t *)mt_tensor_data(t) = 0;
    }
    return t;
}

/* Replaces ix->view by a new view (steals the old reference); -1 on failure. */
static int
step(indexing *ix, mt_status st, mt_tensor *next)
{
    mt_tensor_release(ix->view);
    ix->view = st ? NULL : next;
    if (st) {
        mt_py_raise(st);
        return -1;
    }
    return 0;
}

static int
record(indexing *ix, mt_tensor *index)
{
    if (ix->n == MT_MAX_DIMS) {
        mt_tensor_release(index);
        PyErr_Format(PyExc_IndexError, "only tensors with up to %d dims are supported",
                     MT_MAX_DIMS);
        return -1;
    }
    ix->idx[ix->n++] = index;
    ix->advanced |= index != NULL;
    return 0;
}

/* t[int]: a select, with PyTorch's messages. */
static int
apply_int(indexing *ix, PyObject *it, int64_t dim, int self_dim)
{
    PyObject *as_int = PyNumber_Index(it);
    long long i = as_int ? PyLong_AsLongLong(as_int) : -1;
    Py_XDECREF(as_int);
    if (i == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
        }
        return -1;
    }
    int64_t size = ix->view->sizes[dim];
    if (i < -size || i >= size) {
        PyErr_Format(PyExc_IndexError,
                     "index %lld is out of bounds for dimension %d with size %" PRId64, i, self_dim,
                     size);
        return -1;
    }
    mt_tensor *next = NULL;
    mt_status st = mt_op_select(ix->view, dim, i, &next);
    return step(ix, st, next);
}

/* A slice over the whole dim with step 1 is skipped (the view stays as it is) unless always. */
static int
apply_slice(indexing *ix, PyObject *it, int64_t dim, bool always)
{
    Py_ssize_t start, stop, stp;
    if (PySlice_Unpack(it, &start, &stop, &stp) < 0) {
        return -1;
    }
    if (stp <= 0) {
        PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
        return -1;
    }
    PySliceObject *sl = (PySliceObject *)it;
    if (!always && sl->start == Py_None && sl->stop == Py_None && stp == 1) {
        return 0;
    }
    mt_tensor *next = NULL;
    mt_status st = mt_op_slice(ix->view, dim, sl->start == Py_None ? MT_INT_NONE : start,
                               sl->stop == Py_None ? MT_INT_NONE : stop, stp, &next);
    return step(ix, st, next);
}

/* items[k] as an index tensor in conv[k] (owned) when it is data (a list, an array); the number
 * of dims of self the items use up, or -1 with an exception. */
static int
convert_items(PyObject *items, mt_tensor **conv)
{
    int consumed = 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(items); k++) {
        PyObject *it = PyTuple_GET_ITEM(items, k);
        mt_tensor *t = mt_py_is_tensor(it) ? mt_py_unwrap(it) : NULL;
        if (it == Py_None || it == Py_Ellipsis || PyBool_Check(it)) {
            continue;
        }
        if (is_int_index(it) || is_int_tensor_scalar(it) || PySlice_Check(it)) {
            consumed++;
            continue;
        }
        if (t == NULL) {
            t = conv[k] = data_index(it);
            if (t == NULL) {
                if (!PyErr_Occurred()) {
                    unsupported(it);
                }
                return -1;
            }
        }
        consumed += t->dtype == MT_BOOL ? t->ndim : 1;
    }
    return consumed;
}

/* Applies the basic items of index to self and collects the advanced ones into ix. */
static int
apply_index(PyObject *self, PyObject *index, indexing *ix)
{
    *ix = (indexing){mt_tensor_retain(mt_py_unwrap(self)), 0, {NULL}, false};
    if (PySlice_Check(index)) {
        /* PyTorch's path for a lone slice: always the slice op, even over the whole dim
         * (SliceBackward0), with the op's own error for a 0-dim tensor. */
        if (apply_slice(ix, index, 0, true) < 0 || record(ix, NULL) < 0) {
            indexing_clear(ix);
            return -1;
        }
        return 0;
    }
    int self_ndim = ix->view->ndim, r = -1;
    mt_tensor *conv[MT_MAX_DIMS * 2] = {NULL};
    PyObject *items = PyTuple_Check(index)   ? Py_NewRef(index)
                      : list_is_tuple(index) ? PySequence_Tuple(index)
                                             : PyTuple_Pack(1, index);
    if (items == NULL) {
        goto out;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(items), ellipses = 0;
    if (n > MT_MAX_DIMS * 2) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", self_ndim);
        goto out;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        ellipses += PyTuple_GET_ITEM(items, k) == Py_Ellipsis;
    }
    if (ellipses > 1) {
        PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis ('...')");
        goto out;
    }
    int consumed = convert_items(items, conv);
    if (consumed < 0) {
        goto out;
    }
    if (consumed > self_ndim) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", self_ndim);
        goto out;
    }
    int64_t dim = 0;  /* the dim of the view the next item applies to */
    int self_dim = 0; /* its position among the dims indexed so far, PyTorch's in messages */
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *it = PyTuple_GET_ITEM(items, k);
        mt_tensor *t = conv[k] ? conv[k] : mt_py_is_tensor(it) ? mt_py_unwrap(it) : NULL;
        mt_tensor *next = NULL;
        int rc = 0;
        if (it == Py_Ellipsis) {
            for (int j = 0; j < self_ndim - consumed && rc == 0; j++) {
                rc = record(ix, NULL);
            }
            dim += self_ndim - consumed;
            self_dim += self_ndim - consumed;
        } else if (is_int_index(it) || is_int_tensor_scalar(it)) {
            rc = apply_int(ix, it, dim, self_dim++);
        } else if (PySlice_Check(it)) {
            rc = apply_slice(ix, it, dim++, false);
            rc = rc ? rc : record(ix, NULL);
            self_dim++;
        } else if (it == Py_None || PyBool_Check(it) || (t->ndim == 0 && t->dtype == MT_BOOL)) {
            /* a new dim of size 1, which a bool then keeps (true) or empties (false) */
            mt_status st = mt_op_unsqueeze(ix->view, dim++, &next);
            rc = step(ix, st, next);
            mt_tensor *b = NULL;
            if (rc == 0 && it != Py_None) {
                /* item(): a device tensor's byte is not host memory, and any nonzero byte is true */
                mt_scalar v = mt_scalar_bool(it == Py_True);
                mt_status ist = PyBool_Check(it) ? MT_OK : mt_tensor_item(t, &v);
                if (ist) {
                    mt_py_raise(ist);
                    rc = -1;
                } else {
                    rc = (b = bool_index(mt_scalar_to_int(v) != 0)) ? 0 : -1;
                }
            }
            rc = rc ? rc : record(ix, b);
            self_dim++;
        } else {
            int used = t->dtype == MT_BOOL || t->dtype == MT_UINT8 ? t->ndim : 1;
            mt_tensor *index = t->dtype == MT_UINT8 ? byte_mask(t) : mt_tensor_retain(t);
            rc = index ? record(ix, index) : -1;
            dim += used;
            self_dim += used;
        }
        if (rc < 0) {
            goto out;
        }
    }
    r = 0;
out:
    Py_XDECREF(items);
    for (int k = 0; k < MT_MAX_DIMS * 2; k++) {
        mt_tensor_clear(&conv[k]);
    }
    if (r < 0) {
        indexing_clear(ix);
    }
    return r;
}

PyObject *
mt_py_getitem(PyObject *self, PyObject *index)
{
    if (mt_py_tf_wanted(self, &index, 1)) {
        return mt_py_tf_call("__getitem__", MT_TF_METHOD, self, &index, 1, NULL);
    }
    indexing ix;
    if (apply_index(self, index, &ix) < 0) {
        return NULL;
    }
    mt_tensor *res = NULL;
    mt_status st = MT_OK;
    if (ix.advanced) {
        st = mt_op_index(ix.view, ix.n, ix.idx, &res);
    } else if (ix.view == mt_py_unwrap(self)) {
        /* t[...], t[()] and t[:, :] return a new view, never self: the alias op, so that
         * under autograd the view is linked to self (AliasBackward0, as PyTorch's). */
        st = mt_op_alias(ix.view, &res);
    } else {
        res = mt_tensor_retain(ix.view);
    }
    indexing_clear(&ix);
    return st ? mt_py_raise(st) : mt_py_wrap(res);
}

/* A tensor value without its leading size-1 dims beyond ndim, which PyTorch drops. Through
 * the view op (or the value itself), so that a value that requires grad gets its gradient. */
static mt_tensor *
strip_value(mt_tensor *src, int ndim)
{
    mt_tensor *t = NULL;
    int extra = 0;
    while (extra < src->ndim - ndim && src->sizes[extra] == 1) {
        extra++;
    }
    if (extra == 0) {
        return mt_tensor_retain(src);
    }
    mt_status st = mt_op_view(src, src->ndim - extra, src->sizes + extra, &t);
    return st ? mt_py_raise(st), NULL : t;
}

/* A Python number to write into a tensor of dtype dt; -1 with an exception. An int beyond
 * int64 is refused for every dtype, as PyTorch unpacks it as a long long whatever the tensor's. */
static int
number_value(PyObject *value, mt_dtype dt, mt_scalar *s)
{
    int overflow = 0;
    if (PyLong_Check(value)) {
        PyLong_AsLongLongAndOverflow(value, &overflow);
    }
    if (overflow) {
        PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
        return -1;
    }
    /* As PyTorch's valueToTensor: ints (NumPy's too), bools, floats (np.float64 is one) and
     * complex numbers (np.complex128 is one), not other number types (np.float32, np.bool_) */
    if (PyComplex_Check(value)) {
        Py_complex c = PyComplex_AsCComplex(value);
        *s = mt_scalar_complex(c.real, c.imag);
        return c.real == -1.0 && PyErr_Occurred() ? -1 : 0;
    }
    bool number = PyLong_Check(value) || PyFloat_Check(value) || PyIndex_Check(value);
    if (!number || mt_py_to_scalar(value, s) < 0) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "can't assign a %s to a minitorch.%sTensor",
                         Py_TYPE(value)->tp_name, mt_dtype_scalar_name(dt));
        }
        return -1;
    }
    return 0;
}

/* x[i] = number converts the number checked into x's dtype, but into float16, bfloat16 and
 * float8 unchecked (70000 is inf in float16), as PyTorch's setitem does. */
static mt_status
setitem_number_fits(mt_scalar s, mt_dtype dt)
{
    return mt_dtype_is_float(dt) && mt_dtype_is_small(dt) ? MT_OK : mt_check_scalar_fits(s, dt);
}

int
mt_py_setitem(PyObject *self, PyObject *index, PyObject *value)
{
    indexing ix;
    if (apply_index(self, index, &ix) < 0) {
        return -1;
    }
    mt_tensor *v = NULL;
    mt_status st = MT_OK;
    mt_scalar s;
    if (mt_py_is_tensor(value)) {
        if ((v = strip_value(mt_py_unwrap(value), ix.view->ndim)) == NULL) {
            goto out_fail;
        }
        st = ix.advanced ? mt_op_index_put_(ix.view, ix.n, ix.idx, v, false, NULL)
                         : mt_op_copy_(ix.view, v, NULL);
    } else if (number_value(value, mt_py_unwrap(self)->dtype, &s) < 0) {
        goto out_fail;
    } else if ((st = setitem_number_fits(s, ix.view->dtype)) != MT_OK) {
        /* raised below */
    } else if (!ix.advanced) {
        /* a 0-dim tensor (fill_ would check a wrapped number into float16 too); a complex
         * number as complex128 */
        if ((st = mt_tensor_scalar(s, s.is_complex ? MT_COMPLEX128 : s.type, &v)) == MT_OK) {
            v->is_wrapped_number = false;
            st = mt_op_fill_(ix.view, v, NULL);
        }
    } else if ((st = mt_tensor_scalar(s, ix.view->dtype, &v)) == MT_OK) {
        st = mt_op_index_put_(ix.view, ix.n, ix.idx, v, false, NULL);
    }
    if (st) {
        mt_py_raise(st);
        goto out_fail;
    }
    mt_tensor_clear(&v);
    indexing_clear(&ix);
    return 0;
out_fail:
    mt_tensor_clear(&v);
    indexing_clear(&ix);
    return -1;
}
