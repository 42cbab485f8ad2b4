"""testing.assert_close and make_tensor against PyTorch's: the same pass or fail, the same
exception class and message (minitorch's type names in place of torch's)."""
import numpy as np
import pytest

import minitorch
from helpers import torch

nan = float("nan")

# Each case builds (actual, expected, kwargs) with lib.
CASES = [
    lambda lib: (lib.tensor([1.0, 2.0, 3.0]), lib.tensor([1.0, 2.5, 3.1]), {}),
    lambda lib: (lib.tensor([1.0, 2.0, 3.0]), lib.tensor([1.0, 2.0, 3.0 + 1e-6]), {}),
    lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0], dtype=lib.float64), {}),
    lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0], dtype=lib.float64), {"check_dtype": False}),
    lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0, 3.0]), {}),
    lambda lib: (lib.tensor([1, 2]), lib.tensor([1, 3]), {}),
    lambda lib: (lib.tensor([1, 2]), lib.tensor([1.0, 2.5]), {"check_dtype": False}),
    lambda lib: (lib.tensor(1.0), lib.tensor(1.5), {}),
    lambda lib: (lib.tensor([nan, 1.0]), lib.tensor([nan, 1.0]), {}),
    lambda lib: (lib.tensor([nan, 1.0]), lib.tensor([nan, 1.0]), {"equal_nan": True}),
    lambda lib: (lib.tensor([[1.0, 2.0], [3.0, 4.0]]), lib.tensor([[1.0, 2.0], [3.0, 5.0]]), {}),
    lambda lib: (lib.tensor([0.0, 2.0]), lib.tensor([1.0, 2.0]), {}),
    lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.1]), {"rtol": 0, "atol": 0}),
    lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.1]), {"rtol": 0.1, "atol": 0}),
    lambda lib: (lib.tensor([1.0]), lib.tensor([1.0]), {"rtol": 1e-3}),
    lambda lib: (lib.tensor([True]), lib.tensor([False]), {}),
    lambda lib: (lib.zeros(2, 2), lib.zeros(2, 2).t(), {"check_stride": True}),
    lambda lib: (lib.zeros(2, 2), lib.zeros(2, 2).t(), {}),
    lambda lib: (lib.tensor([1.0]).requires_grad_(), lib.tensor([1.0]), {}),
    lambda lib: (lib.zeros(0), lib.zeros(0), {}),
    lambda lib: (1, 1.0, {}),
    lambda lib: (1.0, 1.1, {}),
    lambda lib: (1.0, 1.0 + 1e-9, {}),
    lambda lib: (True, False, {}),
    lambda lib: (None, 1, {}),
    lambda lib: (np.array([1.0, 2.0]), np.array([1.0, 2.1]), {}),
    lambda lib: ([lib.tensor(1.0)], [lib.tensor(2.0)], {}),
    lambda lib: ([1, 2], [1, 2, 3], {}),
    lambda lib: ({"a": lib.tensor(1.0)}, {"a": lib.tensor(2.0)}, {}),
    lambda lib: ({"a": 1}, {"b": 1}, {}),
    lambda lib: (lib.tensor([1.0]), [1.0], {}),
    lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.5]), {"msg": "custom"}),
    lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.5]), {"msg": lambda m: "X" + m}),
]


def _outcome(lib, case):
    actual, expected, kwargs = case(lib)
    try:
        lib.testing.assert_close(actual, expected, **kwargs)
        return None
    except Exception as e:  # noqa: BLE001 - class and message are compared
        return type(e), str(e)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_assert_close_as_torch(case):
    got = _outcome(minitorch, CASES[case])
    if torch is None:
        return
    want = _outcome(torch, CASES[case])
    if want is None:
        assert got is None, got
        return
    assert got is not None, f"minitorch passed; PyTorch raised {want}"
    norm = lambda s: s.replace("minitorch._tensor.Tensor", "torch.Tensor").replace("minitorch.", "torch.")  # noqa: E731
    assert (got[0], norm(got[1])) == want


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
def test_make_tensor(dtype):
    dt = getattr(minitorch, dtype)
    t = minitorch.testing.make_tensor(3, 4, dtype=dt, device="cpu")
    assert tuple(t.shape) == (3, 4) and t.dtype == dt
    if dtype != "bool":
        a = t.numpy()
        assert a.min() >= -9 and a.max() <= 9
        z = minitorch.testing.make_tensor((50,), dtype=dt, device="cpu", low=-1, high=1, exclude_zero=True)
        assert bool((z != 0).all())
    n = minitorch.testing.make_tensor(3, 4, dtype=dt, device="cpu", noncontiguous=True)
    assert not n.is_contiguous() and tuple(n.shape) == (3, 4)
    if dtype.startswith("float"):
        assert minitorch.testing.make_tensor(2, dtype=dt, device="cpu", requires_grad=True).requires_grad
