"""Where the data pipeline's random numbers come from: minitorch's own generators, through the
public minitorch API (randperm, randint, random_), never Python's or NumPy's. A `generator=` is
passed on only when one is given, so samplers work the same whether or not minitorch has
Generator objects; where it has them, a sampler without one seeds a fresh Generator from the
default generator, as PyTorch's RandomSampler does."""
from __future__ import annotations

from typing import Any, List, Optional

import minitorch


def _kw(generator: Optional[Any]) -> dict:
    return {} if generator is None else {"generator": generator}


def seed(generator: Optional[Any] = None) -> int:
    """A random int64 from generator (else the default one): PyTorch's base seeds come from here."""
    return int(minitorch.empty((), dtype=minitorch.int64).random_(**_kw(generator)).item())


def sampler_generator(generator: Optional[Any]) -> Optional[Any]:
    """The generator a sampler draws one epoch from: its own, else (as PyTorch) a Generator
    seeded from the default generator, else (no Generator class in minitorch) the default one."""
    if generator is not None or not hasattr(minitorch, "Generator"):
        return generator
    fresh = minitorch.Generator()
    fresh.manual_seed(seed())
    return fresh


def randperm(n: int, generator: Optional[Any] = None) -> List[int]:
    return minitorch.randperm(n, **_kw(generator)).tolist()


def randint(high: int, size: int, generator: Optional[Any] = None) -> List[int]:
    return minitorch.randint(0, high, (size,), dtype=minitorch.int64, **_kw(generator)).tolist()


def multinomial(weights, num_samples: int, replacement: bool, generator: Optional[Any] = None) -> List[int]:
    """Indices drawn with probabilities proportional to the float64 weights: minitorch.multinomial
    where it exists, else the same distribution from uniform draws (inverse CDF with replacement;
    without replacement the largest keys w/E, E ~ Exp(1): Efraimidis and Spirakis' method)."""
    if hasattr(minitorch, "multinomial"):
        return minitorch.multinomial(weights, num_samples, replacement, **_kw(generator)).tolist()
    n = weights.numel()
    if bool((weights < 0).any() | weights.isnan().any() | weights.isinf().any()):
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
    total = float(weights.sum())
    if total <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement:
        if num_samples > n:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        # the num_samples largest w / E, E exponential: zero weights come last, as in PyTorch
        keys = weights / -minitorch.rand((n,), dtype=minitorch.float64, **_kw(generator)).log()
        return keys.topk(num_samples).indices.tolist()
    cdf = weights.cumsum(0) / total
    out: List[int] = []
    step = max(1, (1 << 22) // max(n, 1))  # rows per chunk: keeps the (rows, n) comparison small
    for start in range(0, num_samples, step):
        rows = min(step, num_samples - start)
        u = minitorch.rand((rows, 1), dtype=minitorch.float64, **_kw(generator))
        out += (u >= cdf).sum(1).clamp_max(n - 1).tolist()
    return out
