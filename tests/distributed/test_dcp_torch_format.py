"""distributed.checkpoint writes and reads PyTorch's format (`.metadata` pickled with PyTorch's
class names, `__<rank>_0.distcp` items as torch.save writes them): PyTorch's dcp loads what
minitorch saved, sharded over 2 and 4 ranks or in one process, and minitorch loads what PyTorch
saved, into DTensors of another layout; the metadata unpickler refuses foreign globals."""
import os
import pickle

import numpy as np
import pytest

from launching import chunk, launch, needs_mpi, ok

import minitorch
import minitorch.distributed.checkpoint as mdcp

X = np.random.default_rng(0).standard_normal((7, 5))
# PyTorch's dcp in one process (no_dist) says so
pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is disabled:UserWarning")


def torch_dcp():
    torch = pytest.importorskip("torch")
    return torch, pytest.importorskip("torch.distributed.checkpoint")


def test_one_process_both_ways(tmp_path):
    torch, dcp = torch_dcp()
    mdcp.save({"w": minitorch.from_numpy(X.copy()), "opt": {"lr": 0.5, "b": minitorch.arange(4).float()}},
              checkpoint_id=tmp_path / "mine", no_dist=True)
    theirs = {"w": torch.zeros(7, 5, dtype=torch.float64), "opt": {"lr": 0.0, "b": torch.zeros(4)}}
    dcp.load(theirs, checkpoint_id=str(tmp_path / "mine"), no_dist=True)
    np.testing.assert_array_equal(theirs["w"].numpy(), X)
    assert theirs["opt"]["lr"] == 0.5 and theirs["opt"]["b"].tolist() == [0.0, 1.0, 2.0, 3.0]
    md = dcp.FileSystemReader(str(tmp_path / "mine")).read_metadata()
    assert md.planner_data == {"w": ("w",), "opt.lr": ("opt", "lr"), "opt.b": ("opt", "b")}
    assert md.state_dict_metadata["w"].properties.dtype == torch.float64
    assert md.state_dict_metadata["w"].size == torch.Size([7, 5])

    dcp.save({"w": torch.from_numpy(X * 3), "opt": {"lr": 0.25, "b": torch.ones(4, dtype=torch.int64)}},
             checkpoint_id=str(tmp_path / "theirs"), no_dist=True)
    mine = {"w": minitorch.zeros(7, 5, dtype=minitorch.float64),
            "opt": {"lr": 0.0, "b": minitorch.zeros(4, dtype=minitorch.int64)}}
    mdcp.load(mine, checkpoint_id=tmp_path / "theirs", no_dist=True)
    np.testing.assert_array_equal(mine["w"].numpy(), X * 3)
    assert mine["opt"]["lr"] == 0.25 and mine["opt"]["b"].tolist() == [1, 1, 1, 1]
    md = mdcp.FileSystemReader(tmp_path / "theirs").read_metadata()
    assert md.state_dict_metadata["w"].properties.dtype == minitorch.float64
    assert md.state_dict_metadata["w"].size == (7, 5) and isinstance(md.state_dict_metadata["w"].size, minitorch.Size)


def test_compressed_items_both_ways(tmp_path):
    """torch 2.13's FileSystemWriter(_extensions=[ZStandard()]) compresses each item (zstd, its
    descriptor "stream.zstd/1" in the item's _StorageInfo): minitorch reads that, and writes it."""
    torch, dcp = torch_dcp()
    from torch.distributed.checkpoint._extension import ZStandard as TorchZStandard

    from minitorch.distributed.checkpoint._extension import ExtensionRegistry, ZStandard

    if not ZStandard.is_available():
        pytest.skip("zstd needs the zstandard or the pyzstd module")
    big = np.zeros((64, 64))  # compresses well: the item is shorter than torch.save's bytes
    dcp.save({"w": torch.from_numpy(X), "big": torch.from_numpy(big), "opt": {"lr": 0.5}},
             storage_writer=dcp.FileSystemWriter(str(tmp_path / "theirs"), _extensions=[TorchZStandard()]),
             no_dist=True)
    md = mdcp.FileSystemReader(tmp_path / "theirs").read_metadata()
    infos = list(md.storage_data.values())
    assert infos and all(list(i.transform_descriptors) == ["stream.zstd/1"] for i in infos)
    assert max(i.length for i in infos) < big.nbytes // 4
    mine = {"w": minitorch.zeros(7, 5, dtype=minitorch.float64), "big": minitorch.ones(64, 64, dtype=minitorch.float64),
            "opt": {"lr": 0.0}}
    mdcp.load(mine, checkpoint_id=tmp_path / "theirs", no_dist=True)
    np.testing.assert_array_equal(mine["w"].numpy(), X)
    np.testing.assert_array_equal(mine["big"].numpy(), big)
    assert mine["opt"]["lr"] == 0.5

    mdcp.save({"w": minitorch.from_numpy(X * 2), "big": minitorch.from_numpy(big), "step": 4},
              storage_writer=mdcp.FileSystemWriter(tmp_path / "mine", _extensions=[ZStandard()]), no_dist=True)
    theirs = {"w": torch.zeros(7, 5, dtype=torch.float64), "big": torch.ones(64, 64, dtype=torch.float64), "step": 0}
    dcp.load(theirs, checkpoint_id=str(tmp_path / "mine"), no_dist=True)
    np.testing.assert_array_equal(theirs["w"].numpy(), X * 2)
    np.testing.assert_array_equal(theirs["big"].numpy(), big)
    assert theirs["step"] == 4
    tmd = dcp.FileSystemReader(str(tmp_path / "mine")).read_metadata()
    assert all(list(i.transform_descriptors) == ["stream.zstd/1"] for i in tmd.storage_data.values())
    with pytest.raises(ValueError, match="Unknown extension name='stream.lz4'"):
        ExtensionRegistry().from_descriptor_list(["stream.lz4/1"])
    with pytest.raises(ValueError, match="Unknown extension version='2'"):
        ExtensionRegistry().from_descriptor_list(["stream.zstd/2"])


def test_metadata_refuses_other_globals(tmp_path):
    (tmp_path / ".metadata").write_bytes(pickle.dumps(os.system))
    with pytest.raises(pickle.UnpicklingError, match="may not name the global"):
        mdcp.FileSystemReader(tmp_path).read_metadata()


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_sharded_over_ranks_both_ways(tmp_path, n):
    torch, dcp = torch_dcp()
    where = tmp_path / f"dcp_torch-{n}-launcher"  # the script's folder (launch's)
    dcp.save({"model": {"w": torch.from_numpy(X * 2), "b": torch.arange(5, dtype=torch.float32)}, "step": 9},
             checkpoint_id=str(where / "theirs"), no_dist=True)
    run = ok(launch(tmp_path, n, "dcp_torch.py", timeout=120))
    for r in range(n):
        got = run.result(r)
        c0, nc = chunk(5, n, r)
        np.testing.assert_array_equal(got["w_local"], (X * 2)[:, c0:c0 + nc])
        np.testing.assert_array_equal(got["w_full"], X * 2)
        np.testing.assert_array_equal(got["b"], np.arange(5, dtype=np.float32))
        assert int(got["step"]) == 9
    theirs = {"model": {"rows": torch.zeros(7, 5, dtype=torch.float64), "cols": torch.zeros(7, 5),
                        "rep": torch.zeros(7, 5, dtype=torch.float64), "plain": torch.zeros(6, dtype=torch.int64)},
              "step": 0, "name": ""}
    dcp.load(theirs, checkpoint_id=str(run.out / "mine"), no_dist=True)
    np.testing.assert_array_equal(theirs["model"]["rows"].numpy(), X)
    np.testing.assert_array_equal(theirs["model"]["cols"].numpy(), X.astype(np.float32))
    np.testing.assert_array_equal(theirs["model"]["rep"].numpy(), X * 2)
    assert theirs["model"]["plain"].tolist() == list(range(6)) and theirs["step"] == 3 and theirs["name"] == "mlp"
    md = dcp.FileSystemReader(str(run.out / "mine")).read_metadata()
    assert [tuple(c.offsets) for c in md.state_dict_metadata["model.rows"].chunks] == [
        (chunk(7, n, k)[0], 0) for k in range(n) if chunk(7, n, k)[1]]
