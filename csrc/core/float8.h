/* The four float8 formats as bits, and their conversions to and from float, as PyTorch's CPU
 * casts give them (checked bit for bit against PyTorch over every code and over float32 edge and
 * random values, tests/core/test_dtype_float8.py). One function per direction serves all four,
 * led by the format's row below; no arithmetic on these types: kernels load to float32, compute
 * and store once (as float16's, core/half.h).
 *
 *   format      exp man bias  infinity  NaN codes            a value above the largest finite
 *   e4m3fn       4   3    7   none      S.1111.111           saturates to +-448
 *   e5m2         5   2   15   S.11111.00 S.11111.{01,10,11}  rounds (to nearest even) to +-inf
 *   e4m3fnuz     4   3    8   none      0x80 (no -0)         NaN
 *   e5m2fnuz     5   2   16   none      0x80 (no -0)         NaN
 */
#ifndef MT_FLOAT8_H
#define MT_FLOAT8_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/math.h"

typedef struct mt_f8 {
    uint8_t x;
} mt_f8;
/* One C type per format, as element types of the kernels' dtype lists (a loop from one to
 * another must convert, not copy bytes); each is one byte, read as an mt_f8. */
typedef struct mt_f8e4m3fn {
    uint8_t x;
} mt_f8e4m3fn;
typedef struct mt_f8e5m2 {
    uint8_t x;
} mt_f8e5m2;
typedef struct mt_f8e4m3fnuz {
    uint8_t x;
} mt_f8e4m3fnuz;
typedef struct mt_f8e5m2fnuz {
    uint8_t x;
} mt_f8e5m2fnuz;

typedef enum mt_f8_kind {
    MT_F8_E4M3FN,
    MT_F8_E5M2,
    MT_F8_E4M3FNUZ,
    MT_F8_E5M2FNUZ,
} mt_f8_kind;

/* The mantissa bits and exponent bias of a format. */
static inline MT_HD int
mt_f8_man_bits(mt_f8_kind k)
{
    return k == MT_F8_E4M3FN || k == MT_F8_E4M3FNUZ ? 3 : 2;
}

static inline MT_HD int
mt_f8_bias(mt_f8_kind k)
{
    return k == MT_F8_E4M3FN ? 7 : k == MT_F8_E5M2 ? 15 : k == MT_F8_E4M3FNUZ ? 8 : 16;
}

/* The largest finite magnitude's code (sign clear). */
static inline MT_HD uint8_t
mt_f8_max_code(mt_f8_kind k)
{
    return k == MT_F8_E4M3FN ? 0x7e : k == MT_F8_E5M2 ? 0x7b : 0x7f;
}

static inline MT_HD float
mt_f8_to_float(mt_f8 v, mt_f8_kind k)
{
    const int man = mt_f8_man_bits(k), bias = mt_f8_bias(k);
    const bool fnuz = k == MT_F8_E4M3FNUZ || k == MT_F8_E5M2FNUZ;
    const uint32_t e = (uint32_t)(v.x & 0x7f) >> man, m = v.x & ((1u << man) - 1u);
    float r;
    if (fnuz && v.x == 0x80) {
        return NAN;
    }
    if ((k == MT_F8_E4M3FN && (v.x & 0x7f) == 0x7f) || (k == MT_F8_E5M2 && e == 0x1f)) {
        r = k == MT_F8_E5M2 && m == 0 ? INFINITY : NAN;
    } else {
        /* a subnormal is m units of 2^(1 - bias - man); a normal (1 + m / 2^man) * 2^(e - bias) */
        r = e == 0 ? ldexpf((float)m, 1 - bias - man)
                   : ldexpf((float)((1u << man) | m), (int)e - bias - man);
    }
    return v.x & 0x80 ? copysignf(r, -1.0f) : r; /* the sign bit kept, a NaN's too */
}

static inline MT_HD mt_f8
mt_float_to_f8(float f, mt_f8_kind k)
{
    const int man = mt_f8_man_bits(k), bias = mt_f8_bias(k);
    const bool fnuz = k == MT_F8_E4M3FNUZ || k == MT_F8_E5M2FNUZ;
    const uint8_t sign = signbit(f) ? 0x80 : 0x00;
    mt_f8 r;
    if (isnan(f)) {
        r.x = fnuz ? 0x80 : (uint8_t)(sign | 0x7f);
        return r;
    }
    /* a, rounded to the format's spacing at its size (the subnormals' below the smallest
     * normal), ties to even: rint in the default rounding mode; exact, as a / q is a power of
     * two scaling of a float */
    const float a = fabsf(f);
    const int min_exp = 1 - bias; /* the smallest normal is 2^min_exp */
    int e = 0;
    (void)frexpf(a, &e); /* a = x * 2^e, x in [0.5, 1): a's exponent is e - 1 */
    const int q = (isinf(a) || e - 1 < min_exp ? min_exp : e - 1) - man;
    const float n = isinf(a) ? a : rintf(ldexpf(a, -q)); /* a in units of 2^q */
    mt_f8 top;
    top.x = mt_f8_max_code(k);
    const float max = mt_f8_to_float(top, k);
    if (ldexpf(n, q) > max) {
        /* above the largest finite value: e4m3fn saturates, e5m2 gives infinity, fnuz NaN */
        r.x = k == MT_F8_E4M3FN ? (uint8_t)(sign | 0x7e)
              : k == MT_F8_E5M2 ? (uint8_t)(sign | 0x7c)
                                : 0x80;
        return r;
    }
    if (n == 0.0f) {
        r.x = fnuz ? 0x00 : sign; /* the fnuz formats have no -0 */
        return r;
    }
    /* n units of 2^q: below the smallest normal, n < 2^man is the code itself (exponent field
     * 0); else n in [2^man, 2^(man+1)] carries its leading bit into the exponent field, which
     * holds one less than the biased exponent (n = 2^(man+1), the next binade's first value,
     * carries one further) */
    const uint32_t field = (uint32_t)(q + man + bias - 1);
    r.x = (uint8_t)(sign | ((field << man) + (uint32_t)n));
    return r;
}

#endif
