/* The random distributions' transforms: a draw of each distribution of ops/random.def from its
 * variates (a uniform, the log of one, a standard normal, random bits), written once for the CPU
 * loops (cpu/random.c) and the CUDA kernel (cuda/random.cu).
 *
 * The variates are each backend's own: the CPU's come from PyTorch's CPU streams, so that a seed
 * gives PyTorch's numbers, CUDA's from Philox counters. Where the CPU transforms its variate as
 * the kernel does it calls the same function; the CPU's uniform_, normal_, log_normal_ and
 * cauchy_ fuse their multiply-adds as PyTorch's vector kernels do (fma), so those four functions
 * are the CUDA kernel's alone. No generator state here: a function maps numbers to a draw (the
 * Poisson sampler's loops, which draw until a trial accepts, are the callers'). */
#ifndef MT_RANDOM_MATH_H
#define MT_RANDOM_MATH_H

#include "core/math.h"

/* random_'s draw from 64 random bits: from + bits mod span, span 0 standing for all 2^64 values
 * (random_(-2**63) of int64). In unsigned arithmetic: the offset may pass INT64_MAX before it
 * lands in range. */
static inline MT_HD int64_t
mt_sample_random(uint64_t bits, int64_t from, uint64_t span)
{
    return (int64_t)((uint64_t)from + (span ? bits % span : bits));
}

/* bernoulli_(p) of u, uniform in [0, 1): 1 with probability p. */
static inline MT_HD double
mt_sample_bernoulli(double u, double p)
{
    return u < p ? 1.0 : 0.0;
}

/* exponential_(lambd) of log_v, the log of a uniform in (0, 1]: the inverse of its CDF. */
static inline MT_HD double
mt_sample_exponential(double log_v, double lambd)
{
    return -1.0 / lambd * log_v;
}

/* geometric_(p), p in (0, 1), of log_v, the log of a uniform: the trials up to the first
 * success, at least one (a uniform of 1 gives log_v 0). */
static inline MT_HD double
mt_sample_geometric(double log_v, double p)
{
    return fmax(1.0, ceil(log_v / log1p(-p)));
}

/* A standard normal by Box-Muller from log_v, the log of a uniform in (0, 1], and w, another
 * uniform: the cosine half of the pair; other, if not NULL, receives the sine half. */
static inline MT_HD double
mt_box_muller(double log_v, double w, double *other)
{
    const double radius = sqrt(-2.0 * log_v), theta = 2.0 * MT_PI * w;
    if (other) {
        *other = radius * sin(theta);
    }
    return radius * cos(theta);
}

/* uniform_(from, to) of u in [0, 1), kept below `to` in the output's precision (single:
 * float32): a value that rounds up to `to` is `from`, so the interval stays half-open. */
static inline MT_HD double
mt_sample_uniform(double u, double from, double to, bool single)
{
    const double x = from + (to - from) * u;
    if (single) {
        return (float)x < (float)to ? (double)(float)x : (double)(float)from;
    }
    return x < to ? x : from;
}

/* normal_(mean, std) of z, a standard normal. */
static inline MT_HD double
mt_sample_normal(double z, double mean, double std)
{
    return mean + std * z;
}

/* log_normal_(mean, std) of z, a standard normal. */
static inline MT_HD double
mt_sample_log_normal(double z, double mean, double std)
{
    return exp(mean + std * z);
}

/* cauchy_(median, sigma) of u in [0, 1): the inverse of its CDF. */
static inline MT_HD double
mt_sample_cauchy(double u, double median, double sigma)
{
    return median + sigma * tan(MT_PI * (u - 0.5));
}

/* Poisson draws as PyTorch's sample_poisson (after NumPy's), from the caller's uniforms (the CPU
 * generator's stream, a CUDA element's Philox counters), so the loops that draw them are the
 * callers' and the arithmetic is here. Below a rate of 10, Knuth's method: the draw is the count
 * of uniforms multiplied in before their product falls to exp(-rate) (enlam). From 10 on,
 * Hoermann's transformed rejection ("The transformed rejection method for generating Poisson
 * random variables", 1993): trials of two uniforms each (mt_sample_poisson) until one accepts
 * its candidate. mt_poisson_rate_of computes each method's constants once per rate. */
typedef struct mt_poisson_rate {
    double lambda;
    bool rejection;                      /* the rate is 10 or more: the transformed rejection */
    double loglam, a, b, invalpha, vr;   /* its constants */
    double enlam;                        /* Knuth's threshold exp(-rate), below 10 */
} mt_poisson_rate;

static inline MT_HD mt_poisson_rate
mt_poisson_rate_of(double lambda)
{
    mt_poisson_rate p = {lambda, lambda >= 10, 0, 0, 0, 0, 0, 0};
    if (p.rejection) {
        p.loglam = log(lambda);
        p.b = 0.931 + 2.53 * sqrt(lambda);
        p.a = -0.059 + 0.02483 * p.b;
        p.invalpha = 1.1239 + 1.1328 / (p.b - 3.4);
        p.vr = 0.9277 - 3.6224 / (p.b - 2);
    } else {
        p.enlam = exp(-lambda);
    }
    return p;
}

/* One trial of the transformed rejection for p's rate (p->rejection) with u, then v, uniform in
 * [0, 1): its candidate count, and *accepted whether the candidate is the draw. A candidate that
 * is no int64 count (below 0, from 2^63 on, NaN) is accepted only by the first, quick test. */
static inline MT_HD double
mt_sample_poisson(const mt_poisson_rate *p, double u, double v, bool *accepted)
{
    const double U = u - 0.5, us = 0.5 - fabs(U);
    const double k = floor((2 * p->a / us + p->b) * U + p->lambda + 0.43);
    if (us >= 0.07 && v <= p->vr) {
        *accepted = true;
    } else if (!(k >= 0 && k < 9223372036854775808.0) || (us < 0.013 && v > us)) {
        *accepted = false;
    } else {
        *accepted = log(v) + log(p->invalpha) - log(p->a / (us * us) + p->b) <=
                    -p->lambda + k * p->loglam - lgamma(k + 1);
    }
    return k;
}

#endif
