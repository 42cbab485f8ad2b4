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

/* Launches kernel (a __global__ function's address) on the current device's default stream
 * with grid x block threads and its argument pointers, then checks the launch. */
mt_status mt_cuda_launch_at(const void *kernel, unsigned grid, unsigned block, void **args,
                            const char *name, const char *file, int line);
#define mt_cuda_launch(kernel, grid, block, args) \
    mt_cuda_launch_at((kernel), (grid), (block), (args), #kernel, __FILE__, __LINE__)

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

/* The allocator _C_cuda registers for MT_CUDA: cudaMalloc/cudaFree behind the mt_allocator
 * vtable. The caching allocator replaces it by changing what this returns. */
mt_allocator *mt_cuda_allocator(void);
/* The raw backend under any allocator: one device allocation, PyTorch's OOM error on failure. */
mt_status mt_cuda_raw_alloc(size_t nbytes, mt_device dev, void **out);
void mt_cuda_raw_free(void *ptr, mt_device dev);

/* Registers the CUDA kernels and the allocator into _C (ops.c), and the cuBLAS products
 * (blas.c; nothing when built without cuBLAS). */
void mt_cuda_register(void);
void mt_cuda_register_blas(void);

#ifdef __cplusplus
}
#endif

#endif
