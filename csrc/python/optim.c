/* minitorch._C._fused_sgd_, _fused_adam_ and _fused_rmsprop_: the bindings of the fused
 * optimizer updates of cpu/optim.c, one call per optimizer step and parameter group.
 *
 * They take Python lists of tensors (the parameters, their gradients and their state, made by
 * minitorch/optim/) and numbers; they check the lists here and the tensors in the core. */
#include "python/pyminitorch.h" /* Python.h first: it sets the feature-test macros */

#include <stdlib.h>

#include "cpu/optim.h"

/* The tensors of a list or tuple, borrowed from it, in a PyMem array (*out) of length n.
 * With `optional`, None or an empty sequence gives *out = NULL. */
static int
unpack_tensors(const char *fn, const char *name, PyObject *seq, Py_ssize_t n, bool optional,
               mt_tensor ***out)
{
    *out = NULL;
    if (optional && (seq == Py_None || ((PyList_Check(seq) || PyTuple_Check(seq)) &&
                                        PySequence_Fast_GET_SIZE(seq) == 0))) {
        return 0;
    }
    if (!PyList_Check(seq) && !PyTuple_Check(seq)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a list of tensors, not %s", fn, name,
                     Py_TYPE(seq)->tp_name);
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (len != n) {
        PyErr_Format(PyExc_RuntimeError, "%s: expected %zd %s, one per parameter, but got %zd", fn,
                     n, name, len);
        return -1;
    }
    mt_tensor **ts = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(mt_tensor *));
    if (ts == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!mt_py_is_tensor(items[i])) {
            PyErr_Format(PyExc_TypeError, "%s: %s[%zd] must be a Tensor, not %s", fn, name, i,
                         Py_TYPE(items[i])->tp_name);
            PyMem_Free(ts);
            return -1;
        }
        ts[i] = mt_py_unwrap(items[i]);
    }
    *out = ts;
    return 0;
}

/* The number of parameters: the length of params, which must be a list or tuple. */
static int
count_params(const char *fn, PyObject *params, int *n)
{
    if (!PyList_Check(params) && !PyTuple_Check(params)) {
        PyErr_Format(PyExc_TypeError, "%s: params must be a list of tensors, not %s", fn,
                     Py_TYPE(params)->tp_name);
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(params);
    if (len > 1 << 30) {
        PyErr_Format(PyExc_RuntimeError, "%s: too many parameters (%zd)", fn, len);
        return -1;
    }
    *n = (int)len;
    return 0;
}

/* A list argument of a fused update: the Python sequence, whether it may be None or [] (a list
 * only some options use) and whether these options use it; unpacked into t. */
typedef struct list_arg {
    const char *name;
    PyObject *seq;
    bool optional, used;
    mt_tensor **t;
} list_arg;

/* Unpacks every list, each of n tensors; a list the options use must be there. */
static int
unpack_lists(const char *fn, int n, list_arg *lists, int count)
{
    for (int k = 0; k < count; k++) {
        list_arg *l = &lists[k];
        if (unpack_tensors(fn, l->name, l->seq, n, l->optional, &l->t) < 0) {
            return -1;
        }
        if (l->used && l->t == NULL && n > 0) {
            PyErr_Format(PyExc_RuntimeError, "%s: %s are needed with these options", fn, l->name);
            return -1;
        }
    }
    return 0;
}

static void
free_lists(list_arg *lists, int count)
{
    for (int k = 0; k < count; k++) {
        PyMem_Free(lists[k].t);
    }
}

/* The truth values of a sequence of n objects, into out. */
static int
unpack_flags(const char *fn, const char *name, PyObject *seq, int n, bool *out)
{
    PyObject *fast = PySequence_Fast(seq, "a list of bools was expected");
    if (fast == NULL) {
        return -1;
    }
    int res = -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(PyExc_RuntimeError, "%s: expected %d %s flags, got %zd", fn, n, name,
                     PySequence_Fast_GET_SIZE(fast));
        goto out_release;
    }
    for (int i = 0; i < n; i++) {
        int t = PyObject_IsTrue(PySequence_Fast_GET_ITEM(fast, i));
        if (t < 0) {
            goto out_release;
        }
        out[i] = t;
    }
    res = 0;
out_release:
    Py_DECREF(fast);
    return res;
}

static PyObject *
py_fused_sgd(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"params", "grads", "momentum_buffers", "first_step", "lr",
                             "momentum", "dampening", "weight_decay", "nesterov", "maximize",
                             NULL};
    const char *fn = "_fused_sgd_";
    PyObject *params, *grads, *bufs, *first_obj, *res = NULL;
    mt_sgd_opts o = {0};
    int nesterov = 0, maximize = 0, n;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOdddd|pp", kwlist, &params, &grads, &bufs,
                                     &first_obj, &o.lr, &o.momentum, &o.dampening,
                                     &o.weight_decay, &nesterov, &maximize) ||
        count_params(fn, params, &n) < 0) {
        return NULL;
    }
    o.nesterov = nesterov;
    o.maximize = maximize;
    list_arg l[] = {{"params", params, false, true, NULL},
                    {"grads", grads, false, true, NULL},
                    {"momentum_buffers", bufs, true, o.momentum != 0, NULL}};
    bool *first = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(bool));
    if (first == NULL) {
        return PyErr_NoMemory();
    }
    if (unpack_lists(fn, n, l, 3) < 0) {
        goto out_free;
    }
    if (o.momentum != 0 && unpack_flags(fn, "first_step", first_obj, n, first) < 0) {
        goto out_free;
    }
    mt_status st = mt_cpu_fused_sgd(n, l[0].t, l[1].t, l[2].t, first, &o);
    res = st ? mt_py_raise(st) : Py_NewRef(Py_None);
out_free:
    PyMem_Free(first);
    free_lists(l, 3);
    return res;
}

static PyObject *
py_fused_adam(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"params", "grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs",
                             "steps", "lr", "beta1", "beta2", "eps", "weight_decay", "amsgrad",
                             "maximize", "decoupled_weight_decay", NULL};
    const char *fn = "_fused_adam_";
    PyObject *params, *grads, *avgs, *sqs, *maxs, *steps, *res = NULL;
    mt_adam_opts o = {0};
    int amsgrad = 0, maximize = 0, decoupled = 0, n;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOOddddd|ppp", kwlist, &params, &grads,
                                     &avgs, &sqs, &maxs, &steps, &o.lr, &o.beta1, &o.beta2,
                                     &o.eps, &o.weight_decay, &amsgrad, &maximize, &decoupled) ||
        count_params(fn, params, &n) < 0) {
        return NULL;
    }
    o.amsgrad = amsgrad;
    o.maximize = maximize;
    o.decoupled_weight_decay = decoupled;
    list_arg l[] = {{"params", params, false, true, NULL},
                    {"grads", grads, false, true, NULL},
                    {"exp_avgs", avgs, false, true, NULL},
                    {"exp_avg_sqs", sqs, false, true, NULL},
                    {"max_exp_avg_sqs", maxs, true, amsgrad, NULL},
                    {"steps", steps, false, true, NULL}};
    if (unpack_lists(fn, n, l, 6) == 0) {
        mt_status st = mt_cpu_fused_adam(n, l[0].t, l[1].t, l[2].t, l[3].t, l[4].t, l[5].t, &o);
        res = st ? mt_py_raise(st) : Py_NewRef(Py_None);
    }
    free_lists(l, 6);
    return res;
}

static PyObject *
py_fused_rmsprop(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"params", "grads", "square_avgs", "grad_avgs", "momentum_buffers",
                             "steps", "lr", "alpha", "eps", "weight_decay", "momentum",
                             "centered", "maximize", NULL};
    const char *fn = "_fused_rmsprop_";
    PyObject *params, *grads, *sqs, *gas, *bufs, *steps, *res = NULL;
    mt_rmsprop_opts o = {0};
    int centered = 0, maximize = 0, n;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOOddddd|pp", kwlist, &params, &grads,
                                     &sqs, &gas, &bufs, &steps, &o.lr, &o.alpha, &o.eps,
                                     &o.weight_decay, &o.momentum, &centered, &maximize) ||
        count_params(fn, params, &n) < 0) {
        return NULL;
    }
    o.centered = centered;
    o.maximize = maximize;
    list_arg l[] = {{"params", params, false, true, NULL},
                    {"grads", grads, false, true, NULL},
                    {"square_avgs", sqs, false, true, NULL},
                    {"grad_avgs", gas, true, centered, NULL},
                    {"momentum_buffers", bufs, true, o.momentum > 0, NULL},
                    {"steps", steps, false, true, NULL}};
    if (unpack_lists(fn, n, l, 6) == 0) {
        mt_status st = mt_cpu_fused_rmsprop(n, l[0].t, l[1].t, l[2].t, l[3].t, l[4].t, l[5].t, &o);
        res = st ? mt_py_raise(st) : Py_NewRef(Py_None);
    }
    free_lists(l, 6);
    return res;
}

PyMethodDef mt_py_optim_functions[] = {
    {"_fused_sgd_", (PyCFunction)(void (*)(void))py_fused_sgd, METH_VARARGS | METH_KEYWORDS,
     "_fused_sgd_(params, grads, momentum_buffers, first_step, lr, momentum, dampening, "
     "weight_decay, nesterov=False, maximize=False): one SGD step for every parameter, in "
     "place."},
    {"_fused_adam_", (PyCFunction)(void (*)(void))py_fused_adam, METH_VARARGS | METH_KEYWORDS,
     "_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1, "
     "beta2, eps, weight_decay, amsgrad=False, maximize=False, decoupled_weight_decay=False): "
     "one Adam (or AdamW) step for every parameter, in place; increments steps."},
    {"_fused_rmsprop_", (PyCFunction)(void (*)(void))py_fused_rmsprop,
     METH_VARARGS | METH_KEYWORDS,
     "_fused_rmsprop_(params, grads, square_avgs, grad_avgs, momentum_buffers, steps, lr, "
     "alpha, eps, weight_decay, momentum, centered=False, maximize=False): one RMSprop step "
     "for every parameter, in place; increments steps."},
    {NULL, NULL, 0, NULL},
};
