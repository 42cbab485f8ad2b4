/* Comparisons (eq ne lt le gt ge), logical and bitwise ops, isnan, isinf, maximum, minimum and
 * where on the CPU.
 *
 * Each op contributes only its inner loops and its dtype rule: which dtype the operands are
 * compared or combined in, and the dtype of the result (bool for comparisons, logical ops and
 * the NaN/inf tests). Broadcasting, casting and output handling are the shared driver's
 * (elementwise.c); NaN-aware formulas come from core/math.h. */
#include "core/math.h"
#include "cpu/elementwise.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/arg_checks.h"

// out (R), x, y (T) broadcast to one shape; out = EXPR(x, y)
#define BINARY_LOOP(name, R, T, EXPR)                                            \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                            \
        (void)ctx;                                                               \
        for (int64_t i = 0; i < n; i++) {                                        \
            const T x = MT_GET(T, 1, i), y = MT_GET(T, 2, i);                    \
            MT_AT(R, 0, i) = (R)(EXPR);                                          \
        }                                                                        \
    }

// out (R), x (T) of one shape; out = EXPR(x)
#define UNARY_LOOP(name, R, T, EXPR)                                             \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                            \
        (void)ctx;                                                               \
        for (int64_t i = 0; i < n; i++) {                                        \
            const T x = MT_GET(T, 1, i);                                         \
            MT_AT(R, 0, i) = (R)(EXPR);                                          \
        }                                                                        \
    }

// out, x, y (T), c (bool) broadcast to one shape; out = c ? x : y
#define WHERE_LOOP(E, T, S)                                                            \
    static void where_##S(char **data, const int64_t *strides, int64_t n, void *ctx)  \
    {                                                                                  \
        (void)ctx;                                                                     \
        /* Contiguous output and condition, values contiguous or one number each (the    \
         * masks of backward formulas): loops the compiler vectorises. */              \
        if (strides[0] == sizeof(T) && strides[1] == sizeof(bool) &&                   \
            (strides[2] == 0 || strides[2] == sizeof(T)) &&                            \
            (strides[3] == 0 || strides[3] == sizeof(T))) {                            \
            T *o = (T *)data[0];                                                       \
            const bool *c = (const bool *)data[1];                                     \
            const T *x = (const T *)data[2], *y = (const T *)data[3];                  \
            const int64_t sx = strides[2] ? 1 : 0, sy = strides[3] ? 1 : 0;             \
            for (int64_t i = 0; i < n; i++) {                                          \
                o[i] = MT_LOAD(bool, c + i) ? MT_LOAD(T, x + i * sx) : MT_LOAD(T, y + i * sy); \
            }                                                                          \
            return;                                                                    \
        }                                                                              \
        for (int64_t i = 0; i < n; i++) {                                              \
            MT_AT(T, 0, i) = MT_GET(bool, 1, i) ? MT_GET(T, 2, i) : MT_GET(T, 3, i);   \
        }                                                                              \
    }

/* One loop per dtype (loops.h's MT_DTYPES gives E the enum, T the C type, S the suffix). */
#define EQ(E, T, S) BINARY_LOOP(eq_##S, bool, T, x == y)
#define NE(E, T, S) BINARY_LOOP(ne_##S, bool, T, x != y)
#define LT(E, T, S) BINARY_LOOP(lt_##S, bool, T, x < y)
#define LE(E, T, S) BINARY_LOOP(le_##S, bool, T, x <= y)
#define GT(E, T, S) BINARY_LOOP(gt_##S, bool, T, x > y)
#define GE(E, T, S) BINARY_LOOP(ge_##S, bool, T, x >= y)
#define LAND(E, T, S) BINARY_LOOP(logical_and_##S, bool, T, x != 0 && y != 0)
#define LOR(E, T, S) BINARY_LOOP(logical_or_##S, bool, T, x != 0 || y != 0)
#define LNOT(E, T, S) UNARY_LOOP(logical_not_##S, bool, T, x == 0)
#define ISNAN(E, T, S) UNARY_LOOP(isnan_##S, bool, T, mt_isnan_##S(x))
#define ISINF(E, T, S) UNARY_LOOP(isinf_##S, bool, T, mt_isinf_##S(x))
#define MAXIMUM(E, T, S) BINARY_LOOP(maximum_##S, T, T, mt_maximum_##S(x, y))
#define MINIMUM(E, T, S) BINARY_LOOP(minimum_##S, T, T, mt_minimum_##S(x, y))
MT_DTYPES(EQ)
MT_DTYPES(NE)
MT_DTYPES(LT)
MT_DTYPES(LE)
MT_DTYPES(GT)
MT_DTYPES(GE)
MT_DTYPES(LAND)
MT_DTYPES(LOR)
MT_DTYPES(LNOT)
MT_DTYPES(ISNAN)
MT_DTYPES(ISINF)
MT_DTYPES(MAXIMUM)
MT_DTYPES(MINIMUM)
MT_DTYPES(WHERE_LOOP)

/* Bitwise ops exist for bool and the integers only; ~ of a bool is logical not. */
BINARY_LOOP(bitwise_and_b8, bool, bool, x && y)
BINARY_LOOP(bitwise_and_i32, int32_t, int32_t, x & y)
BINARY_LOOP(bitwise_and_i64, int64_t, int64_t, x & y)
BINARY_LOOP(bitwise_or_b8, bool, bool, x || y)
BINARY_LOOP(bitwise_or_i32, int32_t, int32_t, x | y)
BINARY_LOOP(bitwise_or_i64, int64_t, int64_t, x | y)
UNARY_LOOP(bitwise_not_b8, bool, bool, !x)
UNARY_LOOP(bitwise_not_i32, int32_t, int32_t, ~x)
UNARY_LOOP(bitwise_not_i64, int64_t, int64_t, ~x)

#define TABLE(OP) {OP##_b8, OP##_i32, OP##_i64, OP##_f32, OP##_f64}
#define INT_TABLE(OP) {OP##_b8, OP##_i32, OP##_i64, NULL, NULL}

/* How an op picks its dtypes from its operands' dtypes (PyTorch's rules). */
typedef enum rule {
    COMPARE,   /* operands in their promoted dtype; bool result */
    SAME,      /* operands in their promoted dtype; result of that dtype */
    PREDICATE, /* one operand in its own dtype; bool result */
} rule;

typedef enum op_id {
    C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE, C_LOGICAL_AND, C_LOGICAL_OR, C_LOGICAL_NOT,
    C_ISNAN, C_ISINF, C_BITWISE_AND, C_BITWISE_OR, C_BITWISE_NOT, C_MAXIMUM, C_MINIMUM,
    NUM_CMP_OPS
} op_id;

typedef struct cmp_op {
    const char *name; /* for "not implemented for" messages: "<name>_cpu" */
    int nin;
    rule rule;
    mt_loop_fn loops[MT_NUM_DTYPES];
} cmp_op;

static const cmp_op cmp_ops[NUM_CMP_OPS] = {
    [C_EQ] = {"eq", 2, COMPARE, TABLE(eq)},
    [C_NE] = {"ne", 2, COMPARE, TABLE(ne)},
    [C_LT] = {"lt", 2, COMPARE, TABLE(lt)},
    [C_LE] = {"le", 2, COMPARE, TABLE(le)},
    [C_GT] = {"gt", 2, COMPARE, TABLE(gt)},
    [C_GE] = {"ge", 2, COMPARE, TABLE(ge)},
    [C_LOGICAL_AND] = {"logical_and", 2, COMPARE, TABLE(logical_and)},
    [C_LOGICAL_OR] = {"logical_or", 2, COMPARE, TABLE(logical_or)},
    [C_LOGICAL_NOT] = {"logical_not", 1, PREDICATE, TABLE(logical_not)},
    [C_ISNAN] = {"isnan", 1, PREDICATE, TABLE(isnan)},
    [C_ISINF] = {"isinf", 1, PREDICATE, TABLE(isinf)},
    [C_BITWISE_AND] = {"bitwise_and", 2, SAME, INT_TABLE(bitwise_and)},
    [C_BITWISE_OR] = {"bitwise_or", 2, SAME, INT_TABLE(bitwise_or)},
    [C_BITWISE_NOT] = {"bitwise_not", 1, SAME, INT_TABLE(bitwise_not)},
    [C_MAXIMUM] = {"maximum", 2, SAME, TABLE(maximum)},
    [C_MINIMUM] = {"minimum", 2, SAME, TABLE(minimum)},
};

// self, other (if any) broadcast together; out = op(self, other)
static mt_status
run(mt_args *a, op_id id, bool inplace)
{
    const cmp_op *op = &cmp_ops[id];
    mt_dtype dt = mt_result_type(a->t, op->nin);
    mt_dtype in_dtypes[2] = {dt, dt};
    mt_dtype result = op->rule == SAME ? dt : MT_BOOL;
    if (op->loops[dt] == NULL) {
        return mt_fail(MT_ENOTIMPL, "\"%s_cpu\" not implemented for '%s'", op->name,
                       mt_dtype_scalar_name(dt));
    }
    return mt_cpu_elementwise_typed(a->t, op->nin, in_dtypes, result, op->loops[dt], NULL,
                                    inplace, &a->out[0]);
}

/* The kernels of ops.def: mt_cpu_<op> and, where PyTorch has it, mt_cpu_<op>_. */
#define KERNELS(op, id) MT_CPU_KERNELS(op, run, id)
#define KERNEL(op, id, inplace) MT_CPU_KERNEL(op, run, id, inplace)

KERNELS(eq, C_EQ)
KERNELS(ne, C_NE)
KERNELS(lt, C_LT)
KERNELS(le, C_LE)
KERNELS(gt, C_GT)
KERNELS(ge, C_GE)
KERNELS(logical_and, C_LOGICAL_AND)
KERNELS(logical_or, C_LOGICAL_OR)
KERNELS(logical_not, C_LOGICAL_NOT)
KERNELS(bitwise_and, C_BITWISE_AND)
KERNELS(bitwise_or, C_BITWISE_OR)
KERNELS(bitwise_not, C_BITWISE_NOT)
KERNEL(isnan, C_ISNAN, false)
KERNEL(isinf, C_ISINF, false)
KERNEL(maximum, C_MAXIMUM, false)
KERNEL(minimum, C_MINIMUM, false)

static const mt_loop_fn where_loops[MT_NUM_DTYPES] = TABLE(where);

// condition (bool), input, other broadcast together; out = condition ? input : other, in the
// promoted dtype of input and other
mt_status
mt_cpu_where(mt_args *a)
{
    mt_status st = mt_check_where(a->t[0]);
    if (st) {
        return st;
    }
    mt_dtype dt = mt_result_type(a->t + 1, 2);
    mt_dtype in_dtypes[3] = {MT_BOOL, dt, dt};
    return mt_cpu_elementwise_typed(a->t, 3, in_dtypes, dt, where_loops[dt], NULL, false,
                                    &a->out[0]);
}
