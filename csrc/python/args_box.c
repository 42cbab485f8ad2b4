/* A call's mt_args back to Python and a Python kernel's results back into mt_args, by the op's
 * parsed schema: what a kernel registered from Python (python/library.c) receives and returns. */
#include <string.h>

#include "python/args_schema.h"

/* An int[] argument as a list, as PyTorch gives one to a Python kernel. */
static PyObject *
int_list(const mt_intlist *l)
{
    if (l->none) {
        return Py_NewRef(Py_None);
    }
    PyObject *size = mt_py_size_obj(l->n, mt_intlist_values(l));
    PyObject *res = size ? PySequence_List(size) : NULL;
    Py_XDECREF(size);
    return res;
}

/* A Tensor[] (or Tensor?[], with Nones) argument as a list. */
static PyObject *
tensor_list(mt_tensorlist l)
{
    PyObject *res = PyList_New(0);
    for (int k = 0; res && k < l.n; k++) {
        PyObject *o = l.t[k] ? mt_py_wrap(mt_tensor_retain(l.t[k])) : Py_NewRef(Py_None);
        if (o == NULL || PyList_Append(res, o) < 0) {
            Py_CLEAR(res);
        }
        Py_XDECREF(o);
    }
    return res;
}

/* A tensor argument: a wrapped Python number goes back as the number it was. */
static PyObject *
tensor_value(mt_tensor *t)
{
    if (t == NULL) {
        return Py_NewRef(Py_None);
    }
    if (t->is_wrapped_number && !mt_dtype_is_complex(t->dtype)) {
        mt_scalar v;
        mt_status st = mt_tensor_item(t, &v);
        return st ? mt_py_raise(st) : mt_py_from_scalar(v);
    }
    return mt_py_wrap(mt_tensor_retain(t));
}

/* Parameter p's value in a, as a new reference (NULL with an exception set). */
static PyObject *
param_value(const mt_py_param *p, const mt_args *a)
{
    switch (p->type) {
    case MT_ARG_TENSOR:
        /* a number in a Tensor slot (x[mask] = 0.0) as the tensor it became, as PyTorch lifts
         * it; but self, where PyTorch shows the number (torch.sub(1, x): sub.Tensor(1, x)) */
        if (p->slot > 0 && a->t[p->slot]) {
            return mt_py_wrap(mt_tensor_retain(a->t[p->slot]));
        }
        return tensor_value(a->t[p->slot]);
    case MT_ARG_TENSOR_OR_SCALAR:
        return tensor_value(a->t[p->slot]);
    case MT_ARG_SCALAR: /* unset: None, or the default a C caller (x + y) left out */
        if (a->s[p->slot].type == MT_NUM_DTYPES) {
            return Py_NewRef(p->dflt ? p->dflt : Py_None);
        }
        return mt_py_from_scalar(a->s[p->slot]);
    case MT_ARG_INT:
        return (a->i_none >> p->slot & 1u) ? Py_NewRef(Py_None)
                                           : PyLong_FromLongLong(a->i[p->slot]);
    case MT_ARG_INTLIST:
    case MT_ARG_INTLIST1:
        return int_list(&a->l[p->slot]);
    case MT_ARG_BOOL:
        return PyBool_FromLong(a->b[p->slot]);
    case MT_ARG_DTYPE:
        return a->dtype < 0 ? Py_NewRef(Py_None) : Py_NewRef(mt_py_dtype_obj((mt_dtype)a->dtype));
    case MT_ARG_DEVICE:
        return a->has_device ? mt_py_device_obj(a->device) : Py_NewRef(Py_None);
    case MT_ARG_TENSORLIST:
    case MT_ARG_TENSORLIST_OPT:
        return tensor_list(mt_args_tensorlist(a, p->slot));
    case MT_ARG_STR:
        return a->str[p->slot] ? PyUnicode_FromString(a->str[p->slot]) : Py_NewRef(Py_None);
    case MT_ARG_FLOAT:
        return PyFloat_FromDouble(a->f[p->slot]);
    case MT_ARG_GENERATOR:
        return a->gen ? mt_py_generator_wrap(mt_generator_retain(a->gen)) : Py_NewRef(Py_None);
    default:
        return Py_NewRef(Py_None);
    }
}

/* Whether v is p's default value: PyTorch leaves such arguments out of a Python kernel's call
 * (the keyword-only ones, and the positional ones after the last given one). */
static bool
is_default(const mt_py_param *p, PyObject *v)
{
    if (!p->has_default || p->dflt == NULL || mt_py_is_tensor(v)) {
        return false;
    }
    if (p->dflt == Py_None || v == Py_None) {
        return v == p->dflt;
    }
    int r = PyObject_RichCompareBool(v, p->dflt, Py_EQ);
    if (r < 0) {
        PyErr_Clear(); /* values that do not compare are not the default */
    }
    return r == 1;
}

PyObject *
mt_py_box_args(mt_op op, const mt_args *a, PyObject **kwargs)
{
    const mt_py_schema *s = &mt_py_arg_schemas[op];
    PyObject *vals[MT_MAX_PARAMS] = {NULL}, *args = NULL, *kw = NULL;
    int npos = 0, j;
    for (j = 0; j < s->nparams; j++) {
        const mt_py_param *p = &s->params[j];
        if (p->type == MT_ARG_OUT) {
            continue;
        }
        if ((vals[j] = param_value(p, a)) == NULL) {
            goto out;
        }
        npos = !p->kwonly && !is_default(p, vals[j]) ? j + 1 : npos;
    }
    if ((args = PyTuple_New(npos)) == NULL) {
        goto out;
    }
    for (j = 0; j < npos; j++) {
        PyTuple_SET_ITEM(args, j, vals[j]); /* the reference moves */
        vals[j] = NULL;
    }
    for (; j < s->nparams; j++) {
        const mt_py_param *p = &s->params[j];
        if (vals[j] == NULL || !p->kwonly || is_default(p, vals[j])) {
            continue;
        }
        if ((kw == NULL && (kw = PyDict_New()) == NULL) ||
            PyDict_SetItem(kw, p->name, vals[j]) < 0) {
            Py_CLEAR(args);
            Py_CLEAR(kw);
            goto out;
        }
    }
    *kwargs = kw;
out:
    for (j = 0; j < s->nparams; j++) {
        Py_XDECREF(vals[j]);
    }
    return args;
}

static int
result_tensor(mt_op op, PyObject *o, mt_tensor **out)
{
    if (!mt_py_is_tensor(o)) {
        PyErr_Format(PyExc_TypeError, "%s: a Python kernel returned %s where a Tensor was expected",
                     mt_op_names[op], Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = mt_tensor_retain(mt_py_unwrap(o));
    return 0;
}

int
mt_py_unbox_results(mt_op op, PyObject *res, mt_args *a)
{
    int nout = mt_op_nout[op];
    if (nout == 0) {
        return 0;
    }
    if (nout == 1) {
        return result_tensor(op, res, &a->out[0]);
    }
    PyObject *seq = PySequence_Fast(res, "a Python kernel must return a tuple of Tensors here");
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int r = 0;
    if (nout == LIST) {
        mt_status st = mt_args_alloc_outl(a, n);
        r = st ? (mt_py_raise(st), -1) : 0;
    } else if (n != nout) {
        PyErr_Format(PyExc_RuntimeError, "%s: a Python kernel returned %zd results, expected %d",
                     mt_op_names[op], n, nout);
        r = -1;
    }
    for (Py_ssize_t k = 0; r == 0 && k < n; k++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, k);
        r = result_tensor(op, o, nout == LIST ? &a->outl[k] : &a->out[k]);
    }
    Py_DECREF(seq);
    if (r < 0) {
        for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
            mt_tensor_clear(&a->out[k]);
        }
        mt_args_clear_outl(a);
    }
    return r;
}
