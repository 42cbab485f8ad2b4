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
#include "core/threads.h" /* the thread count, which the loops split their work by */

#define MT_ITER_MAX_OPS 4

/* data[k] + i * strides[k] is element i of operand k, for i < n. */
typedef void (*mt_loop_fn)(char **data, const int64_t *strides, int64_t n, void *ctx);

typedef struct mt_iter {
    int nops;
    int ndim;
    int64_t shape[MT_MAX_DIMS];                   /* dim 0 is the innermost */
    int64_t strides[MT_MAX_DIMS][MT_ITER_MAX_OPS]; /* bytes */
    char *data[MT_ITER_MAX_OPS];
    int64_t item[MT_ITER_MAX_OPS]; /* each operand's element size in bytes */
    bool any_order; /* mt_iter_build_any_order's: mt_iter_run may walk the dims in tiles */
} mt_iter;

/* Iterates over `shape` (ndim dims); each operand must broadcast to it. */
mt_status mt_iter_build(mt_iter *it, int ndim, const int64_t *shape, mt_tensor *const *ops,
                        int nops);
/* The same, for a loop whose elements may be visited in any order (an elementwise one): the dims
 * ordered by the operands' strides, as TensorIterator does, so permuted operands laid out alike
 * run as contiguous ones. The loop must only read operands 1.. (only write operand 0): a
 * transposed input may reach it as a contiguous copy of a tile (iter.c's run_tiles). */
mt_status mt_iter_build_any_order(mt_iter *it, int ndim, const int64_t *shape,
                                  mt_tensor *const *ops, int nops);
void mt_iter_run(const mt_iter *it, mt_loop_fn loop, void *ctx);

/* Threads: the outermost dim is split into `parts` ranges, one per thread. mt_iter_parts says how
 * many are worth it (1 for small work); mt_iter_part gives range p as an iterator of its own. */
int mt_iter_parts(const mt_iter *it);
void mt_iter_part(const mt_iter *it, int parts, int p, mt_iter *sub);
/* mt_iter_run on mt_iter_parts threads. Only for loops whose output (operand 0) has no stride-0
 * dim, so that the threads write disjoint elements, and that only read ctx (or write it
 * atomically). */
void mt_iter_run_parallel(const mt_iter *it, mt_loop_fn loop, void *ctx);
/* The number of threads worth using for n units of work of `grain` each (at least 1). */
int mt_parallel_parts(int64_t n, int64_t grain);

/* The CPU's one thread pool (threads.c): OpenMP's, which OpenBLAS's parallel sections run on
 * too. mt_cpu_threads_init installs that and takes OMP_NUM_THREADS (or the cores) as the count,
 * which core/threads.h's mt_set_num_threads sets for both. */
void mt_cpu_threads_init(void);
/* Around a LAPACK call, or a parallel region whose threads call BLAS (a batch of gemms split
 * between them): OpenBLAS at one thread (begin returns the count to restore), see cpu/threads.c. */
int mt_cpu_lapack_begin(void);
void mt_cpu_lapack_end(int threads);

#endif
