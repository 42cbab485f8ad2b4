"""The static quantized modules that convert puts in place of QuantStub, DeQuantStub and Linear
(torch.ao.nn.quantized.Quantize, DeQuantize, Linear): quantized tensors in, quantized tensors out.

The quantized Linear computes as PyTorch's fbgemm kernel (utils._requantize).
"""
from __future__ import annotations

from typing import Any

import minitorch
from minitorch import nn

from .linear import Linear as _LinearBase
from .utils import _input_integers, _quantize_weight, _requantize

__all__ = ["Quantize", "DeQuantize", "Linear"]


class Quantize(nn.Module):
    """Quantizes its float input per tensor with a fixed scale and zero point."""

    def __init__(self, scale: float, zero_point: int, dtype: Any, factory_kwargs: Any = None) -> None:
        super().__init__()
        self.register_buffer("scale", minitorch.tensor([scale]))
        self.register_buffer("zero_point", minitorch.tensor([zero_point], dtype=minitorch.int64))
        self.dtype = dtype

    def forward(self, X: Any) -> Any:
        return minitorch.quantize_per_tensor(X, float(self.scale), int(self.zero_point), self.dtype)

    @staticmethod
    def from_float(mod: Any, use_precomputed_fake_quant: bool = False) -> "Quantize":
        if not hasattr(mod, "activation_post_process"):
            raise AssertionError("Input float module must have activation_post_process attribute")
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Quantize(float(scale.float().item()), int(zero_point.long().item()),
                        mod.activation_post_process.dtype)

    def extra_repr(self) -> str:
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(nn.Module):
    """The float values of its quantized input."""

    def forward(self, Xq: Any) -> Any:
        return Xq.dequantize()

    @staticmethod
    def from_float(mod: Any, use_precomputed_fake_quant: bool = False) -> "DeQuantize":
        return DeQuantize()


class Linear(_LinearBase):
    """A statically quantized Linear: quint8 input (per tensor), qint8 weight (per tensor or per
    channel), float bias, quint8 output with the scale and zero point its observer chose."""

    _relu = False  # a fused LinearReLU clamps its output from the zero point up

    def forward(self, x: Any) -> Any:
        packed = self._packed_params._packed_params
        K, N = packed._w.shape
        acc = _input_integers(x, "quantized::linear").reshape(-1, K) @ packed._w  # (M, N): exact integers
        out = _requantize(acc, x.q_scale(), packed._w_scale, packed.bias, self.scale, self.zero_point, self._relu, 1)
        return out._like(out._ir.reshape(*x.shape[:-1], N))

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "Linear":
        from minitorch.ao.nn.intrinsic import LinearReLU

        post = mod.activation_post_process
        if hasattr(mod, "weight_fake_quant"):  # a QAT Linear: its own weight FakeQuantize quantizes
            observer = mod.weight_fake_quant
        else:
            if type(mod) not in cls._FLOAT_MODULE:
                names = ", ".join(m.__name__ for m in cls._FLOAT_MODULE)
                raise AssertionError(f"nnq.{cls.__name__}.from_float only works for {names}, but got: {type(mod)}")
            if not hasattr(mod, "qconfig"):
                raise AssertionError("Input float module must have qconfig defined")
            if type(mod) is LinearReLU:
                mod = mod[0]
            observer = mod.qconfig.weight()
        observer(mod.weight)
        if observer.dtype is not minitorch.qint8:
            raise AssertionError("Weight observer must have dtype torch.qint8")
        qweight = _quantize_weight(mod.weight.float(), observer)
        out_scale, out_zp = post.calculate_qparams()
        qlinear = cls(mod.in_features, mod.out_features, dtype=observer.dtype)
        qlinear.set_weight_bias(qweight, mod.bias)
        qlinear.scale, qlinear.zero_point = float(out_scale), int(out_zp)
        return qlinear
