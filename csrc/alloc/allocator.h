/* The allocator interface: a small vtable behind every storage's memory.
 *
 * The CPU allocator implements it here; for a device backend (dispatch/backend.h) _C registers
 * the caching allocator it keeps over the backend's memory (dispatch/backend.c). Memory owned by someone else (a NumPy array)
 * is wrapped by an allocator whose free releases the owner. */
#ifndef MT_ALLOCATOR_H
#define MT_ALLOCATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/device.h"
#include "core/status.h"

typedef struct mt_alloc_stats {
    int64_t allocated_bytes;      /* bytes currently handed out */
    int64_t peak_allocated_bytes; /* high-water mark of allocated_bytes */
    int64_t reserved_bytes; /* bytes held from the system (equal to allocated without a cache) */
    int64_t num_allocs; /* calls to alloc that succeeded */
    int64_t num_frees;
} mt_alloc_stats;

typedef struct mt_allocator mt_allocator;
struct mt_allocator {
    const char *name;
    /* *out receives nbytes of memory; *ctx receives what free needs back (may be NULL). */
    mt_status (*alloc)(mt_allocator *self, size_t nbytes, mt_device dev, void **out, void **ctx);
    void (*free)(mt_allocator *self, void *ptr, size_t nbytes, void *ctx);
    void (*stats)(mt_allocator *self, mt_alloc_stats *out);
    void (*empty_cache)(mt_allocator *self);
};

/* Every allocation is aligned to this, for vector loads and as PyTorch's CPU allocator does. */
#define MT_CPU_ALIGNMENT 64

mt_allocator *mt_cpu_allocator(void);
/* When on, every new CPU block is filled with 0xff bytes (NaN for floats, -1 for ints). */
void mt_cpu_allocator_set_poison(bool on);

/* Watches allocations (bytes > 0) and frees (bytes < 0): the profiler's Mem events. pool names
 * where the block came from ("cpu", "small", "large"); cache is 1 for a block a cache served, 0
 * for a real allocation, -1 for an allocator without a cache. Called with no allocator lock held. */
typedef void (*mt_alloc_observer)(const void *ptr, int64_t bytes, mt_device dev, const char *pool,
                                  int cache);
/* NULL stops watching. The profiler sets it while it records with profile_memory. */
void mt_set_alloc_observer(mt_alloc_observer fn);
/* Every allocator calls this after a successful alloc and before a free: one branch when unwatched. */
void mt_alloc_report(const void *ptr, int64_t bytes, mt_device dev, const char *pool, int cache);

/* The allocator for a device type; CUDA's is NULL until _C_cuda registers one. */
mt_allocator *mt_allocator_for(mt_device dev);
void mt_register_allocator(mt_device_type type, mt_allocator *a);
/* The index "cuda" without one stands for: the calling thread's current device, as the CUDA
 * backend (which registers fn) knows it; 0 before it does. */
int mt_default_cuda_index(void);
void mt_set_cuda_index_fn(int (*fn)(void));

#endif
