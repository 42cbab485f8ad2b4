"""The memory layout of convolutions' results and gradients against PyTorch's (issue 20): conv1d/2d/3d
and the transposed ones, row-major and channels-last operands (a 1x1 weight's channels-last strides
stated by empty(), or its row-major ones, which are channels-last-contiguous too), float32 and
float64, one and two threads. PyTorch's CPU lays them out as the backend it picks does (oneDNN,
whose channels-last (3d) follows either operand; the slow 2-D kernels, channels-last likewise; the
slow 3-D kernels, row-major), so the output's strides, the raw gradients' (autograd.grad) and the
leaves' .grad (after AccumulateGrad's layout contract) must equal PyTorch's exactly, size-1 dims
included, and the values its. conv_transpose3d has its own ConvolutionBackward0 node."""
import itertools

import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")

FMT = {4: "channels_last", 5: "channels_last_3d"}


def make(lib, a, lay):
    """a in lib, row-major ("c"), made channels-last by contiguous() ("cl": a 1x1 kernel keeps its
    row-major strides) or by empty() ("cle": channels-last strides throughout)"""
    if lay == "c" or a.ndim not in FMT:
        t = lib.tensor(a)
    elif lay == "cl":
        t = lib.tensor(a).contiguous(memory_format=getattr(lib, FMT[a.ndim]))
    else:
        t = lib.empty(a.shape, dtype=getattr(lib, str(a.dtype)),
                      memory_format=getattr(lib, FMT[a.ndim])).copy_(lib.tensor(a))
    return t.requires_grad_(True)


def run(lib, name, x, w, lx, lw, kw, gy):
    xt, wt = make(lib, x, lx), make(lib, w, lw)
    y = getattr(lib.nn.functional, name)(xt, wt, None, **kw)
    g = lib.tensor(gy)
    gx, gw = lib.autograd.grad(y, (xt, wt), g, retain_graph=True)
    y.backward(g)
    return y, gx, gw, xt.grad, wt.grad


# (dims, transposed, stride, padding, dilation, groups): oneDNN and the slow kernels each
CONFIGS = [(d, tr, s, p, dl, g) for d, tr in itertools.product((2, 3), (False, True))
           for s, p, dl, g in ((1, 0, 1, 1), (2, 1, 1, 1), (1, 1, 2, 1), (1, 0, 1, 2), (2, 1, 2, 2))]
LAYOUTS = [("c", "c"), ("cl", "c"), ("c", "cl"), ("cl", "cl"), ("cl", "cle"), ("c", "cle")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n,k", [(1, 1), (2, 1), (1, 3), (2, 3)])
@pytest.mark.parametrize("layouts", LAYOUTS)
@pytest.mark.parametrize("config", CONFIGS)
def test_conv_layouts_match_torch(config, layouts, n, k, dtype, threads):
    d, tr, stride, pad, dil, groups = config
    lx, lw = layouts
    rng = np.random.default_rng(hash((config, layouts, n, k)) % 2**32)
    c, o = 4, 6
    x = rng.standard_normal((n, c) + (5, 4, 6)[:d]).astype(dtype)
    w = rng.standard_normal(((c, o // groups) if tr else (o, c // groups)) + (k,) * d).astype(dtype)
    kw = dict(stride=stride, padding=pad, dilation=dil, groups=groups)
    if tr and stride == 2:
        kw["output_padding"] = 1
    name = ("conv_transpose%dd" if tr else "conv%dd") % d
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        y = getattr(torch.nn.functional, name)(make(torch, x, lx), make(torch, w, lw), None, **kw)
        gy = rng.standard_normal(tuple(y.shape)).astype(dtype)
        want = run(torch, name, x, w, lx, lw, kw, gy)
    finally:
        torch.set_num_threads(before)
    got = run(minitorch, name, x, w, lx, lw, kw, gy)
    assert got[0].grad_fn.name() == "ConvolutionBackward0"
    tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == "float32" else {"atol": 1e-10, "rtol": 1e-10}
    for what, g, r in zip(("output", "grad input", "grad weight", "x.grad", "w.grad"), got, want):
        assert tuple(g.stride()) == tuple(r.stride()), (what, g.stride(), r.stride())
        np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), err_msg=what, **tol)


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("stride,output_padding,dilation", [(1, 0, 1), (2, 1, 1), (1, 1, 2), (3, 2, 1)])
def test_conv_transpose3d_gradients(stride, output_padding, dilation, batched):
    """conv_transpose3d's one node: its input gradient is conv3d's of grad_output (cut where
    output_padding reached past the stride), its weight gradient conv3d's weight gradient; both
    equal PyTorch's and are differentiable again."""
    rng = np.random.default_rng(20)
    x = rng.standard_normal((2, 4, 3, 4, 3)[0 if batched else 1:])
    w = rng.standard_normal((4, 3, 2, 3, 2))
    b = rng.standard_normal(6)

    def go(lib):
        xt, wt, bt = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = lib.nn.functional.conv_transpose3d(xt, wt, bt, stride=stride, padding=1,
                                               output_padding=output_padding, groups=2, dilation=dilation)
        gx, gw, gb = lib.autograd.grad((y * y).sum(), (xt, wt, bt), create_graph=True)
        gg = lib.autograd.grad((gx * gx).sum() + (gw * gw).sum(), (xt, wt))
        return (y, gx, gw, gb) + tuple(gg)

    got, want = go(minitorch), go(torch)
    assert got[0].grad_fn.name() == "ConvolutionBackward0"
    for g, r in zip(got, want):
        assert tuple(g.shape) == tuple(r.shape)
        np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("layouts", [("cl", "c"), ("c", "cl"), ("c", "c")])
def test_bfloat16_conv_layouts_match_torch(dims, layouts):
    """bfloat16 goes to oneDNN wherever the CPU has AVX-512 (PyTorch's mkldnn_bf16_device_check),
    whatever the sizes: channels-last (3d) results and gradients for a channels-last operand;
    elsewhere to the slow kernels, as PyTorch's on that CPU."""
    rng = np.random.default_rng(dims)
    x = rng.standard_normal((2, 4) + (5, 4, 6)[:dims]).astype(np.float32)
    w = rng.standard_normal((6, 4) + (3,) * dims).astype(np.float32)

    def go(lib):
        xt, wt = (make(lib, a, lay).detach().to(lib.bfloat16).requires_grad_(True) for a, lay in zip((x, w), layouts))
        y = getattr(lib.nn.functional, "conv%dd" % dims)(xt, wt, None, padding=1)
        return (y,) + lib.autograd.grad(y, (xt, wt), lib.ones_like(y))

    for g, r in zip(go(minitorch), go(torch)):
        assert tuple(g.stride()) == tuple(r.stride()), (g.stride(), r.stride())
        np.testing.assert_allclose(g.detach().float().numpy(), r.detach().float().numpy(), atol=0.5, rtol=0.05)
