"""The one helper every op test uses: run an op in minitorch, NumPy and (where installed)
PyTorch on the same inputs, and compare values, shape and dtype.

An op is written once as `fn(lib, *tensors)`, called with lib=minitorch and lib=torch; NumPy is
the numerical reference in float64, `ref(*arrays)`. Inputs are laid out non-contiguously on
request (a transposed or sliced copy viewed back to the same logical values), the way Cornell
MiniTorch and needle test strided kernels.
"""
from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch

ROOT = Path(__file__).resolve().parents[1]


def child_env(**extra: str) -> dict:
    """The environment for a Python subprocess that must import this checkout's minitorch."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env

try:
    import torch
except ImportError:  # the comparisons with PyTorch are skipped where it is absent
    torch = None

MT_DTYPES = {
    "float32": minitorch.float32,
    "float64": minitorch.float64,
    "int64": minitorch.int64,
    "int32": minitorch.int32,
    "bool": minitorch.bool,
    "uint8": minitorch.uint8,
    "int8": minitorch.int8,
    "int16": minitorch.int16,
    "float16": minitorch.float16,
}
# The dtypes stored narrow and computed wide (uint8, int8, int16, float16; bfloat16 has no NumPy
# dtype: tests reach it through .to()), for the op tests that draw them.
SMALL_DTYPES = ("uint8", "int8", "int16", "float16")
LAYOUTS = ("contiguous", "transposed", "sliced")


def to_layout(a: np.ndarray, layout: str, device: str = "cpu") -> minitorch.Tensor:
    """A minitorch tensor equal to `a`, stored in the given layout."""
    if layout == "contiguous" or a.ndim == 0:
        t = minitorch.tensor(a)
    elif layout == "transposed":
        # Store the reversed-axes array contiguously, then permute back: strides are reversed.
        t = minitorch.tensor(np.ascontiguousarray(a.transpose())).permute(*reversed(range(a.ndim)))
    elif layout == "sliced":
        # Every other element of a twice-as-long last dim.
        wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
        wide[..., ::2] = a
        t = minitorch.tensor(wide)[..., ::2]
    elif layout == "channels_last":
        # A 4-d (5-d) array stored N, H, W, C (N, D, H, W, C); other ranks row-major.
        t = minitorch.tensor(a)
        fmt = {4: minitorch.channels_last, 5: minitorch.channels_last_3d}.get(a.ndim)
        t = t.contiguous(memory_format=fmt) if fmt is not None else t
    else:
        raise ValueError(layout)
    return t if device == "cpu" else t.to(device)


def torch_layout(torch, a, layout):
    """PyTorch's twin of to_layout: the same values, strides and offset in a torch tensor."""
    if layout == "contiguous" or a.ndim == 0:
        return torch.tensor(a)
    if layout == "transposed":
        return torch.tensor(np.ascontiguousarray(a.transpose())).permute(*reversed(range(a.ndim)))
    if layout == "channels_last":
        fmt = {4: torch.channels_last, 5: torch.channels_last_3d}.get(a.ndim)
        return torch.tensor(a).contiguous(memory_format=fmt) if fmt is not None else torch.tensor(a)
    wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
    wide[..., ::2] = a
    return torch.tensor(wide)[..., ::2]


def dlpack_stats():
    """_C's DLPack counters once every unreachable capsule and tensor has been collected."""
    gc.collect()
    return minitorch._C._dlpack_stats()


def dlpack_sample(dtype: str, shape) -> np.ndarray:
    """0, 1, 2, ... in the given shape and dtype (for bool, the odd ones are True)."""
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return (a % 2 == 1) if dtype == "bool" else a.astype(dtype)


def as_numpy(t: minitorch.Tensor) -> np.ndarray:
    # Through the buffer protocol: keeps the shape of empty tensors, which tolist() cannot.
    return np.array(memoryview(t.detach().cpu()), copy=True)


def _wide(a: np.ndarray) -> np.ndarray:
    """a in float64, or complex128 where it is complex (astype(float64) would drop the imaginary
    part)."""
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _torch_wide(t) -> np.ndarray:
    t = t.detach().cpu()
    return t.resolve_conj().to(torch.complex128).numpy() if t.is_complex() else t.double().numpy()


def check(
    fn: Callable,
    ref: Callable,
    arrays: Sequence[np.ndarray],
    *,
    layout: str = "contiguous",
    device: str = "cpu",
    atol: float = 1e-6,
    rtol: float = 1e-5,
    dtype=None,
    scalars: Sequence = (),
) -> minitorch.Tensor:
    """fn(minitorch, *tensors, *scalars) must equal ref(*float64 arrays, *scalars) to atol/rtol,
    with ref's shape; its dtype must be `dtype` if given and PyTorch's where torch is installed,
    and its values PyTorch's too. Returns minitorch's result."""
    inputs = [to_layout(a, layout, device) for a in arrays]
    before = [as_numpy(x) for x in inputs]
    out = fn(minitorch, *inputs, *scalars)
    for x, b in zip(inputs, before):
        np.testing.assert_array_equal(as_numpy(x), b, err_msg="the op modified its input")  # NaN == NaN here
    wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in arrays]
    expected = np.asarray(ref(*wide, *scalars))
    got = as_numpy(out)
    assert tuple(out.shape) == expected.shape, f"shape {tuple(out.shape)} != {expected.shape}"
    if dtype is not None:
        assert out.dtype == dtype, f"dtype {out.dtype} != {dtype}"
    if expected.dtype.kind in "fc" or got.dtype.kind == "f":
        # assert_allclose counts NaN as equal to NaN, so NaN and inf inputs can be checked too.
        np.testing.assert_allclose(_wide(got), _wide(expected), atol=atol, rtol=rtol)
    else:
        np.testing.assert_array_equal(got, expected)
    if torch is not None:
        t_out = fn(torch, *[torch.tensor(a) for a in arrays], *scalars)
        assert str(out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1], (
            f"dtype {out.dtype} differs from PyTorch's {t_out.dtype}"
        )
        np.testing.assert_allclose(_wide(got), _torch_wide(t_out), atol=atol, rtol=rtol)
    return out


def torch_alike(fn: Callable, *arrays: np.ndarray, layout: str = "contiguous", atol: float = 1e-6,
                rtol: float = 1e-5) -> tuple:
    """fn(lib, *tensors) gives the same results in minitorch (inputs in `layout`) and PyTorch: one
    tensor or a tuple of them (a named tuple's fields in order), each with the same shape, dtype
    and values (NaN equal to NaN). Returns minitorch's, as a tuple."""
    got = fn(minitorch, *[to_layout(a, layout) for a in arrays])
    want = fn(torch, *[torch.tensor(a) for a in arrays])
    got = tuple(got) if isinstance(got, tuple) else (got,)
    want = tuple(want) if isinstance(want, tuple) else (want,)
    assert len(got) == len(want), f"{len(got)} results, PyTorch's {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        assert tuple(g.shape) == tuple(w.shape), f"result {k}: shape {tuple(g.shape)} != {tuple(w.shape)}"
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1], f"result {k}: {g.dtype} != {w.dtype}"
        np.testing.assert_allclose(_wide(as_numpy(g)), _torch_wide(w), atol=atol, rtol=rtol, err_msg=f"result {k}")
    return got


def raises_like_torch(fn: Callable, *arrays: np.ndarray, scalars: Sequence = ()) -> type:
    """fn must raise in minitorch, with the same exception class PyTorch raises (if installed).
    Returns the class."""
    try:
        fn(minitorch, *[minitorch.tensor(a) for a in arrays], *scalars)
    except Exception as e:  # noqa: BLE001 - the class is what is checked
        cls = type(e)
    else:
        raise AssertionError("minitorch did not raise")
    if torch is not None:
        try:
            fn(torch, *[torch.tensor(a) for a in arrays], *scalars)
        except Exception as e:  # noqa: BLE001
            assert issubclass(cls, type(e)) or issubclass(type(e), cls), f"{cls} vs PyTorch's {type(e)}"
        else:
            raise AssertionError("PyTorch did not raise")
    return cls


# ---- the same op on another device: its kernels against the CPU's ----

def on_device(x, device: str = "cuda"):
    """x copied to the device if it is a tensor; numbers, None and the rest pass through."""
    return x.to(device) if isinstance(x, minitorch.Tensor) else x


def _expected_device(device: str):
    d = minitorch.device(device)
    if d.type == "cuda" and d.index is None:  # "cuda" means the current device
        return minitorch.device("cuda", minitorch.cuda.current_device())
    return d


def assert_same(got, want, *, device: str = "cuda", atol: float = 1e-5, rtol: float = 1e-5,
                signed_zeros: bool = False, what: str = "") -> None:
    """got, an op's result on the device, equals want, the same op's on the CPU: on that device,
    the same dtype and shape, values within atol/rtol (atol=rtol=0: exactly; NaN equals NaN), and
    with signed_zeros the same sign of every zero. Tuples (sort's values and indices) item by item."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), what
        for g, w in zip(got, want):
            assert_same(g, w, device=device, atol=atol, rtol=rtol, signed_zeros=signed_zeros, what=what)
        return
    assert got.device == _expected_device(device), f"{what} on {got.device}, not {device}"
    assert got.dtype == want.dtype, f"{what} dtype {got.dtype} != the CPU's {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{what} shape {tuple(got.shape)} != the CPU's {tuple(want.shape)}"
    g, w = as_numpy(got), as_numpy(want)
    if g.dtype.kind in "fc" and (atol or rtol):
        np.testing.assert_allclose(g, w, atol=atol, rtol=rtol, err_msg=what)
    else:
        np.testing.assert_array_equal(g, w, err_msg=what)
    if signed_zeros and g.dtype.kind == "f":  # -0.0 stays where it was
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=what)


def check_device(fn: Callable, *args, device: str = "cuda", atol: float = 1e-5, rtol: float = 1e-5):
    """fn(*args) on the CPU and fn on the args' copies on the device give the same result
    (assert_same); returns the device's."""
    want = fn(*args)
    got = fn(*[on_device(a, device) for a in args])
    assert_same(got, want, device=device, atol=atol, rtol=rtol)
    return got


def raises_alike(fn: Callable, *args, device: str = "cuda") -> None:
    """fn(*args) raises on the CPU and on the args' copies on the device: the same class and
    message (the device's error may surface at the next synchronisation)."""
    import pytest

    with pytest.raises(Exception) as cpu:
        fn(*args)
    with pytest.raises(Exception) as dev:
        fn(*[on_device(a, device) for a in args])
        minitorch.cuda.synchronize()
    assert type(dev.value) is type(cpu.value) and str(dev.value) == str(cpu.value)


def raises_device_assert(fn: Callable, *args, device: str = "cuda") -> None:
    """fn(*args) raises on the CPU (a bad index, target or probability in the data); on the
    device, as PyTorch's CUDA kernels, the kernel finds it: the call returns without waiting,
    and the next synchronisation raises RuntimeError "CUDA error: device-side assert triggered"
    with the kernel's assertion, once (the device works on)."""
    import pytest

    with pytest.raises((IndexError, RuntimeError, ValueError)):
        fn(*args)
    dev_args = [on_device(a, device) for a in args]
    fn(*dev_args)
    with pytest.raises(RuntimeError, match="^CUDA error: device-side assert triggered\nAssertion `"):
        minitorch.cuda.synchronize()
    minitorch.cuda.synchronize()


# ---- hypothesis strategies ----

def shapes(min_dims: int = 0, max_dims: int = 4, min_side: int = 0, max_side: int = 5):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def arrays(dtype: str, shape, *, low: float = -10, high: float = 10):
    """Arrays of the dtype with values in [low, high] (floats finite, no subnormals)."""
    if dtype == "bool":
        elements = st.booleans()
    elif dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        elements = st.integers(max(int(low), int(info.min)), min(int(high), int(info.max)))
    else:
        width = {"float16": 16, "float32": 32}.get(dtype, 64)
        elements = st.floats(low, high, width=width, allow_subnormal=False)
    return hnp.arrays(np.dtype(dtype), shape, elements=elements)


def broadcastable_pair(max_dims: int = 4, max_side: int = 5):
    """Two shapes that broadcast together."""
    return hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=max_dims, max_side=max_side).map(
        lambda s: s.input_shapes
    )


layouts = st.sampled_from(LAYOUTS)


# ---- gradients ----

def check_grad(fn: Callable, arrays: Sequence[np.ndarray], *, layout: str = "contiguous", atol: float = 1e-5,
               rtol: float = 1e-4, gradcheck: bool = True, scalars: Sequence = ()) -> None:
    """The gradients of fn(m, *tensors, *scalars) with respect to every float input: autograd's
    (backward of a random weighting of the output) must equal central finite differences in float64
    (minitorch.autograd.gradcheck, when `gradcheck`) and PyTorch's for the same inputs and weights
    (where torch is installed). Non-float arrays are passed as tensors that need no grad."""
    rng = np.random.default_rng(0)
    wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in arrays]

    def leaves(lib, make):
        out = []
        for a in wide:
            t = make(a)
            if a.dtype.kind == "f":
                t.requires_grad_(True)
            out.append(t)
        return out

    xs = leaves(minitorch, lambda a: to_layout(a, layout).detach())
    out = fn(minitorch, *xs, *scalars)
    weight = rng.standard_normal(tuple(out.shape))
    (out * minitorch.tensor(weight)).sum().backward()
    grads = [x.grad for x in xs]
    for x, a, g in zip(xs, wide, grads):
        if a.dtype.kind == "f":
            assert g is not None, "no gradient reached an input"
            assert tuple(g.shape) == a.shape and g.dtype == x.dtype
    if gradcheck:
        fresh = leaves(minitorch, lambda a: to_layout(a, layout).detach())
        minitorch.autograd.gradcheck(lambda *t: fn(minitorch, *t, *scalars), fresh, atol=atol, rtol=rtol)
    if torch is not None:
        ts = leaves(torch, lambda a: torch.tensor(a))
        t_out = fn(torch, *ts, *scalars)
        (t_out * torch.tensor(weight)).sum().backward()
        for g, t in zip(grads, ts):
            if t.requires_grad:
                np.testing.assert_allclose(as_numpy(g), t.grad.numpy(), atol=atol, rtol=rtol)


def _run_both(lib, make, fn, arrays, grad, scalars):
    import warnings

    xs = []
    for a in arrays:
        t = make(a)
        if grad and a.dtype.kind == "f":
            t.requires_grad_(True)
        xs.append(t)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. PyTorch's warning for a loss's broadcast target
            return xs, fn(lib, *xs, *scalars), None
    except Exception as e:  # noqa: BLE001 - the class is compared
        return xs, None, e


def _related(a: BaseException, b: BaseException) -> bool:
    return isinstance(a, type(b)) or isinstance(b, type(a))


def same_as_torch(fn: Callable, arrays: Sequence[np.ndarray], *, layout: str = "contiguous", grad: bool = True,
                  atol: float = 1e-6, rtol: float = 1e-5, scalars: Sequence = (), seed: int = 0) -> None:
    """fn(lib, *tensors, *scalars) in minitorch and in PyTorch (which must be installed) on the same
    inputs, laid out as `layout`, float ones leaves that require grad when `grad`. Either both raise,
    related exception classes, or both give the same shape, dtype and values (NaN equal to NaN);
    then, after the backward of the same seeded random weighting of the output, the same gradients
    (none where PyTorch's output needs none), or both raise there. AssertionError names the first
    difference. Without PyTorch (the sanitizer run), minitorch's side only runs."""
    xs, out, err = _run_both(minitorch, lambda a: to_layout(a, layout).detach(), fn, arrays, grad, scalars)
    if torch is None:
        return
    ts, t_out, t_err = _run_both(torch, lambda a: torch_layout(torch, a, layout).detach(), fn, arrays, grad,
                                 scalars)
    if err or t_err:
        assert err and t_err and _related(err, t_err), f"minitorch: {err!r}, PyTorch: {t_err!r}"
        return
    assert tuple(out.shape) == tuple(t_out.shape), f"shape {tuple(out.shape)} != PyTorch's {tuple(t_out.shape)}"
    assert str(out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1], f"dtype {out.dtype} != {t_out.dtype}"
    got, want = as_numpy(out), t_out.detach().numpy()
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, err_msg="values")
    else:
        np.testing.assert_array_equal(got, want, err_msg="values")
    assert out.requires_grad == t_out.requires_grad, f"requires_grad {out.requires_grad} != {t_out.requires_grad}"
    if not t_out.requires_grad:
        return
    weight = np.random.default_rng(seed).standard_normal(tuple(t_out.shape)).astype(want.dtype)
    errs = []
    for lib, o in ((minitorch, out), (torch, t_out)):
        try:
            (o * lib.tensor(weight)).sum().backward()
            errs.append(None)
        except Exception as e:  # noqa: BLE001
            errs.append(e)
    if errs[0] or errs[1]:
        assert errs[0] and errs[1] and _related(*errs), f"backward: minitorch {errs[0]!r}, PyTorch {errs[1]!r}"
        return
    for k, (x, t) in enumerate(zip(xs, ts)):
        if t.grad is None:
            assert x.grad is None or not as_numpy(x.grad).any(), f"input {k} got a gradient, PyTorch's none"
            continue
        assert x.grad is not None, f"input {k} got no gradient"
        assert tuple(x.grad.shape) == tuple(t.grad.shape), f"input {k}'s gradient shape"
        np.testing.assert_allclose(as_numpy(x.grad), t.grad.numpy(), atol=atol, rtol=rtol,
                                   err_msg=f"gradient of input {k}")


def same_error(fn: Callable, *arrays) -> None:
    """fn(lib, *tensors) raises in minitorch and in PyTorch alike: related exception classes and the
    same words (PyTorch's up to the C++ stack some of its messages go on with; its legacy type names
    as minitorch spells them). Without PyTorch, only that minitorch raises."""
    import warnings

    errors = []
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                fn(lib, *[lib.tensor(a) for a in arrays])
            except Exception as e:  # noqa: BLE001 - the class and words are compared
                errors.append(e)
                continue
        raise AssertionError(f"{lib.__name__} did not raise")
    if torch is None:
        return
    mine, theirs = errors
    assert _related(mine, theirs), f"{mine!r} vs {theirs!r}"
    want = str(theirs).split("\nException raised")[0].replace("CPUBoolType", "torch.BoolTensor")
    assert str(mine) == want, f"{mine} != {theirs}"


def complex_sample(rng: np.random.Generator, shape, dtype: str = "complex128") -> np.ndarray:
    """Standard normal real and imaginary parts, in the given complex dtype."""
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def same_as_torch_complex(fn: Callable, arrays: Sequence[np.ndarray], *, layout: str = "contiguous",
                          atol: float = 1e-6, rtol: float = 1e-5, grad: bool = True) -> None:
    """same_as_torch for ops on complex tensors: every float or complex input a leaf, the values
    compared with PyTorch's (and the dtype, shape); then the gradients of one real loss of the
    output (its real view, or itself when real, times a seeded random weight, summed): each
    complex leaf's gradient is PyTorch's conjugate Wirtinger one, each real leaf's real."""
    xs, out, err = _run_both(minitorch, lambda a: to_layout(a, layout).detach(), fn, arrays, False, ())
    if torch is None:
        return
    ts, t_out, t_err = _run_both(torch, lambda a: torch_layout(torch, a, layout).detach(), fn, arrays,
                                 False, ())
    if err or t_err:
        assert err and t_err and _related(err, t_err), f"minitorch: {err!r}, PyTorch: {t_err!r}"
        return
    assert tuple(out.shape) == tuple(t_out.shape), f"shape {tuple(out.shape)} != {tuple(t_out.shape)}"
    assert str(out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1], f"dtype {out.dtype} != {t_out.dtype}"
    got, want = as_numpy(out), t_out.detach().numpy(force=True)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, err_msg="values")
    else:
        np.testing.assert_array_equal(got, want, err_msg="values")
    if not grad or want.dtype.kind not in "fc":
        return
    leaves = []
    for lib, make in ((minitorch, lambda a: to_layout(a, layout)), (torch, lambda a: torch_layout(torch, a, layout))):
        xs = [make(a).detach().requires_grad_(a.dtype.kind in "fc") for a in arrays]
        o = fn(lib, *xs)
        parts = lib.view_as_real(o) if o.is_complex() else o
        weight = np.random.default_rng(0).standard_normal(tuple(parts.shape))
        (parts * lib.tensor(weight, dtype=parts.dtype)).sum().backward()
        leaves.append(xs)
    for k, (x, t) in enumerate(zip(*leaves)):
        if t.grad is None:
            assert x.grad is None, f"input {k} got a gradient, PyTorch's none"
            continue
        assert x.grad is not None, f"input {k} got no gradient"
        assert str(x.grad.dtype).split(".")[-1] == str(t.grad.dtype).split(".")[-1], f"input {k}'s gradient dtype"
        np.testing.assert_allclose(as_numpy(x.grad), t.grad.numpy(force=True), atol=atol,
                                   rtol=rtol,
                                   err_msg=f"gradient of input {k}")
