/* Shape kernels on the CPU that move elements: cat, flip, tril and triu (and their in-place
 * forms), the reflection, replication and constant pads. Views (narrow, split, ...) live in
 * csrc/ops/, since they move nothing.
 *
 * cat copies each input into its slice of the result with mt_cpu_copy_into, so any strides and
 * any mix of dtypes work; flip copies rows with negative strides, which no tensor may hold, on
 * the thread pool, and so do the pads, through runs of their source positions. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/math.h"
#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/factory_args.h"
#include "ops/front.h"
#include "ops/nn.h"

/* A copy left to the caller: mt_cat_with only allocates. */
static mt_status
copied_later(mt_tensor *dst, mt_tensor *src)
{
    (void)dst;
    (void)src;
    return MT_OK;
}

/* Whether every input is a contiguous tensor of out's rank and dtype (not bool, whose bytes are
 * normalised as read): then cat is row by row copies. */
static bool
cat_in_rows(const mt_args *a, mt_dtype dt, int ndim)
{
    for (int k = 0; k < a->ntl; k++) {
        const mt_tensor *t = a->tl[k];
        if (t->ndim != ndim || t->dtype != dt || dt == MT_BOOL || !mt_tensor_is_contiguous(t) ||
            !mt_tensor_is_contiguous(a->out[0])) { /* a channels-last result: by slices */
            return false;
        }
    }
    return true;
}

/* Chunks shorter than this, on average, copy faster as each input's strided copy into its slice
 * than as a memcpy call a chunk: stack([a, a], -1) of two (512, 512) float32 is a chunk of one
 * element, 2.4 ms a memcpy each, 3x PyTorch's time. */
#define MT_CAT_MIN_CHUNK_BYTES 64

// tensors: n tensors (A, k_i, B) along dim, out (A, sum k_i, B). Contiguous inputs of out's
// dtype in chunks of MT_CAT_MIN_CHUNK_BYTES or more: each outer index a (of A) copies input i's
// chunk (k_i * B elements) after input i - 1's, so out is written in order (PyTorch's
// cat_serial_kernel), out's elements split evenly over the thread pool (a thread may start and
// end inside a chunk). Else each input is copied into its slice, casting (mt_cpu_copy_into).
mt_status
mt_cpu_cat(mt_args *a)
{
    const mt_shape_plan *p = &a->plan->shape;
    const int64_t esize = (int64_t)mt_dtype_size(p->dt);
    int64_t outer = 1, inner = 1, row = 0; /* row: out's elements per outer index */
    for (int d = 0; d < p->ndim; d++) {
        outer *= d < p->dim ? p->sizes[d] : 1;
        inner *= d > p->dim ? p->sizes[d] : 1;
        row = d == p->dim ? p->sizes[d] : row;
    }
    row *= inner;
    if (!cat_in_rows(a, p->dt, p->ndim) || row * esize < MT_CAT_MIN_CHUNK_BYTES * a->ntl) {
        return mt_cat_with(a, mt_cpu_copy_into);
    }
    mt_status st = mt_cat_with(a, copied_later);
    if (st) {
        return st;
    }
    const int64_t numel = mt_tensor_numel(a->out[0]);
    if (numel == 0) {
        return MT_OK;
    }
    char *out = mt_tensor_data(a->out[0]);
    const int parts = numel ? mt_parallel_parts(numel, 32768) : 1;
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int part = 0; part < parts; part++) {
        /* out's elements [e0, e1): the pieces of the chunks that fall in them */
        const int64_t e0 = numel * part / parts, e1 = numel * (part + 1) / parts;
        for (int64_t i = e0 / row, at = i * row; at < e1; i++) {
            for (int k = 0; k < a->ntl; k++) {
                const int64_t chunk = a->tl[k]->sizes[p->dim] * inner;
                const int64_t lo = at > e0 ? at : e0, hi = at + chunk < e1 ? at + chunk : e1;
                if (lo < hi) {
                    const char *from = mt_tensor_data(a->tl[k]);
                    memcpy(out + lo * esize, from + (i * chunk + lo - at) * esize,
                           (size_t)(hi - lo) * (size_t)esize);
                }
                at += chunk;
            }
        }
    }
    return MT_OK;
}

/* One row of a strided block: o[i] = src[i * step] for i < n, step in bytes (negative when the
 * row is flipped). A row kept in order is a memcpy; a reversed one a loop the compiler vectorises
 * with a lane reversal, built for AVX-512 and AVX2 too (loops.h: the baseline's SSE2 reverses 16
 * bytes a step, and a (512, 512) float32 flip took 1.45x PyTorch's time). A bool byte is
 * normalised as it is read (core/math.h), so one loop serves every dtype of a width. */
#define ROW_LOOP(name, T)                                                                      \
    MT_SIMD_CLONES static void name(char *dst, const char *src, int64_t n, int64_t step)       \
    {                                                                                          \
        T *restrict o = (T *)dst;                                                              \
        const T *restrict x = (const T *)src;                                                  \
        if (step == -(int64_t)sizeof(T)) {                                                     \
            for (int64_t i = 0; i < n; i++) {                                                  \
                o[i] = MT_LOAD(T, x - i);                                                      \
            }                                                                                  \
        } else if (step == (int64_t)sizeof(T) && _Generic((T)0, bool: false, default: true)) { \
            memcpy(o, x, (size_t)n * sizeof(T));                                               \
        } else if (step == (int64_t)sizeof(T)) {                                               \
            for (int64_t i = 0; i < n; i++) {                                                  \
                o[i] = MT_LOAD(T, x + i);                                                      \
            }                                                                                  \
        } else {                                                                               \
            for (int64_t i = 0; i < n; i++) {                                                  \
                o[i] = MT_LOAD(T, src + i * step);                                             \
            }                                                                                  \
        }                                                                                      \
    }
ROW_LOOP(row_w1, bool)
ROW_LOOP(row_w4, uint32_t)
ROW_LOOP(row_w8, uint64_t)
ROW_LOOP(row_w16, double _Complex)

typedef void (*row_fn)(char *dst, const char *src, int64_t n, int64_t step);

/* A strided block: sizes and byte strides (which may be negative), outermost first, the last
 * dim the rows. */
typedef struct block {
    int ndim;
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
} block;

/* Drops the size-1 dims of b and merges each dim into the next where one walk covers both (also
 * when both run backwards), so that rows are as long as the layout allows. */
static void
coalesce(block *b)
{
    int n = 0;
    for (int d = 0; d < b->ndim; d++) {
        if (b->sizes[d] == 1) {
            continue;
        }
        if (n > 0 && b->strides[n - 1] == b->strides[d] * b->sizes[d]) {
            b->sizes[n - 1] *= b->sizes[d];
            b->strides[n - 1] = b->strides[d];
            continue;
        }
        b->sizes[n] = b->sizes[d];
        b->strides[n] = b->strides[d];
        n++;
    }
    b->ndim = n;
}

// elements [e0, e1) of the block b at src (byte strides, rows of b->sizes[ndim - 1]) to dst, in
// row-major order, esize bytes each: a range may start and end inside a row (one long row is
// split between threads too)
static void
copy_range(char *dst, const char *src, const block *b, int64_t e0, int64_t e1, size_t esize)
{
    static const row_fn rows[] = {[1] = row_w1, [4] = row_w4, [8] = row_w8, [16] = row_w16};
    const int last = b->ndim - 1;
    const int64_t inner = last >= 0 ? b->sizes[last] : 1, step = last >= 0 ? b->strides[last] : 0;
    int64_t idx[MT_MAX_DIMS] = {0}, i = e0 % inner; /* e0's place: its row's, and in its row */
    for (int64_t rest = e0 / inner, d = last - 1; d >= 0; d--) {
        idx[d] = rest % b->sizes[d];
        rest /= b->sizes[d];
        src += idx[d] * b->strides[d];
    }
    for (int64_t e = e0, n; e < e1; e += n, i = 0) {
        n = inner - i < e1 - e ? inner - i : e1 - e;
        rows[esize](dst + e * (int64_t)esize, src + i * step, n, step);
        for (int d = last - 1; d >= 0; d--) {
            src += b->strides[d];
            if (++idx[d] < b->sizes[d]) {
                break;
            }
            src -= b->strides[d] * b->sizes[d];
            idx[d] = 0;
        }
    }
}

// self (any shape), dims; out (the result: same shape, contiguous) with the dims in dims
// reversed
mt_status
mt_cpu_flip(mt_args *a)
{
    mt_tensor *self = a->t[0], *out = a->out[0];
    const bool *flip = a->plan->shape.dims;
    if (mt_tensor_numel(out) > 0) {
        size_t esize = mt_dtype_size(self->dtype);
        const char *src = mt_tensor_data(self);
        block b = {self->ndim, {0}, {0}};
        for (int d = 0; d < self->ndim; d++) {
            b.sizes[d] = self->sizes[d];
            b.strides[d] = self->strides[d] * (int64_t)esize;
            if (flip[d]) {
                src += (self->sizes[d] - 1) * b.strides[d];
                b.strides[d] = -b.strides[d];
            }
        }
        coalesce(&b);
        const int64_t numel = mt_tensor_numel(out);
        char *dst = mt_tensor_data(out);
        const int parts = mt_parallel_parts(numel, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
        for (int p = 0; p < parts; p++) {
            copy_range(dst, src, &b, numel * p / parts, numel * (p + 1) / parts, esize);
        }
    }
    return MT_OK;
}

/* Zeroes the elements of t (..., M, N) outside its lower (tril) or upper (triu) triangle:
 * element (i, j) stays when j - i <= diagonal (lower), when j - i >= diagonal (upper). Zero is
 * all bits clear in every dtype. */
static void
zero_triangle(mt_tensor *t, int64_t diagonal, bool lower)
{
    int nd = t->ndim;
    int64_t m = t->sizes[nd - 2], n = t->sizes[nd - 1];
    if (m == 0 || n == 0) {
        return;
    }
    size_t esize = mt_dtype_size(t->dtype);
    int64_t rs = t->strides[nd - 2] * (int64_t)esize, cs = t->strides[nd - 1] * (int64_t)esize;
    /* Beyond these bounds every diagonal gives the same result; they keep i + k in range. */
    int64_t k = diagonal < -m ? -m : diagonal > n ? n : diagonal;
    int64_t batches = mt_tensor_numel(t) / (m * n);
    for (int64_t b = 0; b < batches; b++) {
        char *base = mt_tensor_data(t);
        for (int64_t rest = b, d = nd - 3; d >= 0; d--) {
            base += (rest % t->sizes[d]) * t->strides[d] * (int64_t)esize;
            rest /= t->sizes[d];
        }
        for (int64_t i = 0; i < m; i++) {
            /* zero the columns [lo, hi) of row i */
            int64_t lo = lower ? i + k + 1 : 0, hi = lower ? n : i + k;
            lo = lo < 0 ? 0 : lo > n ? n : lo;
            hi = hi < 0 ? 0 : hi > n ? n : hi;
            char *row = base + i * rs;
            if (cs == (int64_t)esize && hi > lo) {
                memset(row + lo * cs, 0, (size_t)(hi - lo) * esize);
                continue;
            }
            for (int64_t j = lo; j < hi; j++) {
                memset(row + j * cs, 0, esize);
            }
        }
    }
}

// self (..., M, N); out (the result, contiguous (..., M, N)): self inside the triangle of
// diagonal i[0] (tril: below and on it, triu: above and on it), else 0; in place: into self. One kernel for the four ops
// (ops.def's CPU_AS(triangle) rows; the plan's op tells them apart).
mt_status
mt_cpu_triangle(mt_args *a)
{
    const mt_op op = a->plan->op;
    const bool lower = op == MT_OP_tril || op == MT_OP_tril_;
    const bool inplace = op == MT_OP_tril_ || op == MT_OP_triu_;
    mt_tensor *self = a->t[0];
    if (inplace) {
        zero_triangle(self, a->i[0], lower);
        mt_tensor_bump_version(self);
        a->out[0] = mt_tensor_retain(self);
        return MT_OK;
    }
    mt_status st = mt_cpu_copy_into(a->out[0], self);
    if (st == MT_OK) {
        zero_triangle(a->out[0], a->i[0], lower);
    }
    return st;
}

/* ---- the pads: reflection, replication and constant ---- */

/* Output positions [at, at + len) along the innermost dim that read input positions from,
 * from + dir, ... (dir 1 or -1): a pad's middle is one run, a reflected border a reversed one;
 * from -1 (dir 0): a constant pad's border, the value. */
typedef struct pad_run {
    int64_t at, from, len, dir;
} pad_run;

/* The runs of src (n positions, -1 for the value), into runs (room for n); returns their
 * number. */
static int64_t
runs_of(const int64_t *src, int64_t n, pad_run *runs)
{
    int64_t count = 0;
    for (int64_t j = 0; j < n;) {
        int64_t dir = src[j] < 0 ? 0 : j + 1 < n && src[j + 1] == src[j] - 1 ? -1 : 1;
        pad_run r = {j, src[j], 1, dir};
        /* (a reversed run down to position 0 stops there: the -1 after it is the value) */
        while (j + r.len < n && src[j + r.len] == r.from + r.len * r.dir &&
               (src[j + r.len] < 0) == (dir == 0)) {
            r.len++;
        }
        runs[count++] = r;
        j += r.len;
    }
    return count;
}

/* Output rows y[r] (width elements each, r < nrows) of a pad, row r read from the source row at
 * base + rows[r] (bytes; -1: a row of the value, *fill) through the runs of the innermost dim
 * (elements step bytes apart): a run forward along a contiguous row, and a run of the value, are
 * loops the compiler vectorises. */
#define PAD_ROWS(name, T)                                                                          \
    MT_SIMD_CLONES static void name(char *y, const char *base, const int64_t *rows, int64_t nrows, \
                                    int64_t width, const pad_run *runs, int64_t nruns,             \
                                    int64_t step, const void *fill)                                \
    {                                                                                              \
        T v;                                                                                       \
        memcpy(&v, fill, sizeof(T));                                                               \
        for (int64_t r = 0; r < nrows; r++) {                                                      \
            T *o = (T *)y + r * width;                                                             \
            if (rows[r] < 0) {                                                                     \
                for (int64_t i = 0; i < width; i++) {                                              \
                    o[i] = v;                                                                      \
                }                                                                                  \
                continue;                                                                          \
            }                                                                                      \
            const char *row = base + rows[r];                                                      \
            for (int64_t k = 0; k < nruns; k++) {                                                  \
                T *restrict to = o + runs[k].at;                                                   \
                const char *from = row + runs[k].from * step;                                      \
                const int64_t len = runs[k].len, by = runs[k].dir * step;                          \
                if (runs[k].dir == 0) {                                                            \
                    for (int64_t i = 0; i < len; i++) {                                            \
                        to[i] = v;                                                                 \
                    }                                                                              \
                    continue;                                                                      \
                }                                                                                  \
                if (by == sizeof(T) && !MT_IS_BOOL(T)) {                                           \
                    memcpy(to, from, (size_t)len * sizeof(T));                                     \
                    continue;                                                                      \
                }                                                                                  \
                if (by == sizeof(T)) {                                                             \
                    const T *restrict x = (const T *)from;                                         \
                    for (int64_t i = 0; i < len; i++) {                                            \
                        to[i] = MT_LOAD(T, x + i);                                                 \
                    }                                                                              \
                    continue;                                                                      \
                }                                                                                  \
                for (int64_t i = 0; i < len; i++) {                                                \
                    to[i] = MT_LOAD(T, from + i * by);                                             \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }
/* The rows of a constant pad, as PAD_ROWS's but with its runs known: the value up to runs[0]
 * (its copy, forward, len elements, maybe none), the copy, the value after it to the row's end;
 * a row whose source is -1 all value. A short loop each and no walk of runs: on rows of 36 floats
 * the walk's bookkeeping cost more than the copy (1.4x PyTorch's fill-then-copy). */
#define PAD_CONST_ROWS(name, T)                                                                    \
    MT_SIMD_CLONES static void name(char *y, const char *base, const int64_t *rows, int64_t nrows, \
                                    int64_t width, const pad_run *runs, int64_t nruns,             \
                                    int64_t step, const void *fill)                                \
    {                                                                                              \
        (void)nruns;                                                                               \
        T v;                                                                                       \
        memcpy(&v, fill, sizeof(T));                                                               \
        const int64_t lo = runs[0].at, len = runs[0].len, from = runs[0].from * step;              \
        for (int64_t r = 0; r < nrows; r++) {                                                      \
            T *restrict o = (T *)y + r * width;                                                    \
            const int64_t hi = rows[r] < 0 ? 0 : lo + len; /* the value from here on */            \
            for (int64_t i = 0; i < lo && hi > 0; i++) {                                           \
                o[i] = v;                                                                          \
            }                                                                                      \
            const char *x = base + rows[r] + from;                                                 \
            if (hi > 0 && step == sizeof(T) && !MT_IS_BOOL(T)) {                                   \
                memcpy(o + lo, x, (size_t)len * sizeof(T));                                        \
            } else if (hi > 0) {                                                                   \
                for (int64_t i = 0; i < len; i++) {                                                \
                    o[lo + i] = MT_LOAD(T, x + i * step);                                          \
                }                                                                                  \
            }                                                                                      \
            for (int64_t i = hi; i < width; i++) {                                                 \
                o[i] = v;                                                                          \
            }                                                                                      \
        }                                                                                          \
    }
#define MT_IS_BOOL(T) _Generic((T)0, bool: 1, default: 0)
/* by dtype: bool, then 1, 2, 4, 8 and 16 bytes wide (the other 1-byte dtypes reach the kernel
 * only through constant_pad_nd, which takes them as stored) */
#define PAD_ROWS_BY_WIDTH(ROWS, prefix)                                                  \
    ROWS(prefix##_b8, bool)                                                              \
    ROWS(prefix##_w1, uint8_t)                                                           \
    ROWS(prefix##_w2, uint16_t)                                                          \
    ROWS(prefix##_w4, uint32_t)                                                          \
    ROWS(prefix##_w8, uint64_t)                                                          \
    ROWS(prefix##_w16, double _Complex)                                                  \
    static const pad_rows_fn prefix##_loops[6] = {prefix##_b8, prefix##_w1, prefix##_w2, \
                                                  prefix##_w4, prefix##_w8, prefix##_w16};

typedef void (*pad_rows_fn)(char *y, const char *base, const int64_t *rows, int64_t nrows,
                            int64_t width, const pad_run *runs, int64_t nruns, int64_t step,
                            const void *fill);
PAD_ROWS_BY_WIDTH(PAD_ROWS, pad_rows)
PAD_ROWS_BY_WIDTH(PAD_CONST_ROWS, pad_const_rows)

/* The byte offset of position i of the first n dims of a layout (sizes, strides; esize bytes an
 * element). */
static int64_t
offset_of(const int64_t *sizes, const int64_t *strides, int n, int64_t i, int64_t esize)
{
    int64_t off = 0;
    for (int d = n - 1; d >= 0; d--) {
        off += (i % sizes[d]) * strides[d] * esize;
        i /= sizes[d];
    }
    return off;
}

/* order = the dims of t from its largest stride to its smallest (its memory order: out is
 * dense, so that order walks it as a row-major array; size-1 dims, whose stride is anything, go
 * where the stable sort puts them, which moves no element) */
static void
dims_in_memory_order(const mt_tensor *t, int *order)
{
    for (int d = 0; d < t->ndim; d++) {
        int k = d;
        for (; k > 0 && t->strides[order[k - 1]] < t->strides[d]; k--) {
            order[k] = order[k - 1];
        }
        order[k] = d;
    }
}

// self (*, [D,] [H,] W), the last npairs dims padded by (front, back), last dim first;
// out (*, [D',] [H',] W')[..., d, h, w] = self[..., src_d[d], src_h[h], src_w[w]], the source
// positions mt_pad_source's (ops/pad.c; constant_pad_nd: -1 in its border, there the value).
// out is walked in its memory order (row-major, or channels-last from constant_pad_nd), dims
// p = 0 .. nd-1 of that order: the planes (the unpadded dims before the first padded one in it)
// read their rows at the offsets of the sources of the dims between, each row through the runs
// of the innermost dim's sources; the rows of all planes split over the thread pool. So every
// element of out is written once: a constant pad's border in the same pass as its copy.
mt_status
mt_cpu_pad_gather(mt_args *a)
{
    const mt_shape_plan *plan = &a->plan->shape;
    const int64_t *pad = a->l[0].v;
    mt_tensor *self = a->t[0], *out = a->out[0];
    const int nd = self->ndim, last = nd - 1;
    const int64_t esize = (int64_t)mt_dtype_size(self->dtype), numel = mt_tensor_numel(out);
    const bool constant = plan->pad_mode == MT_PAD_CONSTANT;
    const int by_width = self->dtype == MT_BOOL ? 0
                                                : 1 + __builtin_ctzll((unsigned long long)esize);
    const pad_rows_fn copy = (constant ? pad_const_rows_loops : pad_rows_loops)[by_width];
    _Alignas(16) char fill[16] = {0}; /* the value, as stored in self's dtype */
    if (constant) {
        mt_store_scalar(fill, self->dtype, a->s[0]);
    }
    if (numel == 0) {
        return MT_OK;
    }
    if (nd == 0) { /* constant_pad_nd of a 0-dim self, by no pad: its one element */
        memcpy(mt_tensor_data(out), mt_tensor_data(self), (size_t)esize);
        return MT_OK;
    }
    /* sizes, xstrides, xsizes: out's sizes and self's strides and sizes in out's memory order;
     * lead: the dims of that order before the first padded one (at most nd - 1) */
    int order[MT_MAX_DIMS], lead = last;
    int64_t sizes[MT_MAX_DIMS], xstrides[MT_MAX_DIMS], xsizes[MT_MAX_DIMS];
    dims_in_memory_order(out, order);
    for (int p = nd - 1; p >= 0; p--) {
        sizes[p] = plan->sizes[order[p]];
        xsizes[p] = self->sizes[order[p]];
        xstrides[p] = self->strides[order[p]];
        lead = order[p] >= nd - plan->npairs ? p : lead;
    }
    const int64_t width = sizes[last];
    mt_status st = MT_OK;
    /* the source positions of each dim p >= lead: src[p], sizes[p] of them (-1: the value) */
    int64_t total = 0, per_plane = 1, *src[MT_MAX_DIMS] = {NULL};
    for (int p = lead; p < nd; p++) {
        total += sizes[p];
        per_plane *= p < last ? sizes[p] : 1;
    }
    int64_t *table = malloc(sizeof(int64_t) * (size_t)(total + per_plane));
    pad_run *runs = malloc(sizeof(pad_run) * (size_t)width);
    if (table == NULL || runs == NULL) {
        st = mt_fail(MT_ENOMEM, "%s: out of memory", mt_op_names[a->plan->op]);
        goto out_free;
    }
    int64_t at = 0;
    for (int p = lead; p < nd; p++) {
        int k = last - order[p]; /* the pad pair of this dim, when k < npairs */
        src[p] = table + at;
        for (int64_t j = 0; j < sizes[p]; j++) {
            src[p][j] = k < plan->npairs ? mt_pad_source((mt_pad_mode)plan->pad_mode, j, xsizes[p],
                                                         pad[2 * k], pad[2 * k + 1])
                                         : j;
        }
        at += sizes[p];
    }
    /* rows[j]: the byte offset in a plane of the source of its output row j (-1: the value) */
    int64_t *rows = table + total;
    for (int64_t j = 0; j < per_plane; j++) {
        rows[j] = 0;
        for (int64_t rest = j, p = last - 1; p >= lead && rows[j] >= 0; p--) {
            const int64_t i = src[p][rest % sizes[p]];
            rows[j] = i < 0 ? -1 : rows[j] + i * xstrides[p] * esize;
            rest /= sizes[p];
        }
    }
    const int64_t nruns = runs_of(src[last], width, runs), nrows = numel / width;
    for (int64_t k = 0; constant && k < nruns; k++) { /* its one copy (none: all of it value) */
        runs[0] = runs[k].dir != 0 ? runs[k] : k == 0 ? (pad_run){width, 0, 0, 1} : runs[0];
    }
    const int64_t step = xstrides[last] * esize;
    const char *x = mt_tensor_data(self);
    char *y = mt_tensor_data(out);
    const int parts = mt_parallel_parts(numel, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int p = 0; p < parts; p++) {
        const int64_t r1 = nrows * (p + 1) / parts;
        for (int64_t r = nrows * p / parts, n; r < r1; r += n) { /* plane by plane */
            int64_t plane = r / per_plane, j = r % per_plane;
            n = per_plane - j < r1 - r ? per_plane - j : r1 - r;
            copy(y + r * width * esize, x + offset_of(xsizes, xstrides, lead, plane, esize),
                 rows + j, n, width, runs, nruns, step, fill);
        }
    }
out_free:
    free(table);
    free(runs);
    return st;
}
