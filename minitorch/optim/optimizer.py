"""optim.Optimizer: parameter groups, per-parameter state, zero_grad and state dicts.

The base class of every optimizer, as torch.optim.Optimizer: it holds the parameters in groups
(each group a dict of the parameters and their options), the state of each parameter (momentum
buffers, moving averages, step counts, all tensors) and turns both into a state dict that
refers to parameters by index. It computes nothing: each subclass's step() gathers the
parameters that have a gradient and hands them, with their state, to one fused C call.
"""
from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import minitorch
from minitorch.utils.hooks import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook", "required"]

ParamsT = Union[Iterable[minitorch.Tensor], Iterable[Dict[str, Any]]]
StateDict = Dict[str, Any]


class _RequiredParameter:
    """The default of an option that every parameter group must give."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj: Any) -> str:
    """torch.typename: 'minitorch.FloatTensor' for a float32 tensor, else the class's name."""
    if isinstance(obj, minitorch.Tensor):
        names = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool",
                 "float16": "Half", "bfloat16": "BFloat16", "uint8": "Byte", "int8": "Char", "int16": "Short"}
        return f"minitorch.{names.get(str(obj.dtype).split('.')[-1], '')}Tensor"
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in ("builtins", None) else f"{module}.{cls.__qualname__}"


# hooks every optimizer's step runs, before its own (register_optimizer_step_*_hook)
_global_optimizer_pre_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_optimizer_post_hooks: "OrderedDict[int, Callable]" = OrderedDict()

_HOOK_TABLES = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                "_optimizer_load_state_dict_post_hooks")


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """hook(optimizer, args, kwargs) runs before the step of every optimizer; it may return
    (new_args, new_kwargs) for the step."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """hook(optimizer, args, kwargs) runs after the step of every optimizer."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _with_step_hooks(step: Callable) -> Callable:
    """step, run between the global and the optimizer's own step hooks. A step that calls its
    base class's step (itself hooked) runs the hooks once, in the outermost call."""

    @functools.wraps(step)
    def hooked(*args: Any, **kwargs: Any) -> Any:
        self = args[0]  # the hooks get the optimizer in args, as PyTorch's do
        if self.__dict__.get("_in_hooked_step", False):
            return step(*args, **kwargs)
        for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{pre_hook} must return None or a tuple of (new_args, new_kwargs), but got {result}."
                    )
                args, kwargs = result
        self._in_hooked_step = True
        try:
            out = step(*args, **kwargs)
        finally:
            self._in_hooked_step = False
        for post_hook in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    hooked._hooked_step = True  # type: ignore[attr-defined]
    return hooked


def _add_hook(table: "OrderedDict[int, Callable]", hook: Callable, prepend: bool) -> RemovableHandle:
    handle = RemovableHandle(table)
    table[handle.id] = hook
    if prepend:
        table.move_to_end(handle.id, last=False)
    return handle


def _as_real(*lists: List[minitorch.Tensor]) -> Tuple[List[minitorch.Tensor], ...]:
    """The lists with complex tensors as their real views (..., 2): PyTorch's optimizers update a
    complex parameter, its gradient and its state as pairs of reals (view_as_real), so Adam's
    second moment is per part, not |g|^2. The parameters (the first list) decide once: without a
    complex one the lists come back as they are, with no pass over them on each step."""
    if not any(p.is_complex() for p in lists[0]):
        return lists
    return tuple([minitorch.view_as_real(t) if t.is_complex() else t for t in ts] for ts in lists)


def _to_scalar(x: Any) -> float:
    """An option given as a one-element tensor (lr=minitorch.tensor(0.1)), as a Python number."""
    return x.item() if isinstance(x, minitorch.Tensor) else x


class Optimizer:
    """Base class of all optimizers.

    Args:
        params: an iterable of tensors, or of dicts ("params" and per-group options).
        defaults: the options of a group that does not give its own.
    """

    # the fused optimizers keep step counts on the parameters' device; the single-tensor ones
    # (Adagrad, Adadelta, Adamax, NAdam, RAdam) keep them on the CPU, as PyTorch does
    _step_on_param_device = True
    # PyTorch's error for a sparse gradient (embedding(sparse=True)), with the class's name; None
    # for the optimizers that take one (SGD, Adagrad, SparseAdam)
    _sparse_grad_error: Optional[str] = "{} does not support sparse gradients"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked_step", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params: ParamsT, defaults: Dict[str, Any]) -> None:
        self.defaults = defaults
        self._init_hook_tables()
        if isinstance(params, minitorch.Tensor):
            raise TypeError(
                "params argument given to the optimizer should be "
                "an iterable of Tensors or dicts, but got " + _typename(params)
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: List[Dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self) -> Dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_hook_tables()
        self.defaults.setdefault("differentiable", False)

    def _init_hook_tables(self) -> None:
        """The six hook tables, empty where missing (a fresh or unpickled optimizer: hooks are
        not saved with it, as in PyTorch)."""
        for name in _HOOK_TABLES:
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())

    # ---- hooks ---------------------------------------------------------------------------------

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(optimizer, args, kwargs) runs before each step(); it may return (new_args, new_kwargs)."""
        return _add_hook(self._optimizer_step_pre_hooks, hook, False)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """hook(optimizer, args, kwargs) runs after each step()."""
        return _add_hook(self._optimizer_step_post_hooks, hook, False)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """hook(optimizer) runs before state_dict() builds its dict."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """hook(optimizer, state_dict) runs on the built dict; a dict it returns replaces it."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """hook(optimizer, state_dict) runs before loading; a dict it returns is loaded instead."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """hook(optimizer) runs after load_state_dict() has loaded."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def __repr__(self) -> str:
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # ---- parameter groups ----------------------------------------------------------------------

    def add_param_group(self, param_group: Dict[str, Any]) -> None:
        """Adds a group of parameters, with its own options, to param_groups."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, minitorch.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)

        # named_parameters() gives (name, tensor) pairs; the names go to "param_names"
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are missing"
                )
            param_group["param_names"] = names

        for param in param_group["params"]:
            if not isinstance(param, minitorch.Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is " + _typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                getattr(param, "is_leaf", True) or getattr(param, "retains_grad", False)
            ):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}"
                )
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error; "
                "see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )

        param_set: set = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {current} to the optimizer"
                )
        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)

    # ---- gradients -----------------------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drops every parameter's grad, or with set_to_none=False zeroes it in place."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if getattr(grad, "grad_fn", None) is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    def step(self, closure: Optional[Callable[[], float]] = None) -> Optional[float]:
        """Performs one optimization step (updates the parameters)."""
        raise NotImplementedError

    def _closure_loss(self, closure: Optional[Callable[[], float]]) -> Optional[float]:
        if closure is None:
            return None
        with minitorch.enable_grad():
            return closure()

    def _groups_with_grads(self) -> Iterator[Tuple[Dict[str, Any], List[minitorch.Tensor]]]:
        """Each group with its parameters that have a gradient (the only ones a step updates),
        for the groups that have any; a group with parameters on several devices comes once per
        device (each step is one op, on one device, as PyTorch groups its fused steps)."""
        for group in self.param_groups:
            by_device: Dict[Any, List[minitorch.Tensor]] = {}
            for p in group["params"]:
                grad = p.grad
                if grad is not None:
                    if self._sparse_grad_error and grad.is_sparse:
                        raise RuntimeError(self._sparse_grad_error.format(type(self).__name__))
                    by_device.setdefault(p.device, []).append(p)
            for params in by_device.values():
                yield group, params

    def _group_defaults(self, **options: Any) -> None:
        """Options that state dicts of older versions lack get their defaults."""
        for group in self.param_groups:
            for name, value in options.items():
                group.setdefault(name, value)

    def _steps_as_tensors(self) -> None:
        """Step counts saved as numbers (older PyTorch state dicts) become float32 tensors."""
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], minitorch.Tensor):
                    device = p.device if self._step_on_param_device else "cpu"
                    p_state["step"] = minitorch.tensor(float(p_state["step"]), device=device)

    # ---- state dicts ---------------------------------------------------------------------------

    def state_dict(self) -> StateDict:
        """{'state': {index: per-parameter state}, 'param_groups': [options + 'params': [index]]}.

        Parameters are referred to by their index in the order of the groups; the state's tensors
        are the optimizer's own (not copies), as in PyTorch."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        param_mappings: Dict[int, int] = {}
        start_index = 0

        def pack_group(group: Dict[str, Any]) -> Dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update(
                {id(p): i for i, p in enumerate(group["params"], start_index) if id(p) not in param_mappings}
            )
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (param_mappings[id(k)] if isinstance(k, minitorch.Tensor) else k): v
            for k, v in self.state.items()
        }
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Loads the state and options of a state_dict() of an optimizer of the same parameters.

        State tensors are converted to their parameter's dtype and device (the step counts to its
        device only); like PyTorch's, tensors that need no conversion are used, not copied."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group "
                "that doesn't match the size of optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )

        def cast(param: minitorch.Tensor, value: Any, key: Any = None) -> Any:
            if isinstance(value, minitorch.Tensor):
                if key == "step":  # on the parameter's device, as for PyTorch's fused (else kept)
                    return value.to(device=param.device) if self._step_on_param_device else value
                if param.is_floating_point():
                    return value.to(dtype=param.dtype, device=param.device)
                return value.to(device=param.device)
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v

        def update_group(group: Dict[str, Any], new_group: Dict[str, Any]) -> Dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)


class _SingleTensorOptimizer(Optimizer):
    """The optimizers written with tensor ops, as PyTorch's single-tensor loops: a subclass gives
    _init_state(state, param, group) and _update(group, param, grad, state, step), and
    _old_defaults, the options that state dicts of older versions lack. Their step counts stay
    float32 CPU tensors, as PyTorch keeps them for non-fused optimizers."""

    _step_on_param_device = False
    _old_defaults: Dict[str, Any] = {}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        super().__setstate__(state)
        self._group_defaults(**self._old_defaults)
        self._steps_as_tensors()

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Optional[Any]:
        """Performs a single optimization step."""
        return self._single_tensor_step(closure)

    def _single_tensor_step(self, closure: Optional[Callable[[], Any]]) -> Optional[Any]:
        """step() of the optimizers written with tensor ops, as PyTorch's single-tensor loops: for
        each parameter with a gradient, its state made on first use (_init_state), the gradient
        negated under maximize, the step count advanced, then _update(group, param, grad, state,
        step), all under no_grad."""
        loss = self._closure_loss(closure)
        with minitorch.no_grad():
            for group, params in self._groups_with_grads():
                for param in params:
                    state = self.state[param]
                    if len(state) == 0:
                        self._init_state(state, param, group)
                    grad = -param.grad if group["maximize"] else param.grad
                    state["step"] += 1
                    self._update(group, param, grad, state, state["step"].item())
        return loss


def _check_supported(differentiable: bool, capturable: bool = False) -> None:
    """Options PyTorch has that minitorch's fused C updates do not: a step autograd records,
    and CUDA-graph capture."""
    if differentiable:
        raise NotImplementedError("minitorch optimizers do not support differentiable=True")
    if capturable:
        raise NotImplementedError("minitorch optimizers do not support capturable=True")


def _check_options(lr: Any, *checks: Tuple[str, Any]) -> None:
    """PyTorch's argument checks, in the optimizer's order: lr (a number or a one-element tensor)
    and each (name, value) non-negative, with 'betas' each in [0, 1) and 'rho' in [0, 1]."""
    if isinstance(lr, minitorch.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    for name, value in checks:
        if name == "betas":
            for i, beta in enumerate(value):
                if not 0.0 <= beta < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        elif name == "rho" and not 0.0 <= value <= 1.0:
            raise ValueError(f"Invalid rho value: {value}")
        elif not 0.0 <= value:
            raise ValueError(f"Invalid {name} value: {value}")


def _lr_of(group: Dict[str, Any]) -> Any:
    """A group's lr as PyTorch's single-tensor optimizers use it (torch.optim's _to_scalar): a
    number, or a tensor lr as a 0-dim tensor, so that the step sizes are computed in its dtype."""
    lr = group["lr"]
    return lr.squeeze() if isinstance(lr, minitorch.Tensor) and lr.dim() != 0 else lr


def _scalar_state(value: float) -> minitorch.Tensor:
    """A step count (or NAdam's mu_product) as PyTorch's single-tensor optimizers keep it: a
    float32 tensor on the CPU."""
    return minitorch.tensor(float(value), dtype=minitorch.float32)


# ---- the helpers of torch.optim.optimizer that optimizers written after PyTorch's import ----
# (minitorch's own optimizers step through one fused C call and use none of them)

from minitorch.utils._foreach_utils import (  # noqa: E402
    Indices, TensorListList, _foreach_supported_types, _get_foreach_kernels_supported_devices,
    _get_fused_kernels_supported_devices, _group_tensors_by_device_and_dtype,
)

Optimizer._group_tensors_by_device_and_dtype = staticmethod(_group_tensors_by_device_and_dtype)


def _use_grad_for_differentiable(func: Callable) -> Callable:
    """Wraps an optimizer's step so that it runs with grad mode on only where the optimizer was
    made with differentiable=True."""

    @functools.wraps(func)
    def _use_grad(self, *args: Any, **kwargs: Any) -> Any:
        with minitorch.set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            return func(self, *args, **kwargs)

    return _use_grad


def _get_value(x: Any) -> Any:
    """A one-element tensor's number, anything else as it is."""
    return x.item() if isinstance(x, minitorch.Tensor) else x


def _stack_if_compiling(x: Any) -> Any:
    """x: nothing is compiled here."""
    return x


def _disable_dynamo_if_unsupported(single_tensor_fn: Optional[Callable] = None) -> Callable:
    """A decorator that leaves its function as it is (there is no dynamo to keep out)."""
    return lambda func: func


def _get_scalar_dtype(is_fused: Optional[bool] = None) -> minitorch.dtype:
    """The dtype of an optimizer's scalar state (step): float64 under a float64 default dtype."""
    return minitorch.float64 if minitorch.get_default_dtype() == minitorch.float64 else minitorch.float32


def _get_capturable_supported_devices(supports_xla: bool = True) -> List[str]:
    """The device types on which capturable=True steps can run (as PyTorch lists them)."""
    return ["cuda", "xpu", "hpu", "privateuseone"] + (["xla"] if supports_xla else [])


def _default_to_fused_or_foreach(params: List[minitorch.Tensor], differentiable: bool,
                                 use_fused: bool = False) -> Tuple[bool, bool]:
    """(fused, foreach) as PyTorch's optimizers pick them when the user gave neither: nothing for
    a differentiable step; fused where asked for and every parameter is a float tensor on a device
    with fused kernels; else foreach where every parameter is on a device with foreach kernels
    (CUDA: the CPU loops over its tensors either way)."""
    if differentiable:
        return False, False
    fused_devices = _get_fused_kernels_supported_devices()
    foreach_devices = _get_foreach_kernels_supported_devices()
    fused = use_fused and all(
        p is None or (type(p) in _foreach_supported_types and p.device.type in fused_devices
                      and p.is_floating_point()) for p in params)
    foreach = not fused and all(
        p is None or (type(p) in _foreach_supported_types and p.device.type in foreach_devices) for p in params)
    return fused, foreach


def _view_as_real(params: List[minitorch.Tensor], *state_and_grads: List[minitorch.Tensor]) -> None:
    """Replaces, in the lists, each complex parameter and its state and gradient entries by their
    real views (..., 2)."""
    for k, p in enumerate(params):
        if p.is_complex():
            params[k] = minitorch.view_as_real(p)
            for s in state_and_grads:
                s[k] = minitorch.view_as_real(s[k])


_params_doc = """params (iterable): iterable of parameters or named_parameters to optimize
            or iterable of dicts defining parameter groups. When using named_parameters,
            all parameters in all groups should be named"""
_foreach_doc = """foreach (bool, optional): whether the foreach implementation is used (a step over
            lists of tensors); None picks it where it is faster (default: None)"""
_fused_doc = """fused (bool, optional): whether the fused implementation is used (default: None)"""
_capturable_doc = """capturable (bool, optional): whether this instance is safe to capture in a graph
            (default: False)"""
_differentiable_doc = """differentiable (bool, optional): whether autograd should occur through the
            optimizer step in training (default: False)"""
_maximize_doc = """maximize (bool, optional): maximize the objective with respect to the params,
            instead of minimizing (default: False)"""
