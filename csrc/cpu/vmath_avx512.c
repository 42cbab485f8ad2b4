/* float32 exp and log over arrays in AVX-512, 16 lanes an instruction: the elementwise loops
 * call these where the CPU has AVX-512 (mt_cpu_vmath_avx512), in place of vmath.h's portable
 * forms, which the compiler vectorises for every CPU. AVX-512 has what the portable forms build
 * from integer bits and selects: vscalefps (p 2^n with one rounding, overflow to inf and
 * subnormal results included), vgetexpps and vgetmantps (a float's exponent and mantissa,
 * subnormals included) and vfpclassps (which lanes are special). The formulas are vmath.h's, in
 * FMAs; the errors are stated per function, measured by tools/fit_vmath.py --ulps. tanh stays
 * vmath.h's: it is computed in double to round as libm's does, and a form of it here in double
 * (vscalefpd, a 14-bit reciprocal and Newton steps) measured no faster than the compiler's
 * vectorisation of vmath.h's. Nothing here checks arguments. */
#include "cpu/vmath_avx512.h"

#include <math.h>
#include <stdatomic.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,avx512dq")))

/* exp(x), 16 lanes: 2^n exp(r), n = round(x / ln 2), |r| <= ln2 / 2, r = x - n ln 2 with ln 2 in
 * two parts (n ln2_hi is exact), exp(r) = 1 + (r + r^2 P(r)), P of degree 4 (a minimax fit of
 * (exp(r) - 1 - r) / r^2 weighted by r^2 / exp(r), 3.1e-9 relative, tools/fit_vmath.py), and
 * vscalefps rounds (1 + ...) 2^n once, to a subnormal, 0 or inf where it falls there. x is held
 * to [-104, 89] first (exp(-104) < 2^-150 rounds to 0, 2^128 of exp(89 - 128 ln 2) is inf);
 * vmaxps / vminps return their second operand where one is NaN, so NaN stays NaN. 1 + r is
 * carried as h + l, so the sum's rounding before the last one stays small: 0.79 ulp at most
 * against double exp over every float32 (1.003 over every 61st with 1 + (r + r^2 P) rounded
 * twice, over the 1 that tests/autograd/test_cpu_fast_paths.py holds exp to; vmath.h's portable
 * form 0.96). */
AVX512 static inline __m512
exp16(__m512 x)
{
    x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
    x = _mm512_min_ps(_mm512_set1_ps(89.0f), x);
    /* x / ln 2 + 1.5 * 2^23 rounds to an integer (in one FMA; vrndscaleps is two uops) */
    const __m512 shift = _mm512_set1_ps(12582912.0f);
    const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), shift),
                                   shift);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.3814583654e-03f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3687240258e-03f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1668388993e-02f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666521132e-01f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.9999994040e-01f));
    /* 1 + r = h + l exactly (Fast2Sum: |r| < 1), so the one rounding of note is the last */
    const __m512 one = _mm512_set1_ps(1.0f), h = _mm512_add_ps(one, r);
    const __m512 l = _mm512_add_ps(_mm512_sub_ps(one, h), r);
    const __m512 y = _mm512_fmadd_ps(_mm512_mul_ps(r, r), p, l);
    return _mm512_scalef_ps(_mm512_add_ps(h, y), n);
}

/* log(x), 16 lanes: x = 2^e m with m in [sqrt(1/2), sqrt(2)) (vgetmantps gives m in [1, 2),
 * halved from sqrt 2 on; vgetexpps e, subnormals included), then vmath.h's vlog_normal: f = m - 1,
 * log(1 + f) = f - f^2 / 2 + f^3 P(f), P Cephes' degree 8, and e ln 2 in two parts. 0 gives
 * -inf, x < 0 NaN, inf inf, NaN stays (selected only where a lane holds one). Error: 0.84 ulp
 * at most against double log over every float32 (0.78 over every 61st, where vmath.h's portable
 * form has 0.80). */
AVX512 static inline __m512
log16(__m512 x)
{
    __m512 m = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
    __m512 e = _mm512_getexp_ps(x);
    const __mmask16 big = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.41421356f), _CMP_GE_OQ);
    m = _mm512_mask_mul_ps(m, big, m, _mm512_set1_ps(0.5f));
    e = _mm512_mask_add_ps(e, big, e, _mm512_set1_ps(1.0f));
    const __m512 f = _mm512_sub_ps(m, _mm512_set1_ps(1.0f)), z = _mm512_mul_ps(f, f);
    static const float P[] = {7.0376836292e-2f,  -1.1514610310e-1f, 1.1676998740e-1f,
                              -1.2420140846e-1f, 1.4249322787e-1f,  -1.6668057665e-1f,
                              2.0000714765e-1f,  -2.4999993993e-1f, 3.3333331174e-1f};
    __m512 p = _mm512_set1_ps(P[0]);
    for (int i = 1; i < 9; i++) {
        p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(P[i]));
    }
    /* log(1 + f) = f + f^2 (-1/2 + f P), the small terms first, then e ln2_hi (exact) */
    const __m512 q = _mm512_fmadd_ps(p, f, _mm512_set1_ps(-0.5f));
    const __m512 y = _mm512_fmadd_ps(z, q, _mm512_mul_ps(e, _mm512_set1_ps(-2.12194440e-4f)));
    const __m512 r = _mm512_fmadd_ps(e, _mm512_set1_ps(0.693359375f), _mm512_add_ps(f, y));
    /* lanes of NaN, +-0, +-inf or x < 0 (vfpclassps: all classes but positive normal and
     * subnormal, 0xdf), which all but a few vectors have none of */
    const __mmask16 special = _mm512_fpclass_ps_mask(x, 0xdf);
    if (special == 0) {
        return r;
    }
    /* inf and NaN stay, 0 gives -inf, x < 0 NaN */
    __m512 s = _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_EQ_OQ),
                                  _mm512_set1_ps(-INFINITY));
    s = _mm512_mask_mov_ps(s, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ),
                           _mm512_set1_ps(NAN));
    return _mm512_mask_mov_ps(r, special, s);
}

/* out[i] = F(x[i]) for i < n, 16 at a time, the last few under a mask (out may be x) */
#define AVX512_LOOP(name, F)                                                       \
    AVX512 void name(float *out, const float *x, int64_t n)                        \
    {                                                                              \
        int64_t i = 0;                                                             \
        for (; i + 16 <= n; i += 16) {                                             \
            _mm512_storeu_ps(out + i, F(_mm512_loadu_ps(x + i)));                  \
        }                                                                          \
        if (i < n) {                                                               \
            const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);                  \
            _mm512_mask_storeu_ps(out + i, m, F(_mm512_maskz_loadu_ps(m, x + i))); \
        }                                                                          \
    }
AVX512_LOOP(mt_cpu_exp_f32_avx512, exp16)
AVX512_LOOP(mt_cpu_log_f32_avx512, log16)

/* -1: not asked yet; else 0 or 1 */
static atomic_int use_avx512 = -1;

static int
cpu_has_avx512(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}

bool
mt_cpu_vmath_avx512(void)
{
    int v = atomic_load_explicit(&use_avx512, memory_order_relaxed);
    if (v < 0) {
        v = cpu_has_avx512();
        atomic_store_explicit(&use_avx512, v, memory_order_relaxed);
    }
    return v;
}

bool
mt_cpu_set_vmath_avx512(bool on)
{
    atomic_store_explicit(&use_avx512, on && cpu_has_avx512(), memory_order_relaxed);
    return mt_cpu_vmath_avx512();
}

#else /* no x86-64 GCC: the portable forms only */

bool
mt_cpu_vmath_avx512(void)
{
    return false;
}

bool
mt_cpu_set_vmath_avx512(bool on)
{
    (void)on;
    return false;
}

void
mt_cpu_exp_f32_avx512(float *out, const float *x, int64_t n)
{
    (void)out, (void)x, (void)n;
}
void
mt_cpu_log_f32_avx512(float *out, const float *x, int64_t n)
{
    (void)out, (void)x, (void)n;
}
#endif
