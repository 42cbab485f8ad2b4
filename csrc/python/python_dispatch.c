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

/* The Python key's kernel for every op: the mode's or the subclasses' __torch_dispatch__, with
 * grad mode off (below autograd, as PyTorch's AutoDispatchBelowAutograd: the Autograd kernel
 * above recorded the op). An in-place op's result is its self, whatever Python returned. */
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
    } else if ((mt_op_flags[op] & INPLACE) && a->out[0] != a->t[0] && a->t[0] != NULL) {
        mt_tensor_release(a->out[0]);
        a->out[0] = mt_tensor_retain(a->t[0]);
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
    int64_t span = offset >= 0 ? offset + 1 : -1; /* in elements, past the last one reached */
    for (int k = 0; k < ndim && span >= 0; k++) {
        if (sizes[k] < 0 || st_v[k] < 0) {
            span = -1;
        } else if (sizes[k] == 0) {
            span = offset;
        } else {
            span += (sizes[k] - 1) * st_v[k];
        }
    }
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

/* _C._set_dispatch_modes(n): the length of this thread's dispatch mode stack. */
static PyObject *
set_dispatch_modes(PyObject *unused, PyObject *arg)
{
    (void)unused;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    mt_set_python_modes(n > 0 ? (int)n : 0);
    Py_RETURN_NONE;
}

static PyMethodDef functions[] = {
    {"_make_wrapper", make_wrapper, METH_VARARGS,
     "_make_wrapper(cls, size, strides, storage_offset, dtype, device, requires_grad): a cls "
     "object with that metadata and no memory (Tensor._make_wrapper_subclass)."},
    {"_set_dispatch_modes", set_dispatch_modes, METH_O, NULL},
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
