"""Lazy modules (torch/nn/modules/lazy.py): LazyModuleMixin, and LazyLinear, LazyConv1d/2d/3d,
LazyConvTranspose1d/2d/3d, LazyBatchNorm1d/2d/3d, LazyInstanceNorm1d/2d/3d, whose weights are UninitializedParameters until the first forward sees
the input's size; they then become the plain layer (Linear, Conv2d, ...), initialised as it
is. A state_dict loaded before that materialises them at its shapes."""
from __future__ import annotations

import itertools
import sys
from typing import Any

import minitorch
from minitorch.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from minitorch.nn.modules.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from minitorch.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from minitorch.nn.modules.linear import Linear
from minitorch.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyBatchNorm1d",
           "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Mixed in before a layer: a forward pre-hook infers the parameters' shapes from the first
    input (initialize_parameters), then the module turns into cls_to_become."""

    cls_to_become: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(
            lambda module, *rest: module._lazy_load_hook(*rest))
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        # an uninitialised parameter is saved as it is (it has no data to detach)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if (is_lazy(param) or keep_vars) else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if (is_lazy(buf) or keep_vars) else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs) -> None:
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param) and not is_lazy(state_dict[key]):
                with minitorch.no_grad():
                    param.materialize(state_dict[key].shape)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        return any(is_lazy(p) for p in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module: Any, args: tuple, kwargs: Any = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is the last size of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Any) -> None:
        if self.has_uninitialized_params():
            with minitorch.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} is not equal to in_features from "
                    f"self.weight: {self.weight.shape[-1]}"
                )
            self.in_features = input.shape[-1]


class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels from the first input's channel dim (dim 0 of an unbatched input)."""

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Any, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            # a transposed convolution's weight is (in, out / groups, *kernel), the others' (out, in / groups, ...)
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            with minitorch.no_grad():
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input: Any) -> int:
        num_spatial_dims = len(self.kernel_size)
        num_dims_no_batch = num_spatial_dims + 1
        num_dims_batch = num_dims_no_batch + 1
        if input.dim() not in (num_dims_no_batch, num_dims_batch):
            raise RuntimeError(
                f"Expected {num_dims_no_batch}D (unbatched) or {num_dims_batch}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == num_dims_batch else input.shape[0]


def _named(cls: type, base: type, what: str) -> type:
    """cls, made by a factory below, named Lazy<base> and documented as base "whose <what>"."""
    cls.__name__ = cls.__qualname__ = "Lazy" + base.__name__
    cls.__doc__ = f"{base.__name__} whose {what}."
    return cls


def _lazy_conv(base: type) -> type:
    """The Lazy form of a convolution layer: base's arguments less in_channels."""

    class LazyConv(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                     dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                     device: Any = None, dtype: Any = None) -> None:
            # bias False, then an uninitialised one: no tensor is made only to be replaced
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)

    return _named(LazyConv, base, "in_channels is the first input's channel count")


def _lazy_conv_transpose(base: type) -> type:
    """The Lazy form of a transposed convolution layer: base's arguments less in_channels."""

    class LazyConvTranspose(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                     padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                             padding_mode)
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)

    return _named(LazyConvTranspose, base, "in_channels is the first input's channel count")


LazyConv1d = _lazy_conv(Conv1d)
LazyConv2d = _lazy_conv(Conv2d)
LazyConv3d = _lazy_conv(Conv3d)
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d)


class _LazyNormBase(LazyModuleMixin):
    """num_features from the first input's dim 1; weight, bias and the running statistics wait."""

    def __init__(self, eps: float = 1e-5, momentum: Any = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = minitorch.tensor(0, dtype=minitorch.long, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Any) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(base: type) -> type:
    """The Lazy form of a norm layer, num_features from size(1) of the first input (as PyTorch's,
    even of an unbatched input to an instance norm)."""

    class LazyNorm(_LazyNormBase, base):
        cls_to_become = base

    return _named(LazyNorm, base, "num_features is the first input's size(1)")


LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)


def _home_beside_base(cls: type) -> None:
    """A Lazy module belongs, as in PyTorch, to the module of the class it becomes (Lazy Linear to
    nn.modules.linear): its __module__ says so, and that module holds it, for pickle."""
    home = sys.modules[cls.cls_to_become.__module__]
    cls.__module__ = home.__name__
    setattr(home, cls.__name__, cls)


for _cls in (LazyLinear, LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
             LazyConvTranspose3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyInstanceNorm1d,
             LazyInstanceNorm2d, LazyInstanceNorm3d):
    _home_beside_base(_cls)
