/* The fused CPU forward of scaled_dot_product_attention (PyTorch's
 * _scaled_dot_product_flash_attention_for_cpu, less its logsumexp): for each batch-and-head, the
 * scores of every query row in one block (one gemm), the mask, the causal cut and a stable
 * softmax in the input's type (float for float32) row by row, threaded over the rows, then the
 * weighted sum of the values (a second gemm). No tensor is made between the steps. The checks
 * are the front end's (ops/attention.c); the backward recomputes through ops
 * (formulas_attention.c). */
#include <math.h>
#include <string.h>

#include "cpu/blas.h"
#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/vmath.h"
#include "dispatch/kernels.h"
#include "ops/front.h"

#define SOFTMAX_GRAIN 16384 /* score elements below which a thread costs more than it saves */

// p (L, S) the scores of one batch-and-head, mask (L, S) added to them or NULL: rows [i0, i1)
// become their softmax (with causal, over keys j <= i only, the rest 0); a row of only -inf
// becomes 0, as PyTorch's _safe_softmax
#define SOFTMAX_ROWS(name, T, EXP)                                                        \
    static void name(T *p, const T *mask, int64_t i0, int64_t i1, int64_t S, bool causal) \
    {                                                                                     \
        for (int64_t i = i0; i < i1; i++) {                                               \
            T *pi = p + i * S;                                                            \
            const T *mi = mask ? mask + i * S : NULL;                                     \
            const int64_t n = causal && i + 1 < S ? i + 1 : S;                            \
            T top = -INFINITY, sum = 0;                                                   \
            for (int64_t j = 0; mi && j < n; j++) {                                       \
                pi[j] += mi[j];                                                           \
            }                                                                             \
            _Pragma("omp simd reduction(max : top)") for (int64_t j = 0; j < n; j++)      \
            {                                                                             \
                top = pi[j] > top ? pi[j] : top;                                          \
            }                                                                             \
            for (int64_t j = n; j < S; j++) {                                             \
                pi[j] = 0;                                                                \
            }                                                                             \
            if (top == -INFINITY) {                                                       \
                memset(pi, 0, (size_t)n * sizeof(T));                                     \
                continue;                                                                 \
            }                                                                             \
            for (int64_t j = 0; j < n; j++) {                                             \
                pi[j] = EXP(pi[j] - top); /* its own loop, so that it vectorises */       \
            }                                                                             \
            _Pragma("omp simd reduction(+ : sum)") for (int64_t j = 0; j < n; j++)        \
            {                                                                             \
                sum += pi[j];                                                             \
            }                                                                             \
            const T inv = 1 / sum;                                                        \
            for (int64_t j = 0; j < n; j++) {                                             \
                pi[j] *= inv;                                                             \
            }                                                                             \
        }                                                                                 \
    }
/* x - max is <= 0 (or NaN): float takes the vectorisable exp of vmath.h */
SOFTMAX_ROWS(softmax_rows_f32, float, mt_vexp_nonpos_f32)
SOFTMAX_ROWS(softmax_rows_f64, double, exp)

/* rows [0, L) of p through the softmax above, split between threads when `split` */
static void
softmax_rows(mt_dtype dt, void *p, const void *mask, int64_t L, int64_t S, bool causal, bool split)
{
    const int parts = split ? mt_parallel_parts(L * S, SOFTMAX_GRAIN) : 1;
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int part = 0; part < parts; part++) {
        const int64_t i0 = L * part / parts, i1 = L * (part + 1) / parts;
        if (dt == MT_FLOAT32) {
            softmax_rows_f32(p, mask, i0, i1, S, causal);
        } else {
            softmax_rows_f64(p, mask, i0, i1, S, causal);
        }
    }
}

/* The operands of one call, dense, with B batch-and-heads of (L, E) queries, (S, E) keys,
 * (S, Ev) values and (L, S) masks (NULL: none). */
typedef struct attention {
    mt_dtype dt;
    const char *q, *k, *v, *m;
    char *out;
    int64_t L, S, E, Ev;
    int64_t heads, s0, s1, ldo; /* b's (L, Ev) block of out: (b / heads) * s0 + (b % heads) * s1,
                                   its rows ldo apart (the result is in the query's dim order) */
    double scale;
    bool causal;
} attention;

// batch-and-head b: out[b] (L, Ev) = softmax(q[b] k[b]^T * scale + m[b]) v[b], through p (L, S)
// scratch; split: the softmax's rows between threads (gemm threads itself)
static void
attend(const attention *at, int64_t b, char *p, bool split)
{
    const int64_t L = at->L, S = at->S, E = at->E, Ev = at->Ev;
    const size_t item = mt_dtype_size(at->dt);
    const char *qb = at->q + (size_t)(b * L * E) * item, *kb = at->k + (size_t)(b * S * E) * item;
    const char *vb = at->v + (size_t)(b * S * Ev) * item;
    const char *mb = at->m ? at->m + (size_t)(b * L * S) * item : NULL;
    if (E == 0) {
        memset(p, 0, (size_t)(L * S) * item);
    } else {
        mt_cpu_gemm_raw(at->dt, false, true, (int)L, (int)S, (int)E, at->scale, qb, (int)E, kb,
                        (int)E, 0.0, p, (int)S);
    }
    softmax_rows(at->dt, p, mb, L, S, at->causal, split);
    const int64_t ob = (b / at->heads) * at->s0 + (b % at->heads) * at->s1;
    mt_cpu_gemm_raw(at->dt, false, false, (int)L, (int)Ev, (int)S, 1.0, p, (int)S, vb, (int)Ev, 0.0,
                    at->out + (size_t)ob * item, (int)at->ldo);
}

// query (B, L, E) or (B, H, L, E), key (.., S, E), value (.., S, Ev), attn_mask (.., L, S) or
// None, one float dtype; out (.., L, Ev) = softmax(query key^T * scale + mask) value per
// batch-and-head (B the batch and heads together below)
mt_status
mt_cpu__scaled_dot_product_flash_attention_for_cpu(mt_args *a)
{
    mt_tensor *q = NULL, *k = NULL, *v = NULL, *m = NULL, *scores = NULL;
    const mt_dtype dt = a->t[0]->dtype;
    const int nd = a->t[0]->ndim;
    const int64_t L = a->t[0]->sizes[nd - 2], E = a->t[0]->sizes[nd - 1];
    const int64_t S = a->t[1]->sizes[nd - 2], Ev = a->t[2]->sizes[nd - 1];
    const int64_t B = mt_numel(nd - 2, a->t[0]->sizes);
    /* At least as many batch-and-heads as threads: each thread attends whole heads, with gemm at
     * one OpenBLAS thread and a scores block of its own (as PyTorch's flash attention for CPU
     * splits its batch and heads); fewer: one head at a time, gemm and softmax threaded. */
    const int threads = mt_get_num_threads();
    const int parts = threads > 1 && B >= threads ? threads : 1;
    const int64_t score_sizes[2] = {parts * L, S};
    const size_t item = mt_dtype_size(dt);
    mt_status st;
    if ((st = mt_cpu_dense(a->t[0], dt, &q)) || (st = mt_cpu_dense(a->t[1], dt, &k)) ||
        (st = mt_cpu_dense(a->t[2], dt, &v)) || (a->t[3] && (st = mt_cpu_dense(a->t[3], dt, &m))) ||
        (st = mt_tensor_empty(2, score_sizes, dt, MT_DEVICE_CPU, &scores))) {
        goto out_release;
    }
    /* the result is dense in the query's order of dims with Ev innermost (the front end's
     * out_like_query): each batch-and-head's (L, Ev) block has rows ostr[nd - 2] apart */
    const mt_tensor *o = a->out[0];
    const int64_t *ostr = o->strides;
    char *out = mt_tensor_data(a->out[0]), *p = mt_tensor_data(scores);
    memset(out, 0, (size_t)(B * L * Ev) * item); /* no key (S = 0): every row gives 0 */
    if (L == 0 || S == 0 || Ev == 0) {
        goto out_release;
    }
    const attention at = {dt,
                          mt_tensor_data(q),
                          mt_tensor_data(k),
                          mt_tensor_data(v),
                          m ? mt_tensor_data(m) : NULL,
                          out,
                          L,
                          S,
                          E,
                          Ev,
                          nd == 4 ? o->sizes[1] : 1,
                          ostr[0],
                          nd == 4 ? ostr[1] : 0,
                          L > 1 ? ostr[nd - 2] : Ev,
                          a->plan->scale,
                          a->b[0]};
    if (parts == 1) {
        for (int64_t b = 0; b < B; b++) {
            attend(&at, b, p, true);
        }
        goto out_release;
    }
    const int blas_threads = mt_cpu_lapack_begin(); /* OpenBLAS at one thread in our region */
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int part = 0; part < parts; part++) {
        for (int64_t b = B * part / parts; b < B * (part + 1) / parts; b++) {
            attend(&at, b, p + (size_t)(part * L * S) * item, false);
        }
    }
    mt_cpu_lapack_end(blas_threads);
out_release:
    mt_tensor_clear(&q);
    mt_tensor_clear(&k);
    mt_tensor_clear(&v);
    mt_tensor_clear(&m);
    mt_tensor_clear(&scores);
    return st;
}
