"""nn names against PyTorch: F.max_pool1d/2d/3d_with_indices and
adaptive_max_pool1d/2d/3d_with_indices, LPPool3d/lp_pool3d, CrossMapLRN2d, nn.Container,
LazyConvTranspose1d/2d/3d, LazyInstanceNorm1d/2d/3d, SyncBatchNorm in one process (BatchNorm),
utils.data.DistributedSampler at the package's top."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, same_as_torch, same_error, torch

RNG = np.random.default_rng(43)


def data(*shape):
    return RNG.standard_normal(shape)


WITH_INDICES = [
    ("max_pool1d_with_indices", (2, 3, 9), (3,), dict(stride=2, padding=1)),
    ("max_pool2d_with_indices", (2, 3, 7, 6), (3,), dict(stride=2, dilation=2, ceil_mode=True)),
    ("max_pool3d_with_indices", (2, 2, 5, 6, 4), (2,), dict(stride=1, padding=1)),
    ("adaptive_max_pool1d_with_indices", (2, 3, 9), (4,), {}),
    ("adaptive_max_pool2d_with_indices", (3, 7, 6), ((3, 4),), {}),
    ("adaptive_max_pool3d_with_indices", (2, 2, 5, 6, 4), ((2, 3, 3),), {}),
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name,shape,args,kw", WITH_INDICES)
@pytest.mark.parametrize("ret", [False, True])
def test_with_indices(name, shape, args, kw, layout, ret):
    x = data(*shape)
    same_as_torch(lambda m, x: getattr(m.nn.functional, name)(x, *args, **kw, return_indices=ret)[0], [x],
                  layout=layout)
    same_as_torch(lambda m, x: getattr(m.nn.functional, name)(x, *args, **kw, return_indices=ret)[1], [x],
                  layout=layout, grad=False)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("p", [1, 2, 3.0, float("inf"), -float("inf")])
def test_lp_pool3d(p, layout):
    x = np.abs(data(2, 3, 5, 6, 4)) + 0.1
    same_as_torch(lambda m, x: m.nn.functional.lp_pool3d(x, p, 2), [x], layout=layout, atol=1e-9)
    same_as_torch(lambda m, x: m.nn.LPPool3d(p, (3, 2, 2), stride=(2, 1, 2), ceil_mode=True)(x), [x],
                  layout=layout, atol=1e-9)
    same_as_torch(lambda m, x: m.nn.LPPool3d(p, 2)(x), [x[0]], layout=layout, atol=1e-9)


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_lp_pool3d_repr():
    assert repr(minitorch.nn.LPPool3d(2, 3, stride=2)) == repr(torch.nn.LPPool3d(2, 3, stride=2))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 8])
def test_cross_map_lrn2d(size, layout):
    x = data(2, 6, 3, 4)
    # PyTorch's backward is the centred window's, not its forward's: values only
    same_as_torch(lambda m, x: m.nn.CrossMapLRN2d(size, 0.3, 0.6, 1.5)(x), [x], layout=layout, grad=False,
                  atol=1e-12)
    assert minitorch.autograd.gradcheck(minitorch.nn.CrossMapLRN2d(size, 0.3, 0.6, 1.5),
                                        (minitorch.tensor(x).requires_grad_(True),))
    same_as_torch(lambda m, x: m.nn.CrossMapLRN2d(size)(x), [x.astype(np.float32)], grad=False, atol=1e-6)


def test_cross_map_lrn2d_errors_repr():
    same_error(lambda m, x: m.nn.CrossMapLRN2d(3)(x), data(2, 3, 4))
    if torch is not None:
        assert repr(minitorch.nn.CrossMapLRN2d(3, 0.2)) == repr(torch.nn.CrossMapLRN2d(3, 0.2))


def test_container():
    with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
        c = minitorch.nn.Container(a=minitorch.nn.Linear(2, 3), b=minitorch.nn.ReLU())
    assert [n for n, _ in c.named_children()] == ["a", "b"]
    assert sorted(c.state_dict()) == ["a.bias", "a.weight"]
    assert isinstance(c, minitorch.nn.Module)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_lazy_conv_transpose(nd):
    shape = (2, 4) + (5,) * nd
    lazy = getattr(minitorch.nn, f"LazyConvTranspose{nd}d")(6, 3, stride=2, padding=1, output_padding=1, groups=2,
                                                             dilation=1)
    assert lazy.has_uninitialized_params()
    x = minitorch.tensor(data(*shape))
    out = lazy(x.float())
    plain = getattr(minitorch.nn, f"ConvTranspose{nd}d")
    assert type(lazy) is plain and lazy.in_channels == 4
    assert tuple(lazy.weight.shape) == (4, 3) + (3,) * nd and tuple(lazy.bias.shape) == (6,)
    if torch is not None:
        t = getattr(torch.nn, f"LazyConvTranspose{nd}d")(6, 3, stride=2, padding=1, output_padding=1, groups=2)
        t_out = t(torch.tensor(np.asarray(x.numpy(), np.float32)))
        assert tuple(t_out.shape) == tuple(out.shape) and t.weight.shape == lazy.weight.shape
        with torch.no_grad():
            t.weight.copy_(torch.tensor(lazy.weight.detach().numpy()))
            t.bias.copy_(torch.tensor(lazy.bias.detach().numpy()))
        np.testing.assert_allclose(out.detach().numpy(), t(torch.tensor(x.numpy()).float()).detach().numpy(),
                                   atol=1e-5)
    unbatched = getattr(minitorch.nn, f"LazyConvTranspose{nd}d")(2, 2, bias=False)
    assert tuple(unbatched(minitorch.randn(*shape[1:])).shape)[0] == 2 and unbatched.bias is None


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("affine,track", [(True, True), (False, False), (True, False)])
def test_lazy_instance_norm(nd, affine, track):
    x = data(3, 4, *(5,) * nd)
    name = f"LazyInstanceNorm{nd}d"

    def run(m, x):
        norm = getattr(m.nn, name)(affine=affine, track_running_stats=track).double()
        out = norm(x)
        norm.eval()
        return out + norm(x * 2)

    same_as_torch(run, [x])
    norm = getattr(minitorch.nn, name)(affine=affine, track_running_stats=track)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # with nothing to infer, num_features stays 0, as PyTorch's
        norm(minitorch.randn(3, 4, *(5,) * nd))
    assert type(norm).__name__ == f"InstanceNorm{nd}d" and norm.num_features == (4 if affine or track else 0)
    assert (norm.weight is not None) == affine and (norm.running_mean is not None) == track


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_lazy_instance_norm_unbatched_reads_size1_as_torch():
    # as PyTorch's, the lazy norms read num_features from size(1), so an unbatched input is refused
    same_error(lambda m, x: m.nn.LazyInstanceNorm2d()(x), data(3, 4, 5))
    same_error(lambda m, x: m.nn.LazyInstanceNorm1d()(x), data(2, 3, 4, 5))


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 5), (2, 3, 2, 2, 3)])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_sync_batchnorm_one_process(shape, momentum):
    x = data(*shape)

    def run(m, x):
        bn = m.nn.SyncBatchNorm(3, momentum=momentum).double()
        out = bn(x) + bn(x * 2)
        bn.eval()
        return out + bn(x) + bn.running_mean.sum() + bn.running_var.sum()

    same_as_torch(run, [x])


def test_sync_batchnorm_errors_and_convert():
    same_error(lambda m, x: m.nn.SyncBatchNorm(3)(x), data(3))
    same_error(lambda m, x: m.nn.SyncBatchNorm(0)(x), data(2, 0, 3))
    net = minitorch.nn.Sequential(minitorch.nn.Conv2d(3, 4, 1), minitorch.nn.BatchNorm2d(4, momentum=0.2),
                                  minitorch.nn.Sequential(minitorch.nn.BatchNorm1d(5, affine=False)))
    net.eval()
    weight = net[1].weight
    out = minitorch.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert out is net
    assert type(net[1]) is minitorch.nn.SyncBatchNorm and type(net[2][0]) is minitorch.nn.SyncBatchNorm
    assert net[1].weight is weight and net[1].momentum == 0.2 and not net[1].training
    assert net[2][0].weight is None and net[2][0].num_features == 5
    bn = minitorch.nn.BatchNorm3d(2)
    assert type(minitorch.nn.SyncBatchNorm.convert_sync_batchnorm(bn, process_group=None)) is minitorch.nn.SyncBatchNorm
    if torch is not None:
        assert repr(minitorch.nn.SyncBatchNorm(3, momentum=None)) == repr(torch.nn.SyncBatchNorm(3, momentum=None))


def test_distributed_sampler_exported():
    from minitorch.utils.data import DistributedSampler
    from minitorch.utils.data.distributed import DistributedSampler as inner

    assert DistributedSampler is inner
    assert list(DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False)) == [1, 4, 7, 0]
