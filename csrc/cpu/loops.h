/* Helpers for writing inner loops once per dtype (included by the files of csrc/cpu/ only). */
#ifndef MT_CPU_LOOPS_H
#define MT_CPU_LOOPS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/half.h"
#include "core/math.h"

/* X(dtype enum, C type, suffix) for every dtype, in enum order; two copies so that one can be
 * nested inside the other. */
#define MT_DTYPES(X)          \
    X(MT_BOOL, bool, b8)      \
    X(MT_INT32, int32_t, i32) \
    X(MT_INT64, int64_t, i64) X(MT_FLOAT32, float, f32) X(MT_FLOAT64, double, f64)
#define MT_DTYPES_INNER(X, OT, OS) \
    X(OT, OS, bool, b8)            \
    X(OT, OS, int32_t, i32) X(OT, OS, int64_t, i64) X(OT, OS, float, f32) X(OT, OS, double, f64)

/* Every dtype as stored, for the loops that only move or convert elements (casts, fills): the
 * computing dtypes above, then the small ones, which every other kernel sees through the
 * dispatcher's widening (mt_dtype_compute). */
#define MT_ALL_DTYPES(X)     \
    MT_DTYPES(X)             \
    X(MT_UINT8, uint8_t, u8) \
    X(MT_INT8, int8_t, i8)   \
    X(MT_INT16, int16_t, i16) X(MT_FLOAT16, mt_half, f16) X(MT_BFLOAT16, mt_bf16, bf16)
#define MT_ALL_DTYPES_INNER(X, OT, OS) \
    MT_DTYPES_INNER(X, OT, OS)         \
    X(OT, OS, uint8_t, u8)             \
    X(OT, OS, int8_t, i8) X(OT, OS, int16_t, i16) X(OT, OS, mt_half, f16) X(OT, OS, mt_bf16, bf16)

/* MT_LD_<suffix>(p): the element at p as a C number (float16 and bfloat16 as float);
 * MT_ST_<suffix>(p, v): v stored at p with PyTorch's conversion: floats to integers truncate,
 * to uint8 through int64 and to int8/int16 through int32 (c10's casts on x86), then wrap; to
 * bool v != 0; to float16/bfloat16 through float, rounded to nearest even. */
#define MT_LD_b8(p) mt_load_b8(p)
#define MT_LD_i32(p) (*(const int32_t *)(p))
#define MT_LD_i64(p) (*(const int64_t *)(p))
#define MT_LD_f32(p) (*(const float *)(p))
#define MT_LD_f64(p) (*(const double *)(p))
#define MT_LD_u8(p) (*(const uint8_t *)(p))
#define MT_LD_i8(p) (*(const int8_t *)(p))
#define MT_LD_i16(p) (*(const int16_t *)(p))
#define MT_LD_f16(p) mt_half_to_float(*(const mt_half *)(p))
#define MT_LD_bf16(p) mt_bf16_to_float(*(const mt_bf16 *)(p))
#define MT_ST_b8(p, v) (*(bool *)(p) = (v) != 0)
#define MT_ST_i32(p, v) (*(int32_t *)(p) = (int32_t)(v))
#define MT_ST_i64(p, v) (*(int64_t *)(p) = (int64_t)(v))
#define MT_ST_f32(p, v) (*(float *)(p) = (float)(v))
#define MT_ST_f64(p, v) (*(double *)(p) = (double)(v))
#define MT_ST_u8(p, v) (*(uint8_t *)(p) = (uint8_t)(int64_t)(v))
#define MT_ST_i8(p, v) (*(int8_t *)(p) = (int8_t)(int32_t)(v))
#define MT_ST_i16(p, v) (*(int16_t *)(p) = (int16_t)(int32_t)(v))
#define MT_ST_f16(p, v) (*(mt_half *)(p) = mt_float_to_half((float)(v)))
#define MT_ST_bf16(p, v) (*(mt_bf16 *)(p) = mt_float_to_bf16((float)(v)))

/* A hot loop compiled three times, for AVX-512, AVX2+FMA and the x86-64 baseline; the loader
 * picks the best the CPU has (an ifunc), so one build serves every machine. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define MT_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define MT_SIMD_CLONES
#endif

/* Element i of operand k inside an inner loop (an lvalue: for writing, and reading any dtype
 * but bool). */
#define MT_AT(T, k, i) (*(T *)(data[k] + (i) * strides[k]))

/* The value of type T at p, or of element i of operand k: a bool is read as its byte != 0
 * (core/math.h's mt_load_b8), any other T as itself. Every read of data that may be bool goes
 * through these. */
#define MT_LOAD(T, p) _Generic((T)0, bool: mt_load_b8(p), default: *(const T *)(p))
#define MT_GET(T, k, i) MT_LOAD(T, data[k] + (i) * strides[k])

/* Loops that move elements as raw words of their width take bool for width 1 (the only 1-byte
 * dtype), so a moved byte is normalised to 0 or 1 like any bool read. */

#endif
