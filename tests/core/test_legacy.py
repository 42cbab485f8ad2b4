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
