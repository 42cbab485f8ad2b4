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
#include "ops/arg_checks.h"

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

// self, other broadcast together (either may be a Python number, not both); out = op(self, other)
static mt_status
arith(mt_args *a, arith_id id, bool inplace)
{
    const arith_op *op = &arith_ops[id];
    mt_dtype dt = mt_result_type(a->t, 2);
    mt_status st = mt_check_arith(a, op->name, id == A_POW, dt);
    bool done = false;
    if (st == MT_OK && id == A_POW) {
        st = mt_pow_as_root(a, dt, inplace, &done);
    }
    if (st || done) {
        return st;
    }
    if (op->loops[dt] == NULL) {
        return mt_fail(MT_ENOTIMPL, "\"%s\" not implemented for '%s'", op->kernel,
                       mt_dtype_scalar_name(dt));
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
    bool floor;
    mt_status st = mt_div_rounding_mode(a->str[0], &floor);
    return st ? st : arith(a, floor ? A_DIV_FLOOR : A_DIV_TRUNC, inplace);
}

// out, x, lo, hi (T) broadcast to one shape; out = min(max(x, lo), hi), NaN-propagating
#define CLAMP_LOOP(E, T, S)                                                                \
    static void clamp_##S(char **data, const int64_t *strides, int64_t n, void *ctx)      \
    {                                                                                      \
        (void)ctx;                                                                         \
        for (int64_t i = 0; i < n; i++) {                                                  \
            const T lo = mt_maximum_##S(MT_GET(T, 1, i), MT_GET(T, 2, i));                 \
            MT_AT(T, 0, i) = mt_minimum_##S(lo, MT_GET(T, 3, i));                          \
        }                                                                                  \
    }
MT_DTYPES(CLAMP_LOOP)
static const mt_loop_fn clamp_loops[MT_NUM_DTYPES] = {clamp_b8, clamp_i32, clamp_i64, clamp_f32,
                                                      clamp_f64};

// self, min, max (one may be absent) broadcast together; out = min(max(self, min), max)
static mt_status
clamp(mt_args *a, bool inplace)
{
    mt_tensor *ops[3], *bound = NULL;
    mt_dtype dt;
    mt_status st = mt_clamp_operands(a, "cpu", ops, &dt, &bound);
    if (st == MT_OK) {
        st = mt_cpu_elementwise(ops, 3, dt, clamp_loops[dt], NULL, inplace, &a->out[0]);
    }
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
