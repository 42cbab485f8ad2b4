/* copy_ and fill_ on the CPU, and the casts every other kernel uses. */
#include <inttypes.h>
#include <string.h>
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/front.h"
#include "ops/ops.h" /* mt_copy_strided */

// out (any shape), in broadcast to it; out = (TO)in. The callers never overlap out and in
// (mt_cpu_copy_into copies an overlapping in first), so a contiguous run of one dtype is a memcpy.
// Built for AVX-512 and AVX2 too (loops.h), as the elementwise loops: the x86-64 baseline's
// SSE2 converts 2 or 4 elements an instruction (float to double took 1.1x PyTorch's time).
#define CAST_LOOP(TO_T, TO_S, FROM_E, FROM_T, FROM_S)                                          \
    MT_SIMD_CLONES static void cast_##FROM_S##_##TO_S(char **data, const int64_t *strides,     \
                                                      int64_t n, void *ctx)                    \
    {                                                                                          \
        (void)ctx;                                                                             \
        if (strides[0] == sizeof(TO_T) && strides[1] == sizeof(FROM_T)) {                      \
            TO_T *o = (TO_T *)data[0];                                                         \
            const FROM_T *x = (const FROM_T *)data[1];                                         \
            if (_Generic((TO_T *)0, FROM_T *: sizeof(TO_T) > 1, default: 0)) {                 \
                memcpy(o, x, (size_t)n * sizeof(TO_T)); /* the same dtype (not bool): bytes */ \
                return;                                                                        \
            }                                                                                  \
            for (int64_t i = 0; i < n; i++) {                                                  \
                MT_ST_##TO_S(o + i, MT_LD_##FROM_S(x + i));                                    \
            }                                                                                  \
            return;                                                                            \
        }                                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                      \
            MT_ST_##TO_S(data[0] + i * strides[0], MT_LD_##FROM_S(data[1] + i * strides[1]));  \
        }                                                                                      \
    }
#define CAST_TO(T, S, E) MT_ALL_DTYPES_INNER(CAST_LOOP, T, S)
#define CAST_TO_ARGS(E, T, S) CAST_TO(T, S, E)
MT_ALL_DTYPES(CAST_TO_ARGS)

#define CAST_ENTRY(TO_T, TO_S, FROM_E, FROM_T, FROM_S) [FROM_E] = cast_##FROM_S##_##TO_S,
#define CAST_ROW(E, T, S) [E] = {MT_ALL_DTYPES_INNER(CAST_ENTRY, T, S)},
/* cast_loops[to][from], the real dtypes (complex rows and columns are NULL: real_cast_loop) */
static const mt_loop_fn cast_loops[MT_NUM_DTYPES][MT_NUM_DTYPES] = {MT_ALL_DTYPES(CAST_ROW)};

/* Casts to and from complex (parts of type P: float or double). A real value becomes (v, 0); a
 * complex one becomes a real by its real part, as PyTorch's copy_ does (it warns), and a bool by
 * whether either part is nonzero (as c10's static_cast<bool> of a complex: no warning). */
#define COMPLEX_PART(TO_T, x) \
    _Generic((TO_T *)0, bool *: (x)[0] != 0 || (x)[1] != 0, default: (x)[0])
// out (any shape) complex, in real broadcast to it; contiguous runs in a loop the compiler
// vectorises, built for AVX-512 and AVX2 too (float32 to complex64 took 1.4x PyTorch's time)
#define TO_COMPLEX_LOOP(P, PS, FROM_E, FROM_T, FROM_S)                                    \
    MT_SIMD_CLONES static void cast_##FROM_S##_c##PS(char **data, const int64_t *strides, \
                                                     int64_t n, void *ctx)                \
    {                                                                                     \
        (void)ctx;                                                                        \
        if (strides[0] == 2 * sizeof(P) && strides[1] == sizeof(FROM_T)) {                \
            P *restrict o = (P *)data[0];                                                 \
            const FROM_T *restrict x = (const FROM_T *)data[1];                           \
            for (int64_t i = 0; i < n; i++) {                                             \
                o[2 * i] = (P)MT_LD_##FROM_S(x + i);                                      \
                o[2 * i + 1] = 0;                                                         \
            }                                                                             \
            return;                                                                       \
        }                                                                                 \
        for (int64_t i = 0; i < n; i++) {                                                 \
            P *o = (P *)(data[0] + i * strides[0]);                                       \
            o[0] = (P)MT_LD_##FROM_S(data[1] + i * strides[1]);                           \
            o[1] = 0;                                                                     \
        }                                                                                 \
    }
// out (any shape) real, in complex broadcast to it; contiguous runs vectorised as above
#define FROM_COMPLEX_LOOP(P, PS, TO_E, TO_T, TO_S)                                                 \
    MT_SIMD_CLONES static void cast_c##PS##_##TO_S(char **data, const int64_t *strides, int64_t n, \
                                                   void *ctx)                                      \
    {                                                                                              \
        (void)ctx;                                                                                 \
        if (strides[0] == sizeof(TO_T) && strides[1] == 2 * sizeof(P)) {                           \
            TO_T *restrict o = (TO_T *)data[0];                                                    \
            const P *restrict x = (const P *)data[1];                                              \
            for (int64_t i = 0; i < n; i++) {                                                      \
                MT_ST_##TO_S(o + i, COMPLEX_PART(TO_T, x + 2 * i));                                \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                          \
            MT_ST_##TO_S(data[0] + i * strides[0],                                                 \
                         COMPLEX_PART(TO_T, (const P *)(data[1] + i * strides[1])));               \
        }                                                                                          \
    }
// out (any shape) complex of parts TO_P, in complex of parts FROM_P broadcast to it
#define COMPLEX_COMPLEX_LOOP(TO_P, TO_S, FROM_P, FROM_S)                                 \
    static void cast_c##FROM_S##_c##TO_S(char **data, const int64_t *strides, int64_t n, \
                                         void *ctx)                                      \
    {                                                                                    \
        (void)ctx;                                                                       \
        for (int64_t i = 0; i < n; i++) {                                                \
            TO_P *o = (TO_P *)(data[0] + i * strides[0]);                                \
            const FROM_P *x = (const FROM_P *)(data[1] + i * strides[1]);                \
            o[0] = (TO_P)x[0];                                                           \
            o[1] = (TO_P)x[1];                                                           \
        }                                                                                \
    }
MT_ALL_DTYPES_INNER(TO_COMPLEX_LOOP, float, 64)
MT_ALL_DTYPES_INNER(TO_COMPLEX_LOOP, double, 128)
MT_ALL_DTYPES_INNER(FROM_COMPLEX_LOOP, float, 64)
MT_ALL_DTYPES_INNER(FROM_COMPLEX_LOOP, double, 128)
COMPLEX_COMPLEX_LOOP(float, 64, float, 64)
COMPLEX_COMPLEX_LOOP(float, 64, double, 128)
COMPLEX_COMPLEX_LOOP(double, 128, float, 64)
COMPLEX_COMPLEX_LOOP(double, 128, double, 128)

#define TO_COMPLEX_ENTRY(P, PS, FROM_E, FROM_T, FROM_S) [FROM_E] = cast_##FROM_S##_c##PS,
#define FROM_COMPLEX_ENTRY(P, PS, TO_E, TO_T, TO_S) [TO_E] = cast_c##PS##_##TO_S,
/* [to][from] over the real dtypes (the complex columns are NULL) */
static const mt_loop_fn to_complex_loops[2][MT_NUM_DTYPES] = {
    {MT_ALL_DTYPES_INNER(TO_COMPLEX_ENTRY, float, 64)},
    {MT_ALL_DTYPES_INNER(TO_COMPLEX_ENTRY, double, 128)}};
static const mt_loop_fn from_complex_loops[2][MT_NUM_DTYPES] = {
    {MT_ALL_DTYPES_INNER(FROM_COMPLEX_ENTRY, float, 64)},
    {MT_ALL_DTYPES_INNER(FROM_COMPLEX_ENTRY, double, 128)}};
static const mt_loop_fn complex_complex_loops[2][2] = {{cast_c64_c64, cast_c128_c64},
                                                       {cast_c64_c128, cast_c128_c128}};

// out (any shape) of any dtype, in a float8 fnuz format broadcast to it: as the float cast, but a
// NaN gives 0 (PyTorch's conversion of these formats to the integer dtypes)
#define FNUZ_INT_LOOP(FROM_T, FROM_S, TO_E, TO_T, TO_S)                                    \
    static void cast_##FROM_S##_int_##TO_S(char **data, const int64_t *strides, int64_t n, \
                                           void *ctx)                                      \
    {                                                                                      \
        (void)ctx;                                                                         \
        for (int64_t i = 0; i < n; i++) {                                                  \
            const float v = MT_LD_##FROM_S(data[1] + i * strides[1]);                      \
            MT_ST_##TO_S(data[0] + i * strides[0], isnan(v) ? 0.0f : v);                   \
        }                                                                                  \
    }
MT_ALL_DTYPES_INNER(FNUZ_INT_LOOP, mt_f8e4m3fnuz, f8e4m3fnuz)
MT_ALL_DTYPES_INNER(FNUZ_INT_LOOP, mt_f8e5m2fnuz, f8e5m2fnuz)
#define FNUZ_INT_ENTRY(FROM_T, FROM_S, TO_E, TO_T, TO_S) [TO_E] = cast_##FROM_S##_int_##TO_S,
/* [e4m3fnuz, e5m2fnuz][to] */
static const mt_loop_fn fnuz_int_loops[2][MT_NUM_DTYPES] = {
    {MT_ALL_DTYPES_INNER(FNUZ_INT_ENTRY, mt_f8e4m3fnuz, f8e4m3fnuz)},
    {MT_ALL_DTYPES_INNER(FNUZ_INT_ENTRY, mt_f8e5m2fnuz, f8e5m2fnuz)}};

// out (any shape) = in broadcast to it, of one dtype of W bytes (not bool, whose bytes are
// normalised as read): words moved as they are, a float16's or a NaN's bits too (the cast
// loop of a dtype to itself went through float32 for the 2-byte floats: a strided float16 copy
// took 7x PyTorch's time); a contiguous run is a memcpy
#define MOVE_LOOP(W)                                                                   \
    static void move_##W(char **data, const int64_t *strides, int64_t n, void *ctx)    \
    {                                                                                  \
        (void)ctx;                                                                     \
        if (strides[0] == W && strides[1] == W) {                                      \
            memcpy(data[0], data[1], (size_t)n * W);                                   \
            return;                                                                    \
        }                                                                              \
        char *o = data[0];                                                             \
        const char *x = data[1];                                                       \
        const int64_t os = strides[0], xs = strides[1]; /* not reread after a store */ \
        _Pragma("GCC unroll 8") for (int64_t i = 0; i < n; i++)                        \
        {                                                                              \
            memcpy(o + i * os, x + i * xs, W);                                         \
        }                                                                              \
    }
MOVE_LOOP(1)
MOVE_LOOP(2)
MOVE_LOOP(4)
MOVE_LOOP(8)
MOVE_LOOP(16)

/* ---- float16 through float32 ---- */

/* A float16 is converted through float32 (core/half.h; c10::Half does the same): float16 to
 * any dtype is float16 -> float32 -> the dtype, any dtype to float16 the reverse. One element at
 * a time in portable C that is 1.4-2 ms for 1M elements (15-23x PyTorch's time); where the CPU
 * has F16C (every x86-64 since 2013), the float16 side converts 8 elements an instruction, with
 * round to nearest even as core/half.h's, and a NaN keeps the top bits of its payload (quieted),
 * as PyTorch's CPU conversion does (core/half.h makes every NaN 0x7e00). */
#define MT_VIA_BLOCK 256 /* elements a step through the float32 buffer: 1 KiB, in L1 */

/* The two halves of a cast through float32: in -> float32, float32 -> out. */
typedef struct via_ctx {
    mt_loop_fn to_f32, from_f32;
} via_ctx;

#if defined(__GNUC__) && defined(__x86_64__)
#define MT_HAVE_F16C_PATH 1
#define MT_F16C __attribute__((target("avx,f16c")))

// out (n) float16 = in (n) float32, any strides; 8 an instruction where both are contiguous
MT_F16C static void
f16c_f32_to_f16(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    (void)ctx;
    int64_t i = 0;
    if (strides[0] == 2 && strides[1] == 4) {
        for (; i + 8 <= n; i += 8) {
            const __m256 v = _mm256_loadu_ps((const float *)data[1] + i);
            _mm_storeu_si128((__m128i *)(data[0] + 2 * i),
                             _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        }
    }
    for (; i < n; i++) {
        float v;
        memcpy(&v, data[1] + i * strides[1], sizeof(v));
        const uint16_t h = (uint16_t)_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT);
        memcpy(data[0] + i * strides[0], &h, sizeof(h));
    }
}

// out (n) float32 = in (n) float16, any strides; 8 an instruction where both are contiguous
MT_F16C static void
f16c_f16_to_f32(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    (void)ctx;
    int64_t i = 0;
    if (strides[0] == 4 && strides[1] == 2) {
        for (; i + 8 <= n; i += 8) {
            const __m128i h = _mm_loadu_si128((const __m128i *)(data[1] + 2 * i));
            _mm256_storeu_ps((float *)data[0] + i, _mm256_cvtph_ps(h));
        }
    }
    for (; i < n; i++) {
        uint16_t h;
        memcpy(&h, data[1] + i * strides[1], sizeof(h));
        const float v = _cvtsh_ss(h);
        memcpy(data[0] + i * strides[0], &v, sizeof(v));
    }
}

// out (n) float16 = in (n) float64, any strides, rounded through float32 as PyTorch's (c10's Half
// of a double is the Half of its float); 8 a pair of instructions where both are contiguous
// (through via_f32's float32 buffer, a store and a reload a block, 1M took 1.48x PyTorch's time)
MT_F16C static void
f16c_f64_to_f16(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    (void)ctx;
    int64_t i = 0;
    if (strides[0] == 2 && strides[1] == 8) {
        const double *x = (const double *)data[1];
        for (; i + 8 <= n; i += 8) {
            const __m256 v = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(x + i + 4)),
                                             _mm256_cvtpd_ps(_mm256_loadu_pd(x + i)));
            _mm_storeu_si128((__m128i *)(data[0] + 2 * i),
                             _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        }
    }
    for (; i < n; i++) {
        double v;
        memcpy(&v, data[1] + i * strides[1], sizeof(v));
        const uint16_t h = (uint16_t)_cvtss_sh((float)v, _MM_FROUND_TO_NEAREST_INT);
        memcpy(data[0] + i * strides[0], &h, sizeof(h));
    }
}

static bool
have_f16c(void)
{
    return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
}

// out (any shape) = in broadcast to it, through a float32 buffer a block at a time
static void
via_f32(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    const via_ctx *v = ctx;
    _Alignas(64) float buf[MT_VIA_BLOCK];
    const int64_t to_strides[2] = {sizeof(float), strides[1]};
    const int64_t from_strides[2] = {strides[0], sizeof(float)};
    for (int64_t i0 = 0; i0 < n; i0 += MT_VIA_BLOCK) {
        const int64_t m = n - i0 < MT_VIA_BLOCK ? n - i0 : MT_VIA_BLOCK;
        char *to[2] = {(char *)buf, data[1] + i0 * strides[1]};
        char *from[2] = {data[0] + i0 * strides[0], (char *)buf};
        v->to_f32(to, to_strides, m, NULL);
        v->from_f32(from, from_strides, m, NULL);
    }
}
#endif


/* The loop that casts from to to, for every pair of dtypes (one at a time, portable C). */
static mt_loop_fn
real_cast_loop(mt_dtype to, mt_dtype from)
{
    const bool cto = mt_dtype_is_complex(to), cfrom = mt_dtype_is_complex(from);
    if (cto && cfrom) {
        return complex_complex_loops[to - MT_COMPLEX64][from - MT_COMPLEX64];
    }
    if (cto) {
        return to_complex_loops[to - MT_COMPLEX64][from];
    }
    if (cfrom) {
        return from_complex_loops[from - MT_COMPLEX64][to];
    }
    if ((from == MT_FLOAT8_E4M3FNUZ || from == MT_FLOAT8_E5M2FNUZ) &&
        mt_dtype_is_integral(to, false)) {
        return fnuz_int_loops[from == MT_FLOAT8_E5M2FNUZ][to];
    }
    return cast_loops[to][from];
}

/* The loop that casts from to to (every pair of dtypes), and its context (*via, for via_f32):
 * a dtype to itself moves words, a float16 to or from another dtype goes through F16C where the
 * CPU has it. */
static mt_loop_fn
cast_loop(mt_dtype to, mt_dtype from, via_ctx *via)
{
    static const mt_loop_fn moves[17] = {
        [1] = move_1, [2] = move_2, [4] = move_4, [8] = move_8, [16] = move_16};
    if (to == from && to != MT_BOOL) {
        return moves[mt_dtype_size(to)];
    }
#ifdef MT_HAVE_F16C_PATH
    if ((to == MT_FLOAT16 || from == MT_FLOAT16) && have_f16c()) {
        via->to_f32 = from == MT_FLOAT16 ? f16c_f16_to_f32 : real_cast_loop(MT_FLOAT32, from);
        via->from_f32 = to == MT_FLOAT16 ? f16c_f32_to_f16 : real_cast_loop(to, MT_FLOAT32);
        if (to == MT_FLOAT16 && from == MT_FLOAT64) {
            return f16c_f64_to_f16;
        }
        return to == MT_FLOAT32 ? via->to_f32 : from == MT_FLOAT32 ? via->from_f32 : via_f32;
    }
#endif
    (void)via;
    return real_cast_loop(to, from);
}

/* ---- transposing copies ---- */

/* Elements a side of a transpose's tile: 16 rows of the input and 16 of the output, 16 cache
 * lines each (of 4-byte elements), stay in L1 while the tile moves. */
#define MT_TRANSPOSE_TILE 16

/* Whether the iterator's two inner dims transpose: the output contiguous along dim 0, the input
 * along dim 1 (x.t().contiguous(), a permute's copy), both at least a tile long. */
static bool
transposes(const mt_iter *it, int64_t item)
{
    return it->ndim >= 2 && it->strides[0][0] == item && it->strides[1][1] == item &&
           it->shape[0] >= MT_TRANSPOSE_TILE && it->shape[1] >= MT_TRANSPOSE_TILE;
}

// dst[i dr + j dc] = src[i sr + j sc] for i < m, j < n (strides in words of W bytes), tile by
// tile, each element a load and a store
#define TILED_COPY(W, T)                                                                    \
    static void tiled_copy_##W(const T *src, int64_t sr, int64_t sc, T *dst, int64_t dr,    \
                               int64_t dc, int64_t m, int64_t n)                            \
    {                                                                                       \
        for (int64_t i0 = 0; i0 < m; i0 += MT_TRANSPOSE_TILE) {                             \
            const int64_t i1 = i0 + MT_TRANSPOSE_TILE < m ? i0 + MT_TRANSPOSE_TILE : m;     \
            for (int64_t j0 = 0; j0 < n; j0 += MT_TRANSPOSE_TILE) {                         \
                const int64_t j1 = j0 + MT_TRANSPOSE_TILE < n ? j0 + MT_TRANSPOSE_TILE : n; \
                for (int64_t i = i0; i < i1; i++) {                                         \
                    for (int64_t j = j0; j < j1; j++) {                                     \
                        dst[i * dr + j * dc] = src[i * sr + j * sc];                        \
                    }                                                                       \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }
TILED_COPY(1, uint8_t)
TILED_COPY(2, uint16_t)
TILED_COPY(4, uint32_t)
TILED_COPY(8, uint64_t)

/* A 4-byte transpose's whole tiles in vectors: 16 rows of the input loaded as 16 vectors,
 * transposed in registers by four rounds of block swaps (round b swaps the off-diagonal b x b
 * blocks of each 2b x 2b block: two two-source shuffles a pair of rows), stored as 16 rows of the
 * output. Each element is then a sixteenth of a load and of a store, not one of each (a
 * channels-last (8, 64, 56, 56) float32 into NCHW took 2.2 ms, its plain copy 0.7). */
typedef uint32_t tile_row __attribute__((vector_size(MT_TRANSPOSE_TILE * sizeof(uint32_t))));
_Static_assert(MT_TRANSPOSE_TILE == 16, "transpose_tile_4's shuffles move 16 lanes");

#define LANES(...) __VA_ARGS__
/* one round of block swaps on rows r with blocks of b: the lanes lo of rows i and i + b into
 * row i, the lanes hi into row i + b (shuffle indices: 0-15 row i's, 16-31 row i + b's) */
#define SWAP_ROUND(r, b, lo, hi)                                  \
    for (int i = 0; i < MT_TRANSPOSE_TILE; i += 2 * (b)) {        \
        for (int k = i; k < i + (b); k++) {                       \
            const tile_row a = r[k], c = r[k + (b)];              \
            r[k] = __builtin_shufflevector(a, c, LANES lo);       \
            r[k + (b)] = __builtin_shufflevector(a, c, LANES hi); \
        }                                                         \
    }

// dst[i dr + j] = src[i + j sc] for i, j < 16: a whole tile, each side's rows contiguous
MT_SIMD_CLONES static void
transpose_tile_4(const uint32_t *src, int64_t sc, uint32_t *dst, int64_t dr)
{
    tile_row r[MT_TRANSPOSE_TILE];
    for (int j = 0; j < MT_TRANSPOSE_TILE; j++) {
        memcpy(&r[j], src + j * sc, sizeof(tile_row));
    }
    /* round b: rows i and i + b (i & b == 0); row i keeps its lanes l & b == 0 and takes row
     * i + b's lanes l - b where l & b; row i + b takes row i's lanes l + b and keeps its own */
    SWAP_ROUND(r, 8, (0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23),
               (8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
    SWAP_ROUND(r, 4, (0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27),
               (4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31));
    SWAP_ROUND(r, 2, (0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29),
               (2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31));
    SWAP_ROUND(r, 1, (0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30),
               (1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31));
    for (int i = 0; i < MT_TRANSPOSE_TILE; i++) {
        memcpy(dst + i * dr, &r[i], sizeof(tile_row));
    }
}

void
mt_cpu_copy_tiles(const char *src, int64_t sr, int64_t sc, char *dst, int64_t dr, int64_t dc,
                  int64_t m, int64_t n, size_t es)
{
    if (es == 4 && sr == 1 && dc == 1) { /* a transpose: whole tiles in vectors, then the edges */
        const int64_t mt = m / MT_TRANSPOSE_TILE * MT_TRANSPOSE_TILE;
        const int64_t nt = n / MT_TRANSPOSE_TILE * MT_TRANSPOSE_TILE;
        const uint32_t *s4 = (const uint32_t *)src;
        uint32_t *d4 = (uint32_t *)dst;
        for (int64_t i0 = 0; i0 < mt; i0 += MT_TRANSPOSE_TILE) {
            for (int64_t j0 = 0; j0 < nt; j0 += MT_TRANSPOSE_TILE) {
                transpose_tile_4(s4 + i0 + j0 * sc, sc, d4 + i0 * dr + j0, dr);
            }
        }
        tiled_copy_4(s4 + mt, 1, sc, d4 + mt * dr, dr, 1, m - mt, n);
        tiled_copy_4(s4 + nt * sc, 1, sc, d4 + nt, dr, 1, mt, n - nt);
    } else if (es == 1) {
        tiled_copy_1((const uint8_t *)src, sr, sc, (uint8_t *)dst, dr, dc, m, n);
    } else if (es == 2) {
        tiled_copy_2((const uint16_t *)src, sr, sc, (uint16_t *)dst, dr, dc, m, n);
    } else if (es == 4) {
        tiled_copy_4((const uint32_t *)src, sr, sc, (uint32_t *)dst, dr, dc, m, n);
    } else if (es % 8 == 0) { /* a complex128: two 8-byte words side by side */
        const int64_t w = (int64_t)(es / 8);
        for (int64_t k = 0; k < w; k++) {
            tiled_copy_8((const uint64_t *)src + k, sr * w, sc * w, (uint64_t *)dst + k, dr * w,
                         dc * w, m, n);
        }
    } else {
        for (int64_t i = 0; i < m; i++) {
            for (int64_t j = 0; j < n; j++) {
                memcpy(dst + (i * dr + j * dc) * (int64_t)es, src + (i * sr + j * sc) * (int64_t)es,
                       es);
            }
        }
    }
}

// out (outer..., n1, n0) contiguous along n0, in the same elements contiguous along n1; items
// of `item` bytes. Tile by tile, each element a load and a store: the iterator's loop along dim
// 0, 8 elements a call in its own tiles, took 1.3-1.6x PyTorch's time on a 512x512 float32.
static void
transpose(const mt_iter *it, int64_t item)
{
    const int64_t n0 = it->shape[0], n1 = it->shape[1];
    const int64_t os = it->strides[1][0] / item, xs = it->strides[0][1] / item;
    int64_t outer = 1, counter[MT_MAX_DIMS] = {0};
    for (int d = 2; d < it->ndim; d++) {
        outer *= it->shape[d];
    }
    char *od = it->data[0], *xd = it->data[1];
    for (int64_t k = 0; k < outer; k++) {
        mt_cpu_copy_tiles(xd, 1, xs, od, os, 1, n1, n0, (size_t)item); /* o[j][i] = x[i][j] */
        for (int d = 2; d < it->ndim; d++) { /* the outer dims, as an odometer */
            od += it->strides[d][0];
            xd += it->strides[d][1];
            if (++counter[d] < it->shape[d]) {
                break;
            }
            od -= it->strides[d][0] * it->shape[d];
            xd -= it->strides[d][1] * it->shape[d];
            counter[d] = 0;
        }
    }
}

/* out = in through the iterator's two operands: a transpose of one dtype of 2, 4 or 8 bytes in
 * tiles, anything else by the cast loop of the two dtypes; on the threads. */
static void
run_copy(const mt_iter *it, mt_dtype to, mt_dtype from)
{
    const int64_t item = (int64_t)mt_dtype_size(to);
    const bool tiled = item == 2 || item == 4 || item == 8;
    if (to != from || !tiled || !transposes(it, item)) {
        via_ctx via;
        mt_loop_fn loop = cast_loop(to, from, &via);
        mt_iter_run_parallel(it, loop, &via);
        return;
    }
    const int parts = mt_iter_parts(it);
#pragma omp parallel for num_threads(parts) schedule(static, 1) if (parts > 1)
    for (int p = 0; p < parts; p++) {
        mt_iter sub;
        mt_iter_part(it, parts, p, &sub);
        transpose(&sub, item);
    }
}

static bool
overlaps(const mt_tensor *a, const mt_tensor *b)
{
    /* Conservative: the same storage and not the very same view. */
    return a->storage == b->storage && !mt_tensor_same_view(a, b);
}

mt_status
mt_cpu_copy_into(mt_tensor *dst, mt_tensor *src)
{
    char b1[256], b2[256];
    mt_status st;
    mt_tensor *tmp = NULL;
    if (src->ndim > dst->ndim) {
        goto out_shape;
    }
    for (int d = 0; d < src->ndim; d++) {
        int td = d + dst->ndim - src->ndim;
        int64_t s = src->sizes[d], t = dst->sizes[td];
        if (s != t && s != 1) {
            return mt_fail(MT_ERUNTIME,
                           "The expanded size of the tensor (%" PRId64 ") must match the existing "
                           "size (%" PRId64 ") at non-singleton dimension %d.  Target sizes: %s.  "
                           "Tensor sizes: %s",
                           t, s, td, mt_format_sizes(b1, sizeof(b1), dst->ndim, dst->sizes),
                           mt_format_sizes(b2, sizeof(b2), src->ndim, src->sizes));
        }
    }
    if (overlaps(dst, src)) {
        /* Reading and writing the same memory in one pass would read values already written. */
        st = mt_cpu_cast(src, src->dtype, &tmp);
        if (st) {
            return st;
        }
        src = tmp;
    }
    mt_iter it;
    mt_tensor *ops[2] = {dst, src};
    st = mt_iter_build_any_order(&it, dst->ndim, dst->sizes, ops, 2);
    if (st == MT_OK) {
        run_copy(&it, dst->dtype, src->dtype);
    }
    mt_tensor_clear(&tmp);
    return st;
out_shape:
    return mt_fail(MT_ERUNTIME,
                   "expand: the number of sizes provided (%d) must be greater or equal to the "
                   "number of dimensions in the tensor (%d): cannot copy %s into %s",
                   dst->ndim, src->ndim, mt_format_sizes(b1, sizeof(b1), src->ndim, src->sizes),
                   mt_format_sizes(b2, sizeof(b2), dst->ndim, dst->sizes));
}

mt_status
mt_cpu_cast(mt_tensor *src, mt_dtype dt, mt_tensor **out)
{
    mt_status st = mt_tensor_empty(src->ndim, src->sizes, dt, mt_tensor_device(src), out);
    if (st) {
        return st;
    }
    mt_iter it;
    mt_tensor *ops[2] = {*out, src};
    st = mt_iter_build_any_order(&it, src->ndim, src->sizes, ops, 2);
    if (st) {
        mt_tensor_clear(out);
        return st;
    }
    run_copy(&it, dt, src->dtype);
    return MT_OK;
}

/* Whether the n bytes at p are all 0 (a zero of any dtype but -0.0). */
static bool
all_zero_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned char any = 0;
    for (size_t i = 0; i < n; i++) {
        any |= b[i];
    }
    return any == 0;
}

// out (any shape) = v; a contiguous run is a memset for a zero, else a loop the compiler
// vectorises
#define FILL_LOOP(E, T, S)                                                          \
    static void fill_##S(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                               \
        T v = *(const T *)ctx;                                                      \
        if (strides[0] == sizeof(T)) {                                              \
            T *o = (T *)data[0];                                                    \
            if (all_zero_bytes(&v, sizeof(T))) {                                    \
                memset(o, 0, (size_t)n * sizeof(T));                                \
                return;                                                             \
            }                                                                       \
            for (int64_t i = 0; i < n; i++) {                                       \
                o[i] = v;                                                           \
            }                                                                       \
            return;                                                                 \
        }                                                                           \
        for (int64_t i = 0; i < n; i++) {                                           \
            MT_AT(T, 0, i) = v;                                                     \
        }                                                                           \
    }
MT_ALL_DTYPES(FILL_LOOP)
/* complex64 as one 8-byte word; complex128 as two doubles */
static void
fill_c128(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    const double *v = ctx;
    for (int64_t i = 0; i < n; i++) {
        double *o = (double *)(data[0] + i * strides[0]);
        o[0] = v[0];
        o[1] = v[1];
    }
}
#define FILL_ENTRY(E, T, S) [E] = fill_##S,
static const mt_loop_fn fill_loops[MT_NUM_DTYPES] = {
    MT_ALL_DTYPES(FILL_ENTRY)[MT_COMPLEX64] = fill_i64, [MT_COMPLEX128] = fill_c128};

void
mt_cpu_fill(mt_tensor *dst, mt_scalar value)
{
    _Alignas(16) char v[16] = {0}; /* room for a complex128 */
    mt_store_scalar(v, dst->dtype, value);
    mt_iter it;
    if (mt_iter_build(&it, dst->ndim, dst->sizes, &dst, 1) == MT_OK) {
        mt_iter_run_parallel(&it, fill_loops[dst->dtype], v);
    }
}

// self (any shape) = src broadcast to it
mt_status
mt_cpu_copy_(mt_args *a)
{
    mt_status st = mt_cpu_copy_into(a->t[0], a->t[1]);
    if (st) {
        return st;
    }
    mt_tensor_bump_version(a->t[0]);
    a->out[0] = mt_tensor_retain(a->t[0]);
    return MT_OK;
}

// self (any shape) = value (0-dim) everywhere
mt_status
mt_cpu_fill_(mt_args *a)
{
    mt_cpu_fill(a->t[0], a->plan->value);
    mt_tensor_bump_version(a->t[0]);
    a->out[0] = mt_tensor_retain(a->t[0]);
    return MT_OK;
}

mt_status
mt_cpu_dense(mt_tensor *src, mt_dtype dt, mt_tensor **out)
{
    if (src->dtype == dt && mt_tensor_is_contiguous(src)) {
        *out = mt_tensor_retain(src);
        return MT_OK;
    }
    return mt_cpu_cast(src, dt, out);
}

mt_status
mt_cpu_dense_format(mt_tensor *src, mt_memory_format fmt, mt_tensor **out)
{
    int64_t want[MT_MAX_DIMS];
    mt_format_strides(fmt, src->ndim, src->sizes, want);
    for (int d = 0; d < src->ndim && mt_tensor_numel(src) > 0; d++) { /* (empty: none to read) */
        if (src->sizes[d] != 1 && src->strides[d] != want[d]) {
            return mt_copy_strided(src, want, out);
        }
    }
    *out = mt_tensor_retain(src);
    return MT_OK;
}
