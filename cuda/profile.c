/* The CUDA backend's profiler: spans around CUDA and cuBLAS calls, and the device times of the work
 * they start (cuda/profile.h).
 *
 * Device times come from pairs of CUDA events recorded around each call while a recording with
 * CUDA activity is on. The events come from a per-device pool (creating an event costs more than
 * recording one) and are resolved when the recording stops: elapsed time from a base event,
 * recorded on an idle device when the recording (or its first use of that device) started, plus
 * the CPU time taken just after the base event completed. So a device time is never earlier than
 * the truth, and a kernel never appears to start before its launch.
 *
 * cuBLAS launches its own kernels, out of our sight. Where CUPTI loads (dlopen at the first
 * recording: minitorch never depends on it), its activity records give their real names and
 * times; each span pushes its correlation id as CUPTI's external id, so a record finds its span.
 * Without CUPTI a library call's GPU time is that of the events around the call, under the
 * call's name. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/profile.h"

#if defined(__has_include)
#if __has_include(<cupti_activity.h>)
#include <cupti_activity.h>
#include <cupti_version.h>
#if defined(CUPTI_API_VERSION) && CUPTI_API_VERSION >= 130000 /* the record layouts used below */
#define MT_HAVE_CUPTI 1
#endif
#endif
#endif

#define MAX_DEVICES 64

typedef struct pending {
    const char *name; /* a literal: the kernel's or library call's name */
    int kind; /* an mt_gpu_kind */
    int device;
    bool library; /* CUPTI may replace it with the kernels the call ran */
    bool covered; /* CUPTI reported those kernels */
    bool ok; /* both events recorded */
    int64_t corr;
    cudaEvent_t start, end;
    cudaStream_t stream; /* the launching thread's current stream: the events are recorded there */
    int stream_id; /* its number in the trace: 0 for the legacy default, else CUDA's id */
} pending;

typedef struct device_pool {
    cudaEvent_t *free_events;
    int nfree, capacity;
    cudaEvent_t base, spare; /* spare: a try at a better base (ensure_base) */
    bool base_ready; /* in this recording */
    int64_t base_ns; /* the CPU time of base */
} device_pool;

static atomic_bool collecting; /* device times wanted: between the start and stop hooks */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static device_pool pools[MAX_DEVICES];
static pending *records;
static int nrecords, records_capacity;
static unsigned generation; /* bumped by each stop: a span opened before it is stale */

/* An event from dev's pool (dev current), NULL when CUDA fails. Under lock. */
static cudaEvent_t
take_event(device_pool *p)
{
    if (p->nfree > 0) {
        return p->free_events[--p->nfree];
    }
    cudaEvent_t ev = NULL;
    if (cudaEventCreate(&ev) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return ev;
}

static void
give_event(device_pool *p, cudaEvent_t ev)
{
    if (ev == NULL) {
        return;
    }
    if (p->nfree == p->capacity) {
        int cap = p->capacity ? p->capacity * 2 : 64;
        cudaEvent_t *grown = realloc(p->free_events, sizeof(*grown) * (size_t)cap);
        if (grown == NULL) {
            (void)cudaEventDestroy(ev);
            return;
        }
        p->free_events = grown;
        p->capacity = cap;
    }
    p->free_events[p->nfree++] = ev;
}

/* Tries at most, and a window narrow enough to stop at, for a base (ensure_base). */
enum { BASE_TRIES = 16, BASE_WINDOW_NS = 100000 };

/* dev's time base for this recording: the device is drained first, so a base event completes as
 * soon as it is recorded, and the CPU time read after waiting for it stands for its time. That
 * time is late by however long the host took to see it complete: microseconds, or milliseconds
 * when the thread is descheduled in between (a loaded machine; the emulated device's worker
 * threads), which would put every device time of the recording as late, after the host calls
 * that waited for the work. So the base is recorded up to BASE_TRIES times and the try with the
 * narrowest record-to-seen window kept (stopping at one under BASE_WINDOW_NS). Under lock;
 * false when CUDA fails. */
static bool
ensure_base(int dev)
{
    device_pool *p = &pools[dev];
    if (p->base_ready) {
        return true;
    }
    if ((p->base == NULL && cudaEventCreate(&p->base) != cudaSuccess) ||
        (p->spare == NULL && cudaEventCreate(&p->spare) != cudaSuccess) ||
        cudaDeviceSynchronize() != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    int64_t best = INT64_MAX;
    for (int k = 0; k < BASE_TRIES && best > BASE_WINDOW_NS; k++) {
        int64_t before = mt_trace_now_ns();
        if (cudaEventRecord(p->spare, 0) != cudaSuccess ||
            cudaEventSynchronize(p->spare) != cudaSuccess) {
            (void)cudaGetLastError();
            return false;
        }
        int64_t seen = mt_trace_now_ns();
        if (seen - before < best) {
            best = seen - before;
            cudaEvent_t kept = p->spare;
            p->spare = p->base;
            p->base = kept;
            p->base_ns = seen;
        }
    }
    p->base_ready = true;
    return true;
}

/* ---- CUPTI, loaded when present ---- */

#ifdef MT_HAVE_CUPTI
static struct {
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*push)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*pop)(CUpti_ExternalCorrelationKind, uint64_t *);
    CUptiResult (*timestamp)(uint64_t *);
} cupti;
static int cupti_state = -1; /* -1 not tried, 0 unavailable, 1 loaded */
static atomic_bool cupti_on; /* its activities are enabled (this recording) */
static int64_t cupti_offset_ns; /* CPU clock minus CUPTI's */

/* What CUPTI reported in this recording; its buffers are parsed as they complete. */
typedef struct device_record {
    char *name;
    int kind, device, stream;
    uint32_t corr; /* CUPTI's */
    int64_t start_ns, end_ns;
} device_record;
typedef struct external {
    uint32_t corr;
    int64_t ours;
} external;
static pthread_mutex_t cupti_lock = PTHREAD_MUTEX_INITIALIZER;
static device_record *found;
static int nfound, found_capacity;
static external *links;
static int nlinks, links_capacity;

#define CUPTI_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0
#define CUPTI_BUFFER (1 << 20)

static bool
grow(void **arr, int n, int *cap, size_t size)
{
    if (n < *cap) {
        return true;
    }
    int c = *cap ? *cap * 2 : 256;
    void *g = realloc(*arr, size * (size_t)c);
    if (g == NULL) {
        return false;
    }
    *arr = g;
    *cap = c;
    return true;
}

static void
add_found(const char *name, int kind, uint32_t device, uint32_t stream, uint32_t corr,
          uint64_t start, uint64_t end)
{
    if (!grow((void **)&found, nfound, &found_capacity, sizeof(*found))) {
        return;
    }
    char *copy = strdup(name ? name : "");
    if (copy) {
        found[nfound++] = (device_record){copy, kind,           (int)device, (int)stream,
                                          corr, (int64_t)start, (int64_t)end};
    }
}

static void CUPTIAPI
buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, CUPTI_BUFFER);
    *size = *buffer ? CUPTI_BUFFER : 0;
    *max_records = 0;
}

static void CUPTIAPI
buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *r = NULL;
    pthread_mutex_lock(&cupti_lock);
    while (buffer && cupti.next_record(buffer, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
            r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
            add_found(k->name, MT_GPU_KERNEL, k->deviceId, k->streamId, k->correlationId, k->start,
                      k->end);
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)r;
            const char *name = m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD   ? "Memcpy HtoD"
                               : m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? "Memcpy DtoH"
                               : m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD ? "Memcpy DtoD"
                                                                                : "Memcpy";
            add_found(name, MT_GPU_MEMCPY, m->deviceId, m->streamId, m->correlationId, m->start,
                      m->end);
        } else if (r->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
            const CUpti_ActivityExternalCorrelation *x = (const CUpti_ActivityExternalCorrelation *)
                r;
            if (x->externalKind == CUPTI_KIND &&
                grow((void **)&links, nlinks, &links_capacity, sizeof(*links))) {
                links[nlinks++] = (external){x->correlationId, (int64_t)x->externalId};
            }
        }
    }
    pthread_mutex_unlock(&cupti_lock);
    free(buffer);
}

static bool
cupti_load(void)
{
    if (cupti_state >= 0) {
        return cupti_state == 1;
    }
    cupti_state = 0;
    const char *env = getenv("MINITORCH_CUPTI");
    if (env && strcmp(env, "0") == 0) {
        return false;
    }
#ifdef MT_CUDA_EMU
    /* the emulated device's CUPTI (cuda/emu/cupti.c) is linked in: nothing to load */
    cupti.register_callbacks = cuptiActivityRegisterCallbacks;
    cupti.enable = cuptiActivityEnable;
    cupti.disable = cuptiActivityDisable;
    cupti.flush_all = cuptiActivityFlushAll;
    cupti.next_record = cuptiActivityGetNextRecord;
    cupti.push = cuptiActivityPushExternalCorrelationId;
    cupti.pop = cuptiActivityPopExternalCorrelationId;
    cupti.timestamp = cuptiGetTimestamp;
#else
    static const char *const names[] = {"libcupti.so", "libcupti.so.13",
                                        "/usr/local/cuda/lib64/libcupti.so",
                                        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"};
    void *lib = NULL;
    for (size_t k = 0; lib == NULL && k < sizeof(names) / sizeof(names[0]); k++) {
        lib = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
    }
    if (lib == NULL) {
        return false;
    }
#define LOAD(field, symbol) *(void **)&cupti.field = dlsym(lib, symbol)
    LOAD(register_callbacks, "cuptiActivityRegisterCallbacks");
    LOAD(enable, "cuptiActivityEnable");
    LOAD(disable, "cuptiActivityDisable");
    LOAD(flush_all, "cuptiActivityFlushAll");
    LOAD(next_record, "cuptiActivityGetNextRecord");
    LOAD(push, "cuptiActivityPushExternalCorrelationId");
    LOAD(pop, "cuptiActivityPopExternalCorrelationId");
    LOAD(timestamp, "cuptiGetTimestamp");
#undef LOAD
#endif
    if (!cupti.register_callbacks || !cupti.enable || !cupti.disable || !cupti.flush_all ||
        !cupti.next_record || !cupti.push || !cupti.pop || !cupti.timestamp ||
        cupti.register_callbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
        return false; /* the library stays loaded: CUPTI may hold callbacks into it */
    }
    cupti_state = 1;
    return true;
}

static const CUpti_ActivityKind cupti_kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                 CUPTI_ACTIVITY_KIND_MEMCPY,
                                                 CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

static void
cupti_start(void)
{
    if (!cupti_load()) {
        return;
    }
    bool ok = true;
    for (size_t k = 0; k < sizeof(cupti_kinds) / sizeof(cupti_kinds[0]); k++) {
        ok = ok && cupti.enable(cupti_kinds[k]) == CUPTI_SUCCESS;
    }
    uint64_t t = 0;
    int64_t cpu = mt_trace_now_ns();
    ok = ok && cupti.timestamp(&t) == CUPTI_SUCCESS;
    cupti_offset_ns = cpu - (int64_t)t;
    if (!ok) {
        for (size_t k = 0; k < sizeof(cupti_kinds) / sizeof(cupti_kinds[0]); k++) {
            (void)cupti.disable(cupti_kinds[k]);
        }
    }
    atomic_store(&cupti_on, ok);
}

static int
by_cupti_corr(const void *a, const void *b)
{
    uint32_t x = ((const external *)a)->corr, y = ((const external *)b)->corr;
    return (x > y) - (x < y);
}

/* Our correlation id for CUPTI's, 0 when none; links sorted by CUPTI's. */
static int64_t
ours_for(uint32_t corr)
{
    external key = {corr, 0};
    const external *hit = bsearch(&key, links, (size_t)nlinks, sizeof(*links), by_cupti_corr);
    return hit ? hit->ours : 0;
}

static int
by_corr(const void *a, const void *b)
{
    int64_t x = ((const pending *)a)->corr, y = ((const pending *)b)->corr;
    return (x > y) - (x < y);
}

/* The pending record of a span; records sorted by correlation id. */
static pending *
record_for(int64_t ours)
{
    pending key = {.corr = ours};
    return ours ? bsearch(&key, records, (size_t)nrecords, sizeof(*records), by_corr) : NULL;
}

/* Reports the kernels of library calls (ours have their events) on the stream numbers our own
 * launches show (CUPTI numbers streams its own way). Under lock. */
static void
cupti_stop(mt_trace_gpu_report report)
{
    if (!atomic_exchange(&cupti_on, false)) {
        return;
    }
    /* disabled first, so no other thread's records land after the flush (in the next one's) */
    for (size_t k = 0; k < sizeof(cupti_kinds) / sizeof(cupti_kinds[0]); k++) {
        (void)cupti.disable(cupti_kinds[k]);
    }
    (void)cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&cupti_lock);
    if (nlinks > 0) {
        qsort(links, (size_t)nlinks, sizeof(*links), by_cupti_corr);
    }
    if (nrecords > 0) { /* threads may have opened them out of id order */
        qsort(records, (size_t)nrecords, sizeof(*records), by_corr);
    }
    int default_stream = -1; /* CUPTI's number of the stream our events are recorded on */
    for (int k = 0; k < nfound && default_stream < 0; k++) {
        pending *p = record_for(ours_for(found[k].corr));
        if (p && !p->library) {
            default_stream = found[k].stream;
        }
    }
    for (int k = 0; k < nfound; k++) {
        const device_record *f = &found[k];
        int64_t ours = ours_for(f->corr);
        pending *p = ours ? record_for(ours) : NULL;
        if (p && p->library) {
            p->covered = true;
            report(f->kind, f->name, f->device, f->stream == default_stream ? 0 : f->stream, ours,
                   f->start_ns + cupti_offset_ns, f->end_ns + cupti_offset_ns);
        }
    }
    for (int k = 0; k < nfound; k++) {
        free(found[k].name);
    }
    nfound = nlinks = 0;
    pthread_mutex_unlock(&cupti_lock);
}

/* Whether corr was pushed: the pop must pair with the push whatever the recording state is by
 * then (a recording stopped in between would leave a stale id on the thread's stack). */
static bool
cupti_push(int64_t corr)
{
    return atomic_load(&cupti_on) && cupti.push(CUPTI_KIND, (uint64_t)corr) == CUPTI_SUCCESS;
}

static void
cupti_pop(void)
{
    uint64_t last = 0;
    (void)cupti.pop(CUPTI_KIND, &last);
}
#else
static void
cupti_start(void)
{
}
static void
cupti_stop(mt_trace_gpu_report report)
{
    (void)report;
}
static bool
cupti_push(int64_t corr)
{
    (void)corr;
    return false;
}
static void
cupti_pop(void)
{
}
#endif

/* ---- spans ---- */

static bool
grow_records(void)
{
    int cap = records_capacity ? records_capacity * 2 : 256;
    pending *g = realloc(records, sizeof(*g) * (size_t)cap);
    if (g == NULL) {
        return false;
    }
    records = g;
    records_capacity = cap;
    return true;
}

/* A pending record for the work about to be enqueued, its start event recorded; -1 when none. */
static int
open_record(const char *name, int kind, bool library, int64_t corr, unsigned *gen)
{
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= MAX_DEVICES) {
        (void)cudaGetLastError();
        return -1;
    }
    device_pool *p = &pools[dev];
    /* the work goes to the current stream, so its events must too, or user streams mis-time */
    cudaStream_t stream = mt_cuda_current_stream(dev);
    unsigned long long sid = 0;
    if (stream != NULL && cudaStreamGetId(stream, &sid) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    pthread_mutex_lock(&lock);
    int at = -1;
    cudaEvent_t start = NULL, end = NULL;
    if (atomic_load(&collecting) && ensure_base(dev) &&
        (nrecords < records_capacity || grow_records()) && (start = take_event(p)) &&
        (end = take_event(p))) {
        at = nrecords++;
        records[at] = (pending){name, kind,  dev, library, false,   false,
                                corr, start, end, stream,  (int)sid};
        *gen = generation;
    } else {
        give_event(p, start);
    }
    pthread_mutex_unlock(&lock);
    if (at >= 0 && cudaEventRecord(start, stream) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1; /* stays not ok: skipped at the stop */
    }
    return at;
}

static void
close_record(int at, unsigned gen)
{
    pthread_mutex_lock(&lock);
    if (gen == generation && at < nrecords) {
        records[at].ok = cudaEventRecord(records[at].end, records[at].stream) == cudaSuccess;
        if (!records[at].ok) {
            (void)cudaGetLastError();
        }
    }
    pthread_mutex_unlock(&lock);
}

/* A kernel's name, demangled ("void ew_kernel<float>(mt_cuda_ew*)"), kept for the process's
 * life (the recording points at it); site when CUDA cannot name it. */
char *__cxa_demangle(const char *mangled, char *out, size_t *n, int *status); /* libstdc++ */

#define NAME_SLOTS 1024 /* kernels are a fixed set, a few hundred at most */
static struct {
    const void *fn;
    const char *name;
} names[NAME_SLOTS];
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *
kernel_name(const void *fn, const char *site)
{
    size_t h = ((uintptr_t)fn >> 4) % NAME_SLOTS;
    const char *out = site;
    pthread_mutex_lock(&names_lock);
    for (size_t k = 0; k < NAME_SLOTS; k++, h = (h + 1) % NAME_SLOTS) {
        if (names[h].fn == fn) {
            out = names[h].name;
            break;
        }
        if (names[h].fn == NULL) {
            const char *mangled = NULL;
#if CUDART_VERSION >= 12030
            if (cudaFuncGetName(&mangled, fn) != cudaSuccess) {
                (void)cudaGetLastError();
                mangled = NULL;
            }
#endif
            int status = -1;
            char *plain = mangled ? __cxa_demangle(mangled, NULL, NULL, &status) : NULL;
            char *kept = plain ? plain : strdup(mangled ? mangled : site);
            if (kept) {
                names[h].fn = fn;
                names[h].name = out = kept;
            }
            break;
        }
    }
    pthread_mutex_unlock(&names_lock);
    return out;
}

/* Opens a span; a device record too when it starts device work: named gpu_name, or as CUDA
 * names kernel (found only while recording). */
static mt_cuda_span
span_open(const char *name, mt_layer layer, const char *detail, int kind, const char *gpu_name,
          const void *kernel, const char *site)
{
    mt_cuda_span s = {false, -1, 0, false};
    bool device_work = gpu_name != NULL || kernel != NULL;
    int64_t corr = mt_trace_span_enter(layer, name, detail, device_work);
    if (corr < 0) {
        return s;
    }
    s.traced = true;
    if (device_work) {
        if (kernel != NULL) {
            gpu_name = kernel_name(kernel, site);
        }
        s.slot = open_record(gpu_name, kind, layer == MT_LAYER_LIBRARY, corr, &s.gen);
        s.external = cupti_push(corr);
    }
    return s;
}

mt_cuda_span
mt_cuda_span_begin(const char *name, mt_layer layer, const char *detail, int kind,
                   const char *gpu_name)
{
    return span_open(name, layer, detail, kind, gpu_name, NULL, NULL);
}

void
mt_cuda_span_end(mt_cuda_span *s)
{
    if (!s->traced) {
        return;
    }
    if (s->external) {
        cupti_pop();
    }
    mt_trace_exit();
    if (s->slot >= 0) {
        close_record(s->slot, s->gen);
    }
    s->traced = false;
}

mt_cuda_span
mt_cuda_span_launch(const void *kernel, const char *site)
{
    return span_open("LaunchKernel", MT_LAYER_RUNTIME, "CUDA", MT_GPU_KERNEL, NULL, kernel, site);
}

/* ---- the hooks _C calls at a recording's start and stop ---- */

void
mt_cuda_profiler_start(void)
{
    if (mt_cuda_device_count() == 0) {
        return;
    }
    pthread_mutex_lock(&lock);
    for (int d = 0; d < MAX_DEVICES; d++) {
        pools[d].base_ready = false;
    }
    int dev = 0;
    if (cudaGetDevice(&dev) == cudaSuccess && dev >= 0 && dev < MAX_DEVICES) {
        (void)ensure_base(dev); /* the others on their first use */
    }
    (void)cudaGetLastError();
    atomic_store(&collecting, true);
    pthread_mutex_unlock(&lock);
    cupti_start();
}

static int64_t
to_ns(float ms)
{
    return (int64_t)((double)ms * 1e6);
}

void
mt_cuda_profiler_stop(mt_trace_gpu_report report)
{
    atomic_store(&collecting, false);
    pthread_mutex_lock(&lock);
    cupti_stop(report); /* marks the library records it covered */
    for (int k = 0; k < nrecords; k++) {
        pending *r = &records[k];
        device_pool *p = &pools[r->device];
        float a = 0, b = 0;
        if (r->ok && !r->covered && cudaEventSynchronize(r->end) == cudaSuccess &&
            cudaEventElapsedTime(&a, p->base, r->start) == cudaSuccess &&
            cudaEventElapsedTime(&b, p->base, r->end) == cudaSuccess) {
            report(r->kind, r->name, r->device, r->stream_id, r->corr, p->base_ns + to_ns(a),
                   p->base_ns + to_ns(b));
        }
        (void)cudaGetLastError();
        give_event(p, r->start);
        give_event(p, r->end);
    }
    nrecords = 0;
    generation++;
    pthread_mutex_unlock(&lock);
}
