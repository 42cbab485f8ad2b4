/* embedding_bag as a composite: the rows of weight named by indices (embedding, whose
 * gradient is sparse with sparse=True, padding_idx's rows left out, and over each row's count
 * with scale_grad_by_freq), each scaled by its per_sample_weight, reduced per bag (the bag of
 * position k is the last offset <= k, searchsorted) by index_add (sum, and mean over the bag's
 * count) or scatter_reduce's amax (max); entries equal to padding_idx are dropped first
 * (nonzero), and an empty bag gives zeros, as PyTorch's; and PyTorch's other results, max
 * mode's argmax rows among them. Autograd and every device come from those ops. PyTorch's
 * checks and messages (the offsets are read on the host for them, on the CPU only). */
#include "dispatch/kernels.h"
#include "ops/fails.h"
#include "ops/ops.h"

#define MODE_SUM 0 /* PyTorch's EmbeddingBagMode */
#define MODE_MEAN 1
#define MODE_MAX 2

static mt_status
check_index_dtype(const char *what, int arg, const mt_tensor *t)
{
    if (t->dtype != MT_INT64 && t->dtype != MT_INT32) {
        return mt_fail(MT_ERUNTIME,
                       "Expected tensor for argument #%d '%s' to have one of the following scalar "
                       "types: Long, Int; but got torch.%s%sTensor instead (while checking "
                       "arguments for embedding_bag)",
                       arg, what, mt_tensor_device(t).type == MT_CUDA ? "cuda." : "",
                       mt_dtype_scalar_name(t->dtype));
    }
    return MT_OK;
}

/* PyTorch's CPU checks of the offsets' values v[0..noff), in its order: where the first bag
 * starts, where the last one may start, then (its kernels') no negative offset and none below the
 * one before it; with include_last_offset, a last offset that is not the indices' count is named
 * first where the offsets go backwards. */
static mt_status
check_offset_values(const int64_t *v, int64_t noff, int64_t n, bool include_last, mt_dtype dt)
{
    if (v[0] != 0) {
        return mt_fail(MT_ERUNTIME,
                       "offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                       "has to start from position 0. However, got %lld\n[ minitorch.%sTensor{} ]",
                       (long long)v[0], mt_dtype_scalar_name(dt));
    }
    if (v[noff - 1] > n) {
        return mt_fail(MT_ERUNTIME,
                       "offsets[-1] can not be greater than input's length %lld but got "
                       "offsets[-1] of %lld",
                       (long long)n, (long long)v[noff - 1]);
    }
    for (int64_t k = 1; k < noff; k++) {
        if (v[k] < 0) {
            return mt_fail_embedding_index();
        }
    }
    for (int64_t k = 1; k < noff; k++) {
        if (v[k] < v[k - 1] && include_last && v[noff - 1] != n) {
            return mt_fail(MT_ERUNTIME,
                           "Your input appears to be incorrect: the last offset value should be "
                           "the size of the indices tensor, but it seems not to be the case.");
        }
        if (v[k] < v[k - 1]) {
            return mt_fail(MT_ERUNTIME, "Expected i < index_size to be true, but got false.  "
                                        "(Could this error message be improved?  If so, please "
                                        "report an enhancement request to PyTorch.)");
        }
    }
    return MT_OK;
}

static mt_status
checks(mt_tensor *indices, mt_tensor *offsets, int64_t mode, int64_t noff, bool include_last)
{
    mt_status st;
    if ((st = check_index_dtype("indices", 1, indices)) ||
        (st = check_index_dtype("offsets", 1, offsets))) {
        return st;
    }
    if (mode < MODE_SUM || mode > MODE_MAX) {
        return mt_fail(MT_ERUNTIME, "`mode` must be sum, mean, or max.");
    }
    /* PyTorch reads the offsets back for these checks on the CPU only: its CUDA kernel takes them
     * as given, and so does ours (a bad offsets[0] leaves positions in bag -1, which index_add's
     * device-side check reports at the next synchronisation) */
    if (noff == 0 || mt_tensor_device(offsets).type == MT_CUDA ||
        mt_tensor_device(offsets).type == MT_META) {
        return MT_OK;
    }
    /* PyTorch's message prints the offsets in the indices' and offsets' common type */
    mt_dtype common = indices->dtype == MT_INT32 && offsets->dtype == MT_INT32 ? MT_INT32
                                                                               : MT_INT64;
    mt_tensor *wide = NULL, *host = NULL;
    if ((st = mt_op__to_copy(offsets, MT_INT64, MT_DEVICE_CPU, &wide)) == MT_OK &&
        (st = mt_op_contiguous(wide, &host)) == MT_OK) {
        st = check_offset_values((const int64_t *)mt_tensor_data(host), noff,
                                 mt_tensor_numel(indices), include_last, common);
    }
    mt_tensor_clear(&wide);
    mt_tensor_clear(&host);
    return st;
}

/* The tensors the reduction reads, each a new reference: the kept entries' rows (k, D),
 * bags (k) and indices (k), the bag of every position (n), and the kept entries' count per
 * bag (B, in weight's dtype) */
typedef struct bag_parts {
    mt_tensor *rows, *bag, *idx, *all_bags, *count;
} bag_parts;

static void
parts_clear(bag_parts *p)
{
    mt_tensor_clear(&p->rows);
    mt_tensor_clear(&p->bag);
    mt_tensor_clear(&p->idx);
    mt_tensor_clear(&p->all_bags);
    mt_tensor_clear(&p->count);
}

/* *t = *t gathered at the positions keep (a new reference replaces the old) */
static mt_status
keep_only(mt_tensor **t, mt_tensor *keep)
{
    mt_tensor *r = NULL;
    mt_status st = mt_op_index_select(*t, 0, keep, &r);
    if (st == MT_OK) {
        mt_tensor_release(*t);
        *t = r;
    }
    return st;
}

// weight (V, D), indices (n), offsets (B or B + 1 with include_last_offset),
// per_sample_weights (n) or NULL; padding_idx (i[1]) or none
static mt_status
gather_parts(mt_args *a, int64_t nbags, bag_parts *p)
{
    mt_tensor *weight = a->t[0], *indices = a->t[1], *offsets = a->t[2], *psw = a->t[3];
    mt_device dev = mt_tensor_device(weight);
    int64_t n = mt_tensor_numel(indices);
    mt_tensor *starts = NULL, *pos = NULL, *after = NULL, *keep = NULL, *idx = NULL, *ones = NULL;
    mt_tensor *flat = NULL, *zeros = NULL, *w = NULL, *scaled = NULL, *one = NULL;
    /* scale_grad_by_freq: each row's gradient over its count among all n indices (embedding's
     * own); max mode's gradient is never scaled, as PyTorch's */
    bool scale = a->b[0] && a->i[0] != MODE_MAX;
    mt_status st;
    if ((st = mt_op_reshape(indices, 1, &n, &flat)) ||
        (st = mt_op_slice(offsets, 0, 0, nbags, 1, &starts)) ||
        (st = mt_op_arange(mt_scalar_int(0), mt_scalar_int(n), mt_scalar_int(1), MT_INT64, dev,
                           false, &pos)) ||
        (st = mt_op_searchsorted(starts, pos, false, true, NULL, NULL, &after)) ||
        (st = mt_tensor_scalar(mt_scalar_int(1), MT_INT64, &one)) ||
        (st = mt_op_sub(after, one, mt_scalar_int(1), &p->bag)) ||
        (st = mt_op_embedding(weight, flat, (a->i_none & 2u) ? -1 : a->i[1], scale, a->b[1],
                              &p->rows))) {
        goto out;
    }
    p->all_bags = mt_tensor_retain(p->bag);
    p->idx = mt_tensor_retain(flat);
    if (psw) {
        int64_t col[2] = {n, 1};
        if ((st = mt_op_view(psw, 2, col, &w)) || (st = mt_op_mul(p->rows, w, &scaled))) {
            goto out;
        }
        mt_tensor_release(p->rows);
        p->rows = mt_tensor_retain(scaled);
    }
    if (!(a->i_none & 2u)) { /* drop the padding entries */
        mt_tensor *pad = NULL;
        if ((st = mt_tensor_scalar(mt_scalar_int(a->i[1]), MT_INT64, &pad)) == MT_OK) {
            st = mt_op_ne(flat, pad, &keep);
        }
        mt_tensor_clear(&pad);
        int64_t one = 1;
        if (st || (st = mt_op_nonzero(keep, &idx)) || (st = mt_op_squeeze(idx, 1, &one, &ones)) ||
            (st = keep_only(&p->rows, ones)) || (st = keep_only(&p->bag, ones)) ||
            (st = keep_only(&p->idx, ones))) {
            goto out;
        }
        mt_tensor_clear(&ones);
    }
    int64_t kept = p->bag->sizes[0];
    if ((st = mt_op_zeros(1, &nbags, a->t[0]->dtype, dev, false, &zeros)) == MT_OK &&
        (st = mt_op_ones(1, &kept, a->t[0]->dtype, dev, false, &ones)) == MT_OK) {
        st = mt_op_index_add(zeros, 0, p->bag, ones, mt_scalar_int(1), &p->count);
    }
out:
    mt_tensor_clear(&starts);
    mt_tensor_clear(&pos);
    mt_tensor_clear(&after);
    mt_tensor_clear(&keep);
    mt_tensor_clear(&idx);
    mt_tensor_clear(&ones);
    mt_tensor_clear(&flat);
    mt_tensor_clear(&zeros);
    mt_tensor_clear(&w);
    mt_tensor_clear(&scaled);
    mt_tensor_clear(&one);
    return st;
}

/* The bags' reduction of p into *out (B, D) */
static mt_status
reduce_bags(const bag_parts *p, int64_t mode, int64_t nbags, int64_t dim, mt_tensor **out)
{
    int64_t shape[2] = {nbags, dim}, col[2] = {nbags, 1}, n = p->rows->sizes[0];
    int64_t wide[2] = {n, dim}, along[2] = {n, 1};
    mt_device dev = mt_tensor_device(p->rows);
    mt_tensor *zeros = NULL, *sum = NULL, *c = NULL, *cv = NULL, *bv = NULL, *be = NULL;
    mt_status st = mt_op_zeros(2, shape, p->rows->dtype, dev, false, &zeros);
    if (st == MT_OK && mode == MODE_MAX) {
        if ((st = mt_op_view(p->bag, 2, along, &bv)) == MT_OK &&
            (st = mt_op_expand(bv, 2, wide, &be)) == MT_OK) {
            st = mt_op_scatter_reduce(zeros, 0, be, p->rows, "amax", false, out);
        }
    } else if (st == MT_OK &&
               (st = mt_op_index_add(zeros, 0, p->bag, p->rows, mt_scalar_int(1),
                                     mode == MODE_SUM ? out : &sum)) == MT_OK &&
               mode == MODE_MEAN) {
        /* an empty bag's sum is 0: divided by 1 */
        if ((st = mt_op_clamp_min(p->count, mt_scalar_int(1), &c)) == MT_OK &&
            (st = mt_op_view(c, 2, col, &cv)) == MT_OK) {
            st = mt_op_div(sum, cv, NULL, out);
        }
    }
    mt_tensor_clear(&zeros);
    mt_tensor_clear(&sum);
    mt_tensor_clear(&c);
    mt_tensor_clear(&cv);
    mt_tensor_clear(&bv);
    mt_tensor_clear(&be);
    return st;
}

/* max mode's max_indices (B, D), as PyTorch's: the weight row of the first kept entry of the bag
 * that holds the bag's maximum out (B, D), per feature; 0 for an empty bag */
static mt_status
argmax_rows(const bag_parts *p, mt_tensor *out, mt_tensor **res)
{
    int64_t k = p->rows->sizes[0], col[2] = {k, 1}, wide[2] = {k, out->sizes[1]}, one = 1;
    mt_device dev = mt_tensor_device(out);
    enum { OB, EQ, POS, POSV, BIG, SRC, FIRST, BAGV, BAGE, ZERO, EXT, FLAT, ROWS, NT };
    mt_tensor *t[NT] = {NULL};
    mt_status st;
    /* the first position holding the maximum (k where none), then its row (a 0 appended) */
    if ((st = mt_op_index_select(out, 0, p->bag, &t[OB])) ||
        (st = mt_op_eq(p->rows, t[OB], &t[EQ])) ||
        (st = mt_op_arange(mt_scalar_int(0), mt_scalar_int(k), mt_scalar_int(1), MT_INT64, dev,
                           false, &t[POS])) ||
        (st = mt_op_view(t[POS], 2, col, &t[POSV])) ||
        (st = mt_tensor_scalar(mt_scalar_int(k), MT_INT64, &t[BIG])) ||
        (st = mt_op_where(t[EQ], t[POSV], t[BIG], &t[SRC])) ||
        (st = mt_op_full(2, out->sizes, mt_scalar_int(k), MT_INT64, dev, false, &t[FIRST])) ||
        (st = mt_op_view(p->bag, 2, col, &t[BAGV])) ||
        (st = mt_op_expand(t[BAGV], 2, wide, &t[BAGE])) ||
        (st = mt_op_scatter_reduce_(t[FIRST], 0, t[BAGE], t[SRC], "amin", true, NULL)) ||
        (st = mt_op_zeros(1, &one, MT_INT64, dev, false, &t[ZERO])) ||
        (st = mt_op_cat(2, (mt_tensor *[]){p->idx, t[ZERO]}, 0, &t[EXT])) ||
        (st = mt_op_flatten(t[FIRST], 0, -1, &t[FLAT])) ||
        (st = mt_op_index_select(t[EXT], 0, t[FLAT], &t[ROWS]))) {
        goto out;
    }
    st = mt_op_view(t[ROWS], 2, out->sizes, res);
out:
    for (int j = 0; j < NT; j++) {
        mt_tensor_clear(&t[j]);
    }
    return st;
}

/* PyTorch's other results: offset2bag (n: the bag of each position), bag_size (B: the kept
 * entries) and max_indices (max mode's argmax rows, mean's bag_size): out[1], out[2], out[3].
 * Sum mode's, as PyTorch's CPU: offset2bag empty on its float32 fast path (no padding_idx),
 * zeros for the others, one per offset. */
static mt_status
bag_results(const bag_parts *p, int64_t mode, mt_args *a)
{
    mt_device dev = mt_tensor_device(a->t[0]);
    int64_t none = 0, noff = mt_tensor_numel(a->t[2]);
    mt_status st;
    if (mode == MODE_SUM) {
        bool filled = !(a->i_none & 2u) || a->t[0]->dtype != MT_FLOAT32;
        if ((st = filled ? mt_op__to_copy(p->all_bags, MT_INT64, dev, &a->out[1])
                         : mt_op_zeros(1, &none, MT_INT64, dev, false, &a->out[1])) ||
            (st = mt_op_zeros(1, &noff, MT_INT64, dev, false, &a->out[2]))) {
            return st;
        }
        return mt_op_zeros(1, &noff, MT_INT64, dev, false, &a->out[3]);
    }
    if ((st = mt_op__to_copy(p->all_bags, MT_INT64, dev, &a->out[1])) ||
        (st = mt_op__to_copy(p->count, MT_INT64, dev, &a->out[2]))) {
        return st;
    }
    return mode == MODE_MAX ? argmax_rows(p, a->out[0], &a->out[3])
                            : mt_op__to_copy(p->count, MT_INT64, dev, &a->out[3]);
}

// weight (V, D), indices (n), offsets (B, or B + 1 with include_last_offset); out: the bags'
// vectors (B, D) and PyTorch's offset2bag, bag_size and max_indices (bag_results)
mt_status
mt_composite_embedding_bag(mt_args *a)
{

    mt_tensor *weight = a->t[0], *offsets = a->t[2];
    int64_t mode = a->i[0];
    int64_t noff = offsets->ndim ? offsets->sizes[0] : 1;
    int64_t nbags = a->b[2] ? (noff > 0 ? noff - 1 : 0) : noff;
    mt_status st = checks(a->t[1], offsets, mode, noff, a->b[2]);
    if (st) {
        return st;
    }
    if (weight->ndim != 2) {
        return mt_fail(MT_ERUNTIME, "embedding_bag: weight has to be a 2D Tensor, got %dD",
                       weight->ndim);
    }
    bag_parts p = {0};
    if ((st = gather_parts(a, nbags, &p)) == MT_OK &&
        (st = reduce_bags(&p, mode, nbags, weight->sizes[1], &a->out[0])) == MT_OK) {
        st = bag_results(&p, mode, a);
    }
    parts_clear(&p);
    return st;
}
