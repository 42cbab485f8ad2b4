/* The CUDA key's kernel files (ops*.c) and how each registers its kernels into _C. */
#ifndef MT_CUDA_OPS_H
#define MT_CUDA_OPS_H

#include "cuda/cuda.h"

typedef struct mt_cuda_reg {
    mt_op op;
    mt_kernel_fn fn;
    const char *name;
} mt_cuda_reg;

/* {MT_OP_<name>, cuda_<name>, "mt_cuda_<name>"}; REG2 also the in-place <name>_ */
#define MT_CUDA_REG(name) {MT_OP_##name, cuda_##name, "mt_cuda_" #name}
#define MT_CUDA_REG2(name) MT_CUDA_REG(name), MT_CUDA_REG(name##_)

/* Adds n kernels to the backend's table (ops.c), which _C registers for the CUDA key. */
void mt_cuda_register_all(const mt_cuda_reg *kernels, size_t n);

/* The loops of the families whose kernels _C runs (dispatch/backend.h) */
extern const mt_index_backend mt_cuda_index;             /* ops_index.c */
extern const mt_multinomial_device mt_cuda_multinomial; /* ops_random.c */
extern const mt_stats_device mt_cuda_stats;             /* ops_stats.c */
mt_status mt_cuda_bce(mt_tensor *const *ins, mt_dtype dt, bool logits,
                      mt_tensor **result); /* ops_nn.c */
/* The first k of each row of self along dim, sorted: values (unless NULL) and int64 indices,
 * shaped like self with k along dim (ops_sort.c). */
mt_status mt_cuda_sort_along(mt_tensor *self, int dim, int64_t k, bool desc, mt_tensor **values,
                             mt_tensor **indices);
extern const mt_caching_backend mt_cuda_memory; /* alloc.c */

void mt_cuda_register_reduce(void);      /* ops_reduce.c */
void mt_cuda_register_pool(void);        /* ops_pool.c */
void mt_cuda_register_conv(void);        /* conv.c (cuDNN; nothing without it) */
long mt_cuda_cudnn_version(void);        /* conv.c: cudnnGetVersion(), 0 without cuDNN */
void mt_cuda_register_random(void);      /* ops_random.c */
void mt_cuda_register_shape(void);       /* ops_shape.c */
void mt_cuda_register_nn(void);          /* ops_nn.c */
void mt_cuda_register_select(void);      /* ops_select.c */
void mt_cuda_register_norm(void);        /* ops_norm.c */
void mt_cuda_register_sort(void);        /* ops_sort.c */
void mt_cuda_register_optim(void);       /* ops_optim.c */
void mt_cuda_register_stats(void);       /* ops_stats.c */
void mt_cuda_register_grid(void);        /* ops_grid.c */

#endif
