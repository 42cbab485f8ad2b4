/* The C API capsule minitorch._C._C_API (capi/capi.h) and the hooks a plug-in's Python side
 * needs (the classes of out-of-memory and accelerator errors). The table is static: it lives as long as _C. */
#include "python/pyminitorch.h"

#include "capi/capi.h"

static const mt_c_api api = {.version = MT_CAPI_VERSION,
                             .size = (int)sizeof(mt_c_api),
                             .num_ops = MT_NUM_OPS,
                             .op_names = mt_op_names,
                             .mt_fail = mt_fail,
#define MT_CAPI_INIT(ret, name, params, args) .name = name,
#define MT_CAPI_VINIT(name, params, args) .name = name,
                             MT_CAPI_FUNCTIONS(MT_CAPI_INIT, MT_CAPI_VINIT)
#undef MT_CAPI_INIT
#undef MT_CAPI_VINIT
};

/* Registers cls, a subclass of RuntimeError, with set; what names the error in the message */
static PyObject *
set_error_class(PyObject *cls, void (*set)(PyObject *), const char *what)
{
    if (!PyType_Check(cls) ||
        !PyType_IsSubtype((PyTypeObject *)cls, (PyTypeObject *)PyExc_RuntimeError)) {
        PyErr_Format(PyExc_TypeError, "the %s error must subclass RuntimeError", what);
        return NULL;
    }
    set(cls);
    Py_RETURN_NONE;
}

static PyObject *
py_set_oom_error(PyObject *m, PyObject *cls)
{
    (void)m;
    return set_error_class(cls, mt_py_set_oom_error, "out-of-memory");
}

static PyObject *
py_set_accelerator_error(PyObject *m, PyObject *cls)
{
    (void)m;
    return set_error_class(cls, mt_py_set_accelerator_error, "accelerator");
}

static PyMethodDef capi_methods[] = {
    {"_set_oom_error", py_set_oom_error, METH_O,
     "Sets the class raised when a device allocation fails (minitorch.cuda.OutOfMemoryError)."},
    {"_set_accelerator_error", py_set_accelerator_error, METH_O,
     "Sets the class raised when a CUDA call fails (minitorch.AcceleratorError)."},
    {NULL, NULL, 0, NULL},
};

int
mt_py_capi_init(PyObject *m)
{
    /* const is dropped for the capsule's sake only: plug-ins read the table, never write it. */
    PyObject *cap = PyCapsule_New((void *)&api, MT_CAPI_CAPSULE, NULL);
    if (cap == NULL) {
        return -1;
    }
    int rc = PyModule_AddObjectRef(m, "_C_API", cap);
    Py_DECREF(cap);
    if (rc < 0) {
        return -1;
    }
    return PyModule_AddFunctions(m, capi_methods);
}
