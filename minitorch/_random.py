"""The random functions whose overloads Python binds: randint and randint_like (randint(high,
size) and randint(low, high, size)) and normal (tensor means and deviations, or numbers and a
size). Only the binding of arguments is here; the values come from one C op each:
_C.randint(low, high, size) (empty, then random_ in place), _C.normal(mean, std) or normal_."""
from __future__ import annotations

from typing import Any, Sequence, Tuple

from . import _C


def _bind(name: str, args: tuple, kwargs: dict, params: Tuple[str, ...]) -> dict:
    """Binds args/kwargs to params, or to params without "low" when one value is missing."""
    for key in kwargs:
        if key not in params:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    if len(args) + len(kwargs) == len(params) - 1 and "low" not in kwargs:
        params = params[1:]  # the (high, ...) overload: low=0
    if len(args) > len(params):
        raise TypeError(f"{name}() takes at most {len(params)} positional arguments but {len(args)} were given")
    bound = dict(zip(params, args))
    for key, value in kwargs.items():
        if key in bound:
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
        bound[key] = value
    for p in params:
        if p not in bound:
            raise TypeError(f"{name}() missing 1 required positional arguments: \"{p}\"")
    bound.setdefault("low", 0)
    return bound


def randint(*args: Any, generator: Any = None, dtype: Any = None, device: Any = None,
            requires_grad: bool = False, **kwargs: Any) -> "_C.TensorBase":
    """Uniform integers in [low, high) of shape size; low defaults to 0; dtype int64 unless given."""
    b = _bind("randint", args, kwargs, ("low", "high", "size"))
    return _C.randint(b["low"], b["high"], b["size"], generator=generator, dtype=dtype, device=device,
                      requires_grad=requires_grad)


def randint_like(input: "_C.TensorBase", *args: Any, generator: Any = None, dtype: Any = None,
                 device: Any = None, requires_grad: bool = False, **kwargs: Any) -> "_C.TensorBase":
    """randint(low, high, input.shape) with input's dtype and device unless given."""
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"randint_like(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    b = _bind("randint_like", args, kwargs, ("low", "high"))
    return _C.randint(
        b["low"], b["high"], input.shape, generator=generator,
        dtype=dtype if dtype is not None else input.dtype,
        device=device if device is not None else input.device,
        requires_grad=requires_grad,
    )


def normal(mean: Any, std: Any = 1.0, size: Any = None, *, generator: Any = None, dtype: Any = None,
           device: Any = None, requires_grad: bool = False, layout: Any = None,
           pin_memory: bool = False) -> "_C.TensorBase":
    """Draws from N(mean, std**2), as torch.normal's overloads: normal(Tensor mean, Tensor std),
    normal(Tensor mean, float std=1), normal(float mean, Tensor std) (the tensors broadcast;
    the result has mean's dtype, std's for a float mean), and normal(float mean, float std,
    size) with the factory arguments."""
    numbers = not isinstance(mean, _C.TensorBase) and not isinstance(std, _C.TensorBase)
    if numbers:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got "
                            f"({type(mean).__name__}, {type(std).__name__}), but expected one of: "
                            "(Tensor mean, Tensor std), (Tensor mean, float std), (float mean, Tensor std), "
                            "(float mean, float std, tuple of ints size)")
        out = _C.empty(size, dtype=dtype, device=device)
        return out.normal_(mean, std, generator=generator).requires_grad_(requires_grad)
    if size is not None or dtype is not None or device is not None or requires_grad:
        raise TypeError("normal() received an invalid combination of arguments: a tensor mean or std "
                        "takes no size, dtype, device or requires_grad")
    return _C.normal(mean, std, generator=generator)


# Below this many trials a binomial draw counts uniform draws under p directly; above it the count
# is split first (see _binomial_split).
_BINOMIAL_DIRECT = 32


def _binomial_split(mt: Any, n: Any, p: Any) -> Tuple[Any, Any, Any]:
    """One halving step of the order-statistic method for Binomial(n, p) draws, element by
    element where n > _BINOMIAL_DIRECT: the a-th smallest of n uniforms (a = (n + 1) // 2) is
    X ~ Beta(a, n + 1 - a). If X >= p, exactly the a - 1 uniforms below X can fall under p, each
    uniform on [0, X): the draw is Binomial(a - 1, p / X). Else the a uniforms up to X are all
    under p and the other n - a are uniform on (X, 1]: the draw is a + Binomial(n - a, (p - X) /
    (1 - X)). Returns (the count already known, the new n, the new p)."""
    big = n > _BINOMIAL_DIRECT
    a = mt.floor((n + 1) / 2)
    x = mt._sample_dirichlet(mt.stack([mt.where(big, a, 1.0), mt.where(big, n + 1 - a, 1.0)], -1)).select(-1, 0)
    above = x >= p
    new_n = mt.where(above, a - 1, n - a)
    new_p = mt.where(above, p / x, (p - x) / (1 - x)).clamp(0.0, 1.0)
    known = mt.where(above, 0.0, a)
    return mt.where(big, known, 0.0), mt.where(big, new_n, n), mt.where(big, new_p, p)


def binomial(count: Any, prob: Any, generator: Any = None) -> "_C.TensorBase":
    """Draws from Binomial(count, prob) element by element (the two tensors broadcast), as
    torch.binomial: the counts as count's dtype, no gradient. Counts above a few dozen are halved
    by order statistics (Beta draws) until small, then the remaining trials are counted as
    uniform draws under the probability. As PyTorch's: a probability above 1 (below 0) takes
    every trial (none), a negative count gives 0; an infinite count or a NaN gives count * prob
    (inf or NaN)."""
    from ._aliases import _NAMES

    for name, value in (("count", count), ("prob", prob)):
        if not isinstance(value, _C.TensorBase):
            position = 1 if name == "count" else 2
            raise TypeError(f"binomial(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {_NAMES[count.dtype]}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {_NAMES[prob.dtype]} but expected {_NAMES[count.dtype]}")
    import minitorch as mt  # the package's public ops (this module is imported while it loads)

    with mt.no_grad():
        n, p = mt.broadcast_tensors(count.detach().to(mt.float64), prob.detach().to(mt.float64))
        drawn = mt.isfinite(n) & ~mt.isnan(p)
        n = mt.where(drawn, n, 0.0).clamp(min=0.0)
        total = mt.zeros_like(n)
        while n.numel() and bool((n > _BINOMIAL_DIRECT).any()):
            known, n, p = _binomial_split(mt, n, p)
            total = total + known
        trials = int(n.max().item()) if n.numel() else 0
        if trials:
            u = mt.rand(tuple(n.shape) + (trials,), dtype=mt.float64, device=n.device, generator=generator)
            taken = mt.arange(trials, dtype=mt.float64, device=n.device) < n.unsqueeze(-1)
            total = total + ((u < p.unsqueeze(-1)) & taken).sum(-1)
        undrawn = count.detach().to(mt.float64) * prob.detach().to(mt.float64)
        return mt.where(drawn, total, undrawn).to(count.dtype)


__all__: Sequence[str] = ["binomial", "normal", "randint", "randint_like"]
