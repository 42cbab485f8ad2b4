"""PyTorch's legacy constructors and types (Tensor(2, 3), FloatTensor([..]), isinstance with
LongTensor, t.type(...), autograd.Variable, new_* with sizes as varargs), against PyTorch."""
import numpy as np
import pytest

import minitorch

# each case: a function of the library module, returning a tensor (or raising)
CASES = {
    "empty": lambda m: m.Tensor(),
    "sizes": lambda m: m.Tensor(2, 3),
    "size_object": lambda m: m.Tensor(m.Size([4])),
    "zero_size": lambda m: m.Tensor(0),
    "list_of_ints": lambda m: m.Tensor([1, 2]),
    "tuple_is_data": lambda m: m.Tensor((2, 3)),
    "ndarray": lambda m: m.Tensor(np.array([1, 2])),
    "int_tensor_kept": lambda m: m.Tensor(m.tensor([1, 2])),
    "long_data": lambda m: m.LongTensor([1, 2]),
    "long_size": lambda m: m.LongTensor(3),
    "float_nested": lambda m: m.FloatTensor([[1, 2]]),
    "bool_data": lambda m: m.BoolTensor([1, 0]),
    "double_size": lambda m: m.DoubleTensor(2, 2),
    "int_truncates": lambda m: m.IntTensor([1.7, -2.5]),
    "scalar_refused": lambda m: m.Tensor(2.5),
    "negative_size": lambda m: m.Tensor(-1),
    "dtype_mismatch": lambda m: m.LongTensor(m.tensor([1.0, 2.0])),
    "size_and_float": lambda m: m.Tensor(2, 3.0),
}


@pytest.mark.parametrize("case", CASES)
def test_legacy_constructor_like_torch(case):
    torch = pytest.importorskip("torch")
    try:
        want = CASES[case](torch)
    except Exception as e:  # noqa: BLE001 - the same class is expected
        with pytest.raises(type(e)):
            CASES[case](minitorch)
        return
    got = CASES[case](minitorch)
    assert type(got) is minitorch.Tensor
    assert tuple(got.shape) == tuple(want.shape)
    assert repr(got.dtype).split(".")[-1] == repr(want.dtype).split(".")[-1]
    if case not in ("sizes", "size_object", "long_size", "double_size"):  # uninitialised memory
        assert got.tolist() == want.tolist()


def test_legacy_types_for_isinstance_and_type():
    t = minitorch.ones(2)
    assert isinstance(t, minitorch.FloatTensor) and not isinstance(t, minitorch.LongTensor)
    assert isinstance(t.long(), minitorch.LongTensor) and not isinstance(t, minitorch.cuda.FloatTensor)
    assert not issubclass(minitorch.FloatTensor, minitorch.Tensor)
    assert repr(minitorch.FloatTensor) == "<class 'minitorch.FloatTensor'>"
    assert t.type() == "minitorch.FloatTensor" and t.int().type() == "minitorch.IntTensor"
    assert t.type(minitorch.LongTensor).dtype == minitorch.int64
    assert t.type("torch.DoubleTensor").dtype == minitorch.float64
    assert t.type(minitorch.int32).dtype == minitorch.int32
    with pytest.raises(ValueError, match="invalid type: 'torch.FooTensor'"):
        t.type("torch.FooTensor")


def test_tensor_of_a_tensor_shares_its_memory_and_grad():
    x = minitorch.ones(2, requires_grad=True)
    y = minitorch.Tensor(x)
    assert y is not x and y.requires_grad and y.data_ptr() == x.data_ptr()


# each case: a legacy constructor name and a NumPy array given to it
ARRAYS = {
    "tensor_float32": ("Tensor", lambda: np.arange(6, dtype=np.float32).reshape(2, 3)),
    "tensor_transposed": ("Tensor", lambda: np.arange(6, dtype=np.float32).reshape(2, 3).T),
    "tensor_float64": ("Tensor", lambda: np.arange(3, dtype=np.float64)),
    "tensor_int64": ("Tensor", lambda: np.arange(3)),
    "tensor_bool": ("Tensor", lambda: np.array([True, False])),
    "tensor_0d": ("Tensor", lambda: np.array(2.5, dtype=np.float32)),
    "float_tensor": ("FloatTensor", lambda: np.ones(3, dtype=np.float32)),
    "long_tensor": ("LongTensor", lambda: np.arange(4).reshape(2, 2)[:, 1]),
    "long_from_float": ("LongTensor", lambda: np.array([1.7, -2.5])),
    "double_tensor": ("DoubleTensor", lambda: np.ones(2)),
    "byte_tensor": ("ByteTensor", lambda: np.array([1, 2], dtype=np.uint8)),
}


@pytest.mark.parametrize("case", ARRAYS)
def test_legacy_constructor_shares_a_numpy_arrays_memory_like_torch(case):
    """Tensor(ndarray) and FloatTensor(ndarray) do not copy: a write to the array shows in the
    tensor and back, where the dtype already agrees; otherwise they copy, as PyTorch's do."""
    torch = pytest.importorskip("torch")
    name, make = ARRAYS[case]
    results = []
    for lib in (torch, minitorch):
        a = make()
        t = getattr(lib, name)(a)
        before = t.tolist()
        a[(0,) * a.ndim] = 9  # a write to the array's first element
        t[(-1,) * t.dim()] = 7  # and one to the tensor's last
        results.append((repr(t.dtype).split(".")[-1], tuple(t.shape), before, t.tolist(), a.tolist()))
    assert results[1] == results[0]


def test_legacy_constructor_warns_on_a_read_only_array_once(tmp_path):
    """A read-only array: the tensor would share memory it must not write, so PyTorch warns once
    per process (a child process here, the warning being once)."""
    import subprocess
    import sys

    from helpers import child_env

    code = ("import warnings, numpy as np, minitorch\n"
            "a = np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3))\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    t = minitorch.Tensor(a); minitorch.FloatTensor(a)\n"
            "print(len(w), 'array is not writable' in str(w[0].message), t.tolist())\n")
    out = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=120)
    assert out.stdout.split("\n")[0] == "1 True [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]", out.stderr


@pytest.mark.parametrize("bad", [np.array([1, "a"], dtype=object), np.array(["a"]), np.arange(3.0)[::-1]])
def test_legacy_constructor_refuses_arrays_as_torch(bad):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as want:
        torch.Tensor(bad)
    with pytest.raises(type(want.value)) as got:
        minitorch.Tensor(bad)
    assert str(got.value) == str(want.value)


def test_variable_is_a_tensor_with_requires_grad():
    x = minitorch.ones(2)
    v = minitorch.autograd.Variable(x, requires_grad=True)
    assert type(v) is minitorch.Tensor and v.requires_grad and not x.requires_grad
    assert v.data_ptr() == x.data_ptr()
    assert isinstance(x, minitorch.autograd.Variable)
    (v * 3).sum().backward()
    assert v.grad.tolist() == [3.0, 3.0]
    with pytest.raises(TypeError):
        minitorch.autograd.Variable([1.0])


def test_new_factories_take_sizes_as_varargs():
    x = minitorch.ones(2, dtype=minitorch.float64)
    assert x.new_ones(5, 3).shape == (5, 3) and x.new_ones(5, 3).dtype == minitorch.float64
    assert x.new_zeros((2,)).shape == (2,) and x.new_empty([3, 1]).shape == (3, 1)
    full = x.new_full((2,), 7, dtype=minitorch.int64)
    assert full.tolist() == [7, 7] and full.dtype == minitorch.int64
    assert x.new_ones(2, requires_grad=True).requires_grad
    assert x.new_tensor([1, 2]).dtype == minitorch.float64


def test_subclass_without_its_own_new_gets_the_legacy_constructor():
    class Mine(minitorch.Tensor):
        pass

    m = Mine([1.0, 2.0])
    assert type(m) is Mine and m.tolist() == [1.0, 2.0]
