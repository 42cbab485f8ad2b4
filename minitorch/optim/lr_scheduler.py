"""optim.lr_scheduler: learning rates that change with the epoch, as torch.optim.lr_scheduler.

A scheduler rewrites the "lr" of each of its optimizer's parameter groups at every step(). Most
update recursively from the group's current lr, as PyTorch's do (so other changes of the lr
compose); step(epoch) uses the closed form where one exists. Plain Python arithmetic on numbers
(an lr held as a tensor is filled in place): no tensors computed. The schedulers that drive
others or keep their own state (SequentialLR, ChainedScheduler, ReduceLROnPlateau, OneCycleLR)
are in _lr_scheduler_composite.py and exported from here.
"""
from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from functools import partial, wraps
from typing import Any, Callable, Dict, Iterable, List, Optional, Union
from weakref import ref

import minitorch

from .optimizer import Optimizer, _to_scalar

__all__ = [
    "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
    "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau",
    "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR", "LRScheduler", "CyclicLR",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


def _param_groups_val_list(optimizer: Optimizer, key: str) -> List[Any]:
    """Each group's value of key (a tensor value copied)."""
    return [
        g[key].clone() if isinstance(g[key], minitorch.Tensor) else g[key] for g in optimizer.param_groups
    ]


def _update_param_group_val(param_group: Dict[str, Any], key: str, val: Any) -> None:
    """Sets a group's key; an lr held as a tensor is filled in place."""
    if isinstance(param_group[key], minitorch.Tensor):
        param_group[key].fill_(_to_scalar(val))
    else:
        param_group[key] = val


def _format_param(name: str, optimizer: Optimizer, param: Any) -> List[Any]:
    """One value per parameter group: a list of them, or one value repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has {len(optimizer.param_groups)}."
            )
    else:
        param = [param] * len(optimizer.param_groups)
    return [p.clone() if isinstance(p, minitorch.Tensor) else p for p in param]


class LRScheduler:
    """Base class of the schedulers: subclasses give get_lr() (and _get_closed_form_lr())."""

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                initial_lr = group["lr"]
                if isinstance(initial_lr, minitorch.Tensor):
                    initial_lr = initial_lr.clone()
                group.setdefault("initial_lr", initial_lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler "
                        "with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't properly loaded "
                        "the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not recommended)"
                    )
        self.base_lrs: List[Any] = _param_groups_val_list(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._mark_optimizer_steps()
        self._initial_step()

    def _mark_optimizer_steps(self) -> None:
        """Wraps optimizer.step so that step() can warn when it runs before the optimizer's."""
        opt = self.optimizer
        if hasattr(opt.step, "_wrapped_by_lr_sched"):
            return
        opt_ref = ref(opt)
        func = opt.step.__func__

        @wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            o = opt_ref()
            o._opt_called = True
            return func.__get__(o, o.__class__)(*args, **kwargs)

        wrapper._wrapped_by_lr_sched = True
        opt.step = wrapper

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> Dict[str, Any]:
        """Every attribute but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> List[float]:
        """The learning rates the last step() set, one per parameter group."""
        return self._last_lr

    def get_lr(self) -> List[float]:
        raise NotImplementedError

    def step(self, epoch: Optional[int] = None) -> None:
        """Moves to the next epoch (or to `epoch`, deprecated) and sets the groups' lrs."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                    "initialization. Please, make sure to call `optimizer.step()` before "
                    "`lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                    "will result in PyTorch skipping the first value of the learning rate schedule. "
                    "See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: Optional[int] = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        self._set_lrs(values)

    def _set_lrs(self, values: List[Any]) -> None:
        for group, lr in zip(self.optimizer.param_groups, values):
            _update_param_group_val(group, "lr", lr)
        self._last_lr: List[Any] = _param_groups_val_list(self.optimizer, "lr")

    def _warn_if_called_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    def _group_lrs(self) -> List[Any]:
        return _param_groups_val_list(self.optimizer, "lr")

    def _scaled(self, factor: float) -> List[Any]:
        """Each group's current lr times factor."""
        return [group["lr"] * factor for group in self.optimizer.param_groups]


_LRScheduler = LRScheduler  # PyTorch's older name


class _LambdaScheduler(LRScheduler):
    """LambdaLR and MultiplicativeLR: one function of the epoch per group. In the state dict a
    function is None, or the __dict__ of a callable object (as PyTorch keeps them)."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int) -> None:
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> Dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy() for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas
        for idx, fn in enumerate(lr_lambdas):
            if fn is not None:
                self.lr_lambdas[idx].__dict__.update(fn)


class LambdaLR(_LambdaScheduler):
    """lr = initial lr * lr_lambda(epoch)."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Union[Callable[[int], float], List[Callable]],
                 last_epoch: int = -1) -> None:
        super().__init__(optimizer, lr_lambda, last_epoch)

    def get_lr(self) -> List[float]:
        self._warn_if_called_outside_step()
        return [base_lr * lmbda(self.last_epoch) for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """lr = previous lr * lr_lambda(epoch), from the first step on."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Union[Callable[[int], float], List[Callable]],
                 last_epoch: int = -1) -> None:
        lambdas = lr_lambda if isinstance(lr_lambda, (list, tuple)) else [lr_lambda]
        for fn in lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, lr_lambda, last_epoch)

    def get_lr(self) -> List[float]:
        self._warn_if_called_outside_step()
        if self._is_initial:
            return self._group_lrs()
        return [g["lr"] * lmbda(self.last_epoch) for lmbda, g in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """Decays each group's learning rate by gamma every step_size epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        self._warn_if_called_outside_step()
        if (self.last_epoch == 0) or (self.last_epoch % self.step_size != 0):
            return self._group_lrs()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self) -> List[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Decays each group's learning rate by gamma at each milestone (twice at a repeated one)."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        self._warn_if_called_outside_step()
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        return self._scaled(self.gamma ** self.milestones[self.last_epoch])

    def _get_closed_form_lr(self) -> List[float]:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr * factor until epoch total_iters, then lr."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        self._warn_if_called_outside_step()
        if self.last_epoch == 0:
            return self._scaled(self.factor)
        if self.last_epoch != self.total_iters:
            return self._group_lrs()
        return self._scaled(1.0 / self.factor)

    def _get_closed_form_lr(self) -> List[float]:
        return [
            base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
            for base_lr in self.base_lrs
        ]


class LinearLR(LRScheduler):
    """lr times a factor going linearly from start_factor to end_factor over total_iters epochs."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        self._warn_if_called_outside_step()
        if self.last_epoch == 0:
            return self._scaled(self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._group_lrs()
        delta = self.end_factor - self.start_factor
        return self._scaled(1.0 + delta / (self.total_iters * self.start_factor + (self.last_epoch - 1) * delta))

    def _get_closed_form_lr(self) -> List[float]:
        return [
            base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                       * min(self.total_iters, self.last_epoch) / self.total_iters)
            for base_lr in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """Decays each group's learning rate by gamma every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        self._warn_if_called_outside_step()
        if self._is_initial:
            return self._group_lrs()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self) -> List[float]:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr * (1 - epoch / total_iters) ** power, reached recursively; constant after total_iters."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        self._warn_if_called_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._group_lrs()
        decay_factor = (
            (1.0 - self.last_epoch / self.total_iters) / (1.0 - (self.last_epoch - 1) / self.total_iters)
        ) ** self.power
        return self._scaled(decay_factor)

    def _get_closed_form_lr(self) -> List[float]:
        return [
            base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
            for base_lr in self.base_lrs
        ]


class CosineAnnealingLR(LRScheduler):
    """eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2, reached recursively
    from the current lr at each step, as PyTorch's."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        self._warn_if_called_outside_step()
        groups = self.optimizer.param_groups
        if self._is_initial:
            return self._group_lrs()
        if self._step_count == 1 and self.last_epoch > 0:
            # resumed at last_epoch: the closed form
            return self._get_closed_form_lr()
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            # the bottom of the cosine: the recursion's ratio would divide by zero
            return [
                group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                for base_lr, group in zip(self.base_lrs, groups)
            ]
        return [
            (1 + math.cos(math.pi * self.last_epoch / self.T_max))
            / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
            * (group["lr"] - self.eta_min)
            + self.eta_min
            for group in groups
        ]

    def _get_closed_form_lr(self) -> List[float]:
        return [
            self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base_lr in self.base_lrs
        ]


class CosineAnnealingWarmRestarts(LRScheduler):
    """The cosine of CosineAnnealingLR over T_cur of T_i epochs, restarting at base_lr when T_cur
    reaches T_i (the first period T_0, each next T_mult times longer). step(epoch) may take a
    fractional epoch."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        self._warn_if_called_outside_step()
        return [
            self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
            for base_lr in self.base_lrs
        ]

    def step(self, epoch: Optional[float] = None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** (n)
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        self._set_lrs(values)



def _constant_amplitude(cycle: float) -> float:
    return 1.0


def _halving_amplitude(cycle: float) -> float:
    return 1 / (2.0 ** (cycle - 1))


# mode -> (amplitude as a function of its argument, what the argument is); exp_range's depends on gamma
_CYCLIC_MODES = {"triangular": (_constant_amplitude, "cycle"), "triangular2": (_halving_amplitude, "cycle"),
                 "exp_range": (None, "iterations")}


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith, arXiv:1506.01186), stepped once per batch: each group's lr
    climbs from base_lr to max_lr over step_size_up steps and falls back over step_size_down, the
    climb scaled by the mode's amplitude (triangular: 1, triangular2: halved each cycle,
    exp_range: gamma**iteration) or by scale_fn of the cycle or the iteration (scale_mode). With
    cycle_momentum, the momentum (SGD's, or beta1 of an optimizer with betas) moves the other way
    between max_momentum and base_momentum."""

    def __init__(self, optimizer: Optimizer, base_lr: Any, max_lr: Any, step_size_up: int = 2000,
                 step_size_down: Optional[int] = None, mode: str = "triangular", gamma: float = 1.0,
                 scale_fn: Optional[Callable[[float], float]] = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum: float = 0.8, max_momentum: float = 0.9,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _update_param_group_val(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in _CYCLIC_MODES and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    self._set_momentum(group, top)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        """The built-in amplitude of self.mode (scale_fn, when given, replaces it)."""
        if self._scale_fn_custom is not None:
            return
        fn, self.scale_mode = _CYCLIC_MODES[self.mode]
        self._scale_fn_ref = fn if fn is not None else partial(pow, self.gamma)

    def scale_fn(self, x: float) -> float:
        """The amplitude at x (a cycle number or an iteration, as scale_mode says)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    def _set_momentum(self, group: Dict[str, Any], value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def get_lr(self) -> List[Any]:
        self._warn_if_called_outside_step()
        # cycle counts from 1; x is the position in it, 0 to 1; rising to step_ratio, then falling
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        height = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        amplitude = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [low + (high - low) * height * amplitude for low, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for low, high, group in zip(self.base_momentums, self.max_momentums, self.optimizer.param_groups):
                self._set_momentum(group, high - (high - low) * height * amplitude)
        return lrs

    def state_dict(self) -> Dict[str, Any]:
        """As LRScheduler's, less the built-in amplitude (rebuilt on load) and a scale_fn that is a
        plain function (a callable object's attributes are kept)."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


from ._lr_scheduler_composite import ChainedScheduler, OneCycleLR, ReduceLROnPlateau, SequentialLR  # noqa: E402

# PyTorch defines these four in this module; they live in _lr_scheduler_composite.py for this file's
# length, and name this module as theirs, as code compares it (d2l's train steps a scheduler whose
# __module__ == lr_scheduler.__name__ and calls any other one with the epoch).
for _cls in (ChainedScheduler, OneCycleLR, ReduceLROnPlateau, SequentialLR):
    _cls.__module__ = __name__
