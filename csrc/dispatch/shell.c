/* Which ops take PyTorch's "shell" dtypes (uint16, uint32, uint64 and the four float8 formats),
 * for every device: the dispatcher's rule for them (dispatch.c calls mt_shell_check for a call
 * that has one, before anything runs).
 *
 * PyTorch stores, converts, moves and prints these dtypes, but its CPU kernels compute on them
 * only here and there; every other op raises NotImplementedError naming its kernel. Each op's
 * row in the op table says which (its shell column: the ops PyTorch 2.13's CPU takes them in,
 * measured over each op and dtype, tests/core/test_dtype_shell.py) and, where PyTorch's message
 * names another kernel than the op's own, that kernel. An op the rows allow runs as for uint8 or
 * float16: widened to its computing dtype (dispatch/widen.c). A call that passes here is not
 * checked again in the ops it calls (a composite's steps), as PyTorch's checks are its kernels'.
 * Two forms run apart (mt_shell_run): the orderings of uint64, which int64 would misorder from
 * 2^63 up, and true division of the uints, in the float result's dtype. The CUDA backend has no
 * kernels for them: every op refuses them there. Nothing here computes an element. */
#include "dispatch/shell.h"

#include "core/elementwise.h"
#include "ops/elementwise.h"
#include "ops/ops.h"

/* Which shell dtypes an op takes: the takes of its row's shell column, SHELL(takes) or
 * SHELL_AS(takes, kernel) (dispatch/ops.def, ops/elementwise.def). */
enum {
    U = 1,      /* uint16, uint32, uint64 */
    F = 2,      /* the four float8 formats */
    E5 = 4,     /* float8_e5m2 alone (the one with infinities) */
    NO_NUM = 8, /* float8 only with no Python number or 0-dim tensor beside it ("reduced float") */
    PROMOTES = 16, /* its operands meet in one dtype first: PyTorch's promotion errors apply,
                    * and a common dtype that is no shell one (uint16 with float16) runs as
                    * any small dtype, whatever the op takes */
    FLOATS = 32, /* computes on the uints as floats: they are converted to the default float
                    * first (a uint64 from 2^63 up read as itself, not as int64) */
    THROUGH = 64, /* a composite whose steps are checked, not the call itself (matmul: mm or mv) */
};

typedef struct shell_row {
    int takes;
    const char *kernel; /* PyTorch's kernel name in its message when refused; NULL: the op's */
} shell_row;

/* each op's row, from its shell column: _ (none taken), SHELL(takes), or SHELL_AS(takes, kernel)
 * where PyTorch's message names another kernel than the op's own (ops/elementwise.h's
 * mt_ew_kernel_name for the elementwise family, else the op's name) */
#define MT_SHELL__ {0, NULL}
#define MT_SHELL_SHELL(takes) {takes, NULL}
#define MT_SHELL_SHELL_AS(takes, kernel) {takes, kernel}
static const shell_row rows[MT_NUM_OPS] = {
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) \
    [MT_OP_##name] = MT_SHELL_##shell,
#include "dispatch/ops.def"
#undef MT_OP
};

/* Whether a row takes dtype dt. */
static bool
takes(const shell_row *r, mt_dtype dt)
{
    if (mt_dtype_is_float8(dt)) {
        return (r->takes & F) || (dt == MT_FLOAT8_E5M2 && (r->takes & E5));
    }
    return (r->takes & U) != 0;
}

/* bool 0, integers 1, floats 2, complex 3 */
static int
category(mt_dtype dt)
{
    return dt == MT_BOOL ? 0 : mt_dtype_is_complex(dt) ? 3 : mt_dtype_is_float(dt) ? 2 : 1;
}

/* PyTorch's promotion of the call's tensors (the operands of the computing rows; not where's
 * condition nor masked_fill's mask, read as bool), refusing the pairs it refuses: within each
 * rank (tensors with dims, 0-dim tensors, Python numbers) every pair meets; a lower rank joins
 * only from a higher category (mt_promotion's rule). *common: the dtype they meet in (PyTorch's
 * result_type). */
static mt_status
check_promotion(mt_op op, const mt_args *a, mt_dtype *common)
{
    int dt[3] = {-1, -1, -1}; /* dims, 0-dim, wrapped */
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        const mt_tensor *t = a->t[k];
        if (t == NULL || mt_ew_reads_bool(op, k)) {
            continue;
        }
        const int rank = t->is_wrapped_number ? 2 : t->ndim == 0 ? 1 : 0;
        mt_status st = dt[rank] < 0 ? MT_OK : mt_promote_check((mt_dtype)dt[rank], t->dtype);
        if (st) {
            return st;
        }
        dt[rank] = dt[rank] < 0 ? (int)t->dtype
                                : (int)mt_promote_types((mt_dtype)dt[rank], t->dtype);
    }
    int r = dt[0];
    for (int rank = 1; rank < 3; rank++) {
        if (dt[rank] < 0) {
            continue;
        }
        if (r < 0) {
            r = dt[rank];
            continue;
        }
        if (category((mt_dtype)dt[rank]) > category((mt_dtype)r)) {
            mt_status st = mt_promote_check((mt_dtype)r, (mt_dtype)dt[rank]);
            if (st) {
                return st;
            }
            /* a Python number of a higher category brings the default dtype of its kind */
            r = rank == 2 && category((mt_dtype)dt[rank]) == 2
                    ? (int)MT_DEFAULT_FLOAT
                    : (int)mt_promote_types((mt_dtype)r, (mt_dtype)dt[rank]);
        }
    }
    *common = (mt_dtype)r;
    return MT_OK;
}

/* Whether a float8 operand meets a Python number or a 0-dim tensor (PyTorch's "reduced float"
 * scalar path, which has no float8 loop). */
static bool
has_scalar_operand(const mt_args *a)
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (a->t[k] && (a->t[k]->is_wrapped_number || a->t[k]->ndim == 0)) {
            return true;
        }
    }
    return false;
}

/* Whether a tensor operand of op (not a Python number; not an in-place self, which keeps its
 * dtype) is a uint16, uint32 or uint64. */
static bool
has_uint_operand(mt_op op, const mt_args *a)
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        const mt_tensor *t = a->t[k];
        const bool self_in_place = k == 0 && (mt_op_flags[op] & INPLACE);
        if (t && !self_in_place && !t->is_wrapped_number && mt_dtype_is_shell(t->dtype) &&
            !mt_dtype_is_float8(t->dtype)) {
            return true;
        }
    }
    return false;
}

static _Thread_local int passed; /* > 0 inside a call that passed the check */

/* The call's shell dtype that names it in a message: a tensor's before a Python number's (a
 * uint64 number beside a uint32 tensor, 2**63 - x) */
static int
shell_dtype(const mt_args *a)
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (a->t[k] && !a->t[k]->is_wrapped_number && mt_dtype_is_shell(a->t[k]->dtype)) {
            return a->t[k]->dtype;
        }
    }
    return mt_args_first_dtype(a, mt_dtype_is_shell);
}

mt_status
mt_shell_check(mt_op op, const mt_args *a, bool *guard)
{
    const int found = shell_dtype(a);
    *guard = false;
    if (found < 0 || passed > 0) {
        return MT_OK;
    }
    const mt_dtype dt = (mt_dtype)found;
    const shell_row *r = &rows[op];
    const char *name = r->kernel ? r->kernel : mt_ew_kernel_name(op, a);
    name = name ? name : mt_op_names[op];
    if (mt_args_on_cuda(a)) {
        return mt_fail(MT_ENOTIMPL, "\"%s\" not implemented for '%s' on the CUDA device",
                       mt_op_names[op], mt_dtype_scalar_name(dt));
    }
    if (r->takes & THROUGH) {
        return MT_OK;
    }
    /* operands that meet in one dtype meet first (PyTorch's TensorIterator promotes before
     * its kernel looks for a loop): a promotion error comes before a missing loop, and where
     * they meet in a dtype of their own (uint16 with float16: float16), the op runs there as
     * for any small dtype, whatever its row takes */
    const bool rounds = (op == MT_OP_div || op == MT_OP_div_) && a->str[0];
    mt_dtype common = a->t[0] ? a->t[0]->dtype : dt;
    if (r->takes & PROMOTES) {
        mt_status st = check_promotion(op, a, &common);
        if (st) {
            return st;
        }
    }
    /* in place, a shell self refuses a result it cannot hold, named as given (the widening
     * below would name its computing dtype): the promoted dtype, a float one for FLOATS */
    if ((mt_op_flags[op] & INPLACE) && (r->takes & (PROMOTES | FLOATS)) && a->t[0] &&
        mt_dtype_is_shell(a->t[0]->dtype) && !mt_ew_bool_result(op)) {
        const bool to_float = (r->takes & FLOATS) && !rounds && !mt_dtype_is_float(common) &&
                              !mt_dtype_is_complex(common);
        mt_status st = mt_check_inplace(a->t[0], a->t[0]->ndim, a->t[0]->sizes,
                                        to_float ? MT_DEFAULT_FLOAT : common);
        if (st) {
            return st;
        }
    }
    if ((r->takes & PROMOTES) && !mt_dtype_is_shell(common)) {
        /* a uint met by a float computes in that float, converted to it as itself (widened
         * like uint8, a uint64 from 2^63 up would pass through int64 and turn negative) */
        *guard = mt_dtype_is_float(common) && has_uint_operand(op, a);
        return MT_OK;
    }
    /* div with a rounding mode is PyTorch's div_floor/div_trunc kernels, which take none */
    if (rounds) {
        return mt_fail(MT_ENOTIMPL, "\"div_%s_cpu\" not implemented for '%s'", a->str[0],
                       mt_dtype_scalar_name(dt));
    }
    if (!takes(r, dt) || (mt_dtype_is_float8(dt) && (r->takes & NO_NUM) && has_scalar_operand(a))) {
        return mt_fail(MT_ENOTIMPL, "\"%s\" not implemented for '%s'", name,
                       mt_dtype_scalar_name(dt));
    }
    *guard = true;
    return MT_OK;
}

void
mt_shell_enter(void)
{
    passed++;
}

void
mt_shell_leave(void)
{
    passed--;
}

/* ---- the forms computed apart ---- */

static bool
orders(mt_op op)
{
    return op == MT_OP_sort || op == MT_OP_argsort || op == MT_OP__unique2 ||
           op == MT_OP_unique_dim;
}

// sort, argsort and unique of a uint64 self: the same op on self's bits as int64 with the top
// bit flipped (x ^ 2^63 orders as signed what x orders as unsigned), its values flipped back
// and viewed as uint64
static mt_status
run_flipped(mt_op op, mt_args *a, unsigned mask, mt_shell_next next)
{
    mt_tensor *self = a->t[0], *bits = NULL, *key = NULL, *top = NULL, *v = NULL, *u = NULL;
    mt_status st = mt_op_view_dtype(self, MT_INT64, &bits);
    if (st == MT_OK && (st = mt_tensor_scalar(mt_scalar_int(INT64_MIN), MT_INT64, &top)) == MT_OK) {
        top->is_wrapped_number = true;
        st = mt_op_bitwise_xor(bits, top, &key);
    }
    if (st == MT_OK) {
        a->t[0] = key;
        st = next(op, a, mask);
        a->t[0] = self;
    }
    if (st == MT_OK && op != MT_OP_argsort && a->out[0]) {
        if ((st = mt_op_bitwise_xor(a->out[0], top, &v)) == MT_OK &&
            (st = mt_op_view_dtype(v, MT_UINT64, &u)) == MT_OK) {
            mt_tensor_release(a->out[0]);
            a->out[0] = u;
        }
    }
    if (st) {
        for (int o = 0; o < MT_MAX_OUTPUTS; o++) {
            mt_tensor_clear(&a->out[o]);
        }
        mt_args_clear_outl(a);
    }
    mt_tensor_clear(&v);
    mt_tensor_clear(&key);
    mt_tensor_clear(&top);
    mt_tensor_clear(&bits);
    return st;
}

// true division and the integer-to-float ops with uint16/32/64 tensors, and a uint met by a
// float: each converted to the float dtype dt first, as PyTorch's kernels convert their operands
// (a uint64 above 2^63 read as itself, not as int64)
static mt_status
run_in_float(mt_op op, mt_args *a, unsigned mask, mt_shell_next next, mt_dtype dt)
{
    mt_tensor *given[MT_MAX_TENSOR_ARGS] = {NULL};
    mt_status st = MT_OK;
    for (int k = 0; k < MT_MAX_TENSOR_ARGS && st == MT_OK; k++) {
        mt_tensor *t = a->t[k], *f = NULL;
        /* an in-place self stays: the front end refuses the float result it cannot hold */
        const bool self_in_place = k == 0 && (mt_op_flags[op] & INPLACE);
        if (t && !self_in_place && !t->is_wrapped_number && mt_dtype_is_shell(t->dtype)) {
            if ((st = mt_op__to_copy(t, (int)dt, mt_tensor_device(t), &f)) == MT_OK) {
                given[k] = t;
                a->t[k] = f;
            }
        }
    }
    if (st == MT_OK) {
        st = next(op, a, mask);
    }
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (given[k]) {
            mt_tensor_release(a->t[k]);
            a->t[k] = given[k];
        }
    }
    return st;
}

mt_status
mt_shell_run(mt_op op, mt_args *a, unsigned mask, mt_shell_next next)
{
    if (orders(op) && a->t[0] && a->t[0]->dtype == MT_UINT64) {
        return run_flipped(op, a, mask, next);
    }
    mt_dtype common = MT_DEFAULT_FLOAT;
    if ((rows[op].takes & PROMOTES) && check_promotion(op, a, &common) == MT_OK &&
        mt_dtype_is_float(common) && !mt_dtype_is_shell(common)) {
        return run_in_float(op, a, mask, next, common); /* a uint met by a float */
    }
    if (rows[op].takes & FLOATS) {
        return run_in_float(op, a, mask, next, MT_DEFAULT_FLOAT);
    }
    return next(op, a, mask);
}
