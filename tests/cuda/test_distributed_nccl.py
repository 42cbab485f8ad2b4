"""backend="nccl" on CUDA tensors (the emulated device's NCCL in CI, cuda/emu/nccl.c): every
collective on 2 and 4 processes of the launcher against NumPy (the checks of
tests/distributed/test_collectives.py, on the results of the same script run with NCCL), DDP
against single-process CPU training, the comm hooks, the profiler's records, a dead peer."""
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "distributed"))
from launching import SCRIPTS, launch, needs_mpi, ok  # noqa: E402
from test_collectives import (test_all_reduce, test_all_reduce_other_dtypes_and_layouts,  # noqa: E402,F401
                              test_all_to_all, test_broadcast_gather_scatter, test_new_group,
                              test_reduce_and_objects, test_reduce_scatter, test_send_recv)
from test_ddp import reference_steps  # noqa: E402

sys.path.insert(0, str(SCRIPTS))
from inputs import inputs  # noqa: E402

pytestmark = [needs_mpi, pytest.mark.skipif(not minitorch.cuda.is_available(), reason="needs a CUDA device")]


@pytest.fixture(scope="module", params=[2, 4])
def world(request, tmp_path_factory):
    """The collectives' script with backend "nccl" on CUDA tensors (what test_collectives' tests read)."""
    n = request.param
    run = ok(launch(tmp_path_factory.mktemp("nccl"), n, "collectives.py", "nccl", "cuda", timeout=180))
    res = [run.result(r) for r in range(n)]
    assert all(str(x["backend"]) == "nccl" for x in res)
    return n, res, [inputs(r, n) for r in range(n)]


@pytest.mark.parametrize("n, init", [(2, "env://"), (4, "tcp"), (2, "spawn")])
def test_ddp_on_nccl_matches_full_batch(tmp_path, n, init):
    via = "launcher"
    if init == "tcp":
        from minitorch.distributed.run import _free_port

        init = f"tcp://127.0.0.1:{_free_port()}"  # the unique ids go through the TCPStore
    elif init == "spawn":  # no launcher: mp.spawn's processes meet through the env:// TCPStore
        init, via = "env://", "spawn"
    run = ok(launch(tmp_path, n, "nccl_ddp.py", init, timeout=180, via=via))
    res = [run.result(r) for r in range(n)]
    want = reference_steps()
    assert int(res[0]["n_buckets"]) > 1
    for r in range(n):
        assert str(res[r]["backend"]) == "nccl"
        assert str(res[r]["grad_device"]).startswith("cuda") and str(res[r]["bucket_device"]).startswith("cuda")
        np.testing.assert_allclose(res[r]["steps"], want, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(res[r]["steps"], res[0]["steps"])
        np.testing.assert_allclose(res[r]["hook_allreduce_hook"], want[:3], rtol=1e-10, atol=1e-12)
        # float16 gradients on the wire: close to the float64 training, not equal to it
        np.testing.assert_allclose(res[r]["hook_fp16"], want[:3], rtol=0, atol=2e-3)
        assert not np.array_equal(res[r]["hook_fp16"], want[:3])
        # the profiler: a Comm:: range, an ncclAllReduce library call and an NCCL kernel per bucket
        buckets = int(res[0]["n_buckets"])
        assert int(res[r]["comm_events"]) >= 1
        assert int(res[r]["trace_comm"]) == buckets
        assert int(res[r]["library_calls"]) == buckets
        assert int(res[r]["trace_kernels"]) == buckets
        journey = str(res[r]["journey"])
        assert "collective of minitorch.distributed: all_reduce" in journey and "NCCL call" in journey


def test_nccl_dead_peer_raises(tmp_path):
    run = launch(tmp_path, 2, "failures.py", "dead", "nccl", timeout=90, launcher_args=["--keep-going"])
    assert run.returncode != 0
    res = run.result(0)
    assert str(res["kind"]) == "DistBackendError", res
    assert "all_reduce" in str(res["error"])
    assert float(res["seconds"]) <= 3.0 + 2


def test_nccl_mismatched_shapes_raise_on_every_rank(tmp_path):
    run = ok(launch(tmp_path, 2, "failures.py", "shape", "nccl", timeout=90))
    for r in range(2):
        res = run.result(r)
        assert str(res["kind"]) == "DistBackendError"
        assert "different sizes" in str(res["error"])
        np.testing.assert_array_equal(res["after"], np.full(5, 2.0, np.float32))
        # the sizes' check ran once for this signature (the call after the mismatch), not per call
        assert int(res["checks_repeated"]) == 0


def test_nccl_async_all_reduce_returns_before_the_peer_arrives(tmp_path):
    """The check of a new signature's sizes does not block an async NCCL call: the collective is
    launched once it came back (at wait() here); sizes that differ raise at wait() on every rank."""
    run = ok(launch(tmp_path, 2, "async_comm.py", "overlap", "nccl", timeout=120))
    for r in range(2):
        res = run.result(r)
        np.testing.assert_array_equal(res["sum"], np.full(1000, 3.0, np.float32))
        assert float(res["bad_issue_s"]) < 0.5
        assert "different sizes" in str(res["bad_error"]) and not bool(res["bad_success"])
        np.testing.assert_array_equal(res["y"], np.full(5, 3.0, np.float32))
        np.testing.assert_array_equal(res["z"], np.full(4, 10.0, np.float32))
        np.testing.assert_array_equal(res["g"], [0, 0, 1, 1])
    early = run.result(0)
    assert float(early["issue_s"]) < 0.5  # rank 1 came 1.5 s later
    assert not bool(early["completed_early"])
    assert float(early["waited_s"]) > 1.0


def test_nccl_on_the_asynchronous_emulated_device(tmp_path, monkeypatch):
    """MINITORCH_EMU_ASYNC=1: each stream's work runs on its own thread; an NCCL call first waits
    for the work queued before it on its stream (the collectives' script, 2 ranks)."""
    if not minitorch.cuda._is_emulated():
        pytest.skip("the emulated device's asynchronous mode")
    monkeypatch.setenv("MINITORCH_EMU_ASYNC", "1")
    run = ok(launch(tmp_path, 2, "collectives.py", "nccl", "cuda", timeout=180))
    x = [inputs(r, 2) for r in range(2)]
    for r in range(2):
        res = run.result(r)
        np.testing.assert_allclose(res["all_reduce_sum_float64"], x[0]["float64"] + x[1]["float64"], rtol=1e-12)
        np.testing.assert_array_equal(res["recv"], x[(r - 1) % 2]["float32"])


def test_nccl_load_and_unavailable_reasons():
    import minitorch.distributed as dist

    assert dist.is_nccl_available()
    from minitorch.distributed import _nccl

    major, minor, _ = _nccl.version()
    assert (major, minor) >= (2, 12)
    c = minitorch.cuda._C_cuda
    with pytest.raises(ValueError, match="128 bytes"):
        c.nccl_comm_init(0, 1, b"short", 0, 1.0)
    with pytest.raises(RuntimeError, match="NCCL error in ncclCommInitRank: invalid argument"):
        c.nccl_comm_init(0, 1, bytes(128), 0, 1.0)
    with pytest.raises(RuntimeError, match="no collective of kind 9"):
        c.nccl_run(1, 0, 9, 0, 0, 1, 7, 0, 0)


def _raw(tmp_path, n: int, mode: str):
    """nccl_raw.py's ranks started by hand (no MPI: the emulation rendezvous by unique id alone)."""
    import subprocess

    from helpers import child_env

    uid = minitorch.cuda._C_cuda.nccl_unique_id().hex()
    procs = [subprocess.Popen([sys.executable, str(SCRIPTS / "nccl_raw.py"), uid, str(r), str(n), mode],
                              env=child_env(MINITORCH_CUDA_EMU="1"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for r in range(n)]
    outs = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail(f"nccl_raw.py {mode} did not end within 120 s")
        assert p.returncode == 0, err
        outs.append(out.strip())
    return outs


emulated_only = pytest.mark.skipif(not minitorch.cuda._is_emulated(), reason="the emulated NCCL's own behaviour")


@emulated_only
@pytest.mark.parametrize("n", [2, 3])
def test_emulated_nccl_large_messages(tmp_path, n):
    assert _raw(tmp_path, n, "big") == ["OK"] * n


@emulated_only
def test_emulated_nccl_peer_exit_fails_the_waiter(tmp_path):
    out = _raw(tmp_path, 2, "peer_exit")[0]
    assert out.startswith("ERR"), out
    assert "remote process exited" in out and "rank 1" in out
    assert float(out.split()[1]) < 5
