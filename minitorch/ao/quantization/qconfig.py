"""QConfig, as torch.ao.quantization.qconfig: which observer makes the activation's and the
weight's quantization parameters, and the default configurations PyTorch names."""
from __future__ import annotations

from collections import namedtuple
from typing import Any

import minitorch
from minitorch._qtensor import per_channel_affine_float_qparams, quint8

from .observer import (HistogramObserver, PerChannelMinMaxObserver, PlaceholderObserver,
                       default_dynamic_quant_observer, default_observer, default_per_channel_weight_observer,
                       default_weight_observer)

__all__ = ["QConfig", "QConfigDynamic", "default_qconfig", "default_dynamic_qconfig", "float16_dynamic_qconfig",
           "per_channel_dynamic_qconfig", "default_per_channel_qconfig", "float_qparams_weight_only_qconfig",
           "get_default_qconfig", "default_qat_qconfig", "get_default_qat_qconfig"]


def _check_not_instance(activation: Any, weight: Any) -> None:
    if isinstance(activation, minitorch.nn.Module) or isinstance(weight, minitorch.nn.Module):
        raise ValueError("QConfig received observer instance, please pass observer class instead. "
                         "Use MyObserver.with_args(x=1) to override arguments to constructor if needed")


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """How to quantize a layer: observer factories (classes or with_args results) for its
    activation and its weight."""

    __slots__ = ()

    def __new__(cls, activation: Any, weight: Any) -> "QConfig":
        _check_not_instance(activation, weight)
        return super().__new__(cls, activation, weight)


class QConfigDynamic(namedtuple("QConfigDynamic", ["activation", "weight"])):
    """Deprecated alias of QConfig for dynamic quantization (activation defaults to identity)."""

    __slots__ = ()

    def __new__(cls, activation: Any = minitorch.nn.Identity, weight: Any = minitorch.nn.Identity) -> "QConfigDynamic":
        _check_not_instance(activation, weight)
        return super().__new__(cls, activation, weight)


default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_per_channel_qconfig = QConfig(activation=default_observer, weight=default_per_channel_weight_observer)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer, weight=default_weight_observer)
float16_dynamic_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=minitorch.float16, is_dynamic=True),
                                  weight=PlaceholderObserver.with_args(dtype=minitorch.float16))
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
float_qparams_weight_only_qconfig = QConfig(
    activation=PlaceholderObserver,
    weight=PerChannelMinMaxObserver.with_args(dtype=quint8, qscheme=per_channel_affine_float_qparams))


def get_default_qconfig(backend: str = "x86", version: int = 0) -> QConfig:
    """The static post-training QConfig of a backend: histogram-observed activations (reduce_range
    on x86/fbgemm), per-channel weights (per-tensor on qnnpack)."""
    if backend not in ("fbgemm", "x86", "qnnpack", "onednn"):
        raise AssertionError(f"backend: {backend} not supported. backend must be one of "
                             "['x86', 'fbgemm', 'qnnpack', 'onednn']")
    if backend in ("fbgemm", "x86"):
        return QConfig(activation=HistogramObserver.with_args(reduce_range=True),
                       weight=default_per_channel_weight_observer)
    if backend == "qnnpack":
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False), weight=default_weight_observer)
    return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                   weight=default_per_channel_weight_observer)


def _fake_quant_qconfigs(version: int = 0) -> tuple:
    """(the default QAT QConfig, activation(reduce_range), per-tensor weight, per-channel weight):
    FakeQuantize's (version 0) or FusedMovingAvgObsFakeQuantize's (version 1)."""
    from . import fake_quantize as fq
    from .observer import MovingAverageMinMaxObserver

    cls = fq.FusedMovingAvgObsFakeQuantize if version == 1 else fq.FakeQuantize

    def activation(reduce_range: bool) -> Any:
        return cls.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                             reduce_range=reduce_range)

    if version == 1:
        return (QConfig(activation=fq.default_fused_act_fake_quant, weight=fq.default_fused_wt_fake_quant), activation,
                fq.default_fused_wt_fake_quant, fq.default_fused_per_channel_wt_fake_quant)
    return (QConfig(activation=fq.default_fake_quant, weight=fq.default_weight_fake_quant), activation,
            fq.default_weight_fake_quant, fq.default_per_channel_weight_fake_quant)


def get_default_qat_qconfig(backend: str = "x86", version: int = 1) -> QConfig:
    """The quantization-aware training QConfig of a backend: fake quantization over moving-average
    observers (activations with reduce_range on x86/fbgemm; weights per channel but on qnnpack),
    with FusedMovingAvgObsFakeQuantize (version 1, PyTorch's default) or FakeQuantize (version 0)."""
    default, activation, weight, per_channel_weight = _fake_quant_qconfigs(version)
    if backend in ("fbgemm", "x86"):
        return QConfig(activation=activation(True), weight=per_channel_weight)
    if backend == "qnnpack":
        return QConfig(activation=activation(False), weight=weight)
    if backend == "onednn":
        return QConfig(activation=activation(False), weight=per_channel_weight)
    return default


default_qat_qconfig = _fake_quant_qconfigs()[0]
