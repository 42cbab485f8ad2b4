/* The strided iterator shared by every elementwise and reduction kernel (NumPy's ufunc loop).
 *
 * Operands are broadcast against one shape; dims are reordered innermost-first, size-1 dims
 * dropped and contiguous neighbours merged, so a contiguous case becomes a single call of the
 * inner loop. The loop gets one pointer and one byte stride per operand. Operand 0 is the
 * output; a stride of 0 there (a reduced dim) makes the loop accumulate. */
#ifndef MT_CPU_ITER_H
#define MT_CPU_ITER_H

#include <stdint.h>

#include "core/tensor.h"

#define MT_ITER_MAX_OPS 4

/* data[k] + i * strides[k] is element i of operand k, for i < n. */
typedef void (*mt_loop_fn)(char **data, const int64_t *strides, int64_t n, void *ctx);

typedef struct mt_iter {
    int nops;
    int ndim;
    int64_t shape[MT_MAX_DIMS];                   /* dim 0 is the innermost */
    int64_t strides[MT_MAX_DIMS][MT_ITER_MAX_OPS]; /* bytes */
    char *data[MT_ITER_MAX_OPS];
} mt_iter;

/* Iterates over `shape` (ndim dims); each operand must broadcast to it. */
mt_status mt_iter_build(mt_iter *it, int ndim, const int64_t *shape, mt_tensor *const *ops,
                        int nops);
void mt_iter_run(const mt_iter *it, mt_loop_fn loop, void *ctx);

#endif
