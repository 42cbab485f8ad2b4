"""nn.utils.prune, as torch.nn.utils.prune: zeroing parts of a module's parameter through a mask.

Pruning `name` of a module moves the parameter to `name + "_orig"`, keeps the mask as the buffer
`name + "_mask"` and makes `name` a plain attribute, orig * mask, that a forward pre-hook (the
pruning method itself) recomputes before every call. Pruning the same tensor again combines the
methods in a PruningContainer, whose new method sees only what the earlier ones left;
`remove` makes the pruned values the parameter again. Masks are computed with tensor ops (topk,
norms, index_fill), never element by element in Python.
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, Dict, Optional, Tuple

import minitorch
from minitorch import Tensor
from minitorch.nn.utils.convert_parameters import parameters_to_vector
from minitorch.nn.utils.weight_norm import _undo_pre_hook

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured", "PruningContainer",
           "RandomStructured", "RandomUnstructured", "custom_from_mask", "global_unstructured", "identity",
           "is_pruned", "l1_unstructured", "ln_structured", "random_structured", "random_unstructured", "remove"]


# ---- argument checks (PyTorch's messages) ---------------------------------------------------

def _check_amount(amount: Any) -> None:
    """amount is a fraction in [0, 1] or a count of at least 0."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if isinstance(amount, numbers.Integral):
        bad = amount < 0
    else:
        bad = not 0.0 <= float(amount) <= 1.0
    if bad:
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _how_many(amount: Any, size: int) -> int:
    """The number of units to prune out of size: a count as given (at most size), a fraction rounded."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")
        return int(amount)
    return round(amount * size)


def _check_structured(t: Tensor, dim: int) -> None:
    if t.dim() <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {t.shape} with {t.dim()} dims")
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _channels_mask(t: Tensor, dim: int, keep: Tensor) -> Tensor:
    """A mask shaped as t: 1 in the slices along dim where the bool vector keep is True, else 0."""
    shape = [1] * t.dim()
    shape[dim] = -1
    return keep.to(t.dtype).reshape(shape).expand(t.shape).contiguous()


# ---- the methods ---------------------------------------------------------------------------

class BasePruningMethod(ABC):
    """A way of pruning one tensor of a module. It is the module's forward pre-hook that
    recomputes `name` = `name_orig` * `name_mask` before each call."""

    PRUNING_TYPE: str  # "unstructured", "structured" (along self.dim) or "global"
    _tensor_name: Optional[str] = None

    def __call__(self, module: Any, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for t (1 keep, 0 prune), given the mask of earlier pruning (default_mask)."""

    def apply_mask(self, module: Any) -> Tensor:
        """The pruned tensor: module's `name_orig` times its `name_mask`."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Any, name: str, *args: Any, importance_scores: Optional[Tensor] = None,
              **kwargs: Any) -> "BasePruningMethod":
        """Prunes module's tensor `name` with cls(*args, **kwargs), ranking its entries by
        importance_scores (the tensor itself by default); returns the method now hooked (a
        PruningContainer when the tensor was pruned before)."""
        earlier = [(k, h) for k, h in module._forward_pre_hooks.items()
                   if isinstance(h, BasePruningMethod) and h._tensor_name == name]
        if len(earlier) > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                                 f"{module}. Use a PruningContainer.")
        old_method = earlier[0][1] if earlier else None
        for k, _ in earlier:
            del module._forward_pre_hooks[k]
        method = cls(*args, **kwargs)  # its checks run before the module is changed
        method._tensor_name = name
        orig = getattr(module, name)
        if importance_scores is not None and importance_scores.shape != orig.shape:
            raise AssertionError(f"importance_scores should have the same shape as parameter {name} of {module}")
        if old_method is None:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = minitorch.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        if isinstance(old_method, PruningContainer):
            old_method.add_pruning_method(method)
            method = old_method
        elif old_method is not None:
            method = PruningContainer(old_method, method)
        try:
            scores = importance_scores if importance_scores is not None else orig
            module.register_buffer(name + "_mask", method.compute_mask(scores, default_mask=default_mask))
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if old_method is None:  # the module as it was: the parameter back under its name
                original = getattr(module, name + "_orig")
                module._buffers.pop(name + "_mask", None)
                del module._parameters[name + "_orig"]
                module.__dict__.pop(name, None)
                module.register_parameter(name, original)
            raise
        return method

    def prune(self, t: Tensor, default_mask: Optional[Tensor] = None,
              importance_scores: Optional[Tensor] = None) -> Tensor:
        """t with this method's mask applied (t itself is not changed)."""
        if importance_scores is not None and importance_scores.shape != t.shape:
            raise AssertionError("importance_scores should have the same shape as tensor t")
        scores = importance_scores if importance_scores is not None else t
        mask = self.compute_mask(scores, default_mask=default_mask if default_mask is not None
                                 else minitorch.ones_like(t))
        return t * mask

    def remove(self, module: Any) -> None:
        """Makes the pruned tensor the parameter `name` again and drops `name_orig`, `name_mask`."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        pruned = self.apply_mask(module)
        module.__dict__.pop(self._tensor_name, None)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = pruned.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """The methods applied to one tensor, in order: the last one prunes what the ones before left."""

    def __init__(self, *args: Any) -> None:
        self._pruning_methods: Tuple[BasePruningMethod, ...] = ()
        methods = args[0] if len(args) == 1 and isinstance(args[0], tuple) else args
        if len(args) == 1 and not isinstance(args[0], tuple):
            self._tensor_name = args[0]._tensor_name
        elif methods:
            self._tensor_name = methods[0]._tensor_name
        for method in methods:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """default_mask with the last method's mask of the part still kept written into it: the
        unpruned entries (unstructured), the unpruned slices along its dim (structured) or all of
        t (global)."""
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            kept = mask == 1
            mask[kept] = method.compute_mask(t[kept], default_mask=mask[kept]).to(dtype=mask.dtype)
            return mask
        if kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of type 'structured' need to have the attribute `dim` defined.")
            dim = method.dim + t.dim() if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {t.dim()}")
            others = [d for d in range(t.dim()) if d != dim]
            rows = (mask.sum(others) != 0).nonzero().reshape(-1)
            part = method.compute_mask(t.index_select(dim, rows), default_mask=mask.index_select(dim, rows))
            return mask.index_copy_(dim, rows, part.to(dtype=mask.dtype))
        if kind == "global":
            return method.compute_mask(t, default_mask=mask).to(dtype=mask.dtype)
        raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones (a way to add the _orig/_mask form)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Any, name: str) -> "BasePruningMethod":  # type: ignore[override]
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes `amount` entries of the tensor, those ranked lowest by _ranking."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: Any) -> None:
        _check_amount(amount)
        self.amount = amount

    def _ranking(self, t: Tensor) -> Tensor:
        raise NotImplementedError

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        count = _how_many(self.amount, t.numel())
        mask = default_mask.clone()
        if count != 0:
            lowest = self._ranking(t).reshape(-1).topk(count, largest=False).indices
            mask.view(-1).index_fill_(0, lowest, 0)
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes `amount` entries chosen at random."""

    def _ranking(self, t: Tensor) -> Tensor:
        # PyTorch prunes the entries of largest draw from rand_like(t); ranking by the negated
        # draw prunes the same ones, so a seeded program gets PyTorch's mask
        return -minitorch.rand_like(t)

    @classmethod
    def apply(cls, module: Any, name: str, amount: Any) -> "BasePruningMethod":  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the `amount` entries of smallest absolute value."""

    def _ranking(self, t: Tensor) -> Tensor:
        return t.abs()

    @classmethod
    def apply(cls, module: Any, name: str, amount: Any,  # type: ignore[override]
              importance_scores: Optional[Tensor] = None) -> "BasePruningMethod":
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class _Structured(BasePruningMethod):
    """Prunes `amount` slices of the tensor along dim, those _kept does not choose."""

    PRUNING_TYPE = "structured"

    def _kept(self, t: Tensor, dim: int, size: int, count: int) -> Tensor:
        """The slices to keep, a bool vector of size t.shape[dim] with size - count True."""
        raise NotImplementedError

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        count = _how_many(self.amount, size)
        if count == 0:
            return default_mask
        dim = self.dim % t.dim()
        return _channels_mask(t, dim, self._kept(t, dim, size, count)) * default_mask.to(dtype=t.dtype)


class RandomStructured(_Structured):
    """Prunes `amount` slices along dim, chosen at random."""

    def __init__(self, amount: Any, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def _kept(self, t: Tensor, dim: int, size: int, count: int) -> Tensor:
        draws = minitorch.rand(size, device=t.device)
        return draws > draws.kthvalue(count).values  # the count smallest draws are pruned

    @classmethod
    def apply(cls, module: Any, name: str, amount: Any, dim: int = -1) -> "BasePruningMethod":  # type: ignore[override]
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_Structured):
    """Prunes the `amount` slices along dim of smallest L`n` norm."""

    def __init__(self, amount: Any, n: Any, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def _kept(self, t: Tensor, dim: int, size: int, count: int) -> Tensor:
        norms = minitorch.norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        largest = norms.topk(size - count, largest=True).indices
        return minitorch.zeros(size, dtype=minitorch.bool, device=t.device).index_fill_(0, largest, True)

    @classmethod
    def apply(cls, module: Any, name: str, amount: Any, n: Any, dim: int,  # type: ignore[override]
              importance_scores: Optional[Tensor] = None) -> "BasePruningMethod":
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask of shape {tuple(default_mask.shape)} and mask of shape "
                                 f"{tuple(self.mask.shape)} differ")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, mask: Tensor) -> "BasePruningMethod":  # type: ignore[override]
        return super().apply(module, name, mask=mask)


# ---- the functions -------------------------------------------------------------------------

def identity(module: Any, name: str) -> Any:
    Identity.apply(module, name)
    return module


def random_unstructured(module: Any, name: str, amount: Any) -> Any:
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Any, name: str, amount: Any, importance_scores: Optional[Tensor] = None) -> Any:
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Any, name: str, amount: Any, dim: int) -> Any:
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Any, name: str, amount: Any, n: Any, dim: int,
                  importance_scores: Optional[Tensor] = None) -> Any:
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: Any, name: str, mask: Tensor) -> Any:
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters: Any, pruning_method: Any, importance_scores: Optional[Dict] = None,
                        **kwargs: Any) -> None:
    """Prunes the (module, name) tensors of parameters as one vector with pruning_method(**kwargs),
    an unstructured method: the entries it ranks lowest over all of them go."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    scores = importance_scores if importance_scores is not None else {}
    if not isinstance(scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    ranked = parameters_to_vector([scores.get((m, n), getattr(m, n)) for m, n in parameters])
    earlier = parameters_to_vector([getattr(m, n + "_mask", minitorch.ones_like(getattr(m, n)))
                                    for m, n in parameters])
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container = PruningContainer()
    container._tensor_name = "temp"
    container.add_pruning_method(method)
    whole = container.compute_mask(ranked, earlier)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=whole[start:start + param.numel()].view_as(param))
        start += param.numel()


def remove(module: Any, name: str) -> Any:
    """Makes module's pruned `name` a parameter again (the pruned values) and drops its hook."""
    if not _undo_pre_hook(module, BasePruningMethod, lambda hook: hook._tensor_name, name):
        raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")
    return module


def is_pruned(module: Any) -> bool:
    """Whether module or a module inside it has a pruning hook."""
    return any(isinstance(h, BasePruningMethod) for _, sub in module.named_modules()
               for h in sub._forward_pre_hooks.values())
