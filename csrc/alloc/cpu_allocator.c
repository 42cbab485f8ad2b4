/* The CPU allocator: 64-byte aligned blocks from the C library, with byte counts.
 *
 * It must not cache: freed memory goes straight back to the C library (PyTorch's
 * DefaultCPUAllocator does the same). Counters are atomic so any thread may allocate. */
#define _DEFAULT_SOURCE /* madvise */

#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc/allocator.h"

#define MT_HUGE_PAGE ((size_t)2 << 20) /* a transparent huge page on x86-64 and arm64 */
#define MT_HUGE_BLOCK ((size_t)32 << 20) /* blocks from this size up get huge pages */

typedef struct cpu_allocator {
    mt_allocator base;
    atomic_llong allocated;
    atomic_llong peak;
    atomic_llong num_allocs;
    atomic_llong num_frees;
    atomic_bool poison; /* tests fill new blocks with 0xff so unwritten outputs show */
} cpu_allocator;

static mt_status
cpu_alloc(mt_allocator *self, size_t nbytes, mt_device dev, void **out, void **ctx)
{
    cpu_allocator *a = (cpu_allocator *)self;
    (void)dev;
    /* aligned_alloc wants a multiple of the alignment, and a zero-byte tensor still gets a
     * valid pointer so that its data_ptr and buffer export are well defined. */
    size_t rounded = (nbytes + MT_CPU_ALIGNMENT - 1) / MT_CPU_ALIGNMENT * MT_CPU_ALIGNMENT;
    if (rounded == 0) {
        rounded = MT_CPU_ALIGNMENT;
    }
    /* Blocks above glibc's largest mmap threshold (32 MiB) come from fresh mmaps, so every new
     * output would fault in 4 KiB pages: align them to 2 MiB and ask for transparent huge pages,
     * as NumPy does. Smaller ones are left to malloc, whose heap reuses freed pages (a 16 MiB
     * softmax output spent a third of its time faulting pages in when it was given huge pages). */
    size_t align = rounded >= MT_HUGE_BLOCK ? MT_HUGE_PAGE : MT_CPU_ALIGNMENT;
    if (align == MT_HUGE_PAGE) {
        rounded = (rounded + MT_HUGE_PAGE - 1) / MT_HUGE_PAGE * MT_HUGE_PAGE;
    }
    void *p = rounded < nbytes ? NULL : aligned_alloc(align, rounded);
#ifdef MADV_HUGEPAGE
    if (p != NULL && align == MT_HUGE_PAGE) {
        madvise(p, rounded, MADV_HUGEPAGE); /* advice only: failure changes nothing */
    }
#endif
    if (p == NULL) {
        return mt_fail(MT_ENOMEM,
                       "DefaultCPUAllocator: can't allocate memory: you tried to allocate %zu "
                       "bytes. "
                       "Error code 12 (Cannot allocate memory)",
                       nbytes);
    }
    long long now = atomic_fetch_add(&a->allocated, (long long)nbytes) + (long long)nbytes;
    long long peak = atomic_load(&a->peak);
    while (now > peak && !atomic_compare_exchange_weak(&a->peak, &peak, now)) {
    }
    atomic_fetch_add(&a->num_allocs, 1);
    if (atomic_load_explicit(&a->poison, memory_order_relaxed)) {
        memset(p, 0xff, rounded);
    }
    *out = p;
    *ctx = NULL;
    mt_alloc_report(p, (int64_t)nbytes, dev, "cpu", -1);
    return MT_OK;
}

static void
cpu_free(mt_allocator *self, void *ptr, size_t nbytes, void *ctx)
{
    cpu_allocator *a = (cpu_allocator *)self;
    (void)ctx;
    if (ptr == NULL) {
        return;
    }
    mt_alloc_report(ptr, -(int64_t)nbytes, MT_DEVICE_CPU, "cpu", -1);
    free(ptr);
    atomic_fetch_sub(&a->allocated, (long long)nbytes);
    atomic_fetch_add(&a->num_frees, 1);
}

static void
cpu_stats(mt_allocator *self, mt_alloc_stats *out)
{
    cpu_allocator *a = (cpu_allocator *)self;
    out->allocated_bytes = atomic_load(&a->allocated);
    out->peak_allocated_bytes = atomic_load(&a->peak);
    out->reserved_bytes = out->allocated_bytes;
    out->num_allocs = atomic_load(&a->num_allocs);
    out->num_frees = atomic_load(&a->num_frees);
}

static void
cpu_empty_cache(mt_allocator *self)
{
    (void)self; /* nothing is cached */
}

static cpu_allocator the_cpu_allocator = {
    .base = {"cpu", cpu_alloc, cpu_free, cpu_stats, cpu_empty_cache},
};

static _Atomic(mt_alloc_observer) observer;

void
mt_set_alloc_observer(mt_alloc_observer fn)
{
    atomic_store(&observer, fn);
}

void
mt_alloc_report(const void *ptr, int64_t bytes, mt_device dev, const char *pool, int cache)
{
    mt_alloc_observer fn = atomic_load_explicit(&observer, memory_order_relaxed);
    if (fn) {
        fn(ptr, bytes, dev, pool, cache);
    }
}

static mt_allocator *allocators[MT_NUM_DEVICE_TYPES] = {&the_cpu_allocator.base, NULL};

mt_allocator *
mt_cpu_allocator(void)
{
    return &the_cpu_allocator.base;
}

mt_allocator *
mt_allocator_for(mt_device dev)
{
    return allocators[dev.type];
}

void
mt_register_allocator(mt_device_type type, mt_allocator *a)
{
    allocators[type] = a;
}

static int (*_Atomic cuda_index_fn)(void);

int
mt_default_cuda_index(void)
{
    int (*fn)(void) = atomic_load(&cuda_index_fn);
    return fn ? fn() : 0;
}

void
mt_set_cuda_index_fn(int (*fn)(void))
{
    atomic_store(&cuda_index_fn, fn);
}

void
mt_cpu_allocator_set_poison(bool on)
{
    atomic_store(&the_cpu_allocator.poison, on);
}
