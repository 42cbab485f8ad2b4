"""conv3d's weight gradient on the CPU as one op (issue 21): convolution_backward_weight with a 5-D
weight_size, the whole volume at once (cpu/conv_backward.c: conv_nhwc.c's register kernel on
channels-last-3d float32 with 16 or more input channels a group, conv_direct.c's on rows that fill
its vectors, else vol2col and a gemm per volume), where it went depth tap by depth tap through a
copy of the input's slices per tap. The gradients of input, weight and bias against PyTorch's in
float64 and float32, on every path: odd sizes, stride, padding, dilation, groups, unbatched,
non-contiguous and channels-last inputs; the op called from Python (values, checks), its own
gradients (conv3d's double backward) against PyTorch and by finite differences."""
import numpy as np
import pytest

import minitorch
from helpers import same_as_torch, torch
from minitorch._journey import record

RNG = np.random.default_rng(321)


def data(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


# (input, weight, conv3d's keywords): float32 row-major takes the direct kernel where rows of
# 12..16 or 29.. outputs fill its vectors, the gemm on narrow rows, strided many taps, a 1x1x1
# kernel; float64 always the gemm; channels-last float32 with 16, 17 and 20 input channels a group
# the register kernel (one vector of 16 channels, two overlapping, groups), fewer the others
CASES = [
    ((2, 3, 5, 6, 13), (5, 3, 3, 3, 3), dict(padding=1)),
    ((2, 4, 6, 5, 14), (6, 2, 3, 2, 3), dict(stride=(2, 1, 1), padding=(1, 0, 2), dilation=(1, 2, 1), groups=2)),
    ((2, 4, 5, 6, 5), (6, 2, 3, 2, 3), dict(padding=(0, 1, 1), dilation=(2, 1, 2), groups=2)),
    ((1, 12, 5, 5, 16), (4, 12, 3, 3, 3), dict(stride=2, padding=1)),
    ((2, 3, 4, 5, 6), (4, 3, 1, 1, 1), dict()),
    ((2, 16, 4, 5, 9), (20, 16, 3, 3, 3), dict(padding=1)),
    ((1, 17, 3, 6, 7), (8, 17, 2, 3, 3), dict(stride=(1, 2, 1), padding=(0, 1, 1), dilation=(1, 1, 2))),
    ((2, 40, 3, 4, 5), (12, 20, 3, 1, 3), dict(padding=(1, 0, 1), groups=2)),
    ((3, 5, 6, 7), (4, 3, 2, 3, 3), dict(padding=1)),  # unbatched (C, D, H, W), C from the weight
]


def conv(kw):
    return lambda m, x, w, b: m.nn.functional.conv3d(x, w, b, **kw)


def arrays(xs, ws, dtype):
    if len(xs) == 4:
        xs = (ws[1],) + xs[1:]
    return [data(*xs, dtype=dtype), data(*ws, dtype=dtype), data(ws[0], dtype=dtype)]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "channels_last"])
@pytest.mark.parametrize("xs,ws,kw", CASES)
def test_conv3d_gradients_float64(xs, ws, kw, layout):
    same_as_torch(conv(kw), arrays(xs, ws, np.float64), layout=layout, atol=1e-9, rtol=1e-7)


@pytest.mark.parametrize("layout", ["contiguous", "sliced", "channels_last"])
@pytest.mark.parametrize("xs,ws,kw", CASES)
def test_conv3d_gradients_float32(xs, ws, kw, layout):
    same_as_torch(conv(kw), arrays(xs, ws, np.float32), layout=layout, atol=2e-4, rtol=2e-4)


def test_conv3d_weight_gradient_is_one_kernel_call():
    """no copy of the input's depth slices per tap: one convolution_backward_weight, no copy"""
    x = minitorch.randn(2, 4, 5, 6, 7, requires_grad=True)
    w = minitorch.randn(6, 4, 3, 3, 3, requires_grad=True)
    y = minitorch.nn.functional.conv3d(x, w, padding=1)
    g = minitorch.ones_like(y)
    _, events = record(lambda: minitorch.autograd.grad(y, w, g, retain_graph=True))
    ran = [e.label for e in events if e.layer == "Kernel"]
    assert ran.count("Kernel::mt_cpu_convolution_backward_weight") == 1, ran
    assert not any("copy" in k or "pad" in k or "cat" in k for k in ran), ran


def torch_weight_grad(go, x, ws, kw):
    t = pytest.importorskip("torch")
    tx, tw = t.tensor(x).requires_grad_(True), t.zeros(ws, dtype=t.float64, requires_grad=True)
    y = t.nn.functional.conv3d(tx, tw, None, **kw)
    return t.autograd.grad(y, tw, t.tensor(go))[0].numpy()


@pytest.mark.parametrize("xs,ws,kw", [c for c in CASES if len(c[0]) == 5])
def test_convolution_backward_weight_op_in_3d(xs, ws, kw):
    x, w, _ = arrays(xs, ws, np.float64)
    args = [kw.get(k, d) for k, d in (("stride", 1), ("padding", 0), ("dilation", 1))]
    args = [list(a) if isinstance(a, tuple) else a for a in args]
    out = minitorch.nn.functional.conv3d(minitorch.tensor(x), minitorch.tensor(w), None, **kw)
    go = data(*out.shape)
    got = minitorch._C.convolution_backward_weight(minitorch.tensor(go), minitorch.tensor(x), list(ws), *args,
                                                   kw.get("groups", 1))
    assert tuple(got.shape) == ws
    if torch is not None:
        np.testing.assert_allclose(np.asarray(got), torch_weight_grad(go, x, ws, kw), atol=1e-9, rtol=1e-7)


def test_convolution_backward_weight_op_in_3d_checks():
    C = minitorch._C
    go, x = minitorch.ones(1, 2, 3, 3, 3), minitorch.ones(1, 2, 5, 5, 5)
    assert tuple(C.convolution_backward_weight(go, x, [2, 2, 3, 3, 3], 1, 0, 1, 1).shape) == (2, 2, 3, 3, 3)
    with pytest.raises(RuntimeError, match="grad_output"):
        C.convolution_backward_weight(go, x, [2, 2, 2, 3, 3], 1, 0, 1, 1)
    with pytest.raises(RuntimeError, match="5-D input"):
        C.convolution_backward_weight(go[0], x[0], [2, 2, 3, 3, 3], 1, 0, 1, 1)
    with pytest.raises(RuntimeError, match="three ints"):
        C.convolution_backward_weight(go, x, [2, 2, 3, 3, 3], [1, 1], 0, 1, 1)
    with pytest.raises(RuntimeError, match="do not make"):
        C.convolution_backward_weight(go, x, [2, 1, 3, 3, 3], 1, 0, 1, 1)
    with pytest.raises(RuntimeError, match="do not make"):
        C.convolution_backward_weight(go, x, [2, 2, 3, 3, 3], 0, 0, 1, 1)
    with pytest.raises((RuntimeError, NotImplementedError)):
        C.convolution_backward_weight(go.long(), x.long(), [2, 2, 3, 3, 3], 1, 0, 1, 1)


def _grad_of_weight_grad(lib, x, w, kw):
    """the gradients of a penalty on conv3d's weight gradient (create_graph), of x and w"""
    xt, wt = lib.tensor(x).requires_grad_(True), lib.tensor(w).requires_grad_(True)
    out = lib.nn.functional.conv3d(xt, wt, None, **kw)
    (gw,) = lib.autograd.grad((out * out).sum(), wt, create_graph=True)
    (gw * gw).sum().backward()
    return gw.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()


@pytest.mark.parametrize("kw", [dict(padding=1), dict(stride=(2, 1, 1), dilation=(1, 1, 2), groups=2)])
def test_conv3d_double_backward_through_the_weight_gradient(kw):
    x, w = data(2, 4, 5, 4, 6), data(4, 4 // kw.get("groups", 1), 2, 3, 3)
    got = _grad_of_weight_grad(minitorch, x, w, kw)
    assert all(np.isfinite(g).all() for g in got)
    if torch is not None:
        for g, t in zip(got, _grad_of_weight_grad(torch, x, w, kw)):
            np.testing.assert_allclose(g, t, atol=1e-8, rtol=1e-7)


def test_convolution_backward_weight_op_in_3d_finite_differences():
    go, x = data(1, 2, 2, 2, 3), data(1, 2, 3, 3, 4)
    weight = data(2, 2, 2, 2, 2)

    def f(go, x):
        return minitorch._C.convolution_backward_weight(go, x, [2, 2, 2, 2, 2], 1, 0, 1, 1)

    gt, xt = minitorch.tensor(go).requires_grad_(True), minitorch.tensor(x).requires_grad_(True)
    (f(gt, xt) * minitorch.tensor(weight)).sum().backward()
    eps = 1e-6
    for t, a in ((gt, go), (xt, x)):
        num = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            hi, lo = a.copy(), a.copy()
            hi[i] += eps
            lo[i] -= eps
            val = [(np.asarray(f(minitorch.tensor(h if a is go else go), minitorch.tensor(h if a is x else x)))
                    * weight).sum() for h in (hi, lo)]
            num[i] = (val[0] - val[1]) / (2 * eps)
        np.testing.assert_allclose(t.grad.numpy(), num, atol=1e-6, rtol=1e-5)
