/* Arithmetic on the CPU: add, sub, mul, div, true_divide (and in place), neg, clamp_min,
 * clamp_max. div with a rounding mode is arith.c's.
 *
 * Each op contributes only its inner loops; promotion, broadcasting and output handling are
 * the shared driver's (elementwise.c). */
#include <string.h>

#include "core/math.h"
#include "cpu/arith.h"
#include "cpu/elementwise.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/arg_checks.h"

/* The loops' context: a scalar operand (alpha, min) stored as the compute dtype. */
typedef struct scalar_ctx {
    _Alignas(8) char v[8];
} scalar_ctx;

// out, x, y all broadcast to one shape; out = EXPR(x, y, k) with k the scalar operand
#define BINARY_LOOP(name, T, EXPR)                                                        \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)          \
    {                                                                                     \
        const T k = *(const T *)((scalar_ctx *)ctx)->v;                                   \
        (void)k;                                                                          \
        if (strides[0] == sizeof(T) && strides[1] == sizeof(T) && strides[2] == sizeof(T)) { \
            T *o = (T *)data[0];                                                          \
            const T *xs = (const T *)data[1], *ys = (const T *)data[2];                   \
            for (int64_t i = 0; i < n; i++) {                                             \
                const T x = MT_LOAD(T, xs + i), y = MT_LOAD(T, ys + i);                   \
                o[i] = (T)(EXPR);                                                         \
            }                                                                             \
            return;                                                                       \
        }                                                                                 \
        if (strides[0] == sizeof(T) && strides[1] == sizeof(T) && strides[2] == 0) {      \
            T *o = (T *)data[0];                                                          \
            const T *xs = (const T *)data[1], y = MT_LOAD(T, data[2]);                    \
            for (int64_t i = 0; i < n; i++) {                                             \
                const T x = MT_LOAD(T, xs + i);                                           \
                o[i] = (T)(EXPR);                                                         \
            }                                                                             \
            return;                                                                       \
        }                                                                                 \
        for (int64_t i = 0; i < n; i++) {                                                 \
            const T x = MT_GET(T, 1, i), y = MT_GET(T, 2, i);                             \
            MT_AT(T, 0, i) = (T)(EXPR);                                                   \
        }                                                                                 \
    }

// out, x broadcast to one shape; out = EXPR(x, k)
#define UNARY_LOOP(name, T, EXPR)                                                \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                            \
        const T k = *(const T *)((scalar_ctx *)ctx)->v;                          \
        (void)k;                                                                 \
        if (strides[0] == sizeof(T) && strides[1] == sizeof(T)) {                \
            T *o = (T *)data[0];                                                 \
            const T *xs = (const T *)data[1];                                    \
            for (int64_t i = 0; i < n; i++) {                                    \
                const T x = MT_LOAD(T, xs + i);                                  \
                o[i] = (T)(EXPR);                                                \
            }                                                                    \
            return;                                                              \
        }                                                                        \
        for (int64_t i = 0; i < n; i++) {                                        \
            const T x = MT_GET(T, 1, i);                                         \
            MT_AT(T, 0, i) = (T)(EXPR);                                          \
        }                                                                        \
    }

#define NUMERIC_LOOPS(OP, LOOP, EXPR)         \
    LOOP(OP##_i32, int32_t, EXPR)             \
    LOOP(OP##_i64, int64_t, EXPR)             \
    LOOP(OP##_f32, float, EXPR)               \
    LOOP(OP##_f64, double, EXPR)
#define NUMERIC_TABLE(OP) {NULL, OP##_i32, OP##_i64, OP##_f32, OP##_f64}

NUMERIC_LOOPS(add, BINARY_LOOP, x + k * y)
BINARY_LOOP(add_b8, bool, x || (k && y))
NUMERIC_LOOPS(sub, BINARY_LOOP, x - k * y)
NUMERIC_LOOPS(mul, BINARY_LOOP, x * y)
BINARY_LOOP(mul_b8, bool, x && y)
BINARY_LOOP(div_f32, float, x / y)
BINARY_LOOP(div_f64, double, x / y)
NUMERIC_LOOPS(neg, UNARY_LOOP, -x)
UNARY_LOOP(clamp_min_i32, int32_t, x < k ? k : x)
UNARY_LOOP(clamp_min_i64, int64_t, x < k ? k : x)
UNARY_LOOP(clamp_min_f32, float, mt_clamp_min_f32(x, k))
UNARY_LOOP(clamp_min_f64, double, mt_clamp_min_f64(x, k))
UNARY_LOOP(clamp_max_i32, int32_t, x > k ? k : x)
UNARY_LOOP(clamp_max_i64, int64_t, x > k ? k : x)
UNARY_LOOP(clamp_max_f32, float, mt_clamp_max_f32(x, k))
UNARY_LOOP(clamp_max_f64, double, mt_clamp_max_f64(x, k))

typedef enum binop {
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_NEG, OP_CLAMP_MIN, OP_CLAMP_MAX, NUM_BINOPS
} binop;

static const mt_loop_fn loops[NUM_BINOPS][MT_NUM_DTYPES] = {
    [OP_ADD] = {add_b8, add_i32, add_i64, add_f32, add_f64},
    [OP_SUB] = NUMERIC_TABLE(sub),
    [OP_MUL] = {mul_b8, mul_i32, mul_i64, mul_f32, mul_f64},
    [OP_DIV] = {NULL, NULL, NULL, div_f32, div_f64},
    [OP_NEG] = NUMERIC_TABLE(neg),
    [OP_CLAMP_MIN] = NUMERIC_TABLE(clamp_min),
    [OP_CLAMP_MAX] = NUMERIC_TABLE(clamp_max),
};
static const char *const op_names[NUM_BINOPS] = {"add", "sub", "mul", "div", "neg", "clamp_min",
                                                 "clamp_max"};

static mt_status
run(mt_args *a, binop op, int nin, mt_dtype dt, mt_scalar k, bool inplace)
{
    mt_loop_fn loop = loops[op][dt];
    if (loop == NULL) {
        return mt_fail(MT_ENOTIMPL, "\"%s_cpu\" not implemented for '%s'", op_names[op],
                       mt_dtype_scalar_name(dt));
    }
    scalar_ctx ctx;
    memset(&ctx, 0, sizeof(ctx));
    mt_store_scalar(ctx.v, dt, mt_scalar_is_none(k) ? mt_scalar_int(1) : k);
    return mt_cpu_elementwise(a->t, nin, dt, loop, &ctx, inplace, &a->out[0]);
}

// self, other broadcast together; out = self (op) alpha * other
static mt_status
binary(mt_args *a, binop op, bool inplace)
{
    mt_dtype dt = mt_result_type(a->t, 2);
    if (op == OP_DIV && !mt_dtype_is_float(dt)) {
        dt = MT_DEFAULT_FLOAT; /* true division of integers */
    }
    bool has_alpha = op == OP_ADD || op == OP_SUB;
    mt_scalar alpha = has_alpha ? a->s[0] : (mt_scalar){.type = MT_NUM_DTYPES};
    mt_status st = has_alpha ? mt_check_add_sub(a, op == OP_SUB, dt) : MT_OK;
    if (st) {
        return st;
    }
    return run(a, op, 2, dt, alpha, inplace);
}

MT_CPU_KERNELS(add, binary, OP_ADD)
MT_CPU_KERNELS(sub, binary, OP_SUB)
MT_CPU_KERNELS(mul, binary, OP_MUL)

mt_status
mt_cpu_div(mt_args *a)
{
    return a->str[0] ? mt_cpu_div_rounding(a, false) : binary(a, OP_DIV, false);
}

mt_status
mt_cpu_div_(mt_args *a)
{
    return a->str[0] ? mt_cpu_div_rounding(a, true) : binary(a, OP_DIV, true);
}

MT_CPU_KERNELS(true_divide, binary, OP_DIV)

static mt_status
neg(mt_args *a, bool inplace)
{
    mt_status st = mt_check_neg(a->t[0]);
    if (st) {
        return st;
    }
    return run(a, OP_NEG, 1, a->t[0]->dtype, mt_scalar_int(0), inplace);
}

mt_status
mt_cpu_neg(mt_args *a)
{
    return neg(a, false);
}

mt_status
mt_cpu_neg_(mt_args *a)
{
    return neg(a, true);
}

// self (any shape); out = max(self, min) or min(self, max), NaN-propagating
static mt_status
clamp_bound(mt_args *a, binop op, bool inplace)
{
    return run(a, op, 1, mt_clamp_bound_dtype(a), a->s[0], inplace);
}

MT_CPU_KERNELS(clamp_min, clamp_bound, OP_CLAMP_MIN)
MT_CPU_KERNELS(clamp_max, clamp_bound, OP_CLAMP_MAX)
