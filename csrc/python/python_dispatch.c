/* The dispatcher's Python key (dispatch.h): Tensor subclasses with __torch_dispatch__ and torch
 * dispatch modes, as PyTorch's python dispatch.
 *
 * A call with the key (one of its tensors is flagged python_dispatch, or a dispatch mode is on in
 * this thread) comes to the fallback here below Autograd, its arguments boxed as the op's schema
 * names them, and goes to minitorch.utils._python_dispatch._dispatch, which picks the mode or the
 * subclass and calls its __torch_dispatch__; what that returns becomes the call's results.
 * The wrapper subclasses' tensors (Tensor._make_wrapper_subclass) carry only metadata, on a
 * storage with no memory, and keep their Python object alive while they live on in C without
 * it (PyTorch's PyObject preservation), so that a gradient or a saved tensor comes back to
 * Python as the object __torch_dispatch__ made. Nothing here decides about the call itself:
 * _python_dispatch.py does. */
#include <string.h>

#include "python/pyminitorch.h"

static PyObject *handler; /* minitorch.utils._python_dispatch._dispatch, on first use */
static PyObject *dispatch_name; /* "__torch_dispatch__", interned */
static PyObject *disabled_dispatch; /* _C._disabled_torch_dispatch_impl */

/* ---- the fallback ---- */

static int
load_handler(void)
{
    if (handler) {
        return 0;
    }
    PyObject *mod = PyImport_ImportModule("minitorch.utils._python_dispatch");
    handler = mod ? PyObject_GetAttrString(mod, "_dispatch") : NULL;
    Py_XDECREF(mod);
    return handler ? 0 : -1;
}

/* The ops whose results view their first argument (PyTorch's schemas mark them Tensor(a) ->
 * Tensor(a)). Their composites make that link (ops/views.c); the Python key replaces those, so
 * it makes the link itself, as PyTorch's ADInplaceOrView does for every tensor: a result of
 * __torch_dispatch__ is a view of self (its _base, its version counter). detach shares the
 * counter only (no _base, as PyTorch's). */
static const mt_op view_ops[] = {
    MT_OP_alias,        MT_OP_as_strided,      MT_OP_view,
    MT_OP_view_dtype,   MT_OP_view_as,         MT_OP_t,
    MT_OP_transpose,    MT_OP_swapaxes,        MT_OP_swapdims,
    MT_OP_permute,      MT_OP_movedim,         MT_OP_moveaxis,
    MT_OP_expand,       MT_OP_expand_as,       MT_OP_squeeze,
    MT_OP_unsqueeze,    MT_OP_unflatten,       MT_OP_select,
    MT_OP_slice,        MT_OP_narrow,          MT_OP_diagonal,
    MT_OP_unbind,       MT_OP_split,           MT_OP_split_with_sizes,
    MT_OP_chunk,        MT_OP_tensor_split,    MT_OP_tensor_split_indices,
    MT_OP_view_as_real, MT_OP_view_as_complex,
};

static bool
returns_view(mt_op op)
{
    for (size_t k = 0; k < sizeof(view_ops) / sizeof(view_ops[0]); k++) {
        if (view_ops[k] == op) {
            return true;
        }
    }
    return false;
}

static void
link_view(mt_op op, mt_tensor *self, mt_tensor *out)
{
    if (out == NULL || out == self) {
        return;
    }
    mt_tensor_share_version(out, self);
    if (op != MT_OP_detach) {
        mt_tensor_clear(&out->view_base);
        mt_autograd_as_view(self, out);
    }
}

/* The Python key's kernel for every op: the mode's or the subclasses' __torch_dispatch__, with
 * grad mode off (below autograd, as PyTorch's AutoDispatchBelowAutograd: the Autograd kernel
 * above recorded the op). An in-place op's result is its self, whatever Python returned, and a
 * subclass's self has its version counter moved; a view op's results are views of its self
 * (returns_view). */
static mt_status
python_fallback(mt_op op, mt_args *a)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *kwargs = NULL, *args = NULL, *res = NULL;
    bool grad = mt_grad_enabled();
    if (load_handler() == 0 && (args = mt_py_box_args(op, a, &kwargs)) != NULL &&
        (kwargs != NULL || (kwargs = PyDict_New()) != NULL)) {
        mt_set_grad_enabled(false);
        res = PyObject_CallFunction(handler, "sOO", mt_op_names[op], args, kwargs);
        mt_set_grad_enabled(grad);
    }
    mt_status st = MT_OK;
    if (res == NULL || mt_py_unbox_results(op, res, a) < 0) {
        st = mt_fail(MT_EPYTHON, "error in __torch_dispatch__ of %s", mt_op_names[op]);
    } else if ((mt_op_flags[op] & INPLACE) && a->t[0] != NULL) {
        if (a->out[0] != a->t[0]) {
            mt_tensor_release(a->out[0]);
            a->out[0] = mt_tensor_retain(a->t[0]);
        }
        /* a subclass's tensor changed: its counter moves, as the kernels move a plain tensor's
         * (a mode's func(*args) ran the kernel on a plain self, which moved it already) */
        if (a->t[0]->python_dispatch) {
            mt_tensor_bump_version(a->t[0]);
        }
    } else if ((returns_view(op) || op == MT_OP_detach) && a->t[0] != NULL) {
        for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
            link_view(op, a->t[0], a->out[k]);
        }
        for (int k = 0; k < a->noutl; k++) {
            link_view(op, a->t[0], a->outl[k]);
        }
    }
    Py_XDECREF(res);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    PyGILState_Release(gil);
    return st;
}

/* ---- which classes take part ---- */

/* Whether instances of cls go to its __torch_dispatch__: it has one other than the disabled
 * default (Tensor's). */
static bool
dispatches(PyObject *cls)
{
    PyObject *fn = _PyType_Lookup((PyTypeObject *)cls, dispatch_name); /* borrowed */
    return fn != NULL && fn != disabled_dispatch;
}

/* ---- PyObject preservation ---- */

/* tp_del of the Python subclasses of Tensor, which CPython's deallocator of a subclass calls
 * on each end, before it clears the object's __dict__: an object whose tensor dispatches to
 * Python and lives on elsewhere (in a graph, as a gradient) comes back to life, owned by the
 * tensor from now on, which hands it back on its next trip to Python (mt_py_wrap) or drops it
 * at its own end. (Its weak references are gone by then, as CPython clears them first.) */
static void
preserve(PyObject *self)
{
    mt_py_tensor *o = (mt_py_tensor *)self;
    mt_tensor *t = o->t;
    if (t && t->python_dispatch && !t->owns_pyobj && atomic_load(&t->refcount) > 1) {
        Py_SET_REFCNT(self, 1); /* the tensor's reference: the deallocator sees it alive */
        t->owns_pyobj = true;
        mt_tensor_release(t); /* o's reference; o->t is borrowed from now on */
    }
}

/* mt_tensor_pyobj_hook: t's end drops the object it owns, which no longer holds t. */
static void
release_pyobj(mt_tensor *t)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    mt_py_tensor *o = t->pyobj;
    t->owns_pyobj = false;
    t->pyobj = NULL;
    o->t = NULL;
    Py_DECREF(o);
    PyGILState_Release(gil);
}

/* Whether cls's objects go to its __torch_dispatch__; if so its deallocator preserves them.
 * Only such classes get the finalizer: CPython leaves a cycle of objects with one uncollected
 * (gc.garbage), which is PyTorch's behaviour for no class, but here only for a cycle through a
 * __torch_dispatch__ subclass's object; Tensor's and the other subclasses' ends pay nothing. */
static bool
takes_python_key(PyObject *cls)
{
    PyTypeObject *tp = (PyTypeObject *)cls;
    if (!dispatches(cls)) {
        return false;
    }
    if (tp->tp_del == NULL && PyType_HasFeature(tp, Py_TPFLAGS_HEAPTYPE)) {
        tp->tp_del = preserve;
    }
    return true;
}

/* ---- wrapper subclasses ---- */

static void
no_free(mt_allocator *self, void *ptr, size_t nbytes, void *ctx)
{
    (void)self;
    (void)ptr;
    (void)nbytes;
    (void)ctx;
}

/* The storage of a wrapper: a size and a device, no memory (a kernel never gets such a tensor:
 * its calls take the Python key; reading its data raises, see mt_py_check_data). */
static mt_allocator no_memory = {.name = "python_dispatch", .free = no_free};

static int
int64_seq(PyObject *seq, const char *what, int64_t *v, int *n)
{
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of ints");
    if (fast == NULL) {
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    int r = 0;
    if (len > MT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "%s: at most %d dimensions, got %zd", what, MT_MAX_DIMS,
                     len);
        r = -1;
    }
    for (Py_ssize_t k = 0; r == 0 && k < len; k++) {
        v[k] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, k));
        r = v[k] == -1 && PyErr_Occurred() ? -1 : 0;
    }
    *n = (int)len;
    Py_DECREF(fast);
    return r;
}

/* The elements a geometry reaches, from the storage's start to past the last one; -1 for a
 * negative size, stride or offset. */
static int64_t
span_of(int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset)
{
    int64_t span = offset >= 0 ? offset + 1 : -1;
    for (int k = 0; k < ndim && span >= 0; k++) {
        if (sizes[k] < 0 || strides[k] < 0) {
            span = -1;
        } else if (sizes[k] == 0) {
            span = offset;
        } else {
            span += (sizes[k] - 1) * strides[k];
        }
    }
    return span;
}

/* _C._make_wrapper(cls, size, strides, storage_offset, dtype, device, requires_grad): a cls
 * object with that metadata and no memory, flagged for the Python key when cls has a
 * __torch_dispatch__ (Tensor._make_wrapper_subclass parses PyTorch's arguments). */
static PyObject *
make_wrapper(PyObject *unused, PyObject *args)
{
    (void)unused;
    PyObject *cls, *size, *strides, *dtype_obj, *device_obj;
    long long offset;
    int requires_grad;
    if (!PyArg_ParseTuple(args, "OOOLOOp:_make_wrapper", &cls, &size, &strides, &offset, &dtype_obj,
                          &device_obj, &requires_grad)) {
        return NULL;
    }
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &mt_py_TensorBase_Type)) {
        return PyErr_Format(PyExc_TypeError, "cls must be a subclass of minitorch.Tensor");
    }
    int64_t sizes[MT_MAX_DIMS], st_v[MT_MAX_DIMS];
    int ndim, nstrides;
    mt_dtype dt;
    mt_device dev;
    if (int64_seq(size, "size", sizes, &ndim) < 0 ||
        int64_seq(strides, "strides", st_v, &nstrides) < 0 || mt_py_to_dtype(dtype_obj, &dt) < 0 ||
        mt_py_to_device(device_obj, &dev) < 0) {
        return NULL;
    }
    if (nstrides != ndim) {
        return PyErr_Format(PyExc_RuntimeError,
                            "_make_wrapper_subclass: %d strides for %d dimensions", nstrides, ndim);
    }
    int64_t span = span_of(ndim, sizes, st_v, offset);
    if (span < 0) {
        return PyErr_Format(PyExc_RuntimeError,
                            "_make_wrapper_subclass: negative size, stride or storage offset");
    }
    mt_storage *storage = NULL;
    mt_tensor *t = NULL;
    mt_status s = mt_storage_wrap(NULL, (size_t)span * mt_dtype_size(dt), dev, &no_memory, NULL,
                                  &storage);
    if (s == MT_OK) {
        s = mt_tensor_on_storage(storage, ndim, sizes, st_v, offset, dt, &t);
        mt_storage_release(storage); /* t's now */
    }
    if (s == MT_OK && (s = mt_tensor_set_requires_grad(t, requires_grad))) {
        mt_tensor_release(t);
    }
    if (s) {
        return mt_py_raise(s);
    }
    t->python_dispatch = takes_python_key(cls);
    return mt_py_wrap_as((PyTypeObject *)cls, t);
}

int
mt_py_check_data(const mt_tensor *t)
{
    if (t->storage->allocator == &no_memory) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Cannot access data pointer of Tensor that doesn't have storage");
        return -1;
    }
    return 0;
}

void
mt_py_mark_python_dispatch(PyObject *cls, mt_tensor *t)
{
    if (cls == (PyObject *)mt_py_tensor_class) {
        return;
    }
    t->python_dispatch = takes_python_key(cls) || t->python_dispatch;
}

/* _C._functionalize_unsafe_set(dst, src): dst on src's storage, its geometry kept (PyTorch's
 * torch._functionalize_unsafe_set, which return_and_correct_aliasing uses to make a view op's
 * wrapper result share its input's storage). Refused where dst's geometry reaches past the end
 * of src's memory. */
static PyObject *
functionalize_unsafe_set(PyObject *unused, PyObject *args)
{
    (void)unused;
    PyObject *dst_obj, *src_obj;
    if (!PyArg_ParseTuple(args, "O!O!:_functionalize_unsafe_set", &mt_py_TensorBase_Type, &dst_obj,
                          &mt_py_TensorBase_Type, &src_obj)) {
        return NULL;
    }
    mt_tensor *dst = mt_py_unwrap(dst_obj), *src = mt_py_unwrap(src_obj);
    int64_t span = span_of(dst->ndim, dst->sizes, dst->strides, dst->offset);
    if (src->storage->allocator != &no_memory &&
        (uint64_t)span * mt_dtype_size(dst->dtype) > src->storage->nbytes) {
        return PyErr_Format(PyExc_RuntimeError,
                            "_functionalize_unsafe_set: the tensor reaches past the end of the "
                            "storage it is set to");
    }
    mt_tensor_set_storage(dst, src->storage);
    Py_RETURN_NONE;
}

/* _C._set_geometry(t, size, stride, storage_offset): t takes that geometry over its storage, as
 * an in-place view op (t_, unsqueeze_) that a subclass's __torch_dispatch__ ran on the tensors it
 * wraps would have left it (return_and_correct_aliasing). Refused where it reaches past the end
 * of t's memory (a wrapper has none to reach). */
static PyObject *
set_geometry(PyObject *unused, PyObject *args)
{
    (void)unused;
    PyObject *obj, *size, *strides;
    long long offset;
    if (!PyArg_ParseTuple(args, "O!OOL:_set_geometry", &mt_py_TensorBase_Type, &obj, &size,
                          &strides, &offset)) {
        return NULL;
    }
    mt_tensor *t = mt_py_unwrap(obj);
    int64_t sizes[MT_MAX_DIMS], st_v[MT_MAX_DIMS];
    int ndim, nstrides;
    if (int64_seq(size, "size", sizes, &ndim) < 0 ||
        int64_seq(strides, "strides", st_v, &nstrides) < 0) {
        return NULL;
    }
    int64_t span = nstrides == ndim ? span_of(ndim, sizes, st_v, offset) : -1;
    if (span < 0 || (t->storage->allocator != &no_memory &&
                     (uint64_t)span * mt_dtype_size(t->dtype) > t->storage->nbytes)) {
        return PyErr_Format(PyExc_RuntimeError,
                            "_set_geometry: %d strides for %d dimensions, a negative size, stride "
                            "or offset, or past the end of the storage",
                            nstrides, ndim);
    }
    t->ndim = ndim;
    memcpy(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim);
    memcpy(t->strides, st_v, sizeof(int64_t) * (size_t)ndim);
    t->offset = offset;
    Py_RETURN_NONE;
}

static _Thread_local int modes_here; /* this thread's dispatch modes, as _set_dispatch_modes says */

/* _C._set_dispatch_modes(n): the length of this thread's dispatch mode stack. */
static PyObject *
set_dispatch_modes(PyObject *unused, PyObject *arg)
{
    (void)unused;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    modes_here = n > 0 ? (int)n : 0;
    mt_set_python_modes(modes_here);
    Py_RETURN_NONE;
}

PyObject *
mt_py_local_scalar(PyObject *self)
{
    const mt_tensor *t = mt_py_unwrap(self);
    if (!t->python_dispatch && modes_here == 0) {
        return NULL;
    }
    if (mt_tensor_numel(t) != 1) { /* refused before the dispatch, as PyTorch's item() does */
        return PyErr_Format(PyExc_RuntimeError,
                            "a Tensor with %lld elements cannot be converted to Scalar",
                            (long long)mt_tensor_numel(t));
    }
    if (load_handler() < 0) {
        return NULL;
    }
    bool grad = mt_grad_enabled();
    mt_set_grad_enabled(false);
    PyObject *res = PyObject_CallFunction(handler, "s(O){}", "_local_scalar_dense", self);
    mt_set_grad_enabled(grad);
    return res;
}

static PyMethodDef functions[] = {
    {"_make_wrapper", make_wrapper, METH_VARARGS,
     "_make_wrapper(cls, size, strides, storage_offset, dtype, device, requires_grad): a cls "
     "object with that metadata and no memory (Tensor._make_wrapper_subclass)."},
    {"_set_dispatch_modes", set_dispatch_modes, METH_O, NULL},
    {"_functionalize_unsafe_set", functionalize_unsafe_set, METH_VARARGS,
     "_functionalize_unsafe_set(dst, src): dst on src's storage, its geometry kept."},
    {"_set_geometry", set_geometry, METH_VARARGS,
     "_set_geometry(t, size, stride, storage_offset): t's new geometry over its storage."},
    {NULL, NULL, 0, NULL},
};

int
mt_py_python_dispatch_init(PyObject *m)
{
    dispatch_name = PyUnicode_InternFromString("__torch_dispatch__");
    if (dispatch_name == NULL || PyModule_AddFunctions(m, functions) < 0) {
        return -1;
    }
    disabled_dispatch = PyObject_GetAttrString(m, "_disabled_torch_dispatch_impl");
    if (disabled_dispatch == NULL) {
        return -1;
    }
    mt_register_fallback(MT_KEY_PYTHON, python_fallback);
    mt_tensor_pyobj_hook = release_pyobj;
    return 0;
}
