/* The CUDA key's sort family: sort, argsort, topk, _unique2 and randperm (sort.cu's kernels and
 * CUB sorts). The input is made contiguous and seen as (outer, n, inner) around dim; its rows
 * along dim are sorted as (key, position) pairs, stably, and the first k of each gathered back.
 * The results equal the CPU kernels' (csrc/cpu/sort.c) exactly, ties and NaNs included, for
 * stable=False too; topk's sorted=False still sorts, and unique is sorted either way. */
#include <limits.h>
#include <stdint.h>

#include "cuda/elementwise.h"
#include "cuda/kernels_index_fill_nn.h"
#include "cuda/ops.h"
#include "cuda/sort.h"

/* *out = a scratch buffer of at least bytes bytes on dev. */
static mt_status
scratch(mt_device dev, size_t bytes, mt_tensor **out)
{
    int64_t words = (int64_t)((bytes + 7) / 8);
    words = words > 0 ? words : 1;
    return mt_tensor_empty(1, &words, MT_INT64, dev, out);
}

static mt_status
check_count(int64_t total)
{
    if (total > INT_MAX) {
        return mt_fail(MT_ERUNTIME, "sorting more than %d elements is not supported on CUDA",
                       INT_MAX);
    }
    return MT_OK;
}

/* Sorts rows rows of n (keys, pos) pairs in buf[0], buf[2] into buf[1], buf[3] (offsets in
 * buf[4] when rows > 1), with CUB's scratch in *temp. */
static mt_status
sort_pairs(mt_device dev, int key_bytes, int bits, mt_tensor **buf, int64_t rows, int64_t n,
           mt_tensor **temp)
{
    cudaStream_t stream = mt_cuda_current_stream(dev.index);
    const int32_t *off = rows > 1 ? (const int32_t *)mt_tensor_data(buf[4]) : NULL;
    size_t bytes = 0;
    mt_status st = mt_cuda_check(
        mt_cuda_sort_pairs(NULL, &bytes, key_bytes, bits, mt_tensor_data(buf[0]),
                           mt_tensor_data(buf[1]), (const int32_t *)mt_tensor_data(buf[2]),
                           (int32_t *)mt_tensor_data(buf[3]), off, rows, n, stream));
    if (st || (st = scratch(dev, bytes, temp))) {
        return st;
    }
    return mt_cuda_check(
        mt_cuda_sort_pairs(mt_tensor_data(*temp), &bytes, key_bytes, bits, mt_tensor_data(buf[0]),
                           mt_tensor_data(buf[1]), (const int32_t *)mt_tensor_data(buf[2]),
                           (int32_t *)mt_tensor_data(buf[3]), off, rows, n, stream));
}

/* The first k of each row of self along dim, sorted: values (unless NULL) and int64 indices,
 * shaped like self with k along dim (ops/arg_checks.h's mt_sort_along_fn: given ones are
 * written, NULL ones made: the sort family's results are given, _unique2's workspaces made). */
mt_status
mt_cuda_sort_along(mt_tensor *self, int dim, int64_t k, bool desc, mt_tensor **values,
                   mt_tensor **indices)
{
    const bool make_values = values && *values == NULL, make_indices = *indices == NULL;
    /* buf: keys in, keys out, positions in, positions out, row offsets */
    mt_tensor *x = NULL, *buf[5] = {NULL}, *temp = NULL;
    int64_t outer, n, inner, shape[MT_MAX_DIMS];
    mt_device dev = mt_tensor_device(self);
    mt_sort_geom(self, dim, k, &outer, &n, &inner, shape);
    const int64_t rows = outer * inner, total = rows * n;
    const int key_bytes = mt_cuda_sort_key_bytes(self->dtype);
    mt_status st = make_indices ? mt_tensor_empty(self->ndim, shape, MT_INT64, dev, indices)
                                : MT_OK;
    if (st == MT_OK && make_values) {
        st = mt_tensor_empty(self->ndim, shape, self->dtype, dev, values);
    }
    if (st || rows * k == 0 || (st = check_count(total))) {
        goto out_release;
    }
    int64_t sizes[5] = {total * key_bytes, total * key_bytes, total * 4, total * 4, (rows + 1) * 4};
    for (int b = 0; b < 5 && st == MT_OK; b++) {
        st = scratch(dev, (size_t)sizes[b], &buf[b]);
    }
    if (st ||
        (st = mt_tensor_is_contiguous(self) ? (x = mt_tensor_retain(self), MT_OK)
                                            : mt_cuda_cast(self, self->dtype, &x)) ||
        (st = mt_cuda_use_device(dev))) {
        goto out_release;
    }
    const char *xd = mt_tensor_data(x);
    char *keys = mt_tensor_data(buf[0]);
    int32_t *pos = (int32_t *)mt_tensor_data(buf[2]), *off = (int32_t *)mt_tensor_data(buf[4]);
    int idesc = desc, bits = self->dtype == MT_BOOL ? 1 : 8 * key_bytes;
    int64_t count = rows + 1;
    void *kargs[] = {&xd, &keys, &pos, &outer, &n, &inner, &idesc};
    void *oargs[] = {&off, &count, &n};
    if ((st = mt_cuda_launch_n(mt_cuda_sort_keys_kernel(self->dtype), total, kargs)) ||
        (rows > 1 && (st = mt_cuda_launch_n(mt_cuda_sort_steps_kernel(), count, oargs))) ||
        (st = sort_pairs(dev, key_bytes, bits, buf, rows, n, &temp))) {
        goto out_release;
    }
    const int32_t *sorted = (const int32_t *)mt_tensor_data(buf[3]);
    char *vd = values ? mt_tensor_data(*values) : NULL;
    int64_t *id = (int64_t *)mt_tensor_data(*indices);
    void *gargs[] = {&xd, &sorted, &vd, &id, &outer, &n, &inner, &k};
    st = mt_cuda_launch_n(mt_cuda_sort_gather_kernel(self->dtype), outer * k * inner, gargs);
out_release:
    if (st && make_indices) {
        mt_tensor_clear(indices);
    }
    if (st && make_values) {
        mt_tensor_clear(values);
    }
    for (int b = 0; b < 5; b++) {
        mt_tensor_clear(&buf[b]);
    }
    mt_tensor_clear(&temp);
    mt_tensor_clear(&x);
    return st;
}
/* sorted, perm (n) = a->t[0]'s elements ascending and their flat positions (n > 0): _unique2's
 * results, made once the groups are counted (out[0], out[2]) or stated (out[1]); the inverse
 * and counts not asked for are computed into workspaces. */
static mt_status
unique_of(mt_args *a, mt_tensor *sorted, mt_tensor *perm)
{
    mt_tensor *self = a->t[0], *flags = NULL, *group = NULL, *temp = NULL, *starts = NULL;
    mt_tensor *inverse = NULL, *counts = NULL;
    mt_device dev = mt_tensor_device(self);
    cudaStream_t stream = mt_cuda_current_stream(dev.index);
    int64_t n = mt_tensor_numel(self);
    int32_t last = 0;
    size_t bytes = 0;
    mt_status st = scratch(dev, (size_t)n * 4, &flags);
    if (st || (st = scratch(dev, (size_t)n * 4, &group))) {
        goto out_release;
    }
    const char *s = mt_tensor_data(sorted);
    const int64_t *p = (const int64_t *)mt_tensor_data(perm);
    int32_t *fl = (int32_t *)mt_tensor_data(flags), *gr = (int32_t *)mt_tensor_data(group);
    void *fargs[] = {&s, &fl, &n};
    if ((st = mt_cuda_launch_n(mt_cuda_unique_flags_kernel(self->dtype), n, fargs)) ||
        (st = mt_cuda_check(mt_cuda_inclusive_sum32(NULL, &bytes, fl, gr, n, stream))) ||
        (st = scratch(dev, bytes, &temp)) ||
        (st = mt_cuda_check(
             mt_cuda_inclusive_sum32(mt_tensor_data(temp), &bytes, fl, gr, n, stream))) ||
        (st = mt_cuda_check(
             cudaMemcpyAsync(&last, gr + n - 1, sizeof(last), cudaMemcpyDeviceToHost, stream))) ||
        (st = mt_cuda_sync_stream(stream))) {
        goto out_release;
    }
    int64_t groups = last;
    if ((st = mt_unique_results(a, groups, self->dtype, dev)) ||
        (st = a->b[1] ? (inverse = mt_tensor_retain(a->out[1]), MT_OK)
                      : scratch(dev, (size_t)n * 8, &inverse)) ||
        (st = a->b[2] ? (counts = mt_tensor_retain(a->out[2]), MT_OK)
                      : scratch(dev, (size_t)groups * 8, &counts)) ||
        (st = scratch(dev, (size_t)groups * 8, &starts))) {
        goto out_release;
    }
    char *ud = mt_tensor_data(a->out[0]);
    int64_t *inv = (int64_t *)mt_tensor_data(inverse), *st_ = (int64_t *)mt_tensor_data(starts);
    int64_t *cn = (int64_t *)mt_tensor_data(counts);
    void *sargs[] = {&s, &p, &fl, &gr, &ud, &inv, &st_, &n};
    void *cargs[] = {&st_, &cn, &groups, &n};
    if ((st = mt_cuda_launch_n(mt_cuda_unique_scatter_kernel(self->dtype), n, sargs)) == MT_OK) {
        st = mt_cuda_launch_n(mt_cuda_unique_counts_kernel(), groups, cargs);
    }
out_release:
    mt_tensor_clear(&flags);
    mt_tensor_clear(&group);
    mt_tensor_clear(&temp);
    mt_tensor_clear(&starts);
    mt_tensor_clear(&inverse);
    mt_tensor_clear(&counts);
    return st;
}

// self (*); out[0] (u) = its distinct values ascending, out[1] (self's shape) = the group of
// each element if return_inverse, out[2] (u) = each group's size if return_counts; the ones not
// asked for are empty (sorted whatever `sorted` says, as PyTorch on CUDA). The front end stated
// out[1] (and the empty ones); out[0] and out[2] are made once the groups are counted.
mt_status
mt_cuda__unique2(mt_args *a)
{
    mt_tensor *self = a->t[0], *flat = NULL, *row = NULL, *sorted = NULL, *perm = NULL;
    int64_t n = mt_tensor_numel(self), one = 1;
    mt_device dev = mt_tensor_device(self);
    mt_status st = check_count(n);
    if (st ||
        (st = mt_tensor_is_contiguous(self) ? (flat = mt_tensor_retain(self), MT_OK)
                                            : mt_cuda_cast(self, self->dtype, &flat)) ||
        (st = mt_tensor_view(flat, 1, &n, &one, flat->offset, &row)) ||
        (st = mt_cuda_sort_along(row, 0, n, false, &sorted, &perm)) ||
        (st = mt_cuda_use_device(dev))) {
        goto out_release;
    }
    st = n == 0 ? mt_unique_results(a, 0, self->dtype, dev) : unique_of(a, sorted, perm);
out_release:
    mt_tensor_clear(&flat);
    mt_tensor_clear(&row);
    mt_tensor_clear(&sorted);
    mt_tensor_clear(&perm);
    return st;
}

// out (n) = a random permutation of 0..n-1: n random 63-bit keys (Philox, the fills'
// generator) sorted with their positions
mt_status
mt_cuda_randperm(mt_args *a)
{
    mt_dtype dt = a->plan->range.dt;
    int64_t n = a->plan->range.n, one = 1;
    mt_device dev = a->device;
    mt_tensor *perm = NULL, *buf[5] = {NULL}, *temp = NULL;
    /* the positions sorted by key, int64: the result itself, else cast into it */
    mt_status st = dt == MT_INT64 ? (perm = mt_tensor_retain(a->out[0]), MT_OK)
                                  : mt_tensor_empty(1, &n, MT_INT64, dev, &perm);
    if (st || n == 0 || (st = check_count(n))) {
        goto out_finish;
    }
    /* buf: keys in, keys out, positions in, positions out; no offsets (one row) */
    size_t bytes[4] = {(size_t)n * 8, (size_t)n * 8, (size_t)n * 4, (size_t)n * 4};
    for (int b = 0; b < 4 && st == MT_OK; b++) {
        st = scratch(dev, bytes[b], &buf[b]);
    }
    if (st || (st = mt_cuda_random_keys(buf[0], a->gen)) || (st = mt_cuda_use_device(dev))) {
        goto out_finish;
    }
    int32_t *pos = (int32_t *)mt_tensor_data(buf[2]);
    void *pargs[] = {&pos, &n, &one};
    if ((st = mt_cuda_launch_n(mt_cuda_sort_steps_kernel(), n, pargs)) ||
        (st = sort_pairs(dev, 8, 64, buf, 1, n, &temp))) {
        goto out_finish;
    }
    const int32_t *sorted = (const int32_t *)mt_tensor_data(buf[3]);
    const char *x = NULL;
    char *values = NULL;
    int64_t *pd = (int64_t *)mt_tensor_data(perm);
    void *gargs[] = {&x, &sorted, &values, &pd, &one, &n, &one, &n};
    st = mt_cuda_launch_n(mt_cuda_sort_gather_kernel(MT_INT64), n, gargs);
out_finish:
    if (st == MT_OK && dt != MT_INT64) {
        st = mt_cuda_copy_into(a->out[0], perm); /* a new result: no version bump */
    }
    for (int b = 0; b < 4; b++) {
        mt_tensor_clear(&buf[b]);
    }
    mt_tensor_clear(&temp);
    mt_tensor_clear(&perm);
    return st ? st : mt_factory_finish(a);
}
