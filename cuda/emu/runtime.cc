/* The emulated CUDA runtime (cudart on the CPU): devices, device memory, streams, events, the
 * clock and the error state, with CUDA's semantics and error codes. Kernel launches are
 * launch.cc's. Everything runs synchronously on the calling thread, so a stream is a name and
 * an event a timestamp.
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

#include <atomic>
#include <map>
#include <mutex>
#include <unordered_map>

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
    return device_count() ? cudaSuccess : mt_emu_error(cudaErrorNoDevice);
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
    return devPtr == NULL ? cudaSuccess : mt_emu_error(release(devPtr, true));
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
    return ptr == NULL ? cudaSuccess : mt_emu_error(release(ptr, false));
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
};
struct event_info {
    int device;
    unsigned flags;
    bool recorded;
    uint64_t ns;
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
    std::lock_guard<std::mutex> g(handle_lock);
    uintptr_t h = new_handle();
    streams[h] = stream_info{current_device, flags, priority, (unsigned long long)(h >> 4)};
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
    std::lock_guard<std::mutex> g(handle_lock);
    return streams.erase((uintptr_t)stream) ? cudaSuccess
                                            : mt_emu_error(cudaErrorInvalidResourceHandle);
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
    return check_stream(stream);
}

extern "C" cudaError_t
cudaStreamQuery(cudaStream_t stream)
{
    return check_stream(stream); /* all its work has run: complete */
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
    events[h] = event_info{current_device, flags, false, 0};
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
    std::lock_guard<std::mutex> g(handle_lock);
    auto it = events.find((uintptr_t)event);
    if (it == events.end() || it->second.device != device) {
        return mt_emu_error(cudaErrorInvalidResourceHandle); /* event and stream: one device */
    }
    it->second.recorded = true;
    it->second.ns = mt_emu_now_ns(); /* the stream's work so far has run */
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
    return check_event(event); /* recorded work has run; a never-recorded event is complete */
}

extern "C" cudaError_t
cudaEventSynchronize(cudaEvent_t event)
{
    host_sync();
    return check_event(event);
}

extern "C" cudaError_t
cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    if (flags != 0) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    cudaError_t err = check_stream(stream);
    return err != cudaSuccess ? err : check_event(event); /* another device's event is fine */
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

static cudaError_t
copy(void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t stream)
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
    uint64_t t0 = mt_emu_now_ns();
    mt_emu_device_work_begin();
    memmove(dst, src, count);
    mt_emu_device_work_end();
    mt_emu_memcpy_ran(actual, count, dw ? dd : sw ? sd : device, stream, t0, mt_emu_now_ns());
    return cudaSuccess;
}

extern "C" cudaError_t
cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind)
{
    if (count > 0 && where(src, count, NULL) == 1 && where(dst, count, NULL) == 0) {
        host_sync(); /* a device to host copy waits for the work before it */
    }
    return mt_emu_error(copy(dst, src, count, kind, NULL));
}

extern "C" cudaError_t
cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t stream)
{
    return mt_emu_error(copy(dst, src, count, kind, stream));
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
