/* Sorting on the CPU: sort, argsort, topk, and _unique2 (the kernel of unique).
 *
 * The input is made contiguous and seen as (outer, n, inner) around dim, as in reduce_dim.c.
 * Each row along dim is copied with its indices into a scratch buffer, merge-sorted there and
 * written back. The merge sort is stable, so stable=True and stable=False give the same result
 * (PyTorch's unstable sort may order ties otherwise; both orders are valid). NaN sorts above
 * every number, as in PyTorch: last ascending, first descending. */
#include <inttypes.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/arg_checks.h"

/* Strictly before: ascending a < b, descending a > b, with NaN as the largest value. Ties are
 * never "before", which keeps the merge stable. `|` and `&`, not `||` and `&&`: the tests are
 * then selects, not branches the data decide at random. */
#define BEFORE(a, b, desc)                                  \
    ((desc) ? (((a) > (b)) | (((a) != (a)) & ((b) == (b)))) \
            : (((a) < (b)) | (((a) == (a)) & ((b) != (b)))))

/* Rows are first sorted in runs of this many by insertion, which beats the merge's first
 * levels on so few elements. */
#define SORT_RUN 16

/* x (outer, n, inner); values, indices (outer, k, inner): the first k of each row along n once
 * sorted, and their positions in the row, for the rows (o, i) numbered o * inner + i in
 * [begin, end). values may be NULL. key/tk and idx/ti are scratch rows of n elements. */
#define SORT_ROWS(S, T)                                                                       \
    static void sort_rows_##S(const void *xv, void *vv, int64_t *indices, int64_t begin,      \
                              int64_t end, int64_t n, int64_t inner, int64_t k, bool desc,    \
                              void *keyv, void *tkv, int64_t *idx, int64_t *ti)               \
    {                                                                                         \
        const T *x = (const T *)xv;                                                           \
        T *values = (T *)vv;                                                                  \
        for (int64_t lane = begin; lane < end; lane++) {                                      \
            const int64_t o = lane / inner, i = lane % inner;                                 \
            T *key = (T *)keyv, *tk = (T *)tkv;                                               \
            int64_t *id = idx, *tid = ti;                                                     \
            for (int64_t j = 0; j < n; j++) {                                                 \
                key[j] = MT_LOAD(T, x + (o * n + j) * inner + i);                             \
                id[j] = j;                                                                    \
            }                                                                                 \
            /* runs of SORT_RUN by insertion (stable: only a strictly-before element moves */ \
            /* past another) */                                                               \
            for (int64_t lo = 0; lo < n; lo += SORT_RUN) {                                    \
                const int64_t hi = lo + SORT_RUN < n ? lo + SORT_RUN : n;                     \
                for (int64_t j = lo + 1; j < hi; j++) {                                       \
                    const T kv = key[j];                                                      \
                    const int64_t iv = id[j];                                                 \
                    int64_t p = j;                                                            \
                    for (; p > lo && BEFORE(kv, key[p - 1], desc); p--) {                     \
                        key[p] = key[p - 1];                                                  \
                        id[p] = id[p - 1];                                                    \
                    }                                                                         \
                    key[p] = kv;                                                              \
                    id[p] = iv;                                                               \
                }                                                                             \
            }                                                                                 \
            /* bottom-up merge sort: runs of width w merged from (key, id) into (tk, tid), */ \
            /* each step a select rather than a branch (which way it goes is random) */       \
            for (int64_t w = SORT_RUN; w < n; w *= 2) {                                       \
                for (int64_t lo = 0; lo < n; lo += 2 * w) {                                   \
                    int64_t mid = lo + w < n ? lo + w : n;                                    \
                    int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;                             \
                    int64_t a = lo, b = mid, t = lo;                                          \
                    while (a < mid && b < hi) {                                               \
                        const bool take_b = BEFORE(key[b], key[a], desc);                     \
                        tk[t] = take_b ? key[b] : key[a];                                     \
                        tid[t++] = take_b ? id[b] : id[a];                                    \
                        b += take_b;                                                          \
                        a += !take_b;                                                         \
                    }                                                                         \
                    for (; a < mid; a++, t++) {                                               \
                        tk[t] = key[a];                                                       \
                        tid[t] = id[a];                                                       \
                    }                                                                         \
                    for (; b < hi; b++, t++) {                                                \
                        tk[t] = key[b];                                                       \
                        tid[t] = id[b];                                                       \
                    }                                                                         \
                }                                                                             \
                T *sk = key;                                                                  \
                key = tk;                                                                     \
                tk = sk;                                                                      \
                int64_t *sid = id;                                                            \
                id = tid;                                                                     \
                tid = sid;                                                                    \
            }                                                                                 \
            for (int64_t j = 0; j < k; j++) {                                                 \
                const int64_t at = (o * k + j) * inner + i;                                   \
                if (values) {                                                                 \
                    values[at] = key[j];                                                      \
                }                                                                             \
                indices[at] = id[j];                                                          \
            }                                                                                 \
        }                                                                                     \
    }
#define SORT_ROWS_ARGS(E, T, S) SORT_ROWS(S, T)
MT_DTYPES(SORT_ROWS_ARGS)
typedef void (*sort_fn)(const void *x, void *values, int64_t *indices, int64_t begin, int64_t end,
                        int64_t n, int64_t inner, int64_t k, bool desc, void *key, void *tk,
                        int64_t *idx, int64_t *ti);
static const sort_fn sort_loops[MT_NUM_DTYPES] = {sort_rows_b8, sort_rows_i32, sort_rows_i64,
                                                  sort_rows_f32, sort_rows_f64};

/* (va, ia) comes after (vb, ib) in the sorted row: the later value, or the later position of
 * equal ones (the merge sort's stable order, so topk and sort agree on ties). */
#define AFTER(va, ia, vb, ib, desc) (BEFORE(vb, va, desc) || (!BEFORE(va, vb, desc) && (ia) > (ib)))

/* Moves the hole at `at` of the heap (key, id)[0, size) down to where (v, vj) belongs. */
#define SIFT_DOWN(key, id, at, size, v, vj, desc)                                  \
    for (;;) {                                                                     \
        int64_t c = 2 * (at) + 1;                                                  \
        if (c >= (size)) {                                                         \
            break;                                                                 \
        }                                                                          \
        if (c + 1 < (size) && AFTER(key[c + 1], id[c + 1], key[c], id[c], desc)) { \
            c++;                                                                   \
        }                                                                          \
        if (!AFTER(key[c], id[c], v, vj, desc)) {                                  \
            break;                                                                 \
        }                                                                          \
        key[at] = key[c];                                                          \
        id[at] = id[c];                                                            \
        (at) = c;                                                                  \
    }

/* The same result as SORT_ROWS for k much smaller than n, in O(n log k): a heap of the k first
 * seen so far whose root is the one that would sort last; then the heap is emptied from the back. */
#define TOPK_ROWS(S, T)                                                                        \
    static void topk_rows_##S(const void *xv, void *vv, int64_t *indices, int64_t begin,       \
                              int64_t end, int64_t n, int64_t inner, int64_t k, bool desc,     \
                              void *keyv, int64_t *id)                                         \
    {                                                                                          \
        const T *x = (const T *)xv;                                                            \
        T *values = (T *)vv, *key = (T *)keyv;                                                 \
        for (int64_t lane = begin; lane < end; lane++) {                                       \
            const int64_t o = lane / inner, i = lane % inner;                                  \
            int64_t size = 0;                                                                  \
            for (int64_t j = 0; j < n; j++) {                                                  \
                const T v = MT_LOAD(T, x + (o * n + j) * inner + i);                           \
                int64_t at;                                                                    \
                if (size < k) { /* sift up from the new leaf */                                \
                    at = size++;                                                               \
                    while (at > 0 && AFTER(v, j, key[(at - 1) / 2], id[(at - 1) / 2], desc)) { \
                        key[at] = key[(at - 1) / 2];                                           \
                        id[at] = id[(at - 1) / 2];                                             \
                        at = (at - 1) / 2;                                                     \
                    }                                                                          \
                } else if (AFTER(key[0], id[0], v, j, desc)) { /* replaces the root */         \
                    at = 0;                                                                    \
                    SIFT_DOWN(key, id, at, size, v, j, desc)                                   \
                } else {                                                                       \
                    continue;                                                                  \
                }                                                                              \
                key[at] = v;                                                                   \
                id[at] = j;                                                                    \
            }                                                                                  \
            /* pop the root (the last in order) into place k-1, k-2, ... */                    \
            for (int64_t last = size - 1; last >= 0; last--) {                                 \
                const int64_t out = (o * k + last) * inner + i;                                \
                values[out] = key[0];                                                          \
                indices[out] = id[0];                                                          \
                const T v = key[last];                                                         \
                const int64_t vj = id[last];                                                   \
                int64_t at = 0;                                                                \
                SIFT_DOWN(key, id, at, last, v, vj, desc)                                      \
                key[at] = v;                                                                   \
                id[at] = vj;                                                                   \
            }                                                                                  \
        }                                                                                      \
    }
#define TOPK_ROWS_ARGS(E, T, S) TOPK_ROWS(S, T)
MT_DTYPES(TOPK_ROWS_ARGS)
typedef void (*topk_fn)(const void *x, void *values, int64_t *indices, int64_t begin, int64_t end,
                        int64_t n, int64_t inner, int64_t k, bool desc, void *key, int64_t *id);
static const topk_fn topk_loops[MT_NUM_DTYPES] = {topk_rows_b8, topk_rows_i32, topk_rows_i64,
                                                  topk_rows_f32, topk_rows_f64};

/* The first k of each row of self along dim, sorted: values (unless NULL) and int64 indices,
 * shaped like self with k along dim (ops/arg_checks.h's mt_sort_along_fn: given ones are
 * written, NULL ones made: the sort family's results are given, _unique2's workspaces made). */
static mt_status
sort_along(mt_tensor *self, int dim, int64_t k, bool desc, mt_tensor **values, mt_tensor **indices)
{
    mt_tensor *x = NULL, *scratch = NULL;
    const bool make_values = values && *values == NULL, make_indices = *indices == NULL;
    int64_t outer, n, inner, shape[MT_MAX_DIMS];
    mt_sort_geom(self, dim, k, &outer, &n, &inner, shape);
    /* The lanes (o, i), each a row along dim, are split between threads, each with its own
     * scratch rows: key, tk (as 8-byte slots), idx, ti. */
    const int64_t lanes = outer * inner;
    const int parts = mt_parallel_parts(lanes, 32768 / (n + 1) + 1);
    int64_t scratch_n = 4 * n * parts;
    mt_status st = mt_tensor_is_contiguous(self) ? (x = mt_tensor_retain(self), MT_OK)
                                                 : mt_cpu_cast(self, self->dtype, &x);
    if (st == MT_OK) {
        st = mt_tensor_empty(1, &scratch_n, MT_INT64, mt_tensor_device(self), &scratch);
    }
    if (st == MT_OK && make_indices) {
        st = mt_tensor_empty(self->ndim, shape, MT_INT64, mt_tensor_device(self), indices);
    }
    if (st == MT_OK && make_values) {
        st = mt_tensor_empty(self->ndim, shape, self->dtype, mt_tensor_device(self), values);
    }
    if (st == MT_OK) {
        const bool heap = values && k * 8 < n;
        const void *xd = mt_tensor_data(x);
        void *vd = values ? mt_tensor_data(*values) : NULL;
        int64_t *id = (int64_t *)mt_tensor_data(*indices);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
        for (int p = 0; p < parts; p++) {
            int64_t *s = (int64_t *)mt_tensor_data(scratch) + 4 * n * p;
            const int64_t begin = lanes * p / parts, end = lanes * (p + 1) / parts;
            if (heap) {
                topk_loops[self->dtype](xd, vd, id, begin, end, n, inner, k, desc, s, s + n);
            } else {
                sort_loops[self->dtype](xd, vd, id, begin, end, n, inner, k, desc, s, s + n,
                                        s + 2 * n, s + 3 * n);
            }
        }
    } else {
        if (make_indices) {
            mt_tensor_clear(indices);
        }
        if (make_values) {
            mt_tensor_clear(values);
        }
    }
    mt_tensor_clear(&scratch);
    mt_tensor_clear(&x);
    return st;
}

// sort: self (*), dim; out[0] = self sorted along dim, out[1] = the int64 positions they came
// from; argsort: out[0] = those positions alone; topk: self (*), k, dim; out[0] = the k largest
// (or smallest) along dim, out[1] = their positions. One kernel (ops.def's CPU_AS(sort) rows).
mt_status
mt_cpu_sort(mt_args *a)
{
    return mt_sort_with(a, sort_along);
}

/* ---- unique ---- */

/* sorted (n) ascending with their flat positions perm; writes the distinct values u, the group
 * of each position (inverse) and each group's size (counts), each unless NULL (all NULL: it only
 * counts). Returns the number of groups. NaN != NaN, so every NaN is a group of its own, as in
 * PyTorch. */
#define UNIQUE_LOOP(E, T, S)                                                            \
    static int64_t unique_##S(const void *sv, const int64_t *perm, int64_t n, void *uv, \
                              int64_t *inverse, int64_t *counts)                        \
    {                                                                                   \
        const T *sorted = (const T *)sv;                                                \
        T *u = (T *)uv;                                                                 \
        int64_t g = -1;                                                                 \
        for (int64_t j = 0; j < n; j++) {                                               \
            if (j == 0 || !(sorted[j] == sorted[j - 1])) {                              \
                g++;                                                                    \
                if (u) {                                                                \
                    u[g] = sorted[j];                                                   \
                }                                                                       \
                if (counts) {                                                           \
                    counts[g] = 0;                                                      \
                }                                                                       \
            }                                                                           \
            if (counts) {                                                               \
                counts[g]++;                                                            \
            }                                                                           \
            if (inverse) {                                                              \
                inverse[perm[j]] = g;                                                   \
            }                                                                           \
        }                                                                               \
        return g + 1;                                                                   \
    }
MT_DTYPES(UNIQUE_LOOP)
typedef int64_t (*unique_fn)(const void *sorted, const int64_t *perm, int64_t n, void *u,
                             int64_t *inverse, int64_t *counts);
static const unique_fn unique_loops[MT_NUM_DTYPES] = {unique_b8, unique_i32, unique_i64, unique_f32,
                                                      unique_f64};

// self (*); out[0] (u) = its distinct values ascending, out[1] (self's shape) = the group of
// each element if return_inverse, out[2] (u) = each group's size if return_counts (as PyTorch's
// _unique2; on the CPU the result is sorted either way). The front end stated out[1] (and the
// empty ones not asked for); out[0] and out[2] are made once the groups are counted.
mt_status
mt_cpu__unique2(mt_args *a)
{
    mt_tensor *self = a->t[0], *flat = NULL, *row = NULL, *sorted = NULL, *perm = NULL;
    int64_t n = mt_tensor_numel(self), one = 1;
    mt_status st = mt_tensor_is_contiguous(self) ? (flat = mt_tensor_retain(self), MT_OK)
                                                 : mt_cpu_cast(self, self->dtype, &flat);
    if (st == MT_OK) {
        st = mt_tensor_view(flat, 1, &n, &one, flat->offset, &row);
    }
    if (st == MT_OK) {
        st = sort_along(row, 0, n, false, &sorted, &perm);
    }
    if (st) {
        goto out_release;
    }
    const unique_fn loop = unique_loops[self->dtype];
    const void *sd = mt_tensor_data(sorted);
    const int64_t *pd = (const int64_t *)mt_tensor_data(perm);
    int64_t groups = loop(sd, pd, n, NULL, NULL, NULL);
    st = mt_unique_results(a, groups, self->dtype, mt_tensor_device(self));
    if (st == MT_OK) {
        loop(sd, pd, n, mt_tensor_data(a->out[0]),
             a->b[1] ? (int64_t *)mt_tensor_data(a->out[1]) : NULL,
             a->b[2] ? (int64_t *)mt_tensor_data(a->out[2]) : NULL);
    }
out_release:
    mt_tensor_clear(&flat);
    mt_tensor_clear(&row);
    mt_tensor_clear(&sorted);
    mt_tensor_clear(&perm);
    return st;
}
