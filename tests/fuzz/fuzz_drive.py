"""The loop every fuzzer shares: n_calls calls drawn by hypothesis from a strategy, in batches
of PER_EXAMPLE (hypothesis's overhead is per example), reproducibly from fixed_seed, with no
shrinking or database (the worker reports what it saw; the test process judges it)."""
from typing import Callable

from hypothesis import HealthCheck, given, seed, settings, strategies as st

PER_EXAMPLE = 10


def drive(strategy: st.SearchStrategy, run_one: Callable, n_calls: int, fixed_seed: int,
          after_batch: Callable[[], None] = lambda: None) -> None:
    """Draws n_calls values of strategy and passes each to run_one."""

    @seed(fixed_seed)
    @settings(max_examples=max(1, n_calls // PER_EXAMPLE), deadline=None, database=None,
              suppress_health_check=list(HealthCheck), phases=["generate"])
    @given(st.lists(strategy, min_size=PER_EXAMPLE, max_size=PER_EXAMPLE))
    def fuzz(batch):
        for call in batch:
            run_one(call)
        after_batch()

    fuzz()
