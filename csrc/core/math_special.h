/* Scalar math of torch.special's functions and the integer and float-bit pairs (gcd, lcm,
 * nextafter, frexp's parts), shared by the CPU loops and the CUDA kernels; included by
 * core/math.h, whose MT_HD and MT_SQRT1_2 it uses. Each formula once, as ATen's native/Math.h
 * computes it: the Cephes Bessel functions and ndtri in the input's own float type
 * (core/math_special_t.h), erfcx, the incomplete gamma functions and zeta in double, the Hermite,
 * Chebyshev, Legendre and Laguerre polynomials in the input's type. */
#ifndef MT_MATH_SPECIAL_H
#define MT_MATH_SPECIAL_H

#include <float.h>
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

/* The degree of an orthogonal polynomial, from the float n: truncated toward 0, -1 (no
 * polynomial: the value is 0) for a negative n, a NaN or one outside int64, as PyTorch's cast to
 * int64 makes such an n negative on x86-64 */
#define MT_DEFINE_POLY_DEGREE(T, S)                        \
    static inline MT_HD int64_t mt_poly_degree_##S(T nf)   \
    {                                                      \
        if (!(nf > -1 && nf < (T)9223372036854775807.0)) { \
            return -1;                                     \
        }                                                  \
        return (int64_t)nf;                                \
    }
MT_DEFINE_POLY_DEGREE(float, f32)
MT_DEFINE_POLY_DEGREE(double, f64)
#undef MT_DEFINE_POLY_DEGREE

/* The families computed by one three-term recurrence P_k+1 = (alpha_k P_k - beta_k P_k-1) /
 * gamma_k from P_0 = 1, each term in the row's float type as PyTorch's special_functions write
 * it: Hermite's H (2x P_k - 2k P_k-1, P_1 = 2x), He (x P_k - k P_k-1, P_1 = x), Legendre's P
 * (((2k+1) x P_k - k P_k-1) / (k+1), P_1 = x) and Laguerre's L (((2k+1-x) P_k - k P_k-1) /
 * (k+1), P_1 = 1 - x). The values of the first two grow until they overflow, and a few steps
 * after the first inf one is inf - inf (or 0 * inf): from that NaN on every step is NaN, so the
 * loop stops there and never runs n times for a huge n. */
enum { MT_POLY_HERMITE_H, MT_POLY_HERMITE_HE, MT_POLY_LEGENDRE, MT_POLY_LAGUERRE };
#define MT_DEFINE_THREE_TERM(T, S)                                                          \
    static inline MT_HD T mt_three_term_##S(int family, T x, int64_t n)                     \
    {                                                                                       \
        T p = 1;                                                                            \
        T q = family == MT_POLY_HERMITE_H ? x + x : family == MT_POLY_LAGUERRE ? 1 - x : x; \
        if (n == 0) {                                                                       \
            return p;                                                                       \
        }                                                                                   \
        for (int64_t k = 1; k < n && q == q; k++) {                                         \
            T r;                                                                            \
            switch (family) {                                                               \
            case MT_POLY_HERMITE_H:                                                         \
                r = (x + x) * q - (T)(2 * k) * p;                                           \
                break;                                                                      \
            case MT_POLY_HERMITE_HE:                                                        \
                r = x * q - (T)k * p;                                                       \
                break;                                                                      \
            case MT_POLY_LEGENDRE:                                                          \
                r = ((T)(k + k + 1) * x * q - (T)k * p) / (T)(k + 1);                       \
                break;                                                                      \
            default:                                                                        \
                r = (((T)(k + k) + (1 - x)) * q - (T)k * p) / (T)(k + 1);                   \
            }                                                                               \
            p = q;                                                                          \
            q = r;                                                                          \
        }                                                                                   \
        return q;                                                                           \
    }                                                                                       \
    static inline MT_HD T mt_hermite_polynomial_h_##S(T x, T nf)                            \
    {                                                                                       \
        const int64_t n = mt_poly_degree_##S(nf);                                           \
        return n < 0 ? 0 : mt_three_term_##S(MT_POLY_HERMITE_H, x, n);                      \
    }                                                                                       \
    static inline MT_HD T mt_hermite_polynomial_he_##S(T x, T nf)                           \
    {                                                                                       \
        const int64_t n = mt_poly_degree_##S(nf);                                           \
        return n < 0 ? 0 : mt_three_term_##S(MT_POLY_HERMITE_HE, x, n);                     \
    }                                                                                       \
    static inline MT_HD T mt_legendre_polynomial_p_##S(T x, T nf)                           \
    {                                                                                       \
        const int64_t n = mt_poly_degree_##S(nf);                                           \
        if (n >= 0 && fabs(x) == 1) { /* +-1 at +-1 */                                      \
            return x > 0 || n % 2 == 0 ? 1 : -1;                                            \
        }                                                                                   \
        return n < 0 ? 0 : mt_three_term_##S(MT_POLY_LEGENDRE, x, n);                       \
    }                                                                                       \
    static inline MT_HD T mt_laguerre_polynomial_l_##S(T x, T nf)                           \
    {                                                                                       \
        const int64_t n = mt_poly_degree_##S(nf);                                           \
        return n < 0 ? 0 : x == 0 ? 1 : mt_three_term_##S(MT_POLY_LAGUERRE, x, n);          \
    }
MT_DEFINE_THREE_TERM(float, f32)
MT_DEFINE_THREE_TERM(double, f64)
#undef MT_DEFINE_THREE_TERM

/* The four Chebyshev kinds at y (x itself, or 2x - 1 for the shifted ones), as PyTorch's
 * special_functions compute them: all satisfy P_k+1 = 2y P_k - P_k-1 from P_0 = 1 and P_1 = y (T),
 * 2y (U), 2y - 1 (V), 2y + 1 (W). At y = 1 and y = -1 they take their closed values; inside
 * (-1, 1) a degree above `trig` (PyTorch's switch-over, per kind and shifted or not) takes the
 * trigonometric form with theta = acos(y): cos(n theta), sin((n+1) theta) / sin(theta),
 * cos((n+1/2) theta) / cos(theta/2), sin((n+1/2) theta) / sin(theta/2). Outside [-1, 1] the
 * values grow until they overflow; the first inf - inf is NaN and the loop stops there. */
enum { MT_CHEB_T, MT_CHEB_U, MT_CHEB_V, MT_CHEB_W };
#define MT_DEFINE_CHEBYSHEV(T, S, F)                                                               \
    static inline MT_HD T mt_chebyshev_edge_##S(int kind, int64_t n, bool at_one)                  \
    {                                                                                              \
        const T sign = n % 2 == 0 ? 1 : -1, odd = (T)n + (T)n + 1;                                 \
        switch (kind) {                                                                            \
        case MT_CHEB_T:                                                                            \
            return at_one ? 1 : sign;                                                              \
        case MT_CHEB_U:                                                                            \
            return at_one ? (T)n + 1 : sign * ((T)n + 1);                                          \
        case MT_CHEB_V:                                                                            \
            return at_one ? 1 : sign * odd;                                                        \
        default:                                                                                   \
            return at_one ? odd : sign;                                                            \
        }                                                                                          \
    }                                                                                              \
    static inline MT_HD T mt_chebyshev_trig_##S(int kind, int64_t n, T y)                          \
    {                                                                                              \
        const T th = acos##F(y), h = th / 2;                                                       \
        switch (kind) {                                                                            \
        case MT_CHEB_T:                                                                            \
            return cos##F((T)n * th);                                                              \
        case MT_CHEB_U:                                                                            \
            if (sin##F(th) != 0) {                                                                 \
                return sin##F(((T)n + 1) * th) / sin##F(th);                                       \
            }                                                                                      \
            return ((T)n + 1) * cos##F(((T)n + 1) * th) / y;                                       \
        case MT_CHEB_V:                                                                            \
            if (sin##F(h) != 1) {                                                                  \
                return cos##F(((T)n + (T)0.5) * th) / cos##F(h);                                   \
            }                                                                                      \
            return mt_chebyshev_edge_##S(kind, n, false);                                          \
        default:                                                                                   \
            if (cos##F(h) != 1) {                                                                  \
                return sin##F(((T)n + (T)0.5) * th) / sin##F(h);                                   \
            }                                                                                      \
            return mt_chebyshev_edge_##S(kind, n, y > 0);                                          \
        }                                                                                          \
    }                                                                                              \
    static inline MT_HD T mt_chebyshev_##S(int kind, int64_t trig, T y, T nf)                      \
    {                                                                                              \
        const int64_t n = mt_poly_degree_##S(nf);                                                  \
        if (n < 0) {                                                                               \
            return 0;                                                                              \
        }                                                                                          \
        if (fabs##F(y) == 1) {                                                                     \
            return mt_chebyshev_edge_##S(kind, n, y > 0);                                          \
        }                                                                                          \
        if (n > trig && fabs##F(y) < 1) {                                                          \
            return mt_chebyshev_trig_##S(kind, n, y);                                              \
        }                                                                                          \
        if (n == 0) {                                                                              \
            return 1;                                                                              \
        }                                                                                          \
        T p = 1, q = kind == MT_CHEB_T ? y : y + y + (kind == MT_CHEB_V ? -1 : kind == MT_CHEB_W); \
        for (int64_t k = 2; k <= n && q == q; k++) {                                               \
            const T r = (y + y) * q - p;                                                           \
            p = q;                                                                                 \
            q = r;                                                                                 \
        }                                                                                          \
        return q;                                                                                  \
    }
MT_DEFINE_CHEBYSHEV(float, f32, f)
MT_DEFINE_CHEBYSHEV(double, f64, )
#undef MT_DEFINE_CHEBYSHEV

/* The eight ops: name, kind, the degree above which (-1, 1) takes the trigonometric form, and
 * whether the polynomial is shifted to [0, 1] (evaluated at y = 2x - 1) */
#define MT_CHEBYSHEV_OPS(X)                            \
    X(chebyshev_polynomial_t, MT_CHEB_T, 6, 0)         \
    X(chebyshev_polynomial_u, MT_CHEB_U, 8, 0)         \
    X(chebyshev_polynomial_v, MT_CHEB_V, 8, 0)         \
    X(chebyshev_polynomial_w, MT_CHEB_W, 8, 0)         \
    X(shifted_chebyshev_polynomial_t, MT_CHEB_T, 6, 1) \
    X(shifted_chebyshev_polynomial_u, MT_CHEB_U, 6, 1) \
    X(shifted_chebyshev_polynomial_v, MT_CHEB_V, 6, 1) \
    X(shifted_chebyshev_polynomial_w, MT_CHEB_W, 4, 1)
#define MT_DEFINE_CHEBYSHEV_OP(T, S, name, kind, trig, shifted)            \
    static inline MT_HD T mt_##name##_##S(T x, T n)                        \
    {                                                                      \
        return mt_chebyshev_##S(kind, trig, (shifted) ? x + x - 1 : x, n); \
    }
#define MT_CHEBYSHEV_OP_F32(name, kind, trig, shifted) \
    MT_DEFINE_CHEBYSHEV_OP(float, f32, name, kind, trig, shifted)
#define MT_CHEBYSHEV_OP_F64(name, kind, trig, shifted) \
    MT_DEFINE_CHEBYSHEV_OP(double, f64, name, kind, trig, shifted)
MT_CHEBYSHEV_OPS(MT_CHEBYSHEV_OP_F32)
MT_CHEBYSHEV_OPS(MT_CHEBYSHEV_OP_F64)
#undef MT_CHEBYSHEV_OP_F32
#undef MT_CHEBYSHEV_OP_F64
#undef MT_DEFINE_CHEBYSHEV_OP
#undef MT_CHEBYSHEV_OPS


/* the Cephes functions, in float then in double */
#define MT_SP_NAME_(name, s) mt_##name##_##s
#define MT_SP_NAME(name, s) MT_SP_NAME_(name, s)
#define MT_SP_LIBM_(fn, f) fn##f
#define MT_SP_LIBM(fn, f) MT_SP_LIBM_(fn, f)
#define MT_SP_T float
#define MT_SP_S f32
#define MT_SP_F f
#define MT_SP_EPS FLT_EPSILON
#include "core/math_special_t.h"
#undef MT_SP_T
#undef MT_SP_S
#undef MT_SP_F
#undef MT_SP_EPS
#define MT_SP_T double
#define MT_SP_S f64
#define MT_SP_F
#define MT_SP_EPS DBL_EPSILON
#include "core/math_special_t.h"
#undef MT_SP_T
#undef MT_SP_S
#undef MT_SP_F
#undef MT_SP_EPS

#endif
