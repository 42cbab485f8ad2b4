/* minitorch._C._TensorMeta: the metaclass of minitorch.Tensor. isinstance(x, Tensor) also holds
 * for the tensors of the other layouts (minitorch.sparse's COO and CSR classes, registered with
 * _TensorMeta._register_layout), as PyTorch's sparse tensors are Tensors; against any other
 * class (a Tensor subclass: Parameter) the check is the plain one. In C, so that the checks of
 * every other object against Tensor and its subclasses stay a few type comparisons. */
#include "python/pyminitorch.h"

static PyObject *layouts;    /* a tuple of the registered classes, or NULL */
static PyObject *class_name; /* "__class__", interned */

/* The plain isinstance(obj, cls): obj's type, or the class it claims (a proxy's __class__). */
static int
plain_instance(PyObject *obj, PyObject *cls)
{
    if (PyObject_TypeCheck(obj, (PyTypeObject *)cls)) {
        return 1;
    }
    PyObject *claimed = PyObject_GetAttr(obj, class_name);
    if (claimed == NULL) {
        PyErr_Clear();
        return 0;
    }
    int r = claimed != (PyObject *)Py_TYPE(obj) && PyType_Check(claimed) &&
            PyType_IsSubtype((PyTypeObject *)claimed, (PyTypeObject *)cls);
    Py_DECREF(claimed);
    return r;
}

static PyObject *
meta_instancecheck(PyObject *cls, PyObject *obj)
{
    if (plain_instance(obj, cls)) {
        Py_RETURN_TRUE;
    }
    if (layouts && cls == (PyObject *)mt_py_tensor_class) {
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(layouts); k++) {
            if (PyObject_TypeCheck(obj, (PyTypeObject *)PyTuple_GET_ITEM(layouts, k))) {
                Py_RETURN_TRUE;
            }
        }
    }
    Py_RETURN_FALSE;
}

/* _TensorMeta._register_layout(cls): instances of cls are instances of Tensor from now on. */
static PyObject *
meta_register_layout(PyObject *unused, PyObject *cls)
{
    (void)unused;
    if (!PyType_Check(cls)) {
        return PyErr_Format(PyExc_TypeError, "_register_layout expects a class, got %s",
                            Py_TYPE(cls)->tp_name);
    }
    PyObject *one = PyTuple_Pack(1, cls);
    PyObject *more = one && layouts ? PySequence_Concat(layouts, one) : Py_XNewRef(one);
    Py_XDECREF(one);
    if (more == NULL) {
        return NULL;
    }
    Py_XSETREF(layouts, more);
    Py_RETURN_NONE;
}

static PyMethodDef meta_methods[] = {
    {"__instancecheck__", meta_instancecheck, METH_O, NULL},
    {"_register_layout", meta_register_layout, METH_O | METH_STATIC, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject meta_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "minitorch._C._TensorMeta",
    .tp_doc = "The metaclass of minitorch.Tensor: isinstance(sparse, Tensor) holds.",
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_methods = meta_methods,
};

int
mt_py_tensor_meta_init(PyObject *module)
{
    meta_type.tp_base = &PyType_Type;
    class_name = PyUnicode_InternFromString("__class__");
    if (class_name == NULL || PyType_Ready(&meta_type) < 0) {
        return -1;
    }
    return PyModule_AddObjectRef(module, "_TensorMeta", (PyObject *)&meta_type);
}
