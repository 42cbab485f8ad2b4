/* The CUDA device allocator: _C's caching allocator (alloc/caching.h, PyTorch's algorithm)
 * over a CUDA backend of cudaMalloc/cudaFree and CUDA events, one instance per device.
 *
 * The algorithm, its statistics and its out-of-memory message live in _C and are tested over
 * host memory on every machine; this file only speaks CUDA for it, and must not add policy. */
#include <stdint.h>

#include "cuda/cuda.h"
#include "cuda/profile.h"

/* The backend's state is the device index itself. */
static int
device_of(void *state)
{
    return (int)(intptr_t)state;
}

static mt_status
use(void *state)
{
    return mt_cuda_use_device((mt_device){MT_CUDA, device_of(state)});
}

static mt_status
raw_alloc(void *state, size_t size, void **ptr)
{
    mt_status st = use(state);
    if (st) {
        return st;
    }
    mt_cuda_span span = mt_cuda_runtime_begin("Malloc"); /* a real cudaMalloc, not a cache hit */
    cudaError_t err = cudaMalloc(ptr, size);
    mt_cuda_span_end(&span);
    if (err == cudaErrorMemoryAllocation) {
        /* The allocator frees its cache and retries, then writes PyTorch's message itself. */
        (void)cudaGetLastError();
        return MT_ECUDA_OOM;
    }
    return mt_cuda_check(err);
}

static void
raw_free(void *state, void *ptr, size_t size)
{
    (void)size;
    if (use(state) != MT_OK) {
        return;
    }
    /* A free cannot report failure; a failing cudaFree means a dead context, where the memory
     * is gone anyway. */
    mt_cuda_span span = mt_cuda_runtime_begin("Free");
    (void)cudaFree(ptr);
    mt_cuda_span_end(&span);
    (void)cudaGetLastError();
}

static void
mem_get_info(void *state, size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = *total_bytes = 0;
    if (use(state) != MT_OK || cudaMemGetInfo(free_bytes, total_bytes) != cudaSuccess) {
        (void)cudaGetLastError(); /* only the message's numbers are lost */
    }
}

static uintptr_t
current_stream(void *state)
{
    return (uintptr_t)mt_cuda_current_stream(device_of(state));
}

static void *
event_record(void *state, uintptr_t stream)
{
    cudaEvent_t ev = NULL;
    if (use(state) != MT_OK ||
        mt_cuda_check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)) != MT_OK) {
        return NULL; /* the block then stays out of the cache: safe */
    }
    if (mt_cuda_check(cudaEventRecord(ev, (cudaStream_t)stream)) != MT_OK) {
        (void)cudaEventDestroy(ev);
        return NULL;
    }
    return ev;
}

static bool
event_query(void *state, void *event)
{
    (void)state;
    cudaError_t err = cudaEventQuery((cudaEvent_t)event);
    if (err != cudaSuccess) {
        (void)cudaGetLastError(); /* cudaErrorNotReady is not an error; the others keep it */
    }
    return err == cudaSuccess;
}

static void
event_synchronize(void *state, void *event)
{
    (void)state;
    if (cudaEventSynchronize((cudaEvent_t)event) != cudaSuccess) {
        (void)cudaGetLastError();
    }
}

static void
event_destroy(void *state, void *event)
{
    (void)state;
    (void)cudaEventDestroy((cudaEvent_t)event);
    (void)cudaGetLastError();
}

static const mt_caching_backend cuda_backend = {
    raw_alloc,    raw_free,    mem_get_info,      current_stream,
    event_record, event_query, event_synchronize, event_destroy,
};

/* Makes device current (its first use initialises CUDA) and finds its caching allocator. */
static mt_status
device_allocator(int device, mt_caching_allocator **out)
{
    mt_status st = mt_cuda_use_device((mt_device){MT_CUDA, device});
    if (st) {
        return st;
    }
    return mt_caching_device(device, &cuda_backend, (void *)(intptr_t)device, out);
}

/* The vtable registered for MT_CUDA: picks the device's caching allocator and passes the
 * request on; ctx remembers that allocator's vtable for the free. */
static mt_status
route_alloc(mt_allocator *self, size_t nbytes, mt_device dev, void **out, void **ctx)
{
    (void)self;
    *out = NULL;
    *ctx = NULL;
    mt_caching_allocator *ca;
    /* Even an empty tensor needs a usable device: device_allocator checks it. */
    mt_status st = device_allocator(dev.index, &ca);
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
    for (int d = 0; d < mt_cuda_device_count() && d < MT_CUDA_MAX_DEVICES; d++) {
        mt_caching_allocator *ca;
        if (device_allocator(d, &ca) != MT_OK) {
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
    for (int d = 0; d < mt_cuda_device_count() && d < MT_CUDA_MAX_DEVICES; d++) {
        mt_caching_allocator *ca;
        if (device_allocator(d, &ca) == MT_OK) {
            mt_caching_empty_cache(ca);
        }
    }
}

static mt_allocator router = {"cuda", route_alloc, route_free, route_stats, route_empty_cache};

mt_allocator *
mt_cuda_allocator(void)
{
    return &router;
}

mt_status
mt_cuda_record_stream(int device, void *ptr, cudaStream_t stream)
{
    mt_caching_allocator *ca;
    mt_status st = device_allocator(device, &ca);
    if (st == MT_OK) {
        st = mt_caching_record_stream(ca, ptr, (uintptr_t)stream);
    }
    return st;
}

mt_status
mt_cuda_caching_alloc(int device, size_t size, cudaStream_t stream, void **ptr)
{
    mt_caching_allocator *ca;
    mt_status st = device_allocator(device, &ca);
    if (st == MT_OK) {
        st = mt_caching_malloc(ca, size, (uintptr_t)stream, ptr);
    }
    return st;
}

mt_status
mt_cuda_caching_free(int device, void *ptr)
{
    mt_caching_allocator *ca;
    mt_status st = device_allocator(device, &ca);
    if (st == MT_OK) {
        st = mt_caching_free(ca, ptr);
    }
    return st;
}
