"""BatchNorm1d/2d/3d and SyncBatchNorm: normalise each channel by the batch's statistics while training
(moving running_mean and running_var towards them, by `momentum` or, with momentum=None, as a
cumulative average over num_batches_tracked), and by the running statistics in eval mode.

The running statistics are buffers, so they are saved in the state_dict; weight starts at
ones and bias at zeros, as in PyTorch.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import minitorch
from minitorch import Tensor
from minitorch.nn import functional as F
from minitorch.nn.modules.module import Module
from minitorch.nn.modules.normalization import _affine_parameters, _reset_affine

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]
    _version = 2  # 2: state dicts hold num_batches_tracked (PyTorch's numbering)

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: Optional[float] = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, num_features, affine, bias, device, dtype)
        if self.track_running_stats:
            self.register_buffer("running_mean", minitorch.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", minitorch.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", minitorch.zeros((), dtype=minitorch.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def _load_from_state_dict(
        self,
        state_dict: Any,
        prefix: str,
        local_metadata: Dict[str, Any],
        strict: bool,
        missing_keys: List[str],
        unexpected_keys: List[str],
        error_msgs: List[str],
    ) -> None:
        # A state dict of version 1 or without a version (a plain dict, an older checkpoint) may
        # lack num_batches_tracked: it is not missing then, and the module's own count stays
        # (0 for a new module), as in PyTorch.
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            kept = self.num_batches_tracked
            state_dict[key] = kept if kept is not None else minitorch.tensor(0, dtype=minitorch.int64)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def extra_repr(self) -> str:
        return (
            "{num_features}, eps={eps}, momentum={momentum}, affine={affine}, "
            "bias={use_bias}, track_running_stats={track_running_stats}".format(
                **self.__dict__, use_bias=self.bias is not None
            )
        )


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # the cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        # Batch statistics while training, and in eval mode when there are no running ones.
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        # The running statistics are passed only where they are read or updated.
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_running else None,
            self.running_var if use_running else None,
            self.weight,
            self.bias,
            bn_training,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input over N (and L) per channel C."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input over N, H and W per channel C."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) input, per channel C."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _SumOverRanks(minitorch.autograd.Function):
    """all_reduce(SUM) of a tensor over a process group, differentiable: each rank's loss depends
    on every rank's input, so the gradient is the all-reduced sum of the output gradients."""

    @staticmethod
    def forward(ctx: Any, tensor: Tensor, group: Any) -> Tensor:
        ctx.group = group
        out = tensor.clone()
        minitorch.distributed.all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Any:
        grad = grad.contiguous().clone()
        minitorch.distributed.all_reduce(grad, group=ctx.group)
        return grad, None


def _sync_batch_norm(bn: "SyncBatchNorm", input: Tensor, group: Any, factor: float) -> Tensor:
    """Batch norm over the union of every rank's batch: the per-channel count, sum and sum of
    squared deviations from the global mean are summed over the group (two all-reduces, the second
    about the mean, so the variance is not a difference of large sums)."""
    dims = [0] + list(range(2, input.dim()))
    c = input.shape[1]
    local = input.numel() // c
    shape = [1, c] + [1] * (input.dim() - 2)
    first = minitorch.cat([input.sum(dims), minitorch.full((1,), float(local), dtype=input.dtype,
                                                           device=input.device)])
    first = _SumOverRanks.apply(first, group)
    count = float(first[c].item())
    mean = first[:c] / count
    centred = input - mean.reshape(shape)
    var = _SumOverRanks.apply(centred.pow(2).sum(dims), group) / count
    if bn.running_mean is not None and bn.track_running_stats:
        with minitorch.no_grad():
            bn.running_mean.mul_(1 - factor).add_(mean.detach().to(bn.running_mean.dtype), alpha=factor)
            unbiased = var.detach() * (count / max(count - 1, 1))
            bn.running_var.mul_(1 - factor).add_(unbiased.to(bn.running_var.dtype), alpha=factor)
    out = centred * (var + bn.eps).rsqrt().reshape(shape)
    if bn.weight is not None:
        out = out * bn.weight.reshape(shape)
    if bn.bias is not None:
        out = out + bn.bias.reshape(shape)
    return out


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation of (N, C, *) input whose statistics, while training with an initialised
    minitorch.distributed, are those of every rank's batch together (its process_group, or the
    world); in one process, or without a process group, it is BatchNorm. minitorch's collectives
    run on CPU tensors too, so CPU inputs are synchronised as well (PyTorch takes only GPU ones)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any = None, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _group(self) -> Any:
        """The group to synchronise over, or None where this forward computes as BatchNorm."""
        dist = minitorch.distributed
        if not (self.training and dist.is_available() and dist.is_initialized()):
            return None
        group = self.process_group if self.process_group else dist.group.WORLD
        return group if dist.get_world_size(group) > 1 else None

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        group = self._group()
        if group is None:
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.item())
        return _sync_batch_norm(self, input, group, factor)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """module with each BatchNorm*d in it (itself included) replaced by a SyncBatchNorm that
        shares its parameters and running statistics."""
        result = module
        if isinstance(module, _BatchNorm):
            result = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                         process_group, bias=module.bias is not None)
            if module.affine:
                with minitorch.no_grad():
                    result.weight = module.weight
                    result.bias = module.bias
            result.running_mean = module.running_mean
            result.running_var = module.running_var
            result.num_batches_tracked = module.num_batches_tracked
            result.training = module.training
            if hasattr(module, "qconfig"):
                result.qconfig = module.qconfig
        for name, child in module.named_children():
            result.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return result
