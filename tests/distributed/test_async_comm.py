"""Async collectives do not block until wait(); the profiler shows one Comm:: event per collective
with its bytes; a dead rank makes every collective, blocking or async, raise within the timeout."""
import numpy as np
import pytest

from launching import launch, needs_mpi, ok

pytestmark = needs_mpi


def test_async_all_reduce_returns_before_the_peer_arrives(tmp_path):
    run = ok(launch(tmp_path, 2, "async_comm.py", "overlap", timeout=90))
    for r in range(2):
        res = run.result(r)
        np.testing.assert_array_equal(res["sum"], np.full(1000, 3.0, np.float32))
        # sizes that differ: the call returns, wait() raises on every rank, and only the check's
        # all-gather ran (the group works on: the next collectives are right)
        assert float(res["bad_issue_s"]) < 0.5
        assert "different sizes" in str(res["bad_error"]) and not bool(res["bad_success"])
        np.testing.assert_array_equal(res["y"], np.full(5, 3.0, np.float32))
        np.testing.assert_array_equal(res["z"], np.full(4, 10.0, np.float32))
        np.testing.assert_array_equal(res["g"], [0, 0, 1, 1])
    early = run.result(0)
    assert float(early["issue_s"]) < 0.5  # rank 1 came 1.5 s later
    assert not bool(early["completed_early"])
    assert float(early["waited_s"]) > 1.0  # wait() waited for it


def test_profiler_one_comm_event_per_collective_with_bytes(tmp_path):
    run = ok(launch(tmp_path, 2, "async_comm.py", "profile", timeout=90))
    for r in range(2):
        res = run.result(r)
        assert list(res["names"]) == sorted(["Comm::all_reduce", "Comm::all_reduce", "Comm::broadcast",
                                             "Comm::all_gather_into_tensor", "Comm::reduce_scatter_tensor",
                                             "Comm::all_to_all_single", "Comm::barrier"])
        assert list(res["bytes"]) == [1024, 1024]
        assert list(res["trace_bytes"]) == [1024, 1024]
        assert "collective of minitorch.distributed: all_reduce, 1024 B" in str(res["journey"])


@pytest.mark.parametrize("n", [2, 3])
def test_dead_rank_every_collective_raises_within_timeout(tmp_path, n):
    run = launch(tmp_path, n, "async_comm.py", "dead", timeout=150, launcher_args=["--keep-going"])
    assert run.returncode != 0  # rank 1 exited with 3
    for r in (r for r in range(n) if r != 1):
        res = run.result(r)
        for name, kind, error, seconds, issued in zip(res["names"], res["kinds"], res["errors"], res["seconds"],
                                                      res["issued"]):
            assert str(kind) == "DistBackendError (a RuntimeError)", (name, kind, error)
            assert str(name).split()[-1] in str(error) or str(name) == "irecv" and "recv" in str(error), \
                (name, error)
            assert float(seconds) <= 1.5 + 1.5, (name, seconds)
            if str(name).startswith(("async", "irecv")):
                assert 0 <= float(issued) < 0.5, (name, issued)  # the call returned; wait() raised
