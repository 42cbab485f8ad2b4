"""The layers of minitorch.nn, laid out as torch/nn/modules/ is."""
from minitorch.nn.modules.module import Module
from minitorch.nn.modules.container import ModuleDict, ModuleList, Sequential
from minitorch.nn.modules.flatten import Flatten, Unflatten
from minitorch.nn.modules.linear import Identity, Linear
from minitorch.nn.modules.activation import GELU, ReLU, Sigmoid, SiLU, Tanh
from minitorch.nn.modules.activation import LogSoftmax, Softmax
from minitorch.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from minitorch.nn.modules.dropout import Dropout
from minitorch.nn.modules.loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from minitorch.nn.modules.normalization import LayerNorm
from minitorch.nn.modules.sparse import Embedding

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "Linear", "Identity", "ReLU", "Flatten", "Unflatten", "GELU", "SiLU", "Tanh", "Sigmoid"]
__all__ += ["Softmax", "LogSoftmax", "Dropout", "LayerNorm", "BatchNorm1d", "BatchNorm2d", "Embedding"]
__all__ += ["MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss"]
from minitorch.nn.modules.conv import Conv2d
from minitorch.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d

__all__ += ["Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]
