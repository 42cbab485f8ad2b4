"""Complex tensors' Python surface: Tensor.real and .imag (views of the real view, as PyTorch's),
conj (a conjugated copy: PyTorch's lazy conjugate bit is not modelled, so conj and
conj_physical give the same values), resolve_conj, angle, sgn (x / |x|), and
torch.real/imag/conj/angle/sgn.

The dtypes complex64 and complex128, view_as_real, view_as_complex and conj_physical are ops of
the op table (csrc/dispatch/ops.def); which ops take complex tensors is the dispatcher's rule
(csrc/dispatch/complex.c). Each function here is one or two op calls; none computes on values.
"""
from __future__ import annotations

import math

from . import _C
from ._checks import _to_out


def _check(fname: str, t) -> None:
    if not isinstance(t, _C.TensorBase):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(t).__name__}")


def real(input):
    """The real part: a view of a complex tensor (view_as_real(input)[..., 0]); input itself if real."""
    _check("real", input)
    if input.dtype.is_complex:
        return _C.view_as_real(input).select(-1, 0)
    return input


def imag(input):
    """The imaginary part of a complex tensor, a view (view_as_real(input)[..., 1])."""
    _check("imag", input)
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _C.view_as_real(input).select(-1, 1)


def conj(input):
    """The complex conjugate (a copy, as conj_physical); input itself if real."""
    _check("conj", input)
    if input.dtype.is_complex:
        return _C.conj_physical(input)
    return input


def resolve_conj(input):
    """input: minitorch's conj already materializes."""
    _check("resolve_conj", input)
    return input


def angle(input, *, out=None):
    """The argument of each element: atan2(imag, real) for complex; 0 or pi for real numbers."""
    _check("angle", input)
    if input.dtype.is_complex:
        return _to_out(_C.atan2(imag(input), real(input)), out)
    x = input if input.dtype.is_floating_point else input.to(_C._get_default_dtype())
    return _to_out(_C.where(x < 0, math.pi, 0.0).to(x.dtype) + x * 0, out)


def sgn(input, *, out=None):
    """x / |x| for complex elements (0 where x is 0); sign(x) for real ones, as PyTorch's. The
    quotient is taken of 1 where x is 0, so no NaN reaches the gradient there."""
    if not isinstance(input, _C.TensorBase) and _C._has_torch_function((input,)):  # a sparse tensor
        from .overrides import handle_torch_function

        return handle_torch_function(sgn, (input,), input, **({} if out is None else {"out": out}))
    _check("sgn", input)
    if not input.dtype.is_complex:
        return _to_out(_C.sign(input), out)
    zero = input == 0
    nonzero = _C.where(zero, 1, input)
    return _to_out(_C.where(zero, 0, nonzero / nonzero.abs()), out)


def is_complex(input) -> bool:
    _check("is_complex", input)
    return input.dtype.is_complex


class TensorComplex:
    """Mixed into Tensor: the complex views and predicates as methods and properties."""

    @property
    def real(self):
        return real(self)

    @property
    def imag(self):
        return imag(self)

    def conj(self):
        return conj(self)

    def resolve_conj(self):
        return self

    def is_conj(self) -> bool:
        return False

    def angle(self):
        return angle(self)

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def sgn(self):
        return sgn(self)


def install(namespace: dict, tensor_cls: type) -> None:
    for name, member in vars(TensorComplex).items():
        if not name.startswith("__"):
            setattr(tensor_cls, name, member)
    for fn in (real, imag, conj, resolve_conj, angle, is_complex, sgn):
        namespace[fn.__name__] = fn
