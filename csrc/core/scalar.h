/* A Python number as the core sees it: a bool, an int64 or a double, or a complex number (a
 * double, its real part, with is_complex and its imaginary part: code that knows only real
 * numbers reads the real part, as a complex tensor's item() always gave). */
#ifndef MT_SCALAR_H
#define MT_SCALAR_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"

typedef struct mt_scalar {
    mt_dtype type; /* MT_BOOL, MT_INT64 or MT_FLOAT64; MT_UINT64 only for an element of a
                    * uint64 tensor above INT64_MAX; MT_NUM_DTYPES means "None" */
    union {
        bool b;
        int64_t i;
        uint64_t u;
        double f;
    } v;
    double imag;     /* a complex number's imaginary part; 0 for the others */
    bool is_complex; /* a Python complex, or an element of a complex tensor (type MT_FLOAT64) */
} mt_scalar;

static inline mt_scalar
mt_scalar_float(double f)
{
    mt_scalar s = {MT_FLOAT64, {.f = f}, 0.0, false};
    return s;
}

static inline mt_scalar
mt_scalar_int(int64_t i)
{
    mt_scalar s = {MT_INT64, {.i = i}, 0.0, false};
    return s;
}

/* u as an int scalar where it fits in int64, else as MT_UINT64 */
static inline mt_scalar
mt_scalar_uint(uint64_t u)
{
    mt_scalar s = {MT_UINT64, {.u = u}, 0.0, false};
    return u <= (uint64_t)INT64_MAX ? mt_scalar_int((int64_t)u) : s;
}

static inline mt_scalar
mt_scalar_bool(bool b)
{
    mt_scalar s = {MT_BOOL, {.b = b}, 0.0, false};
    return s;
}

/* The complex number re + i im. */
static inline mt_scalar
mt_scalar_complex(double re, double im)
{
    mt_scalar s = {MT_FLOAT64, {.f = re}, im, true};
    return s;
}

/* v as a uint64: an integer wraps; a float as the x86-64 conversion C compilers emit for it
 * (PyTorch's on this machine): from 2^63 up through the signed conversion of v - 2^63, below it
 * through the signed conversion of v (so -1.0 gives 2^64 - 1); NaN and any value the signed
 * conversion cannot hold give its "indefinite" 2^63 (flipped to 0 in the upper range). */
static inline uint64_t
mt_f64_to_u64(double v)
{
    const double two63 = 9223372036854775808.0; /* exact: a power of two */
    const uint64_t top = UINT64_C(1) << 63;
    if (v >= two63) {
        v -= two63;
        return (v < two63 ? (uint64_t)(int64_t)v : top) ^ top;
    }
    return v > -two63 ? (uint64_t)(int64_t)v : top;
}
static inline bool
mt_scalar_is_none(mt_scalar s)
{
    return s.type == MT_NUM_DTYPES;
}

static inline double
mt_scalar_to_double(mt_scalar s)
{
    return s.type == MT_FLOAT64  ? s.v.f
           : s.type == MT_INT64  ? (double)s.v.i
           : s.type == MT_UINT64 ? (double)s.v.u
                                 : (double)s.v.b;
}

static inline int64_t
mt_scalar_to_int(mt_scalar s)
{
    return s.type == MT_FLOAT64  ? (int64_t)s.v.f
           : s.type == MT_INT64  ? s.v.i
           : s.type == MT_UINT64 ? (int64_t)s.v.u /* wraps, as C's conversions on x86 */
                                 : (int64_t)s.v.b;
}

#endif
