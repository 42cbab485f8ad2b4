/* Streams: the calling thread's current stream per device, and PyTorch's stream pools.
 *
 * A stream is a cudaStream_t; NULL is the legacy default stream, every device's default, as in
 * PyTorch. Pool streams are created blocking (cudaStreamDefault), unlike PyTorch's non-blocking
 * ones: the copies in ops.c use cudaMemcpy on the legacy stream, which then waits for the work
 * queued on them. That costs overlap with default-stream work, never correctness. */
#include <pthread.h>
#include <stdatomic.h>

#include "cuda/cuda.h"

#define MT_STREAMS_PER_POOL 32 /* PyTorch's kStreamsPerPool: streams are reused round-robin */

/* NULL until the thread sets another: every device starts on its default stream. */
static _Thread_local cudaStream_t current_streams[MT_CUDA_MAX_DEVICES];

cudaStream_t
mt_cuda_current_stream(int device)
{
    return device >= 0 && device < MT_CUDA_MAX_DEVICES ? current_streams[device] : NULL;
}

void
mt_cuda_set_current_stream(int device, cudaStream_t stream)
{
    if (device >= 0 && device < MT_CUDA_MAX_DEVICES) {
        current_streams[device] = stream;
    }
}

/* Per device: a low- (priority >= 0) and a high-priority (< 0) class of streams. */
typedef struct stream_pool {
    cudaStream_t streams[2][MT_STREAMS_PER_POOL];
    atomic_uint next[2];
} stream_pool;

static stream_pool pools[MT_CUDA_MAX_DEVICES];
static pthread_mutex_t pools_mutex = PTHREAD_MUTEX_INITIALIZER;

mt_status
mt_cuda_stream_from_pool(int device, int priority, cudaStream_t *out)
{
    mt_status st = mt_cuda_use_device((mt_device){MT_CUDA, device});
    if (st) {
        return st;
    }
    if (device >= MT_CUDA_MAX_DEVICES) {
        return mt_fail(MT_ECUDA, "CUDA error: device cuda:%d is beyond the %d supported", device,
                       MT_CUDA_MAX_DEVICES);
    }
    int cls = priority < 0;
    stream_pool *p = &pools[device];
    unsigned k = atomic_fetch_add(&p->next[cls], 1u) % MT_STREAMS_PER_POOL;
    pthread_mutex_lock(&pools_mutex);
    if (p->streams[cls][k] == NULL) {
        int least = 0, greatest = 0; /* CUDA's numbers: greatest is the most urgent (negative) */
        st = mt_cuda_check(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        if (st == MT_OK) {
            st = mt_cuda_check(cudaStreamCreateWithPriority(&p->streams[cls][k], cudaStreamDefault,
                                                            cls ? greatest : least));
        }
    }
    *out = p->streams[cls][k];
    pthread_mutex_unlock(&pools_mutex);
    return st;
}

mt_status
mt_cuda_event_create(int device, bool timing, bool blocking, cudaEvent_t *out)
{
    mt_status st = mt_cuda_use_device((mt_device){MT_CUDA, device});
    if (st) {
        return st;
    }
    unsigned flags = (timing ? 0u : cudaEventDisableTiming) |
                     (blocking ? cudaEventBlockingSync : 0u);
    return mt_cuda_check(cudaEventCreateWithFlags(out, flags));
}
