"""fully_shard (FSDP2) with DTensor parameters, and FSDP1's sharded and local state dicts, CPU
offload, ignored modules and param_init_fn, over 2 and 4 processes (scripts/fsdp2.py), against one
process training on the full batch (the single-process references of test_fsdp.py)."""
import sys

import numpy as np
import pytest

from launching import SCRIPTS, launched_once, needs_mpi

import minitorch

sys.path.insert(0, str(SCRIPTS))
from fsdp_models import data, mlp, train, transformer  # noqa: E402
from test_fsdp import FULL_NAMES, mixed_precision_steps  # noqa: E402

STEPS = dict(rtol=1e-9, atol=1e-11)


@pytest.fixture(scope="module")
def refs():
    out = {}
    _, out["tf_steps"], _ = train(transformer(0), "transformer", 3)
    _, out["mlp_steps"], _ = train(mlp(0), "mlp", 3)
    out["mp_steps"] = mixed_precision_steps(3)
    m = mlp(0)
    opt = minitorch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for step in range(2):
        x, y = data("mlp", step)
        opt.zero_grad()
        minitorch.nn.functional.mse_loss(m(x), y).backward()
        opt.step()
    out["after_two"] = np.concatenate([v.numpy().reshape(-1) for v in m.state_dict().values()])
    return out


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    return launched_once(tmp_path_factory, "fsdp2.py", timeout=300)


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_fully_shard_dtensor_parameters_train_as_one_process(launched, refs, n):
    res = launched(n)
    tf = transformer(0)
    for r, got in enumerate(res):
        # the parameters: DTensors of the full shapes, sharded on dim 0, registered under their names
        assert list(got["fs_names"]) == [name for name, _ in tf.named_parameters()]
        assert list(got["fs_kinds"]) == ["DTensor (Shard(dim=0),) True"]
        assert list(got["fs_shapes"]) == [str(tuple(p.shape)) for p in tf.parameters()]
        assert list(got["fs_sd_kinds"]) == ["DTensor"] and str(got["fs_grad_kind"]) == "DTensor"
        np.testing.assert_allclose(got["tf_steps"], refs["tf_steps"], **STEPS)
        # mixed precision: float32's steps on float64 shards
        np.testing.assert_allclose(got["mp_steps"], refs["mp_steps"], rtol=1e-5, atol=1e-6)
        assert np.abs(got["mp_steps"] - refs["mlp_steps"]).max() > 1e-9
        assert list(got["mp_param_dtypes"]) == ["minitorch.float64"]
        assert str(got["mp_out_dtype"]) == "minitorch.float32" and str(got["mp_output_dtype"]) == "minitorch.float64"
        # reshard_after_forward: the Blocks freed after forward and gathered again in backward, or kept
        for keep in (True, False):
            np.testing.assert_allclose(got[f"raf_steps_{keep}"], refs["mlp_steps"], **STEPS)
        assert list(got["raf_held_True"]) == [True, False, False]
        np.testing.assert_array_equal(got["raf_comm_True"], [2, 3])
        assert list(got["raf_held_False"]) == [True, True, True]
        np.testing.assert_array_equal(got["raf_comm_False"], [0, 3])
        # gradient accumulation, HSDP on a 2-D mesh, CPU offload
        assert list(got["meta_devices"]) == ["meta"] and str(got["meta_load"]) == "<All keys matched successfully>"
        for key in ("accumulated_steps", "hsdp_steps", "offload_steps", "meta_steps"):
            np.testing.assert_allclose(got[key], refs["mlp_steps"], err_msg=key, **STEPS)
        assert str(got["hsdp_placements"]) == "(Replicate(), Shard(dim=0))"
        assert list(got["ignored_kinds"]) == ["DTensor"] * 10 + ["Parameter"] * 2
        assert str(got["err_mp_frozen"]) == "FrozenInstanceError: cannot assign to field 'param_dtype'"
        assert str(got["err_fs_mesh"]).startswith("ValueError: fully_shard expects a 1D or 2D DeviceMesh but got")
    total = sum(p.numel() for p in tf.parameters())
    assert sum(int(got["fs_local_numel"]) for got in res) == total


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_fsdp1_sharded_and_local_state_dicts_offload_ignored_and_init(launched, refs, n):
    for got in launched(n):
        assert list(got["sharded_kinds"]) == ["DTensor (Shard(dim=0),)"]
        assert list(got["sharded_keys"]) == FULL_NAMES
        assert list(got["sharded_osd_kinds"]) == ["momentum_buffer DTensor"] and got["sharded_osd_back"]
        np.testing.assert_allclose(got["full_sd"], refs["after_two"], **STEPS)
        np.testing.assert_array_equal(got["sharded_full"], got["full_sd"])
        assert str(got["sharded_load"]) == "<All keys matched successfully>"
        np.testing.assert_array_equal(got["sharded_loaded"], got["full_sd"])
        assert list(got["local_keys"]) == ["_flat_param", "2._flat_param", "3._flat_param"]
        assert int(got["local_numel"]) == -(-57 // n) + 2 * -(-162 // n)
        np.testing.assert_array_equal(got["local_loaded"], got["full_sd"])
        np.testing.assert_allclose(got["fsdp1_offload_steps"], refs["mlp_steps"], **STEPS)
        assert list(got["fsdp1_offload_devices"]) == ["cpu"]
        assert list(got["fsdp1_ignored_names"]) == ["_flat_param", "4.weight", "4.bias"]
        assert list(got["param_init_calls"]) == ["Linear", "Linear"]
        np.testing.assert_array_equal(got["param_init_sd"], np.full(57, 0.5))
