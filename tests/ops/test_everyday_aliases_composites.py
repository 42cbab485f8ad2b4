"""PyTorch's alias names (greater, arccos, multiply, ...), the tensor predicates
(is_signed, is_nonzero, ...), H/mH/adjoint, the in-place method forms (cumsum_, addmm_, ...),
fill_diagonal_, new_empty_strided, the composites of csrc/ops/composite_special.c (nansum,
nanmean, logit, dist, inner, ldexp, msort, addr, addbmm, matrix_power, mvlgamma, sinc and
torch.special's ndtr, xlog1py, entr), minitorch.special and the new minitorch.linalg functions:
values, dtypes, gradients and errors beside PyTorch, over contiguous, transposed and sliced
inputs, broadcasting, empty tensors and NaN."""
import math

import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, same_as_torch, same_error

NAN, INF = float("nan"), float("inf")
rng = np.random.default_rng(19)


def rand(*shape, low=-2.0, high=2.0, dtype=np.float64):
    return rng.uniform(low, high, shape).astype(dtype)


# ---- aliases: the op itself under PyTorch's second name ----
ALIASES = {
    "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
    "multiply": "mul", "divide": "div", "arctan2": "atan2",
}
UNARY_ALIASES = {"negative": "neg", "absolute": "abs", "arccos": "acos", "arcsin": "asin", "arctan": "atan",
                 "arcsinh": "asinh"}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(ALIASES))
def test_binary_aliases_match_torch(name, layout):
    a, b = rand(3, 4), rand(3, 4)
    b[0, 0] = a[0, 0]
    same_as_torch(lambda m, x, y: getattr(m, name)(x, y), [a, b], layout=layout)
    same_as_torch(lambda m, x, y: getattr(x, name)(y), [a, b[:1]], layout=layout)


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_binary_aliases_in_place(name):
    a, b = rand(3, 4), rand(4)
    same_as_torch(lambda m, x, y: getattr(x.clone(), name + "_")(y), [a, b])


def test_divide_takes_rounding_mode():
    a, b = rand(5) * 5, rand(5) + 3
    for mode in ("trunc", "floor", None):
        same_as_torch(lambda m, x, y: m.divide(x, y, rounding_mode=mode), [a, b])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(UNARY_ALIASES))
def test_unary_aliases_match_torch(name, layout):
    a = rand(3, 4, low=-0.9, high=0.9)
    a[1, 1] = NAN
    same_as_torch(lambda m, x: getattr(m, name)(x), [a], layout=layout)
    same_as_torch(lambda m, x: getattr(x, name)(), [a], layout=layout)
    same_as_torch(lambda m, x: getattr(x.clone(), name + "_")(), [a])


@pytest.mark.parametrize("name", ["arccosh", "arctanh"])
def test_domain_aliases(name):
    a = rand(6, low=1.1, high=3) if name == "arccosh" else rand(6, low=-0.9, high=0.9)
    same_as_torch(lambda m, x: getattr(m, name)(x), [a])
    same_as_torch(lambda m, x: getattr(x.clone(), name + "_")(), [a])


def test_aliases_are_the_ops_themselves():
    x = minitorch.tensor([1.0, -2.0], requires_grad=True)
    assert minitorch.multiply(x, 2).grad_fn.name() == "MulBackward0"
    assert minitorch.arccos(x.tanh()).grad_fn.name() == "AcosBackward0"
    same_error(lambda m, x: m.greater(x, m.ones(3)), np.ones(2))


def test_positive():
    same_as_torch(lambda m, x: m.positive(x), [rand(2, 3)])
    same_as_torch(lambda m, x: x.positive() * 2, [rand(2, 3)])
    same_error(lambda m, x: m.positive(x > 0), np.ones(2))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_ravel(layout):
    same_as_torch(lambda m, x: m.ravel(x), [rand(3, 4)], layout=layout)
    same_as_torch(lambda m, x: x.ravel(), [rand(0, 4)], layout=layout)
    x = minitorch.ones(2, 3)
    assert x.ravel().data_ptr() == x.data_ptr()  # a view of a contiguous tensor


# ---- predicates ----
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"])
def test_dtype_predicates(dtype):
    torch = pytest.importorskip("torch")
    m = minitorch.zeros(2, dtype=getattr(minitorch, dtype))
    t = torch.zeros(2, dtype=getattr(torch, dtype))
    assert m.is_signed() == t.is_signed()
    assert minitorch.is_signed(m) == torch.is_signed(t)
    assert m.is_complex() is False and minitorch.is_complex(m) is False
    assert minitorch.is_floating_point(m) == torch.is_floating_point(t)
    assert m.is_cpu is True and m.is_inference() is False and minitorch.is_inference(m) is False


def test_is_nonzero_and_is_same_size():
    assert minitorch.tensor([0.5]).is_nonzero() and not minitorch.is_nonzero(minitorch.tensor(0))
    assert minitorch.is_nonzero(minitorch.tensor([[True]]))
    same_error(lambda m, x: m.is_nonzero(x), np.ones(2))
    same_error(lambda m, x: m.is_nonzero(x), np.ones(0))
    assert minitorch.ones(2, 3).is_same_size(minitorch.zeros(2, 3))
    assert not minitorch.is_same_size(minitorch.ones(2, 3), minitorch.zeros(3, 2))
    with pytest.raises(TypeError):
        minitorch.is_nonzero(1.0)


# ---- the conjugate transposes of real tensors ----
@pytest.mark.parametrize("layout", LAYOUTS)
def test_H_mH_adjoint(layout):
    same_as_torch(lambda m, x: x.H * 1, [rand(3, 4)], layout=layout)
    same_as_torch(lambda m, x: x.mH * 1, [rand(2, 3, 4)], layout=layout)
    same_as_torch(lambda m, x: x.adjoint() * 1, [rand(2, 3, 4)], layout=layout)
    same_error(lambda m, x: x.H, rand(2, 3, 4))
    same_error(lambda m, x: x.mH, rand(4))
    same_error(lambda m, x: x.adjoint(), rand(4))


# ---- in-place method forms ----
def test_cumulative_in_place():
    same_as_torch(lambda m, x: x.clone().cumsum_(1), [rand(3, 4)])
    same_as_torch(lambda m, x: x.clone().cumprod_(0), [rand(3, 4)])
    same_as_torch(lambda m, x: x.clone().cumsum_(0, dtype=m.float32), [rand(3)])
    same_as_torch(lambda m, x: x.clone().cumsum_(0, dtype=m.float64), [rand(3)])
    same_as_torch(lambda m, x: x.clone().cumsum_(0), [np.arange(5)], grad=False)


def test_products_in_place():
    same_as_torch(lambda m, s, a, b: s.clone().addmm_(a, b, beta=0.5, alpha=2), [rand(3, 2), rand(3, 4), rand(4, 2)])
    same_as_torch(lambda m, s, a, v: s.clone().addmv_(a, v, alpha=3), [rand(3), rand(3, 4), rand(4)])
    same_as_torch(lambda m, s, a, b: s.clone().baddbmm_(a, b), [rand(2, 3, 2), rand(2, 3, 4), rand(2, 4, 2)])
    same_as_torch(lambda m, s, a, b: s.clone().addbmm_(a, b, beta=2), [rand(3, 2), rand(5, 3, 4), rand(5, 4, 2)])
    same_as_torch(lambda m, s, a, b: s.clone().addr_(a, b, alpha=2), [rand(3, 2), rand(3), rand(2)])


def test_leaf_in_place_is_refused():
    same_error(lambda m, x: x.requires_grad_().cumsum_(0), rand(3))


def test_resize_as_and_new_empty_strided():
    x = minitorch.zeros(6)
    assert tuple(x.resize_as_(minitorch.ones(2, 3)).shape) == (2, 3)
    y = minitorch.ones(2, dtype=minitorch.float64).new_empty_strided((2, 3), (1, 2))
    assert tuple(y.shape) == (2, 3) and y.stride() == (1, 2) and y.dtype == minitorch.float64
    z = minitorch.ones(2).new_empty_strided((0, 3), (3, 1), dtype=minitorch.int64)
    assert tuple(z.shape) == (0, 3) and z.dtype == minitorch.int64


@pytest.mark.parametrize("shape,wrap", [((4, 4), False), ((3, 5), False), ((7, 3), False), ((7, 3), True),
                                        ((9, 2), True), ((3, 3, 3), False)])
def test_fill_diagonal(shape, wrap):
    same_as_torch(lambda m, x: x.clone().fill_diagonal_(5.0, wrap=wrap), [rand(*shape)], grad=False)
    same_as_torch(lambda m, x: x.t().clone().t().fill_diagonal_(-1, wrap) if x.dim() == 2 else x * 1,
                  [rand(*shape)], grad=False)


def test_fill_diagonal_errors():
    same_error(lambda m, x: x.fill_diagonal_(1), rand(3))
    same_error(lambda m, x: x.fill_diagonal_(1), rand(3, 3, 2))


# ---- composites ----
def nan_array(*shape):
    a = rand(*shape)
    a.flat[::3] = NAN
    return a


@pytest.mark.parametrize("layout", LAYOUTS)
def test_nansum_nanmean(layout):
    a = nan_array(3, 4)
    for f in (lambda m, x: m.nansum(x), lambda m, x: m.nansum(x, 1), lambda m, x: x.nansum((0, 1), keepdim=True),
              lambda m, x: m.nanmean(x), lambda m, x: x.nanmean(0), lambda m, x: m.nanmean(x, -1, True),
              lambda m, x: m.nansum(x, 0, dtype=m.float32)):
        same_as_torch(f, [a], layout=layout)
    same_as_torch(lambda m, x: m.nansum(x), [rand(0, 3)])
    # an all-NaN column: PyTorch's gradient there is NaN (its backward multiplies by the mask)
    same_as_torch(lambda m, x: m.nanmean(x, 0), [np.full((2, 3), NAN)], grad=False)
    same_as_torch(lambda m, x: m.nansum(x, 0), [np.arange(6).reshape(2, 3)], grad=False)
    same_error(lambda m, x: m.nanmean(x), np.arange(3))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_logit(layout):
    a = rand(3, 4, low=0.01, high=0.99)
    a[0, 0], a[0, 1], a[1, 0] = 0.0, 1.0, NAN
    same_as_torch(lambda m, x: m.logit(x), [rand(3, 4, low=0.05, high=0.95)], layout=layout)
    same_as_torch(lambda m, x: m.logit(x, eps=0.1), [rand(3, 4, low=0.0, high=1.0)], layout=layout)
    same_as_torch(lambda m, x: x.logit(), [a], layout=layout, grad=False)
    same_as_torch(lambda m, x: x.clone().logit_(1e-3), [a], grad=False)
    same_as_torch(lambda m, x: m.special.logit(x, 0.2), [a], grad=False)
    same_as_torch(lambda m, x: m.logit(x), [np.array([0, 1, 2])], grad=False)


def test_dist_and_inner():
    for p in (2, 1, 3.5, INF, 0):
        # PyTorch's backward of p=0 fails ("Expected a proper Tensor but got None")
        same_as_torch(lambda m, x, y: m.dist(x, y, p), [rand(3, 4), rand(4)], atol=1e-5, grad=p != 0)
    same_as_torch(lambda m, x, y: x.dist(y), [rand(0, 4), rand(4)])
    same_as_torch(lambda m, x, y: m.inner(x, y), [rand(2, 3, 4), rand(5, 4)])
    same_as_torch(lambda m, x, y: m.inner(x, y), [rand(4), rand(4)])
    same_as_torch(lambda m, x, y: x.inner(y), [rand(3, 4), np.array(2.0)])
    same_as_torch(lambda m, x, y: m.inner(x, y), [np.arange(6).reshape(2, 3), np.arange(3)], grad=False)
    same_as_torch(lambda m, x, y: m.inner(x, y), [rand(2, 3), rand(2, 4)])  # both raise


@pytest.mark.parametrize("layout", LAYOUTS)
def test_ldexp(layout):
    same_as_torch(lambda m, x, e: m.ldexp(x, e), [rand(3, 4), np.arange(-2, 2).astype(np.float64)], layout=layout)
    same_as_torch(lambda m, x, e: m.ldexp(x, e), [np.arange(4), np.arange(4)], grad=False)
    same_as_torch(lambda m, x, e: x.clone().ldexp_(e), [rand(3, 4), rand(4)])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_msort(layout):
    same_as_torch(lambda m, x: m.msort(x), [nan_array(4, 3)], layout=layout)
    same_as_torch(lambda m, x: x.msort(), [np.array([3, 1, 2])], grad=False)


def test_addr_addbmm():
    same_as_torch(lambda m, s, a, b: m.addr(s, a, b), [rand(3, 4), rand(3), rand(4)])
    same_as_torch(lambda m, s, a, b: s.addr(a, b, beta=2, alpha=0.5), [rand(4), rand(3), rand(4)])
    same_as_torch(lambda m, s, a, b: m.addr(s, a, b, beta=0), [np.full((3, 4), NAN), rand(3), rand(4)], grad=False)
    same_as_torch(lambda m, s, a, b: m.addr(s, a, b), [rand(3, 4), rand(3, 1), rand(4)])  # both raise
    same_as_torch(lambda m, s, a, b: m.addbmm(s, a, b, beta=0.5, alpha=2), [rand(3, 2), rand(5, 3, 4), rand(5, 4, 2)])
    same_as_torch(lambda m, s, a, b: s.addbmm(a, b), [rand(2), rand(5, 3, 4).transpose(0, 2, 1).copy().transpose(0, 2, 1),
                                                      rand(5, 4, 2)])
    same_as_torch(lambda m, s, a, b: m.addbmm(s, a, b), [rand(3, 2), rand(0, 3, 4), rand(0, 4, 2)])
    same_error(lambda m, s, a, b: m.addbmm(s, a, b), rand(2, 2), rand(2, 2), rand(2, 2, 2))
    same_error(lambda m, s, a, b: m.addbmm(s, a, b), rand(2, 2), rand(3, 2, 2), rand(2, 2, 2))
    same_error(lambda m, s, a, b: m.addr(s, a, b), rand(2, 2), rand(2, 1), rand(2))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
def test_matrix_power(n):
    a = rand(2, 3, 3) + 3 * np.eye(3)
    # (PyTorch's backward of a negative power fails: its inverse is changed in place)
    same_as_torch(lambda m, x: m.matrix_power(x, n), [a], atol=1e-5, grad=n >= 0)
    same_as_torch(lambda m, x: m.linalg.matrix_power(x.mT, n), [a], atol=1e-5, grad=n >= 0)
    same_error(lambda m, x: m.matrix_power(x, n), rand(2, 3))
    same_error(lambda m, x: x.matrix_power(n), rand(3))


def test_mvlgamma():
    for p in (1, 2, 4):
        same_as_torch(lambda m, x: m.mvlgamma(x, p), [rand(3, 4, low=2, high=6)])
        same_as_torch(lambda m, x: m.special.multigammaln(x, p), [rand(5, low=2, high=6)])
    same_as_torch(lambda m, x: x.clone().mvlgamma_(3), [rand(5, low=2, high=6)])
    same_error(lambda m, x: m.mvlgamma(x, 0), rand(3, low=2, high=3))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sinc(layout):
    a = rand(3, 4, low=-3, high=3)
    a[0, 0], a[1, 1] = 1.0, NAN
    same_as_torch(lambda m, x: m.sinc(x), [a], layout=layout)
    same_as_torch(lambda m, x: m.special.sinc(x), [rand(4)])
    same_as_torch(lambda m, x: x.clone().sinc_(), [a])
    same_as_torch(lambda m, x: m.sinc(x), [np.array([0.0, 0.0])])  # 1 at 0, gradient 0
    same_as_torch(lambda m, x: m.sinc(x), [np.arange(-2, 3)], grad=False)


# ---- torch.special ----
@pytest.mark.parametrize("layout", LAYOUTS)
def test_special_ndtr_entr_xlog1py(layout):
    a = rand(3, 4, low=-4, high=4)
    a[2, 2] = NAN
    same_as_torch(lambda m, x: m.special.ndtr(x), [a], layout=layout)
    pos = rand(3, 4, low=0.1, high=3)
    same_as_torch(lambda m, x: m.special.entr(x), [pos], layout=layout)
    b = a.copy()
    b[0, :3] = [0.0, -1.0, NAN]
    same_as_torch(lambda m, x: m.special.entr(x), [b], layout=layout, grad=False)
    same_as_torch(lambda m, x, y: m.special.xlog1py(x, y), [rand(3, 4), rand(4, low=-0.9, high=3)], layout=layout)
    zx = np.array([0.0, 0.0, 0.0, 2.0])
    zy = np.array([-1.0, NAN, 3.0, -1.0])
    same_as_torch(lambda m, x, y: m.special.xlog1py(x, y), [zx, zy], grad=False)
    same_as_torch(lambda m, x: m.special.xlog1py(x, 2.0), [rand(3)])
    same_as_torch(lambda m, x: m.special.xlog1py(2, x), [rand(3, low=0, high=1)])
    same_as_torch(lambda m, x: m.special.ndtr(x), [np.arange(-2, 3)], grad=False)


def test_special_aliases():
    a = rand(3, 4, low=0.1, high=0.9)
    for name in ("expit", "erf", "erfc", "erfinv", "gammaln", "digamma", "psi", "exp2", "expm1", "log1p", "round"):
        same_as_torch(lambda m, x: getattr(m.special, name)(x), [a], atol=1e-5)
    same_as_torch(lambda m, x: m.special.round(x * 100, decimals=1), [a])
    same_as_torch(lambda m, x: m.special.polygamma(1, x), [a + 1])
    same_as_torch(lambda m, x, y: m.special.xlogy(x, y), [a, a[0]])
    same_as_torch(lambda m, x: m.special.logsumexp(x, 1), [a])
    same_as_torch(lambda m, x: m.special.softmax(x, 0), [a])
    same_as_torch(lambda m, x: m.special.log_softmax(x, 1, dtype=m.float32), [a])
    assert set(minitorch.special.__all__) <= set(dir(minitorch.special))


def test_composite_ops_are_in_c():
    # the _C names minitorch.special reads, called as such (the op-table guard counts them)
    x = minitorch.tensor([0.5, 2.0])
    assert minitorch._C.special_ndtr(x).shape == (2,)
    assert minitorch._C.special_entr(x).shape == (2,)
    assert minitorch._C.special_xlog1py(x, x).shape == (2,)
    assert minitorch._C._op_info("nansum")["function"]


# ---- minitorch.linalg ----
def test_linalg_aliases():
    same_as_torch(lambda m, x, y: m.linalg.matmul(x, y), [rand(2, 3, 4), rand(4, 2)])
    same_as_torch(lambda m, x: m.linalg.diagonal(x) * 1, [rand(2, 3, 4)])
    same_as_torch(lambda m, x: m.linalg.diagonal(x, offset=1, dim1=0, dim2=2) * 1, [rand(3, 2, 4)])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_vecdot(layout):
    same_as_torch(lambda m, x, y: m.linalg.vecdot(x, y), [rand(3, 4), rand(4)], layout=layout)
    same_as_torch(lambda m, x, y: m.linalg.vecdot(x, y, dim=0), [rand(3, 4), rand(3, 1)], layout=layout)
    same_error(lambda m, x, y: m.linalg.vecdot(x, y), np.arange(3), np.arange(3))


@pytest.mark.parametrize("shapes", [[(3, 4), (4, 5)], [(4,), (4, 6), (6, 2), (2,)], [(2, 9), (9, 3), (3, 8), (8, 1)],
                                    [(5,), (5, 3)], [(3, 5), (5,)]])
def test_multi_dot(shapes):
    arrays = [rand(*s) for s in shapes]
    same_as_torch(lambda m, *ts: m.linalg.multi_dot(list(ts)), arrays, atol=1e-5)


def test_multi_dot_errors():
    same_error(lambda m, x: m.linalg.multi_dot([x]), rand(2, 2))
    same_error(lambda m, x, y: m.linalg.multi_dot([x, y]), rand(2, 3), rand(2, 3))
    same_error(lambda m, x, y, z: m.linalg.multi_dot([x, y, z]), rand(2, 3), rand(3), rand(3, 2))


def test_vander():
    same_as_torch(lambda m, x: m.linalg.vander(x), [rand(4)])
    same_as_torch(lambda m, x: m.linalg.vander(x, N=3), [rand(2, 5)])
    same_as_torch(lambda m, x: m.linalg.vander(x), [np.arange(1, 5)], grad=False)
    same_error(lambda m, x: m.linalg.vander(x), np.array(2.0))
    same_error(lambda m, x: m.linalg.vander(x, N=1), rand(3))


def test_cond_solve_ex_tensorinv_tensorsolve():
    a = rand(2, 3, 3) + 3 * np.eye(3)
    for p in (None, 2, -2, 1, -1, INF, -INF, "fro", "nuc"):
        # (PyTorch's backward through inv fails here: its inverse is changed in place)
        same_as_torch(lambda m, x: m.linalg.cond(x, p), [a], atol=1e-5, grad=p in (None, 2, -2))
    b = rand(2, 3, 2)
    same_as_torch(lambda m, x, y: m.linalg.solve_ex(x, y)[0], [a, b], atol=1e-5)
    torch = pytest.importorskip("torch")
    res = minitorch.linalg.solve_ex(minitorch.tensor(a), minitorch.tensor(b))
    want = torch.linalg.solve_ex(torch.tensor(a), torch.tensor(b))
    assert res.info.dtype == minitorch.int32 and tuple(res.info.shape) == tuple(want.info.shape)
    t = rand(4, 6, 8, 3) + 0
    t = (np.eye(24).reshape(4, 6, 8, 3) * 4 + t)
    same_as_torch(lambda m, x: m.linalg.tensorinv(x, ind=2), [t], atol=1e-5)
    A = np.eye(24).reshape(2, 3, 4, 2, 3, 4) * 3 + rand(2, 3, 4, 2, 3, 4) * 0.1
    B = rand(2, 3, 4)
    same_as_torch(lambda m, x, y: m.linalg.tensorsolve(x, y), [A, B], atol=1e-5)
    same_error(lambda m, x: m.linalg.tensorinv(x, ind=1), rand(4, 6, 8, 3))


# ---- cov and corrcoef ----
@pytest.mark.parametrize("layout", LAYOUTS)
def test_cov(layout):
    x = rand(3, 6)
    fw = np.array([1, 2, 0, 3, 1, 1])
    aw = rand(6, low=0.1, high=2)
    same_as_torch(lambda m, x: m.cov(x), [x], layout=layout)
    same_as_torch(lambda m, x: x.cov(correction=0), [x], layout=layout)
    same_as_torch(lambda m, x: m.cov(x[0]), [x], layout=layout)
    same_as_torch(lambda m, x, f: m.cov(x, fweights=f), [x, fw], layout=layout)
    same_as_torch(lambda m, x, w: m.cov(x, aweights=w), [x, aw], layout=layout)
    same_as_torch(lambda m, x, f, w: m.cov(x, correction=2, fweights=f, aweights=w), [x, fw, aw], layout=layout)
    same_as_torch(lambda m, x: m.cov(x), [np.arange(12).reshape(3, 4)], grad=False)
    same_as_torch(lambda m, x: m.cov(x), [rand(0, 3)])


def test_cov_errors():
    x = rand(3, 5)
    same_error(lambda m, x: m.cov(x), rand(2, 2, 2))
    same_error(lambda m, x, f: m.cov(x, fweights=f), x, np.ones(5))
    same_error(lambda m, x, f: m.cov(x, fweights=f), x, np.ones(4, dtype=np.int64))
    same_error(lambda m, x, f: m.cov(x, fweights=f), x, -np.ones(5, dtype=np.int64))
    same_error(lambda m, x, w: m.cov(x, aweights=w), x, -np.ones(5))
    same_error(lambda m, x, w: m.cov(x, aweights=w), x, np.ones(5, dtype=np.int64))
    same_error(lambda m, x, w: m.cov(x, aweights=w), x, np.zeros(5))
    same_error(lambda m, x: m.cov(x > 0), x)
    same_error(lambda m, x: m.corrcoef(x), rand(2, 2, 2))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_corrcoef(layout):
    same_as_torch(lambda m, x: m.corrcoef(x), [rand(4, 7)], layout=layout)
    same_as_torch(lambda m, x: x.corrcoef(), [rand(7)], layout=layout)
    same_as_torch(lambda m, x: m.corrcoef(x), [np.arange(12).reshape(3, 4) ** 2], grad=False)


# ---- index_reduce and put ----
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(reduce, include_self):
    idx = np.array([0, 2, 0, 3])
    same_as_torch(lambda m, x, s, i: x.index_reduce(0, i, s, reduce, include_self=include_self),
                  [rand(5, 3), rand(4, 3), idx], grad=False)
    same_as_torch(lambda m, x, s, i: m.index_reduce(x, 1, i, s, reduce, include_self=include_self),
                  [rand(2, 5), rand(2, 4), idx], grad=False)
    same_as_torch(lambda m, x, s, i: x.clone().index_reduce_(-1, i, s, reduce), [rand(2, 5), rand(2, 4), idx],
                  grad=False)


def test_index_reduce_errors():
    x, s = rand(3, 4), rand(2, 4)
    same_error(lambda m, x, s, i: x.index_reduce(0, i, s, "sum"), x, s, np.array([0, 2]))
    same_error(lambda m, x, s, i: x.index_reduce(0, i, s, "prod"), x, s, np.array([0.0, 2.0]))
    same_error(lambda m, x, s, i: x.index_reduce(0, i, s, "prod"), x, rand(3, 4), np.array([0, 2]))
    same_error(lambda m, x, s, i: x.index_reduce(0, i, s, "prod"), x, s, np.array([[0, 2]]))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_put(layout):
    idx = np.array([0, 5, -1, 7])
    same_as_torch(lambda m, x, s, i: x.put(i, s), [rand(3, 4), rand(4), idx], layout=layout)
    same_as_torch(lambda m, x, s, i: m.put(x, i, s, accumulate=True), [rand(3, 4), rand(2, 2), np.array([1, 1, 2, 1])],
                  layout=layout)
    same_as_torch(lambda m, x, s, i: x.clone().put_(i, s), [rand(3, 4), rand(4), idx], grad=False)
    same_error(lambda m, x, s, i: x.put(i, s), rand(3, 4), rand(1), np.array([1, 2]))
    with pytest.raises(IndexError):
        minitorch.ones(3, 4).put(minitorch.tensor([20]), minitorch.ones(1))


def test_diagonal_and_as_strided_scatter():
    same_as_torch(lambda m, x, s: x.diagonal_scatter(s), [rand(3, 3), rand(3)], grad=False)
    same_as_torch(lambda m, x, s: m.diagonal_scatter(x, s, 1), [rand(3, 4), rand(3)], grad=False)
    same_as_torch(lambda m, x, s: m.diagonal_scatter(x, s, -1, 0, 2), [rand(3, 2, 4), rand(2, 2)], grad=False)
    same_as_torch(lambda m, x, s: m.as_strided_scatter(x, s, (2, 2), (1, 3), 1), [rand(3, 3), rand(2, 2)], grad=False)
    same_error(lambda m, x, s: x.diagonal_scatter(s), rand(3, 3), rand(2))
    same_error(lambda m, x, s: x.as_strided_scatter(s, (3,), (1,)), rand(3, 3), rand(2))


# ---- set_printoptions, as minitorch.set_printoptions ----
@pytest.mark.parametrize("opts", [dict(precision=2), dict(sci_mode=True), dict(sci_mode=False), dict(profile="short"),
                                  dict(linewidth=20), dict(threshold=5, edgeitems=1), dict(profile="full"),
                                  dict(precision=6, linewidth=120)])
def test_set_printoptions_prints_as_torch(opts):
    torch = pytest.importorskip("torch")
    values = [np.array([[1e-5, 1.23456789, 1000.5], [NAN, -INF, 3]]), np.arange(2000.0).reshape(40, 50),
              np.arange(7.0), np.array([1.5e10, 2.0]), np.arange(3000.0).reshape(3, 1000), np.array(3.14159265)]
    try:
        minitorch.set_printoptions(**opts)
        torch.set_printoptions(**opts)
        for a in values:  # float32: no dtype suffix, whose name differs
            assert str(minitorch.tensor(a, dtype=minitorch.float32)) == str(torch.tensor(a, dtype=torch.float32))
    finally:
        minitorch.set_printoptions(profile="default", sci_mode=None)
        torch.set_printoptions(profile="default", sci_mode=None)
