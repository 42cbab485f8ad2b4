/* The profiler's bindings: start and stop a recording, Python ranges, and the events as tuples.
 *
 * minitorch/profiler/ builds every view (tables, Chrome trace, journey) from the tuples that
 * _trace_stop returns; nothing here aggregates. */
#include "python/pyminitorch.h"

#include "profiler/trace.h"

static PyObject *
py_trace_start(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"record_shapes", "profile_memory", NULL};
    int shapes = 0, memory = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|pp:_trace_start", kwlist, &shapes, &memory)) {
        return NULL;
    }
    mt_trace_start_with((mt_trace_config){shapes != 0, memory != 0});
    Py_RETURN_NONE;
}

static PyObject *
event_tuple(const mt_trace_recording *r, const mt_trace_event *e)
{
    return Py_BuildValue("(isssdLLLssLKiii)", (int)e->depth, mt_layer_names[e->layer],
                         mt_trace_name(r, e), e->detail, (e->end_ns - e->start_ns) / 1000.0,
                         (long long)e->start_ns, (long long)e->end_ns, (long long)e->tid,
                         mt_trace_text(r, e->shapes_at), mt_trace_text(r, e->dtypes_at),
                         (long long)e->bytes,
                         (unsigned long long)e->ptr, (int)e->device.type, e->device.index,
                         (int)e->cache);
}

static PyObject *
py_trace_stop(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    mt_trace_recording r;
    if (mt_trace_stop(&r) < 0) {
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
    if (!PyArg_ParseTuple(args, "ss:_trace_enter", &name, &kind)) {
        return NULL;
    }
    if (mt_trace_on) {
        mt_trace_enter_copy(MT_LAYER_PYTHON, name, kind[0] == 'u' ? "user_annotation" : "nn.Module");
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

PyMethodDef mt_py_profiler_functions[] = {
    {"_trace_start", (PyCFunction)(void (*)(void))py_trace_start, METH_VARARGS | METH_KEYWORDS,
     "_trace_start(record_shapes=False, profile_memory=False): starts recording events."},
    {"_trace_stop", py_trace_stop, METH_NOARGS,
     "Stops recording: [(depth, layer, name, detail, duration_us, start_ns, end_ns, tid, shapes, "
     "dtypes, bytes, ptr, device_type, device_index, cache), ...], each thread's in start order."},
    {"_trace_enabled", py_trace_enabled, METH_NOARGS, "Whether a recording is on."},
    {"_trace_enter", py_trace_enter, METH_VARARGS,
     "_trace_enter(name, kind): opens a Python range ('nn.Module' or 'user_annotation')."},
    {"_trace_exit", py_trace_exit, METH_NOARGS, "Closes the innermost open range."},
    {NULL, NULL, 0, NULL},
};
