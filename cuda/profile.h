/* The CUDA backend's profiler hooks (profile.c): Runtime:: and Library:: events around CUDA and
 * cuBLAS calls, and the device times of the work they start.
 *
 *     mt_cuda_span s = mt_cuda_span_begin("LaunchKernel", MT_LAYER_RUNTIME, "CUDA",
 *                                         MT_GPU_KERNEL, name);
 *     err = cudaLaunchKernel(...);
 *     mt_cuda_span_end(&s);
 *
 * Off, a span costs one call and one branch (mt_trace_span_enter). On, it records a CPU event with
 * a fresh correlation id; with CUDA activity (and a gpu_name) also a pair of CUDA events from a pool
 * around the call, on the calling thread's current stream (its id in the trace), resolved to
 * times when the recording stops. */
#ifndef MT_CUDA_PROFILE_H
#define MT_CUDA_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "cuda/cuda.h"

typedef struct mt_cuda_span {
    bool traced;   /* a CPU event is open */
    int slot;      /* the pending device record, or -1 */
    unsigned gen;  /* the recording the record belongs to */
    bool external; /* a CUPTI external correlation id was pushed */
} mt_cuda_span;

/* Opens a span: a CPU event (layer, name, detail; name and detail literals) and, while device
 * times are collected, a device record (kind, gpu_name; a literal too) for the GPU work it
 * starts. gpu_name NULL: the call starts no GPU work of its own (malloc, synchronize). */
mt_cuda_span mt_cuda_span_begin(const char *name, mt_layer layer, const char *detail, int kind,
                                const char *gpu_name);
void mt_cuda_span_end(mt_cuda_span *s);
/* A Runtime:: event with no device work: Malloc, Free, DeviceSynchronize. */
#define mt_cuda_runtime_begin(name) \
    mt_cuda_span_begin((name), MT_LAYER_RUNTIME, "CUDA", MT_GPU_KERNEL, NULL)

/* Runtime::LaunchKernel for kernel, its device record named as CUDA names the kernel (site, the
 * launch's source text, when it cannot). */
mt_cuda_span mt_cuda_span_launch(const void *kernel, const char *site);

/* The backend's profiler hooks (dispatch/backend.h): _C calls start before a recording with CUDA
 * activity and stop after it; stop reports the device's events through report. */
void mt_cuda_profiler_start(void);
void mt_cuda_profiler_stop(mt_trace_gpu_report report);

#endif
