/* Scalar math of float and double only (suffixes f32, f64): libm's functions, the float divisions,
 * rounding, the tests of a value, the float pairs and ternaries, erfinv, digamma, trigamma and
 * polygamma. Part of core/math.h (include that): each formula once, for the CPU loops and the
 * CUDA kernels alike. */
#ifndef MT_MATH_FLOAT_H
#define MT_MATH_FLOAT_H

#ifndef MT_MATH_H
#error "include core/math.h, which defines MT_HD and includes this file in order"
#endif

/* clang-format off */

/* mt_<fn>_f32 and mt_<fn>_f64: libm's fn of a float (libm suffix f) and a double. */
#define MT_LIBM(fn)                                                                          \
    static inline MT_HD float mt_##fn##_f32(float x) { return fn##f(x); }                    \
    static inline MT_HD double mt_##fn##_f64(double x) { return fn(x); }
MT_LIBM(exp) MT_LIBM(log) MT_LIBM(log1p) MT_LIBM(sqrt) MT_LIBM(sin) MT_LIBM(cos) MT_LIBM(tanh)
MT_LIBM(exp2) MT_LIBM(expm1) MT_LIBM(log2) MT_LIBM(log10)
#undef MT_LIBM

/* Float math of the unary ops, for float (f32, libm suffix f) and double (f64, no suffix).
 * sigmoid never evaluates exp of a large positive number, so it cannot overflow to inf/inf. */
#define MT_DEFINE_FLOAT_UNARY(T, suffix, F)                                                   \
    static inline MT_HD T mt_rsqrt_##suffix(T x) { return (T)1 / sqrt##F(x); }               \
    static inline MT_HD T mt_reciprocal_##suffix(T x) { return (T)1 / x; }                   \
    static inline MT_HD T mt_abs_##suffix(T x) { return fabs##F(x); }                        \
    static inline MT_HD T mt_sigmoid_##suffix(T x)                                           \
    {                                                                                        \
        if (x >= 0) {                                                                        \
            return (T)1 / ((T)1 + exp##F(-x));                                               \
        }                                                                                    \
        const T e = exp##F(x); /* also the NaN path: x >= 0 is false for NaN */             \
        return e / ((T)1 + e);                                                               \
    }                                                                                        \
    static inline MT_HD T mt_div_##suffix(T x, T y) { return x / y; }                        \
    static inline MT_HD T mt_hypot_##suffix(T x, T y) { return hypot##F(x, y); }             \
    static inline MT_HD bool mt_isnan_##suffix(T x) { return x != x; }                       \
    static inline MT_HD bool mt_isinf_##suffix(T x) { return isinf(x); }
MT_DEFINE_FLOAT_UNARY(float, f32, f)
MT_DEFINE_FLOAT_UNARY(double, f64, )
#undef MT_DEFINE_FLOAT_UNARY

/* Float powers, remainders and divisions with rounding. */
#define MT_DEFINE_FLOAT_DIVISION(T, suffix, F)                                               \
    static inline MT_HD T mt_pow_##suffix(T x, T y) { return pow##F(x, y); }                 \
    static inline MT_HD T mt_fmod_##suffix(T x, T y) { return fmod##F(x, y); }               \
    static inline MT_HD T mt_div_trunc_##suffix(T x, T y) { return trunc##F(x / y); }        \
    /* Python's sign rule: the remainder takes the divisor's sign. */                        \
    static inline MT_HD T mt_remainder_##suffix(T x, T y)                                    \
    {                                                                                        \
        T mod = fmod##F(x, y);                                                               \
        return (mod != 0 && ((y < 0) != (mod < 0))) ? mod + y : mod;                         \
    }                                                                                        \
    /* PyTorch's div_floor_floating: exact where floor(x / y) would round up a quotient. */ \
    static inline MT_HD T mt_div_floor_##suffix(T x, T y)                                   \
    {                                                                                        \
        if (y == 0) {                                                                        \
            return x / y; /* IEEE: inf or NaN */                                             \
        }                                                                                    \
        T mod = fmod##F(x, y);                                                               \
        T div = (x - mod) / y;                                                               \
        if (mod != 0 && ((y < 0) != (mod < 0))) {                                            \
            div -= (T)1;                                                                     \
        }                                                                                    \
        if (div == 0) {                                                                      \
            return copysign##F((T)0, x / y);                                                 \
        }                                                                                    \
        T fl = floor##F(div);                                                                \
        return div - fl > (T)0.5 ? fl + (T)1 : fl;                                           \
    }
MT_DEFINE_FLOAT_DIVISION(float, f32, f)
MT_DEFINE_FLOAT_DIVISION(double, f64, )
#undef MT_DEFINE_FLOAT_DIVISION

/* ---- everyday pointwise: rounding, tests, trigonometry, special functions, the
 * bitwise shifts, the float-pair functions; as PyTorch's kernels compute them (ATen's
 * UnaryOpsKernel, BinaryOpsKernel and native/Math.h) ---- */


#define MT_LIBM(fn)                                                                          \
    static inline MT_HD float mt_##fn##_f32(float x) { return fn##f(x); }                    \
    static inline MT_HD double mt_##fn##_f64(double x) { return fn(x); }
MT_LIBM(erf) MT_LIBM(erfc) MT_LIBM(lgamma) MT_LIBM(sinh) MT_LIBM(cosh) MT_LIBM(tan)
MT_LIBM(asin) MT_LIBM(acos) MT_LIBM(atan) MT_LIBM(asinh) MT_LIBM(acosh) MT_LIBM(atanh)
MT_LIBM(floor) MT_LIBM(ceil) MT_LIBM(trunc)
#undef MT_LIBM

/* Rounding of the floats (round is to nearest, ties to even: nearbyint); of the integers it is
 * the identity, as PyTorch's. round with decimals scales by 10^|decimals| first (a negative
 * decimals rounds to tens, hundreds...). frac keeps the sign: x - trunc(x). */
#define MT_DEFINE_ROUNDING(T, S, F)                                                          \
    static inline MT_HD T mt_round_##S(T x) { return nearbyint##F(x); }                      \
    static inline MT_HD T mt_frac_##S(T x) { return x - trunc##F(x); }                       \
    static inline MT_HD T mt_round_decimals_##S(T x, T decimals)                             \
    {                                                                                        \
        const bool neg = decimals < 0;                                                       \
        const T ten_pow = (T)pow(10.0, (double)(neg ? -decimals : decimals));                \
        return neg ? nearbyint##F(x / ten_pow) * ten_pow : nearbyint##F(x * ten_pow) / ten_pow; \
    }
MT_DEFINE_ROUNDING(float, f32, f)
MT_DEFINE_ROUNDING(double, f64, )
#undef MT_DEFINE_ROUNDING

/* The tests of a value: finite, +inf, -inf, a set sign bit (-0.0 has one; no integer is
 * infinite, a bool is never negative). */
#define MT_DEFINE_FLOAT_TESTS(T, S)                                                          \
    static inline MT_HD bool mt_isfinite_##S(T x) { return isfinite(x); }                    \
    static inline MT_HD bool mt_isposinf_##S(T x) { return x == (T)INFINITY; }               \
    static inline MT_HD bool mt_isneginf_##S(T x) { return x == -(T)INFINITY; }              \
    static inline MT_HD bool mt_signbit_##S(T x) { return signbit(x); }
MT_DEFINE_FLOAT_TESTS(float, f32)
MT_DEFINE_FLOAT_TESTS(double, f64)
#undef MT_DEFINE_FLOAT_TESTS

/* The float-pair functions and the float ternaries:
 * - copysign, atan2: libm's;
 * - logaddexp(x, y) = log(e^x + e^y), logaddexp2 in base 2: the larger plus log1p of the
 *   smaller's share, and x itself for two equal infinities (inf - inf would be NaN);
 * - xlogy(x, y) = x * log(y), 0 where x is 0 (unless y is NaN);
 * - lerp(x, end, w) = x + w * (end - x), from the end's side for |w| >= 0.5 (exact at w = 1);
 * - addcmul and addcdiv: x + k * y * z and x + k * y / z (k: value);
 * - nan_to_num(x, posinf, neginf, nan): the replacements of +inf, -inf and NaN;
 * - deg2rad, rad2deg: a product with the double constant rounded to T. */
#define MT_DEFINE_FLOAT_PAIRS(T, S, F)                                                       \
    static inline MT_HD T mt_copysign_##S(T x, T y) { return copysign##F(x, y); }            \
    static inline MT_HD T mt_atan2_##S(T x, T y) { return atan2##F(x, y); }                  \
    static inline MT_HD T mt_logaddexp_##S(T x, T y)                                         \
    {                                                                                        \
        if (isinf(x) && x == y) {                                                            \
            return x;                                                                        \
        }                                                                                    \
        const T m = x < y ? y : x;                                                           \
        return m + log1p##F(exp##F(-fabs##F(x - y)));                                        \
    }                                                                                        \
    static inline MT_HD T mt_logaddexp2_##S(T x, T y)                                        \
    {                                                                                        \
        if (isinf(x) && x == y) {                                                            \
            return x;                                                                        \
        }                                                                                    \
        const T m = x < y ? y : x;                                                           \
        return m + log1p##F(exp2##F(-fabs##F(x - y))) * (T)1.44269504088896340736;           \
    }                                                                                        \
    static inline MT_HD T mt_xlogy_##S(T x, T y)                                             \
    {                                                                                        \
        return y != y ? (T)NAN : x == 0 ? (T)0 : x * log##F(y);                              \
    }                                                                                        \
    static inline MT_HD T mt_lerp_##S(T x, T end, T w)                                       \
    {                                                                                        \
        return fabs##F(w) < (T)0.5 ? x + w * (end - x) : end - (end - x) * ((T)1 - w);       \
    }                                                                                        \
    static inline MT_HD T mt_addcdiv_##S(T x, T y, T z, T k) { return x + k * y / z; }       \
    static inline MT_HD T mt_nan_to_num_##S(T x, T posinf, T neginf, T nan)                  \
    {                                                                                        \
        return x != x ? nan : x == (T)INFINITY ? posinf : x == -(T)INFINITY ? neginf : x;    \
    }                                                                                        \
    static inline MT_HD T mt_deg2rad_##S(T x) { return x * (T)(MT_PI / 180); }               \
    static inline MT_HD T mt_rad2deg_##S(T x) { return x * (T)(180 / MT_PI); }
MT_DEFINE_FLOAT_PAIRS(float, f32, f)
MT_DEFINE_FLOAT_PAIRS(double, f64, )
#undef MT_DEFINE_FLOAT_PAIRS

/* erfinv: a rational approximation refined by two Newton steps (PyTorch's calc_erfinv, after
 * Pavlis's MATLAB erfinv); +-inf at +-1, NaN beyond. digamma: PyTorch's calc_digamma: the
 * reflection pi / tan(pi x) for a negative x (from its fractional part: accurate for a large
 * |x|), recurrence up to 10, then the asymptotic series; +-inf at -+0 and NaN at the negative
 * integers. trigamma below. */
#define MT_DEFINE_SPECIAL(T, S, F)                                                           \
    static inline MT_HD T mt_erfinv_##S(T y)                                                 \
    {                                                                                        \
        const T y_abs = fabs##F(y);                                                          \
        if (y_abs > (T)1) {                                                                  \
            return (T)NAN;                                                                   \
        }                                                                                    \
        if (y_abs == (T)1) {                                                                 \
            return copysign##F((T)INFINITY, y);                                              \
        }                                                                                    \
        T x;                                                                                 \
        if (y_abs <= (T)0.7) {                                                               \
            const T z = y * y;                                                               \
            const T num = (((T)-0.140543331 * z + (T)0.914624893) * z + (T)-1.645349621) * z + \
                          (T)0.886226899;                                                    \
            const T dem = ((((T)0.012229801 * z + (T)-0.329097515) * z + (T)1.442710462) * z + \
                           (T)-2.118377725) * z + (T)1;                                      \
            x = y * num / dem;                                                               \
        } else {                                                                             \
            const T z = sqrt##F(-log##F(((T)1 - y_abs) / (T)2));                             \
            const T num = (((T)1.641345311 * z + (T)3.429567803) * z + (T)-1.624906493) * z + \
                          (T)-1.970840454;                                                   \
            const T dem = ((T)1.6370678 * z + (T)3.5438892) * z + (T)1;                      \
            x = copysign##F(num, y) / dem;                                                   \
        }                                                                                    \
        const T two_over_sqrt_pi = (T)2 / (T)1.77245385090551602730;                         \
        x = x - (erf##F(x) - y) / (two_over_sqrt_pi * exp##F(-x * x));                       \
        x = x - (erf##F(x) - y) / (two_over_sqrt_pi * exp##F(-x * x));                       \
        return x;                                                                            \
    }                                                                                        \
    static inline MT_HD T mt_digamma_##S(T x)                                                \
    {                                                                                        \
        if (x == 0) {                                                                        \
            return copysign##F((T)INFINITY, -x);                                             \
        }                                                                                    \
        T reflection = 0;                                                                    \
        if (x < 0) {                                                                         \
            if (x == trunc##F(x)) {                                                          \
                return (T)NAN;                                                               \
            }                                                                                \
            double whole;                                                                    \
            const double r = modf((double)x, &whole);                                        \
            reflection = -(T)(MT_PI / tan(MT_PI * r));                                       \
            x = 1 - x;                                                                       \
        }                                                                                    \
        T result = 0;                                                                        \
        while (x < 10) {                                                                     \
            result -= 1 / x;                                                                 \
            x += 1;                                                                          \
        }                                                                                    \
        if (x == 10) {                                                                       \
            return result + (T)2.25175258906672110764 + reflection; /* digamma(10) */        \
        }                                                                                    \
        T y = 0;                                                                             \
        if (x < (T)1.0e17) {                                                                 \
            const T z = 1 / (x * x);                                                         \
            T p = (T)8.33333333333333333333E-2;                                              \
            p = p * z + (T)-2.10927960927960927961E-2;                                       \
            p = p * z + (T)7.57575757575757575758E-3;                                        \
            p = p * z + (T)-4.16666666666666666667E-3;                                       \
            p = p * z + (T)3.96825396825396825397E-3;                                        \
            p = p * z + (T)-8.33333333333333333333E-3;                                       \
            p = p * z + (T)8.33333333333333333333E-2;                                        \
            y = z * p;                                                                       \
        }                                                                                    \
        return result + log##F(x) - ((T)0.5 / x) - y + reflection;                           \
    }                                                                                        \
                                                                                             \
    /* trigamma (PyTorch's: the reflection for x < 1/2, six recurrence steps, then the       \
     * asymptotic series) */                                                                 \
    static inline MT_HD T mt_trigamma_##S(T x)                                               \
    {                                                                                        \
        const T pi = (T)MT_PI;                                                               \
        T sign = 1, result = 0;                                                              \
        if (x < (T)0.5) {                                                                    \
            sign = -1;                                                                       \
            const T s = sin##F(pi * x);                                                      \
            result -= (pi * pi) / (s * s);                                                   \
            x = 1 - x;                                                                       \
        }                                                                                    \
        for (int i = 0; i < 6; ++i) {                                                        \
            result += 1 / (x * x);                                                           \
            x += 1;                                                                          \
        }                                                                                    \
        const T ixx = 1 / (x * x);                                                           \
        result += (1 + 1 / (2 * x) +                                                         \
                   ixx * ((T)1 / 6 - ixx * ((T)1 / 30 - ixx * ((T)1 / 42)))) / x;            \
        return sign * result;                                                                \
    }
MT_DEFINE_SPECIAL(float, f32, f)
MT_DEFINE_SPECIAL(double, f64, )
#undef MT_DEFINE_SPECIAL

/* The Hurwitz zeta function sum over k >= 0 of (k + q)^-x, x >= 1 (Cephes' zeta, as PyTorch's):
 * the sum's first terms, then Euler-Maclaurin with the Bernoulli terms of A. */
static inline MT_HD double
mt_zeta_acc(double x, double q)
{
    const double MACHEP = 1.11022302462515654042E-16;
    const double A[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0,
                          -1.8924375803183791606e9, 7.47242496e10, -2.950130727918164224e12,
                          1.1646782814350067249e14, -4.5979787224074726105e15,
                          1.8152105401943546773e17, -7.1661652561756670113e18};
    if (x == 1) {
        return INFINITY;
    }
    if (x < 1) {
        return NAN;
    }
    if (q <= 0) {
        if (q == floor(q)) {
            return INFINITY;
        }
        if (x != floor(x)) {
            return NAN;
        }
    }
    double s = pow(q, -x), a = q, b = 0;
    int i = 0;
    while (i < 9 || a <= 9.0) {
        i += 1;
        a += 1;
        b = pow(a, -x);
        s += b;
        if (-MACHEP * s < b && b < MACHEP * s) {
            return s;
        }
    }
    const double w = a;
    s += b * w / (x - 1);
    s -= 0.5 * b;
    a = 1;
    double k = 0;
    for (int j = 0; j < 12; j++) {
        a *= x + k;
        b /= w;
        const double t = a * b / A[j];
        s = s + t;
        if (fabs(t / s) < MACHEP) {
            return s;
        }
        k += 1;
        a *= x + k;
        b /= w;
        k += 1; /* the next Bernoulli term's factors are (x + 2j)(x + 2j + 1) */
    }
    return s;
}

/* polygamma(n, x), the n-th derivative of digamma: digamma, trigamma, and beyond
 * (-1)^(n+1) n! zeta(n + 1, x); n (a whole number >= 0) comes as the row's scalar. */
static inline MT_HD double
mt_polygamma_acc(double x, double n)
{
    return (((int64_t)n % 2) ? 1.0 : -1.0) * exp(lgamma(n + 1)) * mt_zeta_acc(n + 1, x);
}
static inline MT_HD float
mt_polygamma_f32(float x, float n)
{
    return n == 0 ? mt_digamma_f32(x) : n == 1 ? mt_trigamma_f32(x) : (float)mt_polygamma_acc(x, n);
}
static inline MT_HD double
mt_polygamma_f64(double x, double n)
{
    return n == 0 ? mt_digamma_f64(x) : n == 1 ? mt_trigamma_f64(x) : mt_polygamma_acc(x, n);
}

/* One step of logcumsumexp: log(e^x + e^acc), PyTorch's _log_add_exp_helper (NaN in acc
 * propagates; equal infinities give x). */
static inline MT_HD double
mt_log_add_exp(double x, double acc)
{
    const double lo = acc != acc ? acc : (acc < x ? acc : x); /* std::min(x, acc) */
    const double hi = acc != acc ? acc : (x < acc ? acc : x); /* std::max(x, acc) */
    if (lo != hi || isfinite(lo)) {
        return log1p(exp(lo - hi)) + hi;
    }
    return x;
}

/* clang-format on */

#endif
