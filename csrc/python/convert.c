/* Tensors to and from Python data: tolist(), minitorch.tensor(data), from_numpy and the
 * buffer protocol (which makes Tensor.numpy() and np.asarray(t) zero-copy). */
#include <stdint.h>
#include <string.h>

#include "ops/ops.h"
#include "python/pyminitorch.h"

/* ---- tolist ---- */

static PyObject *
tolist_at(const mt_tensor *t, int d, const char *p)
{
    if (d == t->ndim && mt_dtype_is_complex(t->dtype)) {
        return t->dtype == MT_COMPLEX64
                   ? PyComplex_FromDoubles(((const float *)p)[0], ((const float *)p)[1])
                   : PyComplex_FromDoubles(((const double *)p)[0], ((const double *)p)[1]);
    }
    if (d == t->ndim) {
        mt_scalar s = mt_load_scalar(p, t->dtype);
        return mt_py_from_scalar(s);
    }
    PyObject *list = PyList_New(t->sizes[d]);
    int64_t step = t->strides[d] * (int64_t)mt_dtype_size(t->dtype);
    for (int64_t i = 0; list && i < t->sizes[d]; i++) {
        PyObject *item = tolist_at(t, d + 1, p + i * step);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

PyObject *
mt_py_complex_item(mt_tensor *t)
{
    if (mt_tensor_device(t).type != MT_CPU) {
        return mt_py_tensor_tolist(t); /* not reached: complex tensors stay on the CPU */
    }
    return tolist_at(t, t->ndim, mt_tensor_data(t));
}

PyObject *
mt_py_tensor_tolist(mt_tensor *t)
{
    if (mt_py_check_data(t) < 0) {
        return NULL;
    }
    if (mt_tensor_device(t).type != MT_CPU) {
        /* a device tensor is read through a copy on the host (PyTorch copies too) */
        mt_tensor *host = NULL;
        mt_status st = mt_op__to_copy(t, t->dtype, MT_DEVICE_CPU, &host);
        if (st) {
            return mt_py_raise(st);
        }
        PyObject *res = mt_py_check_data(host) < 0 ? NULL
                                                   : tolist_at(host, 0, mt_tensor_data(host));
        mt_tensor_release(host);
        return res;
    }
    return tolist_at(t, 0, mt_tensor_data(t));
}

/* ---- minitorch.tensor(data) ---- */

static PyObject *from_array(PyObject *arr, bool copy);

typedef struct infer {
    int ndim;       /* fixed by the first leaf: every leaf must sit at this depth */
    bool leaf_seen;
    bool dtype_given; /* the caller's dtype decides: an int of any size is a leaf, for fill */
    int64_t sizes[MT_MAX_DIMS];
    int dtype; /* promotion of the leaves' dtypes so far, -1 before the first */
} infer;

static int
is_sequence(PyObject *o)
{
    return PyList_Check(o) || PyTuple_Check(o);
}

/* Any other sequence, read as the list of its items, as PyTorch reads every object of the
 * sequence protocol: a NumPy array nested in a list (tensor([np.array(..), ...])), a range
 * (tensor(range(100))), a deque, a bytearray. Text is not a sequence of numbers: a str or
 * bytes is a leaf, refused as one. NumPy's scalars have an ndim but are not sequences. */
static bool
is_other_sequence(PyObject *o)
{
    return !is_sequence(o) && !mt_py_is_tensor(o) && !PyUnicode_Check(o) && !PyBytes_Check(o) &&
           PySequence_Check(o);
}

/* What such a sequence reads as: its items as a list. An array of one or more dimensions is the
 * list of its rows (whose NumPy scalars keep their dtype); a 0-d array is refused with PyTorch's
 * TypeError (it asks the array for its length). A new reference, or NULL with an exception. */
static PyObject *
sequence_items(PyObject *o)
{
    if (!PyObject_HasAttrString(o, "ndim")) {
        return PySequence_List(o);
    }
    PyObject *ndim = PyObject_GetAttrString(o, "ndim");
    long n = ndim ? PyLong_AsLong(ndim) : -1;
    Py_XDECREF(ndim);
    if (n < 0) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", Py_TYPE(o)->tp_name);
        }
        return NULL;
    }
    if (n == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of unsized object");
        return NULL;
    }
    return PySequence_List(o);
}

/* A NumPy scalar's dtype (np.float64(1) is float64, not a Python float), or -1. */
static int
numpy_scalar_dtype(PyObject *o)
{
    if (!PyObject_HasAttrString(o, "dtype") || !PyObject_HasAttrString(o, "item")) {
        return -1;
    }
    PyObject *dt = PyObject_GetAttrString(o, "dtype");
    PyObject *name = dt ? PyObject_GetAttrString(dt, "name") : NULL;
    const char *n = name ? PyUnicode_AsUTF8(name) : NULL;
    int res = -1;
    for (int k = 0; n && k < MT_NUM_DTYPES; k++) {
        if (strcmp(n, mt_dtype_name((mt_dtype)k)) == 0) {
            res = k;
        }
    }
    PyErr_Clear();
    Py_XDECREF(name);
    Py_XDECREF(dt);
    return res;
}

/* The dtype a leaf asks for (PyTorch's infer_scalar_type), or -1 with an exception set. */
static int
leaf_dtype(PyObject *o, bool dtype_given)
{
    /* Exact Python numbers first: the common case, and no attribute look-ups. */
    if (PyFloat_CheckExact(o)) {
        return MT_DEFAULT_FLOAT;
    }
    if (PyBool_Check(o)) {
        return MT_BOOL;
    }
    if (mt_py_is_tensor(o)) {
        if (mt_tensor_numel(mt_py_unwrap(o)) != 1) {
            PyErr_SetString(PyExc_ValueError,
                            "only one element tensors can be converted to Python scalars");
            return -1;
        }
        return mt_py_unwrap(o)->dtype;
    }
    if (PyLong_Check(o)) {
        int overflow;
        PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow && !dtype_given) {
            PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
            return -1;
        }
        return MT_INT64;
    }
    int np = numpy_scalar_dtype(o);
    if (np >= 0) {
        return np;
    }
    if (PyFloat_Check(o)) {
        return MT_DEFAULT_FLOAT;
    }
    if (PyComplex_Check(o)) { /* complex64 with float32 the default float, as PyTorch's */
        return mt_dtype_to_complex(MT_DEFAULT_FLOAT);
    }
    mt_scalar s;
    int r = mt_py_to_scalar(o, &s);
    if (r == 0) {
        return s.type == MT_FLOAT64 ? (int)MT_DEFAULT_FLOAT : (int)s.type;
    }
    if (r == -1) {
        /* PyTorch's infer_scalar_type: text is a TypeError, any other object (None, a dict, a
         * set, an instance) a RuntimeError */
        const bool text = PyUnicode_Check(o) || PyBytes_Check(o);
        PyErr_Format(text ? PyExc_TypeError : PyExc_RuntimeError,
                     text ? "new(): invalid data type '%s'" : "Could not infer dtype of %s",
                     Py_TYPE(o)->tp_name);
    }
    return -1;
}

/* First pass: the shape and the promoted dtype. Ragged or mixed nesting is an error, so the
 * second pass writes exactly numel elements. */
static int
infer_shape(PyObject *o, int d, infer *inf)
{
    if (is_other_sequence(o)) {
        PyObject *u = sequence_items(o);
        int r = u ? infer_shape(u, d, inf) : -1;
        Py_XDECREF(u);
        return r;
    }
    if (!is_sequence(o)) {
        if (!inf->leaf_seen && d > 0 && PyUnicode_Check(o)) {
            /* PyTorch measures the shape down the first items and reads a str as one more
             * dimension there */
            PyErr_SetString(PyExc_ValueError, "too many dimensions 'str'");
            return -1;
        }
        if (inf->leaf_seen ? d != inf->ndim : d < inf->ndim) {
            PyErr_SetString(PyExc_TypeError, "not a sequence");
            return -1;
        }
        inf->leaf_seen = true;
        inf->ndim = d;
        int dt = leaf_dtype(o, inf->dtype_given);
        if (dt < 0) {
            return -1;
        }
        inf->dtype = inf->dtype < 0 ? dt
                                    : (int)mt_promote_types((mt_dtype)inf->dtype, (mt_dtype)dt);
        return 0;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (inf->leaf_seen && d >= inf->ndim) {
        PyErr_Format(PyExc_TypeError, "'%s' object cannot be interpreted as an integer",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    if (d == inf->ndim) {
        if (d == MT_MAX_DIMS) {
            PyErr_Format(PyExc_RuntimeError, "only tensors with up to %d dims are supported",
                         MT_MAX_DIMS);
            return -1;
        }
        inf->sizes[inf->ndim++] = n;
    } else if (inf->sizes[d] != n) {
        PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got %zd)",
                     (long long)inf->sizes[d], d, n);
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (infer_shape(PySequence_Fast_GET_ITEM(o, k), d + 1, inf) < 0) {
            return -1;
        }
    }
    return 0;
}

/* A leaf written into a complex tensor: a number of any kind (a real one has 0 imaginary
 * part), or a one-element tensor, complex or real. */
static int
fill_complex(PyObject *o, mt_dtype dt, char **p)
{
    Py_complex c = {0.0, 0.0};
    if (mt_py_is_tensor(o)) {
        PyObject *v = PyObject_CallMethod(o, "item", NULL);
        if (v == NULL) {
            return -1;
        }
        c = PyComplex_AsCComplex(v);
        Py_DECREF(v);
    } else {
        c = PyComplex_AsCComplex(o);
    }
    if (c.real == -1.0 && PyErr_Occurred()) {
        return -1;
    }
    if (dt == MT_COMPLEX64) {
        ((float *)*p)[0] = (float)c.real;
        ((float *)*p)[1] = (float)c.imag;
    } else {
        ((double *)*p)[0] = c.real;
        ((double *)*p)[1] = c.imag;
    }
    *p += mt_dtype_size(dt);
    return 0;
}

/* Second pass: writes the leaves in row-major order. */
static int
fill(PyObject *o, mt_dtype dt, char **p)
{
    if (is_other_sequence(o)) {
        PyObject *u = sequence_items(o);
        int r = u ? fill(u, dt, p) : -1;
        Py_XDECREF(u);
        return r;
    }
    if (is_sequence(o)) {
        for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(o); k++) {
            if (fill(PySequence_Fast_GET_ITEM(o, k), dt, p) < 0) {
                return -1;
            }
        }
        return 0;
    }
    if (mt_dtype_is_complex(dt)) {
        return fill_complex(o, dt, p);
    }
    if (PyComplex_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "must be real number, not complex");
        return -1;
    }
    mt_scalar s;
    if (dt == MT_UINT64 && (PyLong_Check(o) || PyFloat_Check(o))) {
        /* PyTorch's uint64 leaf: an int in [0, 2^64) (Python's OverflowError else, and its
         * TypeError for a float) */
        unsigned long long u = PyFloat_Check(o) ? 0 : PyLong_AsUnsignedLongLong(o);
        if (PyFloat_Check(o)) {
            PyErr_SetString(PyExc_TypeError, "an integer is required");
        }
        if (PyErr_Occurred()) {
            return -1;
        }
        memcpy(*p, &u, sizeof(u));
        *p += sizeof(u);
        return 0;
    }
    int overflow = 0;
    if (PyLong_Check(o)) {
        PyLong_AsLongLongAndOverflow(o, &overflow);
    }
    if (overflow && mt_dtype_is_integral(dt, false)) {
        /* an int beyond int64 for an integer dtype: PyTorch's unpacking fails */
        PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
        return -1;
    }
    if (overflow) { /* for a float or bool dtype, as a double */
        s = mt_scalar_float(PyLong_AsDouble(o));
        if (PyErr_Occurred()) {
            return -1;
        }
    } else if (mt_py_is_tensor(o)) {
        mt_status st = mt_tensor_item(mt_py_unwrap(o), &s);
        if (st) {
            mt_py_raise(st);
            return -1;
        }
    } else if (mt_py_to_scalar(o, &s) != 0) {
        if (!PyErr_Occurred()) { /* infer_shape accepted it, so a leaf changed under us */
            PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", Py_TYPE(o)->tp_name);
        }
        return -1;
    }
    /* tensor() converts into the floating dtypes unchecked (70000 is inf in float16), as
     * PyTorch's does; into the others checked */
    bool floating = (mt_dtype_is_float(dt) || mt_dtype_is_complex(dt)) &&
                    (s.imag == 0.0 || mt_dtype_is_complex(dt));
    if (!floating && mt_check_scalar_fits(s, dt)) {
        /* PyTorch's tensor() names the dtype as Python does ("int32", not the C type) */
        PyErr_Format(PyExc_RuntimeError, "value cannot be converted to type %s without overflow",
                     mt_dtype_name(dt));
        return -1;
    }
    mt_store_scalar(*p, dt, s);
    *p += mt_dtype_size(dt);
    return 0;
}

static mt_status
tensor_from_sequence(PyObject *data, int dtype, mt_tensor **out, int *pyerr)
{
    infer inf = {.ndim = 0, .leaf_seen = false, .dtype_given = dtype >= 0, .dtype = -1};
    if (infer_shape(data, 0, &inf) < 0) {
        *pyerr = 1;
        return MT_ERUNTIME;
    }
    mt_dtype dt = dtype >= 0      ? (mt_dtype)dtype
                  : inf.dtype < 0 ? MT_DEFAULT_FLOAT
                                  : (mt_dtype)inf.dtype;
    mt_status st = mt_tensor_empty(inf.ndim, inf.sizes, dt, MT_DEVICE_CPU, out);
    if (st) {
        return st;
    }
    char *p = mt_tensor_data(*out);
    if (fill(data, dt, &p) < 0) {
        mt_tensor_clear(out);
        *pyerr = 1;
        return MT_ERUNTIME;
    }
    return MT_OK;
}

/* tensor(data, *, dtype=None, device=None, requires_grad=False): always copies data. */
PyObject *
mt_py_tensor_new(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    static char *kwlist[] = {"data", "dtype", "device", "requires_grad", "pin_memory", NULL};
    PyObject *data, *dtype_obj = Py_None, *device_obj = Py_None, *rg_obj = Py_False;
    int pin = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOOp:tensor", kwlist, &data, &dtype_obj,
                                     &device_obj, &rg_obj, &pin)) {
        return NULL;
    }
    if (!PyBool_Check(rg_obj)) {
        return PyErr_Format(PyExc_TypeError,
                            "tensor(): argument 'requires_grad' must be bool, not %s",
                            Py_TYPE(rg_obj)->tp_name);
    }
    int requires_grad = rg_obj == Py_True;
    mt_dtype dt = MT_DEFAULT_FLOAT;
    int dtype = -1;
    mt_device dev = MT_DEVICE_CPU;
    if (dtype_obj != Py_None) {
        if (mt_py_to_dtype(dtype_obj, &dt) < 0) {
            return NULL;
        }
        dtype = (int)dt;
    }
    if (device_obj != Py_None && mt_py_to_device(device_obj, &dev) < 0) {
        return NULL;
    }
    /* set_default_device's, or the CPU (or a tensor's own device, below) */
    bool by_default = device_obj == Py_None && mt_py_default_device(&dev);
    mt_tensor *t = NULL, *moved = NULL;
    mt_status st;
    int pyerr = 0;
    if (mt_py_is_tensor(data)) {
        /* PyTorch copies on the source's device unless told, and says how it would rather be
         * asked */
        if (PyErr_WarnEx(PyExc_UserWarning,
                         "To copy construct from a tensor, it is recommended to use "
                         "sourceTensor.detach().clone() or "
                         "sourceTensor.detach().clone().requires_grad_(True), rather than "
                         "torch.tensor(sourceTensor).",
                         1) < 0) {
            return NULL;
        }
        mt_tensor *src = mt_py_unwrap(data);
        if (device_obj == Py_None && !by_default) {
            dev = mt_tensor_device(src);
        }
        st = mt_op__to_copy(src, dtype >= 0 ? dt : src->dtype, dev, &t);
    } else if (!is_sequence(data) && PyObject_CheckBuffer(data) &&
               PyObject_HasAttrString(data, "__array_interface__")) {
        PyObject *copied = from_array(data, true);
        if (copied == NULL) {
            return NULL;
        }
        mt_tensor *src = mt_py_unwrap(copied);
        st = mt_op__to_copy(src, dtype >= 0 ? dt : src->dtype, MT_DEVICE_CPU, &t);
        Py_DECREF(copied);
    } else {
        st = tensor_from_sequence(data, dtype, &t, &pyerr);
    }
    if (st) {
        return pyerr ? NULL : mt_py_raise(st);
    }
    if (!mt_device_eq(mt_tensor_device(t), dev)) {
        st = mt_op__to_copy(t, t->dtype, dev, &moved);
        mt_tensor_release(t);
        if (st) {
            return mt_py_raise(st);
        }
        t = moved;
    }
    if (requires_grad && !mt_dtype_is_float(t->dtype) && !mt_dtype_is_complex(t->dtype)) {
        mt_tensor_release(t);
        PyErr_SetString(PyExc_RuntimeError,
                        "Only Tensors of floating point and complex dtype can require gradients");
        return NULL;
    }
    t->requires_grad = requires_grad;
    return mt_py_wrap(t);
}

/* ---- from_numpy: share the memory of any buffer exporter ---- */

typedef struct buffer_allocator {
    mt_allocator base;
} buffer_allocator;

static void
buffer_free(mt_allocator *self, void *ptr, size_t nbytes, void *ctx)
{
    (void)self;
    (void)ptr;
    (void)nbytes;
    /* The last view may die on any thread; releasing the exporter needs the GIL. */
    PyGILState_STATE g = PyGILState_Ensure();
    Py_buffer *view = ctx;
    PyBuffer_Release(view);
    PyMem_Free(view);
    PyGILState_Release(g);
}

static buffer_allocator python_buffer_allocator = {
    .base = {"python-buffer", NULL, buffer_free, NULL, NULL},
};

static int
buffer_dtype(PyObject *arr, const Py_buffer *v, mt_dtype *dt)
{
    const char *f = v->format ? v->format : "B";
    if (*f == '>' || *f == '!') {
        PyErr_SetString(PyExc_ValueError,
                        "given numpy array has byte order different from the native byte order. "
                        "Conversion between byte orders is currently not supported.");
        return -1;
    }
    if (*f == '<' || *f == '=' || *f == '@') {
        f++;
    }
    if (f[0] == 'Z' && (f[1] == 'f' || f[1] == 'd') && f[2] == '\0') {
        *dt = f[1] == 'f' ? MT_COMPLEX64 : MT_COMPLEX128;
        return 0;
    }
    if (f[0] != '\0' && f[1] == '\0') {
        switch (f[0]) {
        case 'f':
            *dt = MT_FLOAT32;
            return 0;
        case 'd':
            *dt = MT_FLOAT64;
            return 0;
        case '?':
            *dt = MT_BOOL;
            return 0;
        case 'e':
            *dt = MT_FLOAT16;
            return 0;
        case 'B':
            *dt = MT_UINT8;
            return 0;
        case 'H':
            *dt = MT_UINT16;
            return 0;
        case 'I':
        case 'L':
        case 'Q':
            if (v->itemsize == 8 || v->itemsize == 4) {
                *dt = v->itemsize == 8 ? MT_UINT64 : MT_UINT32;
                return 0;
            }
            break;
        case 'b':
            *dt = MT_INT8;
            return 0;
        case 'h':
            if (v->itemsize == 2) {
                *dt = MT_INT16;
                return 0;
            }
            break;
        case 'q':
        case 'l':
        case 'i':
            if (v->itemsize == 8 || v->itemsize == 4) {
                *dt = v->itemsize == 8 ? MT_INT64 : MT_INT32;
                return 0;
            }
            break;
        default:
            break;
        }
    }
    /* PyTorch names the dtype's scalar type as NumPy spells it: numpy.object_, numpy.str_ */
    PyObject *np_dtype = PyObject_GetAttrString(arr, "dtype");
    PyObject *scalar = np_dtype ? PyObject_GetAttrString(np_dtype, "type") : NULL;
    PyErr_Clear();
    const char *name = scalar && PyType_Check(scalar) ? ((PyTypeObject *)scalar)->tp_name
                                                      : Py_TYPE(arr)->tp_name;
    PyErr_Format(PyExc_TypeError,
                 "can't convert np.ndarray of type %s. The only supported types are: float64, "
                 "float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, "
                 "uint32, uint16, uint8, and bool.",
                 name);
    Py_XDECREF(scalar);
    Py_XDECREF(np_dtype);
    return -1;
}

/* A new contiguous tensor with the values of the buffer `view` (any strides, any alignment):
 * what tensor(ndarray) makes. Releases nothing. */
static PyObject *
copy_of_buffer(Py_buffer *view, mt_dtype dt)
{
    int64_t sizes[MT_MAX_DIMS];
    for (int d = 0; d < view->ndim; d++) {
        sizes[d] = view->shape[d];
    }
    mt_tensor *t;
    mt_status st = mt_tensor_empty(view->ndim, sizes, dt, MT_DEVICE_CPU, &t);
    if (st) {
        return mt_py_raise(st);
    }
    /* Byte-wise, so an unaligned or negatively strided array is read without typed loads. */
    if (view->len > 0 && PyBuffer_ToContiguous(mt_tensor_data(t), view, view->len, 'C') < 0) {
        mt_tensor_release(t);
        return NULL;
    }
    return mt_py_wrap(t);
}

/* The tensor of a NumPy array: sharing its memory, or (copy) with a copy of its values. */
static PyObject *
from_array(PyObject *arr, bool copy)
{
    /* NumPy arrays (and look-alikes), not any buffer: bytes must not become writable. */
    if (!PyObject_HasAttrString(arr, "__array_interface__") || !PyObject_CheckBuffer(arr)) {
        PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %s)", Py_TYPE(arr)->tp_name);
        return NULL;
    }
    Py_buffer *view = PyMem_Calloc(1, sizeof(Py_buffer));
    if (view == NULL) {
        return PyErr_NoMemory();
    }
    /* Writable when the exporter allows, so writes show on both sides; else read-only. */
    if (PyObject_GetBuffer(arr, view, PyBUF_RECORDS) < 0) {
        PyErr_Clear();
        if (PyObject_GetBuffer(arr, view, PyBUF_RECORDS_RO) < 0) {
            PyMem_Free(view);
            PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %s)", Py_TYPE(arr)->tp_name);
            return NULL;
        }
        /* Tensors have no read-only flag: sharing read-only memory is PyTorch's undefined
         * behaviour too (a write to a read-only mapping faults), and it warns, once. */
        static bool warned;
        if (!copy && !warned) {
            warned = true;
            if (PyErr_WarnEx(PyExc_UserWarning,
                             "The given NumPy array is not writable, and minitorch does not "
                             "support non-writable tensors. This means writing to this tensor will "
                             "result in undefined behavior. You may want to copy the array to "
                             "protect its data or make it writable before converting it to a "
                             "tensor. This type of warning will be suppressed for the rest of this "
                             "program.",
                             1) < 0) {
                PyBuffer_Release(view);
                PyMem_Free(view);
                return NULL;
            }
        }
    }
    mt_dtype dt;
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    mt_storage *storage = NULL;
    mt_tensor *t = NULL;
    mt_status st;
    if (buffer_dtype(arr, view, &dt) < 0) {
        goto out_release_view;
    }
    if (view->ndim > MT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "only tensors with up to %d dims are supported (got %d)",
                     MT_MAX_DIMS, view->ndim);
        goto out_release_view;
    }
    size_t span = view->len > 0 ? (size_t)view->itemsize : 0;
    for (int d = 0; d < view->ndim; d++) {
        Py_ssize_t s = view->strides[d];
        if (s < 0) {
            PyErr_SetString(PyExc_ValueError,
                            "At least one stride in the given numpy array is negative, and tensors "
                            "with negative strides are not currently supported. (You can probably "
                            "work around this by making a copy of your array  with "
                            "array.copy().) ");
            goto out_release_view;
        }
        if (s % view->itemsize != 0) {
            PyErr_SetString(PyExc_ValueError,
                            "given numpy array strides not a multiple of the element byte size. "
                            "Copy the numpy array to reallocate the memory.");
            goto out_release_view;
        }
        sizes[d] = view->shape[d];
        strides[d] = s / view->itemsize;
        if (view->len > 0) {
            span += (size_t)(view->shape[d] - 1) * (size_t)s;
        }
    }
    if (copy) {
        PyObject *res = copy_of_buffer(view, dt);
        PyBuffer_Release(view);
        PyMem_Free(view);
        return res;
    }
    /* Kernels load elements as their C type, which must be aligned (NumPy allows unaligned
     * arrays, e.g. views into a byte buffer at an odd offset). */
    if ((uintptr_t)view->buf % (uintptr_t)view->itemsize != 0) {
        PyErr_SetString(PyExc_ValueError,
                        "given numpy array is not aligned to its element size; minitorch cannot "
                        "share its memory. Copy it first (array.copy() or "
                        "minitorch.tensor(array)).");
        goto out_release_view;
    }
    st = mt_storage_wrap(view->buf, span, MT_DEVICE_CPU, &python_buffer_allocator.base, view,
                         &storage);
    if (st) {
        mt_py_raise(st);
        goto out_release_view;
    }
    /* The storage owns the view from here: releasing the storage releases the buffer. */
    st = mt_tensor_on_storage(storage, view->ndim, sizes, strides, 0, dt, &t);
    mt_storage_release(storage);
    return st ? mt_py_raise(st) : mt_py_wrap(t);
out_release_view:
    PyBuffer_Release(view);
    PyMem_Free(view);
    return NULL;
}

PyObject *
mt_py_from_numpy(PyObject *module, PyObject *arr)
{
    (void)module;
    return from_array(arr, false);
}

/* ---- the buffer protocol ---- */

/* struct module formats; bfloat16 and the float8 formats have none, and NumPy no such dtypes:
 * numpy() refuses them */
static const char *const formats[MT_NUM_DTYPES] = {
    [MT_BOOL] = "?",    [MT_INT32] = "i",      [MT_INT64] = "q",       [MT_FLOAT32] = "f",
    [MT_FLOAT64] = "d", [MT_UINT8] = "B",      [MT_INT8] = "b",        [MT_INT16] = "h",
    [MT_FLOAT16] = "e", [MT_COMPLEX64] = "Zf", [MT_COMPLEX128] = "Zd", [MT_UINT16] = "H",
    [MT_UINT32] = "I",  [MT_UINT64] = "Q"};

/* What an export hands out as view->obj: the storage the buffer points into, and the shape and
 * strides it describes. Not the tensor: `t.data = other` and Module.double() give the tensor
 * another storage, and a NumPy array or memoryview of the old one must keep that one alive. */
typedef struct buffer_owner {
    PyObject_HEAD mt_storage *storage; /* owned */
    Py_ssize_t dims[2 * MT_MAX_DIMS]; /* the shape, then the strides in bytes */
} buffer_owner;

static void
buffer_owner_dealloc(PyObject *self)
{
    mt_storage_release(((buffer_owner *)self)->storage);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject buffer_owner_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "minitorch._C._BufferOwner",
    .tp_basicsize = sizeof(buffer_owner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The storage behind a buffer export of a tensor (a memoryview's .obj).",
    .tp_dealloc = buffer_owner_dealloc,
};

int
mt_py_convert_init(void)
{
    return PyType_Ready(&buffer_owner_Type);
}

static bool
is_f_contiguous(const mt_tensor *t)
{
    int64_t expected = 1;
    for (int d = 0; d < t->ndim && mt_tensor_numel(t) > 0; d++) {
        if (t->sizes[d] != 1) {
            if (t->strides[d] != expected) {
                return false;
            }
            expected *= t->sizes[d];
        }
    }
    return true;
}

/* A consumer that asks for no strides (bytes, hashlib, b"".join, io.BytesIO, struct: they read
 * view->len bytes from view->buf) or for a contiguous buffer gets one only from a tensor laid
 * out so; others get BufferError, as memoryview answers (NumPy: ValueError) rather than len
 * bytes read past an expanded or sliced tensor's memory. */
static int
check_layout(const mt_tensor *t, int flags)
{
    bool c = mt_tensor_is_contiguous(t);
    const char *need = NULL;
    if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS ||
        (flags & PyBUF_STRIDES) != PyBUF_STRIDES) {
        need = c ? NULL : "C-contiguous";
    } else if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS) {
        need = is_f_contiguous(t) ? NULL : "Fortran contiguous";
    } else if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS) {
        need = c || is_f_contiguous(t) ? NULL : "contiguous";
    }
    if (need) {
        PyErr_Format(PyExc_BufferError, "tensor is not %s (call .contiguous() first)", need);
        return -1;
    }
    return 0;
}

int
mt_py_tensor_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    mt_tensor *t = mt_py_unwrap(self);
    if (mt_py_check_data(t) < 0) {
        return -1;
    }
    if (mt_tensor_device(t).type != MT_CPU) {
        char dev[32];
        PyErr_Format(PyExc_TypeError,
                     "can't convert %s device type tensor to numpy. Use Tensor.cpu() to copy "
                     "the tensor to host memory first.",
                     mt_device_format(dev, sizeof(dev), mt_tensor_device(t)));
        return -1;
    }
    if (formats[t->dtype] == NULL) {
        PyErr_Format(PyExc_TypeError, "Got unsupported ScalarType %s",
                     mt_dtype_scalar_name(t->dtype));
        return -1;
    }
    /* as PyTorch's: with grad mode off (an autograd.Function's forward, no_grad) nothing records
     * what NumPy would do to the memory, so the view is allowed */
    if (t->requires_grad && mt_grad_enabled()) {
        PyErr_SetString(PyExc_RuntimeError, "Can't call numpy() on Tensor that requires grad. Use "
                                            "tensor.detach().numpy() instead.");
        return -1;
    }
    if (check_layout(t, flags) < 0) {
        return -1;
    }
    buffer_owner *owner = PyObject_New(buffer_owner, &buffer_owner_Type);
    if (owner == NULL) {
        return -1;
    }
    mt_storage_retain(t->storage);
    owner->storage = t->storage;
    Py_ssize_t item = (Py_ssize_t)mt_dtype_size(t->dtype);
    for (int d = 0; d < t->ndim; d++) {
        owner->dims[d] = (Py_ssize_t)t->sizes[d];
        owner->dims[t->ndim + d] = (Py_ssize_t)t->strides[d] * item;
    }
    /* Each field only when asked for (the protocol's rule): a consumer that did not ask for a
     * shape reads the buffer as view->len plain bytes. */
    bool nd = (flags & PyBUF_ND) == PyBUF_ND;
    view->buf = mt_tensor_data(t);
    view->obj = (PyObject *)owner;
    view->len = (Py_ssize_t)mt_tensor_numel(t) * item;
    view->readonly = 0;
    view->itemsize = item;
    view->format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? (char *)formats[t->dtype] : NULL;
    view->ndim = nd ? t->ndim : 1;
    view->shape = nd ? owner->dims : NULL;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? owner->dims + t->ndim : NULL;
    view->suboffsets = NULL;
    view->internal = NULL;
    return 0;
}
