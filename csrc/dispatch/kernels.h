/* Prototypes of every kernel of _C named in ops.def: mt_cpu_<op> (or the mt_cpu_<kernel> of a
 * CPU_AS(kernel) row) and mt_composite_<op> (or the mt_composite_<kernel> of a COMPOSITE_AS(kernel)
 * row); and the reading of the cuda column, whose kernels are _C_cuda's (cuda/ops.h declares
 * them, cuda/ops.c registers them). */
#ifndef MT_KERNELS_H
#define MT_KERNELS_H

#include "dispatch/dispatch.h"

#define MT_DECL_CPU(name) mt_status mt_cpu_##name(mt_args *a);
#define MT_DECL_COMPOSITE(name) mt_status mt_composite_##name(mt_args *a);
#define MT_DECL__(name)
/* A row's CPU_AS(kernel) pastes into MT_DECL_CPU_AS(kernel)(name): the kernel's prototype, and
 * MT_EAT takes the op's name that follows (COMPOSITE_AS alike). */
#define MT_EAT(name)
#define MT_DECL_CPU_AS(kernel) MT_DECL_CPU(kernel) MT_EAT
#define MT_DECL_COMPOSITE_AS(kernel) MT_DECL_COMPOSITE(kernel) MT_EAT
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) \
    MT_DECL_##cpu(name) MT_DECL_##composite(name)
#include "dispatch/ops.def"
#undef MT_OP

/* A row's cuda column pastes into MT_CUDA_COLUMN_<column>(name): MT_CUDA_KERNEL(kernel) with
 * the kernel's name (the op's own, or CUDA_AS's), MT_CUDA_CUBLAS_KERNEL(name) for a CUBLAS
 * row, MT_CUDA_NO_KERNEL for _. A consumer defines those three. */
#define MT_CUDA_COLUMN_CUDA(name) MT_CUDA_KERNEL(name)
#define MT_CUDA_COLUMN_CUDA_AS(kernel) MT_CUDA_KERNEL(kernel) MT_EAT
#define MT_CUDA_COLUMN_CUBLAS(name) MT_CUDA_CUBLAS_KERNEL(name)
#define MT_CUDA_COLUMN__(name) MT_CUDA_NO_KERNEL

#endif
