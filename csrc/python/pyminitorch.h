/* The binding layer's shared declarations: the Python types and the conversions between Python
 * objects and the core's values. Only csrc/python/ and module.c include this (and Python.h). */
#ifndef MT_PYMINITORCH_H
#define MT_PYMINITORCH_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dispatch/dispatch.h"

typedef struct mt_py_tensor {
    PyObject_HEAD mt_tensor *t; /* owned */
} mt_py_tensor;

extern PyTypeObject mt_py_TensorBase_Type;
extern PyTypeObject mt_py_Size_Type;
extern PyTypeObject mt_py_dtype_Type;

/* The Python class results are made as (minitorch.Tensor once registered). */
extern PyTypeObject *mt_py_tensor_class;
extern PyObject *mt_py_device_class;

int mt_py_tensor_init_types(PyObject *module);
int mt_py_tensor_meta_init(PyObject *module); /* _C._TensorMeta, python/tensor_meta.c */
/* TensorBase's number slots and comparisons (python/tensor_number.c) */
extern PyNumberMethods mt_py_tensor_as_number;
PyObject *mt_py_tensor_richcompare(PyObject *self, PyObject *other, int cmp);
int mt_py_values_init(PyObject *module);
void mt_py_set_oom_error(PyObject *cls);
/* The class raised for a failed CUDA call (MT_ECUDA): minitorch.AcceleratorError once set. */
void mt_py_set_accelerator_error(PyObject *cls);
void mt_py_set_device_class(PyObject *cls);
/* capi.c: the C API capsule _C_API for plug-ins, and _set_oom_error */
int mt_py_capi_init(PyObject *module);

static inline int
mt_py_is_tensor(PyObject *o)
{
    return PyObject_TypeCheck(o, &mt_py_TensorBase_Type);
}

static inline mt_tensor *
mt_py_unwrap(PyObject *o)
{
    return ((mt_py_tensor *)o)->t;
}

/* Steals a reference to t; returns its live wrapper if it has one, else a new one. */
PyObject *mt_py_wrap(mt_tensor *t);
/* A new tp object over t (whose reference it takes), t's wrapper from then on. */
PyObject *mt_py_wrap_as(PyTypeObject *tp, mt_tensor *t);
/* Sets the Python exception for a failed core call; always returns NULL. */
PyObject *mt_py_raise(mt_status st);
/* A Python bool/int/float as an mt_scalar; returns -1 without an exception if o is none of
 * those. */
int mt_py_to_scalar(PyObject *o, mt_scalar *out);
PyObject *mt_py_from_scalar(mt_scalar s);
/* A Python complex number (or a NumPy complex128 scalar) as PyTorch wraps one in an op's
 * Tensor|Scalar argument: a 0-dim complex128 tensor marked as a wrapped number (weak in type
 * promotion, so x * 1j keeps complex64 for a float32 x). 0, or -1 with an exception. */
int mt_py_complex_number(PyObject *o, mt_tensor **out);
/* A real Python number s bound in slot of op's call a, beside the call's other tensors, whose
 * promoted dtype is beside (-1: none; numbers: they are Python numbers only). In the value slots
 * of PyTorch's Scalar overloads (where, clamp's bounds, the fills: fill_, masked_fill,
 * index_fill, scatter) it must fit the dtype it converts into, with PyTorch's message. An int
 * from 2^63 to 2^64 - 1 (mt_py_to_scalar's MT_UINT64 number) then meets the tensors as PyTorch's
 * uint64 Scalar does: beside an integer it becomes that integer's int64 bits (its cast into the
 * result wraps, as C's and PyTorch's), or a float where the op computes integers in float (true
 * division); beside uint16/32/64 it stays; beside a float it is a float; beside a bool, or
 * beside numbers alone, PyTorch's promotion error; pow's exponent must fit int64 beside an
 * integer base. 0, or -1 with an exception set. */
int mt_py_settle_number(mt_op op, int slot, const mt_args *a, mt_scalar *s, int beside,
                        bool numbers);

PyObject *mt_py_dtype_obj(mt_dtype dt); /* borrowed */
int mt_py_to_dtype(PyObject *o, mt_dtype *out); /* -1 with TypeError */
PyObject *mt_py_device_obj(mt_device d);  /* new reference */
int mt_py_to_device(PyObject *o, mt_device *out);
PyObject *mt_py_size_obj(int n, const int64_t *v);

/* torch_function.c: the __torch_function__ protocol's gate. The state is per thread, as
 * PyTorch's: how many torch function modes are pushed, and what DisableTorchFunction(Subclass)
 * turned off. */
typedef enum {
    MT_TF_ENABLED,
    MT_TF_SUBCLASSES_DISABLED,
    MT_TF_ALL_DISABLED,
} mt_py_tf_mode_t;
typedef struct {
    int modes;
    mt_py_tf_mode_t disabled;
} mt_py_tf_state_t;
extern _Thread_local mt_py_tf_state_t mt_py_tf_state;
/* The modes pushed on all threads together: the gate reads this plain global, not the
 * thread-local state, whose every read from an extension module is a call (__tls_get_addr). */
extern int mt_py_tf_modes_anywhere;
/* How a call named itself to overrides._handle_c_call: minitorch.<name>, Tensor.<name>. */
typedef enum {
    MT_TF_FUNCTION,
    MT_TF_METHOD,
} mt_py_tf_kind;
int mt_py_tf_init(PyObject *module);
/* Whether a call of (self, args...) goes to __torch_function__: self may be NULL. */
bool mt_py_tf_scan(PyObject *self, PyObject *const *args, Py_ssize_t n);
/* The call handed to minitorch.overrides._handle_c_call; args holds nargs positional values
 * then the values of kwnames. A new reference, or NULL with an exception set. */
PyObject *mt_py_tf_call(const char *name, mt_py_tf_kind kind, PyObject *self, PyObject *const *args,
                        Py_ssize_t nargs, PyObject *kwnames);

/* The call x <op> y of an operator slot handed on, as PyTorch names it: Tensor.<op>(x, y), or
 * Tensor.__r<dunder>__(y, x) where x is no tensor; y is NULL for a unary operator. */
PyObject *mt_py_tf_slot(mt_op op, const char *dunder, PyObject *x, PyObject *y);

/* The last Tensor subclass found not to override (nn.Parameter, in a model's calls) with its
 * version tag, which CPython changes whenever an attribute of the class or of a base is set. */
extern PyTypeObject *mt_py_tf_plain_type;
extern unsigned int mt_py_tf_plain_version;

static inline bool
mt_py_tf_known_plain(PyObject *o)
{
    PyTypeObject *tp = Py_TYPE(o);
    if (__builtin_expect(tp == mt_py_tensor_class, 1)) {
        return true; /* on a branch of its own: the hint keeps the compiler from merging tests */
    }
    return tp == mt_py_tf_plain_type && tp->tp_version_tag == mt_py_tf_plain_version;
}

/* The gate's fast part: a call whose arguments are all plain Tensors or Parameters, with no mode
 * pushed, only compares type pointers; anything else (a number too) is looked at by
 * mt_py_tf_scan. */
static inline bool
mt_py_tf_wanted(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    bool plain = mt_py_tf_modes_anywhere == 0 && (self == NULL || mt_py_tf_known_plain(self));
    for (Py_ssize_t k = 0; plain && k < n; k++) {
        plain = mt_py_tf_known_plain(args[k]);
    }
    return !plain && mt_py_tf_scan(self, args, n);
}

/* Calls op with Python arguments parsed by its schema (self first for methods). */
/* mt_dispatch, without the GIL when the call has enough work (nogil.c): the tensors in a must
 * be kept alive by the caller, and the error, if any, is raised once the GIL is back. */
bool mt_py_worth_releasing_gil(mt_op op, const mt_args *a);
mt_status mt_py_dispatch(mt_op op, mt_args *a);
/* Gives the warning a warn_only deterministic alert left (dispatch/deterministic.h) as a
 * UserWarning: 0, or -1 with the exception set where warnings are errors. */
int mt_py_give_deterministic_warning(void);
PyObject *mt_py_call_op(mt_op op, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames);
int mt_py_schemas_init(PyObject *m);
/* _C._schema_slots(text): the mt_args slot each parameter of a schema gets, [(name, type,
 * slot)], by the parse the op table's schemas get at import, with its errors (SystemError for a
 * schema with more arguments of a kind than mt_args holds, or more parameters than it reads). */
PyObject *mt_py_schema_slots(PyObject *m, PyObject *text);
/* A call's arguments as Python objects, for a Python kernel (python/library.c): a tuple of
 * op's positional parameters and, in *kwargs (NULL when none), a dict of its keyword-only ones,
 * as op's schema names them; arguments equal to their defaults are left out, as PyTorch does
 * (the keyword-only ones, and positional ones after the last given). NULL with an exception set. */
PyObject *mt_py_box_args(mt_op op, const mt_args *a, PyObject **kwargs);
/* A Python kernel's result into a's outputs, as op's schema returns them: 0, or -1 with an
 * exception set (and no output kept). */
int mt_py_unbox_results(mt_op op, PyObject *res, mt_args *a);
/* python_dispatch.c: the Python key's fallback (__torch_dispatch__ and dispatch modes), wrapper
 * subclasses, and the preservation of their objects */
int mt_py_python_dispatch_init(PyObject *module);
/* t, made for a cls object, takes the Python key when cls has a __torch_dispatch__ */
void mt_py_mark_python_dispatch(PyObject *cls, mt_tensor *t);
/* 0, or -1 with PyTorch's RuntimeError for a tensor with no memory (a wrapper subclass's) */
int mt_py_check_data(const mt_tensor *t);
/* item() of a tensor with the Python key (a __torch_dispatch__ subclass's, or any while a dispatch
 * mode is on): PyTorch's aten._local_scalar_dense, handed to the mode or the subclass; the
 * number it returns, NULL with an exception on error, NULL without one for a tensor that goes to
 * no Python (the caller reads it itself). */
PyObject *mt_py_local_scalar(PyObject *self);
/* library.c: the Python kernels of built-in ops (minitorch.library), _C._set_python_kernel */
int mt_py_library_init(PyObject *module);
/* out='s tensors (borrowed) and their versions before the call. */
typedef struct mt_py_outs {
    mt_tensor *t[MT_MAX_OUTPUTS];
    long version[MT_MAX_OUTPUTS];
} mt_py_outs;
/* out= (out.c): before the op runs, out's tensors from obj (the index-th parameter of the
 * function `name`) into outs, PyTorch's autograd refusal, the arguments out fixes (a dtype, a
 * factory's device) and out's tensors offered to the kernels as destinations (mt_args.into);
 * after it, the results a kernel did not write there checked and copied into outs. */
int mt_py_out_begin(mt_op op, const char *name, int index, PyObject *obj, bool factory, mt_args *a,
                    mt_py_outs *outs);
int mt_py_out_finish(mt_op op, const char *name, mt_args *a, const mt_py_outs *outs);
/* The default device of factories (defaults.c): false where none is set (the CPU). */
bool mt_py_default_device(mt_device *out);
/* A factory's keyword key=value that no schema slot holds (layout=, pin_memory=): 1 when it is
 * one, checked; 0 when it is not; -1 with an exception set when its value is refused. */
int mt_py_factory_option(const char *op, PyObject *key, PyObject *value);
extern PyMethodDef mt_py_defaults_functions[];
/* set_num_threads and its kin (threads.c) */
extern PyMethodDef mt_py_threads_functions[];
/* The slot arrays of mt_args that mt_py_schema_param tells apart (OTHER: a kind a node does not
 * expose, a Tensor[], a string, a dtype). */
typedef enum mt_py_argkind {
    MT_PY_ARG_TENSOR, /* t[] */
    MT_PY_ARG_SCALAR, /* s[] */
    MT_PY_ARG_INT, /* i[] */
    MT_PY_ARG_INTLIST, /* l[] */
    MT_PY_ARG_BOOL, /* b[] */
    MT_PY_ARG_FLOAT, /* f[] */
    MT_PY_ARG_OTHER,
} mt_py_argkind;
/* args.c: where op's schema parameter `name` (self for the first tensor, as PyTorch's schemas
 * write it) lands in mt_args: 0 with its kind and slot, -1 when the op has none of that name. */
int mt_py_schema_param(mt_op op, const char *name, mt_py_argkind *kind, int *slot);

/* autograd.c: _run_backward, the hooks, and the engine's start-up (the Node type: node.c) */
struct mt_node;
int mt_py_autograd_init(PyObject *m);
/* The saved-tensor hooks' handles, (unpack_hook, packed) tuples, as the engine's mt_saved_hooks. */
void mt_py_saved_hooks_install(void);
/* saved_tensor.c: grad_fn._raw_saved_<name>, a SavedTensor for the tensor node n keeps in input
 * slot k (output k when output), a new reference. */
extern PyTypeObject mt_py_SavedTensor_Type;
PyObject *mt_py_saved_tensor(struct mt_node *n, bool output, int k);
PyObject *mt_py_node_wrap(struct mt_node *n); /* steals the reference */
/* node.c: a node's Python object; the classes made so far, by name (_C._node_types); the
 * class they derive from (_C._set_node_base) */
typedef struct mt_py_node_object {
    PyObject_HEAD struct mt_node *node; /* owned */
} mt_py_node_object;
extern PyTypeObject mt_py_Node_Type;
extern PyObject *mt_py_node_types;
PyObject *mt_py_set_node_base(PyObject *module, PyObject *cls);
extern PyMethodDef mt_py_tensor_op_methods[];
extern PyMethodDef mt_py_op_functions[];

/* Conversions (convert.c) */
PyObject *mt_py_tensor_tolist(mt_tensor *t);
/* The one element of a complex tensor as a Python complex (item()); the caller checked numel. */
PyObject *mt_py_complex_item(mt_tensor *t);
PyObject *mt_py_tensor_new(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *mt_py_from_numpy(PyObject *module, PyObject *arr);
int mt_py_tensor_getbuffer(PyObject *self, Py_buffer *view, int flags);
int mt_py_convert_init(void); /* readies the type that owns a buffer export's storage */

/* _trace_start, _trace_stop, _trace_enter, ...: the profiler's recording (python/profiler.c) */
extern PyMethodDef mt_py_profiler_functions[];
/* _tracer_start, _tracer_stop, _tracer_count: the graph tracer (python/tracer.c) */
/* Warns torch.jit's TracerWarning that a tensor became a Python `what` ("boolean", "number",
 * "list"), while a jit trace is on: 0, or -1 with an exception set (a warning made an error). */
int mt_py_tracer_warn(const char *what);
/* Notes (and warns TracerWarning, once a trace) that the user's code read a tensor's size while
 * a jit trace records: 0, or -1 with an exception set. */
int mt_py_tracer_size_read(void);
int mt_py_tracer_init(PyObject *module);

/* _C._HostCachingAllocator (caching.c): the caching allocator over host memory, for tests */
int mt_py_caching_init(PyObject *module);

/* Indexing (indexing.c) */
PyObject *mt_py_getitem(PyObject *self, PyObject *index);
int mt_py_setitem(PyObject *self, PyObject *index, PyObject *value);

/* Generator (generator.c): the type, default_generator, manual_seed, seed, initial_seed */
int mt_py_generator_init(PyObject *module);
/* o's generator (borrowed), or -1 without an exception if o is not a Generator */
int mt_py_to_generator(PyObject *o, mt_generator **out);
/* A Generator object for g (steals the reference); NULL with an exception set. */
PyObject *mt_py_generator_wrap(mt_generator *g);

/* DLPack (dlpack.c): _to_dlpack, _dlpack_device, _from_dlpack_capsule, _dlpack_stats */
int mt_py_dlpack_init(PyObject *module);

#endif
