/* float16 and bfloat16 as bits, and their conversions to and from float, as c10::Half and
 * c10::BFloat16 do them: round to nearest even, NaN kept NaN, overflow to infinity. Shared by the
 * CPU casts and the CUDA ones (MT_HD); no arithmetic on these types: kernels load to float32,
 * compute and store once. */
#ifndef MT_HALF_H
#define MT_HALF_H

#include <stdint.h>
#include <string.h>

#include "core/math.h"

/* Distinct struct types, so that C never converts one silently as an integer. */
typedef struct mt_half {
    uint16_t x;
} mt_half;
typedef struct mt_bf16 {
    uint16_t x;
} mt_bf16;

static inline MT_HD uint32_t
mt_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static inline MT_HD float
mt_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static inline MT_HD float
mt_half_to_float(mt_half h)
{
    uint32_t sign = (uint32_t)(h.x & 0x8000u) << 16;
    uint32_t exp = (h.x >> 10) & 0x1fu, man = h.x & 0x3ffu;
    if (exp == 0x1f) { /* inf or NaN */
        return mt_bits_f32(sign | 0x7f800000u | (man << 13));
    }
    if (exp == 0) { /* zero or subnormal: man * 2^-24, exact in float */
        float v = (float)man * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return mt_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

static inline MT_HD mt_half
mt_float_to_half(float f)
{
    uint32_t u = mt_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    mt_half h;
    if (a > 0x7f800000u) { /* NaN: c10's quiet NaN, with the sign */
        h.x = (uint16_t)(sign | 0x7e00u);
        return h;
    }
    if (a >= 0x477ff000u) { /* rounds to 65536 or more: infinity */
        h.x = (uint16_t)(sign | 0x7c00u);
        return h;
    }
    if (a < 0x38800000u) { /* below 2^-14: subnormal or zero; a 2^-24 unit, ties to even */
        float v = mt_bits_f32(a) * 16777216.0f; /* exact: scaling by a power of two */
        uint32_t m = (uint32_t)v;               /* truncated */
        float rest = v - (float)m;
        if (rest > 0.5f || (rest == 0.5f && (m & 1u))) {
            m++;
        }
        h.x = (uint16_t)(sign | m);
        return h;
    }
    /* normal: rebias the exponent, round the 13 dropped bits to nearest even */
    uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
    h.x = (uint16_t)(sign | ((r - 0x38000000u) >> 13));
    return h;
}

static inline MT_HD float
mt_bf16_to_float(mt_bf16 b)
{
    return mt_bits_f32((uint32_t)b.x << 16);
}

static inline MT_HD mt_bf16
mt_float_to_bf16(float f)
{
    uint32_t u = mt_f32_bits(f);
    mt_bf16 b;
    if ((u & 0x7fffffffu) > 0x7f800000u) { /* NaN: c10's quiet NaN */
        b.x = 0x7fc0u;
        return b;
    }
    b.x = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    return b;
}

#endif
