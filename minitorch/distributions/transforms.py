"""Invertible maps between constrained sets, as torch.distributions.transforms: each transform
knows its domain and codomain (constraints), computes y = t(x), x = t.inv(y) and
log |dy/dx| summed over its event dims, and may keep the last (x, y) pair (cache_size=1) so an
inverse of a value it produced is exact. TransformedDistribution and biject_to are built on them."""
from __future__ import annotations

import functools
import math
import operator
from numbers import Number, Real

import minitorch
from minitorch.nn.functional import logsigmoid, pad, softplus

from . import constraints
from .utils import _sum_rightmost, broadcast_all, lazy_property, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
    "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
    "SoftplusTransform", "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform",
    "Transform", "identity_transform",
]


def _sigmoid_in_open_unit(x):
    """sigmoid(x) kept strictly inside (0, 1), so its logit and log stay finite."""
    info = minitorch.finfo(x.dtype)
    return minitorch.clamp(minitorch.sigmoid(x), min=info.tiny, max=1.0 - info.eps)


def _need_dims(shape, n: int) -> None:
    if len(shape) < n:
        raise ValueError("Too few dimensions on input")


class Transform:
    """y = t(x) with domain and codomain constraints; subclasses define _call, _inverse and
    log_abs_det_jacobian. Equal transforms compare equal (the default is identity)."""

    bijective = False
    domain: constraints.Constraint
    codomain: constraints.Constraint

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 1:
            self._cached_x_y = None, None
        super().__init__()

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_inv"] = None  # rebuilt on demand
        return state

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim != self.codomain.event_dim:
            raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")
        return self.domain.event_dim

    @property
    def inv(self) -> Transform:
        """The inverse transform; t.inv.inv is t."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self):
        """The sign of the Jacobian's determinant (+1 or -1; a tensor where it varies)."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)


    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        last_x, last_y = self._cached_x_y
        if x is last_x:
            return last_y
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        last_x, last_y = self._cached_x_y
        if y is last_y:
            return last_x
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__ + "()"

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape


class _InverseTransform(Transform):
    """t.inv: swaps the roles of x and y of the transform it holds."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size: int = 1):
        return self._inv.with_cache(cache_size).inv

    def __eq__(self, other) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv


    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """parts applied left to right; an empty list is the identity."""

    def __init__(self, parts, cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts


    def _event_dims(self):
        """The event dims each part sees, walking forward from the domain's."""
        dims = []
        dim = self.domain.event_dim
        for part in self.parts:
            dims.append(dim)
            dim += part.codomain.event_dim - part.domain.event_dim
        return dims

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        # The input needs as many event dims as the most demanding part, counted back to here.
        needed = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            needed = max(needed + part.domain.event_dim - part.codomain.event_dim, part.domain.event_dim)
        first = self.parts[0].domain
        return constraints.independent(first, needed - first.event_dim) if needed > first.event_dim else first

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        produced = self.parts[0].domain.event_dim
        for part in self.parts:
            produced = max(produced + part.codomain.event_dim - part.domain.event_dim, part.codomain.event_dim)
        last = self.parts[-1].codomain
        return constraints.independent(last, produced - last.event_dim) if produced > last.event_dim else last

    @lazy_property
    def bijective(self):
        return all(part.bijective for part in self.parts)

    @lazy_property
    def sign(self):
        return functools.reduce(operator.mul, (part.sign for part in self.parts), 1)

    @property
    def inv(self):
        if self._inv is None:
            inverse = ComposeTransform([part.inv for part in reversed(self.parts)])
            inverse._inv = self
            self._inv = inverse
        return self._inv

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return minitorch.zeros_like(x)
        # The intermediate values; the last part's output is the given y.
        values = [x]
        for part in self.parts[:-1]:
            values.append(part(values[-1]))
        values.append(y)
        total = 0
        for part, dim, a, b in zip(self.parts, self._event_dims(), values[:-1], values[1:]):
            total = total + _sum_rightmost(part.log_abs_det_jacobian(a, b), dim - part.domain.event_dim)
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        inner = ",\n    ".join(repr(part) for part in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """base_transform with its `reinterpreted_batch_ndims` rightmost batch dims treated as event
    dims: the Jacobian term sums over them."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        _need_dims(x.shape, self.domain.event_dim)
        return self.base_transform(x)

    def _inverse(self, y):
        _need_dims(y.shape, self.codomain.event_dim)
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost in_shape dims to out_shape (same number of elements); volume-preserving."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape = minitorch.Size(in_shape)
        self.out_shape = minitorch.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    @staticmethod
    def _batch(value, event_shape):
        return value.shape[: value.dim() - len(event_shape)]

    def _call(self, x):
        return x.reshape(self._batch(x, self.in_shape) + self.out_shape)

    def _inverse(self, y):
        return y.reshape(self._batch(y, self.out_shape) + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(self._batch(x, self.in_shape))

    @staticmethod
    def _swap(shape, have, want):
        _need_dims(shape, len(have))
        cut = len(shape) - len(have)
        if tuple(shape[cut:]) != tuple(have):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {have}")
        return shape[:cut] + want

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)


class ExpTransform(Transform):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other) -> bool:
        return isinstance(other, ExpTransform)


    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x  # d exp(x) / dx = exp(x)


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other) -> bool:
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all().item())


    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()  # |p x^(p-1)| = |p y / x|

    def forward_shape(self, shape):
        return minitorch.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    inverse_shape = forward_shape


class SigmoidTransform(Transform):
    """y = sigmoid(x), kept inside (0, 1); the inverse is the logit."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other) -> bool:
        return isinstance(other, SigmoidTransform)


    def _call(self, x):
        return _sigmoid_in_open_unit(x)

    def _inverse(self, y):
        info = minitorch.finfo(y.dtype)
        y = y.clamp(min=info.tiny, max=1.0 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)  # log sigmoid(x) (1 - sigmoid(x))


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)); the inverse is y + log(1 - exp(-y))."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other) -> bool:
        return isinstance(other, SoftplusTransform)


    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-(-y).expm1()).log() + y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)  # log sigmoid(x)


class TanhTransform(Transform):
    """y = tanh(x); the inverse (atanh) is not clamped, as PyTorch's is not, so values at +-1
    give infinities (cache_size=1 avoids inverting them)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other) -> bool:
        return isinstance(other, TanhTransform)


    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return minitorch.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)), stable for large |x|.
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not injective: the inverse gives the non-negative root)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other) -> bool:
        return isinstance(other, AbsTransform)


    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


def _same_parameter(a, b) -> bool:
    if isinstance(a, Number) and isinstance(b, Number):
        return a == b
    return bool((a == b).all().item())


class AffineTransform(Transform):
    """y = loc + scale * x, over `event_dim` rightmost dims (whose Jacobian terms are summed)."""

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.real if self.event_dim == 0 else constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.real if self.event_dim == 0 else constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        return _same_parameter(self.loc, other.loc) and _same_parameter(self.scale, other.scale)


    @property
    def sign(self):
        if isinstance(self.scale, Real):
            return (float(self.scale) > 0) - (float(self.scale) < 0)
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        if isinstance(self.scale, Real):
            per_element = minitorch.full_like(x, math.log(abs(self.scale)))
        else:
            per_element = self.scale.abs().log()
        shape = x.shape
        if self.event_dim:
            per_element = _sum_rightmost(per_element, self.event_dim)
            shape = shape[: len(shape) - self.event_dim]
        return per_element.expand(shape)

    def forward_shape(self, shape):
        return minitorch.broadcast_shapes(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ()))

    inverse_shape = forward_shape


class SoftmaxTransform(Transform):
    """Real vectors to the simplex by exp and normalisation (not injective; the inverse is a log)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other) -> bool:
        return isinstance(other, SoftmaxTransform)


    def _call(self, x):
        unnormalised = (x - x.max(-1, True)[0]).exp()
        return unnormalised / unnormalised.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        _need_dims(shape, 1)
        return shape

    def inverse_shape(self, shape):
        _need_dims(shape, 1)
        return shape


def _stick_offsets(like, k: int):
    """log(k), log(k - 1), ..., log(1): the shifts that make x = 0 the simplex's centre."""
    return (k + 1 - like.new_ones(k).cumsum(-1)).log()


class StickBreakingTransform(Transform):
    """R^(K-1) to the K-simplex by breaking a stick: each coordinate takes a sigmoid fraction of
    what is left. Bijective, unlike SoftmaxTransform."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other) -> bool:
        return isinstance(other, StickBreakingTransform)


    def _call(self, x):
        fractions = _sigmoid_in_open_unit(x - _stick_offsets(x, x.shape[-1]))
        remaining = (1 - fractions).cumprod(-1)
        return pad(fractions, [0, 1], value=1) * pad(remaining, [1, 0], value=1)

    def _inverse(self, y):
        head = y[..., :-1]
        k = head.shape[-1]
        left = (1 - head.cumsum(-1)).clamp(min=minitorch.finfo(y.dtype).tiny)
        return head.log() - left.log() + _stick_offsets(head, k)

    def log_abs_det_jacobian(self, x, y):
        shifted = x - _stick_offsets(x, x.shape[-1])
        return (-shifted + logsigmoid(shifted) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _need_dims(shape, 1)
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        _need_dims(shape, 1)
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones with a positive diagonal: the strict lower
    triangle kept, the diagonal exponentiated."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other) -> bool:
        return isinstance(other, LowerCholeskyTransform)


    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive definite ones: L L^T of LowerCholeskyTransform's L."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other) -> bool:
        return isinstance(other, PositiveDefiniteTransform)


    def _call(self, x):
        factor = LowerCholeskyTransform()(x)
        return factor @ factor.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(minitorch.linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """Vectors of D (D - 1) / 2 reals to Cholesky factors of D x D correlation matrices: tanh
    gives partial correlations in (-1, 1), placed in the strict lower triangle, and each row is
    completed by stick breaking on its squared norm so that it has unit length."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other) -> bool:
        return isinstance(other, CorrCholeskyTransform)


    def _call(self, x):
        eps = minitorch.finfo(x.dtype).eps
        partial = x.tanh().clamp(min=-1 + eps, max=1 - eps)
        lower = vec_to_tril_matrix(partial, diag=-1)
        # Row i's j-th entry is its partial correlation times the length left after entries < j.
        left = (1 - lower.pow(2)).sqrt().cumprod(-1)
        eye = minitorch.eye(lower.shape[-1], dtype=x.dtype, device=x.device)
        return (lower + eye) * pad(left[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        left = 1 - (y * y).cumsum(-1)
        left_before = pad(left[..., :-1], [1, 0], value=1)
        partial = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left_before, diag=-1).sqrt()
        return (partial.log1p() - (-partial).log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        left = 1 - (y * y).cumsum(-1)
        stick = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        tanh_term = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick + tanh_term

    def forward_shape(self, shape):
        _need_dims(shape, 1)
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape):
        _need_dims(shape, 2)
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return shape[:-2] + (d * (d - 1) // 2,)


class CatTransform(Transform):
    """Applies tseq[i] to the i-th block (lengths[i] wide) of dim, concatenating the results."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("CatTransform expects a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("CatTransform needs one length per transform")
        self.dim = dim

    @lazy_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _blocks(self, value):
        if not -value.dim() <= self.dim < value.dim():
            raise IndexError(f"dim {self.dim} out of range for a tensor of {value.dim()} dims")
        if value.size(self.dim) != self.length:
            raise ValueError(f"CatTransform expects size {self.length} along dim {self.dim}, got {value.size(self.dim)}")
        starts = [0]
        for n in self.lengths:
            starts.append(starts[-1] + n)
        return [value.narrow(self.dim, s, n) for s, n in zip(starts, self.lengths)]

    def _call(self, x):
        return minitorch.cat([t(b) for t, b in zip(self.transforms, self._blocks(x))], dim=self.dim)

    def _inverse(self, y):
        return minitorch.cat([t.inv(b) for t, b in zip(self.transforms, self._blocks(y))], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = [
            _sum_rightmost(t.log_abs_det_jacobian(a, b), self.event_dim - t.event_dim)
            for t, a, b in zip(self.transforms, self._blocks(x), self._blocks(y))
        ]
        # Where the cat dim survives the event sums, the terms are concatenated; else added.
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:
            return minitorch.cat(terms, dim=dim)
        return functools.reduce(operator.add, terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Applies tseq[i] to the i-th slice along dim, stacking the results."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("StackTransform expects a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, value):
        if not -value.dim() <= self.dim < value.dim():
            raise IndexError(f"dim {self.dim} out of range for a tensor of {value.dim()} dims")
        if value.size(self.dim) != len(self.transforms):
            raise ValueError(f"StackTransform expects size {len(self.transforms)} along dim {self.dim}, "
                             f"got {value.size(self.dim)}")
        return [value.select(self.dim, i) for i in range(value.size(self.dim))]

    def _call(self, x):
        return minitorch.stack([t(s) for t, s in zip(self.transforms, self._slices(x))], dim=self.dim)

    def _inverse(self, y):
        return minitorch.stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        pairs = zip(self.transforms, self._slices(x), self._slices(y))
        return minitorch.stack([t.log_abs_det_jacobian(a, b) for t, a, b in pairs], dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """x to distribution.cdf(x) in the unit interval (a copula's margin); the inverse is icdf,
    the Jacobian the density."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
