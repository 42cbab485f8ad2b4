"""Processes that meet through a store, without the launcher: PyTorch's DDP tutorial (the script
sets MASTER_ADDR/MASTER_PORT, mp.spawn starts the ranks, each calls init_process_group("gloo",
rank=, world_size=)), init_method tcp:// and file:// and store=, and the failure cases (a dead
rank, a late one, a rank that never comes, mismatched shapes and models) ending within their
timeout. The collectives and DDP's training in this mode are in test_collectives.py and
test_ddp.py (their "spawn" cases)."""
import math
import sys

import numpy as np
import pytest

from helpers import torch
from launching import SCRIPTS, launch, needs_mpi, ok

sys.path.insert(0, str(SCRIPTS))
from mlp import model, sgd_steps  # noqa: E402

pytestmark = needs_mpi
TIMEOUT = 3.0


@pytest.mark.parametrize("n, init", [(2, "env"), (4, "env"), (2, "tcp"), (2, "file"), (2, "store"), (4, "store_last")])
def test_ddp_tutorial_matches_full_batch(tmp_path, n, init):
    run = ok(launch(tmp_path, n, "ddp_tutorial.py", init, via="self", timeout=180))
    net = model(seed=0)
    want = np.stack(sgd_steps(net, net, 4)[1])  # one process, the full batch
    evens = [r for r in range(n) if r % 2 == 0]
    total = math.ceil(10 / n) * n
    padded = list(range(10)) + list(range(10))[: total - 10]
    for r in range(n):
        res = run.result(r)
        assert int(res["rank"]) == r and int(res["world"]) == n
        # step by step, every rank: the parameters of single-process full-batch training
        np.testing.assert_allclose(res["steps"], want, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(res["steps"], run.result(0)["steps"])
        group_sum = sum(k + 1 for k in evens) if r in evens else r + 1
        np.testing.assert_array_equal(res["group_sum"], np.full(3, group_sum, np.float32))
        prv = (r - 1) % n
        np.testing.assert_array_equal(res["recv"], np.arange(4) * (prv + 1))
        assert int(res["recv_src"]) == prv
        np.testing.assert_array_equal(res["sampler"], padded[r:total:n])
        if torch is not None:
            from torch.utils.data.distributed import DistributedSampler

            want_idx = list(DistributedSampler(list(range(10)), num_replicas=n, rank=r, shuffle=False))
            np.testing.assert_array_equal(res["sampler"], want_idx)


def test_dead_rank_raises_within_timeout(tmp_path):
    # multiprocessing.Process per rank: rank 0 keeps running when rank 1 dies, and raises by itself
    run = launch(tmp_path, 2, "failures.py", "dead", timeout=120, via="process")
    assert run.returncode != 0  # rank 1 exited with 3
    res = run.result(0)
    assert str(res["kind"]) == "DistBackendError", (run.stdout, run.stderr)
    assert "all_reduce" in str(res["error"])
    assert float(res["seconds"]) <= TIMEOUT + 2


def test_late_rank_times_out(tmp_path):
    run = launch(tmp_path, 2, "failures.py", "slow", timeout=120, via="process")
    res = run.result(0)
    assert str(res["kind"]) == "DistBackendError", (run.stdout, run.stderr)
    assert "timed out after 3 s" in str(res["error"])
    assert TIMEOUT - 0.5 <= float(res["seconds"]) <= TIMEOUT + 2


def test_rank_that_never_comes_times_out(tmp_path):
    run = launch(tmp_path, 2, "failures.py", "noinit", timeout=120, via="process")
    res = run.result(0)
    assert str(res["kind"]) == "DistStoreError", (run.stdout, run.stderr)
    assert float(res["seconds"]) <= 2 * TIMEOUT + 2  # the store's wait for the workers, then for the ranks


def test_rank_dying_before_mpi_init_ends_the_others(tmp_path):
    # rank 0 waits in MPI_Init (on shared memory, holding the GIL): the PMI server ends it and says why
    run = launch(tmp_path, 2, "failures.py", "dieinit", timeout=120, via="process")
    assert run.returncode != 0
    assert "did not form (rank 1" in run.stderr and "ending the ranks waiting in MPI_Init: [0]" in run.stderr
    assert run.seconds < 60  # the init timeout: it ended as soon as rank 1 did


@pytest.mark.parametrize("n", [2, 4])
def test_mismatched_shapes_raise_on_every_rank(tmp_path, n):
    run = ok(launch(tmp_path, n, "failures.py", "shape", via="spawn", timeout=120))
    for r in range(n):
        res = run.result(r)
        assert str(res["kind"]) == "DistBackendError"
        assert "different sizes" in str(res["error"])
        np.testing.assert_array_equal(res["after"], np.full(5, float(n), np.float32))


def test_ddp_different_models_raise(tmp_path):
    run = ok(launch(tmp_path, 2, "failures.py", "ddp_model", via="spawn", timeout=120))
    for r in range(2):
        res = run.result(r)
        assert str(res["kind"]) == "RuntimeError"
        assert "DDP expects same model across all ranks" in str(res["error"])
