/* Prototypes of every kernel named in ops.def: mt_cpu_<op> (or the mt_cpu_<kernel> of a
 * CPU_AS(kernel) row) and mt_composite_<op>. */
#ifndef MT_KERNELS_H
#define MT_KERNELS_H

#include "dispatch/dispatch.h"

#define MT_DECL_CPU(name) mt_status mt_cpu_##name(mt_args *a);
#define MT_DECL_COMPOSITE(name) mt_status mt_composite_##name(mt_args *a);
#define MT_DECL__(name)
/* A row's CPU_AS(kernel) pastes into MT_DECL_CPU_AS(kernel)(name): the kernel's prototype, and
 * MT_EAT takes the op's name that follows. */
#define MT_EAT(name)
#define MT_DECL_CPU_AS(kernel) MT_DECL_CPU(kernel) MT_EAT
#define MT_OP(name, cpu, composite, nout, flags, schema) \
    MT_DECL_##cpu(name) MT_DECL_##composite(name)
#include "dispatch/ops.def"
#undef MT_OP

#endif
