/* Sorting on the CPU: sort, argsort, topk, and _unique2 (the kernel of unique).
 *
 * The input is made contiguous and seen as (outer, n, inner) around dim, as in reduce_dim.c.
 * Each row along dim is copied with its indices into a scratch buffer, merge-sorted there (a
 * long row of 4- or 8-byte values: radix-sorted) and written back. Both sorts are stable, so
 * stable=True and stable=False give the same result (PyTorch's unstable sort may order ties
 * otherwise; both orders are valid). NaN sorts above every number, as in PyTorch: last
 * ascending, first descending. */
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

/* ---- long rows of 32- and 64-bit values: a radix sort ---- */

/* A row of float32, int32, int64 or float64 at least this long is sorted by radix, stable
 * passes over the bytes of its keys (least significant first, only the bytes that differ
 * between keys), rather than merged in log2(n) passes; below it the passes' fixed cost (a
 * 256-bucket count each) outweighs what they save. */
#define RADIX_MIN 2048
/* A row's passes are split between threads from this many elements a thread. */
#define RADIX_GRAIN 65536
#define RADIX_BUCKETS 256 /* a byte of the key a pass */

/* The key of the value at e: an unsigned number in BEFORE's order, ascending or (desc)
 * descending, equal for the values BEFORE calls ties: -0.0 and 0.0, and every NaN (above every
 * number; +inf's key is 0xff800000 in float32). A negative float's bits are all flipped (a larger
 * magnitude, a smaller key), another's sign set; an integer's sign is flipped. */
static inline uint64_t
radix_key(const char *e, mt_dtype dt, bool desc)
{
    uint64_t key;
    if (dt == MT_FLOAT32) {
        float v;
        uint32_t bits;
        memcpy(&v, e, sizeof v);
        v = v == 0 ? 0.0f : v; /* -0.0 ties with 0.0 */
        memcpy(&bits, &v, sizeof bits);
        bits = bits >> 31 ? ~bits : bits | 0x80000000u;
        key = v != v ? UINT32_MAX : bits;
        return desc ? ~key & UINT32_MAX : key;
    }
    if (dt == MT_FLOAT64) {
        double v;
        memcpy(&v, e, sizeof v);
        v = v == 0 ? 0.0 : v;
        memcpy(&key, &v, sizeof key);
        key = key >> 63 ? ~key : key | (UINT64_C(1) << 63);
        key = v != v ? UINT64_MAX : key;
    } else if (dt == MT_INT32) {
        int32_t v;
        memcpy(&v, e, sizeof v);
        return ((uint32_t)v ^ 0x80000000u) ^ (desc ? UINT32_MAX : 0);
    } else {
        int64_t v;
        memcpy(&v, e, sizeof v);
        key = (uint64_t)v ^ (UINT64_C(1) << 63);
    }
    return desc ? ~key : key;
}

/* Sorts the n words of a by their bits from `shift` up (with their positions pa, unless NULL),
 * stably, a byte a pass, through b (and pb); a byte where no two words differ (none of its bits
 * in `vary`) is skipped. Returns whether the result ended in b. Each of `parts` threads counts
 * the bytes of its range of the current order, then writes its words where the counts place
 * them: for each byte value, after the words of the lower threads, so a pass keeps the order of
 * equal bytes. hist: parts * RADIX_BUCKETS. */
static bool
radix_passes(uint64_t *a, uint64_t *b, int64_t *pa, int64_t *pb, int64_t n, int shift,
             uint64_t vary, int64_t *hist, int parts)
{
    bool in_b = false;
    for (; shift < 64; shift += 8) {
        if (((vary >> shift) & 0xff) == 0) {
            continue;
        }
#pragma omp parallel for num_threads(parts) schedule(static, 1) if (parts > 1)
        for (int p = 0; p < parts; p++) {
            int64_t *h = hist + p * RADIX_BUCKETS;
            memset(h, 0, RADIX_BUCKETS * sizeof *h);
            for (int64_t j = n * p / parts; j < n * (p + 1) / parts; j++) {
                h[(a[j] >> shift) & 0xff]++;
            }
        }
        /* each (byte, thread)'s first slot: byte values in order, threads in order within one */
        int64_t at = 0;
        for (int d = 0; d < RADIX_BUCKETS; d++) {
            for (int p = 0; p < parts; p++) {
                const int64_t count = hist[p * RADIX_BUCKETS + d];
                hist[p * RADIX_BUCKETS + d] = at;
                at += count;
            }
        }
#pragma omp parallel for num_threads(parts) schedule(static, 1) if (parts > 1)
        for (int p = 0; p < parts; p++) {
            int64_t *h = hist + p * RADIX_BUCKETS;
            for (int64_t j = n * p / parts; j < n * (p + 1) / parts; j++) {
                const int64_t to = h[(a[j] >> shift) & 0xff]++;
                b[to] = a[j];
                if (pa) {
                    pb[to] = pa[j];
                }
            }
        }
        uint64_t *t = a;
        a = b;
        b = t;
        int64_t *pt = pa;
        pa = pb;
        pb = pt;
        in_b = !in_b;
    }
    return in_b;
}

/* The scratch words radix_row needs for a row of n elements of es bytes on `parts` threads. */
static int64_t
radix_scratch(int64_t n, size_t es, int parts)
{
    return (es == 4 ? 2 : 4) * n + RADIX_BUCKETS * parts;
}

/* x (outer, n, inner) of a 4- or 8-byte dtype dt; values, indices (outer, k, inner): as
 * SORT_ROWS, for the one row of lane (o, i) = (lane / inner, lane % inner), on `parts` threads.
 * A 32-bit key shares its word with its position (key << 32 | position, n < 2^32), a 64-bit one
 * has its position beside it; a pass moves both, equal keys stay in the order of their
 * positions (the merge sort's stable order), and the values are copied back from x by
 * position, bit for bit. scratch: radix_scratch's words. */
static void
radix_row(const void *xv, void *vv, int64_t *indices, int64_t lane, int64_t n, int64_t inner,
          int64_t k, bool desc, mt_dtype dt, uint64_t *scratch, int parts)
{
    const int64_t o = lane / inner, i = lane % inner, es = (int64_t)mt_dtype_size(dt);
    const bool packed = es == 4;
    const char *x = (const char *)xv + (o * n * inner + i) * es;
    char *values = vv ? (char *)vv + (o * k * inner + i) * es : NULL;
    int64_t *id = indices + o * k * inner + i;
    uint64_t *a = scratch, *b = a + n;
    int64_t *pa = packed ? NULL : (int64_t *)(b + n), *pb = packed ? NULL : pa + n;
    int64_t *hist = packed ? (int64_t *)(b + n) : pb + n;
    const uint64_t first = radix_key(x, dt, desc);
    uint64_t vary = 0; /* the bits where some key differs from the first */
#pragma omp parallel for num_threads(parts) if (parts > 1) reduction(| : vary)
    for (int64_t j = 0; j < n; j++) {
        const uint64_t key = radix_key(x + j * inner * es, dt, desc);
        vary |= key ^ first;
        if (packed) {
            a[j] = key << 32 | (uint64_t)j;
        } else {
            a[j] = key;
            pa[j] = j;
        }
    }
    if (radix_passes(a, b, pa, pb, n, packed ? 32 : 0, packed ? vary << 32 : vary, hist, parts)) {
        a = b;
        pa = pb;
    }
#pragma omp parallel for num_threads(parts) if (parts > 1)
    for (int64_t j = 0; j < k; j++) {
        const int64_t at = packed ? (int64_t)(a[j] & 0xffffffffu) : pa[j];
        if (values && packed) {
            memcpy(values + j * inner * 4, x + at * inner * 4, 4);
        } else if (values) {
            memcpy(values + j * inner * 8, x + at * inner * 8, 8);
        }
        id[j * inner] = at;
    }
}

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
     * scratch rows: key, tk (as 8-byte slots), idx, ti; or, sorting by radix, its words and
     * counts. A long row sorted by radix has the threads to itself, lane after lane. */
    const int64_t lanes = outer * inner;
    const bool heap = values && k * 8 < n;
    const bool radix = !heap && n >= RADIX_MIN && n <= UINT32_MAX &&
                       self->dtype != MT_BOOL; /* 4 or 8 bytes */
    const int row_parts = radix ? mt_parallel_parts(n, RADIX_GRAIN) : 1;
    const int parts = row_parts > 1 ? 1 : mt_parallel_parts(lanes, 32768 / (n + 1) + 1);
    const int64_t per_part = radix ? radix_scratch(n, mt_dtype_size(self->dtype), row_parts)
                                   : 4 * n;
    int64_t scratch_n = per_part * parts;
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
        const void *xd = mt_tensor_data(x);
        void *vd = values ? mt_tensor_data(*values) : NULL;
        int64_t *id = (int64_t *)mt_tensor_data(*indices);
#pragma omp parallel for num_threads(parts) schedule(static, 1) if (parts > 1)
        for (int p = 0; p < parts; p++) {
            int64_t *s = (int64_t *)mt_tensor_data(scratch) + per_part * p;
            const int64_t begin = lanes * p / parts, end = lanes * (p + 1) / parts;
            if (heap) {
                topk_loops[self->dtype](xd, vd, id, begin, end, n, inner, k, desc, s, s + n);
            } else if (radix) {
                for (int64_t lane = begin; lane < end; lane++) {
                    radix_row(xd, vd, id, lane, n, inner, k, desc, self->dtype, (uint64_t *)s,
                              row_parts);
                }
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
