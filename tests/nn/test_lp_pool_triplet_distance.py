"""lp_pool1d/lp_pool2d with LPPool1d/LPPool2d, and triplet_margin_with_distance_loss with
TripletMarginWithDistanceLoss (PyTorch writes all of them over other ops, in Python) against
PyTorch: values, gradients, non-contiguous inputs, reprs, errors."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, same_as_torch, same_error, torch

RNG = np.random.default_rng(23)


def data(*shape):
    return RNG.standard_normal(shape)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("p", [1, 2, 3.0, float("inf"), -float("inf")])
def test_lp_pool2d(p, layout):
    x = np.abs(data(2, 3, 6, 7)) + 0.1  # a negative sum under a fractional power is NaN in both
    same_as_torch(lambda m, x: m.nn.functional.lp_pool2d(x, p, 2), [x], layout=layout, atol=1e-9)
    same_as_torch(lambda m, x: m.nn.LPPool2d(p, (3, 2), stride=(2, 1), ceil_mode=True)(x), [x], layout=layout,
                  atol=1e-9)


@pytest.mark.parametrize("p", [1, 2, float("inf")])
def test_lp_pool1d(p):
    x = np.abs(data(2, 3, 9)) + 0.1
    same_as_torch(lambda m, x: m.nn.functional.lp_pool1d(x, p, 3), [x], atol=1e-9)
    same_as_torch(lambda m, x: m.nn.LPPool1d(p, 2, stride=3)(x), [x[0]], atol=1e-9)


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_lp_pool_reprs():
    assert repr(minitorch.nn.LPPool2d(2, 3, stride=2)) == repr(torch.nn.LPPool2d(2, 3, stride=2))
    assert repr(minitorch.nn.LPPool1d(1.5, 4)) == repr(torch.nn.LPPool1d(1.5, 4))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_triplet_margin_with_distance_loss(swap, reduction, layout):
    a, p, n = data(5, 4), data(5, 4), data(5, 4)
    same_as_torch(lambda m, a, p, n: m.nn.functional.triplet_margin_with_distance_loss(
        a, p, n, swap=swap, reduction=reduction), [a, p, n], layout=layout, atol=1e-9)
    same_as_torch(lambda m, a, p, n: m.nn.TripletMarginWithDistanceLoss(
        distance_function=lambda x, y: 1.0 - m.nn.functional.cosine_similarity(x, y), margin=0.5, swap=swap,
        reduction=reduction)(a, p, n), [a, p, n], layout=layout, atol=1e-9)


@pytest.mark.parametrize("call", [
    lambda m, a: m.nn.functional.triplet_margin_with_distance_loss(a, a, a, reduction="avg"),
    lambda m, a: m.nn.functional.triplet_margin_with_distance_loss(a, a, a, margin=0.0),
    lambda m, a: m.nn.functional.triplet_margin_with_distance_loss(a, a[0], a),
    lambda m, a: m.nn.TripletMarginWithDistanceLoss(margin=-1.0),
])
def test_triplet_margin_with_distance_loss_errors(call):
    same_error(call, data(3, 2))
