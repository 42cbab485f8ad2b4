"""finfo/iinfo against PyTorch's: every attribute, repr, errors."""
import pytest

import minitorch
from helpers import torch

FLOATS = ["float32", "float64"]
INTS = ["int32", "int64"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo(name):
    f = minitorch.finfo(getattr(minitorch, name))
    assert f.dtype == name and f.bits == int(name[-2:])
    if torch is not None:
        t = torch.finfo(getattr(torch, name))
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
            assert getattr(f, attr) == getattr(t, attr), attr
        assert repr(f) == repr(t)


def test_finfo_default_dtype():
    assert minitorch.finfo().dtype == "float32"
    minitorch.set_default_dtype(minitorch.float64)
    try:
        assert minitorch.finfo().dtype == "float64"
    finally:
        minitorch.set_default_dtype(minitorch.float32)
    assert minitorch.finfo(minitorch.float32) == minitorch.finfo()


@pytest.mark.parametrize("name", INTS)
def test_iinfo(name):
    i = minitorch.iinfo(getattr(minitorch, name))
    assert i.max == 2 ** (int(name[-2:]) - 1) - 1
    if torch is not None:
        t = torch.iinfo(getattr(torch, name))
        for attr in ("bits", "max", "min", "dtype"):
            assert getattr(i, attr) == getattr(t, attr), attr
        assert repr(i) == repr(t)


@pytest.mark.parametrize("fn,arg", [("finfo", "int64"), ("finfo", "bool"), ("iinfo", "float32"), ("iinfo", "bool"),
                                    ("finfo", 3), ("iinfo", "x")])
def test_errors_as_torch(fn, arg):
    msgs = []
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        with pytest.raises(TypeError) as e:
            getattr(lib, fn)(getattr(lib, arg) if arg in FLOATS + INTS + ["bool"] else arg)
        msgs.append(str(e.value))
    assert len(set(msgs)) == 1, msgs
