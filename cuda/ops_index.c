/* The CUDA loops of the index family (gather, scatter, scatter_add, scatter_reduce (and in place),
 * index, index_put_, index_select and embedding): ops/index_plan.c's front ends check the
 * arguments, and _C's kernels for the CUDA key (dispatch/backend.c) plan each one and call this
 * file's mt_cuda_index, the backend they plan for: index values read
 * as int64 and range checked on the device (a bad one fails a device-side assertion, reported at
 * the next synchronisation, and moves nothing), and index.cu's one strided move kernel. */
#include "cuda/device_assert.h"
#include "cuda/elementwise.h"
#include "cuda/kernels_index_fill_nn.h"
#include "cuda/ops.h"

mt_status
mt_cuda_launch_n(const void *kernel, int64_t n, void **args)
{
    if (n <= 0) {
        return MT_OK;
    }
    int64_t blocks = (n + MT_CUDA_THREADS - 1) / MT_CUDA_THREADS;
    blocks = blocks < 65536 * 8 ? blocks : 65536 * 8;
    return mt_cuda_launch(kernel, (unsigned)blocks, MT_CUDA_THREADS, args);
}

mt_status
mt_cuda_check_range(mt_tensor *v, int64_t lo, int64_t hi, int kind)
{
    int64_t n = mt_tensor_numel(v);
    if (n == 0) {
        return MT_OK;
    }
    mt_cuda_assert_record *rec = NULL;
    mt_status st = mt_cuda_assert_record_get(&rec);
    if (st || (st = mt_cuda_use_device(mt_tensor_device(v)))) {
        return st;
    }
    int64_t *data = (int64_t *)mt_tensor_data(v);
    void *args[] = {&data, &n, &lo, &hi, &rec, &kind};
    return mt_cuda_launch_n(mt_cuda_range_check_kernel(), n, args);
}

/* The backend's positions: always a fresh int64 copy, so never self's memory. */
static mt_status
positions(mt_tensor *index, int64_t size, const mt_tensor *written, mt_tensor **out, bool *bad,
          int64_t *bad_value)
{
    (void)written;
    (void)bad_value;
    *bad = false; /* a bad index fails on the device, reported at the next synchronisation */
    mt_status st = mt_cuda_cast(index, MT_INT64, out);
    if (st == MT_OK && (st = mt_cuda_check_range(*out, 0, size, MT_CUDA_ASSERT_POSITION))) {
        mt_tensor_clear(out);
    }
    return st;
}

/* t's element strides broadcast (right-aligned) to ndim dims of shape. */
static void
broadcast_strides(const mt_tensor *t, int ndim, int64_t *strides)
{
    int lead = ndim - t->ndim;
    for (int d = 0; d < ndim; d++) {
        strides[d] = d < lead || t->sizes[d - lead] == 1 ? 0 : t->strides[d - lead];
    }
}

static mt_status
run(int ndim, const int64_t *shape, mt_tensor *dst, mt_tensor *src, mt_tensor *pos,
    mt_index_mode mode, int64_t step, bool apart)
{
    (void)apart; /* the accumulating kernels add atomically */
    mt_cuda_move p = {0};
    p.ndim = ndim;
    p.n = mt_numel(ndim, shape);
    for (int d = 0; d < ndim; d++) {
        p.sizes[d] = shape[d];
    }
    mt_tensor *ops[3] = {dst, src, pos};
    for (int k = 0; k < 3; k++) {
        broadcast_strides(ops[k], ndim, p.strides[k]);
    }
    p.dst = mt_tensor_data(dst);
    p.src = mt_tensor_data(src);
    p.pos = (const int64_t *)mt_tensor_data(pos);
    p.step = step;
    void *args[] = {&p};
    mt_status st = mt_cuda_use_device(mt_tensor_device(dst));
    return st ? st : mt_cuda_launch_n(mt_cuda_move_kernel((int)mode, dst->dtype), p.n, args);
}

/* The backend's offsets: the bytes of each indexed dim added in, each index checked first. */
static mt_status
offsets(mt_tensor *self, mt_tensor *const *idx, int nb, const int64_t *b, mt_tensor **out)
{
    mt_status st = mt_tensor_empty(nb, b, MT_INT64, mt_tensor_device(self), out);
    if (st || (st = mt_cuda_fill(*out, mt_scalar_int(0)))) {
        goto out_release;
    }
    int64_t width = (int64_t)mt_dtype_size(self->dtype), n = mt_numel(nb, b);
    for (int d = 0; d < self->ndim && st == MT_OK; d++) {
        if (idx[d] == NULL) {
            continue;
        }
        mt_tensor *e = NULL, *v = NULL;
        int64_t size = self->sizes[d], step = self->strides[d] * width;
        if ((st = mt_op_expand(idx[d], nb, b, &e)) == MT_OK &&
            (st = mt_cuda_cast(e, MT_INT64, &v)) == MT_OK &&
            (st = mt_cuda_check_range(v, -size, size, MT_CUDA_ASSERT_INDEX)) == MT_OK) {
            int64_t *pos = (int64_t *)mt_tensor_data(*out);
            const int64_t *vals = (const int64_t *)mt_tensor_data(v);
            void *args[] = {&pos, &vals, &n, &size, &step};
            st = mt_cuda_launch_n(mt_cuda_add_offsets_kernel(), n, args);
        }
        mt_tensor_clear(&v);
        mt_tensor_clear(&e);
    }
out_release:
    if (st) {
        mt_tensor_clear(out);
    }
    return st;
}

const mt_index_backend mt_cuda_index = {positions, mt_cuda_cast, run, offsets};
