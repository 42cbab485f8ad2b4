"""group_norm and instance_norm (composites over layer_norm and batch_norm), local_response_norm
and their modules GroupNorm, InstanceNorm1d/2d/3d and LocalResponseNorm against PyTorch with the same inputs and weights: values,
gradients of the input, weight and bias, non-contiguous inputs, float32 accuracy against
float64, running statistics, the modules' reprs, warnings and errors (class and message)."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, raises_like_torch, same_as_torch, same_error, torch

F = minitorch.nn.functional
RNG = np.random.default_rng(20)


def data(*shape, dtype="float64", loc=0.0):
    return (RNG.standard_normal(shape) * 3 + loc).astype(dtype)


# ---- group_norm ----

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 4, 2, 3), 2), ((2, 4), 4), ((1, 6, 3, 2, 2), 1),
                                           ((2, 6, 4), 6)])
def test_group_norm_values_and_gradients(shape, groups, layout):
    x, w, b = data(*shape), data(shape[1]), data(shape[1])
    same_as_torch(lambda m, x, w, b: m.nn.functional.group_norm(x, groups, w, b, eps=1e-3), [x, w, b],
                  layout=layout, atol=1e-9)
    same_as_torch(lambda m, x: m.nn.functional.group_norm(x, groups), [x], layout=layout, atol=1e-9)
    if np.prod(shape[1:]) // groups > 1:  # a group of one value is 0 here, rounding noise in PyTorch's float32
        same_as_torch(lambda m, x, w: m.group_norm(x, groups, w), [x.astype("float32"), w.astype("float32")],
                      layout=layout, atol=1e-5, rtol=1e-4)


def test_group_norm_keeps_float32_accuracy():
    # a large mean over many values: float32 statistics accumulated naively would lose digits
    x = data(2, 4, 4096, loc=1000.0).astype("float32")
    want = F.group_norm(minitorch.tensor(x.astype("float64")), 2).numpy()
    got = F.group_norm(minitorch.tensor(x), 2).numpy()
    np.testing.assert_allclose(got, want, atol=2e-5)


def test_group_norm_is_one_op_in_the_profiler():
    with minitorch.profiler.profile() as prof:
        minitorch.group_norm(minitorch.randn(2, 4, 3), 2)
    assert "group_norm" in {e.key.split("::")[-1] for e in prof.key_averages()}


@pytest.mark.parametrize("call", [
    lambda m, x: m.group_norm(x, 4),
    lambda m, x: m.group_norm(x, 0),
    lambda m, x: m.group_norm(x, -3),
    lambda m, x: m.group_norm(x, 3, m.ones(5)),
    lambda m, x: m.group_norm(x, 3, m.ones(6, 1)),
    lambda m, x: m.group_norm(x, 3, m.ones(6), m.ones(2)),
    lambda m, x: m.group_norm(x[0, 0], 1),
    lambda m, x: m.group_norm(x.to(m.int64), 3),
    lambda m, x: m.nn.functional.group_norm(x[0, 0], 1),
    lambda m, x: m.nn.functional.group_norm(x[:1, :3, :1], 3),
])
def test_group_norm_errors(call):
    same_error(call, data(2, 6, 4))


def test_group_norm_mixed_dtypes_raise_as_pytorch():
    raises_like_torch(lambda m, x, w: m.group_norm(x, 2, w), data(2, 4, 3).astype("float32"), data(4))


# ---- instance_norm ----

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(2, 3, 5), (3, 2, 4, 3), (1, 2, 2, 3, 2)])
def test_instance_norm_values_and_gradients(shape, layout):
    x, w, b = data(*shape), data(shape[1]), data(shape[1])
    same_as_torch(lambda m, x, w, b: m.nn.functional.instance_norm(x, weight=w, bias=b, eps=1e-3), [x, w, b],
                  layout=layout, atol=1e-9)
    same_as_torch(lambda m, x: m.nn.functional.instance_norm(x), [x.astype("float32")], layout=layout,
                  atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_running_statistics(use_input_stats):
    x = data(3, 2, 5)
    results = {}
    for lib in [minitorch] + ([torch] if torch is not None else []):
        rm, rv = lib.tensor(data(2) * 0 + 0.5), lib.tensor(np.full(2, 2.0))
        inp = lib.tensor(x).requires_grad_(True)
        y = lib.nn.functional.instance_norm(inp, rm, rv, use_input_stats=use_input_stats, momentum=0.3)
        y.sum().backward()
        results[lib.__name__] = [np.array(t.detach().tolist()) for t in (y, rm, rv, inp.grad)]
    if use_input_stats:
        mean = x.mean(axis=2).mean(0)
        np.testing.assert_allclose(results["minitorch"][1], 0.7 * 0.5 + 0.3 * mean, atol=1e-12)
    if torch is not None:
        for got, want in zip(results["minitorch"], results["torch"]):
            np.testing.assert_allclose(got, want, atol=1e-10)


@pytest.mark.parametrize("call", [
    lambda m, x: m.instance_norm(x, None, None, None, None, False, 0.1, 1e-5, False),
    lambda m, x: m.instance_norm(x, None, None, m.zeros(5), m.ones(5), True, 0.1, 1e-5, False),
    lambda m, x: m.instance_norm(x, m.ones(5), None, None, None, True, 0.1, 1e-5, False),
    lambda m, x: m.instance_norm(x[0, 0], None, None, None, None, True, 0.1, 1e-5, False),
    lambda m, x: m.group_norm(x, 3, None, m.ones(2)),
])
def test_instance_norm_errors(call):
    same_error(call, data(2, 6, 4))


def test_instance_norm_needs_more_than_one_spatial_element():
    # PyTorch's message shows the size as torch.Size(...), minitorch's as minitorch.Size(...)
    raises_like_torch(lambda m, x: m.nn.functional.instance_norm(x), data(2, 6, 1))
    with pytest.raises(ValueError, match=r"Expected more than 1 spatial element when training, got input size "
                                         r"minitorch.Size\(\[2, 6, 1\]\)"):
        F.instance_norm(minitorch.tensor(data(2, 6, 1)))


# ---- modules ----

MODULES = [
    ("GroupNorm", (2, 4), {}),
    ("GroupNorm", (3, 6), {"eps": 1e-3, "affine": False}),
    ("GroupNorm", (1, 2), {"bias": False}),
    ("InstanceNorm1d", (3,), {}),
    ("InstanceNorm2d", (3,), {"affine": True}),
    ("InstanceNorm3d", (2,), {"track_running_stats": True, "momentum": None}),
    ("InstanceNorm2d", (4,), {"affine": True, "track_running_stats": True, "bias": False}),
    ("LocalResponseNorm", (3,), {}),
    ("LocalResponseNorm", (2,), {"alpha": 0.1, "beta": 0.5, "k": 2.0}),
]


@pytest.mark.parametrize("name,args,kwargs", MODULES)
def test_module_repr_state_dict_and_defaults(name, args, kwargs):
    ours = getattr(minitorch.nn, name)(*args, **kwargs)
    if torch is None:
        return
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[k].numpy(), v.numpy())


def _run_module(lib, name, args, kwargs, x, train, state=None):
    mod = getattr(lib.nn, name)(*args, **kwargs).double()
    if state is not None:
        mod.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    mod.train(train)
    inp = lib.tensor(x).requires_grad_(True)
    y = mod(inp)
    (y * lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))).sum().backward()
    out = [y.detach(), inp.grad] + [p.grad for p in mod.parameters()] + list(mod.buffers())
    return [np.array(t.tolist()) for t in out]


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("name,args,kwargs,shape", [
    ("GroupNorm", (2, 4), {}, (3, 4, 5)),
    ("GroupNorm", (3, 6), {"affine": False}, (2, 6, 2, 2)),
    ("InstanceNorm1d", (3,), {"affine": True}, (2, 3, 6)),
    ("InstanceNorm1d", (3,), {}, (3, 6)),
    ("InstanceNorm2d", (2,), {"affine": True, "track_running_stats": True}, (2, 2, 3, 4)),
    ("InstanceNorm2d", (2,), {"track_running_stats": True}, (2, 3, 4)),
    ("InstanceNorm3d", (2,), {"affine": True}, (2, 2, 2, 3, 2)),
])
def test_module_forward_backward_matches_pytorch(name, args, kwargs, shape, train):
    x = data(*shape).transpose()  # non-contiguous
    x = np.ascontiguousarray(x).transpose()
    mod = getattr(minitorch.nn, name)(*args, **kwargs)
    state = {k: data(*v.shape) if k.endswith(("weight", "bias", "running_mean")) else
             (np.abs(data(*v.shape)) + 0.5 if k.endswith("running_var") else v.numpy())
             for k, v in mod.state_dict().items()}
    ours = _run_module(minitorch, name, args, kwargs, x, train, state)
    if torch is None:
        return
    theirs = _run_module(torch, name, args, kwargs, x, train, state)
    assert len(ours) == len(theirs)
    for got, want in zip(ours, theirs):
        np.testing.assert_allclose(got, want, atol=1e-10)


def test_group_norm_module_checks_divisibility():
    with pytest.raises(ValueError, match=r"num_channels \(5\) must be divisible by num_groups \(2\)"):
        minitorch.nn.GroupNorm(2, 5)


@pytest.mark.parametrize("name,shape", [("InstanceNorm1d", (2, 3, 4, 5)), ("InstanceNorm2d", (3, 4)),
                                        ("InstanceNorm3d", (2, 3, 4))])
def test_instance_norm_module_wrong_dims(name, shape):
    same_error(lambda m, x: getattr(m.nn, name)(3)(x), data(*shape))


def test_instance_norm_module_channel_mismatch():
    same_error(lambda m, x: m.nn.InstanceNorm1d(4, affine=True)(x), data(2, 3, 5))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = minitorch.nn.InstanceNorm1d(4)(minitorch.tensor(data(2, 3, 5)))
    assert tuple(y.shape) == (2, 3, 5)
    assert [str(w.message) for w in caught] == [
        "input's size at dim=1 does not match num_features. You can silence this warning by not passing in "
        "num_features, which is not used because affine=False"]


# ---- local_response_norm ----

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape,size", [((2, 5, 4), 3), ((2, 6, 3, 4), 2), ((1, 4, 2, 3, 2), 5), ((2, 3, 4), 1)])
def test_local_response_norm(shape, size, layout):
    if len(shape) == 5 and layout == "transposed":
        pytest.skip("PyTorch's own local_response_norm views a non-viewable product there (RuntimeError)")
    same_as_torch(lambda m, x: m.nn.functional.local_response_norm(x, size, alpha=0.3, beta=0.6, k=1.5),
                  [data(*shape)], layout=layout, atol=1e-10)
    same_as_torch(lambda m, x: m.nn.LocalResponseNorm(size)(x), [data(*shape).astype("float32")], layout=layout,
                  atol=1e-5, rtol=1e-4)


def test_local_response_norm_errors_and_empty_input():
    same_error(lambda m, x: m.nn.functional.local_response_norm(x, 2), data(3, 4))
    x = minitorch.zeros(0, 3, 4)
    assert F.local_response_norm(x, 2) is x
