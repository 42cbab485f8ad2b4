"""F.grid_sample (grid_sampler_2d: bilinear, nearest and bicubic; grid_sampler_3d: trilinear and
nearest; zeros/border/reflection padding, align_corners) and F.affine_grid (affine_grid_generator, 2-D and 3-D) against PyTorch: values,
the gradients of input, grid and theta, non-contiguous inputs, grids reaching outside the image,
NaN, warnings and errors; and the spatial transformer tutorial's network, step by step."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, same_as_torch, same_error, torch

F = minitorch.nn.functional
RNG = np.random.default_rng(22)


def data(*shape, scale=1.0):
    return RNG.standard_normal(shape) * scale


MODES = ["bilinear", "nearest"]
PADDINGS = ["zeros", "border", "reflection"]


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_grid_sample_values_and_gradients(mode, padding, align):
    x = data(2, 3, 5, 6)
    grid = data(2, 4, 7, 2, scale=0.8)  # about a fifth of the points fall outside [-1, 1]
    grid[0, 0, 0] = [3.7, -2.9]  # far outside: reflected more than once
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding,
                                                             align_corners=align), [x, grid], atol=1e-10)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_grid_sample_strided_and_float32(layout):
    x, grid = data(2, 2, 4, 5), data(2, 3, 3, 2, scale=0.7)
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, align_corners=False), [x, grid], layout=layout,
                  atol=1e-10)
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, padding_mode="border", align_corners=True),
                  [x.astype("float32"), grid.astype("float32")], layout=layout, atol=1e-5, rtol=1e-4)


def test_grid_sample_size_one_and_empty():
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, padding_mode="reflection", align_corners=True),
                  [data(1, 2, 1, 1), data(1, 2, 2, 2)], atol=1e-10)
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, align_corners=False),
                  [data(0, 2, 3, 3), data(0, 2, 2, 2)])
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, align_corners=False),
                  [data(2, 0, 3, 3), data(2, 2, 2, 2)])
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, align_corners=False),
                  [data(2, 1, 3, 3), data(2, 0, 2, 2)])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding", PADDINGS)
def test_grid_sample_nan_and_inf_grid(mode, padding):
    grid = data(1, 3, 2, 2)
    grid[0, 1, 1, 0] = np.nan
    grid[0, 0, 1, 1] = np.inf
    grid[0, 2, 0, 0] = -np.inf
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding,
                                                             align_corners=False), [data(1, 2, 3, 3), grid], grad=False)


def test_grid_sample_identity_grid_copies_the_input():
    x = minitorch.randn(2, 3, 4, 5)
    theta = minitorch.tensor([[[1.0, 0, 0], [0, 1, 0]]] * 2)
    for align in (False, True):
        grid = F.affine_grid(theta, [2, 3, 4, 5], align_corners=align)
        out = F.grid_sample(x, grid, align_corners=align)
        np.testing.assert_allclose(out.numpy(), x.numpy(), atol=1e-6)


def test_grid_sample_warns_without_align_corners():
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
        F.grid_sample(minitorch.ones(1, 1, 2, 2), minitorch.zeros(1, 1, 1, 2))
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
        F.affine_grid(minitorch.zeros(1, 2, 3), [1, 1, 2, 2])


@pytest.mark.parametrize("call", [
    lambda m, x, g: m.nn.functional.grid_sample(x, g, mode="bogus", align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x, g, padding_mode="circular", align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x[:1], g, align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x, g[..., :1], align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x[:, :, :0], g, align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x, g.float(), align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x.long(), g.long(), align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x[0], g[:, 0], align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x, g[:, 0], align_corners=False),
    lambda m, x, g: m.grid_sampler_2d(x, g.float(), 0, 0, False),
])
def test_grid_sample_errors(call):
    same_error(call, data(2, 3, 4, 4), data(2, 3, 3, 2))


# ---- bicubic (4-D) ----

@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
def test_grid_sample_bicubic_values_and_gradients(padding, align):
    x = data(2, 3, 5, 6)
    grid = data(2, 4, 7, 2, scale=0.8)
    grid[0, 0, 0] = [3.7, -2.9]  # far outside: reflected more than once
    grid[1, 2, 3] = [1.0, -1.0]  # a corner exactly
    grid[1, 1, 1] = [0.9, 0.97]  # taps past the border
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode="bicubic", padding_mode=padding,
                                                             align_corners=align), [x, grid], atol=1e-10)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("padding", PADDINGS)
def test_grid_sample_bicubic_strided_and_float32(layout, padding):
    x, grid = data(2, 2, 4, 5), data(2, 3, 3, 2, scale=0.9)
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode="bicubic", padding_mode=padding,
                                                             align_corners=False), [x, grid], layout=layout, atol=1e-10)
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode="bicubic", padding_mode=padding,
                                                             align_corners=True),
                  [x.astype("float32"), grid.astype("float32")], layout=layout, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("padding", PADDINGS)
def test_grid_sample_bicubic_nan_inf_and_huge_grid(padding):
    grid = data(1, 3, 2, 2)
    grid[0, 1, 1, 0] = np.nan
    grid[0, 0, 1, 1] = np.inf
    grid[0, 2, 0, 0] = -np.inf
    grid[0, 2, 1] = [1e20, 0.1]
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode="bicubic", padding_mode=padding,
                                                             align_corners=False), [data(1, 2, 3, 3), grid], grad=False)


def test_grid_sample_bicubic_size_one_and_empty():
    for align in (False, True):
        same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode="bicubic", padding_mode="reflection",
                                                                 align_corners=align),
                      [data(1, 2, 1, 1), data(1, 2, 2, 2)], atol=1e-10)
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode="bicubic", align_corners=False),
                  [data(0, 2, 3, 3), data(0, 2, 2, 2)])


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_grid_sample_bicubic_gradcheck():
    x = minitorch.tensor(data(1, 2, 4, 4), requires_grad=True)
    g = minitorch.tensor(data(1, 3, 2, 2, scale=0.7), requires_grad=True)
    for padding in PADDINGS:
        assert minitorch.autograd.gradcheck(
            lambda x, g: F.grid_sample(x, g, mode="bicubic", padding_mode=padding, align_corners=False), (x, g))


# ---- 5-D (volumetric): trilinear and nearest ----

@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_grid_sample_3d_values_and_gradients(mode, padding, align):
    x = data(2, 3, 4, 5, 3)
    grid = data(2, 3, 2, 4, 3, scale=0.8)
    grid[0, 0, 0, 0] = [3.7, -2.9, 2.2]  # far outside: reflected more than once
    grid[1, 1, 1, 1] = [1.0, -1.0, 1.0]  # a corner exactly
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding,
                                                             align_corners=align), [x, grid], atol=1e-10)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_grid_sample_3d_strided_and_float32(layout):
    x, grid = data(2, 2, 3, 4, 5), data(2, 2, 3, 3, 3, scale=0.7)
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, padding_mode="reflection", align_corners=False),
                  [x, grid], layout=layout, atol=1e-10)
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, padding_mode="border", align_corners=True),
                  [x.astype("float32"), grid.astype("float32")], layout=layout, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding", PADDINGS)
def test_grid_sample_3d_nan_and_inf_grid(mode, padding):
    grid = data(1, 2, 3, 2, 3)
    grid[0, 0, 1, 1, 0] = np.nan
    grid[0, 1, 0, 1, 1] = np.inf
    grid[0, 1, 2, 0, 2] = -np.inf
    grid[0, 0, 2, 1, 0] = 1e20
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding,
                                                             align_corners=False), [data(1, 2, 3, 3, 3), grid],
                  grad=False)


def test_grid_sample_3d_size_one_empty_and_affine():
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, padding_mode="reflection", align_corners=True),
                  [data(1, 2, 1, 1, 1), data(1, 2, 1, 2, 3)], atol=1e-10)
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, align_corners=False),
                  [data(0, 2, 3, 3, 3), data(0, 2, 2, 2, 3)])
    same_as_torch(lambda m, x, g: m.nn.functional.grid_sample(x, g, align_corners=False),
                  [data(2, 1, 3, 3, 3), data(2, 0, 2, 2, 3)])
    # an affine grid through both: theta's gradient too
    same_as_torch(lambda m, x, t: m.nn.functional.grid_sample(
        x, m.nn.functional.affine_grid(t, [2, 2, 3, 4, 3], align_corners=False), align_corners=False),
        [data(2, 2, 3, 4, 5), np.tile(np.eye(3, 4), (2, 1, 1)) + data(2, 3, 4, scale=0.2)], atol=1e-10)


def test_grid_sample_3d_identity_grid_copies_the_input():
    x = minitorch.randn(2, 3, 2, 4, 5)
    theta = minitorch.tensor([[[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]] * 2)
    for align in (False, True):
        for mode in MODES:
            grid = F.affine_grid(theta, [2, 3, 2, 4, 5], align_corners=align)
            out = F.grid_sample(x, grid, mode=mode, align_corners=align)
            np.testing.assert_allclose(out.numpy(), x.numpy(), atol=1e-6)


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_grid_sample_3d_gradcheck():
    x = minitorch.tensor(data(1, 2, 3, 3, 2), requires_grad=True)
    g = minitorch.tensor(data(1, 2, 2, 1, 3, scale=0.7), requires_grad=True)
    for padding in PADDINGS:
        assert minitorch.autograd.gradcheck(
            lambda x, g: F.grid_sample(x, g, padding_mode=padding, align_corners=True), (x, g))


@pytest.mark.parametrize("call", [
    lambda m, x, g: m.nn.functional.grid_sample(x, g, mode="bicubic", align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x[:1], g, align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x, g[..., :2], align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x[:, :, :, :0], g, align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x, g.float(), align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x.int(), g.int(), align_corners=False),
    lambda m, x, g: m.nn.functional.grid_sample(x, g[:, 0], align_corners=False),
    lambda m, x, g: m.grid_sampler_3d(x[:, :, 0], g[:, 0, ..., :2], 0, 0, False),
    lambda m, x, g: m.grid_sampler_3d(x, g, 2, 0, False),
])
def test_grid_sample_3d_errors(call):
    same_error(call, data(2, 3, 4, 4, 3), data(2, 3, 3, 2, 3))


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_grid_sample_node_names():
    for shape, gshape, name in (((1, 1, 3, 3), (1, 2, 2, 2), "GridSampler2DBackward0"),
                                ((1, 1, 2, 3, 3), (1, 2, 2, 2, 3), "GridSampler3DBackward0")):
        x = minitorch.tensor(data(*shape), requires_grad=True)
        y = F.grid_sample(x, minitorch.tensor(data(*gshape)), align_corners=False)
        assert y.grad_fn.name() == name


# ---- affine_grid ----

@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 1, 1, 3], [2, 1, 3, 1]])
def test_affine_grid_2d(size, align):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unit-size notice
        same_as_torch(lambda m, t: m.nn.functional.affine_grid(t, size, align_corners=align), [data(2, 2, 3)],
                      atol=1e-12)
    same_as_torch(lambda m, t: m.nn.functional.affine_grid(t, size, align_corners=align),
                  [data(2, 2, 3).astype("float32")], layout="transposed", atol=1e-6)


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_3d(align):
    same_as_torch(lambda m, t: m.nn.functional.affine_grid(t, [2, 1, 3, 4, 2], align_corners=align),
                  [data(2, 3, 4)], atol=1e-12)


def test_affine_grid_argument_errors():
    t = minitorch.zeros(2, 2, 3)
    with pytest.raises(ValueError, match="Expected theta to have floating point type, but got minitorch.int64"):
        F.affine_grid(t.long(), [2, 1, 3, 3], align_corners=False)
    with pytest.raises(ValueError, match=r"Expected a batch of 2D affine matrices of shape Nx2x3 for size \[2, 1, 3, 3\]"):
        F.affine_grid(t[0], [2, 1, 3, 3], align_corners=False)
    with pytest.raises(ValueError, match=r"Expected a batch of 3D affine matrices of shape Nx3x4 for size"):
        F.affine_grid(t, [2, 1, 3, 3, 3], align_corners=False)


@pytest.mark.parametrize("call", [
    lambda m, t: m.nn.functional.affine_grid(t, [2, 3, 3], align_corners=False),
    lambda m, t: m.nn.functional.affine_grid(t, [2, 1, 0, 3], align_corners=False),
    lambda m, t: m.nn.functional.affine_grid(t, [3, 1, 2, 3], align_corners=False),
])
def test_affine_grid_errors(call):
    same_error(call, data(2, 2, 3))


# ---- the spatial transformer tutorial's network ----

def stn(m):
    m.manual_seed(0)

    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.localization = m.nn.Sequential(
                m.nn.Conv2d(1, 4, kernel_size=5), m.nn.MaxPool2d(2, stride=2), m.nn.ReLU(True))
            self.fc_loc = m.nn.Sequential(m.nn.Linear(4 * 4 * 4, 8), m.nn.ReLU(True), m.nn.Linear(8, 3 * 2))
            self.fc_loc[2].weight.data.zero_()
            self.fc_loc[2].bias.data.copy_(m.tensor([1, 0, 0, 0, 1, 0], dtype=m.float))
            self.head = m.nn.Linear(12 * 12, 3)

        def forward(self, x):
            xs = self.localization(x).view(-1, 4 * 4 * 4)
            theta = self.fc_loc(xs).view(-1, 2, 3)
            grid = m.nn.functional.affine_grid(theta, x.size(), align_corners=False)
            x = m.nn.functional.grid_sample(x, grid, align_corners=False)
            return m.nn.functional.log_softmax(self.head(x.view(-1, 12 * 12)), dim=1)

    return Net()


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_spatial_transformer_tutorial_trains_alike():
    nets = {"m": stn(minitorch), "t": stn(torch)}
    nets["m"].load_state_dict({k: minitorch.tensor(v.numpy()) for k, v in nets["t"].state_dict().items()})
    opts = {"m": minitorch.optim.SGD(nets["m"].parameters(), lr=0.05),
            "t": torch.optim.SGD(nets["t"].parameters(), lr=0.05)}
    x, y = data(6, 1, 12, 12).astype("float32"), RNG.integers(0, 3, 6)
    for _ in range(4):
        losses = {}
        for key, lib in (("m", minitorch), ("t", torch)):
            opts[key].zero_grad()
            loss = lib.nn.functional.nll_loss(nets[key](lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opts[key].step()
            losses[key] = loss.item()
        assert abs(losses["m"] - losses["t"]) < 1e-5
    for (name, p), (_, q) in zip(nets["m"].named_parameters(), nets["t"].named_parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), atol=1e-5, err_msg=name)


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_the_ops_directly():
    theta, x = data(2, 2, 3), data(2, 3, 4, 5)
    grid = minitorch.affine_grid_generator(minitorch.tensor(theta), [2, 3, 3, 4], True)
    want = torch.affine_grid_generator(torch.tensor(theta), [2, 3, 3, 4], True)
    np.testing.assert_allclose(grid.numpy(), want.numpy(), atol=1e-12)
    go = data(2, 3, 3, 4)
    gi, gg = minitorch._C.grid_sampler_2d_backward(minitorch.tensor(go), minitorch.tensor(x), grid, 0, 2, True)
    tgi, tgg = torch.ops.aten.grid_sampler_2d_backward(torch.tensor(go), torch.tensor(x), want, 0, 2, True,
                                                       [True, True])
    np.testing.assert_allclose(gi.numpy(), tgi.numpy(), atol=1e-12)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), atol=1e-12)
    with pytest.raises(RuntimeError, match="grid_sampler_2d_backward: grad_output of sizes"):
        minitorch._C.grid_sampler_2d_backward(minitorch.tensor(go[:1]), minitorch.tensor(x), grid, 0, 2, True)
    with pytest.raises(ValueError, match="interpolation_mode must be 0 \\(bilinear\\), 1 \\(nearest\\) or 2"):
        minitorch.grid_sampler_2d(minitorch.tensor(x), grid, 3, 0, False)
    with pytest.raises(ValueError, match="padding_mode must be 0 \\(zeros\\), 1 \\(border\\) or 2"):
        minitorch.grid_sampler_2d(minitorch.tensor(x), grid, 0, 5, False)
    with pytest.raises(ValueError, match="grid_sampler_3d\\(\\): interpolation_mode must be"):
        minitorch.grid_sampler_3d(minitorch.tensor(data(1, 1, 2, 2, 2)), minitorch.tensor(data(1, 1, 1, 1, 3)), 5, 0,
                                  False)


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_the_3d_ops_directly():
    x, grid, go = data(2, 3, 3, 4, 5), data(2, 2, 3, 4, 3, scale=0.8), data(2, 3, 2, 3, 4)
    mx, mg = minitorch.tensor(x), minitorch.tensor(grid)
    tx, tg = torch.tensor(x), torch.tensor(grid)
    for mode in (0, 1):
        for padding in (0, 1, 2):
            out = minitorch.grid_sampler_3d(mx, mg, mode, padding, True)
            np.testing.assert_allclose(out.numpy(), torch.grid_sampler_3d(tx, tg, mode, padding, True).numpy(),
                                       atol=1e-12)
            gi, gg = minitorch._C.grid_sampler_3d_backward(minitorch.tensor(go), mx, mg, mode, padding, True)
            tgi, tgg = torch.ops.aten.grid_sampler_3d_backward(torch.tensor(go), tx, tg, mode, padding, True,
                                                               [True, True])
            np.testing.assert_allclose(gi.numpy(), tgi.numpy(), atol=1e-12)
            np.testing.assert_allclose(gg.numpy(), tgg.numpy(), atol=1e-12)
    with pytest.raises(RuntimeError, match="grid_sampler_3d_backward: grad_output of sizes"):
        minitorch._C.grid_sampler_3d_backward(minitorch.tensor(go[:, :1]), mx, mg, 0, 0, True)
