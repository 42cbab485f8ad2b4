"""Lazy modules (LazyLinear, LazyConv1d/2d/3d, LazyBatchNorm1d/2d/3d) and UninitializedParameter
against PyTorch: the shapes inferred at the first forward, the same initial weights from the same
seed, the class each becomes, loading a state_dict before the first forward, reprs, errors."""
import numpy as np
import pytest

import minitorch
from helpers import torch

needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")
RNG = np.random.default_rng(27)


def build_and_run(lib, make, x):
    lib.manual_seed(0)
    m = make(lib)
    before = repr(m)
    out = m(lib.tensor(x))
    return m, before, out


@needs_torch
@pytest.mark.parametrize("make,shape", [
    (lambda l: l.nn.LazyLinear(4), (3, 5)),
    (lambda l: l.nn.LazyLinear(2, bias=False), (2, 3, 6)),
    (lambda l: l.nn.LazyConv1d(3, 2, stride=2), (2, 4, 9)),
    (lambda l: l.nn.LazyConv2d(4, 3, padding=1, groups=2), (2, 6, 5, 5)),
    (lambda l: l.nn.LazyConv2d(4, 3), (2, 5, 5)),
    (lambda l: l.nn.LazyConv3d(2, (2, 3, 3)), (1, 3, 4, 5, 5)),
    (lambda l: l.nn.LazyBatchNorm1d(), (4, 3)),
    (lambda l: l.nn.LazyBatchNorm2d(momentum=0.3), (2, 3, 4, 4)),
    (lambda l: l.nn.LazyBatchNorm3d(affine=False), (2, 3, 2, 2, 2)),
])
def test_lazy_module_as_pytorch(make, shape):
    x = RNG.standard_normal(shape).astype("float32")
    m, m_before, out_m = build_and_run(minitorch, make, x)
    t, t_before, out_t = build_and_run(torch, make, x)
    assert m_before == t_before
    assert type(m).__name__ == type(t).__name__ and repr(m) == repr(t)
    assert list(m.state_dict()) == list(t.state_dict())
    for k, v in t.state_dict().items():
        np.testing.assert_allclose(m.state_dict()[k].numpy(), v.numpy(), atol=1e-6, err_msg=k)
    np.testing.assert_allclose(out_m.detach().numpy(), out_t.detach().numpy(), atol=1e-5)


@needs_torch
def test_lazy_loads_a_state_dict_before_its_first_forward():
    torch.manual_seed(1)
    src = torch.nn.Linear(5, 3)
    m = minitorch.nn.LazyLinear(3)
    m.load_state_dict({k: minitorch.tensor(v.numpy()) for k, v in src.state_dict().items()})
    assert m.weight.shape == (3, 5) and type(m).__name__ == "LazyLinear"
    x = RNG.standard_normal((2, 5)).astype("float32")
    np.testing.assert_allclose(m(minitorch.tensor(x)).detach().numpy(), src(torch.tensor(x)).detach().numpy(),
                               atol=1e-6)
    assert type(m) is minitorch.nn.Linear and m.in_features == 5


def test_uninitialized_parameter():
    p = minitorch.nn.UninitializedParameter()
    assert repr(p) == "<UninitializedParameter>" and minitorch.nn.parameter.is_lazy(p)
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        p.shape
    p.materialize((2, 3))
    assert type(p) is minitorch.nn.Parameter and p.shape == (2, 3) and p.requires_grad
    m = minitorch.nn.LazyLinear(2)
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert list(m.state_dict()) == ["weight", "bias"]
    import copy

    assert repr(copy.deepcopy(m).weight) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to LazyConv2d"):
        minitorch.nn.LazyConv2d(2, 3)(minitorch.ones(3, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        minitorch.nn.LazyConv2d(2, 3, groups=2)(minitorch.ones(1, 3, 4, 4))
