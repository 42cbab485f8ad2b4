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
from minitorch.nn.modules import (
    BCELoss, BCEWithLogitsLoss, BatchNorm1d, BatchNorm2d, CrossEntropyLoss, Dropout, Embedding, L1Loss,
    LayerNorm, LogSoftmax, MSELoss, NLLLoss, Softmax,
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
__all__ += ["Softmax", "LogSoftmax", "Dropout", "LayerNorm", "BatchNorm1d", "BatchNorm2d", "Embedding"]
__all__ += ["MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss"]
from minitorch.nn.modules import AdaptiveAvgPool2d, AvgPool2d, Conv2d, MaxPool2d

__all__ += ["Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]
from minitorch.nn import utils

__all__ += ["utils"]
