/* Helpers for writing inner loops once per dtype (included by the files of csrc/cpu/ only). */
#ifndef MT_CPU_LOOPS_H
#define MT_CPU_LOOPS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"
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
