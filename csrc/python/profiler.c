/* The profiler's bindings: start and stop a recording, Python ranges, and the events as tuples.
 *
 * minitorch/profiler/ builds every view (tables, Chrome trace, journey) from the tuples that
 * _trace_stop returns; nothing here aggregates. */
#include "python/pyminitorch.h"

#include "profiler/trace.h"

#define MT_STACK_FRAMES 8 /* with_stack keeps the innermost frames only */

/* mt_trace_stack_fn: "file(line): function" per frame, innermost first, as PyTorch's
 * FunctionEvent.stack. The caller may have released the GIL (an op running without it). */
static void
python_stack(char *buf, size_t n)
{
    buf[0] = '\0';
    PyGILState_STATE gil = PyGILState_Ensure();
    PyFrameObject *f = PyThreadState_GetFrame(PyThreadState_Get());
    size_t len = 0;
    for (int k = 0; f && k < MT_STACK_FRAMES; k++) {
        PyCodeObject *code = PyFrame_GetCode(f);
        const char *file = PyUnicode_AsUTF8(code->co_filename);
        const char *func = PyUnicode_AsUTF8(code->co_name);
        if (file && func && len < n) {
            int w = snprintf(buf + len, n - len, "%s%s(%d): %s", len ? "\n" : "", file,
                             PyFrame_GetLineNumber(f), func);
            if (w < 0 || (size_t)w >= n - len) {
                buf[len] = '\0'; /* a frame that does not fit is left out whole */
                Py_DECREF(code);
                Py_DECREF(f);
                f = NULL;
                break;
            }
            len += (size_t)w;
        }
        PyErr_Clear(); /* an undecodable name is left out */
        Py_DECREF(code);
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    Py_XDECREF(f);
    PyGILState_Release(gil);
}

static PyObject *
py_trace_start(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"record_shapes", "profile_memory", "with_stack",
                             "cuda",          "with_flops",     NULL};
    int shapes = 0, memory = 0, stack = 0, cuda = 0, flops = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|ppppp:_trace_start", kwlist, &shapes, &memory,
                                     &stack, &cuda, &flops)) {
        return NULL;
    }
    mt_trace_stack_fn = python_stack;
    if (cuda) {
        mt_trace_gpu_start(); /* before the CPU clock starts: the device's time base */
    }
    mt_trace_start_with((mt_trace_config){shapes != 0, memory != 0, stack != 0, flops != 0});
    Py_RETURN_NONE;
}

static PyObject *
event_tuple(const mt_trace_recording *r, const mt_trace_event *e)
{
    return Py_BuildValue("(isssdLLLssLKiiiLss)", (int)e->depth, mt_layer_names[e->layer],
                         mt_trace_name(r, e), e->detail, (e->end_ns - e->start_ns) / 1000.0,
                         (long long)e->start_ns, (long long)e->end_ns, (long long)e->tid,
                         mt_trace_text(r, e->shapes_at), mt_trace_text(r, e->dtypes_at),
                         (long long)e->bytes, (unsigned long long)e->ptr, (int)e->device.type,
                         e->device.index, (int)e->cache, (long long)e->corr,
                         mt_trace_text(r, e->stack_at), mt_trace_text(r, e->flop_args_at));
}

static PyObject *
py_trace_stop(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    mt_trace_recording r;
    int rc = mt_trace_stop(&r);
    Py_BEGIN_ALLOW_THREADS
    mt_trace_gpu_stop(); /* waits for the device: its events' times resolve */
    Py_END_ALLOW_THREADS if (rc < 0)
    {
        return PyErr_NoMemory();
    }
    PyObject *list = PyList_New(r.nevents);
    for (int k = 0; list && k < r.nevents; k++) {
        PyObject *item = event_tuple(&r, &r.events[k]);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, k, item);
    }
    mt_trace_recording_free(&r);
    return list;
}

static PyObject *
py_trace_enabled(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyBool_FromLong(mt_trace_on);
}

static PyObject *
py_trace_enter(PyObject *m, PyObject *args)
{
    (void)m;
    const char *name, *kind;
    long long bytes = 0;
    if (!PyArg_ParseTuple(args, "ss|L:_trace_enter", &name, &kind, &bytes)) {
        return NULL;
    }
    if (mt_trace_on) {
        mt_trace_enter_copy(MT_LAYER_PYTHON, name,
                            kind[0] == 'u' ? "user_annotation" : "nn.Module");
        if (bytes) {
            mt_trace_set_bytes(bytes);
        }
    }
    Py_RETURN_NONE;
}

static PyObject *
py_trace_exit(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    if (mt_trace_on) {
        mt_trace_exit();
    }
    Py_RETURN_NONE;
}

static PyObject *
py_trace_gpu_events(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    int n = 0;
    mt_trace_gpu_event *ev = mt_trace_gpu_take(&n);
    PyObject *list = PyList_New(n);
    for (int k = 0; list && k < n; k++) {
        const mt_trace_gpu_event *e = &ev[k];
        PyObject *item = Py_BuildValue("(isiiLLL)", e->kind, e->name, e->device, e->stream,
                                       (long long)e->corr, (long long)e->start_ns,
                                       (long long)e->end_ns);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, k, item);
    }
    mt_trace_gpu_events_free(ev, n);
    return list;
}

/* Test only: what a backend reports, so the GPU views are tested on machines without one. */
static PyObject *
py_trace_gpu_inject(PyObject *m, PyObject *args)
{
    (void)m;
    int kind, device, stream;
    const char *name;
    long long corr, start, end;
    if (!PyArg_ParseTuple(args, "isiiLLL:_trace_gpu_inject", &kind, &name, &device, &stream, &corr,
                          &start, &end)) {
        return NULL;
    }
    mt_trace_gpu_event_add(kind, name, device, stream, corr, start, end);
    Py_RETURN_NONE;
}

/* Test only: a Runtime range tagged with a fresh correlation id, as a backend's launch makes;
 * returns the id. */
static PyObject *
py_trace_runtime_inject(PyObject *m, PyObject *arg)
{
    (void)m;
    (void)arg;
    int64_t corr = mt_trace_next_correlation();
    if (mt_trace_on) {
        mt_trace_enter(MT_LAYER_RUNTIME, "LaunchKernel", "CUDA");
        mt_trace_set_correlation(corr);
        mt_trace_exit();
    }
    return PyLong_FromLongLong((long long)corr);
}

/* fn(*args, **kwargs) inside a range of layer named name (copied) when recording. The range
 * closes only if it was opened (a recording that starts inside the call does not see it). */
static PyObject *
traced_call(mt_layer layer, const char *name, const char *detail, PyObject *const *args)
{
    if (!PyTuple_Check(args[2]) || (args[3] != Py_None && !PyDict_Check(args[3]))) {
        PyErr_SetString(PyExc_TypeError, "expected (..., fn, args: tuple, kwargs: dict | None)");
        return NULL;
    }
    PyObject *kwargs = args[3] != Py_None && PyDict_GET_SIZE(args[3]) ? args[3] : NULL;
    bool on = mt_trace_on;
    if (on) {
        mt_trace_enter_copy(layer, name, detail);
    }
    PyObject *r = PyObject_Call(args[1], args[2], kwargs);
    if (on) {
        mt_trace_exit();
    }
    return r;
}

/* Module.__call__ while recording: fn(*args, **kwargs) inside a Python::<class of module> range.
 * One C call instead of an enter, a try/finally and an exit from Python: a third of a module
 * call's cost under the profiler. */
static PyObject *
py_trace_module_call(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "_trace_module_call(module, fn, args: tuple, kwargs: dict | None)");
        return NULL;
    }
    /* a class's tp_name is its __name__ ("Linear"); copied, as the class may go first */
    return traced_call(MT_LAYER_PYTHON, Py_TYPE(args[0])->tp_name, "nn.Module", args);
}

/* A Python-defined op's call (minitorch.library): fn(*args, **kwargs) inside an Op::<name>
 * range whose detail is the dispatch key that ran, as the dispatcher records a built-in op. */
static PyObject *
py_trace_op_call(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    const char *name = nargs == 5 && PyUnicode_Check(args[0]) ? PyUnicode_AsUTF8(args[0]) : NULL;
    int key = -1;
    for (int k = 0; nargs == 5 && PyUnicode_Check(args[4]) && k < MT_NUM_KEYS; k++) {
        key = PyUnicode_CompareWithASCIIString(args[4], mt_key_names[k]) == 0 ? k : key;
    }
    if (name == NULL || key < 0) {
        PyErr_SetString(PyExc_TypeError,
                        "_trace_op_call(name, fn, args: tuple, kwargs: dict | None, key)");
        return NULL;
    }
    return traced_call(MT_LAYER_OP, name, mt_key_names[key], args);
}

PyMethodDef mt_py_profiler_functions[] = {
    {"_trace_start", (PyCFunction)(void (*)(void))py_trace_start, METH_VARARGS | METH_KEYWORDS,
     "_trace_start(record_shapes=False, profile_memory=False, with_stack=False, cuda=False): "
     "starts recording events (cuda: device events from the CUDA backend too)."},
    {"_trace_gpu_events", py_trace_gpu_events, METH_NOARGS,
     "The device events of the last recording, once: [(kind, name, device, stream, correlation, "
     "start_ns, end_ns), ...]; kind 0 kernel, 1 memcpy, 2 memset."},
    {"_trace_gpu_inject", py_trace_gpu_inject, METH_VARARGS,
     "Test only: adds a device event as a backend would (see _trace_gpu_events)."},
    {"_trace_runtime_inject", py_trace_runtime_inject, METH_NOARGS,
     "Test only: records a Runtime::LaunchKernel range with a fresh correlation id; returns it."},
    {"_trace_stop", py_trace_stop, METH_NOARGS,
     "Stops recording: [(depth, layer, name, detail, duration_us, start_ns, end_ns, tid, shapes, "
     "dtypes, bytes, ptr, device_type, device_index, cache, correlation, stack), ...], each "
     "thread's in start order."},
    {"_trace_enabled", py_trace_enabled, METH_NOARGS, "Whether a recording is on."},
    {"_trace_enter", py_trace_enter, METH_VARARGS,
     "_trace_enter(name, kind): opens a Python range ('nn.Module' or 'user_annotation')."},
    {"_trace_exit", py_trace_exit, METH_NOARGS, "Closes the innermost open range."},
    {"_trace_module_call", (PyCFunction)(void (*)(void))py_trace_module_call, METH_FASTCALL,
     "_trace_module_call(module, fn, args, kwargs): fn(*args, **kwargs) inside a "
     "Python::<type(module).__name__> range ('nn.Module') when recording."},
    {"_trace_op_call", (PyCFunction)(void (*)(void))py_trace_op_call, METH_FASTCALL,
     "_trace_op_call(name, fn, args, kwargs, key): fn(*args, **kwargs) inside an Op::<name> "
     "range whose dispatch key is key, when recording (a minitorch.library op's call)."},
    {NULL, NULL, 0, NULL},
};
