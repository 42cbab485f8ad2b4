/* The CUDA key's kernel files (ops*.c, blas.c, conv.c) and the loops they hand _C. */
#ifndef MT_CUDA_OPS_H
#define MT_CUDA_OPS_H

#include "cuda/cuda.h"
#include "dispatch/kernels.h"

/* The prototypes of the kernels ops.def's cuda column names, mt_cuda_<kernel>(a): each is
 * defined in one kernel file, and ops.c's table (generated from the same column) registers
 * them. Adding a CUDA kernel is the kernel and its row's column. */
#define MT_CUDA_KERNEL(kernel) mt_status mt_cuda_##kernel(mt_args *a);
#define MT_CUDA_CUBLAS_KERNEL(name) MT_CUDA_KERNEL(name)
#define MT_CUDA_NO_KERNEL
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) MT_CUDA_COLUMN_##cuda(name)
#include "dispatch/ops.def"
#undef MT_OP
#undef MT_CUDA_KERNEL
#undef MT_CUDA_CUBLAS_KERNEL
#undef MT_CUDA_NO_KERNEL
/* those kernels by op ({NULL, NULL} where the column is _), the table _C registers (ops.c) */
extern const mt_kernel mt_cuda_kernels[MT_NUM_OPS];

/* The loops of the families whose kernels _C runs (dispatch/backend.h) */
extern const mt_index_backend mt_cuda_index;             /* ops_index.c */
extern const mt_multinomial_device mt_cuda_multinomial; /* ops_random.c */
extern const mt_stats_device mt_cuda_stats;             /* ops_stats.c */
mt_status mt_cuda_bce(mt_tensor *const *ins, bool logits, mt_tensor *loss); /* ops_nn.c */
/* The first k of each row of self along dim, sorted: values (unless NULL) and int64 indices,
 * shaped like self with k along dim (ops_sort.c). */
mt_status mt_cuda_sort_along(mt_tensor *self, int dim, int64_t k, bool desc, mt_tensor **values,
                             mt_tensor **indices);
extern const mt_caching_backend mt_cuda_memory; /* alloc.c */

long mt_cuda_cudnn_version(void);        /* conv.c: cudnnGetVersion(), 0 without cuDNN */

#endif
