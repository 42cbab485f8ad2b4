/* torch.set_num_threads, get_num_threads, set_num_interop_threads, get_num_interop_threads: the
 * CPU's one thread pool (cpu/threads.c), with PyTorch's argument errors. */
#include "python/pyminitorch.h" /* Python.h first: it sets the feature-test macros */

#include <limits.h>
#include <string.h>

#include "core/threads.h"

/* n from an int (or a NumPy integer), not a bool, as PyTorch's THPUtils_checkLong; -1 with
 * PyTorch's RuntimeError (or Python's on overflow) otherwise. */
static int
positive_int(const char *fn, PyObject *o, int *n)
{
    const char *type = Py_TYPE(o)->tp_name;
    if (PyBool_Check(o) ||
        !(PyLong_Check(o) || (PyIndex_Check(o) && strncmp(type, "numpy.", 6) == 0))) {
        PyErr_Format(PyExc_RuntimeError, "%s expects an int, but got %s", fn, type);
        return -1;
    }
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (v <= 0) {
        PyErr_Format(PyExc_RuntimeError, "%s expects a positive integer", fn);
        return -1;
    }
    *n = v > INT_MAX ? INT_MAX : (int)v;
    return 0;
}

static PyObject *
py_set_num_threads(PyObject *m, PyObject *arg)
{
    (void)m;
    int n;
    if (positive_int("set_num_threads", arg, &n) < 0) {
        return NULL;
    }
    mt_set_num_threads(n);
    Py_RETURN_NONE;
}

static PyObject *
py_get_num_threads(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    return PyLong_FromLong(mt_get_num_threads());
}

static PyObject *
py_set_num_interop_threads(PyObject *m, PyObject *arg)
{
    (void)m;
    int n;
    if (positive_int("set_num_interop_threads", arg, &n) < 0) {
        return NULL;
    }
    if (!mt_set_num_interop_threads(n)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Error: cannot set number of interop threads after parallel work has "
                        "started or set_num_interop_threads called");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
py_get_num_interop_threads(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    return PyLong_FromLong(mt_get_num_interop_threads());
}

PyMethodDef mt_py_threads_functions[] = {
    {"set_num_threads", py_set_num_threads, METH_O,
     "set_num_threads(int)\n\nSets the number of threads used for intraop parallelism on CPU "
     "(minitorch's loops and OpenBLAS's, one pool)."},
    {"get_num_threads", py_get_num_threads, METH_NOARGS,
     "get_num_threads() -> int\n\nReturns the number of threads used for parallelizing CPU "
     "operations."},
    {"set_num_interop_threads", py_set_num_interop_threads, METH_O,
     "set_num_interop_threads(int)\n\nSets the number of threads used for interop parallelism; "
     "can only be called once (minitorch has no inter-op pool: the number is kept)."},
    {"get_num_interop_threads", py_get_num_interop_threads, METH_NOARGS,
     "get_num_interop_threads() -> int\n\nReturns the number of threads used for inter-op "
     "parallelism on CPU."},
    {NULL, NULL, 0, NULL},
};
