/* The upsample ops on the CPU (nearest, nearest-exact, linear, bilinear, bicubic, trilinear; 1, 2
 * or 3 spatial dims) and their backwards: one separable kernel each way. Each dim's taps and
 * weights are tabulated once per call (core/resample_math.h, PyTorch's rules); a forward point
 * is the weighted sum over its taps, an inner dim's sum before the outer dim's weight as in
 * PyTorch's generic CPU kernel, and the backward adds each output's gradient times its taps'
 * weight products into the input's gradient in PyTorch's order, so both match its results
 * (PyTorch's channels-last kernel, which it also takes for outputs of H + W <= 128, rounds
 * differently: there the forward differs in the last bit). The checks and the plan are the
 * front end's (ops/upsample.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/fails.h"
#include "ops/front.h"

/* Per dim (depth, height, width; the ones an op lacks have in = out = 1): its taps, and for
 * output position i the input index idx[k * out + i] and weight w[k * out + i] of tap k. */
typedef struct {
    int taps[3];
    int64_t *idx[3];
    void *w[3];
} tables;

static void
free_tables(tables *tb)
{
    for (int d = 0; d < 3; d++) {
        free(tb->idx[d]);
        free(tb->w[d]);
    }
}

static mt_status
make_tables(const mt_resample_plan *r, mt_dtype dt, bool back, tables *tb)
{
    *tb = (tables){{0}};
    const size_t item = dt == MT_FLOAT64 ? sizeof(double) : sizeof(float);
    for (int d = 0; d < 3; d++) {
        const int mode = d < 3 - r->nd ? MT_RESAMPLE_NEAREST : r->mode;
        const int64_t out = r->out[d];
        const int taps = mt_resample_taps_of(mode);
        tb->taps[d] = taps;
        tb->idx[d] = malloc(sizeof(int64_t) * (size_t)(taps * out));
        tb->w[d] = malloc(item * (size_t)(taps * out));
        if (tb->idx[d] == NULL || tb->w[d] == NULL) {
            free_tables(tb);
            return mt_fail(MT_ENOMEM, "out of memory");
        }
        for (int64_t i = 0; i < out; i++) {
            int64_t idx[MT_RESAMPLE_MAX_TAPS];
            float wf[MT_RESAMPLE_MAX_TAPS];
            double wd[MT_RESAMPLE_MAX_TAPS];
            if (dt == MT_FLOAT64) {
                mt_resample_taps_f64(mode, r->align, back, r->in[d], out, r->scales[d], i, idx, wd);
            } else {
                mt_resample_taps_f32(mode, r->align, back, r->in[d], out, r->scales[d], i, idx, wf);
            }
            for (int k = 0; k < taps; k++) {
                tb->idx[d][k * out + i] = idx[k];
                if (dt == MT_FLOAT64) {
                    ((double *)tb->w[d])[k * out + i] = wd[k];
                } else {
                    ((float *)tb->w[d])[k * out + i] = wf[k];
                }
            }
        }
    }
    return MT_OK;
}

#define UPSAMPLE_BLOCK 256 /* outputs of a row summed at a time: their partial sums fit in L1 */

/* x (P, ID, IH, IW) -> out (P, OD, OH, OW), the rows (p, od, oh) in [row0, row1). The sums
 * are PyTorch's CPU kernel's as its compiler contracts them (FMA, fma or fmaf): along each dim
 * the last tap's product first, each earlier tap's fused into it. A row is computed a block of
 * outputs at a time, one input line (tap kd, kh) after another: the same operations in the
 * same order for each output, in loops over the outputs that the compiler vectorises. Compiled
 * for the CPUs with an FMA instruction too (MT_SIMD_CLONES), where fma is that instruction
 * rather than a call of libm's emulation; the results are the same bits. */
#define UPSAMPLE_FORWARD(T, SFX, FMA)                                                              \
    /* vh[i] = (first ? 0 : vh[i]) + w * (the sum over the tw taps of line at output o0 + i) */    \
    static inline __attribute__((always_inline)) void line_##SFX(const T *line, const int64_t *jw, \
                                                                 const T *ww, int64_t OW, int tw,  \
                                                                 int64_t o0, int64_t n,            \
                                                                 bool first, T w, T *vh)           \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            const int64_t last = (tw - 1) * OW + o0 + i;                                           \
            T vw = line[jw[last]] * ww[last];                                                      \
            for (int kw = tw - 2; kw >= 0; kw--) {                                                 \
                vw = FMA(line[jw[kw * OW + o0 + i]], ww[kw * OW + o0 + i], vw);                    \
            }                                                                                      \
            vh[i] = first ? vw * w : FMA(vw, w, vh[i]);                                            \
        }                                                                                          \
    }                                                                                              \
    MT_SIMD_CLONES static void forward_##SFX(const mt_resample_plan *r, const tables *tb,          \
                                             const T *x, T *out, int64_t row0, int64_t row1)       \
    {                                                                                              \
        const int64_t OD = r->out[0], OH = r->out[1], OW = r->out[2];                              \
        const int64_t IH = r->in[1], IW = r->in[2], plane = r->in[0] * IH * IW;                    \
        const T *wd = (const T *)tb->w[0], *wh = (const T *)tb->w[1], *ww = (const T *)tb->w[2];   \
        const int64_t *jd = tb->idx[0], *jh = tb->idx[1], *jw = tb->idx[2];                        \
        const int td = tb->taps[0], th = tb->taps[1], tw = tb->taps[2];                            \
        T vh[UPSAMPLE_BLOCK];                                                                      \
        for (int64_t row = row0; row < row1; row++) {                                              \
            const int64_t p = row / (OD * OH), od = row / OH % OD, oh = row % OH;                  \
            const T *src = x + p * plane;                                                          \
            T *dst = out + row * OW;                                                               \
            for (int64_t o0 = 0; o0 < OW; o0 += UPSAMPLE_BLOCK) {                                  \
                const int64_t n = OW - o0 < UPSAMPLE_BLOCK ? OW - o0 : UPSAMPLE_BLOCK;             \
                for (int kd = td - 1; kd >= 0; kd--) {                                             \
                    for (int kh = th - 1; kh >= 0; kh--) {                                         \
                        const T *line = src + (jd[kd * OD + od] * IH + jh[kh * OH + oh]) * IW;     \
                        const T w = wh[kh * OH + oh];                                              \
                        const bool first = kh == th - 1;                                           \
                        if (tw == 1) { /* nearest */                                               \
                            line_##SFX(line, jw, ww, OW, 1, o0, n, first, w, vh);                  \
                        } else if (tw == 2) { /* linear */                                         \
                            line_##SFX(line, jw, ww, OW, 2, o0, n, first, w, vh);                  \
                        } else {                                                                   \
                            line_##SFX(line, jw, ww, OW, tw, o0, n, first, w, vh);                 \
                        }                                                                          \
                    }                                                                              \
                    const T w = wd[kd * OD + od];                                                  \
                    T *o = dst + o0;                                                               \
                    if (kd == td - 1) {                                                            \
                        for (int64_t i = 0; i < n; i++) {                                          \
                            o[i] = vh[i] * w;                                                      \
                        }                                                                          \
                    } else {                                                                       \
                        for (int64_t i = 0; i < n; i++) {                                          \
                            o[i] = FMA(vh[i], w, o[i]);                                            \
                        }                                                                          \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

/* go (P, OD, OH, OW) -> gin (P, ID, IH, IW), zeroed, the planes in [p0, p1): each output's
 * gradient times its taps' weights (depth's times height's times width's) added into them,
 * the multiply by the gradient fused into the add as PyTorch's compiled kernel has it. */
#define UPSAMPLE_BACKWARD(T, SFX, FMA)                                                           \
    MT_SIMD_CLONES static void backward_##SFX(const mt_resample_plan *r, const tables *tb,       \
                                              const T *go, T *gin, int64_t p0, int64_t p1)       \
    {                                                                                            \
        const int64_t OD = r->out[0], OH = r->out[1], OW = r->out[2];                            \
        const int64_t IH = r->in[1], IW = r->in[2], plane = r->in[0] * IH * IW;                  \
        const T *wd = (const T *)tb->w[0], *wh = (const T *)tb->w[1], *ww = (const T *)tb->w[2]; \
        const int64_t *jd = tb->idx[0], *jh = tb->idx[1], *jw = tb->idx[2];                      \
        for (int64_t p = p0; p < p1; p++) {                                                      \
            const T *src = go + p * OD * OH * OW;                                                \
            T *dst = gin + p * plane;                                                            \
            for (int64_t od = 0; od < OD; od++) {                                                \
                for (int64_t oh = 0; oh < OH; oh++) {                                            \
                    for (int64_t ow = 0; ow < OW; ow++) {                                        \
                        const T g = *src++;                                                      \
                        for (int kd = 0; kd < tb->taps[0]; kd++) {                               \
                            for (int kh = 0; kh < tb->taps[1]; kh++) {                           \
                                const T wdh = wd[kd * OD + od] * wh[kh * OH + oh];               \
                                T *line = dst + (jd[kd * OD + od] * IH + jh[kh * OH + oh]) * IW; \
                                for (int kw = 0; kw < tb->taps[2]; kw++) {                       \
                                    T *at = line + jw[kw * OW + ow];                             \
                                    *at = FMA(wdh * ww[kw * OW + ow], g, *at);                   \
                                }                                                                \
                            }                                                                    \
                        }                                                                        \
                    }                                                                            \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }
UPSAMPLE_FORWARD(float, f32, fmaf)
UPSAMPLE_FORWARD(double, f64, fma)
UPSAMPLE_BACKWARD(float, f32, fmaf)
UPSAMPLE_BACKWARD(double, f64, fma)

/* Runs the forward (back false: src the input, dst sized (N, C, *out)) or the backward (src
 * grad_output, dst (N, C, *in), zeroed) of the plan into dst, the result a->out[0]. */
static mt_status
run(mt_args *a, bool back)
{
    const mt_resample_plan *r = &a->plan->resample;
    mt_tensor *src = NULL, *dst = a->out[0];
    const mt_dtype dt = a->t[0]->dtype;
    if (dt != MT_FLOAT32 && dt != MT_FLOAT64) {
        return mt_fail_not_implemented(back ? "upsample_backward" : "upsample", "", dt);
    }
    tables tb;
    mt_status st = make_tables(r, dt, back, &tb);
    if (st) {
        return st;
    }
    if ((st = mt_cpu_dense(a->t[0], dt, &src))) {
        goto out_release;
    }
    const int64_t rows = r->planes * r->out[0] * r->out[1];
    const int64_t work = rows * r->out[2] * tb.taps[0] * tb.taps[1] * tb.taps[2];
    const int parts = mt_parallel_parts(work, 32768);
    const void *sd = mt_tensor_data(src);
    void *dd = mt_tensor_data(dst);
    if (back) {
        /* threads over planes: the taps of one plane's outputs overlap */
        memset(mt_tensor_data(dst), 0, (size_t)mt_tensor_numel(dst) * mt_dtype_size(dt));
#pragma omp parallel for num_threads(parts) schedule(static)
        for (int part = 0; part < parts; part++) {
            const int64_t p0 = r->planes * part / parts, p1 = r->planes * (part + 1) / parts;
            if (dt == MT_FLOAT64) {
                backward_f64(r, &tb, sd, dd, p0, p1);
            } else {
                backward_f32(r, &tb, sd, dd, p0, p1);
            }
        }
    } else {
#pragma omp parallel for num_threads(parts) schedule(static)
        for (int part = 0; part < parts; part++) {
            const int64_t r0 = rows * part / parts, r1 = rows * (part + 1) / parts;
            if (dt == MT_FLOAT64) {
                forward_f64(r, &tb, sd, dd, r0, r1);
            } else {
                forward_f32(r, &tb, sd, dd, r0, r1);
            }
        }
    }
out_release:
    mt_tensor_clear(&src);
    free_tables(&tb);
    return st;
}

// self (N, C, *in); out (N, C, *output_size): the upsample_* ops
mt_status
mt_cpu_upsample(mt_args *a)
{
    return run(a, false);
}

// grad_output (N, C, *output_size), input_size (N, C, *in); out (N, C, *in): their backwards
mt_status
mt_cpu_upsample_backward(mt_args *a)
{
    return run(a, true);
}
