/* The C API capsule minitorch._C._C_API (capi/capi.h) and the hooks a plug-in's Python side
 * needs (the class of out-of-memory errors). The table is static: it lives as long as _C. */
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

static PyObject *
py_set_oom_error(PyObject *m, PyObject *cls)
{
    (void)m;
    if (!PyType_Check(cls) ||
        !PyType_IsSubtype((PyTypeObject *)cls, (PyTypeObject *)PyExc_RuntimeError)) {
        PyErr_SetString(PyExc_TypeError, "the out-of-memory error must subclass RuntimeError");
        return NULL;
    }
    mt_py_set_oom_error(cls);
    Py_RETURN_NONE;
}

static PyMethodDef capi_methods[] = {
    {"_set_oom_error", py_set_oom_error, METH_O,
     "Sets the class raised when a device allocation fails (minitorch.cuda.OutOfMemoryError)."},
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
