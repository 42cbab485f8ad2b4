/* CUDA C++ for g++: force-included (-include) before every .cu file of cuda/ in the emulated build, so
 * the kernels compile unchanged as host C++17 and run on the CPU (runtime.cc runs each launch).
 * Here: CUDA's qualifiers, the built-in indices, __syncthreads, __shared__, the atomics and
 * device intrinsics our kernels use, and MT_KERNEL_PTR's per-kernel descriptors (what
 * cudaLaunchKernel receives in place of a device function's address).
 *
 * The threads of a block run one at a time on one OS thread (the caller's, or in the asynchronous
 * mode the stream's worker); a kernel that reaches __syncthreads runs its threads as fibers
 * switched at each barrier (launch.cc). So a __shared__ variable is one per OS thread (static
 * thread_local): the block being run owns it.
 * Atomics are real atomics all the same: launches from several OS threads may share memory. */
#ifndef MT_EMU_KERNEL_H
#define MT_EMU_KERNEL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
#include <type_traits>
#include <utility>
#endif

#include <cuda_runtime_api.h>

#ifndef __CUDACC__
#define __CUDACC__ 1 /* what nvcc defines: headers pick their device-side declarations */
#endif

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static thread_local

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA's vector type of the built-in indices (gridDim and blockDim are dim3 in CUDA; only
 * their fields are read, and a plain struct keeps them constant-initialised TLS). */
typedef struct uint3 {
    unsigned int x, y, z;
} uint3;

/* The running thread's indices and its launch's shape, set by launch.cc before each thread
 * (or fiber) runs. (Not initial-exec TLS, though kernels read them all the time: a module with
 * any initial-exec TLS must fit all its TLS, the __shared__ arrays too, in the small static
 * TLS area, and fails to load.) */
extern __thread uint3 threadIdx, blockIdx, blockDim, gridDim;

/* Waits until every thread of the block has reached it (runtime.cc: a fiber switch). */
void mt_emu_syncthreads(void);

/* A warp shuffle's exchange (launch.cc): v published by the calling thread, the value lane src
 * (0 to 31) of its warp published at the same shuffle returned (v itself for src out of range).
 * Every live lane of the warp must reach it, as CUDA's __shfl_*_sync with a full mask. */
unsigned long long mt_emu_warp_exchange(unsigned long long v, int src);

/* What MT_KERNEL_PTR gives for a kernel: cudaLaunchKernel runs `run` once per thread, with
 * the indices set, on the argument pointers it was given. Constant-initialised (the .cu
 * files' static tables hold their addresses). */
#define MT_EMU_KERNEL_MAGIC 0x6b726e6c656d7531ull
typedef struct mt_emu_kernel {
    unsigned long long magic;
    void (*run)(void **args);
    const char *(*pretty_name)(void); /* __PRETTY_FUNCTION__ naming the kernel */
    const char *(*pretty_sig)(void); /* ... and its parameter types */
    int nargs;
    const bool *is_ptr; /* per parameter: a pointer (checked against the device's memory) */
    const size_t *arg_size, *arg_align; /* per parameter: what an asynchronous launch copies */
    int barrier; /* reached __syncthreads once: runs as fibers (atomic) */
    const char *name; /* "void k<float>(const float*, long int)", made on first use (atomic) */
} mt_emu_kernel;

#ifdef __cplusplus
}
#endif

#define __syncthreads() mt_emu_syncthreads()

#ifdef __cplusplus

template <typename T> struct mt_emu_sig;
template <typename... A> struct mt_emu_sig<void (*)(A...)> {
    static constexpr int n = (int)sizeof...(A);
    static constexpr bool is_ptr[sizeof...(A) + 1] = {std::is_pointer_v<A>..., false};
    static constexpr size_t size[sizeof...(A) + 1] = {sizeof(A)..., 0};
    static constexpr size_t align[sizeof...(A) + 1] = {alignof(A)..., 1};
    template <void (*F)(A...), size_t... I> static void call(void **args, std::index_sequence<I...>)
    {
        (void)args; /* a kernel without parameters */
        F(*static_cast<std::remove_cv_t<A> *>(args[I])...); /* each thread gets its own copies */
    }
    static const char *pretty()
    {
        return __PRETTY_FUNCTION__;
    }
};

template <auto F> struct mt_emu_kernel_of {
    using S = mt_emu_sig<decltype(F)>;
    static void run(void **args)
    {
        S::template call<F>(args, std::make_index_sequence<S::n>{});
    }
    static const char *pretty()
    {
        return __PRETTY_FUNCTION__;
    }
    static inline mt_emu_kernel desc = {
        MT_EMU_KERNEL_MAGIC, &run,    &pretty,  &S::pretty, S::n,
        S::is_ptr,           S::size, S::align, 0,          nullptr};
};

/* The address cudaLaunchKernel takes for a __global__ function (a template-id may hold commas). */
#define MT_KERNEL_PTR(...) ((const void *)&mt_emu_kernel_of<&__VA_ARGS__>::desc)

/* ---- atomics: CUDA's, each returning the old value ---- */

static inline float
atomicAdd(float *p, float v)
{
    float old, next;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do {
        next = old + v;
    } while (!__atomic_compare_exchange(p, &old, &next, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return old;
}
static inline double
atomicAdd(double *p, double v)
{
    double old, next;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do {
        next = old + v;
    } while (!__atomic_compare_exchange(p, &old, &next, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return old;
}
#define MT_EMU_INT_ATOMICS(T)                                                                  \
    static inline T atomicAdd(T *p, T v)                                                       \
    {                                                                                          \
        return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);                                     \
    }                                                                                          \
    static inline T atomicSub(T *p, T v)                                                       \
    {                                                                                          \
        return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);                                     \
    }                                                                                          \
    static inline T atomicOr(T *p, T v)                                                        \
    {                                                                                          \
        return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);                                      \
    }                                                                                          \
    static inline T atomicAnd(T *p, T v)                                                       \
    {                                                                                          \
        return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);                                     \
    }                                                                                          \
    static inline T atomicXor(T *p, T v)                                                       \
    {                                                                                          \
        return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);                                     \
    }                                                                                          \
    static inline T atomicExch(T *p, T v)                                                      \
    {                                                                                          \
        return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);                                    \
    }                                                                                          \
    static inline T atomicCAS(T *p, T expect, T v)                                             \
    {                                                                                          \
        __atomic_compare_exchange_n(p, &expect, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
        return expect;                                                                         \
    }                                                                                          \
    static inline T atomicMin(T *p, T v)                                                       \
    {                                                                                          \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                          \
        while (v < old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST,    \
                                                       __ATOMIC_RELAXED)) {                    \
        }                                                                                      \
        return old;                                                                            \
    }                                                                                          \
    static inline T atomicMax(T *p, T v)                                                       \
    {                                                                                          \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                          \
        while (v > old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST,    \
                                                       __ATOMIC_RELAXED)) {                    \
        }                                                                                      \
        return old;                                                                            \
    }
/* CUDA's overloads: int, unsigned int, unsigned long long (and long long for min/max). */
MT_EMU_INT_ATOMICS(int)
MT_EMU_INT_ATOMICS(unsigned int)
MT_EMU_INT_ATOMICS(unsigned long long)
MT_EMU_INT_ATOMICS(long long)
#undef MT_EMU_INT_ATOMICS

/* ---- device intrinsics ---- */

/* The bit casts: the same bytes seen as another type of the same size. */
template <typename To, typename From>
static inline To
mt_emu_bits(From v)
{
    static_assert(sizeof(To) == sizeof(From), "a bit cast keeps the size");
    To u;
    memcpy(&u, &v, sizeof(u));
    return u;
}
static inline unsigned int
__float_as_uint(float v)
{
    return mt_emu_bits<unsigned int>(v);
}
static inline float
__uint_as_float(unsigned int u)
{
    return mt_emu_bits<float>(u);
}
static inline int
__float_as_int(float v)
{
    return mt_emu_bits<int>(v);
}
static inline long long
__double_as_longlong(double v)
{
    return mt_emu_bits<long long>(v);
}
static inline double
__longlong_as_double(long long u)
{
    return mt_emu_bits<double>(u);
}

/* ---- warp shuffles: CUDA's __shfl_sync, __shfl_up_sync, __shfl_down_sync, __shfl_xor_sync
 * (a full mask, 32-lane warps; width a power of two up to 32 splits the warp into segments) ---- */

static inline int
mt_emu_lane(void)
{
    return (int)((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u);
}
template <typename T>
static inline T
mt_emu_shfl(T v, int src)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "a shuffle moves 8 bytes");
    unsigned long long b = 0;
    memcpy(&b, &v, sizeof(v));
    b = mt_emu_warp_exchange(b, src);
    T r;
    memcpy(&r, &b, sizeof(r));
    return r;
}
template <typename T>
static inline T
__shfl_sync(unsigned mask, T v, int src, int width = 32)
{
    (void)mask;
    const int lane = mt_emu_lane();
    return mt_emu_shfl(v, (lane & ~(width - 1)) + (src & (width - 1)));
}
template <typename T>
static inline T
__shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    (void)mask;
    const int lane = mt_emu_lane();
    return mt_emu_shfl(v, (lane & (width - 1)) >= (int)delta ? lane - (int)delta : lane);
}
template <typename T>
static inline T
__shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    (void)mask;
    const int lane = mt_emu_lane();
    return mt_emu_shfl(v, (lane & (width - 1)) + (int)delta < width ? lane + (int)delta : lane);
}
template <typename T>
static inline T
__shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32)
{
    (void)mask;
    const int lane = mt_emu_lane(), src = lane ^ lane_mask;
    return mt_emu_shfl(v, (src & ~(width - 1)) == (lane & ~(width - 1)) ? src : lane);
}

#endif /* __cplusplus */

#endif
