/* Scalar math shared by the CPU loops and the CUDA kernels, forward and backward.
 *
 * Each formula is written once here. MT_HD marks them __host__ __device__ under nvcc. */
#ifndef MT_MATH_H
#define MT_MATH_H

#ifdef __CUDACC__
#define MT_HD __host__ __device__
#else
#define MT_HD
#endif

/* clamp_min and relu propagate NaN from either side, as PyTorch does. */
#define MT_DEFINE_CLAMP_MIN(T, suffix)                                   \
    static inline MT_HD T mt_clamp_min_##suffix(T x, T lo)               \
    {                                                                    \
        return (lo != lo) ? lo : (x < lo ? lo : x);                      \
    }
MT_DEFINE_CLAMP_MIN(float, f32)
MT_DEFINE_CLAMP_MIN(double, f64)
#undef MT_DEFINE_CLAMP_MIN

#endif
