"""Where the data pipeline's random numbers come from: minitorch's generators, through the
public minitorch API (random_, randperm, randint, multinomial), never Python's or NumPy's, drawn
in the calls PyTorch's samplers make. minitorch's CPU streams are PyTorch's, so a DataLoader,
sampler or random_split seeded alike (manual_seed, or generator=) orders its data as PyTorch's
does. A sampler without a generator seeds a fresh Generator from the default one, as PyTorch's
RandomSampler does."""
from __future__ import annotations

from typing import Any, List, Optional

import minitorch


def seed(generator: Optional[Any] = None) -> int:
    """A random int64 from generator (else the default one): PyTorch's base seeds come from here."""
    return int(minitorch.empty((), dtype=minitorch.int64).random_(generator=generator).item())


def sampler_generator(generator: Optional[Any]) -> Any:
    """The generator a sampler draws one epoch from: its own, else a Generator seeded from the
    default generator."""
    if generator is not None:
        return generator
    return minitorch.Generator().manual_seed(seed())


def randperm(n: int, generator: Optional[Any] = None) -> List[int]:
    return minitorch.randperm(n, generator=generator).tolist()


def randint(high: int, size: int, generator: Optional[Any] = None) -> List[int]:
    return minitorch.randint(0, high, (size,), dtype=minitorch.int64, generator=generator).tolist()


def multinomial(weights: Any, num_samples: int, replacement: bool, generator: Optional[Any] = None) -> List[int]:
    """Indices drawn with probabilities proportional to the float64 weights."""
    return minitorch.multinomial(weights, num_samples, replacement, generator=generator).tolist()
