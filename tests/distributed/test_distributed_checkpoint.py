"""distributed.checkpoint: save and load of nested state_dicts (one process), and of an FSDP
model with its optimizer across a restart on 2 and then 4 processes (scripts/dcp.py)."""
import os
import sys

import numpy as np
import pytest

from launching import SCRIPTS, launch, needs_mpi, ok

import minitorch
import minitorch.distributed.checkpoint as dcp
from minitorch import nn
from minitorch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict, get_state_dict,
                                                         set_state_dict)

sys.path.insert(0, str(SCRIPTS))
from fsdp_models import N, data, mlp  # noqa: E402


def adam_steps(model, opt, first, last):
    for step in range(first, last):
        x, y = data("mlp", step)
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()


def test_save_load_nested_values_in_place(tmp_path):
    t = minitorch.arange(6, dtype=minitorch.float32).reshape(2, 3)
    nc = minitorch.arange(12, dtype=minitorch.float64).reshape(3, 4).t()  # non-contiguous
    state = {"a": t, "nested": {"b": nc, "list": [minitorch.ones(2, dtype=minitorch.int64), {"c": minitorch.zeros(0)}],
                                "meta": {"lr": 0.5, "names": ["x", "y"]}},
             "bf": minitorch.tensor([1.5, -2.0], dtype=minitorch.bfloat16), "epoch": 7}
    md = dcp.save(state, checkpoint_id=tmp_path / "ck")
    assert sorted(md.state_dict_metadata) == ["a", "bf", "epoch", "nested.b", "nested.list.0", "nested.list.1.c",
                                              "nested.meta.lr", "nested.meta.names"]
    assert sorted(os.listdir(tmp_path / "ck")) == [".metadata", "__0_0.distcp"]
    target = {"a": minitorch.zeros(2, 3), "nested": {"b": minitorch.zeros(4, 3, dtype=minitorch.float64),
                                                     "list": [minitorch.zeros(2, dtype=minitorch.int64),
                                                              {"c": minitorch.ones(0)}],
                                                     "meta": {"lr": 0.0, "names": []}},
              "bf": minitorch.zeros(2, dtype=minitorch.bfloat16), "epoch": 0}
    a = target["a"]
    dcp.load(target, storage_reader=dcp.FileSystemReader(tmp_path / "ck"))
    assert target["a"] is a  # in place
    np.testing.assert_array_equal(a.numpy(), t.numpy())
    np.testing.assert_array_equal(target["nested"]["b"].numpy(), nc.numpy())
    np.testing.assert_array_equal(target["nested"]["list"][0].numpy(), [1, 1])
    np.testing.assert_array_equal(target["bf"].float().numpy(), [1.5, -2.0])
    assert target["nested"]["meta"] == {"lr": 0.5, "names": ["x", "y"]} and target["epoch"] == 7


def test_load_errors_as_torch(tmp_path):
    dcp.save({"w": minitorch.ones(2, 3)}, storage_writer=dcp.FileSystemWriter(tmp_path / "ck"))
    with pytest.raises(dcp.CheckpointException) as e:
        dcp.load({"w": minitorch.ones(2, 3), "v": minitorch.ones(1)}, checkpoint_id=tmp_path / "ck")
    assert "RuntimeError: Missing key in checkpoint state_dict: v." in str(e.value)
    assert isinstance(e.value.failures[0][0], RuntimeError)
    with pytest.raises(dcp.CheckpointException) as e:
        dcp.load({"w": minitorch.ones(3, 2)}, checkpoint_id=tmp_path / "ck")
    assert "ValueError: Size mismatch between saved" in str(e.value) and "for w" in str(e.value)
    with pytest.raises(RuntimeError, match="`checkpoint_id` must be specified if storage_reader/storage_writer is "
                                           "None."):
        dcp.save({"w": minitorch.ones(1)})
    with pytest.raises(dcp.CheckpointException, match="No such file"):
        dcp.load({"w": minitorch.ones(1)}, checkpoint_id=tmp_path / "none")


def test_get_set_state_dict_restores_model_and_adam(tmp_path):
    model = mlp(0)
    opt = minitorch.optim.Adam(model.parameters(), lr=0.01)
    adam_steps(model, opt, 0, 2)
    msd, osd = get_state_dict(model, opt)
    assert list(osd["state"]) == list(msd) and osd["param_groups"][0]["params"] == list(msd)
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=tmp_path)
    adam_steps(model, opt, 2, 4)
    fresh = mlp(1)
    fresh_opt = minitorch.optim.Adam(fresh.parameters(), lr=0.01)
    msd2, osd2 = get_state_dict(fresh, fresh_opt)  # a fresh optimizer's state is made, to load into
    assert set(osd2["state"]) == set(msd2)
    state = {"model": msd2, "optim": osd2}
    dcp.load(state, checkpoint_id=tmp_path)
    set_state_dict(fresh, fresh_opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
    adam_steps(fresh, fresh_opt, 2, 4)
    for (k, a), b in zip(model.state_dict().items(), fresh.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    frozen = mlp(0)
    frozen[0].weight.requires_grad_(False)
    assert "0.weight" not in get_model_state_dict(frozen, options=StateDictOptions(ignore_frozen_params=True))


def reference_final():
    model = mlp(0)
    opt = minitorch.optim.Adam(model.parameters(), lr=0.01)
    adam_steps(model, opt, 0, 4)
    return np.concatenate([v.numpy().reshape(-1) for v in model.state_dict().values()])


@needs_mpi
@pytest.mark.parametrize("saved_by, loaded_by", [(("fsdp1", 2), ("fsdp1", 4)), (("fsdp2", 4), ("fsdp2", 2)),
                                                 (("fsdp2", 2), ("fsdp1", 4))])
def test_fsdp_checkpoint_restores_across_a_restart(tmp_path, saved_by, loaded_by):
    """Each rank writes its shards (DTensors: fully_shard's parameters, FSDP1's chunked on dim 0,
    and their Adam state); another number of ranks, and either kind of FSDP, loads them."""
    ckpt = tmp_path / "checkpoint"
    (kind, n), (load_kind, load_n) = saved_by, loaded_by
    saved = ok(launch(tmp_path, n, "dcp.py", "save", str(ckpt), kind, timeout=180))
    assert sorted(os.listdir(ckpt)) == [".metadata"] + [f"__{r}_0.distcp" for r in range(n)]
    md = dcp.FileSystemReader(ckpt).read_metadata()
    chunks = md.state_dict_metadata["app.model.2.fc1.weight"].chunks  # (12, 6): n chunks of dim 0
    assert [tuple(c.offsets) for c in chunks] == [(r * 12 // n, 0) for r in range(n)]
    assert [tuple(c.sizes) for c in chunks] == [(12 // n, 6)] * n
    assert len(md.state_dict_metadata["app.optim.state.2.fc1.weight.exp_avg"].chunks) == n
    want = reference_final()
    assert N % 4 == 0
    for r in range(n):
        np.testing.assert_allclose(saved.result(r)["final"], want, rtol=1e-9, atol=1e-12)
    loaded = ok(launch(tmp_path, load_n, "dcp.py", "load", str(ckpt), load_kind, timeout=180))
    for r in range(load_n):
        got = loaded.result(r)
        assert int(got["loaded_step"]) == 2
        np.testing.assert_allclose(got["final"], saved.result(0)["final"], rtol=1e-12, atol=1e-14)
