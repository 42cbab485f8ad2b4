"""F.interpolate over the upsample ops (csrc/ops/upsample.c, cpu/upsample.c) and nn.Upsample,
UpsamplingNearest2d and UpsamplingBilinear2d against PyTorch: values and input gradients in
float32 and float64 for every mode, size or scale_factor (PyTorch's output sizes and source
positions, align_corners, recompute_scale_factor), the antialiased bilinear, bicubic and lanczos
modes, non-contiguous inputs, reprs, and errors."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, same_as_torch, same_error, torch

F = minitorch.nn.functional
_C = minitorch._C
RNG = np.random.default_rng(7)

# input dims per mode
MODES = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "linear": (3,), "bilinear": (4,),
         "bicubic": (4,), "trilinear": (5,)}
SPATIAL = {3: (7,), 4: (5, 6), 5: (3, 4, 3)}
# (size, scale_factor, recompute_scale_factor): up, down, odd ratios, identity, float rounding
RESIZES = [
    (None, 2.0, None), (None, 0.5, None), (None, 1.7, None), (None, 0.3, True), (None, 1.3, True),
    (None, 1.0, None), (None, 2.9, False), (None, 1.2, None), ("out", None, None), ("same", None, None),
    ("one", None, None),
]


def sizes_for(kind, spatial):
    return {"out": [s * 2 + 1 for s in spatial], "same": list(spatial), "one": [1] * len(spatial)}[kind]


def cases():
    for mode, dims in MODES.items():
        for dim in dims:
            for resize in RESIZES:
                for align in ([None] if mode.startswith("nearest") else [False, True]):
                    yield mode, dim, resize, align


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode,dim,resize,align", list(cases()))
def test_interpolate_matches_pytorch(mode, dim, resize, align, dtype):
    spatial = SPATIAL[dim]
    x = RNG.standard_normal((2, 3) + spatial).astype(dtype)
    size, scale, recompute = resize
    if size is not None:
        size = sizes_for(size, spatial)
    tol = 1e-12 if dtype == "float64" else 1e-5
    # PyTorch's nearest forward picks sources by the scale even where the output keeps the
    # input's size (here 5-D, scale 1.2), but its backward then treats the op as the identity:
    # minitorch's backward op does the same (core/resample_math.h), so the gradients match too
    for layout in LAYOUTS if dtype == "float64" else ("contiguous",):
        same_as_torch(lambda m, x: m.nn.functional.interpolate(
            x, size=size, scale_factor=scale, mode=mode, align_corners=align, recompute_scale_factor=recompute),
            [x], layout=layout, atol=tol, rtol=tol)


AA_RESIZES = [((4, 5), None, False), (None, 0.3, False), ((13, 3), None, True), ((13, 3), None, False),
              (None, 1.7, False), ((1, 1), None, False), (None, (0.25, 0.6), False), (None, 0.5, True),
              ((9, 11), None, False)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
@pytest.mark.parametrize("size,scale,align", AA_RESIZES)
def test_antialiased_modes_match_pytorch(mode, size, scale, align, dtype):
    """antialias=True (PyTorch's _upsample_{bilinear,bicubic,lanczos}2d_aa): shrinking averages
    every input under the stretched filter; values and input gradients, non-contiguous inputs."""
    if mode == "lanczos" and align:
        pytest.skip("lanczos refuses align_corners=True (tested with the errors)")
    x = RNG.standard_normal((2, 3, 9, 11) if scale != (0.25, 0.6) else (1, 2, 30, 40)).astype(dtype)
    tol = 1e-12 if dtype == "float64" else 2e-5
    for layout in LAYOUTS if dtype == "float64" else ("contiguous",):
        same_as_torch(lambda m, x: m.nn.functional.interpolate(
            x, size=size, scale_factor=scale, mode=mode, align_corners=align, antialias=True),
            [x], layout=layout, atol=tol, rtol=tol)


@pytest.mark.parametrize("mode,shape,size", [
    ("linear", (2, 3, 700), (1301,)), ("bilinear", (2, 3, 20, 300), (31, 613)),
    ("trilinear", (2, 3, 5, 7, 300), (6, 9, 517)), ("nearest", (2, 3, 20, 300), (31, 613)),
    ("nearest-exact", (2, 3, 5, 7, 300), (6, 9, 517))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_long_rows_on_threads(mode, shape, size, dtype):
    """Rows longer than the forward's block of outputs (cpu/upsample.c): the same bits on 1 and
    2 threads, and PyTorch's values (its own bits vary with its thread count)."""
    before = minitorch.get_num_threads()
    x = RNG.standard_normal(shape).astype(dtype)
    got = []
    try:
        for threads in (1, 2):
            minitorch.set_num_threads(threads)
            got.append(F.interpolate(minitorch.tensor(x), size=size, mode=mode).numpy())
    finally:
        minitorch.set_num_threads(before)
    np.testing.assert_array_equal(got[0], got[1])
    assert got[0].shape == shape[:2] + size
    if torch is not None:
        want = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode=mode).numpy()
        tol = 1e-12 if dtype == "float64" else 1e-5
        np.testing.assert_allclose(got[0], want, rtol=tol, atol=tol)


@pytest.mark.parametrize("scale", [0.37, 0.7, 1.37, 2.3, 3.0, 0.999, 1.999])
@pytest.mark.parametrize("n", [5, 7, 9, 13])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "linear"])
def test_source_positions_for_awkward_scales(mode, n, scale):
    x = np.arange(2 * n, dtype="float32").reshape(1, 2, n)
    same_as_torch(lambda m, x: m.nn.functional.interpolate(x, scale_factor=scale, mode=mode), [x], atol=1e-6)


def test_the_ops_directly():
    x3, x4, x5 = (RNG.standard_normal((1, 2) + SPATIAL[d]) for d in (3, 4, 5))
    same_as_torch(lambda m, x: m._C._nn.upsample_nearest1d(x, [9], 1.5) if m is torch else
                  _C.upsample_nearest1d(x, [9], 1.5), [x3])
    same_as_torch(lambda m, x: m._C._nn.upsample_nearest2d(x, [4, 9]) if m is torch else
                  _C.upsample_nearest2d(x, [4, 9]), [x4])
    same_as_torch(lambda m, x: m._C._nn.upsample_nearest3d(x, [4, 5, 2]) if m is torch else
                  _C.upsample_nearest3d(x, [4, 5, 2]), [x5])
    same_as_torch(lambda m, x: m._C._nn._upsample_nearest_exact1d(x, [9]) if m is torch else
                  _C._upsample_nearest_exact1d(x, [9]), [x3])
    same_as_torch(lambda m, x: m._C._nn._upsample_nearest_exact2d(x, [4, 9], 0.7, 1.3) if m is torch else
                  _C._upsample_nearest_exact2d(x, [4, 9], 0.7, 1.3), [x4])
    same_as_torch(lambda m, x: m._C._nn._upsample_nearest_exact3d(x, [4, 5, 2]) if m is torch else
                  _C._upsample_nearest_exact3d(x, [4, 5, 2]), [x5])
    same_as_torch(lambda m, x: m._C._nn.upsample_linear1d(x, [9], True) if m is torch else
                  _C.upsample_linear1d(x, [9], True), [x3])
    same_as_torch(lambda m, x: m._C._nn.upsample_bilinear2d(x, [4, 9], False, 0.6, None) if m is torch else
                  _C.upsample_bilinear2d(x, [4, 9], False, 0.6, None), [x4])
    same_as_torch(lambda m, x: m._C._nn.upsample_bicubic2d(x, [4, 9], False) if m is torch else
                  _C.upsample_bicubic2d(x, [4, 9], False), [x4])
    same_as_torch(lambda m, x: m._C._nn.upsample_trilinear3d(x, [4, 5, 2], True) if m is torch else
                  _C.upsample_trilinear3d(x, [4, 5, 2], True), [x5])


def test_area_mode_is_adaptive_average_pooling():
    x = RNG.standard_normal((2, 3, 7, 6))
    same_as_torch(lambda m, x: m.nn.functional.interpolate(x, size=(3, 4), mode="area"), [x], atol=1e-12)
    same_as_torch(lambda m, x: m.nn.functional.interpolate(x, scale_factor=0.5, mode="area"), [x], atol=1e-12)


@pytest.mark.parametrize("shape, kwargs", [((2, 3, 7), {"size": 3}), ((2, 3, 7), {"scale_factor": 0.5}),
                                           ((2, 3, 5), {"size": 9}), ((1, 2, 5, 6, 7), {"size": (2, 3, 4)}),
                                           ((1, 2, 4, 4, 4), {"scale_factor": 0.5})])
def test_area_mode_1d_and_3d(shape, kwargs):
    x = RNG.standard_normal(shape)
    same_as_torch(lambda m, x: m.nn.functional.interpolate(x, mode="area", **kwargs), [x], atol=1e-12)


def test_empty_batch():
    same_as_torch(lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
                  [np.zeros((0, 2, 3, 3))])


def test_interpolate_is_one_op_in_the_profiler():
    with minitorch.profiler.profile() as prof:
        F.interpolate(minitorch.randn(1, 2, 3, 3), scale_factor=2, mode="bilinear")
    assert "upsample_bilinear2d" in {e.key.split("::")[-1] for e in prof.key_averages()}


@pytest.mark.parametrize("call", [
    lambda m, x: m.nn.functional.interpolate(x, size=3, scale_factor=2),
    lambda m, x: m.nn.functional.interpolate(x),
    lambda m, x: m.nn.functional.interpolate(x, size=(3,)),
    lambda m, x: m.nn.functional.interpolate(x, size=(3, 2.5)),
    lambda m, x: m.nn.functional.interpolate(x, scale_factor=(2, 2, 2)),
    lambda m, x: m.nn.functional.interpolate(x, size=4, align_corners=True),
    lambda m, x: m.nn.functional.interpolate(x, size=4, recompute_scale_factor=True),
    lambda m, x: m.nn.functional.interpolate(x, size=4, mode="linear"),
    lambda m, x: m.nn.functional.interpolate(x, size=4, mode="trilinear"),
    lambda m, x: m.nn.functional.interpolate(x[0], size=4, mode="bilinear"),
    lambda m, x: m.nn.functional.interpolate(x[0, 0], size=4),
    lambda m, x: m.nn.functional.interpolate(x, size=4, mode="nearest", antialias=True),
    lambda m, x: m.nn.functional.interpolate(x[0], size=4, mode="bilinear", antialias=True),
    lambda m, x: m.nn.functional.interpolate(x.to(m.int64), size=3, mode="bilinear", antialias=True),
    lambda m, x: m.nn.functional.interpolate(x.to(m.int64), size=3, mode="lanczos", antialias=True),
    lambda m, x: m.nn.functional.interpolate(x, size=3, mode="lanczos"),
    lambda m, x: m.nn.functional.interpolate(x, size=3, mode="lanczos", antialias=True, align_corners=True),
    lambda m, x: m.nn.functional.interpolate(x, size=0),
    lambda m, x: m.nn.functional.interpolate(x, scale_factor=0.1),
    lambda m, x: m.nn.functional.interpolate(x, scale_factor=-1.0),
    lambda m, x: m.nn.functional.interpolate(x.to(m.int64), size=3),
    lambda m, x: m.nn.functional.interpolate(x.to(m.int64), size=3, mode="bilinear"),
    lambda m, x: m.nn.functional.interpolate(x.to(m.int64), size=3, mode="bicubic"),
    lambda m, x: m.nn.functional.interpolate(x[0].to(m.int64), size=3, mode="linear"),
    lambda m, x: m.nn.functional.interpolate(x[0].to(m.int64), size=3),
])
def test_interpolate_errors(call):
    same_error(call, RNG.standard_normal((2, 3, 4, 5)))


# ---- modules ----

MODULES = [
    ("Upsample", (), {"scale_factor": 2}),
    ("Upsample", ((4, 5),), {"mode": "bilinear"}),
    ("Upsample", (), {"scale_factor": (2, 1.5), "mode": "bicubic", "align_corners": True}),
    ("Upsample", (7,), {"mode": "nearest-exact"}),
    ("UpsamplingNearest2d", (), {"scale_factor": 3}),
    ("UpsamplingBilinear2d", ((7, 3),), {}),
]


@pytest.mark.parametrize("name,args,kwargs", MODULES)
def test_modules_match_pytorch(name, args, kwargs):
    ours = getattr(minitorch.nn, name)(*args, **kwargs)
    x = RNG.standard_normal((2, 3, 4, 5))
    same_as_torch(lambda m, x: getattr(m.nn, name)(*args, **kwargs)(x), [x], atol=1e-12)
    if torch is not None:
        assert repr(ours) == repr(getattr(torch.nn, name)(*args, **kwargs))


def test_deprecated_upsample_functions_warn():
    x = minitorch.randn(1, 1, 2, 2)
    for fn, want in [(F.upsample, "upsample"), (F.upsample_nearest, "upsample_nearest"),
                     (F.upsample_bilinear, "upsample_bilinear")]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = fn(x, scale_factor=2)
        assert tuple(y.shape) == (1, 1, 4, 4)
        assert str(caught[0].message) == f"`nn.functional.{want}` is deprecated. Use `nn.functional.interpolate` instead."
