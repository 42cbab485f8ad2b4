/* The random generator: xoshiro256** seeded through splitmix64.
 *
 * One generator per process, as PyTorch's default CPU generator; manual_seed resets it.
 * Values are reproducible for a seed but are not PyTorch's. Kernels may run without the GIL, so
 * the state is locked as PyTorch's generator is: a kernel holds the lock (mt_random_lock) for all
 * its draws, which keeps one call's values a contiguous run of the sequence. */
#ifndef MT_CPU_RANDOM_H
#define MT_CPU_RANDOM_H

#include <stdint.h>

/* PyTorch's default seed, so a fresh process starts from a fixed state as PyTorch's does. */
#define MT_DEFAULT_SEED 67280421310721ULL

void mt_manual_seed(uint64_t seed);
uint64_t mt_initial_seed(void);
/* How many times manual_seed has run (0 before the first), with the seed now in *seed: the
 * CUDA generators restart from the seed when it changes, as PyTorch's manual_seed seeds them. */
uint64_t mt_seed_epoch(uint64_t *seed);
/* Around a kernel's draws; mt_random_u64 and its derivatives must be called under it. */
void mt_random_lock(void);
void mt_random_unlock(void);
uint64_t mt_random_u64(void);
/* Uniform in [0, 1) with 24 (float) or 53 (double) random bits. */
float mt_random_float(void);
double mt_random_double(void);
/* Standard normal, by Box-Muller. */
double mt_random_normal(void);

#endif
