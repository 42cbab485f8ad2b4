/* grad_fn._raw_saved_<name>: PyTorch's SavedTensor, the handle on one tensor a node keeps for
 * its backward, whose register_hooks(pack_hook, unpack_hook) packs that tensor now and has the
 * node keep what pack_hook returned, unpacked when the backward needs it (the per-tensor form of
 * torch.autograd.graph.saved_tensors_hooks). The node's slot and the errors are the core's
 * (mt_saved_set_hooks); here only the Python objects. */
#include "python/pyminitorch.h"

#include "autograd/autograd.h"

typedef struct {
    PyObject_HEAD mt_node *node; /* owned */
    bool output;                 /* a kept result (else an input) */
    int k;                       /* its slot */
} saved_object;

PyObject *
mt_py_saved_tensor(mt_node *n, bool output, int k)
{
    saved_object *o = PyObject_New(saved_object, &mt_py_SavedTensor_Type);
    if (o == NULL) {
        return NULL;
    }
    o->node = mt_node_retain(n);
    o->output = output;
    o->k = k;
    return (PyObject *)o;
}

static void
saved_dealloc(PyObject *self)
{
    mt_node_release(((saved_object *)self)->node);
    PyObject_Free(self);
}

/* pack_hook(tensor) as the core's pack callback: the handle is the pair (unpack_hook, packed)
 * that the installed saved-tensor hooks unpack and drop */
static mt_status
call_pack(mt_tensor *t, void **handle, void *ctx)
{
    PyObject *hooks = ctx; /* (pack_hook, unpack_hook) */
    PyObject *arg = mt_py_wrap(mt_tensor_retain(t));
    PyObject *packed = arg ? PyObject_CallOneArg(PyTuple_GET_ITEM(hooks, 0), arg) : NULL;
    Py_XDECREF(arg);
    PyObject *pair = packed ? PyTuple_Pack(2, PyTuple_GET_ITEM(hooks, 1), packed) : NULL;
    Py_XDECREF(packed);
    if (pair == NULL) {
        return mt_fail(MT_EPYTHON, "error in a saved tensor pack hook"); /* the error stays set */
    }
    *handle = pair;
    return MT_OK;
}

static PyObject *
saved_register_hooks(PyObject *self, PyObject *args)
{
    saved_object *o = (saved_object *)self;
    PyObject *pack, *unpack;
    if (!PyArg_ParseTuple(args, "OO:register_hooks", &pack, &unpack)) {
        return NULL;
    }
    if (!PyCallable_Check(pack) || !PyCallable_Check(unpack)) {
        return PyErr_Format(PyExc_TypeError,
                            "register_hooks(): incompatible function arguments: expected "
                            "(pack_hook: Callable, unpack_hook: Callable), got (%s, %s)",
                            Py_TYPE(pack)->tp_name, Py_TYPE(unpack)->tp_name);
    }
    PyObject *hooks = PyTuple_Pack(2, pack, unpack);
    if (hooks == NULL) {
        return NULL;
    }
    mt_py_saved_hooks_install();
    mt_status st = mt_saved_set_hooks(o->node, o->output, o->k, call_pack, hooks);
    Py_DECREF(hooks);
    if (st) {
        return PyErr_Occurred() ? NULL : mt_py_raise(st);
    }
    Py_RETURN_NONE;
}

static PyMethodDef saved_methods[] = {
    {"register_hooks", saved_register_hooks, METH_VARARGS,
     "register_hooks(pack_hook, unpack_hook): pack the kept tensor now, unpack it for backward"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject mt_py_SavedTensor_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "minitorch._C.SavedTensor",
    .tp_basicsize = sizeof(saved_object),
    .tp_dealloc = saved_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tensor an autograd node keeps for its backward (grad_fn._raw_saved_<name>).",
    .tp_methods = saved_methods,
};
