/* The CPU's part of the elementwise family: the inner loops of ops/elementwise.def's rows,
 * generated from the table (each a call of its core/math.h function), the device struct the
 * front end (ops/elementwise.c) runs them through, and the kernels of ops.def, generated from
 * the table too. No check, dtype rule or message lives here.
 *
 * Also the driver other CPU kernels (loss.c) share: core/elementwise.c's plan around one
 * iterator run of a loop. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/math.h"
#include "cpu/copy.h"
#include "cpu/elementwise.h"
#include "cpu/loops.h"
#include "cpu/vmath.h"
#include "cpu/vmath_avx512.h"
#include "dispatch/kernels.h"
#include "ops/elementwise.h"
#include "ops/elementwise_table.h"

static const mt_ew_backend cpu_backend = {mt_cpu_cast, mt_cpu_copy_into, false};

mt_status
mt_cpu_elementwise(mt_tensor *const *ins, int nin, mt_dtype compute, mt_loop_fn loop, void *ctx,
                   bool inplace, mt_tensor **out)
{
    mt_dtype in_dtypes[MT_ITER_MAX_OPS];
    for (int k = 0; k < nin && k < MT_ITER_MAX_OPS; k++) {
        in_dtypes[k] = compute;
    }
    return mt_cpu_elementwise_typed(ins, nin, in_dtypes, compute, loop, ctx, inplace, out);
}

/* ---- streaming a large output past the caches ---- */

/* Outputs of at least this many bytes are written with non-temporal stores: a plain store
 * first reads its cache line from memory (a 4M-element float32 add moved 64 MiB instead of 48
 * and ran at 0.65x NumPy's speed), and an output this large, beside its inputs, would not stay
 * in the caches for its reader anyway (32 MiB of L3 here). Below it the output stays cached for
 * the next op. The whole output counts, not one thread's part of it: the choice is the same at
 * any number of threads. */
#define MT_STREAM_MIN_BYTES (8 << 20)
/* Elements a loop writes into the L1 buffer at a time, before they stream out. */
#define MT_STREAM_BLOCK_BYTES 2048
/* A dense run of the output shorter than this is stored as usual: the copy through the buffer
 * would cost more than the line reads it saves. */
#define MT_STREAM_MIN_RUN_BYTES 4096

/* The row's loop and context, the output's element size, the operands (the output's first),
 * whether the output is large enough to stream. */
typedef struct stream_ctx {
    mt_loop_fn loop;
    void *ctx;
    int64_t item;
    int nops;
    bool large;
} stream_ctx;

/* dst[0 .. bytes) = src[0 .. bytes) with non-temporal stores where the ISA has them (SSE2,
 * every x86-64): 16-byte aligned stores after a plain head, a plain tail. */
static void
stream_copy(char *dst, const char *src, size_t bytes)
{
#ifdef __SSE2__
    size_t head = (size_t)(-(uintptr_t)dst & 15);
    head = head < bytes ? head : bytes;
    memcpy(dst, src, head);
    size_t i = head;
    for (; i + 16 <= bytes; i += 16) {
        _mm_stream_si128((__m128i *)(dst + i), _mm_loadu_si128((const __m128i *)(src + i)));
    }
    memcpy(dst + i, src + i, bytes - i);
#else
    memcpy(dst, src, bytes);
#endif
}

/* The loop of s over n elements; where the whole output is large, a dense run of it (of
 * MT_STREAM_MIN_RUN_BYTES or more) goes through an L1 buffer, block by block, and out with
 * stream_copy (the other operands advance as the loop would move them). */
static void
streaming_loop(char **data, const int64_t *strides, int64_t n, void *vs)
{
    const stream_ctx *s = vs;
    if (!s->large || strides[0] != s->item || n * s->item < MT_STREAM_MIN_RUN_BYTES) {
        s->loop(data, strides, n, s->ctx);
        return;
    }
    _Alignas(64) char buf[MT_STREAM_BLOCK_BYTES];
    const int64_t block = MT_STREAM_BLOCK_BYTES / s->item;
    char *ops[MT_ITER_MAX_OPS] = {NULL};
    memcpy(ops, data, (size_t)s->nops * sizeof(ops[0]));
    char *dst = data[0];
    for (int64_t i0 = 0; i0 < n; i0 += block) {
        const int64_t m = n - i0 < block ? n - i0 : block;
        ops[0] = buf;
        s->loop(ops, strides, m, s->ctx);
        stream_copy(dst + i0 * s->item, buf, (size_t)(m * s->item));
        for (int k = 1; k < s->nops; k++) {
            ops[k] += m * strides[k];
        }
    }
#ifdef __SSE2__
    _mm_sfence(); /* the streamed stores are seen before the op returns */
#endif
}

/* loop over the plan's operands, on the threads, its output streamed where it is large. */
static mt_status
run_plan(const mt_ew_plan *p, mt_loop_fn loop, void *ctx)
{
    mt_iter it;
    mt_status st = mt_iter_build_any_order(&it, p->ndim, p->shape, p->ops, p->nin + 1);
    if (st == MT_OK) {
        const int64_t item = (int64_t)mt_dtype_size(p->ops[0]->dtype);
        /* An output that is also an input (in place: x.add_(y), an optimizer's step) has its
         * lines read by the loop already, so a plain store costs no extra read, and streaming it
         * would only push out of the caches what the next op reads (a (4M,) float32 add_ took
         * 1.7x PyTorch's time with its output streamed). */
        const bool large = !p->out_is_input &&
                           mt_numel(p->ndim, p->shape) * item >= MT_STREAM_MIN_BYTES;
        stream_ctx s = {loop, ctx, item, p->nin + 1, large};
        mt_iter_run_parallel(&it, streaming_loop, &s);
    }
    return st;
}

mt_status
mt_cpu_elementwise_typed(mt_tensor *const *ins, int nin, const mt_dtype *in_dtypes, mt_dtype result,
                         mt_loop_fn loop, void *ctx, bool inplace, mt_tensor **out)
{
    mt_ew_plan p;
    mt_status st = mt_ew_begin(&p, &cpu_backend, ins, nin, in_dtypes, result, inplace, NULL);
    if (st) {
        return st;
    }
    return mt_ew_end(&p, run_plan(&p, loop, ctx), out);
}

/* ---- the table's loops ---- */

/* A loop's context: the row's scalars k, k2, k3 stored in the loop's dtype, and what the loop
 * reports back: it met a zero integer divisor (atomic: mt_iter_run_parallel may run it on
 * several threads at once). */
typedef struct ew_ctx {
    _Alignas(16) char k[MT_EW_MAX_K][16]; /* a complex128 scalar takes 16 bytes */
    atomic_bool zero_div;
} ew_ctx;

/* Whether T is an integer type (a constant the compiler folds). */
#define IS_INTEGER(T) ((T)0.5 == 0)

/* Operand k's element i, for an inner loop over n elements: unit stride and stride 0 (a
 * broadcast or a number) take the vectorisable loops, any other stride one loop. */
#define UNIT(Tk, k) (strides[k] == (int64_t)sizeof(Tk))
#define UNIT_OR_0(Tk, k) (strides[k] == 0 || strides[k] == (int64_t)sizeof(Tk))

/* The real dtypes' loops are built for AVX-512 and AVX2 too (MT_SIMD_CLONES), as vmath.h's
 * loops below are: x86-64's SSE2 moves 16 bytes an instruction, and in a loop bound by memory
 * the longer instruction stream leaves fewer cache misses in flight. A 4M-float32 add
 * (x + alpha * y, a multiply and an add per element) took 1.6-1.9 ms at one thread in SSE2
 * against mul's 0.8 ms; with AVX2 both take 0.75 ms, NumPy's time. The complex loops, whose
 * arithmetic does not vectorise, stay single. */
#define REAL_LOOP MT_SIMD_CLONES static
#define COMPLEX_LOOP static

/* The inner loops of operands that are each contiguous or one number (stride 0: a broadcast,
 * a Python number) take one loop per pattern, u1, u2, u3 constants (1: contiguous, 0: the
 * number), as TensorIterator's "an operand is a scalar" loop: with the pattern known the
 * compiler holds the numbers in registers and vectorises. One loop for all patterns, indexing
 * by i * stride, did not vectorise (an outer product x[:, None] * y[None, :] took 4.5x
 * PyTorch's time, x / (x + 3) 1.6x). The pattern of all numbers takes the strided loop. */
#define EW_PATTERN(u1, u2, u3, R, T1, T2, T3, nin, CALL, DIV) \
    case (u1) | (u2) << 1 | (u3) << 2: {                      \
        const T1 *xs = (const T1 *)data[1];                   \
        const T2 *ys = (const T2 *)data[nin >= 2 ? 2 : 1];    \
        const T3 *zs = (const T3 *)data[nin >= 3 ? 3 : 1];    \
        const T1 x0 = MT_LOAD(T1, xs);                        \
        const T2 y0 = nin >= 2 ? MT_LOAD(T2, ys) : (T2)0;     \
        const T3 z0 = nin >= 3 ? MT_LOAD(T3, zs) : (T3)0;     \
        for (int64_t i = 0; i < n; i++) {                     \
            const T1 x = (u1) ? MT_LOAD(T1, xs + i) : x0;     \
            const T2 y = (u2) ? MT_LOAD(T2, ys + i) : y0;     \
            const T3 z = (u3) ? MT_LOAD(T3, zs + i) : z0;     \
            (void)y, (void)z;                                 \
            if (DIV && IS_INTEGER(T2) && y == 0) {            \
                zero = true;                                  \
            }                                                 \
            ((R *)data[0])[i] = (R)(CALL);                    \
        }                                                     \
        break;                                                \
    }

#define EW_PATTERNS(...)             \
    EW_PATTERN(1, 0, 0, __VA_ARGS__) \
    EW_PATTERN(0, 1, 0, __VA_ARGS__) \
    EW_PATTERN(1, 1, 0, __VA_ARGS__) \
    EW_PATTERN(0, 0, 1, __VA_ARGS__) \
    EW_PATTERN(1, 0, 1, __VA_ARGS__) \
    EW_PATTERN(0, 1, 1, __VA_ARGS__) \
    EW_PATTERN(1, 1, 1, __VA_ARGS__)

// out (R), x (T1), y (T2), z (T3) broadcast to one shape; out = CALL, k, k2, k3 the row's
// scalars; ATTR one of the two above
#define EW_LOOP(ATTR, name, nin, R, T, T1, T2, T3, CALL, DIV)                                      \
    ATTR void name(char **data, const int64_t *strides, int64_t n, void *vctx)                     \
    {                                                                                              \
        ew_ctx *ctx = vctx;                                                                        \
        const T k = MT_LOAD(T, ctx->k[0]), k2 = MT_LOAD(T, ctx->k[1]), k3 = MT_LOAD(T, ctx->k[2]); \
        (void)k, (void)k2, (void)k3;                                                               \
        const bool unit_or_0 = UNIT(R, 0) && UNIT_OR_0(T1, 1) && (nin < 2 || UNIT_OR_0(T2, 2)) &&  \
                               (nin < 3 || UNIT_OR_0(T3, 3));                                      \
        const int s1 = strides[1] != 0, s2 = nin >= 2 && strides[2] != 0,                          \
                  s3 = nin >= 3 && strides[3] != 0;                                                \
        bool zero = false;                                                                         \
        switch (unit_or_0 && n > 0 ? s1 | s2 << 1 | s3 << 2 : 0) {                                 \
            EW_PATTERNS(R, T1, T2, T3, nin, CALL, DIV)                                             \
        default:                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                const T1 x = MT_GET(T1, 1, i);                                                     \
                const T2 y = nin >= 2 ? MT_GET(T2, 2, i) : (T2)0;                                  \
                const T3 z = nin >= 3 ? MT_GET(T3, 3, i) : (T3)0;                                  \
                (void)y, (void)z;                                                                  \
                if (DIV && IS_INTEGER(T2) && y == 0) {                                             \
                    zero = true;                                                                   \
                }                                                                                  \
                MT_AT(R, 0, i) = (R)(CALL);                                                        \
            }                                                                                      \
        }                                                                                          \
        if (zero) {                                                                                \
            atomic_store_explicit(&ctx->zero_div, true, memory_order_relaxed);                     \
        }                                                                                          \
    }
#define IS_DIV_DIV 1
#define IS_DIV_X 0
#define IS_DIV_XB 0
#define IS_DIV_XK 0
#define IS_DIV_XKK 0
#define IS_DIV_XKKK 0
#define IS_DIV_XYKK 0
#define IS_DIV_XYKKK 0
#define IS_DIV_XY 0
#define IS_DIV_XYB 0
#define IS_DIV_XYK 0
#define IS_DIV_XYZ 0
#define IS_DIV_XYZK 0
#define IS_DIV_CXY 0
#define IS_DIV_XCY 0

#define LOOP_WITH(ATTR, name, form, T, S)                                               \
    EW_LOOP(ATTR, name##_##S, MT_EW_NIN_##form, MT_EW_R(form, T), T, MT_EW_T1(form, T), \
            MT_EW_T2(form, T), MT_EW_T3(form, T), MT_EW_CALL_##form(mt_##name##_##S),   \
            IS_DIV_##form)
#define LOOP(name, form, T, S) LOOP_WITH(REAL_LOOP, name, form, T, S)
#define NO_LOOP(name, form, T, S)
#define MT_EW(name, form, dtypes, meta, scalars, kernel) \
    MT_EW_DTYPES_##dtypes(LOOP, NO_LOOP, name, form)
#include "ops/elementwise.def"

#define LOOP_ENTRY(name, form, T, S) name##_##S,
#define NO_LOOP_ENTRY(name, form, T, S) NULL,
static const mt_loop_fn loops[MT_NUM_EW][MT_NUM_DTYPES] = {
#define MT_EW(name, form, dtypes, meta, scalars, kernel) \
    [MT_EW_##name] = {MT_EW_DTYPES_##dtypes(LOOP_ENTRY, NO_LOOP_ENTRY, name, form)},
#include "ops/elementwise.def"
};

/* The complex loops of the rows that have them: complex_loops[row][0] for complex64, [1] for
 * complex128. */
#define MT_EW_COMPLEX(name, form)                            \
    LOOP_WITH(COMPLEX_LOOP, name, form, float _Complex, c64) \
    LOOP_WITH(COMPLEX_LOOP, name, form, double _Complex, c128)
#include "ops/elementwise.def"
static const mt_loop_fn complex_loops[MT_NUM_EW][2] = {
#define MT_EW_COMPLEX(name, form) [MT_EW_##name] = {name##_c64, name##_c128},
#include "ops/elementwise.def"
};

/* The loops below may fuse a multiply and an add into one FMA instruction (one rounding, not
 * two), which the build's -std=c11 turns off everywhere else: vmath.h's polynomials are chains
 * of p * r + c, and without FMAs the AVX2 and AVX-512 clones ran twice the instructions
 * (GELU's erf 1.6x PyTorch's time). The contraction is the caller's choice in GCC, so it is
 * made here around the loops that inline vmath.h, not in the header; the table's loops above
 * keep their two roundings. The default (x86-64) clone has no FMA and rounds twice: either way
 * the results stay within vmath.h's stated errors. */
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")

/* The float32 loops that take the place of the table's: vmath.h's exp, log, log1p, erf,
 * sigmoid, tanh and the activations built on them (GELU, SiLU, mish, elu, softplus, log_sigmoid
 * and their derivatives), which the compiler vectorises, where libm's expf is a call per element
 * (PyTorch's CPU kernels take SLEEF's vector functions, 1 ulp); on an LSTM's gates libm's
 * sigmoid was some 5x slower, on softplus some 40x. The table's loops stay the definition for
 * every other dtype and device, and core/math.h keeps the reference formulas.
 * out (float32), x (float32) of one shape, y (float32) too for the binary rows (a backward's
 * g, x); k, k2, k3 the row's scalars, CALL the row's call of fn (MT_EW_CALL_<form>). */
#define VEC_F32_LOOP(name, form, fn)                                                            \
    MT_SIMD_CLONES static void name(char **data, const int64_t *strides, int64_t n, void *vctx) \
    {                                                                                           \
        const ew_ctx *ctx = vctx;                                                               \
        const float k = MT_LOAD(float, ctx->k[0]), k2 = MT_LOAD(float, ctx->k[1]),              \
                    k3 = MT_LOAD(float, ctx->k[2]);                                             \
        (void)k, (void)k2, (void)k3;                                                            \
        const bool two = MT_EW_NIN_##form == 2;                                                 \
        if (strides[0] == sizeof(float) && strides[1] == sizeof(float) &&                       \
            (!two || strides[2] == sizeof(float))) {                                            \
            float *o = (float *)data[0];                                                        \
            const float *xs = (const float *)data[1], *ys = (const float *)data[two ? 2 : 1];   \
            for (int64_t i = 0; i < n; i++) {                                                   \
                const float x = xs[i], y = ys[i];                                               \
                (void)y;                                                                        \
                o[i] = MT_EW_CALL_##form(fn);                                                   \
            }                                                                                   \
            return;                                                                             \
        }                                                                                       \
        for (int64_t i = 0; i < n; i++) {                                                       \
            const float x = MT_AT(float, 1, i), y = two ? MT_AT(float, 2, i) : 0.0f;            \
            (void)y;                                                                            \
            MT_AT(float, 0, i) = MT_EW_CALL_##form(fn);                                         \
        }                                                                                       \
    }

/* exp itself keeps the two roundings: contracted, its error reached 1.002 ulp against the 1
 * that tests/autograd/test_cpu_fast_paths.py holds it to (0.96 measured without) */
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
VEC_F32_LOOP(exp_vec_f32_portable, X, mt_vexp_f32)
#pragma GCC pop_options
VEC_F32_LOOP(log_vec_f32_portable, X, mt_vlog_f32)
VEC_F32_LOOP(log1p_vec_f32, X, mt_vlog1p_f32)
VEC_F32_LOOP(erf_vec_f32, X, mt_verf_f32)
VEC_F32_LOOP(sigmoid_vec_f32, X, mt_vsigmoid_f32)
VEC_F32_LOOP(tanh_vec_f32, X, mt_vtanh_f32)
VEC_F32_LOOP(silu_vec_f32, X, mt_silu_vf32)
VEC_F32_LOOP(gelu_vec_f32, X, mt_vgelu_f32)
VEC_F32_LOOP(gelu_tanh_vec_f32, X, mt_gelu_tanh_vf32)
VEC_F32_LOOP(gelu_backward_vec_f32, XY, mt_gelu_backward_vf32)
VEC_F32_LOOP(gelu_tanh_backward_vec_f32, XY, mt_gelu_tanh_backward_vf32)
VEC_F32_LOOP(silu_backward_vec_f32, XY, mt_silu_backward_vf32)
VEC_F32_LOOP(elu_vec_f32, XKKK, mt_elu_vf32)
VEC_F32_LOOP(elu_backward_vec_f32, XYKKK, mt_elu_backward_vf32)
VEC_F32_LOOP(softplus_backward_vec_f32, XYKK, mt_softplus_backward_vf32)
/* log_sigmoid's derivative (g, x) from b = exp(-|x|), in one expression with vmath.h's exp: on
 * (1024, 1024) 1.3x PyTorch's time, where staged over blocks with the AVX-512 exp it took 1.7x */
static inline MT_ALWAYS_INLINE float
log_sigmoid_backward_vf32(float g, float x)
{
    return mt_log_sigmoid_backward_tail_vf32(g, x, mt_vexp_nonpos_f32(-fabsf(x)));
}

VEC_F32_LOOP(log_sigmoid_backward_vec_f32, XY, log_sigmoid_backward_vf32)
/* Rows that compose two or three of the functions above (softplus is log1p(exp), mish
 * tanh(log1p(exp))) make one dependency chain of some 40 multiply-adds per element, longer than
 * the CPU's out-of-order window can overlap from one iteration to the next: as one expression
 * mish took 3x the time of exp, log1p and tanh run one after the other. So these run each
 * function over a block of STAGE elements (in L1), then core/math.h's tail; the result is the
 * same expression's, bit for bit. */
#define STAGE 256

/* Elements i0 .. i0 + m of operand 1 into a, of operand 2 into b (the binary rows: g, x);
 * returns m, at most STAGE. */
static inline MT_ALWAYS_INLINE int
stage_load(char **data, const int64_t *strides, int64_t i0, int64_t n, int nin, float *a, float *b)
{
    const int m = (int)(n - i0 < STAGE ? n - i0 : STAGE);
    for (int k = 1; k <= nin; k++) {
        float *to = k == 1 ? a : b;
        if (strides[k] == sizeof(float)) {
            memcpy(to, data[k] + i0 * (int64_t)sizeof(float), (size_t)m * sizeof(float));
            continue;
        }
        for (int i = 0; i < m; i++) {
            to[i] = MT_AT(float, k, i0 + i);
        }
    }
    return m;
}

/* The block's m results into the output, from element i0. */
static inline MT_ALWAYS_INLINE void
stage_store(char **data, const int64_t *strides, int64_t i0, int m, const float *r)
{
    if (strides[0] == sizeof(float)) {
        memcpy(data[0] + i0 * (int64_t)sizeof(float), r, (size_t)m * sizeof(float));
        return;
    }
    for (int i = 0; i < m; i++) {
        MT_AT(float, 0, i0 + i) = r[i];
    }
}

/* exp and log have an AVX-512 form too (cpu/vmath_avx512.c): wide(out, x, n) over
 * contiguous float32 runs where the CPU has AVX-512, other layouts through it by blocks of STAGE
 * (so a result does not depend on the layout), name_portable (vmath.h's) elsewhere. */
#define VEC_F32_LOOP_AVX512(name, wide)                                          \
    static void name(char **data, const int64_t *strides, int64_t n, void *vctx) \
    {                                                                            \
        if (!mt_cpu_vmath_avx512()) {                                            \
            name##_portable(data, strides, n, vctx);                             \
        } else if (strides[0] == sizeof(float) && strides[1] == sizeof(float)) { \
            wide((float *)data[0], (const float *)data[1], n);                   \
        } else {                                                                 \
            float block[STAGE];                                                  \
            for (int64_t i0 = 0; i0 < n; i0 += STAGE) {                          \
                const int m = stage_load(data, strides, i0, n, 1, block, block); \
                wide(block, block, m);                                           \
                stage_store(data, strides, i0, m, block);                        \
            }                                                                    \
        }                                                                        \
    }
VEC_F32_LOOP_AVX512(exp_vec_f32, mt_cpu_exp_f32_avx512)
VEC_F32_LOOP_AVX512(log_vec_f32, mt_cpu_log_f32_avx512)

MT_SIMD_CLONES static void
softplus_vec_f32(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const ew_ctx *ctx = vctx;
    const float beta = MT_LOAD(float, ctx->k[0]), threshold = MT_LOAD(float, ctx->k[1]);
    float x[STAGE], l[STAGE];
    for (int64_t i0 = 0; i0 < n; i0 += STAGE) {
        const int m = stage_load(data, strides, i0, n, 1, x, NULL);
        for (int i = 0; i < m; i++) {
            l[i] = mt_vexp_f32(x[i] * beta);
        }
        for (int i = 0; i < m; i++) {
            l[i] = mt_vlog1p_f32(l[i]);
        }
        for (int i = 0; i < m; i++) {
            l[i] = mt_softplus_tail_vf32(x[i], beta, threshold, l[i]);
        }
        stage_store(data, strides, i0, m, l);
    }
}

/* t[i] = exp(-|x[i]|) for i < m: the AVX-512 exp (cpu/vmath_avx512.c) where it runs, vmath.h's
 * otherwise */
static inline MT_ALWAYS_INLINE void
stage_exp_neg_abs(const float *x, float *t, int m)
{
    for (int i = 0; i < m; i++) {
        t[i] = -fabsf(x[i]);
    }
    if (mt_cpu_vmath_avx512()) {
        mt_cpu_exp_f32_avx512(t, t, m);
        return;
    }
    for (int i = 0; i < m; i++) {
        t[i] = mt_vexp_nonpos_f32(t[i]);
    }
}

/* log_sigmoid: min(x, 0) - log1p(exp(-|x|)), stage by stage (libm's expf and log1pf per
 * element took 8x PyTorch's time) */
MT_SIMD_CLONES static void
log_sigmoid_vec_f32(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    (void)vctx;
    float x[STAGE], l[STAGE];
    for (int64_t i0 = 0; i0 < n; i0 += STAGE) {
        const int m = stage_load(data, strides, i0, n, 1, x, NULL);
        stage_exp_neg_abs(x, l, m);
        for (int i = 0; i < m; i++) {
            l[i] = mt_vlog1p_f32(l[i]);
        }
        for (int i = 0; i < m; i++) {
            l[i] = mt_log_sigmoid_tail_vf32(x[i], l[i]);
        }
        stage_store(data, strides, i0, m, l);
    }
}

/* t = tanh(log1p(exp(x))), stage by stage */
static inline MT_ALWAYS_INLINE void
mish_stages(const float *x, float *t, int m)
{
    for (int i = 0; i < m; i++) {
        t[i] = mt_vexp_f32(x[i]);
    }
    for (int i = 0; i < m; i++) {
        t[i] = mt_vlog1p_f32(t[i]);
    }
    for (int i = 0; i < m; i++) {
        t[i] = mt_vtanh_f32(t[i]);
    }
}

MT_SIMD_CLONES static void
mish_vec_f32(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    (void)vctx;
    float x[STAGE], t[STAGE];
    for (int64_t i0 = 0; i0 < n; i0 += STAGE) {
        const int m = stage_load(data, strides, i0, n, 1, x, NULL);
        mish_stages(x, t, m);
        for (int i = 0; i < m; i++) {
            t[i] = mt_mish_tail_vf32(x[i], t[i]);
        }
        stage_store(data, strides, i0, m, t);
    }
}

MT_SIMD_CLONES static void
mish_backward_vec_f32(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    (void)vctx;
    float g[STAGE], x[STAGE], t[STAGE], en[STAGE];
    for (int64_t i0 = 0; i0 < n; i0 += STAGE) {
        const int m = stage_load(data, strides, i0, n, 2, g, x);
        mish_stages(x, t, m);
        for (int i = 0; i < m; i++) {
            en[i] = mt_vexp_f32(-x[i]);
        }
        for (int i = 0; i < m; i++) {
            t[i] = mt_mish_backward_tail_vf32(g[i], x[i], t[i], en[i]);
        }
        stage_store(data, strides, i0, m, t);
    }
}
#undef STAGE

/* no transcendental: the table's formula, only built for AVX2 and AVX-512 too (the table's
 * loops are x86-64's SSE2; hardswish was 2.3x PyTorch's time) */
VEC_F32_LOOP(hardswish_vec_f32, X, mt_hardswish_f32)
VEC_F32_LOOP(hardswish_backward_vec_f32, XY, mt_hardswish_backward_f32)

#pragma GCC pop_options

/* ---- where, fmod, remainder and pow of float32 ---- */

#define BLOCK 256

/* Elements i0 .. i0 + m of operand k (float32): a contiguous operand's own, read in place (a
 * memcpy into L1 first took a call and a copy a block), else gathered into buf from a broadcast
 * (stride 0) or strided one. */
static inline MT_ALWAYS_INLINE const float *
block_f32(char **data, const int64_t *strides, int k, int64_t i0, int m, float *buf)
{
    if (strides[k] == sizeof(float)) {
        return (const float *)data[k] + i0;
    }
    if (strides[k] == 0) {
        const float v = *(const float *)data[k];
        for (int i = 0; i < m; i++) {
            buf[i] = v;
        }
    } else {
        for (int i = 0; i < m; i++) {
            buf[i] = MT_AT(float, k, i0 + i);
        }
    }
    return buf;
}

/* The same for a bool operand, widened to 0/1 as float32 would not be: into an int32_t array. */
static inline MT_ALWAYS_INLINE void
block_load_bool(char **data, const int64_t *strides, int k, int64_t i0, int m, int32_t *to)
{
    if (strides[k] == sizeof(bool)) {
        const unsigned char *c = (const unsigned char *)data[k] + i0;
        for (int i = 0; i < m; i++) {
            to[i] = c[i];
        }
    } else {
        for (int i = 0; i < m; i++) {
            to[i] = *(const unsigned char *)(data[k] + (i0 + i) * strides[k]);
        }
    }
}

/* out = c ? t : f over n elements, operands c (bool), t and f (float32) at data[ci], data[ti],
 * data[fi]. GCC vectorises no select between float32 values by a bool loaded beside them (the
 * operands' widths differ), so the condition is widened to int32 first, a block at a time, and
 * the select runs on equal widths (where of 1M elements took 4x what mul does, masked_fill with
 * a broadcast mask 27x its same-shape case). */
static inline MT_ALWAYS_INLINE void
select_f32(char **data, const int64_t *strides, int64_t n, int ci, int ti, int fi)
{
    int32_t c[BLOCK];
    float tb[BLOCK], fb[BLOCK], r[BLOCK];
    for (int64_t i0 = 0; i0 < n; i0 += BLOCK) {
        const int m = (int)(n - i0 < BLOCK ? n - i0 : BLOCK);
        block_load_bool(data, strides, ci, i0, m, c);
        const float *t = block_f32(data, strides, ti, i0, m, tb);
        const float *f = block_f32(data, strides, fi, i0, m, fb);
        for (int i = 0; i < m; i++) {
            r[i] = c[i] ? t[i] : f[i];
        }
        stage_store(data, strides, i0, m, r);
    }
}

/* where(c, x, y) */
MT_SIMD_CLONES static void
where_vec_f32(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    (void)vctx;
    select_f32(data, strides, n, 1, 2, 3);
}

/* masked_fill(x, c, v): v where c, else x */
MT_SIMD_CLONES static void
masked_fill_vec_f32(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    (void)vctx;
    select_f32(data, strides, n, 2, 3, 1);
}

/* fmod(x, y) is exact, so any exact method gives libm's value. In float: q = x / y rounded, t =
 * trunc(q) and r = fma(-t, y, x), x - t * y rounded once. While |q| < 2^23 every integer near q
 * is a float, and t is the true quotient's integer part or, where q rounded up onto an integer,
 * one past it. In the first case r is the true remainder, a float, so the fma gives it exactly;
 * in the second r is that remainder less x's sign times |y|: of the other sign, smaller than |y|
 * and on the grid of x's and y's last bits, a float too, and adding copysign(|y|, x) gives the
 * true remainder, again exactly. A zero takes x's sign. Past the bound, and for an infinite x or
 * y, a zero y or a NaN (fmod_fast false), libm's fmodf answers (fmod_block). In double as before
 * (a quotient, a product and a difference of 8 lanes a vector, converted there and back), fmod
 * and remainder of 1M float32 took 0.9-1.3x PyTorch's time. */
static inline MT_ALWAYS_INLINE bool
fmod_fast(float y, float q)
{
    return fabsf(q) < 0x1p23f && fabsf(y) < INFINITY;
}

static inline MT_ALWAYS_INLINE float
fmod_exact_f32(float x, float y, int *slow)
{
    const float q = x / y;
    const bool fast = fmod_fast(y, q);
    const float t = truncf(fast ? q : 0.0f);
    float r = fmaf(-t, y, x);
    r = (r != 0 && ((r < 0) != (x < 0))) ? r + copysignf(fabsf(y), x) : r;
    r = r == 0 ? copysignf(0.0f, x) : r;
    *slow |= !fast;
    return r;
}

/* r = fmod(x, y) over a block, libm's fmodf where fmod_exact_f32 cannot answer */
static inline MT_ALWAYS_INLINE void
fmod_block(const float *x, const float *y, float *r, int m)
{
    int slow = 0;
    for (int i = 0; i < m; i++) {
        r[i] = fmod_exact_f32(x[i], y[i], &slow);
    }
    if (slow) {
        for (int i = 0; i < m; i++) {
            if (!fmod_fast(y[i], x[i] / y[i])) {
                r[i] = fmodf(x[i], y[i]);
            }
        }
    }
}

/* r = x ** y over a block: e, the exponent where it is one number (else NaN), picks PyTorch's
 * special cases, its products and quotients bit for bit (2, 3, -1, -2; 0.5 and -0.5 are sqrt
 * and rsqrt in the front end); any other exponent takes vmath.h's pow */
static inline MT_ALWAYS_INLINE void
pow_block(const float *x, const float *y, float *r, int m, float e)
{
    if (e == 2.0f || e == 3.0f) {
        for (int i = 0; i < m; i++) {
            r[i] = e == 2.0f ? x[i] * x[i] : x[i] * x[i] * x[i];
        }
    } else if (e == -1.0f || e == -2.0f) {
        for (int i = 0; i < m; i++) {
            r[i] = 1.0f / (e == -1.0f ? x[i] : x[i] * x[i]);
        }
    } else if (e == e) { /* one exponent: what pow derives from it leaves the loop */
        for (int i = 0; i < m; i++) {
            r[i] = mt_vpow_f32(x[i], e);
        }
    } else {
        for (int i = 0; i < m; i++) {
            r[i] = mt_vpow_f32(x[i], y[i]);
        }
    }
}

/* The float32 loops of two operands that run a block at a time (x and y into L1 buffers, the
 * block's results out): fmod, remainder (Python's sign rule on fmod's value, as core/math.h's
 * mt_remainder_f32) and pow. */
typedef enum block_op { FMOD, REMAINDER, POW } block_op;

static inline MT_ALWAYS_INLINE void
block_loop(char **data, const int64_t *strides, int64_t n, block_op op)
{
    const float e = op == POW && strides[2] == 0 && n > 0 ? *(const float *)data[2] : NAN;
    float xb[BLOCK], yb[BLOCK], r[BLOCK];
    for (int64_t i0 = 0; i0 < n; i0 += BLOCK) {
        const int m = (int)(n - i0 < BLOCK ? n - i0 : BLOCK);
        const float *x = block_f32(data, strides, 1, i0, m, xb);
        const float *y = block_f32(data, strides, 2, i0, m, yb);
        if (op == POW) {
            pow_block(x, y, r, m, e);
        } else {
            fmod_block(x, y, r, m);
        }
        for (int i = 0; op == REMAINDER && i < m; i++) {
            r[i] = (r[i] != 0 && ((y[i] < 0) != (r[i] < 0))) ? r[i] + y[i] : r[i];
        }
        stage_store(data, strides, i0, m, r);
    }
}

MT_SIMD_CLONES static void
fmod_vec_f32(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    (void)vctx;
    block_loop(data, strides, n, FMOD);
}

MT_SIMD_CLONES static void
remainder_vec_f32(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    (void)vctx;
    block_loop(data, strides, n, REMAINDER);
}

/* pow's loop takes FMAs: vmath.h's pow is chains of p * r + c in double, whose error it states
 * either way */
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")
MT_SIMD_CLONES static void
pow_vec_f32(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    (void)vctx;
    block_loop(data, strides, n, POW);
}
#pragma GCC pop_options
#undef BLOCK

static const mt_loop_fn vector_f32_loops[MT_NUM_EW] = {
    [MT_EW_where] = where_vec_f32,
    [MT_EW_masked_fill] = masked_fill_vec_f32,
    [MT_EW_fmod] = fmod_vec_f32,
    [MT_EW_remainder] = remainder_vec_f32,
    [MT_EW_pow] = pow_vec_f32,
    [MT_EW_exp] = exp_vec_f32,
    [MT_EW_log] = log_vec_f32,
    [MT_EW_log1p] = log1p_vec_f32,
    [MT_EW_erf] = erf_vec_f32,
    [MT_EW_sigmoid] = sigmoid_vec_f32,
    [MT_EW_tanh] = tanh_vec_f32,
    [MT_EW_silu] = silu_vec_f32,
    [MT_EW_gelu] = gelu_vec_f32,
    [MT_EW_gelu_tanh] = gelu_tanh_vec_f32,
    [MT_EW_gelu_backward] = gelu_backward_vec_f32,
    [MT_EW_gelu_tanh_backward] = gelu_tanh_backward_vec_f32,
    [MT_EW_silu_backward] = silu_backward_vec_f32,
    [MT_EW_mish] = mish_vec_f32,
    [MT_EW_mish_backward] = mish_backward_vec_f32,
    [MT_EW_elu] = elu_vec_f32,
    [MT_EW_elu_backward] = elu_backward_vec_f32,
    [MT_EW_softplus] = softplus_vec_f32,
    [MT_EW_softplus_backward] = softplus_backward_vec_f32,
    [MT_EW_log_sigmoid] = log_sigmoid_vec_f32,
    [MT_EW_log_sigmoid_backward] = log_sigmoid_backward_vec_f32,
    [MT_EW_hardswish] = hardswish_vec_f32,
    [MT_EW_hardswish_backward] = hardswish_backward_vec_f32,
};

static mt_loop_fn
loop_of(mt_ew_id row, mt_dtype dt)
{
    if (mt_dtype_is_complex(dt)) {
        return complex_loops[row][dt - MT_COMPLEX64];
    }
    return dt == MT_FLOAT32 && vector_f32_loops[row] ? vector_f32_loops[row] : loops[row][dt];
}

static bool
has_loop(mt_ew_id row, mt_dtype dt)
{
    return loop_of(row, dt) != NULL;
}

static mt_status
run(mt_ew_plan *p, mt_ew_id row, mt_dtype dt, const mt_scalar *k, bool *zero_div)
{
    ew_ctx ctx;
    memset(ctx.k, 0, sizeof(ctx.k));
    for (int j = 0; k && j < MT_EW_MAX_K; j++) {
        mt_store_scalar(ctx.k[j], dt, k[j]);
    }
    atomic_init(&ctx.zero_div, false);
    mt_status st = run_plan(p, loop_of(row, dt), &ctx);
    *zero_div = atomic_load(&ctx.zero_div);
    return st;
}

static const mt_ew_device cpu_device = {"cpu",
                                        {mt_cpu_cast, mt_cpu_copy_into, false},
                                        has_loop,
                                        run};

/* The kernels of ops.def the family computes: mt_cpu_<op>. */
#define MT_EW_OP(op, row, flags, shell, schema)                     \
    mt_status mt_cpu_##op(mt_args *a)                               \
    {                                                               \
        return mt_ew_call(MT_OP_##op, MT_EW_##row, a, &cpu_device); \
    }
#include "ops/elementwise.def"
