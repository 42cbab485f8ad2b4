/* DLPack: Tensor.__dlpack__ / __dlpack_device__ (as _C._to_dlpack / _C._dlpack_device) and
 * minitorch.from_dlpack, zero-copy exchange of strided memory with NumPy, PyTorch, CuPy, ...
 *
 * The structs below are written from the DLPack 1.0 specification (dmlc/dlpack, dlpack.h), with
 * its layout: a producer hands out a capsule named "dltensor" (legacy DLManagedTensor) or
 * "dltensor_versioned" (DLManagedTensorVersioned, when the consumer's max_version is >= 1.0);
 * the consumer renames it "used_..." and owns the deleter from then on; a capsule nobody
 * consumed runs the deleter when it dies. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"
#include "python/pyminitorch.h"

/* ---- the DLPack ABI (1.0) ---- */

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 0

#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)

enum { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3 };
enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6 };
/* DLPack 1.1's float8 codes */
enum {
    kDLFloat8_e4m3fn = 10,
    kDLFloat8_e4m3fnuz = 11,
    kDLFloat8_e5m2 = 12,
    kDLFloat8_e5m2fnuz = 13
};

typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

typedef struct {
    int32_t device_type;
    int32_t device_id;
} DLDevice;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL means compact row-major */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

/* ---- export ---- */

/* How many managed tensors minitorch made and how many of their deleters ran (for tests: each
 * deleter must run exactly once). */
static atomic_llong exported_count, deleted_count;

/* One block per export: both managed structs (only one is handed out), the geometry the
 * DLTensor points at, and the tensor that keeps the storage alive. */
typedef struct export_ctx {
    union {
        DLManagedTensor legacy;
        DLManagedTensorVersioned versioned;
    } m;
    int64_t shape[MT_MAX_DIMS];
    int64_t strides[MT_MAX_DIMS];
    mt_tensor *t; /* owned */
} export_ctx;

static void
export_ctx_free(export_ctx *ctx)
{
    mt_tensor_release(ctx->t);
    PyMem_RawFree(ctx);
    atomic_fetch_add(&deleted_count, 1);
}

static void
legacy_deleter(DLManagedTensor *self)
{
    export_ctx_free(self->manager_ctx);
}

static void
versioned_deleter(DLManagedTensorVersioned *self)
{
    export_ctx_free(self->manager_ctx);
}

/* The capsule's destructor: runs the deleter unless a consumer took the tensor (and renamed
 * the capsule). A consumer that refuses the tensor drops the capsule with its exception set
 * (NumPy's "Unsupported device"): that exception is kept, only our own lookups' are dropped. */
static void
capsule_destructor(PyObject *cap)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    const char *name = PyCapsule_GetName(cap);
    if (name != NULL && strcmp(name, "dltensor") == 0) {
        DLManagedTensor *m = PyCapsule_GetPointer(cap, name);
        if (m != NULL && m->deleter != NULL) {
            m->deleter(m);
        }
    } else if (name != NULL && strcmp(name, "dltensor_versioned") == 0) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, name);
        if (m != NULL && m->deleter != NULL) {
            m->deleter(m);
        }
    }
    PyErr_Clear();
    PyErr_Restore(type, value, traceback);
}

static const DLDataType dl_dtypes[MT_NUM_DTYPES] = {
    [MT_BOOL] = {kDLBool, 8, 1},
    [MT_INT32] = {kDLInt, 32, 1},
    [MT_INT64] = {kDLInt, 64, 1},
    [MT_FLOAT32] = {kDLFloat, 32, 1},
    [MT_FLOAT64] = {kDLFloat, 64, 1},
    [MT_UINT8] = {kDLUInt, 8, 1},
    [MT_INT8] = {kDLInt, 8, 1},
    [MT_INT16] = {kDLInt, 16, 1},
    [MT_FLOAT16] = {kDLFloat, 16, 1},
    [MT_BFLOAT16] = {kDLBfloat, 16, 1},
    [MT_COMPLEX64] = {kDLComplex, 64, 1},
    [MT_COMPLEX128] = {kDLComplex, 128, 1},
    [MT_UINT16] = {kDLUInt, 16, 1},
    [MT_UINT32] = {kDLUInt, 32, 1},
    [MT_UINT64] = {kDLUInt, 64, 1},
    [MT_FLOAT8_E4M3FN] = {kDLFloat8_e4m3fn, 8, 1},
    [MT_FLOAT8_E5M2] = {kDLFloat8_e5m2, 8, 1},
    [MT_FLOAT8_E4M3FNUZ] = {kDLFloat8_e4m3fnuz, 8, 1},
    [MT_FLOAT8_E5M2FNUZ] = {kDLFloat8_e5m2fnuz, 8, 1},
};

static DLDevice
dl_device_of(mt_device d)
{
    DLDevice r = {d.type == MT_CUDA ? kDLCUDA : kDLCPU, d.type == MT_CUDA ? d.index : 0};
    return r;
}

/* "cpu" or "cuda:N", as PyTorch names devices in its DLPack errors. */
static void
device_name(mt_device d, char *buf, size_t n)
{
    if (d.type == MT_CUDA) {
        snprintf(buf, n, "cuda:%d", d.index);
    } else {
        snprintf(buf, n, "cpu");
    }
}

/* _to_dlpack(tensor, versioned, dl_device, copy): a capsule for Tensor.__dlpack__, whose
 * Python side has checked requires_grad and stream and chosen the capsule kind from
 * max_version. A dl_device other than the tensor's exports a copy there (as PyTorch 2.13),
 * unless copy is False. */
static PyObject *
py_to_dlpack(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *self, *dl_device, *copy_obj;
    int versioned;
    if (!PyArg_ParseTuple(args, "O!pOO", &mt_py_TensorBase_Type, &self, &versioned, &dl_device,
                          &copy_obj)) {
        return NULL;
    }
    mt_tensor *t = mt_py_unwrap(self);
    mt_device target = mt_tensor_device(t);
    if (mt_py_check_data(t) < 0) {
        return NULL;
    }
    if (dl_device != Py_None) {
        int type, id;
        if (!PyArg_ParseTuple(dl_device, "ii;dl_device must be a (device_type, device_id) tuple",
                              &type, &id)) {
            return NULL;
        }
        if (type == kDLCPU) {
            target = MT_DEVICE_CPU; /* the host has one device, whatever its id */
        } else if (type == kDLCUDA) {
            target = (mt_device){MT_CUDA, id};
        } else {
            return PyErr_Format(PyExc_BufferError, "Unsupported device_type: %d", type);
        }
    }
    bool moves = !mt_device_eq(target, mt_tensor_device(t));
    if (moves && copy_obj == Py_False) {
        char from[32], to[32];
        device_name(mt_tensor_device(t), from, sizeof(from));
        device_name(target, to, sizeof(to));
        return PyErr_Format(PyExc_ValueError,
                            "cannot move (i.e. copy=False) tensor from %s to %s without copying.",
                            from, to);
    }
    int copy = copy_obj == Py_None ? 0 : PyObject_IsTrue(copy_obj);
    if (copy < 0) {
        return NULL;
    }
    copy = copy || moves;
    export_ctx *ctx = PyMem_RawCalloc(1, sizeof(export_ctx));
    if (ctx == NULL) {
        return PyErr_NoMemory();
    }
    /* A fresh view of the storage (or of a copy), free of autograd and of the Python wrapper. */
    mt_tensor *src = t;
    mt_status st = MT_OK;
    if (moves) {
        st = mt_op__to_copy(t, t->dtype, target, &src);
    } else if (copy) {
        st = mt_op_clone(t, &src);
    }
    if (st == MT_OK) {
        st = mt_tensor_on_storage(src->storage, src->ndim, src->sizes, src->strides, src->offset,
                                  src->dtype, &ctx->t);
    }
    if (src != t) {
        mt_tensor_release(src);
    }
    if (st) {
        PyMem_RawFree(ctx);
        return mt_py_raise(st);
    }
    DLDevice dev = dl_device_of(mt_tensor_device(ctx->t));
    DLTensor dl = {
        .data = mt_tensor_data(ctx->t),
        .device = dev,
        .ndim = ctx->t->ndim,
        .dtype = dl_dtypes[ctx->t->dtype],
        .shape = ctx->shape,
        .strides = ctx->strides,
        .byte_offset = 0,
    };
    memcpy(ctx->shape, ctx->t->sizes, sizeof(int64_t) * (size_t)ctx->t->ndim);
    memcpy(ctx->strides, ctx->t->strides, sizeof(int64_t) * (size_t)ctx->t->ndim);
    void *managed;
    if (versioned) {
        DLManagedTensorVersioned *v = &ctx->m.versioned;
        v->version.major = DLPACK_MAJOR_VERSION;
        v->version.minor = DLPACK_MINOR_VERSION;
        v->manager_ctx = ctx;
        v->deleter = versioned_deleter;
        v->flags = copy ? DLPACK_FLAG_BITMASK_IS_COPIED : 0;
        v->dl_tensor = dl;
        managed = v;
    } else {
        DLManagedTensor *l = &ctx->m.legacy;
        l->dl_tensor = dl;
        l->manager_ctx = ctx;
        l->deleter = legacy_deleter;
        managed = l;
    }
    atomic_fetch_add(&exported_count, 1);
    PyObject *cap = PyCapsule_New(managed, versioned ? "dltensor_versioned" : "dltensor",
                                  capsule_destructor);
    if (cap == NULL) {
        export_ctx_free(ctx);
    }
    return cap;
}

static PyObject *
py_dlpack_device(PyObject *m, PyObject *self)
{
    (void)m;
    if (!mt_py_is_tensor(self)) {
        PyErr_SetString(PyExc_TypeError, "expected a Tensor");
        return NULL;
    }
    DLDevice d = dl_device_of(mt_tensor_device(mt_py_unwrap(self)));
    return Py_BuildValue("(ii)", d.device_type, d.device_id);
}

static PyObject *
py_dlpack_stats(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return Py_BuildValue("{s:L,s:L}", "exported", (long long)atomic_load(&exported_count),
                         "deleted", (long long)atomic_load(&deleted_count));
}

/* ---- import ---- */

/* The storage of an imported tensor frees by running the producer's deleter; one allocator per
 * capsule kind, so that ctx is the managed tensor itself. */
static void
free_legacy(mt_allocator *self, void *ptr, size_t nbytes, void *ctx)
{
    (void)self;
    (void)ptr;
    (void)nbytes;
    DLManagedTensor *mt = ctx;
    /* The last view may die on any thread; a producer's deleter may touch Python objects. */
    PyGILState_STATE g = PyGILState_Ensure();
    if (mt->deleter != NULL) {
        mt->deleter(mt);
    }
    PyGILState_Release(g);
}

static void
free_versioned(mt_allocator *self, void *ptr, size_t nbytes, void *ctx)
{
    (void)self;
    (void)ptr;
    (void)nbytes;
    DLManagedTensorVersioned *mt = ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    if (mt->deleter != NULL) {
        mt->deleter(mt);
    }
    PyGILState_Release(g);
}

static mt_allocator legacy_allocator = {"dlpack", NULL, free_legacy, NULL, NULL};
static mt_allocator versioned_allocator = {"dlpack-versioned", NULL, free_versioned, NULL, NULL};

static int
dtype_from_dl(DLDataType t, mt_dtype *out)
{
    if (t.lanes == 1) {
        for (int k = 0; k < MT_NUM_DTYPES; k++) {
            if (dl_dtypes[k].code == t.code && dl_dtypes[k].bits == t.bits) {
                *out = (mt_dtype)k;
                return 0;
            }
        }
    }
    PyErr_Format(PyExc_BufferError,
                 "minitorch.from_dlpack: unsupported DLPack dtype (code %d, bits %d, lanes %d); "
                 "minitorch supports bool, uint8, uint16, uint32, uint64, int8, int16, int32, "
                 "int64, float16, bfloat16, float32, float64, complex64, complex128 and the "
                 "float8 formats e4m3fn, e5m2, e4m3fnuz and e5m2fnuz",
                 t.code, t.bits, t.lanes);
    return -1;
}

/* A tensor viewing the DLTensor's memory; on success the storage owns the managed tensor (its
 * free runs the deleter). Returns NULL with an exception, the capsule still owning it. */
static mt_tensor *
tensor_of(const DLTensor *dl, mt_allocator *owner, void *managed)
{
    mt_dtype dt;
    if (dtype_from_dl(dl->dtype, &dt) < 0) {
        return NULL;
    }
    mt_device dev;
    if (dl->device.device_type == kDLCPU || dl->device.device_type == kDLCUDAHost) {
        dev = MT_DEVICE_CPU;
    } else if (dl->device.device_type == kDLCUDA) {
        if (dl->device.device_id < 0) { /* no device has it: every later use would index by it */
            PyErr_Format(PyExc_BufferError, "minitorch.from_dlpack: invalid CUDA device id %d",
                         (int)dl->device.device_id);
            return NULL;
        }
        dev = (mt_device){MT_CUDA, dl->device.device_id};
    } else {
        PyErr_Format(PyExc_BufferError,
                     "minitorch.from_dlpack: unsupported DLPack device type %d (CPU and CUDA are)",
                     dl->device.device_type);
        return NULL;
    }
    if (dl->ndim < 0 || dl->ndim > MT_MAX_DIMS) {
        PyErr_Format(PyExc_BufferError, "only tensors with up to %d dims are supported (got %d)",
                     MT_MAX_DIMS, (int)dl->ndim);
        return NULL;
    }
    int ndim = dl->ndim;
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    size_t item = mt_dtype_size(dt);
    for (int d = 0; d < ndim; d++) {
        sizes[d] = dl->shape[d];
        if (sizes[d] < 0) {
            PyErr_SetString(PyExc_BufferError, "minitorch.from_dlpack: negative size in DLTensor");
            return NULL;
        }
    }
    if (dl->strides == NULL) {
        mt_contiguous_strides(ndim, sizes, strides);
    }
    int64_t numel = mt_numel(ndim, sizes);
    size_t span = numel > 0 ? item : 0;
    for (int d = 0; d < ndim; d++) {
        if (dl->strides != NULL) {
            strides[d] = dl->strides[d];
        }
        if (numel == 0 || sizes[d] == 1) {
            strides[d] = strides[d] < 0 ? 0 : strides[d]; /* no element is reached through it */
            continue;
        }
        if (strides[d] < 0) {
            PyErr_SetString(PyExc_BufferError,
                            "minitorch.from_dlpack: tensors with negative strides are not "
                            "supported; copy it first");
            return NULL;
        }
        span += (size_t)(sizes[d] - 1) * (size_t)strides[d] * item;
    }
    char *data = (char *)dl->data + dl->byte_offset;
    if (numel > 0 && (uintptr_t)data % item != 0) {
        PyErr_SetString(PyExc_BufferError,
                        "minitorch.from_dlpack: the data is not aligned to its element size; copy "
                        "it first");
        return NULL;
    }
    mt_storage *storage;
    mt_status st = mt_storage_wrap(data, span, dev, owner, managed, &storage);
    if (st) {
        mt_py_raise(st);
        return NULL;
    }
    mt_tensor *t = NULL;
    st = mt_tensor_on_storage(storage, ndim, sizes, strides, 0, dt, &t);
    if (st) {
        /* the storage frees through the deleter: make it forget the managed tensor first */
        storage->ctx = NULL;
        storage->allocator = mt_cpu_allocator();
        storage->data = NULL;
        mt_storage_release(storage);
        mt_py_raise(st);
        return NULL;
    }
    mt_storage_release(storage);
    return t;
}

/* _from_dlpack_capsule(capsule, copy, defer=False): consumes a capsule. copy: None shares the
 * memory (a read-only capsule is copied, as minitorch tensors are always writable), True copies,
 * False refuses a read-only capsule. defer: (tensor, copy_needed), and a device tensor's copy is
 * left to the caller, who must let it finish before dropping the shared tensor (whose release
 * runs the producer's deleter, and the producer may reuse the memory on another stream). */
static PyObject *
invalid_capsule(void)
{
    PyErr_SetString(PyExc_RuntimeError,
                    "from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                    "consumed only once, so you might have already constructed a tensor from it "
                    "once.");
    return NULL;
}

/* _dlpack_capsule_device(capsule): the (device_type, device_id) of an unconsumed capsule, so
 * that from_dlpack checks a capsule's device as it checks a producer's __dlpack_device__. */
static PyObject *
py_dlpack_capsule_device(PyObject *m, PyObject *cap)
{
    (void)m;
    const DLTensor *dl;
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        dl = &((DLManagedTensorVersioned *)PyCapsule_GetPointer(cap, "dltensor_versioned"))
                  ->dl_tensor;
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        dl = &((DLManagedTensor *)PyCapsule_GetPointer(cap, "dltensor"))->dl_tensor;
    } else {
        return invalid_capsule();
    }
    return Py_BuildValue("(ii)", dl->device.device_type, dl->device.device_id);
}

static PyObject *
py_from_dlpack_capsule(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *cap, *copy_obj;
    int defer = 0;
    if (!PyArg_ParseTuple(args, "OO|p", &cap, &copy_obj, &defer)) {
        return NULL;
    }
    int copy = copy_obj == Py_None ? -1 : PyObject_IsTrue(copy_obj);
    if (copy_obj != Py_None && copy < 0) {
        return NULL;
    }
    mt_tensor *t;
    bool read_only = false;
    const char *used;
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        DLManagedTensorVersioned *v = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (v->version.major > DLPACK_MAJOR_VERSION) {
            return PyErr_Format(PyExc_BufferError,
                                "minitorch.from_dlpack: unsupported DLPack version %u.%u (at "
                                "most %d.x is)",
                                v->version.major, v->version.minor, DLPACK_MAJOR_VERSION);
        }
        read_only = (v->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
        if (read_only && copy == 0) {
            PyErr_SetString(PyExc_BufferError,
                            "minitorch.from_dlpack: the DLPack tensor is read-only and minitorch "
                            "tensors are writable; copy=False cannot share it");
            return NULL;
        }
        t = tensor_of(&v->dl_tensor, &versioned_allocator, v);
        used = "used_dltensor_versioned";
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor *l = PyCapsule_GetPointer(cap, "dltensor");
        t = tensor_of(&l->dl_tensor, &legacy_allocator, l);
        used = "used_dltensor";
    } else {
        return invalid_capsule();
    }
    if (t == NULL) {
        return NULL;
    }
    /* The tensor's storage owns the managed tensor now: the capsule must not delete it. */
    if (PyCapsule_SetName(cap, used) < 0) {
        mt_tensor_release(t);
        return NULL;
    }
    bool copy_needed = copy == 1 || read_only;
    if (copy_needed && defer && mt_tensor_device(t).type != MT_CPU) {
        PyObject *shared = mt_py_wrap(t);
        return shared ? Py_BuildValue("(NO)", shared, Py_True) : NULL;
    }
    if (copy_needed) {
        mt_tensor *c;
        mt_status st = mt_op_clone(t, &c);
        mt_tensor_release(t);
        if (st) {
            return mt_py_raise(st);
        }
        t = c;
    }
    PyObject *r = mt_py_wrap(t);
    return r && defer ? Py_BuildValue("(NO)", r, Py_False) : r;
}

/* Whether a tensor views memory imported through DLPack: its storage frees through the
 * producer's deleter, never through minitorch's caching allocator, which therefore knows no
 * block of it (Tensor.record_stream does nothing for it, as PyTorch's for foreign memory). */
static PyObject *
py_dlpack_is_imported(PyObject *m, PyObject *self)
{
    (void)m;
    if (!mt_py_is_tensor(self)) {
        PyErr_SetString(PyExc_TypeError, "expected a Tensor");
        return NULL;
    }
    const mt_allocator *a = mt_py_unwrap(self)->storage->allocator;
    return PyBool_FromLong(a == &legacy_allocator || a == &versioned_allocator);
}

static PyMethodDef dlpack_functions[] = {
    {"_to_dlpack", py_to_dlpack, METH_VARARGS,
     "_to_dlpack(tensor, versioned, dl_device, copy): Tensor.__dlpack__'s capsule."},
    {"_dlpack_device", py_dlpack_device, METH_O, "Tensor.__dlpack_device__()."},
    {"_dlpack_capsule_device", py_dlpack_capsule_device, METH_O,
     "_dlpack_capsule_device(capsule): its (device_type, device_id), without consuming it."},
    {"_from_dlpack_capsule", py_from_dlpack_capsule, METH_VARARGS,
     "_from_dlpack_capsule(capsule, copy, defer=False): the tensor of a DLPack capsule, "
     "consuming it; defer: (tensor, copy_needed), a device tensor's copy left to the caller."},
    {"_dlpack_stats", py_dlpack_stats, METH_NOARGS,
     "Counts of managed tensors exported and of their deleters run."},
    {"_dlpack_is_imported", py_dlpack_is_imported, METH_O,
     "Whether a tensor's memory came from a DLPack producer."},
    {NULL, NULL, 0, NULL},
};

int
mt_py_dlpack_init(PyObject *module)
{
    return PyModule_AddFunctions(module, dlpack_functions);
}
