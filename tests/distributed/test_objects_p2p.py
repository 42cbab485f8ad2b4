"""gather_object, scatter_object_list, send/recv_object_list, batch_isend_irecv, reduce_scatter of
a list, monitored_barrier and the rank queries, on 2 and 4 processes (scripts/objects_p2p.py)."""
import numpy as np
import pytest

import minitorch
import minitorch.distributed as dist

from launching import launch, needs_mpi, ok


@pytest.fixture(scope="module", params=[2, 4])
def world(request, tmp_path_factory):
    n = request.param
    run = ok(launch(tmp_path_factory.mktemp("objp2p"), n, "objects_p2p.py", timeout=120))
    return n, [run.result(q) for q in range(n)]


@needs_mpi
def test_object_collectives(world):
    n, res = world
    dst = res[1 % n]
    np.testing.assert_array_equal(dst["gather_object_ranks"], np.arange(n))
    np.testing.assert_array_equal(dst["gather_object_words"], np.arange(n) + 1)
    np.testing.assert_array_equal(dst["gather_object_arr_sums"], [sum(range(q + 2)) for q in range(n)])
    for q in range(n):
        np.testing.assert_array_equal(res[q]["scatter_object"], [q, 5 * q])
    assert int(res[1]["recv_object_from"]) == 0 and int(res[0]["recv_object_from"]) == 1
    np.testing.assert_array_equal(res[1]["recv_object"], [1, 5, 6])
    np.testing.assert_array_equal(res[0]["recv_object"], [7, 8])


@needs_mpi
def test_batch_isend_irecv_ring_and_reduce_scatter(world):
    n, res = world
    for q in range(n):
        np.testing.assert_array_equal(res[q]["ring"], np.arange(4) + 10 * ((q - 1) % n))
        np.testing.assert_array_equal(res[q]["reduce_scatter"], np.full(3, sum(p * 10 + q for p in range(n))))
        np.testing.assert_array_equal(res[q]["reduce_scatter_max"], np.full(3, (n - 1) * 10 + q))


@needs_mpi
def test_rank_queries(world):
    n, res = world
    for q in range(n):
        assert int(res[q]["pg_count"]) == 2
        np.testing.assert_array_equal(res[q]["world_ranks"], np.arange(n))
        np.testing.assert_array_equal(res[q]["world_translations"], [n - 1, q])
        assert bool(res[q]["elastic"]) and int(res[q]["local_rank"]) == q
    for q in (0, n - 1):  # new_group sorts its ranks, as PyTorch's
        np.testing.assert_array_equal(res[q]["group_ranks"], [0, n - 1])
        assert int(res[q]["global_of_1"]) == n - 1
        assert int(res[q]["group_rank_of_me"]) == (0 if q == 0 else 1)
    if n > 2:
        assert "group_ranks" not in res[1]


@needs_mpi
def test_monitored_barrier_names_the_missing_rank(tmp_path):
    run = launch(tmp_path, 2, "objects_p2p.py", "monitor_missing", timeout=60)
    res = run.result(0)
    assert str(res["kind"]) == "DistBackendError"
    assert "Ranks 1 failed to pass monitoredBarrier in 1000 ms" in str(res["error"])
    assert float(res["seconds"]) < 3


def test_p2p_op_and_batch_arguments(monkeypatch):
    t = minitorch.zeros(2)
    with pytest.raises(ValueError, match="Expected ``op`` to be of type ``torch.distributed.isend``"):
        dist.P2POp(dist.send, t, 1)
    with pytest.raises(ValueError, match="Must specify either peer or group_peer"):
        dist.P2POp(dist.isend, t)
    with pytest.raises(ValueError, match="Each op is expected to to be of type"):
        dist.batch_isend_irecv([1])
    assert dist.batch_isend_irecv([]) == []
    assert "isend" in repr(dist.P2POp(dist.isend, t, 1))
    assert dist.supports_complex(dist.ReduceOp.SUM) and not dist.supports_complex(dist.ReduceOp.MAX)
    assert dist.get_pg_count() == 0


def test_environment_queries(monkeypatch):
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment"):
        dist.get_node_local_rank()
    assert dist.get_node_local_rank(fallback_rank=3) == 3
    assert not dist.is_torchelastic_launched()
    monkeypatch.setenv("LOCAL_RANK", "2")
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "none")
    assert dist.get_node_local_rank(fallback_rank=3) == 2 and dist.is_torchelastic_launched()
    assert dist.is_backend_available("gloo") == dist.is_available() and not dist.is_backend_available("ucc")
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.gather_object(1)
