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

/* Registers n kernels for the CUDA key. */
void mt_cuda_register_all(const mt_cuda_reg *kernels, size_t n);

void mt_cuda_register_elementwise(void); /* ops_ew.c */
void mt_cuda_register_reduce(void);      /* ops_reduce.c */
void mt_cuda_register_pool(void);        /* ops_pool.c */
void mt_cuda_register_conv(void);        /* conv.c (cuDNN; nothing without it) */
void mt_cuda_register_index(void);       /* ops_index.c */
void mt_cuda_register_random(void);      /* ops_random.c */
void mt_cuda_register_shape(void);       /* ops_shape.c */
void mt_cuda_register_nn(void);          /* ops_nn.c */
void mt_cuda_register_select(void);      /* ops_select.c */
void mt_cuda_register_norm(void);        /* ops_norm.c */
void mt_cuda_register_sort(void);        /* ops_sort.c */
void mt_cuda_register_optim(void);       /* ops_optim.c */
void mt_cuda_register_stats(void);       /* ops_stats.c */
/* Last: a host round trip for each op with a CPU kernel and no CUDA kernel yet. */
void mt_cuda_register_host_fallback(void); /* host_fallback.c */

#endif
