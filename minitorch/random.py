"""minitorch.random, as torch.random: the default generator's seed and state, for every device.

The default CPU generator is PyTorch's (mt19937 and its transforms, csrc/core/generator.h and
csrc/cpu/random.c): after manual_seed(s), rand/randn/randint/randperm/normal_/uniform_/... give
PyTorch's numbers. A fresh process starts from a nondeterministic seed, as PyTorch's does.
"""
from __future__ import annotations

import contextlib
from typing import Any, Generator as _PyGenerator, Iterable, Optional

from . import _C

default_generator = _C.default_generator

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng", "thread_safe_generator"]


def set_rng_state(new_state: Any) -> None:
    """Sets the default CPU generator's state (what get_rng_state returned)."""
    default_generator.set_state(new_state)


def get_rng_state() -> Any:
    """The default CPU generator's state: PyTorch's 5056 state bytes, a uint8 tensor."""
    return default_generator.get_state()


def manual_seed(seed: Any) -> "_C.Generator":
    """Seeds every device's default generator and returns the CPU one, as torch.manual_seed.
    The seed is an int in [-2**63, 2**64); a negative one counts as its two's complement."""
    seed = int(seed)
    from . import cuda

    cuda.manual_seed_all(seed)
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seeds every device's default generator from a nondeterministic source; returns the seed."""
    s = default_generator.seed()
    from . import cuda

    cuda.manual_seed_all(s)
    return s


def initial_seed() -> int:
    """The seed the default CPU generator was last seeded with."""
    return default_generator.initial_seed()


@contextlib.contextmanager
def fork_rng(devices: Optional[Iterable[Any]] = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: Optional[str] = None) -> _PyGenerator[None, None, None]:
    """Restores the CPU generator's state (and the given CUDA devices', all by default) on exit,
    as torch.random.fork_rng. device_type None: the current accelerator's, else "cuda" (the CPU's
    stream is always forked); "meta" forks nothing."""
    from . import accelerator, cuda

    if device_type == "meta":
        yield
        return
    acc = accelerator.current_accelerator()
    device_type = device_type or (acc.type if acc is not None else "cuda")
    if not enabled:
        yield
        return

    if devices is None:
        devices = range(cuda.device_count()) if device_type == "cuda" else []
    devices = list(devices)
    cpu_state = get_rng_state()
    device_states = [cuda.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, device_states):
            cuda.set_rng_state(state, d)


def thread_safe_generator() -> Optional["_C.Generator"]:
    """The generator of the DataLoader thread worker this code runs in, else None (the default
    generator then serves, as in the main process and process workers). minitorch's DataLoader
    workers are processes, so it is None here."""
    return None
