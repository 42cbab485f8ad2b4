/* Vectorisable float math for the CPU's hot loops.
 *
 * libm's expf is a call per element, which no loop around it can turn into SIMD code; this exp
 * is straight-line arithmetic that the compiler inlines and vectorises (selects, not branches;
 * the build's -fno-trapping-math lets them if-convert). It is the CPU's fast path only:
 * core/math.h keeps the reference formula of every op (and CUDA has __expf). */
#ifndef MT_CPU_VMATH_H
#define MT_CPU_VMATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/math.h"

/* Every function here is forced inline: under a deep composition (mish is tanh(log1p(exp(x))))
 * GCC's inliner gave up on tanh and left a scalar call per element, and the loop around it ran
 * at libm's speed (mish 10x PyTorch's time). */
#define MT_VMATH static inline __attribute__((always_inline))

#define MT_VEXP_MIN_X -87.3365448f /* ln(FLT_MIN): below it the result is subnormal */
#define MT_VEXP_MAX_X 88.7228391f  /* ln(FLT_MAX): above it, inf */
#define MT_VEXP_TINY_X -104.0f     /* below ln(2^-150) = -103.97: exp rounds to 0 */

/* exp(x) = 2^n * exp(r), n = round(x / ln 2), |r| <= ln2 / 2, for x in [TINY_X, MAX_X] (or
 * NaN, which comes out NaN): Cephes' degree-6 polynomial, within 2 ulp of expf. Returns exp(r)
 * and n. */
MT_VMATH float
vexp_reduced(float x, int32_t *n_out)
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
    *n_out = (int32_t)(tbits - 0x4B400000u);
    return p * r * r + r + 1.0f;
}

/* 2^k for a normal exponent k (-126 <= k <= 127), from its bits. */
MT_VMATH float
vpow2i(int32_t k)
{
    const uint32_t bits = (uint32_t)(k + 127) << 23;
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
}

/* exp(x) for float as expf: subnormal results below MIN_X, 0 below TINY_X, inf above MAX_X,
 * NaN stays. n runs from -150 to 128 here, past the normal exponents, so 2^n is applied in two
 * halves h and n - h (both in [-75, 64]): exp(r) 2^h is exact and the second product is the one
 * rounding, also where the result is subnormal. */
MT_VMATH float
mt_vexp_f32(float x)
{
    float xc = x > MT_VEXP_MAX_X ? MT_VEXP_MAX_X : x;
    xc = xc < MT_VEXP_TINY_X ? MT_VEXP_TINY_X : xc;
    int32_t n;
    const float p = vexp_reduced(xc, &n);
    const int32_t h = n / 2;
    const float e = p * vpow2i(h) * vpow2i(n - h);
    return x > MT_VEXP_MAX_X ? INFINITY : e;
}

/* exp(x) for x <= 0 or NaN, as softmax's x - max is: mt_vexp_f32 without the overflow cases. */
MT_VMATH float
mt_vexp_nonpos_f32(float x)
{
    int32_t n; /* -126 .. 0: 2^n is normal */
    const float p = vexp_reduced(x < MT_VEXP_MIN_X ? MT_VEXP_MIN_X : x, &n);
    return x < MT_VEXP_MIN_X ? 0.0f : p * vpow2i(n);
}

/* sigmoid(x) for float with the exp above: exp of -|x| only (so never overflows), then
 * 1 / (1 + e) for x >= 0 and e / (1 + e) below, as core/math.h's formula; NaN stays NaN. */
MT_VMATH float
mt_vsigmoid_f32(float x)
{
    const float e = mt_vexp_nonpos_f32(-fabsf(x)); /* 0 below x = -87.3, where e is subnormal */
    const float r = 1.0f / (1.0f + e);
    return x >= 0.0f ? r : e * r;
}

/* exp(y) in double for y in [-700, 700]: 2^n * exp(r), n = round(y / ln 2), |r| <= ln2 / 2,
 * with Taylor's degree-11 polynomial (relative error below 7e-15); NaN gives NaN. */
MT_VMATH double
vexp_f64(double y)
{
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
    return p * scale;
}

/* tanh(x) for float, in double: with e = exp(2|x|) - 1 (vexp_f64, y = 2|x| in [0, 20]),
 * tanh|x| = e / (e + 2). e's cancellation costs at most 1e-16 / (2|x|) relative, so the double
 * result is within about 1e-12 of tanh and rounds to float as libm's tanhf does but in rare
 * midpoint cases (a 2-ulp float formula had moved L-BFGS's float32 steps off PyTorch's).
 * |x| < 2^-12 gives x (tanh x = x - x^3/3 rounds to x; -0.0 stays); |x| > 10 gives +-1
 * (1 - tanh 10 = 4e-9 < half an ulp of 1); NaN stays. */
MT_VMATH float
mt_vtanh_f32(float x)
{
    const double a = fabs((double)x);
    const double y = 2.0 * (a < 10.0 ? a : 10.0); /* a select: fmin's NaN rule stops SIMD */
    const double e = vexp_f64(y) - 1.0;
    const float mag = fabsf(x) < 0x1p-12f ? fabsf(x) : (float)(e / (e + 2.0));
    return x != x ? x : copysignf(mag, x);
}

/* c[0] x^(n-1) + c[1] x^(n-2) + ... + c[n-1], by Horner's rule (n is a constant: unrolled). */
MT_VMATH float
vhorner(float x, const float *c, int n)
{
    float p = c[0];
    for (int i = 1; i < n; i++) {
        p = p * x + c[i];
    }
    return p;
}

/* m and e of a normal, finite xs > 0: xs = 2^e * m with m in [sqrt(1/2), sqrt(2)), from the
 * bits (any other xs gives numbers the callers replace). */
MT_VMATH float
vlog_split(float xs, int32_t *e)
{
    uint32_t bits;
    memcpy(&bits, &xs, sizeof(bits));
    /* off's top bits are e (an arithmetic shift: xs < sqrt(1/2) gives e < 0), its low 23 put
     * under sqrt(1/2)'s bits give m */
    const uint32_t off = bits - 0x3f3504f3u;
    *e = (int32_t)off >> 23;
    const uint32_t mbits = (off & 0x007fffffu) + 0x3f3504f3u;
    float m;
    memcpy(&m, &mbits, sizeof(m));
    return m;
}

/* log(xs) + e0 ln 2 for a normal, finite xs > 0 (Cephes' logf): with xs = 2^e * m
 * (vlog_split), log xs = e ln 2 + log(1 + f), f = m - 1 (exact),
 * log(1 + f) = f - f^2 / 2 + f^3 P(f) with a degree-8 P, and (e + e0) ln 2 in two parts
 * ((e + e0) * ln2_hi is exact). Any other xs gives a finite number or NaN that the callers
 * replace. */
MT_VMATH float
vlog_normal(float xs, float e0)
{
    int32_t e;
    const float m = vlog_split(xs, &e);
    const float ef = (float)e + e0;
    const float f = m - 1.0f, z = f * f;
    static const float P[] = {7.0376836292e-2f,  -1.1514610310e-1f, 1.1676998740e-1f,
                              -1.2420140846e-1f, 1.4249322787e-1f,  -1.6668057665e-1f,
                              2.0000714765e-1f,  -2.4999993993e-1f, 3.3333331174e-1f};
    const float p = vhorner(f, P, 9);
    float y = p * f * z;
    y += -2.12194440e-4f * ef; /* ln 2 in two parts, as in vexp_reduced */
    y += -0.5f * z;
    return (f + y) + 0.693359375f * ef;
}

/* r, log(x) as computed for a normal x > 0, or log's value where x is not: 0 gives -inf,
 * x < 0 NaN, inf inf, NaN stays. */
MT_VMATH float
vlog_specials(float x, float r)
{
    const float special = x == 0.0f ? -INFINITY : x < 0.0f ? NAN : x; /* inf and NaN stay */
    /* selects, not x > 0 && x < inf: GCC does not vectorise a mask of a mask once this is
     * inlined under another select (log1p of exp, in softplus and mish) */
    const float finite = x < INFINITY ? r : special;
    return x > 0.0f ? finite : special;
}

/* log(x) for float as logf: vlog_normal, a subnormal x scaled by 2^23 first, and the special
 * values. Error under 1 ulp against double log: 0.80 at most over every 61st float32
 * (tools/fit_vmath.py --ulps 61; tests/ops/test_vmath_f32.py checks 1 over its ranges). */
MT_VMATH float
mt_vlog_f32(float x)
{
    const bool sub = x < 0x1p-126f; /* also 0 and x < 0, whose result is replaced */
    const float r = vlog_normal(sub ? x * 0x1p23f : x, sub ? -23.0f : 0.0f);
    return vlog_specials(x, r);
}

/* log1p(x) for float: u = 1 + x rounded, then log(u) + (x - (u - 1)) / u, the second term the
 * first order of log(1 + x) - log(u) (u - 1 is exact for u in [1/2, 2], where it matters).
 * u is never subnormal (floats near -1 are 2^-24 apart, so u is 0 or at least 2^-24): log's
 * normal path serves, without mt_vlog_f32's scaling (log1p took 1.6x log's time with it, 1.45x
 * NumPy's). u == 1 gives x (|x| < 2^-24, subnormals and -0.0 included); -1 gives -inf, x < -1
 * NaN, inf inf, NaN stays. Error under 2 ulp: 1.44 at most over every 61st float32. */
MT_VMATH float
mt_vlog1p_f32(float x)
{
    const float u = 1.0f + x;
    const float r = vlog_normal(u, 0.0f) + (x - (u - 1.0f)) / u;
    const float l = vlog_specials(u, r); /* u is inf only for x inf */
    return u == 1.0f ? x : l;
}

/* Whether v is an integer: every float of magnitude 2^23 or more is (and +-inf counts as
 * one, as C's pow takes it); below, |v| + 2^23 - 2^23 rounds |v| to an integer. NaN is not. */
MT_VMATH bool
vis_int_f32(float v)
{
    const float a = fabsf(v);
    return (a >= 0x1p23f) | ((a + 0x1p23f) - 0x1p23f == a); /* no branch: | not || */
}

/* pow(x, y) for float as powf, computed in double: |x|^y = exp(y log|x|), log|x| = e ln 2 +
 * 2 atanh(s), s = (m - 1) / (m + 1) for |x| = 2^e m (vlog_split; |s| < 0.172), atanh by its
 * series to s^15 (relative error below 4e-14), exp by vexp_f64 (7e-15), so the double result
 * is within 1e-12 of |x|^y (|y log|x|| is at most 200 where it matters) and its rounding to
 * float is the one rounding that counts: error at most 0.5 ulp + 1e-5 (tests/ops/
 * test_vmath_f32.py checks it against float64 NumPy). y log|x| is held to [-200, 200], past the
 * range of float results, so exp neither overflows nor loses its scaling. C's special cases by
 * selects: pow(x, +-0) and pow(1, y) are 1 (NaN too), NaN otherwise propagates, a negative
 * finite x to a non-integer y is NaN, a negative x (-0 and -inf too) to an odd integer y takes
 * x's sign, zero and infinite x and y give 0 or inf as exp's limits do. */
MT_VMATH float
mt_vpow_f32(float x, float y)
{
    static const double ATANH[] = {1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9,
                                   1.0 / 7,  1.0 / 5,  1.0 / 3,  1.0};
    const float a = fabsf(x);
    const bool sub = a < 0x1p-126f; /* and 0, whose log is replaced */
    int32_t e;
    const double m = vlog_split(sub ? a * 0x1p23f : a, &e);
    const double s = (m - 1.0) / (m + 1.0), z = s * s;
    double q = ATANH[0];
    for (int i = 1; i < 8; i++) {
        q = q * z + ATANH[i];
    }
    const double l = (double)(e - (sub ? 23 : 0)) * 0.6931471805599453 + 2.0 * s * q;
    double t = (double)y * l;
    t = t < -200.0 ? -200.0 : t > 200.0 ? 200.0 : t; /* selects: NaN stays */
    float mag = (float)vexp_f64(t);
    /* the limits of zero and infinite |x| (l is finite there), then NaN and 1, in float: a
     * select between doubles by a float's test took a third of the loop's time */
    const bool edge = (a == 0.0f) | (a == INFINITY);
    mag = edge ? ((a == 0.0f) == (y > 0.0f) ? 0.0f : INFINITY) : mag;
    mag = a != a ? a : a == 1.0f ? 1.0f : mag;
    /* & and |, not && and ||: a branch stops SIMD */
    const bool y_int = vis_int_f32(y), y_odd = y_int & !vis_int_f32(y * 0.5f);
    float r = (signbit(x) != 0) & y_odd ? -mag : mag;
    r = (x < 0.0f) & (x > -INFINITY) & !y_int ? NAN : r;
    r = mt_isnan_f32(y) & (x != 1.0f) ? y : r;
    return (y == 0.0f) | (x == 1.0f) ? 1.0f : r;
}

/* erf(|x|) for a = |x| (or NaN), two polynomials and no division or exp (tools/fit_vmath.py:
 * minimax fits): a < 1: a + a P(a^2), P of degree 6 fitted to erf(a) / a - 1 (relative error
 * 1.2e-9 before rounding); 1 <= a < 3.92: 1 - E(a - 2.46), E of degree 14 fitted to erfc(a)
 * (absolute 9e-9, a quarter of an ulp of 1, with float coefficients); from 3.92 on erfc(a) <
 * 2^-25, half an ulp of 1, so 1. a - 2.46 is exact for every a of that range, so E sees no
 * rounded argument. Both are computed and one selected, as a vector loop must: 21 multiply-adds,
 * where erfc's exp(-a^2) Q(1 / (1 + a)) had taken 27 and a division (GELU 1.5x PyTorch's time). */
MT_VMATH float
verf_abs(float a)
{
    /* P - 1 (its constant 0.128...): a + a (P - 1) adds the large part exactly */
    static const float P[] = {7.882497109e-05f,  -8.018854992e-04f, 5.189311943e-03f,
                              -2.685432880e-02f, 1.128359746e-01f,  -3.761262690e-01f,
                              1.283791659e-01f};
    static const float E[] = {-1.090815772e-06f, -1.064048263e-07f, 1.730688564e-05f,
                              -2.462630437e-05f, -7.576050120e-05f, 2.994046372e-04f,
                              -3.559846082e-04f, -4.590615863e-04f, 2.937226323e-03f,
                              -6.799711380e-03f, 9.914167225e-03f,  -9.832411073e-03f,
                              6.534520537e-03f,  -2.656239783e-03f, 5.033534835e-04f};
    const float p = vhorner(a * a, P, 7);
    const float e = vhorner(a - 2.46f, E, 15);
    return a >= 3.92f ? 1.0f : a >= 1.0f ? 1.0f - e : a + a * p; /* NaN takes a + a p: NaN */
}

/* erf(x) for float as erff: odd, so erf(|x|) with x's sign (-0.0 stays, +-inf give +-1, NaN
 * stays). Error under 2 ulp over every float32 of [-10, 10]: 1.11 at most in the FMA clones, 1.42
 * in x86-64's (PyTorch's erf, SLEEF's, 0.77; its GELU's 1.5e-7 absolute), subnormals included
 * (erf x is 2x / sqrt(pi) there). */
MT_VMATH float
mt_verf_f32(float x)
{
    return copysignf(verf_abs(fabsf(x)), x);
}

/* GELU's forward, x Phi(x) with Phi the normal distribution function, for float: core/math.h's
 * 0.5 x (1 + erf(x / sqrt 2)) with Phi fitted in x itself, which saves erf's sign handling and
 * the three products around it (GELU took 1.2x PyTorch's time with the erf above). Two minimax
 * fits (tools/fit_vmath.py), both computed and one selected:
 *   |x| < 2:        Phi(x) = 1/2 + x R(x^2), R of degree 6 (absolute error 4e-8), and
 *                   x Phi(x) = x / 2 + x^2 R(x^2), which leaves Phi's own rounding out;
 *   2 <= |x| < 5.55: 1 - Phi(|x|) = Phi(-|x|) = G(|x| - 3.8), G of degree 10 (absolute 4e-8;
 *                   |x| - 3.8 is exact there); x Phi(x) is x - x G for x > 0 and x G below;
 *   |x| >= 5.55:    Phi(-|x|) < 1.5e-8 (under half an ulp of 1): x above 0, x * 0 below (-0.0,
 *                   and NaN at -inf as the formula gives).
 * For x < 0 the absolute error of Phi is what the formula's 1 + erf cancellation costs too (and
 * PyTorch's). */
MT_VMATH float
mt_vgelu_f32(float x)
{
    static const float R[] = {2.728483821e-07f,  -7.468946933e-06f, 1.099371002e-04f,
                              -1.178848441e-03f, 9.966731071e-03f,  -6.648793817e-02f,
                              3.989420235e-01f};
    static const float G[] = {-6.036964919e-07f, 2.951142960e-06f,  -5.218010983e-07f,
                              -3.093618216e-05f, 1.249824854e-04f,  -3.029869986e-04f,
                              5.263452767e-04f,  -6.542913034e-04f, 5.554174422e-04f,
                              -2.919046965e-04f, 7.231435302e-05f};
    const float a = fabsf(x), u = x * x;
    const float mid = 0.5f * x + u * vhorner(u, R, 7);
    const float e = vhorner(a - 3.8f, G, 11);
    const float tail = x < 0.0f ? x * e : x - x * e;
    const float far = x < 0.0f ? x * 0.0f : x;
    const float near = x == 0.0f ? x : mid; /* mid is +0.0 at -0.0 */
    return a >= 5.55f ? far : a >= 2.0f ? tail : near; /* NaN takes mid: NaN */
}

/* GELU (both forms), SiLU, mish and their derivatives in float with the functions above: the
 * one formula of core/math.h, given these for erf, exp, log1p, tanh and sigmoid. */
MT_DEFINE_ACTIVATION_TAILS(float, vf32)
MT_DEFINE_GELU(float, vf32, mt_verf_f32, mt_vexp_f32, mt_vexp_nonpos_f32, mt_vlog1p_f32,
               mt_vtanh_f32, mt_vsigmoid_f32)
MT_DEFINE_EXP_ACTIVATIONS(float, vf32, mt_vexp_f32, mt_vlog1p_f32)

#endif
