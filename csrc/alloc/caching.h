/* The caching allocator: PyTorch's CUDACachingAllocator algorithm, with no CUDA in it.
 *
 * One instance serves one device. It gets its memory from a raw backend (cudaMalloc/cudaFree
 * in cuda/, malloc'd host memory in the tests) in segments, carves blocks out of them, keeps
 * freed blocks cached per stream, and gives segments back only on empty_cache or when the
 * backend runs out. The rules (sizes, pools, splitting, merging, retry, statistics) are
 * PyTorch's, so memory_stats() reads the same; this file must not include CUDA or Python. */
#ifndef MT_CACHING_H
#define MT_CACHING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/allocator.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" { /* cuda/ includes this from C++ */
#endif

#define MT_MIN_BLOCK_SIZE ((size_t)512)      /* every size rounds up to a multiple of this */
#define MT_SMALL_SIZE ((size_t)1 << 20)      /* the largest request served by the small pool */
#define MT_SMALL_BUFFER ((size_t)2 << 20)    /* small requests are carved from 2 MiB segments */
#define MT_MIN_LARGE_ALLOC ((size_t)10 << 20) /* requests below 10 MiB share 20 MiB segments */
#define MT_LARGE_BUFFER ((size_t)20 << 20)   /* the segment of a 1-10 MiB request */
#define MT_ROUND_LARGE ((size_t)2 << 20)     /* larger requests get their size rounded to 2 MiB */

/* Where the memory comes from. A stream is the backend's handle (cudaStream_t), 0 the default
 * stream. `state` is the backend's own, passed back to every call. */
typedef struct mt_caching_backend {
    /* MT_OK, or MT_ECUDA_OOM when the memory is not there (the allocator then frees its cache
     * and retries once); any other status is passed on to the caller unchanged. */
    mt_status (*raw_alloc)(void *state, size_t size, void **ptr);
    void (*raw_free)(void *state, void *ptr, size_t size);
    /* The device's free and total bytes, for the out-of-memory message. */
    void (*mem_get_info)(void *state, size_t *free_bytes, size_t *total_bytes);
    /* The stream the mt_allocator vtable allocates on (the current stream). */
    uintptr_t (*current_stream)(void *state);
    /* A marker after the work queued on stream so far; NULL if it could not be recorded (the
     * block it guards then stays out of the cache for good, which is safe). */
    void *(*event_record)(void *state, uintptr_t stream);
    bool (*event_query)(void *state, void *event); /* true once the work before it is done */
    void (*event_synchronize)(void *state, void *event); /* waits for that work */
    void (*event_destroy)(void *state, void *event);
} mt_caching_backend;

/* PyTorch's Stat: a gauge with its high-water mark and the running totals of its moves. */
typedef struct mt_stat {
    int64_t current, peak, allocated, freed;
} mt_stat;

/* Indices of the stat arrays: every stat is kept for all blocks and for each pool. */
enum { MT_STAT_ALL, MT_STAT_SMALL_POOL, MT_STAT_LARGE_POOL, MT_NUM_STAT_TYPES };

/* PyTorch's DeviceStats: memory_stats() flattens it to "allocated_bytes.all.current" etc. */
typedef struct mt_caching_stats {
    mt_stat allocation[MT_NUM_STAT_TYPES];     /* blocks handed out */
    mt_stat segment[MT_NUM_STAT_TYPES];        /* segments held from the backend */
    mt_stat active[MT_NUM_STAT_TYPES];         /* blocks handed out or waiting for streams */
    mt_stat inactive_split[MT_NUM_STAT_TYPES]; /* free blocks inside partly used segments */
    mt_stat allocated_bytes[MT_NUM_STAT_TYPES];
    mt_stat reserved_bytes[MT_NUM_STAT_TYPES];
    mt_stat active_bytes[MT_NUM_STAT_TYPES];
    mt_stat inactive_split_bytes[MT_NUM_STAT_TYPES];
    mt_stat requested_bytes[MT_NUM_STAT_TYPES]; /* the sizes asked for, before rounding */
    mt_stat oversize_allocations, oversize_segments; /* stay 0: no max_split_size here */
    int64_t num_alloc_retries;    /* failed raw allocations retried after freeing the cache */
    int64_t num_ooms;             /* out-of-memory errors returned */
    int64_t num_sync_all_streams; /* waits on every outstanding event (empty_cache, retry) */
    int64_t num_device_alloc, num_device_free; /* raw_alloc successes, raw_free calls */
    int64_t max_split_size;       /* -1: every block may be split, as PyTorch's default */
} mt_caching_stats;

/* A block of a segment, as snapshot() reports it. */
typedef struct mt_caching_block_info {
    uintptr_t address;
    size_t size, requested_size;
    bool allocated; /* handed out */
    bool active;    /* handed out, or freed but still waiting for another stream */
    char *context;  /* its allocation's context (memory history), a copy, or NULL */
} mt_caching_block_info;

typedef struct mt_caching_segment_info {
    uintptr_t address, stream;
    size_t total_size, allocated_size, active_size, requested_size;
    bool is_small;
    int nblocks;
    mt_caching_block_info *blocks; /* by address */
} mt_caching_segment_info;

typedef struct mt_caching_allocator mt_caching_allocator;

/* A new allocator for device `device` over backend (both borrowed: they must outlive it). */
mt_status mt_caching_create(const mt_caching_backend *backend, void *state, int device,
                            mt_caching_allocator **out);
/* Gives every segment back, in use or not: nothing may be using its memory any more. */
void mt_caching_destroy(mt_caching_allocator *ca);

/* size bytes usable on stream; 0 bytes gives NULL, as PyTorch's allocator does. */
mt_status mt_caching_malloc(mt_caching_allocator *ca, size_t size, uintptr_t stream, void **ptr);
/* ptr must come from mt_caching_malloc; NULL is ignored. */
mt_status mt_caching_free(mt_caching_allocator *ca, void *ptr);
/* ptr's block is used on stream too: once freed, it is not reused before that stream's work
 * queued so far is done. */
mt_status mt_caching_record_stream(mt_caching_allocator *ca, void *ptr, uintptr_t stream);
/* Waits for outstanding streams, then gives back every segment with no block in use. */
void mt_caching_empty_cache(mt_caching_allocator *ca);

void mt_caching_get_stats(mt_caching_allocator *ca, mt_caching_stats *out);
void mt_caching_reset_peak_stats(mt_caching_allocator *ca);
void mt_caching_reset_accumulated_stats(mt_caching_allocator *ca);

/* PyTorch's set_per_process_memory_fraction: from now on the allocator reserves at most
 * fraction (0 to 1) of the device's total memory, freeing its cache and then failing with the
 * out-of-memory error beyond it. mt_caching_fraction is the fraction set, 1 when none was. */
void mt_caching_set_fraction(mt_caching_allocator *ca, double fraction);
double mt_caching_fraction(mt_caching_allocator *ca);

/* Every segment with its blocks, by address; free with mt_caching_snapshot_free. */
mt_status mt_caching_snapshot(mt_caching_allocator *ca, mt_caching_segment_info **segs, int *n);
void mt_caching_snapshot_free(mt_caching_segment_info *segs, int n);

/* ---- memory history (PyTorch's _record_memory_history): caching_history.c ----
 * A ring of the actions the allocator took, and each block's allocation context. A context is
 * a string the recorder's gather() makes (the binding layer's Python stack: lines of
 * "filename\tline\tname"), owned here and freed with free(): nothing here holds a Python
 * object. */
typedef enum mt_trace_action {
    MT_TRACE_ALLOC,          /* a block handed out */
    MT_TRACE_FREE_REQUESTED, /* a block given back (it may still wait for other streams) */
    MT_TRACE_FREE_COMPLETED, /* a block free for reuse */
    MT_TRACE_SEGMENT_ALLOC,  /* a segment from the backend */
    MT_TRACE_SEGMENT_FREE,   /* a segment given back to it */
    MT_TRACE_OOM,            /* a request that failed */
    MT_TRACE_NUM_ACTIONS
} mt_trace_action;

typedef struct mt_trace_entry {
    mt_trace_action action;
    uintptr_t addr, stream;
    size_t size;        /* bytes (an oom's: those it asked the backend for) */
    size_t device_free; /* an oom's: what the device had free */
    int64_t time_us;    /* since the epoch */
    char *context;      /* gather()'s, or NULL */
} mt_trace_entry;

typedef struct mt_caching_recorder {
    bool history;       /* keep the actions ("all"), not only the blocks' contexts ("state") */
    bool context_state; /* blocks keep their allocation's context */
    bool context_alloc; /* alloc actions keep it too */
    bool context_free;  /* free actions gather one */
    size_t max_entries; /* the ring's size: the newest actions are kept */
    unsigned skip;      /* bit a: actions of mt_trace_action a are not kept */
    char *(*gather)(void); /* a context, malloc'd, or NULL; called without the allocator's lock */
} mt_caching_recorder;

/* Records from now on as rec says (NULL: stops, dropping nothing); clear drops the actions
 * kept so far. */
mt_status mt_caching_record_history(mt_caching_allocator *ca, const mt_caching_recorder *rec,
                                    bool clear);
/* A copy of the actions kept, oldest first, contexts copied; free with mt_caching_trace_free. */
mt_status mt_caching_trace(mt_caching_allocator *ca, mt_trace_entry **out, size_t *n);
void mt_caching_trace_free(mt_trace_entry *entries, size_t n);

/* The allocator vtable of DESIGN.md over this instance: alloc uses the backend's current
 * stream and ignores the device argument (one instance per device: the caller routes). */
mt_allocator *mt_caching_as_allocator(mt_caching_allocator *ca);

/* ---- one allocator per CUDA device ----
 * _C keeps them, so that minitorch.cuda.memory_stats() and empty_cache() (csrc/python/) read
 * the same instances _C_cuda allocates from. They live as long as the process: tensors may
 * still hold their blocks at exit. */
#define MT_CACHING_MAX_DEVICES 64

/* device's allocator, made over backend (with state) by the first call. */
mt_status mt_caching_device(int device, const mt_caching_backend *backend, void *state,
                            mt_caching_allocator **out);
/* The fraction for device's allocator of the registry: set on it now, or when it is made. */
void mt_caching_device_set_fraction(int device, double fraction);
double mt_caching_device_fraction(int device);
/* Every device's allocator records as rec says (NULL: stops), those made later too. */
mt_status mt_caching_device_record_history(const mt_caching_recorder *rec, bool clear);
/* device's allocator, or NULL if mt_caching_device has not made one. */
mt_caching_allocator *mt_caching_for_device(int device);

#ifdef __cplusplus
}
#endif

#endif
