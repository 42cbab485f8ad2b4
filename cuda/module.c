/* PyInit__C_cuda (PyInit__C_cuda_emu in the emulated build): the only Python in the CUDA
 * backend. It takes _C's C API from its capsule, hands _C the CUDA backend (mt_cuda_register:
 * kernels, memory, device and profiler hooks, dispatch/backend.h), and exposes the device queries that minitorch.cuda wraps. Everything else in cuda/ is
 * plain C and CUDA. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "cuda/capi_import.h"
#include "cuda/cuda.h"
#include "cuda/handles.h"
#include "cuda/nccl.h"
#include "cuda/ops.h"
#include "cuda/profile.h"

/* The recorded failure: a failed CUDA call's ("CUDA error: ...", mt_cuda_check's and the
 * device-side asserts') as PyTorch's C10_CUDA_CHECK raises it, a minitorch.AcceleratorError;
 * the others (no device, a bad argument) a RuntimeError, as PyTorch's */
static PyObject *
raise_status(void)
{
    const bool cuda_call = strncmp(mt_last_error(), "CUDA error: ", 12) == 0;
    PyObject *m = cuda_call ? PyImport_ImportModule("minitorch") : NULL;
    PyObject *cls = m ? PyObject_GetAttrString(m, "AcceleratorError") : NULL;
    PyErr_Clear();
    PyErr_SetString(cls ? cls : PyExc_RuntimeError, mt_last_error());
    Py_XDECREF(cls);
    Py_XDECREF(m);
    return NULL;
}

static int
device_arg(PyObject *args, int *out)
{
    int d = -1;
    if (!PyArg_ParseTuple(args, "|i", &d)) {
        return -1;
    }
    *out = d < 0 ? mt_cuda_selected_device() : d;
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
    if (mt_cuda_lazy_init()) {
        return raise_status();
    }
    return PyLong_FromLong(mt_cuda_selected_device());
}

static PyObject *
py_set_device(PyObject *m, PyObject *arg)
{
    (void)m;
    long d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (d < 0 || d > INT_MAX || mt_cuda_select_device((int)d)) {
        return d < 0 || d > INT_MAX ? PyErr_Format(PyExc_ValueError, "invalid device index %ld", d)
                                    : raise_status();
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
    Py_BEGIN_ALLOW_THREADS st = mt_cuda_use_device((mt_device){MT_CUDA, d});
    if (st == MT_OK) {
        mt_cuda_span span = mt_cuda_runtime_begin("DeviceSynchronize");
        cudaError_t err = cudaDeviceSynchronize();
        mt_cuda_span_end(&span);
        st = mt_cuda_check(err);
    }
    if (st == MT_OK) {
        st = mt_cuda_assert_check(); /* a failed device-side assertion surfaces here */
    }
    Py_END_ALLOW_THREADS if (st)
    {
        return raise_status();
    }
    Py_RETURN_NONE;
}

/* *prop = cudaGetDeviceProperties of the device args name; -1 with an exception set on failure */
static int
device_properties(PyObject *args, struct cudaDeviceProp *prop)
{
    int d;
    if (mt_cuda_lazy_init()) {
        raise_status();
        return -1;
    }
    if (device_arg(args, &d) < 0) {
        return -1;
    }
    if (mt_cuda_check(cudaGetDeviceProperties(prop, d))) {
        raise_status();
        return -1;
    }
    return 0;
}

static PyObject *
py_get_device_name(PyObject *m, PyObject *args)
{
    (void)m;
    struct cudaDeviceProp prop;
    if (device_properties(args, &prop) < 0) {
        return NULL;
    }
    return PyUnicode_FromString(prop.name);
}

/* (name, total_memory, major, minor, multi_processor_count) of cudaGetDeviceProperties */
static PyObject *
py_get_device_properties(PyObject *m, PyObject *args)
{
    (void)m;
    struct cudaDeviceProp prop;
    if (device_properties(args, &prop) < 0) {
        return NULL;
    }
    return Py_BuildValue("(sKiii)", prop.name, (unsigned long long)prop.totalGlobalMem, prop.major,
                         prop.minor, prop.multiProcessorCount);
}

static PyObject *
py_is_initialized(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyBool_FromLong(mt_cuda_is_initialized());
}

/* Handles (streams, events, device pointers) travel to Python as ints. */
#define H(x) PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)(x))

static PyObject *
py_current_stream(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    if (!PyArg_ParseTuple(args, "i", &d)) {
        return NULL;
    }
    return H(mt_cuda_current_stream(d));
}

static PyObject *
py_set_current_stream(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    unsigned long long s;
    if (!PyArg_ParseTuple(args, "iK", &d, &s)) {
        return NULL;
    }
    mt_cuda_set_current_stream(d, (cudaStream_t)(uintptr_t)s);
    Py_RETURN_NONE;
}

static PyObject *
py_stream_from_pool(PyObject *m, PyObject *args)
{
    (void)m;
    int d, priority;
    cudaStream_t s;
    if (!PyArg_ParseTuple(args, "ii", &d, &priority)) {
        return NULL;
    }
    if (mt_cuda_stream_from_pool(d, priority, &s)) {
        return raise_status();
    }
    return H(s);
}

/* query: whether the work queued on a stream (is_stream) or before an event is done. */
static PyObject *
query(PyObject *args, bool is_stream)
{
    unsigned long long h;
    if (!PyArg_ParseTuple(args, "K", &h)) {
        return NULL;
    }
    cudaError_t err = is_stream ? cudaStreamQuery((cudaStream_t)(uintptr_t)h)
                                : cudaEventQuery((cudaEvent_t)(uintptr_t)h);
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        Py_RETURN_FALSE;
    }
    if (mt_cuda_check(err)) {
        return raise_status();
    }
    Py_RETURN_TRUE;
}

static PyObject *
py_stream_query(PyObject *m, PyObject *args)
{
    (void)m;
    return query(args, true);
}

static PyObject *
py_event_query(PyObject *m, PyObject *args)
{
    (void)m;
    return query(args, false);
}

static PyObject *
synchronize_handle(PyObject *args, bool is_stream)
{
    unsigned long long h;
    if (!PyArg_ParseTuple(args, "K", &h)) {
        return NULL;
    }
    mt_status st;
    Py_BEGIN_ALLOW_THREADS st = is_stream ? mt_cuda_check(
                                                cudaStreamSynchronize((cudaStream_t)(uintptr_t)h))
                                          : mt_cuda_check(
                                                cudaEventSynchronize((cudaEvent_t)(uintptr_t)h));
    if (st == MT_OK) {
        st = mt_cuda_assert_check(); /* a failed device-side assertion surfaces here */
    }
    Py_END_ALLOW_THREADS if (st)
    {
        return raise_status();
    }
    Py_RETURN_NONE;
}

static PyObject *
py_stream_synchronize(PyObject *m, PyObject *args)
{
    (void)m;
    return synchronize_handle(args, true);
}

static PyObject *
py_event_synchronize(PyObject *m, PyObject *args)
{
    (void)m;
    return synchronize_handle(args, false);
}

static PyObject *
py_stream_wait_event(PyObject *m, PyObject *args)
{
    (void)m;
    unsigned long long s, e;
    if (!PyArg_ParseTuple(args, "KK", &s, &e)) {
        return NULL;
    }
    if (mt_cuda_check(
            cudaStreamWaitEvent((cudaStream_t)(uintptr_t)s, (cudaEvent_t)(uintptr_t)e, 0))) {
        return raise_status();
    }
    Py_RETURN_NONE;
}

/* DLPack export (Tensor.__dlpack__(stream=...)): the consumer's stream waits for the work
 * queued so far on the calling thread's current stream of device, through an event, unless it
 * is that stream. consumer is the protocol's number: 1 the legacy default stream
 * (cudaStreamLegacy), 2 the per-thread default stream (cudaStreamPerThread), else a handle. */
static PyObject *
py_dlpack_stream_wait(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    unsigned long long s;
    if (!PyArg_ParseTuple(args, "iK", &d, &s)) {
        return NULL;
    }
    cudaStream_t current = mt_cuda_current_stream(d);
    cudaStream_t consumer = (cudaStream_t)(uintptr_t)s;
    /* minitorch is built without per-thread default streams: its NULL stream is the legacy one */
    if (consumer == current || (current == NULL && consumer == cudaStreamLegacy)) {
        Py_RETURN_NONE;
    }
    cudaEvent_t e;
    mt_status st = mt_cuda_event_create(d, false, false, &e);
    if (st == MT_OK) {
        st = mt_cuda_check(cudaEventRecord(e, current));
        if (st == MT_OK) {
            st = mt_cuda_check(cudaStreamWaitEvent(consumer, e, 0));
        }
        /* the wait already holds the recorded work; CUDA frees the event once it completes.
         * Checked too: an unchecked failure would stay CUDA's last error and be blamed on the
         * next kernel launch. */
        if (st == MT_OK) {
            st = mt_cuda_check(cudaEventDestroy(e));
        } else {
            (void)cudaEventDestroy(e); /* the first failure is the one reported */
            (void)cudaGetLastError();
        }
    }
    if (st) {
        return raise_status();
    }
    Py_RETURN_NONE;
}

static PyObject *
py_event_create(PyObject *m, PyObject *args)
{
    (void)m;
    int d, timing, blocking;
    cudaEvent_t e;
    if (!PyArg_ParseTuple(args, "ipp", &d, &timing, &blocking)) {
        return NULL;
    }
    if (mt_cuda_event_create(d, timing, blocking, &e)) {
        return raise_status();
    }
    return H(e);
}

static PyObject *
py_event_record(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    unsigned long long e, s;
    if (!PyArg_ParseTuple(args, "iKK", &d, &e, &s)) {
        return NULL;
    }
    if (mt_cuda_use_device((mt_device){MT_CUDA, d}) ||
        mt_cuda_check(cudaEventRecord((cudaEvent_t)(uintptr_t)e, (cudaStream_t)(uintptr_t)s))) {
        return raise_status();
    }
    Py_RETURN_NONE;
}

static PyObject *
py_event_elapsed_time(PyObject *m, PyObject *args)
{
    (void)m;
    unsigned long long a, b;
    float ms = 0;
    if (!PyArg_ParseTuple(args, "KK", &a, &b)) {
        return NULL;
    }
    if (mt_cuda_check(
            cudaEventElapsedTime(&ms, (cudaEvent_t)(uintptr_t)a, (cudaEvent_t)(uintptr_t)b))) {
        return raise_status();
    }
    return PyFloat_FromDouble(ms);
}

static PyObject *
py_event_destroy(PyObject *m, PyObject *args)
{
    (void)m;
    unsigned long long e;
    if (!PyArg_ParseTuple(args, "K", &e)) {
        return NULL;
    }
    (void)cudaEventDestroy((cudaEvent_t)(uintptr_t)e); /* from __del__: nothing to report to */
    (void)cudaGetLastError();
    Py_RETURN_NONE;
}

static PyObject *
py_record_stream(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    unsigned long long p, s;
    if (!PyArg_ParseTuple(args, "iKK", &d, &p, &s)) {
        return NULL;
    }
    if (mt_cuda_record_stream(d, (void *)(uintptr_t)p, (cudaStream_t)(uintptr_t)s)) {
        return raise_status();
    }
    Py_RETURN_NONE;
}

static PyObject *
py_caching_alloc(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    unsigned long long n, s;
    void *p;
    /* n is checked non-negative by minitorch.cuda.caching_allocator_alloc, its one caller; a
     * negative one wraps to a size no device has (OutOfMemoryError) */
    if (!PyArg_ParseTuple(args, "iKK", &d, &n, &s)) {
        return NULL;
    }
    mt_status st = mt_cuda_caching_alloc(d, (size_t)n, (cudaStream_t)(uintptr_t)s, &p);
    if (st == MT_ECUDA_OOM) {
        /* minitorch.cuda.OutOfMemoryError, as a tensor allocation raises (torch's class too) */
        PyObject *mod = PyImport_ImportModule("minitorch.cuda");
        PyObject *cls = mod ? PyObject_GetAttrString(mod, "OutOfMemoryError") : NULL;
        Py_XDECREF(mod);
        if (cls != NULL) {
            PyErr_SetString(cls, mt_last_error());
            Py_DECREF(cls);
        }
        return NULL;
    }
    if (st) {
        return raise_status();
    }
    return H(p);
}

static PyObject *
py_caching_free(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    unsigned long long p;
    if (!PyArg_ParseTuple(args, "iK", &d, &p)) {
        return NULL;
    }
    if (mt_cuda_caching_free(d, (void *)(uintptr_t)p)) {
        return raise_status();
    }
    Py_RETURN_NONE;
}

static PyObject *
py_mem_get_info(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    size_t free_b = 0, total_b = 0;
    if (!PyArg_ParseTuple(args, "i", &d)) {
        return NULL;
    }
    if (mt_cuda_use_device((mt_device){MT_CUDA, d}) ||
        mt_cuda_check(cudaMemGetInfo(&free_b, &total_b))) {
        return raise_status();
    }
    return Py_BuildValue("(nn)", (Py_ssize_t)free_b, (Py_ssize_t)total_b);
}

#ifdef MT_CUDA_EMU
unsigned long long mt_emu_sync_count(void); /* cuda/emu/emu.h */

static PyObject *
py_emu_sync_count(PyObject *m, PyObject *args)
{
    (void)m;
    (void)args;
    return PyLong_FromUnsignedLongLong(mt_emu_sync_count());
}
#endif
/* set_library_flags(benchmark, deterministic, matmul_allow_tf32, cudnn_enabled,
 * cudnn_allow_tf32): torch.backends' switches, as minitorch/backends pushes them after each
 * change */
static PyObject *
py_set_library_flags(PyObject *m, PyObject *args)
{
    (void)m;
    int benchmark, deterministic, tf32, enabled = 1, conv_tf32 = 1;
    if (!PyArg_ParseTuple(args, "ppp|pp", &benchmark, &deterministic, &tf32, &enabled,
                          &conv_tf32)) {
        return NULL;
    }
    mt_cuda_set_lib_flags((benchmark ? MT_CUDNN_BENCHMARK : 0) |
                          (deterministic ? MT_CUDNN_DETERMINISTIC : 0) |
                          (tf32 ? MT_MATMUL_ALLOW_TF32 : 0) | (enabled ? 0 : MT_CUDNN_DISABLED) |
                          (conv_tf32 ? 0 : MT_CUDNN_NO_TF32));
    Py_RETURN_NONE;
}

/* ---- NCCL (nccl.h), for minitorch/distributed/_nccl.py: handles and pointers as integers ---- */

static PyObject *
py_nccl_load(PyObject *m, PyObject *args)
{
    (void)m;
    const char *path = NULL;
    int version = 0;
    if (!PyArg_ParseTuple(args, "|z", &path)) {
        return NULL;
    }
    if (mt_nccl_load(path, &version)) {
        return raise_status();
    }
    return PyLong_FromLong(version);
}

static PyObject *
py_nccl_unique_id(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    ncclUniqueId id;
    if (mt_nccl_unique_id(&id)) {
        return raise_status();
    }
    return PyBytes_FromStringAndSize(id.internal, sizeof(id.internal));
}

static PyObject *
py_nccl_comm_init(PyObject *m, PyObject *args)
{
    (void)m;
    int device, nranks, rank;
    const char *raw;
    Py_ssize_t len;
    double timeout_s;
    if (!PyArg_ParseTuple(args, "iiy#id", &device, &nranks, &raw, &len, &rank, &timeout_s)) {
        return NULL;
    }
    if (len != NCCL_UNIQUE_ID_BYTES) {
        PyErr_Format(PyExc_ValueError, "an NCCL unique id has %d bytes, got %zd",
                     NCCL_UNIQUE_ID_BYTES, len);
        return NULL;
    }
    ncclUniqueId id;
    memcpy(id.internal, raw, sizeof(id.internal));
    ncclComm_t comm = NULL;
    mt_status st;
    Py_BEGIN_ALLOW_THREADS st = mt_nccl_comm_init(device, nranks, &id, rank, timeout_s, &comm);
    Py_END_ALLOW_THREADS if (st)
    {
        return raise_status();
    }
    return PyLong_FromVoidPtr(comm);
}

static PyObject *
py_nccl_comm_free(PyObject *m, PyObject *args)
{
    (void)m;
    unsigned long long h;
    int abort = 0;
    if (!PyArg_ParseTuple(args, "K|p", &h, &abort)) {
        return NULL;
    }
    if (mt_nccl_comm_free((ncclComm_t)(uintptr_t)h, abort)) {
        return raise_status();
    }
    Py_RETURN_NONE;
}

static PyObject *
py_nccl_async_error(PyObject *m, PyObject *args)
{
    (void)m;
    unsigned long long h;
    int code = 0;
    const char *words = "";
    if (!PyArg_ParseTuple(args, "K", &h)) {
        return NULL;
    }
    if (mt_nccl_async_error((ncclComm_t)(uintptr_t)h, &code, &words)) {
        return raise_status();
    }
    return Py_BuildValue("(is)", code, words);
}

static PyObject *
py_nccl_run(PyObject *m, PyObject *args)
{
    (void)m;
    unsigned long long h, send, recv, count;
    int device, kind, dtype, op, root;
    if (!PyArg_ParseTuple(args, "KiiKKKiii", &h, &device, &kind, &send, &recv, &count, &dtype, &op,
                          &root)) {
        return NULL;
    }
    mt_nccl_call call = {(mt_nccl_kind)kind,
                         (const void *)(uintptr_t)send,
                         (void *)(uintptr_t)recv,
                         (size_t)count,
                         dtype,
                         op,
                         root};
    mt_status st;
    Py_BEGIN_ALLOW_THREADS st = mt_nccl_run((ncclComm_t)(uintptr_t)h, device, &call);
    Py_END_ALLOW_THREADS if (st)
    {
        return raise_status();
    }
    Py_RETURN_NONE;
}

static PyObject *
py_nccl_group(PyObject *m, PyObject *args)
{
    (void)m;
    int start;
    if (!PyArg_ParseTuple(args, "p", &start)) {
        return NULL;
    }
    mt_status st;
    Py_BEGIN_ALLOW_THREADS st = mt_nccl_group(start);
    Py_END_ALLOW_THREADS if (st)
    {
        return raise_status();
    }
    Py_RETURN_NONE;
}

/* kernels() -> {op: kernel name}: the backend's own kernels as its table (ops.c, generated from
 * ops.def's cuda column) hands them to _C */
static PyObject *
py_kernels(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    PyObject *d = PyDict_New();
    for (int op = 0; d && op < MT_NUM_OPS; op++) {
        const char *name = mt_cuda_kernels[op].name;
        PyObject *v = name ? PyUnicode_FromString(name) : NULL;
        if (name && (v == NULL || PyDict_SetItemString(d, mt_cuda_op_name((mt_op)op), v) < 0)) {
            Py_CLEAR(d);
        }
        Py_XDECREF(v);
    }
    return d;
}

static PyMethodDef methods[] = {
    {"kernels", py_kernels, METH_NOARGS,
     "The backend's own kernels by op (ops.def's cuda column): {op: kernel name}."},
#ifdef MT_CUDA_EMU
    {"emu_sync_count", py_emu_sync_count, METH_NOARGS,
     "How many times the host has waited for the emulated device (synchronize calls and "
     "blocking device to host copies)."},
#endif
    {"device_count", py_device_count, METH_NOARGS, "Number of usable CUDA devices (0 if none)."},
    {"unavailable_reason", py_unavailable_reason, METH_NOARGS,
     "CUDA's error string for why no device is usable, or None."},
    {"current_device", py_current_device, METH_NOARGS, NULL},
    {"set_device", py_set_device, METH_O, NULL},
    {"synchronize", py_synchronize, METH_VARARGS, NULL},
    {"get_device_name", py_get_device_name, METH_VARARGS, NULL},
    {"get_device_properties", py_get_device_properties, METH_VARARGS,
     "get_device_properties(device) -> (name, total_memory, major, minor, multi_processor_count)"},
    {"is_initialized", py_is_initialized, METH_NOARGS, "Whether a device has been made current."},
    {"current_stream", py_current_stream, METH_VARARGS, "current_stream(device) -> handle"},
    {"set_current_stream", py_set_current_stream, METH_VARARGS, NULL},
    {"stream_from_pool", py_stream_from_pool, METH_VARARGS, "stream_from_pool(device, priority)"},
    {"stream_query", py_stream_query, METH_VARARGS, NULL},
    {"stream_synchronize", py_stream_synchronize, METH_VARARGS, NULL},
    {"stream_wait_event", py_stream_wait_event, METH_VARARGS, "stream_wait_event(stream, event)"},
    {"dlpack_stream_wait", py_dlpack_stream_wait, METH_VARARGS,
     "dlpack_stream_wait(device, consumer_stream)"},
    {"event_create", py_event_create, METH_VARARGS, "event_create(device, timing, blocking)"},
    {"event_record", py_event_record, METH_VARARGS, "event_record(device, event, stream)"},
    {"event_query", py_event_query, METH_VARARGS, NULL},
    {"event_synchronize", py_event_synchronize, METH_VARARGS, NULL},
    {"event_elapsed_time", py_event_elapsed_time, METH_VARARGS, "milliseconds from a to b"},
    {"event_destroy", py_event_destroy, METH_VARARGS, NULL},
    {"record_stream", py_record_stream, METH_VARARGS, "record_stream(device, block, stream)"},
    {"caching_alloc", py_caching_alloc, METH_VARARGS, "caching_alloc(device, size, stream)"},
    {"caching_free", py_caching_free, METH_VARARGS, "caching_free(device, ptr)"},
    {"mem_get_info", py_mem_get_info, METH_VARARGS, "mem_get_info(device) -> (free, total)"},
    {"set_library_flags", py_set_library_flags, METH_VARARGS,
     "set_library_flags(cudnn_benchmark, cudnn_deterministic, matmul_allow_tf32)"},
    {"nccl_load", py_nccl_load, METH_VARARGS, "nccl_load(path=None) -> NCCL's version code"},
    {"nccl_unique_id", py_nccl_unique_id, METH_NOARGS, "ncclGetUniqueId, as 128 bytes"},
    {"nccl_comm_init", py_nccl_comm_init, METH_VARARGS,
     "nccl_comm_init(device, nranks, unique_id, rank, timeout_s) -> comm"},
    {"nccl_comm_free", py_nccl_comm_free, METH_VARARGS, "nccl_comm_free(comm, abort=False)"},
    {"nccl_async_error", py_nccl_async_error, METH_VARARGS,
     "nccl_async_error(comm) -> (code, words)"},
    {"nccl_run", py_nccl_run, METH_VARARGS,
     "nccl_run(comm, device, kind, send, recv, count, dtype, op, root_or_peer)"},
    {"nccl_group", py_nccl_group, METH_VARARGS,
     "nccl_group(start): ncclGroupStart or ncclGroupEnd"},
    {NULL, NULL, 0, NULL},
};

/* The emulated build (cuda/emu/, setup.py) is the same backend as another module, so that
 * both may be built side by side; MINITORCH_CUDA_EMU=1 makes minitorch.cuda load it. */
#ifdef MT_CUDA_EMU
#define MT_CUDA_MODULE "minitorch._C_cuda_emu"
#define MT_CUDA_INIT PyInit__C_cuda_emu
#else
#define MT_CUDA_MODULE "minitorch._C_cuda"
#define MT_CUDA_INIT PyInit__C_cuda
#endif

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    MT_CUDA_MODULE,
    "The CUDA backend of minitorch.",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
MT_CUDA_INIT(void)
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
#ifdef MT_CUDA_CUDNN
    const int has_cudnn = 1;
#else
    const int has_cudnn = 0;
#endif
#ifdef MT_CUDA_CUBLAS
    const int has_cublas = 1;
#else
    const int has_cublas = 0;
#endif
    /* which libraries it was built with: conv2d is on cuDNN, the products on cuBLAS, or each on
     * the host round trip */
#ifdef MT_CUDA_EMU
    const int emulated = 1;
#else
    const int emulated = 0;
#endif
    if (PyModule_AddIntConstant(m, "has_cudnn", has_cudnn) < 0 ||
        PyModule_AddIntConstant(m, "has_cublas", has_cublas) < 0 ||
        PyModule_AddIntConstant(m, "emulated", emulated) < 0 ||
        (has_cudnn && PyModule_AddIntConstant(m, "cudnn_version", mt_cuda_cudnn_version()) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    if (mt_cuda_register()) {
        PyErr_SetString(PyExc_ImportError, mt_last_error());
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
