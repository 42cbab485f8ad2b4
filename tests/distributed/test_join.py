"""The Join context manager with DDP on uneven inputs over 2 processes (scripts/join.py); the
tutorial's workers (DDP, DDP + ZeroRedundancyOptimizer, a custom Joinable) are in
tests/programs/test_join_tutorial.py."""
import numpy as np

from launching import launch, needs_mpi, ok


@needs_mpi
def test_join_uneven_inputs(tmp_path):
    n = 2
    run = ok(launch(tmp_path, n, "join.py"))
    res = [run.result(r) for r in range(n)]
    # 3 backwards averaged over 2 ranks (3), then rank 1's 4th alone: 4 divided by 1 rank training
    np.testing.assert_allclose(res[0]["grads_live"], [3.0, 3.0], rtol=1e-6)
    np.testing.assert_allclose(res[1]["grads_live"], [4.0, 4.0], rtol=1e-6)
    # the last joiner's parameters and running statistics, on every rank
    np.testing.assert_array_equal(res[0]["state"], res[1]["state"])
    assert str(res[0]["thrown"]) == "Rank 0 exhausted all inputs."
    assert str(res[1]["thrown"]) == "Detected at least one rank that exhausted inputs. Throwing across all ranks."
    assert str(res[0]["empty"]) == "The join context manager requires at least one joinable"
