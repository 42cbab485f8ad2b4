"""assert_close, as torch.testing.assert_close: tensors (and NumPy arrays, Python numbers, None,
and sequences and mappings of them, pairwise) compared by shape, device, dtype, optionally stride,
then values to rtol/atol with the defaults of PyTorch's dtype table; PyTorch's messages. Also the
deprecated assert_allclose over it."""
from __future__ import annotations

import cmath
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional, Union

import numpy as np

import minitorch

__all__ = ["assert_allclose", "assert_close"]

# (rtol, atol) by dtype, as PyTorch's table; other dtypes compare exactly.
_DTYPE_PRECISIONS = {"float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5),
                     "complex128": (1e-7, 1e-7)}
_NUMBER_DTYPES = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}


class _Mismatch(Exception):
    """One failed comparison: the exception class to raise, its message and the item's path."""

    def __init__(self, type: type, msg: str, id: tuple = ()) -> None:  # noqa: A002
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None) -> Exception:
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


def _dtype_name(dtype) -> str:
    return str(dtype).split(".")[-1]


def _tolerances(*dtype_names: str, rtol, atol, id):
    if (rtol is None) ^ (atol is None):
        raise _Mismatch(
            ValueError,
            "Both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}.",
            id,
        )
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*[_DTYPE_PRECISIONS.get(name, (0.0, 0.0)) for name in dtype_names])
    return max(rtols), max(atols)


def _mismatch_msg(identifier, default: str, extra: Optional[str], abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        msg = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
        return msg + ("" if equality else f" (up to {tol} allowed)") + "\n"

    name = default if identifier is None else (identifier(default) if callable(identifier) else identifier)
    msg = f"{name} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol) + diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(None, "Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol, rel_diff,
                         None, rtol)


def _tensor_mismatch_msg(actual, expected, matches, rtol, atol) -> str:
    total = matches.numel()
    mismatches = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        a, e = a.to(minitorch.int64), e.to(minitorch.int64)
    abs_diff = minitorch.abs(a - e)
    abs_diff[m] = 0  # only mismatches count
    max_abs, abs_idx = minitorch.max(abs_diff, 0)
    rel_diff = abs_diff / minitorch.abs(e)
    rel_diff[m] = 0
    max_rel, rel_idx = minitorch.max(rel_diff, 0)
    unravel = lambda flat: tuple(int(i) for i in np.unravel_index(int(flat), tuple(matches.shape)))  # noqa: E731
    return _mismatch_msg(None, "Tensor-likes", extra, max_abs.item(), unravel(abs_idx), atol, max_rel.item(),
                         unravel(rel_idx), rtol)


def _compare_tensors(actual, expected, id, *, rtol, atol, equal_nan, check_device, check_dtype, check_stride):
    def attribute_mismatch(name, a, e):
        raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.", id)

    if actual.shape != expected.shape:
        attribute_mismatch("shape", actual.shape, expected.shape)
    if check_device and actual.device != expected.device:
        attribute_mismatch("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        attribute_mismatch("dtype", actual.dtype, expected.dtype)
    if check_stride and actual.stride() != expected.stride():
        attribute_mismatch("stride()", actual.stride(), expected.stride())
    rtol, atol = _tolerances(_dtype_name(actual.dtype), _dtype_name(expected.dtype), rtol=rtol, atol=atol, id=id)
    actual, expected = actual.detach().cpu(), expected.detach().cpu()
    if actual.dtype != expected.dtype:
        # The promoted dtype (minitorch has no promote_types): that of a sum of 0-dim tensors.
        dtype = (minitorch.zeros((), dtype=actual.dtype) + minitorch.zeros((), dtype=expected.dtype)).dtype
        actual, expected = actual.to(dtype), expected.to(dtype)
    matches = minitorch.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.dim() == 0:
        raise _Mismatch(AssertionError, _scalar_mismatch_msg(actual.item(), expected.item(), rtol, atol), id)
    raise _Mismatch(AssertionError, _tensor_mismatch_msg(actual, expected, matches, rtol, atol), id)


def _compare_numbers(actual, expected, id, *, rtol, atol, equal_nan, check_dtype, **_):
    rtol, atol = _tolerances(*(_NUMBER_DTYPES[type(x)] for x in (actual, expected)), rtol=rtol, atol=atol, id=id)
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", id)
    if actual == expected or (equal_nan and cmath.isnan(actual) and cmath.isnan(expected)):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_mismatch_msg(actual, expected, rtol, atol), id)


def _is_number(x) -> bool:
    return isinstance(x, (int, float, complex, np.number)) and not isinstance(x, (bool, np.bool_))


def _compare(actual, expected, id, options) -> None:
    """Walks sequences and mappings pairwise; compares the leaves."""
    if actual is None or expected is None:
        if actual is not expected:
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", id)
        return
    if isinstance(actual, (bool, np.bool_)) and isinstance(expected, (bool, np.bool_)):
        if bool(actual) is not bool(expected):
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}", id)
        return
    tensors = (minitorch.Tensor, np.ndarray)
    if isinstance(actual, tensors) and isinstance(expected, tensors) and type(actual) is type(expected):
        if isinstance(actual, np.ndarray):
            actual, expected = minitorch.as_tensor(actual), minitorch.as_tensor(expected)
        _compare_tensors(actual, expected, id, **options)
        return
    if _is_number(actual) and _is_number(expected):
        to_py = lambda x: x.item() if isinstance(x, np.number) else x  # noqa: E731
        _compare_numbers(to_py(actual), to_py(expected), id, **options)
        return
    if all(isinstance(x, Sequence) and not isinstance(x, str) for x in (actual, expected)):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", id)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, id + (i,), options)
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        missing = expected.keys() - actual.keys()
        additional = actual.keys() - expected.keys()
        if missing or additional:
            raise _Mismatch(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(missing)}\n"
                f"Additional keys in the actual mapping: {sorted(additional)}",
                id,
            )
        for key in sorted(actual.keys(), key=str):
            _compare(actual[key], expected[key], id + (key,), options)
        return
    raise _Mismatch(TypeError, "No comparison pair was able to handle inputs of type "
                    f"{type(actual)} and {type(expected)}.", id)


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: Optional[Union[str, Callable[[str], str]]] = None,
) -> None:
    """Asserts that actual and expected are close: |actual - expected| <= atol + rtol * |expected|
    elementwise, after their shape, device and dtype (and stride if asked) match. rtol/atol default
    by dtype: float32 and complex64 (1.3e-6, 1e-5), float64 and complex128 (1e-7, 1e-7), others exact."""
    __tracebackhide__ = True
    options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                   check_stride=check_stride)
    try:
        _compare(actual, expected, (), options)
    except _Mismatch as mismatch:
        raise mismatch.to_error(msg) from None


# assert_allclose's own (rtol, atol) table, looser than assert_close's; other dtypes compare exactly
_ALLCLOSE_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual: Any, expected: Any, rtol: Optional[float] = None, atol: Optional[float] = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated (PyTorch 1.12) form of assert_close: non-tensors become tensors (expected in
    actual's dtype), the dtypes need not match, NaNs compare equal by default, and the default
    tolerances are the largest of the two dtypes' in assert_allclose's own table."""
    __tracebackhide__ = True
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, minitorch.Tensor):
        actual = minitorch.tensor(actual)
    if not isinstance(expected, minitorch.Tensor):
        expected = minitorch.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        tols = [_ALLCLOSE_PRECISIONS.get(_dtype_name(t.dtype), (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(t[0] for t in tols), max(t[1] for t in tols)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)
