/* What the kernel files ops_index.c, ops_random.c, ops_shape.c and ops_nn.c share with their
 * kernels (index.cu, random.cu, factory.cu, nn.cu): the parameter blocks and the kernel getters,
 * and ops_index.c's launch and range-check helpers. */
#ifndef MT_CUDA_KERNELS_INDEX_FILL_NN_H
#define MT_CUDA_KERNELS_INDEX_FILL_NN_H

#include <stdint.h>

#include "cuda/kernels.h"

#ifndef __CUDACC__
#include "cuda/cuda.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One pass of ops/index_plan.h's mt_index_mode over dst, src and pos (int64), each with its
 * element strides over one shape (sizes); step is the bytes per unit of position. */
typedef struct mt_cuda_move {
    int ndim;
    int64_t n;
    int64_t sizes[MT_CUDA_MAX_DIMS];
    int64_t strides[3][MT_CUDA_MAX_DIMS]; /* dst, src, pos */
    char *dst;
    const char *src;
    const int64_t *pos;
    int64_t step;
} mt_cuda_move;

/* The kernel (one mt_cuda_move) of mode (ops/index_plan.h's mt_index_mode: 0 take, 1 put,
 * 2 add, 3 multiply, 4 maximum, 5 minimum) on dtype dt. */
const void *mt_cuda_move_kernel(int mode, mt_dtype dt);
/* What the range check leaves in place of a bad index: the kernels after it skip the element. */
#define MT_CUDA_BAD_POSITION INT64_MIN
/* (int64_t *v, int64_t n, int64_t lo, int64_t hi, mt_cuda_assert_record *rec, int kind): each
 * v[i] outside [lo, hi) fails a device-side assertion of kind (device_assert.h) and becomes
 * MT_CUDA_BAD_POSITION. */
const void *mt_cuda_range_check_kernel(void);
/* (int64_t *pos, const int64_t *v, int64_t n, int64_t size, int64_t step): pos[i] += v[i]
 * (a negative one counting from size) * step; MT_CUDA_BAD_POSITION where v[i] or pos[i] is. */
const void *mt_cuda_add_offsets_kernel(void);

/* ---- random fills (random.cu) ---- */

/* One fill of n contiguous elements: element i draws from Philox4x32-10 with key seed and
 * counter (i, offset), so every launch (a new offset) and every element gets its own stream. */
typedef struct mt_cuda_rand {
    char *out;
    int64_t n;
    uint64_t seed, offset;
    double a, b;   /* uniform: from, to; normal: mean, std; bernoulli: p */
    int64_t from;  /* random_: [from, from + span) */
    uint64_t span;
    const double *in; /* per element (n): bernoulli's p, poisson's rate, gamma's alpha */
} mt_cuda_rand;

/* Poisson's and gamma's element i draws from the counters (i, offset + k) for k <
 * MT_CUDA_POISSON_ROUNDS, each giving two uniforms. */
#define MT_CUDA_POISSON_ROUNDS 1024 /* a rejection loop that long has probability ~0 */

/* The kernel (one mt_cuda_rand) of mt_random_kind kind (ops/random.def's row) on dtype dt, or
 * NULL. */
const void *mt_cuda_rand_kernel(int kind, mt_dtype dt);
/* (const double *p, int64_t n, mt_cuda_assert_record *rec): bernoulli_'s p within [0, 1] */
const void *mt_cuda_unit_interval_check_kernel(void);

/* ---- factories and triangles (factory.cu) ---- */

/* n values of a range into out (contiguous): mode 0 si + i * di (int64), 1 s + i * d (double),
 * 2 linspace's point i of n from s to e, 3 base to that power. */
typedef struct mt_cuda_range {
    char *out;
    int64_t n;
    int mode, f32;
    int64_t si, di;
    double s, d, e, base;
} mt_cuda_range;

/* (mt_cuda_range) on dtype dt */
const void *mt_cuda_range_kernel(mt_dtype dt);
/* (char *out, int64_t n, int64_t m): out (n, m) contiguous = the identity, on dtype dt */
const void *mt_cuda_eye_kernel(mt_dtype dt);
/* (const char *x, char *out, int64_t total, int64_t rows, int64_t cols, int64_t k, int lower):
 * x and out (..., rows, cols) contiguous (may be one tensor); out = x in the triangle of
 * diagonal k (lower: j - i <= k, else j - i >= k), 0 elsewhere */
const void *mt_cuda_triangle_kernel(mt_dtype dt);

/* ---- nn layers (nn.cu) ---- */

#define MT_CUDA_ROW_THREADS 256 /* threads of a block per row (a power of two) */

/* (const char *x, char *y, int64_t rows, int64_t n, double eps, const double *w,
 * const double *b): x, y (rows, n) contiguous of dtype dt (a float), w and b (n) or NULL;
 * y = layer_norm(x) row by row, one block per row */
const void *mt_cuda_layer_norm_kernel(mt_dtype dt);

/* (const char *x, const char *t, const char *pw, char *out, int64_t n,
 * mt_cuda_assert_record *rec): x, t, pw (or NULL: 1) and out (n) contiguous of dtype dt (a
 * float); out = binary_cross_entropy(x, t), an x (value 1) or t (2) outside [0, 1] failing a
 * device-side assertion (logits 0), or its with_logits form with pos_weight pw (logits 1) */
const void *mt_cuda_bce_kernel(int logits, mt_dtype dt);

/* (const char *g, const int64_t *ix, const char *counts, char *out, int64_t n, int64_t dim,
 * int64_t padding_idx): g (n, dim), out (num_weights, dim) zeroed, counts (num_weights) or NULL,
 * of dtype dt (a float), ix (n) in range or MT_CUDA_BAD_POSITION; out[ix[i]] += g[i] (divided
 * by counts[ix[i]] when given) for each ix[i] != padding_idx, atomically */
const void *mt_cuda_embedding_backward_kernel(mt_dtype dt);
/* (const int64_t *ix, char *counts, int64_t n): counts[ix[i]] += 1 (not for
 * MT_CUDA_BAD_POSITION), counts of dtype dt */
const void *mt_cuda_count_kernel(mt_dtype dt);

/* (const char *x, const int64_t *t, const double *w, char *loss, double *wt, int64_t N,
 * int64_t C, int64_t K, int64_t ignore, mt_cuda_assert_record *rec): x (N, C, K), t, loss and
 * wt (N, K) contiguous, x and loss of dtype dt (a float), w (C) or NULL; loss = -w[t] x[n, t, k]
 * and wt = w[t] (both 0 where t is ignore or outside [0, C), which fails a device-side
 * assertion) */
const void *mt_cuda_nll_kernel(mt_dtype dt);

#ifndef __CUDACC__
/* ---- host side (ops_index.c), for the kernel files ops_*.c ---- */

/* Launches kernel with enough blocks of MT_CUDA_THREADS threads for n elements (capped: the
 * kernels loop over the grid) on the current device; nothing when n is 0. */
mt_status mt_cuda_launch_n(const void *kernel, int64_t n, void **args);
/* Checks v (contiguous int64, CUDA, a scratch copy: written) on the device: an element outside
 * [lo, hi) fails a device-side assertion of kind (device_assert.h, reported at the next
 * synchronisation) and becomes MT_CUDA_BAD_POSITION, which the kernels after it skip. Never
 * waits for the device. */
mt_status mt_cuda_check_range(mt_tensor *v, int64_t lo, int64_t hi, int kind);
#endif

#ifdef __cplusplus
}
#endif

#endif
