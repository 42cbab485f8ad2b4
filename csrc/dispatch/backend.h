/* A device backend: the one struct a device plug-in (minitorch._C_cuda) fills and hands to _C
 * once, with mt_register_backend, as ggml's backends fill ggml_backend_i (ggml-backend-impl.h).
 *
 * _C owns the control flow; the backend only computes. Its parts:
 *   memory   the device side of _C's caching allocator (raw malloc/free, memory info, the
 *            current stream and its events); _C makes one caching allocator per device over it
 *            and registers the allocator for the device type, so torch.cuda.memory_* and
 *            empty_cache read and free _C's caches;
 *   device   the device count, making a device current (checking its index), the calling
 *            thread's current device (the index "cuda" alone stands for);
 *   loops    the device loops the families' front ends drive: _C registers for the backend's
 *            key a kernel per op of those families that runs the front end (checks, dtypes,
 *            PyTorch's messages) and calls these; a NULL loop leaves its family to `kernels`
 *            (or the host round trip);
 *   kernels  the backend's own kernels, a table indexed by op (generated from ops.def's cuda
 *            column, cuda/ops.c) that _C registers after the families';
 *   fallback whether _C registers its host round trip (dispatch/host_fallback.c: copies to
 *            the host, the CPU kernel, copies back) for each op that has a CPU kernel and
 *            still none for the key;
 *   profiler GPU activity collection around a profiling session.
 * The services a kernel calls back (tensors, mt_fail, dispatch of composites, tracing) are the
 * C API table of capi/capi.h. This header must not include CUDA: _C is built without it. */
#ifndef MT_DISPATCH_BACKEND_H
#define MT_DISPATCH_BACKEND_H

#include "alloc/caching.h"
#include "dispatch/dispatch.h"
#include "ops/arg_checks.h"
#include "ops/distributions.h"
#include "ops/elementwise.h"
#include "ops/index_plan.h"
#include "ops/nn.h"
#include "ops/stats.h"
#include "profiler/trace.h"

typedef struct mt_device_backend {
    const char *name;    /* "cuda": its allocator's name */
    mt_device_type type; /* the devices it serves (MT_CUDA: the dispatcher's one device key) */

    /* memory: state is the device index, (void *)(intptr_t)device */
    const mt_caching_backend *memory;

    /* device */
    int (*device_count)(void);
    mt_status (*use_device)(int device); /* makes it current; fails for a bad index */
    int (*current_device)(void);

    /* loops of the families */
    const mt_ew_device *ew;                     /* elementwise.def's ops */
    const mt_index_backend *index;              /* gather, scatter*, index*, embedding */
    mt_sort_along_fn sort_along;                /* sort, argsort, topk */
    mt_status (*copy_into)(mt_tensor *dst, mt_tensor *src); /* cat: dst = src on the device */
    const mt_multinomial_device *multinomial;   /* multinomial */
    const mt_stats_device *stats;               /* histc, bincount */
    mt_bce_fn bce; /* binary_cross_entropy (with logits): the loss before weight and reduction */

    /* kernels */
    const mt_kernel *kernels; /* MT_NUM_OPS, by op ({NULL, NULL}: none); names "mt_cuda_<k>" */
    bool
        host_fallback; /* the host round trip for the ops with a CPU kernel, none here, no composite */

    /* profiler: start before a recording with device activity, stop after it (stop reports the
     * device's events through its argument: the backend reports, _C records) */
    mt_trace_gpu_start_hook gpu_start;
    mt_trace_gpu_stop_hook gpu_stop;
} mt_device_backend;

/* Installs be (which must outlive _C) for be->type: its allocator, kernels and hooks. */
mt_status mt_register_backend(const mt_device_backend *be);
/* Registers the host round trip (dispatch/host_fallback.c) for be's key wherever an op has a CPU
 * kernel, none for the key and no composite (which then runs on the device). */
void mt_register_host_fallback(const mt_device_backend *be);
/* *c = a with its tensors (and its list's) on the host, new references (copies of those on a
 * device of type type; the others themselves), its results and list NULL, a factory's device=
 * the host; *dev = the device of a's first tensor on type's device, else a's device=, else
 * (type, 0): where the results go back. mt_host_args_release(c, a->ntl) releases what c holds,
 * on every path (also after a failure here). */
mt_status mt_host_args(const mt_args *a, mt_device_type type, mt_args *c, mt_device *dev);
void mt_host_args_release(mt_args *c, int ntl);
/* The caching allocator of device's (made current) of type's backend. */
mt_status mt_backend_caching(mt_device_type type, int device, mt_caching_allocator **out);

#endif
