/* float32 exp and log in AVX-512 (vmath_avx512.c), called by the elementwise loops where
 * mt_cpu_vmath_avx512() says the CPU has it; vmath.h's portable forms serve everywhere else. */
#ifndef MT_CPU_VMATH_AVX512_H
#define MT_CPU_VMATH_AVX512_H

#include <stdbool.h>
#include <stdint.h>

/* Whether the AVX-512 loops run: the CPU has AVX-512 F and DQ, unless switched off. */
bool mt_cpu_vmath_avx512(void);
/* Switches them on (where the CPU has them) or off, for tests of the portable path; returns
 * whether they now run. */
bool mt_cpu_set_vmath_avx512(bool on);

/* out[i] = exp, log of x[i] for i < n, contiguous float32 (out may be x); call only where
 * mt_cpu_vmath_avx512() is true. */
void mt_cpu_exp_f32_avx512(float *out, const float *x, int64_t n);
void mt_cpu_log_f32_avx512(float *out, const float *x, int64_t n);

#endif
