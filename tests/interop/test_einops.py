"""einops on minitorch tensors: rearrange, repeat, reduce, einsum, pack, unpack and parse_shape give
what the same calls give on NumPy arrays (float64) and on PyTorch's tensors, gradients included; the
backend is found whether einops is imported before or after minitorch, without importing torch;
einops's layers (Rearrange, Reduce, EinMix) are minitorch modules under einops.layers.minitorch, and
under einops.layers.torch where PyTorch is absent. (A ViT block run under both libraries is
tests/programs/test_vit_einops.py.)"""
import subprocess
import sys

import numpy as np
import pytest

import minitorch

from helpers import LAYOUTS, as_numpy, check, child_env, same_as_torch, to_layout

einops = pytest.importorskip("einops")
from einops import einsum, pack, parse_shape, rearrange, reduce, repeat, unpack  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

rng = np.random.default_rng(0)
X = rng.standard_normal((2, 3, 4, 6))
SPECIAL = np.array([[np.nan, 1.0, -np.inf], [2.0, np.inf, -0.5]])

# (function of a tensor of any library, the input): each runs on minitorch, NumPy and PyTorch.
CASES = {
    "rearrange_merge": (lambda x: rearrange(x, "b c h w -> (b h) (w c)"), X),
    "rearrange_split": (lambda x: rearrange(x, "b c h (w p) -> b p c h w", p=2), X),
    "rearrange_ellipsis": (lambda x: rearrange(x, "b ... w -> w ... b"), X),
    "rearrange_empty": (lambda x: rearrange(x, "b c h w -> (c w) b h"), np.zeros((0, 3, 2, 4))),
    "rearrange_nan_inf": (lambda x: rearrange(x, "a b -> b a"), SPECIAL),
    "repeat_new_axis": (lambda x: repeat(x, "b c h w -> b c h w r", r=3), X),
    "repeat_tile": (lambda x: repeat(x, "b c h w -> (r b) c (h k) w", r=2, k=2), X),
    "reduce_sum": (lambda x: reduce(x, "b c h w -> b w", "sum"), X),
    "reduce_mean_pool": (lambda x: reduce(x, "b c (h h2) (w w2) -> b c h w", "mean", h2=2, w2=2), X),
    "reduce_max": (lambda x: reduce(x, "b c h w -> c", "max"), X),
    "reduce_min": (lambda x: reduce(x, "b c h w -> b h", "min"), X),
    "reduce_prod": (lambda x: reduce(x, "b c h w -> c w", "prod"), X),
    "reduce_nan_inf": (lambda x: reduce(x, "a b -> a", "max"), SPECIAL),
    "reduce_empty_sum": (lambda x: reduce(x, "b c h w -> c", "sum"), np.zeros((0, 3, 2, 4))),
    "einsum": (lambda x: einsum(x, x, "b c h w, b d h w -> b c d"), X),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", CASES)
def test_equals_numpy_and_torch(name, layout, device):
    fn, a = CASES[name]
    out = check(lambda lib, x: fn(x), fn, [a], layout=layout, device=device, atol=1e-12)
    assert type(out) is minitorch.Tensor and out.device.type == device


@pytest.mark.parametrize("op", ["any", "all"])
def test_reduce_bool(op):
    a = rng.standard_normal((3, 4, 2)) > 0
    fn = lambda x: reduce(x, "a b c -> b", op)  # noqa: E731
    out = check(lambda lib, x: fn(x), fn, [a], layout="transposed")
    assert out.dtype == minitorch.bool


def test_pack_unpack_and_parse_shape():
    a, b = rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 5))
    x, y = to_layout(a, "transposed"), to_layout(b, "sliced")
    packed, shapes = pack([x, y], "b * c")
    want, want_shapes = pack([a, b], "b * c")
    np.testing.assert_array_equal(as_numpy(packed), want)
    assert shapes == want_shapes
    for got, ref in zip(unpack(packed, shapes, "b * c"), (a, b)):
        assert type(got) is minitorch.Tensor
        np.testing.assert_array_equal(as_numpy(got), ref)
    assert parse_shape(x, "b h _") == parse_shape(a, "b h _") == {"b": 2, "h": 3}
    np.testing.assert_array_equal(einops.asnumpy(x), a)


GRAD_CASES = {
    "rearrange": lambda x, y: rearrange(x, "b c (h p) -> (b p) h c", p=2),
    "repeat": lambda x, y: repeat(x, "b c h -> b r c h", r=3),
    "reduce_mean": lambda x, y: reduce(x, "b c (h p) -> b h", "mean", p=2),
    "reduce_max": lambda x, y: reduce(x, "b c h -> c", "max"),
    "reduce_prod": lambda x, y: reduce(x, "b c h -> b", "prod"),
    "einsum": lambda x, y: einsum(x, y, "b c h, c d -> b d h"),
}


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("name", GRAD_CASES)
def test_gradients_equal_torchs(name, layout):
    fn = GRAD_CASES[name]
    same_as_torch(lambda lib, x, y: fn(x, y), [rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 5))],
                  layout=layout, atol=1e-10)


def test_errors_are_einops_errors():
    with pytest.raises(einops.EinopsError):
        rearrange(minitorch.zeros(2, 3), "a b c -> a")
    with pytest.raises(einops.EinopsError):
        rearrange(minitorch.zeros(2, 3), "a (b p) -> a b p", p=2)


def _child(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


USE = ("x = minitorch.arange(24.).reshape(2, 3, 4)\n"
       "y = einops.rearrange(x, 'a b c -> c (a b)')\n"
       "print(type(y).__name__, tuple(y.shape), y[1, 4].item(), 'torch' in sys.modules)\n")


@pytest.mark.parametrize("first", ["einops", "minitorch"])
def test_either_import_order_finds_the_backend_without_torch(first):
    second = "minitorch" if first == "einops" else "einops"
    out = _child(f"import sys\nimport {first}\nimport {second}\n" + USE)
    assert out == "Tensor (4, 6) 17.0 False"  # x[1, 1, 1] = 17


def test_import_minitorch_does_not_import_einops():
    assert _child("import sys, minitorch; print('einops' in sys.modules)") == "False"


NO_TORCH = ("import sys\n"
            "class NoTorch:  # as where PyTorch is not installed\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name.split('.')[0] == 'torch':\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}')\n"
            "sys.meta_path.insert(0, NoTorch())\n")


def test_layers_torch_without_pytorch_are_minitorchs():
    out = _child(NO_TORCH +
                 "import minitorch as torch\n"
                 "from einops.layers.torch import Rearrange, Reduce, EinMix\n"
                 "import einops.layers.minitorch as ours\n"
                 "m = torch.nn.Sequential(Rearrange('b c h w -> b (h w) c'), Reduce('b n c -> b c', 'max'))\n"
                 "print(Rearrange is ours.Rearrange, tuple(m(torch.ones(2, 3, 4, 5)).shape))")
    assert out == "True (2, 3)"


def test_layers_torch_stays_pytorchs_where_installed():
    pytest.importorskip("torch")
    assert _child("import minitorch, torch\nfrom einops.layers.torch import Rearrange\n"
                  "print(issubclass(Rearrange, torch.nn.Module), issubclass(Rearrange, minitorch.nn.Module))"
                  ) == "True False"


def test_backend_layers_are_minitorch_modules():
    from einops._backends import get_backend
    from einops.layers.minitorch import EinMix, Rearrange, Reduce

    x = minitorch.tensor(X, dtype=minitorch.float32)
    assert get_backend(x).layers().Rearrange is Rearrange
    model = minitorch.nn.Sequential(Rearrange("b c h (w p) -> b h w (p c)", p=2),
                                    EinMix("b h w pc -> b h w e", weight_shape="pc e", bias_shape="e", pc=6, e=5),
                                    Reduce("b h w e -> b e", "mean"))
    assert repr(model[0]) == "Rearrange('b c h (w p) -> b h w (p c)', p=2)"
    assert sorted(model.state_dict()) == ["1.bias", "1.weight"]
    mix = model[1]
    out = model(x)
    w, bias = as_numpy(mix.weight).astype(np.float64), as_numpy(mix.bias).astype(np.float64)
    ref = reduce(np.einsum("bhwc,ce->bhwe", rearrange(X, "b c h (w p) -> b h w (p c)", p=2), w) + bias,
                 "b h w e -> b e", "mean")
    np.testing.assert_allclose(as_numpy(out), ref, rtol=1e-5, atol=1e-5)
    out.sum().backward()
    assert mix.weight.grad is not None and tuple(mix.weight.grad.shape) == (6, 5)
    np.testing.assert_allclose(as_numpy(mix.bias.grad), np.full((1, 1, 1, 5), 2.0), rtol=1e-6)  # d(sum of b means)/d bias


def test_einops_own_torch_code_runs_where_torch_is_aliased_to_minitorch():
    # Third-party code that imports torch itself runs on minitorch after sys.modules['torch'] = minitorch:
    # then einops.layers.torch and einops's PyTorch backend are einops's own code over minitorch.
    out = _child("import sys, minitorch\nsys.modules['torch'] = minitorch\nimport torch\n"
                 "from einops.layers.torch import EinMix, Rearrange, Reduce\nfrom einops import repeat\n"
                 "m = torch.nn.Sequential(Rearrange('b c h w -> b (h w) c'), EinMix('b n c -> b n e', "
                 "weight_shape='c e', c=3, e=5), Reduce('b n e -> b e', 'max'))\n"
                 "x = torch.ones(2, 3, 4, 4)\n"
                 "print(isinstance(m[0], minitorch.nn.Module), tuple(m(x).shape), "
                 "tuple(repeat(x, 'b c h w -> b c h w r', r=2).shape))")
    assert out == "True (2, 5) (2, 3, 4, 4, 2)"
