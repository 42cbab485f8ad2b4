"""nn.quantized.dynamic.Linear: a Linear whose weight is stored as qint8 (or float16) and whose
input is quantized on the fly at each call (_packed.linear_dynamic)."""
from __future__ import annotations

from typing import Any

import minitorch
from minitorch._qtensor import qint8

from ..._packed import linear_dynamic, linear_dynamic_fp16
from ...modules import linear as nnq_linear  # the shared base, not the static Linear
from ...modules.utils import _quantize_weight, _RecordsVersion


class Linear(_RecordsVersion, nnq_linear.Linear):
    """A dynamically quantized Linear: float input, float output, quantized weight."""

    _version = 4

    def __init__(self, in_features: int, out_features: int, bias_: bool = True, dtype: Any = qint8) -> None:
        super().__init__(in_features, out_features, bias_, dtype=dtype)
        self.version = 4

    def forward(self, x: Any) -> Any:
        packed = self._packed_params._packed_params
        if self._packed_params.dtype is qint8:
            y = linear_dynamic(x, packed, reduce_range=not (self.version is None or self.version < 4))
        elif self._packed_params.dtype is minitorch.float16:
            y = linear_dynamic_fp16(x, packed)
        else:
            raise RuntimeError("Unsupported dtype on dynamic quantized linear!")
        return y.to(x.dtype)

    def _get_name(self) -> str:
        return "DynamicQuantizedLinear"

    def extra_repr(self) -> str:
        s = f"in_features={self.in_features}, out_features={self.out_features}, dtype={self._packed_params.dtype}"
        if self._packed_params.dtype is qint8:
            s += f", qscheme={self.weight().qscheme()}"
        return s

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "Linear":
        """The dynamic quantized twin of the float Linear mod, its weight quantized by the weight
        observer of mod.qconfig (default_dynamic_qconfig's when it has none)."""
        float_modules = [minitorch.nn.Linear, minitorch.nn.modules.linear.NonDynamicallyQuantizableLinear]
        if type(mod) not in float_modules:
            raise AssertionError("nn.quantized.dynamic.Linear.from_float only works for one of"
                                 + str([m.__name__ for m in float_modules]) + f", got {type(mod)}")
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined")
        if mod.qconfig is not None and mod.qconfig.weight is not None:
            weight_observer = mod.qconfig.weight()
        else:
            from minitorch.ao.quantization.qconfig import default_dynamic_qconfig

            weight_observer = default_dynamic_qconfig.weight()
        dtype = weight_observer.dtype
        if dtype is not qint8 and dtype is not minitorch.float16:
            raise AssertionError("The only supported dtypes for dynamic quantized linear are qint8 and float16, "
                                 f"got: {dtype}")
        weight_observer(mod.weight)
        qweight = _quantize_weight(mod.weight.float(), weight_observer) if dtype is qint8 else mod.weight.float()
        qlinear = cls(mod.in_features, mod.out_features, dtype=dtype)
        qlinear.set_weight_bias(qweight, mod.bias)
        return qlinear
