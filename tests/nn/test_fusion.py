"""nn.utils.fusion (fuse_conv_bn_eval/weights, fuse_linear_bn_eval/weights) and nn.utils.skip_init
against PyTorch: the fused layer's output equals bn(layer(x)) and PyTorch's fused parameters,
for Conv1d/2d/3d, ConvTranspose2d, Linear, with and without bias and affine; the errors."""
import numpy as np
import pytest

import minitorch
from helpers import same_as_torch, torch

RNG = np.random.default_rng(47)


def data(*shape):
    return RNG.standard_normal(shape)


def trained_bn(lib, cls, n, affine=True, momentum=0.5, shape=None):
    """A BatchNorm with nonzero running statistics (three training batches), in eval mode."""
    bn = getattr(lib.nn, cls)(n, affine=affine, momentum=momentum).double()
    stats_rng = np.random.default_rng(1)
    for _ in range(3):
        bn(lib.tensor(stats_rng.standard_normal(shape) * 3 + 2))
    if affine:
        with lib.no_grad():
            bn.weight.copy_(lib.tensor(stats_rng.standard_normal(n)))
            bn.bias.copy_(lib.tensor(stats_rng.standard_normal(n)))
    return bn.eval()


CONVS = [
    ("Conv1d", (3, 4, 3), "BatchNorm1d", (2, 3, 9), False),
    ("Conv2d", (3, 4, 3), "BatchNorm2d", (2, 3, 7, 6), False),
    ("Conv3d", (2, 4, 2), "BatchNorm3d", (2, 2, 5, 4, 3), False),
    ("ConvTranspose2d", (3, 4, 3), "BatchNorm2d", (2, 3, 5, 4), True),
]


@pytest.mark.parametrize("conv,args,bn,shape,transpose", CONVS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_fuse_conv_bn_eval(conv, args, bn, shape, transpose, bias, affine):
    x = data(*shape)

    def run(lib, x):
        lib.manual_seed(0)
        layer = getattr(lib.nn, conv)(*args, bias=bias).double().eval()
        with lib.no_grad():
            for p in layer.parameters():
                p.copy_(lib.tensor(np.random.default_rng(2).standard_normal(tuple(p.shape))))
        out_shape = tuple(layer(x.detach()).shape)
        norm = trained_bn(lib, bn, args[1], affine, shape=out_shape)
        fused = lib.nn.utils.fuse_conv_bn_eval(layer, norm, transpose=transpose)
        assert fused is not layer and type(fused) is type(layer)
        assert isinstance(fused.weight, lib.nn.Parameter) and isinstance(fused.bias, lib.nn.Parameter)
        np.testing.assert_allclose(fused(x).detach().numpy(), norm(layer(x)).detach().numpy(), atol=1e-10)
        return fused(x) + fused.weight.sum() + fused.bias.sum()

    same_as_torch(run, [x], atol=1e-10)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("features", [5, 1])
def test_fuse_linear_bn_eval(bias, features):
    x = data(6, 3)

    def run(lib, x):
        layer = lib.nn.Linear(3, 5, bias=bias).double().eval()
        with lib.no_grad():
            for p in layer.parameters():
                p.copy_(lib.tensor(np.random.default_rng(3).standard_normal(tuple(p.shape))))
        norm = trained_bn(lib, "BatchNorm1d", features, shape=(8, features))
        fused = lib.nn.utils.fusion.fuse_linear_bn_eval(layer, norm)
        if features == 5:
            np.testing.assert_allclose(fused(x).detach().numpy(), norm(layer(x)).detach().numpy(), atol=1e-10)
        return fused(x) + fused.weight.sum() + fused.bias.sum()

    same_as_torch(run, [x], atol=1e-10)


def test_weights_functions_dtypes_and_requires_grad():
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        w = lib.ones(4, 2, 3, dtype=lib.float32, requires_grad=True)
        rm, rv = lib.zeros(4, dtype=lib.float64) + 1, lib.ones(4, dtype=lib.float64) * 3
        fw, fb = lib.nn.utils.fuse_conv_bn_weights(w, None, rm, rv, 1e-5, None, None)
        assert fw.dtype == lib.float32 and fb.dtype == lib.float32 and fw.requires_grad and not fb.requires_grad
        np.testing.assert_allclose(fb.detach().numpy(), -1 / np.sqrt(3 + 1e-5) * np.ones(4), rtol=1e-6)
        lw = lib.ones(4, 2, requires_grad=True)
        fw, fb = lib.nn.utils.fuse_linear_bn_weights(lw, lib.ones(4), rm.float(), rv.float(), 0.0,
                                                     lib.ones(4) * 2, lib.zeros(4))
        assert fw.requires_grad and not fb.requires_grad and fw.dtype == lib.float32


def test_fusion_errors():
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        conv, bn = lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3)
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            lib.nn.utils.fuse_conv_bn_eval(conv, bn)
        no_stats = lib.nn.BatchNorm2d(3, track_running_stats=False).eval()
        with pytest.raises(AssertionError, match="bn.running_mean and bn.running_var must not be None"):
            lib.nn.utils.fuse_conv_bn_eval(conv.eval(), no_stats)
        with pytest.raises(AssertionError, match=r"linear.out_features=4 and bn.num_features=3"):
            lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(2, 4).eval(), lib.nn.BatchNorm1d(3).eval())


def test_skip_init():
    m = minitorch.nn.utils.skip_init(minitorch.nn.Linear, 3, 4, bias=False)
    assert type(m) is minitorch.nn.Linear and tuple(m.weight.shape) == (4, 3) and m.bias is None
    assert isinstance(m.weight, minitorch.nn.Parameter) and m.weight.requires_grad and m.weight.device.type == "cpu"
    bn = minitorch.nn.utils.skip_init(minitorch.nn.BatchNorm1d, 5, device="cpu")
    assert tuple(bn.running_mean.shape) == (5,) and bn.num_batches_tracked.dtype == minitorch.int64

    class NoDevice(minitorch.nn.Module):
        pass

    for lib, cls in [(minitorch, NoDevice)] + ([] if torch is None else [(torch, torch.nn.Identity)]):
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
            lib.nn.utils.skip_init(cls)
        with pytest.raises(RuntimeError, match="Expected a Module; got <class 'int'>"):
            lib.nn.utils.skip_init(int)
