"""minitorch.nn: Parameter, Module and the layers, as torch.nn.

Importing this needs minitorch.Tensor to exist already (Parameter subclasses it).
"""
from minitorch.nn.parameter import Parameter
from minitorch.nn import functional, init
from minitorch.nn.modules import (
    GELU,
    Flatten,
    SiLU,
    Sigmoid,
    Tanh,
    Identity,
    Linear,
    Module,
    ModuleDict,
    ModuleList,
    ReLU,
    Sequential,
    Unflatten,
)

__all__ = [
    "Parameter",
    "Module",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "Flatten",
    "Unflatten",
    "GELU",
    "SiLU",
    "Tanh",
    "Sigmoid",
    "Linear",
    "Identity",
    "ReLU",
    "functional",
    "init",
]
from minitorch.nn.modules import AdaptiveAvgPool2d, AvgPool2d, Conv2d, MaxPool2d

__all__ += ["Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]
