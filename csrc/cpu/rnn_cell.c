/* The fused LSTM cell on the CPU (ops.def's _thnn_fused_lstm_cell and its _backward_impl): one
 * pass over each row of a step, where the composite (ops/rnn_cell.c) takes a dozen ops and as
 * many passes. The front ends (ops/rnn_cell.c) have checked shapes and dtypes; the math is the
 * one written there, in the composite's order of roundings, with the activations of the sigmoid
 * and tanh ops (cpu/vmath.h's for float32, core/math.h's and libm's for float64). */
#include <math.h>
#include <stdlib.h>

#include "core/math.h"
#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "cpu/vmath.h"
#include "dispatch/kernels.h"

#define CELL_GRAIN 16384 /* gate elements below which one thread runs the step */

static inline double
tanh_f64(double x)
{
    return tanh(x);
}

/* vmath.h's polynomials contract to FMAs here as in the sigmoid and tanh ops' own loops
 * (cpu/elementwise.c, whose note says why the choice is the caller's) */
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")

// one row: ig, hg (4H), ib, hb (4H) or NULL, cx (H) -> hy, cy (H), ws (4H) the activated gates;
// a pass per step (the sums, each gate's activation, the state), each a loop that vectorises
#define CELL_FORWARD_ROW(name, T, SIGMOID, TANH)                                             \
    MT_SIMD_CLONES static void name(const T *restrict ig, const T *restrict hg, const T *ib, \
                                    const T *hb, const T *restrict cx, T *restrict hy,       \
                                    T *restrict cy, T *restrict ws, int64_t h)               \
    {                                                                                        \
        for (int64_t j = 0; j < 4 * h; j++) {                                                \
            ws[j] = ig[j] + hg[j];                                                           \
        }                                                                                    \
        for (int64_t j = 0; ib && j < 4 * h; j++) {                                          \
            ws[j] = ws[j] + ib[j];                                                           \
        }                                                                                    \
        for (int64_t j = 0; hb && j < 4 * h; j++) {                                          \
            ws[j] = ws[j] + hb[j];                                                           \
        }                                                                                    \
        for (int64_t j = 0; j < 2 * h; j++) { /* i, f */                                     \
            ws[j] = SIGMOID(ws[j]);                                                          \
        }                                                                                    \
        for (int64_t j = 2 * h; j < 3 * h; j++) { /* g */                                    \
            ws[j] = TANH(ws[j]);                                                             \
        }                                                                                    \
        for (int64_t j = 3 * h; j < 4 * h; j++) { /* o */                                    \
            ws[j] = SIGMOID(ws[j]);                                                          \
        }                                                                                    \
        for (int64_t j = 0; j < h; j++) { /* cy = f cx + i g, hy = o tanh(cy) */             \
            const T c = ws[h + j] * cx[j] + ws[j] * ws[2 * h + j];                           \
            cy[j] = c;                                                                       \
            hy[j] = ws[3 * h + j] * TANH(c);                                                 \
        }                                                                                    \
    }
CELL_FORWARD_ROW(forward_row_f32, float, mt_vsigmoid_f32, mt_vtanh_f32)
CELL_FORWARD_ROW(forward_row_f64, double, mt_sigmoid_f64, tanh_f64)

// one row: gh, gc (H) or NULL, cx, cy (H), ws (4H) -> dg (4H) the gates' gradient, dcx (H);
// the body is compiled once for each pair of present gradients (its tests fold away, so the
// loop vectorises)
#define CELL_BACKWARD_ROW(name, T, TANH)                                                \
    static inline __attribute__((always_inline)) void name##_body(                      \
        const T *gh, const T *gc, const T *restrict cx, const T *restrict cy,           \
        const T *restrict ws, T *restrict dg, T *restrict dcx, int64_t h, bool has_gh,  \
        bool has_gc)                                                                    \
    {                                                                                   \
        for (int64_t j = 0; j < h; j++) {                                               \
            const T i = ws[j], f = ws[h + j], g = ws[2 * h + j], o = ws[3 * h + j];     \
            const T t = TANH(cy[j]), ghj = has_gh ? gh[j] : 0;                          \
            T gcy = ghj * o * (1 - t * t);                                              \
            if (has_gc) {                                                               \
                gcy = gc[j] + gcy;                                                      \
            }                                                                           \
            dg[j] = gcy * g * (i * (1 - i));                                            \
            dg[h + j] = gcy * cx[j] * (f * (1 - f));                                    \
            dg[2 * h + j] = gcy * i * (1 - g * g);                                      \
            dg[3 * h + j] = ghj * t * (o * (1 - o));                                    \
            dcx[j] = gcy * f;                                                           \
        }                                                                               \
    }                                                                                   \
    MT_SIMD_CLONES static void name(const T *gh, const T *gc, const T *cx, const T *cy, \
                                    const T *ws, T *dg, T *dcx, int64_t h)              \
    {                                                                                   \
        if (gh && gc) {                                                                 \
            name##_body(gh, gc, cx, cy, ws, dg, dcx, h, true, true);                    \
        } else if (gh) {                                                                \
            name##_body(gh, gc, cx, cy, ws, dg, dcx, h, true, false);                   \
        } else if (gc) {                                                                \
            name##_body(gh, gc, cx, cy, ws, dg, dcx, h, false, true);                   \
        } else {                                                                        \
            name##_body(gh, gc, cx, cy, ws, dg, dcx, h, false, false);                  \
        }                                                                               \
    }
CELL_BACKWARD_ROW(backward_row_f32, float, mt_vtanh_f32)
CELL_BACKWARD_ROW(backward_row_f64, double, tanh_f64)
#pragma GCC pop_options

/* One call's operands as bytes, by slot (NULL: absent), for the row loops. */
typedef struct cell_call {
    const char *in[5];
    char *out[3];
    int64_t h;
    bool f32;
} cell_call;

/* row r of a (rows, cols) operand at base, or NULL */
static void *
row_of(const void *base, int64_t r, int64_t cols, bool f32)
{
    return base ? (char *)base + (size_t)(r * cols) * (f32 ? sizeof(float) : sizeof(double)) : NULL;
}

/* forward: in ig, hg (B, 4H), cx (B, H), ib, hb (4H); out hy, cy (B, H), ws (B, 4H) */
static void
forward_row(const cell_call *c, int64_t r)
{
    const int64_t h = c->h, g = 4 * h;
    void *ig = row_of(c->in[0], r, g, c->f32), *hg = row_of(c->in[1], r, g, c->f32);
    void *cx = row_of(c->in[2], r, h, c->f32), *hy = row_of(c->out[0], r, h, c->f32);
    void *cy = row_of(c->out[1], r, h, c->f32), *ws = row_of(c->out[2], r, g, c->f32);
    if (c->f32) {
        forward_row_f32(ig, hg, (const float *)c->in[3], (const float *)c->in[4], cx, hy, cy, ws,
                        h);
    } else {
        forward_row_f64(ig, hg, (const double *)c->in[3], (const double *)c->in[4], cx, hy, cy, ws,
                        h);
    }
}

/* backward: in gh, gc (B, H) or NULL, cx, cy (B, H), ws (B, 4H); out dg (B, 4H), dcx (B, H) */
static void
backward_row(const cell_call *c, int64_t r)
{
    const int64_t h = c->h, g = 4 * h;
    void *gh = row_of(c->in[0], r, h, c->f32), *gc = row_of(c->in[1], r, h, c->f32);
    void *cx = row_of(c->in[2], r, h, c->f32), *cy = row_of(c->in[3], r, h, c->f32);
    void *ws = row_of(c->in[4], r, g, c->f32), *dg = row_of(c->out[0], r, g, c->f32);
    void *dcx = row_of(c->out[1], r, h, c->f32);
    if (c->f32) {
        backward_row_f32(gh, gc, cx, cy, ws, dg, dcx, h);
    } else {
        backward_row_f64(gh, gc, cx, cy, ws, dg, dcx, h);
    }
}

/* The call's rows through row (forward_row or backward_row), split among the threads: dense
 * copies (or references) of its inputs in[5], its first nout results (stated by the front end),
 * rows and h from the checked shapes. Releases in[]. */
static mt_status
run_rows(mt_args *a, void (*row)(const cell_call *, int64_t), int64_t rows, int64_t h, int nout)
{
    mt_tensor *in[5] = {NULL};
    cell_call c = {.h = h};
    mt_status st = MT_OK;
    for (int k = 0; k < 5 && st == MT_OK; k++) {
        st = a->t[k] ? mt_cpu_dense(a->t[k], a->t[k]->dtype, &in[k]) : MT_OK;
        c.in[k] = in[k] ? mt_tensor_data(in[k]) : NULL;
        c.f32 = in[k] ? in[k]->dtype == MT_FLOAT32 : c.f32;
    }
    for (int k = 0; k < nout; k++) {
        c.out[k] = mt_tensor_data(a->out[k]);
    }
    if (st == MT_OK) {
        const int parts = mt_parallel_parts(rows * 4 * h, CELL_GRAIN);
#pragma omp parallel for num_threads(parts) schedule(static)
        for (int64_t r = 0; r < rows; r++) {
            row(&c, r);
        }
    }
    for (int k = 0; k < 5; k++) {
        mt_tensor_clear(&in[k]);
    }
    return st;
}

// input_gates, hidden_gates (B, 4H), cx (B, H), input_bias, hidden_bias (4H) or None -> hy,
// cy (B, H), workspace (B, 4H)
mt_status
mt_cpu__thnn_fused_lstm_cell(mt_args *a)
{
    const int64_t b = a->t[0]->sizes[0], h = a->t[0]->sizes[1] / 4;
    return run_rows(a, forward_row, b, h, 3);
}

/* bias gradient out (4H) = the rows of dg (B, 4H) summed, in double as the sum op adds float32 */
static mt_status
bias_grad(const mt_tensor *dg, mt_tensor *out)
{
    const int64_t b = dg->sizes[0], n = dg->sizes[1];
    double *acc = calloc(n > 0 ? (size_t)n : 1, sizeof(double));
    if (acc == NULL) {
        return mt_fail(MT_ENOMEM, "_thnn_fused_lstm_cell_backward_impl: out of memory");
    }
    const bool f32 = dg->dtype == MT_FLOAT32;
    const void *d = mt_tensor_data(dg);
    void *o = mt_tensor_data(out);
    for (int64_t r = 0; r < b; r++) {
        for (int64_t j = 0; j < n; j++) {
            acc[j] += f32 ? ((const float *)d)[r * n + j] : ((const double *)d)[r * n + j];
        }
    }
    for (int64_t j = 0; j < n; j++) {
        if (f32) {
            ((float *)o)[j] = (float)acc[j];
        } else {
            ((double *)o)[j] = acc[j];
        }
    }
    free(acc);
    return MT_OK;
}

// grad_hy, grad_cy (B, H) or None, cx, cy (B, H), workspace (B, 4H), has_bias -> the gates'
// gradient (B, 4H), cx's (B, H), the biases' (4H) where has_bias
mt_status
mt_cpu__thnn_fused_lstm_cell_backward_impl(mt_args *a)
{
    const int64_t b = a->t[2]->sizes[0], h = a->t[2]->sizes[1];
    mt_status st = run_rows(a, backward_row, b, h, 2);
    if (st == MT_OK && a->b[0]) {
        st = bias_grad(a->out[0], a->out[2]);
    }
    return st;
}
