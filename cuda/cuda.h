/* The CUDA backend's shared declarations: the checked CUDA call, the one launch function, the
 * device state and the allocator. Plain C, included by the host .c files (compiled by the C
 * compiler) and by the .cu files (nvcc); no Python here.
 *
 * Every CUDA runtime call goes through mt_cuda_check, every kernel launch through
 * mt_cuda_launch: both turn a CUDA error into mt_fail(MT_ECUDA, "<CUDA's error string> ...")
 * with the call site, and never exit the process (llm.c's cudaCheck would kill a notebook). */
#ifndef MT_CUDA_H
#define MT_CUDA_H

#include <cuda_runtime_api.h>

#include "capi/capi.h" /* _C's functions, forwarded by capi_import.c */

#ifdef __cplusplus
extern "C" {
#endif

mt_status mt_cuda_check_at(cudaError_t err, const char *call, const char *file, int line);
/* st = mt_cuda_check(cudaMalloc(&p, n)); if (st) goto out_release; */
#define mt_cuda_check(call) mt_cuda_check_at((call), #call, __FILE__, __LINE__)

/* Launches kernel (a __global__ function's address) on the calling thread's current stream of
 * its current device with grid x block threads and its argument pointers, then checks the
 * launch. */
mt_status mt_cuda_launch_at(const void *kernel, unsigned grid, unsigned block, void **args,
                            const char *name, const char *file, int line);
#define mt_cuda_launch(kernel, grid, block, args) \
    mt_cuda_launch_at((kernel), (grid), (block), (args), #kernel, __FILE__, __LINE__)

/* The current device's number of multiprocessors (cudaDevAttrMultiProcessorCount, asked once
 * per device): grids are sized from it (a few blocks per SM, each striding over the work). */
int mt_cuda_sm_count(void);

/* Finds the devices once; MT_OK if at least one is usable, else the CUDA error (no driver, no
 * device) as an MT_ECUDA failure, every time it is asked. */
mt_status mt_cuda_lazy_init(void);
/* Why CUDA is unusable (CUDA's error string), or NULL when it is usable. */
const char *mt_cuda_unavailable_reason(void);
/* Number of devices, 0 when CUDA is unusable. */
int mt_cuda_device_count(void);
/* Makes dev the calling thread's current device (a device guard without the restore: every
 * kernel entry sets it, so nothing depends on what was current before). */
mt_status mt_cuda_use_device(mt_device dev);
/* The calling thread's current device as the user set it (set_device), and setting it. */
int mt_cuda_selected_device(void);
mt_status mt_cuda_select_device(int index);
/* Whether a device has been made current yet (torch.cuda.is_initialized()). */
bool mt_cuda_is_initialized(void);

#define MT_CUDA_MAX_DEVICES 64 /* per-device state (streams, handles) is kept in arrays */

/* ptr (a block's start, from the caching allocator that _C keeps for device over alloc.c's
 * mt_cuda_memory) is used on stream too (Tensor.record_stream). */
mt_status mt_cuda_record_stream(int device, void *ptr, cudaStream_t stream);
/* Raw blocks of device's caching allocator (torch.cuda.caching_allocator_alloc/delete). */
mt_status mt_cuda_caching_alloc(int device, size_t size, cudaStream_t stream, void **ptr);
mt_status mt_cuda_caching_free(int device, void *ptr);

/* Streams (stream.c). The calling thread's current stream on device: NULL (the legacy default
 * stream) until it sets another; NULL for a device index out of range. */
cudaStream_t mt_cuda_current_stream(int device);
void mt_cuda_set_current_stream(int device, cudaStream_t stream);
/* A stream of device's pool (PyTorch's: 32 per priority class, made on first use, handed out
 * round-robin, never destroyed). priority < 0 asks for the high-priority class. */
mt_status mt_cuda_stream_from_pool(int device, int priority, cudaStream_t *out);
/* A new event on device (timing off unless asked; blocking: a host wait sleeps, not spins). */
mt_status mt_cuda_event_create(int device, bool timing, bool blocking, cudaEvent_t *out);

/* Device-side assertions (device_assert.h, device_assert.c). The record the kernels write
 * (allocated on first use; pinned, so the host reads it without a copy). */
struct mt_cuda_assert_record;
mt_status mt_cuda_assert_record_get(struct mt_cuda_assert_record **out);
/* After the host waited for the device: a failure a kernel recorded, as PyTorch's RuntimeError
 * "CUDA error: device-side assert triggered" with the kernel's assertion; the record is
 * cleared. MT_OK when none. Every host synchronisation of the backend ends with it. */
mt_status mt_cuda_assert_check(void);
/* cudaStreamSynchronize(stream), then mt_cuda_assert_check: how an op that must read a result
 * back (nonzero's count, unique's groups) waits, as PyTorch's do. */
mt_status mt_cuda_sync_stream(cudaStream_t stream);

/* Hands _C the CUDA backend (dispatch/backend.h): its kernels (ops.def's cuda column; the cuBLAS
 * products only when built with cuBLAS), its memory, device and profiler hooks (ops.c). */
mt_status mt_cuda_register(void);

#ifdef __cplusplus
}
#endif

#endif
