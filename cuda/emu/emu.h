/* What the parts of the emulated CUDA device share (cuda/emu/): the runtime (runtime.cc) keeps
 * the devices, the memory registry, streams, events and the clock; the cuBLAS (cublas.c), cuDNN
 * (cudnn.c) and CUPTI (cupti.c) emulations use them. Not part of the backend: cuda/'s own code sees
 * only the CUDA APIs (include/). By default everything runs synchronously on the calling thread: a
 * launch or a library call has finished when it returns, whatever stream it was given. With
 * MINITORCH_EMU_ASYNC=1 each stream's work runs in order on the stream's own worker thread
 * (runtime.cc), and the host returns from a launch, copy or fill once it is queued. */
#ifndef MT_EMU_H
#define MT_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cuda_runtime_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How many times the host has waited for the device (runtime.cc counts each synchronize call
 * and each blocking device to host cudaMemcpy); _C_cuda_emu's _emu_sync_count returns it. */
unsigned long long mt_emu_sync_count(void);

/* The calling thread's current device (cudaSetDevice), 0 until it sets one. */
int mt_emu_current_device(void);

/* Whether [p, p + bytes) lies inside one live cudaMalloc block; its device into *device. A
 * library emulation checks every device pointer it is given with this (bytes = the extent it
 * will touch), so a host pointer or an out-of-bounds extent fails as on a GPU. */
bool mt_emu_device_range(const void *p, size_t bytes, int *device);

/* Whether [p, p + bytes) lies inside one live cudaMallocHost block: pinned host memory, which
 * kernels may read and write too (mapped through unified addressing, as on every 64-bit GPU). */
bool mt_emu_pinned_range(const void *p, size_t bytes);

/* The device a stream belongs to (NULL, cudaStreamLegacy and cudaStreamPerThread: the current
 * device); cudaErrorInvalidResourceHandle for a stream that was never created or was destroyed. */
cudaError_t mt_emu_stream_device(cudaStream_t stream, int *device);

/* Whether the asynchronous mode is on (MINITORCH_EMU_ASYNC=1). */
bool mt_emu_async(void);

/* A library call that runs its work on the calling thread (CUB, cuBLAS's level 1 and 2): in
 * the asynchronous mode it first waits here until the work queued on its stream before it has
 * run (with the legacy stream's implicit waits), so that it is stream-ordered. Nothing in
 * synchronous mode, or for a stream that does not exist (the caller reports that). */
void mt_emu_stream_drain(cudaStream_t stream);

/* A library call's work (cuBLAS's and cuBLASLt's products, cuDNN's convolutions), checked, its
 * arguments in the bytes at arg: in the asynchronous mode a copy of them is queued on the live
 * stream like a kernel, to run fn(copy) on the stream's worker after the work queued before it,
 * the host returning at once; fn's result, a cudaError_t, is the device's next
 * synchronisation's when not cudaSuccess. False when nothing was queued (synchronous mode, or
 * no host memory for the copy): the caller drains the stream and runs the work itself. */
bool mt_emu_stream_defer(cudaStream_t stream, int (*fn)(void *arg), const void *arg, size_t bytes);

/* The calling thread's innermost pushed CUPTI external correlation id of each kind: a stream's
 * worker runs queued work under the ids of the thread that queued it, so that CUPTI links the
 * work's record to the API call as on a GPU. */
#define MT_EMU_CORR_KINDS 8
typedef struct mt_emu_corr {
    uint64_t ids[MT_EMU_CORR_KINDS];
    bool has[MT_EMU_CORR_KINDS];
} mt_emu_corr;
void mt_emu_corr_save(mt_emu_corr *c);
/* Makes c the calling thread's ids for the records it emits (NULL: its own pushed ids again). */
void mt_emu_corr_use(const mt_emu_corr *c);

/* x rounded to TF32 (10 mantissa bits, to nearest even), as tensor cores read float32 operands
 * (cuBLAS under CUBLAS_TF32_TENSOR_OP_MATH or CUBLAS_COMPUTE_32F_FAST_TF32, cuDNN's convolutions
 * in its default math); inf and NaN pass unchanged. */
static inline double
mt_emu_tf32(double x)
{
    float f = (float)x;
    uint32_t b;
    memcpy(&b, &f, sizeof(b));
    if ((b & 0x7f800000u) != 0x7f800000u) {
        b = (b + 0x0fffu + ((b >> 13) & 1u)) & ~0x1fffu;
        memcpy(&f, &b, sizeof(f));
    }
    return f;
}

/* The emulated device clock in ns (CLOCK_MONOTONIC; what CUPTI's timestamps and events read). */
uint64_t mt_emu_now_ns(void);

/* Device work just ran on the calling thread (or a stream's worker): a kernel (ours through cudaLaunchKernel, or a
 * library's, named as the library names it), or a copy. The runtime and the library emulations
 * call these after the work; the CUPTI emulation turns them into activity records (correlated
 * with the thread's pushed external correlation id). */
void mt_emu_kernel_ran(const char *name, int device, cudaStream_t stream, uint64_t start_ns,
                       uint64_t end_ns);
void mt_emu_memcpy_ran(cudaMemcpyKind kind, size_t bytes, int device, cudaStream_t stream,
                       uint64_t start_ns, uint64_t end_ns);

/* Device work (a kernel, a copy or fill, a library call) touches device memory between these:
 * outside them the memory guard (guard.cc) makes any access to device memory fault, since on a
 * GPU host code cannot reach it. Windows nest, and several threads may hold one at once. */
void mt_emu_device_work_begin(void);
void mt_emu_device_work_end(void);

static inline void
mt_emu_device_work_close(int *scope)
{
    (void)scope;
    mt_emu_device_work_end();
}

/* A window open until the end of the enclosing block (GCC's cleanup attribute, C and C++). */
#define MT_EMU_DEVICE_WORK_SCOPE()                    \
    __attribute__((cleanup(mt_emu_device_work_close), \
                   unused)) int mt_emu_device_work_scope_ = (mt_emu_device_work_begin(), 0)

#ifdef __cplusplus
}
#endif

#endif
