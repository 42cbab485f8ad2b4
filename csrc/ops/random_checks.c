/* The front ends of the random fills (uniform_, normal_, bernoulli_, random_, exponential_,
 * geometric_, log_normal_, cauchy_), for every device:
 * PyTorch's defaults and checks, and the fill's parameters (mt_random_spec) for the kernels of
 * csrc/cpu/random.c and cuda/ops_random.c. */
#include <stdint.h>

#include "dispatch/widen.h"
#include "ops/arg_checks.h"
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

static const char *const random_kernels[] = {"uniform_kernel", "normal_kernel", "bernoulli_kernel",
                                             "random_kernel"};
/* the fill of each mt_random_kind */
static const mt_op random_ops[MT_RANDOM_NUM_KINDS] = {
#define MT_RANDOM(kind, op, sample, form, dtypes) MT_OP_##op,
#include "ops/random.def"
};

/* bernoulli_'s p as a number: t[1], a wrapped Python number (a tensor p is
 * mt_bernoulli_tensor_p's). */
static double
bernoulli_p(const mt_args *a)
{
    mt_scalar p;
    return a->t[1] && mt_tensor_item(a->t[1], &p) == MT_OK ? mt_scalar_to_double(p) : 0.5;
}

/* The parameters of exponential_, geometric_, log_normal_ and cauchy_, checked as PyTorch's
 * *_impl_ do, then self's dtype as their kernels do. */
static mt_status
other_spec(const mt_args *a, mt_random_kind kind, mt_random_spec *out)
{
    mt_dtype dt = a->t[0]->dtype;
    const char *device = mt_front_on_cuda(a->t[0]) ? "cuda" : "cpu";
    out->a = scalar_or(a->s[0], 0); /* the schemas give the defaults */
    out->b = scalar_or(a->s[1], 0);
    switch (kind) {
    case MT_RANDOM_EXPONENTIAL:
        if (!(out->a > 0)) {
            return mt_fail(MT_ERUNTIME, "exponential_ expects lambda > 0.0, but found lambda=%g",
                           out->a);
        }
        if (!mt_dtype_is_float(dt)) {
            return mt_fail(MT_ERUNTIME,
                           "Exponential distribution is a continuous probability distribution. "
                           "dtype must be a floating point but you specified %s",
                           mt_dtype_scalar_name(dt));
        }
        return MT_OK;
    case MT_RANDOM_GEOMETRIC:
        if (!(out->a > 0 && out->a < 1)) {
            return mt_fail(MT_ERUNTIME, "geometric_ expects p to be in (0, 1), but got p=%g",
                           out->a);
        }
        return dt == MT_BOOL
                   ? mt_fail(MT_ENOTIMPL, "\"geometric_%s\" not implemented for 'Bool'", device)
                   : MT_OK;
    case MT_RANDOM_LOG_NORMAL:
        if (!(out->b > 0)) {
            return mt_fail(MT_ERUNTIME, "log_normal_ expects std > 0.0, but found std=%g", out->b);
        }
        return mt_dtype_is_float(dt)
                   ? MT_OK
                   : mt_fail(MT_ENOTIMPL, "\"log_normal_%s\" not implemented for '%s'", device,
                             mt_dtype_scalar_name(dt));
    default: /* cauchy */
        if (!(out->b > 0)) {
            return mt_fail(MT_ERUNTIME, "cauchy_ expects sigma > 0.0, but found sigma=%g", out->b);
        }
        if (!mt_dtype_is_float(dt)) {
            return mt_fail(MT_ERUNTIME,
                           "Cauchy distribution is a continuous probability distribution. dtype "
                           "must be a floating point but you specified %s",
                           mt_dtype_c_name(dt));
        }
        return MT_OK;
    }
}

mt_status
mt_random_spec_of(const mt_args *a, mt_random_kind kind, mt_random_spec *out)
{
    mt_dtype dt = a->t[0]->dtype;
    /* a float16 or bfloat16 self arrives widened to float32: its fill draws in the stored dtype */
    const int stored = mt_widen_stored_dtype;
    *out = (mt_random_spec){0, 0, 0, 1,
                            stored >= 0 && mt_dtype_compute((mt_dtype)stored) == dt
                                ? (mt_dtype)stored
                                : dt};
    if (kind > MT_RANDOM_INTS) {
        return other_spec(a, kind, out);
    }
    /* bernoulli_ fills any dtype with 0 and 1 */
    if ((kind == MT_RANDOM_UNIFORM || kind == MT_RANDOM_NORMAL) && !mt_dtype_is_float(dt)) {
        return mt_fail_not_implemented(random_kernels[kind],
                                       mt_front_on_cuda(a->t[0]) ? "_cuda" : "_cpu", dt);
    }
    switch (kind) {
    case MT_RANDOM_UNIFORM:
        out->a = scalar_or(a->s[0], 0);
        out->b = scalar_or(a->s[1], 1);
        if (out->a > out->b) {
            return mt_fail(MT_ERUNTIME,
                           "uniform_ expects to return a [from, to) range, but found from=%g > "
                           "to=%g",
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
        out->a = bernoulli_p(a);
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
                           "random_ expects 'from' to be less than 'to', but got from=%lld >= "
                           "to=%lld",
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

// self (any shape), filled in place (uniform_, normal_, random_, exponential_, geometric_,
// log_normal_, cauchy_; bernoulli_'s front end is distributions.c's): the fill's parameters,
// and self can be written
mt_status
mt_front_random_fill(const mt_args *a, mt_plan *p)
{
    int kind = 0;
    while (kind < MT_RANDOM_NUM_KINDS && random_ops[kind] != p->op) {
        kind++;
    }
    if (kind == MT_RANDOM_NUM_KINDS) {
        return mt_fail(MT_ERUNTIME, "random fill: no kind for this op"); /* a bad MT_FRONTS entry */
    }
    mt_status st = mt_random_spec_of(a, (mt_random_kind)kind, &p->random);
    return st ? st : mt_check_writable(a->t[0]);
}
