/* The __torch_function__ protocol's C side: which calls leave the C path for Python.
 *
 * A call of an op, an operator slot or t[index] goes to minitorch.overrides._handle_c_call when
 * a torch function mode is on, or when one of its arguments (or an element of a list or tuple
 * argument) is a Tensor subclass or another object whose class has a __torch_function__ other
 * than _C._disabled_torch_function_impl, as PyTorch's check_has_torch_function. The gate
 * (mt_py_tf_wanted, pyminitorch.h) only compares type pointers while every argument is a plain
 * Tensor or a Python number, so those calls pay nothing more; the type lookups here run only
 * for the other objects. It must not decide anything about the call itself: overrides.py does. */
#include "python/pyminitorch.h"

_Thread_local mt_py_tf_state_t mt_py_tf_state;
int mt_py_tf_modes_anywhere;
PyTypeObject *mt_py_tf_plain_type;
unsigned int mt_py_tf_plain_version;

static PyObject *disabled_impl; /* _C._disabled_torch_function_impl */
static PyObject *tf_name;       /* "__torch_function__", interned */
static PyObject *handler;       /* minitorch.overrides._handle_c_call, looked up on first use */

/* Whether o's class takes part in the protocol: its __torch_function__ exists and is not the
 * disabled one. A plain Tensor never does (its class's __torch_function__ is the default that
 * subclasses inherit). */
static bool
overrides(PyObject *o)
{
    PyTypeObject *tp = Py_TYPE(o);
    if (mt_py_tf_known_plain(o) || tp == &PyLong_Type || tp == &PyFloat_Type ||
        tp == &PyBool_Type || o == Py_None) {
        return false;
    }
    PyObject *fn = _PyType_Lookup(tp, tf_name); /* borrowed, through the type's method cache */
    if (fn != NULL && fn != disabled_impl) {
        return true;
    }
    if (mt_py_is_tensor(o) && PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG)) {
        mt_py_tf_plain_type = tp;
        mt_py_tf_plain_version = tp->tp_version_tag;
    }
    return false;
}

static bool
overrides_item(PyObject *o)
{
    if (PyList_Check(o) || PyTuple_Check(o)) {
        for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(o); k++) {
            if (overrides(PySequence_Fast_GET_ITEM(o, k))) {
                return true;
            }
        }
        return false;
    }
    return overrides(o);
}

static bool
any_overrides(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (self && overrides(self)) {
        return true;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (overrides_item(args[k])) {
            return true;
        }
    }
    return false;
}

bool
mt_py_tf_scan(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    /* the thread-local state is read only past this point: a call of tensors and numbers with
     * no mode anywhere ends here */
    bool found = any_overrides(self, args, n);
    if (!found && mt_py_tf_modes_anywhere == 0) {
        return false;
    }
    mt_py_tf_state_t *st = &mt_py_tf_state;
    if (st->disabled == MT_TF_ALL_DISABLED) {
        return false;
    }
    return st->modes > 0 || (found && st->disabled == MT_TF_ENABLED);
}

PyObject *
mt_py_tf_call(const char *name, mt_py_tf_kind kind, PyObject *self, PyObject *const *args,
              Py_ssize_t nargs, PyObject *kwnames)
{
    if (handler == NULL) {
        PyObject *mod = PyImport_ImportModule("minitorch.overrides");
        handler = mod ? PyObject_GetAttrString(mod, "_handle_c_call") : NULL;
        Py_XDECREF(mod);
        if (handler == NULL) {
            return NULL;
        }
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *res = NULL, *kw = NULL;
    PyObject *pos = PyTuple_New(nargs + (self != NULL));
    if (pos == NULL || (kw = PyDict_New()) == NULL) {
        goto out;
    }
    if (self) {
        PyTuple_SET_ITEM(pos, 0, Py_NewRef(self));
    }
    for (Py_ssize_t k = 0; k < nargs; k++) {
        PyTuple_SET_ITEM(pos, k + (self != NULL), Py_NewRef(args[k]));
    }
    for (Py_ssize_t k = 0; k < nkw; k++) {
        if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]) < 0) {
            goto out;
        }
    }
    res = PyObject_CallFunction(handler, "siOO", name, (int)kind, pos, kw);
out:
    Py_XDECREF(pos);
    Py_XDECREF(kw);
    return res;
}

PyObject *
mt_py_tf_slot(mt_op op, const char *dunder, PyObject *x, PyObject *y)
{
    /* PyTorch's operators are its methods (x + 1 is Tensor.add(x, 1), 2 * x is Tensor.mul(x, 2)),
     * except the reflected forms of the ops whose operands do not commute (2 - x is
     * Tensor.__rsub__(x, 2)) */
    bool reflected = y != NULL && !mt_py_is_tensor(x);
    bool commutes = op == MT_OP_add || op == MT_OP_mul || op == MT_OP_bitwise_and ||
                    op == MT_OP_bitwise_or || op == MT_OP_bitwise_xor;
    char name[32];
    if (reflected && !commutes) {
        snprintf(name, sizeof name, "__r%s__", dunder);
    } else {
        snprintf(name, sizeof name, "%s", mt_op_names[op]);
    }
    PyObject *self = reflected ? y : x, *other = reflected ? x : y;
    return mt_py_tf_call(name, MT_TF_METHOD, self, &other, other != NULL, NULL);
}

/* The body of the disabled handlers, called as (func, types, args=(), kwargs=None): func(*args,
 * **kwargs), with subclass dispatch off for `level` MT_TF_SUBCLASSES_DISABLED. */
static PyObject *
call_func(const char *who, PyObject *const *args, Py_ssize_t nargs, mt_py_tf_mode_t level)
{
    if (nargs < 2 || nargs > 4) {
        return PyErr_Format(PyExc_TypeError, "%s() takes 2 to 4 arguments (%zd given)", who, nargs);
    }
    PyObject *pos = nargs > 2 ? args[2] : NULL, *kw = nargs > 3 ? args[3] : NULL;
    PyObject *tuple = pos && pos != Py_None ? PySequence_Tuple(pos) : PyTuple_New(0);
    if (tuple == NULL) {
        return NULL;
    }
    mt_py_tf_mode_t was = mt_py_tf_state.disabled;
    if (was < level) {
        mt_py_tf_state.disabled = level;
    }
    PyObject *res = PyObject_Call(args[0], tuple, kw == Py_None ? NULL : kw);
    mt_py_tf_state.disabled = was;
    Py_DECREF(tuple);
    return res;
}

/* _C._disabled_torch_function_impl(func, types, args=(), kwargs=None): func called with
 * subclass dispatch off and its result kept as it is. A class whose __torch_function__ is this
 * function (nn.Parameter) is treated as a plain Tensor by the gate. */
static PyObject *
disabled_torch_function_impl(PyObject *unused, PyObject *const *args, Py_ssize_t nargs)
{
    (void)unused;
    return call_func("_disabled_torch_function_impl", args, nargs, MT_TF_SUBCLASSES_DISABLED);
}

/* _C._disabled_torch_dispatch_impl(func, types, args=(), kwargs=None): Tensor's own
 * __torch_dispatch__, which marks a class as not dispatching to Python
 * (python/python_dispatch.c); called, it runs func. */
static PyObject *
disabled_torch_dispatch_impl(PyObject *unused, PyObject *const *args, Py_ssize_t nargs)
{
    (void)unused;
    return call_func("_disabled_torch_dispatch_impl", args, nargs, MT_TF_ENABLED);
}

/* DisableTorchFunctionSubclass() and DisableTorchFunction(): context managers that turn
 * subclass dispatch (the first) or all of the protocol, modes too (the second), off on this
 * thread, and restore what was on when they exit. */
typedef struct {
    PyObject_HEAD mt_py_tf_mode_t level; /* the state inside */
    mt_py_tf_mode_t saved; /* the state outside, while entered */
} disable_obj;

static PyObject *
disable_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    disable_obj *d = (disable_obj *)self;
    d->saved = mt_py_tf_state.disabled;
    if (d->level > d->saved) {
        mt_py_tf_state.disabled = d->level;
    }
    Py_RETURN_NONE;
}

static PyObject *
disable_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    (void)nargs;
    mt_py_tf_state.disabled = ((disable_obj *)self)->saved;
    Py_RETURN_FALSE;
}

static PyMethodDef disable_methods[] = {
    {"__enter__", disable_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))disable_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

#define DISABLE_NEW(fn, lvl)                                                \
    static PyObject *fn(PyTypeObject *tp, PyObject *args, PyObject *kwargs) \
    {                                                                       \
        (void)args;                                                         \
        (void)kwargs;                                                       \
        disable_obj *d = (disable_obj *)tp->tp_alloc(tp, 0);                \
        if (d) {                                                            \
            d->level = (lvl);                                               \
            d->saved = MT_TF_ENABLED;                                       \
        }                                                                   \
        return (PyObject *)d;                                               \
    }
DISABLE_NEW(disable_subclass_new, MT_TF_SUBCLASSES_DISABLED)
DISABLE_NEW(disable_all_new, MT_TF_ALL_DISABLED)
#undef DISABLE_NEW

static PyTypeObject disable_subclass_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "minitorch._C.DisableTorchFunctionSubclass",
    .tp_basicsize = sizeof(disable_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Within it, Tensor subclasses' __torch_function__ are not called (modes still "
              "are).",
    .tp_new = disable_subclass_new,
    .tp_methods = disable_methods,
};

static PyTypeObject disable_all_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "minitorch._C.DisableTorchFunction",
    .tp_basicsize = sizeof(disable_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Within it, no __torch_function__ is called, of subclasses or of modes.",
    .tp_new = disable_all_new,
    .tp_methods = disable_methods,
};

/* _C._has_torch_function(args): the gate's answer for a sequence of arguments. */
static PyObject *
has_torch_function(PyObject *unused, PyObject *seq)
{
    (void)unused;
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of arguments");
    if (fast == NULL) {
        return NULL;
    }
    bool r = mt_py_tf_scan(NULL, PySequence_Fast_ITEMS(fast), PySequence_Fast_GET_SIZE(fast));
    Py_DECREF(fast);
    return PyBool_FromLong(r);
}

/* _C._set_torch_function_modes(n): the length of this thread's mode stack (overrides.py's). */
static PyObject *
set_torch_function_modes(PyObject *unused, PyObject *arg)
{
    (void)unused;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    int modes = n > 0 ? (int)n : 0;
    mt_py_tf_modes_anywhere += modes - mt_py_tf_state.modes; /* under the GIL */
    mt_py_tf_state.modes = modes;
    Py_RETURN_NONE;
}

static PyObject *
is_torch_function_enabled(PyObject *unused, PyObject *noargs)
{
    (void)unused;
    (void)noargs;
    return PyBool_FromLong(mt_py_tf_state.disabled == MT_TF_ENABLED);
}

static PyObject *
is_torch_function_mode_enabled(PyObject *unused, PyObject *noargs)
{
    (void)unused;
    (void)noargs;
    return PyBool_FromLong(mt_py_tf_state.disabled != MT_TF_ALL_DISABLED &&
                           mt_py_tf_state.modes > 0);
}

static PyMethodDef tf_functions[] = {
    {"_disabled_torch_function_impl", (PyCFunction)(void (*)(void))disabled_torch_function_impl,
     METH_FASTCALL,
     "A __torch_function__ that calls func with subclass dispatch off and does not convert "
     "its result; classes that use it (nn.Parameter) are treated as plain Tensors."},
    {"_disabled_torch_dispatch_impl", (PyCFunction)(void (*)(void))disabled_torch_dispatch_impl,
     METH_FASTCALL,
     "Tensor's __torch_dispatch__: a class that keeps it does not dispatch to Python."},
    {"_has_torch_function", has_torch_function, METH_O, NULL},
    {"_set_torch_function_modes", set_torch_function_modes, METH_O, NULL},
    {"_is_torch_function_enabled", is_torch_function_enabled, METH_NOARGS, NULL},
    {"_is_torch_function_mode_enabled", is_torch_function_mode_enabled, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int
mt_py_tf_init(PyObject *m)
{
    tf_name = PyUnicode_InternFromString("__torch_function__");
    if (tf_name == NULL || PyModule_AddFunctions(m, tf_functions) < 0 ||
        PyType_Ready(&disable_subclass_type) < 0 || PyType_Ready(&disable_all_type) < 0 ||
        PyModule_AddObjectRef(m, "DisableTorchFunctionSubclass",
                              (PyObject *)&disable_subclass_type) < 0 ||
        PyModule_AddObjectRef(m, "DisableTorchFunction", (PyObject *)&disable_all_type) < 0) {
        return -1;
    }
    disabled_impl = PyObject_GetAttrString(m, "_disabled_torch_function_impl");
    return disabled_impl ? 0 : -1;
}
