/* Python values of the core's small types: errors, scalars, dtype objects, devices, Size. */
#include <stdlib.h>
#include <string.h>

#include "python/pyminitorch.h"

PyObject *mt_py_device_class = NULL;
static PyObject *oom_error = NULL; /* minitorch.cuda.OutOfMemoryError once registered */
static PyObject *accelerator_error = NULL; /* minitorch.AcceleratorError once registered */
static PyObject *linalg_error = NULL; /* _C._LinAlgError (minitorch.linalg.LinAlgError) */

PyObject *
mt_py_raise(mt_status st)
{
    PyObject *cls;
    if (st == MT_EPYTHON && PyErr_Occurred()) {
        return NULL;
    }
    switch (st) {
    case MT_EINDEX:
        cls = PyExc_IndexError;
        break;
    case MT_ETYPE:
        cls = PyExc_TypeError;
        break;
    case MT_EVALUE:
        cls = PyExc_ValueError;
        break;
    case MT_ENOTIMPL:
        cls = PyExc_NotImplementedError;
        break;
    case MT_ECUDA_OOM:
        cls = oom_error ? oom_error : PyExc_RuntimeError;
        break;
    case MT_ECUDA: /* PyTorch's C10_CUDA_CHECK raises c10::AcceleratorError */
        cls = accelerator_error ? accelerator_error : PyExc_RuntimeError;
        break;
    case MT_ELINALG:
        cls = linalg_error;
        break;
    case MT_ENOCUDA:
        cls =
            PyExc_AssertionError; /* as PyTorch's CPU build: "Torch not compiled with CUDA enabled" */
        break;
    default:
        cls = PyExc_RuntimeError;
        break;
    }
    PyErr_SetString(cls, mt_last_error());
    return NULL;
}

int
mt_py_to_scalar(PyObject *o, mt_scalar *out)
{
    if (PyBool_Check(o)) {
        *out = mt_scalar_bool(o == Py_True);
        return 0;
    }
    if (PyLong_Check(o)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) {
            /* Beyond int64: a uint64 from 2^63 to 2^64 - 1, as PyTorch's Scalar keeps it;
             * beyond that Python's OverflowError, as PyTorch raises */
            unsigned long long u = PyLong_AsUnsignedLongLong(o);
            if (PyErr_Occurred()) {
                return -2;
            }
            *out = mt_scalar_uint(u);
            return 0;
        }
        *out = mt_scalar_int(v);
        return 0;
    }
    if (PyFloat_Check(o)) {
        *out = mt_scalar_float(PyFloat_AS_DOUBLE(o));
        return 0;
    }
    if (mt_py_is_tensor(o) || PyUnicode_Check(o) || PySequence_Check(o)) {
        return -1;
    }
    /* NumPy scalars and other number types. */
    if (PyIndex_Check(o)) {
        PyObject *i = PyNumber_Index(o);
        if (i == NULL) {
            return -2;
        }
        int r = mt_py_to_scalar(i, out);
        Py_DECREF(i);
        return r;
    }
    if (Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float) {
        double v = PyFloat_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) {
            return -2;
        }
        *out = mt_scalar_float(v);
        return 0;
    }
    return -1;
}

int
mt_py_complex_number(PyObject *o, mt_tensor **out)
{
    Py_complex c = PyComplex_AsCComplex(o);
    if (c.real == -1.0 && PyErr_Occurred()) {
        return -1;
    }
    mt_status st = mt_tensor_scalar(mt_scalar_float(c.real), MT_COMPLEX128, out);
    if (st) {
        mt_py_raise(st);
        return -1;
    }
    ((double *)mt_tensor_data(*out))[1] = c.imag; /* mt_tensor_scalar set the real part */
    return 0;
}

PyObject *
mt_py_from_scalar(mt_scalar s)
{
    switch (s.type) {
    case MT_BOOL:
        return PyBool_FromLong(s.v.b);
    case MT_INT64:
        return PyLong_FromLongLong(s.v.i);
    case MT_UINT64:
        return PyLong_FromUnsignedLongLong(s.v.u);
    default:
        return PyFloat_FromDouble(s.v.f);
    }
}

/* ---- dtype ---- */

typedef struct dtype_obj {
    PyObject_HEAD mt_dtype dt;
} dtype_obj;

static dtype_obj *dtypes[MT_NUM_DTYPES];

PyObject *
mt_py_dtype_obj(mt_dtype dt)
{
    return (PyObject *)dtypes[dt];
}

int
mt_py_to_dtype(PyObject *o, mt_dtype *out)
{
    if (PyObject_TypeCheck(o, &mt_py_dtype_Type)) {
        *out = ((dtype_obj *)o)->dt;
        return 0;
    }
    /* Python's own types stand for their dtypes, as in PyTorch. */
    if (o == (PyObject *)&PyFloat_Type) {
        *out = MT_FLOAT64;
        return 0;
    }
    if (o == (PyObject *)&PyLong_Type) {
        *out = MT_INT64;
        return 0;
    }
    if (o == (PyObject *)&PyBool_Type) {
        *out = MT_BOOL;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "expected a minitorch.dtype, got %s", Py_TYPE(o)->tp_name);
    return -1;
}

static PyObject *
dtype_repr(PyObject *self)
{
    return PyUnicode_FromFormat("minitorch.%s", mt_dtype_name(((dtype_obj *)self)->dt));
}

static PyObject *
dtype_is_floating_point(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(mt_dtype_is_float(((dtype_obj *)self)->dt));
}

static PyObject *
dtype_is_signed(PyObject *self, void *closure)
{
    (void)closure;
    mt_dtype dt = ((dtype_obj *)self)->dt;
    return PyBool_FromLong(!mt_dtype_is_unsigned(dt));
}

static PyObject *
dtype_is_complex(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(mt_dtype_is_complex(((dtype_obj *)self)->dt));
}

static PyObject *
dtype_itemsize(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(mt_dtype_size(((dtype_obj *)self)->dt));
}

static PyObject *
dtype_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    /* Pickled by name, so unpickling returns the singleton. */
    return PyUnicode_FromString(mt_dtype_name(((dtype_obj *)self)->dt));
}

static PyGetSetDef dtype_getset[] = {
    {"is_floating_point", dtype_is_floating_point, NULL, NULL, NULL},
    {"is_signed", dtype_is_signed, NULL, NULL, NULL},
    {"is_complex", dtype_is_complex, NULL, NULL, NULL},
    {"itemsize", dtype_itemsize, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* Jupyter's HTML of a dtype or Size is written in Python (minitorch/_html.py), beside the
 * other outputs' HTML; the static C types cannot take the method from Python. */
static PyObject *
call_html(const char *name, PyObject *self)
{
    PyObject *mod = PyImport_ImportModule("minitorch._html");
    if (mod == NULL) {
        return NULL;
    }
    PyObject *res = PyObject_CallMethod(mod, name, "(O)", self); /* (O): a Size is a tuple */
    Py_DECREF(mod);
    return res;
}

static PyObject *
dtype_repr_html(PyObject *self, PyObject *unused)
{
    (void)unused;
    return call_html("dtype_html", self);
}

static PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS, NULL},
    {"_repr_html_", dtype_repr_html, METH_NOARGS, "HTML for Jupyter."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject mt_py_dtype_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "minitorch.dtype",
    .tp_basicsize = sizeof(dtype_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_repr = dtype_repr,
    .tp_getset = dtype_getset,
    .tp_methods = dtype_methods,
    .tp_doc = "The element type of a tensor.",
};

/* ---- Size: a tuple of ints that prints as minitorch.Size([2, 3]) ---- */

static PyObject *
size_repr(PyObject *self)
{
    PyObject *list = PySequence_List(self), *res = NULL;
    if (list) {
        res = PyUnicode_FromFormat("minitorch.Size(%R)", list);
        Py_DECREF(list);
    }
    return res;
}

static PyObject *
size_numel(PyObject *self, PyObject *unused)
{
    (void)unused;
    long long n = 1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(self); k++) {
        long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(self, k));
        if (v == -1 && PyErr_Occurred()) {
            return NULL;
        }
        n *= v;
    }
    return PyLong_FromLongLong(n);
}

static PyObject *
size_repr_html(PyObject *self, PyObject *unused)
{
    (void)unused;
    return call_html("size_html", self);
}

/* Slicing, + and * give a Size, as PyTorch's (a tuple's would give a plain tuple). */
static PyObject *
as_size(PyObject *res)
{
    if (res == NULL || !PyTuple_CheckExact(res)) {
        return res;
    }
    PyObject *size = PyObject_CallOneArg((PyObject *)&mt_py_Size_Type, res);
    Py_DECREF(res);
    return size;
}

static PyObject *
size_subscript(PyObject *self, PyObject *key)
{
    PyObject *res = PyTuple_Type.tp_as_mapping->mp_subscript(self, key);
    return PySlice_Check(key) ? as_size(res) : res;
}

/* size + other reaches here only when nb_add declined (other is no tuple): PyTorch's message */
static PyObject *
size_concat(PyObject *self, PyObject *other)
{
    if (!PyTuple_Check(other)) {
        PyErr_Format(PyExc_TypeError, "can only concatenate tuple (not %s) to minitorch.Size",
                     Py_TYPE(other)->tp_name);
        return NULL;
    }
    return as_size(PyTuple_Type.tp_as_sequence->sq_concat(self, other));
}

/* Size + tuple and tuple + Size are Sizes, as PyTorch's Size.__add__ and __radd__ give: a
 * binary slot runs for either operand, where the tuple's sq_concat would answer a tuple. */
static PyObject *
size_add(PyObject *a, PyObject *b)
{
    if (!PyTuple_Check(a) || !PyTuple_Check(b)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return as_size(PyTuple_Type.tp_as_sequence->sq_concat(a, b));
}

/* Size(iterable) takes ints, as PyTorch's: a bool, or anything with __index__ (a 0-d integer
 * tensor, a NumPy integer), becomes an int; a float or a str is a TypeError. A symbolic size (a
 * type marked _mt_symbolic_size: a jagged nested tensor's ragged dim, PyTorch's nested int j1)
 * stays as it is, as PyTorch's Size holds a SymInt. */
static PyObject *
size_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *self = PyTuple_Type.tp_new(type, args, kwds);
    if (self == NULL) {
        return NULL;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(self); k++) {
        PyObject *item = PyTuple_GET_ITEM(self, k);
        if ((PyLong_Check(item) && !PyBool_Check(item)) ||
            PyObject_HasAttrString((PyObject *)Py_TYPE(item), "_mt_symbolic_size")) {
            continue;
        }
        PyObject *number = PyNumber_Index(item);
        if (number == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "minitorch.Size() takes an iterable of 'int' (item %zd is '%s')", k,
                         Py_TYPE(item)->tp_name);
            Py_DECREF(self);
            return NULL;
        }
        /* the tuple is new and ours alone, so its item may still be replaced */
        Py_SETREF(((PyTupleObject *)self)->ob_item[k], number);
    }
    return self;
}

static PyObject *
size_repeat(PyObject *self, Py_ssize_t n)
{
    return as_size(PyTuple_Type.tp_as_sequence->sq_repeat(self, n));
}

/* the slots not given here are the tuple's (PyType_Ready fills them in) */
static PySequenceMethods size_as_sequence = {.sq_concat = size_concat, .sq_repeat = size_repeat};
static PyNumberMethods size_as_number = {.nb_add = size_add};
static PyMappingMethods size_as_mapping = {.mp_subscript = size_subscript};

static PyMethodDef size_methods[] = {
    {"numel", size_numel, METH_NOARGS, "The number of elements a tensor of this size holds."},
    {"_repr_html_", size_repr_html, METH_NOARGS, "HTML for Jupyter."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject mt_py_Size_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "minitorch.Size",
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_TUPLE_SUBCLASS,
    .tp_repr = size_repr,
    .tp_new = size_new,
    .tp_as_number = &size_as_number,
    .tp_as_sequence = &size_as_sequence,
    .tp_as_mapping = &size_as_mapping,
    .tp_methods = size_methods,
    .tp_doc = "The shape of a tensor: a tuple of ints.",
};

PyObject *
mt_py_size_obj(int n, const int64_t *v)
{
    PyObject *t = mt_py_Size_Type.tp_alloc(&mt_py_Size_Type, n);
    if (t == NULL) {
        return NULL;
    }
    for (int k = 0; k < n; k++) {
        PyObject *i = PyLong_FromLongLong(v[k]);
        if (i == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, i);
    }
    return t;
}

/* ---- devices: minitorch.device is a Python class; the core sees (type, index) ---- */

static PyObject *cpu_device = NULL;

PyObject *
mt_py_device_obj(mt_device d)
{
    if (d.type == MT_CPU && cpu_device) {
        Py_INCREF(cpu_device);
        return cpu_device;
    }
    const char *type = d.type == MT_CUDA ? "cuda" : d.type == MT_META ? "meta" : "cpu";
    if (mt_py_device_class == NULL) {
        return PyUnicode_FromString(type);
    }
    /* cpu and meta have no index (PyTorch's device(type='meta')) */
    PyObject *res = d.type == MT_CUDA
                        ? PyObject_CallFunction(mt_py_device_class, "si", type, d.index)
                        : PyObject_CallFunction(mt_py_device_class, "s", type);
    if (res && d.type == MT_CPU) {
        Py_INCREF(res);
        cpu_device = res;
    }
    return res;
}

int
mt_py_to_device(PyObject *o, mt_device *out)
{
    if (PyLong_Check(o)) {
        long i = PyLong_AsLong(o);
        if (i < 0) {
            PyErr_Format(PyExc_RuntimeError, "Device index must not be negative");
            return -1;
        }
        *out = (mt_device){MT_CUDA, (int)i};
        return 0;
    }
    PyObject *s = PyObject_Str(o);
    if (s == NULL) {
        return -1;
    }
    const char *str = PyUnicode_AsUTF8(s);
    int rc = -1;
    if (str == NULL) {
        goto out;
    }
    if (strcmp(str, "cpu") == 0) {
        *out = MT_DEVICE_CPU;
        rc = 0;
    } else if (strcmp(str, "meta") == 0) {
        *out = MT_DEVICE_META;
        rc = 0;
    } else if (strncmp(str, "cuda", 4) == 0 && (str[4] == '\0' || str[4] == ':')) {
        char *end = NULL;
        long idx = str[4] ? strtol(str + 5, &end, 10) : mt_default_cuda_index();
        if (str[4] && (end == str + 5 || *end != '\0' || idx < 0)) {
            PyErr_Format(PyExc_RuntimeError, "Invalid device string: '%s'", str);
            goto out;
        }
        *out = (mt_device){MT_CUDA, (int)idx};
        rc = 0;
    } else {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected one of cpu, cuda, meta device type at start of device string: %s",
                     str);
    }
out:
    Py_DECREF(s);
    return rc;
}

/* ---- type promotion: promote_types, can_cast, result_type ---- */

/* The two dtype arguments of promote_types and can_cast (format "O!O!:<name>", names kwlist). */
static int
two_dtypes(PyObject *args, PyObject *kwargs, const char *format, char **kwlist, mt_dtype *a,
           mt_dtype *b)
{
    PyObject *oa, *ob;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &mt_py_dtype_Type, &oa,
                                     &mt_py_dtype_Type, &ob)) {
        return -1;
    }
    return mt_py_to_dtype(oa, a) < 0 || mt_py_to_dtype(ob, b) < 0 ? -1 : 0;
}

static PyObject *
py_promote_types(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"type1", "type2", NULL};
    mt_dtype a, b;
    if (two_dtypes(args, kwargs, "O!O!:promote_types", kwlist, &a, &b) < 0) {
        return NULL;
    }
    mt_status st = mt_promote_check(a, b);
    return st ? mt_py_raise(st) : Py_NewRef(mt_py_dtype_obj(mt_promote_types(a, b)));
}

static PyObject *
py_can_cast(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"from_", "to", NULL};
    mt_dtype a, b;
    if (two_dtypes(args, kwargs, "O!O!:can_cast", kwlist, &a, &b) < 0) {
        return NULL;
    }
    return PyBool_FromLong(mt_can_cast(a, b));
}

/* One operand of result_type beside the other: a tensor, or a Python number (a wrapped
 * number's rank; an int from 2^63 on as mt_py_settle_number makes it beside the other). */
static int
add_operand(mt_promotion *p, PyObject *o, PyObject *other)
{
    if (mt_py_is_tensor(o)) {
        const mt_tensor *t = mt_py_unwrap(o);
        mt_promotion_add(p, t->dtype, t->ndim, t->is_wrapped_number);
        return 0;
    }
    mt_scalar s;
    if (!PyNumber_Check(o) || mt_py_to_scalar(o, &s) != 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "result_type() received an invalid combination of arguments - got (%s)",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    if (s.type == MT_UINT64) {
        mt_scalar so;
        const bool number = !mt_py_is_tensor(other) && mt_py_to_scalar(other, &so) == 0;
        const int beside = mt_py_is_tensor(other) ? (int)mt_py_unwrap(other)->dtype
                           : number               ? (int)so.type
                                                  : -1;
        PyErr_Clear();
        if (mt_py_settle_number(MT_OP_add, 1, NULL, &s, beside, number) < 0) {
            return -1;
        }
    }
    mt_promotion_add(p, s.type, 0, true);
    return 0;
}

static PyObject *
py_result_type(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"tensor", "other", NULL};
    PyObject *a, *b;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:result_type", kwlist, &a, &b)) {
        return NULL;
    }
    mt_promotion p;
    mt_promotion_init(&p);
    if (add_operand(&p, a, b) < 0 || add_operand(&p, b, a) < 0) {
        return NULL;
    }
    return Py_NewRef(mt_py_dtype_obj(mt_promotion_result(&p)));
}

static PyMethodDef promotion_functions[] = {
    {"promote_types", (PyCFunction)(void (*)(void))py_promote_types, METH_VARARGS | METH_KEYWORDS,
     "promote_types(type1, type2): the smallest dtype both convert to (PyTorch's table)."},
    {"can_cast", (PyCFunction)(void (*)(void))py_can_cast, METH_VARARGS | METH_KEYWORDS,
     "can_cast(from_, to): whether a type conversion is allowed under PyTorch's casting rules."},
    {"result_type", (PyCFunction)(void (*)(void))py_result_type, METH_VARARGS | METH_KEYWORDS,
     "result_type(tensor, other): the dtype an arithmetic op on the two operands gives."},
    {NULL, NULL, 0, NULL},
};

int
mt_py_values_init(PyObject *module)
{
    mt_py_Size_Type.tp_base = &PyTuple_Type;
    if (PyType_Ready(&mt_py_dtype_Type) < 0 || PyType_Ready(&mt_py_Size_Type) < 0) {
        return -1;
    }
    if (PyModule_AddObjectRef(module, "dtype", (PyObject *)&mt_py_dtype_Type) < 0 ||
        PyModule_AddObjectRef(module, "Size", (PyObject *)&mt_py_Size_Type) < 0) {
        return -1;
    }
    /* PyTorch's torch._C._LinAlgError, a RuntimeError (torch.linalg.LinAlgError) */
    linalg_error = PyErr_NewExceptionWithDoc(
        "minitorch._C._LinAlgError",
        "Error raised by minitorch.linalg functions when the computation fails on the input "
        "(a singular matrix, one not positive-definite, an algorithm that does not converge).",
        PyExc_RuntimeError, NULL);
    if (linalg_error == NULL || PyModule_AddObjectRef(module, "_LinAlgError", linalg_error) < 0) {
        return -1;
    }
    if (PyModule_AddFunctions(module, promotion_functions) < 0) {
        return -1;
    }
    for (int k = 0; k < MT_NUM_DTYPES; k++) {
        dtypes[k] = PyObject_New(dtype_obj, &mt_py_dtype_Type);
        if (dtypes[k] == NULL) {
            return -1;
        }
        dtypes[k]->dt = (mt_dtype)k;
        if (PyModule_AddObjectRef(module, mt_dtype_name((mt_dtype)k), (PyObject *)dtypes[k]) < 0) {
            return -1;
        }
    }
    return 0;
}

void
mt_py_set_oom_error(PyObject *cls)
{
    Py_XINCREF(cls);
    Py_XSETREF(oom_error, cls);
}

void
mt_py_set_accelerator_error(PyObject *cls)
{
    Py_XINCREF(cls);
    Py_XSETREF(accelerator_error, cls);
}

void
mt_py_set_device_class(PyObject *cls)
{
    Py_XINCREF(cls);
    Py_XSETREF(mt_py_device_class, cls);
    Py_CLEAR(cpu_device);
}
