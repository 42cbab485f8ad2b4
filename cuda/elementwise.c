/* The CUDA elementwise driver: from tensors to one mt_cuda_ew launch. Broadcasting and
 * dimension coalescing happen here, on the host, so a kernel only turns a linear index into
 * offsets (or, when everything is contiguous, uses it as is). */
#include <string.h>

#include "cuda/elementwise.h"
#include "cuda/profile.h"

_Static_assert(MT_CUDA_MAX_DIMS == MT_MAX_DIMS, "cuda/kernels.h copies MT_MAX_DIMS");

static mt_cuda_scalar
to_cuda_scalar(mt_scalar v)
{
    return (mt_cuda_scalar){mt_scalar_to_double(v), mt_scalar_to_int(v)};
}

static bool
is_number(const mt_tensor *t)
{
    return t->is_wrapped_number && mt_tensor_device(t).type == MT_CPU;
}

/* Fills p's geometry: operand k (0 = out) broadcast to shape, size-1 dims dropped, neighbours
 * that are contiguous in every operand merged. */
static void
geometry(mt_cuda_ew *p, int ndim, const int64_t *shape, mt_tensor *const *ops, int nops)
{
    int64_t st[MT_CUDA_MAX_OPERANDS][MT_MAX_DIMS] = {{0}};
    for (int k = 0; k < nops; k++) {
        const mt_tensor *t = ops[k];
        int lead = ndim - t->ndim;
        for (int d = 0; d < t->ndim; d++) {
            st[k][lead + d] = t->sizes[d] == 1 ? 0 : t->strides[d];
        }
    }
    p->n = mt_numel(ndim, shape);
    p->ndim = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) {
            continue;
        }
        int nd = p->ndim;
        bool merge = nd > 0;
        for (int k = 0; k < nops && merge; k++) {
            merge = p->strides[k][nd - 1] == st[k][d] * shape[d];
        }
        if (merge) {
            p->sizes[nd - 1] *= shape[d];
            for (int k = 0; k < nops; k++) {
                p->strides[k][nd - 1] = st[k][d];
            }
        } else {
            p->sizes[nd] = shape[d];
            for (int k = 0; k < nops; k++) {
                p->strides[k][nd] = st[k][d];
            }
            p->ndim++;
        }
    }
    p->contig = p->ndim <= 1;
    for (int k = 0; k < nops && p->ndim == 1; k++) {
        p->contig &= p->data[k] == NULL || p->strides[k][0] == 1;
    }
}

static mt_status
launch(const void *kernel, mt_cuda_ew *p, int per_thread)
{
    int64_t threads = MT_CUDA_THREADS;
    int64_t blocks = p->contig ? (p->n + threads * per_thread - 1) / (threads * per_thread)
                               : (p->n + threads - 1) / threads;
    if (!p->contig && blocks > 65536 * 8) {
        blocks = 65536 * 8; /* the strided loop strides over the grid; more blocks buy nothing */
    }
    void *args[] = {p};
    return mt_cuda_launch(kernel, (unsigned)blocks, (unsigned)threads, args);
}

mt_status
mt_cuda_copy_into(mt_tensor *dst, mt_tensor *src)
{
    mt_cuda_ew p;
    memset(&p, 0, sizeof(p));
    mt_tensor *ops[2] = {dst, src};
    p.data[0] = mt_tensor_data(dst);
    p.data[1] = mt_tensor_data(src);
    p.nin = 1;
    geometry(&p, dst->ndim, dst->sizes, ops, 2);
    if (p.n == 0) {
        return MT_OK;
    }
    mt_status st = mt_cuda_use_device(mt_tensor_device(dst));
    if (st) {
        return st;
    }
    if (p.contig && dst->dtype == src->dtype) {
        mt_cuda_span span = mt_cuda_span_begin("MemcpyAsync", MT_LAYER_RUNTIME, "CUDA",
                                               MT_GPU_MEMCPY, "Memcpy DtoD (Device -> Device)");
        cudaError_t err = cudaMemcpyAsync(p.data[0], p.data[1],
                                          (size_t)p.n * mt_dtype_size(dst->dtype),
                                          cudaMemcpyDeviceToDevice, 0);
        mt_cuda_span_end(&span);
        return mt_cuda_check(err);
    }
    return launch(mt_cuda_cast_kernel(dst->dtype, src->dtype), &p, 1);
}

mt_status
mt_cuda_fill(mt_tensor *dst, mt_scalar value)
{
    mt_cuda_ew p;
    memset(&p, 0, sizeof(p));
    p.data[0] = mt_tensor_data(dst);
    p.k = to_cuda_scalar(value);
    geometry(&p, dst->ndim, dst->sizes, &dst, 1);
    mt_status st = mt_cuda_use_device(mt_tensor_device(dst));
    if (st || p.n == 0) {
        return st;
    }
    return launch(mt_cuda_ew_kernel(MT_CUDA_FILL, dst->dtype), &p,
                  16 / (int)mt_dtype_size(dst->dtype));
}

mt_status
mt_cuda_elementwise(mt_tensor *const *ins, int nin, mt_dtype dt, mt_cuda_ew_op op, mt_scalar k,
                    const char *name, bool inplace, mt_tensor **out)
{
    const void *kernel = mt_cuda_ew_kernel(op, dt);
    if (kernel == NULL) {
        return mt_fail(MT_ENOTIMPL, "\"%s_cuda\" not implemented for '%s'", name,
                       mt_dtype_scalar_name(dt));
    }
    mt_status st = MT_OK;
    int ndim = 0;
    int64_t shape[MT_MAX_DIMS] = {0};
    mt_tensor *cast[MT_CUDA_MAX_OPERANDS] = {NULL};
    mt_tensor *ops[MT_CUDA_MAX_OPERANDS] = {NULL};
    mt_tensor *res = NULL;
    bool need_tmp = false;
    mt_cuda_ew p;
    memset(&p, 0, sizeof(p));

    for (int j = 0; j < nin; j++) {
        st = mt_broadcast_shapes(ndim, shape, ins[j]->ndim, ins[j]->sizes, &ndim, shape);
        if (st) {
            return st;
        }
    }
    if (inplace) {
        if ((st = mt_check_inplace(ins[0], ndim, shape, dt)) || (st = mt_check_writable(ins[0]))) {
            return st;
        }
        need_tmp = ins[0]->dtype != dt;
        for (int j = 1; j < nin; j++) {
            need_tmp |= ins[j]->storage == ins[0]->storage && !mt_tensor_same_view(ins[j], ins[0]);
        }
    }
    for (int j = 0; j < nin; j++) {
        ops[j + 1] = ins[j];
        if (is_number(ins[j])) {
            mt_scalar v;
            if ((st = mt_tensor_item(ins[j], &v))) {
                goto out_release;
            }
            p.scalar[j + 1] = to_cuda_scalar(v);
            continue;
        }
        p.data[j + 1] = mt_tensor_data(ins[j]);
        if (ins[j]->dtype != dt) {
            if ((st = mt_tensor_empty(ins[j]->ndim, ins[j]->sizes, dt, mt_tensor_device(ins[j]),
                                      &cast[j])) ||
                (st = mt_cuda_copy_into(cast[j], ins[j]))) {
                goto out_release;
            }
            ops[j + 1] = cast[j];
            p.data[j + 1] = mt_tensor_data(cast[j]);
        }
    }
    /* The device: the first tensor's that is not a Python number. */
    mt_device dev = {MT_CUDA, 0};
    for (int j = nin - 1; j >= 0; j--) {
        dev = is_number(ins[j]) ? dev : mt_tensor_device(ins[j]);
    }
    if (inplace && !need_tmp) {
        res = mt_tensor_retain(ins[0]);
    } else if ((st = mt_tensor_empty(ndim, shape, dt, dev, &res))) {
        goto out_release;
    }
    ops[0] = res;
    p.data[0] = mt_tensor_data(res);
    p.nin = nin;
    p.k = to_cuda_scalar(mt_scalar_is_none(k) ? mt_scalar_int(1) : k);
    geometry(&p, ndim, shape, ops, nin + 1);
    if (p.n > 0 && ((st = mt_cuda_use_device(dev)) ||
                    (st = launch(kernel, &p, 16 / (int)mt_dtype_size(dt))))) {
        goto out_release;
    }
    if (inplace) {
        if (need_tmp) {
            st = mt_cuda_copy_into(ins[0], res);
            mt_tensor_release(res);
            res = st ? NULL : mt_tensor_retain(ins[0]);
        }
        if (res) {
            mt_tensor_bump_version(ins[0]);
        }
    }
    *out = res;
    res = NULL;
out_release:
    mt_tensor_clear(&res);
    for (int j = 0; j < MT_CUDA_MAX_OPERANDS; j++) {
        mt_tensor_clear(&cast[j]);
    }
    return st;
}
