/* The errors a backend kernel raises itself: the dtypes it has no loop for, and what only the
 * data shows while it computes (an index out of range, a class value, a probability outside
 * [0, 1]). Each message is written once, here, and every backend calls these (the CUDA one
 * through the C API), so the CPU and CUDA kernels raise the same words; the checks that the
 * arguments alone decide are the front ends' (ops/front.h). */
#ifndef MT_OPS_FAILS_H
#define MT_OPS_FAILS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/status.h"

/* PyTorch's error for a kernel with no loop for dt: "<kernel><suffix>" not implemented for
 * '<dt>', suffix "" or the device's ("_cpu", "_cuda") where PyTorch's kernel name has it. */
mt_status mt_fail_not_implemented(const char *kernel, const char *suffix, mt_dtype dt);
/* gather, scatter, index, index_put_: index lies outside dim's [0, size) (or [-size, size)). */
mt_status mt_fail_index_bounds(int64_t index, int dim, int64_t size, mt_status code);
/* embedding and its backward: an index outside [0, num_weights). */
mt_status mt_fail_embedding_index(void);
/* nll_loss and its backward: a target class outside [0, C) (and not ignore_index). */
mt_status mt_fail_nll_target(int64_t target);
/* binary_cross_entropy: an element of the input (else the target) outside [0, 1]. */
mt_status mt_fail_bce_range(bool input);
/* one_hot: a negative class value, or (!negative) one at or above num_classes. */
mt_status mt_fail_one_hot_class(bool negative);
/* max_pool2d/3d_with_indices_backward (nd 2 or 3 spatial dims): an index outside its plane
 * of plane elements. */
mt_status mt_fail_pool_index(int nd, int64_t plane);

/* The failures above as one call, the one entry of the C API that a plug-in's same-named
 * functions forward to (cuda/capi_import.c): kind and the arguments of its function. */
typedef enum mt_kernel_fail {
    MT_FAIL_NOT_IMPLEMENTED, /* kernel, suffix, dtype */
    MT_FAIL_INDEX_BOUNDS,    /* value (the index), dim, size, code */
    MT_FAIL_EMBEDDING_INDEX,
    MT_FAIL_NLL_TARGET,    /* value (the target) */
    MT_FAIL_BCE_RANGE,     /* flag (input) */
    MT_FAIL_ONE_HOT_CLASS, /* flag (negative) */
    MT_FAIL_POOL_INDEX,    /* dim (the spatial dims), value (the plane) */
} mt_kernel_fail;

typedef struct mt_fail_args {
    const char *kernel, *suffix;
    mt_dtype dtype;
    int64_t value;
    int dim;
    int64_t size;
    mt_status code;
    bool flag;
} mt_fail_args;

mt_status mt_fail_kernel(mt_kernel_fail kind, const mt_fail_args *x);

#endif
