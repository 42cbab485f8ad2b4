"""nn.utils.convert_conv2d_weight_memory_format and its 3-d twin, as PyTorch's: the weights of
the convolutions in a module tree re-laid in a memory format (channels_last for cuDNN's NHWC
kernels), values unchanged, the parameters themselves kept (their .data replaced)."""
from __future__ import annotations

from minitorch.nn.modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module: Module, memory_format, kinds: tuple) -> Module:
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module: Module, memory_format) -> Module:
    """module, with the weight of every Conv2d and ConvTranspose2d in it in memory_format."""
    from minitorch.nn import Conv2d, ConvTranspose2d

    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module: Module, memory_format) -> Module:
    """module, with the weight of every Conv3d and ConvTranspose3d in it in memory_format."""
    from minitorch.nn import Conv3d, ConvTranspose3d

    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
