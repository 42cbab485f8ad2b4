/* _tracer_start, _tracer_stop, _tracer_count: the graph tracer (csrc/tracer/) for minitorch.viz. */
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
        PyObject *item = out ? Py_BuildValue("(sissOOO)", mt_op_names[r->op], r->depth,
                                             mt_key_names[r->key], kernel ? kernel : "",
                                             r->ok ? Py_True : Py_False, in, out)
                             : NULL;
        Py_XDECREF(in);
        Py_XDECREF(out);
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
     "Turns it off: [(op, depth, key, kernel, ok, inputs, outputs), ...] in call order."},
    {"_tracer_count", py_tracer_count, METH_NOARGS, "How many ops have been recorded so far."},
    {NULL, NULL, 0, NULL},
};

int
mt_py_tracer_init(PyObject *module)
{
    mt_tracer_init();
    return PyModule_AddFunctions(module, functions);
}
