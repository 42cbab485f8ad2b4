// The upsample ops (every mode, 1 to 3 spatial dims) and their backwards: the CPU's separable
// sums (cpu/upsample.c) with a thread per output point, which works out its taps itself
// (core/resample_math.h); the backward adds each point's share into the input's gradient with
// atomicAdd, since neighbouring points share taps.
#include "cuda/grid_stride.h"
#include "cuda/kernels.h"
#include "cuda/upsample.h"

// dim d's taps of output position o, in T, for the forward or the backward (the dims an op
// lacks: one tap of weight 1)
static __device__ __forceinline__ int
taps(const mt_resample_plan &r, bool back, int d, int64_t o, int64_t *idx, float *w)
{
    const int mode = d < 3 - r.nd ? MT_RESAMPLE_NEAREST : r.mode;
    mt_resample_taps_f32(mode, r.align, back, r.in[d], r.out[d], r.scales[d], o, idx, w);
    return mt_resample_taps_of(mode);
}

static __device__ __forceinline__ int
taps(const mt_resample_plan &r, bool back, int d, int64_t o, int64_t *idx, double *w)
{
    const int mode = d < 3 - r.nd ? MT_RESAMPLE_NEAREST : r.mode;
    mt_resample_taps_f64(mode, r.align, back, r.in[d], r.out[d], r.scales[d], o, idx, w);
    return mt_resample_taps_of(mode);
}

// output point e of (P, OD, OH, OW): its plane's offset in the input (P, ID, IH, IW) and, per
// dim (depth, height, width), its n taps, their indices j and weights w
template <typename T> struct point {
    int64_t plane;
    int n[3];
    int64_t j[3][MT_RESAMPLE_MAX_TAPS];
    T w[3][MT_RESAMPLE_MAX_TAPS];
};

template <typename T>
static __device__ __forceinline__ void
locate(const mt_resample_plan &r, bool back, int64_t e, point<T> *q)
{
    int64_t rest = e;
    for (int d = 2; d >= 0; d--) {
        q->n[d] = taps(r, back, d, rest % r.out[d], q->j[d], q->w[d]);
        rest /= r.out[d];
    }
    q->plane = rest * r.in[0] * r.in[1] * r.in[2];
}

static __device__ __forceinline__ float
fused(float a, float b, float c)
{
    return fmaf(a, b, c);
}

static __device__ __forceinline__ double
fused(double a, double b, double c)
{
    return fma(a, b, c);
}

// x (P, ID, IH, IW) -> out (P, OD, OH, OW), summed in the CPU kernel's order (the last tap's
// product first, each earlier one fused into it, along each dim)
template <typename T>
__global__ void
upsample_forward_kernel(mt_resample_plan r, const T *x, T *out)
{
    MT_CUDA_GRID_STRIDE(e, r.planes * r.out[0] * r.out[1] * r.out[2])
    {
        point<T> q;
        locate(r, false, e, &q);
        T vd = 0;
        for (int kd = q.n[0] - 1; kd >= 0; kd--) {
            T vh = 0;
            for (int kh = q.n[1] - 1; kh >= 0; kh--) {
                const T *line = x + q.plane + (q.j[0][kd] * r.in[1] + q.j[1][kh]) * r.in[2];
                const int last = q.n[2] - 1;
                T vw = line[q.j[2][last]] * q.w[2][last];
                for (int kw = last - 1; kw >= 0; kw--) {
                    vw = fused(line[q.j[2][kw]], q.w[2][kw], vw);
                }
                vh = kh == q.n[1] - 1 ? vw * q.w[1][kh] : fused(vw, q.w[1][kh], vh);
            }
            vd = kd == q.n[0] - 1 ? vh * q.w[0][kd] : fused(vh, q.w[0][kd], vd);
        }
        out[e] = vd;
    }
}

// go (P, OD, OH, OW) -> gin (P, ID, IH, IW) += each tap's weight product times go, atomically
template <typename T>
__global__ void
upsample_backward_kernel(mt_resample_plan r, const T *go, T *gin)
{
    MT_CUDA_GRID_STRIDE(e, r.planes * r.out[0] * r.out[1] * r.out[2])
    {
        point<T> q;
        locate(r, true, e, &q);
        const T g = go[e];
        for (int kd = 0; kd < q.n[0]; kd++) {
            for (int kh = 0; kh < q.n[1]; kh++) {
                const T wdh = q.w[0][kd] * q.w[1][kh];
                T *line = gin + q.plane + (q.j[0][kd] * r.in[1] + q.j[1][kh]) * r.in[2];
                for (int kw = 0; kw < q.n[2]; kw++) {
                    atomicAdd(line + q.j[2][kw], wdh * q.w[2][kw] * g);
                }
            }
        }
    }
}

extern "C" const void *
mt_cuda_upsample_kernel(mt_dtype dt, int back)
{
    switch (dt) {
    case MT_FLOAT32:
        return back ? MT_KERNEL_PTR(upsample_backward_kernel<float>)
                    : MT_KERNEL_PTR(upsample_forward_kernel<float>);
    case MT_FLOAT64:
        return back ? MT_KERNEL_PTR(upsample_backward_kernel<double>)
                    : MT_KERNEL_PTR(upsample_forward_kernel<double>);
    default:
        return NULL;
    }
}
