"""F.pad and the padding layers against NumPy's np.pad and PyTorch: constant padding of any
number of dims (negative pads crop; more pads than an int[] holds), reflect, replicate and
circular of the last 1, 2 or 3 dims of batched and unbatched inputs; every dtype PyTorch pads;
gradients (finite differences and PyTorch's, its node names) and second derivatives; bad calls
raise PyTorch's class and message; the modules' repr and forward."""
import numpy as np
import pytest

import minitorch
from helpers import check, check_grad, same_as_torch, same_error, torch_layout

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
NP_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def F(lib):
    return lib.nn.functional


def np_pad(a, pad, mode, value=0.0):
    """np.pad of the last len(pad) / 2 dims (positive pads only), pad given last dim first."""
    widths = [(0, 0)] * (a.ndim - len(pad) // 2) + [(pad[2 * k], pad[2 * k + 1]) for k in reversed(range(len(pad) // 2))]
    kw = {"constant_values": value} if mode == "constant" else {}
    return np.pad(a, widths, mode=NP_MODES[mode], **kw)


CASES = [  # (shape, pad)
    ((2, 5), (1, 2)), ((3, 2, 5), (2, 0)), ((3, 4, 5), (1, 2, 3, 1)), ((2, 3, 4, 5), (0, 2, 1, 1)),
    ((2, 3, 4, 5), (1, 1, 2, 1, 1, 2)), ((1, 2, 3, 4, 5), (2, 1, 0, 2, 1, 1)), ((0, 2, 5), (1, 1)),
]


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", CASES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_pad_matches_numpy_and_torch(mode, shape, pad, layout):
    a = RNG.standard_normal(shape).astype(np.float32)
    check(lambda L, x: F(L).pad(x, pad, mode=mode), lambda x: np_pad(x, pad, mode), [a], layout=layout)
    if mode == "constant":
        check(lambda L, x: F(L).pad(x, pad, value=-1.5), lambda x: np_pad(x, pad, mode, -1.5), [a], layout=layout)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("shape,pad", [((4, 8, 33, 40), (3, 5, 2, 7)), ((2, 3, 9, 17, 30), (4, 2, 1, 3, 8, 0)),
                                       ((6, 40, 300), (7, 9))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_large_pads_on_threads(threads, mode, shape, pad, dtype):
    """Enough rows to split between threads, the splits falling inside planes."""
    before = minitorch.get_num_threads()
    minitorch.set_num_threads(threads)
    try:
        a = (RNG.standard_normal(shape) * 100).astype(dtype)
        for layout in ("contiguous", "transposed", "sliced"):
            check(lambda L, x: F(L).pad(x, pad, mode=mode), lambda x: np_pad(x, pad, mode), [a], layout=layout)
    finally:
        minitorch.set_num_threads(before)


CONSTANT_ON_THREADS = [  # (shape, pad): rows that split between threads inside planes; a border
    # that covers whole rows and planes; crops beside pads; a pad of the outermost dim only; a
    # 1-wide source whose only position is followed by border (no reversed run into it)
    ((16, 32, 33, 35), (2, 2, 2, 2)), ((4, 8, 33, 40), (3, -5, 2, 7)), ((2, 3, 9, 17, 30), (4, 2, -1, 3, 8, 0)),
    ((6, 40, 300), (7, 9, 0, 0, 1, 1)), ((2, 1), (1, 1, 1, 1)), ((3, 1, 1), (1, 1, 1, 1, 1, 1)),
]


@pytest.mark.parametrize("shape,pad", CONSTANT_ON_THREADS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "channels_last"])
def test_constant_pad_in_one_pass_on_threads(threads, shape, pad, layout):
    """constant_pad_nd's CPU kernel writes each output row once, border and copy together, in the
    layout of its result (channels-last for a channels-last image): values, NumPy's and PyTorch's,
    and PyTorch's strides; the value cast to the dtype."""
    a = RNG.standard_normal(shape).astype(np.float32)
    a[0, ..., 0] = np.nan  # copied as it is
    crop = tuple(slice(max(-pad[2 * k], 0), shape[-1 - k] - max(-pad[2 * k + 1], 0)) for k in reversed(range(len(pad) // 2)))
    ref = lambda x: np_pad(x[(Ellipsis,) + crop], [max(p, 0) for p in pad], "constant", 2.5)  # noqa: E731
    out = check(lambda L, x: F(L).pad(x, pad, value=2.5), ref, [a], layout=layout)
    want = F(torch).pad(torch_layout(torch, a, layout), pad, value=2.5)
    assert out.stride() == want.stride()


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "float16", "bfloat16", "bool", "int64", "float64"])
def test_constant_pad_of_every_width_as_stored(threads, dtype):
    """1-, 2-, 4- and 8-byte elements padded as stored (no trip through a wider dtype), the value
    stored in the dtype as fill_ stores it."""
    a = RNG.standard_normal((3, 40, 37)) * 50
    value = True if dtype == "bool" else 7
    got = minitorch.constant_pad_nd(minitorch.tensor(a).to(getattr(minitorch, dtype)), (3, 1, -2, 2), value)
    want = torch.constant_pad_nd(torch.tensor(a).to(getattr(torch, dtype)), (3, 1, -2, 2), value)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.double().numpy(), want.double().numpy())


@pytest.mark.parametrize("shape,pad", [((0, 4), (1, 1)), ((4, 0), (1, 1, 2, 0)), ((0, 3), (0, 0, 1, 1)),
                                       ((2, 3), ()), ((2, 3), (0, 0)), ((2, 3), (-3, 0)), ((5,), (-2, -1))])
def test_constant_pad_empty_and_unpadded_like_torch(shape, pad):
    """An empty input padded into a border of the value, an empty result, no pads at all (PyTorch's
    clone, in the input's layout) and crops only."""
    for layout in ("contiguous", "transposed"):
        same_as_torch(lambda L, x: L.constant_pad_nd(x, pad, -1.0), [RNG.standard_normal(shape)], layout=layout)
    got = minitorch.constant_pad_nd(minitorch.tensor(3.0), ())
    assert got.shape == () and got.item() == 3.0


def test_constant_pad_gradients_channels_last(threads):
    a = RNG.standard_normal((2, 3, 5, 4))
    check_grad(lambda L, x: F(L).pad(x, (1, -1, 2, 1), value=3.0), [a], layout="channels_last")
    same_as_torch(lambda L, x: F(L).pad(x, (2, 2, 2, 2)), [a.astype(np.float32)], layout="channels_last")


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", CASES[:6])
def test_pad_gradients(mode, shape, pad):
    a = RNG.standard_normal(shape)
    check_grad(lambda L, x: F(L).pad(x, pad, mode=mode), [a], layout="transposed")
    nodes = {"constant": "ConstantPadNdBackward0", "reflect": "ReflectionPad%dDBackward0",
             "replicate": "ReplicationPad%dDBackward0", "circular": "IndexSelectBackward0"}
    got = F(minitorch).pad(minitorch.tensor(a, requires_grad=True), pad, mode=mode).grad_fn.name()
    want = nodes[mode] % (len(pad) // 2) if "%" in nodes[mode] else nodes[mode]
    assert got == want  # PyTorch's circular padding records CopySlices; minitorch gathers


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_second_derivatives_match_torch(mode):
    a = RNG.standard_normal((2, 3, 4))
    outs = []
    for L in (minitorch, torch):
        x = L.tensor(a, requires_grad=True)
        y = F(L).pad(x * x, (2, 1, 1, 2), mode=mode)
        (g,) = L.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad(g.pow(2).sum(), x)
        outs.append(gg.detach().numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10)


NEGATIVE = [((2, 5), (-1, 2)), ((3, 4, 5), (1, -2, -1, 0)), ((2, 3, 4, 5), (-2, -1, 0, 0)), ((2, 6), (-1, -1)),
            ((2, 6), (2, -3)), ((2, 4, 6), (-2, 3, 1, -1))]


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", NEGATIVE)
def test_negative_pads_crop_like_torch(mode, shape, pad):
    same_as_torch(lambda L, x: F(L).pad(x, pad, mode=mode), [RNG.standard_normal(shape)], layout="transposed")


@pytest.mark.parametrize("dtype", ["float64", "int64", "int32", "bool"])
def test_pad_dtypes_like_torch(dtype):
    a = (RNG.standard_normal((2, 3, 4)) * 3).astype(dtype)
    for mode in ("constant", "reflect", "replicate", "circular"):
        same_as_torch(lambda L, x: F(L).pad(x, (1, 2), mode=mode), [a])
    same_as_torch(lambda L, x: F(L).pad(x, (1, 1, 2, 0), value=1.7), [a])  # cast to the dtype, as fill_
    same_as_torch(lambda L, x: L.constant_pad_nd(x, (2, 1), 3), [a])


def test_constant_padding_of_many_dims():
    """PyTorch pads up to every dim; an int[] holds 16 ints, so F.pad pads 8 dims at a time."""
    a = RNG.standard_normal((2,) * 10)
    pad = [1, 0, 0, 2] * 5
    same_as_torch(lambda L, x: F(L).pad(x, pad, value=0.5), [a])
    same_as_torch(lambda L, x: F(L).pad(x, pad[:14]), [a])
    same_as_torch(lambda L, x: F(L).pad(x, [-1, 1] * 9), [a])


@pytest.mark.parametrize("shape,pad,mode", [
    ((5,), (1, 2), "reflect"), ((2, 3), (3, 1), "reflect"), ((2, 3), (1, 3), "reflect"), ((2, 3), (-2, -2), "reflect"),
    ((2, 0), (1, 1), "reflect"), ((2, 2, 3), (1, 1, 2, 2), "reflect"), ((2, 2, 3, 3), (3, 3, 0, 0, 0, 0), "reflect"),
    ((2, 2, 3, 3), (0, 0, 0, 0, 2, 2), "reflect"), ((1, 2, 0, 3), (1, 1, 0, 0), "replicate"),
    ((2, 3), (-2, -2), "replicate"), ((2, 0), (1, 1), "replicate"), ((2, 3), (-2, -2), "circular"),
    ((2, 0), (1, 1), "circular"), ((2, 2, 3), (1, 1, 3, 0), "circular"), ((2, 3), (1,), "constant"),
    ((2, 3), (1, 1, 1, 1, 1, 1), "constant"), ((2, 3), (1, 1), "other"), ((2, 3), (1, 1, 1, 1), "reflect"),
    ((2, 5), (-3, -3), "constant"), ((3,), (1, 1), "circular"),
])
def test_pad_errors_like_torch(shape, pad, mode):
    same_error(lambda L, x: F(L).pad(x, pad, mode=mode), RNG.standard_normal(shape))


def test_pad_value_and_dtype_errors_like_torch():
    a = RNG.standard_normal((2, 3))
    same_error(lambda L, x: F(L).pad(x, (1, 1), mode="replicate", value=1.0), a)
    same_as_torch(lambda L, x: F(L).pad(x, (1, 1), mode="replicate", value=0.0), [a])
    same_error(lambda L, x: F(L).pad(x > 0, (1, 1), mode="reflect"), a)
    same_error(lambda L, x: F(L).pad(x > 0, (1, 1), mode="replicate"), a)
    same_error(lambda L, x: L.constant_pad_nd(x, (1, 1, 1)), a)
    same_error(lambda L, x: L.constant_pad_nd(x, (1, 1, 1, 1, 1, 1)), a)


def test_pad_ops_as_torch_c_nn():
    """The ops F.pad picks, called as torch._C._nn's."""
    a = RNG.standard_normal((2, 3, 4, 5, 6))
    nn_c = torch._C._nn
    calls = [
        (lambda x: minitorch._C.reflection_pad1d(x[0, 0, 0], [2, 1]), lambda x: nn_c.reflection_pad1d(x[0, 0, 0], [2, 1])),
        (lambda x: minitorch._C.reflection_pad2d(x[0, 0], [2, 1, 0, 3]), lambda x: nn_c.reflection_pad2d(x[0, 0], [2, 1, 0, 3])),
        (lambda x: minitorch._C.reflection_pad3d(x, [1, 1, 2, 0, 3, 1]), lambda x: nn_c.reflection_pad3d(x, [1, 1, 2, 0, 3, 1])),
        (lambda x: minitorch._C.replication_pad1d(x[0, 0, 0], [4, 1]), lambda x: nn_c.replication_pad1d(x[0, 0, 0], [4, 1])),
        (lambda x: minitorch._C.replication_pad2d(x[0, 0], [2, 7, 0, 3]), lambda x: nn_c.replication_pad2d(x[0, 0], [2, 7, 0, 3])),
        (lambda x: minitorch._C.replication_pad3d(x, [1, 1, 2, 0, 5, 1]), lambda x: nn_c.replication_pad3d(x, [1, 1, 2, 0, 5, 1])),
        (lambda x: minitorch._C._pad_circular(x[0], [1, 2, 3, 0]), lambda x: nn_c._pad_circular(x[0], [1, 2, 3, 0])),
        (lambda x: minitorch._C.pad(x[0, 0], [1, 2], "circular", None), lambda x: nn_c.pad(x[0, 0], [1, 2], "circular", None)),
    ]
    for mine, theirs in calls:
        np.testing.assert_array_equal(mine(minitorch.tensor(a)).numpy(), theirs(torch.tensor(a)).numpy())
    same_error(lambda L, x: (L._C if L is minitorch else nn_c)._pad_circular(x, [1, 2, 3, 0]), a)


MODULES = [
    lambda nn: nn.ZeroPad2d(2), lambda nn: nn.ZeroPad2d((1, 2, 0, 1)), lambda nn: nn.ZeroPad1d(1), lambda nn: nn.ZeroPad3d(1),
    lambda nn: nn.ConstantPad1d(2, 3.5), lambda nn: nn.ConstantPad2d((1, 0, 2, 1), -1.0), lambda nn: nn.ConstantPad3d(1, 2.0),
    lambda nn: nn.ReflectionPad1d(2), lambda nn: nn.ReflectionPad2d((1, 2, 2, 0)), lambda nn: nn.ReflectionPad3d(1),
    lambda nn: nn.ReplicationPad1d((3, 1)), lambda nn: nn.ReplicationPad2d(2), lambda nn: nn.ReplicationPad3d((1, 0, 1, 2, 0, 1)),
    lambda nn: nn.CircularPad1d(2), lambda nn: nn.CircularPad2d((1, 2, 0, 1)), lambda nn: nn.CircularPad3d(1),
]


@pytest.mark.parametrize("make", MODULES)
def test_padding_modules_match_torch(make):
    m, t = make(minitorch.nn), make(torch.nn)
    assert repr(m) == repr(t)
    a = RNG.standard_normal((2, 3, 4, 5, 6))
    dims = {"1d": 3, "2d": 4, "3d": 5}[type(m).__name__[-2:]]
    same_as_torch(lambda L, x: (m if L is minitorch else t)(x), [a[(0,) * (5 - dims)]], layout="transposed")
    if "Constant" not in type(m).__name__ and "Zero" not in type(m).__name__:  # constant pads any dims
        same_error(lambda L, x: (m if L is minitorch else t)(x), a[0, 0, 0, 0])
