/* The CUDA runtime layer: checked calls and launches, lazy device discovery, the device guard,
 * and the plain cudaMalloc/cudaFree allocator that stands until the caching allocator lands.
 *
 * Nothing here may exit or assert: every failure becomes an mt_status with CUDA's own words. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "cuda/cuda.h"
#include "cuda/profile.h"

mt_status
mt_cuda_check_at(cudaError_t err, const char *call, const char *file, int line)
{
    if (err == cudaSuccess) {
        return MT_OK;
    }
    (void)cudaGetLastError(); /* a non-sticky error must not fail the next check */
    mt_status code = err == cudaErrorMemoryAllocation ? MT_ECUDA_OOM : MT_ECUDA;
    return mt_fail(code, "CUDA error: %s (%s at %s:%d)", cudaGetErrorString(err), call, file,
                   line);
}

mt_status
mt_cuda_launch_at(const void *kernel, unsigned grid, unsigned block, void **args,
                  const char *name, const char *file, int line)
{
    if (grid == 0) {
        return MT_OK; /* nothing to do: CUDA rejects an empty grid */
    }
    dim3 g = {grid, 1, 1}, b = {block, 1, 1};
    mt_cuda_span span = mt_cuda_span_launch(kernel, name);
    cudaError_t err = cudaLaunchKernel(kernel, g, b, args, 0, 0);
    mt_cuda_span_end(&span);
    mt_status st = mt_cuda_check_at(err, name, file, line);
    if (st == MT_OK) {
        st = mt_cuda_check_at(cudaGetLastError(), name, file, line);
    }
    return st;
}

/* The outcome of the one cudaGetDeviceCount: -1 until asked. */
static atomic_int init_state = -1;
static int num_devices;
static cudaError_t init_error = cudaSuccess;

static void
discover(void)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaSuccess && n == 0) {
        err = cudaErrorNoDevice;
    }
    (void)cudaGetLastError();
    init_error = err;
    num_devices = err == cudaSuccess ? n : 0;
    atomic_store(&init_state, err == cudaSuccess ? 1 : 0);
}

const char *
mt_cuda_unavailable_reason(void)
{
    if (atomic_load(&init_state) < 0) {
        discover();
    }
    return init_error == cudaSuccess ? NULL : cudaGetErrorString(init_error);
}

int
mt_cuda_device_count(void)
{
    return mt_cuda_unavailable_reason() ? 0 : num_devices;
}

mt_status
mt_cuda_lazy_init(void)
{
    const char *why = mt_cuda_unavailable_reason();
    if (why) {
        return mt_fail(MT_ECUDA, "CUDA error: %s", why);
    }
    return MT_OK;
}

static _Thread_local int current = -1; /* what this thread last set with cudaSetDevice */

mt_status
mt_cuda_use_device(mt_device dev)
{
    mt_status st = mt_cuda_lazy_init();
    if (st || dev.index == current) {
        return st;
    }
    if (dev.index >= num_devices) {
        return mt_fail(MT_ECUDA, "CUDA error: invalid device ordinal (device cuda:%d of %d)",
                       dev.index, num_devices);
    }
    st = mt_cuda_check(cudaSetDevice(dev.index));
    if (st == MT_OK) {
        current = dev.index;
    }
    return st;
}

static void
format_bytes(char *buf, size_t n, double bytes)
{
    snprintf(buf, n, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    if (bytes < 1024.0 * 1024.0 * 1024.0) {
        snprintf(buf, n, "%.2f MiB", bytes / (1024.0 * 1024.0));
    }
}

mt_status
mt_cuda_raw_alloc(size_t nbytes, mt_device dev, void **out)
{
    mt_status st = mt_cuda_use_device(dev);
    if (st) {
        return st;
    }
    mt_cuda_span span = mt_cuda_runtime_begin("Malloc");
    cudaError_t err = cudaMalloc(out, nbytes);
    mt_cuda_span_end(&span);
    if (err != cudaErrorMemoryAllocation) {
        return mt_cuda_check(err);
    }
    (void)cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    char want[32], total[32], avail[32];
    format_bytes(want, sizeof(want), (double)nbytes);
    format_bytes(total, sizeof(total), (double)total_b);
    format_bytes(avail, sizeof(avail), (double)free_b);
    return mt_fail(MT_ECUDA_OOM,
                   "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s "
                   "of which %s is free.",
                   want, dev.index, total, avail);
}

void
mt_cuda_raw_free(void *ptr, mt_device dev)
{
    if (ptr == NULL || mt_cuda_use_device(dev) != MT_OK) {
        return;
    }
    /* A free cannot report failure; a failing cudaFree means a dead context, where the memory
     * is gone anyway. */
    mt_cuda_span span = mt_cuda_runtime_begin("Free");
    (void)cudaFree(ptr);
    mt_cuda_span_end(&span);
    (void)cudaGetLastError();
}

/* The plain allocator: every alloc is a cudaMalloc (which synchronises often; the caching
 * allocator exists to avoid that). Counters are atomic, as the CPU allocator's. */
typedef struct plain_allocator {
    mt_allocator base;
    atomic_llong allocated, peak, num_allocs, num_frees;
} plain_allocator;

static mt_status
plain_alloc(mt_allocator *self, size_t nbytes, mt_device dev, void **out, void **ctx)
{
    plain_allocator *a = (plain_allocator *)self;
    *ctx = NULL;
    *out = NULL;
    if (nbytes == 0) {
        return mt_cuda_lazy_init(); /* an empty tensor still needs a usable device */
    }
    mt_status st = mt_cuda_raw_alloc(nbytes, dev, out);
    if (st) {
        return st;
    }
    long long now = atomic_fetch_add(&a->allocated, (long long)nbytes) + (long long)nbytes;
    long long peak = atomic_load(&a->peak);
    while (now > peak && !atomic_compare_exchange_weak(&a->peak, &peak, now)) {
    }
    atomic_fetch_add(&a->num_allocs, 1);
    *ctx = (void *)(intptr_t)dev.index; /* free needs the device back */
    return MT_OK;
}

static void
plain_free(mt_allocator *self, void *ptr, size_t nbytes, void *ctx)
{
    plain_allocator *a = (plain_allocator *)self;
    if (ptr == NULL) {
        return;
    }
    mt_cuda_raw_free(ptr, (mt_device){MT_CUDA, (int)(intptr_t)ctx});
    atomic_fetch_sub(&a->allocated, (long long)nbytes);
    atomic_fetch_add(&a->num_frees, 1);
}

static void
plain_stats(mt_allocator *self, mt_alloc_stats *out)
{
    plain_allocator *a = (plain_allocator *)self;
    out->allocated_bytes = atomic_load(&a->allocated);
    out->peak_allocated_bytes = atomic_load(&a->peak);
    out->reserved_bytes = out->allocated_bytes;
    out->num_allocs = atomic_load(&a->num_allocs);
    out->num_frees = atomic_load(&a->num_frees);
}

static void
plain_empty_cache(mt_allocator *self)
{
    (void)self; /* nothing is cached */
}

static plain_allocator the_plain_allocator = {
    .base = {"cuda", plain_alloc, plain_free, plain_stats, plain_empty_cache},
};

mt_allocator *
mt_cuda_allocator(void)
{
    return &the_plain_allocator.base;
}
