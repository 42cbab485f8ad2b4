/* _tracer_start, _tracer_stop, _tracer_count: the graph tracer (csrc/tracer/) for minitorch.viz
 * and torch.jit.trace. */
#include "python/pyminitorch.h"
#include "tracer/tracer.h"

static PyObject *
tensors_tuple(mt_tensor **v, int n)
{
    PyObject *t = PyTuple_New(n);
    for (int k = 0; t && k < n; k++) {
        PyObject *o = mt_py_wrap(v[k]); /* takes over the record's reference */
        v[k] = NULL;
        if (o == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, k, o);
    }
    return t;
}

/* A record's arguments as (args, kwargs) by its op's schema, as a Python kernel gets them
 * (mt_py_box_args); None for a record without them. */
static PyObject *
call_args(const mt_trace_rec *r)
{
    if (r->args == NULL) {
        return Py_NewRef(Py_None);
    }
    PyObject *kw = NULL;
    PyObject *args = mt_py_box_args(r->op, r->args, &kw);
    if (args == NULL) {
        return NULL;
    }
    if (kw == NULL && (kw = PyDict_New()) == NULL) {
        Py_DECREF(args);
        return NULL;
    }
    return Py_BuildValue("(NN)", args, kw);
}

/* The warning class torch.jit.trace installs for its trace (TracerWarning), or NULL; the path of
 * minitorch's package (its own reads of sizes are not the user's); whether the user's code read
 * a size during this trace. */
static PyObject *tracer_warning, *library_path;
static bool sizes_read;

int
mt_py_tracer_warn(const char *what)
{
    if (tracer_warning == NULL || !mt_tracing_enabled()) {
        return 0;
    }
    return PyErr_WarnFormat(tracer_warning, 1,
                            "Converting a tensor to a Python %s might cause the trace to be "
                            "incorrect. We can't record the data flow of Python values, so this "
                            "value will be treated as a constant in the future. This means that "
                            "the trace might not generalize to other inputs!",
                            what);
}

/* Whether the Python code running now is outside minitorch's package. */
static bool
in_user_code(void)
{
    PyFrameObject *frame = PyEval_GetFrame(); /* borrowed */
    if (frame == NULL || library_path == NULL) {
        return frame != NULL;
    }
    PyCodeObject *code = PyFrame_GetCode(frame);
    Py_ssize_t r = PyUnicode_Tailmatch(code->co_filename, library_path, 0, PY_SSIZE_T_MAX, -1);
    Py_DECREF(code);
    if (r < 0) {
        PyErr_Clear(); /* a code object without a str file name: not the user's */
    }
    return r == 0;
}

int
mt_py_tracer_size_read(void)
{
    if (tracer_warning == NULL || !mt_tracing_enabled() || sizes_read || !in_user_code()) {
        return 0;
    }
    sizes_read = true;
    return PyErr_WarnEx(tracer_warning,
                        "Reading a tensor's size while tracing records it as a constant: this "
                        "trace replays only inputs of the sizes it was traced with (PyTorch's "
                        "tracer records the size computation instead)",
                        1);
}

static PyObject *
py_tracer_warnings(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *cls, *path = Py_None;
    if (!PyArg_ParseTuple(args, "O|O:_tracer_warnings", &cls, &path)) {
        return NULL;
    }
    if ((cls != Py_None && !PyExceptionClass_Check(cls)) ||
        (path != Py_None && !PyUnicode_Check(path))) {
        return PyErr_Format(PyExc_TypeError,
                            "expected a warning class or None, and a path or None");
    }
    Py_XSETREF(tracer_warning, cls == Py_None ? NULL : Py_NewRef(cls));
    Py_XSETREF(library_path, path == Py_None ? NULL : Py_NewRef(path));
    sizes_read = false;
    Py_RETURN_NONE;
}

static PyObject *
py_tracer_sizes_read(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyBool_FromLong(sizes_read);
}

static PyObject *
py_tracer_start(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    mt_tracer_start();
    Py_RETURN_NONE;
}

static PyObject *
py_tracer_stop(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    mt_trace_rec *recs;
    int64_t n;
    mt_tracer_stop(&recs, &n);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (int64_t k = 0; list && k < n; k++) {
        mt_trace_rec *r = &recs[k];
        const char *kernel = mt_kernel_for(r->op, r->key)->name;
        PyObject *in = tensors_tuple(r->in, r->nin);
        PyObject *out = in ? tensors_tuple(r->out, r->nout) : NULL;
        PyObject *call = out ? call_args(r) : NULL;
        PyObject *item = call ? Py_BuildValue("(sissOOOO)", mt_op_names[r->op], r->depth,
                                              mt_key_names[r->key], kernel ? kernel : "",
                                              r->ok ? Py_True : Py_False, in, out, call)
                              : NULL;
        Py_XDECREF(in);
        Py_XDECREF(out);
        Py_XDECREF(call);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)k, item);
    }
    mt_tracer_free(recs, n);
    return list;
}

static PyObject *
py_tracer_count(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyLong_FromLongLong(mt_tracer_count());
}

static PyMethodDef functions[] = {
    {"_tracer_start", py_tracer_start, METH_NOARGS,
     "Turns the graph tracer on for this thread (the Tracer dispatch key)."},
    {"_tracer_stop", py_tracer_stop, METH_NOARGS,
     "Turns it off: [(op, depth, key, kernel, ok, inputs, outputs, (args, kwargs)), ...] in call "
     "order; (args, kwargs) is the call's arguments by the op's schema (None if not kept)."},
    {"_tracer_count", py_tracer_count, METH_NOARGS, "How many ops have been recorded so far."},
    {"_tracer_warnings", py_tracer_warnings, METH_VARARGS,
     "_tracer_warnings(cls, library_path=None): while tracing, converting a tensor to a Python "
     "value warns cls (torch.jit.TracerWarning), and so does the first read of a size by code "
     "outside library_path; None turns it off."},
    {"_tracer_sizes_read", py_tracer_sizes_read, METH_NOARGS,
     "Whether code outside the library read a tensor's size since _tracer_warnings was set."},
    {NULL, NULL, 0, NULL},
};

int
mt_py_tracer_init(PyObject *module)
{
    mt_tracer_init();
    return PyModule_AddFunctions(module, functions);
}
