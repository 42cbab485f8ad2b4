// The CUDA kernels of the factories that compute their values (arange, linspace, logspace,
// eye) and of tril/triu. The arguments are ops/factory_args.c's, the launches ops_shape.c's.
#include <stdint.h>

#include "cuda/device_math.h"
#include "cuda/grid_stride.h"
#include "cuda/kernels_index_fill_nn.h"

extern "C" {
#include "ops/range_point.h"
}

// out (n) = the range's values, cast to T as the CPU's mt_store_scalar casts
template <typename T>
__global__ void
range_kernel(mt_cuda_range p)
{
    MT_CUDA_GRID_STRIDE(i, p.n)
    {
        T v;
        if (p.mode == 0) {
            v = (T)(int64_t)((uint64_t)p.si + (uint64_t)i * (uint64_t)p.di); // as the CPU's
        } else if (p.mode == 1) {
            v = (T)(p.s + (double)i * p.d);
        } else {
            double x = mt_range_point(p.f32 != 0, p.s, p.e, i, p.n);
            if (p.mode == 3) {
                x = pow(p.base, x);
            }
            v = (T)x;
        }
        ((T *)p.out)[i] = v;
    }
}

// out (n, m) = 1 on the diagonal, else 0
template <typename T>
__global__ void
eye_kernel(char *out, int64_t n, int64_t m)
{
    MT_CUDA_GRID_STRIDE(i, n * m)
    {
        ((T *)out)[i] = (T)(i / m == i % m);
    }
}

// x, out (..., rows, cols); out = x inside the triangle, else 0
template <typename T>
__global__ void
triangle_kernel(const char *x, char *out, int64_t total, int64_t rows, int64_t cols, int64_t k,
                int lower)
{
    MT_CUDA_GRID_STRIDE(i, total)
    {
        const int64_t c = i % cols, r = (i / cols) % rows;
        const bool keep = lower ? c - r <= k : c - r >= k;
        ((T *)out)[i] = keep ? load_((const T *)x + i) : T(); // T(): all bits 0
    }
}

#define ALL(K)                                                                     \
    {MT_KERNEL_PTR(K<bool>), MT_KERNEL_PTR(K<int32_t>), MT_KERNEL_PTR(K<int64_t>), \
     MT_KERNEL_PTR(K<float>), MT_KERNEL_PTR(K<double>)}
static const void *const range_kernels[MT_NUM_DTYPES] = ALL(range_kernel);
static const void *const eye_kernels[MT_NUM_DTYPES] = ALL(eye_kernel);
#undef ALL
// by dtype, then (after the five small dtypes, which dispatch/widen.c computes in a wider one) the
// complex ones by width: only moved, or zeroed (0 + 0j is all bits 0)
static_assert(MT_FLOAT64 == 4 && MT_COMPLEX64 == 10 && MT_COMPLEX128 == 11,
              "the triangle table lists bool to float64, five small dtypes, then the complex");
#define T(X) MT_KERNEL_PTR(triangle_kernel<X>)
#define SMALL nullptr, nullptr, nullptr, nullptr, nullptr
static const void *const triangle_kernels[MT_NUM_DTYPES] = {T(bool),     T(int32_t),     T(int64_t),
                                                            T(float),    T(double),      SMALL,
                                                            T(uint64_t), T(mt_cuda_b128)};
#undef SMALL
#undef T

extern "C" const void *
mt_cuda_range_kernel(mt_dtype dt)
{
    return range_kernels[dt];
}

extern "C" const void *
mt_cuda_eye_kernel(mt_dtype dt)
{
    return eye_kernels[dt];
}

extern "C" const void *
mt_cuda_triangle_kernel(mt_dtype dt)
{
    return triangle_kernels[dt];
}
