/* The FFT of csrc/cpu/fft.c for one real type R (float for complex64, double for complex128:
 * each dtype computes in its own precision, as pocketfft does), instantiated there twice with
 * FFT_R, FFT_NAME(f) and FFT_LANES set. Included by fft.c only; nothing here fails but malloc.
 *
 * Every transform runs on a block of L lines at once (L = FFT_LANES, one AVX-512 register of
 * R): element j of the block is L real parts then L imaginary parts, at blk + 2 L j, so each
 * butterfly is a loop over the lanes that the compiler vectorises with no shuffles. A plan of
 * length n is a mixed-radix Stockham transform (radices 4, 2, then odd primes; no bit
 * reversal: each stage reads one buffer and writes the other), Bluestein's chirp-z for a
 * length with a prime factor above FFT_MAX_RADIX, and, for long lines of which there are too
 * few to fill a block, the four-step split n = n1 n2 (lines of n1 down the columns of an
 * (n1, n2) matrix, a twiddle, lines of n2 along its rows), which gives blocks again. */
#define R FFT_R
#define F FFT_NAME
#define L FFT_LANES

typedef struct F(plan) {
    int64_t n;
    int nstages;
    int radix[64];
    R *tw; /* per stage, from tw_at[s]: W_len^(i r), i < len/p, 0 < r < p; then F(bfp)'s wp */
    int64_t tw_at[64];
    R *half;         /* the real transforms of 2n: exp(-pi i k / n), k <= n / 2 */
    struct F(plan) * blue; /* Bluestein: the power-of-two plan it convolves at, else NULL */
    R *chirp;        /* n: exp(-pi i k^2 / n) */
    R *filter;       /* blue->n: the transform of conj(chirp), wrapped, divided by blue->n */
    struct F(plan) * p1, *p2; /* four-step: n = n1 n2, NULL when not split */
    R *tw4;          /* (n1, n2): W_n^(k1 j2) */
    int rv;          /* the short-line path (cpu/fft_row_impl.h): entries per vector, 0: none */
    R *rtw; /* its twiddles: the transform of n / rv's, then the lanes' (from rtw_lane) */
    int64_t rtw_lane;
    R *ctw; /* a few lines side by side in 32-byte vectors (F(narrow)): the twiddles of n, or NULL */
} F(plan);

static void
F(plan_free)(F(plan) * p)
{
    if (p == NULL) {
        return;
    }
    free(p->tw);
    free(p->half);
    free(p->chirp);
    free(p->filter);
    F(plan_free)(p->blue);
    F(plan_free)(p->p1);
    F(plan_free)(p->p2);
    free(p->tw4);
    free(p->rtw);
    free(p->ctw);
    free(p);
}

static R *
F(roots)(int64_t count)
{
    return malloc(sizeof(R) * 2 * (size_t)(count > 0 ? count : 1));
}

static void
F(set_root)(R *dst, int64_t k, int64_t n)
{
    double re, im;
    unit_root(k, n, &re, &im);
    dst[0] = (R)re;
    dst[1] = (R)im;
}

/* The butterflies of one (i, q) of a stage: p blocks in from a (steps ai), p out to o (steps
 * oi), output r times W_len^(i r) = w[r - 1] when tw (never for i = 0, whose twiddles are 1:
 * skipping them keeps x * 1 exact and inf * 0 out). Inlined with tw constant, each lane loop
 * is one vector loop. */

// radix 2: o0 = a0 + a1, o1 = a0 - a1
FFT_INLINE void
F(bf2)(const R *restrict a, int64_t ai, R *restrict o, int64_t oi, const R *w, bool tw)
{
    const R wr = tw ? w[0] : 1, wi = tw ? w[1] : 0;
#pragma omp simd
    for (int b = 0; b < L; b++) {
        const R vr = a[b] - a[ai + b], vi = a[L + b] - a[ai + L + b];
        o[b] = a[b] + a[ai + b];
        o[L + b] = a[L + b] + a[ai + L + b];
        o[oi + b] = tw ? vr * wr - vi * wi : vr;
        o[oi + L + b] = tw ? vr * wi + vi * wr : vi;
    }
}

// radix 4 (W_4 = -i): with t0 = a0 + a2, t1 = a0 - a2, t2 = a1 + a3, t3 = a1 - a3:
// o0 = t0 + t2, o1 = t1 - i t3, o2 = t0 - t2, o3 = t1 + i t3
FFT_INLINE void
F(bf4)(const R *restrict a, int64_t ai, R *restrict o, int64_t oi, const R *w, bool tw)
{
    R wr[4] = {1, 1, 1, 1}, wi[4] = {0, 0, 0, 0};
    for (int r = 1; r < 4 && tw; r++) {
        wr[r] = w[2 * (r - 1)];
        wi[r] = w[2 * (r - 1) + 1];
    }
#pragma omp simd
    for (int b = 0; b < L; b++) {
        const R t0r = a[b] + a[2 * ai + b], t0i = a[L + b] + a[2 * ai + L + b];
        const R t1r = a[b] - a[2 * ai + b], t1i = a[L + b] - a[2 * ai + L + b];
        const R t2r = a[ai + b] + a[3 * ai + b], t2i = a[ai + L + b] + a[3 * ai + L + b];
        const R t3r = a[ai + b] - a[3 * ai + b], t3i = a[ai + L + b] - a[3 * ai + L + b];
        const R yr[4] = {t0r + t2r, t1r + t3i, t0r - t2r, t1r - t3i};
        const R yi[4] = {t0i + t2i, t1i - t3r, t0i - t2i, t1i + t3r};
        o[b] = yr[0];
        o[L + b] = yi[0];
        for (int r = 1; r < 4; r++) {
            o[r * oi + b] = tw ? yr[r] * wr[r] - yi[r] * wi[r] : yr[r];
            o[r * oi + L + b] = tw ? yr[r] * wi[r] + yi[r] * wr[r] : yi[r];
        }
    }
}

// odd radix p, in pairs t and p - t (pocketfft's generic pass): with S_t = a_t + a_(p-t),
// D_t = a_t - a_(p-t), A = a0 + sum_t S_t cos(2 pi t r / p), B = sum_t D_t sin(2 pi t r / p):
// o_r = A - i B, o_(p-r) = A + i B; wp: (cos, sin)(2 pi t r / p), (p / 2, p / 2) by r, t
// (a table by r and t, not W_p^t by t r mod p: GCC vectorised that index into lane extracts
// and scalar loads, a fifth of the time of a stage of radix 7)
FFT_INLINE void
F(bfp)(const R *restrict a, int64_t ai, R *restrict o, int64_t oi, const R *w, bool tw, int p,
       const R *wp)
{
    R sum[FFT_MAX_RADIX / 2 + 1][2 * L], dif[FFT_MAX_RADIX / 2 + 1][2 * L];
    for (int t = 1; 2 * t < p; t++) {
        const R *u = a + t * ai, *v = a + (p - t) * ai;
#pragma omp simd
        for (int b = 0; b < 2 * L; b++) {
            sum[t][b] = u[b] + v[b];
            dif[t][b] = u[b] - v[b];
        }
    }
#pragma omp simd
    for (int b = 0; b < 2 * L; b++) {
        R y = a[b];
        for (int t = 1; 2 * t < p; t++) {
            y += sum[t][b];
        }
        o[b] = y;
    }
    for (int r = 1; 2 * r < p; r++) {
        R ar[L], ai_[L], br[L], bi[L];
#pragma omp simd
        for (int b = 0; b < L; b++) {
            ar[b] = a[b];
            ai_[b] = a[L + b];
            br[b] = bi[b] = 0;
        }
        const R *cs = wp + 2 * (p / 2) * (r - 1);
        for (int t = 1; 2 * t < p; t++) {
            const R c = cs[2 * (t - 1)], sn = cs[2 * (t - 1) + 1];
#pragma omp simd
            for (int b = 0; b < L; b++) {
                ar[b] += sum[t][b] * c;
                ai_[b] += sum[t][L + b] * c;
                br[b] += dif[t][b] * sn;
                bi[b] += dif[t][L + b] * sn;
            }
        }
        const int rr[2] = {r, p - r};
        for (int k = 0; k < 2; k++) {
            const R sg = k ? -1 : 1; /* o_r = (A_r + B_i, A_i - B_r), o_(p-r) the other sign */
            const R wr = tw ? w[2 * (rr[k] - 1)] : 1, wi = tw ? w[2 * (rr[k] - 1) + 1] : 0;
            R *out = o + rr[k] * oi;
#pragma omp simd
            for (int b = 0; b < L; b++) {
                const R yr = ar[b] + sg * bi[b], yi = ai_[b] - sg * br[b];
                out[b] = tw ? yr * wr - yi * wi : yr;
                out[L + b] = tw ? yr * wi + yi * wr : yi;
            }
        }
    }
}

// x, y (n blocks): one Stockham stage of radix p over sub-transforms of length len, s of them
// interleaved: x[q + s (i + t m)] -> y[q + s (p i + r)] = W_len^(i r) sum_t x[..] W_p^(t r),
// m = len / p. tw: the stage's twiddles, (m, p - 1); then W_p^t for an odd radix.
MT_SIMD_CLONES static void
F(stage)(const R *restrict x, R *restrict y, int64_t len, int64_t s, int p, const R *tw)
{
    const int64_t m = len / p, ai = 2 * L * s * m, oi = 2 * L * s; /* steps of t and of r */
    for (int64_t i = 0; i < m; i++) {
        const R *w = tw + 2 * (p - 1) * i;
        for (int64_t q = 0; q < s; q++) {
            const R *a = x + 2 * L * (q + s * i);
            R *o = y + 2 * L * (q + s * p * i);
            if (p == 4) {
                if (i) {
                    F(bf4)(a, ai, o, oi, w, true);
                } else {
                    F(bf4)(a, ai, o, oi, w, false);
                }
            } else if (p == 2) {
                if (i) {
                    F(bf2)(a, ai, o, oi, w, true);
                } else {
                    F(bf2)(a, ai, o, oi, w, false);
                }
            } else if (p == 3) { /* a constant p unrolls the pairs */
                F(bfp)(a, ai, o, oi, w, i != 0, 3, tw + 2 * (p - 1) * m);
            } else if (p == 5) {
                F(bfp)(a, ai, o, oi, w, i != 0, 5, tw + 2 * (p - 1) * m);
            } else if (p == 7) {
                F(bfp)(a, ai, o, oi, w, i != 0, 7, tw + 2 * (p - 1) * m);
            } else if (p == 11) {
                F(bfp)(a, ai, o, oi, w, i != 0, 11, tw + 2 * (p - 1) * m);
            } else {
                F(bfp)(a, ai, o, oi, w, i != 0, p, tw + 2 * (p - 1) * m);
            }
        }
    }
}

static size_t
F(scratch_len)(const F(plan) * p)
{
    /* in blocks: the Stockham partner buffer, or Bluestein's two of its length */
    return (size_t)(p->blue ? 2 * p->blue->n : p->n);
}

// x (n blocks) -> the forward transform of each lane, in x or in scratch (scratch_len
// blocks): the one returned (a Stockham stage writes the other buffer than it reads)
static R *
F(run)(const F(plan) * p, R *x, R *scratch)
{
    if (p->blue != NULL) {
        /* X[k] = chirp[k] sum_j (x[j] chirp[j]) conj(chirp[k - j]): the convolution as a
         * product of transforms, the inverse transform as the conjugate of a forward one */
        const int64_t n = p->n, m = p->blue->n;
        R *w = scratch, *ws = scratch + 2 * L * m;
        for (int64_t k = 0; k < m; k++) {
            const R cr = k < n ? p->chirp[2 * k] : 0, ci = k < n ? p->chirp[2 * k + 1] : 0;
            for (int b = 0; b < L; b++) {
                const R xr = k < n ? x[2 * L * k + b] : 0, xi = k < n ? x[2 * L * k + L + b] : 0;
                w[2 * L * k + b] = xr * cr - xi * ci;
                w[2 * L * k + L + b] = xr * ci + xi * cr;
            }
        }
        R *v = F(run)(p->blue, w, ws);
        for (int64_t k = 0; k < m; k++) {
            const R fr = p->filter[2 * k], fi = p->filter[2 * k + 1];
            for (int b = 0; b < L; b++) {
                const R wr = v[2 * L * k + b], wi = v[2 * L * k + L + b];
                v[2 * L * k + b] = wr * fr - wi * fi;
                v[2 * L * k + L + b] = -(wr * fi + wi * fr);
            }
        }
        v = F(run)(p->blue, v, v == w ? ws : w);
        for (int64_t k = 0; k < n; k++) {
            const R cr = p->chirp[2 * k], ci = p->chirp[2 * k + 1];
            for (int b = 0; b < L; b++) {
                const R vr = v[2 * L * k + b], vi = -v[2 * L * k + L + b];
                x[2 * L * k + b] = vr * cr - vi * ci;
                x[2 * L * k + L + b] = vr * ci + vi * cr;
            }
        }
        return x;
    }
    R *src = x, *dst = scratch;
    for (int st = 0, s = 1; st < p->nstages; st++) {
        const int radix = p->radix[st];
        F(stage)(src, dst, p->n / s, s, radix, p->tw + 2 * p->tw_at[st]);
        s *= radix;
        R *t = src;
        src = dst;
        dst = t;
    }
    return src;
}

static F(plan) * F(plan_new)(int64_t n, bool split);
static bool F(init_row)(F(plan) * p);

static bool
F(init_stages)(F(plan) * p)
{
    int64_t rest = p->n, count = 0;
    while (rest > 1) {
        int r = rest % 4 == 0 ? 4 : rest % 2 == 0 ? 2 : 3;
        while (rest % r != 0) {
            r += 2;
        }
        p->radix[p->nstages++] = r;
        rest /= r;
    }
    int64_t s = 1;
    for (int st = 0; st < p->nstages; st++) {
        const int r = p->radix[st];
        p->tw_at[st] = count;
        count += (r - 1) * (p->n / s / r) + (r > 2 && r != 4 ? (r / 2) * (r / 2) : 0);
        s *= r;
    }
    p->tw = F(roots)(count);
    if (p->tw == NULL) {
        return false;
    }
    s = 1;
    for (int st = 0; st < p->nstages; st++) {
        const int r = p->radix[st];
        const int64_t len = p->n / s, m = len / r;
        R *w = p->tw + 2 * p->tw_at[st];
        for (int64_t i = 0; i < m; i++) {
            for (int q = 1; q < r; q++) {
                F(set_root)(w + 2 * ((r - 1) * i + q - 1), i * q, len);
            }
        }
        for (int q = 1; 2 * q < r && r > 2 && r != 4; q++) { /* F(bfp)'s wp */
            for (int t = 1; 2 * t < r; t++) {
                R *e = w + 2 * ((r - 1) * m + (r / 2) * (q - 1) + t - 1);
                F(set_root)(e, (int64_t)t * q % r, r);
                e[1] = -e[1];
            }
        }
        s *= r;
    }
    return true;
}

static bool
F(init_bluestein)(F(plan) * p, bool split)
{
    const int64_t n = p->n;
    int64_t m = 1;
    while (m < 2 * n - 1) {
        m <<= 1;
    }
    p->blue = F(plan_new)(m, split);
    p->chirp = F(roots)(n);
    p->filter = F(roots)(m);
    if (p->blue == NULL || p->chirp == NULL || p->filter == NULL) {
        return false;
    }
    /* k^2 mod 2n (stepped: (k + 1)^2 = k^2 + 2k + 1) keeps the angle exact */
    for (int64_t k = 0, k2 = 0; k < n; k++) {
        F(set_root)(p->chirp + 2 * k, k2, 2 * n);
        k2 = (k2 + 2 * k + 1) % (2 * n);
    }
    /* the filter in double, transformed by a one-lane O(m log m) pass: conj(chirp) at k and
     * m - k, zero between */
    double *f = calloc((size_t)m, 2 * sizeof(double));
    if (f == NULL) {
        return false;
    }
    for (int64_t k = 0, k2 = 0; k < n; k++) {
        double re, im;
        unit_root(k2, 2 * n, &re, &im);
        f[2 * k] = re;
        f[2 * k + 1] = -im;
        if (k > 0) {
            f[2 * (m - k)] = re;
            f[2 * (m - k) + 1] = -im;
        }
        k2 = (k2 + 2 * k + 1) % (2 * n);
    }
    dft_pow2(f, m);
    for (int64_t k = 0; k < 2 * m; k++) {
        p->filter[k] = (R)(f[k] / (double)m);
    }
    free(f);
    return true;
}

static bool
F(init_four_step)(F(plan) * p, int64_t n1)
{
    const int64_t n2 = p->n / n1;
    p->p1 = F(plan_new)(n1, false);
    p->p2 = F(plan_new)(n2, false);
    p->tw4 = F(roots)(p->n);
    if (p->p1 == NULL || p->p2 == NULL || p->tw4 == NULL) {
        return false;
    }
    for (int64_t k1 = 0; k1 < n1; k1++) {
        for (int64_t j2 = 0; j2 < n2; j2++) {
            F(set_root)(p->tw4 + 2 * (k1 * n2 + j2), k1 * j2 % p->n, p->n);
        }
    }
    return true;
}

// the plan of length n >= 1 (split: four-step when long), or NULL when out of memory
static F(plan) * F(plan_new)(int64_t n, bool split)
{
    F(plan) *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return NULL;
    }
    p->n = n;
    p->half = F(roots)(n / 2 + 1);
    if (p->half == NULL) {
        goto out_free_plan;
    }
    for (int64_t k = 0; k <= n / 2; k++) {
        F(set_root)(p->half + 2 * k, k, 2 * n);
    }
    const int64_t n1 = split ? four_step_split(n) : 1;
    const bool ok = n1 > 1 ? F(init_four_step)(p, n1)
                    : largest_prime(n) > FFT_MAX_RADIX
                        ? F(init_bluestein)(p, split && n >= FFT_FOUR_STEP)
                        : F(init_stages)(p) && F(init_row)(p);
    if (!ok) {
        goto out_free_plan;
    }
    return p;
out_free_plan:
    F(plan_free)(p);
    return NULL;
}

/* ---- a block's lines in memory: gathered into it and scattered back ---- */

// The lanes of a block whose lines neighbour in memory (a dim other than the line's, contiguous:
// complex elements 2 reals apart, real ones 1) form runs, each copied by one vector loop; whole
// complex lines with none neighbouring (the last dim) go by L x L tiles, transposed; what is
// left, lane by lane.

// the lanes b0 .. b1 - 1 that follow b0 in memory by sp reals each (at least b0 itself)
FFT_INLINE int
F(run_end)(const R *const *line, int b0, int cnt, int64_t sp)
{
    int b1 = b0 + 1;
    while (b1 < cnt && line[b1] == line[b1 - 1] + sp) {
        b1++;
    }
    return b1;
}

// blk's lanes b0 .. b1 - 1 <- element j of lane b at p + j es + sp b, its imaginary part io
// further (none for io < 0)
FFT_INLINE void
F(gather_run)(R *restrict blk, const R *p, int b0, int b1, int64_t n, int64_t es, int64_t io,
              int64_t sp)
{
    for (int64_t j = 0; j < n; j++) {
        R *e = blk + 2 * L * j;
        if (sp == 2) {
            for (int b = b0; b < b1; b++) {
                e[b] = p[j * es + 2 * b];
                e[L + b] = p[j * es + 2 * b + 1];
            }
        } else {
            for (int b = b0; b < b1; b++) {
                e[b] = p[j * es + b];
                e[L + b] = io < 0 ? 0 : p[j * es + b + io];
            }
        }
    }
}

// the other way: lanes b0 .. b1 - 1 of blk, times scale, to p as in gather_run
FFT_INLINE void
F(scatter_run)(const R *restrict blk, R *p, int b0, int b1, int64_t n, int64_t es, int64_t io,
               int64_t sp, R scale)
{
    for (int64_t j = 0; j < n; j++) {
        const R *e = blk + 2 * L * j;
        if (sp == 2) {
            for (int b = b0; b < b1; b++) {
                p[j * es + 2 * b] = e[b] * scale;
                p[j * es + 2 * b + 1] = e[L + b] * scale;
            }
        } else {
            for (int b = b0; b < b1; b++) {
                p[j * es + b] = e[b] * scale;
                if (io >= 0) {
                    p[j * es + b + io] = e[L + b] * scale;
                }
            }
        }
    }
}

// The L x L tiles of gather and scatter: row r (L reals) at from[r] + fo -> column r of the
// tile, its entry c to to[c] + to_ + r, times scale. Whole vectors of W lanes (tile_bytes) hold
// the rows of a W x W sub-tile; each round K (1, 2, .. W / 2) swaps the off-diagonal K x K
// blocks of every 2K x 2K block (rows i, i + K), which trades one bit of a row's index with the
// column's: after them all, the sub-tile is transposed. The scalar loop is the same tile.
typedef R F(vrow) __attribute__((vector_size(L * sizeof(R)), aligned(sizeof(R))));
typedef R F(vhalf) __attribute__((vector_size(L / 2 * sizeof(R)), aligned(sizeof(R))));

#define FFT_ROUND(t, W, K, LANES)                                               \
    for (int i = 0; i < (W) && (K) < (W); i++) {                                \
        if (!(i & (K))) {                                                       \
            const __typeof__(t[0]) lo = t[i], hi = t[i + (K)];                  \
            t[i] = __builtin_shufflevector(lo, hi, LANES(FFT_TLO, W, K));       \
            t[i + (K)] = __builtin_shufflevector(lo, hi, LANES(FFT_THI, W, K)); \
        }                                                                       \
    }
#define FFT_SUBTILES(V, W, LANES, STORE)                          \
    for (int r0 = 0; r0 < L; r0 += (W)) {                         \
        for (int c0 = 0; c0 < L; c0 += (W)) {                     \
            V t[(W)];                                             \
            for (int i = 0; i < (W); i++) {                       \
                memcpy(&t[i], from[r0 + i] + fo + c0, sizeof(V)); \
            }                                                     \
            FFT_ROUND(t, W, 1, LANES)                             \
            FFT_ROUND(t, W, 2, LANES)                             \
            FFT_ROUND(t, W, 4, LANES)                             \
            FFT_ROUND(t, W, 8, LANES)                             \
            for (int i = 0; i < (W); i++) {                       \
                const V v = t[i] * scale;                         \
                STORE(to[c0 + i] + to_ + r0, v);                  \
            }                                                     \
        }                                                         \
    }

FFT_INLINE void
F(tile)(const R *const *from, int64_t fo, R *const *to, int64_t to_, R scale, int bytes)
{
    if (bytes == (int)sizeof(F(vrow))) {
        FFT_SUBTILES(F(vrow), L, FFT_ROW_W, FFT_STORE)
    } else if (bytes == (int)sizeof(F(vhalf))) {
        FFT_SUBTILES(F(vhalf), L / 2, FFT_ROW_H, FFT_STORE)
    } else {
        for (int c = 0; c < L; c++) {
            for (int r = 0; r < L; r++) {
                to[c][to_ + r] = from[r][fo + c] * scale;
            }
        }
    }
}

// the L x L tile of scatter (F(tile)'s, whole AVX-512 vectors) whose stores stream to memory,
// to 64-byte aligned rows (where FFT_STREAMS is 0, F(streams) never picks it: F(tile) then)
#if FFT_STREAMS
__attribute__((target("avx512f"))) static void
F(tile_stream)(const R *const *from, int64_t fo, R *const *to, int64_t to_, R scale)
{
    FFT_SUBTILES(F(vrow), L, FFT_ROW_W, FFT_STREAM);
}
#else
FFT_INLINE void
F(tile_stream)(const R *const *from, int64_t fo, R *const *to, int64_t to_, R scale)
{
    F(tile)(from, fo, to, to_, scale, 0);
}
#endif

#undef FFT_SUBTILES
#undef FFT_ROUND

// asks for the cache line at reals c of each of the L lines of the block FFT_AHEAD blocks on
// (at line[b] + c + d, d = FFT_AHEAD L times the step between this block's lines: right while
// the lines go on evenly, and harmless where not, as a prefetch never faults), to be written or
// read. The tiles of gather and scatter ask for the line they move, so the requests are spread
// over the block's work (the whole block's at once, 128 cache lines, had the core wait at the
// prefetches for the memory system's few outstanding misses, and moving blocks waited as long)
FFT_INLINE void
F(prefetch_ahead)(const R *const *line, int64_t c, bool write)
{
    const intptr_t d = FFT_AHEAD * L * (intptr_t)sizeof(R) * (line[1] - line[0]);
    for (int b = 0; b < L; b++) {
        const void *next = (const void *)((uintptr_t)(line[b] + c) + (uintptr_t)d);
        if (write) {
            __builtin_prefetch(next, 1);
        } else {
            __builtin_prefetch(next, 0);
        }
    }
}

// blk (n blocks) <- lanes b < cnt of v (the rest 0): element j of lane b at line[b] + j * es
// (R units), its imaginary part io further (io < 0: a real line, zero imaginary part)
FFT_INLINE void
F(gather)(R *restrict blk, const R *const *line, int cnt, int64_t n, int64_t es, int64_t io)
{
    if (cnt < L) {
        memset(blk, 0, sizeof(R) * 2 * L * (size_t)n);
    }
    const int64_t sp = io == 1 ? 2 : 1;
    if (cnt == L && es == 2 && io == 1 && F(run_end)(line, 0, cnt, sp) == 1) {
        const int bytes = tile_bytes();
        R *rows[L]; /* the block's element 0 as L rows of L reals */
        for (int b = 0; b < L; b++) {
            rows[b] = blk + L * b;
        }
        int64_t j = 0;
        for (; j + L / 2 <= n; j += L / 2) { /* L / 2 elements of each line: an L x L tile */
            F(prefetch_ahead)(line, 2 * j, false);
            F(tile)(line, 2 * j, rows, 2 * L * j, 1, bytes);
        }
        if (j < n) {
            F(prefetch_ahead)(line, 2 * j, false);
        }
        if (j < n && n >= L / 2) { /* the last L / 2 elements, some again: one more tile */
            F(tile)(line, 2 * (n - L / 2), rows, 2 * L * (n - L / 2), 1, bytes);
            j = n;
        }
        for (; j < n; j++) {
            for (int b = 0; b < L; b++) {
                blk[2 * L * j + b] = line[b][2 * j];
                blk[2 * L * j + L + b] = line[b][2 * j + 1];
            }
        }
        return;
    }
    for (int b0 = 0, b1; b0 < cnt; b0 = b1) {
        b1 = F(run_end)(line, b0, cnt, sp);
        const R *p = line[b0] - sp * b0; /* lane b at p + sp b */
        if (b1 - b0 == L) { /* one run: constant bounds vectorise */
            F(gather_run)(blk, p, 0, L, n, es, io, sp);
        } else {
            F(gather_run)(blk, p, b0, b1, n, es, io, sp);
        }
    }
}

// whether the tiles of the L lines stream past the caches (F(tile_stream)): asked for, with
// AVX-512 vectors, and every line 64-byte aligned
FFT_INLINE bool
F(streams)(R *const *line, bool stream, int bytes)
{
    bool ok = FFT_STREAMS && stream && bytes == 64 && (int)sizeof(F(vrow)) == 64;
    for (int b = 0; b < L && ok; b++) {
        ok = (uintptr_t)line[b] % 64 == 0;
    }
    return ok;
}

// the L x L tile rows of scatter, copied on from buf (count reals, one run: the block's lines
// next to each other) to dst, the whole 64-byte lines of dst by stores past the caches
#if FFT_STREAMS
__attribute__((target("avx512f"))) static void
F(stream_copy)(R *dst, const R *buf, int64_t count)
{
    int64_t i = 0;
    for (; i < count && (uintptr_t)(dst + i) % 64 != 0; i++) {
        dst[i] = buf[i];
    }
    for (; i + L <= count; i += L) {
        F(vrow) v;
        memcpy(&v, buf + i, sizeof(v));
        FFT_STREAM(dst + i, v);
    }
    for (; i < count; i++) {
        dst[i] = buf[i];
    }
}
#else
FFT_INLINE void
F(stream_copy)(R *dst, const R *buf, int64_t count)
{
    memcpy(dst, buf, sizeof(R) * (size_t)count);
}
#endif

/* A block of complex lines that lie one after the other (the last dim), whose result streams
 * but is not 64-byte aligned line by line (n = 63: 504-byte lines), is transposed into a buffer
 * of this many bytes, in L1, and streamed on from there as one run: written in place, each
 * cache line of the result was read first (an FFT along the last dim of (20, 32, 64, 63)
 * complex64, 20 MiB out, one thread on a loaded machine: 7.8 ms stored in place, 6.6 ms
 * staged and streamed; PyTorch's 5.2 ms). */
#define FFT_STAGE_BYTES 32768

// whether scatter's L lines of n complex entries go through the buffer (FFT_STAGE_BYTES): a
// streamed result, AVX-512 vectors, the lines one run
FFT_INLINE bool
F(staged)(R *const *line, bool stream, int bytes, int64_t n)
{
    bool ok = FFT_STREAMS && stream && bytes == 64 && n >= L / 2 &&
              2 * n * L * (int64_t)sizeof(R) <= FFT_STAGE_BYTES;
    for (int b = 1; b < L && ok; b++) {
        ok = line[b] == line[0] + 2 * n * b;
    }
    return ok;
}

// lanes b < cnt of blk: element j (< n) to line[b] + j * es, its imaginary part io further
// (io < 0: its real part only), times scale; the ways of gather, the other way; the tiles
// stream past the caches where they can when `stream` (F(tile_stream), else F(staged))
FFT_INLINE void
F(scatter)(const R *restrict blk, R *const *line, int cnt, int64_t n, int64_t es, int64_t io,
           R scale, bool stream)
{
    const int64_t sp = io == 1 ? 2 : 1;
    if (cnt == L && es == 2 && io == 1 && F(run_end)((const R *const *)line, 0, cnt, sp) == 1) {
        const int bytes = tile_bytes();
        const bool nt = F(streams)(line, stream, bytes);
        const bool staged = !nt && F(staged)(line, stream, bytes, n);
        R buf[staged ? 2 * n * L : 1] __attribute__((aligned(64)));
        R *to[L]; /* where the tiles go: the lines, or their copy in buf */
        const R *rows[L];
        for (int b = 0; b < L; b++) {
            rows[b] = blk + L * b;
            to[b] = staged ? buf + 2 * n * b : line[b];
        }
        int64_t j = 0;
        for (; j + L / 2 <= n; j += L / 2) {
            if (nt) {
                F(tile_stream)(rows, 2 * L * j, line, 2 * j, scale);
                continue;
            }
            if (!staged) {
                F(prefetch_ahead)((const R *const *)line, 2 * j, true);
            }
            F(tile)(rows, 2 * L * j, to, 2 * j, scale, bytes);
        }
        if (j < n && !staged) {
            F(prefetch_ahead)((const R *const *)line, 2 * j, true);
        }
        if (j < n && n >= L / 2) { /* the last L / 2 elements, some again (the same values) */
            F(tile)(rows, 2 * L * (n - L / 2), to, 2 * (n - L / 2), scale, bytes);
            j = n;
        }
        for (; j < n; j++) {
            for (int b = 0; b < L; b++) {
                to[b][2 * j] = blk[2 * L * j + b] * scale;
                to[b][2 * j + 1] = blk[2 * L * j + L + b] * scale;
            }
        }
        if (staged) {
            F(stream_copy)(line[0], buf, 2 * n * L);
        }
        return;
    }
    for (int b0 = 0, b1; b0 < cnt; b0 = b1) {
        b1 = F(run_end)((const R *const *)line, b0, cnt, sp);
        R *p = line[b0] - sp * b0;
        if (b1 - b0 == L) {
            F(scatter_run)(blk, p, 0, L, n, es, io, sp, scale);
        } else {
            F(scatter_run)(blk, p, b0, b1, n, es, io, sp, scale);
        }
    }
}

FFT_INLINE void
F(conj_block)(R *blk, int64_t n)
{
    for (int64_t j = 0; j < n; j++) {
        for (int b = 0; b < L; b++) {
            blk[2 * L * j + L + b] = -blk[2 * L * j + L + b];
        }
    }
}

// blk (n / 2 + 1 blocks of nl lanes used, room for n; nl = 1: contiguous complex):
// Z = the transform of h = n / 2 pairs of reals -> X (kept entries) of the n reals;
// X[k] = E + W_n^k O, X[h - k] = conj(E - W_n^k O) with E = (Z[k] + conj Z[h - k]) / 2,
// O = -i (Z[k] - conj Z[h - k]) / 2; X[n - k] = conj X[k]. The pairs k, h - k for 0 < k < k0
// are done already (cpu/fft_row_vec.h's by vectors; k0 = 1: none)
FFT_INLINE void
F(unpack_real)(R *blk, int nl, const R *half, int64_t n, int64_t kept, int64_t k0)
{
    const int64_t h = n / 2;
    R *z0 = blk, *zh = blk + 2 * nl * h;
    for (int b = 0; b < nl; b++) {
        const R re = z0[b], im = z0[nl + b];
        z0[b] = re + im;
        zh[b] = re - im;
        z0[nl + b] = zh[nl + b] = 0;
    }
    for (int64_t k = k0; 2 * k < h; k++) {
        R *zk = blk + 2 * nl * k, *zc = blk + 2 * nl * (h - k);
        const R wr = half[2 * k], wi = half[2 * k + 1];
        for (int b = 0; b < nl; b++) {
            const R er = (zk[b] + zc[b]) / 2, ei = (zk[nl + b] - zc[nl + b]) / 2;
            const R dr = (zk[b] - zc[b]) / 2, di = (zk[nl + b] + zc[nl + b]) / 2;
            const R qr = di, qi = -dr; /* O = -i D */
            const R tr = wr * qr - wi * qi, ti = wr * qi + wi * qr;
            zk[b] = er + tr;
            zk[nl + b] = ei + ti;
            zc[b] = er - tr; /* conj(E - W O) */
            zc[nl + b] = -(ei - ti);
        }
    }
    for (int b = 0; b < nl && h % 2 == 0; b++) { /* k = h - k = h / 2: X = conj Z, exactly */
        blk[nl * h + nl + b] = -blk[nl * h + nl + b];
    }
    for (int64_t k = h + 1; k < kept; k++) {
        for (int b = 0; b < nl; b++) {
            blk[2 * nl * k + b] = blk[2 * nl * (n - k) + b];
            blk[2 * nl * k + nl + b] = -blk[2 * nl * (n - k) + nl + b];
        }
    }
}

// blk (h + 1 blocks of nl lanes): X, the non-negative frequencies of n = 2h reals ->
// Z' (h blocks), whose inverse transform is n (x[2j] + i x[2j + 1]):
// Z'[k] = S + i conj(W_n^k) D and Z'[h - k] = conj(S - i conj(W_n^k) D),
// S = X[k] + conj X[h - k], D = X[k] - conj X[h - k]; the pairs 0 < k < k0 done already
FFT_INLINE void
F(pack_real)(R *blk, int nl, const R *half, int64_t n, int64_t k0)
{
    const int64_t h = n / 2;
    R *x0 = blk, *xh = blk + 2 * nl * h;
    for (int b = 0; b < nl; b++) {
        const R a = x0[b], c = xh[b]; /* the imaginary parts of X[0], X[h] drop out */
        x0[b] = a + c;
        x0[nl + b] = a - c;
    }
    for (int64_t k = k0; 2 * k < h; k++) {
        R *xk = blk + 2 * nl * k, *xc = blk + 2 * nl * (h - k);
        const R wr = half[2 * k], wi = -half[2 * k + 1]; /* conj(W_n^k) */
        for (int b = 0; b < nl; b++) {
            const R sr = xk[b] + xc[b], si = xk[nl + b] - xc[nl + b];
            const R dr = xk[b] - xc[b], di = xk[nl + b] + xc[nl + b];
            const R tr = -(wr * di + wi * dr), ti = wr * dr - wi * di; /* i conj(W) D */
            xk[b] = sr + tr;
            xk[nl + b] = si + ti;
            xc[b] = sr - tr;
            xc[nl + b] = -(si - ti);
        }
    }
    for (int b = 0; b < nl && h % 2 == 0; b++) { /* k = h - k = h / 2: Z' = 2 conj X */
        blk[nl * h + b] *= 2;
        blk[nl * h + nl + b] *= -2;
    }
}

// the hermitian line of odd length n from its first `have` entries (zeros up to n / 2 + 1):
// x[n - k] = conj x[k], the imaginary part of x[0] dropped; blk (n blocks of nl lanes)
FFT_INLINE void
F(hermitian)(R *blk, int nl, int64_t n, int64_t have)
{
    memset(blk + 2 * nl * have, 0, sizeof(R) * 2 * nl * (size_t)(n - have));
    for (int b = 0; b < nl; b++) {
        blk[nl + b] = 0;
    }
    for (int64_t k = n / 2 + 1; k < n; k++) {
        for (int b = 0; b < nl; b++) {
            blk[2 * nl * k + b] = blk[2 * nl * (n - k) + b];
            blk[2 * nl * k + nl + b] = -blk[2 * nl * (n - k) + nl + b];
        }
    }
}

/* ---- the passes: every line of a pass, a block of L lines at a time, over the threads ---- */

// the lines l0 .. l0 + cnt - 1 of the pass: where each starts in the source and the result
// (line l0 unravelled over the other dims, the next ones stepped from it)
static void
F(line_starts)(const fft_pass *ps, int64_t l0, int cnt, const R **src, R **dst)
{
    int64_t idx[MT_MAX_DIMS], rest = l0, so = 0, dof = 0;
    for (int k = ps->nd - 1; k >= 0; k--) {
        idx[k] = rest % ps->sizes[k];
        rest /= ps->sizes[k];
        so += idx[k] * ps->s_str[k];
        dof += idx[k] * ps->d_str[k];
    }
    for (int b = 0; b < cnt; b++) {
        src[b] = (const R *)ps->src + so;
        dst[b] = (R *)ps->dst + dof;
        for (int k = ps->nd - 1; k >= 0; k--) {
            so += ps->s_str[k];
            dof += ps->d_str[k];
            if (++idx[k] < ps->sizes[k]) {
                break;
            }
            so -= ps->sizes[k] * ps->s_str[k];
            dof -= ps->sizes[k] * ps->d_str[k];
            idx[k] = 0;
        }
    }
}

// blk, scratch (room blocks, and scratch at least the plan's) <- a block of lines, transformed
// (in either) -> their results (streamed past the caches where they can, when `stream`); the
// shape of the pass
// (c2c; r2c and c2r of even n through the complex transform of n / 2 pairs, of odd n through
// the full complex one) decides the reading and the writing
static int F(narrow_lanes)(const fft_pass *ps, const F(plan) * p);
MT_SIMD_CLONES static void F(narrow)(const fft_pass *ps, const F(plan) * p, R *buf,
                                     const R *const *src, R *const *dst, int cnt);

MT_SIMD_CLONES static void
F(block)(const fft_pass *ps, const F(plan) * p, R *blk, R *scratch, int64_t l0, int cnt,
         bool stream)
{
    const R *src[L] = {NULL};
    R *dst[L];
    F(line_starts)(ps, l0, cnt, src, dst);
    if (cnt <= F(narrow_lanes)(ps, p)) { /* a few lines left over: not a block of L */
        F(narrow)(ps, p, blk, src, dst, cnt);
        return;
    }
    const int64_t n = ps->n, h = n / 2;
    const bool even = n % 2 == 0, inv = ps->inverse;
    const R scale = (R)ps->scale;
    if (ps->kind == FFT_C2C) {
        F(gather)(blk, src, cnt, n, ps->s_es, 1);
    } else if (ps->kind == FFT_R2C) {
        F(gather)(blk, src, cnt, even ? h : n, even ? 2 * ps->s_es : ps->s_es,
                  even ? ps->s_es : -1);
    } else {
        F(gather)(blk, src, cnt, ps->have, ps->s_es, 1);
        if (even) {
            memset(blk + 2 * L * ps->have, 0, sizeof(R) * 2 * L * (size_t)(h + 1 - ps->have));
            F(pack_real)(blk, L, p->half, n, 1);
        } else {
            F(hermitian)(blk, L, n, ps->have);
        }
    }
    if (inv) {
        F(conj_block)(blk, p->n);
    }
    blk = F(run)(p, blk, scratch);
    if (inv) {
        F(conj_block)(blk, p->n);
    }
    if (ps->kind == FFT_C2C) {
        F(scatter)(blk, dst, cnt, n, ps->d_es, 1, scale, stream);
    } else if (ps->kind == FFT_R2C) {
        if (even) {
            F(unpack_real)(blk, L, p->half, n, ps->kept, 1);
        }
        F(scatter)(blk, dst, cnt, ps->kept, ps->d_es, 1, scale, stream);
    } else if (even) {
        F(scatter)(blk, dst, cnt, h, 2 * ps->d_es, ps->d_es, scale, stream);
    } else {
        F(scatter)(blk, dst, cnt, n, ps->d_es, -1, scale, stream);
    }
}

// whether the pass's results stream past the caches (F(scatter)): the reals of the result past
// FFT_STREAM_BYTES would not stay in cache anyway; not in place, where the lines just read are
// in cache and a store to them costs no read
static bool
F(streams_result)(const fft_pass *ps)
{
    const int64_t out_reals = ps->lines * (ps->kind == FFT_C2C   ? 2 * ps->n
                                           : ps->kind == FFT_R2C ? 2 * ps->kept
                                                                 : ps->n);
    return FFT_STREAMS && ps->last && ps->src != ps->dst &&
           out_reals * (int64_t)sizeof(R) >= FFT_STREAM_BYTES;
}

static mt_status
F(block_pass)(const fft_pass *ps, const F(plan) * p)
{
    /* blocks within one run of the innermost line dim when it fills them (their lanes one run
     * in memory, or lines of the last dim), else straight across it */
    const int64_t inner = ps->nd > 0 && ps->sizes[ps->nd - 1] >= L ? ps->sizes[ps->nd - 1] : 1;
    const int64_t per_row = inner > 1 ? (inner + L - 1) / L : 1, rows = ps->lines / inner;
    const int64_t blocks = inner > 1 ? rows * per_row : (ps->lines + L - 1) / L;
    const size_t room = (size_t)(p->n > ps->n ? p->n : ps->n) + 1, extra = F(scratch_len)(p);
    const size_t per = room + (extra > room ? extra : room);
    int parts = mt_parallel_parts(ps->lines * ps->n, FFT_GRAIN);
    parts = parts > blocks ? (int)blocks : parts;
    R *bufs = malloc(sizeof(R) * 2 * L * per * (size_t)parts);
    if (bufs == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory for an FFT of length %lld", (long long)ps->n);
    }
    const bool stream = F(streams_result)(ps);
#pragma omp parallel num_threads(parts)
    {
#pragma omp for schedule(static)
        for (int64_t k = 0; k < blocks; k++) {
            R *blk = bufs + 2 * L * per * (size_t)omp_get_thread_num();
            const int64_t l0 = inner > 1 ? k / per_row * inner + k % per_row * L : k * L;
            const int64_t end = inner > 1 ? (k / per_row + 1) * inner : ps->lines;
            F(block)(ps, p, blk, blk + 2 * L * room, l0, end - l0 < L ? (int)(end - l0) : L,
                     stream);
        }
#if FFT_STREAMS
        if (stream) { /* the streamed stores ordered before what follows the pass */
            _mm_sfence();
        }
#endif
    }
    free(bufs);
    return MT_OK;
}

#undef L
#undef F
#undef R
