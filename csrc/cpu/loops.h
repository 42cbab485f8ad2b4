/* Helpers for writing inner loops once per dtype (included by the files of csrc/cpu/ only). */
#ifndef MT_CPU_LOOPS_H
#define MT_CPU_LOOPS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/float8.h"
#include "core/half.h"
#include "core/math.h"
#include "core/scalar.h"

/* X(dtype enum, C type, suffix) for every dtype that kernels compute in, in enum order. */
#define MT_DTYPES(X)          \
    X(MT_BOOL, bool, b8)      \
    X(MT_INT32, int32_t, i32) \
    X(MT_INT64, int64_t, i64) X(MT_FLOAT32, float, f32) X(MT_FLOAT64, double, f64)
/* Every dtype as stored, for the loops that only move or convert elements (casts, fills): the
 * computing dtypes above, then the small ones, which every other kernel sees through the
 * dispatcher's widening (mt_dtype_compute), then the shell dtypes (dispatch/shell.c). Not in
 * enum order past bfloat16 (complex is apart): a table built from it indexes by E. */
#define MT_ALL_DTYPES(X)                             \
    MT_DTYPES(X)                                     \
    X(MT_UINT8, uint8_t, u8)                         \
    X(MT_INT8, int8_t, i8)                           \
    X(MT_INT16, int16_t, i16)                        \
    X(MT_FLOAT16, mt_half, f16)                      \
    X(MT_BFLOAT16, mt_bf16, bf16)                    \
    X(MT_UINT16, uint16_t, u16)                      \
    X(MT_UINT32, uint32_t, u32)                      \
    X(MT_UINT64, uint64_t, u64)                      \
    X(MT_FLOAT8_E4M3FN, mt_f8e4m3fn, f8e4m3fn)       \
    X(MT_FLOAT8_E5M2, mt_f8e5m2, f8e5m2)             \
    X(MT_FLOAT8_E4M3FNUZ, mt_f8e4m3fnuz, f8e4m3fnuz) \
    X(MT_FLOAT8_E5M2FNUZ, mt_f8e5m2fnuz, f8e5m2fnuz)
/* The same list for nesting inside MT_ALL_DTYPES: X(OT, OS, E, T, S) for the outer dtype's C
 * type OT and suffix OS. */
#define MT_ALL_DTYPES_INNER(X, OT, OS)                       \
    X(OT, OS, MT_BOOL, bool, b8)                             \
    X(OT, OS, MT_INT32, int32_t, i32)                        \
    X(OT, OS, MT_INT64, int64_t, i64)                        \
    X(OT, OS, MT_FLOAT32, float, f32)                        \
    X(OT, OS, MT_FLOAT64, double, f64)                       \
    X(OT, OS, MT_UINT8, uint8_t, u8)                         \
    X(OT, OS, MT_INT8, int8_t, i8)                           \
    X(OT, OS, MT_INT16, int16_t, i16)                        \
    X(OT, OS, MT_FLOAT16, mt_half, f16)                      \
    X(OT, OS, MT_BFLOAT16, mt_bf16, bf16)                    \
    X(OT, OS, MT_UINT16, uint16_t, u16)                      \
    X(OT, OS, MT_UINT32, uint32_t, u32)                      \
    X(OT, OS, MT_UINT64, uint64_t, u64)                      \
    X(OT, OS, MT_FLOAT8_E4M3FN, mt_f8e4m3fn, f8e4m3fn)       \
    X(OT, OS, MT_FLOAT8_E5M2, mt_f8e5m2, f8e5m2)             \
    X(OT, OS, MT_FLOAT8_E4M3FNUZ, mt_f8e4m3fnuz, f8e4m3fnuz) \
    X(OT, OS, MT_FLOAT8_E5M2FNUZ, mt_f8e5m2fnuz, f8e5m2fnuz)

/* MT_LD_<suffix>(p): the element at p as a C number (float16, bfloat16 and float8 as float);
 * MT_ST_<suffix>(p, v): v stored at p with PyTorch's conversion: floats to integers truncate,
 * to uint8 through int64 and to int8/int16 through int32 (c10's casts on x86), then wrap; to
 * bool v != 0; to float16/bfloat16 through float, rounded to nearest even; to uint16 and uint32
 * through int64, to uint64 by MT_TO_U64; to float8 through float by core/float8.h's rules. */
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
#define MT_LD_u16(p) (*(const uint16_t *)(p))
#define MT_LD_u32(p) (*(const uint32_t *)(p))
#define MT_LD_u64(p) (*(const uint64_t *)(p))
#define MT_LD_f8e4m3fn(p) mt_f8_to_float(*(const mt_f8 *)(p), MT_F8_E4M3FN)
#define MT_LD_f8e5m2(p) mt_f8_to_float(*(const mt_f8 *)(p), MT_F8_E5M2)
#define MT_LD_f8e4m3fnuz(p) mt_f8_to_float(*(const mt_f8 *)(p), MT_F8_E4M3FNUZ)
#define MT_LD_f8e5m2fnuz(p) mt_f8_to_float(*(const mt_f8 *)(p), MT_F8_E5M2FNUZ)
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
#define MT_ST_u16(p, v) (*(uint16_t *)(p) = (uint16_t)(int64_t)(v))
#define MT_ST_u32(p, v) (*(uint32_t *)(p) = (uint32_t)(int64_t)(v))
#define MT_ST_u64(p, v) (*(uint64_t *)(p) = MT_TO_U64(v))
#define MT_ST_f8e4m3fn(p, v) (*(mt_f8 *)(p) = mt_float_to_f8((float)(v), MT_F8_E4M3FN))
#define MT_ST_f8e5m2(p, v) (*(mt_f8 *)(p) = mt_float_to_f8((float)(v), MT_F8_E5M2))
#define MT_ST_f8e4m3fnuz(p, v) (*(mt_f8 *)(p) = mt_float_to_f8((float)(v), MT_F8_E4M3FNUZ))
#define MT_ST_f8e5m2fnuz(p, v) (*(mt_f8 *)(p) = mt_float_to_f8((float)(v), MT_F8_E5M2FNUZ))

/* v as a uint64: an integer wraps, a float as core/scalar.h's mt_f64_to_u64 */
#define MT_TO_U64(v)                        \
    _Generic((v),                           \
        float: mt_f64_to_u64((double)(v)),  \
        double: mt_f64_to_u64((double)(v)), \
        default: (uint64_t)(v))

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
