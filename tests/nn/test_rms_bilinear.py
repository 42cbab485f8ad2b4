"""rms_norm and bilinear (C composites), softmin, gumbel_softmax and their modules RMSNorm,
Bilinear, Softmin, Softmax2d against PyTorch with the same inputs and weights: values,
gradients of every input, non-contiguous inputs, dtypes, reprs, initialisation from the same
seed, and errors (class and message)."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, same_as_torch, same_error, torch

F = minitorch.nn.functional
RNG = np.random.default_rng(21)


def data(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


# ---- rms_norm ----

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape,norm", [((2, 5), (5,)), ((3, 2, 4), (2, 4)), ((4,), (4,)), ((2, 3, 2, 3), (3,)),
                                        ((0, 3), (3,)), ((2, 0), (0,))])
def test_rms_norm_values_and_gradients(shape, norm, layout):
    x, w = data(*shape), data(*norm)
    same_as_torch(lambda m, x, w: m.nn.functional.rms_norm(x, list(norm), w, eps=1e-3), [x, w], layout=layout,
                  atol=1e-9)
    same_as_torch(lambda m, x: m.nn.functional.rms_norm(x, norm), [x], layout=layout, atol=1e-9)
    same_as_torch(lambda m, x, w: m.rms_norm(x, norm, w), [x.astype("float32"), w.astype("float32")],
                  layout=layout, atol=1e-5, rtol=1e-4)


def test_rms_norm_nan_and_default_eps():
    x = data(3, 4)
    x[1, 2] = np.nan
    same_as_torch(lambda m, x: m.nn.functional.rms_norm(x, [4]), [x])
    zeros = np.zeros((2, 3), "float32")  # eps alone under the root: float32's machine epsilon
    same_as_torch(lambda m, x: m.nn.functional.rms_norm(x, [3]), [zeros])


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
@pytest.mark.parametrize("xdt,wdt", [("float16", "float16"), ("bfloat16", "bfloat16"), ("float16", "float32"),
                                     ("float32", "float64")])
def test_rms_norm_mixed_and_16_bit_dtypes(xdt, wdt):
    x, w = data(8, 37), data(37)
    got = F.rms_norm(minitorch.tensor(x).to(getattr(minitorch, xdt)), [37],
                     minitorch.tensor(w).to(getattr(minitorch, wdt)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.nn.functional.rms_norm(torch.tensor(x).to(getattr(torch, xdt)), [37],
                                            torch.tensor(w).to(getattr(torch, wdt)))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    tol = 1e-2 if "16" in xdt else 1e-6  # one rounding of the 16-bit result, or of float32's sums
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("call", [
    lambda m, x: m.nn.functional.rms_norm(x, [4]),
    lambda m, x: m.nn.functional.rms_norm(x, [1, 2, 3]),
    lambda m, x: m.nn.functional.rms_norm(x, []),
    lambda m, x: m.nn.functional.rms_norm(x, [3], m.ones(4)),
    lambda m, x: m.nn.functional.rms_norm(x, [3], m.ones(3, 1)),
    lambda m, x: m.nn.functional.rms_norm(x.long(), [3]),
])
def test_rms_norm_errors(call):
    same_error(call, data(2, 3))


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
@pytest.mark.parametrize("affine", [True, False])
def test_rms_norm_module(affine):
    m, t = minitorch.nn.RMSNorm([3, 4], eps=1e-4, elementwise_affine=affine), torch.nn.RMSNorm(
        [3, 4], eps=1e-4, elementwise_affine=affine)
    assert repr(m) == repr(t)
    assert repr(minitorch.nn.RMSNorm(5)) == repr(torch.nn.RMSNorm(5))
    assert list(m.state_dict()) == list(t.state_dict())
    if affine:
        w = data(3, 4)
        t.load_state_dict({"weight": torch.tensor(w)})
        m.load_state_dict({"weight": minitorch.tensor(w)})
        np.testing.assert_array_equal(minitorch.nn.RMSNorm(4).weight.detach().numpy(), np.ones(4, "float32"))
    x = data(2, 3, 4)
    mx, tx = minitorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    m.double()(mx).sum().backward()
    t.double()(tx).sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), atol=1e-10)
    if affine:
        np.testing.assert_allclose(m.weight.grad.numpy(), t.weight.grad.numpy(), atol=1e-10)


# ---- bilinear ----

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("lead,i,j,o", [((4,), 3, 5, 2), ((2, 3), 2, 2, 4), ((), 3, 4, 2), ((0,), 2, 3, 2),
                                        ((3,), 1, 1, 1)])
def test_bilinear_values_and_gradients(lead, i, j, o, layout):
    x1, x2, w, b = data(*lead, i), data(*lead, j), data(o, i, j), data(o)
    same_as_torch(lambda m, x1, x2, w, b: m.nn.functional.bilinear(x1, x2, w, b), [x1, x2, w, b], layout=layout,
                  atol=1e-9)
    same_as_torch(lambda m, x1, x2, w: m.bilinear(x1, x2, w), [x1, x2, w], layout=layout, atol=1e-9)


def test_bilinear_nan_propagates():
    x1, x2, w = data(3, 2), data(3, 4), data(2, 2, 4)
    x1[1, 0] = np.nan
    same_as_torch(lambda m, x1, x2, w: m.nn.functional.bilinear(x1, x2, w), [x1, x2, w])


@pytest.mark.parametrize("call", [
    lambda m, x1, x2, w: m.nn.functional.bilinear(x1, x2.unsqueeze(0), w),
    lambda m, x1, x2, w: m.nn.functional.bilinear(x1, x2[:2], w),
    lambda m, x1, x2, w: m.nn.functional.bilinear(x1[:, :1], x2, w),
    lambda m, x1, x2, w: m.nn.functional.bilinear(x1, x2[:, :3], w),
    lambda m, x1, x2, w: m.nn.functional.bilinear(x1, x2, w, m.ones(5, dtype=m.float64)),
    lambda m, x1, x2, w: m.nn.functional.bilinear(x1, x2, w[0]),
    lambda m, x1, x2, w: m.nn.functional.bilinear(x1, x2, w.unsqueeze(-1)),
    lambda m, x1, x2, w: m.nn.functional.bilinear(x1, x2.float(), w),
    lambda m, x1, x2, w: m.nn.functional.bilinear(x1, x2, w, m.ones(2, dtype=m.float32)),
    lambda m, x1, x2, w: m.nn.functional.bilinear(x1[0, 0], x2[0, 0], w),
])
def test_bilinear_errors(call):
    same_error(call, data(3, 2), data(3, 4), data(2, 2, 4))


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_module_init_repr_and_grads(bias):
    minitorch.manual_seed(3)
    torch.manual_seed(3)
    m, t = minitorch.nn.Bilinear(3, 4, 5, bias=bias), torch.nn.Bilinear(3, 4, 5, bias=bias)
    assert repr(m) == repr(t)
    assert list(m.state_dict()) == list(t.state_dict())
    for k, v in t.state_dict().items():  # the same draws from the same seed
        np.testing.assert_array_equal(m.state_dict()[k].numpy(), v.numpy())
    x1, x2 = data(6, 3).astype("float32"), data(6, 4).astype("float32")
    out_m = m(minitorch.tensor(x1), minitorch.tensor(x2))
    out_t = t(torch.tensor(x1), torch.tensor(x2))
    np.testing.assert_allclose(out_m.detach().numpy(), out_t.detach().numpy(), atol=1e-5)
    out_m.sum().backward()
    out_t.sum().backward()
    for (name, p), (_, q) in zip(m.named_parameters(), t.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-5, err_msg=name)
    with pytest.raises(ValueError, match=r"in1_features must be > 0, but got \(in1_features=0\)"):
        minitorch.nn.Bilinear(0, 2, 2)


# ---- softmin, Softmax2d, gumbel_softmax ----

@pytest.mark.parametrize("layout", LAYOUTS)
def test_softmin_values_and_gradients(layout):
    x = data(3, 4, 2)
    x[0, 1, 1] = np.nan
    for dim in (0, 1, -1):
        same_as_torch(lambda m, x: m.nn.functional.softmin(x, dim), [x], layout=layout, atol=1e-9)
        same_as_torch(lambda m, x: m.nn.Softmin(dim)(x), [x], layout=layout, atol=1e-9)
    same_as_torch(lambda m, x: m.nn.functional.softmin(x, 1, dtype=m.float32), [x], layout=layout, atol=1e-6)


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_softmin_implicit_dim_warns_and_reprs():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        F.softmin(minitorch.ones(2, 3))
    assert repr(minitorch.nn.Softmin(1)) == repr(torch.nn.Softmin(1))
    assert repr(minitorch.nn.Softmax2d()) == repr(torch.nn.Softmax2d())


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 2, 2)])
def test_softmax2d(shape):
    same_as_torch(lambda m, x: m.nn.Softmax2d()(x), [data(*shape)], layout="transposed", atol=1e-9)


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4, 5, 6)])
def test_softmax2d_rejects_other_ranks(shape):
    same_error(lambda m, x: m.nn.Softmax2d()(x), data(*shape))


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("dim", [-1, 0])
def test_gumbel_softmax_same_draws_and_gradients(hard, dim):
    logits = data(4, 6)
    mx, tx = minitorch.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    minitorch.manual_seed(7)
    torch.manual_seed(7)
    got = F.gumbel_softmax(mx, tau=0.5, hard=hard, dim=dim)
    want = torch.nn.functional.gumbel_softmax(tx, tau=0.5, hard=hard, dim=dim)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-9)
    weight = data(4, 6)
    (got * minitorch.tensor(weight)).sum().backward()
    (want * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), atol=1e-9)
    if hard:
        np.testing.assert_array_equal(got.detach().numpy().sum(dim), np.ones(got.shape[1 + dim]))


def test_gumbel_softmax_eps_is_deprecated():
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect."):
        F.gumbel_softmax(minitorch.zeros(2, 3), eps=1e-3)
