"""minitorch.nn: Parameter, Module and the layers, as torch.nn.

Importing this needs minitorch.Tensor to exist already (Parameter subclasses it).
"""
from minitorch.nn.parameter import Parameter
from minitorch.nn import functional, init
from minitorch.nn.modules import Identity, Linear, Module, ModuleList, ReLU, Sequential

__all__ = [
    "Parameter",
    "Module",
    "Sequential",
    "ModuleList",
    "Linear",
    "Identity",
    "ReLU",
    "functional",
    "init",
]
