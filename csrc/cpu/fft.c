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

// x (m), m a power of two, in place: X[k] = sum_j x[j] exp(-2 pi i j k / m)
static void
radix2(cplx *x, int64_t m, const cplx *tw)
{
    for (int64_t i = 1, j = 0; i < m; i++) { /* bit-reversed order */
        int64_t bit = m >> 1;
        for (; j & bit; bit >>= 1) {
            j ^= bit;
        }
        j ^= bit;
        if (i < j) {
            cplx t = x[i];
            x[i] = x[j];
            x[j] = t;
        }
    }
    for (int64_t len = 2; len <= m; len <<= 1) {
        const int64_t half = len / 2, step = m / len;
        for (int64_t i = 0; i < m; i += len) {
            for (int64_t k = 0; k < half; k++) {
                cplx u = x[i + k], v = x[i + k + half] * tw[k * step];
                x[i + k] = u + v;
                x[i + k + half] = u - v;
            }
        }
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
    for (int64_t k = 0; k < m / 2 + 1; k++) {
        const double t = -2.0 * pi * (double)k / (double)m;
        f->tw[k] = cos(t) + I * sin(t);
    }
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
            work[k] = x[k] * f->chirp[k];
        }
        memset(work + n, 0, sizeof(cplx) * (size_t)(m - n));
        radix2(work, m, f->tw);
        for (int64_t k = 0; k < m; k++) {
            work[k] = conj(work[k] * f->filter[k]);
        }
        radix2(work, m, f->tw);
        for (int64_t k = 0; k < n; k++) {
            x[k] = f->chirp[k] * conj(work[k]) / (double)m;
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

// w (sizes) contiguous, in place: the transform along dim d of every line. For c2r, the lines
// whose index along dim h is `zero_from` or more are all 0 and stay so (zero_from < 0: none).
static mt_status
transform_dim(cplx *w, int ndim, const int64_t *sizes, int d, bool inverse, int h,
              int64_t zero_from)
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
    int parts = mt_parallel_parts(numel, FFT_GRAIN);
    parts = parts > lines ? (int)lines : parts;
    atomic_bool failed = false;
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int part = 0; part < parts; part++) {
        cplx *line = malloc(sizeof(cplx) * (size_t)(n + f.m));
        if (line == NULL) {
            atomic_store(&failed, true);
            continue;
        }
        const int64_t l0 = lines * part / parts, l1 = lines * (part + 1) / parts;
        for (int64_t l = l0; l < l1; l++) {
            const int64_t base = l / inner * n * inner + l % inner;
            if (zero_from >= 0 && d != h && base / inner_h % sizes[h] >= zero_from) {
                continue;
            }
            for (int64_t j = 0; j < n; j++) {
                line[j] = w[base + j * inner];
            }
            fft1d_run(&f, line, line + n, inverse);
            for (int64_t j = 0; j < n; j++) {
                w[base + j * inner] = line[j];
            }
        }
        free(line);
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

// self (*) read into w (sizes): element idx of w is self's at idx when idx[h] < keep, else 0
static void
load_signal(const mt_tensor *self, cplx *w, int ndim, const int64_t *sizes, int h, int64_t keep)
{
    const char *base = mt_tensor_data(self);
    int64_t idx[MT_MAX_DIMS] = {0};
    const int64_t numel = numel_of(ndim, sizes);
    for (int64_t i = 0; i < numel; i++, next_index(ndim, sizes, idx)) {
        w[i] = idx[h] < keep ? load(self, base, offset_of(ndim, idx, self->strides)) : 0;
    }
}

// out (plan's sizes) = w (wsizes) * scale, out's part of it (r2c onesided keeps the first
// n/2 + 1 along the halved dim)
static void
store_result(const mt_fft_plan *p, const cplx *w, const int64_t *wsizes, mt_tensor *out)
{
    int64_t wstrides[MT_MAX_DIMS], idx[MT_MAX_DIMS] = {0};
    contiguous_strides(p->ndim, wsizes, wstrides);
    char *base = mt_tensor_data(out);
    const int64_t numel = numel_of(p->ndim, p->sizes);
    for (int64_t i = 0; i < numel; i++, next_index(p->ndim, p->sizes, idx)) {
        store(p->dt, base, i, w[offset_of(p->ndim, idx, wstrides)] * p->scale);
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

/* The transforms of c2c and r2c: every dim of the plan over w, shaped like self. */
static mt_status
c2c_or_r2c(mt_args *a, bool inverse)
{
    const mt_fft_plan *p = &a->plan->fft;
    mt_tensor *self = a->t[0];
    const int h = p->dims[p->ndims - 1];
    mt_status st = mt_tensor_empty(p->ndim, p->sizes, p->dt, MT_DEVICE_CPU, &a->out[0]);
    if (st) {
        return st;
    }
    cplx *w = alloc_work(self->ndim, self->sizes, &st);
    if (w == NULL) {
        goto out_clear;
    }
    load_signal(self, w, self->ndim, self->sizes, h, self->ndim ? self->sizes[h] : 1);
    for (int k = 0; k < p->ndims && st == MT_OK; k++) {
        st = transform_dim(w, self->ndim, self->sizes, p->dims[k], inverse, h, -1);
    }
    if (st == MT_OK) {
        store_result(p, w, self->sizes, a->out[0]);
    }
    free(w);
out_clear:
    if (st) {
        mt_tensor_clear(&a->out[0]);
    }
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
    mt_status st = mt_tensor_empty(p->ndim, p->sizes, p->dt, MT_DEVICE_CPU, &a->out[0]);
    if (st) {
        return st;
    }
    cplx *w = alloc_work(p->ndim, p->sizes, &st);
    if (w == NULL) {
        goto out_clear;
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
out_clear:
    if (st) {
        mt_tensor_clear(&a->out[0]);
    }
    return st;
}
