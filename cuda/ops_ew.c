/* The CUDA key's kernels of the elementwise family, generated from ops/elementwise.def: each
 * runs the family's front end (ops/elementwise.c, through the C API: checks, dtype rules,
 * PyTorch's messages) with this device's loop (elementwise.c). Nothing else lives here. */
#include "cuda/elementwise.h"
#include "cuda/ops.h"

#define MT_EW_OP(op, row)                                                  \
    static mt_status cuda_##op(mt_args *a)                                 \
    {                                                                      \
        return mt_ew_call(MT_OP_##op, MT_EW_##row, a, &mt_cuda_ew_device); \
    }
#include "ops/elementwise.def"

void
mt_cuda_register_elementwise(void)
{
    static const mt_cuda_reg kernels[] = {
#define MT_EW_OP(op, row) MT_CUDA_REG(op),
#include "ops/elementwise.def"
    };
    mt_cuda_register_all(kernels, sizeof(kernels) / sizeof(kernels[0]));
}
