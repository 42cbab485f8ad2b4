// The index kernels of the CUDA backend (index.h): one strided pass that takes, puts, adds or
// reduces otherwise (scatter's multiply, scatter_reduce's amax and amin) through int64
// positions, the range check of index values, and the offsets of advanced indexing. The plans
// and the checks are ops/index_plan.c's, the launches ops_index.c's.
#include <stdint.h>
#include <string.h>

#include "cuda/device_assert.h"
#include "cuda/device_complex.h"
#include "cuda/device_math.h"
#include "cuda/grid_stride.h"
#include "cuda/kernels_index_fill_nn.h"

// Atomic dst += v for the accumulating modes: positions may repeat.
static __device__ __forceinline__ void
atomic_add(bool *p, bool v)
{
    if (v) {
        *p = true; // every writer writes the same value
    }
}
static __device__ __forceinline__ void
atomic_add(int32_t *p, int32_t v)
{
    atomicAdd((int *)p, (int)v);
}
static __device__ __forceinline__ void
atomic_add(int64_t *p, int64_t v)
{
    // two's complement: the unsigned sum has the signed sum's bits
    atomicAdd((unsigned long long *)p, (unsigned long long)v);
}
static __device__ __forceinline__ void
atomic_add(float *p, float v)
{
    atomicAdd(p, v);
}
static __device__ __forceinline__ void
atomic_add(double *p, double v)
{
    atomicAdd(p, v);
}
// a complex sum adds the parts, each atomically
static __device__ __forceinline__ void
atomic_add(mt_z64 *p, mt_z64 v)
{
    atomicAdd(&p->re, v.re);
    atomicAdd(&p->im, v.im);
}
static __device__ __forceinline__ void
atomic_add(mt_z128 *p, mt_z128 v)
{
    atomicAdd(&p->re, v.re);
    atomicAdd(&p->im, v.im);
}

// Atomic dst = f(dst, v) for the other reductions (Mode 3 *, 4 maximum, 5 minimum): a
// compare-and-swap loop on the element's bits. A bool's product and minimum are an and, its
// maximum an or: a writer that changes the element always writes the same value.
template <typename T> struct bits_of {
    typedef unsigned int type;
};
template <> struct bits_of<int64_t> {
    typedef unsigned long long type;
};
template <> struct bits_of<double> {
    typedef unsigned long long type;
};
template <int Mode, typename T>
static __device__ __forceinline__ T
combine(T x, T v)
{
    if constexpr (Mode == 3) {
        return x * v;
    } else if constexpr (Mode == 4) {
        return maximum_(x, v);
    } else {
        return minimum_(x, v);
    }
}
template <int Mode, typename T>
static __device__ __forceinline__ void
atomic_reduce(T *p, T v)
{
    typedef typename bits_of<T>::type B;
    B *word = (B *)p, old = *word, seen;
    do {
        seen = old;
        T x, next;
        memcpy(&x, &seen, sizeof(T));
        next = combine<Mode>(x, v);
        B want;
        memcpy(&want, &next, sizeof(T));
        old = atomicCAS(word, seen, want);
    } while (old != seen);
}
template <int Mode>
static __device__ __forceinline__ void
atomic_reduce(bool *p, bool v)
{
    if (Mode == 4 ? v : !v) {
        *p = Mode == 4;
    }
}

// dst, src, pos (p.sizes) at element strides; mode 0: dst = *(src + pos * step),
// 1: *(dst + pos * step) = src, 2: *(dst + pos * step) += src, 3, 4, 5: *=, maximum, minimum
template <typename T, int Mode>
__global__ void
move_kernel(mt_cuda_move p)
{
    MT_CUDA_GRID_STRIDE(i, p.n)
    {
        int64_t off[3] = {0, 0, 0}, rest = i;
        for (int d = p.ndim - 1; d >= 0; d--) {
            const int64_t k = rest % p.sizes[d];
            rest /= p.sizes[d];
            for (int o = 0; o < 3; o++) {
                off[o] += k * p.strides[o][d];
            }
        }
        const int64_t at = p.pos[off[2]];
        if (at == MT_CUDA_BAD_POSITION) {
            continue; // its index failed the range check: recorded, nothing moves
        }
        const int64_t by = at * p.step;
        if constexpr (Mode == 0) {
            ((T *)p.dst)[off[0]] = load_((const T *)(p.src + off[1] * (int64_t)sizeof(T) + by));
        } else if constexpr (Mode == 1) {
            *(T *)(p.dst + off[0] * (int64_t)sizeof(T) + by) = load_((const T *)p.src + off[1]);
        } else if constexpr (Mode == 2) {
            atomic_add((T *)(p.dst + off[0] * (int64_t)sizeof(T) + by),
                       load_((const T *)p.src + off[1]));
        } else {
            atomic_reduce<Mode>((T *)(p.dst + off[0] * (int64_t)sizeof(T) + by),
                                load_((const T *)p.src + off[1]));
        }
    }
}

// Mode 3 (scatter's multiply) of complex T, deterministic: there is no atomic complex product,
// and a product's rounding depends on its order. dst's one dim of stride 0 (size > 1) is the
// scatter's dim z: the elements of one line along z (the others' coordinates fixed) are the only
// ones that may name the same element of dst (dst + pos * step). The first of a line to name an
// element multiplies it by the src of each of them, in order along z, as the CPU's loop does
// (in complex128); the others do nothing. A line of J elements costs O(J^2) reads of pos.
template <typename T>
__global__ void
multiply_lines_kernel(mt_cuda_move p)
{
    int z = -1;
    for (int d = 0; d < p.ndim; d++) {
        z = z < 0 && p.strides[0][d] == 0 && p.sizes[d] > 1 ? d : z;
    }
    MT_CUDA_GRID_STRIDE(i, p.n)
    {
        int64_t off[3] = {0, 0, 0}, rest = i, kz = 0;
        for (int d = p.ndim - 1; d >= 0; d--) {
            const int64_t k = rest % p.sizes[d];
            rest /= p.sizes[d];
            kz = d == z ? k : kz;
            for (int o = 0; o < 3; o++) {
                off[o] += k * p.strides[o][d];
            }
        }
        const int64_t at = p.pos[off[2]];
        const int64_t len = z < 0 ? 1 : p.sizes[z];
        const int64_t s1 = z < 0 ? 0 : p.strides[1][z], s2 = z < 0 ? 0 : p.strides[2][z];
        const int64_t src0 = off[1] - kz * s1, pos0 = off[2] - kz * s2; // the line's start
        bool first = at != MT_CUDA_BAD_POSITION;
        for (int64_t j = 0; j < kz && first; j++) {
            first = p.pos[pos0 + j * s2] != at;
        }
        if (!first) {
            continue; // an earlier element of the line multiplies this one's destination
        }
        T *out = (T *)(p.dst + off[0] * (int64_t)sizeof(T) + at * p.step);
        mt_z128 x = as_<mt_z128>(load_(out));
        for (int64_t j = kz; j < len; j++) {
            if (p.pos[pos0 + j * s2] == at) {
                x = x * as_<mt_z128>(load_((const T *)p.src + src0 + j * s1));
            }
        }
        *out = as_<T>(x);
    }
}

__global__ void
range_check_kernel(int64_t *v, int64_t n, int64_t lo, int64_t hi, mt_cuda_assert_record *rec,
                   int kind)
{
    MT_CUDA_GRID_STRIDE(i, n)
    {
        if (v[i] < lo || v[i] >= hi) {
            mt_cuda_assert_fail(rec, kind, (long long)v[i], (long long)hi);
            v[i] = MT_CUDA_BAD_POSITION;
        }
    }
}

__global__ void
add_offsets_kernel(int64_t *pos, const int64_t *v, int64_t n, int64_t size, int64_t step)
{
    MT_CUDA_GRID_STRIDE(i, n)
    {
        const int64_t j = v[i];
        if (j == MT_CUDA_BAD_POSITION || pos[i] == MT_CUDA_BAD_POSITION) {
            pos[i] = MT_CUDA_BAD_POSITION;
            continue;
        }
        pos[i] += (j < 0 ? j + size : j) * step;
    }
}

#define M(T, Mode) MT_KERNEL_PTR(move_kernel<T, Mode>)
// moves by width for take and put (bool, the one 1-byte dtype, normalised as it is read; a
// complex64 as 8 bytes, a complex128 as 16), by dtype for the reductions; the complex dtypes
// add (scatter_add, index_put_'s accumulate) and multiply (scatter's multiply, by lines:
// multiply_lines_kernel) but have no order. Positional, in mt_dtype
// order: the five small dtypes between float64 and complex64 reach no kernel here
// (dispatch/widen.c computes them in a wider dtype).
static_assert(MT_FLOAT64 == 4 && MT_COMPLEX64 == 10 && MT_COMPLEX128 == 11,
              "the move tables list bool to float64, five small dtypes, then complex64 and 128");
#define SMALL nullptr, nullptr, nullptr, nullptr, nullptr
#define BY_WIDTH(Mode)                                                                             \
    {M(bool, Mode), M(uint32_t, Mode), M(uint64_t, Mode),    M(uint32_t, Mode), M(uint64_t, Mode), \
     SMALL,         M(uint64_t, Mode), M(mt_cuda_b128, Mode)}
#define BY_DTYPE(Mode) \
    {M(bool, Mode), M(int32_t, Mode), M(int64_t, Mode), M(float, Mode), M(double, Mode)}
static const void *const move_kernels[6][MT_NUM_DTYPES] = {
    BY_WIDTH(0),
    BY_WIDTH(1),
    {M(bool, 2), M(int32_t, 2), M(int64_t, 2), M(float, 2), M(double, 2), SMALL, M(mt_z64, 2),
     M(mt_z128, 2)},
    {M(bool, 3), M(int32_t, 3), M(int64_t, 3), M(float, 3), M(double, 3), SMALL,
     MT_KERNEL_PTR(multiply_lines_kernel<mt_z64>), MT_KERNEL_PTR(multiply_lines_kernel<mt_z128>)},
    BY_DTYPE(4),
    BY_DTYPE(5),
};
#undef BY_DTYPE
#undef BY_WIDTH
#undef SMALL
#undef M

extern "C" const void *
mt_cuda_move_kernel(int mode, mt_dtype dt)
{
    return move_kernels[mode][dt];
}

extern "C" const void *
mt_cuda_range_check_kernel(void)
{
    return MT_KERNEL_PTR(range_check_kernel);
}

extern "C" const void *
mt_cuda_add_offsets_kernel(void)
{
    return MT_KERNEL_PTR(add_offsets_kernel);
}
