/* Random number generators: torch.Generator in C.
 *
 * A generator belongs to a device type, as PyTorch's:
 * - a CPU generator is PyTorch's CPUGeneratorImpl: an mt19937 engine (the 2002 reference
 *   algorithm, init_genrand on the seed's low 32 bits, as at::mt19937) and the second value of
 *   the last Box-Muller pair, kept for the next normal draw. With the kernels of cpu/random.c
 *   a seed gives PyTorch's numbers, and get_state/set_state use PyTorch's 5056-byte layout;
 * - a CUDA generator is PyTorch's CUDA kind: a Philox key (the seed) and an offset that every
 *   launch advances (mt_generator_philox), so no two launches share a counter.
 * The default generators (one CPU, one per CUDA device) live as long as the process. The CPU
 * one starts from a nondeterministic seed, as PyTorch's (each unseeded run differs); the CUDA
 * ones from mt_cuda_seed_all's seed, PyTorch's default seed until one is given. A new
 * Generator starts from PyTorch's default seed. Draws happen under the generator's lock, held
 * by a kernel for all its draws, so one call's values are a contiguous run of the stream. */
#ifndef MT_GENERATOR_H
#define MT_GENERATOR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/device.h"
#include "core/status.h"

/* PyTorch's default_rng_seed_val: the seed of a new torch.Generator(). */
#define MT_DEFAULT_SEED 67280421310721ULL
#define MT_MT19937_N 624
/* sizeof PyTorch's CPUGeneratorImplState and of its CUDA generator's (seed, offset) */
#define MT_CPU_GENERATOR_STATE_SIZE 5056
#define MT_CUDA_GENERATOR_STATE_SIZE 16
#define MT_MAX_CUDA_GENERATORS 64 /* default CUDA generators, by device index */

typedef struct mt_generator {
    atomic_long refcount; /* the default generators are never freed */
    mt_device device;
    pthread_mutex_t lock;
    uint64_t seed; /* the initial seed: what manual_seed or seed last set */
    /* CPU: the mt19937 state (at::mt19937_data_pod) and the cached normal values */
    uint32_t state[MT_MT19937_N];
    int left;
    uint32_t next;
    bool has_normal_f32, has_normal_f64;
    float normal_f32;
    double normal_f64;
    /* CUDA: the Philox offset of the next launch (the seed is the key) */
    uint64_t offset;
} mt_generator;

/* A new generator of dev's type, seeded with MT_DEFAULT_SEED; release it when done. */
mt_status mt_generator_new(mt_device dev, mt_generator **out);
mt_generator *mt_generator_retain(mt_generator *g);
void mt_generator_release(mt_generator *g);
/* The default generator of dev (borrowed: it lives as long as the process). */
mt_status mt_generator_default(mt_device dev, mt_generator **out);

/* Seeds: manual_seed, seed (a nondeterministic one, returned), initial_seed. */
void mt_generator_manual_seed(mt_generator *g, uint64_t seed);
uint64_t mt_generator_seed(mt_generator *g);
uint64_t mt_generator_initial_seed(mt_generator *g);
/* 64 nondeterministic bits (the OS's entropy), as c10's getNonDeterministicRandom. */
uint64_t mt_nondeterministic_seed(void);
/* Seeds every CUDA default generator, and those made later (torch.cuda.manual_seed_all). */
void mt_cuda_seed_all(uint64_t seed);

/* The state as PyTorch's bytes (mt_generator_state_size of them) and back; set_state checks
 * the size and, for a CPU generator, that the engine state is valid. */
size_t mt_generator_state_size(const mt_generator *g);
void mt_generator_get_state(mt_generator *g, uint8_t *out);
mt_status mt_generator_set_state(mt_generator *g, const uint8_t *state, size_t n);
/* The Philox offset of a CUDA generator (a CPU one has none: PyTorch's error). */
mt_status mt_generator_get_offset(mt_generator *g, uint64_t *out);
mt_status mt_generator_set_offset(mt_generator *g, uint64_t offset);
/* A CUDA generator's key and offset for a launch that draws from counters offset .. offset +
 * increment - 1; the offset advances past them. */
void mt_generator_philox(mt_generator *g, uint64_t increment, uint64_t *seed, uint64_t *offset);
/* The generator a kernel on dev draws from: gen if given (PyTorch's error if it belongs to
 * another device type), else dev's default. */
mt_status mt_generator_for(mt_generator *gen, mt_device dev, mt_generator **out);
/* mt_generator_philox of mt_generator_for(gen, dev): a device launch's key and offset. */
mt_status mt_generator_philox_for(mt_generator *gen, mt_device dev, uint64_t increment,
                                  uint64_t *seed, uint64_t *offset);

void mt_generator_lock(mt_generator *g);
void mt_generator_unlock(mt_generator *g);

/* ---- draws of a CPU generator, under its lock ---- */

void mt_generator_twist(mt_generator *g);

/* The next 32 bits of the mt19937 stream (PyTorch's random()). */
static inline uint32_t
mt_generator_random(mt_generator *g)
{
    if (--g->left == 0) {
        mt_generator_twist(g);
    }
    uint32_t y = g->state[g->next++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* Two draws as one 64-bit value, the first the high half (PyTorch's random64()). */
static inline uint64_t
mt_generator_random64(mt_generator *g)
{
    uint64_t hi = mt_generator_random(g);
    return hi << 32 | mt_generator_random(g);
}

#endif
