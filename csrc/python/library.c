/* Python kernels for built-in ops (minitorch.library, as torch.library's Library("aten", "IMPL")
 * .impl): _C._set_python_kernel(op, key, fn) keeps fn for op and key and marks that key of op
 * in the dispatcher, whose override hook then runs fn here, with the call's arguments boxed as
 * op's schema names them, in place of the table's kernel for that key.
 *
 * Only one kernel per op and key lives here: which registration is current, and what a
 * Library's _destroy() puts back, is minitorch/library.py's. */
#include "ops/ops.h"
#include "python/pyminitorch.h"

static PyObject *kernels[MT_NUM_OPS][MT_NUM_KEYS]; /* owned, or NULL */

/* A result that is one of the call's own tensors comes back as a new alias of it for an op that
 * is no in-place one (as autograd.Function's outputs): the Autograd kernel above links its
 * results to a new node, which must not become an input's own grad_fn. */
static mt_status
alias_inputs(mt_op op, mt_args *a)
{
    if (mt_op_flags[op] & INPLACE) {
        return MT_OK;
    }
    mt_status st = MT_OK;
    for (int k = 0; k < MT_MAX_OUTPUTS && st == MT_OK; k++) {
        for (int j = 0; a->out[k] && j < MT_MAX_TENSOR_ARGS; j++) {
            if (a->out[k] == a->t[j]) {
                mt_tensor *view = NULL;
                st = mt_op_alias(a->out[k], &view);
                mt_tensor_release(a->out[k]);
                a->out[k] = view;
                break;
            }
        }
    }
    return st;
}

/* The override hook (dispatch.h): runs op's Python kernel for key on a. Below an Autograd kernel
 * that records the op, the Python kernel records nothing (PyTorch's AutoDispatchBelowAutograd);
 * for an op whose gradient comes from its decomposition, its ops record as a composite's do. */
static mt_status
run_python_kernel(mt_op op, mt_key key, mt_args *a)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *fn = Py_XNewRef(kernels[op][key]); /* kept, should the kernel unregister itself */
    PyObject *kwargs = NULL, *args = fn ? mt_py_box_args(op, a, &kwargs) : NULL, *res = NULL;
    bool grad = mt_grad_enabled();
    if (args) {
        mt_set_grad_enabled(
            grad && !(key < MT_KEY_AUTOGRAD && mt_kernel_for(op, MT_KEY_AUTOGRAD)->fn != NULL));
        res = PyObject_Call(fn, args, kwargs);
        mt_set_grad_enabled(grad);
    }
    mt_status st = MT_OK;
    if (fn == NULL) {
        st = mt_fail(MT_ERUNTIME, "the Python kernel of %s for %s is gone", mt_op_names[op],
                     mt_key_names[key]);
    } else if (res == NULL || mt_py_unbox_results(op, res, a) < 0) {
        st = mt_fail(MT_EPYTHON, "error in the Python kernel of %s", mt_op_names[op]);
    } else {
        st = alias_inputs(op, a);
    }
    Py_XDECREF(res);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    Py_XDECREF(fn);
    PyGILState_Release(gil);
    return st;
}

static int
find_op(PyObject *name)
{
    const char *s = PyUnicode_AsUTF8(name);
    for (int op = 0; s && op < MT_NUM_OPS; op++) {
        if (strcmp(mt_op_names[op], s) == 0) {
            return op;
        }
    }
    return -1;
}

static int
find_key(const char *s)
{
    for (int key = 0; key < MT_NUM_KEYS; key++) {
        if (strcmp(mt_key_names[key], s) == 0) {
            return key;
        }
    }
    return -1;
}

/* _set_python_kernel(op, key, fn): fn (None: none) becomes op's kernel for key; returns the
 * Python kernel it replaces, or None. */
static PyObject *
py_set_python_kernel(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *name, *fn;
    const char *key_name;
    if (!PyArg_ParseTuple(args, "UsO:_set_python_kernel", &name, &key_name, &fn)) {
        return NULL;
    }
    int op = find_op(name), key = find_key(key_name);
    if (op < 0) {
        return PyErr_Format(PyExc_ValueError, "no operator named '%U'", name);
    }
    if (key < 0 || key == MT_KEY_TRACER || key == MT_KEY_PYTHON) {
        return PyErr_Format(PyExc_RuntimeError, "could not parse dispatch key: %s", key_name);
    }
    if (fn != Py_None && !PyCallable_Check(fn)) {
        return PyErr_Format(PyExc_TypeError, "a kernel must be callable, not %s",
                            Py_TYPE(fn)->tp_name);
    }
    PyObject *old = kernels[op][key];
    kernels[op][key] = fn == Py_None ? NULL : Py_NewRef(fn);
    mt_set_override((mt_op)op, (mt_key)key, fn != Py_None);
    return old ? old : Py_NewRef(Py_None);
}

static PyMethodDef functions[] = {
    {"_set_python_kernel", py_set_python_kernel, METH_VARARGS,
     "_set_python_kernel(op, key, fn): fn(*args, **kwargs) runs op for dispatch key (CPU, CUDA, "
     "Autograd, CompositeImplicitAutograd) in place of its own kernel; None removes it. "
     "Returns the Python kernel it replaces, or None."},
    {NULL, NULL, 0, NULL},
};

int
mt_py_library_init(PyObject *module)
{
    mt_set_override_hook(run_python_kernel);
    return PyModule_AddFunctions(module, functions);
}
