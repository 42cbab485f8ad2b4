/* The emulated toolkit's cuComplex.h: the complex types cuBLAS's complex calls take, as CUDA's
 * cuComplex.h and vector_types.h define them (float2 and double2: the parts x and y, aligned as a
 * pair), with CUDA's names. Nothing here is minitorch's own. */
#ifndef MT_EMU_CUCOMPLEX_H
#define MT_EMU_CUCOMPLEX_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct __attribute__((aligned(8))) float2 {
    float x, y;
} float2;
typedef struct __attribute__((aligned(16))) double2 {
    double x, y;
} double2;

typedef float2 cuFloatComplex;
typedef double2 cuDoubleComplex;
typedef cuFloatComplex cuComplex;

static inline cuFloatComplex
make_cuFloatComplex(float r, float i)
{
    cuFloatComplex z = {r, i};
    return z;
}
static inline cuDoubleComplex
make_cuDoubleComplex(double r, double i)
{
    cuDoubleComplex z = {r, i};
    return z;
}
static inline cuComplex
make_cuComplex(float r, float i)
{
    return make_cuFloatComplex(r, i);
}

#ifdef __cplusplus
}
#endif

#endif
