"""fully_shard's shard_placement_fn (parameters sharded on other dims than 0) and
unshard(async_op=True) over 2 and 4 processes (scripts/fsdp2_shard_dims.py), against one
process training on the full batch; and FSDP1's SHARDED_STATE_DICT chunked without a full gather."""
import sys

import numpy as np
import pytest

from launching import SCRIPTS, chunk, launched_once, needs_mpi

sys.path.insert(0, str(SCRIPTS))
from fsdp_models import mlp, train  # noqa: E402

STEPS = dict(rtol=1e-9, atol=1e-11)


@pytest.fixture(scope="module")
def want_steps():
    return train(mlp(0), "mlp", 3)[1]


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    return launched_once(tmp_path_factory, "fsdp2_shard_dims.py", timeout=180)


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_shard_placement_fn_shards_other_dims(launched, want_steps, n):
    for r, got in enumerate(launched(n)):
        want = []
        for name, p in mlp(0).named_parameters():
            shape = tuple(p.shape)
            if len(shape) == 2 and shape[1] % n == 0:
                want.append(f"{name} (Shard(dim=1),) {(shape[0], shape[1] // n)}")
            else:
                local = (chunk(shape[0], n, r)[1],) + shape[1:]
                want.append(f"{name} (Shard(dim=0),) {local}")
        assert list(got["placements"]) == want
        np.testing.assert_allclose(got["columns_steps"], want_steps, **STEPS)
        assert "(Shard(dim=1),)" in list(got["grad_placements"])
        np.testing.assert_allclose(got["hsdp_steps"], want_steps, **STEPS)
        assert str(got["hsdp_placements"]) == "(Replicate(), Shard(dim=1))"
        assert str(got["err_uneven"]) == ("NotImplementedError: FSDP does not support uneven sharding on dim 1: "
                                          f"minitorch.Size([6, 5]) (world size: {n})")
        assert str(got["err_not_shard"]) == ("AssertionError: Expected Shard, got <class 'minitorch.distributed."
                                             "tensor.placement_types.Replicate'>: R")
        assert str(got["err_dim"]) == "AssertionError: Shard dim 2 is invalid for 2D tensor: minitorch.Size([6, 5])"


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_async_unshard_gathers_once_and_trains(launched, want_steps, n):
    for got in launched(n):
        assert bool(got["async_before_wait"])  # issued, not finished: no full parameters yet
        assert got["async_after_wait"].all()  # wait(): the attributes are the full parameters
        assert int(got["async_forward_gathers"]) == 2  # the two Blocks only: the root's was gathered ahead
        np.testing.assert_allclose(got["async_steps"], want_steps, **STEPS)
        np.testing.assert_allclose(got["async_unwaited_out"], got["async_unwaited_want"], rtol=1e-12, atol=1e-12)


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_fsdp1_sharded_state_dict_chunks_without_gathering(launched, n):
    sd = mlp(0).state_dict()
    whole = np.concatenate([v.numpy().reshape(-1) for v in sd.values()])
    for r, got in enumerate(launched(n)):
        for orig in (False, True):
            # no all-gather; one all-to-all per unit (3 units), one profiler event each
            np.testing.assert_array_equal(got[f"fsdp1_comm_{orig}"], [0, 3])
            want = [f"{k} (Shard(dim=0),) {(chunk(v.shape[0], n, r)[1],) + tuple(v.shape[1:])}" for k, v in sd.items()]
            assert list(got[f"fsdp1_keys_{orig}"]) == want
            rows = [v.numpy()[chunk(v.shape[0], n, r)[0]:sum(chunk(v.shape[0], n, r))] for v in sd.values()]
            np.testing.assert_array_equal(got[f"fsdp1_local_{orig}"], np.concatenate([x.reshape(-1) for x in rows]))
            np.testing.assert_array_equal(got[f"fsdp1_full_{orig}"], whole)
