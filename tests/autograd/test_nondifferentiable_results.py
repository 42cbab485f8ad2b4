"""A sweep over the functions whose results PyTorch never differentiates (counts, positions,
comparisons, roundings to steps, random draws): given an input that requires grad, their results
require grad in minitorch exactly when they do in PyTorch, and have no grad_fn when they do not."""
import pytest

import minitorch

torch = pytest.importorskip("torch")


def cases(lib):
    x = lib.rand(10, requires_grad=True)
    xs = lib.sort(x.detach())[0].requires_grad_()
    i = lib.tensor([0, 1, 1, 3])
    return {
        "histc": lambda: lib.histc(x, bins=4),
        "histc_range": lambda: x.histc(bins=3, min=0.0, max=1.0),
        "histogram_hist": lambda: lib.histogram(x, bins=4)[0],
        "histogram_edges": lambda: lib.histogram(x, bins=4)[1],
        "bincount_weights": lambda: lib.bincount(i, weights=x[:4]),
        "argmax": lambda: x.argmax(),
        "argmin": lambda: lib.argmin(x.reshape(2, 5), 1),
        "argsort": lambda: x.argsort(),
        "argwhere": lambda: lib.argwhere(x),
        "nonzero": lambda: x.nonzero(),
        "searchsorted": lambda: lib.searchsorted(xs, x),
        "bucketize": lambda: lib.bucketize(x, xs),
        "sort_indices": lambda: x.sort()[1],
        "topk_indices": lambda: x.topk(2)[1],
        "max_indices": lambda: x.reshape(2, 5).max(1)[1],
        "kthvalue_indices": lambda: x.kthvalue(2)[1],
        "mode_indices": lambda: x.mode()[1],
        "median_indices": lambda: x.median(0)[1],
        "cummax_indices": lambda: x.cummax(0)[1],
        "eq": lambda: x == 0.5,
        "gt": lambda: lib.gt(x, 0.3),
        "isnan": lambda: x.isnan(),
        "isfinite": lambda: lib.isfinite(x),
        "isin": lambda: lib.isin(x, x),
        "signbit": lambda: lib.signbit(x),
        "logical_not": lambda: lib.logical_not(x),
        "count_nonzero": lambda: lib.count_nonzero(x),
        "sign": lambda: x.sign(),
        "floor": lambda: x.floor(),
        "ceil": lambda: x.ceil(),
        "round": lambda: x.round(),
        "round_decimals": lambda: x.round(decimals=1),
        "trunc": lambda: x.trunc(),
        "floor_divide": lambda: lib.floor_divide(x, 0.3),
        "to_long": lambda: x.long(),
        "multinomial": lambda: lib.multinomial(x, 2),
        "bernoulli": lambda: lib.bernoulli(x),
        "poisson": lambda: lib.poisson(x),
        "rand_like": lambda: lib.rand_like(x),
        "randint_like": lambda: lib.randint_like(x, 5),
        "zeros_like": lambda: lib.zeros_like(x),
        "full_like": lambda: lib.full_like(x, 2),
        "new_zeros": lambda: x.new_zeros(3),
        "new_tensor": lambda: x.new_tensor([1.0]),
        "unique": lambda: x.unique(),
        "frac": lambda: x.frac(),
        "nan_to_num": lambda: x.nan_to_num(),
    }


@pytest.mark.parametrize("name", sorted(cases(torch)))
def test_requires_grad_matches_torch(name):
    ref = cases(torch)[name]()
    mine = cases(minitorch)[name]()
    assert mine.requires_grad == ref.requires_grad
    assert (mine.grad_fn is None) == (ref.grad_fn is None)
