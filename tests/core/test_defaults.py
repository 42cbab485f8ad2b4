"""The defaults of factories, against PyTorch: set_default_dtype / get_default_dtype (what follows
the default float dtype), set_default_tensor_type (deprecated), set_default_device /
get_default_device and `with minitorch.device(...)` (per thread). The CUDA half of the device
tests is in tests/cuda/test_cuda_defaults.py."""
import threading
import warnings

import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")


@pytest.fixture
def float64_default():
    """Both libraries' default dtype float64 for the test, float32 again after."""
    minitorch.set_default_dtype(minitorch.float64)
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        minitorch.set_default_dtype(minitorch.float32)
        torch.set_default_dtype(torch.float32)


MAKERS = {
    "tensor_floats": lambda L: L.tensor([1.5, 2.0]),
    "tensor_float": lambda L: L.tensor(2.5),
    "tensor_ints": lambda L: L.tensor([1, 2]),
    "tensor_mixed": lambda L: L.tensor([1, 2.5]),
    "tensor_numpy_float32": lambda L: L.tensor(np.float32(1.0)),
    "zeros": lambda L: L.zeros(2),
    "ones": lambda L: L.ones(2, 3),
    "empty": lambda L: L.empty(2),
    "full_float": lambda L: L.full((2,), 1.5),
    "full_int": lambda L: L.full((2,), 1),
    "full_bool": lambda L: L.full((2,), True),
    "arange_float": lambda L: L.arange(0.0, 1.0, 0.25),
    "arange_int": lambda L: L.arange(3),
    "linspace": lambda L: L.linspace(0, 1, 3),
    "logspace": lambda L: L.logspace(0, 1, 3),
    "eye": lambda L: L.eye(2),
    "rand": lambda L: L.rand(2),
    "randn": lambda L: L.randn(2),
    "randint": lambda L: L.randint(0, 3, (2,)),
    "randperm": lambda L: L.randperm(3),
    "int_times_float": lambda L: L.arange(3) * 1.5,
    "bool_plus_float": lambda L: L.tensor([True]) + 0.5,
    "exp_of_int": lambda L: L.exp(L.arange(2)),
    "div_of_ints": lambda L: L.arange(1, 3) / 2,
    "mean_of_float32": lambda L: L.ones(2, dtype=L.float32).mean(),
    "float32_times_float": lambda L: L.ones(2, dtype=L.float32) * 1.5,
    "legacy_Tensor": lambda L: L.Tensor(2, 3),
    "legacy_Tensor_data": lambda L: L.Tensor([1, 2]),
    "legacy_FloatTensor": lambda L: L.FloatTensor(2),
    "linear_weight": lambda L: L.nn.Linear(2, 2).weight,
    "zeros_like_int": lambda L: L.zeros_like(L.arange(2)),
}


@pytest.mark.parametrize("make", MAKERS.values(), ids=MAKERS.keys())
def test_dtypes_follow_the_default_as_torchs(make, float64_default):
    assert minitorch.get_default_dtype() == minitorch.float64 and torch.get_default_dtype() == torch.float64
    assert str(make(minitorch).dtype).split(".")[-1] == str(make(torch).dtype).split(".")[-1]


@pytest.mark.parametrize("make", MAKERS.values(), ids=MAKERS.keys())
def test_dtypes_of_the_initial_default(make):
    assert minitorch.get_default_dtype() == minitorch.float32
    assert str(make(minitorch).dtype).split(".")[-1] == str(make(torch).dtype).split(".")[-1]


@pytest.mark.parametrize("bad", ["int64", "bool", "str", "int", "None"])
def test_set_default_dtype_errors_as_torch(bad):
    values = {"int64": lambda L: L.int64, "bool": lambda L: L.bool, "str": lambda L: "float64",
              "int": lambda L: 3, "None": lambda L: None}
    msgs = []
    for lib in (minitorch, torch):
        with pytest.raises(TypeError) as e:
            lib.set_default_dtype(values[bad](lib))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert minitorch.get_default_dtype() == minitorch.float32


@pytest.mark.parametrize("t", ["DoubleTensor", "torch.DoubleTensor", "FloatTensor"])
def test_set_default_tensor_type_as_torch(t):
    try:
        for lib in (minitorch, torch):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                lib.set_default_tensor_type(t if "." in t else getattr(lib, t))
            # (PyTorch's is TORCH_WARN_ONCE: once a process; minitorch's each time, as Python's)
            assert [str(m.message).split(" (Triggered")[0] for m in w] == [
                "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                "torch.set_default_dtype() and torch.set_default_device() as alternatives."] or lib is torch
        assert str(minitorch.get_default_dtype()).split(".")[-1] == str(torch.get_default_dtype()).split(".")[-1]
        assert str(minitorch.Tensor([1.5]).dtype).split(".")[-1] == str(torch.Tensor([1.5]).dtype).split(".")[-1]
    finally:
        minitorch.set_default_dtype(minitorch.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("t", ["LongTensor", "float64", "three", "foo"])
def test_set_default_tensor_type_errors_as_torch(t):
    args = {"LongTensor": lambda L: L.LongTensor, "float64": lambda L: L.float64, "three": lambda L: 3,
            "foo": lambda L: "foo"}
    got = []
    for lib in (minitorch, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as e:  # noqa: PT011 - compared below
                lib.set_default_tensor_type(args[t](lib))
        got.append((type(e.value), str(e.value)))
    assert got[0] == got[1]
    assert minitorch.get_default_dtype() == minitorch.float32


def test_default_device_on_the_cpu():
    assert minitorch.get_default_device() == minitorch.device("cpu")
    assert repr(minitorch.get_default_device()) == repr(torch.get_default_device()).replace("torch.", "")
    minitorch.set_default_device("cpu")
    try:
        assert minitorch.zeros(2).device == minitorch.device("cpu")
        assert minitorch.get_default_device() == minitorch.device("cpu")
    finally:
        minitorch.set_default_device(None)
    d = minitorch.device("cpu")
    with d as entered:
        assert entered is d and minitorch.tensor([1.0]).device.type == "cpu"
    assert minitorch._C._get_default_device() is None


def test_device_context_and_threads_without_cuda():
    """`with device(...)` holds on its own thread only, and ends with the block (even on error)."""
    seen = []
    with pytest.raises(ValueError):
        with minitorch.device("cpu"):
            worker = threading.Thread(target=lambda: seen.append(minitorch._C._get_default_device()))
            worker.start()
            worker.join()
            assert minitorch._C._get_default_device() == minitorch.device("cpu")
            raise ValueError
    assert seen == [None] and minitorch._C._get_default_device() is None


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="the CUDA case is tests/cuda's")
def test_default_cuda_device_without_cuda_fails_as_a_cuda_factory():
    minitorch.set_default_device("cuda")
    try:
        assert minitorch.empty(2, device="cpu").device.type == "cpu"
        with pytest.raises((RuntimeError, AssertionError)) as default:
            minitorch.zeros(2)
        with pytest.raises(type(default.value)) as explicit:
            minitorch.zeros(2, device="cuda")
        assert str(default.value) == str(explicit.value)
    finally:
        minitorch.set_default_device(None)
