"""The layers of minitorch.nn, laid out as torch/nn/modules/ is."""
from minitorch.nn.modules.module import Module
from minitorch.nn.modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from minitorch.nn.modules.flatten import Flatten, Unflatten
from minitorch.nn.modules.linear import Bilinear, Identity, Linear
from minitorch.nn.modules.activation import GELU, ReLU, Sigmoid, SiLU, Tanh
from minitorch.nn.modules.activation import LogSoftmax, Softmax, Softmax2d, Softmin
from minitorch.nn.modules.activation import (
    CELU, ELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, Mish, PReLU,
    ReLU6, Softplus, Softshrink, Softsign, Tanhshrink, Threshold,
)
from minitorch.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from minitorch.nn.modules.dropout import (
    AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout,
)
from minitorch.nn.modules.loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss, NLLLoss2d
from minitorch.nn.modules.loss import LinearCrossEntropyLoss
from minitorch.nn.modules.linear_cross_entropy_options import LinearCrossEntropyOptions
from minitorch.nn.modules.normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from minitorch.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from minitorch.nn.modules.sparse import Embedding, EmbeddingBag

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "Linear", "Identity", "ReLU", "Flatten", "Unflatten", "GELU", "SiLU", "Tanh", "Sigmoid"]
__all__ += ["Threshold", "Hardtanh", "ReLU6", "Hardsigmoid", "Hardswish", "Mish", "SELU", "ELU", "CELU"]
__all__ += ["LeakyReLU", "GLU", "Hardshrink", "Softshrink", "Softplus", "PReLU", "LogSigmoid", "Softsign"]
__all__ += ["Tanhshrink"]
__all__ += ["Softmax", "LogSoftmax", "Dropout", "LayerNorm", "BatchNorm1d", "BatchNorm2d", "Embedding"]
__all__ += ["MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "NLLLoss2d", "BCELoss", "BCEWithLogitsLoss",
            "LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]
from minitorch.nn.modules.conv import Conv2d
from minitorch.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d

__all__ += ["Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]
from minitorch.nn.modules.conv import Conv1d, ConvTranspose1d, ConvTranspose2d
from minitorch.nn.modules.fold import Fold, Unfold
from minitorch.nn.modules.pixelshuffle import PixelShuffle, PixelUnshuffle
from minitorch.nn.modules.channelshuffle import ChannelShuffle
from minitorch.nn.modules.pooling import (
    AdaptiveAvgPool1d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool1d, MaxPool1d,
)

__all__ += ["Conv1d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "AvgPool1d", "AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Fold", "Unfold", "PixelShuffle", "PixelUnshuffle",
            "ChannelShuffle"]
from minitorch.nn.modules.loss import (
    CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, MarginRankingLoss,
    MultiLabelSoftMarginLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss,
)
from minitorch.nn.modules.padding import (
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,
    ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
    ZeroPad3d,
)
from minitorch.nn.modules.distance import CosineSimilarity, PairwiseDistance

__all__ += ["SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "KLDivLoss", "MarginRankingLoss", "CosineEmbeddingLoss"]
__all__ += ["HingeEmbeddingLoss", "PoissonNLLLoss", "GaussianNLLLoss", "TripletMarginLoss", "MultiLabelSoftMarginLoss"]
__all__ += ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d"]
__all__ += ["ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d"]
__all__ += ["ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "CosineSimilarity", "PairwiseDistance"]
from minitorch.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase

__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
__all__ += ["GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
from minitorch.nn.modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ += ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
__all__ += ["EmbeddingBag"]
__all__ += ["LocalResponseNorm"]
from minitorch.nn.modules.activation import MultiheadAttention
from minitorch.nn.modules.linear import NonDynamicallyQuantizableLinear

_TRANSFORMER = ("Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
                "TransformerDecoderLayer")


def __getattr__(name: str):
    # transformer.py's defaults name F.relu, and nn.functional imports this package while it
    # loads: its classes load on first use (minitorch.nn imports them once functional is whole)
    if name in _TRANSFORMER:
        from minitorch.nn.modules import transformer

        return getattr(transformer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ += ["MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder"]
__all__ += ["TransformerEncoderLayer", "TransformerDecoderLayer"]
__all__ += ["AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]
__all__ += ["ParameterList", "ParameterDict", "Softmin", "Softmax2d", "RMSNorm", "Bilinear"]
__all__ += ["BatchNorm3d"]
from minitorch.nn.modules.pooling import LPPool1d, LPPool2d
from minitorch.nn.modules.loss import TripletMarginWithDistanceLoss

__all__ += ["LPPool1d", "LPPool2d", "TripletMarginWithDistanceLoss"]
from minitorch.nn.modules.conv import Conv3d

__all__ += ["Conv3d"]
from minitorch.nn.modules.lazy import (
    LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d, LazyConv3d, LazyLinear, LazyModuleMixin,
)

__all__ += ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyBatchNorm1d",
            "LazyBatchNorm2d", "LazyBatchNorm3d"]
from minitorch.nn.modules.conv import ConvTranspose3d
from minitorch.nn.modules.pooling import (
    AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
)

__all__ += ["ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "MaxUnpool1d",
            "MaxUnpool2d", "MaxUnpool3d"]
from minitorch.nn.modules.activation import RReLU
from minitorch.nn.modules.loss import MultiLabelMarginLoss, MultiMarginLoss

__all__ += ["RReLU", "MultiMarginLoss", "MultiLabelMarginLoss"]
from minitorch.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss

__all__ += ["AdaptiveLogSoftmaxWithLoss"]
from minitorch.nn.modules.loss import CTCLoss

__all__ += ["CTCLoss"]
from minitorch.nn.modules.batchnorm import SyncBatchNorm
from minitorch.nn.modules.container import Container
from minitorch.nn.modules.normalization import CrossMapLRN2d
from minitorch.nn.modules.pooling import FractionalMaxPool2d, FractionalMaxPool3d, LPPool3d
from minitorch.nn.modules.lazy import (
    LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d, LazyInstanceNorm1d, LazyInstanceNorm2d,
    LazyInstanceNorm3d,
)

__all__ += ["SyncBatchNorm", "Container", "CrossMapLRN2d", "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool3d",
            "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyInstanceNorm1d",
            "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
