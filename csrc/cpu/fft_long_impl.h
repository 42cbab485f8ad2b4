/* The transforms of long lines for csrc/cpu/fft.c, one real type R, included after
 * cpu/fft_impl.h with the same FFT_R, FFT_NAME(f) and FFT_LANES: a line of n >= FFT_FOUR_STEP
 * elements would make a block too large for the caches, and a few such lines would fill few of
 * its lanes, so each line goes alone by the four-step split n = n1 n2, whose two passes are
 * blocks again (of n1 and of n2 elements), shared among the threads. Bluestein's identity for
 * a long prime length runs its power-of-two transforms that way. */
#define R FFT_R
#define F FFT_NAME
#define L FFT_LANES

// the four-step transform's first half for columns c .. c + cnt - 1 of src as (n1, n2)
// (element (j1, j2) at src + (j1 n2 + j2) s_es, imaginary part s_io further or none): each
// transformed, element k1 times W_n^(k1 j2), into t (n1, n2) complex
MT_SIMD_CLONES static void
F(columns)(const F(plan) * p, const R *src, int64_t s_es, int64_t s_io, bool inverse, R *t, R *blk,
           R *scratch, int64_t c, int cnt)
{
    const int64_t n1 = p->p1->n, n2 = p->p2->n;
    const R *from[L] = {NULL};
    R *to[L];
    for (int b = 0; b < cnt; b++) {
        from[b] = src + (c + b) * s_es;
        to[b] = t + 2 * (c + b);
    }
    F(gather)(blk, from, cnt, n1, n2 * s_es, s_io);
    if (inverse) {
        F(conj_block)(blk, n1);
    }
    blk = F(run)(p->p1, blk, scratch);
    for (int64_t k1 = 1; k1 < n1; k1++) {
        const R *w = p->tw4 + 2 * (k1 * n2 + c);
        R *e = blk + 2 * L * k1;
        for (int b = 0; b < cnt; b++) {
            const R er = e[b], ei = e[L + b];
            e[b] = er * w[2 * b] - ei * w[2 * b + 1];
            e[L + b] = er * w[2 * b + 1] + ei * w[2 * b];
        }
    }
    F(scatter)(blk, to, cnt, n1, 2 * n2, 1, 1, false);
}

// the second half for rows r .. r + cnt - 1 of t: each transformed, element k2 of row k1 to
// dst + (k1 + n1 k2) d_es (imaginary part d_io further, or only the real part), times scale
MT_SIMD_CLONES static void
F(rows)(const F(plan) * p, const R *t, R *dst, int64_t d_es, int64_t d_io, bool inverse, R scale,
        R *blk, R *scratch, int64_t r, int cnt)
{
    const int64_t n1 = p->p1->n, n2 = p->p2->n;
    const R *from[L] = {NULL};
    R *to[L];
    for (int b = 0; b < cnt; b++) {
        from[b] = t + 2 * (r + b) * n2;
        to[b] = dst + (r + b) * d_es;
    }
    F(gather)(blk, from, cnt, n2, 2, 1);
    blk = F(run)(p->p2, blk, scratch);
    if (inverse) {
        F(conj_block)(blk, n2);
    }
    F(scatter)(blk, to, cnt, n2, n1 * d_es, d_io, scale, false);
}

// one line, n = n1 n2 (p->p1, p->p2): src (element j at src + j s_es, its imaginary part s_io
// further, or a real line for s_io < 0) -> dst (element k at dst + k d_es, d_io likewise: the
// real part only for d_io < 0), transformed (the inverse: unscaled) and times scale; t (n
// complex) scratch. Lines of n1 down the columns of src as (n1, n2), times W_n^(k1 j2), into
// t; then lines of n2 along t's rows, element k2 of row k1 to dst's k1 + n1 k2.
static mt_status
F(four_step)(const F(plan) * p, const R *src, int64_t s_es, int64_t s_io, R *dst, int64_t d_es,
             int64_t d_io, bool inverse, R scale, R *t)
{
    const int64_t n1 = p->p1->n, n2 = p->p2->n;
    const size_t room = (size_t)(n1 > n2 ? n1 : n2);
    const size_t s1 = F(scratch_len)(p->p1), s2 = F(scratch_len)(p->p2);
    const size_t per = room + (s1 > s2 ? s1 : s2);
    int parts = mt_parallel_parts(p->n, FFT_GRAIN);
    parts = parts > (n1 + L - 1) / L ? (int)((n1 + L - 1) / L) : parts;
    R *bufs = malloc(sizeof(R) * 2 * L * per * (size_t)parts);
    if (bufs == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory for an FFT of length %lld", (long long)p->n);
    }
#pragma omp parallel num_threads(parts)
    {
        R *blk = bufs + 2 * L * per * (size_t)omp_get_thread_num(), *scratch = blk + 2 * L * room;
#pragma omp for schedule(static)
        for (int64_t c = 0; c < n2; c += L) {
            const int cnt = n2 - c < L ? (int)(n2 - c) : L;
            F(columns)(p, src, s_es, s_io, inverse, t, blk, scratch, c, cnt);
        }
#pragma omp for schedule(static)
        for (int64_t r = 0; r < n1; r += L) {
            const int cnt = n1 - r < L ? (int)(n1 - r) : L;
            F(rows)(p, t, dst, d_es, d_io, inverse, scale, blk, scratch, r, cnt);
        }
    }
    free(bufs);
    return MT_OK;
}

// one line of a plan through Bluestein's identity, its power-of-two transforms of m four-step
// (p->blue split): src -> dst as for four_step; w (2 m complex) scratch
static mt_status
F(bluestein_line)(const F(plan) * p, const R *src, int64_t s_es, int64_t s_io, R *dst, int64_t d_es,
                  int64_t d_io, bool inverse, R scale, R *w)
{
    const int64_t n = p->n, m = p->blue->n;
    const R *c = p->chirp;
    for (int64_t k = 0; k < m; k++) { /* x chirp, zero-padded to m */
        const R xr = k < n ? src[k * s_es] : 0;
        const R xi = k < n && s_io >= 0 ? (inverse ? -1 : 1) * src[k * s_es + s_io] : 0;
        w[2 * k] = k < n ? xr * c[2 * k] - xi * c[2 * k + 1] : 0;
        w[2 * k + 1] = k < n ? xr * c[2 * k + 1] + xi * c[2 * k] : 0;
    }
    mt_status st = F(four_step)(p->blue, w, 2, 1, w, 2, 1, false, 1, w + 2 * m);
    for (int64_t k = 0; k < m && st == MT_OK; k++) { /* conj(times the filter) */
        const R wr = w[2 * k], wi = w[2 * k + 1], fr = p->filter[2 * k], fi = p->filter[2 * k + 1];
        w[2 * k] = wr * fr - wi * fi;
        w[2 * k + 1] = -(wr * fi + wi * fr);
    }
    if (st == MT_OK) {
        st = F(four_step)(p->blue, w, 2, 1, w, 2, 1, false, 1, w + 2 * m);
    }
    for (int64_t k = 0; k < n && st == MT_OK; k++) { /* chirp conj(w), conjugated back */
        const R vr = w[2 * k], vi = -w[2 * k + 1];
        dst[k * d_es] = (vr * c[2 * k] - vi * c[2 * k + 1]) * scale;
        if (d_io >= 0) {
            dst[k * d_es + d_io] = (inverse ? -1 : 1) * (vr * c[2 * k + 1] + vi * c[2 * k]) * scale;
        }
    }
    return st;
}

// one long line: four-step, or Bluestein's with four-step inside
static mt_status
F(line)(const F(plan) * p, const R *src, int64_t s_es, int64_t s_io, R *dst, int64_t d_es,
        int64_t d_io, bool inverse, R scale, R *t)
{
    return p->p1 ? F(four_step)(p, src, s_es, s_io, dst, d_es, d_io, inverse, scale, t)
                 : F(bluestein_line)(p, src, s_es, s_io, dst, d_es, d_io, inverse, scale, t);
}

// u (m complex, contiguous) -> dst (element k at dst + k es, its imaginary part 1 further)
static void
F(copy_line)(const R *u, int64_t m, R *dst, int64_t es)
{
    for (int64_t k = 0; k < m; k++) {
        dst[k * es] = u[2 * k];
        dst[k * es + 1] = u[2 * k + 1];
    }
}

// the lines of a pass one at a time, each by the four-step transform (its two passes shared among
// the threads; Bluestein's around it for a long prime length); r2c and c2r of even n through the
// transform of n / 2 pairs, the packing and unpacking in u, a contiguous line
static mt_status
F(long_lines)(const fft_pass *ps, const F(plan) * p)
{
    const int64_t n = ps->n, h = n / 2;
    const bool even = n % 2 == 0, c2r = ps->kind == FFT_C2R;
    const int64_t ulen = ps->kind == FFT_C2C ? 0 : c2r ? (even ? h + 1 : n) : n;
    R *t = F(roots)(p->p1 ? p->n : 2 * p->blue->n), *u = F(roots)(ulen);
    mt_status st = MT_OK;
    if (t == NULL || u == NULL) {
        st = mt_fail(MT_ENOMEM, "out of memory for an FFT of length %lld", (long long)n);
        goto out_free;
    }
    const R scale = (R)ps->scale;
    for (int64_t l = 0; l < ps->lines && st == MT_OK; l++) {
        const R *src;
        R *dst;
        F(line_starts)(ps, l, 1, &src, &dst);
        if (ps->kind == FFT_C2C) {
            st = F(line)(p, src, ps->s_es, 1, dst, ps->d_es, 1, ps->inverse, scale, t);
        } else if (!c2r) {
            /* the result straight into a contiguous line of the destination */
            R *w = ps->d_es == 2 && (even || ps->kept == n) ? dst : u;
            st = even ? F(line)(p, src, 2 * ps->s_es, ps->s_es, w, 2, 1, false, scale, t)
                      : F(line)(p, src, ps->s_es, -1, w, 2, 1, false, scale, t);
            if (even) {
                F(unpack_real)(w, 1, p->half, n, ps->kept, 1);
            }
            if (w == u) {
                F(copy_line)(u, ps->kept, dst, ps->d_es);
            }
        } else {
            for (int64_t k = 0; k < ulen; k++) {
                u[2 * k] = k < ps->have ? src[k * ps->s_es] : 0;
                u[2 * k + 1] = k < ps->have ? src[k * ps->s_es + 1] : 0;
            }
            if (even) {
                F(pack_real)(u, 1, p->half, n, 1);
                st = F(line)(p, u, 2, 1, dst, 2 * ps->d_es, ps->d_es, true, scale, t);
            } else {
                F(hermitian)(u, 1, n, ps->have);
                st = F(line)(p, u, 2, 1, dst, ps->d_es, -1, true, scale, t);
            }
        }
    }
out_free:
    free(t);
    free(u);
    return st;
}

#undef L
#undef F
#undef R
