/* Unary math on the CPU: exp, log, log1p, sqrt, rsqrt, sin, cos, tanh, sigmoid, abs, sign,
 * reciprocal, exp2, expm1, log2, log10 (and in place), gelu (exact or tanh), silu.
 *
 * Each op contributes only its inner loops, each a call of a formula of core/math.h (no formula
 * is written here), and its dtype rule; broadcasting, casting and output handling are the
 * shared driver's (elementwise.c). */

#include "core/math.h"
#include "cpu/elementwise.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/arg_checks.h"

// out, x of one shape, both T; out = F(x)
#define UNARY_LOOP(name, T, F)                                                   \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                            \
        (void)ctx;                                                               \
        if (strides[0] == sizeof(T) && strides[1] == sizeof(T)) {                \
            T *o = (T *)data[0];                                                 \
            const T *xs = (const T *)data[1];                                    \
            for (int64_t i = 0; i < n; i++) {                                    \
                o[i] = F(MT_LOAD(T, xs + i));                                    \
            }                                                                    \
            return;                                                              \
        }                                                                        \
        for (int64_t i = 0; i < n; i++) {                                        \
            MT_AT(T, 0, i) = F(MT_GET(T, 1, i));                                 \
        }                                                                        \
    }

#define FLOAT_LOOPS(OP)                          \
    UNARY_LOOP(OP##_f32, float, mt_##OP##_f32)   \
    UNARY_LOOP(OP##_f64, double, mt_##OP##_f64)
#define INT_LOOPS(OP)                              \
    UNARY_LOOP(OP##_i32, int32_t, mt_##OP##_i32)   \
    UNARY_LOOP(OP##_i64, int64_t, mt_##OP##_i64)
#define FLOAT_TABLE(OP) {NULL, NULL, NULL, OP##_f32, OP##_f64}
#define NUMERIC_TABLE(OP) {NULL, OP##_i32, OP##_i64, OP##_f32, OP##_f64}

FLOAT_LOOPS(exp)
FLOAT_LOOPS(log)
FLOAT_LOOPS(log1p)
FLOAT_LOOPS(sqrt)
FLOAT_LOOPS(rsqrt)
FLOAT_LOOPS(sin)
FLOAT_LOOPS(cos)
FLOAT_LOOPS(tanh)
FLOAT_LOOPS(sigmoid)
FLOAT_LOOPS(gelu)
FLOAT_LOOPS(silu)
FLOAT_LOOPS(gelu_tanh)
FLOAT_LOOPS(reciprocal)
FLOAT_LOOPS(exp2)
FLOAT_LOOPS(expm1)
FLOAT_LOOPS(log2)
FLOAT_LOOPS(log10)
FLOAT_LOOPS(abs)
INT_LOOPS(abs)
FLOAT_LOOPS(sign)
INT_LOOPS(sign)
/* A bool's sign is the bool itself (PyTorch keeps the dtype). */
#define SAME(x) (x)
UNARY_LOOP(sign_b8, bool, SAME)

typedef enum unop_id {
    U_EXP, U_LOG, U_LOG1P, U_SQRT, U_RSQRT, U_SIN, U_COS, U_TANH, U_SIGMOID,
    U_ABS, U_SIGN, U_GELU, U_SILU, U_GELU_TANH, U_RECIPROCAL, U_EXP2, U_EXPM1, U_LOG2, U_LOG10,
    NUM_UNOPS
} unop_id;

typedef struct unop {
    const char *kernel; /* PyTorch's kernel name, for "not implemented for" messages */
    bool to_float;      /* integer and bool inputs compute in (and give) the default float */
    mt_loop_fn loops[MT_NUM_DTYPES];
} unop;

static const unop unops[NUM_UNOPS] = {
    [U_EXP] = {"exp_vml_cpu", true, FLOAT_TABLE(exp)},
    [U_LOG] = {"log_vml_cpu", true, FLOAT_TABLE(log)},
    [U_LOG1P] = {"log1p_vml_cpu", true, FLOAT_TABLE(log1p)},
    [U_SQRT] = {"sqrt_vml_cpu", true, FLOAT_TABLE(sqrt)},
    [U_RSQRT] = {"rsqrt_cpu", true, FLOAT_TABLE(rsqrt)},
    [U_SIN] = {"sin_vml_cpu", true, FLOAT_TABLE(sin)},
    [U_COS] = {"cos_vml_cpu", true, FLOAT_TABLE(cos)},
    [U_TANH] = {"tanh_vml_cpu", true, FLOAT_TABLE(tanh)},
    [U_SIGMOID] = {"sigmoid_cpu", true, FLOAT_TABLE(sigmoid)},
    [U_ABS] = {"abs_cpu", false, NUMERIC_TABLE(abs)},
    [U_SIGN] = {"sign_cpu", false, {sign_b8, sign_i32, sign_i64, sign_f32, sign_f64}},
    [U_GELU] = {"GeluKernelImpl", false, FLOAT_TABLE(gelu)},
    [U_SILU] = {"silu_cpu", false, FLOAT_TABLE(silu)},
    [U_GELU_TANH] = {"GeluKernelImpl", false, FLOAT_TABLE(gelu_tanh)},
    [U_RECIPROCAL] = {"reciprocal_cpu", true, FLOAT_TABLE(reciprocal)},
    [U_EXP2] = {"exp2_cpu", true, FLOAT_TABLE(exp2)},
    [U_EXPM1] = {"expm1_vml_cpu", true, FLOAT_TABLE(expm1)},
    [U_LOG2] = {"log2_vml_cpu", true, FLOAT_TABLE(log2)},
    [U_LOG10] = {"log10_vml_cpu", true, FLOAT_TABLE(log10)},
};

// self (any shape); out = f(self), of self's dtype or, for the to_float ops, a float dtype
static mt_status
unary(mt_args *a, unop_id id, bool inplace)
{
    const unop *u = &unops[id];
    mt_dtype dt = a->t[0]->dtype;
    if (u->to_float && !mt_dtype_is_float(dt)) {
        dt = MT_DEFAULT_FLOAT;
    }
    if (u->loops[dt] == NULL) {
        return mt_fail(MT_ENOTIMPL, "\"%s\" not implemented for '%s'", u->kernel,
                       mt_dtype_scalar_name(dt));
    }
    return mt_cpu_elementwise(a->t, 1, dt, u->loops[dt], NULL, inplace, &a->out[0]);
}

/* The kernels of ops.def: mt_cpu_<op> and, where PyTorch has it, mt_cpu_<op>_. */
#define KERNELS(op, id) MT_CPU_KERNELS(op, unary, id)
#define KERNEL(op, id, inplace) MT_CPU_KERNEL(op, unary, id, inplace)

KERNELS(exp, U_EXP)
KERNELS(log, U_LOG)
KERNELS(log1p, U_LOG1P)
KERNELS(sqrt, U_SQRT)
KERNELS(rsqrt, U_RSQRT)
KERNELS(sin, U_SIN)
KERNELS(cos, U_COS)
KERNELS(tanh, U_TANH)
KERNELS(sigmoid, U_SIGMOID)
KERNELS(abs, U_ABS)
KERNELS(sign, U_SIGN)
KERNELS(reciprocal, U_RECIPROCAL)
KERNELS(exp2, U_EXP2)
KERNELS(expm1, U_EXPM1)
KERNELS(log2, U_LOG2)
KERNELS(log10, U_LOG10)
KERNEL(silu, U_SILU, false)

// self (any shape); out = gelu(self), approximate 'none' (erf) or 'tanh'
mt_status
mt_cpu_gelu(mt_args *a)
{
    bool tanh_form;
    mt_status st = mt_gelu_approximate(a->str[0], &tanh_form);
    return st ? st : unary(a, tanh_form ? U_GELU_TANH : U_GELU, false);
}
