/* Scalar math of complex64 and complex128 (suffixes c64, c128), for the CPU's complex loops.
 * Part of core/math.h (include that). */
#ifndef MT_MATH_COMPLEX_H
#define MT_MATH_COMPLEX_H

#ifndef MT_MATH_H
#error "include core/math.h, which defines MT_HD and includes this file in order"
#endif

/* clang-format off */

/* Complex math of the elementwise rows that have complex loops (ops/elementwise.def's
 * MT_EW_COMPLEX), for complex64 (c64: float parts) and complex128 (c128: double parts): C's
 * _Complex types, so the CPU loops read them as any other T. The products and quotients are
 * written out, not C's operators: C's * and / follow Annex G (a library call per element, and
 * other values than PyTorch's at infinities); these are PyTorch's (x*y as (ac - bd) + (ad + bc)i,
 * x/y by Smith's scaling, so |y| near the range's ends does not overflow). The CUDA kernels
 * have no complex loops (the dispatcher refuses complex tensors there), so nvcc never sees these. */
#ifndef __cplusplus
#include <complex.h>
#define MT_LN2 0.69314718055994530942  /* log2(x) = log(x) / ln 2 */
#define MT_LN10 2.30258509299404568402 /* log10(x) = log(x) / ln 10 */
#define MT_DEFINE_COMPLEX(C, R, suffix, F, MAKE)                                             \
    static inline C mt_cmul_##suffix(C x, C y)                                               \
    {                                                                                        \
        const R a = creal##F(x), b = cimag##F(x), c = creal##F(y), d = cimag##F(y);          \
        return MAKE(a * c - b * d, a * d + b * c);                                           \
    }                                                                                        \
    static inline C mt_cdiv_##suffix(C x, C y)                                               \
    {                                                                                        \
        const R a = creal##F(x), b = cimag##F(x), c = creal##F(y), d = cimag##F(y);          \
        const R ac = fabs##F(c), ad = fabs##F(d);                                            \
        if (ac == 0 && ad == 0) { /* x / 0: each part over a zero, inf or NaN as the reals */ \
            return MAKE(a / ac, b / ad);                                                     \
        }                                                                                    \
        if (ac >= ad) {                                                                      \
            const R r = d / c, s = (R)1 / (c + d * r);                                       \
            return MAKE((a + b * r) * s, (b - a * r) * s);                                   \
        }                                                                                    \
        const R r = c / d, s = (R)1 / (d + c * r);                                           \
        return MAKE((a * r + b) * s, (b * r - a) * s);                                       \
    }                                                                                        \
    static inline C mt_add_##suffix(C x, C y, C k) { return x + mt_cmul_##suffix(k, y); }   \
    static inline C mt_sub_##suffix(C x, C y, C k) { return x - mt_cmul_##suffix(k, y); }   \
    static inline C mt_mul_##suffix(C x, C y) { return mt_cmul_##suffix(x, y); }             \
    static inline C mt_div_##suffix(C x, C y) { return mt_cdiv_##suffix(x, y); }             \
    static inline C mt_neg_##suffix(C x) { return MAKE(-creal##F(x), -cimag##F(x)); }        \
    static inline C mt_reciprocal_##suffix(C x) { return mt_cdiv_##suffix(MAKE(1, 0), x); }  \
    static inline C mt_exp_##suffix(C x) { return cexp##F(x); }                              \
    static inline C mt_log_##suffix(C x) { return clog##F(x); }                              \
    static inline C mt_sqrt_##suffix(C x) { return csqrt##F(x); }                            \
    static inline C mt_rsqrt_##suffix(C x) { return mt_cdiv_##suffix(MAKE(1, 0), csqrt##F(x)); } \
    static inline C mt_log2_##suffix(C x)                                                    \
    {                                                                                        \
        const C l = clog##F(x);                                                              \
        return MAKE(creal##F(l) / (R)MT_LN2, cimag##F(l) / (R)MT_LN2);                         \
    }                                                                                        \
    static inline C mt_log10_##suffix(C x)                                                   \
    {                                                                                        \
        const C l = clog##F(x);                                                              \
        return MAKE(creal##F(l) / (R)MT_LN10, cimag##F(l) / (R)MT_LN10);                       \
    }                                                                                        \
    /* log(1 + x) without 1 + x's rounding near 0: |1 + x|^2 = 1 + (2a + a^2 + b^2) */       \
    static inline C mt_log1p_##suffix(C x)                                                   \
    {                                                                                        \
        const R a = creal##F(x), b = cimag##F(x);                                            \
        if (!isfinite(a) || !isfinite(b) || fabs##F(a) + fabs##F(b) > (R)0.5) {              \
            return clog##F(MAKE(1 + a, b));                                                  \
        }                                                                                    \
        return MAKE(log1p##F(2 * a + a * a + b * b) / 2, atan2##F(b, 1 + a));                \
    }                                                                                        \
    /* exp(x) - 1 without the cancellation near 0: Re = expm1(a) cos b - 2 sin^2(b / 2) */  \
    static inline C mt_expm1_##suffix(C x)                                                   \
    {                                                                                        \
        const R a = creal##F(x), b = cimag##F(x), h = sin##F(b / 2);                         \
        if (b == 0) {                                                                        \
            return MAKE(expm1##F(a), b);                                                     \
        }                                                                                    \
        return MAKE(expm1##F(a) * cos##F(b) - 2 * h * h, exp##F(a) * sin##F(b));             \
    }                                                                                        \
    static inline C mt_sin_##suffix(C x) { return csin##F(x); }                              \
    static inline C mt_cos_##suffix(C x) { return ccos##F(x); }                              \
    static inline C mt_tan_##suffix(C x) { return ctan##F(x); }                              \
    static inline C mt_sinh_##suffix(C x) { return csinh##F(x); }                            \
    static inline C mt_cosh_##suffix(C x) { return ccosh##F(x); }                            \
    static inline C mt_tanh_##suffix(C x) { return ctanh##F(x); }                            \
    static inline C mt_asin_##suffix(C x) { return casin##F(x); }                            \
    static inline C mt_acos_##suffix(C x) { return cacos##F(x); }                            \
    static inline C mt_atan_##suffix(C x) { return catan##F(x); }                            \
    static inline C mt_asinh_##suffix(C x) { return casinh##F(x); }                          \
    static inline C mt_acosh_##suffix(C x) { return cacosh##F(x); }                          \
    static inline C mt_atanh_##suffix(C x) { return catanh##F(x); }                          \
    static inline C mt_sigmoid_##suffix(C x)                                                 \
    {                                                                                        \
        const C e = cexp##F(MAKE(-creal##F(x), -cimag##F(x)));                               \
        return mt_cdiv_##suffix(MAKE(1, 0), MAKE(1 + creal##F(e), cimag##F(e)));             \
    }                                                                                        \
    /* g conj((1 - y) y): the derivative conjugated, as PyTorch's */                         \
    static inline C mt_sigmoid_backward_##suffix(C g, C y)                                   \
    {                                                                                        \
        return g * conj##F((1 - y) * y);                                                     \
    }                                                                                        \
    static inline C mt_pow_##suffix(C x, C y)                                                \
    {                                                                                        \
        /* x ** 0 is 1 and 0 ** y (Re y > 0) is 0, as PyTorch's; cpow gives NaN parts there */ \
        if (creal##F(y) == 0 && cimag##F(y) == 0) {                                          \
            return MAKE(1, 0);                                                               \
        }                                                                                    \
        if (creal##F(x) == 0 && cimag##F(x) == 0 && creal##F(y) > 0) {                       \
            return MAKE(0, 0);                                                               \
        }                                                                                    \
        return cpow##F(x, y);                                                                \
    }                                                                                        \
    static inline bool mt_eq_##suffix(C x, C y) { return x == y; }                           \
    static inline bool mt_ne_##suffix(C x, C y) { return x != y; }                           \
    static inline bool mt_isnan_##suffix(C x) { return isnan(creal##F(x)) || isnan(cimag##F(x)); } \
    static inline bool mt_isinf_##suffix(C x) { return isinf(creal##F(x)) || isinf(cimag##F(x)); } \
    static inline bool mt_isfinite_##suffix(C x)                                             \
    {                                                                                        \
        return isfinite(creal##F(x)) && isfinite(cimag##F(x));                               \
    }                                                                                        \
    static inline C mt_where_##suffix(bool c, C x, C y) { return c ? x : y; }                \
    static inline C mt_masked_fill_##suffix(C x, bool c, C v) { return c ? v : x; }
MT_DEFINE_COMPLEX(float _Complex, float, c64, f, CMPLXF)
MT_DEFINE_COMPLEX(double _Complex, double, c128, , CMPLX)
#undef MT_DEFINE_COMPLEX
#endif

/* clang-format on */

#endif
