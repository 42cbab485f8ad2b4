/* The discrete Fourier transform on the CPU: _fft_c2c, _fft_r2c, _fft_c2r (their front end is
 * ops/fft.c, which has checked everything; nothing here raises but out of memory).
 *
 * The signal is copied into a work array of double complex (every dtype computes in double)
 * shaped like the transform's full signal; each dim of `dim` is then transformed in place, one
 * line at a time, the lines shared among the threads; the result is written out scaled. A line
 * of length n runs as an iterative radix-2 FFT when n is a power of two, else through
 * Bluestein's chirp-z identity as a convolution of power-of-two length m >= 2n - 1. The
 * inverse transform is the conjugate of the forward one of the conjugate. */
#include <complex.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/front.h"

typedef double complex cplx;

static const double pi = 3.14159265358979323846;

/* Lines of one dim's transform: a thread takes at least this many elements' worth. */
#define FFT_GRAIN 16384

/* The transform of one length n: m/2 twiddles exp(-2 pi i k / m) of the power-of-two length m
 * the work runs at (n itself, or Bluestein's); for Bluestein also the chirp exp(-pi i k^2 / n),
 * k < n, and the transform of its conjugate's filter, length m. */
typedef struct fft1d {
    int64_t n, m;
    cplx *tw;
    cplx *chirp; /* NULL when n is a power of two */
    cplx *filter;
} fft1d;

static bool
is_pow2(int64_t n)
{
    return (n & (n - 1)) == 0;
}

/* The complex product written out: C's operator also handles infinities by a branch to
 * __muldc3 on every NaN result, which keeps the butterflies from vectorising. */
static inline cplx
cmul(cplx a, cplx b)
{
    return CMPLX(creal(a) * creal(b) - cimag(a) * cimag(b),
                 creal(a) * cimag(b) + cimag(a) * creal(b));
}

/* Sizes at most this (in elements of all lines together) run their butterfly stages one after
 * the other (64 KiB of double complex: in L2); larger ones split in two halves first, so each
 * half's stages stay in cache. */
#define FFT_LEAF 4096

// x (len, B): B transforms side by side, element j of line b at x[j * B + b]; one butterfly
// pass of decimation in frequency over each line: the pairs (k, k + len/2),
// tw[k * step] = exp(-2 pi i k / len)
static inline void
dif_pass(cplx *x, int64_t len, int64_t B, const cplx *tw, int64_t step)
{
    const int64_t half = len / 2;
    for (int64_t k = 0; k < half; k++) {
        const cplx t = tw[k * step];
        cplx *lo = x + k * B, *hi = x + (k + half) * B;
        for (int64_t b = 0; b < B; b++) {
            const cplx u = lo[b], v = hi[b];
            lo[b] = u + v;
            hi[b] = cmul(u - v, t);
        }
    }
}

// x (len, B) as dif_pass, in place: the transforms of length len, in bit-reversed order. One
// function for one line (B the constant 1) and one for several (B = lanes, the lines of a
// strided dim copied side by side, the butterflies vectorised across them).
#define DIF(name, B_IS)                                                                  \
    MT_SIMD_CLONES static void name(cplx *x, int64_t len, int64_t lanes, const cplx *tw, \
                                    int64_t step)                                        \
    {                                                                                    \
        const int64_t B = B_IS;                                                          \
        (void)lanes;                                                                     \
        if (len * B > FFT_LEAF) {                                                        \
            dif_pass(x, len, B, tw, step);                                               \
            name(x, len / 2, lanes, tw, 2 * step);                                       \
            name(x + len / 2 * B, len / 2, lanes, tw, 2 * step);                         \
            return;                                                                      \
        }                                                                                \
        for (int64_t size = len, s = step; size >= 2; size >>= 1, s <<= 1) {             \
            for (int64_t i = 0; i < len; i += size) {                                    \
                dif_pass(x + i * B, size, B, tw, s);                                     \
            }                                                                            \
        }                                                                                \
    }
DIF(dif, 1)
DIF(dif_lines, lanes)

// x (m, B) as dif_pass: each line from bit-reversed order to natural order
static void
bitrev(cplx *x, int64_t m, int64_t B)
{
    for (int64_t i = 1, j = 0; i < m; i++) {
        int64_t bit = m >> 1;
        for (; j & bit; bit >>= 1) {
            j ^= bit;
        }
        j ^= bit;
        for (int64_t b = 0; b < B && i < j; b++) {
            const cplx t = x[i * B + b];
            x[i * B + b] = x[j * B + b];
            x[j * B + b] = t;
        }
    }
}

// x (m), m a power of two, in place: X[k] = sum_j x[j] exp(-2 pi i j k / m)
static void
radix2(cplx *x, int64_t m, const cplx *tw)
{
    dif(x, m, 1, tw, 1);
    bitrev(x, m, 1);
}

// tw (m/2 + 1): tw[k] = exp(-2 pi i k / m); when 8 divides m, sin and cos are computed for the
// first eighth of the circle only and the rest comes by its symmetries (a quarter of the calls)
static void
twiddles(cplx *tw, int64_t m)
{
    const bool sym = m % 8 == 0;
    const int64_t q = m / 4, e = sym ? m / 8 : m / 2;
    for (int64_t k = 0; k <= e; k++) {
        const double t = 2.0 * pi * (double)k / (double)m;
        tw[k] = CMPLX(cos(t), -sin(t));
    }
    if (!sym) {
        return;
    }
    for (int64_t k = e + 1; k <= q; k++) { /* t = pi/2 - t': cos t = sin t', sin t = cos t' */
        tw[k] = CMPLX(-cimag(tw[q - k]), -creal(tw[q - k]));
    }
    for (int64_t k = q + 1; k <= m / 2; k++) { /* t = pi - t'': cos t = -cos t'' */
        tw[k] = CMPLX(-creal(tw[m / 2 - k]), cimag(tw[m / 2 - k]));
    }
}

static void
fft1d_free(fft1d *f)
{
    free(f->tw);
    free(f->chirp);
    free(f->filter);
}

static mt_status
fft1d_init(fft1d *f, int64_t n)
{
    memset(f, 0, sizeof(*f));
    f->n = n;
    f->m = 1;
    while (f->m < (is_pow2(n) ? n : 2 * n - 1)) {
        f->m <<= 1;
    }
    const int64_t m = f->m;
    f->tw = malloc(sizeof(cplx) * (size_t)(m / 2 + 1));
    if (f->tw == NULL) {
        goto out_nomem;
    }
    twiddles(f->tw, m);
    if (m == n) {
        return MT_OK;
    }
    f->chirp = malloc(sizeof(cplx) * (size_t)n);
    f->filter = calloc((size_t)m, sizeof(cplx));
    if (f->chirp == NULL || f->filter == NULL) {
        goto out_nomem;
    }
    /* k^2 mod 2n (stepped: (k + 1)^2 = k^2 + 2k + 1) keeps the angle small and exact */
    for (int64_t k = 0, k2 = 0; k < n; k++) {
        const double t = -pi * (double)k2 / (double)n;
        f->chirp[k] = cos(t) + I * sin(t);
        k2 = (k2 + 2 * k + 1) % (2 * n);
    }
    f->filter[0] = conj(f->chirp[0]);
    for (int64_t k = 1; k < n; k++) {
        f->filter[k] = f->filter[m - k] = conj(f->chirp[k]);
    }
    radix2(f->filter, m, f->tw);
    return MT_OK;
out_nomem:
    fft1d_free(f);
    return mt_fail(MT_ENOMEM, "out of memory for an FFT of length %lld", (long long)n);
}

// x (n) in place; work (m) scratch: the forward transform, or the inverse (unscaled)
static void
fft1d_run(const fft1d *f, cplx *x, cplx *work, bool inverse)
{
    const int64_t n = f->n, m = f->m;
    if (inverse) {
        for (int64_t k = 0; k < n; k++) {
            x[k] = conj(x[k]);
        }
    }
    if (f->chirp == NULL) {
        radix2(x, n, f->tw);
    } else {
        /* X[k] = chirp[k] * sum_j (x[j] chirp[j]) conj(chirp[k - j]): a convolution, done as
         * a product of transforms; the inverse transform as the conjugate of the forward one */
        for (int64_t k = 0; k < n; k++) {
            work[k] = cmul(x[k], f->chirp[k]);
        }
        memset(work + n, 0, sizeof(cplx) * (size_t)(m - n));
        radix2(work, m, f->tw);
        for (int64_t k = 0; k < m; k++) {
            work[k] = conj(cmul(work[k], f->filter[k]));
        }
        radix2(work, m, f->tw);
        for (int64_t k = 0; k < n; k++) {
            x[k] = cmul(f->chirp[k], conj(work[k])) / (double)m;
        }
    }
    if (inverse) {
        for (int64_t k = 0; k < n; k++) {
            x[k] = conj(x[k]);
        }
    }
}

static int64_t
numel_of(int ndim, const int64_t *sizes)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        n *= sizes[d];
    }
    return n;
}

/* The forward transform of n real values, n even, as in pocketfft's real transforms: the n/2
 * pairs (x[2j], x[2j + 1]) as one complex signal z, its transform Z of length n/2, then
 * X[k] = E[k] + exp(-2 pi i k / n) O[k] with E[k] = (Z[k] + conj Z[n/2 - k]) / 2 and
 * O[k] = (Z[k] - conj Z[n/2 - k]) / 2i (the transforms of the even and the odd values). */
typedef struct rfft1d {
    fft1d half;
    cplx *rtw; /* n/2 + 1: exp(-2 pi i k / n) */
} rfft1d;

static mt_status
rfft1d_init(rfft1d *r, int64_t n)
{
    mt_status st = fft1d_init(&r->half, n / 2);
    if (st) {
        return st;
    }
    r->rtw = malloc(sizeof(cplx) * (size_t)(n / 2 + 1));
    if (r->rtw == NULL) {
        fft1d_free(&r->half);
        return mt_fail(MT_ENOMEM, "out of memory for an FFT of length %lld", (long long)n);
    }
    twiddles(r->rtw, n);
    return MT_OK;
}

// v (n = 2h) real -> x (kept <= n) the first kept entries of its transform; work (h + the
// half's m) scratch
static void
rfft1d_run(const rfft1d *r, const double *v, cplx *x, int64_t kept, cplx *work)
{
    const int64_t h = r->half.n, n = 2 * h;
    cplx *z = work;
    for (int64_t j = 0; j < h; j++) {
        z[j] = CMPLX(v[2 * j], v[2 * j + 1]);
    }
    fft1d_run(&r->half, z, work + h, false);
    for (int64_t k = 0; k <= h && k < kept; k++) {
        const cplx zk = z[k < h ? k : 0], zc = conj(z[k > 0 ? h - k : 0]); /* mod h */
        const cplx even = (zk + zc) * 0.5, odd = cmul(zk - zc, CMPLX(0.0, -0.5));
        x[k] = even + cmul(r->rtw[k], odd);
    }
    for (int64_t k = h + 1; k < kept; k++) {
        x[k] = conj(x[n - k]);
    }
}

// w: B neighbouring lines of a power-of-two length n = f->n, element j of line b at
// w[j * stride + b]; buf (n, B) scratch: the transform of each line, in place. The lines are
// copied side by side and transformed together.
static void
lines_side_by_side(const fft1d *f, cplx *w, int64_t stride, int64_t B, cplx *buf, bool inverse)
{
    const int64_t n = f->n;
    for (int64_t j = 0; j < n; j++) {
        memcpy(buf + j * B, w + j * stride, sizeof(cplx) * (size_t)B);
    }
    for (int64_t i = 0; i < n * B && inverse; i++) {
        buf[i] = conj(buf[i]);
    }
    dif_lines(buf, n, B, f->tw, 1);
    bitrev(buf, n, B);
    for (int64_t i = 0; i < n * B && inverse; i++) {
        buf[i] = conj(buf[i]);
    }
    for (int64_t j = 0; j < n; j++) {
        memcpy(w + j * stride, buf + j * B, sizeof(cplx) * (size_t)B);
    }
}

/* Lines of a strided dim copied together: FFT_BLOCK neighbouring lines read as rows of
 * FFT_BLOCK elements (whole cache lines), not one element per cache line. */
#define FFT_BLOCK 8

// w (sizes) contiguous, in place: the transform along dim d of every line. Lines whose index
// along dim h is `skip_from` or more are skipped (skip_from < 0: none): for c2r they are all 0
// and stay so.
static mt_status
transform_dim(cplx *w, int ndim, const int64_t *sizes, int d, bool inverse, int h,
              int64_t skip_from)
{
    const int64_t n = sizes[d], numel = numel_of(ndim, sizes);
    if (numel == 0 || n == 1) {
        return MT_OK;
    }
    const int64_t inner = numel_of(ndim - d - 1, sizes + d + 1);
    const int64_t inner_h = numel_of(ndim - h - 1, sizes + h + 1);
    const int64_t lines = numel / n;
    fft1d f;
    mt_status st = fft1d_init(&f, n);
    if (st) {
        return st;
    }
    const int64_t block = inner > 1 ? FFT_BLOCK : 1;
    int parts = mt_parallel_parts(numel, FFT_GRAIN);
    parts = parts > lines ? (int)lines : parts;
    atomic_bool failed = false;
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int part = 0; part < parts; part++) {
        cplx *buf = malloc(sizeof(cplx) * (size_t)(block * n + f.m));
        if (buf == NULL) {
            atomic_store(&failed, true);
            continue;
        }
        const int64_t l0 = lines * part / parts, l1 = lines * (part + 1) / parts;
        for (int64_t l = l0; l < l1;) {
            /* lines l .. l + cnt - 1: neighbours in memory (one block of inner), none skipped */
            int64_t cnt = 0;
            while (l + cnt < l1 && cnt < block && (cnt == 0 || (l + cnt) % inner != 0)) {
                const int64_t base = (l + cnt) / inner * n * inner + (l + cnt) % inner;
                if (skip_from >= 0 && d != h && base / inner_h % sizes[h] >= skip_from) {
                    break;
                }
                cnt++;
            }
            if (cnt == 0) {
                l++;
                continue;
            }
            const int64_t base = l / inner * n * inner + l % inner;
            if (f.chirp == NULL && cnt > 1) {
                lines_side_by_side(&f, w + base, inner, cnt, buf, inverse);
                l += cnt;
                continue;
            }
            for (int64_t j = 0; j < n; j++) {
                for (int64_t b = 0; b < cnt; b++) {
                    buf[b * n + j] = w[base + j * inner + b];
                }
            }
            for (int64_t b = 0; b < cnt; b++) {
                fft1d_run(&f, buf + b * n, buf + block * n, inverse);
            }
            for (int64_t j = 0; j < n; j++) {
                for (int64_t b = 0; b < cnt; b++) {
                    w[base + j * inner + b] = buf[b * n + j];
                }
            }
            l += cnt;
        }
        free(buf);
    }
    fft1d_free(&f);
    if (atomic_load(&failed)) {
        return mt_fail(MT_ENOMEM, "out of memory for an FFT of length %lld", (long long)n);
    }
    return MT_OK;
}

/* Steps idx (ndim coordinates within sizes) to the next element in row-major order. */
static void
next_index(int ndim, const int64_t *sizes, int64_t *idx)
{
    for (int d = ndim - 1; d >= 0; d--) {
        if (++idx[d] < sizes[d]) {
            return;
        }
        idx[d] = 0;
    }
}

static int64_t
offset_of(int ndim, const int64_t *idx, const int64_t *strides)
{
    int64_t off = 0;
    for (int d = 0; d < ndim; d++) {
        off += idx[d] * strides[d];
    }
    return off;
}

static cplx
load(const mt_tensor *t, const char *base, int64_t off)
{
    switch (t->dtype) {
    case MT_FLOAT32:
        return ((const float *)base)[off];
    case MT_FLOAT64:
        return ((const double *)base)[off];
    case MT_COMPLEX64:
        return ((const float *)base)[2 * off] + I * ((const float *)base)[2 * off + 1];
    default:
        return ((const double *)base)[2 * off] + I * ((const double *)base)[2 * off + 1];
    }
}

static void
store(mt_dtype dt, char *base, int64_t i, cplx v)
{
    switch (dt) {
    case MT_FLOAT32:
        ((float *)base)[i] = (float)creal(v);
        break;
    case MT_FLOAT64:
        ((double *)base)[i] = creal(v);
        break;
    case MT_COMPLEX64:
        ((float *)base)[2 * i] = (float)creal(v);
        ((float *)base)[2 * i + 1] = (float)cimag(v);
        break;
    default:
        ((double *)base)[2 * i] = creal(v);
        ((double *)base)[2 * i + 1] = cimag(v);
        break;
    }
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

// self (*) read into w (sizes): element idx of w is self's at idx when idx[h] < keep, else 0;
// a row along the last dim at a time (idx walks the others)
static void
load_signal(const mt_tensor *self, cplx *w, int ndim, const int64_t *sizes, int h, int64_t keep)
{
    const char *base = mt_tensor_data(self);
    int64_t idx[MT_MAX_DIMS] = {0};
    const int last = ndim - 1;
    const int64_t numel = numel_of(ndim, sizes), run = ndim ? sizes[last] : 1;
    const int64_t step = ndim ? self->strides[last] : 0;
    for (int64_t i = 0; i < numel; i += run, next_index(last, sizes, idx)) {
        const int64_t off = offset_of(last, idx, self->strides);
        const int64_t n = h == last ? (keep < run ? keep : run) : idx[h] < keep ? run : 0;
        for (int64_t j = 0; j < n; j++) {
            w[i + j] = load(self, base, off + j * step);
        }
        for (int64_t j = n; j < run; j++) {
            w[i + j] = 0;
        }
    }
}

// out (plan's sizes) = w (wsizes) * scale, out's part of it (r2c onesided keeps the first
// n/2 + 1 along the halved dim); a row along the last dim at a time
static void
store_result(const mt_fft_plan *p, const cplx *w, const int64_t *wsizes, mt_tensor *out)
{
    int64_t wstrides[MT_MAX_DIMS], idx[MT_MAX_DIMS] = {0};
    contiguous_strides(p->ndim, wsizes, wstrides);
    char *base = mt_tensor_data(out);
    const int last = p->ndim - 1;
    const int64_t numel = numel_of(p->ndim, p->sizes), run = p->ndim ? p->sizes[last] : 1;
    for (int64_t i = 0; i < numel; i += run, next_index(last, p->sizes, idx)) {
        const cplx *row = w + offset_of(last, idx, wstrides);
        for (int64_t j = 0; j < run; j++) {
            store(p->dt, base, i + j, row[j] * p->scale);
        }
    }
}

static cplx *
alloc_work(int ndim, const int64_t *sizes, mt_status *st)
{
    const int64_t n = numel_of(ndim, sizes);
    cplx *w = malloc(sizeof(cplx) * (size_t)(n > 0 ? n : 1));
    *st = w ? MT_OK : mt_fail(MT_ENOMEM, "out of memory for an FFT of %lld elements", (long long)n);
    return w;
}

// v (n) = the float32 or float64 values at base + (off + j * step) elements
static void
load_real(mt_dtype dt, const char *base, int64_t off, int64_t step, int64_t n, double *v)
{
    if (dt == MT_FLOAT32) {
        for (int64_t j = 0; j < n; j++) {
            v[j] = ((const float *)base)[off + j * step];
        }
    } else {
        for (int64_t j = 0; j < n; j++) {
            v[j] = ((const double *)base)[off + j * step];
        }
    }
}

// self (*) real, n its size along dim h -> w (wsizes: self's, wsizes[h] <= n kept): the
// transform of every line of self along h, its first wsizes[h] entries, read straight from self
static mt_status
real_lines(const mt_tensor *self, cplx *w, const int64_t *wsizes, int h)
{
    const int ndim = self->ndim;
    const int64_t n = self->sizes[h], kept = wsizes[h], numel = numel_of(ndim, self->sizes);
    if (numel == 0) {
        return MT_OK;
    }
    const int64_t inner = numel_of(ndim - h - 1, self->sizes + h + 1), lines = numel / n;
    const bool half = n % 2 == 0;
    fft1d f = {0};
    rfft1d rf = {0};
    mt_status st = half ? rfft1d_init(&rf, n) : fft1d_init(&f, n);
    if (st) {
        return st;
    }
    const int64_t work = half ? n / 2 + rf.half.m : f.m;
    const char *base = mt_tensor_data(self);
    int parts = mt_parallel_parts(numel, FFT_GRAIN);
    parts = parts > lines ? (int)lines : parts;
    atomic_bool failed = false;
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int part = 0; part < parts; part++) {
        cplx *buf = malloc(sizeof(cplx) * (size_t)(n + work) + sizeof(double) * (size_t)n);
        if (buf == NULL) {
            atomic_store(&failed, true);
            continue;
        }
        double *v = (double *)(buf + n + work);
        for (int64_t l = lines * part / parts; l < lines * (part + 1) / parts; l++) {
            int64_t rest = l, off = 0; /* self's offset of line l: l unravelled without h */
            for (int d = ndim - 1; d >= 0; d--) {
                if (d != h) {
                    off += rest % self->sizes[d] * self->strides[d];
                    rest /= self->sizes[d];
                }
            }
            load_real(self->dtype, base, off, self->strides[h], n, v);
            const int64_t wb = l / inner * kept * inner + l % inner;
            /* a contiguous line of w takes the result in place */
            cplx *dst = half && inner == 1 ? w + wb : buf;
            if (half) {
                rfft1d_run(&rf, v, dst, kept, buf + n);
            } else {
                for (int64_t j = 0; j < n; j++) {
                    buf[j] = v[j];
                }
                fft1d_run(&f, buf, buf + n, false);
            }
            for (int64_t j = 0; j < kept && dst == buf; j++) {
                w[wb + j * inner] = buf[j];
            }
        }
        free(buf);
    }
    fft1d_free(half ? &rf.half : &f);
    free(rf.rtw);
    if (atomic_load(&failed)) {
        return mt_fail(MT_ENOMEM, "out of memory for an FFT of length %lld", (long long)n);
    }
    return MT_OK;
}

/* The transforms of c2c and r2c: every dim of the plan over w, shaped like self; r2c's last
 * dim of dim first, read from self as real lines, into w shaped like the result (one-sided:
 * n/2 + 1 of n kept), and the other dims then only over that. */
static mt_status
c2c_or_r2c(mt_args *a, bool inverse)
{
    const mt_fft_plan *p = &a->plan->fft;
    mt_tensor *self = a->t[0];
    const int h = p->dims[p->ndims - 1];
    const bool real = !mt_dtype_is_complex(self->dtype) && self->ndim > 0;
    const int64_t *wsizes = real ? p->sizes : self->sizes;
    mt_status st = MT_OK;
    cplx *w = alloc_work(self->ndim, wsizes, &st);
    if (w == NULL) {
        return st;
    }
    if (real) {
        st = real_lines(self, w, wsizes, h);
    } else {
        load_signal(self, w, self->ndim, self->sizes, h, self->ndim ? self->sizes[h] : 1);
    }
    for (int k = 0; k < p->ndims - (real ? 1 : 0) && st == MT_OK; k++) {
        st = transform_dim(w, self->ndim, wsizes, p->dims[k], inverse, h, -1);
    }
    if (st == MT_OK) {
        store_result(p, w, wsizes, a->out[0]);
    }
    free(w);
    return st;
}

// self (*) complex -> out (*): the forward or inverse transform over dim, scaled
mt_status
mt_cpu__fft_c2c(mt_args *a)
{
    return c2c_or_r2c(a, !a->b[0]);
}

// self (*) real -> out (*) complex: the forward transform; onesided keeps n/2 + 1 along the
// last dim of dim
mt_status
mt_cpu__fft_r2c(mt_args *a)
{
    return c2c_or_r2c(a, false);
}

// self (..., h, ...) complex, the non-negative frequencies along dim h (the last of dim) ->
// out (..., N, ...) real, N = last_dim_size: the inverse transform of the Hermitian signal whose
// entries N/2 + 1 .. N - 1 along h are the conjugates of entries N - k (the imaginary parts of
// entry 0 and of N/2 drop out, as pocketfft's)
mt_status
mt_cpu__fft_c2r(mt_args *a)
{
    const mt_fft_plan *p = &a->plan->fft;
    mt_tensor *self = a->t[0];
    const int h = p->dims[p->ndims - 1];
    const int64_t N = p->sizes[h], half = N / 2 + 1;
    const int64_t keep = self->sizes[h] < half ? self->sizes[h] : half;
    mt_status st = MT_OK;
    cplx *w = alloc_work(p->ndim, p->sizes, &st);
    if (w == NULL) {
        return st;
    }
    load_signal(self, w, p->ndim, p->sizes, h, keep);
    for (int k = 0; k < p->ndims - 1 && st == MT_OK; k++) {
        st = transform_dim(w, p->ndim, p->sizes, p->dims[k], true, h, half);
    }
    if (st == MT_OK) {
        const int64_t numel = numel_of(p->ndim, p->sizes);
        const int64_t inner = numel_of(p->ndim - h - 1, p->sizes + h + 1);
        for (int64_t l = 0; l < numel / N; l++) {
            const int64_t base = l / inner * N * inner + l % inner;
            for (int64_t k = half; k < N; k++) {
                w[base + k * inner] = conj(w[base + (N - k) * inner]);
            }
        }
        st = transform_dim(w, p->ndim, p->sizes, h, true, h, -1);
    }
    if (st == MT_OK) {
        store_result(p, w, p->sizes, a->out[0]);
    }
    free(w);
    return st;
}
