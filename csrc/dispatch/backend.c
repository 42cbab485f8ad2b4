/* mt_register_backend (dispatch/backend.h): a device backend's allocator, kernels and hooks
 * installed in _C. The families' kernels for the device key live here: each runs its family's
 * front end with the backend's loop, so the control flow stays in _C and the plug-in computes.
 * Nothing here speaks CUDA. */
#include <stdint.h>
#include <stdio.h>

#include "dispatch/backend.h"
#include "ops/factory_args.h"
#include "ops/plans.h"

/* The dispatcher routes MT_CUDA tensors to MT_KEY_CUDA, its one device key: one backend. */
static const mt_device_backend *device_backend;

/* ---- memory: one caching allocator per device, behind one mt_allocator for the type ---- */

/* Makes device current (its first use initialises the device) and finds its caching allocator. */
static mt_status
device_caching(int device, mt_caching_allocator **out)
{
    const mt_device_backend *be = device_backend;
    mt_status st = be->use_device(device);
    if (st) {
        return st;
    }
    return mt_caching_device(device, be->memory, (void *)(intptr_t)device, out);
}

mt_status
mt_backend_caching(mt_device_type type, int device, mt_caching_allocator **out)
{
    if (device_backend == NULL || device_backend->type != type) {
        return mt_fail(MT_ERUNTIME, "no backend is registered for the device type %d", (int)type);
    }
    return device_caching(device, out);
}

/* Picks the device's caching allocator and passes the request on; ctx remembers that
 * allocator's vtable for the free. */
static mt_status
route_alloc(mt_allocator *self, size_t nbytes, mt_device dev, void **out, void **ctx)
{
    (void)self;
    *out = NULL;
    *ctx = NULL;
    mt_caching_allocator *ca;
    /* Even an empty tensor needs a usable device: device_caching checks it. */
    mt_status st = device_caching(dev.index, &ca);
    if (st) {
        return st;
    }
    mt_allocator *a = mt_caching_as_allocator(ca);
    st = a->alloc(a, nbytes, dev, out, ctx);
    if (st == MT_OK) {
        *ctx = a;
    }
    return st;
}

static void
route_free(mt_allocator *self, void *ptr, size_t nbytes, void *ctx)
{
    (void)self;
    mt_allocator *a = ctx;
    if (a != NULL) {
        a->free(a, ptr, nbytes, NULL);
    }
}

static void
route_stats(mt_allocator *self, mt_alloc_stats *out)
{
    (void)self;
    *out = (mt_alloc_stats){0};
    for (int d = 0; d < device_backend->device_count(); d++) {
        mt_caching_allocator *ca;
        if (device_caching(d, &ca) != MT_OK) {
            continue;
        }
        mt_caching_stats s;
        mt_caching_get_stats(ca, &s);
        out->allocated_bytes += s.allocated_bytes[MT_STAT_ALL].current;
        out->peak_allocated_bytes += s.allocated_bytes[MT_STAT_ALL].peak;
        out->reserved_bytes += s.reserved_bytes[MT_STAT_ALL].current;
        out->num_allocs += s.allocation[MT_STAT_ALL].allocated;
        out->num_frees += s.allocation[MT_STAT_ALL].freed;
    }
}

static void
route_empty_cache(mt_allocator *self)
{
    (void)self;
    for (int d = 0; d < device_backend->device_count(); d++) {
        mt_caching_allocator *ca;
        if (device_caching(d, &ca) == MT_OK) {
            mt_caching_empty_cache(ca);
        }
    }
}

static mt_allocator router = {NULL, route_alloc, route_free, route_stats, route_empty_cache};

/* ---- the families' kernels: front end here, the backend's loop ---- */

#define MT_EW_OP(op, row, flags, shell, schema)                            \
    static mt_status device_##op(mt_args *a)                               \
    {                                                                      \
        return mt_ew_call(MT_OP_##op, MT_EW_##row, a, device_backend->ew); \
    }
#include "ops/elementwise.def"

#define INDEX_KERNEL(op, call)                              \
    static mt_status device_##op(mt_args *a)                \
    {                                                       \
        const mt_index_backend *be = device_backend->index; \
        return call;                                        \
    }
MT_INDEX_OPS(INDEX_KERNEL)
#undef INDEX_KERNEL

/* sort, argsort and topk (the plan's op tells them apart) */
static mt_status
device_sort(mt_args *a)
{
    return mt_sort_with(a, device_backend->sort_along);
}

static mt_status
device_cat(mt_args *a)
{
    return mt_cat_with(a, device_backend->copy_into);
}

static mt_status
device_multinomial(mt_args *a)
{
    return mt_multinomial_with(a, device_backend->multinomial);
}

static mt_status
device_histc(mt_args *a)
{
    double lo, hi;
    mt_status st = mt_histc_range(a->t[0], a->s[0], a->s[1], &lo, &hi);
    return st ? st : device_backend->stats->histc(a->t[0], lo, hi, a->out[0]);
}

static mt_status
device_bincount(mt_args *a)
{
    return device_backend->stats->bincount(a->t[0], a->t[1], a->out[0]);
}

static mt_status
device_binary_cross_entropy(mt_args *a)
{
    return mt_bce_with(a, false, device_backend->bce);
}

static mt_status
device_binary_cross_entropy_with_logits(mt_args *a)
{
    return mt_bce_with(a, true, device_backend->bce);
}

/* "mt_<backend>_<op>", the names PyTorch's profiles would show for the device's kernels */
static char family_names[MT_NUM_OPS][64];

static void
register_family(const mt_device_backend *be, mt_op op, mt_kernel_fn fn)
{
    snprintf(family_names[op], sizeof(family_names[op]), "mt_%s_%s", be->name, mt_op_names[op]);
    mt_register_kernel(op, MT_KEY_CUDA, fn, family_names[op]);
}

static void
register_families(const mt_device_backend *be)
{
    if (be->ew) {
#define MT_EW_OP(op, row, flags, shell, schema) register_family(be, MT_OP_##op, device_##op);
#include "ops/elementwise.def"
    }
    if (be->index) {
#define INDEX_REGISTER(op, call) register_family(be, MT_OP_##op, device_##op);
        MT_INDEX_OPS(INDEX_REGISTER)
#undef INDEX_REGISTER
    }
    if (be->sort_along) {
        register_family(be, MT_OP_sort, device_sort);
        register_family(be, MT_OP_argsort, device_sort);
        register_family(be, MT_OP_topk, device_sort);
    }
    if (be->copy_into) {
        register_family(be, MT_OP_cat, device_cat);
    }
    if (be->multinomial) {
        register_family(be, MT_OP_multinomial, device_multinomial);
    }
    if (be->bce) {
        register_family(be, MT_OP_binary_cross_entropy, device_binary_cross_entropy);
        register_family(be, MT_OP_binary_cross_entropy_with_logits,
                        device_binary_cross_entropy_with_logits);
    }
    if (be->stats) {
        register_family(be, MT_OP_histc, device_histc);
        register_family(be, MT_OP_bincount, device_bincount);
    }
}

mt_status
mt_register_backend(const mt_device_backend *be)
{
    if (be->type != MT_CUDA) {
        return mt_fail(MT_ERUNTIME, "the dispatcher has no key for backend '%s''s devices",
                       be->name);
    }
    if (device_backend != NULL) {
        return mt_fail(MT_ERUNTIME, "a backend for '%s' is already registered", be->name);
    }
    device_backend = be;
    register_families(be);
    for (int op = 0; op < MT_NUM_OPS; op++) {
        if (be->kernels[op].fn) {
            mt_register_kernel(op, MT_KEY_CUDA, be->kernels[op].fn, be->kernels[op].name);
        }
    }
    if (be->host_fallback) {
        mt_register_host_fallback(be);
    }
    router.name = be->name;
    mt_register_allocator(be->type, &router);
    mt_set_cuda_index_fn(be->current_device);
    mt_trace_set_gpu_hooks(be->gpu_start, be->gpu_stop);
    return MT_OK;
}
