/* The CUDA key's elementwise kernels: each op's dtype rule and argument errors (PyTorch's, as
 * the CPU kernels of csrc/cpu/binary.c, arith.c, unary.c, compare.c and mask.c give them), then
 * elementwise.c's driver with one mt_cuda_ew_op. Integer division by zero is not detected on
 * the GPU (PyTorch's CUDA kernels do not raise either). */
#include "cuda/elementwise.h"
#include "cuda/ops.h"

#define NONE_SCALAR ((mt_scalar){.type = MT_NUM_DTYPES})

static mt_status
run(mt_args *a, int nin, mt_dtype dt, mt_dtype result, mt_cuda_ew_op op, mt_scalar k,
    const char *name, bool inplace)
{
    return mt_cuda_elementwise_typed(a->t, nin, dt, result, op, k, name, inplace, &a->out[0]);
}

/* ---- add, sub, mul, div, true_divide ---- */

static const char *const basic_names[] = {"fill", "add", "sub", "mul", "div"};

// self, other broadcast together; out = self (op) alpha * other (alpha only for add, sub)
static mt_status
binary(mt_args *a, mt_cuda_ew_op op, bool inplace)
{
    mt_dtype dt = mt_result_type(a->t, 2);
    if (op == MT_CUDA_DIV && !mt_dtype_is_float(dt)) {
        dt = MT_DEFAULT_FLOAT; /* true division of integers */
    }
    bool has_alpha = op == MT_CUDA_ADD || op == MT_CUDA_SUB;
    mt_scalar alpha = has_alpha ? a->s[0] : NONE_SCALAR;
    mt_status st = has_alpha ? mt_check_add_sub(a, op == MT_CUDA_SUB, dt) : MT_OK;
    if (st) {
        return st;
    }
    return run(a, 2, dt, dt, op, alpha, basic_names[op], inplace);
}

/* ---- floor_divide, remainder, fmod, pow, div with a rounding mode ---- */

// self, other broadcast together (either may be a Python number, not both)
static mt_status
arith(mt_args *a, mt_cuda_ew_op op, const char *name, bool inplace)
{
    mt_dtype dt = mt_result_type(a->t, 2);
    mt_status st = mt_check_arith(a, name, op == MT_CUDA_POW, dt);
    bool done = false;
    if (st == MT_OK && op == MT_CUDA_POW) {
        st = mt_pow_as_root(a, dt, inplace, &done);
    }
    if (st || done) {
        return st;
    }
    return run(a, 2, dt, dt, op, NONE_SCALAR, name, inplace);
}

static mt_status
div_any(mt_args *a, bool inplace)
{
    const char *mode = a->str[0];
    if (mode == NULL) {
        return binary(a, MT_CUDA_DIV, inplace);
    }
    bool floor;
    mt_status st = mt_div_rounding_mode(mode, &floor);
    return st ? st : arith(a, floor ? MT_CUDA_DIV_FLOOR : MT_CUDA_DIV_TRUNC, "div", inplace);
}

/* ---- clamps ---- */

// out = clamp(self, bound) with a Scalar bound, in the dtype the bound promotes self to
static mt_status
clamp_scalar(mt_args *a, mt_cuda_ew_op op, const char *name, bool inplace)
{
    mt_dtype dt = mt_clamp_bound_dtype(a);
    return run(a, 1, dt, dt, op, a->s[0], name, inplace);
}

// self, min, max (one may be absent) broadcast together; out = min(max(self, min), max)
static mt_status
clamp(mt_args *a, bool inplace)
{
    mt_tensor *ops[3], *bound = NULL;
    mt_dtype dt;
    mt_status st = mt_clamp_operands(a, "cuda", ops, &dt, &bound);
    if (st == MT_OK) {
        st = mt_cuda_elementwise(ops, 3, dt, MT_CUDA_CLAMP, NONE_SCALAR, "clamp", inplace,
                                 &a->out[0]);
    }
    mt_tensor_clear(&bound);
    return st;
}

/* ---- unary math ---- */

// self (any shape); out = f(self), in self's dtype or, when to_float, a float dtype
static mt_status
unary(mt_args *a, mt_cuda_ew_op op, const char *name, bool to_float, bool inplace)
{
    mt_dtype dt = a->t[0]->dtype;
    if (to_float && !mt_dtype_is_float(dt)) {
        dt = MT_DEFAULT_FLOAT;
    }
    return run(a, 1, dt, dt, op, NONE_SCALAR, name, inplace);
}

static mt_status
neg(mt_args *a, bool inplace)
{
    mt_status st = mt_check_neg(a->t[0]);
    return st ? st : unary(a, MT_CUDA_NEG, "neg", false, inplace);
}

static mt_status
cuda_gelu(mt_args *a)
{
    bool tanh_form;
    mt_status st = mt_gelu_approximate(a->str[0], &tanh_form);
    return st ? st
              : unary(a, tanh_form ? MT_CUDA_GELU_TANH : MT_CUDA_GELU, "GeluKernelImpl", false,
                      false);
}

// grad_output, self broadcast together (floats); out = grad_output * gelu'(self)
static mt_status
cuda_gelu_backward(mt_args *a)
{
    bool tanh_form;
    mt_status st = mt_gelu_approximate(a->str[0], &tanh_form);
    if (st) {
        return st;
    }
    mt_dtype dt = mt_result_type(a->t, 2);
    return run(a, 2, dt, dt, tanh_form ? MT_CUDA_GELU_TANH_BACKWARD : MT_CUDA_GELU_BACKWARD,
               NONE_SCALAR, "GeluBackwardKernelImpl", false);
}

/* ---- comparisons, logical and bitwise ops, maximum and minimum ---- */

// self, other broadcast together, compared in their promoted dtype; out bool
static mt_status
compare(mt_args *a, mt_cuda_ew_op op, const char *name, bool inplace)
{
    mt_dtype dt = mt_result_type(a->t, 2);
    return run(a, 2, dt, MT_BOOL, op, NONE_SCALAR, name, inplace);
}

// self in its own dtype; out bool
static mt_status
predicate(mt_args *a, mt_cuda_ew_op op, const char *name, bool inplace)
{
    return run(a, 1, a->t[0]->dtype, MT_BOOL, op, NONE_SCALAR, name, inplace);
}

// self, other (if any) in their promoted dtype; out of that dtype
static mt_status
same(mt_args *a, mt_cuda_ew_op op, const char *name, int nin, bool inplace)
{
    mt_dtype dt = mt_result_type(a->t, nin);
    return run(a, nin, dt, dt, op, NONE_SCALAR, name, inplace);
}

// condition (bool), input, other broadcast together; out = condition ? input : other
static mt_status
cuda_where(mt_args *a)
{
    mt_status st = mt_check_where(a->t[0]);
    if (st) {
        return st;
    }
    mt_dtype dt = mt_result_type(a->t + 1, 2);
    return run(a, 3, dt, dt, MT_CUDA_WHERE, NONE_SCALAR, "where", false);
}

// self (*), mask (bool, broadcast to self); out = mask ? value : self, in self's dtype
static mt_status
masked_fill(mt_args *a, bool inplace)
{
    mt_tensor *self = a->t[0], *mask = a->t[1], *value = a->t[2], *number = NULL;
    mt_scalar v;
    mt_status st = mt_check_masked_fill(self, mask, value, &v);
    if (st || (st = mt_tensor_scalar(v, self->dtype, &number))) {
        return st;
    }
    mt_tensor *ins[3] = {self, mask, number};
    st = mt_cuda_elementwise(ins, 3, self->dtype, MT_CUDA_MASKED_FILL, NONE_SCALAR, "masked_fill",
                             inplace, &a->out[0]);
    mt_tensor_clear(&number);
    return st;
}

/* ---- the kernels of ops.def ---- */

#define KERNEL(name, call)        \
    static mt_status              \
    cuda_##name(mt_args *a)       \
    {                             \
        return call;              \
    }
#define KERNELS(name, call_of)                  \
    KERNEL(name, call_of(false))                \
    KERNEL(name##_, call_of(true))

#define ADD(ip) binary(a, MT_CUDA_ADD, ip)
#define SUB(ip) binary(a, MT_CUDA_SUB, ip)
#define MUL(ip) binary(a, MT_CUDA_MUL, ip)
#define TRUEDIV(ip) binary(a, MT_CUDA_DIV, ip)
KERNELS(add, ADD)
KERNELS(sub, SUB)
KERNELS(mul, MUL)
KERNELS(true_divide, TRUEDIV)
#define DIV(ip) div_any(a, ip)
KERNELS(div, DIV)
#define FLOORDIV(ip) arith(a, MT_CUDA_DIV_FLOOR, "floor_divide", ip)
#define REMAINDER(ip) arith(a, MT_CUDA_REMAINDER, "remainder", ip)
#define FMOD(ip) arith(a, MT_CUDA_FMOD, "fmod", ip)
#define POW(ip) arith(a, MT_CUDA_POW, "pow", ip)
KERNELS(floor_divide, FLOORDIV)
KERNELS(remainder, REMAINDER)
KERNELS(fmod, FMOD)
KERNELS(pow, POW)
#define CLAMP_MIN(ip) clamp_scalar(a, MT_CUDA_CLAMP_MIN, "clamp_min", ip)
#define CLAMP_MAX(ip) clamp_scalar(a, MT_CUDA_CLAMP_MAX, "clamp_max", ip)
KERNELS(clamp_min, CLAMP_MIN)
KERNELS(clamp_max, CLAMP_MAX)
#define CLAMP(ip) clamp(a, ip)
#define NEG(ip) neg(a, ip)
KERNELS(clamp, CLAMP)
KERNELS(neg, NEG)
/* unary float math: integer and bool inputs compute in the default float */
#define FLOAT_OP(name, OP)                                            \
    KERNEL(name, unary(a, OP, #name, true, false))           \
    KERNEL(name##_, unary(a, OP, #name, true, true))
FLOAT_OP(exp, MT_CUDA_EXP)
FLOAT_OP(log, MT_CUDA_LOG)
FLOAT_OP(log1p, MT_CUDA_LOG1P)
FLOAT_OP(sqrt, MT_CUDA_SQRT)
FLOAT_OP(rsqrt, MT_CUDA_RSQRT)
FLOAT_OP(sin, MT_CUDA_SIN)
FLOAT_OP(cos, MT_CUDA_COS)
FLOAT_OP(tanh, MT_CUDA_TANH)
FLOAT_OP(sigmoid, MT_CUDA_SIGMOID)
FLOAT_OP(reciprocal, MT_CUDA_RECIPROCAL)
FLOAT_OP(exp2, MT_CUDA_EXP2)
FLOAT_OP(expm1, MT_CUDA_EXPM1)
FLOAT_OP(log2, MT_CUDA_LOG2)
FLOAT_OP(log10, MT_CUDA_LOG10)
#define ABS(ip) unary(a, MT_CUDA_ABS, "abs", false, ip)
#define SIGN(ip) unary(a, MT_CUDA_SIGN, "sign", false, ip)
KERNELS(abs, ABS)
KERNELS(sign, SIGN)
KERNEL(silu, unary(a, MT_CUDA_SILU, "silu", false, false))
#define CMP(name, OP)                                      \
    KERNEL(name, compare(a, OP, #name, false))    \
    KERNEL(name##_, compare(a, OP, #name, true))
CMP(eq, MT_CUDA_EQ)
CMP(ne, MT_CUDA_NE)
CMP(lt, MT_CUDA_LT)
CMP(le, MT_CUDA_LE)
CMP(gt, MT_CUDA_GT)
CMP(ge, MT_CUDA_GE)
CMP(logical_and, MT_CUDA_LOGICAL_AND)
CMP(logical_or, MT_CUDA_LOGICAL_OR)
KERNEL(logical_not, predicate(a, MT_CUDA_LOGICAL_NOT, "logical_not", false))
KERNEL(logical_not_, predicate(a, MT_CUDA_LOGICAL_NOT, "logical_not", true))
KERNEL(isnan, predicate(a, MT_CUDA_ISNAN, "isnan", false))
KERNEL(isinf, predicate(a, MT_CUDA_ISINF, "isinf", false))
KERNEL(bitwise_and, same(a, MT_CUDA_BITWISE_AND, "bitwise_and", 2, false))
KERNEL(bitwise_and_, same(a, MT_CUDA_BITWISE_AND, "bitwise_and", 2, true))
KERNEL(bitwise_or, same(a, MT_CUDA_BITWISE_OR, "bitwise_or", 2, false))
KERNEL(bitwise_or_, same(a, MT_CUDA_BITWISE_OR, "bitwise_or", 2, true))
KERNEL(bitwise_not, same(a, MT_CUDA_BITWISE_NOT, "bitwise_not", 1, false))
KERNEL(bitwise_not_, same(a, MT_CUDA_BITWISE_NOT, "bitwise_not", 1, true))
KERNEL(maximum, same(a, MT_CUDA_MAXIMUM, "maximum", 2, false))
KERNEL(minimum, same(a, MT_CUDA_MINIMUM, "minimum", 2, false))
#define MASKED_FILL(ip) masked_fill(a, ip)
KERNELS(masked_fill, MASKED_FILL)

void
mt_cuda_register_elementwise(void)
{
    static const mt_cuda_reg kernels[] = {
        MT_CUDA_REG2(add),         MT_CUDA_REG2(sub),          MT_CUDA_REG2(mul),
        MT_CUDA_REG2(div),         MT_CUDA_REG2(true_divide),  MT_CUDA_REG2(floor_divide),
        MT_CUDA_REG2(remainder),   MT_CUDA_REG2(fmod),         MT_CUDA_REG2(pow),
        MT_CUDA_REG2(clamp),       MT_CUDA_REG2(clamp_min),    MT_CUDA_REG2(clamp_max),
        MT_CUDA_REG2(neg),         MT_CUDA_REG2(exp),          MT_CUDA_REG2(log),
        MT_CUDA_REG2(log1p),       MT_CUDA_REG2(sqrt),         MT_CUDA_REG2(rsqrt),
        MT_CUDA_REG2(sin),         MT_CUDA_REG2(cos),          MT_CUDA_REG2(tanh),
        MT_CUDA_REG2(sigmoid),     MT_CUDA_REG2(reciprocal),   MT_CUDA_REG2(exp2),
        MT_CUDA_REG2(expm1),       MT_CUDA_REG2(log2),         MT_CUDA_REG2(log10),
        MT_CUDA_REG2(abs),         MT_CUDA_REG2(sign),         MT_CUDA_REG(silu),
        MT_CUDA_REG(gelu),         MT_CUDA_REG(gelu_backward), MT_CUDA_REG2(eq),
        MT_CUDA_REG2(ne),          MT_CUDA_REG2(lt),           MT_CUDA_REG2(le),
        MT_CUDA_REG2(gt),          MT_CUDA_REG2(ge),           MT_CUDA_REG2(logical_and),
        MT_CUDA_REG2(logical_or),  MT_CUDA_REG2(logical_not),  MT_CUDA_REG(isnan),
        MT_CUDA_REG(isinf),        MT_CUDA_REG2(bitwise_and),  MT_CUDA_REG2(bitwise_or),
        MT_CUDA_REG2(bitwise_not), MT_CUDA_REG(maximum),       MT_CUDA_REG(minimum),
        MT_CUDA_REG(where),        MT_CUDA_REG2(masked_fill),
    };
    mt_cuda_register_all(kernels, sizeof(kernels) / sizeof(kernels[0]));
}
