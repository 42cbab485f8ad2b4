/* Complex math on two parts: complex64 and complex128 as structs of their real and imaginary
 * parts (mt_z64, mt_z128: the layout of C's float _Complex and double _Complex and of PyTorch's
 * c10::complex), for the CUDA backend's complex loops, one MT_HD function per row of
 * ops/elementwise.def's MT_EW_COMPLEX, mt_<name>_z64 and mt_<name>_z128 (nvcc has no C _Complex,
 * so the CPU's loops, on C's complex types, cannot be compiled for the device). The formulas both
 * devices compute alike (MT_DEFINE_Z_FORMULAS: products, Smith's quotients, log1p, expm1,
 * sigmoid and its backward, pow's special cases, exp2, logaddexp, lerp, addcmul, addcdiv,
 * nan_to_num, the logical ops) are written here once; core/math_complex.h
 * makes the CPU's from them, on libm's complex exp, log, sqrt and cpow.
 * Part of core/math.h (include that: it defines MT_HD); plain C and C++, no library but libm. */
#ifndef MT_MATH_COMPLEX_PARTS_H
#define MT_MATH_COMPLEX_PARTS_H

#ifndef MT_MATH_H
#error "include core/math.h first: it defines MT_HD"
#endif

#ifdef __cplusplus
#define MT_Z_ALIGN(n) alignas(n)
#else
#define MT_Z_ALIGN(n) _Alignas(n)
#endif

/* aligned as a pair, so one 8- or 16-byte load reads an element */
typedef struct mt_z64 {
    MT_Z_ALIGN(8) float re;
    float im;
} mt_z64;
typedef struct mt_z128 {
    MT_Z_ALIGN(16) double re;
    double im;
} mt_z128;

#define MT_LN2 0.69314718055994530942  /* log2(x) = log(x) / ln 2 */
#define MT_LN10 2.30258509299404568402 /* log10(x) = log(x) / ln 10 */
#define MT_TANH_BIG 22 /* |Re x| beyond which tanh's real part is +-1 in double (FreeBSD's ctanh) */

/* clang-format off */
/* The helpers the functions are written with: Z the struct, R its parts' type, S the suffix, F
 * libm's suffix for R (f for float) */
#define MT_DEFINE_Z_BASE(Z, R, S, F)                                                            \
    static inline MT_HD Z mt_z_##S(R re, R im) { Z z; z.re = re; z.im = im; return z; }         \
    static inline MT_HD Z mt_zmul_##S(Z x, Z y)                                                 \
    {                                                                                           \
        return mt_z_##S(x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re);                  \
    }                                                                                           \
    /* x / y by Smith's scaling; x / 0 gives each part over a zero, inf or NaN as the reals */  \
    static inline MT_HD Z mt_zdiv_##S(Z x, Z y)                                                 \
    {                                                                                           \
        const R a = x.re, b = x.im, c = y.re, d = y.im;                                         \
        const R ac = fabs##F(c), ad = fabs##F(d);                                               \
        if (ac == 0 && ad == 0) {                                                               \
            return mt_z_##S(a / ac, b / ad);                                                    \
        }                                                                                       \
        if (ac >= ad) {                                                                         \
            const R r = d / c, s = (R)1 / (c + d * r);                                          \
            return mt_z_##S((a + b * r) * s, (b - a * r) * s);                                  \
        }                                                                                       \
        const R r = c / d, s = (R)1 / (d + c * r);                                              \
        return mt_z_##S((a * r + b) * s, (b * r - a) * s);                                      \
    }                                                                                           \
    /* i x and -i x: the rotations the inverse functions are written with */                    \
    static inline MT_HD Z mt_ztimes_i_##S(Z x) { return mt_z_##S(-x.im, x.re); }                \
    static inline MT_HD Z mt_zover_i_##S(Z x) { return mt_z_##S(x.im, -x.re); }

/* The rows' functions the CPU and CUDA loops compute alike, mt_<row>_S on B's struct, written once
 * here: the products and Smith's quotients, log1p and expm1 without their cancellations near 0,
 * sigmoid and its backward, pow's special cases, the tests. They are written on the device's
 * complex exp, log, sqrt and power x ** y (EXP, LOG, SQRT, POW: functions of Z), so that each
 * device keeps its own: the CUDA loops the ones below on real functions (MT_DEFINE_Z), the CPU's
 * libm's cexp, clog, csqrt and cpow (core/math_complex.h, which calls these on the parts of its
 * _Complex values). */
#define MT_DEFINE_Z_FORMULAS(Z, R, B, S, F, EXP, LOG, SQRT, POW)                                \
    static inline MT_HD Z mt_add_##S(Z x, Z y, Z k)                                             \
    {                                                                                           \
        const Z ky = mt_zmul_##B(k, y);                                                         \
        return mt_z_##B(x.re + ky.re, x.im + ky.im);                                            \
    }                                                                                           \
    static inline MT_HD Z mt_sub_##S(Z x, Z y, Z k)                                             \
    {                                                                                           \
        const Z ky = mt_zmul_##B(k, y);                                                         \
        return mt_z_##B(x.re - ky.re, x.im - ky.im);                                            \
    }                                                                                           \
    static inline MT_HD Z mt_mul_##S(Z x, Z y) { return mt_zmul_##B(x, y); }                    \
    static inline MT_HD Z mt_div_##S(Z x, Z y) { return mt_zdiv_##B(x, y); }                    \
    static inline MT_HD Z mt_neg_##S(Z x) { return mt_z_##B(-x.re, -x.im); }                    \
    static inline MT_HD Z mt_reciprocal_##S(Z x) { return mt_zdiv_##B(mt_z_##B(1, 0), x); }     \
    static inline MT_HD Z mt_rsqrt_##S(Z x)                                                     \
    {                                                                                           \
        return mt_zdiv_##B(mt_z_##B(1, 0), SQRT(x));                                            \
    }                                                                                           \
    static inline MT_HD Z mt_log2_##S(Z x)                                                      \
    {                                                                                           \
        const Z l = LOG(x);                                                                     \
        return mt_z_##B(l.re / (R)MT_LN2, l.im / (R)MT_LN2);                                    \
    }                                                                                           \
    static inline MT_HD Z mt_log10_##S(Z x)                                                     \
    {                                                                                           \
        const Z l = LOG(x);                                                                     \
        return mt_z_##B(l.re / (R)MT_LN10, l.im / (R)MT_LN10);                                  \
    }                                                                                           \
    /* log(1 + x) without 1 + x's rounding near 0: |1 + x|^2 = 1 + (2a + a^2 + b^2) */          \
    static inline MT_HD Z mt_log1p_##S(Z x)                                                     \
    {                                                                                           \
        const R a = x.re, b = x.im;                                                             \
        if (!isfinite(a) || !isfinite(b) || fabs##F(a) + fabs##F(b) > (R)0.5) {                 \
            return LOG(mt_z_##B(1 + a, b));                                                     \
        }                                                                                       \
        return mt_z_##B(log1p##F(2 * a + a * a + b * b) / 2, atan2##F(b, 1 + a));               \
    }                                                                                           \
    /* exp(x) - 1 without the cancellation near 0: Re = expm1(a) cos b - 2 sin^2(b / 2) */      \
    static inline MT_HD Z mt_expm1_##S(Z x)                                                     \
    {                                                                                           \
        const R a = x.re, b = x.im, h = sin##F(b / 2);                                          \
        if (b == 0) {                                                                           \
            return mt_z_##B(expm1##F(a), b);                                                    \
        }                                                                                       \
        return mt_z_##B(expm1##F(a) * cos##F(b) - 2 * h * h, exp##F(a) * sin##F(b));            \
    }                                                                                           \
    static inline MT_HD Z mt_sigmoid_##S(Z x)                                                   \
    {                                                                                           \
        const Z e = EXP(mt_neg_##S(x));                                                         \
        return mt_zdiv_##B(mt_z_##B(1, 0), mt_z_##B(1 + e.re, e.im));                           \
    }                                                                                           \
    /* g conj((1 - y) y): the derivative conjugated, as PyTorch's */                            \
    static inline MT_HD Z mt_sigmoid_backward_##S(Z g, Z y)                                     \
    {                                                                                           \
        const Z d = mt_zmul_##B(mt_z_##B(1 - y.re, -y.im), y);                                  \
        return mt_zmul_##B(g, mt_z_##B(d.re, -d.im));                                           \
    }                                                                                           \
    /* POW, but x ** 0 is 1 and 0 ** y (Re y > 0) is 0, as PyTorch's (libm's cpow and exp(y log x) \
     * give NaN parts there) */                                                                 \
    static inline MT_HD Z mt_pow_##S(Z x, Z y)                                                  \
    {                                                                                           \
        if (y.re == 0 && y.im == 0) {                                                           \
            return mt_z_##B(1, 0);                                                              \
        }                                                                                       \
        if (x.re == 0 && x.im == 0 && y.re > 0) {                                               \
            return mt_z_##B(0, 0);                                                              \
        }                                                                                       \
        return POW(x, y);                                                                       \
    }                                                                                           \
    /* 2 ** x = exp(x ln 2), as PyTorch's (C has no complex exp2) */                           \
    static inline MT_HD Z mt_exp2_##S(Z x)                                                      \
    {                                                                                           \
        return EXP(mt_z_##B(x.re * (R)MT_LN2, x.im * (R)MT_LN2));                               \
    }                                                                                           \
    /* e^x with Re x = +inf: each part inf times cos or sin of Im x, 0 where that is 0 (no    \
     * inf * 0), a NaN imaginary part for an infinite or NaN Im x */                            \
    static inline MT_HD Z mt_zexp_inf_##S(Z x)                                                  \
    {                                                                                           \
        const R inf = (R)INFINITY;                                                              \
        if (!isfinite(x.im)) {                                                                  \
            return mt_z_##B(inf, (R)NAN);                                                       \
        }                                                                                       \
        const R c = cos##F(x.im), si = sin##F(x.im);                                            \
        return mt_z_##B(c == 0 ? 0 : inf * c, si == 0 ? 0 : inf * si);                         \
    }                                                                                           \
    /* log(e^x + e^y), PyTorch's way: ordered by real part (a NaN part is the larger), NaN if   \
     * either has one, the smaller for two -inf real parts, log1p(e^(min - max)) + max else */  \
    static inline MT_HD Z mt_logaddexp_##S(Z x, Z y)                                            \
    {                                                                                           \
        const bool ny = isnan(y.re) || isnan(y.im), nx = isnan(x.re) || isnan(x.im);            \
        if (nx || ny) {                                                                         \
            return mt_z_##B((R)NAN, (R)NAN);                                                    \
        }                                                                                       \
        const Z lo = x.re < y.re ? x : y, hi = x.re < y.re ? y : x;                             \
        if (!isfinite(lo.re) && lo.re == hi.re) {                                               \
            if (lo.re < 0) {                                                                    \
                return lo;                                                                      \
            }                                                                                   \
            const Z a = mt_zexp_inf_##S(lo), b = mt_zexp_inf_##S(hi);                           \
            return mt_log1p_##S(mt_z_##B(a.re + b.re - 1, a.im + b.im));                        \
        }                                                                                       \
        const Z d = mt_z_##B(lo.re - hi.re, lo.im - hi.im);                                     \
        Z e;                                                                                    \
        if (isfinite(d.re)) {                                                                   \
            const R m = exp##F(d.re);                                                           \
            e = mt_z_##B(m * cos##F(d.im), m * sin##F(d.im));                                   \
        } else {                                                                                \
            e = d.re < 0 ? mt_z_##B(0, 0) : mt_zexp_inf_##S(d);                                 \
        }                                                                                       \
        const Z l = mt_log1p_##S(e);                                                            \
        return mt_z_##B(l.re + hi.re, l.im + hi.im);                                            \
    }                                                                                           \
    /* x + w (end - x), from the end's side for |w| >= 0.5, as the real lerp */                 \
    static inline MT_HD Z mt_lerp_##S(Z x, Z end, Z w)                                          \
    {                                                                                           \
        const Z d = mt_z_##B(end.re - x.re, end.im - x.im);                                     \
        if (hypot##F(w.re, w.im) < (R)0.5) {                                                    \
            const Z wd = mt_zmul_##B(w, d);                                                     \
            return mt_z_##B(x.re + wd.re, x.im + wd.im);                                        \
        }                                                                                       \
        const Z dw = mt_zmul_##B(d, mt_z_##B(1 - w.re, -w.im));                                 \
        return mt_z_##B(end.re - dw.re, end.im - dw.im);                                        \
    }                                                                                           \
    /* x + k y z and x + k y / z (k: value) */                                                  \
    static inline MT_HD Z mt_addcmul_##S(Z x, Z y, Z z, Z k)                                    \
    {                                                                                           \
        const Z p = mt_zmul_##B(mt_zmul_##B(k, y), z);                                          \
        return mt_z_##B(x.re + p.re, x.im + p.im);                                              \
    }                                                                                           \
    static inline MT_HD Z mt_addcdiv_##S(Z x, Z y, Z z, Z k)                                    \
    {                                                                                           \
        const Z q = mt_zdiv_##B(mt_zmul_##B(k, y), z);                                          \
        return mt_z_##B(x.re + q.re, x.im + q.im);                                              \
    }                                                                                           \
    /* each part's NaN and infinities replaced, as PyTorch's (by the replacements' real parts) */ \
    static inline MT_HD R mt_zpart_nan_to_num_##S(R v, R posinf, R neginf, R nan)               \
    {                                                                                           \
        return v != v ? nan : v == (R)INFINITY ? posinf : v == -(R)INFINITY ? neginf : v;       \
    }                                                                                           \
    static inline MT_HD Z mt_nan_to_num_##S(Z x, Z posinf, Z neginf, Z nan)                     \
    {                                                                                           \
        return mt_z_##B(mt_zpart_nan_to_num_##S(x.re, posinf.re, neginf.re, nan.re),            \
                        mt_zpart_nan_to_num_##S(x.im, posinf.re, neginf.re, nan.re));           \
    }                                                                                           \
    /* the logical ops read a complex value as true where either part is nonzero (NaN too) */   \
    static inline MT_HD bool mt_logical_not_##S(Z x) { return x.re == 0 && x.im == 0; }         \
    static inline MT_HD bool mt_logical_and_##S(Z x, Z y)                                       \
    {                                                                                           \
        return !mt_logical_not_##S(x) && !mt_logical_not_##S(y);                                \
    }                                                                                           \
    static inline MT_HD bool mt_logical_or_##S(Z x, Z y)                                        \
    {                                                                                           \
        return !mt_logical_not_##S(x) || !mt_logical_not_##S(y);                                \
    }                                                                                           \
    static inline MT_HD bool mt_logical_xor_##S(Z x, Z y)                                       \
    {                                                                                           \
        return mt_logical_not_##S(x) != mt_logical_not_##S(y);                                  \
    }                                                                                           \
    static inline MT_HD bool mt_eq_##S(Z x, Z y) { return x.re == y.re && x.im == y.im; }       \
    static inline MT_HD bool mt_ne_##S(Z x, Z y) { return !(x.re == y.re && x.im == y.im); }    \
    static inline MT_HD bool mt_isnan_##S(Z x) { return isnan(x.re) || isnan(x.im); }           \
    static inline MT_HD bool mt_isinf_##S(Z x) { return isinf(x.re) || isinf(x.im); }           \
    static inline MT_HD bool mt_isfinite_##S(Z x) { return isfinite(x.re) && isfinite(x.im); }

/* The CUDA loops' functions, mt_<row>_S: the helpers, exp, log, sqrt and x ** y on real functions
 * (libm's or CUDA's), the formulas above over them, then the trigonometric and hyperbolic
 * functions and their inverses (textbook identities; Kahan's tanh, asinh and atanh through log1p,
 * so that small arguments keep their digits), where and masked_fill. */
#define MT_DEFINE_Z(Z, R, S, F)                                                                 \
    MT_DEFINE_Z_BASE(Z, R, S, F)                                                                \
    /* e^a (cos b, sin b); a real x stays real (exp(inf + 0i) is inf, not inf + NaN i) */       \
    static inline MT_HD Z mt_exp_##S(Z x)                                                       \
    {                                                                                           \
        if (x.im == 0) {                                                                        \
            return mt_z_##S(exp##F(x.re), x.im);                                                \
        }                                                                                       \
        const R e = exp##F(x.re);                                                               \
        return mt_z_##S(e * cos##F(x.im), e * sin##F(x.im));                                    \
    }                                                                                           \
    static inline MT_HD Z mt_log_##S(Z x)                                                       \
    {                                                                                           \
        return mt_z_##S(log##F(hypot##F(x.re, x.im)), atan2##F(x.im, x.re));                    \
    }                                                                                           \
    /* the principal root: t = sqrt((|a| + |x|) / 2) on the side of a, b / 2t on the other */   \
    static inline MT_HD Z mt_sqrt_##S(Z x)                                                      \
    {                                                                                           \
        if (x.re == 0 && x.im == 0) {                                                           \
            return mt_z_##S(0, x.im);                                                           \
        }                                                                                       \
        const R t = sqrt##F((fabs##F(x.re) + hypot##F(x.re, x.im)) / 2);                        \
        if (x.re >= 0) {                                                                        \
            return mt_z_##S(t, x.im / (2 * t));                                                 \
        }                                                                                       \
        return mt_z_##S(fabs##F(x.im) / (2 * t), copysign##F(t, x.im));                         \
    }                                                                                           \
    /* x ** y = exp(y log x) */                                                                 \
    static inline MT_HD Z mt_zpow_##S(Z x, Z y)                                                 \
    {                                                                                           \
        return mt_exp_##S(mt_zmul_##S(y, mt_log_##S(x)));                                       \
    }                                                                                           \
    MT_DEFINE_Z_FORMULAS(Z, R, S, S, F, mt_exp_##S, mt_log_##S, mt_sqrt_##S, mt_zpow_##S)       \
    static inline MT_HD Z mt_sin_##S(Z x)                                                       \
    {                                                                                           \
        return mt_z_##S(sin##F(x.re) * cosh##F(x.im), cos##F(x.re) * sinh##F(x.im));            \
    }                                                                                           \
    static inline MT_HD Z mt_cos_##S(Z x)                                                       \
    {                                                                                           \
        return mt_z_##S(cos##F(x.re) * cosh##F(x.im), -sin##F(x.re) * sinh##F(x.im));           \
    }                                                                                           \
    static inline MT_HD Z mt_sinh_##S(Z x)                                                      \
    {                                                                                           \
        return mt_z_##S(sinh##F(x.re) * cos##F(x.im), cosh##F(x.re) * sin##F(x.im));            \
    }                                                                                           \
    static inline MT_HD Z mt_cosh_##S(Z x)                                                      \
    {                                                                                           \
        return mt_z_##S(cosh##F(x.re) * cos##F(x.im), sinh##F(x.re) * sin##F(x.im));            \
    }                                                                                           \
    /* Kahan's: with t = tan b, s = sinh a, beta = 1 + t^2, rho = sqrt(1 + s^2),                \
     * tanh x = (beta rho s + i t) / (1 + beta s^2); beyond MT_TANH_BIG the real part is +-1 */ \
    static inline MT_HD Z mt_tanh_##S(Z x)                                                      \
    {                                                                                           \
        const R a = x.re, b = x.im;                                                             \
        if (fabs##F(a) >= (R)MT_TANH_BIG) {                                                     \
            const R e = exp##F(-2 * fabs##F(a));                                                \
            return mt_z_##S(copysign##F((R)1, a), 4 * sin##F(b) * cos##F(b) * e);               \
        }                                                                                       \
        const R t = tan##F(b), s = sinh##F(a), beta = 1 + t * t, rho = sqrt##F(1 + s * s);      \
        const R den = 1 + beta * s * s;                                                         \
        return mt_z_##S(beta * rho * s / den, t / den);                                         \
    }                                                                                           \
    static inline MT_HD Z mt_tan_##S(Z x)                                                       \
    {                                                                                           \
        return mt_zover_i_##S(mt_tanh_##S(mt_ztimes_i_##S(x)));                                 \
    }                                                                                           \
    /* asinh x = log1p(x + x^2 / (1 + sqrt(x^2 + 1))) for Re x >= 0 (no cancellation there),    \
     * odd: -asinh(-x) for the other half */                                                    \
    static inline MT_HD Z mt_asinh_##S(Z x)                                                     \
    {                                                                                           \
        const bool flip = x.re < 0;                                                             \
        const Z y = flip ? mt_neg_##S(x) : x, y2 = mt_zmul_##S(y, y);                           \
        const Z s = mt_sqrt_##S(mt_z_##S(y2.re + 1, y2.im));                                    \
        const Z q = mt_zdiv_##S(y2, mt_z_##S(1 + s.re, s.im));                                  \
        const Z r = mt_log1p_##S(mt_z_##S(y.re + q.re, y.im + q.im));                           \
        return flip ? mt_neg_##S(r) : r;                                                        \
    }                                                                                           \
    static inline MT_HD Z mt_asin_##S(Z x)                                                      \
    {                                                                                           \
        return mt_zover_i_##S(mt_asinh_##S(mt_ztimes_i_##S(x)));                                \
    }                                                                                           \
    static inline MT_HD Z mt_acos_##S(Z x)                                                      \
    {                                                                                           \
        const Z s = mt_asin_##S(x);                                                             \
        return mt_z_##S((R)(MT_PI / 2) - s.re, -s.im);                                          \
    }                                                                                           \
    /* acosh x = log(x + sqrt(x + 1) sqrt(x - 1)), Kahan's branch-correct form */               \
    static inline MT_HD Z mt_acosh_##S(Z x)                                                     \
    {                                                                                           \
        const Z p = mt_zmul_##S(mt_sqrt_##S(mt_z_##S(x.re + 1, x.im)),                          \
                                mt_sqrt_##S(mt_z_##S(x.re - 1, x.im)));                         \
        return mt_log_##S(mt_z_##S(x.re + p.re, x.im + p.im));                                  \
    }                                                                                           \
    /* atanh x = (log1p(x) - log1p(-x)) / 2 */                                                  \
    static inline MT_HD Z mt_atanh_##S(Z x)                                                     \
    {                                                                                           \
        const Z p = mt_log1p_##S(x), m = mt_log1p_##S(mt_neg_##S(x));                           \
        return mt_z_##S((p.re - m.re) / 2, (p.im - m.im) / 2);                                  \
    }                                                                                           \
    static inline MT_HD Z mt_atan_##S(Z x)                                                      \
    {                                                                                           \
        return mt_zover_i_##S(mt_atanh_##S(mt_ztimes_i_##S(x)));                                \
    }                                                                                           \
    static inline MT_HD Z mt_where_##S(bool c, Z x, Z y) { return c ? x : y; }                  \
    static inline MT_HD Z mt_masked_fill_##S(Z x, bool c, Z v) { return c ? v : x; }
MT_DEFINE_Z(mt_z64, float, z64, f)
MT_DEFINE_Z(mt_z128, double, z128, )
#undef MT_DEFINE_Z
/* clang-format on */

#endif
