/* The Python numbers that the elementwise family's ops convert checked, as PyTorch's kernels do
 * ("value cannot be converted to type at::Half without overflow"): alpha, addcmul's value,
 * clamp_min's bound, leaky_relu's slope, pow's exponent and lerp's weight as numbers,
 * masked_fill's 0-dim value. Each row of ops/elementwise.def names its check in its scalars
 * column, as what it reads and the dtype it checks that into, from the few kinds below; the
 * dispatcher runs mt_ew_check_scalars once per call, for every device, before a small dtype is
 * widened. It computes nothing and allocates nothing. */
#include "ops/elementwise.h"

/* Where a row's checked values come from. */
typedef enum ew_from {
    FROM_NOTHING, /* _: the row checks none */
    FROM_K,       /* Scalar arguments s[first...] (None passes) */
    FROM_NEG_K,   /* the same, negated */
    FROM_NUMBER,  /* tensor arguments t[first...] where they are Python numbers */
    FROM_VALUE,   /* tensor arguments t[first...] where they are 0-dim on the CPU */
} ew_from;

/* The dtype they are checked into. */
typedef enum ew_into {
    INTO_COMMON,      /* the first n tensors' common dtype (self's for n = 1); out= plays no
                       * part: int8 + int8 with out=int64 checks alpha in int8 */
    INTO_OPMATH,      /* that dtype's opmath: float32 for the small floats */
    INTO_SMALL_FLOAT, /* self's where it is a small float; none for another */
    INTO_HARDTANH,    /* self's, by hardtanh's rules */
} ew_into;

/* A row's check: count values (at most MT_EW_MAX_K) from slot first, into a dtype of its first n
 * tensors. */
typedef struct ew_check {
    unsigned char from, first, count, into, n;
} ew_check;

/* The names of elementwise.def's scalars column (<what>_<into>, described there). */
#define SCALARS__ {FROM_NOTHING, 0, 0, INTO_COMMON, 1}
#define SCALARS_k_self {FROM_K, 0, 1, INTO_COMMON, 1}
#define SCALARS_k2_self {FROM_K, 0, 2, INTO_COMMON, 1}
#define SCALARS_k_opmath {FROM_K, 0, 1, INTO_OPMATH, 1}
#define SCALARS_k2_opmath {FROM_K, 0, 2, INTO_OPMATH, 1}
#define SCALARS_k3_opmath {FROM_K, 0, 3, INTO_OPMATH, 1}
#define SCALARS_k_common2 {FROM_K, 0, 1, INTO_COMMON, 2}
#define SCALARS_neg_k_common2 {FROM_NEG_K, 0, 1, INTO_COMMON, 2}
#define SCALARS_k_opmath3 {FROM_K, 0, 1, INTO_OPMATH, 3}
#define SCALARS_k2_hardtanh {FROM_K, 0, 2, INTO_HARDTANH, 1}
#define SCALARS_num1_small {FROM_NUMBER, 1, 1, INTO_SMALL_FLOAT, 1}
#define SCALARS_num2_opmath2 {FROM_NUMBER, 2, 1, INTO_OPMATH, 2}
#define SCALARS_nums12_self {FROM_NUMBER, 1, 2, INTO_COMMON, 1}
#define SCALARS_value2_self {FROM_VALUE, 2, 1, INTO_COMMON, 1}

/* The dtype PyTorch's kernels compute dt in (c10's opmath type): float for the small floats. */
static mt_dtype
opmath(mt_dtype dt)
{
    return mt_dtype_is_float(dt) && mt_dtype_is_small(dt) ? MT_FLOAT32 : dt;
}

/* the dtype of the first n tensors of a together (wrapped numbers weakly) */
static mt_dtype
common_dtype(const mt_args *a, int n)
{
    mt_tensor *ts[3];
    int m = 0;
    for (int k = 0; k < n; k++) {
        if (a->t[k]) {
            ts[m++] = a->t[k];
        }
    }
    return mt_result_type(ts, m);
}

/* The dtype c checks a's values into; false where it checks none. */
static bool
check_dtype(const ew_check *c, const mt_args *a, mt_dtype *dt)
{
    const mt_dtype self = a->t[0]->dtype;
    switch ((ew_into)c->into) {
    case INTO_COMMON:
        *dt = c->n == 1 ? self : common_dtype(a, c->n);
        return true;
    case INTO_OPMATH:
        *dt = opmath(c->n == 1 ? self : common_dtype(a, c->n));
        return true;
    case INTO_SMALL_FLOAT:
        *dt = self;
        return mt_dtype_is_float(self) && mt_dtype_is_small(self);
    case INTO_HARDTANH:
        *dt = self;
        return true;
    }
    return false;
}

/* -s, as c10's Scalar negates it: an integer wraps as an int64 (-(2**63) is itself) */
static mt_scalar
negated(mt_scalar s)
{
    if (s.type == MT_INT64) {
        return mt_scalar_int((int64_t)(0u - (uint64_t)s.v.i));
    }
    if (s.type == MT_UINT64) {
        return mt_scalar_int((int64_t)(0u - s.v.u));
    }
    if (s.type == MT_FLOAT64) {
        s.v.f = -s.v.f;
        s.imag = -s.imag;
    }
    return s;
}

/* The j-th value c reads from a, into *v: None where it reads none (a tensor where c takes a
 * number; a tensor on a device, which the kernel reads). */
static mt_status
check_value(const ew_check *c, const mt_args *a, int j, mt_scalar *v)
{
    const int slot = c->first + j;
    const mt_tensor *t = a->t[slot];
    v->type = MT_NUM_DTYPES;
    switch ((ew_from)c->from) {
    case FROM_K:
        *v = a->s[slot];
        return MT_OK;
    case FROM_NEG_K:
        *v = negated(a->s[slot]);
        return MT_OK;
    case FROM_NUMBER:
    case FROM_VALUE:
        if (t == NULL || (c->from == FROM_NUMBER && !t->is_wrapped_number) || t->ndim != 0 ||
            mt_tensor_device(t).type != MT_CPU) {
            return MT_OK;
        }
        return mt_tensor_item(t, v);
    case FROM_NOTHING:
        return MT_OK;
    }
    return MT_OK;
}

/* s into dt, checked; a None Scalar (the default) passes, as do a float for an integer dtype
 * and a complex number for a real one, which the row's meta refuses or promotes with its own
 * message */
static mt_status
check_into(mt_scalar s, mt_dtype dt)
{
    if (mt_scalar_is_none(s) || (s.type == MT_FLOAT64 && mt_dtype_is_integral(dt, true)) ||
        (s.is_complex && !mt_dtype_is_complex(dt))) {
        return MT_OK;
    }
    return mt_check_scalar_fits(s, dt);
}

/* hardtanh's bounds: into int64 first for an integer dtype (PyTorch compares them there), then
 * no negative one for an unsigned dtype, then into the dtype */
static mt_status
check_hardtanh_bounds(const mt_scalar *bounds, int n, mt_dtype dt)
{
    const bool is_unsigned = dt == MT_UINT8 || dt == MT_UINT16 || dt == MT_UINT32 ||
                             dt == MT_UINT64;
    mt_status st = MT_OK;
    for (int k = 0; k < n && st == MT_OK; k++) {
        st = mt_dtype_is_integral(dt, false) ? check_into(bounds[k], MT_INT64) : MT_OK;
    }
    for (int k = 0; k < n && st == MT_OK; k++) {
        if (is_unsigned && !mt_scalar_is_none(bounds[k]) && mt_scalar_to_double(bounds[k]) < 0) {
            return mt_fail(MT_ERUNTIME,
                           "cannot do hardtanh on an unsigned type with negative limits");
        }
    }
    for (int k = 0; k < n && st == MT_OK; k++) {
        st = check_into(bounds[k], dt);
    }
    return st;
}

/* Checks a's values as c says: each read, then checked, in order (hardtanh's: all read, then
 * checked stage by stage). */
static mt_status
check_scalars(const ew_check *c, const mt_args *a)
{
    mt_dtype dt;
    if (c->from == FROM_NOTHING || !check_dtype(c, a, &dt)) {
        return MT_OK;
    }
    mt_scalar v[MT_EW_MAX_K];
    mt_status st = MT_OK;
    for (int j = 0; j < c->count && j < MT_EW_MAX_K && st == MT_OK; j++) {
        st = check_value(c, a, j, &v[j]);
        if (st == MT_OK && c->into != INTO_HARDTANH) {
            st = check_into(v[j], dt);
        }
    }
    return st || c->into != INTO_HARDTANH ? st : check_hardtanh_bounds(v, c->count, dt);
}

static const ew_check row_checks[MT_NUM_EW] = {
#define MT_EW(name, form, dtypes, meta, scalars, kernel) [MT_EW_##name] = SCALARS_##scalars,
#include "ops/elementwise.def"
};

/* each family op's row's check; NULL for an op outside the family */
static const ew_check *const op_checks[MT_NUM_OPS] = {
#define MT_EW_OP(op, row, flags, shell, schema) [MT_OP_##op] = &row_checks[MT_EW_##row],
#include "ops/elementwise.def"
};

mt_status
mt_ew_check_scalars(mt_op op, const mt_args *a)
{
    const ew_check *c = op_checks[op];
    const mt_tensor *self = a->t[0];
    if (c == NULL || self == NULL || self->is_wrapped_number) {
        return MT_OK;
    }
    return check_scalars(c, a);
}
