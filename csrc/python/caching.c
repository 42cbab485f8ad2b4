/* _C._HostCachingAllocator: the caching allocator (alloc/caching.h) over the host backend, for
 * the tests of its rules on machines without a GPU; and _C._cuda_memory_stats() etc., the same
 * views of the CUDA devices' allocators for minitorch.cuda. Addresses are plain ints; nothing here
 * reads or writes the memory. memory_stats() flattens the stats as torch.cuda.memory_stats()
 * does, so the key names can be compared with PyTorch's. */
#include "python/pyminitorch.h"

#include "alloc/caching.h"
#include "python/memory_history.h"
#include "alloc/host_backend.h"

typedef struct host_caching {
    PyObject_HEAD mt_host_backend *hb;
    mt_caching_allocator *ca;
} host_caching;

static int
hc_init(host_caching *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"capacity_bytes", NULL};
    PyObject *cap_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:_HostCachingAllocator", kwlist, &cap_obj)) {
        return -1;
    }
    size_t capacity = 0;
    if (cap_obj != Py_None) {
        capacity = PyLong_AsSize_t(cap_obj);
        if (capacity == (size_t)-1 && PyErr_Occurred()) {
            return -1;
        }
        if (capacity == 0) {
            PyErr_SetString(PyExc_ValueError, "capacity_bytes must be positive");
            return -1;
        }
    }
    if (self->ca != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_HostCachingAllocator is already initialized");
        return -1;
    }
    mt_status st = mt_host_backend_create(capacity, &self->hb);
    if (st == MT_OK) {
        st = mt_caching_create(&mt_host_backend_vtable, self->hb, 0, &self->ca);
    }
    if (st != MT_OK) {
        mt_py_raise(st);
        return -1;
    }
    return 0;
}

static void
hc_dealloc(host_caching *self)
{
    mt_caching_destroy(self->ca);
    mt_host_backend_destroy(self->hb);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
ready(host_caching *self)
{
    if (self->ca == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_HostCachingAllocator.__init__ was not called");
        return 0;
    }
    return 1;
}

/* An address or stream from Python: a non-negative int. */
static int
to_uintptr(PyObject *o, uintptr_t *out)
{
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        return 0;
    }
    *out = (uintptr_t)v;
    return 1;
}

static PyObject *
hc_malloc(host_caching *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"size", "stream", NULL};
    Py_ssize_t size;
    uintptr_t stream = 0;
    if (!ready(self) || !PyArg_ParseTupleAndKeywords(args, kwargs, "n|O&:malloc", kwlist, &size,
                                                     to_uintptr, &stream)) {
        return NULL;
    }
    if (size < 0) {
        return PyErr_Format(PyExc_ValueError, "size must be non-negative, got %zd", size);
    }
    void *ptr;
    mt_status st = mt_caching_malloc(self->ca, (size_t)size, stream, &ptr);
    if (st != MT_OK) {
        return mt_py_raise(st);
    }
    return PyLong_FromUnsignedLongLong((uintptr_t)ptr);
}

static PyObject *
hc_free(host_caching *self, PyObject *arg)
{
    uintptr_t addr;
    if (!ready(self) || !to_uintptr(arg, &addr)) {
        return NULL;
    }
    mt_status st = mt_caching_free(self->ca, (void *)addr);
    if (st != MT_OK) {
        return mt_py_raise(st);
    }
    Py_RETURN_NONE;
}

static PyObject *
hc_record_stream(host_caching *self, PyObject *args)
{
    uintptr_t addr, stream;
    if (!ready(self) ||
        !PyArg_ParseTuple(args, "O&O&:record_stream", to_uintptr, &addr, to_uintptr, &stream)) {
        return NULL;
    }
    mt_status st = mt_caching_record_stream(self->ca, (void *)addr, stream);
    if (st != MT_OK) {
        return mt_py_raise(st);
    }
    Py_RETURN_NONE;
}

static int
set_int(PyObject *d, const char *key, int64_t v)
{
    PyObject *o = PyLong_FromLongLong(v);
    int r = o == NULL ? -1 : PyDict_SetItemString(d, key, o);
    Py_XDECREF(o);
    return r;
}

static int
add_stat(PyObject *d, const char *name, const mt_stat *s)
{
    static const char *fields[] = {"current", "peak", "allocated", "freed"};
    int64_t v[] = {s->current, s->peak, s->allocated, s->freed};
    char key[96];
    for (int f = 0; f < 4; f++) {
        PyOS_snprintf(key, sizeof key, "%s.%s", name, fields[f]);
        if (set_int(d, key, v[f]) < 0) {
            return -1;
        }
    }
    return 0;
}

/* torch.cuda.memory_stats()'s flat dict of s, keys sorted as it sorts them. */
static PyObject *
stats_dict(const mt_caching_stats *sp)
{
    mt_caching_stats s = *sp;
    static const char *pools[] = {"all", "small_pool", "large_pool"};
    struct {
        const char *name;
        const mt_stat *arr;
    } arrays[] = {
        {"allocation", s.allocation},
        {"segment", s.segment},
        {"active", s.active},
        {"inactive_split", s.inactive_split},
        {"allocated_bytes", s.allocated_bytes},
        {"reserved_bytes", s.reserved_bytes},
        {"active_bytes", s.active_bytes},
        {"inactive_split_bytes", s.inactive_split_bytes},
        {"requested_bytes", s.requested_bytes},
    };
    PyObject *d = PyDict_New(), *keys = NULL, *res = NULL;
    if (d == NULL) {
        return NULL;
    }
    char name[64];
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++) {
        for (int t = 0; t < MT_NUM_STAT_TYPES; t++) {
            PyOS_snprintf(name, sizeof name, "%s.%s", arrays[a].name, pools[t]);
            if (add_stat(d, name, &arrays[a].arr[t]) < 0) {
                goto out;
            }
        }
    }
    if (add_stat(d, "oversize_allocations", &s.oversize_allocations) < 0 ||
        add_stat(d, "oversize_segments", &s.oversize_segments) < 0 ||
        set_int(d, "num_alloc_retries", s.num_alloc_retries) < 0 ||
        set_int(d, "num_ooms", s.num_ooms) < 0 ||
        set_int(d, "num_sync_all_streams", s.num_sync_all_streams) < 0 ||
        set_int(d, "num_device_alloc", s.num_device_alloc) < 0 ||
        set_int(d, "num_device_free", s.num_device_free) < 0 ||
        set_int(d, "num_oom_rejections", 0) < 0 || /* no memory fraction to reject against */
        set_int(d, "max_split_size", s.max_split_size) < 0) {
        goto out;
    }
    keys = PyDict_Keys(d);
    if (keys == NULL || PyList_Sort(keys) < 0) {
        goto out;
    }
    res = PyDict_New();
    for (Py_ssize_t i = 0; res != NULL && i < PyList_GET_SIZE(keys); i++) {
        PyObject *k = PyList_GET_ITEM(keys, i);
        if (PyDict_SetItem(res, k, PyDict_GetItem(d, k)) < 0) {
            Py_CLEAR(res);
        }
    }
out:
    Py_XDECREF(keys);
    Py_DECREF(d);
    return res;
}

static PyObject *
hc_memory_stats(host_caching *self, PyObject *unused)
{
    (void)unused;
    if (!ready(self)) {
        return NULL;
    }
    mt_caching_stats s;
    mt_caching_get_stats(self->ca, &s);
    return stats_dict(&s);
}

/* One of the current/peak numbers the torch.cuda.memory_* functions read. */
static PyObject *
stat_value(host_caching *self, int which)
{
    if (!ready(self)) {
        return NULL;
    }
    mt_caching_stats s;
    mt_caching_get_stats(self->ca, &s);
    const mt_stat *st = which < 2 ? &s.allocated_bytes[MT_STAT_ALL]
                                  : &s.reserved_bytes[MT_STAT_ALL];
    return PyLong_FromLongLong(which % 2 == 0 ? st->current : st->peak);
}

static PyObject *
hc_memory_allocated(host_caching *self, PyObject *unused)
{
    (void)unused;
    return stat_value(self, 0);
}

static PyObject *
hc_max_memory_allocated(host_caching *self, PyObject *unused)
{
    (void)unused;
    return stat_value(self, 1);
}

static PyObject *
hc_memory_reserved(host_caching *self, PyObject *unused)
{
    (void)unused;
    return stat_value(self, 2);
}

static PyObject *
hc_max_memory_reserved(host_caching *self, PyObject *unused)
{
    (void)unused;
    return stat_value(self, 3);
}

static PyObject *
hc_empty_cache(host_caching *self, PyObject *unused)
{
    (void)unused;
    if (!ready(self)) {
        return NULL;
    }
    mt_caching_empty_cache(self->ca);
    Py_RETURN_NONE;
}

static PyObject *
hc_reset_peak(host_caching *self, PyObject *unused)
{
    (void)unused;
    if (!ready(self)) {
        return NULL;
    }
    mt_caching_reset_peak_stats(self->ca);
    Py_RETURN_NONE;
}

static PyObject *
hc_reset_accumulated(host_caching *self, PyObject *unused)
{
    (void)unused;
    if (!ready(self)) {
        return NULL;
    }
    mt_caching_reset_accumulated_stats(self->ca);
    Py_RETURN_NONE;
}

static PyObject *
block_dict(const mt_caching_block_info *b)
{
    const char *state = b->allocated ? "active_allocated"
                        : b->active  ? "active_pending_free"
                                     : "inactive";
    PyObject *frames = mt_py_context_frames(b->context);
    return frames == NULL
               ? NULL
               : Py_BuildValue("{s:K,s:n,s:n,s:s,s:O,s:N}", "address",
                               (unsigned long long)b->address, "size", (Py_ssize_t)b->size,
                               "requested_size", (Py_ssize_t)b->requested_size, "state", state,
                               "allocated", b->allocated ? Py_True : Py_False, "frames", frames);
}

static PyObject *
segment_dict(const mt_caching_segment_info *seg, int device)
{
    PyObject *blocks = PyList_New(seg->nblocks);
    for (int k = 0; blocks != NULL && k < seg->nblocks; k++) {
        PyObject *b = block_dict(&seg->blocks[k]);
        if (b == NULL) {
            Py_CLEAR(blocks);
            break;
        }
        PyList_SET_ITEM(blocks, k, b);
    }
    if (blocks == NULL) {
        return NULL;
    }
    return Py_BuildValue("{s:i,s:K,s:n,s:n,s:n,s:n,s:K,s:s,s:N}", "device", device, "address",
                         (unsigned long long)seg->address, "total_size",
                         (Py_ssize_t)seg->total_size, "allocated_size",
                         (Py_ssize_t)seg->allocated_size, "active_size",
                         (Py_ssize_t)seg->active_size, "requested_size",
                         (Py_ssize_t)seg->requested_size, "stream", (unsigned long long)seg->stream,
                         "segment_type", seg->is_small ? "small" : "large", "blocks", blocks);
}

/* ca's segments as torch.cuda.memory_snapshot() lists them (by address, blocks in order),
 * appended to list. */
static int
append_segments(PyObject *list, mt_caching_allocator *ca, int device)
{
    mt_caching_segment_info *segs;
    int n;
    mt_status st = mt_caching_snapshot(ca, &segs, &n);
    if (st != MT_OK) {
        mt_py_raise(st);
        return -1;
    }
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        PyObject *d = segment_dict(&segs[i], device);
        rc = d == NULL ? -1 : PyList_Append(list, d);
        Py_XDECREF(d);
    }
    mt_caching_snapshot_free(segs, n);
    return rc;
}

static PyObject *
hc_segments(host_caching *self, PyObject *unused)
{
    (void)unused;
    PyObject *list = ready(self) ? PyList_New(0) : NULL;
    if (list != NULL && append_segments(list, self->ca, 0) < 0) {
        Py_CLEAR(list);
    }
    return list;
}

static PyObject *
hc_fail_next(host_caching *self, PyObject *arg)
{
    long n = PyLong_AsLong(arg);
    if (!ready(self) || (n == -1 && PyErr_Occurred())) {
        return NULL;
    }
    if (n < 0 || n > INT_MAX) {
        return PyErr_Format(PyExc_ValueError, "expected a count in [0, %d], got %ld", INT_MAX, n);
    }
    mt_host_backend_fail_next(self->hb, (int)n);
    Py_RETURN_NONE;
}

static PyObject *
hc_synchronize(host_caching *self, PyObject *args)
{
    PyObject *stream_obj = Py_None;
    uintptr_t stream = 0;
    if (!ready(self) || !PyArg_ParseTuple(args, "|O:synchronize", &stream_obj)) {
        return NULL;
    }
    if (stream_obj != Py_None && !to_uintptr(stream_obj, &stream)) {
        return NULL;
    }
    mt_host_backend_complete(self->hb, stream, stream_obj == Py_None);
    Py_RETURN_NONE;
}

static PyObject *
hc_set_stream(host_caching *self, PyObject *arg)
{
    uintptr_t stream;
    if (!ready(self) || !to_uintptr(arg, &stream)) {
        return NULL;
    }
    mt_host_backend_set_stream(self->hb, stream);
    Py_RETURN_NONE;
}

/* Through the mt_allocator vtable, as a storage would allocate (on the current stream). */
static PyObject *
hc_allocator_alloc(host_caching *self, PyObject *arg)
{
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (!ready(self) || (n == -1 && PyErr_Occurred())) {
        return NULL;
    }
    mt_allocator *a = mt_caching_as_allocator(self->ca);
    void *ptr, *ctx;
    mt_status st = a->alloc(a, (size_t)n, (mt_device){MT_CUDA, 0}, &ptr, &ctx);
    if (st != MT_OK) {
        return mt_py_raise(st);
    }
    return PyLong_FromUnsignedLongLong((uintptr_t)ptr);
}

static PyObject *
hc_allocator_free(host_caching *self, PyObject *arg)
{
    uintptr_t addr;
    if (!ready(self) || !to_uintptr(arg, &addr)) {
        return NULL;
    }
    mt_allocator *a = mt_caching_as_allocator(self->ca);
    a->free(a, (void *)addr, 0, NULL);
    Py_RETURN_NONE;
}

static PyObject *
hc_allocator_stats(host_caching *self, PyObject *unused)
{
    (void)unused;
    if (!ready(self)) {
        return NULL;
    }
    mt_allocator *a = mt_caching_as_allocator(self->ca);
    mt_alloc_stats s;
    a->stats(a, &s);
    /* (allocated_bytes, peak_allocated_bytes, reserved_bytes, num_allocs, num_frees) */
    return Py_BuildValue("(LLLLL)", (long long)s.allocated_bytes, (long long)s.peak_allocated_bytes,
                         (long long)s.reserved_bytes, (long long)s.num_allocs,
                         (long long)s.num_frees);
}

static PyObject *
hc_get_count(host_caching *self, void *which)
{
    if (!ready(self)) {
        return NULL;
    }
    mt_host_backend_counts c;
    mt_host_backend_counts_get(self->hb, &c);
    return PyLong_FromLongLong(which ? c.raw_free_calls : c.raw_alloc_calls);
}

static PyMethodDef hc_methods[] = {
    {"malloc", (PyCFunction)(void (*)(void))hc_malloc, METH_VARARGS | METH_KEYWORDS,
     "malloc(size, stream=0) -> address"},
    {"free", (PyCFunction)hc_free, METH_O, NULL},
    {"record_stream", (PyCFunction)hc_record_stream, METH_VARARGS,
     "record_stream(address, stream): the block is used on stream too"},
    {"memory_stats", (PyCFunction)hc_memory_stats, METH_NOARGS, NULL},
    {"memory_allocated", (PyCFunction)hc_memory_allocated, METH_NOARGS, NULL},
    {"max_memory_allocated", (PyCFunction)hc_max_memory_allocated, METH_NOARGS, NULL},
    {"memory_reserved", (PyCFunction)hc_memory_reserved, METH_NOARGS, NULL},
    {"max_memory_reserved", (PyCFunction)hc_max_memory_reserved, METH_NOARGS, NULL},
    {"empty_cache", (PyCFunction)hc_empty_cache, METH_NOARGS, NULL},
    {"reset_peak_memory_stats", (PyCFunction)hc_reset_peak, METH_NOARGS, NULL},
    {"reset_accumulated_memory_stats", (PyCFunction)hc_reset_accumulated, METH_NOARGS, NULL},
    {"segments", (PyCFunction)hc_segments, METH_NOARGS,
     "The segments and their blocks, as torch.cuda.memory_snapshot() lists them."},
    {"fail_next_raw_allocs", (PyCFunction)hc_fail_next, METH_O,
     "Makes the backend's next n raw allocations fail with out-of-memory."},
    {"synchronize", (PyCFunction)hc_synchronize, METH_VARARGS,
     "synchronize(stream=None): the work queued so far on stream (every stream) is done."},
    {"set_stream", (PyCFunction)hc_set_stream, METH_O, "The current stream of allocator_alloc."},
    {"allocator_alloc", (PyCFunction)hc_allocator_alloc, METH_O,
     "Allocates through the mt_allocator vtable."},
    {"allocator_free", (PyCFunction)hc_allocator_free, METH_O, NULL},
    {"allocator_stats", (PyCFunction)hc_allocator_stats, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef hc_getset[] = {
    {"raw_alloc_calls", (getter)hc_get_count, NULL, "raw_alloc calls, failed ones included", NULL},
    {"raw_free_calls", (getter)hc_get_count, NULL, NULL, (void *)1},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject host_caching_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "minitorch._C._HostCachingAllocator",
    .tp_basicsize = sizeof(host_caching),
    .tp_dealloc = (destructor)hc_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "_HostCachingAllocator(capacity_bytes=None): the CUDA caching allocator's "
              "algorithm over host memory, for tests.",
    .tp_methods = hc_methods,
    .tp_getset = hc_getset,
    .tp_init = (initproc)hc_init,
    .tp_new = PyType_GenericNew,
};

/* ---- the CUDA devices' allocators (made and fed by _C_cuda), for minitorch.cuda ---- */

/* device's allocator; NULL without an exception when it has none yet (nothing allocated). */
static int
device_arg(PyObject *arg, mt_caching_allocator **out)
{
    long d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (d < 0 || d >= MT_CACHING_MAX_DEVICES) {
        PyErr_Format(PyExc_RuntimeError, "Invalid device argument %ld", d);
        return -1;
    }
    *out = mt_caching_for_device((int)d);
    return 0;
}

static PyObject *
cuda_memory_stats(PyObject *m, PyObject *arg)
{
    (void)m;
    mt_caching_allocator *ca;
    if (device_arg(arg, &ca) < 0) {
        return NULL;
    }
    mt_caching_stats s = {.max_split_size = -1}; /* a device with nothing allocated yet */
    if (ca != NULL) {
        mt_caching_get_stats(ca, &s);
    }
    return stats_dict(&s);
}

static PyObject *
cuda_reset_stats(PyObject *arg, void (*reset)(mt_caching_allocator *))
{
    mt_caching_allocator *ca;
    if (device_arg(arg, &ca) < 0) {
        return NULL;
    }
    if (ca != NULL) {
        reset(ca);
    }
    Py_RETURN_NONE;
}

static PyObject *
cuda_reset_peak(PyObject *m, PyObject *arg)
{
    (void)m;
    return cuda_reset_stats(arg, mt_caching_reset_peak_stats);
}

static PyObject *
cuda_reset_accumulated(PyObject *m, PyObject *arg)
{
    (void)m;
    return cuda_reset_stats(arg, mt_caching_reset_accumulated_stats);
}

static PyObject *
cuda_empty_cache(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    for (int d = 0; d < MT_CACHING_MAX_DEVICES; d++) {
        mt_caching_allocator *ca = mt_caching_for_device(d);
        if (ca != NULL) {
            Py_BEGIN_ALLOW_THREADS /* it waits for the streams */
                mt_caching_empty_cache(ca);
            Py_END_ALLOW_THREADS
        }
    }
    Py_RETURN_NONE;
}

static PyObject *
cuda_memory_snapshot(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    PyObject *list = PyList_New(0);
    for (int d = 0; list != NULL && d < MT_CACHING_MAX_DEVICES; d++) {
        mt_caching_allocator *ca = mt_caching_for_device(d);
        if (ca != NULL && append_segments(list, ca, d) < 0) {
            Py_CLEAR(list);
        }
    }
    return list;
}

static PyObject *
cuda_set_memory_fraction(PyObject *m, PyObject *args)
{
    (void)m;
    double fraction;
    int device;
    if (!PyArg_ParseTuple(args, "di", &fraction, &device)) {
        return NULL;
    }
    if (device < 0 || device >= MT_CACHING_MAX_DEVICES) {
        PyErr_Format(PyExc_RuntimeError, "Invalid device argument %d", device);
        return NULL;
    }
    mt_caching_device_set_fraction(device, fraction);
    Py_RETURN_NONE;
}

static PyObject *
cuda_get_memory_fraction(PyObject *m, PyObject *arg)
{
    (void)m;
    long d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (d < 0 || d >= MT_CACHING_MAX_DEVICES) {
        PyErr_Format(PyExc_RuntimeError, "Invalid device argument %ld", d);
        return NULL;
    }
    return PyFloat_FromDouble(mt_caching_device_fraction((int)d));
}

static PyMethodDef cuda_memory_methods[] = {
    {"_cuda_set_memory_fraction", cuda_set_memory_fraction, METH_VARARGS,
     "_cuda_set_memory_fraction(fraction, device): the caching allocator's limit."},
    {"_cuda_get_memory_fraction", cuda_get_memory_fraction, METH_O, NULL},
    {"_cuda_memory_stats", cuda_memory_stats, METH_O,
     "_cuda_memory_stats(device): torch.cuda.memory_stats()'s dict for a CUDA device."},
    {"_cuda_reset_peak_memory_stats", cuda_reset_peak, METH_O, NULL},
    {"_cuda_reset_accumulated_memory_stats", cuda_reset_accumulated, METH_O, NULL},
    {"_cuda_empty_cache", cuda_empty_cache, METH_NOARGS,
     "Gives every CUDA device's unused cached segments back to the driver."},
    {"_cuda_memory_snapshot", cuda_memory_snapshot, METH_NOARGS,
     "Every CUDA device's segments, as torch.cuda.memory_snapshot() lists them."},
    {NULL, NULL, 0, NULL},
};

int
mt_py_caching_init(PyObject *module)
{
    if (PyType_Ready(&host_caching_Type) < 0 ||
        PyModule_AddObjectRef(module, "_HostCachingAllocator", (PyObject *)&host_caching_Type) <
            0) {
        return -1;
    }
    return PyModule_AddFunctions(module, cuda_memory_methods) < 0
               ? -1
               : PyModule_AddFunctions(module, mt_py_memory_history_functions);
}
