/* Scalar math of torch.special's functions and the integer and float-bit pairs (gcd, lcm,
 * nextafter, frexp's parts), shared by the CPU loops and the CUDA kernels; included by
 * core/math.h, whose MT_HD and MT_SQRT1_2 it uses. Each formula once, as ATen's native/Math.h
 * computes it: the Cephes Bessel functions and ndtri in the input's own float type
 * (core/math_special_t.h), erfcx, the incomplete gamma functions and zeta in double, the Hermite
 * polynomials in the input's type. */
#ifndef MT_MATH_SPECIAL_H
#define MT_MATH_SPECIAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* exp(x^2) with the rounding error of x * x carried (fma), so that its relative error stays
 * near one ulp however large x^2 */
static inline MT_HD double
mt_exp_square(double x)
{
    const double hi = x * x;
    const double lo = fma(x, x, -hi);
    return exp(hi) * (1 + lo);
}

/* erfcx(x) = exp(x^2) erfc(x), for x >= 0: the product while erfc(x) stays a normal number,
 * then the asymptotic series 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k (below 1e-18 after
 * nine terms from x = 26 on) */
static inline MT_HD double
mt_erfcx_nonneg(double x)
{
    if (x < 26) {
        return mt_exp_square(x) * erfc(x);
    }
    const double h = 1 / (2 * x * x);
    double term = 1, sum = 1;
    for (int k = 1; k < 10; k++) {
        term *= -(2 * k - 1) * h;
        sum += term;
    }
    return sum * 0.56418958354775628694807945156 / x; /* 1/sqrt(pi) */
}

/* erfcx, the scaled complementary error function: below 0, 2 exp(x^2) - erfcx(-x), +inf once
 * exp(x^2) overflows (PyTorch's bounds) */
static inline MT_HD double
mt_erfcx_f64(double x)
{
    if (x != x) {
        return x;
    }
    if (x >= 0) {
        return mt_erfcx_nonneg(x);
    }
    if (x < -26.7) {
        return INFINITY;
    }
    return 2 * mt_exp_square(x) - mt_erfcx_nonneg(-x);
}

static inline MT_HD float
mt_erfcx_f32(float x)
{
    return (float)mt_erfcx_f64(x);
}

/* The regularized incomplete gamma functions P(a, x) (igamma) and Q(a, x) = 1 - P (igammac):
 * PyTorch's values on the boundary (a or x 0 or infinite, NaN for a negative one), else the
 * power series of P below x = a + 1 and the continued fraction of Q (Lentz's method) above, each
 * times x^a e^-x / Gamma(a); the other one as the complement, which then loses nothing (P and Q
 * stay away from 1 on their sides). */
#define MT_IGAM_EPS 1.11022302462515654042e-16 /* double's unit roundoff: where a sum stops */
#define MT_IGAM_MAX_TERMS 100000 /* enough for a ~ x ~ 1e8 (the series needs O(sqrt(a))) */

static inline MT_HD double
mt_igam_series(double a, double x)
{
    double term = 1 / a, sum = term;
    for (int n = 1; n < MT_IGAM_MAX_TERMS && term > sum * MT_IGAM_EPS; n++) {
        term *= x / (a + n);
        sum += term;
    }
    return sum * exp(a * log(x) - x - lgamma(a));
}

static inline MT_HD double
mt_igamc_fraction(double a, double x)
{
    const double tiny = 1e-300; /* keeps Lentz's denominators off 0 */
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < MT_IGAM_MAX_TERMS; i++) {
        const double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        d = fabs(d) < tiny ? tiny : d;
        c = b + an / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        const double step = d * c;
        h *= step;
        if (fabs(step - 1) < MT_IGAM_EPS) {
            break;
        }
    }
    return h * exp(a * log(x) - x - lgamma(a));
}

/* P(a, x) when lower, else Q(a, x) */
static inline MT_HD double
mt_igamma_acc(double a, double x, bool lower)
{
    if (x < 0 || a < 0) {
        return NAN;
    }
    if (a == 0) {
        return x > 0 ? (lower ? 1.0 : 0.0) : NAN;
    }
    if (x == 0) {
        return lower ? 0.0 : 1.0;
    }
    if (isinf(a)) {
        return isinf(x) ? NAN : (lower ? 0.0 : 1.0);
    }
    if (isinf(x)) {
        return lower ? 1.0 : 0.0;
    }
    if (a != a || x != x) {
        return NAN; /* after the infinite bounds, as PyTorch's: P(NaN, inf) is 1 */
    }
    if (x < a + 1) {
        const double p = mt_igam_series(a, x);
        return lower ? p : 1 - p;
    }
    const double q = mt_igamc_fraction(a, x);
    return lower ? 1 - q : q;
}

static inline MT_HD float
mt_igamma_f32(float a, float x)
{
    return (float)mt_igamma_acc(a, x, true);
}
static inline MT_HD double
mt_igamma_f64(double a, double x)
{
    return mt_igamma_acc(a, x, true);
}
static inline MT_HD float
mt_igammac_f32(float a, float x)
{
    return (float)mt_igamma_acc(a, x, false);
}
static inline MT_HD double
mt_igammac_f64(double a, double x)
{
    return mt_igamma_acc(a, x, false);
}

/* The Hurwitz zeta function zeta(x, q) (core/math.h's mt_zeta_acc), the row's form */
static inline MT_HD float
mt_zeta_f32(float x, float q)
{
    return (float)mt_zeta_acc(x, q);
}
static inline MT_HD double
mt_zeta_f64(double x, double q)
{
    return mt_zeta_acc(x, q);
}

/* gcd and lcm of the integers (Euclid's, on the magnitudes in the unsigned type, so the most
 * negative value wraps as PyTorch's does rather than overflowing); gcd(0, 0) = 0, lcm with 0 is 0 */
#define MT_DEFINE_GCD(T, U, S)                                            \
    static inline MT_HD T mt_gcd_##S(T x, T y)                            \
    {                                                                     \
        U a = x < 0 ? (U)0 - (U)x : (U)x, b = y < 0 ? (U)0 - (U)y : (U)y; \
        while (a != 0) {                                                  \
            const U c = a;                                                \
            a = b % a;                                                    \
            b = c;                                                        \
        }                                                                 \
        return (T)b;                                                      \
    }                                                                     \
    static inline MT_HD T mt_lcm_##S(T x, T y)                            \
    {                                                                     \
        const T g = mt_gcd_##S(x, y);                                     \
        if (g == 0) {                                                     \
            return 0;                                                     \
        }                                                                 \
        const U m = (U)(x / g) * (U)y;                                    \
        return (T)((T)m < 0 ? (U)0 - m : m);                              \
    }
MT_DEFINE_GCD(int32_t, uint32_t, i32)
MT_DEFINE_GCD(int64_t, uint64_t, i64)
#undef MT_DEFINE_GCD

/* nextafter: libm's; frexp's parts: the mantissa in [0.5, 1) with x's sign and the exponent
 * (a whole number, as a float: frexp casts it to int32), both 0 for 0, inf and NaN mantissas
 * staying themselves */
#define MT_DEFINE_FLOAT_BITS(T, S, F)                \
    static inline MT_HD T mt_nextafter_##S(T x, T y) \
    {                                                \
        return nextafter##F(x, y);                   \
    }                                                \
    static inline MT_HD T mt_frexp_mantissa_##S(T x) \
    {                                                \
        int e;                                       \
        return frexp##F(x, &e);                      \
    }                                                \
    static inline MT_HD T mt_frexp_exponent_##S(T x) \
    {                                                \
        int e = 0;                                   \
        (void)frexp##F(x, &e);                       \
        return isfinite(x) ? (T)e : (T)0;            \
    }
MT_DEFINE_FLOAT_BITS(float, f32, f)
MT_DEFINE_FLOAT_BITS(double, f64, )
#undef MT_DEFINE_FLOAT_BITS

/* The Hermite polynomials H_n(x) (physicists': H_0 = 1, H_1 = 2x, H_k+1 = 2x H_k - 2k H_k-1)
 * and He_n(x) (probabilists': He_0 = 1, He_1 = x, He_k+1 = x He_k - k He_k-1), by their
 * recurrences in the row's float type, as PyTorch's special_functions compute them: both are
 * P_0 = 1, P_1 = a, P_k+1 = a P_k - c k P_k-1, with a = 2x, c = 2 or a = x, c = 1. The degree is
 * n truncated toward 0; a negative degree, a NaN n or one outside int64 gives 0 (PyTorch's
 * conversion to int64 makes such an n INT64_MIN on x86-64). The values grow until they overflow,
 * and a few steps after the first inf one is inf - inf (or 0 * inf): from that NaN on every step
 * is NaN, so the loop stops there and never runs n times for a huge n. */
#define MT_DEFINE_HERMITE(T, S)                                  \
    static inline MT_HD T mt_hermite_##S(T a, int64_t c, T nf)   \
    {                                                            \
        if (!(nf > -1 && nf < (T)9223372036854775807.0)) {       \
            return 0;                                            \
        }                                                        \
        const int64_t n = (int64_t)nf;                           \
        T p = 1, q = a;                                          \
        if (n == 0) {                                            \
            return p;                                            \
        }                                                        \
        for (int64_t k = 1; k < n && q == q; k++) {              \
            const T r = a * q - (T)(c * k) * p;                  \
            p = q;                                               \
            q = r;                                               \
        }                                                        \
        return q;                                                \
    }                                                            \
    static inline MT_HD T mt_hermite_polynomial_h_##S(T x, T n)  \
    {                                                            \
        return mt_hermite_##S(x + x, 2, n);                      \
    }                                                            \
    static inline MT_HD T mt_hermite_polynomial_he_##S(T x, T n) \
    {                                                            \
        return mt_hermite_##S(x, 1, n);                          \
    }
MT_DEFINE_HERMITE(float, f32)
MT_DEFINE_HERMITE(double, f64)
#undef MT_DEFINE_HERMITE

/* the Cephes functions, in float then in double */
#define MT_SP_NAME_(name, s) mt_##name##_##s
#define MT_SP_NAME(name, s) MT_SP_NAME_(name, s)
#define MT_SP_LIBM_(fn, f) fn##f
#define MT_SP_LIBM(fn, f) MT_SP_LIBM_(fn, f)
#define MT_SP_T float
#define MT_SP_S f32
#define MT_SP_F f
#include "core/math_special_t.h"
#undef MT_SP_T
#undef MT_SP_S
#undef MT_SP_F
#define MT_SP_T double
#define MT_SP_S f64
#define MT_SP_F
#include "core/math_special_t.h"
#undef MT_SP_T
#undef MT_SP_S
#undef MT_SP_F

#endif
