/* The statistics kernels' checks (ops/stats.h) and front ends (front.h): histc, histogram,
 * bincount, searchsorted, cummax/cummin and unique along a dim, once for every device, with
 * PyTorch's messages. The checks that depend on the data (histc's range, bincount's values,
 * searchsorted's sorter) are written here once too, with ops, so they run on any device. */
#include <math.h>
#include <string.h>

#include "ops/front.h"
#include "ops/ops.h"
#include "ops/stats.h"

/* ---- histc, histogram ---- */

static mt_status
check_bins(int64_t bins)
{
    if (bins <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "torch.histogram(): bins must be > 0, but got %lld for dimension 0",
                       (long long)bins);
    }
    return MT_OK;
}

static mt_status
check_histogram_dtype(const mt_tensor *self, const char *kernel)
{
    /* histc takes float16 and bfloat16; histogram (histogramdd) does not */
    bool small = mt_dtype_is_small(self->dtype) && strcmp(kernel, "histogramdd") == 0;
    if (!mt_dtype_is_float(self->dtype) || small) {
        return mt_fail(MT_ENOTIMPL, "\"%s\" not implemented for '%s'", kernel,
                       mt_dtype_scalar_name(self->dtype));
    }
    return MT_OK;
}

mt_status
mt_front_histc(const mt_args *a, mt_plan *plan)
{
    mt_status st = check_histogram_dtype(a->t[0], "histogram_cpu");
    if (st == MT_OK && (st = check_bins(a->i[0])) == MT_OK) {
        st = mt_front_output(plan, a->t[0]->dtype, 1, &a->i[0]); /* the counts, one per bin */
    }
    return st;
}

/* min and max of self's elements (NaN if any is NaN), as doubles on the host */
static mt_status
extrema(mt_tensor *self, double *lo, double *hi)
{
    mt_tensor *mn = NULL, *mx = NULL;
    mt_scalar v;
    mt_status st = mt_op_amin(self, 0, NULL, false, &mn);
    if (st == MT_OK && (st = mt_tensor_item(mn, &v)) == MT_OK) {
        *lo = mt_scalar_to_double(v);
        st = mt_op_amax(self, 0, NULL, false, &mx);
    }
    if (st == MT_OK && (st = mt_tensor_item(mx, &v)) == MT_OK) {
        *hi = mt_scalar_to_double(v);
    }
    mt_tensor_clear(&mn);
    mt_tensor_clear(&mx);
    return st;
}

mt_status
mt_histc_range(mt_tensor *self, mt_scalar min, mt_scalar max, double *lo, double *hi)
{
    *lo = mt_scalar_to_double(min);
    *hi = mt_scalar_to_double(max);
    mt_status st = MT_OK;
    if (*lo == *hi && mt_tensor_numel(self) > 0 && (st = extrema(self, lo, hi))) {
        return st;
    }
    if (*lo == *hi) {
        *lo -= 1;
        *hi += 1;
    }
    if (!isfinite(*lo) || !isfinite(*hi)) {
        return mt_fail(MT_ERUNTIME, "torch.histc: range of [%g, %g] is not finite", *lo, *hi);
    }
    if (!(*lo < *hi)) {
        return mt_fail(MT_ERUNTIME, "torch.histc: max must be larger than min");
    }
    return MT_OK;
}

mt_status
mt_histogram_check(const mt_tensor *self, const mt_tensor *bins, const mt_tensor *weight)
{
    char a[128], b[128];
    mt_status st = check_histogram_dtype(self, "histogramdd");
    if (st) {
        return st;
    }
    if (bins->dtype != self->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "torch.histogramdd: input tensor and bins tensors should have the same "
                       "dtype, but got input with dtype %s and bins for dimension 0 with dtype %s",
                       mt_dtype_c_name(self->dtype), mt_dtype_c_name(bins->dtype));
    }
    if (bins->ndim != 1) {
        return mt_fail(MT_ERUNTIME,
                       "torch.histogramdd: bins tensor should have one dimension, but got %d "
                       "dimensions in the bins tensor for dimension 0",
                       bins->ndim);
    }
    if (bins->sizes[0] == 0) {
        return mt_fail(MT_ERUNTIME,
                       "torch.histogramdd: bins tensor should have at least 1 element, but got 0 "
                       "elements in the bins tensor for dimension 0");
    }
    if ((st = check_bins(bins->sizes[0] - 1))) {
        return st;
    }
    if (weight == NULL) {
        return MT_OK;
    }
    if (weight->dtype != self->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "torch.histogramdd: if weight tensor is provided, input tensor and weight "
                       "tensor should have the same dtype, but got input(%s), and weight(%s)",
                       mt_dtype_c_name(self->dtype), mt_dtype_c_name(weight->dtype));
    }
    const int64_t n = mt_tensor_numel(self), nw = mt_tensor_numel(weight);
    if (n != nw) {
        int64_t in_shape[2] = {n, 1};
        return mt_fail(MT_ERUNTIME,
                       "torch.histogramdd: if weight tensor is provided it should have the same "
                       "shape as the input tensor excluding its innermost dimension, but got "
                       "input with shape %s and weight with shape %s",
                       mt_format_sizes(a, sizeof(a), 2, in_shape),
                       mt_format_sizes(b, sizeof(b), 1, &nw));
    }
    return MT_OK;
}

mt_status
mt_front_histogram_bins(const mt_args *a, mt_plan *plan)
{
    const mt_tensor *self = a->t[0], *bins = a->t[1];
    mt_status st = mt_histogram_check(self, bins, a->t[2]);
    /* hist (one per bin), bin_edges (bins' values) */
    const int64_t nbins = st ? 0 : bins->sizes[0] - 1;
    if (st == MT_OK && (st = mt_front_output(plan, self->dtype, 1, &nbins)) == MT_OK) {
        st = mt_front_output(plan, self->dtype, 1, bins->sizes);
    }
    return st;
}

/* ---- bincount ---- */

static mt_status
bincount_fail(void)
{
    return mt_fail(MT_ERUNTIME, "bincount only supports 1-d non-negative integral inputs.");
}

mt_dtype
mt_bincount_dtype(const mt_tensor *weights)
{
    return weights == NULL ? MT_INT64 : weights->dtype == MT_FLOAT32 ? MT_FLOAT32 : MT_FLOAT64;
}

mt_status
mt_front_bincount(const mt_args *a, mt_plan *plan)
{
    mt_tensor *self = a->t[0], *weights = a->t[1];
    if (!mt_dtype_is_integral(self->dtype, false)) {
        return mt_fail(MT_ENOTIMPL, "\"bincount_cpu\" not implemented for '%s'",
                       mt_dtype_scalar_name(self->dtype));
    }
    if (self->ndim != 1) {
        return bincount_fail();
    }
    if (a->i[0] < 0) {
        return mt_fail(MT_ERUNTIME, "minlength should be >= 0");
    }
    if (weights && (weights->ndim != 1 || weights->sizes[0] != self->sizes[0])) {
        return mt_fail(MT_ERUNTIME, "weights should be 1-d and have the same length as input");
    }
    /* the length depends on self's values: found first (as PyTorch does), then stated */
    int64_t length = 0;
    mt_status st = mt_bincount_length(self, a->i[0], &length);
    return st ? st : mt_front_output(plan, mt_bincount_dtype(weights), 1, &length);
}

mt_status
mt_bincount_length(mt_tensor *self, int64_t minlength, int64_t *length)
{
    *length = minlength;
    if (mt_tensor_numel(self) == 0) {
        return MT_OK;
    }
    double lo = 0, hi = 0;
    mt_status st = extrema(self, &lo, &hi);
    if (st) {
        return st;
    }
    if (lo < 0) {
        return bincount_fail();
    }
    *length = (int64_t)hi + 1 > minlength ? (int64_t)hi + 1 : minlength;
    return MT_OK;
}

/* ---- searchsorted ---- */

/* Whether the first ndim-1 dims of boundaries and input agree (their last may differ). */
static bool
leading_dims_match(const mt_tensor *boundaries, const mt_tensor *input)
{
    if (boundaries->ndim != input->ndim) {
        return false;
    }
    for (int d = 0; d < boundaries->ndim - 1; d++) {
        if (boundaries->sizes[d] != input->sizes[d]) {
            return false;
        }
    }
    return true;
}

static mt_status
check_sorter(mt_tensor *sorter, const mt_tensor *boundaries)
{
    char a[128], b[128];
    bool same = sorter->ndim == boundaries->ndim;
    for (int d = 0; same && d < sorter->ndim; d++) {
        same = sorter->sizes[d] == boundaries->sizes[d];
    }
    if (!same) {
        return mt_fail(MT_ERUNTIME,
                       "torch.searchsorted(): boundary and sorter must have the same size, but "
                       "got boundary tensor %sand got sorter tensor %s",
                       mt_format_sizes(a, sizeof(a), boundaries->ndim, boundaries->sizes),
                       mt_format_sizes(b, sizeof(b), sorter->ndim, sorter->sizes));
    }
    if (sorter->dtype != MT_INT64) {
        return mt_fail(MT_ERUNTIME,
                       "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                       "%s",
                       mt_dtype_scalar_name(sorter->dtype));
    }
    double lo = 0, hi = 0;
    mt_status st = mt_tensor_numel(sorter) > 0 ? extrema(sorter, &lo, &hi) : MT_OK;
    if (st == MT_OK &&
        (lo < 0 || (sorter->ndim > 0 && hi >= (double)sorter->sizes[sorter->ndim - 1]))) {
        return mt_fail(MT_ERUNTIME, "torch.searchsorted(): sorter index out of range");
    }
    return st;
}

mt_status
mt_front_searchsorted(const mt_args *a, mt_plan *plan)
{
    char x[128], y[128];
    const mt_tensor *boundaries = a->t[0], *input = a->t[1];
    const char *side = a->str[0];
    if (side && strcmp(side, "left") != 0 && strcmp(side, "right") != 0) {
        return mt_fail(MT_ERUNTIME,
                       "torch.searchsorted(): side can only be 'left' or 'right' but got %s", side);
    }
    if (side && a->b[1] && strcmp(side, "right") != 0) {
        return mt_fail(MT_ERUNTIME,
                       "torch.searchsorted(): side and right can't be set to opposites, got side "
                       "of %s while right was True",
                       side);
    }
    mt_status st = a->t[2] ? check_sorter(a->t[2], boundaries) : MT_OK;
    if (st) {
        return st;
    }
    if (!(input->ndim > 0 || boundaries->ndim == 1)) {
        return mt_fail(MT_ERUNTIME,
                       "torch.searchsorted(): input value can be a scalar only when boundaries "
                       "tensor dimension is 1, but we got boundaries tensor dim(%d) and input "
                       "value's dim(%d) numel(%lld)",
                       boundaries->ndim, input->ndim, (long long)mt_tensor_numel(input));
    }
    if (boundaries->ndim == 0) {
        return mt_fail(MT_ERUNTIME, "torch.searchsorted(): boundaries tensor should have positive "
                                    "dimension, but got 0 dimension");
    }
    if (boundaries->ndim != 1 && !leading_dims_match(boundaries, input)) {
        return mt_fail(MT_ERUNTIME,
                       "torch.searchsorted(): boundaries tensor should be 1 dimension or the first "
                       "N-1 dimensions of boundaries tensor and input value tensor must match, but "
                       "we got boundaries tensor %s and input value tensor %s",
                       mt_format_sizes(x, sizeof(x), boundaries->ndim, boundaries->sizes),
                       mt_format_sizes(y, sizeof(y), input->ndim, input->sizes));
    }
    if (boundaries->dtype == MT_BOOL || input->dtype == MT_BOOL) {
        return mt_fail(MT_ENOTIMPL, "\"searchsorted_out_cpu\" not implemented for 'Bool'");
    }
    /* each value's position: input's shape, int32 with out_int32 */
    return mt_front_output(plan, a->b[0] ? MT_INT32 : MT_INT64, input->ndim, input->sizes);
}

/* ---- cummax, cummin, unique along a dim ---- */

mt_status
mt_front_cummax(const mt_args *a, mt_plan *plan)
{
    const mt_tensor *self = a->t[0];
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &plan->reduce.dim);
    /* the running extremes and their int64 positions, self's shape */
    if (st == MT_OK) {
        st = mt_front_output(plan, self->dtype, self->ndim, self->sizes);
    }
    return st ? st : mt_front_output(plan, MT_INT64, self->ndim, self->sizes);
}

// self (..., n, ...) with n at dim (i[0]): the distinct slices (..., u, ...) and their counts (u)
// are sized by the data, made by the kernel once it has counted (as PyTorch allocates them); the
// inverse (n) int64 is always computed
mt_status
mt_front_unique_dim(const mt_args *a, mt_plan *plan)
{
    const mt_tensor *self = a->t[0];
    int *dim = &plan->reduce.dim;
    if (self->ndim == 0) {
        return mt_fail(MT_EINDEX, "Dimension specified as %lld but tensor has no dimensions",
                       (long long)a->i[0]);
    }
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, dim);
    for (int d = 0; st == MT_OK && d < self->ndim; d++) {
        if (d != *dim && self->sizes[d] == 0) {
            return mt_fail(MT_ERUNTIME, "There are 0 sized dimensions, and they aren't selected, "
                                        "so unique cannot be applied");
        }
    }
    if (st == MT_OK) {
        st = mt_front_output_by_kernel(plan, self->dtype);
    }
    if (st == MT_OK) {
        st = mt_front_output(plan, MT_INT64, 1, &self->sizes[*dim]);
    }
    return st ? st : mt_front_output_by_kernel(plan, MT_INT64);
}
