/* The front ends of the random fills (uniform_, normal_, bernoulli_, random_), for every device:
 * PyTorch's defaults and checks, and the fill's parameters (mt_random_spec) for the kernels of
 * csrc/cpu/random.c and cuda/ops_random.c. */
#include <stdint.h>

#include "ops/fails.h"
#include "ops/front.h"

static double
scalar_or(mt_scalar s, double dflt)
{
    return mt_scalar_is_none(s) ? dflt : mt_scalar_to_double(s);
}

/* random_'s inclusive upper bound without `to` (PyTorch's): the dtype's largest value, or for
 * the floats the largest integer they hold exactly, 2^24 and 2^53. */
static int64_t
default_to_inc(mt_dtype dt)
{
    switch (dt) {
    case MT_BOOL:
        return 1;
    case MT_INT32:
        return INT32_MAX;
    case MT_INT64:
        return INT64_MAX;
    case MT_FLOAT32:
        return 1LL << 24;
    default:
        return 1LL << 53;
    }
}

/* The name PyTorch's random_ gives dt in its bounds errors (the C type's). */
static const char *
random_dtype_name(mt_dtype dt)
{
    return dt == MT_BOOL ? "bool" : dt == MT_INT32 ? "int" : "long int";
}

/* from and to_inc must be values of an integer (or bool) dt, as PyTorch's
 * check_from_to_in_range: int32.random_(2**62) would wrap to negative values. Floats take any
 * int64 (PyTorch only warns past 2^24 or 2^53). */
static mt_status
check_random_range(int64_t from, int64_t to_inc, mt_dtype dt)
{
    int64_t lo = dt == MT_BOOL ? 0 : dt == MT_INT32 ? INT32_MIN : INT64_MIN;
    int64_t hi = dt == MT_BOOL ? 1 : dt == MT_INT32 ? INT32_MAX : INT64_MAX;
    if (mt_dtype_is_float(dt)) {
        return MT_OK;
    }
    if (from < lo || from > hi) {
        return mt_fail(MT_ERUNTIME, "from is out of bounds for %s", random_dtype_name(dt));
    }
    if (to_inc < lo || to_inc > hi) {
        return mt_fail(MT_ERUNTIME, "to - 1 is out of bounds for %s", random_dtype_name(dt));
    }
    return MT_OK;
}

static const char *const random_kernels[] = {"uniform_kernel", "normal_kernel",
                                              "bernoulli_kernel", "random_kernel"};
static const mt_op random_ops[] = {MT_OP_uniform_, MT_OP_normal_, MT_OP_bernoulli_, MT_OP_random_};

/* The fill's parameters from a (self in t[0], its Scalars in s[]) with PyTorch's defaults and
 * errors. */
static mt_status
random_spec(const mt_args *a, mt_random_kind kind, mt_random_spec *out)
{
    mt_dtype dt = a->t[0]->dtype;
    *out = (mt_random_spec){0, 0, 0, 1};
    if (kind != MT_RANDOM_INTS && !mt_dtype_is_float(dt)) {
        return mt_fail_not_implemented(random_kernels[kind],
                                       mt_front_on_cuda(a->t[0]) ? "_cuda" : "_cpu", dt);
    }
    switch (kind) {
    case MT_RANDOM_UNIFORM:
        out->a = scalar_or(a->s[0], 0);
        out->b = scalar_or(a->s[1], 1);
        if (out->a > out->b) {
            return mt_fail(MT_ERUNTIME,
                           "uniform_ expects to return a [from, to) range, but found from=%g > to=%g",
                           out->a, out->b);
        }
        return MT_OK;
    case MT_RANDOM_NORMAL:
        out->a = scalar_or(a->s[0], 0);
        out->b = scalar_or(a->s[1], 1);
        if (out->b < 0) {
            return mt_fail(MT_ERUNTIME, "normal expects std >= 0.0, but found std %g", out->b);
        }
        return MT_OK;
    case MT_RANDOM_BERNOULLI:
        out->a = scalar_or(a->s[0], 0.5);
        if (!(out->a >= 0 && out->a <= 1)) {
            return mt_fail(MT_ERUNTIME, "bernoulli_ expects p to be in [0, 1], but got p=%g",
                           out->a);
        }
        return MT_OK;
    default:
        break;
    }
    /* PyTorch's overloads random_(from, to), random_(to) and random_(): one value is `to`;
     * without one, the range runs to the dtype's default bound, inclusive. */
    bool one = !mt_scalar_is_none(a->s[0]) && mt_scalar_is_none(a->s[1]);
    int64_t from = one || mt_scalar_is_none(a->s[0]) ? 0 : mt_scalar_to_int(a->s[0]);
    int64_t to_inc = default_to_inc(dt);
    if (one || !mt_scalar_is_none(a->s[1])) {
        int64_t to = mt_scalar_to_int(one ? a->s[0] : a->s[1]);
        if (from >= to) {
            return mt_fail(MT_ERUNTIME,
                           "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                           (long long)from, (long long)to);
        }
        to_inc = to - 1;
    }
    mt_status st = check_random_range(from, to_inc, dt);
    if (st) {
        return st;
    }
    out->from = from;
    out->span = (uint64_t)to_inc - (uint64_t)from + 1; /* 0: all 2^64 values */
    return MT_OK;
}

// self (any shape), filled in place (uniform_, normal_, bernoulli_, random_): the fill's
// parameters, and self can be written
mt_status
mt_front_random_fill(const mt_args *a, mt_plan *p)
{
    mt_random_kind kind = MT_RANDOM_UNIFORM;
    while (random_ops[kind] != p->op) {
        kind++;
    }
    mt_status st = random_spec(a, kind, &p->random);
    return st ? st : mt_check_writable(a->t[0]);
}
