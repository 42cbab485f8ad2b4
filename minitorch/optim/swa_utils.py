"""optim.swa_utils: Stochastic Weight Averaging and exponential moving averages of a model's
weights (torch/optim/swa_utils.py): AveragedModel, the averaging functions, update_bn and the
SWALR schedule. The averages are in-place tensor ops (lerp_, copy_) under no_grad, one call per
parameter; nothing here touches tensor elements."""
from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy
from typing import Any, Callable, Iterable, Optional, Union

import minitorch
from minitorch import Tensor
from minitorch.nn import Module
from minitorch.optim.lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """ema <- decay * ema + (1 - decay) * current, for lists of tensors, in place."""
    _check_decay(decay)

    @minitorch.no_grad()
    def ema_update(ema_param_list, current_param_list, _) -> None:
        floating = ema_param_list[0].is_floating_point()
        for p_ema, p_model in zip(ema_param_list, current_param_list):
            if floating:
                p_ema.lerp_(p_model, 1 - decay)
            else:
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """The running mean over the models averaged so far, for lists of tensors, in place."""

    @minitorch.no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        floating = averaged_param_list[0].is_floating_point()
        n = num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged
        for p_avg, p_model in zip(averaged_param_list, current_param_list):
            if floating:
                p_avg.lerp_(p_model, 1 / (n + 1))
            else:
                p_avg.add_(p_model - p_avg, alpha=1.0 / (n + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """decay * ema + (1 - decay) * current, one tensor, a new one."""
    _check_decay(decay)

    @minitorch.no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """averaged + (current - averaged) / (num_averaged + 1), one tensor, a new one."""

    @minitorch.no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters (and, with use_buffers, buffers) are an average of the
    ones update_parameters is given: SWA's mean by default, or avg_fn/multi_avg_fn (an EMA from
    get_ema_multi_avg_fn). n_averaged, a buffer, counts the updates."""

    def __init__(self, model: Module, device: Any = None, avg_fn: Optional[Callable] = None,
                 multi_avg_fn: Optional[Callable] = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", minitorch.tensor(0, dtype=minitorch.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold model's current weights into the average (the first call copies them)."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        averaged, current = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged.detach())
            current.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.avg_fn is not None:
                for p_averaged, p_model in zip(averaged, current):
                    p_averaged.copy_(self.avg_fn(p_averaged, p_model, self.n_averaged.to(p_averaged.device)))
            else:
                # grouped by dtype, as PyTorch's foreach groups: each group is one kind of tensor
                fn = self.multi_avg_fn or get_swa_multi_avg_fn()
                groups: dict = {}
                for p_averaged, p_model in zip(averaged, current):
                    pair = groups.setdefault((str(p_averaged.device), p_averaged.dtype), ([], []))
                    pair[0].append(p_averaged)
                    pair[1].append(p_model)
                for (device, _), (mine, theirs) in groups.items():
                    fn(mine, theirs, self.n_averaged.to(device))
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@minitorch.no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute every BatchNorm's running statistics with one pass over loader (momentum None:
    the plain average), in training mode; the model's mode is restored."""
    from minitorch.nn.modules.batchnorm import _BatchNorm

    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for bn_module in momenta:
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to swa_lr over anneal_epochs steps (cos or linear), then holds it."""

    def __init__(self, optimizer: Any, swa_lr: Union[float, list], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict:
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
