"""Memory formats: the constants, the strides each format gives (contiguous, clone, to, empty,
the *_like factories, Module.to), is_contiguous(memory_format=) on every kind of layout, and ops
giving PyTorch's values and gradients on channels-last inputs."""
import pickle

import numpy as np
import pytest

import minitorch
from helpers import as_numpy, same_as_torch

FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]

# (shape, permutation applied to a contiguous tensor, slice of the result): layouts of every kind,
# size-1 and size-0 dims included, where the two formats' rules differ
LAYOUTS = [
    ((2, 3, 4, 5), None, None),
    ((2, 4, 5, 3), (0, 3, 1, 2), None),  # channels_last
    ((2, 3, 5, 4), (0, 1, 3, 2), None),
    ((1, 3, 1, 1), None, None),
    ((1, 1, 1, 3), (0, 3, 1, 2), None),
    ((2, 1, 4, 5), None, None),
    ((2, 4, 5, 1), (0, 3, 1, 2), None),
    ((3, 1, 1, 1), None, None),
    ((1, 4, 1, 3), (0, 3, 2, 1), None),
    ((2, 6, 4, 3), (0, 3, 1, 2), (slice(None), slice(None), slice(0, 6, 2), slice(None))),
    ((2, 4, 5, 3), (0, 3, 1, 2), (slice(None), slice(0, 2), slice(None), slice(None))),
    ((2, 0, 4, 5), None, None),
    ((2, 4, 5, 0), (0, 3, 1, 2), None),
    ((4, 3, 2, 5), (2, 1, 0, 3), None),
    ((2, 3, 4, 5, 6), None, None),
    ((2, 4, 5, 6, 3), (0, 4, 1, 2, 3), None),  # channels_last_3d
    ((1, 4, 1, 6, 1), (0, 4, 1, 2, 3), None),
    ((3, 4), None, None),
    ((4, 3), (1, 0), None),
    ((5,), None, None),
]


def _make(lib, shape, perm, index, dtype="float32"):
    n = int(np.prod(shape))
    t = lib.arange(n, dtype=getattr(lib, dtype)).reshape(shape)
    if perm is not None:
        t = t.permute(*perm)
    if index is not None:
        t = t[index]
    return t


def _fmt(lib, name):
    return getattr(lib, name)


def test_constants():
    assert repr(minitorch.channels_last) == "minitorch.channels_last"
    assert isinstance(minitorch.contiguous_format, minitorch.memory_format)
    assert minitorch.legacy_contiguous_format is minitorch.contiguous_format
    assert len({minitorch.contiguous_format, minitorch.channels_last, minitorch.channels_last_3d,
                minitorch.preserve_format}) == 4
    for name in FORMATS:
        assert pickle.loads(pickle.dumps(getattr(minitorch, name))) is getattr(minitorch, name)
    with pytest.raises(TypeError, match="cannot create"):
        minitorch.memory_format()
    with pytest.raises(AttributeError):
        minitorch.channels_last._name = "x"


@pytest.mark.parametrize("shape, perm, index", LAYOUTS)
def test_is_contiguous_and_layout_queries_as_torch(shape, perm, index):
    torch = pytest.importorskip("torch")
    m, t = _make(minitorch, shape, perm, index), _make(torch, shape, perm, index)
    assert m.stride() == t.stride()
    for name in FORMATS:
        assert m.is_contiguous(memory_format=_fmt(minitorch, name)) == \
            t.is_contiguous(memory_format=_fmt(torch, name)), name
        # to() gives back the tensor itself exactly where PyTorch's does (its strides already look
        # like the format), else a copy
        for lib, x in ((minitorch, m), (torch, t)):
            try:
                y = x.to(memory_format=_fmt(lib, name))
            except RuntimeError:
                y = None
            if lib is minitorch:
                got = None if y is None else (y is x, y.stride())
            else:
                want = None if y is None else (y is x, y.stride())
        assert got == want, name


@pytest.mark.parametrize("shape, perm, index", LAYOUTS)
@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("how", ["contiguous", "clone", "clone_fn", "empty_like", "zeros_like", "ones_like",
                                 "full_like", "rand_like", "to_double", "to_dtype", "double", "half", "float", "type",
                                 "to_cpu"])
def test_copies_take_the_format(shape, perm, index, name, how):
    torch = pytest.importorskip("torch")
    calls = {
        "contiguous": lambda lib, x, f: x.contiguous(memory_format=f),
        "clone": lambda lib, x, f: x.clone(memory_format=f),
        "clone_fn": lambda lib, x, f: lib.clone(x, memory_format=f),
        "empty_like": lambda lib, x, f: lib.empty_like(x, memory_format=f),
        "zeros_like": lambda lib, x, f: lib.zeros_like(x, memory_format=f),
        "ones_like": lambda lib, x, f: lib.ones_like(x, dtype=lib.float64, memory_format=f),
        "full_like": lambda lib, x, f: lib.full_like(x, 7, memory_format=f),
        "rand_like": lambda lib, x, f: lib.rand_like(x, memory_format=f),
        "to_double": lambda lib, x, f: x.to(lib.float64, memory_format=f),
        # the conversions without a format keep the input's (preserve_format): name plays no part
        "to_dtype": lambda lib, x, f: x.to(lib.float64),
        "double": lambda lib, x, f: x.double(),
        "half": lambda lib, x, f: x.half(),
        "float": lambda lib, x, f: x.double().float(),
        "type": lambda lib, x, f: x.type(lib.float64),
        "to_cpu": lambda lib, x, f: x.to("cpu", lib.int64),
    }
    if how in ("to_dtype", "double", "half", "float", "type", "to_cpu") and name != "preserve_format":
        pytest.skip("takes no memory_format")
    results = []
    for lib in (minitorch, torch):
        x = _make(lib, shape, perm, index)
        try:
            y = calls[how](lib, x, _fmt(lib, name))
        except RuntimeError as e:
            results.append(("error", str(e)))
            continue
        values = None if how in ("empty_like", "rand_like") else np.asarray(y.tolist())
        results.append((tuple(y.shape), y.stride(), str(y.dtype).split(".")[-1], y is x,
                        values.tolist() if values is not None else None))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ["channels_last", "channels_last_3d", "contiguous_format"])
@pytest.mark.parametrize("how", ["contiguous", "clone", "to", "to_double"])
def test_format_copies_are_differentiable(name, how):
    shape = (2, 3, 4, 5) if name != "channels_last_3d" else (2, 3, 2, 3, 2)
    a = np.random.default_rng(1).standard_normal(shape)
    calls = {
        "contiguous": lambda lib, x: (x.transpose(2, 3).contiguous(memory_format=getattr(lib, name)) * 2),
        "clone": lambda lib, x: x.clone(memory_format=getattr(lib, name)).sin(),
        "to": lambda lib, x: x.to(memory_format=getattr(lib, name)).exp(),
        "to_double": lambda lib, x: x.float().to(lib.float64, memory_format=getattr(lib, name)),
    }
    same_as_torch(calls[how], [a], atol=1e-6)


def test_empty_takes_the_format():
    assert minitorch.empty(2, 3, 4, 5, memory_format=minitorch.channels_last).stride() == (60, 1, 15, 3)
    assert minitorch.empty((2, 3, 4, 5, 6), memory_format=minitorch.channels_last_3d).stride() == (360, 1, 90, 18, 3)
    assert minitorch.empty(2, 3, memory_format=minitorch.contiguous_format).stride() == (3, 1)
    t = minitorch.empty(2, 3, 4, 5, memory_format=minitorch.channels_last, requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.is_contiguous(memory_format=minitorch.channels_last)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        minitorch.empty(2, 3, memory_format=minitorch.channels_last)
    with pytest.raises(RuntimeError, match="unsupported memory format Preserve"):
        minitorch.empty(2, 3, memory_format=minitorch.preserve_format)


def test_errors_as_torch():
    x = minitorch.zeros(2, 3)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        x.contiguous(memory_format=minitorch.channels_last)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d format"):
        x.clone(memory_format=minitorch.channels_last_3d)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        minitorch.zeros_like(x, memory_format=minitorch.channels_last)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the contiguous operator"):
        x.t().contiguous(memory_format=minitorch.preserve_format)
    assert x.contiguous(memory_format=minitorch.preserve_format) is x  # PyTorch: contiguous already
    with pytest.raises(TypeError, match="argument 'memory_format' must be minitorch.memory_format, not int"):
        x.contiguous(memory_format=3)
    with pytest.raises(TypeError, match="memory_format"):
        x.is_contiguous(memory_format="channels_last")
    with pytest.raises(TypeError):  # keyword-only, as PyTorch's
        x.contiguous(minitorch.contiguous_format)
    with pytest.raises(TypeError):
        x.is_contiguous(minitorch.contiguous_format)


def test_module_to_memory_format():
    torch = pytest.importorskip("torch")
    got = minitorch.nn.Sequential(minitorch.nn.Conv2d(3, 4, 3), minitorch.nn.Linear(4, 2))
    want = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Linear(4, 2))
    conv, lin = got[0].weight, got[1].weight
    got.to(memory_format=minitorch.channels_last)
    want.to(memory_format=torch.channels_last)
    for (n, p), (_, q) in zip(got.named_parameters(), want.named_parameters()):
        assert p.stride() == q.stride(), n
    assert got[0].weight is conv and got[1].weight is lin  # the Parameters stay the optimizer's
    assert got[0].weight.is_contiguous(memory_format=minitorch.channels_last)
    got.to(minitorch.float64, memory_format=minitorch.contiguous_format)
    assert got[0].weight.dtype == minitorch.float64 and got[0].weight.is_contiguous()


def _cl(lib, x):
    return x.contiguous(memory_format=lib.channels_last)


OPS_ON_CHANNELS_LAST = {
    "conv2d": (lambda lib, x, w: lib.nn.functional.conv2d(_cl(lib, x), _cl(lib, w), padding=1), [(2, 3, 5, 4), (4, 3, 3, 3)]),
    "conv2d_strided": (lambda lib, x, w: lib.nn.functional.conv2d(_cl(lib, x), w, stride=2, groups=1),
                       [(2, 3, 6, 6), (2, 3, 2, 2)]),
    "batch_norm": (lambda lib, x, w, b: lib.nn.functional.batch_norm(_cl(lib, x), None, None, w, b, training=True),
                   [(3, 4, 2, 5), (4,), (4,)]),
    "add": (lambda lib, x, y: _cl(lib, x) + y, [(2, 3, 4, 5), (2, 3, 4, 5)]),
    "add_mixed": (lambda lib, x, y: _cl(lib, x) + y.transpose(2, 3), [(2, 3, 4, 5), (2, 3, 5, 4)]),
    "add_broadcast": (lambda lib, x, y: _cl(lib, x) + y, [(2, 3, 4, 5), (3, 1, 1)]),
    "relu": (lambda lib, x: lib.relu(_cl(lib, x)), [(2, 3, 4, 5)]),
    "max_pool2d": (lambda lib, x: lib.nn.functional.max_pool2d(_cl(lib, x), 2), [(2, 3, 4, 6)]),
    "avg_pool2d": (lambda lib, x: lib.nn.functional.avg_pool2d(_cl(lib, x), 2), [(2, 3, 4, 6)]),
    "sum_dims": (lambda lib, x: _cl(lib, x).sum((1, 3)), [(2, 3, 4, 5)]),
    "flatten_linear": (lambda lib, x, w: _cl(lib, x).flatten(1) @ w, [(2, 3, 2, 2), (12, 5)]),
}


@pytest.mark.parametrize("op", sorted(OPS_ON_CHANNELS_LAST))
def test_ops_on_channels_last_inputs(op):
    fn, shapes = OPS_ON_CHANNELS_LAST[op]
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s) for s in shapes]
    same_as_torch(fn, arrays, atol=1e-5, rtol=1e-5)
    x = minitorch.tensor(arrays[0])
    assert _cl(minitorch, x).is_contiguous(memory_format=minitorch.channels_last)
    np.testing.assert_array_equal(as_numpy(_cl(minitorch, x)), arrays[0])


def test_channels_last_model_matches_contiguous():
    minitorch.manual_seed(0)
    model = minitorch.nn.Sequential(minitorch.nn.Conv2d(3, 8, 3, padding=1), minitorch.nn.BatchNorm2d(8),
                                    minitorch.nn.ReLU(), minitorch.nn.Conv2d(8, 4, 3))
    x = minitorch.randn(2, 3, 6, 6)
    want = model(x)
    model.to(memory_format=minitorch.channels_last)
    got = model(x.to(memory_format=minitorch.channels_last))
    np.testing.assert_allclose(as_numpy(got), as_numpy(want), atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 0, 3), (2, 3, 4)])
def test_to_dtype_of_a_broadcast_tensor(shape):
    """A broadcast (0-stride) input, empty or not, converts into a layout a copy can write
    (row-major where PyTorch's is; an empty one's strides as PyTorch gives them)."""
    torch = pytest.importorskip("torch")
    got, want = (lib.zeros(shape[0], 1, shape[2]).expand(*shape).to(lib.float64) for lib in (minitorch, torch))
    assert got.shape == want.shape and got.stride() == want.stride() and got.tolist() == want.tolist()
