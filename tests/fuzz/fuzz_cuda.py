"""The fuzzer's CUDA mode (fuzz_worker.py --cuda): each call fuzz_calls.calls() draws runs twice,
on its CPU tensors and on CUDA copies of them (rebuilt with the same values, views and strides),
and the two outcomes must agree:

- both raise the same one of PyTorch's exception classes (a message that differs is noted, not
  failed: PyTorch's CUDA wording differs in places), or
- both return results of equal type, dtype, shape and values, the CUDA tensors on the device
  (integers and bools exactly, the exactly rounded float ops bit for bit with NaNs in the same
  places, the rest of the float ops within a tolerance), and the inputs an in-place op wrote to
  equal too.

Some calls (MIXED_RATE) leave a tensor argument on the CPU: those must raise PyTorch's "Expected
all tensors to be on the same device" RuntimeError, except where PyTorch takes a CPU tensor with
CUDA ones (a 0-dim CPU tensor joins them; CPU index tensors for indexing; copies between devices).
"""
from __future__ import annotations

import math
import random
import re

import numpy as np

import minitorch
from fuzz_calls import MADE, make_tensor

MIXED_RATE = 0.15
SAME_DEVICE = "Expected all tensors to be on the same device"

# PyTorch's exception classes, the more specific first (NotImplementedError is a RuntimeError):
# an outcome's class is the first of these it is an instance of, so minitorch's subclasses (and
# torch.cuda.OutOfMemoryError where the CPU raises RuntimeError for the same huge size) compare
# as PyTorch's class.
CLASSES = (NotImplementedError, IndexError, ValueError, TypeError, OverflowError, AssertionError, RuntimeError)

# Float ops that are exactly rounded on the CPU and on a GPU alike (IEEE +, -, *, /, sqrt, and
# the ones that only move, compare or select values): their results must agree bit for bit. The
# others (transcendental functions, reductions, whose order of summation differs between the CPU's
# loops and the GPU's blocks and atomics, and anything nvcc may contract into an FMA) get a
# tolerance.
EXACT = {"add", "sub", "mul", "div", "true_divide", "neg", "abs", "maximum", "minimum", "clamp", "clamp_min",
         "clamp_max", "relu", "where", "copy", "clone", "contiguous", "cat", "stack", "flip", "roll", "gather",
         "index_select", "masked_fill", "sort", "topk", "floor", "ceil", "trunc", "round", "sign", "sqrt",
         "getitem", "setitem", "fill", "zero", "view", "reshape", "permute", "transpose", "t", "expand",
         "squeeze", "unsqueeze", "flatten", "narrow", "select", "split", "chunk", "unbind", "to", "tensor",
         "zeros_like", "ones_like", "full_like", "max", "min", "amax", "amin", "argmax", "argmin", "eq", "ne",
         "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "+", "-", "*", "/", "==", "<", "+=", "-=",
         "*=", "repeat", "tril", "triu", "masked_select", "nonzero", "argwhere", "unique", "tolist", "item",
         "index", "index_put", "scatter", "square"}

# Calls whose results may stay on (or go to) the CPU even when their tensor inputs are on the device.
CPU_RESULTS = {"Tensor.to", "Tensor.cpu", "minitorch.from_numpy"}
# Calls whose values are random or uninitialized (resize_ leaves what it grows uninitialized): the CPU and the GPU draw from different
# generators (PyTorch's too: mt19937 and Philox), so only dtype, shape and device compare.
RANDOM = {"rand", "randn", "rand_like", "randn_like", "randint", "randint_like", "uniform", "normal",
          "bernoulli", "exponential", "random", "randperm", "multinomial", "dropout", "empty", "empty_like",
          "new_empty", "empty_strided", "new_empty_strided", "resize", "resize_as", "rrelu", "geometric",
          "log_normal", "cauchy", "poisson"}
# Calls PyTorch defines otherwise on CUDA, so only dtype, shape and device compare:
# _addmm_activation's GELU is exact on the CPU and tanh-approximated on CUDA (cuBLASLt's epilogue).
DEVICE_DEFINED = {"_addmm_activation"}
# Calls that take CPU tensors with CUDA ones in PyTorch: indexing (CPU index tensors; a value
# assigned through a basic index is copied over), copies between devices, and the calls whose
# CPU tensor arguments are data, not operands.
MIXED_OK = {"getitem", "setitem", "Tensor.copy_", "minitorch.tensor", "Tensor.new_tensor", "Tensor.to",
            "Tensor.backward"}
# Calls that check each tensor's device themselves, so that a 0-dim CPU tensor does not join CUDA
# ones either (PyTorch's block_diag: "input tensors must all be on the same device").
ONE_DEVICE = {"block_diag"}


def short_name(label: str) -> str:
    """The op's base name: 'Tensor.add_' -> 'add', 'op +=' -> '+=', 'overlap mul_' -> 'mul'."""
    name = label.split(" ", 1)[1] if " " in label else label.split(".", 1)[-1]
    return name[:-1] if name.endswith("_") and len(name) > 1 and name not in ("+=", "-=", "*=") else name


def outcome_class(e: BaseException) -> str:
    for cls in CLASSES:
        if isinstance(e, cls):
            return cls.__name__
    return type(e).__name__


class ToCuda:
    """conv for fuzz_calls' thunks: each tensor rebuilt on cuda:0 with the CPU one's values and
    strides (the same tensor object twice gives the same CUDA tensor, so aliasing holds); in a
    mixed call, some tensors after the first stay on the CPU."""

    def __init__(self, rng: random.Random, mixed: bool):
        self.rng, self.mixed = rng, mixed
        self.memo = {}
        self.pairs = []  # (CPU tensor, its CUDA copy)
        self.kept = []   # tensors left on the CPU

    def __call__(self, v):
        if isinstance(v, minitorch.Tensor):
            return self.tensor(v)
        if type(v) is list:
            return [self(x) for x in v]
        if type(v) is tuple:
            return tuple(self(x) for x in v)
        if type(v) is dict:
            return {k: self(x) for k, x in v.items()}
        return v

    def tensor(self, t):
        if id(t) in self.memo:
            return self.memo[id(t)]
        if self.mixed and (self.pairs or self.kept) and self.rng.random() < 0.5:
            self.kept.append(t)
            self.memo[id(t)] = t
            return t
        made = MADE.get(id(t))
        if made is not None and made[0] is t:
            g = make_tensor(made[1], made[2], "cuda")[0]
            assert tuple(g.stride()) == tuple(t.stride()), f"CUDA copy strides {g.stride()} != CPU {t.stride()}"
        else:  # made by the call itself (the overlap calls' base): contiguous, and the CPU run
            # makes its own, so there is no CPU tensor to compare this one with after the call
            g = t.detach().to("cuda")
            self.memo[id(t)] = g
            self.pairs.append((None, g))
            return g
        if t.requires_grad:
            g.requires_grad_(True)
        self.memo[id(t)] = g
        self.pairs.append((t, g))
        return g

    def mixed_devices(self, one_device: bool = False) -> bool:
        """Whether the call has a CUDA tensor with a CPU one PyTorch would refuse (not 0-dim, unless
        the call wants one device for all)."""
        return bool(self.pairs) and any(t.ndim > 0 or one_device for t in self.kept)


def _scale(conv: ToCuda) -> float:
    """The largest finite magnitude among the float inputs: the atol of sums and products."""
    m = 1.0
    for t, _ in conv.pairs:
        if t is not None and t.dtype in (minitorch.float32, minitorch.float64) and 0 < t.numel() <= 100_000:
            a = np.abs(np.array(memoryview(t.detach()), dtype=np.float64))
            a = a[np.isfinite(a)]
            if a.size:
                m = max(m, float(a.max()))
    return m


def _host(t):
    return np.array(memoryview(t.detach()), copy=True)


def compare_tensors(c, g, exact, scale: float, expect_cuda, what: str):
    """exact: True, False (a tolerance for floats) or None (metadata only). expect_cuda: True,
    False, or None (either device)."""
    assert isinstance(g, minitorch.Tensor), f"{what}: CUDA gave {type(g).__name__}, CPU a tensor"
    assert g.dtype == c.dtype, f"{what}: dtype {g.dtype} on CUDA, {c.dtype} on the CPU"
    assert tuple(g.shape) == tuple(c.shape), f"{what}: shape {tuple(g.shape)} on CUDA, {tuple(c.shape)} on the CPU"
    if expect_cuda is not None:
        want_dev = "cuda" if expect_cuda or c.device.type == "cuda" else "cpu"
        assert g.device.type == want_dev, f"{what}: on {g.device}, expected {want_dev}"
    n = math.prod(c.shape)
    if exact is None or n > 100_000 or max(c.shape, default=0) >= 2**31:
        return
    a = _host(c.cpu() if c.device.type == "cuda" else c)  # the CPU call's result may be on the device (to)
    b = _host(g.cpu() if g.device.type == "cuda" else g)
    if a.dtype.kind != "f":
        assert np.array_equal(a, b), f"{what}: CUDA {b.tolist()}, CPU {a.tolist()}"
        return
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    assert np.array_equal(nan_a, nan_b), f"{what}: NaNs differ: CUDA {b.tolist()}, CPU {a.tolist()}"
    if exact:
        assert np.array_equal(a[~nan_a], b[~nan_b]), f"{what}: CUDA {b.tolist()}, CPU {a.tolist()} (exact op)"
        return
    tol = 1e-5 if a.dtype == np.float32 else 1e-11
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol * scale, equal_nan=True, err_msg=what)


def compare_results(c, g, exact, scale, expect_cuda, what="result", depth=0):
    if isinstance(c, minitorch.Tensor):
        compare_tensors(c, g, exact, scale, expect_cuda, what)
        return
    if isinstance(c, (list, tuple)) and depth < 32:
        assert type(g) is type(c) and len(g) == len(c), f"{what}: CUDA {type(g).__name__} of {len(g) if isinstance(g, (list, tuple)) else '?'}, CPU {type(c).__name__} of {len(c)}"
        for i, (x, y) in enumerate(zip(c, g)):
            compare_results(x, y, exact, scale, expect_cuda, f"{what}[{i}]", depth + 1)
        return
    if isinstance(c, float) and isinstance(g, float):
        if math.isnan(c) or math.isnan(g):
            assert math.isnan(c) and math.isnan(g), f"{what}: CUDA {g}, CPU {c}"
        elif exact:
            assert c == g, f"{what}: CUDA {g}, CPU {c}"
        else:
            assert math.isclose(c, g, rel_tol=1e-5, abs_tol=1e-5 * scale), f"{what}: CUDA {g}, CPU {c}"
        return
    if isinstance(c, minitorch.device):
        assert isinstance(g, minitorch.device), f"{what}: CUDA {g!r}, CPU {c!r}"
        return
    assert type(g) is type(c), f"{what}: CUDA {type(g).__name__}, CPU {type(c).__name__}"
    if isinstance(c, str):  # t.type() names the device: 'minitorch.cuda.FloatTensor'
        assert _wording(g) == _wording(c), f"{what}: CUDA {g!r}, CPU {c!r}"
    elif not isinstance(c, np.ndarray):
        assert g == c, f"{what}: CUDA {g!r}, CPU {c!r}"


def _numpy_refused(kind, val) -> bool:
    """Tensor.numpy() or NumPy's reflected operator (tensor + ndarray) on a CUDA tensor: PyTorch
    raises this TypeError where the CPU tensor converts."""
    return kind == "raised" and isinstance(val, TypeError) and "can't convert cuda" in str(val)


def _no_integer_blas(kind, val) -> bool:
    """cuBLAS has no integer products: PyTorch's CUDA matmul family refuses integer dtypes
    ("addmm_cuda" not implemented for 'Long') where its CPU kernels compute them."""
    return (kind == "raised" and isinstance(val, NotImplementedError)
            and re.match(r'"(addmm|addmv_impl|bmm|dot|vdot|baddbmm|addbmm|addr)(_cuda)?" not implemented for', str(val))
            is not None)


def _wording(e) -> str:
    """A message with its device tags taken out: PyTorch's own differ there ("abs_cpu" and
    "abs_cuda" not implemented for 'Bool'; "pow" and "pow_cuda"; cpu and cuda:0)."""
    return re.sub(r"_(cpu|cuda)\b|\bcuda:\d\b|\bcpu\b|\bcuda\.", "", str(e))


def _device_assert(kind, val) -> bool:
    """A CUDA outcome that is a failed device-side assertion (a bad index or target, found by the
    kernel and raised at the synchronisation after the call), as PyTorch's CUDA kernels report
    what its CPU kernels raise as IndexError, ValueError or RuntimeError."""
    return kind == "raised" and isinstance(val, RuntimeError) and str(val).startswith(
        "CUDA error: device-side assert triggered")


def _run(thunk, conv=None):
    try:
        if conv is None:
            return ("returned", thunk())
        result = thunk(conv)
        minitorch.cuda.synchronize()  # a failed device-side assertion belongs to this call
        return ("returned", result)
    except BaseException as e:  # noqa: BLE001 - every outcome is compared
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        if conv is not None:
            try:  # a device-side assertion recorded before another error belongs to this call too
                minitorch.cuda.synchronize()
            except RuntimeError:
                pass
        return ("raised", e)


def run_pair(label, src, thunk, info, rng, counts, fail, note):
    """Runs one call on the CUDA copies, then on the CPU tensors, and compares the outcomes."""
    conv = ToCuda(rng, rng.random() < MIXED_RATE)
    g_kind, g_val = _run(thunk, conv)  # first, while the CPU tensors are as drawn
    c_kind, c_val = _run(thunk)
    counts["calls"] += 1
    mixed = conv.mixed_devices(short_name(label) in ONE_DEVICE)
    counts["mixed"] += mixed
    if mixed and label not in MIXED_OK:
        if g_kind == "raised" and isinstance(g_val, RuntimeError) and SAME_DEVICE in str(g_val):
            counts["raised"] += 1
            return
        if g_kind == "raised" and c_kind == "raised" and outcome_class(g_val) == outcome_class(c_val):
            counts["raised"] += 1  # a check before the devices' (PyTorch's order varies too)
            return
        got = f"{type(g_val).__name__}: {g_val}" if g_kind == "raised" else "a result"
        fail(label, src, "mixed devices not refused",
             f"CPU tensors {[tuple(t.shape) for t in conv.kept]} with CUDA ones gave {got}")
        return
    if (mixed and g_kind == "raised" and c_kind == "raised" and isinstance(g_val, RuntimeError)
            and SAME_DEVICE in str(g_val)):
        # a call that may mix devices (an advanced-index setitem takes a 0-dim CPU value, not
        # others) refused them before the check the CPU run failed (an index out of bounds,
        # which CUDA checks on the device): both refuse, in PyTorch's order
        counts["raised"] += 1
        return
    if c_kind == "raised" or g_kind == "raised":
        counts["raised"] += 1
        if c_kind == "raised" and _device_assert(g_kind, g_val):
            return  # the CPU's check, on the device
        if c_kind != g_kind:
            if g_kind == "returned" and isinstance(c_val, RuntimeError) and str(c_val) == "ZeroDivisionError":
                return  # integer division by zero: PyTorch's CUDA kernels cannot raise (any value)
            if _numpy_refused(g_kind, g_val) or (c_kind == "returned" and _no_integer_blas(g_kind, g_val)):
                return
            which = f"CUDA raised {type(g_val).__name__}: {g_val}" if g_kind == "raised" else "CUDA returned"
            other = f"CPU raised {type(c_val).__name__}: {c_val}" if c_kind == "raised" else "CPU returned"
            fail(label, src, "outcomes differ", f"{which}; {other}")
        elif outcome_class(c_val) != outcome_class(g_val) and not _numpy_refused(g_kind, g_val):
            fail(label, src, "exception classes differ",
                 f"CUDA {type(g_val).__name__}: {g_val}; CPU {type(c_val).__name__}: {c_val}")
        elif _wording(c_val) != _wording(g_val):
            note(label, src, f"CUDA: {str(g_val)[:300]} | CPU: {str(c_val)[:300]}")
        return
    counts["returned"] += 1
    name = short_name(label)
    exact = name in EXACT and not (name in ("add", "sub") and "alpha" in src)
    scale = _scale(conv)
    expect_cuda = None if label in CPU_RESULTS else bool(conv.pairs)
    if name in RANDOM or name in DEVICE_DEFINED:
        exact = None
    try:
        compare_results(c_val, g_val, exact, scale, expect_cuda)
        for i, (c, g) in enumerate(p for p in conv.pairs if p[0] is not None):
            compare_tensors(c, g, exact, scale, True, f"input {i} after the call")
        counts["checked"] += 1
    except (AssertionError,) + CLASSES as e:
        fail(label, src, "results differ", f"{type(e).__name__}: {e}")
