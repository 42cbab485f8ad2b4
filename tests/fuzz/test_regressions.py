"""Calls the fuzzer (test_fuzz.py) once got wrong, each now raising PyTorch's exception class."""
import pytest

import minitorch
import minitorch.nn.functional as F

INPLACE = ["+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|="]


@pytest.mark.parametrize("sym", INPLACE)
# ids by type, not repr: an object()'s repr holds its address, which differs between the
# processes of a parallel run (pytest-xdist refuses collections that differ)
@pytest.mark.parametrize("other", [[], (), {}, "a", None, object()], ids=lambda v: type(v).__name__)
def test_inplace_operator_with_a_non_number_raises_type_error(sym, other):
    # was: `x += []` bound x to NotImplemented (the subclass's sq_inplace_concat slot)
    x = minitorch.tensor([1, 2])
    ns = {"x": x, "other": other}
    with pytest.raises(TypeError, match="unsupported operand type"):
        exec(f"x {sym} other", ns)
    assert ns["x"] is x and x.tolist() == [1, 2]


def test_inplace_operator_still_works():
    x = minitorch.tensor([1.0, 2.0])
    y = x
    x += 1
    x *= minitorch.tensor([2.0, 3.0])
    assert x is y and x.tolist() == [4.0, 9.0]


x = minitorch.ones(2, 3)
NOT_TENSORS = [
    ("log_softmax", lambda: F.log_softmax(1.5)),
    ("softmax", lambda: F.softmax("a")),
    ("mse_loss", lambda: F.mse_loss(x, b"\x00")),
    ("l1_loss", lambda: F.l1_loss((), x)),
    ("l1_loss weight", lambda: F.l1_loss(x, x, weight=[1.0])),
    ("batch_norm", lambda: F.batch_norm({"a": 1}, None, None, training=True)),
    ("embedding", lambda: F.embedding(1.5, x)),
    ("adaptive_avg_pool2d", lambda: F.adaptive_avg_pool2d(b"", 2)),
    ("silu inplace", lambda: F.silu(1.5, inplace=True)),
    ("binary_cross_entropy", lambda: F.binary_cross_entropy(x, None)),
    ("binary_cross_entropy_with_logits", lambda: F.binary_cross_entropy_with_logits(None, x)),
    ("conv2d same", lambda: F.conv2d(minitorch.ones(1, 1, 3, 3), None, padding="same")),
    ("zeros_like", lambda: minitorch.zeros_like(1.5)),
    ("full_like", lambda: minitorch.full_like([], 1.0)),
    ("rand_like", lambda: minitorch.rand_like([1, "x"])),
    ("randint_like", lambda: minitorch.randint_like(None, 3)),
    ("numel", lambda: minitorch.numel([1, 2])),
]


@pytest.mark.parametrize("call", [c for _, c in NOT_TENSORS], ids=[n for n, _ in NOT_TENSORS])
def test_a_non_tensor_argument_raises_type_error(call):
    # was: AttributeError ('float' object has no attribute 'dim' / 'size' / 'shape' / 'copy_')
    with pytest.raises(TypeError, match="must be Tensor|expected Tensor|Tensor"):
        call()


@pytest.mark.parametrize("method", ["size", "stride"])
@pytest.mark.parametrize("dim", [2**63, -(2**70), 2**64])
def test_a_dim_past_int64_raises_value_error(method, dim):
    # was: Python's OverflowError; PyTorch raises ValueError("Overflow when unpacking long long")
    with pytest.raises(ValueError, match="Overflow when unpacking long"):
        getattr(minitorch.ones(2, 3), method)(dim)


def test_bool_bytes_other_than_0_and_1_read_as_true():
    # was: undefined behaviour (UBSan: "load of value 255, which is not a valid value for type
    # '_Bool'") in tolist() and in indexing by a 0-dim bool tensor, as on the bytes of empty()
    import numpy as np

    b = minitorch.from_numpy(np.array([0, 1, 255, 7], dtype=np.uint8).view(np.bool_))
    assert b.tolist() == [False, True, True, True]
    x = minitorch.arange(3.0)
    assert x[b[2]].shape == (1, 3) and x[b[0]].shape == (0, 3)
    assert isinstance(minitorch.empty(5, dtype=minitorch.bool).tolist(), list)


@pytest.mark.parametrize("operands", [("abc",), (None,), ([1.0],), (minitorch.ones(2), 3)], ids=repr)
def test_einsum_of_a_non_tensor_raises_type_error(operands):
    # was: AttributeError ('str' object has no attribute 'dim')
    with pytest.raises(TypeError, match="einsum"):
        minitorch.einsum("->" if len(operands) == 1 else "i,->i", *operands)


BAD_GRADIENTS = """
import minitorch
x = minitorch.tensor(1.0, requires_grad=True)
for bad in ({'a': 1}, ['a'], 'ab', (None, 'b')):
    for _ in range(300):
        try:
            (x * 2).backward(bad)
        except (TypeError, RuntimeError):
            pass
y = x * 3
minitorch._C._run_backward((t for t in [y]), (None,), True, False, ())  # a generator's temporary list
assert x.grad.item() == 3.0
"""


def test_backward_with_non_tensor_gradients_raises_without_double_free():
    # was: tensors_of freed its array on a bad entry and the caller freed it again (found by the
    # fuzzer as a segfault in CPython's allocator, seen at once under `python -X dev`)
    import subprocess
    import sys

    from helpers import child_env
    run = subprocess.run([sys.executable, "-X", "dev", "-c", BAD_GRADIENTS], capture_output=True, text=True,
                         timeout=120, env=child_env())
    assert run.returncode == 0, run.stderr[-3000:]
    with pytest.raises(TypeError, match="expected a Tensor at position 0, got str"):
        (minitorch.tensor(1.0, requires_grad=True) * 2).backward({"a": 1})


@pytest.mark.parametrize("fn, shape, factor", [
    (F.pixel_shuffle, (4, 0, 1, 4), 1 << 40),  # was: r * r wrapped to 0, then C % 0: SIGFPE
    (F.pixel_shuffle, (1, 0, 1 << 33, 1), 1 << 31),  # r * r fits, H r does not
    (F.pixel_unshuffle, (0, 1 << 32, 1, 1), 1),  # fine: r = 1
])
def test_pixel_shuffle_factors_past_int64(fn, shape, factor):
    x = minitorch.zeros(*shape)
    if factor == 1:
        assert fn(x, factor).shape == x.shape
        return
    with pytest.raises(RuntimeError, match="overflows? int64"):
        fn(x, factor)


def test_pixel_shuffle_large_factor_of_an_empty_input():
    # C = 0 is divisible by any r * r that fits int64: sizes as PyTorch's, no element
    y = F.pixel_shuffle(minitorch.zeros(2, 0, 4, 4), 1 << 31)
    assert tuple(y.shape) == (2, 0, 4 << 31, 4 << 31) and y.numel() == 0
