/* Division with rounding, remainders, powers and clamps on the CPU: floor_divide, remainder,
 * fmod, div(rounding_mode='trunc'|'floor'), pow, clamp (and in place).
 *
 * The formulas are core/math.h's; this file holds only the loops, the dtype rules and the
 * checks PyTorch makes before computing: an integer division by zero fails with
 * "ZeroDivisionError" (the loops flag it instead of trapping with SIGFPE), and an integer
 * tensor raised to a negative Python number is refused. */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "core/math.h"
#include "cpu/arith.h"
#include "cpu/elementwise.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"

/* What a loop reports back: it met a zero integer divisor. Atomic: the loop may run on
 * several threads at once (mt_iter_run_parallel). */
typedef struct arith_ctx {
    atomic_bool zero_div;
} arith_ctx;

// out, x, y (T) broadcast to one shape; out = F(x, y)
#define BINARY_LOOP(name, T, F)                                                                \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)              \
    {                                                                                          \
        (void)ctx;                                                                             \
        if (strides[0] == sizeof(T) && strides[1] == sizeof(T) && strides[2] == sizeof(T)) {   \
            T *o = (T *)data[0];                                                               \
            const T *xs = (const T *)data[1], *ys = (const T *)data[2];                        \
            for (int64_t i = 0; i < n; i++) {                                                  \
                o[i] = F(xs[i], ys[i]);                                                        \
            }                                                                                  \
            return;                                                                            \
        }                                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                      \
            MT_AT(T, 0, i) = F(MT_AT(T, 1, i), MT_AT(T, 2, i));                                \
        }                                                                                      \
    }

// as BINARY_LOOP, for integer division: a zero y is flagged (and 0 written), never divided by
#define INT_DIV_LOOP(name, T, F)                                                  \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)  \
    {                                                                             \
        arith_ctx *c = ctx;                                                       \
        for (int64_t i = 0; i < n; i++) {                                         \
            const T y = MT_AT(T, 2, i);                                           \
            if (y == 0) {                                                         \
                atomic_store_explicit(&c->zero_div, true, memory_order_relaxed);  \
                MT_AT(T, 0, i) = 0;                                               \
            } else {                                                              \
                MT_AT(T, 0, i) = F(MT_AT(T, 1, i), y);                            \
            }                                                                     \
        }                                                                         \
    }

#define DIV_LOOPS(OP)                                    \
    INT_DIV_LOOP(OP##_i32, int32_t, mt_##OP##_i32)       \
    INT_DIV_LOOP(OP##_i64, int64_t, mt_##OP##_i64)       \
    BINARY_LOOP(OP##_f32, float, mt_##OP##_f32)          \
    BINARY_LOOP(OP##_f64, double, mt_##OP##_f64)
#define NUMERIC_TABLE(OP) {NULL, OP##_i32, OP##_i64, OP##_f32, OP##_f64}

DIV_LOOPS(div_floor)
DIV_LOOPS(div_trunc)
DIV_LOOPS(remainder)
DIV_LOOPS(fmod)
BINARY_LOOP(pow_i32, int32_t, mt_pow_i32)
BINARY_LOOP(pow_i64, int64_t, mt_pow_i64)
BINARY_LOOP(pow_f32, float, mt_pow_f32)
BINARY_LOOP(pow_f64, double, mt_pow_f64)

typedef enum arith_id { A_DIV_FLOOR, A_DIV_TRUNC, A_REMAINDER, A_FMOD, A_POW, NUM_ARITH } arith_id;

typedef struct arith_op {
    const char *name;   /* the op, for argument errors */
    const char *kernel; /* PyTorch's kernel name, for "not implemented for" messages */
    mt_loop_fn loops[MT_NUM_DTYPES];
} arith_op;

static const arith_op arith_ops[NUM_ARITH] = {
    [A_DIV_FLOOR] = {"floor_divide", "div_floor_cpu", NUMERIC_TABLE(div_floor)},
    [A_DIV_TRUNC] = {"div", "div_trunc_cpu", NUMERIC_TABLE(div_trunc)},
    [A_REMAINDER] = {"remainder", "remainder_cpu", NUMERIC_TABLE(remainder)},
    [A_FMOD] = {"fmod", "fmod_cpu", NUMERIC_TABLE(fmod)},
    [A_POW] = {"pow", "pow", NUMERIC_TABLE(pow)},
};

/* PyTorch's pow(Tensor, Scalar) refuses what its integer loop could only truncate to 0. */
static mt_status
check_int_exponent(const mt_tensor *exponent, mt_dtype dt)
{
    mt_scalar e;
    if (mt_dtype_is_float(dt) || !exponent->is_wrapped_number) {
        return MT_OK;
    }
    mt_status st = mt_tensor_item(exponent, &e);
    if (st == MT_OK && mt_scalar_to_double(e) < 0) {
        st = mt_fail(MT_ERUNTIME, "Integers to negative integer powers are not allowed.");
    }
    return st;
}

// self, other broadcast together (either may be a Python number, not both); out = op(self, other)
static mt_status
arith(mt_args *a, arith_id id, bool inplace)
{
    const arith_op *op = &arith_ops[id];
    if (a->t[0]->is_wrapped_number && a->t[1]->is_wrapped_number) {
        return mt_fail(MT_ETYPE,
                       "%s() received an invalid combination of arguments - got (Number, Number)",
                       op->name);
    }
    mt_dtype dt = mt_result_type(a->t, 2);
    mt_status st;
    if (op->loops[dt] == NULL) {
        return mt_fail(MT_ENOTIMPL, "\"%s\" not implemented for '%s'", op->kernel,
                       mt_dtype_scalar_name(dt));
    }
    if (id == A_POW && (st = check_int_exponent(a->t[1], dt))) {
        return st;
    }
    arith_ctx ctx;
    atomic_init(&ctx.zero_div, false);
    st = mt_cpu_elementwise(a->t, 2, dt, op->loops[dt], &ctx, inplace, &a->out[0]);
    if (st == MT_OK && atomic_load(&ctx.zero_div)) {
        mt_tensor_clear(&a->out[0]);
        st = mt_fail(MT_ERUNTIME, "ZeroDivisionError");
    }
    return st;
}

#define KERNELS(op, id) MT_CPU_KERNELS(op, arith, id)
KERNELS(floor_divide, A_DIV_FLOOR)
KERNELS(remainder, A_REMAINDER)
KERNELS(fmod, A_FMOD)
KERNELS(pow, A_POW)

mt_status
mt_cpu_div_rounding(mt_args *a, bool inplace)
{
    const char *mode = a->str[0];
    if (strcmp(mode, "trunc") == 0) {
        return arith(a, A_DIV_TRUNC, inplace);
    }
    if (strcmp(mode, "floor") == 0) {
        return arith(a, A_DIV_FLOOR, inplace);
    }
    return mt_fail(MT_ERUNTIME,
                   "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                   "'%s'",
                   mode);
}

// out, x, lo, hi (T) broadcast to one shape; out = min(max(x, lo), hi), NaN-propagating
#define CLAMP_LOOP(E, T, S)                                                                \
    static void clamp_##S(char **data, const int64_t *strides, int64_t n, void *ctx)      \
    {                                                                                      \
        (void)ctx;                                                                         \
        for (int64_t i = 0; i < n; i++) {                                                  \
            const T lo = mt_maximum_##S(MT_AT(T, 1, i), MT_AT(T, 2, i));                   \
            MT_AT(T, 0, i) = mt_minimum_##S(lo, MT_AT(T, 3, i));                           \
        }                                                                                  \
    }
MT_DTYPES(CLAMP_LOOP)
static const mt_loop_fn clamp_loops[MT_NUM_DTYPES] = {clamp_b8, clamp_i32, clamp_i64, clamp_f32,
                                                      clamp_f64};

/* The bound that clamps nothing, standing in for an absent min (lowest) or max (highest). */
static mt_scalar
no_bound(mt_dtype dt, bool highest)
{
    switch (dt) {
    case MT_BOOL:
        return mt_scalar_bool(highest);
    case MT_INT32:
        return mt_scalar_int(highest ? INT32_MAX : INT32_MIN);
    case MT_INT64:
        return mt_scalar_int(highest ? INT64_MAX : INT64_MIN);
    default:
        return mt_scalar_float(highest ? INFINITY : -INFINITY);
    }
}

// self, min, max (one may be absent) broadcast together; out = min(max(self, min), max)
static mt_status
clamp(mt_args *a, bool inplace)
{
    mt_tensor *ops[3] = {a->t[0], a->t[1], a->t[2]}, *given[3] = {a->t[0]}, *bound = NULL;
    int n = 1;
    bool scalar_bound = false;
    for (int k = 1; k < 3; k++) {
        if (ops[k]) {
            scalar_bound |= ops[k]->is_wrapped_number;
            given[n++] = ops[k];
        }
    }
    if (n == 1) {
        return mt_fail(MT_ERUNTIME, "torch.clamp: At least one of 'min' or 'max' must not be None");
    }
    mt_dtype dt = mt_result_type(given, n);
    if (dt == MT_BOOL && scalar_bound) {
        return mt_fail(MT_ENOTIMPL, "\"clamp_scalar_cpu\" not implemented for 'Bool'");
    }
    int missing = ops[1] == NULL ? 1 : ops[2] == NULL ? 2 : 0;
    mt_status st;
    if (missing && (st = mt_tensor_scalar(no_bound(dt, missing == 2), dt, &bound))) {
        return st;
    }
    if (missing) {
        ops[missing] = bound;
    }
    st = mt_cpu_elementwise(ops, 3, dt, clamp_loops[dt], NULL, inplace, &a->out[0]);
    mt_tensor_clear(&bound);
    return st;
}

mt_status
mt_cpu_clamp(mt_args *a)
{
    return clamp(a, false);
}

mt_status
mt_cpu_clamp_(mt_args *a)
{
    return clamp(a, true);
}
