/* The CUDA key's nonzero and masked_select: flags (int64 0/1) of the selected elements, their
 * inclusive prefix sum on the device (CUB), one read back of its last entry for the result's
 * size (PyTorch synchronises here too), then a scatter by select.cu's kernels. */
#include "cuda/elementwise.h"
#include "cuda/kernels_index_fill_nn.h"
#include "cuda/ops.h"
#include "cuda/select.h"

/* flags (n) int64 contiguous, 0/1 -> their inclusive sum in place; *count = its last entry
 * (0 for n == 0), read back to the host. */
static mt_status
scan_count(mt_tensor *flags, int64_t *count)
{
    mt_device dev = mt_tensor_device(flags);
    int64_t n = mt_tensor_numel(flags);
    *count = 0;
    if (n == 0) {
        return MT_OK;
    }
    int64_t *x = (int64_t *)mt_tensor_data(flags);
    mt_tensor *temp = NULL;
    size_t bytes = 0;
    mt_status st = mt_cuda_use_device(dev);
    if (st || (st = mt_cuda_check(mt_cuda_inclusive_sum_bytes(n, &bytes)))) {
        return st;
    }
    int64_t tn = bytes > 0 ? (int64_t)bytes : 1;
    if ((st = mt_tensor_empty(1, &tn, MT_BOOL, dev, &temp))) {
        return st;
    }
    cudaStream_t stream = mt_cuda_current_stream(dev.index);
    if ((st = mt_cuda_check(mt_cuda_inclusive_sum(mt_tensor_data(temp), bytes, x, n, stream))) ==
            MT_OK &&
        (st = mt_cuda_check(cudaMemcpyAsync(count, x + n - 1, sizeof(*count),
                                            cudaMemcpyDeviceToHost, stream))) == MT_OK) {
        st = mt_cuda_sync_stream(stream);
    }
    mt_tensor_clear(&temp);
    return st;
}

// self (*) of any dtype -> out (count, ndim) int64: the coordinates of self's nonzero elements
// in row-major order (NaN counts as nonzero, as on the CPU)
mt_status
mt_cuda_nonzero(mt_args *a)
{
    mt_tensor *self = a->t[0], *nz = NULL, *flags = NULL;
    int64_t count = 0;
    mt_status st = mt_cuda_cast(self, MT_BOOL, &nz); /* contiguous: element i is flat i */
    if (st || (st = mt_cuda_cast(nz, MT_INT64, &flags)) || (st = scan_count(flags, &count))) {
        goto out_release;
    }
    int64_t shape[2] = {count, self->ndim};
    if ((st = mt_dispatch_result(a, 0, MT_INT64, 2, shape, mt_tensor_device(self)))) {
        goto out_release;
    }
    if (count > 0 && self->ndim > 0) {
        mt_cuda_nz p = {.ndim = self->ndim,
                        .n = mt_tensor_numel(flags),
                        .incl = (const int64_t *)mt_tensor_data(flags),
                        .out = (int64_t *)mt_tensor_data(a->out[0])};
        for (int d = 0; d < self->ndim; d++) {
            p.sizes[d] = self->sizes[d];
        }
        void *args[] = {&p};
        if ((st = mt_cuda_use_device(mt_tensor_device(self))) ||
            (st = mt_cuda_launch_n(mt_cuda_nonzero_kernel(), p.n, args))) {
            goto out_release;
        }
    }
out_release:
    mt_tensor_clear(&flags);
    mt_tensor_clear(&nz);
    return st;
}

// self (*), mask (*) bool, broadcast together -> out (count of trues) = self's elements where
// mask, in row-major order of the broadcast shape
mt_status
mt_cuda_masked_select(mt_args *a)
{
    mt_tensor *self = a->t[0], *mask = a->t[1];
    mt_tensor *se = NULL, *me = NULL, *src = NULL, *flags = NULL;
    const mt_shape_plan *p = &a->plan->shape;
    int64_t count = 0;
    mt_status st;
    if ((st = mt_op_expand(self, p->ndim, p->sizes, &se)) ||
        (st = mt_op_expand(mask, p->ndim, p->sizes, &me)) ||
        (st = mt_cuda_cast(me, MT_INT64, &flags)) || (st = scan_count(flags, &count)) ||
        (st = mt_dispatch_result(a, 0, self->dtype, 1, &count, mt_tensor_device(self)))) {
        goto out_release;
    }
    if (count > 0) {
        if ((st = mt_cuda_cast(se, self->dtype, &src))) { /* contiguous: element i is flat i */
            goto out_release;
        }
        const int64_t *incl = (const int64_t *)mt_tensor_data(flags);
        const char *sp = mt_tensor_data(src);
        char *op = mt_tensor_data(a->out[0]);
        int64_t n = mt_tensor_numel(flags);
        void *args[] = {&incl, &sp, &op, &n};
        const void *kernel = mt_cuda_select_kernel(mt_dtype_size(self->dtype));
        if (kernel == NULL) {
            st = mt_fail_not_implemented("masked_select", "_cuda", self->dtype);
            goto out_release;
        }
        if ((st = mt_cuda_use_device(mt_tensor_device(self))) ||
            (st = mt_cuda_launch_n(kernel, n, args))) {
            goto out_release;
        }
    }
out_release:
    mt_tensor_clear(&src);
    mt_tensor_clear(&flags);
    mt_tensor_clear(&me);
    mt_tensor_clear(&se);
    return st;
}
