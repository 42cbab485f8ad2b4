"""PyTorch 2.13's everyday gaps: Tensor.grad_dtype (a leaf's gradient dtype, the engine casting
to it, the check on assigning .grad), uint64 values from 2**63 on given as Python ints
(tensor, full, fill_, comparisons, item, printing) and torch.AcceleratorError, each against
PyTorch: the same values, or the same exception class and words."""
import numpy as np
import pytest

import minitorch
from helpers import torch

needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch")
BIG = 2 ** 63 + 5


def outcome(fn, lib):
    """fn(lib)'s result as plain Python values (a tensor as its repr with the library's name
    dropped, a dtype by name), or its exception's class name and words."""
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return type(e).__name__, str(e)
    if isinstance(r, (lib.Tensor, lib.dtype)):
        r = repr(r)
    return r.replace(lib.__name__ + ".", "") if isinstance(r, str) else r


def same(fn):
    got, want = outcome(fn, minitorch), outcome(fn, torch)
    assert got == want


# ---- grad_dtype ----

def _leaf(lib, dtype=None, **kw):
    return lib.tensor([1.0, 2.0], dtype=dtype or lib.float32, requires_grad=True, **kw)


def _set(t, dt):
    t.grad_dtype = dt
    return t.grad_dtype


def _backward_twice(lib, dt):
    x = _leaf(lib)
    x.grad_dtype = getattr(lib, dt) if dt else None
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    return x.grad


def _assign(lib, leaf_dt, grad_dtype, grad_dt):
    x = _leaf(lib, getattr(lib, leaf_dt))
    if grad_dtype != "default":
        x.grad_dtype = getattr(lib, grad_dtype) if grad_dtype else None
    x.grad = lib.ones(2, dtype=getattr(lib, grad_dt))
    return x.grad


GRAD_DTYPE_CASES = {
    "default": lambda lib: _leaf(lib).grad_dtype,
    "no grad leaf": lambda lib: lib.ones(2).grad_dtype,
    "set": lambda lib: _set(_leaf(lib), lib.float64),
    "set None": lambda lib: _set(_leaf(lib), None),
    "set bad": lambda lib: _set(_leaf(lib), "float64"),
    "non-leaf get": lambda lib: (_leaf(lib) * 2).grad_dtype,
    "non-leaf set": lambda lib: _set(_leaf(lib) * 2, lib.float64),
    "backward float64": lambda lib: _backward_twice(lib, "float64"),
    "backward float16": lambda lib: _backward_twice(lib, "float16"),
    "backward None": lambda lib: _backward_twice(lib, None),
    "assign other dtype": lambda lib: _assign(lib, "float32", "default", "float64"),
    "assign to half": lambda lib: _assign(lib, "float32", "float16", "float32"),
    "assign grad_dtype": lambda lib: _assign(lib, "float32", "float64", "float64"),
    "assign any": lambda lib: _assign(lib, "float32", None, "float64"),
    "assign same": lambda lib: _assign(lib, "float64", "default", "float64"),
}


@needs_torch
@pytest.mark.parametrize("name", list(GRAD_DTYPE_CASES))
def test_grad_dtype_as_torch(name):
    same(GRAD_DTYPE_CASES[name])


def test_grad_dtype_half_leaf_float_grad():
    w = minitorch.ones(3, dtype=minitorch.float16, requires_grad=True)
    w.grad_dtype = minitorch.float32
    (w * 2).sum().backward()
    assert w.grad.dtype == minitorch.float32
    np.testing.assert_array_equal(w.grad.numpy(), [2, 2, 2])


# ---- uint64 from 2**63 on ----

U64 = {
    "tensor": lambda lib: lib.tensor([BIG, 3], dtype=lib.uint64),
    "tensor 0-dim": lambda lib: lib.tensor(BIG, dtype=lib.uint64),
    "tensor nested": lambda lib: lib.tensor([[1, BIG], [2 ** 64 - 1, 0]], dtype=lib.uint64),
    "tensor bool leaf": lambda lib: lib.tensor([True, BIG], dtype=lib.uint64),
    "tensor no dtype": lambda lib: lib.tensor([BIG]),
    "tensor 2**64": lambda lib: lib.tensor([2 ** 64], dtype=lib.uint64),
    "tensor negative": lambda lib: lib.tensor([-1], dtype=lib.uint64),
    "tensor float leaf": lambda lib: lib.tensor([2.5, BIG], dtype=lib.uint64),
    "tensor int64": lambda lib: lib.tensor([BIG], dtype=lib.int64),
    "tensor int32": lambda lib: lib.tensor([BIG], dtype=lib.int32),
    "tensor uint8": lambda lib: lib.tensor([BIG], dtype=lib.uint8),
    "tensor float32": lambda lib: lib.tensor([BIG], dtype=lib.float32),
    "tensor float64 -big": lambda lib: lib.tensor([-BIG], dtype=lib.float64),
    "full": lambda lib: lib.full((2,), BIG, dtype=lib.uint64),
    "full no dtype": lambda lib: lib.full((2,), BIG),
    "full int64": lambda lib: lib.full((2,), BIG, dtype=lib.int64),
    "full float64": lambda lib: lib.full((2,), BIG, dtype=lib.float64),
    "new_full": lambda lib: lib.zeros(1, dtype=lib.uint64).new_full((2,), BIG),
    "fill_": lambda lib: lib.zeros(2, dtype=lib.uint64).fill_(BIG),
    "where": lambda lib: lib.where(lib.tensor([True, False]), lib.zeros(2, dtype=lib.uint64), BIG),
    "eq": lambda lib: lib.tensor([BIG, 3, 2 ** 64 - 1], dtype=lib.uint64) == BIG,
    "ne": lambda lib: lib.tensor([BIG, 3], dtype=lib.uint64) != BIG,
    "eq int64": lambda lib: lib.zeros(2, dtype=lib.int64) == BIG,
    "item": lambda lib: lib.tensor([BIG], dtype=lib.uint64).item(),
    "tolist": lambda lib: lib.tensor([BIG, 3, 2 ** 64 - 1], dtype=lib.uint64).tolist(),
    "str": lambda lib: str(lib.tensor([BIG, 7], dtype=lib.uint64)),
    "float + big": lambda lib: lib.zeros(2) + BIG,
    "float64 - big": lambda lib: lib.zeros(2, dtype=lib.float64) - BIG,
}


@needs_torch
@pytest.mark.parametrize("name", list(U64))
def test_big_uint64_as_torch(name):
    same(U64[name])


# ---- AcceleratorError ----

def test_accelerator_error_class():
    E = minitorch.AcceleratorError
    assert issubclass(E, RuntimeError) and E.__module__ == "minitorch"
    assert E.__doc__ == "Exception raised while executing on device"
    if torch is not None:
        assert E.__doc__ == torch.AcceleratorError.__doc__
        assert [c.__name__ for c in E.__mro__] == [c.__name__ for c in torch.AcceleratorError.__mro__]
