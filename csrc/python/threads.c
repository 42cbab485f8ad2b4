/* torch.set_num_threads, get_num_threads, set_num_interop_threads, get_num_interop_threads: the
 * CPU's one thread pool (cpu/threads.c), with PyTorch's argument errors. */
#include "python/pyminitorch.h" /* Python.h first: it sets the feature-test macros */

#include <limits.h>
#include <string.h>

#include "core/threads.h"
#include "cpu/vmath_avx512.h"

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

/* _set_vmath_avx512(bool) -> bool: float32 exp and log through their AVX-512 loops (where
 * the CPU has AVX-512) or vmath.h's portable ones, which AVX2-only CPUs run; for tests. */
static PyObject *
py_set_vmath_avx512(PyObject *m, PyObject *arg)
{
    (void)m;
    const int on = PyObject_IsTrue(arg);
    if (on < 0) {
        return NULL;
    }
    return PyBool_FromLong(mt_cpu_set_vmath_avx512(on));
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
    {"_set_vmath_avx512", py_set_vmath_avx512, METH_O,
     "_set_vmath_avx512(on) -> whether float32 exp and log now run their AVX-512 loops"},
    {NULL, NULL, 0, NULL},
};
