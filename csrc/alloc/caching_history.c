/* The caching allocator's memory history (caching.h, PyTorch's _record_memory_history): the
 * ring of actions, the blocks' contexts, and the registry's recorder for every device. A
 * context is a malloc'd string the recorder's gather() made; this file owns the ones it keeps
 * and frees them with free(). Must not include CUDA or Python. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc/caching_impl.h"

static int64_t
now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static char *
copy(const char *s)
{
    return s ? strdup(s) : NULL;
}

char *
mt_caching_gather(mt_caching_allocator *ca, bool free_op)
{
    pthread_mutex_lock(&ca->mutex);
    char *(*gather)(void) = NULL;
    if (ca->recording &&
        (free_op ? ca->rec.context_free : ca->rec.context_state || ca->rec.context_alloc)) {
        gather = ca->rec.gather;
    }
    pthread_mutex_unlock(&ca->mutex);
    return gather ? gather() : NULL;
}

void
mt_caching_trace_add(mt_caching_allocator *ca, mt_trace_action action, uintptr_t addr, size_t size,
                     uintptr_t stream, char *context, size_t device_free)
{
    if (!ca->recording || !ca->rec.history || (ca->rec.skip >> action & 1u) ||
        ca->rec.max_entries == 0) {
        free(context);
        return;
    }
    mt_trace_entry e = {action, addr, stream, size, device_free, now_us(), context};
    if (ca->ntrace < ca->rec.max_entries) {
        mt_trace_entry *t = realloc(ca->trace, (ca->ntrace + 1) * sizeof(mt_trace_entry));
        if (t == NULL) { /* the history loses this action; the allocation goes on */
            free(context);
            return;
        }
        ca->trace = t;
        ca->trace[ca->ntrace++] = e;
        return;
    }
    free(ca->trace[ca->trace_next].context); /* full: the oldest makes room */
    ca->trace[ca->trace_next] = e;
    ca->trace_next = (ca->trace_next + 1) % ca->ntrace;
}

void
mt_caching_note_alloc(mt_caching_allocator *ca, mt_block *b, char *context)
{
    const bool keep = ca->recording && ca->rec.context_state;
    char *for_trace = ca->recording && ca->rec.context_alloc ? (keep ? copy(context) : context)
                                                             : NULL;
    mt_caching_trace_add(ca, MT_TRACE_ALLOC, (uintptr_t)b->ptr, b->size, b->stream, for_trace, 0);
    free(b->context);
    b->context = keep ? context : NULL;
    if (!keep && for_trace != context) {
        free(context);
    }
}

static void
drop_trace(mt_caching_allocator *ca)
{
    for (size_t i = 0; i < ca->ntrace; i++) {
        free(ca->trace[i].context);
    }
    free(ca->trace);
    ca->trace = NULL;
    ca->ntrace = ca->trace_next = 0;
}

void
mt_caching_history_clear(mt_caching_allocator *ca)
{
    drop_trace(ca);
    ca->recording = false;
}

mt_status
mt_caching_record_history(mt_caching_allocator *ca, const mt_caching_recorder *rec, bool clear)
{
    pthread_mutex_lock(&ca->mutex);
    if (clear || (rec && ca->ntrace > rec->max_entries)) {
        drop_trace(ca); /* a smaller ring starts afresh */
    }
    ca->recording = rec != NULL;
    if (rec) {
        if (ca->ntrace > 0 && ca->trace_next != 0) { /* the ring in order, oldest first */
            mt_trace_entry *t = malloc(ca->ntrace * sizeof(mt_trace_entry));
            if (t == NULL) {
                pthread_mutex_unlock(&ca->mutex);
                return mt_fail(MT_ENOMEM, "caching allocator: out of host memory for its history");
            }
            for (size_t i = 0; i < ca->ntrace; i++) {
                t[i] = ca->trace[(ca->trace_next + i) % ca->ntrace];
            }
            free(ca->trace);
            ca->trace = t;
            ca->trace_next = 0;
        }
        ca->rec = *rec;
    }
    pthread_mutex_unlock(&ca->mutex);
    return MT_OK;
}

mt_status
mt_caching_trace(mt_caching_allocator *ca, mt_trace_entry **out, size_t *n)
{
    pthread_mutex_lock(&ca->mutex);
    mt_trace_entry *t = calloc(ca->ntrace ? ca->ntrace : 1, sizeof(mt_trace_entry));
    mt_status st = t ? MT_OK : mt_fail(MT_ENOMEM, "caching allocator: out of host memory");
    for (size_t i = 0; t && i < ca->ntrace; i++) {
        const mt_trace_entry *e = &ca->trace[(ca->trace_next + i) % ca->ntrace];
        t[i] = *e;
        t[i].context = copy(e->context);
    }
    *out = t;
    *n = t ? ca->ntrace : 0;
    pthread_mutex_unlock(&ca->mutex);
    return st;
}

void
mt_caching_trace_free(mt_trace_entry *entries, size_t n)
{
    for (size_t i = 0; entries && i < n; i++) {
        free(entries[i].context);
    }
    free(entries);
}
