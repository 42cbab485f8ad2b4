"""autograd.forward_ad: dual tensors for forward-mode derivatives, as torch.autograd.forward_ad's
API (dual_level, make_dual, unpack_dual, UnpackedDualTensor, enter/exit_dual_level).

minitorch has no forward-mode engine: tangents do not travel with the ops. make_dual gives a
tensor that the reverse-mode graph records (it requires grad, as PyTorch's dual does not) and
remembers its tangent; unpack_dual(y) computes y's tangent when asked, as minitorch.func.jvp
does, by the double-vjp trick: J t = d/dv <J^T v, t>, two backward passes through the ops
between the level's duals and y (so every op there needs its double backward, as for
func.jvp). One level at a time, as PyTorch (no nesting)."""
from __future__ import annotations

import threading
from typing import Any, List, NamedTuple, Optional, Tuple

import minitorch

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]


class _State(threading.local):
    def __init__(self) -> None:
        self.level = -1  # the open level, -1 when none
        self.duals: List[Tuple[Any, Any]] = []  # (dual, tangent) made at the open level


_state = _State()


def enter_dual_level() -> int:
    """Opens a forward AD level and returns it (0: one level at a time)."""
    if _state.level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _state.level = 0
    _state.duals = []
    return _state.level


def exit_dual_level(*, level: Optional[int] = None) -> None:
    """Closes the open level: its duals lose their tangents."""
    level = _state.level if level is None else level
    if level != _state.level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    _state.level = -1
    _state.duals = []


class dual_level:
    """with dual_level(): the duals made inside carry their tangents until the block ends."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> bool:
        exit_dual_level()
        return False


def _level(level: Optional[int]) -> int:
    return _state.level if level is None else level


def make_dual(tensor: Any, tangent: Any, *, level: Optional[int] = None) -> Any:
    """tensor's values as a dual whose tangent is `tangent` (same size) at the open level."""
    if _level(level) < 0 or _level(level) != _state.level:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    # a graph node of its own: the tensor's view when it is in a graph already, else a fresh leaf
    dual = tensor.view_as(tensor) if tensor.requires_grad else tensor.detach().requires_grad_(True)
    _state.duals.append((dual, tangent.detach().to(tensor.dtype)))
    return dual


class UnpackedDualTensor(NamedTuple):
    """unpack_dual's result: the primal and its tangent (None when it has none)."""

    primal: Any
    tangent: Any


def _tangent_of(tensor: Any) -> Any:
    """J t summed over the open level's duals (None when tensor depends on none of them)."""
    if not tensor.requires_grad or not _state.duals:
        return None
    duals = [d for d, _ in _state.duals]
    with minitorch.enable_grad():
        probe = minitorch.zeros_like(tensor).requires_grad_(True)
        vjps = minitorch.autograd.grad(tensor, duals, probe, create_graph=True, allow_unused=True)
        used = [(g, t) for g, (_, t) in zip(vjps, _state.duals) if g is not None]
        if not used:
            return None
        # <J^T v, t> is linear in v: its gradient in v is J t
        (jvp,) = minitorch.autograd.grad([g for g, _ in used], [probe], [t for _, t in used], allow_unused=True)
    return minitorch.zeros_like(tensor) if jvp is None else jvp.detach()


def unpack_dual(tensor: Any, *, level: Optional[int] = None) -> UnpackedDualTensor:
    """(primal, tangent) of tensor at the open level; tangent None outside one or for a tensor that
    no dual of the level reaches."""
    if _level(level) < 0 or _level(level) != _state.level:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(tensor.detach(), _tangent_of(tensor))
