"""The CUDA devices' default generators, as torch.cuda.random: each device has a Philox
generator (a seed and an offset, csrc/core/generator.h). Without a usable CUDA device the
seeding functions do nothing, as PyTorch's (which queue them until CUDA starts); the ones that
read a state raise PyTorch's error (minitorch.cuda._lazy_init)."""
from __future__ import annotations

from typing import Any, Iterable, List

from .. import _C

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed"]


def _generator(device: Any = "cuda") -> "_C.Generator":
    from . import _index, _lazy_init

    _lazy_init()
    return _C._cuda_default_generator(_index(device))


def _available() -> bool:
    from . import is_available

    return is_available()


def get_rng_state(device: Any = "cuda") -> Any:
    """The state of a device's default generator: its seed and offset, PyTorch's 16 bytes."""
    return _generator(device).get_state()


def get_rng_state_all() -> List[Any]:
    from . import device_count

    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    if _available():
        _generator(device).set_state(new_state)


def set_rng_state_all(new_states: Iterable[Any]) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed: Any) -> None:
    """Seeds the current device's default generator."""
    if _available():
        _generator().manual_seed(int(seed))


def manual_seed_all(seed: Any) -> None:
    """Seeds every device's default generator (and those not made yet)."""
    _C._cuda_manual_seed_all(int(seed))


def seed() -> None:
    """Seeds the current device's default generator from a nondeterministic source."""
    if _available():
        _generator().seed()


def seed_all() -> None:
    """Seeds every device's default generator with one nondeterministic seed."""
    if _available():
        manual_seed_all(_generator().seed())


def initial_seed() -> int:
    """The seed of the current device's default generator."""
    return _generator().initial_seed()
