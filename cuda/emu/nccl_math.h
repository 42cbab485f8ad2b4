/* The emulated NCCL's arithmetic (cuda/emu/nccl.c, its only includer): the size of each
 * ncclDataType_t and the reductions a collective applies, out[i] = out[i] op in[i] over the
 * types minitorch passes (16-bit floats through float, rounded at each step as a kernel storing
 * them would be), and ncclAvg's division at the end. No communication here. */
#ifndef MT_EMU_NCCL_MATH_H
#define MT_EMU_NCCL_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/half.h"
#include "cuda/nccl.h"


static size_t
type_size(ncclDataType_t t)
{
    static const size_t sizes[mt_nccl_num_types] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
    return (unsigned)t < mt_nccl_num_types ? sizes[t] : 0;
}

#define REDUCE_INT(T)                             \
    do {                                          \
        T *o = (T *)out;                          \
        const T *x = (const T *)in;               \
        for (size_t i = 0; i < n; i++) {          \
            switch (op) {                         \
            case ncclSum:                         \
            case ncclAvg:                         \
                o[i] = (T)(o[i] + x[i]);          \
                break;                            \
            case ncclProd:                        \
                o[i] = (T)(o[i] * x[i]);          \
                break;                            \
            case ncclMax:                         \
                o[i] = x[i] > o[i] ? x[i] : o[i]; \
                break;                            \
            default:                              \
                o[i] = x[i] < o[i] ? x[i] : o[i]; \
                break;                            \
            }                                     \
        }                                         \
    } while (0)

static double
combine(double a, double b, ncclRedOp_t op)
{
    switch (op) {
    case ncclSum:
    case ncclAvg:
        return a + b;
    case ncclProd:
        return a * b;
    case ncclMax:
        return isnan(a) || a > b ? a : b;
    default:
        return isnan(a) || a < b ? a : b;
    }
}

/* out[i] = out[i] op in[i] for n elements of t (16-bit floats through float, rounded each step
 * as a kernel storing them would be) */
static void
reduce_into(void *out, const void *in, size_t n, ncclDataType_t t, ncclRedOp_t op)
{
    switch (t) {
    case ncclInt8:
        REDUCE_INT(int8_t);
        break;
    case ncclUint8:
        REDUCE_INT(uint8_t);
        break;
    case ncclInt32:
        REDUCE_INT(int32_t);
        break;
    case ncclUint32:
        REDUCE_INT(uint32_t);
        break;
    case ncclInt64:
        REDUCE_INT(int64_t);
        break;
    case ncclUint64:
        REDUCE_INT(uint64_t);
        break;
    case ncclFloat32:
        for (size_t i = 0; i < n; i++) {
            ((float *)out)[i] = (float)combine(((float *)out)[i], ((const float *)in)[i], op);
        }
        break;
    case ncclFloat64:
        for (size_t i = 0; i < n; i++) {
            ((double *)out)[i] = combine(((double *)out)[i], ((const double *)in)[i], op);
        }
        break;
    case ncclFloat16:
        for (size_t i = 0; i < n; i++) {
            float a = mt_half_to_float(((mt_half *)out)[i]);
            float b = mt_half_to_float(((const mt_half *)in)[i]);
            ((mt_half *)out)[i] = mt_float_to_half((float)combine(a, b, op));
        }
        break;
    default: /* ncclBfloat16 */
        for (size_t i = 0; i < n; i++) {
            float a = mt_bf16_to_float(((mt_bf16 *)out)[i]);
            float b = mt_bf16_to_float(((const mt_bf16 *)in)[i]);
            ((mt_bf16 *)out)[i] = mt_float_to_bf16((float)combine(a, b, op));
        }
        break;
    }
}

#define DIVIDE(T, ACC)                                             \
    do {                                                           \
        for (size_t i = 0; i < n; i++) {                           \
            ((T *)buf)[i] = (T)((ACC)((T *)buf)[i] / (ACC)nranks); \
        }                                                          \
    } while (0)

/* ncclAvg's last step: the sum over nranks (integers divided as C divides, toward zero) */
static void
divide(void *buf, size_t n, ncclDataType_t t, int nranks)
{
    switch (t) {
    case ncclInt8:
        DIVIDE(int8_t, int);
        break;
    case ncclUint8:
        DIVIDE(uint8_t, int);
        break;
    case ncclInt32:
        DIVIDE(int32_t, int32_t);
        break;
    case ncclUint32:
        DIVIDE(uint32_t, uint32_t);
        break;
    case ncclInt64:
        DIVIDE(int64_t, int64_t);
        break;
    case ncclUint64:
        DIVIDE(uint64_t, uint64_t);
        break;
    case ncclFloat32:
        DIVIDE(float, float);
        break;
    case ncclFloat64:
        DIVIDE(double, double);
        break;
    case ncclFloat16:
        for (size_t i = 0; i < n; i++) {
            float v = mt_half_to_float(((mt_half *)buf)[i]) / (float)nranks;
            ((mt_half *)buf)[i] = mt_float_to_half(v);
        }
        break;
    default:
        for (size_t i = 0; i < n; i++) {
            float v = mt_bf16_to_float(((mt_bf16 *)buf)[i]) / (float)nranks;
            ((mt_bf16 *)buf)[i] = mt_float_to_bf16(v);
        }
        break;
    }
}

#endif
