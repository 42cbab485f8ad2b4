"""The backward formulas release their intermediates on every path: after a backward that
succeeds, and after one whose formula fails part-way (its gradients made so far, the
intermediates of its scratch list), the counts of C tensors, storages and autograd nodes and
the CPU allocator's live bytes are back where they were. One formula of each family that was
converted to the scratch list (csrc/ops/op_chain.h), plus a chain long enough to grow it."""
import gc

import pytest

import minitorch


def live():
    gc.collect()
    return {**minitorch._C._live_objects(),
            "bytes": minitorch._C._cpu_allocator_stats()["allocated_bytes"]}


def leaf(*shape, low=0.5):
    minitorch.manual_seed(0)
    return (minitorch.rand(*shape, dtype=minitorch.float64) + low).requires_grad_()


def double_backward(y, x):
    (g,) = minitorch.autograd.grad(y.sum(), x, create_graph=True)
    (g * g).sum().backward()


def var_twice():
    x = leaf(3, 4)
    double_backward(x.var(1), x)


def cumprod_with_zeros_twice():
    x = leaf(2, 40)
    z = x * (minitorch.arange(40) % 7 != 3)  # zeros on each line: the O(n^2) path
    double_backward(z.cumprod(1), x)


CASES = {
    "addmm": lambda: minitorch.addmm(leaf(3), leaf(3, 4), leaf(4, 3)).sum().backward(),
    "bmm": lambda: leaf(2, 3, 4).bmm(leaf(2, 4, 5)).sum().backward(),
    "mse_loss": lambda: minitorch.nn.functional.mse_loss(leaf(4), leaf(4)).backward(),
    "as_strided": lambda: leaf(6).as_strided((2, 2), (1, 2)).sum().backward(),
    "index_put": lambda: leaf(5).index_put((minitorch.tensor([0, 2]),), leaf(2)).sum().backward(),
    "masked_scatter": lambda: leaf(4).masked_scatter(minitorch.tensor([1, 0, 1, 0]).bool(),
                                                     leaf(4)).sum().backward(),
    "scatter_reduce_prod": lambda: leaf(3).scatter_reduce(0, minitorch.tensor([0, 0, 2, 1]), leaf(4),
                                                          "prod").sum().backward(),
    "norm_p3": lambda: leaf(3, 4).norm(3.0, dim=1).sum().backward(),
    "var_twice": var_twice,
    "std": lambda: leaf(3, 4).std(1).sum().backward(),
    "cumprod_twice": cumprod_with_zeros_twice,
    "reflection_pad": lambda: minitorch.nn.functional.pad(leaf(1, 2, 5), (2, 1), mode="reflect")
    .sum().backward(),
    "bce_with_logits": lambda: minitorch.nn.functional.binary_cross_entropy_with_logits(
        leaf(4), leaf(4, low=0.0), pos_weight=leaf(4).detach()).backward(),
    "svd": lambda: sum(t.sum() for t in minitorch.linalg.svd(leaf(4, 3), full_matrices=False))
    .backward(),
    "lu_solve": lambda: minitorch.linalg.lu_solve(*minitorch.linalg.lu_factor(
        leaf(3, 3) + 3 * minitorch.eye(3, dtype=minitorch.float64)), leaf(3, 2)).sum().backward(),
    "fft_rfft": lambda: minitorch.fft.rfft(leaf(6)).abs().sum().backward(),
}

FAILING = {
    # the formula gives self's gradient, then refuses other's: both released
    "remainder_number_dividend": lambda: minitorch.remainder(2.0, leaf(3)).sum().backward(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_backward_leaves_nothing_behind(name):
    CASES[name]()  # warm-up: caches, lazily made constants
    before = live()
    for _ in range(3):
        CASES[name]()
    assert live() == before


@pytest.mark.parametrize("name", sorted(FAILING))
def test_a_failing_formula_leaves_nothing_behind(name):
    with pytest.raises(RuntimeError, match="not implemented"):
        FAILING[name]()
    before = live()
    for _ in range(3):
        with pytest.raises(RuntimeError, match="not implemented"):
            FAILING[name]()
    assert live() == before
