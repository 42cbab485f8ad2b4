"""Conv2d, MaxPool2d, AvgPool2d and AdaptiveAvgPool2d: attributes, PyTorch's init, repr,
constructor errors, and forward passes equal to PyTorch's layers given the same weights."""
import math
import re

import numpy as np
import pytest

import minitorch
from minitorch import nn


def torch_or_skip():
    return pytest.importorskip("torch")


CONV_ARGS = [
    "3, 8, 3",
    "3, 8, (3, 5), stride=2, padding=1, dilation=2, bias=False",
    "4, 8, 3, padding='same', groups=2",
    "4, 8, (4, 2), padding='same', dilation=(1, 3)",
    "4, 8, 3, padding='valid'",
    "4, 8, 1, stride=(1, 1), padding=(0, 0), dilation=(1, 1)",
    "4, 6, 3, stride=(2, 1), padding=(1, 0), groups=2, bias=False",
    "3, 8, 3, padding_mode='reflect'",
]
POOL_ARGS = [
    "MaxPool2d(2)",
    "MaxPool2d(3, 2, 1, ceil_mode=True)",
    "MaxPool2d((2, 3), dilation=2)",
    "MaxPool2d(3, stride=1, padding=1, return_indices=True)",
    "AvgPool2d(2)",
    "AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False, divisor_override=2)",
    "AvgPool2d((3, 1), stride=(1, 2), padding=(1, 0))",
    "AdaptiveAvgPool2d(1)",
    "AdaptiveAvgPool2d((2, None))",
    "AdaptiveAvgPool2d((4, 3))",
]


def test_conv2d_attributes_and_parameters():
    c = nn.Conv2d(4, 6, (3, 2), stride=2, groups=2)
    assert (c.in_channels, c.out_channels, c.kernel_size, c.stride, c.padding, c.dilation) == (
        4, 6, (3, 2), (2, 2), (0, 0), (1, 1))
    assert (c.groups, c.padding_mode, c.transposed, c.output_padding) == (2, "zeros", False, (0, 0))
    assert tuple(c.weight.shape) == (6, 2, 3, 2) and tuple(c.bias.shape) == (6,)
    assert [n for n, _ in c.named_parameters()] == ["weight", "bias"]
    assert list(c.state_dict()) == ["weight", "bias"]
    assert nn.Conv2d(3, 8, 3, bias=False).bias is None
    c64 = nn.Conv2d(2, 3, 3, dtype=minitorch.float64)
    assert c64.weight.dtype == minitorch.float64 and c64.bias.dtype == minitorch.float64


def test_conv2d_init_bounds_and_spread():
    minitorch.manual_seed(0)
    c = nn.Conv2d(16, 32, 3, groups=2)
    bound = 1 / math.sqrt(8 * 3 * 3)  # fan_in = in_channels / groups * kH * kW
    w, b = c.weight.detach().numpy(), c.bias.detach().numpy()
    assert np.all(np.abs(w) <= bound) and np.all(np.abs(b) <= bound)
    assert w.std() == pytest.approx(bound / math.sqrt(3), rel=0.1)  # U(-a, a) has std a/sqrt(3)
    assert np.abs(w).max() > 0.9 * bound


@pytest.mark.parametrize("args", CONV_ARGS)
def test_conv2d_repr_matches_torch(args):
    torch = torch_or_skip()
    assert repr(eval(f"nn.Conv2d({args})")) == repr(eval(f"torch.nn.Conv2d({args})"))


@pytest.mark.parametrize("layer", POOL_ARGS)
def test_pool_repr_matches_torch(layer):
    torch = torch_or_skip()
    assert repr(eval(f"nn.{layer}")) == repr(eval(f"torch.nn.{layer}"))


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("args", CONV_ARGS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_forward_matches_torch(args, dtype):
    torch = torch_or_skip()
    ours = eval(f"nn.Conv2d({args}, dtype=minitorch.{dtype})")
    theirs = eval(f"torch.nn.Conv2d({args}, dtype=torch.{dtype})")
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(ours.weight.detach().numpy()))
        if ours.bias is not None:
            theirs.bias.copy_(torch.from_numpy(ours.bias.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((2, ours.in_channels, 9, 10)).astype(dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    with torch.no_grad():
        want = theirs(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ours(minitorch.tensor(x)).detach().numpy(), want, atol=tol, rtol=tol)
    np.testing.assert_allclose(ours(minitorch.tensor(x[0])).detach().numpy(), want[0], atol=tol, rtol=tol)  # unbatched


@pytest.mark.parametrize("layer", POOL_ARGS)
def test_pool_forward_matches_torch(layer):
    torch = torch_or_skip()
    x = np.random.default_rng(1).standard_normal((2, 3, 7, 8)).astype(np.float32)
    ours, theirs = eval(f"nn.{layer}")(minitorch.tensor(x)), eval(f"torch.nn.{layer}")(torch.from_numpy(x))
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == 2
        np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
        ours, theirs = ours[0], theirs[0]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-6)


@pytest.mark.parametrize("kwargs", [
    dict(groups=0), dict(groups=-1), dict(groups=2), dict(out_channels=7, groups=3, in_channels=3),
    dict(padding="foo"), dict(padding="same", stride=2), dict(padding="same", stride=(1, 2)),
    dict(padding_mode="foo"),
])
def test_conv2d_constructor_errors_match_torch(kwargs):
    torch = torch_or_skip()
    args = dict(in_channels=3, out_channels=8, kernel_size=3)
    args.update(kwargs)
    with pytest.raises(ValueError) as ours:
        nn.Conv2d(**args)
    with pytest.raises(ValueError) as theirs:
        torch.nn.Conv2d(**args)
    assert normalize_sets(str(ours.value)) == normalize_sets(str(theirs.value))


def normalize_sets(message):
    """The message with each {...} set's items sorted: a set prints in hash order, which differs
    between a set made at run time and one made from PyTorch's compiled constants."""
    return re.sub(r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)


def test_conv2d_other_padding_modes_pad_first():
    """reflect/replicate/circular: F.pad by the padding, then a convolution without (PyTorch's
    forward); compared with PyTorch in tests/nn/test_conv_compositions.py."""
    c = nn.Conv2d(3, 8, 3, padding=(1, 2), padding_mode="reflect")
    assert c._reversed_padding_repeated_twice == (2, 2, 1, 1)
    assert tuple(c(minitorch.ones(1, 3, 5, 5)).shape) == (1, 8, 5, 7)


def test_a_small_cnn():
    minitorch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(16, 10),
    )
    with minitorch.no_grad():
        y = model(minitorch.randn(4, 3, 16, 16))
    assert tuple(y.shape) == (4, 10) and y.dtype == minitorch.float32
    assert len(list(model.parameters())) == 6
    torch = torch_or_skip()
    theirs = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(16, 10),
    )
    assert repr(model) == repr(theirs)
    theirs.load_state_dict({k: torch.from_numpy(v.detach().numpy()) for k, v in model.state_dict().items()})
    x = np.random.default_rng(2).standard_normal((4, 3, 16, 16)).astype(np.float32)
    with torch.no_grad():
        want = theirs(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(model(minitorch.tensor(x)).detach().numpy(), want, atol=1e-5)
