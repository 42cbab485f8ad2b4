/* The emulated CUPTI activity API (the emulated CUDA device, cuda/emu/; include/cupti_activity.h):
 * kernel, memory-copy and external-correlation records in client buffers, as CUPTI produces them,
 * for cuda/profile.c's CUPTI path. The runtime and the library emulations report each piece of
 * device work through mt_emu_kernel_ran / mt_emu_memcpy_ran (emu.h); while its kind is enabled,
 * that becomes a record with a fresh correlation id, preceded (EXTERNAL_CORRELATION enabled, an
 * id pushed on the calling thread) by the records linking that id to the top external id of each
 * kind, as CUPTI links an API call. Buffers come from the client's request callback; a full one
 * goes back through the completion callback at once (on the thread that filled it, as CUPTI's
 * worker thread would at any time), the partly filled one at cuptiActivityFlushAll, which returns
 * only when every buffer filled before it has been delivered. Thread-safe. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_activity.h"

#include "cuda/emu/emu.h"

#define NAME_SLOTS 4096 /* distinct kernel names: ours are a few hundred, the libraries' a few */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t delivered = PTHREAD_COND_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc request_cb;   /* under lock */
static CUpti_BuffersCallbackCompleteFunc complete_cb; /* under lock */
static uint8_t *buf;                  /* the buffer being filled, NULL when none; under lock */
static size_t buf_size, buf_used, buf_records, buf_max; /* buf_max 0: as many as fit */
static int delivering;                /* full buffers handed out but not yet back; under lock */
static size_t dropped;                /* records lost for want of a buffer; under lock */

static atomic_bool on_kernel, on_concurrent, on_memcpy, on_external;
static atomic_uint last_corr;
static atomic_llong last_grid;

/* A thread's pushed external ids, per kind: grown as needed (CUPTI states no limit), freed when
 * the thread exits. */
typedef struct id_stack {
    uint64_t *ids[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
    int depth[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE], cap[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
} id_stack;
static _Thread_local id_stack *stacks;
/* A stream worker's: the ids of the thread that queued the work it runs (mt_emu_corr_use). */
static _Thread_local const mt_emu_corr *adopted;
static pthread_key_t stacks_key;
static pthread_once_t stacks_once = PTHREAD_ONCE_INIT;

static void
free_stacks(void *p)
{
    id_stack *s = p;
    for (int k = 0; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++) {
        free(s->ids[k]);
    }
    free(s);
}

static void
make_stacks_key(void)
{
    (void)pthread_key_create(&stacks_key, free_stacks);
}

static size_t
record_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return sizeof(CUpti_ActivityExternalCorrelation);
    default:
        return 0;
    }
}

static atomic_bool *
kind_flag(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
        return &on_kernel;
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return &on_concurrent;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return &on_memcpy;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return &on_external;
    default:
        return NULL;
    }
}

/* Hands a buffer back to the client; delivering was counted up for it under lock. */
static void
deliver(CUpti_BuffersCallbackCompleteFunc cb, uint8_t *b, size_t size, size_t valid)
{
    cb(NULL, 0, b, size, valid);
    pthread_mutex_lock(&lock);
    if (--delivering == 0) {
        pthread_cond_broadcast(&delivered);
    }
    pthread_mutex_unlock(&lock);
}

/* Copies the records (each len bytes, a multiple of 8) into the current buffer, taking a new one
 * from the client when they do not fit (the full one goes back to the client). */
static void
append(const void *const *recs, const size_t *lens, int n)
{
    uint8_t *full = NULL, *refused = NULL;
    size_t full_size = 0, full_used = 0, refused_size = 0;
    CUpti_BuffersCallbackCompleteFunc cb = NULL;
    pthread_mutex_lock(&lock);
    cb = complete_cb;
    for (int r = 0; r < n; r++) {
        if (buf == NULL || buf_used + lens[r] > buf_size || (buf_max && buf_records >= buf_max)) {
            if (buf != NULL && full == NULL) {
                full = buf, full_size = buf_size, full_used = buf_used;
                delivering++;
            } else if (buf != NULL) {
                dropped++; /* a second full buffer in one call: the records did not fit at all */
                continue;
            }
            buf = NULL;
            uint8_t *b = NULL;
            size_t size = 0, max = 0;
            if (request_cb) {
                request_cb(&b, &size, &max);
            }
            if (b != NULL && ((uintptr_t)b % 8 != 0 || size < lens[r])) {
                fprintf(stderr,
                        "minitorch emulated CUPTI: the requested buffer %p of %zu bytes is "
                        "not 8-byte aligned or holds no record; records dropped\n",
                        (void *)b, size);
                refused = b, refused_size = size;
                delivering++;
                b = NULL;
            }
            if (b != NULL) {
                buf = b, buf_size = size, buf_used = 0, buf_records = 0, buf_max = max;
            }
        }
        if (buf == NULL) {
            dropped++;
            continue;
        }
        memcpy(buf + buf_used, recs[r], lens[r]);
        buf_used += lens[r];
        buf_records++;
    }
    pthread_mutex_unlock(&lock);
    if (full) {
        deliver(cb, full, full_size, full_used);
    }
    if (refused) {
        deliver(cb, refused, refused_size, 0);
    }
}

/* A copy of name kept for the process's life (records point at it, as CUPTI's do). */
static const char *
intern(const char *name)
{
    static const char *slots[NAME_SLOTS];
    static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
    size_t h = 5381;
    for (const char *c = name; *c; c++) {
        h = h * 33 + (unsigned char)*c;
    }
    const char *out = "<unknown kernel>"; /* a full table: never for our fixed set of names */
    pthread_mutex_lock(&names_lock);
    for (size_t k = 0; k < NAME_SLOTS; k++) {
        const char **s = &slots[(h + k) % NAME_SLOTS];
        if (*s == NULL) {
            *s = strdup(name);
        }
        if (*s != NULL && strcmp(*s, name) == 0) {
            out = *s;
            break;
        }
    }
    pthread_mutex_unlock(&names_lock);
    return out;
}

_Static_assert(CUPTI_EXTERNAL_CORRELATION_KIND_SIZE <= MT_EMU_CORR_KINDS,
               "mt_emu_corr holds every kind");

void
mt_emu_corr_save(mt_emu_corr *c)
{
    memset(c, 0, sizeof(*c));
    for (int k = 0; stacks != NULL && k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++) {
        if (stacks->depth[k] > 0) {
            c->ids[k] = stacks->ids[k][stacks->depth[k] - 1];
            c->has[k] = true;
        }
    }
}

void
mt_emu_corr_use(const mt_emu_corr *c)
{
    adopted = c;
}

/* The records of one API call: the external correlations (first, as CUPTI writes the API's
 * links before the work it started completes) and the work's record. */
static void
emit(const void *work, size_t len, uint32_t corr)
{
    CUpti_ActivityExternalCorrelation links[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
    const void *recs[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE + 1];
    size_t lens[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE + 1];
    int n = 0;
    mt_emu_corr own;
    const mt_emu_corr *ids = adopted;
    if (atomic_load(&on_external)) {
        if (ids == NULL) {
            mt_emu_corr_save(&own);
            ids = &own;
        }
        for (int k = 0; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++) {
            if (ids->has[k]) {
                links[n] = (CUpti_ActivityExternalCorrelation){
                    .kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                    .externalKind = (CUpti_ExternalCorrelationKind)k,
                    .externalId = ids->ids[k],
                    .correlationId = corr};
                recs[n] = &links[n];
                lens[n] = sizeof(links[n]);
                n++;
            }
        }
    }
    if (work) {
        recs[n] = work;
        lens[n] = len;
        n++;
    }
    if (n > 0) {
        append(recs, lens, n);
    }
}

static uint32_t
stream_id(cudaStream_t stream)
{
    unsigned long long id = 0;
    return cudaStreamGetId(stream, &id) == cudaSuccess ? (uint32_t)id : 0;
}

void
mt_emu_kernel_ran(const char *name, int device, cudaStream_t stream, uint64_t start_ns,
                  uint64_t end_ns)
{
    const bool concurrent = atomic_load(&on_concurrent), serial = atomic_load(&on_kernel);
    if (!concurrent && !serial && !atomic_load(&on_external)) {
        return;
    }
    const uint32_t corr = atomic_fetch_add(&last_corr, 1) + 1;
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof(k));
    if (concurrent || serial) {
        k.kind = concurrent ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : CUPTI_ACTIVITY_KIND_KERNEL;
        k.start = start_ns;
        k.end = end_ns;
        k.completed = end_ns;
        k.deviceId = (uint32_t)device;
        k.contextId = (uint32_t)device + 1; /* each device's primary context */
        k.streamId = stream_id(stream);
        k.correlationId = corr;
        k.gridId = atomic_fetch_add(&last_grid, 1) + 1;
        k.name = intern(name ? name : "");
        k.queued = k.submitted = CUPTI_TIMESTAMP_UNKNOWN; /* latency timestamps not enabled */
        k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    }
    emit(concurrent || serial ? &k : NULL, sizeof(k), corr);
}

void
mt_emu_memcpy_ran(cudaMemcpyKind kind, size_t bytes, int device, cudaStream_t stream,
                  uint64_t start_ns, uint64_t end_ns)
{
    const bool on = atomic_load(&on_memcpy);
    if (!on && !atomic_load(&on_external)) {
        return;
    }
    const uint32_t corr = atomic_fetch_add(&last_corr, 1) + 1;
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    /* host memory is reported pageable: the emulation cannot tell pinned memory apart */
    switch (kind) {
    case cudaMemcpyHostToDevice:
        m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
        m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
        m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        break;
    case cudaMemcpyDeviceToHost:
        m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
        m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
        break;
    case cudaMemcpyDeviceToDevice:
        m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
        m.srcKind = m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        break;
    case cudaMemcpyHostToHost:
        m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
        m.srcKind = m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
        break;
    default: /* cudaMemcpyDefault: the runtime reports the direction it resolved */
        m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
        break;
    }
    m.bytes = bytes;
    m.start = start_ns;
    m.end = end_ns;
    m.deviceId = (uint32_t)device;
    m.contextId = (uint32_t)device + 1;
    m.streamId = stream_id(stream);
    m.correlationId = corr;
    m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
    m.copyCount = 1;
    emit(on ? &m : NULL, sizeof(m), corr);
}

CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                               CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
    if (funcBufferRequested == NULL || funcBufferCompleted == NULL) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    pthread_mutex_lock(&lock);
    request_cb = funcBufferRequested;
    complete_cb = funcBufferCompleted;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

/* Kinds the emulation never produces are refused (CUPTI_ERROR_INVALID_KIND), so a client that
 * would wait for their records learns here that none will come. */
CUptiResult CUPTIAPI
cuptiActivityEnable(CUpti_ActivityKind kind)
{
    atomic_bool *flag = kind_flag(kind);
    if (flag == NULL) {
        return CUPTI_ERROR_INVALID_KIND;
    }
    atomic_store(flag, true);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityDisable(CUpti_ActivityKind kind)
{
    atomic_bool *flag = kind_flag(kind);
    if (flag == NULL) {
        return CUPTI_ERROR_INVALID_KIND;
    }
    atomic_store(flag, false);
    return CUPTI_SUCCESS;
}

/* Every record is complete when it is written (the work ran synchronously), so forced or not,
 * the partly filled buffer goes back too. */
CUptiResult CUPTIAPI
cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    pthread_mutex_lock(&lock);
    CUpti_BuffersCallbackCompleteFunc cb = complete_cb;
    uint8_t *b = NULL;
    size_t size = 0, used = 0;
    if (buf != NULL && buf_records > 0) {
        b = buf, size = buf_size, used = buf_used;
        buf = NULL;
        delivering++;
    }
    pthread_mutex_unlock(&lock);
    if (b) {
        deliver(cb, b, size, used);
    }
    pthread_mutex_lock(&lock);
    while (delivering > 0) {
        pthread_cond_wait(&delivered, &lock);
    }
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes, CUpti_Activity **record)
{
    if (buffer == NULL || record == NULL) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    uint8_t *at = buffer, *end = buffer + validBufferSizeBytes;
    if (*record != NULL) {
        uint8_t *prev = (uint8_t *)*record;
        size_t len = 0;
        if (prev < buffer || prev + sizeof(CUpti_Activity) > end ||
            (len = record_size((*record)->kind)) == 0 || prev + len > end) {
            return CUPTI_ERROR_INVALID_PARAMETER; /* not a record of this buffer */
        }
        at = prev + len;
    }
    if (at + sizeof(CUpti_Activity) > end) {
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    }
    const size_t len = record_size(((CUpti_Activity *)at)->kind);
    if (len == 0 || at + len > end) {
        return CUPTI_ERROR_INVALID_KIND;
    }
    *record = (CUpti_Activity *)at;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId, size_t *count)
{
    (void)context;
    (void)streamId;
    if (count == NULL) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    pthread_mutex_lock(&lock);
    *count = dropped;
    dropped = 0;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
    if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
        kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    if (stacks == NULL) {
        (void)pthread_once(&stacks_once, make_stacks_key);
        if ((stacks = calloc(1, sizeof(*stacks))) == NULL) {
            return CUPTI_ERROR_OUT_OF_MEMORY;
        }
        (void)pthread_setspecific(stacks_key, stacks);
    }
    if (stacks->depth[kind] == stacks->cap[kind]) {
        const int cap = stacks->cap[kind] ? 2 * stacks->cap[kind] : 16;
        uint64_t *grown = realloc(stacks->ids[kind], sizeof(*grown) * (size_t)cap);
        if (grown == NULL) {
            return CUPTI_ERROR_OUT_OF_MEMORY;
        }
        stacks->ids[kind] = grown;
        stacks->cap[kind] = cap;
    }
    stacks->ids[kind][stacks->depth[kind]++] = id;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *lastId)
{
    if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
        kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    if (stacks == NULL || stacks->depth[kind] == 0) {
        return CUPTI_ERROR_QUEUE_EMPTY;
    }
    const uint64_t id = stacks->ids[kind][--stacks->depth[kind]];
    if (lastId) {
        *lastId = id;
    }
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiGetTimestamp(uint64_t *timestamp)
{
    if (timestamp == NULL) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    *timestamp = mt_emu_now_ns();
    return CUPTI_SUCCESS;
}
