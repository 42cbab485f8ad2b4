/* The CPU allocator: 64-byte aligned blocks from the C library, with byte counts, and a cache of
 * freed large blocks.
 *
 * Blocks from 64 KiB (MT_CPU_CACHE_MIN_LOG) up are kept when freed, in lists by size class (8
 * per power of two, so a block is at most 1/8 larger than asked), and handed out again for the
 * same class: a training step's temporaries recur with the same sizes, and a fresh block of
 * megabytes costs a page fault per 4 KiB (glibc returns freed ones to the kernel above its trim
 * threshold, and every block from 32 MiB up is a fresh mmap). A 4M-float add's 16 MiB output
 * took its 4096 page faults on every call: 40-130 ms a call on a loaded machine, against 2 ms
 * once reused. Blocks of 64 KiB to 256 KiB were left to malloc until an LSTM's training step,
 * whose steps make hundreds of (32, 1024) gates of 128 KiB, spent a fifth of its time in page
 * faults: glibc mmaps such blocks or trims its heap's top once they are freed. PyTorch's DefaultCPUAllocator does not cache; its CUDA caching allocator does
 * this for the device. empty_cache gives the cached blocks back, as does an allocation that
 * fails (then retried). Counters are atomic so any thread may allocate; the lists take a mutex.
 * Under AddressSanitizer a cached block is poisoned, so a use after free is still reported. */
#define _DEFAULT_SOURCE /* madvise */

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc/allocator.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define MT_ASAN_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define MT_ASAN_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define MT_ASAN_POISON(p, n) ((void)(p), (void)(n))
#define MT_ASAN_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define MT_HUGE_PAGE ((size_t)2 << 20) /* a transparent huge page on x86-64 and arm64 */
#define MT_HUGE_BLOCK ((size_t)32 << 20) /* blocks from this size up get huge pages */
#define MT_CPU_CACHE_MIN_LOG \
    16 /* blocks from 2^16 = 64 KiB up are cached: below, malloc's bins reuse memory without
        * returning it to the kernel */
#define MT_CPU_CACHE_CLASSES_LOG 3 /* 2^3 size classes per power of two: 12.5% waste at most */
#define MT_CPU_CACHE_NUM_CLASSES (48 << MT_CPU_CACHE_CLASSES_LOG) /* up to 2^66 bytes: all */
#define MT_CPU_CACHE_MAX ((long long)1 << 30) /* cached bytes above this are freed instead */

/* A cached block's first bytes: the next block of its class. */
typedef struct cached_block {
    struct cached_block *next;
} cached_block;

typedef struct cpu_allocator {
    mt_allocator base;
    atomic_llong allocated;
    atomic_llong peak;
    atomic_llong num_allocs;
    atomic_llong num_frees;
    atomic_llong cached; /* bytes held in the lists */
    atomic_bool poison;  /* tests fill new blocks with 0xff so unwritten outputs show */
    pthread_mutex_t lock; /* guards lists */
    cached_block *lists[MT_CPU_CACHE_NUM_CLASSES];
} cpu_allocator;

/* The bytes a block of nbytes really has (a multiple of the alignment, at least one; 2 MiB
 * multiples for huge ones; the top of its size class for cached ones), and its class (-1: not
 * cached). 0 when nbytes is too large to round. */
static size_t
block_size(size_t nbytes, int *cls)
{
    size_t rounded = (nbytes + MT_CPU_ALIGNMENT - 1) / MT_CPU_ALIGNMENT * MT_CPU_ALIGNMENT;
    *cls = -1;
    if (rounded < nbytes) {
        return 0;
    }
    if (rounded == 0) {
        /* a zero-byte tensor still gets a valid pointer, so that its data_ptr and buffer
         * export are well defined */
        return MT_CPU_ALIGNMENT;
    }
    if (rounded < ((size_t)1 << MT_CPU_CACHE_MIN_LOG)) {
        return rounded;
    }
    int b = 63 - __builtin_clzll((unsigned long long)rounded); /* 2^b <= rounded < 2^(b+1) */
    size_t step = (size_t)1 << (b - MT_CPU_CACHE_CLASSES_LOG);
    size_t steps = (rounded + step - 1) / step; /* 8 to 16: the class within the doubling */
    if (steps > SIZE_MAX / step) {
        return 0;
    }
    *cls = ((b - MT_CPU_CACHE_MIN_LOG) << MT_CPU_CACHE_CLASSES_LOG) + (int)steps -
           (1 << MT_CPU_CACHE_CLASSES_LOG);
    return steps * step;
}

/* A block of `size` bytes from the C library: blocks above glibc's largest mmap threshold
 * (32 MiB) come from fresh mmaps, so align them to 2 MiB and ask for transparent huge pages,
 * as NumPy does. Smaller ones are left to malloc. */
static void *
raw_alloc(size_t size)
{
    size_t align = size >= MT_HUGE_BLOCK ? MT_HUGE_PAGE : MT_CPU_ALIGNMENT;
    if (align == MT_HUGE_PAGE) {
        size = (size + MT_HUGE_PAGE - 1) / MT_HUGE_PAGE * MT_HUGE_PAGE;
    }
    void *p = aligned_alloc(align, size);
#ifdef MADV_HUGEPAGE
    if (p != NULL && align == MT_HUGE_PAGE) {
        madvise(p, size, MADV_HUGEPAGE); /* advice only: failure changes nothing */
    }
#endif
    return p;
}

/* fork() while another thread holds the lock would leave it held in the child: the lock is
 * taken around fork (pthread_atfork), so the child starts with it free. */
static void cpu_lock(void);
static void cpu_unlock(void);
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void
register_atfork(void)
{
    pthread_atfork(cpu_lock, cpu_unlock, cpu_unlock);
}

/* A cached block of class cls, or NULL. */
static void *
take_cached(cpu_allocator *a, int cls, size_t size)
{
    if (cls < 0 || atomic_load_explicit(&a->cached, memory_order_relaxed) == 0) {
        return NULL;
    }
    pthread_mutex_lock(&a->lock);
    cached_block *b = a->lists[cls];
    if (b != NULL) {
        MT_ASAN_UNPOISON(b, size);
        a->lists[cls] = b->next;
        atomic_fetch_sub(&a->cached, (long long)size);
    }
    pthread_mutex_unlock(&a->lock);
    return b;
}

/* Keeps the block p of class cls in its list; false when the cache is full. */
static bool
keep_cached(cpu_allocator *a, void *p, int cls, size_t size)
{
    if (cls < 0) {
        return false;
    }
    bool kept = false;
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&a->lock);
    if (atomic_load(&a->cached) + (long long)size <= MT_CPU_CACHE_MAX) {
        cached_block *b = p;
        b->next = a->lists[cls];
        a->lists[cls] = b;
        atomic_fetch_add(&a->cached, (long long)size);
        MT_ASAN_POISON((char *)p + sizeof(cached_block), size - sizeof(cached_block));
        kept = true;
    }
    pthread_mutex_unlock(&a->lock);
    return kept;
}

static void
cpu_empty_cache(mt_allocator *self)
{
    cpu_allocator *a = (cpu_allocator *)self;
    pthread_mutex_lock(&a->lock);
    for (int c = 0; c < MT_CPU_CACHE_NUM_CLASSES; c++) {
        while (a->lists[c] != NULL) {
            cached_block *b = a->lists[c];
            a->lists[c] = b->next;
            free(b);
        }
    }
    atomic_store(&a->cached, 0);
    pthread_mutex_unlock(&a->lock);
}

static mt_status
cpu_alloc(mt_allocator *self, size_t nbytes, mt_device dev, void **out, void **ctx)
{
    cpu_allocator *a = (cpu_allocator *)self;
    (void)dev;
    int cls;
    size_t size = block_size(nbytes, &cls);
    void *p = size == 0 ? NULL : take_cached(a, cls, size);
    const bool hit = p != NULL;
    if (!hit && size != 0) {
        p = raw_alloc(size);
        if (p == NULL && atomic_load(&a->cached) > 0) { /* the cache's blocks, then again */
            cpu_empty_cache(self);
            p = raw_alloc(size);
        }
    }
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
        memset(p, 0xff, size);
    }
    *out = p;
    *ctx = NULL;
    mt_alloc_report(p, (int64_t)nbytes, dev, "cpu", cls < 0 ? -1 : hit);
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
    int cls;
    size_t size = block_size(nbytes, &cls);
    if (!keep_cached(a, ptr, cls, size)) {
        free(ptr);
    }
    atomic_fetch_sub(&a->allocated, (long long)nbytes);
    atomic_fetch_add(&a->num_frees, 1);
}

static void
cpu_stats(mt_allocator *self, mt_alloc_stats *out)
{
    cpu_allocator *a = (cpu_allocator *)self;
    out->allocated_bytes = atomic_load(&a->allocated);
    out->peak_allocated_bytes = atomic_load(&a->peak);
    out->reserved_bytes = out->allocated_bytes + atomic_load(&a->cached);
    out->num_allocs = atomic_load(&a->num_allocs);
    out->num_frees = atomic_load(&a->num_frees);
}

static cpu_allocator the_cpu_allocator = {
    .base = {"cpu", cpu_alloc, cpu_free, cpu_stats, cpu_empty_cache},
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

static void
cpu_lock(void)
{
    pthread_mutex_lock(&the_cpu_allocator.lock);
}

static void
cpu_unlock(void)
{
    pthread_mutex_unlock(&the_cpu_allocator.lock);
}

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
