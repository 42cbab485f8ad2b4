"""Elementwise ops against NumPy (float64) and PyTorch, over shapes, layouts and broadcasting."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import arrays, broadcastable_pair, check, layouts, raises_like_torch, shapes, torch

FLOATS = ("float32", "float64")
NUMERIC = ("float32", "float64", "int64", "int32")

BINARY = {
    "add": (lambda m, x, y: m.add(x, y), np.add),
    "sub": (lambda m, x, y: m.sub(x, y), np.subtract),
    "mul": (lambda m, x, y: m.mul(x, y), np.multiply),
    "div": (lambda m, x, y: m.div(x, y), np.true_divide),
    "add_alpha": (lambda m, x, y: m.add(x, y, alpha=3), lambda x, y: x + 3 * y),
    "sub_alpha": (lambda m, x, y: x.sub(y, alpha=2), lambda x, y: x - 2 * y),
    "op+": (lambda m, x, y: x + y, np.add),
    "op-": (lambda m, x, y: x - y, np.subtract),
    "op*": (lambda m, x, y: x * y, np.multiply),
    "op/": (lambda m, x, y: x / y, np.true_divide),
}


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", NUMERIC)
@given(data=st.data(), layout=layouts)
def test_binary(name, dtype, data, layout):
    fn, ref = BINARY[name]
    sa, sb = data.draw(broadcastable_pair())
    low = 1 if name.startswith(("div", "op/")) else -10  # keep divisors away from 0
    a = data.draw(arrays(dtype, sa))
    b = data.draw(arrays(dtype, sb, low=low, high=10))
    check(fn, ref, [a, b], layout=layout if a.ndim and b.ndim else "contiguous", atol=1e-5)


@pytest.mark.parametrize("dtype_a", ("float32", "float64", "int64", "int32", "bool"))
@pytest.mark.parametrize("dtype_b", ("float32", "float64", "int64", "int32", "bool"))
def test_type_promotion_tensors(dtype_a, dtype_b):
    a = np.array([[1, 0, 3]], dtype=dtype_a)
    b = np.array([[2], [1]], dtype=dtype_b)
    if dtype_a == dtype_b == "bool":
        check(lambda m, x, y: x + y, np.logical_or, [a, b], dtype=minitorch.bool)
        check(lambda m, x, y: x * y, np.logical_and, [a, b], dtype=minitorch.bool)
        return
    check(lambda m, x, y: x * y, np.multiply, [a, b])
    check(lambda m, x, y: x / y, np.true_divide, [a, b])


@pytest.mark.parametrize(
    "dtype, scalar, expected",
    [
        ("int64", 2.5, minitorch.float32),   # a Python float makes an int tensor float32
        ("int32", 5, minitorch.int32),       # a Python int keeps the tensor's int dtype
        ("bool", 1, minitorch.int64),
        ("bool", True, minitorch.bool),
        ("float64", 2, minitorch.float64),
        ("float32", 2.5, minitorch.float32),
    ],
)
def test_type_promotion_scalars(dtype, scalar, expected):
    a = np.array([1, 0, 1], dtype=dtype)
    check(lambda m, x, s: x + s, np.add, [a], scalars=[scalar], dtype=expected)
    check(lambda m, x, s: s + x, lambda x, s: s + x, [a], scalars=[scalar], dtype=expected)


def test_zero_dim_tensor_does_not_promote_past_its_category():
    x = minitorch.tensor([1, 2], dtype=minitorch.int32)
    assert (x + minitorch.tensor(5)).dtype == minitorch.int32
    assert (x + minitorch.tensor(5.0)).dtype == minitorch.float32
    y = minitorch.tensor([1.0, 2.0])
    assert (y + minitorch.tensor(5.0, dtype=minitorch.float64)).dtype == minitorch.float32
    assert (minitorch.tensor(1.0, dtype=minitorch.float64) + minitorch.tensor(2)).dtype == minitorch.float64


@pytest.mark.parametrize("scalar", [2, -1.5, 0.25])
@pytest.mark.parametrize("dtype", FLOATS)
def test_reflected_scalar_operators(scalar, dtype):
    a = np.array([[1.0, -2.0], [3.0, 4.0]], dtype=dtype)
    check(lambda m, x, s: s - x, lambda x, s: s - x, [a], scalars=[scalar])
    check(lambda m, x, s: s / x, lambda x, s: s / x, [a], scalars=[scalar])
    check(lambda m, x, s: s * x, lambda x, s: s * x, [a], scalars=[scalar])
    check(lambda m, x, s: x - s, lambda x, s: x - s, [a], scalars=[scalar])


@pytest.mark.parametrize("dtype", NUMERIC)
@given(data=st.data(), layout=layouts)
def test_neg_relu_clamp_min(dtype, data, layout):
    a = data.draw(arrays(dtype, shapes()))
    lay = layout if a.ndim else "contiguous"
    check(lambda m, x: -x, np.negative, [a], layout=lay)
    check(lambda m, x: m.neg(x), np.negative, [a], layout=lay)
    check(lambda m, x: m.relu(x), lambda x: np.maximum(x, 0), [a], layout=lay)
    check(lambda m, x: x.clamp_min(2), lambda x: np.maximum(x, 2), [a], layout=lay)
    check(lambda m, x: x.clamp_min(-0.5), lambda x: np.maximum(x, -0.5), [a], layout=lay)


def test_relu_propagates_nan():
    x = minitorch.tensor([float("nan"), -1.0, 2.0])
    out = x.relu().tolist()
    assert np.isnan(out[0]) and out[1:] == [0.0, 2.0]


@pytest.mark.parametrize(
    "fn",
    [lambda m, x: m.relu(x), lambda m, x: x.relu(), lambda m, x: m.relu_(x), lambda m, x: m.nn.functional.relu(x),
     lambda m, x: m.nn.functional.relu(x, inplace=True), lambda m, x: m.nn.ReLU()(x), lambda m, x: m.relu(x[:0])],
)
def test_relu_of_bool_raises_like_torch(fn):
    # relu(bool) went through clamp_min(bool, 0) and returned int64; PyTorch refuses it.
    assert raises_like_torch(fn, np.array([True, False])) is RuntimeError
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        fn(minitorch, minitorch.tensor([True, False]))


@pytest.mark.parametrize("name", ["add_", "sub_", "mul_", "div_"])
@given(data=st.data(), layout=layouts)
def test_inplace_matches_out_of_place(name, data, layout):
    sa, sb = data.draw(broadcastable_pair())
    shape = np.broadcast_shapes(sa, sb)
    a = data.draw(arrays("float32", shape))
    b = data.draw(arrays("float32", sb, low=1, high=5))
    x = minitorch.tensor(a)
    if layout != "contiguous" and a.ndim:
        from helpers import to_layout

        x = to_layout(a, layout)
    y = minitorch.tensor(b)
    expected = getattr(x, name[:-1])(y).tolist()
    v0 = x._version
    r = getattr(x, name)(y)
    assert r is x
    assert x._version == v0 + 1
    np.testing.assert_allclose(np.array(x.tolist(), dtype=np.float64), np.array(expected, dtype=np.float64), rtol=1e-6)


def test_inplace_operators_keep_identity_and_storage():
    x = minitorch.ones(2, 3)
    ptr, ident = x.data_ptr(), id(x)
    x += 1
    x *= minitorch.tensor([1.0, 2.0, 3.0])
    x -= 0.5
    x /= 2
    assert id(x) == ident and x.data_ptr() == ptr
    np.testing.assert_allclose(x.numpy(), [[0.75, 1.75, 2.75]] * 2)


def test_inplace_on_a_view_writes_the_base():
    base = minitorch.zeros(3, 4)
    col = base[:, 1]
    col.add_(5)
    assert base.tolist() == [[0.0, 5.0, 0.0, 0.0]] * 3


def test_inplace_with_overlapping_operand_reads_old_values():
    x = minitorch.tensor([[1.0, 2.0], [3.0, 4.0]])
    x.add_(x.t())
    assert x.tolist() == [[2.0, 5.0], [5.0, 8.0]]


@pytest.mark.parametrize("alpha", [False, True])
def test_bool_add_takes_its_alpha(alpha):
    """self + alpha * other on bools is self or (alpha and other): alpha=False keeps self (found
    by fuzzing the emulated CUDA device, whose kernel had it right and the CPU's did not)."""
    x = np.array([[False, True], [False, False]])
    y = np.array([[True, True], [False, True]])
    check(lambda m, a, b: m.add(a, b, alpha=alpha), lambda a, b: a | (alpha & b), [x, y],
          layout="transposed")
    check(lambda m, a, b: m.tensor(False).add(b, alpha=alpha), lambda a, b: alpha & b, [x, y])


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x, y: x.bool() - y.bool(),               # bool - bool
        lambda m, x, y: -(x.bool()),                        # negating bools
        lambda m, x, y: x.long().add_(1.5),                 # float result into an int tensor
        lambda m, x, y: x.long().add(y.long(), alpha=1.5),  # float alpha for ints
        lambda m, x, y: m.ones(3).add_(m.ones(2, 3)),       # in-place broadcast grows self
        lambda m, x, y: m.ones(2, 3) + m.ones(4),           # shapes that do not broadcast
        lambda m, x, y: x + "a",                            # not a number
    ],
)
def test_bad_elementwise_calls_raise_like_torch(fn):
    raises_like_torch(fn, np.ones((2, 2), np.float32), np.ones((2, 2), np.float32))


INPLACE_FORMS = {
    "add_": (lambda x, y: x.add_(y, alpha=2), lambda x, y: x + 2 * y),
    "sub_": (lambda x, y: x.sub_(y), np.subtract),
    "mul_": (lambda x, y: x.mul_(y), np.multiply),
    "div_": (lambda x, y: x.div_(y), np.true_divide),
    "neg_": (lambda x, y: x.neg_(), lambda x, y: -x),
    "clamp_min_": (lambda x, y: x.clamp_min_(0.5), lambda x, y: np.maximum(x, 0.5)),
    "relu_": (lambda x, y: minitorch.relu_(x), lambda x, y: np.maximum(x, 0)),
}


@pytest.mark.parametrize("name", INPLACE_FORMS)
def test_inplace_forms_write_self_and_return_it(name):
    fn, ref = INPLACE_FORMS[name]
    a = np.array([[-1.5, 2.0, 0.25], [3.0, -4.0, 1.0]], np.float32)
    b = np.array([2.0, -1.0, 4.0], np.float32)
    x = minitorch.tensor(a)
    assert fn(x, minitorch.tensor(b)) is x
    np.testing.assert_allclose(x.numpy(), ref(a, b), rtol=1e-6)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_an_elementwise_result_keeps_a_permuted_inputs_layout():
    for lib in (torch, minitorch):
        x = lib.ones(2, 3, 4).permute(2, 0, 1)
        a = x * 1
        a.flatten()[0] = 5.0  # a view of a only where a is contiguous
        assert a.stride() == (1, 12, 4) and a[0, 0, 0].item() == 1.0, lib.__name__


@st.composite
def laid_out(draw, shape):
    """A permutation of shape, sliced, broadcast or as is: (np array, perm, step, size-1 dims)."""
    perm = draw(st.permutations(range(len(shape))))
    ones = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    step = draw(st.sampled_from([1, 2]))
    return perm, step, [1 if o else n for o, n in zip(ones, shape)]


def _make(lib, perm, step, sizes):
    """A tensor of the given logical sizes, stored in dim order perm, every step-th element."""
    stored = [sizes[d] * (step if k == len(perm) - 1 else 1) for k, d in enumerate(perm)]
    base = lib.arange(float(np.prod(stored))).reshape(stored)
    if step > 1:
        base = base[..., ::step]
    inverse = [perm.index(d) for d in range(len(perm))]
    return base.permute(*inverse)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4).flatmap(
    lambda shape: st.tuples(st.just(shape), laid_out(shape), laid_out(shape))))
def test_elementwise_result_strides_follow_pytorchs_tensoriterator(case):
    """Unary, binary and with-a-number results are laid out as PyTorch lays them out, for every
    mix of permuted, sliced and broadcast inputs."""
    shape, a, b = case
    results = {}
    for lib in (torch, minitorch):
        x, y = _make(lib, *a), _make(lib, *b)
        results[lib] = [(x * 2).stride(), x.exp().stride(), (x + y).stride(), (y - x).stride(),
                        lib.where(x > 1, x, y).stride()]
    assert results[minitorch] == results[torch], (shape, a, b)
