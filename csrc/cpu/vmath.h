/* Vectorisable float math for the CPU's hot loops.
 *
 * libm's expf is a call per element, which no loop around it can turn into SIMD code; this exp
 * is straight-line arithmetic that the compiler inlines and vectorises (selects, not branches;
 * the build's -fno-trapping-math lets them if-convert). It is the CPU's fast path only:
 * core/math.h keeps the reference formula of every op (and CUDA has __expf). */
#ifndef MT_CPU_VMATH_H
#define MT_CPU_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define MT_VEXP_MIN_X -87.3365448f /* ln(FLT_MIN): below it the result is subnormal */
#define MT_VEXP_MAX_X 88.7228391f  /* ln(FLT_MAX): above it, inf */
#define MT_VEXP_TINY_X -104.0f     /* below ln(2^-150) = -103.97: exp rounds to 0 */

/* exp(x) = 2^n * exp(r), n = round(x / ln 2), |r| <= ln2 / 2, for x in [TINY_X, MAX_X] (or
 * NaN, which comes out NaN): Cephes' degree-6 polynomial, within 2 ulp of expf. 2^n is built
 * from its bits, so n - shift must be a normal exponent: shift 1 takes a 2 out of n = 128 (just
 * below MAX_X), shift -64 puts 64 into n < -126 (a subnormal result), and the product with
 * 2^shift is then the one rounding. */
static inline float
vexp_core(float x, int shift)
{
    /* x / ln 2 + 1.5 * 2^23 rounds to an integer in float arithmetic, which then sits in the
     * low mantissa bits: n and its bits without a float-to-int conversion. */
    const float t = x * 1.44269504088896341f + 12582912.0f;
    const float n = t - 12582912.0f;
    uint32_t tbits;
    memcpy(&tbits, &t, sizeof(tbits));
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f; /* ln 2 in two parts: n * ln2_hi is exact */
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const uint32_t bits = (tbits - 0x4B400000u + (uint32_t)(127 - shift)) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof(scale));
    const float post = shift > 0 ? 2.0f : shift < 0 ? 0x1p-64f : 1.0f;
    return p * scale * post;
}

/* exp(x) for float as expf: subnormal results below MIN_X, 0 below TINY_X, inf above MAX_X,
 * NaN stays. */
static inline float
mt_vexp_f32(float x)
{
    float xc = x > MT_VEXP_MAX_X ? MT_VEXP_MAX_X : x;
    xc = xc < MT_VEXP_TINY_X ? MT_VEXP_TINY_X : xc;
    const float n = xc * 1.44269504088896341f;
    const float e = vexp_core(xc, n > 127.5f ? 1 : n < -125.5f ? -64 : 0);
    return x > MT_VEXP_MAX_X ? INFINITY : e;
}

/* exp(x) for x <= 0 or NaN, as softmax's x - max is: mt_vexp_f32 without the overflow cases. */
static inline float
mt_vexp_nonpos_f32(float x)
{
    const float e = vexp_core(x < MT_VEXP_MIN_X ? MT_VEXP_MIN_X : x, 0);
    return x < MT_VEXP_MIN_X ? 0.0f : e;
}

/* sigmoid(x) for float with the exp above: exp of -|x| only (so never overflows), then
 * 1 / (1 + e) for x >= 0 and e / (1 + e) below, as core/math.h's formula; NaN stays NaN. */
static inline float
mt_vsigmoid_f32(float x)
{
    const float e = mt_vexp_nonpos_f32(-fabsf(x));
    const float r = 1.0f / (1.0f + e);
    return x >= 0.0f ? r : e * r;
}

/* tanh(x) for float, in double: with e = exp(2|x|) - 1, tanh|x| = e / (e + 2). exp(y), y in
 * [0, 20], is 2^n * exp(r), |r| <= ln2 / 2, with Taylor's degree-11 polynomial (error below
 * 7e-15); e's cancellation costs at most 1e-16 / (2|x|) relative, so the double result is within
 * about 1e-12 of tanh and rounds to float as libm's tanhf does but in rare midpoint cases (a
 * 2-ulp float formula had moved L-BFGS's float32 steps off PyTorch's). |x| < 2^-12 gives x
 * (tanh x = x - x^3/3 rounds to x; -0.0 stays); |x| > 10 gives +-1 (1 - tanh 10 = 4e-9 < half an
 * ulp of 1); NaN stays. */
static inline float
mt_vtanh_f32(float x)
{
    const double a = fabs((double)x);
    const double y = 2.0 * (a < 10.0 ? a : 10.0); /* a select: fmin's NaN rule stops SIMD */
    /* y / ln 2 + 1.5 * 2^52 rounds to the integer n, which sits in the low mantissa bits */
    const double t = y * 1.4426950408889634 + 6755399441055744.0;
    const double n = t - 6755399441055744.0;
    uint64_t tbits;
    memcpy(&tbits, &t, sizeof(tbits));
    const double r = (y - n * 0.6931471803691238) - n * 1.9082149292705877e-10; /* ln 2 hi, lo */
    double p = 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r * r + r + 1.0;
    const uint64_t bits = (tbits - 0x4338000000000000u + 1023u) << 52;
    double scale;
    memcpy(&scale, &bits, sizeof(scale));
    const double e = p * scale - 1.0;
    const float mag = fabsf(x) < 0x1p-12f ? fabsf(x) : (float)(e / (e + 2.0));
    return x != x ? x : copysignf(mag, x);
}

#endif
