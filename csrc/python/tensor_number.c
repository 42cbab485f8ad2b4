/* minitorch._C.TensorBase's operators: its number slots (x + y, x += y, 2 ** x, -x, bool(x),
 * float(x) ...) and its comparisons, each one op through the dispatcher, a Python number taken as
 * a wrapped 0-dim tensor, and PyTorch's reflected forms of the ops whose operands do not commute.
 * The type itself, its methods and properties are python/tensor.c's. */
#include <stdatomic.h>

#include "ops/ops.h"
#include "python/pyminitorch.h"

/* ---- operators ---- */

/* o, slot of op, as a tensor: itself, or a wrapped Python number (new reference in *owned); an
 * int from 2^63 on meets the other operand as mt_py_settle_number says */
static inline mt_tensor *
operand(mt_op op, int slot, PyObject *o, PyObject *other, mt_tensor **owned, int *err)
{
    if (mt_py_is_tensor(o)) {
        return mt_py_unwrap(o);
    }
    if (PyComplex_Check(o)) {
        *err = mt_py_complex_number(o, owned) < 0;
        return *owned;
    }
    mt_scalar s;
    int r = mt_py_to_scalar(o, &s);
    if (r == -1) {
        return NULL; /* not ours: NotImplemented */
    }
    if (r == 0 && s.type == MT_UINT64) {
        int beside = mt_py_is_tensor(other) ? (int)mt_py_unwrap(other)->dtype : -1;
        mt_args none;
        mt_args_init(&none);
        r = mt_py_settle_number(op, slot, &none, &s, beside, false);
        if (r) {
            *err = 1;
            return NULL;
        }
    }
    mt_status st = r ? MT_OK : mt_tensor_scalar(s, s.type, owned);
    if (r || st) {
        if (st) {
            mt_py_raise(st);
        }
        *err = 1;
        return NULL;
    }
    return *owned;
}

/* number op tensor (2 * x reaches nb_multiply as (2, x)) as PyTorch's reflected methods run it:
 * the tensor first for the ops that commute (x.__rmul__(2) is mul(x, 2), so its grad_fn's
 * next_functions lead with x's node), 1 - x as x.__rsub__(1), rsub(x, 1), and 2 / x as
 * x.reciprocal() * 2 (its rounding too). */
static mt_status
reflected(mt_op op, mt_args *a)
{
    mt_tensor *number = a->t[0], *recip = NULL;
    switch (op) {
    case MT_OP_add:
    case MT_OP_mul:
    case MT_OP_bitwise_and:
    case MT_OP_bitwise_or:
    case MT_OP_bitwise_xor:
        a->t[0] = a->t[1];
        a->t[1] = number;
        return mt_py_dispatch(op, a);
    case MT_OP_sub:
        a->t[0] = a->t[1];
        a->t[1] = number;
        return mt_py_dispatch(MT_OP_rsub, a);
    case MT_OP_div: {
        mt_args r;
        mt_args_init(&r);
        r.t[0] = a->t[1];
        mt_status st = mt_py_dispatch(MT_OP_reciprocal, &r);
        if (st) {
            return st;
        }
        recip = r.out[0];
        a->t[0] = recip;
        a->t[1] = number;
        st = mt_py_dispatch(MT_OP_mul, a);
        mt_tensor_release(recip);
        return st;
    }
    default:
        return mt_py_dispatch(op, a);
    }
}

/* x op y, unless a subclass or a mode takes it (dunder names its reflected form); the gate is
 * mt_py_tf_wanted's, spelled out for two operands so that the compiler keeps it inline */
static PyObject *
binary(mt_op op, const char *dunder, PyObject *x, PyObject *y)
{
    if (!mt_py_tf_known_plain(x) || !mt_py_tf_known_plain(y) || mt_py_tf_modes_anywhere) {
        PyObject *pair[2] = {x, y};
        if (mt_py_tf_scan(NULL, pair, 2)) {
            return mt_py_tf_slot(op, dunder, x, y);
        }
    }
    mt_tensor *ox = NULL, *oy = NULL;
    int err = 0;
    PyObject *res = NULL;
    mt_args a;
    mt_args_init(&a);
    a.t[0] = operand(op, 0, x, y, &ox, &err);
    a.t[1] = err ? NULL : operand(op, 1, y, x, &oy, &err);
    if (err) {
        goto out;
    }
    if (a.t[0] == NULL || a.t[1] == NULL) {
        res = Py_NewRef(Py_NotImplemented);
        goto out;
    }
    mt_status st = !mt_py_is_tensor(x) ? reflected(op, &a) : mt_py_dispatch(op, &a);
    res = st ? mt_py_raise(st) : mt_py_wrap(a.out[0]);
out:
    mt_tensor_clear(&ox);
    mt_tensor_clear(&oy);
    return res;
}

/* x += y with a y that is no tensor or number: PyTorch's TypeError. Returning NotImplemented
 * would not do: the Python subclass inherits __iadd__ as sq_inplace_concat too, and CPython
 * hands that slot's NotImplemented back as the value of `x += []`. */
static PyObject *
inplace(mt_op op, const char *sym, PyObject *x, PyObject *y)
{
    PyObject *res = binary(op, NULL, x, y); /* self is the tensor: no reflected form */
    if (res == Py_NotImplemented) {
        Py_DECREF(res);
        return PyErr_Format(PyExc_TypeError,
                            "unsupported operand type(s) for %s: '%.100s' and '%.100s'", sym,
                            Py_TYPE(x)->tp_name, Py_TYPE(y)->tp_name);
    }
    return res;
}

/* The number slots: x op y through the op (NotImplemented for what is not a tensor or a number),
 * and x op= y through its in-place twin. The shifts take a Python-number self too (2 << x), as
 * PyTorch's. */
#define BINARY_SLOT(name, op, dunder)               \
    static PyObject *name(PyObject *x, PyObject *y) \
    {                                               \
        return binary(op, dunder, x, y);            \
    }
#define INPLACE_SLOT(name, op, sym)                 \
    static PyObject *name(PyObject *x, PyObject *y) \
    {                                               \
        return inplace(op, sym, x, y);              \
    }
BINARY_SLOT(nb_add, MT_OP_add, "add")
BINARY_SLOT(nb_sub, MT_OP_sub, "sub")
BINARY_SLOT(nb_mul, MT_OP_mul, "mul")
BINARY_SLOT(nb_div, MT_OP_div, "truediv")
BINARY_SLOT(nb_floordiv, MT_OP_floor_divide, "floordiv")
BINARY_SLOT(nb_rem, MT_OP_remainder, "mod")
BINARY_SLOT(nb_and, MT_OP_bitwise_and, "and")
BINARY_SLOT(nb_or, MT_OP_bitwise_or, "or")
BINARY_SLOT(nb_xor, MT_OP_bitwise_xor, "xor")
BINARY_SLOT(nb_lshift, MT_OP_bitwise_left_shift, "lshift")
BINARY_SLOT(nb_rshift, MT_OP_bitwise_right_shift, "rshift")
INPLACE_SLOT(nb_iadd, MT_OP_add_, "+=")
INPLACE_SLOT(nb_isub, MT_OP_sub_, "-=")
INPLACE_SLOT(nb_imul, MT_OP_mul_, "*=")
INPLACE_SLOT(nb_idiv, MT_OP_div_, "/=")
INPLACE_SLOT(nb_ifloordiv, MT_OP_floor_divide_, "//=")
INPLACE_SLOT(nb_irem, MT_OP_remainder_, "%=")
INPLACE_SLOT(nb_iand, MT_OP_bitwise_and_, "&=")
INPLACE_SLOT(nb_ior, MT_OP_bitwise_or_, "|=")
INPLACE_SLOT(nb_ixor, MT_OP_bitwise_xor_, "^=")
INPLACE_SLOT(nb_ilshift, MT_OP_bitwise_left_shift_, "<<=")
INPLACE_SLOT(nb_irshift, MT_OP_bitwise_right_shift_, ">>=")
#undef BINARY_SLOT
#undef INPLACE_SLOT

/* x ** y and 2 ** x (pow takes a Python-number base); the three-argument pow() has no tensor
 * form, as in PyTorch. */
static PyObject *
nb_pow(PyObject *x, PyObject *y, PyObject *mod)
{
    if (mod != Py_None) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return binary(MT_OP_pow, "pow", x, y);
}

static PyObject *
nb_ipow(PyObject *x, PyObject *y, PyObject *mod)
{
    if (mod != Py_None) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return inplace(MT_OP_pow_, "**=", x, y);
}

/* x == y, x < y, ...: Python hands the reflected form (5 < x is x > 5) to the tensor, so self
 * is always a tensor; anything that is not a number gives NotImplemented, so == falls back to
 * identity as in PyTorch. */
PyObject *
mt_py_tensor_richcompare(PyObject *self, PyObject *other, int cmp)
{
    static const mt_op ops[] = {
        [Py_LT] = MT_OP_lt, [Py_LE] = MT_OP_le, [Py_EQ] = MT_OP_eq,
        [Py_NE] = MT_OP_ne, [Py_GT] = MT_OP_gt, [Py_GE] = MT_OP_ge,
    };
    return binary(ops[cmp], NULL, self, other);
}

static PyObject *
nb_matmul(PyObject *x, PyObject *y)
{
    if (!mt_py_tf_known_plain(x) || !mt_py_tf_known_plain(y) || mt_py_tf_modes_anywhere) {
        PyObject *pair[2] = {x, y};
        if (mt_py_tf_scan(NULL, pair, 2)) {
            return mt_py_tf_slot(MT_OP_matmul, "matmul", x, y);
        }
    }
    if (!mt_py_is_tensor(x) || !mt_py_is_tensor(y)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    mt_args a;
    mt_args_init(&a);
    a.t[0] = mt_py_unwrap(x);
    a.t[1] = mt_py_unwrap(y);
    mt_status st = mt_py_dispatch(MT_OP_matmul, &a);
    return st ? mt_py_raise(st) : mt_py_wrap(a.out[0]);
}

/* op(x) of the tensor x */
static PyObject *
unary(mt_op op, PyObject *x)
{
    if (mt_py_tf_wanted(x, NULL, 0)) {
        return mt_py_tf_slot(op, NULL, x, NULL);
    }
    mt_args a;
    mt_args_init(&a);
    a.t[0] = mt_py_unwrap(x);
    mt_status st = mt_py_dispatch(op, &a);
    return st ? mt_py_raise(st) : mt_py_wrap(a.out[0]);
}

static PyObject *
nb_neg(PyObject *x)
{
    return unary(MT_OP_neg, x);
}

/* ~x: PyTorch refuses it for float tensors in Python, before dispatch, with a TypeError. */
static PyObject *
nb_invert(PyObject *x)
{
    if (mt_dtype_is_float(mt_py_unwrap(x)->dtype)) {
        PyErr_SetString(PyExc_TypeError,
                        "~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors");
        return NULL;
    }
    return unary(MT_OP_bitwise_not, x);
}

static PyObject *
nb_pos(PyObject *x)
{
    return Py_NewRef(x);
}

/* abs(x) */
static PyObject *
nb_abs(PyObject *x)
{
    return unary(MT_OP_abs, x);
}

/* bool(t), float(t), int(t): the value of a one-element tensor. */
static int
single_value(PyObject *x, mt_scalar *s, const char *what)
{
    mt_tensor *t = mt_py_unwrap(x);
    if (mt_tensor_numel(t) != 1) {
        if (what[0] == 'b') {
            PyErr_SetString(PyExc_RuntimeError,
                            "Boolean value of Tensor with more than one value is ambiguous");
        } else {
            PyErr_SetString(PyExc_ValueError,
                            "only one element tensors can be converted to Python scalars");
        }
        return -1;
    }
    if (mt_py_tracer_warn(what[0] == 'b' ? "boolean" : "number") < 0) {
        return -1;
    }
    PyObject *dispatched = mt_py_local_scalar(x); /* item(), as PyTorch's conversions call it */
    if (dispatched || PyErr_Occurred()) {
        int r = dispatched ? mt_py_to_scalar(dispatched, s) : -1;
        Py_XDECREF(dispatched);
        return r;
    }
    mt_status st = mt_tensor_item(t, s);
    if (st) {
        mt_py_raise(st);
        return -1;
    }
    return 0;
}

static int
nb_bool(PyObject *x)
{
    mt_scalar s;
    if (single_value(x, &s, "bool") < 0) {
        return -1;
    }
    return mt_scalar_to_double(s) != 0 || (s.type == MT_FLOAT64 && s.v.f != s.v.f) ||
           (s.is_complex && s.imag != 0);
}

static PyObject *
nb_float(PyObject *x)
{
    /* PyTorch warns once a process (TORCH_WARN_ONCE), for float() alone of the conversions, and
     * only while grad mode is on: LBFGS's float(closure()) under no_grad stays quiet */
    static atomic_bool warned = false;
    if (mt_tensor_requires_grad(mt_py_unwrap(x)) && mt_grad_enabled() &&
        !atomic_exchange(&warned, true) &&
        PyErr_WarnEx(PyExc_UserWarning,
                     "Converting a tensor with requires_grad=True to a scalar may lead to "
                     "unexpected behavior.\nConsider using tensor.detach() first.",
                     1) < 0) {
        return NULL;
    }
    mt_scalar s;
    return single_value(x, &s, "float") < 0 ? NULL : PyFloat_FromDouble(mt_scalar_to_double(s));
}

static PyObject *
nb_int(PyObject *x)
{
    mt_scalar s;
    if (single_value(x, &s, "int") < 0) {
        return NULL;
    }
    if (s.type == MT_UINT64) { /* from 2^63 on: PyTorch reads an int64 */
        PyErr_SetString(PyExc_RuntimeError,
                        "value cannot be converted to type int64_t without overflow");
        return NULL;
    }
    return s.type == MT_FLOAT64 ? PyLong_FromDouble(s.v.f)
                                : PyLong_FromLongLong(mt_scalar_to_int(s));
}

static PyObject *
nb_index(PyObject *x)
{
    if (!mt_dtype_is_integral(mt_py_unwrap(x)->dtype, true) ||
        mt_tensor_numel(mt_py_unwrap(x)) != 1) {
        PyErr_SetString(PyExc_TypeError, "only integer tensors of a single element can be "
                                         "converted to an index");
        return NULL;
    }
    return nb_int(x);
}

PyNumberMethods mt_py_tensor_as_number = {
    .nb_add = nb_add,
    .nb_subtract = nb_sub,
    .nb_multiply = nb_mul,
    .nb_true_divide = nb_div,
    .nb_inplace_add = nb_iadd,
    .nb_inplace_subtract = nb_isub,
    .nb_inplace_multiply = nb_imul,
    .nb_inplace_true_divide = nb_idiv,
    .nb_floor_divide = nb_floordiv,
    .nb_remainder = nb_rem,
    .nb_power = nb_pow,
    .nb_inplace_floor_divide = nb_ifloordiv,
    .nb_inplace_remainder = nb_irem,
    .nb_inplace_power = nb_ipow,
    .nb_matrix_multiply = nb_matmul,
    .nb_negative = nb_neg,
    .nb_positive = nb_pos,
    .nb_invert = nb_invert,
    .nb_and = nb_and,
    .nb_or = nb_or,
    .nb_inplace_and = nb_iand,
    .nb_inplace_or = nb_ior,
    .nb_xor = nb_xor,
    .nb_lshift = nb_lshift,
    .nb_rshift = nb_rshift,
    .nb_inplace_xor = nb_ixor,
    .nb_inplace_lshift = nb_ilshift,
    .nb_inplace_rshift = nb_irshift,
    .nb_absolute = nb_abs,
    .nb_bool = nb_bool,
    .nb_float = nb_float,
    .nb_int = nb_int,
    .nb_index = nb_index,
};
