/* The CUDA key's random ops: the fills (uniform_, normal_, bernoulli_, random_, exponential_,
 * geometric_, log_normal_, cauchy_), poisson, multinomial and randperm's sort keys. The
 * parameters are the front ends' plans (ops/random_checks.c, ops/distributions.c), the numbers
 * random.cu's Philox. A launch draws from a CUDA generator (core/generator.h): the call's
 * generator= or its device's default, PyTorch's kind (a seed and an offset that every launch
 * advances, so no two launches share a counter). */
#include "cuda/device_assert.h"
#include "cuda/elementwise.h"
#include "cuda/kernels_index_fill_nn.h"
#include "cuda/ops.h"
#include "cuda/sort.h"
#include "ops/distributions.h"

// self (any shape, CUDA), in (self's shape, float64, contiguous) or NULL; self = draws of
// kind (rand_kernel's) from gen (NULL: the default one), in place; its version is the caller's
// (an in-place fill's changes it, a new result's stays 0)
static mt_status
fill_kind(mt_tensor *self, mt_generator *gen, int kind, const mt_random_spec *r, mt_tensor *in,
          uint64_t increment)
{
    mt_tensor *dense = NULL;
    mt_status st = MT_OK;
    mt_device dev = mt_tensor_device(self);
    /* a strided self is filled through a dense scratch tensor */
    if (mt_tensor_is_contiguous(self)) {
        dense = mt_tensor_retain(self);
    } else if ((st = mt_tensor_empty(self->ndim, self->sizes, self->dtype, dev, &dense))) {
        return st;
    }
    mt_cuda_rand p = {mt_tensor_data(dense),
                      mt_tensor_numel(dense),
                      0,
                      0,
                      r->a,
                      r->b,
                      r->from,
                      r->span,
                      in ? (const double *)mt_tensor_data(in) : NULL};
    void *args[] = {&p};
    if ((st = mt_generator_philox_for(gen, dev, increment, &p.seed, &p.offset)) ||
        (st = mt_cuda_use_device(dev)) ||
        (st = mt_cuda_launch_n(mt_cuda_rand_kernel(kind, self->dtype), p.n, args))) {
        goto out_release;
    }
    if (dense != self) {
        st = mt_cuda_copy_into(self, dense);
    }
out_release:
    mt_tensor_clear(&dense);
    return st;
}

/* An in-place fill's end (st its status): self changed, and returned. */
static mt_status
filled(mt_args *a, mt_status st)
{
    if (st == MT_OK) {
        mt_tensor_bump_version(a->t[0]);
        a->out[0] = mt_tensor_retain(a->t[0]);
    }
    return st;
}

static mt_status
fill_random(mt_args *a, mt_random_kind kind)
{
    return filled(a, fill_kind(a->t[0], a->gen, (int)kind, &a->plan->random, NULL, 1));
}

#define MT_RANDOM_FILL(op, kind)                 \
    mt_status mt_cuda_##op(mt_args *a)           \
    {                                            \
        return fill_random(a, MT_RANDOM_##kind); \
    }
#include "ops/random.def"

// self (any shape), p (a number, or a tensor expanding to self's shape); self = 0 or 1
mt_status
mt_cuda_bernoulli_(mt_args *a)
{
    if (a->t[1] == NULL || a->t[1]->is_wrapped_number) {
        return fill_random(a, MT_RANDOM_BERNOULLI);
    }
    mt_tensor *p = NULL, *pd = NULL;
    mt_cuda_assert_record *rec = NULL;
    mt_random_spec r = {0, 0, 0, 1};
    /* the front end checked p's dtype; its range is checked here, on the device */
    mt_status st = mt_op_expand(a->t[1], a->t[0]->ndim, a->t[0]->sizes, &p);
    if (st == MT_OK && (st = mt_cuda_dense_as(p, MT_FLOAT64, &pd)) == MT_OK &&
        (st = mt_cuda_assert_record_get(&rec)) == MT_OK) {
        const double *pv = (const double *)mt_tensor_data(pd);
        int64_t n = mt_tensor_numel(pd);
        void *args[] = {&pv, &n, &rec};
        st = mt_cuda_launch_n(mt_cuda_unit_interval_check_kernel(), n, args);
    }
    if (st == MT_OK) {
        st = filled(a, fill_kind(a->t[0], a->gen, MT_RANDOM_BERNOULLI_TENSOR, &r, pd, 1));
    }
    mt_tensor_clear(&p);
    mt_tensor_clear(&pd);
    return st;
}

// self (any shape) rates (poisson) or concentrations (_standard_gamma); out (self's shape,
// contiguous) = a draw of each. One kernel for both (ops.def's CUDA_AS(draw_each) rows).
mt_status
mt_cuda_draw_each(mt_args *a)
{
    const int kind = a->plan->op == MT_OP_poisson ? MT_RANDOM_POISSON : MT_RANDOM_GAMMA;
    mt_tensor *rates = NULL;
    mt_random_spec r = {0, 0, 0, 1};
    mt_status st = mt_cuda_dense_as(a->t[0], MT_FLOAT64, &rates);
    if (st == MT_OK) {
        st = fill_kind(a->out[0], a->gen, kind, &r, rates, MT_CUDA_POISSON_ROUNDS);
    }
    mt_tensor_clear(&rates);
    return st;
}

/* multinomial's draws with replacement, made of ops: per row the normalised cumulative
 * distribution, and for each uniform u (of the generator) the number of buckets below it, as
 * the CPU kernel's binary search finds it. */
static mt_status
draws_with_replacement(mt_tensor *self, int64_t n_sample, mt_generator *g, mt_tensor *result)
{
    enum { ROWS, CDF, LAST, NORMED, NORMED3, U, BELOW, COUNT, CLAMPED, N_TMP };
    mt_tensor *t[N_TMP] = {NULL};
    int64_t n = self->sizes[self->ndim - 1], rows = self->ndim == 2 ? self->sizes[0] : 1;
    int64_t u_shape[3] = {rows, n_sample, 1}, last = -1;
    mt_status st;
    if ((st = mt_op_reshape(self, 2, (int64_t[]){rows, n}, &t[ROWS])) ||
        (st = mt_op_cumsum(t[ROWS], -1, -1, &t[CDF])) ||
        (st = mt_op_narrow(t[CDF], -1, n - 1, 1, &t[LAST])) ||
        (st = mt_op_div(t[CDF], t[LAST], NULL, &t[NORMED])) ||
        (st = mt_op_unsqueeze(t[NORMED], 1, &t[NORMED3])) ||
        (st = mt_op_rand(3, u_shape, g, MT_FLOAT64, mt_tensor_device(self), false, &t[U])) ||
        (st = mt_op_lt(t[NORMED3], t[U], &t[BELOW])) ||
        (st = mt_op_sum(t[BELOW], 1, &last, false, MT_INT64, &t[COUNT])) ||
        (st = mt_op_clamp_max(t[COUNT], mt_scalar_int(n - 1), &t[CLAMPED]))) {
        goto out_release;
    }
    mt_tensor *view = NULL;
    if ((st = mt_op_view(t[CLAMPED], result->ndim, result->sizes, &view)) == MT_OK) {
        st = mt_cuda_copy_into(result, view); /* a new result: no version bump */
        mt_tensor_release(view);
    }
out_release:
    for (int k = 0; k < N_TMP; k++) {
        mt_tensor_clear(&t[k]);
    }
    return st;
}

const mt_multinomial_device mt_cuda_multinomial = {"cuda", draws_with_replacement};

mt_status
mt_cuda_random_keys(mt_tensor *keys, mt_generator *gen)
{
    mt_device dev = mt_tensor_device(keys);
    mt_cuda_rand p = {
        mt_tensor_data(keys), mt_tensor_numel(keys), 0, 0, 0, 0, 0, (uint64_t)1 << 63, NULL};
    void *args[] = {&p};
    mt_status st = mt_generator_philox_for(gen, dev, 1, &p.seed, &p.offset);
    if (st == MT_OK) {
        st = mt_cuda_use_device(dev);
    }
    return st ? st : mt_cuda_launch_n(mt_cuda_rand_kernel(MT_RANDOM_INTS, MT_INT64), p.n, args);
}
