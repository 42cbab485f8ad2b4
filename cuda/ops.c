/* The CUDA key's kernels for factories and copies (a cudaMemcpy or elementwise.c's cast), the
 * table of every kernel file's kernels generated from ops.def's cuda column, and
 * mt_cuda_register (bottom), which hands it to _C's dispatcher with the rest of the backend. */
#include <string.h>

#include "cuda/elementwise.h"
#include "cuda/ops.h"
#include "cuda/profile.h"
#include "ops/arg_checks.h"

// out (size) uninitialised, on a->device: the dispatcher allocated it as the front end stated
mt_status
mt_cuda_empty(mt_args *a)
{
    return mt_factory_finish(a);
}

static bool
is_dense_as(const mt_tensor *t, const mt_tensor *like)
{
    return mt_tensor_is_contiguous(t) && t->dtype == like->dtype && t->ndim == like->ndim &&
           memcmp(t->sizes, like->sizes, sizeof(int64_t) * (size_t)t->ndim) == 0;
}

/* One synchronous cudaMemcpy as a Runtime::Memcpy event, its device time as PyTorch names it. */
static mt_status
traced_memcpy(void *dst, const void *src, size_t nbytes, enum cudaMemcpyKind kind)
{
    mt_cuda_span span = mt_cuda_span_begin("Memcpy", MT_LAYER_RUNTIME, "CUDA", MT_GPU_MEMCPY,
                                           kind == cudaMemcpyHostToDevice
                                               ? "Memcpy HtoD (Pageable -> Device)"
                                               : "Memcpy DtoH (Device -> Pageable)");
    cudaError_t err = cudaMemcpy(dst, src, nbytes, kind);
    mt_cuda_span_end(&span);
    return mt_cuda_check(err);
}

/* dst (CUDA) = src (CPU): the host side makes a dense copy in dst's dtype and shape when src is
 * not one already, one cudaMemcpy moves it, and a device copy scatters it when dst is strided. */
static mt_status
host_to_device(mt_tensor *dst, mt_tensor *src)
{
    mt_tensor *dense = NULL, *staged = NULL, *cast = NULL;
    mt_status st = MT_OK;
    if (is_dense_as(src, dst)) {
        dense = mt_tensor_retain(src);
    } else if ((st = mt_op__to_copy(src, dst->dtype, src->storage->device, &cast)) ||
               (st = mt_op_contiguous(cast, &dense))) { /* _to_copy keeps src's layout */
        mt_tensor_clear(&cast);
        return st;
    }
    mt_tensor_clear(&cast);
    mt_tensor *target = dst;
    if (!mt_tensor_is_contiguous(dst) &&
        (st = mt_tensor_empty(dst->ndim, dst->sizes, dst->dtype, mt_tensor_device(dst), &staged))) {
        goto out_release;
    }
    target = staged ? staged : dst;
    size_t nbytes = (size_t)mt_tensor_numel(dst) * mt_dtype_size(dst->dtype);
    if (nbytes > 0 && ((st = mt_cuda_use_device(mt_tensor_device(dst))) ||
                       (st = traced_memcpy(mt_tensor_data(target), mt_tensor_data(dense), nbytes,
                                           cudaMemcpyHostToDevice)))) {
        goto out_release;
    }
    if (staged) {
        st = mt_cuda_copy_into(dst, staged);
    }
out_release:
    mt_tensor_clear(&staged);
    mt_tensor_clear(&dense);
    return st;
}

/* dst (CPU) = src (CUDA): the mirror image of host_to_device. A strided dst is written by the
 * CPU's copy_, which counts that write in its version (*counted). */
static mt_status
device_to_host(mt_tensor *dst, mt_tensor *src, bool *counted)
{
    mt_tensor *dense = NULL, *staged = NULL;
    mt_status st = MT_OK;
    if (is_dense_as(src, dst)) {
        dense = mt_tensor_retain(src);
    } else if ((st = mt_tensor_empty(dst->ndim, dst->sizes, dst->dtype, mt_tensor_device(src),
                                     &dense)) ||
               (st = mt_cuda_copy_into(dense, src))) {
        goto out_release;
    }
    if (!mt_tensor_is_contiguous(dst) &&
        (st = mt_tensor_empty(dst->ndim, dst->sizes, dst->dtype, MT_DEVICE_CPU, &staged))) {
        goto out_release;
    }
    mt_tensor *target = staged ? staged : dst;
    size_t nbytes = (size_t)mt_tensor_numel(dst) * mt_dtype_size(dst->dtype);
    /* the copy waited for the device: a failed device-side assertion is raised here */
    if (nbytes > 0 && ((st = mt_cuda_use_device(mt_tensor_device(src))) ||
                       (st = traced_memcpy(mt_tensor_data(target), mt_tensor_data(dense), nbytes,
                                           cudaMemcpyDeviceToHost)) ||
                       (st = mt_cuda_assert_check()))) {
        goto out_release;
    }
    if (staged) {
        st = mt_op_copy_(dst, staged, NULL);
        *counted = st == MT_OK;
    }
out_release:
    mt_tensor_clear(&staged);
    mt_tensor_clear(&dense);
    return st;
}

// self (any shape, any device) = src broadcast to it; at least one of them is on a GPU
mt_status
mt_cuda_copy_(mt_args *a)
{
    mt_tensor *dst = a->t[0], *src = NULL;
    mt_status st = mt_op_expand(a->t[1], dst->ndim, dst->sizes, &src);
    if (st) {
        return st;
    }
    bool dst_gpu = mt_tensor_device(dst).type == MT_CUDA;
    bool src_gpu = mt_tensor_device(src).type == MT_CUDA;
    bool counted = false; /* dst's version already bumped for this write */
    if (dst_gpu && src_gpu) {
        st = mt_cuda_copy_into(dst, src);
    } else if (dst_gpu) {
        st = host_to_device(dst, src);
    } else {
        st = device_to_host(dst, src, &counted);
    }
    mt_tensor_release(src);
    if (st) {
        return st;
    }
    if (!counted) {
        mt_tensor_bump_version(dst);
    }
    a->out[0] = mt_tensor_retain(dst);
    return MT_OK;
}

/* A self with internal overlap (an expanded tensor) is filled, as on the CPU and in PyTorch:
 * every element gets the same value, so threads writing one location agree. */
mt_status
mt_cuda_fill_(mt_args *a)
{
    mt_tensor *self = a->t[0], *value = a->t[1], *held = NULL, *src = NULL;
    mt_status st = MT_OK;
    if (!mt_fill_value_on_device(self, value)) {
        st = mt_cuda_fill(self, a->plan->value);
    } else {
        /* a value inside self is copied out first (as PyTorch's), so no thread reads it after
         * another rewrote it */
        if (value->storage == self->storage &&
            (st = mt_cuda_cast(value, value->dtype, &held)) == MT_OK) {
            value = held;
        }
        if (st == MT_OK && (st = mt_op_expand(value, self->ndim, self->sizes, &src)) == MT_OK) {
            st = mt_cuda_copy_into(self, src);
        }
        mt_tensor_clear(&src);
        mt_tensor_clear(&held);
    }
    if (st) {
        return st;
    }
    mt_tensor_bump_version(self);
    a->out[0] = mt_tensor_retain(a->t[0]);
    return MT_OK;
}

/* ---- registration ---- */

/* The backend's own kernels, by op, from ops.def's cuda column (one table for every kernel
 * file; ops.h declares them). A CUBLAS row's kernel exists only in a build with cuBLAS: without
 * it the host round trip serves the op. */
#define MT_CUDA_KERNEL(kernel) {mt_cuda_##kernel, "mt_cuda_" #kernel}
#ifdef MT_CUDA_CUBLAS
#define MT_CUDA_CUBLAS_KERNEL(name) MT_CUDA_KERNEL(name)
#else
#define MT_CUDA_CUBLAS_KERNEL(name) {NULL, NULL}
#endif
#define MT_CUDA_NO_KERNEL {NULL, NULL}
const mt_kernel mt_cuda_kernels[MT_NUM_OPS] = {
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) \
    [MT_OP_##name] = MT_CUDA_COLUMN_##cuda(name),
#include "dispatch/ops.def"
#undef MT_OP
};

static mt_status
use_device(int index)
{
    return mt_cuda_use_device((mt_device){MT_CUDA, index});
}

mt_status
mt_cuda_register(void)
{
    static const mt_device_backend backend = {
        .name = "cuda",
        .type = MT_CUDA,
        .memory = &mt_cuda_memory,
        .device_count = mt_cuda_device_count,
        .use_device = use_device,
        .current_device = mt_cuda_selected_device,
        .ew = &mt_cuda_ew_device,
        .index = &mt_cuda_index,
        .sort_along = mt_cuda_sort_along,
        .copy_into = mt_cuda_copy_into,
        .multinomial = &mt_cuda_multinomial,
        .stats = &mt_cuda_stats,
        .bce = mt_cuda_bce,
        .kernels = mt_cuda_kernels,
        .host_fallback = true,
        .gpu_start = mt_cuda_profiler_start,
        .gpu_stop = mt_cuda_profiler_stop,
    };
    return mt_register_backend(&backend);
}
