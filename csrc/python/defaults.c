/* The defaults of factories: the default float dtype (one for the process, as PyTorch's; the
 * core reads it, core/dtype.h) and the default device (one per thread, as PyTorch's
 * set_default_device and `with torch.device(...)`). args.c gives the default device to a
 * factory op called without device=, and tensor() (convert.c) uses it; the stack of `with
 * minitorch.device(...)` blocks is minitorch/_device.py's, which sets the device in force here.
 * The options every factory takes beside dtype and device (layout=, pin_memory=) are checked here
 * too, for the factory ops' binding and the factories written in Python alike. */
#include <string.h>

#include "alloc/allocator.h"
#include "dispatch/autocast.h"
#include "dispatch/deterministic.h"
#include "python/pyminitorch.h"

/* The device in force: "cuda" without an index means the current CUDA device at each call. */
typedef struct default_device {
    bool set;
    mt_device_type type;
    int index; /* -1: the current CUDA device */
} default_device;

static _Thread_local default_device tls_device;

bool
mt_py_default_device(mt_device *out)
{
    if (!tls_device.set) {
        return false;
    }
    int index = tls_device.index;
    if (tls_device.type == MT_CUDA && index < 0) {
        index = mt_default_cuda_index();
    }
    *out = (mt_device){tls_device.type, tls_device.type == MT_CPU ? 0 : index};
    return true;
}

/* _set_default_device(device or None) */
static PyObject *
py_set_default_device(PyObject *m, PyObject *arg)
{
    (void)m;
    if (arg == Py_None) {
        tls_device = (default_device){false, MT_CPU, 0};
        Py_RETURN_NONE;
    }
    mt_device d;
    if (mt_py_to_device(arg, &d) < 0) {
        return NULL;
    }
    PyObject *s = PyObject_Str(arg);
    const char *str = s ? PyUnicode_AsUTF8(s) : NULL;
    if (str == NULL) {
        Py_XDECREF(s);
        return NULL;
    }
    bool current = strcmp(str, "cuda") == 0; /* an index of none: the current device */
    Py_DECREF(s);
    tls_device = (default_device){true, d.type, current ? -1 : d.index};
    Py_RETURN_NONE;
}

/* _get_default_device(): the device set (cuda with index None for "the current one"), or None */
static PyObject *
py_get_default_device(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    if (!tls_device.set) {
        Py_RETURN_NONE;
    }
    if (tls_device.type == MT_CUDA && tls_device.index < 0) {
        return mt_py_device_class ? PyObject_CallFunction(mt_py_device_class, "s", "cuda")
                                  : PyUnicode_FromString("cuda");
    }
    return mt_py_device_obj((mt_device){tls_device.type, tls_device.index});
}

/* _set_default_dtype(dtype): PyTorch's errors for anything but a floating-point dtype */
static PyObject *
py_set_default_dtype(PyObject *m, PyObject *arg)
{
    (void)m;
    mt_dtype dt;
    if (!PyObject_TypeCheck(arg, &mt_py_dtype_Type) || mt_py_to_dtype(arg, &dt) < 0) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError,
                        "invalid dtype object: only floating-point types are supported as the "
                        "default type");
        return NULL;
    }
    if (!mt_dtype_is_float(dt)) {
        PyErr_SetString(PyExc_TypeError,
                        "only floating-point types are supported as the default type");
        return NULL;
    }
    mt_set_default_float(dt);
    Py_RETURN_NONE;
}

static PyObject *
py_get_default_dtype(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    return Py_NewRef(mt_py_dtype_obj(mt_default_float()));
}

static PyObject *
py_set_deterministic(PyObject *m, PyObject *args)
{
    (void)m;
    int on, warn_only, fill;
    if (!PyArg_ParseTuple(args, "ppp", &on, &warn_only, &fill)) {
        return NULL;
    }
    mt_deterministic_set(on, warn_only, fill);
    Py_RETURN_NONE;
}

/* autocast's switches for one device type: 0 the CPU, 1 CUDA (minitorch/amp/autocast_mode.py) */
static int
autocast_device(PyObject *o, mt_device_type *out)
{
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (v != MT_CPU && v != MT_CUDA) {
        PyErr_Format(PyExc_ValueError, "no autocast for device type %ld", v);
        return -1;
    }
    *out = (mt_device_type)v;
    return 0;
}

/* _autocast_state(device type) -> (enabled, dtype) */
static PyObject *
py_autocast_state(PyObject *m, PyObject *arg)
{
    (void)m;
    mt_device_type dev;
    if (autocast_device(arg, &dev) < 0) {
        return NULL;
    }
    return Py_BuildValue("(OO)", mt_autocast_enabled(dev) ? Py_True : Py_False,
                         mt_py_dtype_obj(mt_autocast_dtype(dev)));
}

/* _set_autocast_state(device type, enabled, dtype) */
static PyObject *
py_set_autocast_state(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *dev_obj, *dtype_obj;
    int on;
    mt_device_type dev;
    mt_dtype dt;
    if (!PyArg_ParseTuple(args, "OpO", &dev_obj, &on, &dtype_obj) ||
        autocast_device(dev_obj, &dev) < 0 || mt_py_to_dtype(dtype_obj, &dt) < 0) {
        return NULL;
    }
    mt_autocast_set_enabled(dev, on);
    mt_autocast_set_dtype(dev, dt);
    Py_RETURN_NONE;
}

static PyObject *
py_autocast_cache_enabled(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    return PyBool_FromLong(mt_autocast_cache_enabled());
}

static PyObject *
py_set_autocast_cache_enabled(PyObject *m, PyObject *arg)
{
    (void)m;
    int on = PyObject_IsTrue(arg);
    if (on < 0) {
        return NULL;
    }
    mt_autocast_set_cache_enabled(on);
    Py_RETURN_NONE;
}

static PyObject *
py_clear_autocast_cache(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    mt_autocast_clear_cache();
    Py_RETURN_NONE;
}

static PyObject *
py_autocast_cache_size(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    return PyLong_FromLongLong(mt_autocast_cache_size());
}

/* minitorch's Python object named name (minitorch.strided), a new reference, or NULL. */
static PyObject *
minitorch_attr(const char *name)
{
    PyObject *mod = PyImport_ImportModule("minitorch");
    if (mod == NULL) {
        return NULL;
    }
    PyObject *res = PyObject_GetAttrString(mod, name);
    Py_DECREF(mod);
    return res;
}

/* layout=: None or a minitorch.layout; factories here make strided tensors only (PyTorch's
 * zeros and empty also make a sparse one; minitorch.sparse_coo_tensor does here). */
static int
check_layout(const char *op, PyObject *value)
{
    int res = -1;
    if (value == Py_None) {
        return 0;
    }
    PyObject *strided = minitorch_attr("strided"), *layout_type = NULL;
    if (strided == NULL || (layout_type = minitorch_attr("layout")) == NULL) {
        goto out;
    }
    int is_layout = PyObject_IsInstance(value, layout_type);
    if (is_layout < 0) {
        goto out;
    }
    if (!is_layout) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'layout' must be minitorch.layout, not %s",
                     op, Py_TYPE(value)->tp_name);
    } else if (value != strided) {
        PyErr_Format(PyExc_NotImplementedError,
                     "%s(): layout=%R is not supported: minitorch's factories make strided tensors "
                     "(a sparse one comes from minitorch.sparse_coo_tensor)",
                     op, value);
    } else {
        res = 0;
    }
out:
    Py_XDECREF(strided);
    Py_XDECREF(layout_type);
    return res;
}

/* pin_memory=: None or a bool. Page-locked memory needs an accelerator: without one PyTorch's
 * RuntimeError; with one the tensor is made as Tensor.pin_memory() makes it (host memory). */
static int
check_pin_memory(const char *op, PyObject *value)
{
    if (value == Py_None || value == Py_False) {
        return 0;
    }
    if (!PyBool_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'pin_memory' must be bool, not %s", op,
                     Py_TYPE(value)->tp_name);
        return -1;
    }
    PyObject *cuda = minitorch_attr("cuda"), *avail = NULL;
    if (cuda == NULL || (avail = PyObject_CallMethod(cuda, "is_available", NULL)) == NULL) {
        Py_XDECREF(cuda);
        return -1;
    }
    int yes = PyObject_IsTrue(avail);
    Py_DECREF(avail);
    Py_DECREF(cuda);
    if (yes == 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "pin_memory=True requires a CUDA or other accelerator backend; no pinned "
                        "memory allocator is available on this system.");
    }
    return yes == 1 ? 0 : -1;
}

int
mt_py_factory_option(const char *op, PyObject *key, PyObject *value)
{
    if (PyUnicode_CompareWithASCIIString(key, "layout") == 0) {
        return check_layout(op, value) < 0 ? -1 : 1;
    }
    if (PyUnicode_CompareWithASCIIString(key, "pin_memory") == 0) {
        return check_pin_memory(op, value) < 0 ? -1 : 1;
    }
    return 0;
}

/* _C._factory_options(op, layout, pin_memory): the same checks for the factories written in
 * Python (new_*, *_like), so each rule is stated once. */
static PyObject *
py_factory_options(PyObject *m, PyObject *args)
{
    const char *op;
    PyObject *layout, *pin_memory;
    (void)m;
    if (!PyArg_ParseTuple(args, "sOO", &op, &layout, &pin_memory)) {
        return NULL;
    }
    if (check_layout(op, layout) < 0 || check_pin_memory(op, pin_memory) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

PyMethodDef mt_py_defaults_functions[] = {
    {"_factory_options", py_factory_options, METH_VARARGS, "checks layout= and pin_memory="},
    {"_autocast_state", py_autocast_state, METH_O,
     "(device type: 0 cpu, 1 cuda) -> (enabled, dtype): this thread's autocast for it."},
    {"_set_autocast_state", py_set_autocast_state, METH_VARARGS,
     "(device type, enabled, dtype): sets this thread's autocast for a device type."},
    {"_autocast_cache_enabled", py_autocast_cache_enabled, METH_NOARGS,
     "Whether autocast keeps its casts of weights for the region."},
    {"_set_autocast_cache_enabled", py_set_autocast_cache_enabled, METH_O,
     "Turns autocast's weight-cast cache on or off for this thread."},
    {"_clear_autocast_cache", py_clear_autocast_cache, METH_NOARGS,
     "Drops this thread's cached autocast casts."},
    {"_autocast_cache_size", py_autocast_cache_size, METH_NOARGS,
     "How many casts autocast's cache holds on this thread."},
    {"_set_deterministic", py_set_deterministic, METH_VARARGS,
     "(mode, warn_only, fill_uninitialized_memory): the deterministic switches the dispatcher "
     "obeys."},
    {"_set_default_device", py_set_default_device, METH_O,
     "The factories' default device on this thread (None: the CPU)."},
    {"_get_default_device", py_get_default_device, METH_NOARGS,
     "The device _set_default_device set, or None."},
    {"_set_default_dtype", py_set_default_dtype, METH_O,
     "The default floating-point dtype (float32 or float64)."},
    {"_get_default_dtype", py_get_default_dtype, METH_NOARGS, "The default floating-point dtype."},
    {NULL, NULL, 0, NULL},
};
