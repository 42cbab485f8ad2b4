/* The vector kernels of cpu/fft_row_impl.h for one real type R and one vector width: included
 * there twice, with FFT_ROW_BYTES (the vector's bytes, 64 or 32), FFT_ROW(f) (the names of this
 * width), FFT_ROW_LANES (FFT_LANES8 or 4: index lists of its 64-bit lanes) and FFT_ROW_RLANES
 (of its R lanes) set. A vector
 * holds V complex entries as (re, im) pairs, as they lie in memory; nothing here fails. */
#define G FFT_ROW
#define VB FFT_ROW_BYTES
#define V (VB / (2 * (int)sizeof(R))) /* complex entries of a vector */
#define U ((int)sizeof(R) / 4)        /* 64-bit lanes of a complex entry: 1 float, 2 double */
#define W (VB / 8)                    /* 64-bit lanes of a vector */

typedef R G(vec) __attribute__((vector_size(VB)));
typedef double G(v64) __attribute__((vector_size(VB)));
typedef R G(cpx) __attribute__((vector_size(2 * sizeof(R))));

/* Lane l of a shuffle (cpu/fft.c's index lists pass W, K): a pair's other half; the pair of a
 * two-entry vector, repeated */
#define FFT_XSWAP(W, K, l) ((l) ^ 1)
#define FFT_XPAIR(W, K, l) ((l) & 1)
/* a pair's real part twice; its imaginary part twice; the pairs in reverse order */
#define FFT_XRE(W, K, l) ((l) & ~1)
#define FFT_XIM(W, K, l) ((l) | 1)
#define FFT_XREV(W, K, l) (2 * V - 2 - ((l) & ~1) + ((l) & 1))

// the vector at p (an unaligned load)
FFT_INLINE
G(vec) G(load)(const R *p)
{
    G(vec) v;
    memcpy(&v, p, VB);
    return v;
}

// (re, im) -> (im, re) in every entry
FFT_INLINE
G(vec) G(swap)(G(vec) z)
{
    return __builtin_shufflevector(z, z, FFT_ROW_RLANES(FFT_XSWAP, 0, 0));
}

// (a, b) for every entry (a, b: the signs of the conjugate (1, -1), of -i z's swap, ...)
FFT_INLINE
G(vec) G(pairs)(R a, R b)
{
    const G(cpx) c = {a, b};
    return __builtin_shufflevector(c, c, FFT_ROW_RLANES(FFT_XPAIR, 0, 0));
}

// z times w entry by entry, w as wr = (Re w, Re w), wi = (-Im w, Im w) per entry:
// (a + ib)(c + id) = (ac - bd, bc + ad) = (a, b) c + (b, a) (-d, d)
FFT_INLINE
G(vec) G(cmul)(G(vec) z, G(vec) wr, G(vec) wi)
{
    return z * wr + G(swap)(z) * wi;
}

// v (4 vectors) -> their transform down the lanes, in place (cpu/fft_impl.h's F(bf4), W_4 = -i):
// with t0 = a0 + a2, t1 = a0 - a2, t2 = a1 + a3, t3 = a1 - a3:
// o0 = t0 + t2, o1 = t1 - i t3, o2 = t0 - t2, o3 = t1 + i t3
FFT_INLINE void
G(dft4)(G(vec) * v)
{
    const G(vec) mi = G(pairs)(1, -1); /* -i z = swap(z) (1, -1) */
    const G(vec) t0 = v[0] + v[2], t1 = v[0] - v[2];
    const G(vec) t2 = v[1] + v[3], t3 = G(swap)(v[1] - v[3]) * mi;
    v[0] = t0 + t2;
    v[1] = t1 + t3;
    v[2] = t0 - t2;
    v[3] = t1 - t3;
}

// v (p vectors, p = 2, 4 or 8) -> their transform down the lanes, in place; 8 as two of 4:
// E = the transform of the even ones, O of the odd ones, o_r = E_r + W_8^r O_r, o_(r+4) =
// E_r - W_8^r O_r, with W_8 = (1 - i) / sqrt 2, W_8^2 = -i, W_8^3 = -(1 + i) / sqrt 2
FFT_INLINE void
G(dft)(G(vec) * v, int p)
{
    if (p == 2) {
        const G(vec) d = v[0] - v[1];
        v[0] += v[1];
        v[1] = d;
        return;
    }
    if (p == 4) {
        G(dft4)(v);
        return;
    }
    const G(vec) mi = G(pairs)(1, -1),
                 h = G(pairs)((R)0.70710678118654752440L, (R)0.70710678118654752440L);
    G(vec) e[4] = {v[0], v[2], v[4], v[6]}, o[4] = {v[1], v[3], v[5], v[7]};
    G(dft4)(e);
    G(dft4)(o);
    o[1] = (o[1] + G(swap)(o[1]) * mi) * h;
    o[2] = G(swap)(o[2]) * mi;
    o[3] = (G(swap)(o[3]) * mi - o[3]) * h;
    for (int r = 0; r < 4; r++) {
        v[r] = e[r] + o[r];
        v[r + 4] = e[r] - o[r];
    }
}

// x, y (m vectors): one Stockham stage of radix p (FFT_ROW_RADIX) down the lanes,
// cpu/fft_impl.h's F(stage) with whole vectors for elements: x[q + s (i + t mm)] ->
// y[q + s (p i + r)] = W_len^(i r) sum_t x[..] W_p^(t r), mm = len / p; tw: the twiddles
// W_len^(i r), (mm, p - 1), each its vectors wr and wi (cmul's); none for i = 0
FFT_INLINE void
G(stage)(const G(vec) *restrict x, G(vec) *restrict y, int64_t len, int64_t s, int p, const R *tw)
{
    const int64_t mm = len / p, ai = s * mm;
    for (int64_t i = 0; i < mm; i++) {
        G(vec) wr[8], wi[8];
        for (int r = 1; r < p && i > 0; r++) {
            wr[r] = G(load)(tw + 4 * V * ((p - 1) * i + r - 1));
            wi[r] = G(load)(tw + 4 * V * ((p - 1) * i + r - 1) + 2 * V);
        }
        for (int64_t q = 0; q < s; q++) {
            const G(vec) *a = x + q + s * i;
            G(vec) *o = y + q + s * p * i, v[8];
            for (int t = 0; t < p; t++) {
                v[t] = a[t * ai];
            }
            G(dft)(v, p);
            o[0] = v[0];
            for (int r = 1; r < p; r++) {
                o[r * s] = i > 0 ? G(cmul)(v[r], wr[r], wi[r]) : v[r];
            }
        }
    }
}

// x (m vectors, m a power of two) -> the forward transform down each lane, in x or y (m
// vectors): the one returned; tw: the stages' twiddles one after the other (row_twiddles)
FFT_INLINE
G(vec) * G(vfft)(G(vec) * x, G(vec) * y, int64_t m, const R *tw)
{
    for (int64_t s = 1; s < m;) {
        const int p = FFT_ROW_RADIX(m / s);
        G(stage)(x, y, m / s, s, p, tw);
        tw += 4 * V * (p - 1) * (m / s / p);
        s *= p;
        G(vec) *t = x;
        x = y;
        y = t;
    }
    return x;
}

// z times w entry by entry, w's entries as they lie (a pair each): (a + ib)(c + id) =
// (a, a) (c, d) + (b, b) (-d, c)
FFT_INLINE
G(vec) G(cmulv)(G(vec) z, G(vec) w)
{
    const G(vec) re = __builtin_shufflevector(z, z, FFT_ROW_RLANES(FFT_XRE, 0, 0));
    const G(vec) im = __builtin_shufflevector(z, z, FFT_ROW_RLANES(FFT_XIM, 0, 0));
    return re * w + im * G(swap)(w) * G(pairs)(-1, 1);
}

// V entries in reverse order
FFT_INLINE
G(vec) G(rev)(G(vec) z)
{
    return __builtin_shufflevector(z, z, FFT_ROW_RLANES(FFT_XREV, 0, 0));
}

// z (h = n / 2 entries, the transform of n reals' pairs) -> X, F(unpack_real)'s pairs k and
// h - k by V at a time while their entries do not meet: A = Z[k ..], B = conj Z[h - k ..],
// reversed: E = (A + B) / 2, O = -i (A - B) / 2, X[k ..] = E + W_n^k O and X[h - k ..] =
// conj(E - W_n^k O), reversed; the first pair left to F(unpack_real)
FFT_INLINE int64_t
G(unpack)(R *z, const R *half, int64_t h)
{
    const G(vec) conj = G(pairs)(1, -1), mid = G(pairs)((R)0.5, (R)0.5);
    int64_t k = 1;
    for (; 2 * k + 2 * V <= h + 1; k += V) {
        R *c = z + 2 * (h - k - V + 1);
        const G(vec) a = G(load)(z + 2 * k), b = G(rev)(G(load)(c)) * conj;
        const G(vec) e = (a + b) * mid, o = G(swap)((a - b) * mid) * conj;
        const G(vec) t = G(cmulv)(o, G(load)(half + 2 * k));
        const G(vec) x = e + t, y = G(rev)((e - t) * conj);
        memcpy(z + 2 * k, &x, VB);
        memcpy(c, &y, VB);
    }
    return k;
}

// x <- X (h + 1 entries at from, the non-negative frequencies of n = 2h reals; from may be x)
// -> Z', F(pack_real)'s pairs by V at a time as G(unpack)'s: S = A + B, D = A - B,
// Z'[k ..] = S + i conj(W_n^k) D, Z'[h - k ..] = conj(S - i conj(W_n^k) D), reversed; the first
// pair left to F(pack_real)
FFT_INLINE int64_t
G(pack)(R *x, const R *from, const R *half, int64_t h)
{
    const G(vec) conj = G(pairs)(1, -1);
    int64_t k = 1;
    for (; 2 * k + 2 * V <= h + 1; k += V) {
        const int64_t c = 2 * (h - k - V + 1);
        const G(vec) a = G(load)(from + 2 * k), b = G(rev)(G(load)(from + c)) * conj;
        const G(vec) s = a + b, d = a - b;
        const G(vec) t = G(swap)(G(cmulv)(d, G(load)(half + 2 * k) * conj)) * G(pairs)(-1, 1);
        const G(vec) z = s + t, y = G(rev)((s - t) * conj);
        memcpy(x + 2 * k, &z, VB);
        memcpy(x + c, &y, VB);
    }
    return k;
}

// rows i and i + d of t (V vectors) trade the off-diagonal d x d blocks of complex entries of
// each 2d x 2d square: one bit of the row index for the entry's (as cpu/fft_impl.h's tiles)
#define FFT_ROW_ROUND(t, d)                                                                     \
    for (int i = 0; (d) < V && i < V; i++) {                                                    \
        if (!(i & (d))) {                                                                       \
            const G(v64) lo = (G(v64))t[i], hi = (G(v64))t[i + (d)];                            \
            t[i] = (G(vec))__builtin_shufflevector(lo, hi, FFT_ROW_LANES(FFT_TLO, W, (d) * U)); \
            t[i + (d)] = (G(vec))__builtin_shufflevector(lo, hi,                                \
                                                         FFT_ROW_LANES(FFT_THI, W, (d) * U));   \
        }                                                                                       \
    }

// a (n1 vectors) <- a line of n1 V entries at src, conjugated for the inverse
FFT_INLINE void
G(load_line)(G(vec) * a, int64_t n1, const R *src, bool inverse)
{
    const G(vec) conj = G(pairs)(1, -1);
    for (int64_t j1 = 0; j1 < n1; j1++) {
        a[j1] = G(load)(src + 2 * V * j1);
        a[j1] = inverse ? a[j1] * conj : a[j1];
    }
}

// a (n1 vectors, transformed down the lanes) -> the line's transform at dst, times out (when
// scaled): lane j2 of vector k1 times W_n^(j2 k1), then each square of V vectors transposed and
// transformed down its lanes: its vector k2, lane c is X[g V + c + n1 k2]
FFT_INLINE void
G(squares)(G(vec) * a, int64_t n1, const R *lane, R *dst, bool scaled, G(vec) out)
{
    for (int64_t k1 = 1; k1 < n1; k1++) {
        a[k1] = G(cmul)(a[k1], G(load)(lane + 4 * V * k1), G(load)(lane + 4 * V * k1 + 2 * V));
    }
    for (int64_t g = 0; g < n1; g += V) {
        G(vec) t[V];
        for (int c = 0; c < V; c++) {
            t[c] = a[g + c];
        }
        FFT_ROW_ROUND(t, 1)
        FFT_ROW_ROUND(t, 2)
        FFT_ROW_ROUND(t, 4)
        G(dft)(t, V);
        for (int k2 = 0; k2 < V; k2++) {
            const G(vec) v = scaled ? t[k2] * out : t[k2];
            memcpy(dst + 2 * (g + n1 * k2), &v, VB);
        }
    }
}

// one line of n = n1 V complex entries (n1 >= V), interleaved: src -> dst (may be src), its
// forward transform (inverse: of the conjugate, conjugated: unscaled), times scale; buf: 2 n1
// vectors. x[V j1 + j2] is lane j2 of vector j1: the transforms of n1 down the lanes (up to 8:
// one stage, in registers), then G(squares)
FFT_INLINE void
G(line)(const R *tw1, const R *lane, int64_t n1, const R *src, R *dst, bool inverse, R scale,
        G(vec) * buf)
{
    const G(vec) out = G(pairs)(scale, inverse ? -scale : scale);
    const bool scaled = inverse || scale != 1;
    G(vec) v[8];
    if (n1 == 8 && V <= 8) {
        G(load_line)(v, 8, src, inverse);
        G(dft)(v, 8);
        G(squares)(v, 8, lane, dst, scaled, out);
    } else if (n1 == 4 && V <= 4) {
        G(load_line)(v, 4, src, inverse);
        G(dft)(v, 4);
        G(squares)(v, 4, lane, dst, scaled, out);
    } else if (n1 == 2 && V <= 2) {
        G(load_line)(v, 2, src, inverse);
        G(dft)(v, 2);
        G(squares)(v, 2, lane, dst, scaled, out);
    } else {
        G(load_line)(buf, n1, src, inverse);
        G(squares)(G(vfft)(buf, buf + n1, n1, tw1), n1, lane, dst, scaled, out);
    }
}

#undef FFT_ROW_ROUND

// lines b < cnt (cnt <= V) of a c2c pass, src[b] -> dst[b] (may be the same), side by side in
// the lanes of n vectors (the lanes past cnt zero), transformed down the lanes (G(vfft), tw:
// row_twiddles(n, V)): the lines left over after the blocks of L, which would fill few of a
// block's lanes (the last column of rfft2's 512 x 257, alone in a block of 16, took an 18th of
// the column pass); buf: 2 n vectors, aligned
FFT_INLINE void
G(cols)(const fft_pass *ps, const R *tw, G(vec) * buf, const R *const *src, R *const *dst, int cnt)
{
    const int64_t n = ps->n, es = ps->s_es, ds = ps->d_es;
    const R sign = ps->inverse ? -1 : 1, scale = (R)ps->scale; /* inverse: of the conjugate */
    for (int64_t j = 0; j < n; j++) {
        R e[2 * V] = {0};
        for (int b = 0; b < cnt; b++) {
            e[2 * b] = src[b][j * es];
            e[2 * b + 1] = sign * src[b][j * es + 1];
        }
        memcpy(&buf[j], e, VB);
    }
    const G(vec) *y = G(vfft)(buf, buf + n, n, tw);
    for (int64_t j = 0; j < n; j++) {
        R e[2 * V];
        memcpy(e, &y[j], VB);
        for (int b = 0; b < cnt; b++) {
            dst[b][j * ds] = e[2 * b] * scale;
            dst[b][j * ds + 1] = sign * e[2 * b + 1] * scale;
        }
    }
}

// lines l0 .. l1 - 1 of the pass (c2c; r2c and c2r of even n through the complex transform of
// n / 2 pairs, cpu/fft_impl.h's unpack_real and pack_real, by vectors where they can), each in
// place of its result. A line's unpacking waits for the next line's transform, and a packed
// line's transform for the next line's packing: unpacking reads entries k and h - k at once,
// which straddle the vectors just stored (a load that several stores still in flight must
// forward stalls until they are written)
MT_SIMD_CLONES static void
G(lines)(const fft_pass *ps, const F(plan) * p, int64_t l0, int64_t l1)
{
    G(vec) buf[2 * FFT_ROW_MAX / V];
    R packed[2][2 * (FFT_ROW_MAX + 1)]; /* c2r: a line's packed half spectrum, the next one's */
    const R *tw1 = p->rtw, *lane = tw1 + 4 * V * p->rtw_lane;
    const int64_t n1 = p->n / V, h = ps->n / 2, have = ps->have;
    const R scale = (R)ps->scale;
    R *wait = NULL; /* the line whose unpacking or transform waits */
    int cur = 0;
    for (int64_t l = l0; l < l1; l += L) {
        const R *src[L];
        R *dst[L];
        const int cnt = l1 - l < L ? (int)(l1 - l) : L;
        F(line_starts)(ps, l, cnt, src, dst);
        for (int b = 0; b < cnt; b++) {
            if (ps->kind == FFT_C2C) {
                G(line)(tw1, lane, n1, src[b], dst[b], ps->inverse, scale, buf);
                continue;
            }
            if (ps->kind == FFT_R2C) {
                G(line)(tw1, lane, n1, src[b], dst[b], false, scale, buf);
                if (wait != NULL) {
                    F(unpack_real)(wait, 1, p->half, ps->n, ps->kept, G(unpack)(wait, p->half, h));
                }
            } else {
                R *x = packed[cur];
                memcpy(x, src[b], sizeof(R) * 2 * (size_t)have);
                memset(x + 2 * have, 0, sizeof(R) * 2 * (size_t)(h + 1 - have));
                /* the vectors read from the line, not from the copy just stored */
                const R *from = have == h + 1 ? src[b] : x;
                F(pack_real)(x, 1, p->half, ps->n, G(pack)(x, from, p->half, h));
                cur ^= 1;
                if (wait != NULL) {
                    G(line)(tw1, lane, n1, packed[cur], wait, true, scale, buf);
                }
            }
            wait = dst[b];
        }
    }
    if (wait != NULL && ps->kind == FFT_R2C) {
        F(unpack_real)(wait, 1, p->half, ps->n, ps->kept, G(unpack)(wait, p->half, h));
    } else if (wait != NULL && ps->kind == FFT_C2R) {
        G(line)(tw1, lane, n1, packed[cur ^ 1], wait, true, scale, buf);
    }
}

#undef FFT_XREV
#undef FFT_XPAIR
#undef FFT_XSWAP
#undef W
#undef U
#undef V
#undef VB
#undef G
