/* A Python number as the core sees it: a bool, an int64 or a double, or a complex number (a
 * double, its real part, with is_complex and its imaginary part: code that knows only real
 * numbers reads the real part, as a complex tensor's item() always gave). */
#ifndef MT_SCALAR_H
#define MT_SCALAR_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"

typedef struct mt_scalar {
    mt_dtype type; /* MT_BOOL, MT_INT64 or MT_FLOAT64; MT_NUM_DTYPES means "None" */
    union {
        bool b;
        int64_t i;
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

static inline bool
mt_scalar_is_none(mt_scalar s)
{
    return s.type == MT_NUM_DTYPES;
}

static inline double
mt_scalar_to_double(mt_scalar s)
{
    return s.type == MT_FLOAT64 ? s.v.f : s.type == MT_INT64 ? (double)s.v.i : (double)s.v.b;
}

static inline int64_t
mt_scalar_to_int(mt_scalar s)
{
    return s.type == MT_FLOAT64 ? (int64_t)s.v.f : s.type == MT_INT64 ? s.v.i : (int64_t)s.v.b;
}

#endif
