/* The caching allocator's private state, shared by caching.c (the algorithm) and
 * caching_info.c (statistics, snapshots, the vtable, set-up and teardown). Only those two
 * files include it. */
#ifndef MT_CACHING_IMPL_H
#define MT_CACHING_IMPL_H

#include <pthread.h>

#include "alloc/caching.h"

typedef struct mt_pool mt_pool;

typedef struct mt_block {
    uintptr_t stream;      /* the stream it was allocated on; only that stream reuses it */
    size_t size;           /* bytes, a multiple of MT_MIN_BLOCK_SIZE */
    size_t requested_size; /* what the caller asked for */
    mt_pool *pool;
    char *ptr;
    bool allocated;
    struct mt_block *prev, *next; /* neighbours in the segment */
    int event_count;           /* outstanding events of other streams */
    uintptr_t *stream_uses;    /* streams record_stream named since the allocation */
    int nuses, cap_uses;
    char *context; /* its allocation's context (memory history), or NULL */
} mt_block;

/* Free blocks, sorted by (stream, size, address). Room for every block of the pool is reserved
 * when the block is made, so putting a block back never needs memory. */
struct mt_pool {
    bool is_small;
    mt_block **free;
    size_t nfree, cap, nblocks; /* nblocks: every block of this pool, free or not */
};

typedef struct mt_pending {
    void *event;
    mt_block *b;
} mt_pending;

struct mt_caching_allocator {
    mt_allocator base; /* first: the vtable's self is the allocator */
    const mt_caching_backend *backend;
    void *state;
    int device;
    pthread_mutex_t mutex;
    mt_pool small, large;
    mt_block **live; /* open addressing by address, linear probing; NULL is empty */
    size_t live_cap, nlive;
    mt_pending *events; /* in the order recorded */
    size_t nevents, cap_events, nuses;
    mt_caching_stats stats;
    /* set_per_process_memory_fraction: when limited, the segments reserved stay within fraction
     * of the device's total memory (the backend's mem_get_info) */
    bool limited;
    double fraction;
    /* memory history (caching_history.c): the recorder, and the ring of actions, the oldest at
     * trace_next once it is full */
    bool recording;
    mt_caching_recorder rec;
    mt_trace_entry *trace;
    size_t ntrace, trace_next;
};

/* The history's hooks in the algorithm (caching_history.c). A context for a malloc (free_op
 * false) or a free, gathered before the lock is taken; NULL when none is wanted. */
char *mt_caching_gather(mt_caching_allocator *ca, bool free_op);
/* Keeps action (taking context) when recording; under the lock. device_free: an oom's. */
void mt_caching_trace_add(mt_caching_allocator *ca, mt_trace_action action, uintptr_t addr,
                          size_t size, uintptr_t stream, char *context, size_t device_free);
/* b was handed out for a request that gathered context (taken): its alloc action, and the
 * context kept by b as the recorder says. */
void mt_caching_note_alloc(mt_caching_allocator *ca, mt_block *b, char *context);
/* Drops the history's actions and recorder (teardown). */
void mt_caching_history_clear(mt_caching_allocator *ca);

/* mt_caching_malloc that also says whether a cached block served the request (for the
 * profiler's Mem events). */
mt_status mt_caching_malloc_from(mt_caching_allocator *ca, size_t size, uintptr_t stream,
                                 void **ptr, bool *cached);

/* Frees a block struct (not its memory). */
void mt_caching_block_delete(mt_block *b);

#endif
