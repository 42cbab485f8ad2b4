"""minitorch.version, minitorch.types, nn.common_types and backends.opt_einsum against torch's."""
import types

import numpy as np
import pytest

import minitorch


def test_version_attributes():
    torch = pytest.importorskip("torch")
    assert set(minitorch.version.__all__) == set(torch.version.__all__)
    assert minitorch.version.__version__ == minitorch.__version__
    assert minitorch.version.hip is None and minitorch.version.debug is False
    if not minitorch.cuda.is_built() or minitorch.cuda._C_cuda.emulated:
        assert minitorch.version.cuda is None
    else:
        major, minor = minitorch.version.cuda.split(".")
        assert int(major) >= 11 and minor.isdigit()


def test_types_and_common_types_names():
    torch = pytest.importorskip("torch")
    import minitorch.nn.common_types as ours_nn
    import torch.nn.common_types as theirs_nn

    wanted = [n for n in dir(theirs_nn) if n.startswith("_") and n.endswith("_t")]
    assert all(hasattr(ours_nn, n) for n in wanted)
    for n in ("Number", "Device", "Storage", "FileLike", "_size", "_int", "_float", "_bool", "_dtype", "_device",
              "_TensorOrTensors", "_Number"):
        assert hasattr(minitorch.types, n), n
    assert isinstance(3, minitorch.types._Number) and not isinstance("3", minitorch.types._Number)
    assert minitorch.types._dtype is minitorch.dtype


def test_opt_einsum_flags_as_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = minitorch.backends.opt_einsum, torch.backends.opt_einsum
    assert ours.is_available() == theirs.is_available()
    assert (ours.enabled, ours.strategy) == (theirs.enabled, theirs.strategy)
    if not theirs.is_available():
        for mod in (ours, theirs):
            with pytest.raises(ValueError, match="opt_einsum is not available, so setting `enabled` to True"):
                mod.set_flags(True)
            with pytest.raises(ValueError, match="opt_einsum is not available, so setting `strategy` to greedy"):
                with mod.flags(strategy="greedy"):
                    pass
            assert (mod.enabled, mod.strategy) == (False, None)


class _FakeOptEinsum(types.ModuleType):
    """Stands in for the opt_einsum package: the path it gives contracts the last two operands first."""

    def __init__(self):
        super().__init__("opt_einsum")
        self.calls = []

    @staticmethod
    def get_symbol(i):
        return "abcdefghijklmnopqrstuvwxyz"[i]

    def contract_path(self, eq, *operands, shapes=False, optimize="auto"):
        assert shapes
        self.calls.append((eq, operands, optimize))
        n = eq.count(",") + 1
        return [(n - 2, n - 1)] + [(0, 1)] * (n - 2), None


def test_einsum_follows_opt_einsum_path(monkeypatch):
    fake = _FakeOptEinsum()
    be = minitorch.backends
    monkeypatch.setattr(be, "_opt_einsum_package", fake)
    monkeypatch.setitem(be.opt_einsum.__dict__, "enabled", True)
    monkeypatch.setitem(be.opt_einsum.__dict__, "strategy", "greedy")
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype("float32") for s in [(2, 3), (3, 4), (4, 5), (5, 2)]]
    got = minitorch.einsum("ij,jk,kl,lm->im", *[minitorch.tensor(a) for a in arrays])
    np.testing.assert_allclose(got.numpy(), np.einsum("ij,jk,kl,lm->im", *arrays), rtol=1e-4)
    assert fake.calls == [("ab,bc,cd,de->ae", ((2, 3), (3, 4), (4, 5), (5, 2)), "greedy")]
    # two operands need no path
    minitorch.einsum("ij,jk->ik", *[minitorch.tensor(a) for a in arrays[:2]])
    assert len(fake.calls) == 1


def test_cuda_arch_list_and_sync_mode_without_device():
    if minitorch.cuda.is_available():
        pytest.skip("tests/cuda/test_cuda_sync_debug.py covers the device")
    assert minitorch.cuda.get_arch_list() == []
    with pytest.raises((RuntimeError, AssertionError)):
        minitorch.cuda.get_sync_debug_mode()


VERSIONS = ["2.13.0+minitorch.0.1.0", "2.13.0+cpu", "2.13.0", "2.13", "2.0", "1.12.1", "2.13.0a0", "2.13.0rc1",
            "2.13.0.dev20240101", "2.13.0.post1", "2.14", "10.0", "2.13.1", "parrot", (2, 13), (2, 0), (2, 13, 0),
            (2, 14), (1,)]


@pytest.mark.parametrize("mine", ["2.13.0+minitorch.0.1.0", "2.13.0+cpu", "2.0.0", "1.13.1", "parrot"])
def test_torch_version_compares_as_torchs(mine):
    torch = pytest.importorskip("torch")
    import operator

    from minitorch.torch_version import TorchVersion

    for other in VERSIONS:
        for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
            ours = theirs = None
            try:
                ours = op(TorchVersion(mine), other)
            except Exception as e:  # noqa: BLE001 - the exception class is what is compared
                ours = type(e).__name__
            try:
                theirs = op(torch.torch_version.TorchVersion(mine), other)
            except Exception as e:  # noqa: BLE001
                theirs = type(e).__name__
            assert ours == theirs, (mine, other, op.__name__)


def test_version_is_the_api_level_with_our_release():
    v = minitorch.__version__
    assert isinstance(v, str) and v.startswith("2.13.0+minitorch.")
    assert v >= "2.0" and v > (2, 12) and v < (2, 14) and v.split("+")[0] == "2.13.0"
    assert minitorch.torch_version.Version(v).major == 2 and minitorch.torch_version.Version(v).minor == 13
