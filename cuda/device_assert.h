/* Device-side assertions: a kernel that meets a bad value (an index out of range, a target
 * outside the classes) records it here and skips the element, and the host learns of it at its
 * next synchronisation (mt_cuda_assert_check after .item(), .cpu(), synchronize, ...), as
 * PyTorch's CUDA_KERNEL_ASSERT reports "CUDA error: device-side assert triggered". So no op
 * waits for its kernels to check its arguments. The record is one pinned (mapped) host block
 * that every device's kernels write through unified addressing; the first failure wins. Unlike
 * PyTorch's trap, the failure does not poison the context: once raised it is cleared. */
#ifndef MT_CUDA_DEVICE_ASSERT_H
#define MT_CUDA_DEVICE_ASSERT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What failed; the host words each as the kernel's assertion (device_assert.c). */
typedef enum mt_cuda_assert_kind {
    MT_CUDA_ASSERT_INDEX = 1,    /* an advanced index outside [-size, size) */
    MT_CUDA_ASSERT_POSITION,     /* gather/scatter/index_select/embedding: outside [0, size) */
    MT_CUDA_ASSERT_NLL_TARGET,   /* nll_loss / cross_entropy: a target outside [0, C) */
    MT_CUDA_ASSERT_BCE_INPUT,    /* binary_cross_entropy: an input outside [0, 1] */
    MT_CUDA_ASSERT_POOL_INDEX,   /* max_pool2d backward: an index outside its plane */
    MT_CUDA_ASSERT_POOL3D_INDEX, /* max_pool3d backward: the same */
    MT_CUDA_ASSERT_BERNOULLI_P,  /* bernoulli_: a probability outside [0, 1] (or NaN) */
} mt_cuda_assert_kind;

typedef struct mt_cuda_assert_record {
    unsigned int failed; /* 0, or 1 once a kernel's assertion failed */
    int kind;            /* an mt_cuda_assert_kind */
    long long value;     /* the offending value (an index, a target) */
    long long bound;     /* the size it had to lie in */
} mt_cuda_assert_record;

#ifdef __CUDACC__
/* In a kernel: records the first failure (later ones are dropped) and returns; the caller
 * skips the element. */
static __device__ __forceinline__ void
mt_cuda_assert_fail(mt_cuda_assert_record *r, int kind, long long value, long long bound)
{
    if (atomicCAS(&r->failed, 0u, 1u) == 0u) {
        r->kind = kind;
        r->value = value;
        r->bound = bound;
    }
}
#endif

#ifdef __cplusplus
}
#endif

#endif
