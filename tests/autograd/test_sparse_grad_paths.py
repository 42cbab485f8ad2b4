"""Sparse gradients (embedding(sparse=True)) on their way through the graph, against PyTorch: they
stay sparse through the nodes whose formulas PyTorch runs on a sparse gradient (clone, neg, add,
sub, mul and div by a number or by a tensor of the gradient's size), through a tensor's gradient
hooks (which see a sparse tensor, may give back another, and may not make it dense), through
retain_grad() and autograd.grad of a non-leaf; any other formula gets them dense. Compared:
.grad.is_sparse, the values, and _nnz() (an entry per looked-up index: deterministic here)."""
import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(19)
V, D = 6, 3
IDX = [[1, 2, 4], [4, 3, 1]]


def embed(lib, w, idx=IDX):
    return lib.nn.functional.embedding(lib.tensor(idx), w, sparse=True)


def dense(g):
    return (g.to_dense() if g.is_sparse else g).detach().numpy()


def same(got, want):
    assert got.is_sparse == want.is_sparse, (got.is_sparse, want.is_sparse)
    if want.is_sparse:
        assert got._nnz() == want._nnz()
    np.testing.assert_allclose(dense(got), dense(want), rtol=1e-6, atol=1e-12)


WEIGHT = RNG.standard_normal((V, D))
OTHER = RNG.standard_normal((V, D))

# fn(lib, w, other) -> the embedding's weight, a function of the leaf w
PATHS = {
    "clone": lambda lib, w, o: w.clone(),
    "neg": lambda lib, w, o: -w,
    "add": lambda lib, w, o: w + 1,
    "add_alpha": lambda lib, w, o: lib.add(o, w, alpha=3),
    "sub": lambda lib, w, o: o - w,
    "mul_number": lambda lib, w, o: w * 2,
    "mul_tensor": lambda lib, w, o: w * o,
    "div_number": lambda lib, w, o: w / 4,
    "two_steps": lambda lib, w, o: (w * 2).clone() - o,
}


@pytest.mark.parametrize("path", PATHS)
def test_sparse_gradient_stays_sparse_through(path):
    got = []
    for lib in (minitorch, torch):
        w = lib.tensor(WEIGHT, requires_grad=True)
        embed(lib, PATHS[path](lib, w, lib.tensor(OTHER))).sum().backward()
        got.append(w.grad)
    same(*got)


def test_both_factors_of_a_square():
    """w * w: two sparse gradients reach w's AccumulateGrad, kept sparse; PyTorch's sum holds an
    entry per index (6), minitorch's the entries of both (12), of the same values."""
    got = []
    for lib in (minitorch, torch):
        w = lib.tensor(WEIGHT, requires_grad=True)
        embed(lib, w * w).sum().backward()
        got.append(w.grad)
    assert got[0].is_sparse and got[1].is_sparse and got[0]._nnz() == 12
    np.testing.assert_allclose(dense(got[0]), dense(got[1]), rtol=1e-6)


# a sum with a dense gradient is dense in both; a formula minitorch does not run on a sparse
# gradient (exp's) gets it dense, and a quotient by a tensor, which PyTorch refuses ("Sparse
# division requires a scalar or zero-dim dense tensor divisor"), is dense: the values are those of
# the dense embedding
@pytest.mark.parametrize("fn", [
    lambda lib, w, sparse: embed(lib, w.clone()).sum() + w.clone().sum() if sparse else
    lib.nn.functional.embedding(lib.tensor(IDX), w.clone()).sum() + w.clone().sum(),
    lambda lib, w, sparse: lib.nn.functional.embedding(lib.tensor(IDX), w.exp(), sparse=sparse).sum(),
    lambda lib, w, sparse: lib.nn.functional.embedding(lib.tensor(IDX), w / lib.tensor(OTHER),
                                                       sparse=sparse).sum(),
])
def test_sparse_gradient_made_dense(fn):
    w = minitorch.tensor(WEIGHT, requires_grad=True)
    fn(minitorch, w, True).backward()
    want = torch.tensor(WEIGHT, requires_grad=True)
    fn(torch, want, False).backward()
    assert not w.grad.is_sparse
    np.testing.assert_allclose(w.grad.numpy(), want.grad.numpy(), rtol=1e-6)


def test_two_sparse_gradients_of_one_non_leaf_concatenate():
    got = []
    for lib in (minitorch, torch):
        w = lib.tensor(WEIGHT, requires_grad=True)
        v = w.clone()
        (embed(lib, v).sum() + embed(lib, v, IDX[:1]).sum()).backward()
        got.append(w.grad)
    same(*got)
    assert got[0]._nnz() == 9


@pytest.mark.parametrize("on", ["leaf", "non_leaf"])
def test_hooks_see_and_return_sparse_gradients(on):
    got, seen = [], []
    for lib in (minitorch, torch):
        w = lib.tensor(WEIGHT, requires_grad=True)
        v = w if on == "leaf" else w * 1
        looks = []
        v.register_hook(lambda g: looks.append((g.is_sparse, g._nnz(), dense(g))) or g * 3)
        embed(lib, v).sum().backward()
        got.append(w.grad)
        seen.append(looks)
    same(*got)
    (s0, n0, d0), (s1, n1, d1) = seen[0][0], seen[1][0]
    assert (s0, n0) == (s1, n1) == (True, 6)
    np.testing.assert_allclose(d0, d1)


def test_a_hook_may_not_make_a_sparse_gradient_dense():
    for lib in (minitorch, torch):
        w = lib.tensor(WEIGHT, requires_grad=True)
        w.register_hook(lambda g: g.to_dense())
        with pytest.raises(RuntimeError, match="has changed the type of value"):
            embed(lib, w).sum().backward()


def test_retain_grad_and_autograd_grad_of_a_non_leaf():
    for lib in (minitorch, torch):
        w = lib.tensor(WEIGHT, requires_grad=True)
        v = w.clone()
        v.retain_grad()
        embed(lib, v).sum().backward()
        assert v.grad.is_sparse and v.grad._nnz() == 6 and w.grad.is_sparse
        v = w * 2
        (g,) = lib.autograd.grad(embed(lib, v).sum(), v)
        assert g.is_sparse and g._nnz() == 6
        (g,) = lib.autograd.grad(embed(lib, w * 2).sum(), w)
        assert g.is_sparse and g._nnz() == 6
    want = torch.tensor(WEIGHT, requires_grad=True)
    (g,) = torch.autograd.grad(embed(torch, want * 2).sum(), want)
    w = minitorch.tensor(WEIGHT, requires_grad=True)
    (mine,) = minitorch.autograd.grad(embed(minitorch, w * 2).sum(), w)
    same(mine, g)


def test_a_factor_changed_in_place_is_refused():
    """The sparse path reads the saved factor as the formula would: changed since, it raises."""
    for lib in (minitorch, torch):
        w = lib.tensor(WEIGHT, requires_grad=True)
        o = lib.tensor(OTHER)
        out = embed(lib, w * o).sum()
        o.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.backward()


def test_the_sparse_paths_leak_nothing():
    """Through a product, a clone, a hook returning a new sparse gradient, retain_grad() and
    autograd.grad, again and again: the counts of live C tensors, storages and nodes stay."""
    def step():
        w = minitorch.tensor(WEIGHT, requires_grad=True)
        v = (w * minitorch.tensor(OTHER)).clone()
        v.retain_grad()
        v.register_hook(lambda g: g * 2)
        embed(minitorch, v - 1).sum().backward()
        minitorch.autograd.grad(embed(minitorch, w / 2).sum(), w)
        with pytest.raises(RuntimeError):
            u = w * 1
            u.register_hook(lambda g: g.to_dense())
            embed(minitorch, u).sum().backward()

    step()
    before = minitorch._C._live_objects()
    for _ in range(10):
        step()
    assert minitorch._C._live_objects() == before
