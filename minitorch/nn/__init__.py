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
from minitorch.nn.modules import (
    AdaptiveAvgPool1d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool1d, Conv1d, ConvTranspose1d, ConvTranspose2d,
    Fold, MaxPool1d, PixelShuffle, PixelUnshuffle, Unfold,
)

__all__ += ["Conv1d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "AvgPool1d", "AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Fold", "Unfold", "PixelShuffle", "PixelUnshuffle"]
from minitorch.nn.modules import (
    CELU, ELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, Mish, PReLU,
    ReLU6, Softplus, Softshrink, Softsign, Tanhshrink, Threshold,
)
from minitorch.nn.modules import (
    CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, MarginRankingLoss,
    MultiLabelSoftMarginLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss,
)
from minitorch.nn.modules import (
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,
    ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
    ZeroPad3d,
)
from minitorch.nn.modules import CosineSimilarity, PairwiseDistance
from minitorch.nn import utils

__all__ += ["SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "KLDivLoss", "MarginRankingLoss", "CosineEmbeddingLoss"]
__all__ += ["HingeEmbeddingLoss", "PoissonNLLLoss", "GaussianNLLLoss", "TripletMarginLoss", "MultiLabelSoftMarginLoss"]
__all__ += ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d"]
__all__ += ["ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d"]
__all__ += ["ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "CosineSimilarity", "PairwiseDistance"]

__all__ += ["Threshold", "Hardtanh", "ReLU6", "Hardsigmoid", "Hardswish", "Mish", "SELU", "ELU", "CELU"]
__all__ += ["LeakyReLU", "GLU", "Hardshrink", "Softshrink", "Softplus", "PReLU", "LogSigmoid", "Softsign"]
__all__ += ["Tanhshrink"]

__all__ += ["utils"]
from minitorch.nn.modules import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase

__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
from minitorch.nn.modules import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LocalResponseNorm

__all__ += ["GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm"]
from minitorch.nn.modules import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ += ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
from minitorch.nn.modules import EmbeddingBag

__all__ += ["EmbeddingBag"]
from minitorch.nn.modules import MultiheadAttention
from minitorch.nn.modules.transformer import (
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)

__all__ += ["MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder"]
__all__ += ["TransformerEncoderLayer", "TransformerDecoderLayer"]
from minitorch.nn.modules import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout

__all__ += ["AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]
from minitorch.nn.modules import BatchNorm3d, Bilinear, ParameterDict, ParameterList, RMSNorm, Softmax2d, Softmin
from minitorch.nn.parameter import Buffer

__all__ += ["ParameterList", "ParameterDict", "Softmin", "Softmax2d", "RMSNorm", "Bilinear", "Buffer", "BatchNorm3d"]
from minitorch.nn.modules import LPPool1d, LPPool2d, TripletMarginWithDistanceLoss

__all__ += ["LPPool1d", "LPPool2d", "TripletMarginWithDistanceLoss"]
from minitorch.nn.modules import Conv3d

__all__ += ["Conv3d"]
from minitorch.nn.modules import (
    LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d, LazyConv3d, LazyLinear,
)
from minitorch.nn.parameter import UninitializedBuffer, UninitializedParameter

__all__ += ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyBatchNorm1d", "LazyBatchNorm2d"]
__all__ += ["LazyBatchNorm3d", "UninitializedParameter", "UninitializedBuffer"]
