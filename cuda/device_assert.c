/* Device-side assertions, the host side (device_assert.h): the one record the kernels write,
 * and its check after each host synchronisation. */
#include <stdatomic.h>
#include <stdio.h>

#include "cuda/cuda.h"
#include "cuda/device_assert.h"

static _Atomic(mt_cuda_assert_record *) record;

mt_status
mt_cuda_assert_record_get(mt_cuda_assert_record **out)
{
    mt_cuda_assert_record *r = atomic_load(&record);
    if (r == NULL) {
        void *p = NULL;
        mt_status st = mt_cuda_check(cudaMallocHost(&p, sizeof(mt_cuda_assert_record)));
        if (st) {
            return st;
        }
        *(volatile mt_cuda_assert_record *)p = (mt_cuda_assert_record){0};
        mt_cuda_assert_record *none = NULL;
        if (atomic_compare_exchange_strong(&record, &none, (mt_cuda_assert_record *)p)) {
            r = p;
        } else {
            (void)cudaFreeHost(p); /* another thread's came first */
            r = none;
        }
    }
    *out = r;
    return MT_OK;
}

mt_status
mt_cuda_assert_check(void)
{
    volatile mt_cuda_assert_record *r = atomic_load(&record);
    if (r == NULL || r->failed == 0) {
        return MT_OK;
    }
    const long long v = r->value, b = r->bound;
    const int kind = r->kind;
    r->failed = 0;
    /* the kernel's assertion, in the words of PyTorch's kernel for the same check */
    char what[256];
    switch (kind) {
    case MT_CUDA_ASSERT_INDEX:
        snprintf(what, sizeof(what),
                 "Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` "
                 "failed: index %lld is out of bounds for size %lld",
                 v, b);
        break;
    case MT_CUDA_ASSERT_POSITION:
        snprintf(what, sizeof(what),
                 "Assertion `idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\"` "
                 "failed: index %lld is out of bounds for size %lld",
                 v, b);
        break;
    case MT_CUDA_ASSERT_NLL_TARGET:
        snprintf(what, sizeof(what),
                 "Assertion `t >= 0 && t < n_classes` failed: target %lld is out of bounds for "
                 "%lld classes",
                 v, b);
        break;
    case MT_CUDA_ASSERT_BCE_INPUT:
        snprintf(what, sizeof(what),
                 "Assertion `input_val >= zero && input_val <= one` failed: all elements of "
                 "input should be between 0 and 1");
        break;
    case MT_CUDA_ASSERT_BERNOULLI_P:
        snprintf(what, sizeof(what), "Assertion `0 <= p1 && p1 <= 1` failed.");
        break;
    default: /* the max poolings' backward */
        snprintf(what, sizeof(what),
                 "Assertion `index >= 0 && index < height * width` failed: max_pool%dd index "
                 "%lld is out of bounds for a plane of %lld",
                 kind == MT_CUDA_ASSERT_POOL3D_INDEX ? 3 : 2, v, b);
        break;
    }
    return mt_fail(MT_ECUDA,
                   "CUDA error: device-side assert triggered\n%s\nCUDA kernel errors might be "
                   "asynchronously reported at some other API call, so the stacktrace below "
                   "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                   what);
}

mt_status
mt_cuda_sync_stream(cudaStream_t stream)
{
    mt_status st = mt_cuda_check(cudaStreamSynchronize(stream));
    return st ? st : mt_cuda_assert_check();
}
