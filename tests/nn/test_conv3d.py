"""conv3d (one op: its CPU kernel vol2col + gemm, elsewhere a composite over conv2d, one per depth
tap of the kernel; one ConvolutionBackward0 node) and nn.Conv3d against PyTorch: values, the gradients of input, weight and bias, stride, padding (ints and 'same'),
dilation, groups, unbatched input, padding modes, non-contiguous inputs, init from the same seed,
repr and errors; nn.BatchNorm3d."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, same_as_torch, same_error, torch

RNG = np.random.default_rng(24)


def data(*shape):
    return RNG.standard_normal(shape)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("xs,ws,kw", [
    ((2, 2, 5, 6, 4), (3, 2, 3, 3, 2), {}),
    ((1, 2, 6, 5, 5), (4, 2, 2, 3, 3), {"stride": 2, "padding": 1}),
    ((2, 4, 5, 5, 5), (4, 2, 3, 1, 3), {"stride": (1, 2, 1), "padding": (2, 0, 1), "dilation": (2, 1, 1), "groups": 2}),
    ((2, 4, 7, 5, 5), (2, 4, 3, 3, 3), {"padding": "same", "dilation": 2}),
    ((2, 3, 4, 4), (2, 2, 3, 2, 2), {"padding": "valid"}),
    ((1, 1, 3, 3, 3), (1, 1, 3, 3, 3), {}),
])
def test_conv3d_values_and_gradients(xs, ws, kw, layout):
    x, w, b = data(*xs), data(*ws), data(ws[0])
    if len(xs) == 4:  # unbatched (C, D, H, W)
        x = data(ws[1], *xs[1:])
    same_as_torch(lambda m, x, w, b: m.nn.functional.conv3d(x, w, b, **kw), [x, w, b], layout=layout, atol=1e-9)
    same_as_torch(lambda m, x, w: m.conv3d(x, w, **{k: v for k, v in kw.items() if not isinstance(v, str)}),
                  [x.astype("float32"), w.astype("float32")], layout=layout, atol=1e-4, rtol=1e-4)


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv3d_module(padding_mode):
    minitorch.manual_seed(1)
    torch.manual_seed(1)
    m = minitorch.nn.Conv3d(2, 4, (3, 2, 3), stride=(1, 2, 1), padding=1, padding_mode=padding_mode)
    t = torch.nn.Conv3d(2, 4, (3, 2, 3), stride=(1, 2, 1), padding=1, padding_mode=padding_mode)
    assert repr(m) == repr(t)
    for k, v in t.state_dict().items():  # the same init from the same seed
        np.testing.assert_array_equal(m.state_dict()[k].numpy(), v.numpy())
    x = data(2, 2, 4, 5, 6).astype("float32")
    mx, tx = minitorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out_m, out_t = m(mx), t(tx)
    np.testing.assert_allclose(out_m.detach().numpy(), out_t.detach().numpy(), atol=1e-5)
    out_m.square().sum().backward()
    out_t.square().sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(m.weight.grad.numpy(), t.weight.grad.numpy(), atol=1e-3, rtol=1e-4)
    np.testing.assert_allclose(m.bias.grad.numpy(), t.bias.grad.numpy(), atol=1e-3, rtol=1e-4)


@pytest.mark.parametrize("call", [
    lambda m, x, w: m.nn.functional.conv3d(x[0, 0], w),
    lambda m, x, w: m.nn.functional.conv3d(x, w[:, :1]),
    lambda m, x, w: m.nn.functional.conv3d(x[:, :, :2], w),
    lambda m, x, w: m.nn.functional.conv3d(x, w, m.ones(3, dtype=m.float64)),
    lambda m, x, w: m.nn.functional.conv3d(x, w, stride=0),
    lambda m, x, w: m.nn.functional.conv3d(x, w, padding=-1),
    lambda m, x, w: m.nn.functional.conv3d(x, w, groups=2),
    lambda m, x, w: m.nn.functional.conv3d(x, w, stride=2, padding="same"),
    lambda m, x, w: m.nn.functional.conv3d(x.float(), w.float(), m.ones(2, dtype=m.float64)),
    lambda m, x, w: m.nn.functional.conv3d(x.float(), w),
    lambda m, x, w: m.nn.functional.conv3d(x, w[:, :, :0]),
    lambda m, x, w: m.nn.functional.conv3d(x.bool(), w.bool()),
    lambda m, x, w: m.nn.functional.conv3d(x.int(), w.int(), dilation=(1, 2, 1)),
])
def test_conv3d_errors(call):
    same_error(call, data(1, 2, 4, 4, 4), data(2, 2, 3, 3, 3))


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_batch_norm_3d():
    m, t = minitorch.nn.BatchNorm3d(3, momentum=0.2), torch.nn.BatchNorm3d(3, momentum=0.2)
    assert repr(m) == repr(t) and list(m.state_dict()) == list(t.state_dict())
    x = data(2, 3, 2, 3, 4)
    mx, tx = minitorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    m.double()(mx).square().sum().backward()
    t.double()(tx).square().sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), atol=1e-8)
    np.testing.assert_allclose(m.running_var.numpy(), t.running_var.numpy(), atol=1e-10)
    m.eval()
    t.eval()
    np.testing.assert_allclose(m(minitorch.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(), atol=1e-10)
    with pytest.raises(ValueError, match="expected 5D input \\(got 4D input\\)"):
        m(minitorch.ones(2, 3, 4, 4, dtype=minitorch.float64))


@pytest.mark.parametrize("xs,ws,kw", [
    ((0, 2, 4, 4, 4), (3, 2, 2, 2, 2), {}),  # empty batch
    ((2, 2, 4, 4, 4), (0, 2, 2, 2, 2), {}),  # no output channels
    ((2, 4, 3, 5, 4), (6, 2, 1, 1, 1), {"groups": 2}),  # 1x1x1: the volume is its own col
    ((1, 3, 6, 3, 3), (2, 3, 3, 1, 1), {"stride": (3, 1, 1), "padding": (2, 0, 0)}),  # depth padding
])
def test_conv3d_edges(xs, ws, kw):
    x, w, b = data(*xs), data(*ws), data(ws[0])
    x.flat[::7] = np.nan  # NaN reaches the outputs and gradients it touches
    same_as_torch(lambda m, x, w, b: m.nn.functional.conv3d(x, w, b, **kw), [x, w, b], layout="transposed", atol=1e-9)


@pytest.mark.parametrize("dtype", ["int64", "int32", "float16"])
def test_conv3d_dtypes(dtype):
    x, w = (RNG.integers(-3, 4, s).astype(dtype) for s in [(2, 2, 4, 5, 3), (3, 2, 2, 3, 2)])
    same_as_torch(lambda m, x, w: m.conv3d(x, w, stride=(1, 2, 1), padding=1), [x, w], grad=False, atol=1e-2)


def test_conv3d_one_node_and_gradgrad():
    """One ConvolutionBackward0 node whose gradients are differentiable again (against PyTorch's
    second derivatives: the gradient of the input gradient's weighted sum, to input and weight)."""
    x, w = data(2, 2, 4, 3, 4), data(4, 1, 2, 2, 3)
    same_as_torch(lambda m, x, w: m.autograd.grad((m.nn.functional.conv3d(x, w, stride=(2, 1, 1), padding=(1, 0, 1),
                                                                          dilation=(1, 2, 1), groups=2) ** 2).sum(),
                                                  x, create_graph=True)[0], [x, w], atol=1e-8)
    xm = minitorch.tensor(x, requires_grad=True)
    node = minitorch.nn.functional.conv3d(xm, minitorch.tensor(w, requires_grad=True), groups=2).grad_fn
    assert type(node).__name__ == node.name() == "ConvolutionBackward0"
    assert [type(e).__name__ for e, _ in node.next_functions] == ["AccumulateGrad", "AccumulateGrad", "NoneType"]
