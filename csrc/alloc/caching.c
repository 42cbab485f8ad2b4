/* The caching allocator's algorithm (see caching.h), after PyTorch's DeviceCachingAllocator.
 *
 * A segment from the backend is a doubly linked list of blocks (prev/next by address). A free
 * block sits in its pool's free list, sorted by (stream, size, address), so the best fit on a
 * stream is the first entry not smaller than the request. A block in use is in the `live`
 * table (address -> block). A freed block that other streams used waits in `events` until their
 * work is done, then joins its pool. Every public function takes the mutex; the static ones
 * assume it is held. Nothing here may call into Python or CUDA except through the backend. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/caching_impl.h"

/* ---- statistics, as PyTorch's increase_stat / decrease_stat ---- */

static void
stat_add(mt_stat *s, int64_t amount)
{
    if (amount >= 0) {
        s->current += amount;
        s->allocated += amount;
        if (s->current > s->peak) {
            s->peak = s->current;
        }
    } else {
        s->current += amount;
        s->freed -= amount;
    }
}

/* Moves a stat of the aggregate and of the block's pool together. */
static void
stat_pool_add(mt_stat *arr, const mt_pool *p, int64_t amount)
{
    stat_add(&arr[MT_STAT_ALL], amount);
    stat_add(&arr[p->is_small ? MT_STAT_SMALL_POOL : MT_STAT_LARGE_POOL], amount);
}

/* ---- sizes ---- */

static size_t
round_size(size_t size)
{
    if (size < MT_MIN_BLOCK_SIZE) {
        return MT_MIN_BLOCK_SIZE;
    }
    return MT_MIN_BLOCK_SIZE * ((size + MT_MIN_BLOCK_SIZE - 1) / MT_MIN_BLOCK_SIZE);
}

static size_t
allocation_size(size_t size)
{
    if (size <= MT_SMALL_SIZE) {
        return MT_SMALL_BUFFER;
    }
    if (size < MT_MIN_LARGE_ALLOC) {
        return MT_LARGE_BUFFER;
    }
    return MT_ROUND_LARGE * ((size + MT_ROUND_LARGE - 1) / MT_ROUND_LARGE);
}

/* A small block is split for any remainder a request could use; a large one only when the rest
 * is itself large, so the large pool does not fill with slivers. */
static bool
should_split(const mt_block *b, size_t size)
{
    size_t remaining = b->size - size;
    return b->pool->is_small ? remaining >= MT_MIN_BLOCK_SIZE : remaining > MT_SMALL_SIZE;
}

/* ---- the free lists ---- */

static int
block_cmp(uintptr_t stream, size_t size, uintptr_t addr, const mt_block *b)
{
    if (stream != b->stream) {
        return stream < b->stream ? -1 : 1;
    }
    if (size != b->size) {
        return size < b->size ? -1 : 1;
    }
    if (addr != (uintptr_t)b->ptr) {
        return addr < (uintptr_t)b->ptr ? -1 : 1;
    }
    return 0;
}

/* The first index whose block is not below the key. */
static size_t
pool_lower_bound(const mt_pool *p, uintptr_t stream, size_t size, uintptr_t addr)
{
    size_t lo = 0, hi = p->nfree;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (block_cmp(stream, size, addr, p->free[mid]) > 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static void
pool_insert(mt_pool *p, mt_block *b)
{
    size_t i = pool_lower_bound(p, b->stream, b->size, (uintptr_t)b->ptr);
    memmove(&p->free[i + 1], &p->free[i], (p->nfree - i) * sizeof(mt_block *));
    p->free[i] = b;
    p->nfree++;
}

static void
pool_erase(mt_pool *p, mt_block *b)
{
    size_t i = pool_lower_bound(p, b->stream, b->size, (uintptr_t)b->ptr);
    if (i < p->nfree && p->free[i] == b) {
        memmove(&p->free[i], &p->free[i + 1], (p->nfree - i - 1) * sizeof(mt_block *));
        p->nfree--;
    }
}

/* A new block struct of pool p, with the pool's room for it reserved. */
static mt_block *
block_new(mt_pool *p, uintptr_t stream, size_t size, char *ptr)
{
    if (p->nblocks + 1 > p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        mt_block **f = realloc(p->free, cap * sizeof(mt_block *));
        if (f == NULL) {
            return NULL;
        }
        p->free = f;
        p->cap = cap;
    }
    mt_block *b = calloc(1, sizeof(mt_block));
    if (b == NULL) {
        return NULL;
    }
    b->stream = stream;
    b->size = size;
    b->pool = p;
    b->ptr = ptr;
    p->nblocks++;
    return b;
}

void
mt_caching_block_delete(mt_block *b)
{
    free(b->context);
    b->pool->nblocks--;
    free(b->stream_uses);
    free(b);
}

/* ---- blocks in use, by address ---- */

static size_t
live_slot(const mt_caching_allocator *ca, const void *ptr)
{
    /* Blocks start at multiples of 512: drop those bits, then a Fibonacci hash. */
    uint64_t h = ((uint64_t)(uintptr_t)ptr >> 9) * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 32) & (ca->live_cap - 1);
}

static mt_status
live_reserve(mt_caching_allocator *ca)
{
    if (2 * (ca->nlive + 1) <= ca->live_cap) {
        return MT_OK;
    }
    size_t old_cap = ca->live_cap;
    mt_block **old = ca->live;
    size_t cap = old_cap ? 2 * old_cap : 64;
    mt_block **t = calloc(cap, sizeof(mt_block *));
    if (t == NULL) {
        return mt_fail(MT_ENOMEM, "caching allocator: out of host memory for its block table");
    }
    ca->live = t;
    ca->live_cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i] != NULL) {
            size_t j = live_slot(ca, old[i]->ptr);
            while (t[j] != NULL) {
                j = (j + 1) & (cap - 1);
            }
            t[j] = old[i];
        }
    }
    free(old);
    return MT_OK;
}

/* Needs live_reserve first. */
static void
live_insert(mt_caching_allocator *ca, mt_block *b)
{
    size_t j = live_slot(ca, b->ptr);
    while (ca->live[j] != NULL) {
        j = (j + 1) & (ca->live_cap - 1);
    }
    ca->live[j] = b;
    ca->nlive++;
}

/* Finds ptr's block and, if remove, takes it out (shifting later entries back into the hole,
 * so no tombstones are needed). */
static mt_block *
live_find(mt_caching_allocator *ca, const void *ptr, bool remove)
{
    if (ca->live_cap == 0) {
        return NULL;
    }
    size_t mask = ca->live_cap - 1, j = live_slot(ca, ptr);
    while (ca->live[j] != NULL && ca->live[j]->ptr != ptr) {
        j = (j + 1) & mask;
    }
    mt_block *b = ca->live[j];
    if (b == NULL || !remove) {
        return b;
    }
    ca->live[j] = NULL;
    ca->nlive--;
    for (size_t k = (j + 1) & mask; ca->live[k] != NULL; k = (k + 1) & mask) {
        size_t home = live_slot(ca, ca->live[k]->ptr);
        /* Move k into the hole at j unless its home lies cyclically in (j, k]. */
        bool stays = j <= k ? (j < home && home <= k) : (j < home || home <= k);
        if (!stays) {
            ca->live[j] = ca->live[k];
            ca->live[k] = NULL;
            j = k;
        }
    }
    return b;
}

/* ---- freeing and merging ---- */

static bool
is_split(const mt_block *b)
{
    return b->prev != NULL || b->next != NULL;
}

/* Folds free neighbour src into dst; returns the bytes it took over (0 if src is not free). */
static size_t
try_merge(mt_block *dst, mt_block *src)
{
    if (src == NULL || src->allocated || src->event_count > 0 || src->nuses > 0) {
        return 0;
    }
    if (dst->prev == src) { /* [src dst] */
        dst->ptr = src->ptr;
        dst->prev = src->prev;
        if (dst->prev) {
            dst->prev->next = dst;
        }
    } else { /* [dst src] */
        dst->next = src->next;
        if (dst->next) {
            dst->next->prev = dst;
        }
    }
    size_t subsumed = src->size;
    dst->size += subsumed;
    pool_erase(src->pool, src);
    mt_caching_block_delete(src);
    return subsumed;
}

/* Puts a block no stream uses any more back into its pool, merged with free neighbours. */
static void
free_block(mt_caching_allocator *ca, mt_block *b)
{
    size_t original_size = b->size, requested = b->requested_size;
    mt_caching_trace_add(ca, MT_TRACE_FREE_COMPLETED, (uintptr_t)b->ptr, b->size, b->stream, NULL,
                         0);
    free(b->context);
    b->context = NULL;
    int64_t split_blocks = 0, split_bytes = 0; /* net change of inactive_split */
    mt_block *candidates[2] = {b->prev, b->next};
    for (int k = 0; k < 2; k++) {
        size_t subsumed = try_merge(b, candidates[k]);
        if (subsumed > 0) {
            split_blocks -= 1;
            split_bytes -= (int64_t)subsumed;
        }
    }
    pool_insert(b->pool, b);
    if (is_split(b)) {
        split_blocks += 1;
        split_bytes += (int64_t)b->size;
    }
    mt_caching_stats *s = &ca->stats;
    stat_pool_add(s->inactive_split, b->pool, split_blocks);
    stat_pool_add(s->inactive_split_bytes, b->pool, split_bytes);
    stat_pool_add(s->active, b->pool, -1);
    stat_pool_add(s->active_bytes, b->pool, -(int64_t)original_size);
    stat_pool_add(s->requested_bytes, b->pool, -(int64_t)requested);
}

/* One event per stream the block was used on; the block is free once all have passed.
 * record_stream reserved the room in `events`. */
static void
insert_events(mt_caching_allocator *ca, mt_block *b)
{
    for (int k = 0; k < b->nuses; k++) {
        /* A NULL event (the backend could not record one) never completes: the block stays
         * out of the cache, which is the safe side. */
        void *ev = ca->backend->event_record(ca->state, b->stream_uses[k]);
        b->event_count++;
        ca->events[ca->nevents++] = (mt_pending){ev, b};
    }
    ca->nuses -= (size_t)b->nuses;
    b->nuses = 0;
}

static void
event_done(mt_caching_allocator *ca, mt_pending *e)
{
    ca->backend->event_destroy(ca->state, e->event);
    if (--e->b->event_count == 0) {
        free_block(ca, e->b);
    }
}

/* Frees the blocks whose other streams have finished with them; with wait, waits for them. */
static void
process_events(mt_caching_allocator *ca, bool wait)
{
    size_t kept = 0;
    for (size_t i = 0; i < ca->nevents; i++) {
        mt_pending e = ca->events[i];
        if (e.event != NULL && wait) {
            ca->backend->event_synchronize(ca->state, e.event);
        }
        if (e.event != NULL && (wait || ca->backend->event_query(ca->state, e.event))) {
            event_done(ca, &e);
        } else {
            ca->events[kept++] = e;
        }
    }
    ca->nevents = kept;
}

static void
synchronize_and_free_events(mt_caching_allocator *ca)
{
    ca->stats.num_sync_all_streams++;
    process_events(ca, true);
}

static void
release_block(mt_caching_allocator *ca, mt_block *b)
{
    ca->stats.num_device_free++;
    mt_caching_trace_add(ca, MT_TRACE_SEGMENT_FREE, (uintptr_t)b->ptr, b->size, b->stream, NULL, 0);
    ca->backend->raw_free(ca->state, b->ptr, b->size);
    stat_pool_add(ca->stats.segment, b->pool, -1);
    stat_pool_add(ca->stats.reserved_bytes, b->pool, -(int64_t)b->size);
    pool_erase(b->pool, b);
    mt_caching_block_delete(b);
}

/* Gives back every whole free segment (a free block with no neighbours). */
static void
release_cached_blocks(mt_caching_allocator *ca)
{
    synchronize_and_free_events(ca);
    mt_pool *pools[2] = {&ca->large, &ca->small};
    for (int k = 0; k < 2; k++) {
        mt_pool *p = pools[k];
        for (size_t i = p->nfree; i-- > 0;) {
            if (!is_split(p->free[i])) {
                release_block(ca, p->free[i]);
            }
        }
    }
}

/* ---- allocating ---- */

/* A new segment of alloc_size for a block on stream in pool p: MT_ECUDA_OOM if the backend
 * has no memory, another status if it failed otherwise or bookkeeping did. */
static mt_status
alloc_block(mt_caching_allocator *ca, mt_pool *p, uintptr_t stream, size_t alloc_size, bool retry,
            mt_block **out)
{
    if (retry) {
        ca->stats.num_alloc_retries++;
    }
    if (ca->limited && ca->backend->mem_get_info) {
        /* the segments reserved, this one included, must stay within the fraction allowed */
        size_t free_bytes = 0, total_bytes = 0;
        ca->backend->mem_get_info(ca->state, &free_bytes, &total_bytes);
        const int64_t reserved = ca->stats.reserved_bytes[MT_STAT_ALL].current;
        if ((double)reserved + (double)alloc_size > ca->fraction * (double)total_bytes) {
            return MT_ECUDA_OOM;
        }
    }
    void *ptr = NULL;
    mt_status st = ca->backend->raw_alloc(ca->state, alloc_size, &ptr);
    if (st != MT_OK) {
        return st;
    }
    mt_block *b = block_new(p, stream, alloc_size, ptr);
    if (b == NULL) {
        ca->backend->raw_free(ca->state, ptr, alloc_size);
        return mt_fail(MT_ENOMEM, "caching allocator: out of host memory for its block table");
    }
    stat_pool_add(ca->stats.segment, p, 1);
    stat_pool_add(ca->stats.reserved_bytes, p, (int64_t)alloc_size);
    ca->stats.num_device_alloc++;
    mt_caching_trace_add(ca, MT_TRACE_SEGMENT_ALLOC, (uintptr_t)ptr, alloc_size, stream, NULL, 0);
    *out = b;
    return MT_OK;
}

static void
format_size(char *buf, size_t n, uint64_t size)
{
    if (size <= 1024) {
        snprintf(buf, n, "%" PRIu64 " bytes", size);
    } else if (size <= 1048576) {
        snprintf(buf, n, "%.2f KiB", (double)size / 1024.0);
    } else if (size <= 1073741824ULL) {
        snprintf(buf, n, "%.2f MiB", (double)size / 1048576.0);
    } else {
        snprintf(buf, n, "%.2f GiB", (double)size / 1073741824.0);
    }
}

/* PyTorch's OutOfMemoryError message, without its advice on PYTORCH_CUDA_ALLOC_CONF (we read
 * no such settings). */
static mt_status
fail_oom(mt_caching_allocator *ca, size_t alloc_size)
{
    size_t free_bytes = 0, total_bytes = 0;
    if (ca->backend->mem_get_info) {
        ca->backend->mem_get_info(ca->state, &free_bytes, &total_bytes);
    }
    ca->stats.num_ooms++;
    mt_caching_trace_add(ca, MT_TRACE_OOM, 0, alloc_size, 0, NULL, free_bytes);
    int64_t allocated = ca->stats.allocated_bytes[MT_STAT_ALL].current;
    int64_t reserved = ca->stats.reserved_bytes[MT_STAT_ALL].current;
    char want[32], total[32], freeb[32], alloc[32], unalloc[32], limit[32], allowed[48] = "";
    if (ca->limited) { /* PyTorch names the limit set_per_process_memory_fraction set */
        format_size(limit, sizeof limit, (uint64_t)(ca->fraction * (double)total_bytes));
        snprintf(allowed, sizeof allowed, "%s allowed; ", limit);
    }
    format_size(want, sizeof want, alloc_size);
    format_size(total, sizeof total, total_bytes);
    format_size(freeb, sizeof freeb, free_bytes);
    format_size(alloc, sizeof alloc, (uint64_t)allocated);
    format_size(unalloc, sizeof unalloc, (uint64_t)(reserved - allocated));
    return mt_fail(MT_ECUDA_OOM,
                   "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s "
                   "of which %s is free. %sOf the allocated memory %s is allocated by PyTorch, "
                   "and %s is reserved by PyTorch but unallocated.",
                   want, ca->device, total, freeb, allowed, alloc, unalloc);
}

/* Hands out block b (found free or just made) for a request of size (rounded) and orig_size,
 * splitting off the rest when it is worth keeping; *out is the block handed out. */
static mt_status
alloc_found_block(mt_caching_allocator *ca, mt_block *b, size_t size, size_t orig_size,
                  mt_block **out)
{
    mt_pool *p = b->pool;
    mt_caching_stats *s = &ca->stats;
    bool already_split = is_split(b);
    if (should_split(b, size)) {
        mt_block *remaining = b;
        b = block_new(p, remaining->stream, size, remaining->ptr);
        if (b == NULL) {
            pool_insert(p, remaining);
            return mt_fail(MT_ENOMEM, "caching allocator: out of host memory for its block table");
        }
        b->prev = remaining->prev;
        if (b->prev) {
            b->prev->next = b;
        }
        b->next = remaining;
        remaining->prev = b;
        remaining->ptr += size;
        remaining->size -= size;
        pool_insert(p, remaining);
        if (already_split) {
            stat_pool_add(s->inactive_split_bytes, p, -(int64_t)size);
        } else {
            stat_pool_add(s->inactive_split_bytes, p, (int64_t)remaining->size);
            stat_pool_add(s->inactive_split, p, 1);
        }
    } else if (already_split) {
        stat_pool_add(s->inactive_split_bytes, p, -(int64_t)b->size);
        stat_pool_add(s->inactive_split, p, -1);
    }
    b->allocated = true;
    b->requested_size = orig_size;
    live_insert(ca, b);
    stat_pool_add(s->allocation, p, 1);
    stat_pool_add(s->allocated_bytes, p, (int64_t)b->size);
    stat_pool_add(s->active, p, 1);
    stat_pool_add(s->active_bytes, p, (int64_t)b->size);
    stat_pool_add(s->requested_bytes, p, (int64_t)orig_size);
    *out = b;
    return MT_OK;
}

/* The best fit on stream: the smallest free block of at least size, lowest address first. */
static mt_block *
get_free_block(mt_pool *p, uintptr_t stream, size_t size)
{
    size_t i = pool_lower_bound(p, stream, size, 0);
    if (i == p->nfree || p->free[i]->stream != stream) {
        return NULL;
    }
    mt_block *b = p->free[i];
    memmove(&p->free[i], &p->free[i + 1], (p->nfree - i - 1) * sizeof(mt_block *));
    p->nfree--;
    return b;
}

static mt_status
caching_malloc(mt_caching_allocator *ca, size_t orig_size, uintptr_t stream, void **ptr,
               bool *cached, char **context)
{
    process_events(ca, false);
    if (orig_size > SIZE_MAX - MT_ROUND_LARGE) {
        return fail_oom(ca, orig_size); /* rounding would wrap: no device has that much */
    }
    size_t size = round_size(orig_size);
    mt_pool *p = size <= MT_SMALL_SIZE ? &ca->small : &ca->large;
    size_t alloc_size = allocation_size(size);
    mt_status st = live_reserve(ca);
    if (st != MT_OK) {
        return st;
    }
    mt_block *b = get_free_block(p, stream, size);
    *cached = b != NULL;
    if (b == NULL) {
        st = alloc_block(ca, p, stream, alloc_size, false, &b);
        if (st == MT_ECUDA_OOM) {
            /* Give back every cached segment and try once more. */
            release_cached_blocks(ca);
            st = alloc_block(ca, p, stream, alloc_size, true, &b);
        }
        if (st == MT_ECUDA_OOM) {
            return fail_oom(ca, alloc_size);
        }
        if (st != MT_OK) {
            return st;
        }
    }
    st = alloc_found_block(ca, b, size, orig_size, &b);
    if (st == MT_OK) {
        *ptr = b->ptr;
        mt_caching_note_alloc(ca, b, *context);
        *context = NULL;
    }
    return st;
}

/* ---- the public functions ---- */

mt_status
mt_caching_malloc_from(mt_caching_allocator *ca, size_t size, uintptr_t stream, void **ptr,
                       bool *cached)
{
    *ptr = NULL;
    *cached = false;
    if (size == 0) {
        return MT_OK;
    }
    char *context = mt_caching_gather(ca, false);
    pthread_mutex_lock(&ca->mutex);
    mt_status st = caching_malloc(ca, size, stream, ptr, cached, &context);
    pthread_mutex_unlock(&ca->mutex);
    free(context); /* a failed request's */
    return st;
}

mt_status
mt_caching_malloc(mt_caching_allocator *ca, size_t size, uintptr_t stream, void **ptr)
{
    bool cached;
    return mt_caching_malloc_from(ca, size, stream, ptr, &cached);
}

mt_status
mt_caching_free(mt_caching_allocator *ca, void *ptr)
{
    if (ptr == NULL) {
        return MT_OK;
    }
    mt_status st = MT_OK;
    char *context = mt_caching_gather(ca, true);
    pthread_mutex_lock(&ca->mutex);
    mt_block *b = live_find(ca, ptr, true);
    if (b == NULL) {
        free(context);
        st = mt_fail(MT_ERUNTIME, "invalid device pointer: %p", ptr);
        goto out_unlock;
    }
    mt_caching_trace_add(ca, MT_TRACE_FREE_REQUESTED, (uintptr_t)b->ptr, b->size, b->stream,
                         context, 0);
    b->allocated = false;
    stat_pool_add(ca->stats.allocation, b->pool, -1);
    stat_pool_add(ca->stats.allocated_bytes, b->pool, -(int64_t)b->size);
    if (b->nuses > 0) {
        insert_events(ca, b);
    } else {
        free_block(ca, b);
    }
out_unlock:
    pthread_mutex_unlock(&ca->mutex);
    return st;
}

mt_status
mt_caching_record_stream(mt_caching_allocator *ca, void *ptr, uintptr_t stream)
{
    if (ptr == NULL) {
        return MT_OK; /* an empty tensor's storage has no mt_block */
    }
    mt_status st = MT_OK;
    pthread_mutex_lock(&ca->mutex);
    mt_block *b = live_find(ca, ptr, false);
    if (b == NULL) {
        st = mt_fail(MT_ERUNTIME, "No allocated block can be found");
        goto out_unlock;
    }
    if (stream == b->stream) {
        goto out_unlock; /* uses on the allocation stream need no synchronization */
    }
    for (int k = 0; k < b->nuses; k++) {
        if (b->stream_uses[k] == stream) {
            goto out_unlock;
        }
    }
    /* Room now for the use and for the event free() will record for it. */
    if (ca->nevents + ca->nuses + 1 > ca->cap_events) {
        size_t cap = 2 * (ca->nevents + ca->nuses + 1);
        mt_pending *e = realloc(ca->events, cap * sizeof(mt_pending));
        if (e == NULL) {
            st = mt_fail(MT_ENOMEM, "caching allocator: out of host memory for its events");
            goto out_unlock;
        }
        ca->events = e;
        ca->cap_events = cap;
    }
    if (b->nuses == b->cap_uses) {
        int cap = b->cap_uses ? 2 * b->cap_uses : 2;
        uintptr_t *u = realloc(b->stream_uses, (size_t)cap * sizeof(uintptr_t));
        if (u == NULL) {
            st = mt_fail(MT_ENOMEM, "caching allocator: out of host memory for its events");
            goto out_unlock;
        }
        b->stream_uses = u;
        b->cap_uses = cap;
    }
    b->stream_uses[b->nuses++] = stream;
    ca->nuses++;
out_unlock:
    pthread_mutex_unlock(&ca->mutex);
    return st;
}

void
mt_caching_empty_cache(mt_caching_allocator *ca)
{
    pthread_mutex_lock(&ca->mutex);
    release_cached_blocks(ca);
    pthread_mutex_unlock(&ca->mutex);
}
