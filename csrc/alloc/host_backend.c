/* The host-memory backend of the caching allocator (see host_backend.h). Test scaffolding:
 * it must behave like cudaMalloc/cudaFree and CUDA events, and do nothing more. */
#include <stdlib.h>
#include <unistd.h>

#include "alloc/host_backend.h"

typedef struct host_stream {
    uintptr_t stream;
    uint64_t recorded;  /* events recorded on it so far */
    uint64_t completed; /* events whose work is done */
} host_stream;

typedef struct host_event {
    uintptr_t stream;
    uint64_t tick; /* done once the stream's completed count reaches it */
} host_event;

struct mt_host_backend {
    size_t capacity, in_use;
    int fail_next;
    uintptr_t current;
    int64_t raw_alloc_calls, raw_free_calls;
    host_stream *streams;
    int nstreams, cap_streams;
};

#define HOST_SEGMENT_ALIGN 512 /* cudaMalloc gives at least 256; blocks are 512-multiples */

static mt_status
host_raw_alloc(void *state, size_t size, void **ptr)
{
    mt_host_backend *hb = state;
    hb->raw_alloc_calls++;
    if (hb->fail_next > 0) {
        hb->fail_next--;
        return MT_ECUDA_OOM;
    }
    if (hb->capacity != 0 && size > hb->capacity - hb->in_use) {
        return MT_ECUDA_OOM;
    }
    void *p = size % HOST_SEGMENT_ALIGN == 0 ? aligned_alloc(HOST_SEGMENT_ALIGN, size) : NULL;
    if (p == NULL) {
        return MT_ECUDA_OOM;
    }
    hb->in_use += size;
    *ptr = p;
    return MT_OK;
}

static void
host_raw_free(void *state, void *ptr, size_t size)
{
    mt_host_backend *hb = state;
    hb->raw_free_calls++;
    hb->in_use -= size;
    free(ptr);
}

static void
host_mem_get_info(void *state, size_t *free_bytes, size_t *total_bytes)
{
    mt_host_backend *hb = state;
    size_t total = hb->capacity;
    if (total == 0) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        total = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : hb->in_use;
    }
    *total_bytes = total;
    *free_bytes = total > hb->in_use ? total - hb->in_use : 0;
}

static uintptr_t
host_current_stream(void *state)
{
    return ((mt_host_backend *)state)->current;
}

static host_stream *
find_stream(mt_host_backend *hb, uintptr_t stream, bool add)
{
    for (int k = 0; k < hb->nstreams; k++) {
        if (hb->streams[k].stream == stream) {
            return &hb->streams[k];
        }
    }
    if (!add) {
        return NULL;
    }
    if (hb->nstreams == hb->cap_streams) {
        int cap = hb->cap_streams ? 2 * hb->cap_streams : 8;
        host_stream *s = realloc(hb->streams, (size_t)cap * sizeof(host_stream));
        if (s == NULL) {
            return NULL;
        }
        hb->streams = s;
        hb->cap_streams = cap;
    }
    hb->streams[hb->nstreams] = (host_stream){stream, 0, 0};
    return &hb->streams[hb->nstreams++];
}

static void *
host_event_record(void *state, uintptr_t stream)
{
    mt_host_backend *hb = state;
    host_stream *s = find_stream(hb, stream, true);
    host_event *e = s ? malloc(sizeof(host_event)) : NULL;
    if (e != NULL) {
        *e = (host_event){stream, ++s->recorded};
    }
    return e;
}

static bool
host_event_query(void *state, void *event)
{
    host_event *e = event;
    host_stream *s = find_stream(state, e->stream, false);
    return s != NULL && s->completed >= e->tick;
}

static void
host_event_synchronize(void *state, void *event)
{
    host_event *e = event;
    host_stream *s = find_stream(state, e->stream, false);
    if (s != NULL && s->completed < e->tick) {
        s->completed = e->tick; /* waiting on the host is the work finishing */
    }
}

static void
host_event_destroy(void *state, void *event)
{
    (void)state;
    free(event);
}

const mt_caching_backend mt_host_backend_vtable = {
    host_raw_alloc,    host_raw_free,    host_mem_get_info,      host_current_stream,
    host_event_record, host_event_query, host_event_synchronize, host_event_destroy,
};

mt_status
mt_host_backend_create(size_t capacity, mt_host_backend **out)
{
    mt_host_backend *hb = calloc(1, sizeof(mt_host_backend));
    if (hb == NULL) {
        return mt_fail(MT_ENOMEM, "host backend: out of memory");
    }
    hb->capacity = capacity;
    *out = hb;
    return MT_OK;
}

void
mt_host_backend_destroy(mt_host_backend *hb)
{
    if (hb != NULL) {
        free(hb->streams);
        free(hb);
    }
}

void
mt_host_backend_fail_next(mt_host_backend *hb, int n)
{
    hb->fail_next = n;
}

void
mt_host_backend_complete(mt_host_backend *hb, uintptr_t stream, bool all)
{
    for (int k = 0; k < hb->nstreams; k++) {
        if (all || hb->streams[k].stream == stream) {
            hb->streams[k].completed = hb->streams[k].recorded;
        }
    }
}

void
mt_host_backend_set_stream(mt_host_backend *hb, uintptr_t stream)
{
    hb->current = stream;
}

void
mt_host_backend_counts_get(const mt_host_backend *hb, mt_host_backend_counts *out)
{
    out->raw_alloc_calls = hb->raw_alloc_calls;
    out->raw_free_calls = hb->raw_free_calls;
    out->in_use = hb->in_use;
}
