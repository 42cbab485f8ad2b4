/* The discrete Fourier transform on the CPU: _fft_c2c, _fft_r2c, _fft_c2r (their front end is
 * ops/fft.c, which has checked everything; nothing here raises but out of memory).
 *
 * A transform over several dims is one pass per dim, each transforming every line along its
 * dim (pocketfft's way, which PyTorch's CPU FFT is): c2c's first pass reads the input and
 * writes the result, the others work in the result in place; r2c's first pass is the real
 * one, along the last dim of `dim`, and c2r's real pass comes last, after the complex ones
 * over the one-sided half. The lines of a pass go a block at a time (cpu/fft_impl.h), the
 * blocks shared among the threads, except contiguous lines of a short power-of-two length:
 * those go one at a time where they lie (cpu/fft_row_impl.h); and up to 4 lines (complex64)
 * left over after a c2c pass's blocks go side by side in 32-byte vectors (F(narrow)). A complex64 or float32
 * transform computes in float, a complex128 or float64 one in double. The plans (twiddles, Bluestein's chirp) of the
 * lengths last used stay in a small cache. The inverse transform is the conjugate of the
 * forward one of the conjugate. */
#include <math.h>
#include <omp.h>
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include <immintrin.h> /* _mm512_stream_ps/pd and _mm_sfence: FFT_STREAMS below */
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/front.h"

static const double pi = 3.14159265358979323846;

/* cpu/fft_row_vec.h passes vectors by value between inline functions, where no ABI is involved:
 * setup.py compiles this file with -Wno-psabi (GCC's notes on how such vectors were passed in
 * other versions are not silenced by a pragma) */

/* A pass's lines: a thread takes at least this many elements' worth. */
#define FFT_GRAIN 16384
/* Prime factors up to this run as one O(p^2) Stockham stage; a length with a larger one goes
 * through Bluestein's convolution (about 6 power-of-two transforms of 2n to 4n). */
#define FFT_MAX_RADIX 53
/* The tiles of a block's gather and scatter ask for the memory of the block this many on: one
 * block's work is long enough to have it in cache (2 and 4 measured the same). */
#define FFT_AHEAD 1
/* Lines at least this long run by the four-step split into lines of about sqrt(n), blocks of
 * which stay in L2 (a block of n elements would not). */
#define FFT_FOUR_STEP 32768
/* Contiguous lines of a power of two up to this many entries go one by one, in vectors of their
 * own entries (cpu/fft_row_impl.h), not by blocks of L lines: a line and its partner buffer stay
 * in L1. */
#define FFT_ROW_MAX 1024
/* Plans kept, the least recently used dropped first (pocketfft's cache in PyTorch keeps 16). */
#define FFT_PLANS 16

enum { FFT_C2C, FFT_R2C, FFT_C2R };

/* One pass: the transform along one dim of every line. Offsets and steps count reals (R): a
 * complex element is two. r2c's source and c2r's result are real lines of n; r2c keeps the
 * first `kept` entries of each result, c2r reads the first `have` of each line. */
typedef struct fft_pass {
    int kind;
    bool inverse;
    bool last; /* it writes the result (large ones stream past the caches), no pass reads it */
    double scale;
    int64_t n, kept, have;
    void *src, *dst;
    int64_t s_es, d_es; /* the step between neighbours along a line */
    int nd;             /* the lines: the other dims, their sizes and steps */
    int64_t sizes[MT_MAX_DIMS], s_str[MT_MAX_DIMS], d_str[MT_MAX_DIMS];
    int64_t lines;
} fft_pass;

// exp(-2 pi i k / n), 0 <= k: the angle reduced to the first octant, so that the multiples of
// pi/4 come out exact (cos(pi/2) in floating point is 6e-17, not 0)
static void
unit_root(int64_t k, int64_t n, double *re, double *im)
{
    k %= n;
    const int64_t q = 4 * k / n, r = 4 * k - q * n; /* the angle: pi/2 (q + r/n) */
    double c, s;
    if (2 * r <= n) {
        c = cos(pi / 2 * (double)r / (double)n);
        s = sin(pi / 2 * (double)r / (double)n);
    } else {
        c = sin(pi / 2 * (double)(n - r) / (double)n);
        s = cos(pi / 2 * (double)(n - r) / (double)n);
    }
    const double er[4] = {c, -s, -c, s}, ei[4] = {s, c, -s, -c};
    *re = er[q];
    *im = -ei[q];
}

// x (m complex, interleaved), m a power of two, in place: the forward transform (radix 2,
// one line, in double: Bluestein's filter, once per plan)
static void
dft_pow2(double *x, int64_t m)
{
    for (int64_t i = 1, j = 0; i < m; i++) {
        int64_t bit = m >> 1;
        for (; j & bit; bit >>= 1) {
            j ^= bit;
        }
        j ^= bit;
        if (i < j) {
            const double tr = x[2 * i], ti = x[2 * i + 1];
            x[2 * i] = x[2 * j];
            x[2 * i + 1] = x[2 * j + 1];
            x[2 * j] = tr;
            x[2 * j + 1] = ti;
        }
    }
    for (int64_t len = 2; len <= m; len <<= 1) {
        for (int64_t k = 0; k < len / 2; k++) {
            double wr, wi;
            unit_root(k, len, &wr, &wi);
            for (int64_t i = k; i < m; i += len) {
                double *u = x + 2 * i, *v = x + 2 * (i + len / 2);
                const double tr = v[0] * wr - v[1] * wi, ti = v[0] * wi + v[1] * wr;
                v[0] = u[0] - tr;
                v[1] = u[1] - ti;
                u[0] += tr;
                u[1] += ti;
            }
        }
    }
}

static int64_t
largest_prime(int64_t n)
{
    int64_t p = 1;
    for (int64_t d = 2; d * d <= n; d++) {
        while (n % d == 0) {
            p = d;
            n /= d;
        }
    }
    return n > p ? n : p;
}

// n1 of the four-step split n = n1 n2 (the largest divisor up to sqrt n), or 1: no split
static int64_t
four_step_split(int64_t n)
{
    if (n < FFT_FOUR_STEP) {
        return 1;
    }
    int64_t n1 = 1;
    for (int64_t d = 2; d * d <= n; d++) {
        n1 = n % d == 0 ? d : n1;
    }
    return n1 >= 16 ? n1 : 1;
}

/* The butterflies and the copies in and out of a block: inlined into their callers, which are
 * compiled for each SIMD level (MT_SIMD_CLONES), so that they vectorise for it. */
#define FFT_INLINE static inline __attribute__((always_inline))

/* The tile transposes of a block's gather and scatter (cpu/fft_impl.h) go by whole vectors of
 * this many bytes: GCC lowers a shuffle of vectors wider than the machine's registers element
 * by element, so each SIMD level has its width (0: the scalar loop). Moving the lines of an FFT
 * along the last dim of (20, 32, 64, 64) complex64 into blocks and back took 3.1 ms as plain
 * loops (of the 4 ms of the whole FFT), 1.3 ms by 64-byte vectors (AVX-512); with AVX2,
 * 4.9 ms and 2.6 ms by 32-byte ones (a standalone copy of the loops, one thread). */
static int
tile_bytes(void)
{
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
    return __builtin_cpu_supports("avx512f") ? 64 : __builtin_cpu_supports("avx2") ? 32 : 0;
#else
    return 0;
#endif
}

/* Lane l of the two rows i, i + K of a W-lane transpose round, as __builtin_shufflevector's
 * indices (W and above: the second row): the first row keeps its lanes with bit K clear and
 * takes the second's; the second the other way (a round with K >= W, never run, keeps both:
 * its indices must still be valid). */
#define FFT_TLO(W, K, l) ((K) < (W) && ((l) & (K)) ? (W) + (l) - (K) : (l))
#define FFT_THI(W, K, l) ((K) >= (W) ? (l) : ((l) & (K)) ? (W) + (l) : (l) + (K))
#define FFT_LANES4(M, W, K) M(W, K, 0), M(W, K, 1), M(W, K, 2), M(W, K, 3)
#define FFT_LANES8(M, W, K) FFT_LANES4(M, W, K), M(W, K, 4), M(W, K, 5), M(W, K, 6), M(W, K, 7)
#define FFT_LANES16(M, W, K)                                                            \
    FFT_LANES8(M, W, K), M(W, K, 8), M(W, K, 9), M(W, K, 10), M(W, K, 11), M(W, K, 12), \
        M(W, K, 13), M(W, K, 14), M(W, K, 15)

/* A tile's row of L reals, stored; FFT_STREAM stores it past the caches (non-temporal: the
 * cache line is not read first, nor kept), for the results of a pass too large to stay in cache
 * (FFT_STREAM_BYTES), by whole AVX-512 vectors at 64-byte aligned addresses only. */
#define FFT_STORE(p, v) memcpy((p), &(v), sizeof(v))
#define FFT_STREAM_BYTES (16 << 20) /* the result of a pass from this size on streams */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define FFT_STREAMS 1
#else
#define FFT_STREAMS 0
#endif

#define FFT_R double
#define FFT_NAME(f) f##_f64
#define FFT_STREAM(p, v) _mm512_stream_pd((p), (__m512d)(v))
#define FFT_LANES 8 /* doubles of one AVX-512 register */
#define FFT_ROW_W FFT_LANES8 /* shuffles of L lanes, and of L / 2 */
#define FFT_ROW_H FFT_LANES4
#include "cpu/fft_impl.h"
#include "cpu/fft_long_impl.h"
#include "cpu/fft_row_impl.h"
#undef FFT_ROW_H
#undef FFT_ROW_W
#undef FFT_LANES
#undef FFT_NAME
#undef FFT_R
#undef FFT_STREAM
#define FFT_R float
#define FFT_NAME(f) f##_f32
#define FFT_STREAM(p, v) _mm512_stream_ps((p), (__m512)(v))
#define FFT_LANES 16
#define FFT_ROW_W FFT_LANES16
#define FFT_ROW_H FFT_LANES8
#include "cpu/fft_impl.h"
#include "cpu/fft_long_impl.h"
#include "cpu/fft_row_impl.h"
#undef FFT_ROW_H
#undef FFT_ROW_W
#undef FFT_LANES
#undef FFT_NAME
#undef FFT_R
#undef FFT_STREAM

/* ---- the plans of the lengths last used: shared, counted while in use ---- */

typedef struct cached_plan {
    int64_t n;
    bool dbl;
    void *plan;
    int users;
    uint64_t used; /* the clock at its last use */
} cached_plan;

static cached_plan plans[FFT_PLANS];
static uint64_t plan_clock;
static pthread_mutex_t plans_mutex = PTHREAD_MUTEX_INITIALIZER;

static void
plan_free(void *plan, bool dbl)
{
    if (dbl) {
        plan_free_f64(plan);
    } else {
        plan_free_f32(plan);
    }
}

static cached_plan *
find_plan(int64_t n, bool dbl)
{
    for (int i = 0; i < FFT_PLANS; i++) {
        if (plans[i].plan != NULL && plans[i].n == n && plans[i].dbl == dbl) {
            return &plans[i];
        }
    }
    return NULL;
}

// the plan of length n (split when long) in double or float, or NULL when out of memory;
// give it back with put_plan
static void *
get_plan(int64_t n, bool dbl)
{
    pthread_mutex_lock(&plans_mutex);
    cached_plan *c = find_plan(n, dbl);
    if (c != NULL) {
        c->users++;
        c->used = ++plan_clock;
        pthread_mutex_unlock(&plans_mutex);
        return c->plan;
    }
    pthread_mutex_unlock(&plans_mutex);
    void *plan = dbl ? (void *)plan_new_f64(n, true) : (void *)plan_new_f32(n, true);
    if (plan == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&plans_mutex);
    c = find_plan(n, dbl); /* made meanwhile by another thread */
    if (c != NULL) {
        plan_free(plan, dbl);
        plan = c->plan;
    } else {
        for (int i = 0; i < FFT_PLANS; i++) { /* an empty slot, else the oldest unused */
            if (plans[i].plan == NULL) {
                c = &plans[i];
                break;
            }
            if (plans[i].users == 0 && (c == NULL || plans[i].used < c->used)) {
                c = &plans[i];
            }
        }
        if (c == NULL) { /* all 16 in use: this one is the caller's alone */
            pthread_mutex_unlock(&plans_mutex);
            return plan;
        }
        if (c->plan != NULL) {
            plan_free(c->plan, c->dbl);
        }
        *c = (cached_plan){.n = n, .dbl = dbl, .plan = plan};
    }
    c->users++;
    c->used = ++plan_clock;
    pthread_mutex_unlock(&plans_mutex);
    return plan;
}

static void
put_plan(void *plan, bool dbl)
{
    pthread_mutex_lock(&plans_mutex);
    for (int i = 0; i < FFT_PLANS; i++) {
        if (plans[i].plan == plan) {
            plans[i].users--;
            pthread_mutex_unlock(&plans_mutex);
            return;
        }
    }
    pthread_mutex_unlock(&plans_mutex);
    plan_free(plan, dbl);
}

// every line of the pass, in float or double
static mt_status
run_pass(const fft_pass *ps, bool dbl)
{
    if (ps->lines == 0 || ps->n == 0) {
        return MT_OK;
    }
    const int64_t len = ps->kind != FFT_C2C && ps->n % 2 == 0 ? ps->n / 2 : ps->n;
    void *plan = get_plan(len, dbl);
    if (plan == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory for an FFT of length %lld", (long long)ps->n);
    }
    mt_status st;
    if (dbl) {
        const plan_f64 *p = plan;
        st = row_pass_f64(ps, p)                 ? MT_OK
             : p->p1 || (p->blue && p->blue->p1) ? long_lines_f64(ps, p)
                                                 : block_pass_f64(ps, p);
    } else {
        const plan_f32 *p = plan;
        st = row_pass_f32(ps, p)                 ? MT_OK
             : p->p1 || (p->blue && p->blue->p1) ? long_lines_f32(ps, p)
                                                 : block_pass_f32(ps, p);
    }
    put_plan(plan, dbl);
    return st;
}

static void
contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= sizes[d];
    }
}

// ps: the pass along dim d of a signal of `sizes`, read from src (strides sstr in elements,
// sw reals each) and written to dst (dstr, dw reals each)
static void
set_lines(fft_pass *ps, int ndim, const int64_t *sizes, int d, void *src, const int64_t *sstr,
          int sw, void *dst, const int64_t *dstr, int dw)
{
    ps->src = src;
    ps->dst = dst;
    ps->s_es = sstr[d] * sw;
    ps->d_es = dstr[d] * dw;
    ps->nd = 0;
    ps->lines = 1;
    for (int k = 0; k < ndim; k++) {
        if (k != d) {
            ps->sizes[ps->nd] = sizes[k];
            ps->s_str[ps->nd] = sstr[k] * sw;
            ps->d_str[ps->nd] = dstr[k] * dw;
            ps->lines *= sizes[k];
            ps->nd++;
        }
    }
}

// the complex passes over dims[0 .. count - 1] of out (sizes, contiguous), the first reading
// src (strides, when not NULL) and the others out in place; the last one scaled, and writing
// the result when `last`
static mt_status
complex_passes(const mt_fft_plan *p, int count, const mt_tensor *src, const int64_t *sizes,
               char *out, bool inverse, double scale, bool dbl, bool last)
{
    int64_t cstr[MT_MAX_DIMS];
    contiguous_strides(p->ndim, sizes, cstr);
    mt_status st = MT_OK;
    for (int k = 0; k < count && st == MT_OK; k++) {
        fft_pass ps = {.kind = FFT_C2C,
                       .inverse = inverse,
                       .scale = k == count - 1 ? scale : 1,
                       .last = last && k == count - 1};
        const bool first = k == 0 && src != NULL;
        set_lines(&ps, p->ndim, sizes, p->dims[k], first ? mt_tensor_data(src) : out,
                  first ? src->strides : cstr, 2, out, cstr, 2);
        ps.n = sizes[p->dims[k]];
        st = run_pass(&ps, dbl);
    }
    return st;
}

// self (*) complex -> out (*): the forward or inverse transform over dim, scaled
mt_status
mt_cpu__fft_c2c(mt_args *a)
{
    const mt_fft_plan *p = &a->plan->fft;
    return complex_passes(p, p->ndims, a->t[0], p->sizes, mt_tensor_data(a->out[0]), !a->b[0],
                          p->scale, p->dt == MT_COMPLEX128, true);
}

// self (*) real -> out (*) complex: the forward transform; onesided keeps n/2 + 1 along the
// last dim of dim, else the rest by conjugate symmetry, line by line
mt_status
mt_cpu__fft_r2c(mt_args *a)
{
    const mt_fft_plan *p = &a->plan->fft;
    mt_tensor *self = a->t[0], *out = a->out[0];
    const int h = p->dims[p->ndims - 1];
    const bool dbl = p->dt == MT_COMPLEX128;
    char *o = mt_tensor_data(out);
    if (self->sizes[h] == 0) { /* no signal: the transform of nothing is 0 */
        memset(o, 0, (size_t)mt_tensor_numel(out) * (dbl ? 16 : 8));
        return MT_OK;
    }
    int64_t cstr[MT_MAX_DIMS];
    contiguous_strides(p->ndim, p->sizes, cstr);
    const double last = p->ndims == 1 ? p->scale : 1;
    fft_pass ps = {.kind = FFT_R2C,
                   .last = p->ndims == 1,
                   .scale = last,
                   .n = self->sizes[h],
                   .kept = p->sizes[h]};
    set_lines(&ps, p->ndim, p->sizes, h, mt_tensor_data(self), self->strides, 1, o, cstr, 2);
    mt_status st = run_pass(&ps, dbl);
    if (st == MT_OK) {
        st = complex_passes(p, p->ndims - 1, NULL, p->sizes, o, false, p->scale, dbl, true);
    }
    return st;
}

// self (..., h, ...) complex, the non-negative frequencies along dim h (the last of dim) ->
// out (..., N, ...) real, N = last_dim_size: the inverse transform of the Hermitian signal whose
// entries N/2 + 1 .. N - 1 along h are the conjugates of entries N - k (the imaginary parts of
// entry 0 and of N/2 drop out, as pocketfft's)
mt_status
mt_cpu__fft_c2r(mt_args *a)
{
    const mt_fft_plan *p = &a->plan->fft;
    mt_tensor *self = a->t[0], *out = a->out[0];
    const int h = p->dims[p->ndims - 1];
    const bool dbl = p->dt == MT_FLOAT64;
    const int64_t N = p->sizes[h], have = self->sizes[h] < N / 2 + 1 ? self->sizes[h] : N / 2 + 1;
    int64_t wsizes[MT_MAX_DIMS], wstr[MT_MAX_DIMS], ostr[MT_MAX_DIMS];
    memcpy(wsizes, p->sizes, sizeof(int64_t) * (size_t)p->ndim);
    wsizes[h] = have;
    contiguous_strides(p->ndim, wsizes, wstr);
    contiguous_strides(p->ndim, p->sizes, ostr);
    int64_t wnumel = 1;
    for (int d = 0; d < p->ndim; d++) {
        wnumel *= wsizes[d];
    }
    /* the complex passes over the half spectrum, into w; with none, the real pass reads self */
    char *w = NULL;
    mt_status st = MT_OK;
    if (p->ndims > 1) {
        w = malloc((dbl ? 16 : 8) * (size_t)(wnumel > 0 ? wnumel : 1));
        if (w == NULL) {
            return mt_fail(MT_ENOMEM, "out of memory for an FFT of %lld elements",
                           (long long)wnumel);
        }
        st = complex_passes(p, p->ndims - 1, self, wsizes, w, true, 1, dbl, false);
    }
    fft_pass ps = {
        .kind = FFT_C2R, .inverse = true, .last = true, .scale = p->scale, .n = N, .have = have};
    if (w != NULL) {
        set_lines(&ps, p->ndim, p->sizes, h, w, wstr, 2, mt_tensor_data(out), ostr, 1);
    } else {
        set_lines(&ps, p->ndim, p->sizes, h, mt_tensor_data(self), self->strides, 2,
                  mt_tensor_data(out), ostr, 1);
    }
    if (st == MT_OK) {
        st = run_pass(&ps, dbl);
    }
    free(w);
    return st;
}
