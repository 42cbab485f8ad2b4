"""Parameters to one vector and back, as torch/nn/utils/convert_parameters.py."""
from __future__ import annotations

from typing import Iterable, Optional

import minitorch
from minitorch import Tensor
from minitorch.nn.modules.module import _typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated into one vector (a copy)."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return minitorch.cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Points each parameter's data at its slice of vec, in order (the parameters then share
    vec's memory)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer : pointer + num_param].view_as(param).data
        pointer += num_param


def _check_param_device(param: Tensor, old_param_device: Optional[int]) -> int:
    """The CUDA device index of the first parameter (-1 for the CPU); a later one elsewhere is
    PyTorch's TypeError."""
    if old_param_device is None:
        return param.get_device() if param.device.type == "cuda" else -1
    if param.device.type == "cuda":
        warn = param.get_device() != old_param_device
    else:
        warn = old_param_device != -1
    if warn:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return old_param_device
