"""torch.masked (minitorch.masked) against NumPy and PyTorch: the functional forms (sum, prod, mean,
amax, amin, argmax, argmin, var, std, norm, logsumexp, median, softmax, log_softmax, softmin,
normalize, cumsum) over one dim, several or all, with keepdim and dtype, a broadcast mask, a slice
with nothing left (identities and NaN as PyTorch gives them), non-contiguous inputs, gradients;
and MaskedTensor: masked_tensor / as_masked_tensor and their checks, get_data, get_mask,
to_tensor, reductions with their result masks, pointwise unary and binary ops (mask mismatch
refused), softmax, printing, and the gradient through a MaskedTensor."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import check, check_grad

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message=".*MaskedTensors is in prototype.*")
rng = np.random.default_rng(0)

X = rng.standard_normal((3, 4))
MASK = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])
FULL = np.array([[True, False, True, True], [True, True, True, False], [True, True, False, True]])  # 2+ per line


def ref_reduce(name, x, m, dim):
    axis = tuple(range(x.ndim)) if dim is None else dim
    with np.errstate(all="ignore"):
        count = m.sum(axis)
        total = np.where(m, x, 0).sum(axis)
        mean = total / count
        if name in ("var", "std"):
            centre = np.where(m, x, 0).sum(axis, keepdims=True) / m.sum(axis, keepdims=True)
            var = (np.where(m, x - centre, 0) ** 2).sum(axis) / np.maximum(count - 1, 0)
            return var if name == "var" else np.sqrt(var)
        return {"sum": total, "mean": mean, "prod": np.where(m, x, 1).prod(axis),
                "amax": np.where(m, x, -np.inf).max(axis), "amin": np.where(m, x, np.inf).min(axis),
                "norm": np.sqrt((np.where(m, x, 0) ** 2).sum(axis)),
                "logsumexp": np.log(np.exp(np.where(m, x, -np.inf)).sum(axis))}[name]


@pytest.mark.parametrize("dim", [1, 0, None, (0, 1)])
@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "var", "std", "norm", "logsumexp"])
def test_masked_reductions(name, dim):
    def fn(lib, x, m):
        if name == "norm":
            return lib.masked.norm(x, 2.0, dim, mask=m)
        return getattr(lib.masked, name)(x, dim, mask=m)

    for layout in ("contiguous", "transposed"):
        check(fn, lambda x, m: ref_reduce(name, x, m, dim), [X, MASK], layout=layout, atol=1e-6)
    if dim is not None:
        check_grad(fn, [X, FULL])


def test_keepdim_dtype_broadcast_mask_and_no_mask():
    check(lambda lib, x, m: lib.masked.sum(x, 1, keepdim=True, dtype=lib.float32, mask=m),
          lambda x, m: np.where(m, x, 0).sum(1, keepdims=True), [X, MASK], atol=1e-6)
    row = np.array([[True, False, True, False]])
    check(lambda lib, x, m: lib.masked.mean(x, 1, mask=m), lambda x, m: x[:, [0, 2]].mean(1), [X, row])
    check(lambda lib, x: lib.masked.amax(x, 0), lambda x: x.max(0), [X])
    check(lambda lib, x, m: lib.masked.var(x, 1, unbiased=False, mask=m),
          lambda x, m: np.array([x[0, [0, 2, 3]].var(), x[1, [0, 1, 2]].var(), x[2, [0, 1, 3]].var()]), [X, FULL])
    ints = np.arange(12).reshape(3, 4)
    check(lambda lib, x, m: lib.masked.amax(x, 1, mask=m), lambda x, m: np.where(m, x, np.iinfo(np.int64).min
                                                                                 ).max(1), [ints, MASK])


@pytest.mark.parametrize("name", ["argmax", "argmin", "median"])
def test_masked_index_reductions(name):
    def ref(x, m):
        with np.errstate(all="ignore"):
            if name == "median":
                vals = np.where(m, x, np.nan)
                return np.array([np.sort(r[~np.isnan(r)])[(len(r[~np.isnan(r)]) - 1) // 2] for r in vals])
            filled = np.where(m, x, -np.inf if name == "argmax" else np.inf)
            return getattr(filled, name)(1).astype(np.float64)

    check(lambda lib, x, m: getattr(lib.masked, name)(x, 1, mask=m), ref, [X, FULL])
    check(lambda lib, x, m: getattr(lib.masked, name)(x, 1, mask=m), lambda x, m: np.array(
        [ref(x[:1], m[:1])[0]]), [X[:1], FULL[:1]])


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin", "normalize", "cumsum"])
def test_masked_normalizations(name, dim):
    def ref(x, m):
        with np.errstate(all="ignore"):
            if name == "cumsum":
                return np.where(m, x, 0).cumsum(dim)
            if name == "normalize":
                nrm = np.sqrt((np.where(m, x, 0) ** 2).sum(dim, keepdims=True))
                return np.where(m, x, 0) / np.maximum(nrm, 1e-12)
            z = np.where(m, -x if name == "softmin" else x, -np.inf)
            e = np.exp(z - np.where(np.isfinite(z), z, -np.inf).max(dim, keepdims=True))
            sm = e / e.sum(dim, keepdims=True)
            return np.log(sm) if name == "log_softmax" else sm

    def fn(lib, x, m):
        if name == "normalize":
            return lib.masked.normalize(x, 2.0, dim, mask=m)
        return getattr(lib.masked, name)(x, dim, mask=m)

    check(fn, ref, [X, MASK], layout="transposed", atol=1e-6)
    # log_softmax is -inf at masked-out elements, where finite differences give NaN: PyTorch's
    # gradients are the reference there
    check_grad(fn, [X, FULL], gradcheck=name != "log_softmax")


def test_masked_tensor_construction_and_accessors():
    d, m = minitorch.tensor(X), minitorch.tensor(MASK)
    mt = minitorch.masked.masked_tensor(d, m)
    assert isinstance(mt, minitorch.masked.MaskedTensor) and minitorch.masked.is_masked_tensor(mt)
    assert tuple(mt.shape) == (3, 4) and mt.dim() == 2 and mt.dtype == minitorch.float64
    np.testing.assert_array_equal(mt.get_data().numpy(), X)
    np.testing.assert_array_equal(mt.get_mask().numpy(), MASK)
    np.testing.assert_array_equal(mt.to_tensor(-7.0).numpy(), np.where(MASK, X, -7.0))
    d.add_(1)  # masked_tensor copies; as_masked_tensor does not
    np.testing.assert_array_equal(mt.get_data().numpy(), X)
    assert minitorch.masked.as_masked_tensor(d, m).get_data() is d
    for args, exc, words in (((X, MASK[0]), ValueError, "data.dim() must equal mask.dim()"),
                             ((X, MASK.astype(float)), TypeError, "mask must have dtype bool."),
                             ((X, MASK[:2]), ValueError, "data.size() must equal mask.size()"),
                             ((X.astype(np.complex128), MASK), TypeError, "is not supported in MaskedTensor.")):
        for lib in (minitorch, torch):
            with pytest.raises(exc) as err:
                lib.masked.masked_tensor(lib.tensor(args[0]), lib.tensor(args[1]))
            assert words in str(err.value)


def _both(fn, x=X, m=MASK):
    got = fn(minitorch, minitorch.masked.masked_tensor(minitorch.tensor(x), minitorch.tensor(m)))
    want = fn(torch, torch.masked.masked_tensor(torch.tensor(x), torch.tensor(m)))
    np.testing.assert_array_equal(got.get_mask().numpy(), want.get_mask().numpy())
    mask = want.get_mask().numpy()
    np.testing.assert_allclose(got.get_data().numpy()[mask], want.get_data().numpy()[mask], rtol=1e-6)
    assert repr(got) == repr(want)
    return got


@pytest.mark.parametrize("op", [
    lambda lib, t: t.sum(), lambda lib, t: t.sum(1), lambda lib, t: t.sum(0, keepdim=True), lambda lib, t: t.mean(1),
    lambda lib, t: t.amax(0), lambda lib, t: t.amin(), lambda lib, t: t.argmax(), lambda lib, t: t.argmax(1),
    lambda lib, t: t.exp(), lambda lib, t: lib.sin(t), lambda lib, t: t + t, lambda lib, t: t * 2 - 1,
    lambda lib, t: lib.softmax(t, 1), lambda lib, t: -t, lambda lib, t: t / lib.tensor(X + 5.0),
])
def test_masked_tensor_ops_match_torch(op):
    _both(op)


def test_masked_tensor_mask_mismatch_print_and_grad():
    for lib in (minitorch, torch):
        a = lib.masked.masked_tensor(lib.tensor(X), lib.tensor(MASK))
        b = lib.masked.masked_tensor(lib.tensor(X), lib.tensor(FULL))
        with pytest.raises(ValueError, match="Input masks must match"):
            a + b
    _both(lambda lib, t: t.sum(), m=np.zeros((3, 4), bool))  # MaskedTensor(--, False)
    _both(lambda lib, t: t, x=np.arange(12).reshape(3, 4))  # integers print without decimals
    grads = []
    for lib in (minitorch, torch):
        x = lib.tensor(X)
        mt = lib.masked.masked_tensor(x, lib.tensor(FULL), requires_grad=True)
        (mt * 3).sum().backward()
        assert isinstance(mt.grad, lib.masked.MaskedTensor)
        grads.append(mt.grad)
    np.testing.assert_array_equal(grads[0].get_mask().numpy(), FULL)
    np.testing.assert_array_equal(grads[0].get_data().numpy()[FULL], grads[1].get_data().numpy()[FULL])
    x = minitorch.tensor(X, requires_grad=True)
    minitorch.masked.as_masked_tensor(x * 2, minitorch.tensor(FULL)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.where(FULL, 2.0, 0.0))
