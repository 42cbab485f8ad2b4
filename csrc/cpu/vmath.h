/* Vectorisable float math for the CPU's hot loops.
 *
 * libm's expf is a call per element, which no loop around it can turn into SIMD code; this exp
 * is straight-line arithmetic that the compiler inlines and vectorises. It is the CPU's fast
 * path only: core/math.h keeps the reference formula of every op (and CUDA has __expf). */
#ifndef MT_CPU_VMATH_H
#define MT_CPU_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp(x) for float, within 2 ulp of expf: exp(x) = 2^n * exp(r) with n = round(x / ln 2) and
 * |r| <= ln2 / 2, exp(r) by Cephes' degree-6 polynomial. Below the smallest normal result it
 * gives 0 (expf would give a subnormal), above the largest float inf; NaN stays NaN. */
static inline float
mt_vexp_f32(float x)
{
    const float max_x = 88.7228391f, min_x = -87.3365448f; /* ln(FLT_MAX), ln(FLT_MIN) */
    /* Selects, not branches, so that a loop around this vectorises: a NaN is reduced as 0
     * and put back at the end. */
    float xc = x > max_x ? max_x : x;
    xc = xc < min_x ? min_x : xc;
    xc = x != x ? 0.0f : xc;
    /* Adding and subtracting 1.5 * 2^23 rounds to the nearest integer in float arithmetic. */
    const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f; /* ln 2 in two parts: n * ln2_hi is exact */
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    /* n reaches 128 just below ln(FLT_MAX), one past the largest exponent: take a 2 out. */
    const int32_t big = n > 127.0f;
    p = p * (float)(1 + big);
    const uint32_t bits = (uint32_t)((int32_t)n - big + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof(scale));
    float e = p * scale;
    e = x > max_x ? INFINITY : e;
    e = x < min_x ? 0.0f : e;
    return x != x ? x : e;
}

#endif
