"""Helpers shared by the distributions, as torch.distributions.utils: broadcasting parameters,
probabilities <-> logits, lazily computed properties."""
from __future__ import annotations

from numbers import Number

import minitorch

__all__ = [
    "broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits", "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Numbers become tensors of the first tensor's dtype (the default dtype if none); all are
    broadcast to one shape."""
    if not all(isinstance(v, (minitorch.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    if not all(isinstance(v, minitorch.Tensor) for v in values):
        like = next((v for v in values if isinstance(v, minitorch.Tensor)), None)
        opts = {"dtype": minitorch.get_default_dtype()} if like is None else {"dtype": like.dtype, "device": like.device}
        values = [v if isinstance(v, minitorch.Tensor) else minitorch.tensor(v, **opts) for v in values]
    return minitorch.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return minitorch.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim: int):
    """Sums out the `dim` rightmost dimensions of `value`."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    if is_binary:
        return minitorch.sigmoid(logits)
    return minitorch.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamps probabilities into the open interval (0, 1) by the dtype's eps."""
    eps = minitorch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return minitorch.log(ps_clamped) - minitorch.log1p(-ps_clamped)
    return minitorch.log(ps_clamped)


class lazy_property:
    """A property computed once, on first use, and stored in the instance's __dict__ (so
    Distribution.__init__ can skip validating a parameter nobody has asked for yet)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with minitorch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


class _BinaryParams:
    """The probs/logits pair of the families built on one success probability (Binomial,
    NegativeBinomial, Geometric): whichever was given is stored, the other computed on first
    use; `_param` is the given one."""

    def _set_binary_param(self, probs, logits, *others):
        """Broadcasts the given one of probs/logits with `others` (say total_count, which takes
        its dtype), stores it and returns the others."""
        name, given = ("probs", probs) if probs is not None else ("logits", logits)
        *others, given = broadcast_all(*others, given)
        setattr(self, name, given)
        self._param = given
        return [o.type_as(given) for o in others]

    def _expanded_binary(self, cls, batch_shape, _instance, names=()):
        new = self._expanded(cls, batch_shape, _instance, names + ("probs", "logits"))
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()


def _tril_positions(n: int, diag: int, device):
    """Flat positions (row * n + col) of the n x n matrix's entries with col <= row + diag, row by row."""
    rows, cols = minitorch.tril_indices(n, n, offset=diag, device=device)
    return rows * n + cols


def _tril_size(n: int, diag: int) -> int:
    return sum(min(n, max(0, i + diag + 1)) for i in range(n))


def tril_matrix_to_vec(mat, diag: int = 0):
    """The entries of mat's (batched) lower triangle at offset diag, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = mat.reshape(mat.shape[:-2] + (n * n,))
    return flat[..., _tril_positions(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of tril_matrix_to_vec: a (batched) D x D lower-triangular matrix, zeros elsewhere."""
    k = vec.shape[-1]
    n = 0  # the largest size whose triangle holds k entries (1 x 1 for no strict-lower entries)
    while _tril_size(n + 1, diag) <= k:
        n += 1
    if _tril_size(n, diag) != k:
        raise ValueError(
            f"The size of last dimension is {k} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    # Gather from vec with one zero appended: position k stands for every entry off the triangle.
    source = minitorch.cat([vec, vec.new_zeros(vec.shape[:-1] + (1,))], -1)
    index = minitorch.full((n * n,), k, dtype=minitorch.int64, device=vec.device)
    index[_tril_positions(n, diag, vec.device)] = minitorch.arange(k, device=vec.device)
    return source[..., index].reshape(vec.shape[:-1] + (n, n))
