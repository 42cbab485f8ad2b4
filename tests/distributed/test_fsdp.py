"""FullyShardedDataParallel and DeviceMesh over 2 and 4 processes (scripts/fsdp.py) against one
process training on the full batch: minitorch's, and PyTorch's where it is installed."""
import sys

import numpy as np
import pytest

from launching import SCRIPTS, launched_once, needs_mpi

import minitorch
from minitorch import nn

sys.path.insert(0, str(SCRIPTS))
from fsdp_models import data, mlp, tied, train, transformer  # noqa: E402

FULL_NAMES = ["0.weight", "0.bias", "2.fc1.weight", "2.fc1.bias", "2.fc2.weight", "2.fc2.bias", "3.fc1.weight",
              "3.fc1.bias", "3.fc2.weight", "3.fc2.bias", "4.weight", "4.bias"]


def dim0_share(shape, n, r):
    """The elements of rank r's chunk of a parameter sharded on dim 0 (torch.chunk's split)."""
    rows = -(-shape[0] // n)
    start = min(rows * r, shape[0])
    return max(0, min(rows, shape[0] - start)) * int(np.prod(shape[1:]))


def clip(model):
    return nn.utils.clip_grad_norm_(model.parameters(), 0.5)


def mixed_precision_steps(steps):
    """SGD of mlp(0) in float64 whose gradients are computed by a float32 copy of it."""
    master = mlp(0)
    work = mlp(0).float()
    out = []
    for step in range(steps):
        with minitorch.no_grad():
            for w, p in zip(work.parameters(), master.parameters()):
                w.copy_(p)
        x, y = data("mlp", step)
        work.zero_grad()
        nn.functional.mse_loss(work(x.float()), y.float()).backward()
        with minitorch.no_grad():
            for w, p in zip(work.parameters(), master.parameters()):
                p -= 0.1 * w.grad.double()
        out.append(np.concatenate([v.numpy().reshape(-1) for v in master.state_dict().values()]))
    return np.stack(out)


def references():
    """One process, the full batch: the same trainings as scripts/fsdp.py's."""
    out = {}
    _, out["full_steps"], out["full_norms"] = train(mlp(0), "mlp", 4, clip=clip)
    m = mlp(0)
    opt, out["orig_steps"], _ = train(m, "mlp", 4, optim="adam")
    out["orig_exp_avg"] = np.concatenate([opt.state[p]["exp_avg"].numpy().reshape(-1) for p in m.parameters()])
    x, y = data("mlp", 4)
    opt.zero_grad()
    nn.functional.mse_loss(m(x), y).backward()
    opt.step()
    out["continued_step"] = np.concatenate([v.numpy().reshape(-1) for v in m.state_dict().values()])
    _, out["noshard_steps"], _ = train(mlp(0), "mlp", 3)
    out["mp_steps"] = mixed_precision_steps(3)
    _, out["tied_steps"], _ = train(tied(0), "mlp", 3)
    _, out["tf_steps"], _ = train(transformer(0), "transformer", 3)
    out["fs_steps"] = out["tf_steps"]
    _, out["hybrid_steps"], _ = train(mlp(0), "mlp", 3)
    return out


def torch_references():
    """PyTorch, one process, the same models (started from minitorch's parameters)."""
    torch = pytest.importorskip("torch")

    class Block(torch.nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc1, self.fc2 = torch.nn.Linear(d, 2 * d), torch.nn.Linear(2 * d, d)

        def forward(self, x):
            return x + self.fc2(torch.nn.functional.gelu(self.fc1(x)))

    def layer():
        return torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)

    def run(ours, theirs, kind, steps, optim="sgd", clip=False):
        theirs = theirs.double()
        theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
        opt = (torch.optim.SGD(theirs.parameters(), lr=0.1) if optim == "sgd"
               else torch.optim.Adam(theirs.parameters(), lr=0.01))
        states = []
        for step in range(steps):
            x, y = data(kind, step)
            opt.zero_grad()
            torch.nn.functional.mse_loss(theirs(torch.tensor(x.numpy())), torch.tensor(y.numpy())).backward()
            if clip:
                torch.nn.utils.clip_grad_norm_(theirs.parameters(), 0.5)
            opt.step()
            states.append(np.concatenate([v.detach().numpy().reshape(-1) for v in theirs.state_dict().values()]))
        return np.stack(states)

    def torch_mlp():
        return torch.nn.Sequential(torch.nn.Linear(5, 6), torch.nn.Tanh(), Block(6), Block(6), torch.nn.Linear(6, 3))

    return {"full_steps": run(mlp(0), torch_mlp(), "mlp", 4, clip=True),
            "orig_steps": run(mlp(0), torch_mlp(), "mlp", 4, optim="adam"),
            "tf_steps": run(transformer(0), torch.nn.Sequential(torch.nn.Linear(5, 8), layer(), layer(),
                                                                torch.nn.Linear(8, 3)), "transformer", 3)}


@pytest.fixture(scope="module")
def refs():
    return references()


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    """scripts/fsdp.py's results on n processes, launched once per n for all the tests here."""
    return launched_once(tmp_path_factory, "fsdp.py", timeout=240)


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_fsdp_trains_as_one_process(launched, refs, n):
    res = launched(n)
    total = sum(p.numel() for p in mlp(0).parameters())
    tf_total = sum(p.numel() for p in transformer(0).parameters())
    for r in range(n):
        got = res[r]
        # step by step, on every rank: single-process full-batch training
        for key in ("full_steps", "orig_steps", "noshard_steps", "tf_steps", "hybrid_steps", "fs_steps"):
            np.testing.assert_allclose(got[key], refs[key], rtol=1e-9, atol=1e-11, err_msg=key)
        for orig in (False, True):  # the tied weight: one parameter, both uses' gradients
            np.testing.assert_allclose(got[f"tied_steps_{orig}"], refs["tied_steps"], rtol=1e-9, atol=1e-11)
            assert list(got[f"tied_keys_{orig}"]) == list(tied(0).state_dict())
        # no_sync: the first micro-batch's gradients stayed unreduced (no .grad yet), the second
        # backward reduced both: the full batch's step
        assert got["grads_after_no_sync"].all()
        np.testing.assert_allclose(got["accumulated_steps"], refs["noshard_steps"], rtol=1e-9, atol=1e-11)
        assert str(got["err_no_sync_inner"]).startswith("AssertionError: `no_sync()` on inner FSDP instances")
        np.testing.assert_allclose(got["full_norms"], refs["full_norms"], rtol=1e-10)
        assert (refs["full_norms"] > 0.5).any()  # the clipping did clip
        # each rank keeps 1/n of every unit (the root's 57 parameters, each Block's 162), rounded
        # up; the original parameters' pieces leave out the padding; NO_SHARD keeps all
        assert int(got["full_local_numel"]) == -(-57 // n) + 2 * -(-162 // n)
        assert 0 < int(got["orig_local_numel"]) <= int(got["full_local_numel"])
        assert 0 < int(got["tf_local_numel"]) <= tf_total / n + 3
        assert int(got["noshard_local_numel"]) == total
        shard_world = n // 2 if n >= 4 else n  # HYBRID_SHARD shards along the mesh's second dimension
        assert int(got["hybrid_local_numel"]) == -(-57 // shard_world) + 2 * -(-162 // shard_world)
        # mixed precision: float32's steps (the float64 shards updated from float32 gradients)
        np.testing.assert_allclose(got["mp_steps"], refs["mp_steps"], rtol=1e-5, atol=1e-6)
        assert np.abs(got["mp_steps"] - refs["noshard_steps"]).max() > 1e-9  # not float64's
        assert set(got["mp_param_dtypes"]) == {"minitorch.float64"}
        assert list(got["full_held"]) == [True, False, False]
        np.testing.assert_array_equal(got["full_backward_comm"], [2, 3])
        assert list(got["orig_held"]) == [True] * 5  # the root and the four Linears of the Blocks
        np.testing.assert_array_equal(got["orig_backward_comm"], [0, 5])
        assert list(got["full_names"]) == ["_flat_param", "2._flat_param", "3._flat_param"]
        assert int(got["full_units"]) == 3 and int(got["tf_units"]) == 3
        assert list(got["orig_names"]) == FULL_NAMES
        # the optimizer's state gathered under the original names; loaded, it resumes exactly
        assert list(got["orig_osd_names"]) == FULL_NAMES and list(got["orig_osd_groups"]) == FULL_NAMES
        np.testing.assert_allclose(got["orig_exp_avg"], refs["orig_exp_avg"], rtol=1e-9, atol=1e-13)
        assert int(got["full_osd_len"]) == (2 if r == 0 else 0)
        np.testing.assert_allclose(got["continued_step"], refs["continued_step"], rtol=1e-9, atol=1e-11)
        np.testing.assert_array_equal(got["resumed_step"], got["continued_step"])
        # fully_shard (FSDP2): the classes, the shards, the state (model and Adam) through get/set_state_dict
        assert list(got["fs_class"]) == ["FSDPSequential", "FSDPTransformerEncoderLayer", "True"]
        assert int(got["fs_local_numel"]) == sum(dim0_share(tuple(p.shape), n, r) for p in transformer(0).parameters())
        assert len(got["fs_osd_names"]) == len(transformer(0).state_dict())
        np.testing.assert_array_equal(got["fs_loaded"], got["fs_saved"])
        np.testing.assert_array_equal(got["fs_loaded_exp_avg"], got["fs_saved_exp_avg"])
        assert str(got["err_fs_twice"]).startswith("ValueError: fully_shard was applied to this module already")
    assert sum(int(res[r]["fs_local_numel"]) for r in range(n)) == tf_total
    assert sum(int(res[r]["orig_local_numel"]) for r in range(n)) == total  # the pieces partition the model
    assert sum(int(res[r]["tf_local_numel"]) for r in range(n)) == tf_total


@needs_mpi
def test_fsdp_state_dict_summon_and_errors(launched):
    n = 2
    res = launched(n)
    for r in range(n):
        got = res[r]
        assert list(got["sd_keys"]) == FULL_NAMES
        assert int(got["rank0_only_len"]) == (len(FULL_NAMES) if r == 0 else 0)
        assert str(got["load_result"]) == "<All keys matched successfully>"
        np.testing.assert_array_equal(got["loaded_sd"], got["full_steps"][-1])
        np.testing.assert_array_equal(got["loaded_out"], got["saved_out"])
        np.testing.assert_array_equal(got["synced"], np.concatenate([v.numpy().reshape(-1)
                                                                     for v in mlp(0).state_dict().values()]))
        assert list(got["summoned_shapes"]) == ["(6, 5)", "(6,)"]
        np.testing.assert_array_equal(got["written_back"], np.full((6, 5), 2.0))
        assert not np.any(got["not_written_back"] == 7.0)
        assert str(got["err_clip_nonroot"]) == ("RuntimeError: `clip_grad_norm_()` should only be called on the root "
                                                "FSDP instance")
        assert str(got["err_dtype"]).startswith("ValueError: Must flatten tensors with uniform dtype but got")
        assert str(got["err_requires_grad"]) == ("ValueError: Must flatten tensors with uniform `requires_grad` when "
                                                 "`use_orig_params=False`")
        assert str(got["frozen_orig_ok"]) == ""
        assert str(got["err_summon_in_forward"]) == ("AssertionError: Cannot manually unshard parameters during "
                                                     "forward/backward")
        assert str(got["err_rank0_writeback"]) == ("NotImplementedError: writeback=True and rank0_only=True is not "
                                                   "supported yet")


@needs_mpi
def test_device_mesh(launched):
    n = 4
    for r in range(n):
        got = launched(n)[r]
        np.testing.assert_array_equal(got["mesh1"], [n, r, 1, n])
        dp_rank, tp_rank = divmod(r, n // 2)
        tp_sum = sum(range(dp_rank * (n // 2), (dp_rank + 1) * (n // 2)))
        np.testing.assert_array_equal(got["mesh2"], [n, 2, n // 2, 2, n // 2, dp_rank, tp_rank, dp_rank, tp_rank,
                                                     tp_sum])
        np.testing.assert_array_equal(got["mesh2_coord"], [dp_rank, tp_rank])
        np.testing.assert_array_equal(got["mesh2_dp_ranks"], [tp_rank, tp_rank + n // 2])
        np.testing.assert_array_equal(got["mesh2_shape"], [2, n // 2])
        assert list(got["mesh2_names"]) == ["tp"]
        assert ("Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1."
                in str(got["err_mesh_group"]))
        assert str(got["err_mesh_key"]).startswith("KeyError: \"Invalid mesh_dim_names ('pp',) specified.")
        assert str(got["err_mesh_names"]) == ("RuntimeError: mesh_shape and mesh_dim_names should have same length! "
                                              "Found len(mesh_dim_names): 2 and len(mesh_shape):1.")
        assert str(got["err_mesh_big"]) == (f"RuntimeError: Mesh should not be bigger than default world size {n}, "
                                            f"but found {2 * n} ranks!")
        assert str(got["err_mesh_slice"]) == "RuntimeError: Cannot slice a DeviceMesh without mesh_dim_names!"


def test_fsdp_single_process_references_match_torch(refs):
    for key, want in torch_references().items():
        np.testing.assert_allclose(refs[key], want, rtol=1e-9, atol=1e-11, err_msg=key)


def test_wrap_policies():
    import functools

    from minitorch.distributed.fsdp.wrap import (ModuleWrapPolicy, _recursive_wrap, size_based_auto_wrap_policy,
                                                 transformer_auto_wrap_policy)

    wrapped = []

    def record(m):
        wrapped.append(type(m).__name__)
        return m

    _recursive_wrap(mlp(0), functools.partial(size_based_auto_wrap_policy, min_num_params=100), record,
                    only_wrap_children=True)
    assert wrapped == ["Block", "Block"]  # 162 parameters each; the Linears (36, 21) stay in the root
    wrapped.clear()
    _recursive_wrap(mlp(0), functools.partial(size_based_auto_wrap_policy, min_num_params=60), record,
                    only_wrap_children=True)
    assert wrapped == ["Linear"] * 4  # the Blocks' own Linears (84, 78) first; nothing left for the Blocks
    wrapped.clear()
    _recursive_wrap(transformer(0), functools.partial(transformer_auto_wrap_policy,
                                                      transformer_layer_cls={nn.TransformerEncoderLayer}), record,
                    only_wrap_children=True)
    assert wrapped == ["TransformerEncoderLayer", "TransformerEncoderLayer"]
    wrapped.clear()
    _recursive_wrap(mlp(0), ModuleWrapPolicy({nn.Linear}), record, only_wrap_children=True)
    assert wrapped == ["Linear"] * 6
    # MultiheadAttention is a leaf for the size policy: never looked into
    assert not size_based_auto_wrap_policy(nn.MultiheadAttention(8, 2), recurse=True, nonwrapped_numel=10 ** 9)
    assert not size_based_auto_wrap_policy(nn.ModuleList([nn.Linear(99, 99)]), recurse=False,
                                           nonwrapped_numel=10 ** 9)


def test_fsdp_without_a_process_group_raises_as_torch():
    """PyTorch's words (its CPU build stops earlier: FSDP there needs an accelerator; minitorch's
    runs on the CPU too)."""
    from minitorch.distributed.fsdp import FullyShardedDataParallel as FSDP

    with pytest.raises(ValueError, match="Default process group has not been initialized, please make sure to call "
                                         "init_process_group"):
        FSDP(nn.Linear(2, 2))
