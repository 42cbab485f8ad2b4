"""The convolutions' edge cases against PyTorch, table-driven: every bad call of conv1d/2d/3d and
conv_transpose1d/2d/3d (a spatial size 0 with a batch, a kernel larger than the padded input,
zero or negative stride and dilation, groups that do not divide the channels, weights of the wrong
dims, ...) raises PyTorch's exception class with its words; and an empty batch (N=0) gives
PyTorch's output and gradients, strides included, for every layout of input and weight.

The words are compared in float64: there PyTorch's CPU convolutions run its own kernels, whose
messages minitorch follows; in float32 its oneDNN path words some of the same faults after its
primitives ("could not create a primitive descriptor ..."), so float32 compares the class only."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy, same_error, torch

RNG = np.random.default_rng(20)

# op: (spatial dims, transposed)
OPS = {"conv1d": (1, False), "conv2d": (2, False), "conv3d": (3, False),
       "conv_transpose1d": (1, True), "conv_transpose2d": (2, True), "conv_transpose3d": (3, True)}


def geometry(op, c=4, sp=5, k=3, oc=6):
    """input (2, c, sp...) and weight shapes of op: (oc, c, k...) or transposed (c, oc, k...)"""
    dims, transposed = OPS[op]
    return (2, c) + (sp,) * dims, ((c, oc) if transposed else (oc, c)) + (k,) * dims


def bad_calls():
    """(op, case, input shape, weight shape, keyword arguments; bias=n gives a bias of n)"""
    out = []
    for op, (dims, transposed) in OPS.items():
        x, w = geometry(op)
        k1 = w[:2] + (1,) * dims
        cases = {
            "spatial0": (x[:2] + (0,) + x[3:], w, {}),
            "spatial0_k1": (x[:2] + (0,) + x[3:], k1, {}),
            "spatial0_padded": (x[:2] + (0,) + x[3:], k1, dict(padding=1)),
            "last_spatial0": (x[:-1] + (0,), w, {}),
            "dilation0": (x, w, dict(dilation=0)),
            "dilation_neg": (x, w, dict(dilation=-1)),
            "stride0": (x, w, dict(stride=0)),
            "stride_neg": (x, w, dict(stride=-2)),
            "stride0_last": (x, w, dict(stride=(1,) * (dims - 1) + (0,))),
            "padding_neg": (x, w, dict(padding=-1)),
            "groups_not_dividing_input": (x[:1] + (5,) + x[2:], w, dict(groups=2)),
            "groups_not_dividing_weight": (x, w, dict(groups=3)),
            "groups0": (x, w, dict(groups=0)),
            "groups_neg": (x, w, dict(groups=-2)),
            "weight_2d": (x, w[:2], {}),
            "weight_1d": (x, w[:1], {}),
            "weight_extra_dim": (x, w + (3,), {}),
            "input_2d": (x[:2], w, {}),
            "input_extra_dim": ((1,) + x, w, {}),
            "channels_mismatch": (x[:1] + (3,) + x[2:], w, {}),
            "kernel0": (x, w[:2] + (0,) * dims, {}),
            "weight_no_outputs": (x, (x[1], 0) + w[2:] if transposed else (0,) + w[1:], {}),
            "bias_wrong": (x, w, dict(bias=7)),
            "stride_too_long": (x, w, dict(stride=(1,) * (dims + 1))),
            "padding_too_long": (x, w, dict(padding=(1,) * (dims + 1))),
            "dilation_too_long": (x, w, dict(dilation=(1,) * (dims + 1))),
        }
        if dims > 1:
            cases["weight_fewer_dims"] = (x, w[:-1], {})
        if transposed:
            cases["output_padding_too_big"] = (x, w, dict(stride=2, output_padding=2))
            cases["output_padding_neg"] = (x, w, dict(output_padding=-1))
            cases["output_too_small"] = (x[:2] + (1,) * dims, k1, dict(padding=1))
        else:
            cases["kernel_over_input"] = (x[:2] + (2,) * dims, w, {})
            cases["dilated_kernel_over_input"] = (x, w, dict(dilation=3))
            cases["same_strided"] = (x, w, dict(padding="same", stride=2))
            cases["padding_string"] = (x, w, dict(padding="full"))
        out += [pytest.param(op, xs, ws, kw, id=f"{op}-{name}") for name, (xs, ws, kw) in cases.items()]
    return out


def call(op, kw):
    kw = dict(kw)
    nbias = kw.pop("bias", None)

    def fn(lib, x, w):
        b = None if nbias is None else lib.zeros(nbias, dtype=x.dtype)
        return getattr(lib.nn.functional, op)(x, w, b, **kw)
    return fn


@pytest.mark.parametrize("op,xs,ws,kw", bad_calls())
def test_bad_convolution_raises_as_torch(op, xs, ws, kw):
    x, w = RNG.standard_normal(xs), RNG.standard_normal(ws)
    same_error(call(op, kw), x, w)  # float64: class and words
    if torch is None:
        return
    errors = []
    for lib in (minitorch, torch):  # float32: the class
        with pytest.raises(Exception) as info:
            call(op, kw)(lib, lib.tensor(x.astype(np.float32)), lib.tensor(w.astype(np.float32)))
        errors.append(info.value)
    assert isinstance(errors[0], type(errors[1])) or isinstance(errors[1], type(errors[0])), errors


# transposed convolutions have no kernel-size check: a kernel over the input is a larger output
@pytest.mark.parametrize("op", ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d"])
@pytest.mark.parametrize("kw", [{}, dict(dilation=3)])
def test_transposed_kernel_over_input_matches_torch(op, kw):
    dims = OPS[op][0]
    x, w = RNG.standard_normal((2, 4) + (2,) * dims), RNG.standard_normal((4, 3) + (3,) * dims)
    got = getattr(minitorch.nn.functional, op)(minitorch.tensor(x), minitorch.tensor(w), **kw)
    if torch is not None:
        want = getattr(torch.nn.functional, op)(torch.tensor(x), torch.tensor(w), **kw)
        assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
        np.testing.assert_allclose(as_numpy(got), want.numpy(), atol=1e-10)


def _formats(lib, ndim):
    return {"contiguous": lib.contiguous_format, "channels_last": lib.channels_last,
            "channels_last_3d": lib.channels_last_3d}


def _layouts(ndim):
    names = ["contiguous", "permuted"]
    return names + (["channels_last"] if ndim == 4 else ["channels_last_3d"] if ndim == 5 else [])


def empty_batch_cases():
    out = []
    for op, (dims, transposed) in OPS.items():
        nd = dims + 2
        for xl in _layouts(nd):
            for wl in _layouts(nd):
                for groups in (1, 2):
                    out.append(pytest.param(op, xl, wl, groups, id=f"{op}-{xl}-{wl}-g{groups}"))
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op,x_layout,w_layout,groups", empty_batch_cases())
def test_empty_batch_lays_out_as_torch(op, x_layout, w_layout, groups, dtype):
    """N=0: a row-major output whatever the operands' layout, and zero gradients laid out as the
    input and the weight each, as PyTorch's Empty backend gives them."""
    dims, transposed = OPS[op]
    xs = (0, 4) + (5,) * dims
    ws = ((4, 3) if transposed else (6, 4 // groups)) + (3,) * dims
    nb = 3 * groups if transposed else 6
    arrays = [np.zeros(xs, dtype), RNG.standard_normal(ws).astype(dtype), RNG.standard_normal(nb).astype(dtype)]

    def go(lib):
        def make(a, lay):
            # empty() states the strides (PyTorch's tensor() of no element has all 0)
            if lay == "permuted":  # channels stored last by a permute, not a memory format
                perm = (0,) + tuple(range(2, a.ndim)) + (1,)
                stored = lib.empty(a.transpose(perm).shape, dtype=getattr(lib, dtype))
                return stored.permute(*np.argsort(perm).tolist()).copy_(lib.tensor(a))
            fmt = _formats(lib, a.ndim)[lay]
            return lib.empty(a.shape, dtype=getattr(lib, dtype), memory_format=fmt).copy_(lib.tensor(a))

        x, w = make(arrays[0], x_layout), make(arrays[1], w_layout)
        b = lib.tensor(arrays[2])
        x, w, b = (t.requires_grad_(True) for t in (x, w, b))
        y = getattr(lib.nn.functional, op)(x, w, b, padding=1, groups=groups)
        return (x, w, y, *lib.autograd.grad(y.sum(), (x, w, b)))

    got = go(minitorch)
    assert got[2].shape[0] == 0 and got[2].is_contiguous()
    for g, a in zip(got[3:], arrays):
        np.testing.assert_array_equal(as_numpy(g), np.zeros_like(a))
    if torch is not None:
        want = go(torch)
        assert got[0].stride() == want[0].stride() and got[1].stride() == want[1].stride()
        # conv_transpose3d has no node of its own (its pieces record): its input's and weight's
        # gradients come back through them, with their shapes but not PyTorch's strides
        same_strides = [True, op != "conv_transpose3d", op != "conv_transpose3d", True]
        for g, r, strict in zip(got[2:], want[2:], same_strides):
            assert tuple(g.shape) == tuple(r.shape), (g.shape, r.shape)
            assert g.stride() == r.stride() or not strict, (g.stride(), r.stride())


def zero_channel_cases():
    """(op, input shape, weight shape, keyword arguments) with zero input channels"""
    return [
        ("conv1d", (2, 0, 6), (3, 0, 2), {}),
        ("conv1d", (0, 6), (3, 0, 2), {}),
        ("conv2d", (2, 0, 4, 4), (3, 0, 2, 2), {}),
        ("conv2d", (0, 4, 4), (3, 0, 2, 2), {}),
        ("conv2d", (0, 0, 4, 4), (3, 0, 2, 2), {}),
        ("conv2d", (2, 0, 4, 4), (4, 0, 2, 2), {"groups": 2}),
        ("conv2d", (2, 0, 4, 4), (3, 0, 2, 2), {"stride": 2, "padding": 1, "dilation": 2}),
        ("conv3d", (2, 0, 4, 4, 4), (3, 0, 2, 2, 2), {}),
        ("conv3d", (1, 0, 3, 4, 5), (2, 0, 1, 2, 3), {"padding": 1}),
    ]


@pytest.mark.skipif(torch is None, reason="needs PyTorch")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("op,xs,ws,kw", zero_channel_cases())
def test_zero_input_channels_as_torch(op, xs, ws, kw, bias, dtype):
    """C=0: PyTorch's Empty backend gives no output channels, and zero gradients (the bias's
    too, of its own size)."""
    def go(lib):
        x = lib.zeros(xs, dtype=getattr(lib, dtype), requires_grad=True)
        w = lib.zeros(ws, dtype=getattr(lib, dtype), requires_grad=True)
        b = lib.ones(ws[0], dtype=getattr(lib, dtype), requires_grad=True) if bias else None
        y = getattr(lib.nn.functional, op)(x, w, b, **kw)
        y.sum().backward()
        return [y, x.grad, w.grad] + ([b.grad] if bias else [])

    for g, r in zip(go(minitorch), go(torch)):
        assert tuple(g.shape) == tuple(r.shape) and g.stride() == r.stride(), (g.shape, r.shape)
        np.testing.assert_array_equal(as_numpy(g), r.detach().numpy())


@pytest.mark.skipif(torch is None, reason="needs PyTorch")
@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format"])
def test_zero_input_channels_module_as_torch(fmt):
    shapes = []
    for lib in (minitorch, torch):
        lib.manual_seed(0)
        m = lib.nn.Conv2d(0, 3, 2)
        x = lib.zeros(2, 0, 4, 4).to(memory_format=getattr(lib, fmt))
        y = m(x)
        shapes.append((tuple(y.shape), y.stride()))
    assert shapes[0] == shapes[1]
