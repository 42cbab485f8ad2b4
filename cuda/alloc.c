/* The CUDA device side of _C's caching allocator (alloc/caching.h, PyTorch's algorithm):
 * cudaMalloc/cudaFree and CUDA events, the backend's memory (dispatch/backend.h). _C keeps one
 * caching allocator per device over it and registers them for MT_CUDA.
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

const mt_caching_backend mt_cuda_memory = {
    raw_alloc,    raw_free,    mem_get_info,      current_stream,
    event_record, event_query, event_synchronize, event_destroy,
};

mt_status
mt_cuda_record_stream(int device, void *ptr, cudaStream_t stream)
{
    mt_caching_allocator *ca;
    mt_status st = mt_backend_caching(MT_CUDA, device, &ca);
    if (st == MT_OK) {
        st = mt_caching_record_stream(ca, ptr, (uintptr_t)stream);
    }
    return st;
}

mt_status
mt_cuda_caching_alloc(int device, size_t size, cudaStream_t stream, void **ptr)
{
    mt_caching_allocator *ca;
    mt_status st = mt_backend_caching(MT_CUDA, device, &ca);
    if (st == MT_OK) {
        st = mt_caching_malloc(ca, size, (uintptr_t)stream, ptr);
    }
    return st;
}

mt_status
mt_cuda_caching_free(int device, void *ptr)
{
    mt_caching_allocator *ca;
    mt_status st = mt_backend_caching(MT_CUDA, device, &ca);
    if (st == MT_OK) {
        st = mt_caching_free(ca, ptr);
    }
    return st;
}
