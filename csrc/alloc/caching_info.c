/* The caching allocator's bookkeeping around the algorithm of caching.c: statistics and their
 * resets, segment snapshots, the mt_allocator vtable, creation and teardown. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/caching_impl.h"

void
mt_caching_get_stats(mt_caching_allocator *ca, mt_caching_stats *out)
{
    pthread_mutex_lock(&ca->mutex);
    *out = ca->stats;
    pthread_mutex_unlock(&ca->mutex);
}

/* Every mt_stat of the struct, for the resets. */
static int
all_stats(mt_caching_stats *s, mt_stat **out)
{
    mt_stat *arrays[] = {s->allocation,      s->segment,
                         s->active,          s->inactive_split,
                         s->allocated_bytes, s->reserved_bytes,
                         s->active_bytes,    s->inactive_split_bytes,
                         s->requested_bytes};
    int n = 0;
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++) {
        for (int t = 0; t < MT_NUM_STAT_TYPES; t++) {
            out[n++] = &arrays[a][t];
        }
    }
    out[n++] = &s->oversize_allocations;
    out[n++] = &s->oversize_segments;
    return n;
}

#define MT_NUM_STATS (9 * MT_NUM_STAT_TYPES + 2)

void
mt_caching_reset_peak_stats(mt_caching_allocator *ca)
{
    mt_stat *stats[MT_NUM_STATS];
    pthread_mutex_lock(&ca->mutex);
    int n = all_stats(&ca->stats, stats);
    for (int k = 0; k < n; k++) {
        stats[k]->peak = stats[k]->current;
    }
    pthread_mutex_unlock(&ca->mutex);
}

void
mt_caching_reset_accumulated_stats(mt_caching_allocator *ca)
{
    mt_stat *stats[MT_NUM_STATS];
    pthread_mutex_lock(&ca->mutex);
    int n = all_stats(&ca->stats, stats);
    for (int k = 0; k < n; k++) {
        stats[k]->allocated = 0;
        stats[k]->freed = 0;
    }
    mt_caching_stats *s = &ca->stats;
    s->num_alloc_retries = s->num_ooms = s->num_sync_all_streams = 0;
    s->num_device_alloc = s->num_device_free = 0;
    pthread_mutex_unlock(&ca->mutex);
}

/* ---- segments: snapshot and teardown ---- */

static int
cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)(*(mt_block *const *)a)->ptr,
              y = (uintptr_t)(*(mt_block *const *)b)->ptr;
    return x < y ? -1 : x > y;
}

/* The first block of every segment, by address: found among the free, live and pending
 * blocks, as PyTorch's snapshot does. */
static mt_status
segment_heads(mt_caching_allocator *ca, mt_block ***out, size_t *n)
{
    size_t cap = ca->small.nfree + ca->large.nfree + ca->nlive + ca->nevents, k = 0;
    mt_block **heads = malloc((cap ? cap : 1) * sizeof(mt_block *));
    if (heads == NULL) {
        return mt_fail(MT_ENOMEM, "caching allocator: out of host memory for a snapshot");
    }
    mt_pool *pools[2] = {&ca->small, &ca->large};
    for (int p = 0; p < 2; p++) {
        for (size_t i = 0; i < pools[p]->nfree; i++) {
            heads[k++] = pools[p]->free[i];
        }
    }
    for (size_t i = 0; i < ca->live_cap; i++) {
        if (ca->live[i] != NULL) {
            heads[k++] = ca->live[i];
        }
    }
    for (size_t i = 0; i < ca->nevents; i++) {
        heads[k++] = ca->events[i].b;
    }
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (heads[i]->prev == NULL) {
            heads[m++] = heads[i];
        }
    }
    qsort(heads, m, sizeof(mt_block *), cmp_ptr);
    size_t u = 0; /* a pending block may have several events */
    for (size_t i = 0; i < m; i++) {
        if (u == 0 || heads[u - 1] != heads[i]) {
            heads[u++] = heads[i];
        }
    }
    *out = heads;
    *n = u;
    return MT_OK;
}

mt_status
mt_caching_snapshot(mt_caching_allocator *ca, mt_caching_segment_info **segs, int *n)
{
    mt_block **heads = NULL;
    size_t nheads = 0;
    mt_caching_segment_info *res = NULL;
    pthread_mutex_lock(&ca->mutex);
    mt_status st = segment_heads(ca, &heads, &nheads);
    if (st != MT_OK) {
        goto out_unlock;
    }
    res = calloc(nheads ? nheads : 1, sizeof(mt_caching_segment_info));
    if (res == NULL) {
        st = mt_fail(MT_ENOMEM, "caching allocator: out of host memory for a snapshot");
        goto out_free_heads;
    }
    for (size_t i = 0; i < nheads; i++) {
        mt_caching_segment_info *seg = &res[i];
        seg->address = (uintptr_t)heads[i]->ptr;
        seg->stream = heads[i]->stream;
        seg->is_small = heads[i]->pool->is_small;
        for (mt_block *b = heads[i]; b != NULL; b = b->next) {
            seg->nblocks++;
        }
        seg->blocks = calloc((size_t)seg->nblocks, sizeof(mt_caching_block_info));
        if (seg->blocks == NULL) {
            mt_caching_snapshot_free(res, (int)nheads);
            res = NULL;
            st = mt_fail(MT_ENOMEM, "caching allocator: out of host memory for a snapshot");
            goto out_free_heads;
        }
        int k = 0;
        for (mt_block *b = heads[i]; b != NULL; b = b->next, k++) {
            mt_caching_block_info *bi = &seg->blocks[k];
            bi->address = (uintptr_t)b->ptr;
            bi->size = b->size;
            bi->requested_size = b->requested_size;
            bi->allocated = b->allocated;
            bi->active = b->allocated || b->event_count > 0 || b->nuses > 0;
            bi->context = b->context ? strdup(b->context) : NULL;
            seg->total_size += b->size;
            seg->allocated_size += b->allocated ? b->size : 0;
            if (bi->active) {
                seg->active_size += b->size;
                seg->requested_size += b->requested_size;
            }
        }
    }
    *segs = res;
    *n = (int)nheads;
out_free_heads:
    free(heads);
out_unlock:
    pthread_mutex_unlock(&ca->mutex);
    return st;
}

void
mt_caching_snapshot_free(mt_caching_segment_info *segs, int n)
{
    for (int i = 0; segs != NULL && i < n; i++) {
        for (int k = 0; segs[i].blocks && k < segs[i].nblocks; k++) {
            free(segs[i].blocks[k].context);
        }
        free(segs[i].blocks);
    }
    free(segs);
}

/* ---- the allocator vtable ---- */

static const char *
pool_name(size_t nbytes)
{
    return nbytes <= MT_SMALL_SIZE ? "small" : "large";
}

static mt_status
vt_alloc(mt_allocator *self, size_t nbytes, mt_device dev, void **out, void **ctx)
{
    mt_caching_allocator *ca = (mt_caching_allocator *)self;
    (void)dev;
    uintptr_t stream = ca->backend->current_stream ? ca->backend->current_stream(ca->state) : 0;
    bool cached;
    *ctx = NULL;
    mt_status st = mt_caching_malloc_from(ca, nbytes, stream, out, &cached);
    if (st == MT_OK && *out != NULL) {
        mt_alloc_report(*out, (int64_t)nbytes, (mt_device){MT_CUDA, ca->device}, pool_name(nbytes),
                        cached);
    }
    return st;
}

static void
vt_free(mt_allocator *self, void *ptr, size_t nbytes, void *ctx)
{
    mt_caching_allocator *ca = (mt_caching_allocator *)self;
    (void)ctx;
    if (ptr != NULL) {
        mt_alloc_report(ptr, -(int64_t)nbytes, (mt_device){MT_CUDA, ca->device}, pool_name(nbytes),
                        1);
    }
    /* The pointer came from vt_alloc, so the lookup cannot fail. */
    (void)mt_caching_free(ca, ptr);
}

static void
vt_stats(mt_allocator *self, mt_alloc_stats *out)
{
    mt_caching_stats s;
    mt_caching_get_stats((mt_caching_allocator *)self, &s);
    out->allocated_bytes = s.allocated_bytes[MT_STAT_ALL].current;
    out->peak_allocated_bytes = s.allocated_bytes[MT_STAT_ALL].peak;
    out->reserved_bytes = s.reserved_bytes[MT_STAT_ALL].current;
    out->num_allocs = s.allocation[MT_STAT_ALL].allocated;
    out->num_frees = s.allocation[MT_STAT_ALL].freed;
}

static void
vt_empty_cache(mt_allocator *self)
{
    mt_caching_empty_cache((mt_caching_allocator *)self);
}

mt_allocator *
mt_caching_as_allocator(mt_caching_allocator *ca)
{
    return &ca->base;
}

/* ---- life ---- */

mt_status
mt_caching_create(const mt_caching_backend *backend, void *state, int device,
                  mt_caching_allocator **out)
{
    mt_caching_allocator *ca = calloc(1, sizeof(mt_caching_allocator));
    if (ca == NULL || pthread_mutex_init(&ca->mutex, NULL) != 0) {
        free(ca);
        return mt_fail(MT_ENOMEM, "caching allocator: out of host memory");
    }
    ca->base = (mt_allocator){"caching", vt_alloc, vt_free, vt_stats, vt_empty_cache};
    ca->backend = backend;
    ca->state = state;
    ca->device = device;
    ca->small.is_small = true;
    ca->stats.max_split_size = -1; /* PyTorch's SIZE_MAX, as memory_stats() shows it */
    ca->fraction = 1.0;
    *out = ca;
    return MT_OK;
}

void
mt_caching_destroy(mt_caching_allocator *ca)
{
    if (ca == NULL) {
        return;
    }
    mt_block **heads = NULL;
    size_t nheads = 0;
    mt_status st = segment_heads(ca, &heads, &nheads);
    for (size_t i = 0; i < ca->nevents; i++) {
        if (ca->events[i].event != NULL) {
            ca->backend->event_destroy(ca->state, ca->events[i].event);
        }
    }
    if (st == MT_OK) {
        for (size_t i = 0; i < nheads; i++) {
            size_t total = 0;
            void *base = heads[i]->ptr;
            for (mt_block *b = heads[i], *next; b != NULL; b = next) {
                next = b->next;
                total += b->size;
                mt_caching_block_delete(b);
            }
            ca->backend->raw_free(ca->state, base, total);
        }
        free(heads);
    }
    free(ca->small.free);
    free(ca->large.free);
    free(ca->live);
    free(ca->events);
    mt_caching_history_clear(ca);
    pthread_mutex_destroy(&ca->mutex);
    free(ca);
}

/* ---- the per-device instances ---- */

static _Atomic(mt_caching_allocator *) devices[MT_CACHING_MAX_DEVICES];
static pthread_mutex_t devices_mutex = PTHREAD_MUTEX_INITIALIZER;

mt_caching_allocator *
mt_caching_for_device(int device)
{
    if (device < 0 || device >= MT_CACHING_MAX_DEVICES) {
        return NULL;
    }
    return atomic_load(&devices[device]);
}

void
mt_caching_set_fraction(mt_caching_allocator *ca, double fraction)
{
    pthread_mutex_lock(&ca->mutex);
    ca->limited = true;
    ca->fraction = fraction;
    pthread_mutex_unlock(&ca->mutex);
}

double
mt_caching_fraction(mt_caching_allocator *ca)
{
    pthread_mutex_lock(&ca->mutex);
    double f = ca->fraction;
    pthread_mutex_unlock(&ca->mutex);
    return f;
}

/* A fraction set before the device's allocator exists, given to it when mt_caching_device makes
 * it (both guarded by devices_mutex). */
static bool fraction_set[MT_CACHING_MAX_DEVICES];
static double pending_fraction[MT_CACHING_MAX_DEVICES];

void
mt_caching_device_set_fraction(int device, double fraction)
{
    if (device < 0 || device >= MT_CACHING_MAX_DEVICES) {
        return;
    }
    pthread_mutex_lock(&devices_mutex);
    fraction_set[device] = true;
    pending_fraction[device] = fraction;
    mt_caching_allocator *ca = atomic_load(&devices[device]);
    pthread_mutex_unlock(&devices_mutex);
    if (ca != NULL) {
        mt_caching_set_fraction(ca, fraction);
    }
}

double
mt_caching_device_fraction(int device)
{
    mt_caching_allocator *ca = mt_caching_for_device(device);
    if (ca != NULL) {
        return mt_caching_fraction(ca);
    }
    if (device < 0 || device >= MT_CACHING_MAX_DEVICES) {
        return 1.0;
    }
    pthread_mutex_lock(&devices_mutex);
    double f = fraction_set[device] ? pending_fraction[device] : 1.0;
    pthread_mutex_unlock(&devices_mutex);
    return f;
}

/* The recorder of mt_caching_device_record_history, given to the allocators made later (both
 * guarded by devices_mutex). */
static bool recording;
static mt_caching_recorder recorder;

mt_status
mt_caching_device_record_history(const mt_caching_recorder *rec, bool clear)
{
    pthread_mutex_lock(&devices_mutex);
    recording = rec != NULL;
    if (rec) {
        recorder = *rec;
    }
    pthread_mutex_unlock(&devices_mutex);
    mt_status st = MT_OK;
    for (int d = 0; st == MT_OK && d < MT_CACHING_MAX_DEVICES; d++) {
        mt_caching_allocator *ca = atomic_load(&devices[d]);
        st = ca ? mt_caching_record_history(ca, rec, clear) : MT_OK;
    }
    return st;
}

mt_status
mt_caching_device(int device, const mt_caching_backend *backend, void *state,
                  mt_caching_allocator **out)
{
    if (device < 0 || device >= MT_CACHING_MAX_DEVICES) {
        return mt_fail(MT_ERUNTIME, "caching allocator: device %d is beyond the %d supported",
                       device, MT_CACHING_MAX_DEVICES);
    }
    *out = atomic_load(&devices[device]);
    if (*out != NULL) {
        return MT_OK;
    }
    mt_status st = MT_OK;
    pthread_mutex_lock(&devices_mutex);
    *out = atomic_load(&devices[device]); /* another thread may have made it meanwhile */
    if (*out == NULL && (st = mt_caching_create(backend, state, device, out)) == MT_OK) {
        if (fraction_set[device]) {
            (*out)->limited = true;
            (*out)->fraction = pending_fraction[device];
        }
        (*out)->recording = recording;
        (*out)->rec = recorder;
        atomic_store(&devices[device], *out);
    }
    pthread_mutex_unlock(&devices_mutex);
    return st;
}
