/* minitorch._C.TensorBase: the C type under minitorch.Tensor.
 *
 * It holds one reference to an mt_tensor; the mt_tensor points back at its live wrapper so an
 * op that returns its input (contiguous(), an in-place op) returns the same Python object.
 * The hot paths (operators, indexing, shape queries) are slots here; conveniences live in
 * minitorch/_tensor.py. */
#include <stdatomic.h>
#include <string.h>

#include "autograd/autograd.h"
#include "ops/ops.h"
#include "python/pyminitorch.h"
#include "python/sparse_grad.h"

PyTypeObject *mt_py_tensor_class = NULL;

PyObject *
mt_py_wrap_as(PyTypeObject *tp, mt_tensor *t)
{
    mt_py_tensor *o = (mt_py_tensor *)tp->tp_alloc(tp, 0);
    if (o == NULL) {
        mt_tensor_release(t);
        return NULL;
    }
    o->t = t;
    t->pyobj = o;
    return (PyObject *)o;
}

PyObject *
mt_py_wrap(mt_tensor *t)
{
    if (t->pyobj) {
        PyObject *o = t->pyobj;
        if (t->owns_pyobj) { /* preserved (python_dispatch.c): o holds t again, the caller o */
            t->owns_pyobj = false;
            return o;
        }
        Py_INCREF(o);
        mt_tensor_release(t);
        return o;
    }
    return mt_py_wrap_as(mt_py_tensor_class ? mt_py_tensor_class : &mt_py_TensorBase_Type, t);
}

static void
tensor_dealloc(PyObject *self)
{
    mt_py_tensor *o = (mt_py_tensor *)self;
    if (o->t) {
        o->t->pyobj = NULL;
        mt_tensor_release(o->t);
        o->t = NULL;
    }
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)type;
    (void)args;
    (void)kwargs;
    PyErr_SetString(PyExc_TypeError,
                    "minitorch.Tensor cannot be constructed directly; use minitorch.tensor(data), "
                    "minitorch.empty(size) or another factory");
    return NULL;
}

/* ---- geometry ---- */

static int
dim_arg(PyObject *self, PyObject *arg, int *d)
{
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(arg, &overflow);
    if (overflow) {
        /* PyTorch's error, not Python's OverflowError */
        PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
        return -1;
    }
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (mt_py_unwrap(self)->ndim == 0) {
        PyErr_Format(PyExc_IndexError, "Dimension specified as %lld but tensor has no dimensions",
                     v);
        return -1;
    }
    mt_status st = mt_wrap_dim(v, mt_py_unwrap(self)->ndim, d);
    if (st) {
        mt_py_raise(st);
        return -1;
    }
    return 0;
}

static PyObject *
tensor_size(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw > 1 ||
        (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "dim") != 0)) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 1 argument (dim)", "size");
        return NULL;
    }
    if (mt_py_tracer_size_read() < 0) {
        return NULL;
    }
    PyObject *dim = nargs > 0 ? args[0] : NULL;
    if (kwnames && PyTuple_GET_SIZE(kwnames) == 1 && nargs == 0) {
        dim = args[0];
    }
    if (dim == NULL || dim == Py_None) {
        return mt_py_size_obj(mt_py_unwrap(self)->ndim, mt_py_unwrap(self)->sizes);
    }
    int d;
    if (dim_arg(self, dim, &d) < 0) {
        return NULL;
    }
    return PyLong_FromLongLong(mt_py_unwrap(self)->sizes[d]);
}

/* A tuple of n Python ints. */
static PyObject *
ints_tuple(int n, const int64_t *v)
{
    PyObject *res = PyTuple_New(n);
    for (int k = 0; res && k < n; k++) {
        PyObject *i = PyLong_FromLongLong(v[k]);
        if (i == NULL) {
            Py_CLEAR(res);
            break;
        }
        PyTuple_SET_ITEM(res, k, i);
    }
    return res;
}

static PyObject *
tensor_stride(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw > 1 ||
        (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "dim") != 0)) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 1 argument (dim)", "stride");
        return NULL;
    }
    if (mt_py_tracer_size_read() < 0) {
        return NULL;
    }
    PyObject *dim = nargs > 0 ? args[0] : NULL;
    if (kwnames && PyTuple_GET_SIZE(kwnames) == 1 && nargs == 0) {
        dim = args[0];
    }
    if (dim == NULL || dim == Py_None) {
        return ints_tuple(mt_py_unwrap(self)->ndim, mt_py_unwrap(self)->strides);
    }
    int d;
    if (dim_arg(self, dim, &d) < 0) {
        return NULL;
    }
    return PyLong_FromLongLong(mt_py_unwrap(self)->strides[d]);
}

static PyObject *
tensor_dim(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromLong(mt_py_unwrap(self)->ndim);
}

static PyObject *
tensor_numel(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromLongLong(mt_tensor_numel(mt_py_unwrap(self)));
}

static PyObject *
tensor_is_contiguous(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)args;
    (void)nargs;
    (void)kw;
    return PyBool_FromLong(mt_tensor_is_contiguous(mt_py_unwrap(self)));
}

static PyObject *
tensor_storage_offset(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromLongLong(mt_py_unwrap(self)->offset);
}

static PyObject *
tensor_data_ptr(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (mt_py_check_data(mt_py_unwrap(self)) < 0) {
        return NULL;
    }
    return PyLong_FromVoidPtr(mt_tensor_data(mt_py_unwrap(self)));
}

static PyObject *
tensor_element_size(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromSize_t(mt_dtype_size(mt_py_unwrap(self)->dtype));
}

static PyObject *
tensor_item(PyObject *self, PyObject *unused)
{
    (void)unused;
    mt_scalar s;
    if (mt_py_tracer_warn("number") < 0) {
        return NULL;
    }
    PyObject *dispatched = mt_py_local_scalar(self);
    if (dispatched || PyErr_Occurred()) {
        return dispatched;
    }
    if (mt_py_check_data(mt_py_unwrap(self)) < 0) {
        return NULL;
    }
    mt_status st = mt_tensor_item(mt_py_unwrap(self), &s);
    if (st == MT_OK && mt_dtype_is_complex(mt_py_unwrap(self)->dtype)) {
        return mt_py_complex_item(mt_py_unwrap(self));
    }
    return st ? mt_py_raise(st) : mt_py_from_scalar(s);
}

static PyObject *
tensor_tolist(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (mt_py_tracer_warn("list") < 0) {
        return NULL;
    }
    return mt_py_tensor_tolist(mt_py_unwrap(self));
}

static PyObject *
tensor_requires_grad_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)kw;
    int on = nargs > 0 ? PyObject_IsTrue(args[0]) : 1;
    if (on < 0) {
        return NULL;
    }
    if (on && !mt_dtype_is_float(mt_py_unwrap(self)->dtype) &&
        !mt_dtype_is_complex(mt_py_unwrap(self)->dtype)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "only Tensors of floating point dtype can require gradients");
        return NULL;
    }
    mt_status st = mt_check_inference_requires_grad(mt_py_unwrap(self), on);
    if (st) {
        return mt_py_raise(st);
    }
    if (mt_py_unwrap(self)->grad_fn && !on) {
        PyErr_SetString(PyExc_RuntimeError,
                        "you can only change requires_grad flags of leaf variables. If you want to "
                        "use a computed variable in a subgraph that doesn't require "
                        "differentiation use var_no_grad = var.detach().");
        return NULL;
    }
    mt_py_unwrap(self)->requires_grad = on;
    Py_INCREF(self);
    return self;
}

/* Tensor._make_subclass(cls, data, require_grad=False): a cls object sharing data's storage. */
static PyObject *
tensor_make_subclass(PyObject *unused, PyObject *args)
{
    (void)unused;
    PyObject *cls, *data;
    int require_grad = 0;
    if (!PyArg_ParseTuple(args, "OO|p", &cls, &data, &require_grad)) {
        return NULL;
    }
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &mt_py_TensorBase_Type)) {
        PyErr_SetString(PyExc_TypeError, "cls must be a subclass of minitorch.Tensor");
        return NULL;
    }
    if (!mt_py_is_tensor(data)) {
        PyErr_Format(PyExc_TypeError, "data must be a Tensor, not %s", Py_TYPE(data)->tp_name);
        return NULL;
    }
    mt_tensor *src = mt_py_unwrap(data), *alias;
    mt_status st = mt_tensor_view(src, src->ndim, src->sizes, src->strides, src->offset, &alias);
    if (st == MT_OK && (st = mt_tensor_set_requires_grad(alias, require_grad))) {
        mt_tensor_release(alias); /* nn.Parameter(an integer tensor) */
    }
    if (st) {
        return mt_py_raise(st);
    }
    mt_py_mark_python_dispatch(cls, alias);
    return mt_py_wrap_as((PyTypeObject *)cls, alias);
}

/* t.as_subclass(cls): a cls object over an alias of t, linked to t in the autograd graph (its
 * grad_fn is AliasBackward0), as PyTorch's. */
static PyObject *
tensor_as_subclass(PyObject *self, PyObject *cls)
{
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &mt_py_TensorBase_Type)) {
        return PyErr_Format(PyExc_TypeError,
                            "as_subclass(): argument 'cls' must be a subclass of Tensor, not %s",
                            PyType_Check(cls) ? ((PyTypeObject *)cls)->tp_name
                                              : Py_TYPE(cls)->tp_name);
    }
    mt_tensor *alias = NULL;
    mt_status st = mt_op_alias(mt_py_unwrap(self), &alias);
    if (st) {
        return mt_py_raise(st);
    }
    mt_py_mark_python_dispatch(cls, alias);
    return mt_py_wrap_as((PyTypeObject *)cls, alias);
}

/* t._set_data(new): t becomes a view of new's memory (storage, geometry, dtype, device) and
 * keeps its identity and autograd flags, as PyTorch's `t.data = new`. */
static PyObject *
tensor_set_data(PyObject *self, PyObject *other)
{
    if (!mt_py_is_tensor(other)) {
        PyErr_Format(PyExc_TypeError, "data must be a Tensor, not %s", Py_TYPE(other)->tp_name);
        return NULL;
    }
    mt_tensor *t = mt_py_unwrap(self), *src = mt_py_unwrap(other);
    if (t->requires_grad && !mt_dtype_is_float(src->dtype) && !mt_dtype_is_complex(src->dtype)) {
        PyErr_SetString(PyExc_RuntimeError, "data set to a tensor that requires gradients must be "
                                            "floating point or complex dtype");
        return NULL;
    }
    mt_tensor_set_storage(t, src->storage); /* t keeps its version counter (PyTorch's set_data) */
    t->offset = src->offset;
    t->ndim = src->ndim;
    memcpy(t->sizes, src->sizes, sizeof(t->sizes));
    memcpy(t->strides, src->strides, sizeof(t->strides));
    t->dtype = src->dtype;
    Py_RETURN_NONE;
}

/* t._variable_data(): t.data, an alias of t's memory that does not require grad and has a
 * version counter of its own, as PyTorch's variable_data(): writing it in place is no change of
 * t that autograd sees (detach() shares t's counter instead). A __torch_dispatch__ subclass's
 * tensor is its class's business: its aten.detach makes the alias, below autograd (PyTorch's
 * shallow_copy_and_detach through the Python interpreter). */
static PyObject *
tensor_variable_data(PyObject *self, PyObject *unused)
{
    (void)unused;
    mt_tensor *t = mt_py_unwrap(self), *alias;
    mt_status st;
    if (t->python_dispatch) {
        bool grad = mt_grad_enabled();
        mt_set_grad_enabled(false);
        st = mt_op_detach(t, &alias);
        mt_set_grad_enabled(grad);
    } else {
        st = mt_tensor_view(t, t->ndim, t->sizes, t->strides, t->offset, &alias);
    }
    if (st) {
        return mt_py_raise(st);
    }
    if ((st = mt_tensor_new_version(alias, 0))) {
        mt_tensor_release(alias);
        return mt_py_raise(st);
    }
    return mt_py_wrap(alias);
}

/* t._storage_bytes(): every byte of t's storage, as a 1-d uint8 tensor on the same memory (what
 * Tensor.untyped_storage() wraps), whichever part of it t views. */
static PyObject *
tensor_storage_bytes(PyObject *self, PyObject *unused)
{
    (void)unused;
    mt_storage *s = mt_py_unwrap(self)->storage;
    int64_t nbytes = (int64_t)s->nbytes, step = 1;
    mt_tensor *bytes;
    mt_status st = mt_tensor_on_storage(s, 1, &nbytes, &step, 0, MT_UINT8, &bytes);
    if (st) {
        return mt_py_raise(st);
    }
    return mt_py_wrap(bytes);
}

/* ---- properties ---- */

static PyObject *
get_shape(PyObject *self, void *c)
{
    (void)c;
    if (mt_py_tracer_size_read() < 0) {
        return NULL;
    }
    return mt_py_size_obj(mt_py_unwrap(self)->ndim, mt_py_unwrap(self)->sizes);
}

static PyObject *
get_dtype(PyObject *self, void *c)
{
    (void)c;
    PyObject *d = mt_py_dtype_obj(mt_py_unwrap(self)->dtype);
    Py_INCREF(d);
    return d;
}

static PyObject *
get_device(PyObject *self, void *c)
{
    (void)c;
    return mt_py_device_obj(mt_tensor_device(mt_py_unwrap(self)));
}

static PyObject *
get_is_cuda(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(mt_tensor_device(mt_py_unwrap(self)).type == MT_CUDA);
}

static PyObject *
get_ndim(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(mt_py_unwrap(self)->ndim);
}

static PyObject *
get_requires_grad(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(mt_tensor_requires_grad(mt_py_unwrap(self)));
}

static int
set_requires_grad(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    if (v == NULL || !PyBool_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "requires_grad must be a bool");
        return -1;
    }
    if (v == Py_True && !mt_dtype_is_float(mt_py_unwrap(self)->dtype) &&
        !mt_dtype_is_complex(mt_py_unwrap(self)->dtype)) { /* the setter's words differ */
        PyErr_SetString(PyExc_RuntimeError,
                        "only Tensors of floating point and complex dtype can require gradients");
        return -1;
    }
    PyObject *r = tensor_requires_grad_(self, &v, 1, NULL);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyObject *
get_grad(PyObject *self, void *c)
{
    (void)c;
    mt_tensor *g = mt_py_unwrap(self)->grad;
    if (g == NULL && mt_py_unwrap(self)->grad_fn && !mt_py_unwrap(self)->retains_grad &&
        PyErr_WarnEx(PyExc_UserWarning,
                     "The .grad attribute of a Tensor that is not a leaf Tensor is being "
                     "accessed. Its .grad attribute won't be populated during "
                     "autograd.backward(). If you indeed want the .grad field to be populated for "
                     "a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access "
                     "the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
                     "instead.",
                     1) < 0) {
        return NULL;
    }
    if (g == NULL) {
        Py_RETURN_NONE;
    }
    return mt_py_wrap_grad(mt_tensor_retain(g), mt_py_unwrap(self), self);
}

static int
set_grad(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    mt_tensor *g = NULL;
    if (v != NULL && v != Py_None && !mt_py_is_tensor(v)) {
        if (PyObject_HasAttrString(v, "_nnz")) { /* a sparse tensor of minitorch.sparse */
            if (mt_py_sparse_grad(v, self, &g) < 0) {
                return -1;
            }
        } else {
            PyErr_Format(PyExc_TypeError,
                         "assigned grad expected to be a Tensor or None but got %s",
                         Py_TYPE(v)->tp_name);
            return -1;
        }
    } else if (v && v != Py_None) {
        const mt_tensor *t = mt_py_unwrap(self), *gv = mt_py_unwrap(v);
        const int want = t->grad_dtype == 0 ? (int)t->dtype : t->grad_dtype - 1;
        if (t->grad_dtype != MT_GRAD_DTYPE_ANY && (int)gv->dtype != want) {
            PyErr_Format(PyExc_RuntimeError,
                         "attempting to assign a gradient with dtype '%s' to a tensor with "
                         "grad_dtype '%s'. The gradient must match the tensor's grad_dtype "
                         "(defaults to the tensor's dtype). You can set the tensor's grad_dtype "
                         "attribute with a specific dtype, or None to allow any dtype. Set "
                         "grad_dtype with caution. Diverging the dtypes of a tensor and its "
                         "gradient may break downstream systems that assume they match.",
                         mt_dtype_c_name(gv->dtype), mt_dtype_scalar_name((mt_dtype)want));
            return -1;
        }
        g = mt_tensor_retain(mt_py_unwrap(v));
    }
    mt_tensor_clear(&mt_py_unwrap(self)->grad);
    mt_py_unwrap(self)->grad = g;
    return 0;
}

/* Whether self is a leaf (*leaf), 0; -1 with an exception set */
static int
leaf_of(PyObject *self, bool *leaf)
{
    struct mt_node *n = NULL;
    mt_status st = mt_autograd_grad_fn(mt_py_unwrap(self), &n);
    if (st) {
        mt_py_raise(st);
        return -1;
    }
    *leaf = n == NULL;
    return 0;
}

/* t.grad_dtype (a leaf's): the dtype its gradient has, its own by default; None for any */
static PyObject *
get_grad_dtype(PyObject *self, void *c)
{
    (void)c;
    bool leaf;
    if (leaf_of(self, &leaf) < 0) {
        return NULL;
    }
    if (!leaf) {
        PyErr_SetString(PyExc_RuntimeError, "grad_dtype can only be accessed on leaf tensors.");
        return NULL;
    }
    const mt_tensor *t = mt_py_unwrap(self);
    if (t->grad_dtype == MT_GRAD_DTYPE_ANY) {
        Py_RETURN_NONE;
    }
    return Py_NewRef(mt_py_dtype_obj(t->grad_dtype ? (mt_dtype)(t->grad_dtype - 1) : t->dtype));
}

static int
set_grad_dtype(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    bool leaf;
    mt_dtype dt = MT_FLOAT32;
    if (leaf_of(self, &leaf) < 0) {
        return -1;
    }
    if (!leaf) {
        PyErr_SetString(PyExc_RuntimeError, "grad_dtype can only be set on leaf tensors.");
        return -1;
    }
    if (v == NULL || (v != Py_None && !PyObject_TypeCheck(v, &mt_py_dtype_Type))) {
        PyErr_Format(PyExc_RuntimeError, "grad_dtype must be a torch.dtype or None, but got %s",
                     v ? Py_TYPE(v)->tp_name : "NULL");
        return -1;
    }
    if (v != Py_None && mt_py_to_dtype(v, &dt) < 0) {
        return -1;
    }
    mt_py_unwrap(self)->grad_dtype = v == Py_None ? MT_GRAD_DTYPE_ANY : (uint8_t)(dt + 1);
    return 0;
}

/* The grad_fn of a view is brought up to date first (autograd/views.c), and may raise. */
static PyObject *
get_grad_fn(PyObject *self, void *c)
{
    (void)c;
    struct mt_node *n = NULL;
    mt_status st = mt_autograd_grad_fn(mt_py_unwrap(self), &n);
    if (st) {
        return mt_py_raise(st);
    }
    if (n == NULL) {
        Py_RETURN_NONE;
    }
    return mt_py_node_wrap(mt_node_retain(n));
}

static PyObject *
get_is_leaf(PyObject *self, void *c)
{
    (void)c;
    struct mt_node *n = NULL;
    mt_status st = mt_autograd_grad_fn(mt_py_unwrap(self), &n);
    return st ? mt_py_raise(st) : PyBool_FromLong(n == NULL);
}

/* t._base: the tensor a view views (None for a tensor that is not a view), as PyTorch's. */
static PyObject *
get_base(PyObject *self, void *c)
{
    (void)c;
    mt_tensor *base = mt_py_unwrap(self)->view_base;
    return base ? mt_py_wrap(mt_tensor_retain(base)) : Py_NewRef(Py_None);
}

static PyObject *
tensor_is_view(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyBool_FromLong(mt_py_unwrap(self)->view_base != NULL);
}

static PyObject *
get_retains_grad(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(mt_py_unwrap(self)->retains_grad);
}

/* t.detach_(): t itself leaves the graph (a leaf that does not require grad). */
static PyObject *
tensor_detach_(PyObject *self, PyObject *unused)
{
    (void)unused;
    mt_tensor *t = mt_py_unwrap(self);
    if (t->view_base) {
        PyErr_SetString(
            PyExc_RuntimeError,
            "Can't detach views in-place. Use detach() instead. If you are using "
            "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is "
            "set as True, gradients are views of DDP buckets, and hence detach_() cannot "
            "be called on these gradients. To fix this error, please refer to the "
            "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
        return NULL;
    }
    if (t->grad_fn) {
        mt_autograd_forget(t);
    }
    t->retains_grad = false;
    t->requires_grad = false;
    return Py_NewRef(self);
}

/* t.retain_grad(): a non-leaf keeps its gradient in .grad after backward. */
static PyObject *
tensor_retain_grad(PyObject *self, PyObject *unused)
{
    (void)unused;
    mt_tensor *t = mt_py_unwrap(self);
    struct mt_node *n = NULL;
    if (!mt_tensor_requires_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "can't retain_grad on Tensor that has requires_grad=False");
        return NULL;
    }
    mt_status st = mt_autograd_grad_fn(t, &n);
    if (st) {
        return mt_py_raise(st);
    }
    if (n && !t->retains_grad) {
        n->retains[t->output_nr] = t;
        t->retains_grad = true;
    }
    Py_RETURN_NONE;
}

static PyObject *
get_is_inference(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(mt_py_unwrap(self)->is_inference);
}

static PyObject *
get_version(PyObject *self, void *c)
{
    (void)c;
    mt_status st = mt_check_inference_version(mt_py_unwrap(self));
    return st ? mt_py_raise(st) : PyLong_FromLong(mt_tensor_version(mt_py_unwrap(self)));
}

static PyObject *
get_itemsize(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(mt_dtype_size(mt_py_unwrap(self)->dtype));
}

static PyObject *
get_nbytes(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLongLong(mt_tensor_numel(mt_py_unwrap(self)) *
                               (int64_t)mt_dtype_size(mt_py_unwrap(self)->dtype));
}

static PyObject *
tensor_preserve_strides(PyObject *self, PyObject *unused)
{
    (void)unused;
    int64_t strides[MT_MAX_DIMS];
    mt_preserve_strides(mt_py_unwrap(self), strides);
    return ints_tuple(mt_py_unwrap(self)->ndim, strides);
}

static PyGetSetDef tensor_getset[] = {
    {"shape", get_shape, NULL, "The sizes of the tensor, as a minitorch.Size.", NULL},
    {"dtype", get_dtype, NULL, NULL, NULL},
    {"device", get_device, NULL, NULL, NULL},
    {"is_cuda", get_is_cuda, NULL, NULL, NULL},
    {"ndim", get_ndim, NULL, NULL, NULL},
    {"requires_grad", get_requires_grad, set_requires_grad, NULL, NULL},
    {"grad", get_grad, set_grad, NULL, NULL},
    {"grad_dtype", get_grad_dtype, set_grad_dtype,
     "The allowed dtype of .grad for this leaf: its own by default, None for any.", NULL},
    {"grad_fn", get_grad_fn, NULL, "The autograd node that made this tensor (None for a leaf).",
     NULL},
    {"is_leaf", get_is_leaf, NULL, NULL, NULL},
    {"retains_grad", get_retains_grad, NULL, NULL, NULL},
    {"_version", get_version, NULL, NULL, NULL},
    {"_is_inference", get_is_inference, NULL, NULL, NULL},
    {"_base", get_base, NULL, "The tensor this view views (None if it is no view).", NULL},
    {"itemsize", get_itemsize, NULL, NULL, NULL},
    {"nbytes", get_nbytes, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* TensorBase._swap_tensor_impl(t1, t2): the two Python objects exchange the tensors they wrap
 * (utils.swap_tensors' last step, after their classes and __dict__s), so each object keeps its
 * identity and takes the other's data, grad, requires_grad and autograd history, as PyTorch's
 * torch._C._swap_tensor_impl exchanges TensorImpls. */
static PyObject *
tensor_swap_tensor_impl(PyObject *unused, PyObject *args)
{
    (void)unused;
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "O!O!:_swap_tensor_impl", &mt_py_TensorBase_Type, &a,
                          &mt_py_TensorBase_Type, &b)) {
        return NULL;
    }
    mt_py_tensor *x = (mt_py_tensor *)a, *y = (mt_py_tensor *)b;
    mt_tensor *t = x->t;
    x->t = y->t;
    y->t = t;
    x->t->pyobj = x;
    y->t->pyobj = y;
    Py_RETURN_NONE;
}

static PyMethodDef tensor_methods[] = {
    {"size", (PyCFunction)(void (*)(void))tensor_size, METH_FASTCALL | METH_KEYWORDS, NULL},
    {"stride", (PyCFunction)(void (*)(void))tensor_stride, METH_FASTCALL | METH_KEYWORDS, NULL},
    {"dim", tensor_dim, METH_NOARGS, NULL},
    {"ndimension", tensor_dim, METH_NOARGS, NULL},
    {"numel", tensor_numel, METH_NOARGS, NULL},
    {"nelement", tensor_numel, METH_NOARGS, NULL},
    {"is_contiguous", (PyCFunction)(void (*)(void))tensor_is_contiguous,
     METH_FASTCALL | METH_KEYWORDS, NULL},
    {"storage_offset", tensor_storage_offset, METH_NOARGS, NULL},
    {"data_ptr", tensor_data_ptr, METH_NOARGS, NULL},
    {"element_size", tensor_element_size, METH_NOARGS, NULL},
    {"item", tensor_item, METH_NOARGS, NULL},
    {"tolist", tensor_tolist, METH_NOARGS, NULL},
    {"requires_grad_", (PyCFunction)(void (*)(void))tensor_requires_grad_,
     METH_FASTCALL | METH_KEYWORDS, NULL},
    {"_make_subclass", tensor_make_subclass, METH_VARARGS | METH_STATIC, NULL},
    {"as_subclass", tensor_as_subclass, METH_O,
     "A cls object over the same memory, linked to this tensor in the autograd graph."},
    {"_set_data", tensor_set_data, METH_O, NULL},
    {"_variable_data", tensor_variable_data, METH_NOARGS, NULL},
    {"_storage_bytes", tensor_storage_bytes, METH_NOARGS, NULL},
    {"retain_grad", tensor_retain_grad, METH_NOARGS, NULL},
    {"_is_view", tensor_is_view, METH_NOARGS, NULL},
    {"_preserve_strides", tensor_preserve_strides, METH_NOARGS,
     "The strides of a copy that keeps this tensor's layout (clone's, empty_like's)."},
    {"detach_", tensor_detach_, METH_NOARGS, NULL},
    {"_swap_tensor_impl", tensor_swap_tensor_impl, METH_VARARGS | METH_STATIC,
     "Exchanges the tensors two TensorBase objects wrap (utils.swap_tensors)."},
    {NULL, NULL, 0, NULL},
};

static Py_ssize_t
mp_length(PyObject *self)
{
    if (mt_py_unwrap(self)->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)mt_py_unwrap(self)->sizes[0];
}

static int
mp_ass_subscript(PyObject *self, PyObject *index, PyObject *value)
{
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "Tensor does not support deleting items");
        return -1;
    }
    PyObject *args[2] = {index, value};
    if (mt_py_tf_wanted(self, args, 2)) {
        PyObject *res = mt_py_tf_call("__setitem__", MT_TF_METHOD, self, args, 2, NULL);
        Py_XDECREF(res);
        return res ? 0 : -1;
    }
    return mt_py_setitem(self, index, value);
}

static PyMappingMethods tensor_as_mapping = {
    .mp_length = mp_length,
    .mp_subscript = mt_py_getitem,
    .mp_ass_subscript = mp_ass_subscript,
};

static PyBufferProcs tensor_as_buffer = {
    .bf_getbuffer = mt_py_tensor_getbuffer, /* view->obj owns what the view needs */
};

PyTypeObject mt_py_TensorBase_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "minitorch._C.TensorBase",
    .tp_basicsize = sizeof(mt_py_tensor),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C part of minitorch.Tensor: a strided view of a storage.",
    .tp_new = tensor_new,
    .tp_dealloc = tensor_dealloc,
    .tp_getset = tensor_getset,
    .tp_as_number = &mt_py_tensor_as_number,
    .tp_as_mapping = &tensor_as_mapping,
    .tp_as_buffer = &tensor_as_buffer,
    .tp_richcompare = mt_py_tensor_richcompare,
};

int
mt_py_tensor_init_types(PyObject *module)
{
    /* The hand-written methods, then one per METHOD op of ops.def. */
    size_t nhand = sizeof(tensor_methods) / sizeof(tensor_methods[0]) - 1, nops = 0;
    for (PyMethodDef *m = mt_py_tensor_op_methods; m->ml_name; m++) {
        nops += m->ml_name[0] != '\0';
    }
    PyMethodDef *all = PyMem_Calloc(nhand + nops + 1, sizeof(PyMethodDef));
    if (all == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(all, tensor_methods, nhand * sizeof(PyMethodDef));
    size_t n = nhand;
    for (PyMethodDef *m = mt_py_tensor_op_methods; m->ml_name; m++) {
        if (m->ml_name[0] != '\0') {
            all[n++] = *m;
        }
    }
    /* Lives as long as the type, i.e. the process. */
    mt_py_TensorBase_Type.tp_methods = all;
    /* Defining == would make tensors unhashable; like PyTorch's, they hash by identity. */
    mt_py_TensorBase_Type.tp_hash = PyBaseObject_Type.tp_hash;
    if (PyType_Ready(&mt_py_TensorBase_Type) < 0 || mt_py_convert_init() < 0) {
        return -1;
    }
    return PyModule_AddObjectRef(module, "TensorBase", (PyObject *)&mt_py_TensorBase_Type);
}
