/* The iterator of iter.h. Owns no memory: it only arranges pointers and strides. */
#include <inttypes.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/iter.h"

/* Whether dim a, now inside dim b, steps further than b in the first operand whose strides on
 * them differ (a stride of 0, a broadcast dim, says nothing). */
static bool
outer_first(const mt_iter *it, int a, int b)
{
    for (int k = 0; k < it->nops; k++) {
        int64_t sa = it->strides[a][k], sb = it->strides[b][k];
        if (sa != 0 && sb != 0 && sa != sb) {
            return sa > sb;
        }
    }
    return false;
}

static void
swap_dims(mt_iter *it, int a, int b)
{
    int64_t size = it->shape[a], strides[MT_ITER_MAX_OPS];
    memcpy(strides, it->strides[a], sizeof(strides));
    it->shape[a] = it->shape[b];
    memcpy(it->strides[a], it->strides[b], sizeof(strides));
    it->shape[b] = size;
    memcpy(it->strides[b], strides, sizeof(strides));
}

#define MT_SHORT_LOOP 8 /* inner loops shorter than this cost more in calls than in elements */

static mt_status
build(mt_iter *it, int ndim, const int64_t *shape, mt_tensor *const *ops, int nops, bool any_order)
{
    char b1[256], b2[256];
    it->nops = nops;
    it->any_order = any_order;
    for (int k = 0; k < nops; k++) {
        const mt_tensor *t = ops[k];
        if (t->ndim > ndim) {
            return mt_fail(MT_ESHAPE, "operand of shape %s cannot broadcast to %s",
                           mt_format_sizes(b1, sizeof(b1), t->ndim, t->sizes),
                           mt_format_sizes(b2, sizeof(b2), ndim, shape));
        }
        it->data[k] = mt_tensor_data(t);
        it->item[k] = (int64_t)mt_dtype_size(t->dtype);
    }
    /* Gather dims innermost-first, dropping size-1 dims. */
    int n = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] == 1) {
            continue;
        }
        it->shape[n] = shape[d];
        for (int k = 0; k < nops; k++) {
            const mt_tensor *t = ops[k];
            int td = d - (ndim - t->ndim);
            int64_t itemsize = (int64_t)mt_dtype_size(t->dtype);
            if (td < 0 || t->sizes[td] == 1) {
                it->strides[n][k] = 0;
            } else if (t->sizes[td] == shape[d]) {
                it->strides[n][k] = t->strides[td] * itemsize;
            } else {
                return mt_fail(MT_ESHAPE, "operand of shape %s cannot broadcast to %s",
                               mt_format_sizes(b1, sizeof(b1), t->ndim, t->sizes),
                               mt_format_sizes(b2, sizeof(b2), ndim, shape));
            }
        }
        n++;
    }
    /* In any order: the dims ordered by the operands' strides, innermost first, the output's
     * deciding first (TensorIterator's reorder_dimensions), so that operands laid out alike
     * (x.t() + y.t()) run as one contiguous loop. Not for a reduction (a stride-0 dim in the
     * output), which keeps its summation order. */
    bool reorder = any_order;
    for (int d = 0; d < n; d++) {
        reorder &= it->strides[d][0] != 0;
    }
    for (int i = 1; reorder && i < n; i++) {
        for (int d = i; d > 0 && outer_first(it, d - 1, d); d--) {
            swap_dims(it, d - 1, d);
        }
    }
    /* Merge dim d+1 into d when every operand steps through both as through one. */
    int m = 0;
    for (int d = 1; d < n; d++) {
        bool mergeable = true;
        for (int k = 0; k < nops; k++) {
            if (it->strides[d][k] != it->strides[m][k] * it->shape[m]) {
                mergeable = false;
                break;
            }
        }
        if (mergeable) {
            it->shape[m] *= it->shape[d];
        } else {
            m++;
            it->shape[m] = it->shape[d];
            memcpy(it->strides[m], it->strides[d], sizeof(it->strides[d]));
        }
    }
    it->ndim = n ? m + 1 : 0;
    /* In any order, a dim too short to pay for a call of the loop (pixel_shuffle's innermost,
     * of r elements) goes outside the next, longer one. */
    if (reorder && it->ndim >= 2 && it->shape[0] < MT_SHORT_LOOP && it->shape[1] > it->shape[0]) {
        swap_dims(it, 0, 1);
    }
    /* An empty shape anywhere means nothing to do. */
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 0) {
            it->ndim = 1;
            it->shape[0] = 0;
            memset(it->strides[0], 0, sizeof(it->strides[0]));
        }
    }
    return MT_OK;
}

mt_status
mt_iter_build(mt_iter *it, int ndim, const int64_t *shape, mt_tensor *const *ops, int nops)
{
    return build(it, ndim, shape, ops, nops, false);
}

mt_status
mt_iter_build_any_order(mt_iter *it, int ndim, const int64_t *shape, mt_tensor *const *ops,
                        int nops)
{
    return build(it, ndim, shape, ops, nops, true);
}

/* The tiles of the two inner dims (below): MT_TILE_1 rows of dim 1 by as many elements of dim 0
 * as fill MT_TILE_BYTES with a transposed operand's tile. A transposed operand (y.t() in
 * x + y.t()) is read along dim 1 by 16 rows at once, a whole 64-byte line of float32 for each
 * element of dim 0, transposed into a contiguous buffer by copy.c's 16x16 vector tiles; the
 * loop then runs along dim 0 on contiguous rows, vectorised. The buffers stay in L1 (three
 * inputs of 8 KiB). The strided loop in 8x256 tiles it replaces took 1.4x PyTorch's time on a
 * (256, 1024) float32 x + y.t(). */
#define MT_TILE_1 16
#define MT_TILE_BYTES 8192

/* Whether operand k steps through dim 1 by less than through dim 0 (the transposed one). */
static bool
transposed(const mt_iter *it, int k)
{
    int64_t s0 = it->strides[0][k] < 0 ? -it->strides[0][k] : it->strides[0][k];
    int64_t s1 = it->strides[1][k] < 0 ? -it->strides[1][k] : it->strides[1][k];
    return s1 != 0 && s1 < s0;
}

/* Whether to walk the two inner dims in tiles: an operand steps through dim 1 by less than
 * through dim 0, so row by row it would take a new cache line for each element and use the
 * rest of it only a row of dim 1 later, long evicted. Only where the order is free (not for a
 * random fill, which numbers elements in order) and nothing accumulates (a stride-0 output
 * keeps its summation order). */
static bool
use_tiles(const mt_iter *it)
{
    if (!it->any_order || it->ndim < 2 || it->shape[0] <= 1 || it->shape[1] <= 1 ||
        it->strides[0][0] == 0 || it->strides[1][0] == 0) {
        return false;
    }
    for (int k = 0; k < it->nops; k++) {
        if (transposed(it, k)) {
            return true;
        }
    }
    return false;
}

// dims 1 and 0 from `base`: MT_TILE_1 rows of dim 1 at a time, cut along dim 0 into lengths of
// `cols`; each transposed input's tile (rows, cols) gathered into its buffer, then the loop
// along dim 0 row by row, the gathered operands read contiguously from their buffers
static void
run_tiles(const mt_iter *it, char *const *base, mt_loop_fn loop, void *ctx)
{
    _Alignas(64) char buf[MT_ITER_MAX_OPS - 1][MT_TILE_BYTES];
    bool gather[MT_ITER_MAX_OPS] = {false};
    int64_t strides[MT_ITER_MAX_OPS], widest = 1;
    memcpy(strides, it->strides[0], sizeof(strides));
    for (int k = 1; k < it->nops; k++) { /* the output (operand 0) is written where it lies */
        gather[k] = transposed(it, k);
        if (gather[k]) {
            strides[k] = it->item[k];
            widest = it->item[k] > widest ? it->item[k] : widest;
        }
    }
    const int64_t n0 = it->shape[0], n1 = it->shape[1];
    const int64_t cols = MT_TILE_BYTES / (MT_TILE_1 * widest);
    char *data[MT_ITER_MAX_OPS];
    for (int64_t j0 = 0; j0 < n1; j0 += MT_TILE_1) {
        const int64_t rows = n1 - j0 < MT_TILE_1 ? n1 - j0 : MT_TILE_1;
        for (int64_t i0 = 0; i0 < n0; i0 += cols) {
            const int64_t len = n0 - i0 < cols ? n0 - i0 : cols;
            /* buf[k - 1][j][i] = operand k at (j0 + j, i0 + i) */
            for (int k = 1; k < it->nops; k++) {
                if (gather[k]) {
                    const int64_t e = it->item[k];
                    mt_cpu_copy_tiles(base[k] + i0 * it->strides[0][k] + j0 * it->strides[1][k],
                                      it->strides[1][k] / e, it->strides[0][k] / e, buf[k - 1], len,
                                      1, rows, len, (size_t)e);
                }
            }
            for (int64_t j = 0; j < rows; j++) {
                for (int k = 0; k < it->nops; k++) {
                    data[k] = gather[k]
                                  ? buf[k - 1] + j * len * it->item[k]
                                  : base[k] + i0 * it->strides[0][k] + (j0 + j) * it->strides[1][k];
                }
                loop(data, strides, len, ctx);
            }
        }
    }
}

void
mt_iter_run(const mt_iter *it, mt_loop_fn loop, void *ctx)
{
    char *data[MT_ITER_MAX_OPS];
    int64_t inner_strides[MT_ITER_MAX_OPS];
    int nops = it->nops;
    memcpy(data, it->data, sizeof(data));
    if (it->ndim == 0) {
        memset(inner_strides, 0, sizeof(inner_strides));
        loop(data, inner_strides, 1, ctx);
        return;
    }
    int64_t n = it->shape[0];
    if (n == 0) {
        return;
    }
    memcpy(inner_strides, it->strides[0], sizeof(inner_strides));
    int64_t counter[MT_MAX_DIMS];
    memset(counter, 0, sizeof(counter[0]) * (size_t)it->ndim);
    const bool tiles = use_tiles(it);
    for (;;) {
        if (tiles) {
            run_tiles(it, data, loop, ctx);
        } else {
            loop(data, inner_strides, n, ctx);
        }
        /* Advance the outer dims like an odometer (those outside the tiles' two). */
        int d = tiles ? 2 : 1;
        for (; d < it->ndim; d++) {
            for (int k = 0; k < nops; k++) {
                data[k] += it->strides[d][k];
            }
            if (++counter[d] < it->shape[d]) {
                break;
            }
            for (int k = 0; k < nops; k++) {
                data[k] -= it->strides[d][k] * it->shape[d];
            }
            counter[d] = 0;
        }
        if (d >= it->ndim) {
            return;
        }
    }
}

#define MT_GRAIN \
    32768 /* elements below which a thread costs more than it saves (PyTorch's GRAIN_SIZE) */

int
mt_parallel_parts(int64_t n, int64_t grain)
{
    int64_t parts = n / (grain > 0 ? grain : 1), most = mt_get_num_threads();
    return (int)(parts < 1 ? 1 : parts > most ? most : parts);
}

int
mt_iter_parts(const mt_iter *it)
{
    if (it->ndim == 0) {
        return 1;
    }
    int64_t numel = 1;
    for (int d = 0; d < it->ndim; d++) {
        numel *= it->shape[d];
    }
    int parts = mt_parallel_parts(numel, MT_GRAIN);
    int64_t top = it->shape[it->ndim - 1];
    return top < parts ? (int)(top < 1 ? 1 : top) : parts;
}

void
mt_iter_part(const mt_iter *it, int parts, int p, mt_iter *sub)
{
    *sub = *it;
    if (parts <= 1 || it->ndim == 0) {
        return;
    }
    int d = it->ndim - 1;
    int64_t top = it->shape[d], begin = top * p / parts, end = top * (p + 1) / parts;
    sub->shape[d] = end - begin;
    for (int k = 0; k < it->nops; k++) {
        sub->data[k] += begin * it->strides[d][k];
    }
}

void
mt_iter_run_parallel(const mt_iter *it, mt_loop_fn loop, void *ctx)
{
    int parts = mt_iter_parts(it);
    if (parts == 1) {
        mt_iter_run(it, loop, ctx);
        return;
    }
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; p++) {
        mt_iter sub;
        mt_iter_part(it, parts, p, &sub);
        mt_iter_run(&sub, loop, ctx);
    }
}
