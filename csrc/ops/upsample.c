/* Upsampling (torch.nn.functional.interpolate's ops, torch._C._nn's upsample_*): nearest,
 * nearest-exact, linear (1, 2 or 3 spatial dims) and bicubic, as composites: one spatial dim at
 * a time, last first, the output is a weighted sum of taps gathered by index_select with index
 * vectors and per-position weights computed here by PyTorch's rules (UpSample.h: its source
 * index, its float arithmetic for float32 input, its clamps), so autograd and every device come
 * from index_select, lerp (linear) and mul/addcmul (bicubic). Separable, the inner dim's taps
 * first as PyTorch's. PyTorch's checks and messages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/fails.h"
#include "ops/ops.h"

#define MAX_TAPS 4   /* bicubic's */
#define CUBIC_A -0.75 /* PyTorch's bicubic convolution constant */

typedef enum { NEAREST, NEAREST_EXACT, LINEAR, CUBIC } mode;

/* The source positions (taps per output position: idx[k * out + i]) and weights along one dim
 * of size in resized to out, PyTorch's UpSample.h in T, its opmath type; scale_opt <= 0 for
 * none. Weights are rounded to the input's dtype later (T is that dtype or float). */
#define COORDS(T)                                                                              \
    static void coords_##T(mode m, int64_t in, int64_t out, bool align, double scale_opt,      \
                           int64_t *idx, double *w)                                            \
    {                                                                                          \
        T scale = align ? (out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0)                        \
                        : (scale_opt > 0 ? (T)(1.0 / scale_opt) : (T)in / (T)out);             \
        for (int64_t i = 0; i < out; i++) {                                                    \
            /* nearest is align_corners' source index, nearest-exact the half-pixel one */     \
            bool half = m == NEAREST ? false : m == NEAREST_EXACT ? true : !align;             \
            T real = half ? scale * ((T)i + (T)0.5) - (T)0.5 : scale * (T)i;                   \
            if (m != CUBIC && real < 0) {                                                      \
                real = 0;                                                                      \
            }                                                                                  \
            if (m == NEAREST || m == NEAREST_EXACT) {                                          \
                int64_t j = (int64_t)floorf((float)(m == NEAREST ? real : real + (T)0.5));     \
                idx[i] = j < in - 1 ? j : in - 1;                                              \
                w[i] = 1;                                                                      \
                continue;                                                                      \
            }                                                                                  \
            int64_t i0 = (int64_t)floorf((float)real);                                         \
            i0 = i0 < in - 1 ? i0 : in - 1;                                                    \
            T t = real - (T)i0;                                                                \
            t = t < 0 ? 0 : t > 1 ? 1 : t;                                                     \
            if (m == LINEAR) {                                                                 \
                /* same size: a copy (PyTorch's compute_source_index_and_lambda) */            \
                bool same = out == in;                                                         \
                idx[i] = same ? i : i0;                                                        \
                idx[out + i] = same ? i : i0 + (i0 < in - 1 ? 1 : 0);                          \
                w[out + i] = same ? 0 : (double)t;                                             \
                continue;                                                                      \
            }                                                                                  \
            T x1 = t, x2 = (T)1 - t, A = (T)CUBIC_A;                                           \
            w[i] = (double)(((A * (x1 + 1) - 5 * A) * (x1 + 1) + 8 * A) * (x1 + 1) - 4 * A);   \
            w[out + i] = (double)(((A + 2) * x1 - (A + 3)) * x1 * x1 + 1);                     \
            w[2 * out + i] = (double)(((A + 2) * x2 - (A + 3)) * x2 * x2 + 1);                 \
            w[3 * out + i] = (double)(((A * (x2 + 1) - 5 * A) * (x2 + 1) + 8 * A) * (x2 + 1) - \
                                      4 * A);                                                  \
            for (int k = 0; k < 4; k++) {                                                      \
                int64_t j = i0 - 1 + k;                                                        \
                idx[k * out + i] = j < 0 ? 0 : j > in - 1 ? in - 1 : j;                        \
            }                                                                                  \
        }                                                                                      \
    }
COORDS(float)
COORDS(double)

static int
taps_of(mode m)
{
    return m == LINEAR ? 2 : m == CUBIC ? 4 : 1;
}

/* A new CPU tensor of n values v in dtype dt, shaped (n, 1, ..., 1) with ones trailing ones,
 * moved to dev */
static mt_status
column(mt_dtype dt, bool ints, const void *v, int64_t n, int ones, mt_device dev, mt_tensor **out)
{
    int64_t shape[MT_MAX_DIMS];
    shape[0] = n;
    for (int d = 1; d <= ones; d++) {
        shape[d] = 1;
    }
    mt_tensor *t = NULL;
    mt_status st = mt_tensor_empty(1 + ones, shape, dt, MT_DEVICE_CPU, &t);
    if (st) {
        return st;
    }
    for (int64_t i = 0; i < n; i++) {
        if (ints) {
            ((int64_t *)mt_tensor_data(t))[i] = ((const int64_t *)v)[i];
        } else if (dt == MT_FLOAT32) {
            ((float *)mt_tensor_data(t))[i] = (float)((const double *)v)[i];
        } else {
            ((double *)mt_tensor_data(t))[i] = ((const double *)v)[i];
        }
    }
    if (dev.type == MT_CPU) {
        *out = t;
        return MT_OK;
    }
    st = mt_op__to_copy(t, dt, dev, out);
    mt_tensor_release(t);
    return st;
}

/* x gathered at idx along dim, into *acc: times w (NULL: 1) as the first tap (*acc NULL), then
 * *acc + g * w (addcmul), or with lerp the linear mode's *acc + w * (g - *acc): one
 * elementwise op per tap */
static mt_status
add_tap(mt_tensor *x, int dim, mt_tensor *idx, mt_tensor *w, bool lerp, mt_tensor **acc)
{
    mt_tensor *g = NULL, *r = NULL;
    mt_status st = mt_op_index_select(x, dim, idx, &g);
    if (st == MT_OK && *acc == NULL && w == NULL) {
        *acc = g;
        return MT_OK;
    }
    if (st == MT_OK) {
        st = *acc == NULL ? mt_op_mul(g, w, &r)
             : lerp       ? mt_op_lerp(*acc, g, w, &r)
                          : mt_op_addcmul(*acc, g, w, mt_scalar_int(1), &r);
    }
    mt_tensor_clear(&g);
    if (st == MT_OK) {
        mt_tensor_clear(acc);
        *acc = r;
    }
    return st;
}

/* x resized along dim (to out) into *res */
static mt_status
resize_dim(mt_tensor *x, int dim, int64_t out, mode m, bool align, double scale, mt_tensor **res)
{
    int64_t in = x->sizes[dim], taps = taps_of(m);
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(taps * out + 1));
    double *w = malloc(sizeof(double) * (size_t)(taps * out + 1));
    mt_status st = MT_OK;
    if (idx == NULL || w == NULL) {
        st = mt_fail(MT_ENOMEM, "out of memory");
        goto out_free;
    }
    (x->dtype == MT_FLOAT64 ? coords_double : coords_float)(m, in, out, align, scale, idx, w);
    mt_tensor *acc = NULL;
    for (int k = 0; k < taps && st == MT_OK; k++) {
        mt_tensor *it = NULL, *wt = NULL;
        st = column(MT_INT64, true, idx + k * out, out, 0, mt_tensor_device(x), &it);
        if (st == MT_OK && taps > 1 && !(m == LINEAR && k == 0)) { /* lerp reads lambda1 */
            st = column(x->dtype, false, w + k * out, out, x->ndim - 1 - dim, mt_tensor_device(x),
                        &wt);
        }
        if (st == MT_OK) {
            st = add_tap(x, dim, it, wt, m == LINEAR, &acc);
        }
        mt_tensor_clear(&it);
        mt_tensor_clear(&wt);
    }
    if (st) {
        mt_tensor_clear(&acc);
    } else {
        *res = acc;
    }
out_free:
    free(idx);
    free(w);
    return st;
}

/* PyTorch's upsample_{1,2,3}d_common_check and dtype check; n spatial dims */
static mt_status
check(const mt_tensor *x, const mt_intlist *size, int n, const char *kernel)
{
    static const char *const label[] = {"D", "H", "W"};
    if (x->ndim != n + 2) {
        return mt_fail(MT_ERUNTIME, "It is expected input_size equals to %d, but got size %d",
                       n + 2, x->ndim);
    }
    if (size->n != n) {
        return mt_fail(MT_ERUNTIME, "It is expected output_size equals to %d, but got size %d", n,
                       size->n);
    }
    bool positive = true;
    char ins[128] = "", outs[128] = "";
    size_t li = 0, lo = 0;
    for (int d = 0; d < n; d++) {
        const char *sep = d ? ", " : "";
        positive = positive && x->sizes[2 + d] > 0 && size->v[d] > 0;
        li += (size_t)snprintf(ins + li, sizeof(ins) - li, "%s%s: %lld", sep, label[3 - n + d],
                               (long long)x->sizes[2 + d]);
        lo += (size_t)snprintf(outs + lo, sizeof(outs) - lo, "%s%s: %lld", sep, label[3 - n + d],
                               (long long)size->v[d]);
    }
    if (!positive) {
        return mt_fail(MT_ERUNTIME,
                       "Input and output sizes should be greater than 0, but got input (%s) "
                       "output (%s)",
                       ins, outs);
    }
    if (!mt_dtype_is_float(x->dtype)) {
        return mt_fail_not_implemented(kernel, "", x->dtype);
    }
    return MT_OK;
}

// input (N, C, *in), output_size (n ints), then align_corners for the interpolating modes,
// then n optional scales (Scalar? slots s[0..n)); out (N, C, *output_size)
static mt_status
upsample(mt_args *a, int n, mode m, const char *kernel)
{
    mt_tensor *x = a->t[0];
    const mt_intlist *size = &a->l[0];
    bool align = m == LINEAR || m == CUBIC ? a->b[0] : false;
    mt_status st = check(x, size, n, kernel);
    if (st) {
        return st;
    }
    mt_tensor *cur = mt_tensor_retain(x), *next = NULL;
    for (int d = n - 1; d >= 0 && st == MT_OK; d--) {
        double scale = mt_scalar_is_none(a->s[d]) ? 0 : mt_scalar_to_double(a->s[d]);
        if ((st = resize_dim(cur, 2 + d, size->v[d], m, align, scale, &next)) == MT_OK) {
            mt_tensor_release(cur);
            cur = next;
        }
    }
    if (st) {
        mt_tensor_release(cur);
        return st;
    }
    a->out[0] = cur;
    return MT_OK;
}

/* one composite per PyTorch op: spatial dims, mode, the kernel named in a dtype error */
#define UPSAMPLE(name, n, m, kernel)          \
    mt_status mt_composite_##name(mt_args *a) \
    {                                         \
        return upsample(a, n, m, kernel);     \
    }
UPSAMPLE(upsample_nearest1d, 1, NEAREST, "compute_indices_weights_nearest")
UPSAMPLE(upsample_nearest2d, 2, NEAREST, "upsample_nearest2d_channels_last")
UPSAMPLE(upsample_nearest3d, 3, NEAREST, "compute_indices_weights_nearest")
UPSAMPLE(_upsample_nearest_exact1d, 1, NEAREST_EXACT, "compute_indices_weights_nearest")
UPSAMPLE(_upsample_nearest_exact2d, 2, NEAREST_EXACT, "upsample_nearest2d_channels_last")
UPSAMPLE(_upsample_nearest_exact3d, 3, NEAREST_EXACT, "compute_indices_weights_nearest")
UPSAMPLE(upsample_linear1d, 1, LINEAR, "compute_indices_weights_linear")
UPSAMPLE(upsample_bilinear2d, 2, LINEAR, "upsample_bilinear2d_channels_last")
UPSAMPLE(upsample_trilinear3d, 3, LINEAR, "compute_indices_weights_linear")
UPSAMPLE(upsample_bicubic2d, 2, CUBIC, "compute_indices_weights_cubic")
