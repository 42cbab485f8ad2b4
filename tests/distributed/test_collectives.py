"""Every collective, run by 2 and by 4 processes, against NumPy: processes of the launcher (one
MPI world from mpiexec) and processes started by mp.spawn that meet through a TCPStore (env://
with MASTER_ADDR/MASTER_PORT, no launcher)."""
import sys

import numpy as np
import pytest

from launching import SCRIPTS, launch, needs_mpi, ok

sys.path.insert(0, str(SCRIPTS))
from inputs import inputs  # noqa: E402

pytestmark = needs_mpi

REDUCE = {"sum": lambda a: np.sum(a, axis=0), "max": lambda a: np.max(a, axis=0), "min": lambda a: np.min(a, axis=0),
          "prod": lambda a: np.prod(a, axis=0)}


@pytest.fixture(scope="module", params=[(2, "launcher"), (4, "launcher"), (2, "spawn"), (4, "spawn")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def world(request, tmp_path_factory):
    n, via = request.param
    run = ok(launch(tmp_path_factory.mktemp("coll"), n, "collectives.py", "gloo" if n == 4 else "mpi", via=via))
    return n, [run.result(r) for r in range(n)], [inputs(r, n) for r in range(n)]


@pytest.mark.parametrize("op", ["sum", "avg", "max", "min", "prod"])
@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "int32"])
def test_all_reduce(world, op, dt):
    n, res, x = world
    stacked = np.stack([x[r][dt] for r in range(n)])
    if op == "avg":
        want = np.sum(stacked, axis=0)
        want = (want / n).astype(stacked.dtype) if dt.startswith("float") else np.trunc(want / n).astype(stacked.dtype)
    else:
        want = REDUCE[op](stacked).astype(stacked.dtype)
    for r in range(n):
        got = res[r][f"all_reduce_{op}_{dt}"]
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6 if dt == "float32" else 1e-12)
    # every rank holds the same bits
    for r in range(1, n):
        np.testing.assert_array_equal(res[r][f"all_reduce_{op}_{dt}"], res[0][f"all_reduce_{op}_{dt}"])


def test_all_reduce_other_dtypes_and_layouts(world):
    n, res, x = world
    f16 = sum(x[r]["float16"].astype(np.float32) for r in range(n)).astype(np.float16)
    anyb = np.any(np.stack([x[r]["bool"] for r in range(n)]), axis=0)
    nan = sum(x[r]["nan"] for r in range(n))
    tr = sum(x[r]["float64_2d"] for r in range(n))
    for r in range(n):
        np.testing.assert_allclose(res[r]["all_reduce_sum_float16"].astype(np.float32), f16, rtol=2e-3)
        np.testing.assert_array_equal(res[r]["all_reduce_max_bool"], anyb)
        np.testing.assert_allclose(res[r]["all_reduce_sum_nan"], nan, rtol=1e-12)
        assert np.isnan(res[r]["all_reduce_sum_nan"][2])
        np.testing.assert_allclose(res[r]["all_reduce_transposed"], tr, rtol=1e-12)
        assert res[r]["all_reduce_empty"].shape == (0, 3)
        np.testing.assert_allclose(res[r]["all_reduce_async"], sum(x[k]["float32"] for k in range(n)), rtol=1e-5)


def test_broadcast_gather_scatter(world):
    n, res, x = world
    src, dst = n - 1, 1 % n
    allx = np.stack([x[r]["float32"] for r in range(n)])
    for r in range(n):
        np.testing.assert_array_equal(res[r]["broadcast"], x[src]["float32"])
        np.testing.assert_array_equal(res[r]["all_gather"], allx)
        np.testing.assert_array_equal(res[r]["all_gather_into_tensor"], allx.reshape(n * 3, 4))
        np.testing.assert_array_equal(res[r]["scatter"], x[r]["float32"] * 10)
    np.testing.assert_array_equal(res[dst]["gather"], allx)
    assert all("gather" not in res[r] for r in range(n) if r != dst)


def test_reduce_scatter(world):
    n, res, x = world
    total = sum(x[r]["rs"] for r in range(n))
    for r in range(n):
        np.testing.assert_allclose(res[r]["reduce_scatter_sum"], total[2 * r:2 * r + 2], rtol=1e-12)
        np.testing.assert_allclose(res[r]["reduce_scatter_avg"], total[2 * r:2 * r + 2] / n, rtol=1e-12)


def test_send_recv(world):
    n, res, x = world
    for r in range(n):
        np.testing.assert_array_equal(res[r]["recv"], x[(r - 1) % n]["float32"])
        assert int(res[r]["recv_from"]) == (r - 1) % n
        np.testing.assert_array_equal(res[r]["irecv"], x[(r + 1) % n]["float32"])


def test_new_group(world):
    n, res, x = world
    members = sorted({0, n - 1})
    want = sum(x[r]["float64"] for r in members)
    for r in range(n):
        if r in members:
            np.testing.assert_allclose(res[r]["group_all_reduce"], want, rtol=1e-12)
            assert int(res[r]["group_rank"]) == members.index(r)
            assert int(res[r]["group_size"]) == len(members)
        else:  # not a member: the call does nothing, get_rank says -1
            np.testing.assert_array_equal(res[r]["group_all_reduce"], x[r]["float64"])
            assert int(res[r]["group_rank"]) == -1


def test_reduce_and_objects(world):
    n, res, x = world
    for r in range(n):
        if r == n - 1:
            np.testing.assert_allclose(res[r]["reduce_sum"], sum(x[k]["float64"] for k in range(n)), rtol=1e-12)
        elif r == 0:
            np.testing.assert_array_equal(res[r]["reduce_max"], np.max([x[k]["int64"] for k in range(n)], axis=0))
        if r != n - 1:  # not the destination: the tensor is left as it was
            np.testing.assert_array_equal(res[r]["reduce_sum"], x[r]["float64"])
        np.testing.assert_array_equal(res[r]["all_gather_object"], [k * 100 + k for k in range(n)])
        assert list(res[r]["broadcast_object_list"]) == [f"from {n - 1}", str({"k": (n - 1,)})]


def test_all_to_all(world):
    n, res, x = world
    for r in range(n):
        # equal parts: rank q's rows 3r..3r+2, for each q in order
        want = np.concatenate([np.arange(n * 3 * 2, dtype=np.float32).reshape(n * 3, 2)[3 * r:3 * r + 3] + 100 * q
                               for q in range(n)])
        np.testing.assert_array_equal(res[r]["all_to_all_single"], want)
        parts = []
        for q in range(n):  # rank q sends rank r its rows after sum(k + q + 1 for k < r)
            start = sum(k + q + 1 for k in range(r))
            rows = np.arange(sum(k + q + 1 for k in range(n)) * 2, dtype=np.float64).reshape(-1, 2) + 1000 * q
            parts.append(rows[start:start + r + q + 1])
        np.testing.assert_array_equal(res[r]["all_to_all_single_uneven"], np.concatenate(parts))
        np.testing.assert_array_equal(res[r]["all_to_all"],
                                      np.concatenate([np.full(q + 1, 10 * q + r, np.int64) for q in range(n)]))
        np.testing.assert_array_equal(res[r]["reduce_op_alias"], np.max([x[k]["float32"] for k in range(n)], axis=0))
        assert bool(res[r]["reduce_op_warned"])
