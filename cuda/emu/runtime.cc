/* The emulated CUDA runtime (cudart on the CPU): devices, device memory, streams, events, the
 * clock and the error state, with CUDA's semantics and error codes. Kernel launches are
 * launch.cc's. By default everything runs synchronously on the calling thread, so a stream is a
 * name and an event a timestamp. MINITORCH_EMU_ASYNC=1 makes streams queues, each run in order
 * by its own worker thread (see "the asynchronous mode" below), so that a missing stream wait or
 * host synchronisation shows as wrong data, as on a GPU.
 *
 * It is strict where a GPU would fail (emu_plan.md): a pointer given as device memory must lie
 * inside a live cudaMalloc block, a copy's kind must match where its pointers are, a stream must
 * belong to the current device. A lenient fake would hide exactly the backend's bugs. Never
 * exits: every failure is a cudaError_t, recorded as the thread's last error. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime.h"

#define MT_EMU_ALIGN 256 /* cudaMalloc's alignment; sizes are counted in these units */
#define MT_EMU_POISON_BYTES ((size_t)64 << 20) /* new blocks are filled with 0xff up to this */

/* ---- configuration, read once ---- */

static int num_devices = 2;                    /* MINITORCH_EMU_DEVICES */
static size_t memory_per_device = (size_t)4 << 30; /* MINITORCH_EMU_MEMORY, bytes */
static std::once_flag config_once;

static void
read_config()
{
    const char *n = getenv("MINITORCH_EMU_DEVICES"), *m = getenv("MINITORCH_EMU_MEMORY");
    if (n && *n) {
        long v = strtol(n, NULL, 10);
        num_devices = v < 0 ? 0 : v > 64 ? 64 : (int)v;
    }
    if (m && *m) {
        memory_per_device = (size_t)strtoull(m, NULL, 10);
    }
}

static int
device_count()
{
    std::call_once(config_once, read_config);
    return num_devices;
}

void
mt_emu_memory_config(int *devices, size_t *per_device)
{
    *devices = device_count();
    *per_device = memory_per_device;
}

bool
mt_emu_valid_device(int device)
{
    return device >= 0 && device < device_count();
}

/* ---- host synchronisations, counted ---- */

/* Every call that makes the host wait for device work: cudaDeviceSynchronize,
 * cudaStreamSynchronize, cudaEventSynchronize and a blocking cudaMemcpy to the host (a device to
 * host copy returns only when the copy, and so the work before it, has run). Tests read it
 * (mt_emu_sync_count) to prove an op leaves the stream running. */
static std::atomic<unsigned long long> host_syncs{0};

extern "C" unsigned long long
mt_emu_sync_count(void)
{
    return host_syncs.load();
}

static void
host_sync()
{
    host_syncs.fetch_add(1);
}

/* ---- errors ---- */

static thread_local cudaError_t last_error = cudaSuccess;

cudaError_t
mt_emu_error(cudaError_t err)
{
    if (err != cudaSuccess) {
        last_error = err;
    }
    return err;
}

extern "C" cudaError_t
cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

extern "C" cudaError_t
cudaPeekAtLastError(void)
{
    return last_error;
}

static const struct {
    cudaError_t code;
    const char *name, *text;
} error_table[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress",
     "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources",
     "too many resources requested for launch"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

extern "C" const char *
cudaGetErrorString(cudaError_t error)
{
    for (const auto &e : error_table) {
        if (e.code == error) {
            return e.text;
        }
    }
    return "unrecognized error code";
}

extern "C" const char *
cudaGetErrorName(cudaError_t error)
{
    for (const auto &e : error_table) {
        if (e.code == error) {
            return e.name;
        }
    }
    return "cudaErrorUnknown";
}

/* ---- the asynchronous mode (MINITORCH_EMU_ASYNC=1) ----
 *
 * Each stream is a queue of work (kernel launches, copies and fills, event records, waits) run
 * in order by the stream's own worker thread, started at its first work; each device's legacy
 * default stream (NULL, cudaStreamLegacy, and cudaStreamPerThread, which the emulation does not
 * tell apart from it) is one more. The host returns once the work is queued. A position in a
 * queue is a ticket: work number t has run when the queue's count of completed work reaches t.
 * An event record is work that stamps the event's time when it runs, and the event remembers its
 * queue and ticket; cudaStreamWaitEvent queues a wait for that ticket on the other stream.
 *
 * CUDA's legacy default stream is modelled: work queued on it waits for the work queued before it
 * on every blocking stream (cudaStreamDefault) of its device, and work queued on a blocking stream
 * waits for the legacy stream's earlier work; non-blocking streams do neither. The library calls
 * that compute (cuBLAS's and cuBLASLt's products, cuDNN's convolutions) are checked on the
 * calling thread, then queued like kernels (mt_emu_stream_defer); the others (CUB, cuBLAS's
 * level 1 and 2) run on the calling thread once their stream's earlier work has run
 * (mt_emu_stream_drain): stream-ordered, but the host waits for them. Work that fails while
 * running (none of ours does yet: every check is made when the work is queued) leaves its error
 * for the next synchronisation or launch of the device, as CUDA's asynchronous errors. */

namespace
{
struct work {
    std::function<cudaError_t()> run;
    mt_emu_corr corr; /* the queuing thread's CUPTI external correlation ids */
};

struct queue {
    std::mutex m;
    std::condition_variable has_work, done;
    std::deque<work> items;
    uint64_t submitted = 0, completed = 0; /* under m */
    bool started = false, destroyed = false; /* under m */
    /* under m; mt_emu_debug_stream_hold: work queued after number hold_after waits */
    bool held = false;
    uint64_t hold_after = 0;
    int device = 0;
    bool legacy = false;   /* a device's legacy default stream */
    bool blocking = false; /* created with cudaStreamDefault: synchronises with the legacy one */
    std::atomic<unsigned> delay_us{0}; /* mt_emu_debug_stream_delay: sleeps before each work */
    queue *next_made = nullptr; /* the list of every queue made (under queues_lock) */
};
} // namespace

static bool
async_mode()
{
    static const bool on = [] {
        const char *v = getenv("MINITORCH_EMU_ASYNC");
        return v != NULL && strcmp(v, "1") == 0;
    }();
    return on;
}

bool
mt_emu_async(void)
{
    return async_mode();
}

/* Queues are never freed (a destroyed stream's ends its worker once drained), so an event keeps
 * its queue. queues_lock: the registry below; taken after handle_lock, before a queue's m. */
static std::mutex queues_lock;
static queue *legacy_queues[64];
static std::vector<queue *> device_queues[64]; /* each device's created streams' queues */
static std::atomic<int> async_errors[64];       /* a failed work's error, for the next sync */
static queue *made_queues; /* every queue, kept reachable (a plain pointer: no destructor) */

/* A new queue of the device (queues_lock held). */
static queue *
make_queue(int device)
{
    queue *q = new queue;
    q->device = device;
    q->next_made = made_queues;
    made_queues = q;
    return q;
}

static queue *
legacy_queue(int device)
{
    std::lock_guard<std::mutex> g(queues_lock);
    if (legacy_queues[device] == nullptr) {
        queue *q = make_queue(device);
        q->legacy = true;
        legacy_queues[device] = q;
    }
    return legacy_queues[device];
}

static void
note_async_error(int device, cudaError_t err)
{
    int none = cudaSuccess;
    async_errors[device].compare_exchange_strong(none, (int)err);
}

/* The device's error left by failed work (reported once), cudaSuccess when none. */
static cudaError_t
take_async_error(int device)
{
    return (cudaError_t)async_errors[device].exchange(cudaSuccess);
}

static void
worker_main(queue *q)
{
    for (;;) {
        work w;
        {
            std::unique_lock<std::mutex> l(q->m);
            q->has_work.wait(l, [q] {
                return (!q->items.empty() && (!q->held || q->completed < q->hold_after)) ||
                       (q->items.empty() && q->destroyed);
            });
            if (q->items.empty()) {
                q->started = false; /* destroyed and drained */
                return;
            }
            w = std::move(q->items.front());
            q->items.pop_front();
        }
        const unsigned delay = q->delay_us.load(std::memory_order_relaxed);
        if (delay) {
            usleep(delay);
        }
        mt_emu_corr_use(&w.corr);
        const cudaError_t err = w.run();
        mt_emu_corr_use(NULL);
        if (err != cudaSuccess) {
            note_async_error(q->device, err);
        }
        w.run = nullptr; /* what it captured goes before the work counts as done */
        {
            std::lock_guard<std::mutex> g(q->m);
            q->completed++;
        }
        q->done.notify_all();
    }
}

/* The ticket of q's last queued work while some has not run, else 0 (nothing to wait for). */
static uint64_t
pending_tail(queue *q)
{
    std::lock_guard<std::mutex> g(q->m);
    return q->completed < q->submitted ? q->submitted : 0;
}

static bool
reached(queue *q, uint64_t ticket)
{
    std::lock_guard<std::mutex> g(q->m);
    return q->completed >= ticket;
}

static void
wait_for(queue *q, uint64_t ticket)
{
    std::unique_lock<std::mutex> l(q->m);
    q->done.wait(l, [q, ticket] { return q->completed >= ticket; });
}

static void drain_all();

static uint64_t
enqueue(queue *q, std::function<cudaError_t()> fn)
{
    static std::once_flag at_exit_once;
    std::call_once(at_exit_once, [] { atexit(drain_all); });
    work w;
    w.run = std::move(fn);
    mt_emu_corr_save(&w.corr);
    uint64_t ticket;
    {
        std::lock_guard<std::mutex> g(q->m);
        q->items.push_back(std::move(w));
        ticket = ++q->submitted;
        if (!q->started) {
            q->started = true;
            std::thread(worker_main, q).detach();
        }
    }
    q->has_work.notify_one();
    return ticket;
}

/* A work that waits until other reaches ticket. */
static std::function<cudaError_t()>
wait_work(queue *other, uint64_t ticket)
{
    return [other, ticket] {
        wait_for(other, ticket);
        return cudaSuccess;
    };
}

/* The blocking streams' queues of a device (a copy: the registry may grow meanwhile). */
static std::vector<queue *>
blocking_queues(int device)
{
    std::lock_guard<std::mutex> g(queues_lock);
    std::vector<queue *> out;
    for (queue *q : device_queues[device]) {
        if (q->blocking) {
            out.push_back(q);
        }
    }
    return out;
}

/* Queues fn on q after CUDA's implicit waits between the legacy and blocking streams; its
 * ticket. */
static uint64_t
submit(queue *q, std::function<cudaError_t()> fn)
{
    if (q->legacy) {
        for (queue *b : blocking_queues(q->device)) {
            if (uint64_t t = pending_tail(b)) {
                enqueue(q, wait_work(b, t));
            }
        }
    } else if (q->blocking) {
        queue *l = legacy_queue(q->device);
        if (uint64_t t = pending_tail(l)) {
            enqueue(q, wait_work(l, t));
        }
    }
    return enqueue(q, std::move(fn));
}

/* The host waits for everything queued so far on q (and what q's next work would wait for). */
static void
drain(queue *q)
{
    if (q->legacy) {
        for (queue *b : blocking_queues(q->device)) {
            wait_for(b, pending_tail(b));
        }
    } else if (q->blocking) {
        queue *l = legacy_queue(q->device);
        wait_for(l, pending_tail(l));
    }
    wait_for(q, pending_tail(q));
}

/* The host waits for every stream of the device. */
static void
drain_device(int device)
{
    std::vector<queue *> all;
    {
        std::lock_guard<std::mutex> g(queues_lock);
        all = device_queues[device];
    }
    all.push_back(legacy_queue(device));
    for (queue *q : all) {
        wait_for(q, pending_tail(q));
    }
}

/* At exit: the queued work runs before the runtime's state goes. */
static void
drain_all()
{
    for (int d = 0; d < 64; d++) {
        bool any;
        {
            std::lock_guard<std::mutex> g(queues_lock);
            any = legacy_queues[d] != nullptr || !device_queues[d].empty();
        }
        if (any) {
            drain_device(d);
        }
    }
}

/* ---- devices ---- */

static thread_local int current_device = 0;

int
mt_emu_current_device(void)
{
    return current_device;
}

extern "C" cudaError_t
cudaGetDeviceCount(int *count)
{
    if (count == NULL) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    *count = device_count();
    return *count ? cudaSuccess : mt_emu_error(cudaErrorNoDevice);
}

extern "C" cudaError_t
cudaGetDevice(int *device)
{
    if (device == NULL) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    if (device_count() == 0) {
        return mt_emu_error(cudaErrorNoDevice);
    }
    *device = current_device;
    return cudaSuccess;
}

extern "C" cudaError_t
cudaSetDevice(int device)
{
    if (device_count() == 0) {
        return mt_emu_error(cudaErrorNoDevice);
    }
    if (!mt_emu_valid_device(device)) {
        return mt_emu_error(cudaErrorInvalidDevice);
    }
    current_device = device;
    return cudaSuccess;
}

extern "C" cudaError_t
cudaGetDeviceProperties(cudaDeviceProp *prop, int device)
{
    if (prop == NULL) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    if (!mt_emu_valid_device(device)) {
        return mt_emu_error(cudaErrorInvalidDevice);
    }
    memset(prop, 0, sizeof(*prop));
    snprintf(prop->name, sizeof(prop->name), "minitorch emulated CUDA device (CPU)");
    prop->totalGlobalMem = memory_per_device;
    prop->sharedMemPerBlock = 48 << 10; /* an H200's limits (compute capability 9.0) */
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 2147483647;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = 132;
    return cudaSuccess;
}

extern "C" cudaError_t
cudaDeviceSynchronize(void)
{
    host_sync();
    if (device_count() == 0) {
        return mt_emu_error(cudaErrorNoDevice);
    }
    if (async_mode()) {
        drain_device(current_device);
        return mt_emu_error(take_async_error(current_device));
    }
    return cudaSuccess;
}

extern "C" cudaError_t
cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    if (leastPriority) {
        *leastPriority = 0; /* an H100's range: 0 (lowest) to -5 (most urgent) */
    }
    if (greatestPriority) {
        *greatestPriority = -5;
    }
    return cudaSuccess;
}

extern "C" cudaError_t
cudaDriverGetVersion(int *driverVersion)
{
    if (driverVersion == NULL) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    *driverVersion = CUDART_VERSION;
    return cudaSuccess;
}

extern "C" cudaError_t
cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (runtimeVersion == NULL) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

uint64_t
mt_emu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- memory: the registry of live blocks ---- */

namespace
{
struct block {
    size_t size;
    int device; /* -1: pinned host memory (cudaMallocHost) */
};
} // namespace

static std::mutex mem_lock;
static std::map<uintptr_t, block> blocks; /* by start address */
static size_t used[64];                   /* bytes of each device's live blocks */

/* The block holding p (mem_lock held), or blocks.end(). */
static std::map<uintptr_t, block>::iterator
block_at(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    auto it = blocks.upper_bound(a);
    if (it == blocks.begin()) {
        return blocks.end();
    }
    --it;
    return a < it->first + (it->second.size ? it->second.size : 1) ? it : blocks.end();
}

/* Where [p, p + bytes) lies: 1 inside one device block (its device into *device), 0 outside
 * every device block (host memory, pinned or not), -1 starting in a device block but running
 * past its end. */
static int
where(const void *p, size_t bytes, int *device)
{
    std::lock_guard<std::mutex> g(mem_lock);
    auto it = block_at(p);
    if (it == blocks.end() || it->second.device < 0) {
        return 0;
    }
    if ((uintptr_t)p + bytes > it->first + it->second.size) {
        return -1;
    }
    if (device) {
        *device = it->second.device;
    }
    return 1;
}

bool
mt_emu_block_try_find(const void *p, uintptr_t *start, size_t *size, int *device)
{
    if (!mem_lock.try_lock()) {
        return false;
    }
    auto it = block_at(p);
    bool found = it != blocks.end() && it->second.device >= 0;
    if (found) {
        *start = it->first;
        *size = it->second.size;
        *device = it->second.device;
    }
    mem_lock.unlock();
    return found;
}

bool
mt_emu_device_range(const void *p, size_t bytes, int *device)
{
    int d = -1;
    if (p == NULL || where(p, bytes, &d) != 1) {
        return false;
    }
    if (device) {
        *device = d;
    }
    return true;
}

bool
mt_emu_pinned_range(const void *p, size_t bytes)
{
    std::lock_guard<std::mutex> g(mem_lock);
    auto it = block_at(p);
    return p != NULL && it != blocks.end() && it->second.device < 0 &&
           (uintptr_t)p + bytes <= it->first + it->second.size;
}

static cudaError_t
allocate(void **out, size_t size, int device)
{
    size_t rounded = (size + MT_EMU_ALIGN - 1) / MT_EMU_ALIGN * MT_EMU_ALIGN;
    if (rounded < size) {
        return cudaErrorMemoryAllocation;
    }
    std::lock_guard<std::mutex> g(mem_lock);
    if (device >= 0 && rounded > memory_per_device - used[device]) {
        return cudaErrorMemoryAllocation;
    }
    /* Device blocks come from the guarded arena (guard.cc), pinned host memory from the heap. */
    const bool arena = device >= 0 && mt_emu_guard_on();
    void *p = arena ? mt_emu_arena_alloc(device, rounded) : aligned_alloc(MT_EMU_ALIGN, rounded);
    if (p == NULL) {
        return cudaErrorMemoryAllocation;
    }
    /* A GPU's fresh memory holds whatever was there: a kernel reading what nobody wrote reads
     * NaNs and -1s here, not the zeros of a fresh mmap. */
    mt_emu_device_work_begin();
    memset(p, 0xff, rounded < MT_EMU_POISON_BYTES ? rounded : MT_EMU_POISON_BYTES);
    mt_emu_device_work_end();
    blocks[(uintptr_t)p] = block{size, device};
    if (device >= 0) {
        used[device] += rounded;
    }
    *out = p;
    return cudaSuccess;
}

/* Frees the block starting at p of the given kind (device true: cudaMalloc's). */
static cudaError_t
release(void *p, bool device)
{
    std::lock_guard<std::mutex> g(mem_lock);
    auto it = blocks.find((uintptr_t)p);
    if (it == blocks.end() || (it->second.device >= 0) != device) {
        return cudaErrorInvalidValue;
    }
    const size_t rounded = (it->second.size + MT_EMU_ALIGN - 1) / MT_EMU_ALIGN * MT_EMU_ALIGN;
    if (device) {
        used[it->second.device] -= rounded;
    }
    blocks.erase(it);
    if (device && mt_emu_guard_on()) {
        mt_emu_arena_free(p, rounded);
    } else {
        free(p);
    }
    return cudaSuccess;
}

extern "C" cudaError_t
cudaMalloc(void **devPtr, size_t size)
{
    if (devPtr == NULL) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    if (device_count() == 0) {
        return mt_emu_error(cudaErrorNoDevice);
    }
    if (size == 0) {
        *devPtr = NULL; /* as CUDA: success, and no block */
        return cudaSuccess;
    }
    return mt_emu_error(allocate(devPtr, size, current_device));
}

extern "C" cudaError_t
cudaFree(void *devPtr)
{
    if (devPtr == NULL) {
        return cudaSuccess;
    }
    int device = -1;
    if (async_mode() && where(devPtr, 1, &device) == 1) {
        drain_device(device); /* cudaFree synchronises: no queued work uses the block after */
    }
    return mt_emu_error(release(devPtr, true));
}

extern "C" cudaError_t
cudaMallocHost(void **ptr, size_t size)
{
    if (ptr == NULL) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    if (size == 0) {
        *ptr = NULL;
        return cudaSuccess;
    }
    return mt_emu_error(allocate(ptr, size, -1));
}

extern "C" cudaError_t
cudaFreeHost(void *ptr)
{
    if (ptr == NULL) {
        return cudaSuccess;
    }
    if (async_mode()) {
        drain_all(); /* as cudaFree: no queued copy uses the pinned memory after */
    }
    return mt_emu_error(release(ptr, false));
}

extern "C" cudaError_t
cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    if (free_bytes == NULL || total == NULL) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    if (device_count() == 0) {
        return mt_emu_error(cudaErrorNoDevice);
    }
    std::lock_guard<std::mutex> g(mem_lock);
    *total = memory_per_device;
    *free_bytes = memory_per_device - used[current_device];
    return cudaSuccess;
}

/* ---- streams and events: opaque handles that are never reused, so a destroyed one is
 * recognised as such ---- */

namespace
{
struct stream_info {
    int device;
    unsigned flags;
    int priority;
    unsigned long long id;
    queue *q; /* its work, in the asynchronous mode */
};
struct event_info {
    int device;
    unsigned flags;
    bool recorded;
    uint64_t ns;
    /* the asynchronous mode: the last record is the work `ticket` of queue q (null: none);
     * records are counted so that only the last one's work stamps ns */
    queue *q;
    uint64_t ticket, records;
};
} // namespace

static std::mutex handle_lock;
static std::unordered_map<uintptr_t, stream_info> streams;
static std::unordered_map<uintptr_t, event_info> events;
static uintptr_t next_handle = 0x5eed0000; /* handles are never dereferenced */

static uintptr_t
new_handle()
{
    next_handle += 16;
    return next_handle;
}

cudaError_t
mt_emu_stream_device(cudaStream_t stream, int *device)
{
    if (stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
        *device = current_device;
        return cudaSuccess;
    }
    std::lock_guard<std::mutex> g(handle_lock);
    auto it = streams.find((uintptr_t)stream);
    if (it == streams.end()) {
        return cudaErrorInvalidResourceHandle;
    }
    *device = it->second.device;
    return cudaSuccess;
}

extern "C" cudaError_t
cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
    if (pStream == NULL || (flags != cudaStreamDefault && flags != cudaStreamNonBlocking)) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    if (device_count() == 0) {
        return mt_emu_error(cudaErrorNoDevice);
    }
    priority = priority > 0 ? 0 : priority < -5 ? -5 : priority; /* CUDA clamps to the range */
    queue *q = nullptr;
    if (async_mode()) {
        std::lock_guard<std::mutex> g(queues_lock);
        q = make_queue(current_device);
        q->blocking = flags == cudaStreamDefault;
        device_queues[current_device].push_back(q);
    }
    std::lock_guard<std::mutex> g(handle_lock);
    uintptr_t h = new_handle();
    streams[h] = stream_info{current_device, flags, priority, (unsigned long long)(h >> 4), q};
    *pStream = (cudaStream_t)h;
    return cudaSuccess;
}

extern "C" cudaError_t
cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    return cudaStreamCreateWithPriority(pStream, flags, 0);
}

extern "C" cudaError_t
cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithPriority(pStream, cudaStreamDefault, 0);
}

extern "C" cudaError_t
cudaStreamDestroy(cudaStream_t stream)
{
    queue *q = nullptr;
    {
        std::lock_guard<std::mutex> g(handle_lock);
        auto it = streams.find((uintptr_t)stream);
        if (it == streams.end()) {
            return mt_emu_error(cudaErrorInvalidResourceHandle);
        }
        q = it->second.q;
        streams.erase(it);
    }
    if (q != nullptr) {
        /* as CUDA: the queued work still runs, then the worker ends (the queue stays, for the
         * events recorded on it) */
        {
            std::lock_guard<std::mutex> g(queues_lock);
            auto &v = device_queues[q->device];
            for (size_t i = 0; i < v.size(); i++) {
                if (v[i] == q) {
                    v.erase(v.begin() + (long)i);
                    break;
                }
            }
        }
        {
            std::lock_guard<std::mutex> g(q->m);
            q->destroyed = true;
        }
        q->has_work.notify_one();
    }
    return cudaSuccess;
}

/* The queue of a live stream (the device's legacy queue for the default streams), or null with
 * the error; its device into *device. */
static queue *
stream_queue(cudaStream_t stream, int *device, cudaError_t *err)
{
    if (stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
        *device = current_device;
        *err = cudaSuccess;
        return legacy_queue(current_device);
    }
    std::lock_guard<std::mutex> g(handle_lock);
    auto it = streams.find((uintptr_t)stream);
    if (it == streams.end()) {
        *err = cudaErrorInvalidResourceHandle;
        return nullptr;
    }
    *device = it->second.device;
    *err = cudaSuccess;
    return it->second.q;
}

void
mt_emu_stream_drain(cudaStream_t stream)
{
    int device;
    cudaError_t err;
    if (async_mode()) {
        if (queue *q = stream_queue(stream, &device, &err)) {
            drain(q);
        }
    }
}

/* Queues fn on the stream (live, checked by the caller); its queue and ticket. */
static queue *
submit_on(cudaStream_t stream, std::function<cudaError_t()> fn, uint64_t *ticket)
{
    int device;
    cudaError_t err;
    queue *q = stream_queue(stream, &device, &err);
    if (q != nullptr) {
        uint64_t t = submit(q, std::move(fn));
        if (ticket) {
            *ticket = t;
        }
    }
    return q;
}

void
mt_emu_submit(cudaStream_t stream, std::function<cudaError_t()> fn)
{
    submit_on(stream, std::move(fn), nullptr);
}

bool
mt_emu_stream_defer(cudaStream_t stream, int (*fn)(void *arg), const void *arg, size_t bytes)
{
    void *copy = async_mode() ? malloc(bytes) : nullptr;
    if (copy == nullptr) {
        return false;
    }
    memcpy(copy, arg, bytes);
    /* a stream that is not live queues nothing: the caller runs the work (and reports) */
    if (submit_on(
            stream,
            [fn, copy] {
                const cudaError_t err = (cudaError_t)fn(copy);
                free(copy);
                return err;
            },
            nullptr) == nullptr) {
        free(copy);
        return false;
    }
    return true;
}

cudaError_t
mt_emu_async_error(int device)
{
    return take_async_error(device);
}

/* ---- debug hooks for tests (exported: tests reach them with ctypes), asynchronous mode only.
 * A stream is named as minitorch's Stream.cuda_stream names it (0 the default stream). ---- */

static queue *
debug_queue(unsigned long long stream)
{
    cudaStream_t s = stream == 0   ? NULL
                     : stream == 1 ? cudaStreamLegacy
                     : stream == 2 ? cudaStreamPerThread
                                   : (cudaStream_t)(uintptr_t)stream;
    int device;
    cudaError_t err;
    return async_mode() ? stream_queue(s, &device, &err) : nullptr;
}

/* The stream's worker sleeps this long before each work it runs (0: no more); -1 without the
 * asynchronous mode or for a stream that does not exist. */
extern "C" __attribute__((visibility("default"))) int
mt_emu_debug_stream_delay(unsigned long long stream, unsigned microseconds)
{
    queue *q = debug_queue(stream);
    if (q == nullptr) {
        return -1;
    }
    q->delay_us.store(microseconds);
    return 0;
}

/* hold 1: the work queued on the stream from now on stays pending (and a host synchronisation
 * with it waits) until hold 0; what was queued before still runs. */
extern "C" __attribute__((visibility("default"))) int
mt_emu_debug_stream_hold(unsigned long long stream, int hold)
{
    queue *q = debug_queue(stream);
    if (q == nullptr) {
        return -1;
    }
    {
        std::lock_guard<std::mutex> g(q->m);
        q->held = hold != 0;
        q->hold_after = q->submitted;
    }
    q->has_work.notify_one();
    return 0;
}

extern "C" __attribute__((visibility("default"))) int
mt_emu_debug_async(void)
{
    return async_mode();
}

/* A stream that exists (a destroyed one does not). */
static cudaError_t
check_stream(cudaStream_t stream)
{
    int device;
    return mt_emu_error(mt_emu_stream_device(stream, &device));
}

extern "C" cudaError_t
cudaStreamSynchronize(cudaStream_t stream)
{
    host_sync();
    if (!async_mode()) {
        return check_stream(stream);
    }
    int device;
    cudaError_t err;
    queue *q = stream_queue(stream, &device, &err);
    if (q == nullptr) {
        return mt_emu_error(err);
    }
    drain(q);
    return mt_emu_error(take_async_error(device));
}

extern "C" cudaError_t
cudaStreamQuery(cudaStream_t stream)
{
    if (!async_mode()) {
        return check_stream(stream); /* all its work has run: complete */
    }
    int device;
    cudaError_t err;
    queue *q = stream_queue(stream, &device, &err);
    if (q == nullptr) {
        return mt_emu_error(err);
    }
    return pending_tail(q) ? cudaErrorNotReady : cudaSuccess; /* not an error: not recorded */
}

extern "C" cudaError_t
cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId)
{
    if (streamId == NULL) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    if (hStream == NULL || hStream == cudaStreamLegacy) {
        *streamId = 0; /* each device's legacy stream */
        return cudaSuccess;
    }
    if (hStream == cudaStreamPerThread) {
        *streamId = 1;
        return cudaSuccess;
    }
    std::lock_guard<std::mutex> g(handle_lock);
    auto it = streams.find((uintptr_t)hStream);
    if (it == streams.end()) {
        return mt_emu_error(cudaErrorInvalidResourceHandle);
    }
    *streamId = it->second.id;
    return cudaSuccess;
}

extern "C" cudaError_t
cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    const unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | 0x04 /* interprocess */;
    if (event == NULL || (flags & ~known) ||
        ((flags & 0x04) && !(flags & cudaEventDisableTiming))) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    if (device_count() == 0) {
        return mt_emu_error(cudaErrorNoDevice);
    }
    std::lock_guard<std::mutex> g(handle_lock);
    uintptr_t h = new_handle();
    events[h] = event_info{current_device, flags, false, 0, nullptr, 0, 0};
    *event = (cudaEvent_t)h;
    return cudaSuccess;
}

extern "C" cudaError_t
cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

extern "C" cudaError_t
cudaEventDestroy(cudaEvent_t event)
{
    std::lock_guard<std::mutex> g(handle_lock);
    return events.erase((uintptr_t)event) ? cudaSuccess
                                          : mt_emu_error(cudaErrorInvalidResourceHandle);
}

extern "C" cudaError_t
cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    int device;
    cudaError_t err = mt_emu_stream_device(stream, &device);
    if (err != cudaSuccess) {
        return mt_emu_error(err);
    }
    queue *q = async_mode() ? stream_queue(stream, &device, &err) : nullptr;
    if (async_mode() && q == nullptr) {
        return mt_emu_error(err); /* destroyed meanwhile */
    }
    std::lock_guard<std::mutex> g(handle_lock);
    auto it = events.find((uintptr_t)event);
    if (it == events.end() || it->second.device != device) {
        return mt_emu_error(cudaErrorInvalidResourceHandle); /* event and stream: one device */
    }
    it->second.recorded = true;
    if (!async_mode()) {
        it->second.ns = mt_emu_now_ns(); /* the stream's work so far has run */
        return cudaSuccess;
    }
    /* The time is stamped when the stream reaches the record (handle_lock is taken before a
     * queue's lock, and the work takes it only when it runs). */
    const uintptr_t h = (uintptr_t)event;
    const uint64_t record = ++it->second.records;
    it->second.q = q;
    it->second.ticket = submit(q, [h, record] {
        const uint64_t now = mt_emu_now_ns();
        std::lock_guard<std::mutex> l(handle_lock);
        auto e = events.find(h);
        if (e != events.end() && e->second.records == record) {
            e->second.ns = now;
        }
        return cudaSuccess;
    });
    return cudaSuccess;
}

/* The queue and ticket of an event's last record (null: nothing to wait for), or the error. */
static cudaError_t
event_ticket(cudaEvent_t event, queue **q, uint64_t *ticket)
{
    std::lock_guard<std::mutex> g(handle_lock);
    auto it = events.find((uintptr_t)event);
    if (it == events.end()) {
        return cudaErrorInvalidResourceHandle;
    }
    *q = it->second.recorded ? it->second.q : nullptr;
    *ticket = it->second.ticket;
    return cudaSuccess;
}

static cudaError_t
check_event(cudaEvent_t event)
{
    std::lock_guard<std::mutex> g(handle_lock);
    return events.count((uintptr_t)event) ? cudaSuccess
                                          : mt_emu_error(cudaErrorInvalidResourceHandle);
}

extern "C" cudaError_t
cudaEventQuery(cudaEvent_t event)
{
    if (!async_mode()) {
        return check_event(event); /* recorded work has run; a never-recorded event is complete */
    }
    queue *q;
    uint64_t ticket;
    cudaError_t err = event_ticket(event, &q, &ticket);
    if (err != cudaSuccess) {
        return mt_emu_error(err);
    }
    return q != nullptr && !reached(q, ticket) ? cudaErrorNotReady : cudaSuccess;
}

extern "C" cudaError_t
cudaEventSynchronize(cudaEvent_t event)
{
    host_sync();
    if (!async_mode()) {
        return check_event(event);
    }
    queue *q;
    uint64_t ticket;
    cudaError_t err = event_ticket(event, &q, &ticket);
    if (err != cudaSuccess) {
        return mt_emu_error(err);
    }
    if (q == nullptr) {
        return cudaSuccess;
    }
    wait_for(q, ticket);
    return mt_emu_error(take_async_error(q->device));
}

extern "C" cudaError_t
cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    if (flags != 0) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    cudaError_t err = check_stream(stream);
    if (err != cudaSuccess || (err = check_event(event)) != cudaSuccess || !async_mode()) {
        return err; /* another device's event is fine */
    }
    queue *q;
    uint64_t ticket;
    if ((err = event_ticket(event, &q, &ticket)) != cudaSuccess) {
        return mt_emu_error(err);
    }
    if (q != nullptr && !reached(q, ticket)) {
        submit_on(stream, wait_work(q, ticket), nullptr); /* the last record at this call */
    }
    return cudaSuccess;
}

extern "C" cudaError_t
cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (ms == NULL) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    std::lock_guard<std::mutex> g(handle_lock);
    auto a = events.find((uintptr_t)start), b = events.find((uintptr_t)end);
    if (a == events.end() || b == events.end() || !a->second.recorded || !b->second.recorded ||
        ((a->second.flags | b->second.flags) & cudaEventDisableTiming) ||
        a->second.device != b->second.device) {
        return mt_emu_error(cudaErrorInvalidResourceHandle);
    }
    if ((a->second.q && !reached(a->second.q, a->second.ticket)) ||
        (b->second.q && !reached(b->second.q, b->second.ticket))) {
        return cudaErrorNotReady; /* as CUDA: a record has not run yet */
    }
    *ms = (float)(((double)b->second.ns - (double)a->second.ns) / 1e6);
    return cudaSuccess;
}

/* ---- copies and fills ---- */

cudaError_t
mt_emu_stream_for_work(cudaStream_t stream, int *device)
{
    if (device_count() == 0) {
        return cudaErrorNoDevice;
    }
    cudaError_t err = mt_emu_stream_device(stream, device);
    if (err == cudaSuccess && *device != current_device) {
        err = cudaErrorInvalidResourceHandle;
    }
    return err;
}

/* Whether p is in a cudaMallocHost block. */
static bool
pinned(const void *p)
{
    std::lock_guard<std::mutex> g(mem_lock);
    auto it = block_at(p);
    return it != blocks.end() && it->second.device < 0;
}

/* The copy itself (checked), on the calling thread or a stream's worker, reported to CUPTI. */
static cudaError_t
run_copy(void *dst, const void *src, size_t count, cudaMemcpyKind kind, int device,
         cudaStream_t stream)
{
    uint64_t t0 = mt_emu_now_ns();
    mt_emu_device_work_begin();
    memmove(dst, src, count);
    mt_emu_device_work_end();
    mt_emu_memcpy_ran(kind, count, device, stream, t0, mt_emu_now_ns());
    return cudaSuccess;
}

/* A copy on stream; blocking: cudaMemcpy's (the host waits for it in any case). */
static cudaError_t
copy(void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t stream,
     bool blocking)
{
    int device;
    cudaError_t err = mt_emu_stream_for_work(stream, &device);
    if (err != cudaSuccess) {
        return err;
    }
    if ((unsigned)kind > cudaMemcpyDefault) {
        return cudaErrorInvalidMemcpyDirection;
    }
    if (count == 0) {
        return cudaSuccess;
    }
    if (dst == NULL || src == NULL) {
        return cudaErrorInvalidValue;
    }
    int dd = -1, sd = -1;
    int dw = where(dst, count, &dd), sw = where(src, count, &sd);
    if (dw < 0 || sw < 0) {
        return cudaErrorInvalidValue; /* runs past the end of its device block */
    }
    cudaMemcpyKind actual = (cudaMemcpyKind)((sw ? 2 : 0) | (dw ? 1 : 0));
    if (kind != cudaMemcpyDefault && kind != actual) {
        fprintf(stderr,
                "mt_emu: cudaMemcpy of %zu bytes %p -> %p with kind %d, but the pointers "
                "make it kind %d\n",
                count, src, dst, (int)kind, (int)actual);
        return cudaErrorInvalidValue;
    }
    const int on = dw ? dd : sw ? sd : device;
    if (!async_mode()) {
        return run_copy(dst, src, count, actual, on, stream);
    }
    /* As CUDA: a copy from pageable host memory is staged (the host may reuse its buffer when
     * the call returns), one to pageable host memory and a host-to-host one return when done;
     * with pinned memory (cudaMallocHost) or between device blocks the host does not wait. */
    std::shared_ptr<unsigned char[]> staged;
    if (actual == cudaMemcpyHostToDevice && !pinned(src)) {
        staged.reset(new (std::nothrow) unsigned char[count]);
        if (!staged) {
            return cudaErrorMemoryAllocation;
        }
        memcpy(staged.get(), src, count);
        src = staged.get();
    }
    const bool host_waits = blocking || (actual == cudaMemcpyDeviceToHost && !pinned(dst)) ||
                            actual == cudaMemcpyHostToHost;
    uint64_t ticket = 0;
    queue *q = submit_on(
        stream,
        [dst, src, count, actual, on, stream, staged] {
            return run_copy(dst, src, count, actual, on, stream);
        },
        &ticket);
    if (q == nullptr) {
        return cudaErrorInvalidResourceHandle; /* destroyed meanwhile */
    }
    if (host_waits) {
        wait_for(q, ticket);
        return take_async_error(q->device);
    }
    return cudaSuccess;
}

extern "C" cudaError_t
cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind)
{
    if (count > 0 && where(src, count, NULL) == 1 && where(dst, count, NULL) == 0) {
        host_sync(); /* a device to host copy waits for the work before it */
    }
    return mt_emu_error(copy(dst, src, count, kind, NULL, true));
}

extern "C" cudaError_t
cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t stream)
{
    return mt_emu_error(copy(dst, src, count, kind, stream, false));
}

static cudaError_t
fill(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    int device;
    cudaError_t err = mt_emu_stream_for_work(stream, &device);
    if (err != cudaSuccess || count == 0) {
        return err;
    }
    if (where(devPtr, count, NULL) != 1) {
        return cudaErrorInvalidValue;
    }
    if (async_mode()) {
        /* asynchronous for the host, even cudaMemset's (on the legacy stream), as in CUDA */
        return submit_on(
                   stream,
                   [devPtr, value, count] {
                       mt_emu_device_work_begin();
                       memset(devPtr, value, count);
                       mt_emu_device_work_end();
                       return cudaSuccess;
                   },
                   nullptr)
                   ? cudaSuccess
                   : cudaErrorInvalidResourceHandle;
    }
    mt_emu_device_work_begin();
    memset(devPtr, value, count);
    mt_emu_device_work_end();
    return cudaSuccess;
}

extern "C" cudaError_t
cudaMemset(void *devPtr, int value, size_t count)
{
    return mt_emu_error(fill(devPtr, value, count, NULL));
}

extern "C" cudaError_t
cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return mt_emu_error(fill(devPtr, value, count, stream));
}
