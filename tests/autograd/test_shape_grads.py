"""Gradients of the reductions, shape and indexing ops (csrc/autograd/formulas_shape.c,
formulas_reduce.c): finite differences and PyTorch's gradients through check_grad, zeros and ties
where PyTorch picks a subgradient, in-place forms, the composite ops through their parts, and
the node names against PyTorch's."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import check_grad, torch

needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


def ix(m, v):
    return m.tensor(v)


INF = float("inf")

# name, fn(m, *tensors), input shapes; each runs in every layout
CASES = [
    ("prod", lambda m, x: x.prod(), [(2, 3)]),
    ("prod_dim", lambda m, x: x.prod(1), [(2, 3)]),
    ("prod_keepdim_neg", lambda m, x: x.prod(-2, keepdim=True), [(3, 2)]),
    ("amax", lambda m, x: x.amax(1), [(2, 3)]),
    ("amin_dims_keepdim", lambda m, x: x.amin((0, -1), keepdim=True), [(2, 2, 3)]),
    ("amax_all", lambda m, x: x.amax(), [(2, 3)]),
    ("max", lambda m, x: m.max(x), [(2, 3)]),
    ("min", lambda m, x: m.min(x), [(3, 2)]),
    ("max_dim", lambda m, x: m.max(x, 1)[0], [(2, 3)]),
    ("min_dim_keepdim_neg", lambda m, x: m.min(x, -2, keepdim=True)[0], [(3, 2)]),
    ("norm", lambda m, x: x.norm(), [(2, 3)]),
    ("norm_1_dim", lambda m, x: x.norm(1, dim=1), [(2, 3)]),
    ("norm_inf", lambda m, x: x.norm(INF, dim=-1, keepdim=True), [(2, 3)]),
    ("norm_-inf", lambda m, x: x.norm(-INF), [(2, 3)]),
    ("norm_3_dims", lambda m, x: x.norm(3, dim=(0, 2)), [(2, 2, 2)]),
    ("norm_1.5", lambda m, x: x.norm(1.5, dim=0), [(2, 3)]),
    ("norm_0.5", lambda m, x: x.norm(0.5), [(2, 3)]),
    ("var", lambda m, x: x.var(), [(2, 3)]),
    ("var_dim_correction", lambda m, x: x.var(1, correction=0), [(2, 3)]),
    ("var_biased_keepdim", lambda m, x: x.var((0, -1), unbiased=False, keepdim=True), [(2, 2, 3)]),
    ("std", lambda m, x: x.std(), [(2, 3)]),
    ("std_dim", lambda m, x: x.std(-1, correction=2, keepdim=True), [(2, 4)]),
    ("logsumexp", lambda m, x: x.logsumexp(1), [(2, 3)]),
    ("logsumexp_dims", lambda m, x: x.logsumexp((0, 2), keepdim=True), [(2, 2, 2)]),
    ("cumsum", lambda m, x: x.cumsum(-1), [(2, 3)]),
    ("cumsum_dim0", lambda m, x: x.cumsum(0), [(3, 2)]),
    ("cumprod", lambda m, x: x.cumprod(1), [(2, 3)]),
    ("cumprod_neg", lambda m, x: x.cumprod(-2), [(3, 2)]),
    ("softmax", lambda m, x: x.softmax(1), [(2, 3)]),
    ("softmax_neg", lambda m, x: m.softmax(x, -2), [(3, 2)]),
    ("log_softmax", lambda m, x: x.log_softmax(0), [(2, 3)]),
    ("log_softmax_neg", lambda m, x: x.log_softmax(-1), [(2, 3)]),
    ("sort", lambda m, x: x.sort(1)[0], [(2, 3)]),
    ("sort_desc", lambda m, x: x.sort(0, descending=True)[0], [(3, 2)]),
    ("topk", lambda m, x: x.topk(2)[0], [(2, 3)]),
    ("topk_smallest", lambda m, x: x.topk(2, dim=0, largest=False)[0], [(3, 2)]),
    ("cat", lambda m, x, y: m.cat([x, y], 1), [(2, 3), (2, 2)]),
    ("cat_neg_three", lambda m, x, y: m.cat([y, x, y], -2), [(1, 3), (2, 3)]),
    ("concat", lambda m, x, y: m.concat([x, y]), [(2, 3), (1, 3)]),
    ("stack", lambda m, x, y: m.stack([x, y], -1), [(2, 3), (2, 3)]),
    ("flip", lambda m, x: x.flip([0, -1]), [(2, 3)]),
    ("repeat", lambda m, x: x.repeat(2, 1, 3), [(2, 3)]),
    ("repeat_same_rank", lambda m, x: x.repeat(1, 2), [(2, 3)]),
    ("tril", lambda m, x: x.tril(), [(3, 3)]),
    ("tril_neg", lambda m, x: m.tril(x, -1), [(3, 4)]),
    ("triu", lambda m, x: x.triu(1), [(3, 4)]),
    ("triu_batch", lambda m, x: x.triu(), [(2, 3, 2)]),
    ("narrow", lambda m, x: x.narrow(1, 1, 2), [(2, 3)]),
    ("movedim", lambda m, x: x.movedim(0, -1) * ix(m, [1.0, 2.0]), [(2, 3)]),
    ("moveaxis", lambda m, x: m.moveaxis(x, (0, 1), (1, 0)), [(2, 3)]),
    ("expand_as", lambda m, x, y: x.expand_as(y) * y, [(1, 3), (2, 3)]),
    ("view_as", lambda m, x, y: x.contiguous().view_as(y) * y, [(2, 3), (3, 2)]),
    ("reshape", lambda m, x: x.reshape(3, 2), [(2, 3)]),
    ("reshape_as", lambda m, x, y: x.reshape_as(y) + y, [(2, 3), (6,)]),
    ("squeeze", lambda m, x: x.squeeze(), [(2, 1, 3)]),
    ("squeeze_dim", lambda m, x: x.squeeze(-2), [(2, 1, 3)]),
    ("squeeze_dims", lambda m, x: x.squeeze((0, 2)), [(1, 3, 1)]),
    ("index_select", lambda m, x: x.index_select(1, ix(m, [0, 2, 0])), [(2, 3)]),
    ("index_select_neg", lambda m, x: m.index_select(x, -2, ix(m, [1, 1])), [(2, 3)]),
    ("gather", lambda m, x: x.gather(1, ix(m, [[0, 0], [1, 2]])), [(2, 3)]),
    ("gather_neg", lambda m, x: m.gather(x, -2, ix(m, [[1, 0, 1]])), [(2, 3)]),
    ("scatter", lambda m, x, s: x.scatter(1, ix(m, [[0], [2]]), s), [(2, 3), (2, 1)]),
    ("scatter_number", lambda m, x: x.scatter(0, ix(m, [[1, 0, 1]]), 2.0), [(2, 3)]),
    ("scatter_add", lambda m, x, s: x.scatter_add(0, ix(m, [[0, 1, 0], [0, 0, 0]]), s), [(2, 3), (2, 3)]),
    ("index", lambda m, x: x[ix(m, [0, 1, 0])], [(2, 3)]),
    ("index_dim1", lambda m, x: x[:, ix(m, [2, 0, 2])], [(2, 3)]),
    ("index_two", lambda m, x: x[ix(m, [0, 1, 1]), ix(m, [2, 0, 2])], [(2, 3)]),
    ("index_bool", lambda m, x: x[ix(m, [[True, False, True], [False, True, True]])], [(2, 3)]),
    ("index_put", lambda m, x, v: x.index_put((ix(m, [0, 2]),), v), [(3, 2), (2, 2)]),
    ("index_put_accumulate", lambda m, x, v: m.index_put(x, (ix(m, [0, 0]),), v, accumulate=True), [(3, 2), (2,)]),
    ("masked_select", lambda m, x: x.masked_select(ix(m, [True, False, True])), [(2, 3)]),
    ("masked_select_broadcast", lambda m, x: m.masked_select(x, ix(m, [[True], [False], [True]])), [(1, 2)]),
    ("as_strided", lambda m, x: x.as_strided((2, 2), (1, 2)), [(3, 4)]),
    ("as_strided_overlap", lambda m, x: m.as_strided(x, (3, 3), (1, 1), 1), [(3, 4)]),
]
NO_SLICED = {"as_strided", "as_strided_overlap"}  # their strides mean storage positions


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("name, fn, shapes", CASES, ids=[c[0] for c in CASES])
def test_formulas(name, fn, shapes, layout):
    if name in NO_SLICED and layout != "contiguous":
        pytest.skip("as_strided reads storage positions: PyTorch's twin is contiguous")
    check_grad(fn, [r(*s) for s in shapes], layout=layout)


def zeros_in(shape, where):
    a = r(*shape)
    for w in where:
        a[w] = 0.0
    return a


# Products are linear in each element, so finite differences stay exact at zeros.
@pytest.mark.parametrize("name, fn, zeros", [
    ("prod_one_zero", lambda m, x: x.prod(), [(0, 1)]),
    ("prod_two_zeros", lambda m, x: x.prod(), [(0, 1), (1, 2)]),
    ("prod_dim_zeros", lambda m, x: x.prod(1), [(0, 1), (1, 0), (1, 2)]),
    ("cumprod_zeros", lambda m, x: x.cumprod(1), [(0, 1), (1, 0), (1, 2)]),
    ("cumprod_zero_rows", lambda m, x: x.cumprod(0), [(0, 0), (2, 0), (1, 1), (2, 1)]),
])
def test_products_with_zeros(name, fn, zeros):
    check_grad(fn, [zeros_in((3, 3), zeros)])


# Subgradients: finite differences do not apply, PyTorch's choice is the reference.
@pytest.mark.parametrize("name, fn, a", [
    ("amax_ties", lambda m, x: x.amax(1), [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),
    ("amin_ties_all", lambda m, x: x.amin(), [[1.0, 3.0], [1.0, 1.0]]),
    ("max_ties", lambda m, x: m.max(x), [[1.0, 3.0, 3.0], [2.0, 3.0, 0.0]]),
    ("min_ties", lambda m, x: m.min(x), [[1.0, 3.0, 1.0]]),
    ("max_dim_ties", lambda m, x: m.max(x, 1)[0], [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),
    ("min_dim_ties", lambda m, x: m.min(x, 0)[0], [[1.0, 3.0], [1.0, 3.0]]),
    ("norm_zero", lambda m, x: x.norm(dim=1), [[0.0, 0.0], [3.0, 4.0]]),
    ("norm_1_zero", lambda m, x: x.norm(1), [[0.0, -2.0], [3.0, 0.0]]),
    ("norm_inf_ties", lambda m, x: x.norm(INF, dim=1), [[-3.0, 3.0], [0.0, 0.0]]),
    ("norm_0.5_zero", lambda m, x: x.norm(0.5, dim=1), [[0.0, 2.0], [0.0, 0.0]]),
    ("norm_3_zero", lambda m, x: x.norm(3, dim=1), [[0.0, 2.0], [0.0, 0.0]]),
    ("std_constant", lambda m, x: x.std(1), [[2.0, 2.0], [1.0, 3.0]]),
    ("sort_ties", lambda m, x: x.sort(stable=True)[0], [[1.0, 1.0, 0.0]]),
])
def test_subgradients_as_pytorch(name, fn, a):
    check_grad(fn, [np.array(a)], gradcheck=False)


def test_zero_dim_and_empty():
    check_grad(lambda m, x: x.prod(0) + x.amax() + x.cumsum(0) + x.cumprod(0) + x.softmax(0)
               + x.logsumexp(0) + x.norm(), [np.array(1.5)])
    check_grad(lambda m, x: m.cat([x, x], 0).sum(0), [r(0, 2)])
    for fn in (lambda x: x.prod(), lambda x: x.prod(1), lambda x: x.cumprod(0), lambda x: x.repeat(0, 2)):
        x = minitorch.zeros(0, 2, requires_grad=True)
        fn(x).sum().backward()
        assert x.grad.shape == (0, 2)


def test_cat_legacy_empty_and_int_inputs():
    x = minitorch.randn(2, 3, requires_grad=True)
    e = minitorch.zeros(0, requires_grad=True)
    y = minitorch.cat([x, e, x], 0)
    y.backward(minitorch.ones(4, 3))
    np.testing.assert_allclose(np.asarray(x.grad), np.full((2, 3), 2.0))
    assert e.grad.shape == (0,)
    z = minitorch.cat([x, minitorch.ones(1, 3, dtype=minitorch.int64)], 0)  # promoted to float
    assert z.grad_fn.name() == "CatBackward0"
    z.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), np.full((2, 3), 3.0))


@needs_torch
def test_list_outputs_get_their_gradients():
    """split, chunk and unbind return lists: each piece is a narrow or select view that records,
    its node named as PyTorch names the one node of the call."""
    a = r(5, 2)
    x = minitorch.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    for lib, v in ((minitorch, x), (torch, t)):
        pieces = v.split(2) + v.split([1, 4], 0) + v.chunk(2, 1) + v.unbind(1) + lib.split(v, 3)
        assert all(p.requires_grad and p.grad_fn is not None for p in pieces)
        sum(((k + 1.0) * p).sum() for k, p in enumerate(pieces)).backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy())
    for name in ("split(2)", "split([1, 4])", "chunk(2, 1)", "unbind()"):
        assert eval(f"x.{name}")[0].grad_fn.name() == eval(f"t.{name}")[0].grad_fn.name()  # noqa: S307


@pytest.mark.parametrize("op", ["tril_", "triu_"])
def test_inplace_triangles(op):
    def fn(m, x):
        y = x * 2
        getattr(y, op)(1)
        return y
    check_grad(fn, [r(3, 3)])


def test_inplace_scatter_and_index_put():
    check_grad(lambda m, x, s: (x * 1).scatter_(1, ix(m, [[1], [0]]), s), [r(2, 3), r(2, 1)])
    check_grad(lambda m, x, s: (x * 1).scatter_add_(0, ix(m, [[1, 1, 0]]), s), [r(2, 3), r(1, 3)])
    check_grad(lambda m, x, v: (x * 1).index_put_((ix(m, [2, 0]),), v), [r(3, 2), r(2, 2)])
    check_grad(lambda m, x, v: (x * 1).index_put_((ix(m, [1, 1]), ix(m, [0, 0])), v, True), [r(3, 2), r(2)])


def test_setitem_gradients():
    def assign(m, x, v):
        y = x * 1
        y[ix(m, [0, 2])] = v * 3  # index_put_
        y[ix(m, [1, 1]), ix(m, [0, 0])] = 5.0  # a number
        return y
    check_grad(assign, [r(3, 2), r(1, 2, 2)])

    def into_zeros(m, v):
        z = m.zeros(4, 2, dtype=m.float64)
        z[ix(m, [3, 0])] = v
        return z
    check_grad(into_zeros, [r(2, 2)])


def test_inplace_errors():
    x = minitorch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.index_put_((minitorch.tensor([0]),), minitorch.tensor([1.0]))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[minitorch.tensor([0])] = 1.0
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[1:].index_put_((minitorch.tensor([0]),), minitorch.tensor([1.0]))


@needs_torch
def test_as_strided_layouts():
    a, w = r(3, 4), r(2, 3)
    x = minitorch.tensor(np.ascontiguousarray(a.T)).t().detach().requires_grad_(True)  # dense
    t = torch.tensor(np.ascontiguousarray(a.T)).t().detach().requires_grad_(True)
    for v, wv in ((x, minitorch.tensor(w)), (t, torch.tensor(w))):
        (v.as_strided((2, 3), (2, 1), 1) * wv).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy())


def test_as_strided_refuses_what_it_cannot_map():
    s = minitorch.tensor(r(2, 6))[:, ::2].detach().requires_grad_(True)
    with pytest.raises(NotImplementedError, match="dense"):
        s.as_strided((2,), (1,)).sum().backward()


@needs_torch
def test_float32_and_mixed_dtypes():
    a, b = r(2, 3), r(1, 3)
    grads = []
    for lib in (minitorch, torch):
        x = lib.tensor(a, dtype=lib.float32, requires_grad=True)
        y = lib.tensor(b, dtype=lib.float64, requires_grad=True)
        z = lib.cat([x, y]).cumprod(0).softmax(1).norm(dim=0) + x.std(0) * x.prod(0).flip([0])
        (z * lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64)).sum().backward()
        assert x.grad.dtype == lib.float32 and y.grad.dtype == lib.float64
        grads.append([np.asarray(x.grad.numpy()), np.asarray(y.grad.numpy())])
    for g, h in zip(*grads):
        np.testing.assert_allclose(g, h, rtol=1e-4, atol=1e-5)


def test_non_differentiable():
    x = minitorch.randn(2, 3, requires_grad=True)
    for y in (x.argmax(), x.argmin(1), minitorch.max(x, 1)[1], x.sort()[1], x.topk(1)[1], x.argsort()):
        assert not y.requires_grad and y.grad_fn is None
    values, indices = minitorch.min(x, 0)
    assert values.grad_fn.name() == "MinBackward0" and not indices.requires_grad


@needs_torch
def test_double_backward():
    # Only formulas that do not use their saved result: the engine saves outputs detached, so a
    # second derivative through them (softmax, norm, logsumexp, ...) misses that path.
    a = r(2, 3)
    out = []
    for lib in (minitorch, torch):
        x = lib.tensor(a, requires_grad=True)
        y = lib.cat([x.prod(1, keepdim=True) * x.cumsum(1), x.var(0, keepdim=True)])
        y = y.index_select(1, lib.tensor([2, 0])).gather(0, lib.tensor([[1, 0]]))
        y = (y * y).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (g * g).sum().backward()
        out.append(np.asarray(x.grad.detach().numpy()))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-6, atol=1e-8)


# PyTorch's names, overloads included (prod(dim) is ProdBackward1, squeeze(dim) SqueezeBackward1,
# scatter with a number ScatterBackward1, stack StackBackward0); split's and unbind's pieces
# (PyTorch's multi-output SplitBackward0/UnbindBackward0) are left out.
NAMED = [
    lambda m, x: x.prod(1), lambda m, x: x[None].squeeze(0), lambda m, x: x[None, :, None].squeeze((0, 2)),
    lambda m, x: x.scatter(1, m.tensor([[0], [2]]), 5.0), lambda m, x: m.stack([x, x], 1),
    lambda m, x: x.prod(), lambda m, x: x.amax(1), lambda m, x: x.amin(), lambda m, x: m.max(x),
    lambda m, x: m.min(x), lambda m, x: m.max(x, 1)[0], lambda m, x: m.min(x, 0)[0],
    lambda m, x: x.norm(), lambda m, x: x.norm(1, 1), lambda m, x: x.norm(INF), lambda m, x: x.norm(3, 0),
    lambda m, x: x.var(), lambda m, x: x.std(1), lambda m, x: x.logsumexp(1), lambda m, x: x.cumsum(0),
    lambda m, x: x.cumprod(1), lambda m, x: x.softmax(1), lambda m, x: x.log_softmax(0),
    lambda m, x: x.sort()[0], lambda m, x: x.topk(1)[0], lambda m, x: m.cat([x, x]),
    lambda m, x: m.concatenate([x, x], 1), lambda m, x: x.flip([0]), lambda m, x: x.repeat(2, 1),
    lambda m, x: x.tril(), lambda m, x: x.triu(), lambda m, x: (x * 1).tril_(),
    lambda m, x: (x * 1).triu_(), lambda m, x: x.as_strided((2, 2), (1, 2)),
    lambda m, x: x.narrow(0, 1, 1), lambda m, x: x.movedim(0, 1), lambda m, x: x[:1].expand_as(x),
    lambda m, x: x.view_as(x), lambda m, x: x.reshape(6), lambda m, x: x[None].squeeze(),
    lambda m, x: x.index_select(0, m.tensor([1])), lambda m, x: x.gather(0, m.tensor([[1, 0, 1]])),
    lambda m, x: x.scatter(0, m.tensor([[1, 0, 1]]), x * 2),
    lambda m, x: x.scatter_add(0, m.tensor([[1, 0, 1]]), x * 2), lambda m, x: x[m.tensor([1, 0])],
    lambda m, x: x.index_put((m.tensor([1]),), x[0] * 2),
    lambda m, x: (x * 1).index_put_((m.tensor([1]),), m.ones(3, dtype=x.dtype)),
    lambda m, x: x.masked_select(x > 0),
]


@needs_torch
@pytest.mark.parametrize("k", range(len(NAMED)))
def test_node_names_as_pytorch(k):
    a = r(2, 3)
    names = [type(NAMED[k](lib, lib.tensor(a, requires_grad=True)).grad_fn).__name__
             for lib in (minitorch, torch)]
    assert names[0] == names[1]


@pytest.mark.parametrize("value", [float("nan"), 1.0, float("inf")])
@pytest.mark.parametrize("shape", [(), (1,)])
def test_var_without_degrees_of_freedom_grad_as_torch(value, shape):
    """PyTorch's var_backward with no dim and N <= correction: g * inf, NaN where x equals the
    mean (so a NaN input gives inf, not NaN); with a dim it is the usual formula's NaN."""
    if torch is None:
        pytest.skip("PyTorch is not installed")
    for op in ("var", "std"):
        got, want = [], []
        for lib, out in ((minitorch, got), (torch, want)):
            x = lib.full(shape, value, dtype=lib.float64, requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                getattr(x, op)().backward()
            out.append(np.asarray(x.grad.tolist(), dtype=np.float64))
        np.testing.assert_array_equal(got[0], want[0], err_msg=op)
