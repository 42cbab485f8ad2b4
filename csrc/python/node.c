/* minitorch._C.Node: a grad_fn node as a Python object, and the class of each node's name.
 *
 * A node's Python class is named after it (type(y.grad_fn).__name__ == "AddmmBackward0", as in
 * PyTorch): one subclass of minitorch._C.Node per name, made on first use. Its attributes give
 * the saved arguments and results (grad_fn._saved_<name>) and next_functions. backward(),
 * autograd.grad and the hooks are python/autograd.c's. */
#include "python/pyminitorch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"

PyObject *mt_py_node_types; /* name -> subclass of Node */
/* the Python class every node's class derives from (minitorch.autograd.graph.Node, which
 * subclasses _C.Node with the methods written in Python); _C.Node until it is set */
static PyObject *node_base;

static void
node_dealloc(PyObject *self)
{
    mt_py_node_object *o = (mt_py_node_object *)self;
    if (o->node) {
        o->node->pyobj = NULL;
        mt_node_release(o->node);
    }
    /* The per-name subclasses are heap types: their subtype_dealloc drops the type's reference
     * after this returns. */
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
node_name(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyUnicode_FromString(((mt_py_node_object *)self)->node->name);
}

/* A node's class name: its name without a C++ namespace ("torch::autograd::CopySlices" is a
 * CopySlices, as PyTorch's class) */
static const char *
class_name(const char *name)
{
    const char *colons = strrchr(name, ':');
    return colons ? colons + 1 : name;
}

static PyObject *
node_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<%s object at %p>",
                                class_name(((mt_py_node_object *)self)->node->name), self);
}

static PyObject *
node_next_functions(PyObject *self, void *c)
{
    (void)c;
    mt_node *n = ((mt_py_node_object *)self)->node;
    int shown = 0;
    for (int e = 0; e < n->nedges; e++) {
        shown += !(e < 32 && (n->scalar_edges >> e & 1u));
    }
    PyObject *res = PyTuple_New(shown);
    for (int e = 0, i = 0; res && e < n->nedges; e++) {
        if (e < 32 && (n->scalar_edges >> e & 1u)) {
            continue; /* a number PyTorch's overload takes as a Scalar: no input of its node */
        }
        PyObject *next = n->edges[e].node ? mt_py_node_wrap(mt_node_retain(n->edges[e].node))
                                          : Py_NewRef(Py_None);
        PyObject *pair = next ? Py_BuildValue("(Ni)", next, n->edges[e].input_nr) : NULL;
        if (pair == NULL) {
            Py_CLEAR(res);
            break;
        }
        PyTuple_SET_ITEM(res, i++, pair);
    }
    return res;
}

static PyObject *
node_variable(PyObject *self, void *c)
{
    (void)c;
    mt_node *n = ((mt_py_node_object *)self)->node;
    if (n->variable == NULL) {
        return PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute 'variable'",
                            n->name);
    }
    return mt_py_wrap(mt_tensor_retain(n->variable));
}

/* The value of argument `name` of the op that made n (slot and kind from its schema), or NULL
 * without an exception when n kept nothing for it. */
static PyObject *
saved_argument(mt_node *n, const char *name)
{
    mt_py_argkind kind;
    int slot;
    if (n->formula == NULL || mt_autograd_formula(n->formula->op) != n->formula ||
        mt_py_schema_param(n->formula->op, name, &kind, &slot) < 0 || slot < 0) {
        return NULL;
    }
    const mt_args *a = &n->args;
    switch (kind) {
    case MT_PY_ARG_TENSOR: {
        mt_tensor *t = NULL;
        mt_status st = mt_saved_peek(n, false, slot, &t);
        if (st) {
            return mt_py_raise(st);
        }
        if (t == NULL) {
            return NULL;
        }
        if (t->is_wrapped_number) { /* a Python number (pow's exponent 2): kept as a number */
            mt_scalar v;
            st = mt_tensor_item(t, &v);
            mt_tensor_release(t);
            return st ? mt_py_raise(st) : mt_py_from_scalar(v);
        }
        return mt_py_wrap(t);
    }
    case MT_PY_ARG_SCALAR:
        return mt_py_from_scalar(a->s[slot]);
    case MT_PY_ARG_INT:
        return (a->i_none >> slot & 1u) ? Py_NewRef(Py_None) : PyLong_FromLongLong(a->i[slot]);
    case MT_PY_ARG_INTLIST: {
        if (a->l[slot].none) {
            return Py_NewRef(Py_None);
        }
        PyObject *res = PyTuple_New(a->l[slot].n);
        for (int k = 0; res && k < a->l[slot].n; k++) {
            PyObject *v = PyLong_FromLongLong(a->l[slot].v[k]);
            if (v == NULL) {
                Py_CLEAR(res);
                break;
            }
            PyTuple_SET_ITEM(res, k, v);
        }
        return res;
    }
    case MT_PY_ARG_BOOL:
        return PyBool_FromLong(a->b[slot]);
    case MT_PY_ARG_FLOAT:
        return PyFloat_FromDouble(a->f[slot]);
    default:
        return NULL;
    }
}

/* A kept output: `result` is output 0, `result<k>` output k (PyTorch's names). */
static int
result_index(const char *name)
{
    if (strcmp(name, "result") == 0) {
        return 0;
    }
    char *end = NULL;
    const char *digits = name + strlen("result");
    if (strncmp(name, "result", strlen("result")) != 0 || *digits < '0' || *digits > '9') {
        return -1;
    }
    long v = strtol(digits, &end, 10);
    return *end != '\0' || v >= MT_NODE_MAX_OUT ? -1 : (int)v;
}

static PyObject *
saved_result(mt_node *n, const char *name)
{
    int k = result_index(name);
    if (k < 0) {
        return NULL;
    }
    mt_tensor *t = NULL;
    mt_status st = mt_saved_peek(n, true, k, &t);
    if (st) {
        return mt_py_raise(st);
    }
    return t ? mt_py_wrap(t) : NULL;
}

/* grad_fn._raw_saved_<name>: a SavedTensor for the tensor argument or result `name` the node
 * keeps (hooks go on it), NULL without an exception where there is no such tensor slot. */
static PyObject *
raw_saved(mt_node *n, const char *name)
{
    if (strncmp(name, "result", strlen("result")) == 0) {
        int k = result_index(name);
        return k < 0 || !n->formula || !n->formula->save_outputs ? NULL
                                                                 : mt_py_saved_tensor(n, true, k);
    }
    mt_py_argkind kind;
    int slot;
    if (n->formula == NULL || mt_autograd_formula(n->formula->op) != n->formula ||
        mt_py_schema_param(n->formula->op, name, &kind, &slot) < 0 || slot < 0 ||
        kind != MT_PY_ARG_TENSOR || !(n->formula->save_inputs >> slot & 1u) ||
        (n->saved[slot] && n->saved[slot]->is_wrapped_number)) { /* a number, as PyTorch keeps it */
        return NULL;
    }
    return mt_py_saved_tensor(n, false, slot);
}

/* Attribute lookup: the node's methods and properties, then grad_fn._saved_<name>, what the
 * node kept of its op's argument or result `name`, as PyTorch's nodes expose them, and
 * grad_fn._raw_saved_<name>, that tensor's SavedTensor. */
static PyObject *
node_getattro(PyObject *self, PyObject *attr)
{
    PyObject *res = PyObject_GenericGetAttr(self, attr);
    const char *name = res == NULL && PyUnicode_Check(attr) ? PyUnicode_AsUTF8(attr) : NULL;
    const char *prefix = "_saved_", *raw = "_raw_saved_";
    bool is_raw = name && strncmp(name, raw, strlen(raw)) == 0;
    if (name == NULL || (!is_raw && strncmp(name, prefix, strlen(prefix)) != 0) ||
        !PyErr_ExceptionMatches(PyExc_AttributeError)) {
        return res;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    mt_node *n = ((mt_py_node_object *)self)->node;
    const char *arg = name + strlen(is_raw ? raw : prefix);
    res = is_raw                                          ? raw_saved(n, arg)
          : strncmp(arg, "result", strlen("result")) == 0 ? saved_result(n, arg)
                                                          : saved_argument(n, arg);
    if (res == NULL && !PyErr_Occurred()) {
        PyErr_Restore(type, value, tb);
        return NULL;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return res;
}

static PyMethodDef node_methods[] = {
    {"name", node_name, METH_NOARGS, "The node's name, e.g. 'AddmmBackward0'."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef node_getset[] = {
    {"next_functions", node_next_functions, NULL,
     "((node, input_nr), ...): where this node sends each input's gradient.", NULL},
    {"variable", node_variable, NULL, "AccumulateGrad's leaf tensor.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject mt_py_Node_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "minitorch._C.Node",
    .tp_basicsize = sizeof(mt_py_node_object),
    .tp_dealloc = node_dealloc,
    .tp_repr = node_repr,
    .tp_getattro = node_getattro,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A node of the autograd graph (a tensor's grad_fn).",
    .tp_methods = node_methods,
    .tp_getset = node_getset,
};

/* The subclass of Node named name (borrowed). */
static PyTypeObject *
type_for(const char *name)
{
    PyObject *tp = PyDict_GetItemString(mt_py_node_types, name);
    if (tp) {
        return (PyTypeObject *)tp;
    }
    PyObject *dict = PyDict_New();
    PyObject *base = node_base ? node_base : (PyObject *)&mt_py_Node_Type;
    PyObject *args = dict ? Py_BuildValue("(s(O)O)", class_name(name), base, dict) : NULL;
    Py_XDECREF(dict);
    if (args == NULL) {
        return NULL;
    }
    tp = PyObject_Call((PyObject *)&PyType_Type, args, NULL);
    Py_DECREF(args);
    if (tp == NULL || PyObject_SetAttrString(tp, "__module__", Py_None) < 0 ||
        PyDict_SetItemString(mt_py_node_types, name, tp) < 0) {
        Py_XDECREF(tp);
        return NULL;
    }
    Py_DECREF(tp); /* the dict keeps it */
    return (PyTypeObject *)tp;
}

PyObject *
mt_py_node_wrap(mt_node *n)
{
    if (n->pyobj) {
        PyObject *o = n->pyobj;
        Py_INCREF(o);
        mt_node_release(n);
        return o;
    }
    PyTypeObject *tp = type_for(n->name);
    mt_py_node_object *o = tp ? (mt_py_node_object *)tp->tp_alloc(tp, 0) : NULL;
    if (o == NULL) {
        mt_node_release(n);
        return NULL;
    }
    o->node = n;
    n->pyobj = o;
    return (PyObject *)o;
}

/* _C._set_node_base(cls): the class the nodes' classes derive from, a subclass of _C.Node */
PyObject *
mt_py_set_node_base(PyObject *module, PyObject *cls)
{
    (void)module;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &mt_py_Node_Type)) {
        return PyErr_Format(PyExc_TypeError, "_set_node_base(a subclass of Node)");
    }
    Py_XSETREF(node_base, Py_NewRef(cls));
    Py_RETURN_NONE;
}
