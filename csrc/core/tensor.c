/* Storage and tensor lifetimes, and an element's value in memory. No kernels and no dispatch
 * here; shape and stride arithmetic is core/layout.c's. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/float8.h"
#include "core/half.h"
#include "core/tensor.h"
#include "ops/ops.h" /* item() of a device tensor copies it to the host */

/* How many tensor and storage structs exist: the leak tests check they return to zero. */
static atomic_llong live_tensors, live_storages;

void
mt_live_counts(int64_t *tensors, int64_t *storages)
{
    *tensors = atomic_load_explicit(&live_tensors, memory_order_relaxed);
    *storages = atomic_load_explicit(&live_storages, memory_order_relaxed);
}

mt_status
mt_storage_new(size_t nbytes, mt_device dev, mt_storage **out)
{
    mt_allocator *a = mt_allocator_for(dev);
    if (a == NULL) {
        return mt_fail(MT_EDEVICE,
                       "no allocator for device type %d: minitorch was built without CUDA",
                       (int)dev.type);
    }
    void *data = NULL, *ctx = NULL;
    mt_status st = a->alloc(a, nbytes, dev, &data, &ctx);
    if (st) {
        return st;
    }
    st = mt_storage_wrap(data, nbytes, dev, a, ctx, out);
    if (st) {
        a->free(a, data, nbytes, ctx);
    }
    return st;
}

mt_status
mt_storage_wrap(void *data, size_t nbytes, mt_device dev, mt_allocator *allocator, void *ctx,
                mt_storage **out)
{
    mt_storage *s = malloc(sizeof(*s));
    if (s == NULL) {
        return mt_fail(MT_ENOMEM,
                       "DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                       "%zu bytes. Error code 12 (Cannot allocate memory)",
                       sizeof(*s));
    }
    atomic_init(&s->refcount, 1);
    atomic_fetch_add_explicit(&live_storages, 1, memory_order_relaxed);
    s->data = data;
    s->nbytes = nbytes;
    s->allocator = allocator;
    s->ctx = ctx;
    s->device = dev;
    atomic_init(&s->version.value, 0);
    atomic_init(&s->version.refcount, 1);
    s->version.home = s;
    atomic_init(&s->writes, 0);
    atomic_init(&s->derived, NULL);
    *out = s;
    return MT_OK;
}

static void
version_drop(mt_version *v)
{
    if (atomic_fetch_sub_explicit(&v->refcount, 1, memory_order_acq_rel) == 1) {
        free(v->home ? (void *)v->home : (void *)v);
    }
}

/* Sets t's counter to v, which t holds when it is not its storage's own. */
static void
version_hold(mt_tensor *t, mt_version *v)
{
    if (v != &t->storage->version) {
        atomic_fetch_add_explicit(&v->refcount, 1, memory_order_relaxed);
    }
    t->version = v;
}

static void
release_version(mt_tensor *t)
{
    if (t->version != &t->storage->version) {
        version_drop(t->version);
    }
}

void
mt_storage_retain(mt_storage *s)
{
    atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
}

void
mt_storage_release(mt_storage *s)
{
    if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) {
        return;
    }
    mt_derived *d = atomic_exchange(&s->derived, NULL);
    if (d) {
        d->release(d);
    }
    s->allocator->free(s->allocator, s->data, s->nbytes, s->ctx);
    atomic_fetch_sub_explicit(&live_storages, 1, memory_order_relaxed);
    version_drop(&s->version); /* the struct goes with the last user of its counter */
}

/* Freed tensor structs kept for reuse, per thread. At 64 dims an mt_tensor (about 1.2 KB) is past
 * glibc's per-thread cache (tcache: up to 1032 bytes), and malloc's slow path made a small call
 * (bench_overhead's linear) 15% slower. A thread's spares are freed when it exits. */
#define SPARE_TENSORS 32
#if defined(__SANITIZE_ADDRESS__)
#define KEEP_SPARES false /* AddressSanitizer must see each free, to catch a use after it */
#else
#define KEEP_SPARES true
#endif

typedef struct spare_tensors {
    int n;
    mt_tensor *t[SPARE_TENSORS];
} spare_tensors;

static _Thread_local spare_tensors spare;
static _Thread_local bool spare_registered;
static pthread_key_t spare_key;
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;
static bool spare_key_ok;

static void
spare_free(void *p)
{
    spare_tensors *s = p;
    while (s->n > 0) {
        free(s->t[--s->n]);
    }
    spare_registered = false; /* a later destructor's release registers again (runs this again) */
}

static void
spare_key_create(void)
{
    spare_key_ok = pthread_key_create(&spare_key, spare_free) == 0;
}

_Static_assert(offsetof(mt_tensor, strides) ==
                       offsetof(mt_tensor, sizes) + sizeof(int64_t) * MT_MAX_DIMS &&
                   offsetof(mt_tensor, dtype) ==
                       offsetof(mt_tensor, strides) + sizeof(int64_t) * MT_MAX_DIMS,
               "tensor_struct_new skips sizes and strides, which must stand together before dtype");

static mt_tensor *
tensor_struct_new(void)
{
    if (spare.n == 0) {
        return calloc(1, sizeof(mt_tensor));
    }
    mt_tensor *t = spare.t[--spare.n];
    /* all but sizes and strides (1 KB at MT_MAX_DIMS), of which tensor_alloc sets the first ndim
     * and nothing reads more */
    memset(t, 0, offsetof(mt_tensor, sizes));
    memset(&t->dtype, 0, sizeof(*t) - offsetof(mt_tensor, dtype));
    return t;
}

static void
tensor_struct_free(mt_tensor *t)
{
    if (KEEP_SPARES && !spare_registered) { /* the thread's first: its exit frees the spares */
        pthread_once(&spare_once, spare_key_create);
        spare_registered = spare_key_ok && pthread_setspecific(spare_key, &spare) == 0;
    }
    if (spare_registered && spare.n < SPARE_TENSORS) {
        spare.t[spare.n++] = t;
    } else {
        free(t);
    }
}

static _Thread_local bool inference_mode; /* mt_inference_mode */

bool
mt_inference_mode(void)
{
    return inference_mode;
}

void
mt_set_inference_mode(bool on)
{
    inference_mode = on;
}

mt_status
mt_check_inference_write(const mt_tensor *t)
{
    if (t->is_inference && !inference_mode) {
        return mt_fail(MT_ERUNTIME,
                       "Inplace update to inference tensor outside InferenceMode is not "
                       "allowed.You can make a clone to get a normal tensor before doing inplace "
                       "update.See https://github.com/pytorch/rfcs/pull/17 for more details.");
    }
    return MT_OK;
}

mt_status
mt_check_inference_saved(const mt_tensor *t)
{
    if (t->is_inference && !t->is_wrapped_number && !inference_mode) {
        return mt_fail(MT_ERUNTIME,
                       "Inference tensors cannot be saved for backward. Please do not use Tensors "
                       "created in inference mode in computation tracked by autograd. To work "
                       "around this, you can make a clone to get a normal tensor and use it in "
                       "autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.");
    }
    return MT_OK;
}

mt_status
mt_check_inference_requires_grad(const mt_tensor *t, bool on)
{
    if (on && t->is_inference && !inference_mode) {
        return mt_fail(MT_ERUNTIME, "Setting requires_grad=True on inference tensor outside "
                                    "InferenceMode is not allowed.");
    }
    return MT_OK;
}

mt_status
mt_check_inference_version(const mt_tensor *t)
{
    return t->is_inference ? mt_fail(MT_ERUNTIME, "Inference tensors do not track version counter.")
                           : MT_OK;
}

static mt_status
tensor_alloc(mt_storage *storage, int ndim, const int64_t *sizes, const int64_t *strides,
             int64_t offset, mt_dtype dtype, mt_tensor **out)
{
    mt_tensor *t = tensor_struct_new();
    if (t == NULL) {
        return mt_fail(MT_ENOMEM,
                       "DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                       "%zu bytes. Error code 12 (Cannot allocate memory)",
                       sizeof(*t));
    }
    atomic_init(&t->refcount, 1);
    atomic_fetch_add_explicit(&live_tensors, 1, memory_order_relaxed);
    t->storage = storage;
    t->version = &storage->version;
    t->offset = offset;
    t->ndim = ndim;
    if (ndim > 0) { /* a 0-dim tensor may come with NULL sizes and strides */
        memcpy(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim);
        memcpy(t->strides, strides, sizeof(int64_t) * (size_t)ndim);
    }
    t->dtype = dtype;
    t->is_inference = inference_mode;
    *out = t;
    return MT_OK;
}

mt_status
mt_check_sizes(int ndim, const int64_t *sizes)
{
    char buf[256];
    if (ndim > MT_MAX_DIMS) {
        return mt_fail(MT_ERUNTIME, "only tensors with up to %d dims are supported (got %d)",
                       MT_MAX_DIMS, ndim);
    }
    uint64_t n = 1;
    bool overflow = false, empty = false;
    for (int d = 0; d < ndim; d++) {
        if (sizes[d] < 0) {
            return mt_fail(MT_ERUNTIME,
                           "Trying to create tensor with negative dimension %" PRId64 ": %s",
                           sizes[d], mt_format_sizes(buf, sizeof(buf), ndim, sizes));
        }
        empty |= sizes[d] == 0;
        /* Bytes, not elements, must fit: leave room for the widest dtype (8 bytes). */
        if (!overflow && sizes[d] != 0 && n > (uint64_t)INT64_MAX / 8 / (uint64_t)sizes[d]) {
            overflow = true;
        }
        if (!overflow) {
            n *= (uint64_t)sizes[d];
        }
    }
    /* A zero size anywhere makes the product 0, whatever the other sizes are. */
    if (overflow && !empty) {
        return mt_fail(MT_ERUNTIME, "Storage size calculation overflowed with sizes=%s",
                       mt_format_sizes(buf, sizeof(buf), ndim, sizes));
    }
    return MT_OK;
}

mt_status
mt_tensor_empty(int ndim, const int64_t *sizes, mt_dtype dtype, mt_device dev, mt_tensor **out)
{
    if (ndim > MT_MAX_DIMS) { /* before the strides are written */
        return mt_check_sizes(ndim, sizes);
    }
    int64_t strides[MT_MAX_DIMS];
    mt_contiguous_strides(ndim, sizes, strides);
    return mt_tensor_empty_strided(ndim, sizes, strides, dtype, dev, out);
}

mt_status
mt_tensor_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides, mt_dtype dtype,
                        mt_device dev, mt_tensor **out)
{
    mt_status st = mt_check_sizes(ndim, sizes);
    if (st) {
        return st;
    }
    mt_storage *s;
    st = mt_storage_new((size_t)mt_numel(ndim, sizes) * mt_dtype_size(dtype), dev, &s);
    if (st) {
        return st;
    }
    st = tensor_alloc(s, ndim, sizes, strides, 0, dtype, out);
    if (st) {
        mt_storage_release(s);
    }
    return st;
}

mt_status
mt_tensor_view(mt_tensor *base, int ndim, const int64_t *sizes, const int64_t *strides,
               int64_t offset, mt_tensor **out)
{
    mt_status st = mt_tensor_on_storage(base->storage, ndim, sizes, strides, offset, base->dtype,
                                        out);
    if (st == MT_OK) {
        version_hold(*out, base->version);
        (*out)->is_inference = base->is_inference; /* a view is what its base is */
        /* a wrapper subclass's memory is none: every op on a view of it must go to Python,
         * which refuses one with no __torch_dispatch__ object */
        (*out)->python_dispatch = base->python_dispatch;
    }
    return st;
}

void
mt_tensor_set_storage(mt_tensor *t, mt_storage *storage)
{
    mt_version *v = t->version;
    mt_storage *old = t->storage;
    const bool held = v != &old->version, holds = v != &storage->version;
    mt_storage_retain(storage);
    if (holds && !held) {
        atomic_fetch_add_explicit(&v->refcount, 1, memory_order_relaxed); /* v may live in old */
    } else if (held && !holds) {
        version_drop(v); /* not the last reference: storage's own is one */
    }
    t->storage = storage;
    mt_storage_release(old);
}

void
mt_tensor_share_version(mt_tensor *t, const mt_tensor *src)
{
    mt_version *v = src->version;
    if (v == t->version) {
        return;
    }
    atomic_fetch_add_explicit(&v->refcount, 1, memory_order_relaxed); /* held while swapping */
    release_version(t);
    version_hold(t, v);
    version_drop(v);
}

mt_status
mt_tensor_new_version(mt_tensor *t, long value)
{
    mt_version *v = malloc(sizeof(*v));
    if (v == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory for a version counter");
    }
    atomic_init(&v->value, value);
    atomic_init(&v->refcount, 1); /* t's */
    v->home = NULL;
    release_version(t);
    t->version = v;
    return MT_OK;
}

mt_status
mt_tensor_on_storage(mt_storage *storage, int ndim, const int64_t *sizes, const int64_t *strides,
                     int64_t offset, mt_dtype dtype, mt_tensor **out)
{
    char sb[256], tb[256];
    mt_status st = mt_check_sizes(ndim, sizes);
    if (st) {
        return st;
    }
    if (offset < 0) {
        return mt_fail(MT_ERUNTIME, "Tensor: invalid storage offset %" PRId64, offset);
    }
    /* The last element reached must lie inside the storage. */
    uint64_t itemsize = mt_dtype_size(dtype);
    uint64_t needed = 0;
    if (mt_numel(ndim, sizes) > 0) {
        uint64_t last = (uint64_t)offset;
        for (int d = 0; d < ndim; d++) {
            if (strides[d] < 0) {
                return mt_fail(MT_ERUNTIME,
                               "as_strided: Negative strides are not supported at the "
                               "moment, got strides: %s",
                               mt_format_sizes(tb, sizeof(tb), ndim, strides));
            }
            uint64_t span;
            if (__builtin_mul_overflow((uint64_t)(sizes[d] - 1), (uint64_t)strides[d], &span) ||
                __builtin_add_overflow(last, span, &last)) {
                last = UINT64_MAX / itemsize; /* unreachable: fails the bound below */
            }
        }
        if (__builtin_mul_overflow(last + 1, itemsize, &needed)) {
            needed = UINT64_MAX;
        }
    }
    if (needed > storage->nbytes) {
        return mt_fail(MT_ERUNTIME,
                       "setStorage: sizes %s, strides %s, storage offset %" PRId64
                       ", and itemsize %d requiring a storage size of %" PRIu64
                       " are out of bounds for storage of size %zu",
                       mt_format_sizes(sb, sizeof(sb), ndim, sizes),
                       mt_format_sizes(tb, sizeof(tb), ndim, strides), offset, (int)itemsize,
                       needed, storage->nbytes);
    }
    mt_storage_retain(storage);
    st = tensor_alloc(storage, ndim, sizes, strides, offset, dtype, out);
    if (st) {
        mt_storage_release(storage);
    }
    return st;
}

mt_status
mt_tensor_scalar(mt_scalar value, mt_dtype dtype, mt_tensor **out)
{
    mt_status st = mt_tensor_empty(0, NULL, dtype, MT_DEVICE_CPU, out);
    if (st) {
        return st;
    }
    mt_store_scalar(mt_tensor_data(*out), dtype, value);
    (*out)->is_wrapped_number = true;
    return MT_OK;
}

void
mt_tensor_release(mt_tensor *t)
{
    if (t == NULL || atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) != 1) {
        return;
    }
    if (t->owns_pyobj && mt_tensor_pyobj_hook) {
        mt_tensor_pyobj_hook(t);
    }
    if (t->grad) {
        mt_tensor_release(t->grad);
    }
    if (t->grad_fn) {
        mt_autograd_forget(t);
    }
    if (t->hooks) {
        mt_hooks_free(t->hooks);
    }
    if (t->view_base) {
        mt_tensor_release(t->view_base); /* never a view itself: no deeper recursion */
    }
    if (t->sparse_indices) {
        mt_tensor_release(t->sparse_indices); /* never sparse itself: no deeper recursion */
    }
    release_version(t);
    mt_storage_release(t->storage);
    tensor_struct_free(t);
    atomic_fetch_sub_explicit(&live_tensors, 1, memory_order_relaxed);
}

void (*mt_tensor_pyobj_hook)(mt_tensor *t);

void
mt_tensor_clear(mt_tensor **t)
{
    if (*t) {
        mt_tensor_release(*t);
        *t = NULL;
    }
}

mt_status
mt_tensor_set_requires_grad(mt_tensor *t, bool on)
{
    if (on && !mt_dtype_is_float(t->dtype) && !mt_dtype_is_complex(t->dtype)) {
        return mt_fail(MT_ERUNTIME,
                       "Only Tensors of floating point and complex dtype can require gradients");
    }
    t->requires_grad = on;
    return MT_OK;
}

mt_status
mt_check_writable(const mt_tensor *t)
{
    if (mt_tensor_has_internal_overlap(t)) {
        return mt_fail(MT_ERUNTIME,
                       "unsupported operation: more than one element of the written-to tensor "
                       "refers to a single memory location. Please clone() the tensor before "
                       "performing the operation.");
    }
    return MT_OK;
}

/* c10's name of a real dtype's C++ type, as its overflow message gives it. */
static const char *
real_type_name(mt_dtype dt)
{
    switch (dt) {
    case MT_FLOAT32:
        return "float";
    case MT_FLOAT64:
        return "double";
    case MT_FLOAT16:
        return "c10::Half";
    case MT_BFLOAT16:
        return "c10::BFloat16";
    case MT_INT64:
        return "int64_t";
    case MT_INT32:
        return "int";
    case MT_INT16:
        return "int16_t";
    case MT_INT8:
        return "int8_t";
    case MT_UINT16:
        return "uint16_t";
    case MT_UINT32:
        return "uint32_t";
    case MT_UINT64:
        return "uint64_t";
    default:
        return mt_dtype_is_float8(dt) ? mt_dtype_c_name(dt) : "uint8_t";
    }
}

/* The small integer dtypes' bounds and names, for mt_check_scalar_fits. */
static bool
small_int_bounds(mt_dtype dt, int64_t *lo, int64_t *hi, const char **name)
{
    switch (dt) {
    case MT_UINT8:
        *lo = 0, *hi = 255, *name = "uint8_t";
        return true;
    case MT_INT8:
        *lo = -128, *hi = 127, *name = "int8_t";
        return true;
    case MT_INT16:
        *lo = -32768, *hi = 32767, *name = "int16_t";
        return true;
    case MT_UINT16:
        *lo = 0, *hi = 65535, *name = "uint16_t";
        return true;
    case MT_UINT32:
        *lo = 0, *hi = 4294967295, *name = "uint32_t";
        return true;
    default:
        return false;
    }
}

/* c10's overflows() for a double into a floating dtype: a finite value beyond its largest; inf
 * only into a dtype without infinities (float8 e4m3fn and the fnuz formats), NaN into none of
 * them (every one has a NaN). Any double fits a double. */
static bool
float_overflows(double f, mt_dtype dt)
{
    double max;
    bool has_inf = true;
    switch (dt) {
    case MT_FLOAT16:
        max = 65504.0;
        break;
    case MT_BFLOAT16:
        max = 3.38953138925153547590470800371487866880e38;
        break;
    case MT_FLOAT32:
        max = FLT_MAX;
        break;
    case MT_FLOAT8_E4M3FN:
        max = 448.0, has_inf = false;
        break;
    case MT_FLOAT8_E5M2:
        max = 57344.0;
        break;
    case MT_FLOAT8_E4M3FNUZ:
        max = 240.0, has_inf = false;
        break;
    case MT_FLOAT8_E5M2FNUZ:
        max = 57344.0, has_inf = false;
        break;
    default:
        return false;
    }
    if (isinf(f)) {
        return !has_inf;
    }
    return f < -max || f > max; /* false for NaN */
}

mt_status
mt_check_scalar_fits(mt_scalar v, mt_dtype dt)
{
    int64_t ilo, ihi;
    const char *name;
    if (v.imag != 0.0 && !mt_dtype_is_complex(dt) && dt != MT_BOOL) {
        /* c10's overflows(): a complex number with an imaginary part fits no real dtype */
        return mt_fail(MT_ERUNTIME, "value cannot be converted to type %s without overflow",
                       real_type_name(dt));
    }
    if (small_int_bounds(dt, &ilo, &ihi, &name)) {
        /* c10's overflows(): a float must lie in [lowest, max]; a negative int may wrap into an
         * unsigned type when its magnitude fits (-1 -> 255). */
        bool ok = v.type == MT_FLOAT64 ? (v.v.f >= (double)ilo && v.v.f <= (double)ihi)
                  : v.type == MT_INT64
                      ? (v.v.i <= ihi && (v.v.i >= ilo || (ilo == 0 && v.v.i >= -ihi)))
                      : v.type != MT_UINT64; /* from 2^63 on: above every bound */
        if (!ok) {
            return mt_fail(MT_ERUNTIME, "value cannot be converted to type %s without overflow",
                           name);
        }
        return MT_OK;
    }
    if (dt == MT_UINT64) {
        /* any int64 wraps in (-1 -> 2^64 - 1), as into uint8; a float must lie in [0, 2^64) */
        bool ok = v.type != MT_FLOAT64 || (v.v.f >= 0.0 && v.v.f < 18446744073709551616.0);
        return ok ? MT_OK
                  : mt_fail(MT_ERUNTIME,
                            "value cannot be converted to type uint64_t without overflow");
    }
    if (mt_dtype_is_float(dt) || mt_dtype_is_complex(dt)) {
        /* a complex dtype checks both parts against its parts' dtype */
        mt_dtype part = dt == MT_COMPLEX64 ? MT_FLOAT32 : dt == MT_COMPLEX128 ? MT_FLOAT64 : dt;
        if (float_overflows(mt_scalar_to_double(v), part) || float_overflows(v.imag, part)) {
            return mt_fail(MT_ERUNTIME, "value cannot be converted to type %s without overflow",
                           mt_dtype_is_complex(dt) ? mt_dtype_c_name(dt) : real_type_name(dt));
        }
        return MT_OK;
    }
    /* [lo, hi) as doubles: both bounds are powers of two, so exactly representable. */
    double lo, hi;
    if (dt == MT_INT64) {
        lo = -9223372036854775808.0, hi = 9223372036854775808.0;
    } else if (dt == MT_INT32) {
        lo = -2147483648.0, hi = 2147483648.0;
    } else {
        return MT_OK; /* bools take any truth value */
    }
    bool ok = v.type == MT_INT64 ? (dt == MT_INT64 || (v.v.i >= INT32_MIN && v.v.i <= INT32_MAX))
              : v.type == MT_FLOAT64 ? (v.v.f >= lo && v.v.f < hi) /* false for NaN */
                                     : v.type != MT_UINT64; /* from 2^63 on: above hi */
    if (!ok) {
        return mt_fail(MT_ERUNTIME, "value cannot be converted to type %s without overflow",
                       dt == MT_INT64 ? "int64_t" : "int");
    }
    return MT_OK;
}

bool
mt_tensor_same_view(const mt_tensor *a, const mt_tensor *b)
{
    return a->storage == b->storage && a->offset == b->offset && a->ndim == b->ndim &&
           memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) == 0 &&
           memcmp(a->strides, b->strides, sizeof(int64_t) * (size_t)a->ndim) == 0;
}

/* The float8 format of a float8 dtype (core/float8.h). */
static mt_f8_kind
f8_kind(mt_dtype dt)
{
    return (mt_f8_kind)(dt - MT_FLOAT8_E4M3FN);
}

mt_scalar
mt_load_scalar(const char *p, mt_dtype dt)
{
    switch (dt) {
    case MT_BOOL:
        /* As bytes: the memory of empty() may hold any byte, and loading one that is not 0 or 1
         * as a C bool is undefined behaviour. */
        return mt_scalar_bool(*(const uint8_t *)p != 0);
    case MT_INT32:
        return mt_scalar_int(*(const int32_t *)p);
    case MT_INT64:
        return mt_scalar_int(*(const int64_t *)p);
    case MT_FLOAT32:
        return mt_scalar_float(*(const float *)p);
    case MT_UINT8:
        return mt_scalar_int(*(const uint8_t *)p);
    case MT_INT8:
        return mt_scalar_int(*(const int8_t *)p);
    case MT_INT16:
        return mt_scalar_int(*(const int16_t *)p);
    case MT_FLOAT16:
        return mt_scalar_float(mt_half_to_float(*(const mt_half *)p));
    case MT_BFLOAT16:
        return mt_scalar_float(mt_bf16_to_float(*(const mt_bf16 *)p));
    case MT_UINT16:
        return mt_scalar_int(*(const uint16_t *)p);
    case MT_UINT32:
        return mt_scalar_int(*(const uint32_t *)p);
    case MT_UINT64:
        return mt_scalar_uint(*(const uint64_t *)p);
    case MT_FLOAT8_E4M3FN:
    case MT_FLOAT8_E5M2:
    case MT_FLOAT8_E4M3FNUZ:
    case MT_FLOAT8_E5M2FNUZ:
        return mt_scalar_float(mt_f8_to_float(*(const mt_f8 *)p, f8_kind(dt)));
    case MT_COMPLEX64:
        return mt_scalar_complex(((const float *)p)[0], ((const float *)p)[1]);
    case MT_COMPLEX128:
        return mt_scalar_complex(((const double *)p)[0], ((const double *)p)[1]);
    default:
        return mt_scalar_float(*(const double *)p);
    }
}

void
mt_store_scalar(char *p, mt_dtype dt, mt_scalar v)
{
    switch (dt) {
    case MT_BOOL:
        *(bool *)p = v.type == MT_FLOAT64 ? v.v.f != 0.0 || v.imag != 0.0
                                          : mt_scalar_to_int(v) != 0;
        break;
    case MT_INT32:
        *(int32_t *)p = (int32_t)mt_scalar_to_int(v);
        break;
    case MT_INT64:
        *(int64_t *)p = mt_scalar_to_int(v);
        break;
    case MT_FLOAT32:
        *(float *)p = (float)mt_scalar_to_double(v);
        break;
    case MT_UINT8:
        /* a float through int64, as c10 converts to uint8 */
        *(uint8_t *)p = (uint8_t)mt_scalar_to_int(v);
        break;
    case MT_INT8:
        *(int8_t *)p = (int8_t)(v.type == MT_FLOAT64 ? (int32_t)v.v.f : mt_scalar_to_int(v));
        break;
    case MT_INT16:
        *(int16_t *)p = (int16_t)(v.type == MT_FLOAT64 ? (int32_t)v.v.f : mt_scalar_to_int(v));
        break;
    case MT_FLOAT16:
        *(mt_half *)p = mt_float_to_half((float)mt_scalar_to_double(v));
        break;
    case MT_BFLOAT16:
        *(mt_bf16 *)p = mt_float_to_bf16((float)mt_scalar_to_double(v));
        break;
    case MT_UINT16:
        *(uint16_t *)p = (uint16_t)mt_scalar_to_int(v);
        break;
    case MT_UINT32:
        *(uint32_t *)p = (uint32_t)mt_scalar_to_int(v);
        break;
    case MT_UINT64:
        *(uint64_t *)p = v.type == MT_UINT64    ? v.v.u
                         : v.type == MT_FLOAT64 ? mt_f64_to_u64(v.v.f)
                                                : (uint64_t)mt_scalar_to_int(v);
        break;
    case MT_FLOAT8_E4M3FN:
    case MT_FLOAT8_E5M2:
    case MT_FLOAT8_E4M3FNUZ:
    case MT_FLOAT8_E5M2FNUZ:
        *(mt_f8 *)p = mt_float_to_f8((float)mt_scalar_to_double(v), f8_kind(dt));
        break;
    case MT_COMPLEX64:
        ((float *)p)[0] = (float)mt_scalar_to_double(v);
        ((float *)p)[1] = (float)v.imag;
        break;
    case MT_COMPLEX128:
        ((double *)p)[0] = mt_scalar_to_double(v);
        ((double *)p)[1] = v.imag;
        break;
    default:
        *(double *)p = mt_scalar_to_double(v);
        break;
    }
}

char *
mt_device_format(char *buf, size_t n, mt_device d)
{
    if (d.type == MT_CUDA) {
        snprintf(buf, n, "cuda:%d", d.index);
    } else {
        snprintf(buf, n, "%s", d.type == MT_META ? "meta" : "cpu");
    }
    return buf;
}

mt_status
mt_tensor_item(const mt_tensor *t, mt_scalar *out)
{
    int64_t n = mt_tensor_numel(t);
    if (n != 1) {
        return mt_fail(MT_ERUNTIME,
                       "a Tensor with %" PRId64 " elements cannot be converted to Scalar", n);
    }
    if (mt_tensor_device(t).type == MT_META) {
        return mt_fail(MT_ERUNTIME, "Tensor.item() cannot be called on meta tensors");
    }
    if (mt_tensor_device(t).type != MT_CPU) {
        /* through a host copy: the copy_ kernel of the device's backend reads it */
        mt_tensor *host = NULL;
        mt_status st = mt_op__to_copy((mt_tensor *)t, t->dtype, MT_DEVICE_CPU, &host);
        if (st == MT_OK) {
            *out = mt_load_scalar(mt_tensor_data(host), host->dtype);
            mt_tensor_release(host);
        }
        return st;
    }
    *out = mt_load_scalar(mt_tensor_data(t), t->dtype);
    return MT_OK;
}
