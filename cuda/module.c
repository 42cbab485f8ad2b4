/* PyInit__C_cuda: the only Python in the CUDA backend. It takes _C's C API from its capsule,
 * registers the CUDA kernels and allocator into _C, and exposes the device queries that
 * minitorch.cuda wraps. Everything else in cuda/ is plain C and CUDA. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cuda/capi_import.h"
#include "cuda/cuda.h"
#include "cuda/profile.h"

static PyObject *
raise_status(void)
{
    PyErr_SetString(PyExc_RuntimeError, mt_last_error());
    return NULL;
}

static int
device_arg(PyObject *args, int *out)
{
    int d = -1;
    if (!PyArg_ParseTuple(args, "|i", &d)) {
        return -1;
    }
    if (d < 0 && mt_cuda_check(cudaGetDevice(&d))) {
        raise_status();
        return -1;
    }
    *out = d;
    return 0;
}

static PyObject *
py_device_count(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyLong_FromLong(mt_cuda_device_count());
}

static PyObject *
py_unavailable_reason(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    const char *why = mt_cuda_unavailable_reason();
    if (why == NULL) {
        Py_RETURN_NONE;
    }
    return PyUnicode_FromString(why);
}

static PyObject *
py_current_device(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    int d = 0;
    if (mt_cuda_lazy_init() || mt_cuda_check(cudaGetDevice(&d))) {
        return raise_status();
    }
    return PyLong_FromLong(d);
}

static PyObject *
py_set_device(PyObject *m, PyObject *arg)
{
    (void)m;
    long d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (mt_cuda_use_device((mt_device){MT_CUDA, (int)d})) {
        return raise_status();
    }
    Py_RETURN_NONE;
}

static PyObject *
py_synchronize(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    if (mt_cuda_lazy_init()) {
        return raise_status();
    }
    if (device_arg(args, &d) < 0) {
        return NULL;
    }
    mt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mt_cuda_use_device((mt_device){MT_CUDA, d});
    if (st == MT_OK) {
        mt_cuda_span span = mt_cuda_runtime_begin("DeviceSynchronize");
        cudaError_t err = cudaDeviceSynchronize();
        mt_cuda_span_end(&span);
        st = mt_cuda_check(err);
    }
    Py_END_ALLOW_THREADS
    if (st) {
        return raise_status();
    }
    Py_RETURN_NONE;
}

static PyObject *
py_get_device_name(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    if (mt_cuda_lazy_init()) {
        return raise_status();
    }
    if (device_arg(args, &d) < 0) {
        return NULL;
    }
    struct cudaDeviceProp prop;
    if (mt_cuda_check(cudaGetDeviceProperties(&prop, d))) {
        return raise_status();
    }
    return PyUnicode_FromString(prop.name);
}

static PyObject *
py_memory_allocated(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    mt_allocator *a = mt_cuda_allocator();
    mt_alloc_stats s;
    a->stats(a, &s);
    return Py_BuildValue("(LL)", (long long)s.allocated_bytes, (long long)s.peak_allocated_bytes);
}

static PyMethodDef methods[] = {
    {"device_count", py_device_count, METH_NOARGS, "Number of usable CUDA devices (0 if none)."},
    {"unavailable_reason", py_unavailable_reason, METH_NOARGS,
     "CUDA's error string for why no device is usable, or None."},
    {"current_device", py_current_device, METH_NOARGS, NULL},
    {"set_device", py_set_device, METH_O, NULL},
    {"synchronize", py_synchronize, METH_VARARGS, NULL},
    {"get_device_name", py_get_device_name, METH_VARARGS, NULL},
    {"memory_allocated", py_memory_allocated, METH_NOARGS,
     "(allocated bytes, peak allocated bytes) of the CUDA allocator."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "minitorch._C_cuda", "The CUDA backend of minitorch.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__C_cuda(void)
{
    const mt_c_api *api = PyCapsule_Import(MT_CAPI_CAPSULE, 0);
    if (api == NULL) {
        return NULL;
    }
    char why[256];
    if (mt_cuda_set_api(api, why, sizeof(why)) < 0) {
        PyErr_SetString(PyExc_ImportError, why);
        return NULL;
    }
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) {
        return NULL;
    }
    mt_cuda_register();
    mt_cuda_profiler_register();
    return m;
}
