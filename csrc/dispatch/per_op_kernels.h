/* One kernel function per op for a boxed kernel that takes the op (an mt_kernel_fn carries no
 * op id): the host round trip's, the meta device's, autograd's. Include it once in a .c file,
 * with PER_OP_CALL defined as the boxed function, mt_status (*)(mt_op op, mt_args *a), and
 * PER_OP_PREFIX as the functions' prefix; it defines static <prefix>_<op>(a) for every op of
 * ops.def and their table, static const mt_kernel_fn <prefix>_kernels[MT_NUM_OPS]. */
#define PER_OP_PASTE2(a, b) a##_##b
#define PER_OP_PASTE(a, b) PER_OP_PASTE2(a, b)

#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) \
    static mt_status PER_OP_PASTE(PER_OP_PREFIX, name)(mt_args * a)   \
    {                                                                 \
        return PER_OP_CALL(MT_OP_##name, a);                          \
    }
#include "dispatch/ops.def"
#undef MT_OP

static const mt_kernel_fn PER_OP_PASTE(PER_OP_PREFIX, kernels)[MT_NUM_OPS] = {
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) \
    [MT_OP_##name] = PER_OP_PASTE(PER_OP_PREFIX, name),
#include "dispatch/ops.def"
#undef MT_OP
};

#undef PER_OP_PASTE
#undef PER_OP_PASTE2
