/* The tables of front ends (front.h), by op. */
#include "ops/front.h"

const mt_front_fn mt_op_fronts[MT_NUM_OPS] = {
#define MT_FRONT_ENTRY(op, front) [MT_OP_##op] = mt_front_##front,
    MT_FRONTS(MT_FRONT_ENTRY)
#undef MT_FRONT_ENTRY
};

const bool mt_op_is_elementwise[MT_NUM_OPS] = {
#define MT_EW_OP(op, row, flags, schema) [MT_OP_##op] = true,
#include "ops/elementwise.def"
};
