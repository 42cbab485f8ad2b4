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
 * _Complex types, so the CPU loops read them as any other T. Where a row has a formula (the
 * products and quotients, which are not C's operators: those follow Annex G, a library call per
 * element and other values than PyTorch's at infinities; log1p, expm1, sigmoid and its
 * backward, pow's special cases, the tests, exp2, logaddexp, lerp, addcmul, addcdiv,
 * nan_to_num, the logical ops), it is core/math_complex_parts.h's, which the CUDA
 * loops compute too, called on the parts of x (and y) and made on libm's cexp, clog, csqrt and
 * cpow; the other rows are libm's (cexp, clog, csin, ...). */
#ifndef __cplusplus
#include <complex.h>

#include "core/math_complex_parts.h"

/* mt_<row>_<suffix> of C's complex values (C, the suffix c64 or c128): the formula on their parts,
 * core/math_complex_parts.h's mt_<row>_z<suffix>, made on libm's functions below */
#define MT_C_OF_Z1(C, suffix, row)                                                              \
    static inline C mt_##row##_##suffix(C x)                                                    \
    {                                                                                           \
        return mt_cof_##suffix(mt_##row##_z##suffix(mt_zof_##suffix(x)));                       \
    }
#define MT_C_OF_Z2(C, suffix, row)                                                              \
    static inline C mt_##row##_##suffix(C x, C y)                                               \
    {                                                                                           \
        return mt_cof_##suffix(mt_##row##_z##suffix(mt_zof_##suffix(x), mt_zof_##suffix(y)));   \
    }
#define MT_C_OF_Z3(C, suffix, row)                                                              \
    static inline C mt_##row##_##suffix(C x, C y, C k)                                          \
    {                                                                                           \
        return mt_cof_##suffix(                                                                 \
            mt_##row##_z##suffix(mt_zof_##suffix(x), mt_zof_##suffix(y), mt_zof_##suffix(k)));  \
    }
#define MT_C_OF_Z4(C, suffix, row)                                                              \
    static inline C mt_##row##_##suffix(C x, C y, C z, C k)                                     \
    {                                                                                           \
        return mt_cof_##suffix(mt_##row##_z##suffix(mt_zof_##suffix(x), mt_zof_##suffix(y),     \
                                                    mt_zof_##suffix(z), mt_zof_##suffix(k)));   \
    }
#define MT_B_OF_Z1(C, suffix, row)                                                              \
    static inline bool mt_##row##_##suffix(C x) { return mt_##row##_z##suffix(mt_zof_##suffix(x)); }
#define MT_B_OF_Z2(C, suffix, row)                                                              \
    static inline bool mt_##row##_##suffix(C x, C y)                                            \
    {                                                                                           \
        return mt_##row##_z##suffix(mt_zof_##suffix(x), mt_zof_##suffix(y));                    \
    }
/* C the _Complex type, R its parts', F libm's suffix, MAKE its constructor, Z and ZS the
 * two-part struct and its suffix (core/math_complex_parts.h) */
#define MT_DEFINE_COMPLEX(C, R, suffix, F, MAKE, Z, ZS)                                         \
    static inline Z mt_zof_##suffix(C x) { return mt_z_##ZS(creal##F(x), cimag##F(x)); }        \
    static inline C mt_cof_##suffix(Z z) { return MAKE(z.re, z.im); }                           \
    /* libm's exp, log, sqrt and power on the parts, which the formulas are written on */       \
    static inline Z mt_zcexp_##suffix(Z x) { return mt_zof_##suffix(cexp##F(mt_cof_##suffix(x))); } \
    static inline Z mt_zclog_##suffix(Z x) { return mt_zof_##suffix(clog##F(mt_cof_##suffix(x))); } \
    static inline Z mt_zcsqrt_##suffix(Z x) { return mt_zof_##suffix(csqrt##F(mt_cof_##suffix(x))); } \
    static inline Z mt_zcpow_##suffix(Z x, Z y)                                                 \
    {                                                                                           \
        return mt_zof_##suffix(cpow##F(mt_cof_##suffix(x), mt_cof_##suffix(y)));                \
    }                                                                                           \
    MT_DEFINE_Z_FORMULAS(Z, R, ZS, z##suffix, F, mt_zcexp_##suffix, mt_zclog_##suffix,          \
                         mt_zcsqrt_##suffix, mt_zcpow_##suffix)                                 \
    MT_C_OF_Z3(C, suffix, add) MT_C_OF_Z3(C, suffix, sub)                                       \
    MT_C_OF_Z2(C, suffix, mul) MT_C_OF_Z2(C, suffix, div) MT_C_OF_Z2(C, suffix, pow)            \
    MT_C_OF_Z1(C, suffix, neg) MT_C_OF_Z1(C, suffix, reciprocal) MT_C_OF_Z1(C, suffix, rsqrt)   \
    MT_C_OF_Z1(C, suffix, log2) MT_C_OF_Z1(C, suffix, log10) MT_C_OF_Z1(C, suffix, log1p)       \
    MT_C_OF_Z1(C, suffix, expm1) MT_C_OF_Z1(C, suffix, sigmoid)                                 \
    MT_C_OF_Z2(C, suffix, sigmoid_backward)                                                     \
    MT_C_OF_Z1(C, suffix, exp2) MT_C_OF_Z2(C, suffix, logaddexp) MT_C_OF_Z3(C, suffix, lerp)    \
    MT_C_OF_Z4(C, suffix, addcmul) MT_C_OF_Z4(C, suffix, addcdiv)                               \
    MT_C_OF_Z4(C, suffix, nan_to_num)                                                           \
    MT_B_OF_Z1(C, suffix, logical_not) MT_B_OF_Z2(C, suffix, logical_and)                       \
    MT_B_OF_Z2(C, suffix, logical_or) MT_B_OF_Z2(C, suffix, logical_xor)                        \
    /* the product for the reductions and index_put's loops (cpu/reduce.c, index.c) */          \
    static inline C mt_cmul_##suffix(C x, C y) { return mt_mul_##suffix(x, y); }                \
    MT_B_OF_Z2(C, suffix, eq) MT_B_OF_Z2(C, suffix, ne)                                         \
    MT_B_OF_Z1(C, suffix, isnan) MT_B_OF_Z1(C, suffix, isinf) MT_B_OF_Z1(C, suffix, isfinite)   \
    /* libm's own */                                                                            \
    static inline C mt_exp_##suffix(C x) { return cexp##F(x); }                                 \
    static inline C mt_log_##suffix(C x) { return clog##F(x); }                                 \
    static inline C mt_sqrt_##suffix(C x) { return csqrt##F(x); }                               \
    static inline C mt_sin_##suffix(C x) { return csin##F(x); }                                 \
    static inline C mt_cos_##suffix(C x) { return ccos##F(x); }                                 \
    static inline C mt_tan_##suffix(C x) { return ctan##F(x); }                                 \
    static inline C mt_sinh_##suffix(C x) { return csinh##F(x); }                               \
    static inline C mt_cosh_##suffix(C x) { return ccosh##F(x); }                               \
    static inline C mt_tanh_##suffix(C x) { return ctanh##F(x); }                               \
    static inline C mt_asin_##suffix(C x) { return casin##F(x); }                               \
    static inline C mt_acos_##suffix(C x) { return cacos##F(x); }                               \
    static inline C mt_atan_##suffix(C x) { return catan##F(x); }                               \
    static inline C mt_asinh_##suffix(C x) { return casinh##F(x); }                             \
    static inline C mt_acosh_##suffix(C x) { return cacosh##F(x); }                             \
    static inline C mt_atanh_##suffix(C x) { return catanh##F(x); }                             \
    static inline C mt_where_##suffix(bool c, C x, C y) { return c ? x : y; }                   \
    static inline C mt_masked_fill_##suffix(C x, bool c, C v) { return c ? v : x; }
MT_DEFINE_COMPLEX(float _Complex, float, c64, f, CMPLXF, mt_z64, z64)
MT_DEFINE_COMPLEX(double _Complex, double, c128, , CMPLX, mt_z128, z128)
#undef MT_DEFINE_COMPLEX
#undef MT_C_OF_Z1
#undef MT_C_OF_Z2
#undef MT_C_OF_Z3
#undef MT_C_OF_Z4
#undef MT_B_OF_Z1
#undef MT_B_OF_Z2
#endif

/* clang-format on */

#endif
