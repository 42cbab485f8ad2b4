/* torch.cuda.memory._record_memory_history and the history of _snapshot() over the CUDA
 * devices' caching allocators (alloc/caching.h): the recorder's settings from PyTorch's
 * arguments, the Python stack as a context (gathered only on a thread that holds the GIL, so an
 * allocation elsewhere never waits for it), and the actions as PyTorch's TraceEntry dicts. */
#include "python/memory_history.h"

#include <frameobject.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/caching.h"

/* The Python stack, innermost frame first, as lines "filename\tline\tname\n"; NULL without one. */
static char *
gather_python_stack(void)
{
    if (!Py_IsInitialized() || !PyGILState_Check()) {
        return NULL;
    }
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    if (f == NULL) {
        return NULL;
    }
    size_t used = 0, cap = 256;
    char *buf = malloc(cap);
    Py_INCREF(f);
    while (f != NULL && buf != NULL) {
        PyCodeObject *code = PyFrame_GetCode(f);
        const char *file = PyUnicode_AsUTF8(code->co_filename);
        const char *name = PyUnicode_AsUTF8(code->co_name);
        PyErr_Clear();
        int line = PyFrame_GetLineNumber(f);
        size_t need = strlen(file ? file : "") + strlen(name ? name : "") + 32;
        if (used + need > cap) {
            cap = 2 * (used + need);
            char *b = realloc(buf, cap);
            if (b == NULL) {
                free(buf);
            }
            buf = b;
        }
        if (buf != NULL) {
            used += (size_t)snprintf(buf + used, cap - used, "%s\t%d\t%s\n", file ? file : "", line,
                                     name ? name : "");
        }
        Py_DECREF(code);
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    Py_XDECREF(f);
    return buf;
}

PyObject *
mt_py_context_frames(const char *context)
{
    PyObject *list = PyList_New(0);
    for (const char *p = context; list != NULL && p != NULL && *p;) {
        const char *tab1 = strchr(p, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        const char *end = tab2 ? strchr(tab2 + 1, '\n') : NULL;
        if (end == NULL) {
            break;
        }
        PyObject *frame = Py_BuildValue("{s:s#,s:i,s:s#}", "filename", p, (Py_ssize_t)(tab1 - p),
                                        "line", atoi(tab1 + 1), "name", tab2 + 1,
                                        (Py_ssize_t)(end - tab2 - 1));
        if (frame == NULL || PyList_Append(list, frame) < 0) {
            Py_CLEAR(list);
        }
        Py_XDECREF(frame);
        p = end + 1;
    }
    return list;
}

static const char *const action_names[MT_TRACE_NUM_ACTIONS] = {"alloc",          "free_requested",
                                                               "free_completed", "segment_alloc",
                                                               "segment_free",   "oom"};

/* which: "none" for None, else the string; -1 (error set) for another type */
static int
option(PyObject *o, const char *arg, const char **which)
{
    if (o == Py_None) {
        *which = "none";
        return 0;
    }
    *which = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (*which == NULL && !PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError,
                     "_record_memory_history(): argument '%s' must be str or None, "
                     "not %s",
                     arg, Py_TYPE(o)->tp_name);
    }
    return *which ? 0 : -1;
}

/* _C._cuda_record_memory_history(enabled, context, stacks, max_entries, clear_history,
 * skip_actions): PyTorch's arguments, checked as its C++ side checks them */
static PyObject *
record_memory_history(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *enabled_o, *context_o, *stacks_o, *skip_o;
    Py_ssize_t max_entries;
    int clear;
    const char *enabled, *context, *stacks;
    if (!PyArg_ParseTuple(args, "OOOnpO:_cuda_record_memory_history", &enabled_o, &context_o,
                          &stacks_o, &max_entries, &clear, &skip_o) ||
        option(enabled_o, "enabled", &enabled) < 0 || option(context_o, "context", &context) < 0 ||
        option(stacks_o, "stacks", &stacks) < 0) {
        return NULL;
    }
    const bool on = strcmp(enabled, "none") != 0;
    if (on && strcmp(enabled, "state") != 0 && strcmp(enabled, "all") != 0) {
        return PyErr_Format(PyExc_RuntimeError,
                            "expected enabled to be 'state', 'all' or None, but got '%s'", enabled);
    }
    if (strcmp(context, "none") != 0 && strcmp(context, "state") != 0 &&
        strcmp(context, "alloc") != 0 && strcmp(context, "all") != 0) {
        return PyErr_Format(PyExc_RuntimeError,
                            "expected context to be 'state', 'alloc', 'all' or None, but got '%s'",
                            context);
    }
    if (strcmp(stacks, "python") != 0 && strcmp(stacks, "all") != 0) {
        return PyErr_Format(PyExc_RuntimeError,
                            "expected stacks to be 'python' or 'all', but got '%s'", stacks);
    }
    if (max_entries < 0) {
        return PyErr_Format(PyExc_RuntimeError, "max_entries must be non-negative, got %zd",
                            max_entries);
    }
    mt_caching_recorder rec = {.history = strcmp(enabled, "all") == 0,
                               .context_state = strcmp(context, "none") != 0,
                               .context_alloc = strcmp(context, "alloc") == 0 ||
                                                strcmp(context, "all") == 0,
                               .context_free = strcmp(context, "all") == 0,
                               .max_entries = (size_t)max_entries,
                               .gather = gather_python_stack};
    PyObject *it = skip_o == Py_None ? NULL : PyObject_GetIter(skip_o);
    if (skip_o != Py_None && it == NULL) {
        return NULL;
    }
    for (PyObject *a; it && (a = PyIter_Next(it)) != NULL; Py_DECREF(a)) {
        const char *name = PyUnicode_Check(a) ? PyUnicode_AsUTF8(a) : NULL;
        for (int k = 0; name && k < MT_TRACE_NUM_ACTIONS; k++) {
            rec.skip |= strcmp(name, action_names[k]) == 0 ? 1u << k : 0u;
        }
    }
    Py_XDECREF(it);
    if (PyErr_Occurred()) {
        return NULL;
    }
    mt_status st = mt_caching_device_record_history(on ? &rec : NULL, clear);
    return st ? mt_py_raise(st) : Py_NewRef(Py_None);
}

static PyObject *
entry_dict(const mt_trace_entry *e)
{
    PyObject *frames = mt_py_context_frames(e->context);
    if (frames == NULL) {
        return NULL;
    }
    if (e->action == MT_TRACE_OOM) { /* PyTorch's oom entry: no address, the device's free bytes */
        return Py_BuildValue("{s:s,s:n,s:K,s:n,s:L,s:N}", "action", action_names[e->action], "size",
                             (Py_ssize_t)e->size, "stream", (unsigned long long)e->stream,
                             "device_free", (Py_ssize_t)e->device_free, "time_us",
                             (long long)e->time_us, "frames", frames);
    }
    return Py_BuildValue("{s:s,s:K,s:n,s:K,s:L,s:N}", "action", action_names[e->action], "addr",
                         (unsigned long long)e->addr, "size", (Py_ssize_t)e->size, "stream",
                         (unsigned long long)e->stream, "time_us", (long long)e->time_us, "frames",
                         frames);
}

/* _C._cuda_memory_trace(device): device's recorded actions, oldest first ([] if none) */
static PyObject *
memory_trace(PyObject *m, PyObject *arg)
{
    (void)m;
    long d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) {
        return NULL;
    }
    mt_caching_allocator *ca = mt_caching_for_device((int)d);
    if (ca == NULL || d < 0 || d >= MT_CACHING_MAX_DEVICES) {
        return PyList_New(0);
    }
    mt_trace_entry *entries = NULL;
    size_t n = 0;
    mt_status st = mt_caching_trace(ca, &entries, &n);
    if (st) {
        return mt_py_raise(st);
    }
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list != NULL && i < n; i++) {
        PyObject *e = entry_dict(&entries[i]);
        if (e == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, e);
    }
    mt_caching_trace_free(entries, n);
    return list;
}

PyMethodDef mt_py_memory_history_functions[] = {
    {"_cuda_record_memory_history", record_memory_history, METH_VARARGS,
     "_cuda_record_memory_history(enabled, context, stacks, max_entries, clear_history, "
     "skip_actions): every CUDA device's allocator records as PyTorch's does."},
    {"_cuda_memory_trace", memory_trace, METH_O,
     "_cuda_memory_trace(device): the actions device's allocator recorded, oldest first."},
    {NULL, NULL, 0, NULL},
};
