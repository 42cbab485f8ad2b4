/* The CPU kernels' draws: PyTorch's transformations (ATen/core/TransformationHelper.h,
 * DistributionsHelper.h) of a CPU generator's raw 32- and 64-bit values (core/generator.h), so
 * that a seed gives PyTorch's numbers. Called under the generator's lock. */
#ifndef MT_CPU_RANDOM_H
#define MT_CPU_RANDOM_H

#include <stdint.h>

#include "core/generator.h"
#include "core/tensor.h"

/* uniform_real_distribution<float>(0, 1): the low 24 bits of one draw, in [0, 1) */
static inline float
mt_draw_uniform_f32(mt_generator *g)
{
    return (float)(mt_generator_random(g) & 0xffffffu) * 0x1.0p-24f;
}

/* uniform_real_distribution<double>(0, 1): the low 53 bits of a 64-bit draw */
static inline double
mt_draw_uniform_f64(mt_generator *g)
{
    return (double)(mt_generator_random64(g) & ((UINT64_C(1) << 53) - 1)) * 0x1.0p-53;
}

/* normal_distribution<double>(0, 1): Box-Muller on two uniform doubles; the pair's second value
 * is kept in the generator for the next call (PyTorch's next_double_normal_sample). */
double mt_draw_normal_f64(mt_generator *g);

/* Views of self (and of other, an operand of self's shape) with self's dims in memory order,
 * largest stride first and size-1 dims dropped: TensorIterator's order of visiting a nullary
 * op's output, which PyTorch's fills draw in. New references. */
mt_status mt_cpu_memory_order(mt_tensor *self, mt_tensor *other, mt_tensor **self_out,
                              mt_tensor **other_out);

/* The sampling kernels of cpu/sampling.c: bernoulli_ with a tensor p (expanded to self's
 * shape), multinomial's draws with replacement, poisson. */
mt_status mt_cpu_bernoulli_tensor(mt_tensor *self, mt_tensor *p, mt_generator *g);

#endif
