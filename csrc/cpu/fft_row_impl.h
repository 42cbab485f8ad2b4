/* Contiguous lines of a short power-of-two length for csrc/cpu/fft.c, each transformed where it
 * lies, in vectors of interleaved (re, im) pairs: no gather of L lines into a block and no
 * transposes through memory (from memory, those cost more than the butterflies: pocketfft and
 * MKL transform short lines this way too). Included after cpu/fft_impl.h with the same FFT_R
 * and FFT_NAME(f); the vector kernels are cpu/fft_row_vec.h, for 64- and 32-byte vectors.
 *
 * A line of n = n1 V entries (V: the complex entries of one vector, V^2 <= n) is n1 vectors,
 * vector j1 holding x[V j1 .. V j1 + V - 1]; with j = V j1 + j2 and k = k1 + n1 k2,
 *   X[k1 + n1 k2] = sum_j2 W_V^(j2 k2) W_n^(j2 k1) sum_j1 W_n1^(j1 k1) x[V j1 + j2],
 * the four-step split with n2 = V: the transforms of n1 are butterflies between whole vectors,
 * whose twiddles are the same in every lane; the transforms of V run after a transpose of V x V
 * entries in registers, and each of their vectors is V neighbours of X. A real transform of even
 * n is the complex one of its n / 2 pairs, unpacked (cpu/fft_impl.h's unpack_real, pack_real). */
#define R FFT_R
#define F FFT_NAME
#define L FFT_LANES

/* The radix of a Stockham stage down the lanes with len entries left: 8 while it divides */
#define FFT_ROW_RADIX(len) ((len) % 8 == 0 ? 8 : (len) % 4 == 0 ? 4 : 2)

#define FFT_ROW_BYTES 64
#define FFT_ROW(f) F(f##_w64)
#define FFT_ROW_LANES FFT_LANES8
#define FFT_ROW_RLANES FFT_ROW_W
#include "cpu/fft_row_vec.h"
#undef FFT_ROW_RLANES
#undef FFT_ROW_LANES
#undef FFT_ROW
#undef FFT_ROW_BYTES
#define FFT_ROW_BYTES 32
#define FFT_ROW(f) F(f##_w32)
#define FFT_ROW_LANES FFT_LANES4
#define FFT_ROW_RLANES FFT_ROW_H
#include "cpu/fft_row_vec.h"
#undef FFT_ROW_RLANES
#undef FFT_ROW_LANES
#undef FFT_ROW
#undef FFT_ROW_BYTES

// w as two vectors of v entries at e: (Re w, Re w) pairs, then (-Im w, Im w) pairs (cmul's)
static void
F(set_row_root)(R *e, int v, int64_t k, int64_t n)
{
    R w[2];
    F(set_root)(w, k, n);
    for (int j = 0; j < v; j++) {
        e[2 * j] = e[2 * j + 1] = w[0];
        e[2 * v + 2 * j] = -w[1];
        e[2 * v + 2 * j + 1] = w[1];
    }
}

// the twiddles of the Stockham transform of m (a power of two) down the lanes of m vectors of
// v entries: per stage (FFT_ROW_RADIX), W_len^(i r) (F(set_row_root)); to
// tw when not NULL; their count
static int64_t
F(row_twiddles)(int64_t m, int v, R *tw)
{
    int64_t count = 0;
    for (int64_t s = 1; s < m;) {
        const int p = FFT_ROW_RADIX(m / s);
        const int64_t len = m / s;
        for (int64_t i = 0; i < len / p; i++) {
            for (int r = 1; r < p; r++, count++) {
                if (tw != NULL) {
                    F(set_row_root)(tw + 4 * v * count, v, i * r, len);
                }
            }
        }
        s *= p;
    }
    return count;
}

// the short-line path of plan p (p->rv, p->rtw), for a power of two n up to FFT_ROW_MAX with
// vectors of this machine (tile_bytes) of V entries, V^2 <= n; and F(narrow)'s twiddles
// (p->ctw) for a power of two from 2 to FFT_ROW_MAX; false when out of memory
static bool
F(init_row)(F(plan) * p)
{
    const int64_t n = p->n;
    const int bytes = tile_bytes();
    const int v64 = 64 / (2 * (int)sizeof(R)), v32 = 32 / (2 * (int)sizeof(R));
    if (bytes >= 32 && n >= 2 && n <= FFT_ROW_MAX && (n & (n - 1)) == 0) {
        p->ctw = F(roots)(2 * v32 * F(row_twiddles)(n, v32, NULL));
        if (p->ctw == NULL) {
            return false;
        }
        F(row_twiddles)(n, v32, p->ctw);
    }
    const int v = bytes == 64 && v64 * v64 <= n ? v64 : bytes >= 32 && v32 * v32 <= n ? v32 : 0;
    if (v == 0 || n > FFT_ROW_MAX || (n & (n - 1)) != 0) {
        return true;
    }
    const int64_t n1 = n / v, c1 = F(row_twiddles)(n1, v, NULL);
    p->rtw = F(roots)(2 * v * (c1 + n1));
    if (p->rtw == NULL) {
        return false;
    }
    p->rv = v;
    p->rtw_lane = c1;
    F(row_twiddles)(n1, v, p->rtw);
    /* lane j2 of vector k1: W_n^(j2 k1) (cmul's two vectors) */
    R *lane = p->rtw + 4 * v * p->rtw_lane;
    for (int64_t k1 = 0; k1 < n1; k1++) {
        for (int j2 = 0; j2 < v; j2++) {
            R w[2];
            F(set_root)(w, j2 * k1, n);
            R *e = lane + 4 * v * k1 + 2 * j2;
            e[0] = e[1] = w[0];
            e[2 * v] = -w[1];
            e[2 * v + 1] = w[1];
        }
    }
    return true;
}

// the pass by the short-line path, when its plan has one and its lines are contiguous (c2c:
// complex in and out; r2c and c2r of even n: real on their real side); false: not taken
static bool
F(row_pass)(const fft_pass *ps, const F(plan) * p)
{
    const bool even = ps->n % 2 == 0;
    const bool fits = ps->kind == FFT_C2C   ? ps->s_es == 2 && ps->d_es == 2
                      : ps->kind == FFT_R2C ? even && ps->s_es == 1 && ps->d_es == 2
                                            : even && ps->s_es == 2 && ps->d_es == 1;
    /* a complex128 result that streams past the caches is written faster by the blocks' streamed
     * tiles ((20, 32, 64, 64) along the last dim: 8.4 ms by blocks, 9.5 ms by lines, where
     * complex64's take 5.2 and 1.7 ms) */
    const bool blocks_stream = sizeof(R) == 8 && ps->kind == FFT_C2C && F(streams_result)(ps);
    if (p->rv == 0 || !fits || blocks_stream) {
        return false;
    }
    const int parts = mt_parallel_parts(ps->lines * ps->n, FFT_GRAIN);
    const bool w64 = p->rv * 2 * (int)sizeof(R) == 64;
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int k = 0; k < parts; k++) {
        const int64_t l0 = ps->lines * k / parts, l1 = ps->lines * (k + 1) / parts;
        if (w64) {
            F(lines_w64)(ps, p, l0, l1);
        } else {
            F(lines_w32)(ps, p, l0, l1);
        }
    }
    return true;
}

// how many lines of a block pass F(narrow) takes instead of a block: 0 but for c2c with ctw
static int
F(narrow_lanes)(const fft_pass *ps, const F(plan) * p)
{
    return ps->kind == FFT_C2C && p->ctw != NULL ? 32 / (2 * (int)sizeof(R)) : 0;
}

// lines b < cnt (at most F(narrow_lanes)) of a c2c pass by 32-byte vectors (F(cols_w32)); buf:
// a block's room, 64-byte aligned here
MT_SIMD_CLONES static void
F(narrow)(const fft_pass *ps, const F(plan) * p, R *buf, const R *const *src, R *const *dst,
          int cnt)
{
    R *at = (R *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
    F(cols_w32)(ps, p->ctw, (F(vec_w32) *)(void *)at, src, dst, cnt);
}

#undef FFT_ROW_RADIX
#undef L
#undef F
#undef R
