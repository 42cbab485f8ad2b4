/* The CUDA key's random fills (uniform_, normal_, bernoulli_, random_) and randperm's sort keys:
 * the parameters are the front end's plan (ops/random_checks.c), the numbers random.cu's
 * Philox. Each device has a generator of PyTorch's CUDA kind, a seed and an offset: manual_seed
 * (seen through mt_seed_epoch) resets both, and every launch takes the next offset, so no two
 * launches share a counter. */
#include <pthread.h>

#include "cuda/elementwise.h"
#include "cuda/kernels_index_fill_nn.h"
#include "cuda/ops.h"
#include "cuda/sort.h"

typedef struct generator {
    uint64_t epoch_seen; /* mt_seed_epoch + 1 when last seeded; 0: never */
    uint64_t seed, offset;
} generator;

static generator gens[MT_CUDA_MAX_DEVICES];
static pthread_mutex_t gen_lock = PTHREAD_MUTEX_INITIALIZER;

/* The seed and a fresh offset of device's generator for one launch. */
static void
next_offset(int device, uint64_t *seed, uint64_t *offset)
{
    uint64_t s = 0, e = mt_seed_epoch(&s) + 1;
    pthread_mutex_lock(&gen_lock);
    generator *g = &gens[device];
    if (g->epoch_seen != e) {
        g->epoch_seen = e;
        g->seed = s;
        g->offset = 0;
    }
    *seed = g->seed;
    *offset = g->offset++;
    pthread_mutex_unlock(&gen_lock);
}

// self (any shape, CUDA); self = draws of kind, in place
static mt_status
fill_random(mt_args *a, mt_random_kind kind)
{
    mt_tensor *self = a->t[0], *dense = NULL;
    const mt_random_spec r = a->plan->random;
    mt_status st;
    mt_device dev = mt_tensor_device(self);
    if (dev.index < 0 || dev.index >= MT_CUDA_MAX_DEVICES) {
        return mt_fail(MT_ERUNTIME, "invalid CUDA device %d", dev.index);
    }
    /* a strided self is filled through a dense scratch tensor */
    if (mt_tensor_is_contiguous(self)) {
        dense = mt_tensor_retain(self);
    } else if ((st = mt_tensor_empty(self->ndim, self->sizes, self->dtype, dev, &dense))) {
        return st;
    }
    mt_cuda_rand p = {mt_tensor_data(dense), mt_tensor_numel(dense), 0, 0, r.a, r.b, r.from,
                      r.span};
    next_offset(dev.index, &p.seed, &p.offset);
    void *args[] = {&p};
    if ((st = mt_cuda_use_device(dev)) ||
        (st = mt_cuda_launch_n(mt_cuda_rand_kernel((int)kind, self->dtype), p.n, args))) {
        goto out_release;
    }
    if (dense != self && (st = mt_cuda_copy_into(self, dense))) {
        goto out_release;
    }
    mt_tensor_bump_version(self);
    a->out[0] = mt_tensor_retain(self);
out_release:
    mt_tensor_clear(&dense);
    return st;
}

#define FILL(op, kind)                          \
    static mt_status cuda_##op(mt_args *a)      \
    {                                           \
        return fill_random(a, kind);            \
    }
FILL(uniform_, MT_RANDOM_UNIFORM)
FILL(normal_, MT_RANDOM_NORMAL)
FILL(bernoulli_, MT_RANDOM_BERNOULLI)
FILL(random_, MT_RANDOM_INTS)

mt_status
mt_cuda_random_keys(mt_tensor *keys)
{
    mt_device dev = mt_tensor_device(keys);
    if (dev.index < 0 || dev.index >= MT_CUDA_MAX_DEVICES) {
        return mt_fail(MT_ERUNTIME, "invalid CUDA device %d", dev.index);
    }
    mt_cuda_rand p = {mt_tensor_data(keys), mt_tensor_numel(keys), 0, 0, 0, 0, 0,
                      (uint64_t)1 << 63};
    next_offset(dev.index, &p.seed, &p.offset);
    void *args[] = {&p};
    mt_status st = mt_cuda_use_device(dev);
    return st ? st
              : mt_cuda_launch_n(mt_cuda_rand_kernel(MT_RANDOM_INTS, MT_INT64), p.n, args);
}

void
mt_cuda_register_random(void)
{
    static const mt_cuda_reg kernels[] = {
        MT_CUDA_REG(uniform_),
        MT_CUDA_REG(normal_),
        MT_CUDA_REG(bernoulli_),
        MT_CUDA_REG(random_),
    };
    mt_cuda_register_all(kernels, sizeof(kernels) / sizeof(kernels[0]));
}
