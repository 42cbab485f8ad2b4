/* PyInit__C: the minitorch._C extension module, and its module-level functions that are not
 * ops (ops come from the op table in python/args.c). */
#include "python/pyminitorch.h" /* Python.h first: it sets the feature-test macros */

#include <stdlib.h>
#include <string.h>

#include "alloc/allocator.h"
#include "autograd/autograd.h"
#include "cpu/iter.h"
#include "cpu/random.h"
#include "dispatch/meta.h"
#include "ops/front.h"

static PyObject *
py_register_classes(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *tensor_cls, *device_cls;
    if (!PyArg_ParseTuple(args, "OO", &tensor_cls, &device_cls)) {
        return NULL;
    }
    if (!PyType_Check(tensor_cls) ||
        !PyType_IsSubtype((PyTypeObject *)tensor_cls, &mt_py_TensorBase_Type)) {
        PyErr_SetString(PyExc_TypeError, "the tensor class must subclass TensorBase");
        return NULL;
    }
    Py_INCREF(tensor_cls);
    Py_XSETREF(mt_py_tensor_class, (PyTypeObject *)tensor_cls);
    mt_py_set_device_class(device_cls);
    Py_RETURN_NONE;
}

static PyObject *
py_dispatch_table(PyObject *m, PyObject *name)
{
    (void)m;
    const char *s = PyUnicode_AsUTF8(name);
    if (s == NULL) {
        return NULL;
    }
    for (int op = 0; op < MT_NUM_OPS; op++) {
        if (strcmp(mt_op_names[op], s) != 0) {
            continue;
        }
        PyObject *d = PyDict_New();
        for (int k = 0; d && k < MT_NUM_KEYS; k++) {
            const mt_kernel *kern = mt_kernel_for((mt_op)op, (mt_key)k);
            if (kern->fn == NULL) {
                continue;
            }
            PyObject *v = PyUnicode_FromString(kern->name);
            if (v == NULL || PyDict_SetItemString(d, mt_key_names[k], v) < 0) {
                Py_XDECREF(v);
                Py_CLEAR(d);
                break;
            }
            Py_DECREF(v);
        }
        return d;
    }
    return PyErr_Format(PyExc_ValueError, "no operator named '%s'", s);
}

static PyObject *
py_op_info(PyObject *m, PyObject *name)
{
    (void)m;
    const char *s = PyUnicode_AsUTF8(name);
    if (s == NULL) {
        return NULL;
    }
    for (int op = 0; op < MT_NUM_OPS; op++) {
        if (strcmp(mt_op_names[op], s) == 0) {
            /* the schema's parameters, and apart its results ("(Tensor Q, Tensor R)") if it
             * names them */
            int f = mt_op_flags[op];
            const char *text = mt_op_schemas[op], *arrow = strstr(text, " -> ");
            int len = arrow ? (int)(arrow - text) : (int)strlen(text);
            /* where its front end runs (ops/front.h), if it has one */
            const char *front = mt_op_fronts[op]           ? "dispatcher"
                                : mt_op_is_elementwise[op] ? "elementwise"
                                                           : NULL;
            /* and the CUDA backend's own kernel its cuda column names; scalar_slots and
             * host_slots: the tensor slots its SCALAR_SLOTS and HOST_SLOTS flags name, a bit
             * each */
            return Py_BuildValue("{s:s#,s:z,s:i,s:O,s:O,s:O,s:z,s:z,s:I,s:I}", "schema", text,
                                 (Py_ssize_t)len, "returns", arrow ? arrow + 4 : NULL, "nout",
                                 mt_op_nout[op], "method", (f & METHOD) ? Py_True : Py_False,
                                 "function", (f & FUNCTION) ? Py_True : Py_False, "inplace",
                                 (f & INPLACE) ? Py_True : Py_False, "front", front, "cuda",
                                 mt_op_cuda_kernels[op], "scalar_slots", mt_op_scalar_slots(op),
                                 "host_slots", mt_op_host_slots(op));
        }
    }
    return PyErr_Format(PyExc_ValueError, "no operator named '%s'", s);
}

/* A thread-local switch set from a Python truth value. */
static PyObject *
set_switch(PyObject *arg, void (*set)(bool))
{
    int on = PyObject_IsTrue(arg);
    if (on < 0) {
        return NULL;
    }
    set(on);
    Py_RETURN_NONE;
}

static PyObject *
py_set_grad_enabled(PyObject *m, PyObject *arg)
{
    (void)m;
    return set_switch(arg, mt_set_grad_enabled);
}

static PyObject *
py_set_inference_mode(PyObject *m, PyObject *arg)
{
    (void)m;
    return set_switch(arg, mt_set_inference_mode);
}

static PyObject *
py_is_inference_mode_enabled(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyBool_FromLong(mt_inference_mode());
}

static PyObject *
py_is_grad_enabled(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyBool_FromLong(mt_grad_enabled());
}

static PyObject *
py_cpu_allocator_stats(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    mt_allocator *a = mt_cpu_allocator();
    mt_alloc_stats s;
    a->stats(a, &s);
    return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L}", "allocated_bytes", (long long)s.allocated_bytes,
                         "peak_allocated_bytes", (long long)s.peak_allocated_bytes,
                         "reserved_bytes", (long long)s.reserved_bytes, "num_allocs",
                         (long long)s.num_allocs, "num_frees", (long long)s.num_frees);
}

static PyObject *
py_cpu_allocator_empty_cache(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    mt_allocator *a = mt_cpu_allocator();
    a->empty_cache(a);
    Py_RETURN_NONE;
}

static PyObject *
py_live_objects(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    int64_t tensors, storages;
    mt_live_counts(&tensors, &storages);
    return Py_BuildValue("{s:L,s:L,s:L}", "tensors", (long long)tensors, "storages",
                         (long long)storages, "nodes", (long long)mt_live_nodes());
}

static PyObject *
py_set_alloc_poison(PyObject *m, PyObject *arg)
{
    (void)m;
    int on = PyObject_IsTrue(arg);
    if (on < 0) {
        return NULL;
    }
    mt_cpu_allocator_set_poison(on);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"tensor", (PyCFunction)(void (*)(void))mt_py_tensor_new, METH_VARARGS | METH_KEYWORDS,
     "tensor(data, *, dtype=None, device=None, requires_grad=False): a new tensor with data's "
     "values."},
    {"from_numpy", mt_py_from_numpy, METH_O, "A tensor sharing the memory of a NumPy array."},
    {"_register_classes", py_register_classes, METH_VARARGS, NULL},
    {"_dispatch_table", py_dispatch_table, METH_O,
     "The kernels an op has, by dispatch key: {'CPU': 'mt_cpu_addmm'}."},
    {"_op_info", py_op_info, METH_O, "An op's schema and flags from the op table."},
    {"_schema_slots", mt_py_schema_slots, METH_O,
     "The mt_args slot of each parameter of a schema: [(name, type, slot)]."},
    {"_set_grad_enabled", py_set_grad_enabled, METH_O, NULL},
    {"is_grad_enabled", py_is_grad_enabled, METH_NOARGS, NULL},
    {"_set_inference_mode", py_set_inference_mode, METH_O, NULL},
    {"is_inference_mode_enabled", py_is_inference_mode_enabled, METH_NOARGS, NULL},
    {"_cpu_allocator_stats", py_cpu_allocator_stats, METH_NOARGS, NULL},
    {"_cpu_allocator_empty_cache", py_cpu_allocator_empty_cache, METH_NOARGS,
     "Return the CPU allocator's cached blocks to the C library."},
    {"_live_objects", py_live_objects, METH_NOARGS,
     "How many C tensor, storage and autograd node structs are alive (for leak tests)."},
    {"_set_alloc_poison", py_set_alloc_poison, METH_O,
     "Fill new CPU allocations with 0xff bytes, so a kernel that skips an element is caught."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "minitorch._C",
    "The C core of minitorch.",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__C(void)
{
    mt_cpu_threads_init();
    mt_meta_init();
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) {
        return NULL;
    }
    if (mt_py_schemas_init(m) < 0 || mt_py_values_init(m) < 0 || mt_py_tensor_init_types(m) < 0 ||
        mt_py_tensor_meta_init(m) < 0 || PyModule_AddFunctions(m, mt_py_op_functions) < 0 ||
        mt_py_autograd_init(m) < 0 || PyModule_AddFunctions(m, mt_py_profiler_functions) < 0 ||
        mt_py_caching_init(m) < 0 || PyModule_AddFunctions(m, mt_py_defaults_functions) < 0 ||
        PyModule_AddFunctions(m, mt_py_threads_functions) < 0 || mt_py_tracer_init(m) < 0 ||
        mt_py_capi_init(m) < 0 || mt_py_dlpack_init(m) < 0 || mt_py_generator_init(m) < 0 ||
        mt_py_library_init(m) < 0 || mt_py_tf_init(m) < 0 || mt_py_python_dispatch_init(m) < 0) {
        goto out_fail;
    }
    PyObject *ops = PyTuple_New(MT_NUM_OPS);
    for (int op = 0; ops && op < MT_NUM_OPS; op++) {
        PyTuple_SET_ITEM(ops, op, PyUnicode_FromString(mt_op_names[op]));
    }
    if (ops == NULL || PyModule_AddObjectRef(m, "OPS", ops) < 0) {
        Py_XDECREF(ops);
        goto out_fail;
    }
    Py_DECREF(ops);
    return m;
out_fail:
    Py_DECREF(m);
    return NULL;
}
