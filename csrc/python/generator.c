/* minitorch._C.Generator, torch.Generator: a Python object over one core mt_generator
 * (core/generator.h), and the module functions over the default ones: default_generator,
 * manual_seed, seed, initial_seed, and the CUDA defaults' _cuda_* helpers for minitorch.cuda.
 *
 * get_state returns PyTorch's state bytes (5056 for a CPU generator, 16 for a CUDA one) as a
 * uint8 tensor; set_state takes only such a CPU uint8 tensor, as PyTorch. */
#include <string.h>

#include "ops/ops.h"
#include "python/pyminitorch.h"

typedef struct mt_py_generator {
    PyObject_HEAD mt_generator *g; /* owned */
} mt_py_generator;

PyTypeObject mt_py_Generator_Type;
static PyObject *default_cpu; /* the Python object of the default CPU generator */

int
mt_py_to_generator(PyObject *o, mt_generator **out)
{
    if (!PyObject_TypeCheck(o, &mt_py_Generator_Type)) {
        return -1;
    }
    *out = ((mt_py_generator *)o)->g;
    return 0;
}

PyObject *
mt_py_generator_wrap(mt_generator *g)
{
    mt_py_generator *self = PyObject_New(mt_py_generator, &mt_py_Generator_Type);
    if (self == NULL) {
        mt_generator_release(g);
        return NULL;
    }
    self->g = g;
    return (PyObject *)self;
}

static mt_generator *
unwrap(PyObject *self)
{
    return ((mt_py_generator *)self)->g;
}

/* A seed as PyTorch's unpack_uint64: an int in [-2^63, 2^64), negative ones as their two's
 * complement. Returns -1 with an exception set. */
static int
to_seed(PyObject *o, uint64_t *out)
{
    if (PyBool_Check(o) || !PyIndex_Check(o)) {
        PyErr_Format(PyExc_RuntimeError, "manual_seed expected a long, but got %s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    PyObject *n = PyNumber_Index(o);
    if (n == NULL) {
        return -1;
    }
    unsigned long long u = PyLong_AsUnsignedLongLong(n);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
            Py_DECREF(n);
            return -1;
        }
        PyErr_Clear();
        long long s = PyLong_AsLongLong(n);
        if (s == -1 && PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
            Py_DECREF(n);
            return -1;
        }
        u = (unsigned long long)s;
    }
    Py_DECREF(n);
    *out = u;
    return 0;
}

static PyObject *
generator_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"device", NULL};
    PyObject *device = NULL;
    mt_device dev = MT_DEVICE_CPU;
    (void)type;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:Generator", kwlist, &device)) {
        return NULL;
    }
    if (device && device != Py_None && mt_py_to_device(device, &dev) < 0) {
        return NULL;
    }
    if (dev.type == MT_CUDA) { /* PyTorch's error where CUDA cannot be used (minitorch.cuda's) */
        PyObject *cuda = PyImport_ImportModule("minitorch.cuda");
        PyObject *r = cuda ? PyObject_CallMethod(cuda, "_lazy_init", NULL) : NULL;
        Py_XDECREF(cuda);
        if (r == NULL) {
            return NULL;
        }
        Py_DECREF(r);
    }
    mt_generator *g;
    mt_status st = mt_generator_new(dev, &g);
    return st ? mt_py_raise(st) : mt_py_generator_wrap(g);
}

static void
generator_dealloc(PyObject *self)
{
    mt_generator_release(unwrap(self));
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
generator_manual_seed(PyObject *self, PyObject *seed)
{
    uint64_t s;
    if (to_seed(seed, &s) < 0) {
        return NULL;
    }
    mt_generator_manual_seed(unwrap(self), s);
    return Py_NewRef(self);
}

static PyObject *
generator_seed(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLongLong(mt_generator_seed(unwrap(self)));
}

static PyObject *
generator_initial_seed(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLongLong(mt_generator_initial_seed(unwrap(self)));
}

static PyObject *
generator_get_state(PyObject *self, PyObject *unused)
{
    (void)unused;
    mt_generator *g = unwrap(self);
    uint8_t bytes[MT_CPU_GENERATOR_STATE_SIZE];
    int64_t n = (int64_t)mt_generator_state_size(g);
    mt_generator_get_state(g, bytes);
    mt_tensor *t;
    mt_status st = mt_tensor_empty(1, &n, MT_UINT8, MT_DEVICE_CPU, &t);
    if (st) {
        return mt_py_raise(st);
    }
    memcpy(mt_tensor_data(t), bytes, (size_t)n);
    return mt_py_wrap(t);
}

/* state's bytes: a CPU uint8 tensor of at most `cap` elements. */
static int
state_bytes(PyObject *state, uint8_t *out, size_t cap, size_t *n)
{
    mt_tensor *t = mt_py_is_tensor(state) ? mt_py_unwrap(state) : NULL;
    if (t == NULL || mt_tensor_device(t).type != MT_CPU || t->dtype != MT_UINT8) {
        PyErr_SetString(PyExc_TypeError, "RNG state must be a torch.ByteTensor");
        return -1;
    }
    int64_t numel = mt_tensor_numel(t);
    *n = (size_t)numel;
    if ((size_t)numel > cap) {
        return 0; /* the size check of set_state says what is wrong */
    }
    mt_tensor *dense = NULL;
    mt_status st = mt_op_contiguous(t, &dense);
    if (st) {
        mt_py_raise(st);
        return -1;
    }
    memcpy(out, mt_tensor_data(dense), (size_t)numel);
    mt_tensor_release(dense);
    return 0;
}

static PyObject *
generator_set_state(PyObject *self, PyObject *state)
{
    uint8_t bytes[MT_CPU_GENERATOR_STATE_SIZE];
    size_t n;
    if (state_bytes(state, bytes, sizeof(bytes), &n) < 0) {
        return NULL;
    }
    mt_status st = mt_generator_set_state(unwrap(self), bytes, n);
    return st ? mt_py_raise(st) : Py_NewRef(self);
}

static PyObject *
generator_get_offset(PyObject *self, PyObject *unused)
{
    (void)unused;
    uint64_t offset;
    mt_status st = mt_generator_get_offset(unwrap(self), &offset);
    return st ? mt_py_raise(st) : PyLong_FromUnsignedLongLong(offset);
}

static PyObject *
generator_set_offset(PyObject *self, PyObject *offset)
{
    unsigned long long o = PyLong_AsUnsignedLongLong(offset);
    if (o == (unsigned long long)-1 && PyErr_Occurred()) {
        return NULL;
    }
    mt_status st = mt_generator_set_offset(unwrap(self), o);
    return st ? mt_py_raise(st) : Py_NewRef(self);
}

/* A new generator of the same device at the same point of its stream. */
static PyObject *
generator_clone_state(PyObject *self, PyObject *unused)
{
    (void)unused;
    mt_generator *g = unwrap(self), *copy;
    uint8_t bytes[MT_CPU_GENERATOR_STATE_SIZE];
    mt_status st = mt_generator_new(g->device, &copy);
    if (st) {
        return mt_py_raise(st);
    }
    mt_generator_get_state(g, bytes);
    (void)mt_generator_set_state(copy, bytes, mt_generator_state_size(g)); /* its own: valid */
    return mt_py_generator_wrap(copy);
}

/* pickle: (Generator, (device,), (initial_seed, offset or None, state)), as PyTorch's. */
static PyObject *
generator_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    mt_generator *g = unwrap(self);
    PyObject *device = mt_py_device_obj(g->device);
    PyObject *state = generator_get_state(self, NULL);
    PyObject *offset = g->device.type == MT_CUDA ? generator_get_offset(self, NULL)
                                                 : Py_NewRef(Py_None);
    PyObject *res = NULL;
    if (device && state && offset) {
        res = Py_BuildValue("(O(O)(KOO))", (PyObject *)Py_TYPE(self), device,
                            (unsigned long long)mt_generator_initial_seed(g), offset, state);
    }
    Py_XDECREF(device);
    Py_XDECREF(state);
    Py_XDECREF(offset);
    return res;
}

static PyObject *
generator_setstate(PyObject *self, PyObject *args)
{
    PyObject *seed, *offset, *state;
    if (!PyArg_ParseTuple(args, "OOO:__setstate__", &seed, &offset, &state)) {
        return NULL;
    }
    PyObject *r = generator_manual_seed(self, seed);
    Py_XDECREF(r);
    if (r && offset != Py_None) {
        r = generator_set_offset(self, offset);
        Py_XDECREF(r);
    }
    if (r) {
        r = generator_set_state(self, state);
        Py_XDECREF(r);
    }
    return r ? Py_NewRef(Py_None) : NULL;
}

static PyObject *
generator_device(PyObject *self, void *closure)
{
    (void)closure;
    return mt_py_device_obj(unwrap(self)->device);
}

static PyMethodDef generator_methods[] = {
    {"manual_seed", generator_manual_seed, METH_O,
     "manual_seed(seed) -> Generator: sets the seed (an int in [-2**63, 2**64)) and returns self."},
    {"seed", generator_seed, METH_NOARGS,
     "seed() -> int: seeds from a nondeterministic source and returns that seed."},
    {"initial_seed", generator_initial_seed, METH_NOARGS,
     "initial_seed() -> int: the seed the generator was last seeded with."},
    {"get_state", generator_get_state, METH_NOARGS,
     "get_state() -> Tensor: PyTorch's state bytes, as an int64 tensor."},
    {"set_state", generator_set_state, METH_O,
     "set_state(new_state) -> Generator: restores a state get_state returned."},
    {"get_offset", generator_get_offset, METH_NOARGS, "The Philox offset of a CUDA generator."},
    {"set_offset", generator_set_offset, METH_O, "Sets the Philox offset of a CUDA generator."},
    {"clone_state", generator_clone_state, METH_NOARGS,
     "clone_state() -> Generator: a new generator at this one's state."},
    {"__reduce__", generator_reduce, METH_NOARGS, NULL},
    {"__setstate__", generator_setstate, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef generator_getset[] = {
    {"device", generator_device, NULL, "The device of the generator.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject mt_py_Generator_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "minitorch._C.Generator",
    .tp_basicsize = sizeof(mt_py_generator),
    .tp_dealloc = generator_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Generator(device='cpu'): a random number generator, as torch.Generator.",
    .tp_methods = generator_methods,
    .tp_getset = generator_getset,
    .tp_new = generator_new,
};

/* ---- the module's functions over the default generators ---- */

static PyObject *
py_manual_seed(PyObject *m, PyObject *seed)
{
    (void)m;
    return generator_manual_seed(default_cpu, seed);
}

static PyObject *
py_initial_seed(PyObject *m, PyObject *unused)
{
    (void)m;
    return generator_initial_seed(default_cpu, unused);
}

static PyObject *
py_seed(PyObject *m, PyObject *unused)
{
    (void)m;
    return generator_seed(default_cpu, unused);
}

/* _cuda_default_generator(index): the default generator of a CUDA device, as a Generator. */
static PyObject *
py_cuda_default_generator(PyObject *m, PyObject *index)
{
    (void)m;
    long i = PyLong_AsLong(index);
    if (i == -1 && PyErr_Occurred()) {
        return NULL;
    }
    mt_generator *g;
    mt_status st = mt_generator_default((mt_device){MT_CUDA, (int)i}, &g);
    return st ? mt_py_raise(st) : mt_py_generator_wrap(mt_generator_retain(g));
}

static PyObject *
py_cuda_manual_seed_all(PyObject *m, PyObject *seed)
{
    (void)m;
    uint64_t s;
    if (to_seed(seed, &s) < 0) {
        return NULL;
    }
    mt_cuda_seed_all(s);
    Py_RETURN_NONE;
}

static PyMethodDef generator_functions[] = {
    {"manual_seed", py_manual_seed, METH_O,
     "Seeds the default CPU generator and returns it (minitorch.manual_seed seeds CUDA's too)."},
    {"initial_seed", py_initial_seed, METH_NOARGS,
     "The initial seed of the default CPU generator."},
    {"seed", py_seed, METH_NOARGS, "Seeds the default CPU generator nondeterministically."},
    {"_cuda_default_generator", py_cuda_default_generator, METH_O, NULL},
    {"_cuda_manual_seed_all", py_cuda_manual_seed_all, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

int
mt_py_generator_init(PyObject *module)
{
    mt_generator *g;
    mt_status st = mt_generator_default(MT_DEVICE_CPU, &g);
    if (st) {
        mt_py_raise(st);
        return -1;
    }
    if (PyType_Ready(&mt_py_Generator_Type) < 0 ||
        PyModule_AddObjectRef(module, "Generator", (PyObject *)&mt_py_Generator_Type) < 0 ||
        PyModule_AddFunctions(module, generator_functions) < 0) {
        return -1;
    }
    default_cpu = mt_py_generator_wrap(mt_generator_retain(g));
    return default_cpu ? PyModule_AddObjectRef(module, "default_generator", default_cpu) : -1;
}
