"""Which quantized module replaces which float module (torch.ao.quantization.quantization_mappings)."""
from __future__ import annotations

import copy
from typing import Any, Dict

from minitorch import nn
from minitorch.ao.nn import intrinsic as nni
from minitorch.ao.nn import qat as nnqat
from minitorch.ao.nn import quantized as nnq
from minitorch.ao.nn.intrinsic import qat as nniqat
from minitorch.ao.nn.intrinsic import quantized as nniq
from minitorch.ao.nn.quantized import dynamic as nnqd

from .stubs import DeQuantStub, QuantStub

DEFAULT_STATIC_QUANT_MODULE_MAPPINGS: Dict[Any, Any] = {
    QuantStub: nnq.Quantize,
    DeQuantStub: nnq.DeQuantize,
    nn.Linear: nnq.Linear,
    nn.modules.linear.NonDynamicallyQuantizableLinear: nnq.Linear,
    nnqat.Linear: nnq.Linear,
    nn.Conv2d: nnq.Conv2d,
    nn.Dropout: nnq.Dropout,
    nn.ReLU6: nnq.ReLU6,
    nn.BatchNorm2d: nnq.BatchNorm2d,
    nni.BNReLU2d: nniq.BNReLU2d,
    nn.Hardswish: nnq.Hardswish,
    nn.LeakyReLU: nnq.LeakyReLU,
    nn.ELU: nnq.ELU,
    nnq.FloatFunctional: nnq.QFunctional,
    nni.ConvReLU2d: nniq.ConvReLU2d,
    nni.LinearReLU: nniq.LinearReLU,
    nnqat.Conv2d: nnq.Conv2d,
    nniqat.ConvBn2d: nnq.Conv2d,
    nniqat.ConvBnReLU2d: nniq.ConvReLU2d,
    nniqat.ConvReLU2d: nniq.ConvReLU2d,
    nniqat.LinearReLU: nniq.LinearReLU,
}

DEFAULT_QAT_MODULE_MAPPINGS: Dict[Any, Any] = {
    nn.Linear: nnqat.Linear,
    nn.Conv2d: nnqat.Conv2d,
    nni.ConvBn2d: nniqat.ConvBn2d,
    nni.ConvBnReLU2d: nniqat.ConvBnReLU2d,
    nni.ConvReLU2d: nniqat.ConvReLU2d,
    nni.LinearReLU: nniqat.LinearReLU,
}

DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS: Dict[Any, Any] = {
    nn.GRUCell: nnqd.GRUCell,
    nn.LSTMCell: nnqd.LSTMCell,
    nn.RNNCell: nnqd.RNNCell,
    nn.LSTM: nnqd.LSTM,
    nn.GRU: nnqd.GRU,
    nn.Linear: nnqd.Linear,
    nn.modules.linear.NonDynamicallyQuantizableLinear: nnqd.Linear,
}


def get_default_dynamic_quant_module_mappings() -> Dict[Any, Any]:
    """A copy of the float-module -> dynamic-quantized-module table quantize_dynamic uses."""
    return copy.deepcopy(DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS)


def get_default_static_quant_module_mappings() -> Dict[Any, Any]:
    """A copy of the float-module -> static-quantized-module table convert uses."""
    return copy.deepcopy(DEFAULT_STATIC_QUANT_MODULE_MAPPINGS)


def get_default_qconfig_propagation_list() -> set:
    """The module types prepare gives an output observer (those convert can swap)."""
    return (set(DEFAULT_STATIC_QUANT_MODULE_MAPPINGS) | set(DEFAULT_QAT_MODULE_MAPPINGS)
            | set(DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS))


def get_default_qat_module_mappings() -> Dict[Any, Any]:
    """A copy of the float-module -> QAT-module table prepare_qat uses."""
    return copy.deepcopy(DEFAULT_QAT_MODULE_MAPPINGS)
