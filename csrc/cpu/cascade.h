/* The float sum of a contiguous run, a cascade as PyTorch's (SumKernel.cpp), for the CPU
 * reductions (reduce.c's sum, nansum, mean and 2-norm). Static inline functions, forced inline
 * so that each SIMD clone of a calling loop (loops.h) compiles them for its own instruction set;
 * only computes.
 *
 * Why float and not double: converting each float32 to double halves the elements an add takes
 * (8 doubles a 512-bit vector against 16 floats) and adds a conversion, and the sum of a row of
 * 512 took 1.3-1.6x PyTorch's time. A float running sum would lose accuracy instead: its error
 * grows with the number of terms. The cascade keeps both. CASCADE_ILP vectors of partial sums
 * add the run a block at a time (independent chains, so the adds overlap); every `step` blocks
 * those sums go up a level, where `step` such sums are added, and so on up CASCADE_LEVELS
 * levels, so that only sums of about as many terms meet. The error then grows like that of a
 * pairwise sum (with the number of levels, not of terms): PyTorch's accuracy, at float's speed.
 * tests/ops/test_reduce_kernels.py holds it to no more than twice PyTorch's error against a
 * float64 reference, on runs up to 16M. Double runs take the same path (their vectors hold 8). */
#ifndef MT_CPU_CASCADE_H
#define MT_CPU_CASCADE_H

#include <stdint.h>
#include <string.h>

#include "core/math.h" /* MT_ALWAYS_INLINE */

#define CASCADE_VEC 64    /* bytes of a vector: one AVX-512 register, two AVX2 or four SSE ones */
#define CASCADE_ILP 4     /* vectors of partial sums side by side: a block is ILP vectors */
#define CASCADE_LEVELS 4  /* l0, l1, l2 and top in CASCADE_SUM (PyTorch's count) */
#define CASCADE_MIN_SHIFT 4 /* a level adds at least 2^4 sums of the one below */

/* The first index past a span of `span` from b, at most end. */
#define SPAN_END(b, span, end) ((end) - (b) < (span) ? (end) : (b) + (span))

// x (n) contiguous; returns the sum of TERM(x) in T: blocks of CASCADE_ILP vectors (W lanes
// each) into the level-0 vectors, each level's vectors added into the next one's every `step` of
// its units (2^shift of them; the top level takes the rest); then the tail (whole vectors, then
// the last elements: the run's last vector with the lanes already counted masked to zero, or in
// a run shorter than a vector the elements in a vector padded with zeros, whose terms are zero;
// a copy of the last elements into a zeroed vector, a call of memcpy and a stalled reload, took
// a sum of rows of 100 floats 5x PyTorch's time) and a fold of the lanes in halves. TERM maps a
// vector of elements to their terms (CASCADE_TERM_* below). Forced inline, so the SIMD clone
// that calls it (loops.h) compiles it for its own instruction set.
#define CASCADE_SUM(name, T, TERM)                                                              \
    typedef T name##_vec __attribute__((vector_size(CASCADE_VEC)));                             \
    static inline MT_ALWAYS_INLINE void name##_up(name##_vec *acc, const name##_vec *part)      \
    {                                                                                           \
        for (int k = 0; k < CASCADE_ILP; k++) {                                                 \
            acc[k] += part[k];                                                                  \
        }                                                                                       \
    }                                                                                           \
    /* the terms of blocks b .. e of x (ILP vectors a block) added into acc's ILP vectors */    \
    static inline MT_ALWAYS_INLINE void name##_blocks(name##_vec *acc, const T *x, int64_t b,   \
                                                      int64_t e)                                \
    {                                                                                           \
        enum { W = CASCADE_VEC / sizeof(T) };                                                   \
        for (; b < e; b++) {                                                                    \
            for (int k = 0; k < CASCADE_ILP; k++) {                                             \
                name##_vec v;                                                                   \
                memcpy(&v, x + (b * CASCADE_ILP + k) * W, sizeof(v));                           \
                acc[k] += TERM(v);                                                              \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
    static inline MT_ALWAYS_INLINE T name(const T *x, int64_t n)                                \
    {                                                                                           \
        typedef name##_vec vec;                                                                 \
        enum { W = CASCADE_VEC / sizeof(T), BLOCK = W * CASCADE_ILP };                          \
        const int64_t blocks = n / BLOCK;                                                       \
        /* a level adds 2^shift of the sums below: about the LEVELS-th root of the blocks */    \
        int shift = blocks < 2 ? 0 : (64 - __builtin_clzll((unsigned long long)(blocks - 1)));  \
        shift = shift / CASCADE_LEVELS > CASCADE_MIN_SHIFT ? shift / CASCADE_LEVELS             \
                                                           : CASCADE_MIN_SHIFT;                 \
        const int64_t s0 = (int64_t)1 << shift, s1 = s0 << shift, s2 = s1 << shift;             \
        vec top[CASCADE_ILP] = {0};                                                             \
        /* a short run, of no more blocks than level 0 takes, adds them into top directly */    \
        if (blocks <= s0) {                                                                     \
            name##_blocks(top, x, 0, blocks);                                                   \
        }                                                                                       \
        for (int64_t b2 = 0; blocks > s0 && b2 < blocks; b2 += s2) {                            \
            vec l2[CASCADE_ILP] = {0};                                                          \
            for (int64_t b1 = b2, e2 = SPAN_END(b2, s2, blocks); b1 < e2; b1 += s1) {           \
                vec l1[CASCADE_ILP] = {0};                                                      \
                for (int64_t b0 = b1, e1 = SPAN_END(b1, s1, e2); b0 < e1; b0 += s0) {           \
                    vec l0[CASCADE_ILP] = {0};                                                  \
                    name##_blocks(l0, x, b0, SPAN_END(b0, s0, e1));                             \
                    name##_up(l1, l0);                                                          \
                }                                                                               \
                name##_up(l2, l1);                                                              \
            }                                                                                   \
            name##_up(top, l2);                                                                 \
        }                                                                                       \
        int64_t i = blocks * BLOCK;                                                             \
        int k = 0;                                                                              \
        for (; i + W <= n; i += W, k++) { /* fewer than ILP whole vectors */                    \
            vec v;                                                                              \
            memcpy(&v, x + i, sizeof(v));                                                       \
            top[k] += TERM(v);                                                                  \
        }                                                                                       \
        if (i < n && n >= W) { /* the run's last vector, its lanes counted above masked off */  \
            typedef __typeof__(top[0] == top[0]) mask; /* lanes of all ones or zeros */         \
            mask index;                                                                         \
            for (int l = 0; l < W; l++) { /* constants: 0, 1, ..., W - 1 */                     \
                index[l] = l;                                                                   \
            }                                                                                   \
            const mask keep = index >= (__typeof__(index[0]))(W - (n - i)); /* r = n - i < W */ \
            vec v;                                                                              \
            memcpy(&v, x + n - W, sizeof(v));                                                   \
            top[k] += (vec)((mask)TERM(v) & keep);                                              \
        } else if (i < n) { /* a run shorter than a vector, padded with zeros */                \
            vec v = {0};                                                                        \
            memcpy(&v, x + i, (size_t)(n - i) * sizeof(T));                                     \
            top[k] += TERM(v);                                                                  \
        }                                                                                       \
        const vec all = (top[0] + top[1]) + (top[2] + top[3]);                                  \
        T lane[W];                                                                              \
        memcpy(lane, &all, sizeof(lane));                                                       \
        _Pragma("GCC unroll 8") for (int w = W / 2; w > 0; w /= 2)                              \
        {                                                                                       \
            for (int l = 0; l < w; l++) {                                                       \
                lane[l] += lane[l + w];                                                         \
            }                                                                                   \
        }                                                                                       \
        return lane[0];                                                                         \
    }
/* The terms of the cascades: sum's elements; nansum's with their NaN lanes +0 (x == x is false
 * only for NaN: its mask, all ones elsewhere, ANDed into the bits); the 2-norm's squares. */
#define CASCADE_TERM_SUM(v) (v)
#define CASCADE_TERM_NANSUM(v) ((__typeof__(v))((__typeof__((v) == (v)))(v) & ((v) == (v))))
#define CASCADE_TERM_SQUARE(v) ((v) * (v))
CASCADE_SUM(cascade_sum_f32, float, CASCADE_TERM_SUM)
CASCADE_SUM(cascade_sum_f64, double, CASCADE_TERM_SUM)
CASCADE_SUM(cascade_nansum_f32, float, CASCADE_TERM_NANSUM)
CASCADE_SUM(cascade_nansum_f64, double, CASCADE_TERM_NANSUM)
CASCADE_SUM(cascade_squares_f32, float, CASCADE_TERM_SQUARE)
_Static_assert(CASCADE_ILP == 4, "CASCADE_SUM adds its top vectors as a pair of pairs");
_Static_assert(CASCADE_LEVELS == 4, "CASCADE_SUM nests one loop a level");

#endif
