"""FloatFunctional and QFunctional (torch.ao.nn.quantized): the adds, multiplications and
concatenations inside a model, made modules so that prepare can observe their outputs and convert
can give them quantization parameters. FloatFunctional computes in float (its
activation_post_process is an Identity until prepare puts an observer there); QFunctional takes
quantized tensors, computes on their real values and quantizes the result with its own scale and
zero point, as PyTorch's quantized::add / mul / cat (within one step of fbgemm's)."""
from __future__ import annotations

from typing import Any, List

import minitorch
from minitorch import nn
from minitorch._qtensor import QTensor, _dequantize, quantize_per_tensor

from .utils import _WithOutputQParams

__all__ = ["FloatFunctional", "FXFloatFunctional", "QFunctional"]


class FloatFunctional(nn.Module):
    """add, add_scalar, mul, mul_scalar, cat, add_relu and matmul of float tensors, each output
    through activation_post_process (but those with a scalar, which need no observer)."""

    def __init__(self) -> None:
        super().__init__()
        self.activation_post_process = nn.Identity()

    def forward(self, x: Any) -> Any:
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use the underlying "
                           "operation")

    def add(self, x: Any, y: Any) -> Any:
        return self.activation_post_process(minitorch.add(x, y))

    def add_scalar(self, x: Any, y: float) -> Any:
        return minitorch.add(x, y)

    def mul(self, x: Any, y: Any) -> Any:
        return self.activation_post_process(minitorch.mul(x, y))

    def mul_scalar(self, x: Any, y: float) -> Any:
        return minitorch.mul(x, y)

    def cat(self, x: List[Any], dim: int = 0) -> Any:
        return self.activation_post_process(minitorch.cat(x, dim=dim))

    def add_relu(self, x: Any, y: Any) -> Any:
        return self.activation_post_process(minitorch.relu(minitorch.add(x, y)))

    def matmul(self, x: Any, y: Any) -> Any:
        return self.activation_post_process(minitorch.matmul(x, y))


class FXFloatFunctional(FloatFunctional):
    """FloatFunctional for FX graph mode: the same float operations, observed by the graph."""

    def __init__(self) -> None:
        nn.Module.__init__(self)


def _reals(x: Any, op: str) -> Any:
    if not isinstance(x, QTensor):
        raise RuntimeError(f"{op}: expected a quantized tensor, got a {x.dtype} one")
    return _dequantize(x)


class QFunctional(_WithOutputQParams):
    """The quantized FloatFunctional: its results quantized with scale and zero_point (those of
    the observer the FloatFunctional had); add_scalar and mul_scalar keep the input's."""

    def __init__(self) -> None:
        super().__init__()
        self.scale, self.zero_point = 1.0, 0
        self.activation_post_process = nn.Identity()

    def _get_name(self) -> str:
        return "QFunctional"

    def extra_repr(self) -> str:
        return f"scale={self.scale}, zero_point={self.zero_point}"

    def forward(self, x: Any) -> Any:
        raise RuntimeError("Functional is not intended to use the 'forward'. Please use the underlying operation")

    def _quantized(self, real: Any, like: QTensor) -> QTensor:
        return quantize_per_tensor(real, self.scale, self.zero_point, like.dtype)

    def add(self, x: QTensor, y: QTensor) -> QTensor:
        return self._quantized(_reals(x, "quantized::add") + _reals(y, "quantized::add"), x)

    def add_relu(self, x: QTensor, y: QTensor) -> QTensor:
        return self._quantized((_reals(x, "quantized::add_relu") + _reals(y, "quantized::add_relu")).relu(), x)

    def mul(self, x: QTensor, y: QTensor) -> QTensor:
        return self._quantized(_reals(x, "quantized::mul") * _reals(y, "quantized::mul"), x)

    def matmul(self, x: QTensor, y: QTensor) -> QTensor:
        return self._quantized(_reals(x, "quantized::matmul") @ _reals(y, "quantized::matmul"), x)

    def cat(self, x: List[QTensor], dim: int = 0) -> QTensor:
        return self._quantized(minitorch.cat([_reals(t, "quantized::cat") for t in x], dim=dim), x[0])

    def add_scalar(self, x: QTensor, y: float) -> QTensor:
        return quantize_per_tensor(_reals(x, "quantized::add_scalar") + y, x.q_scale(), x.q_zero_point(), x.dtype)

    def mul_scalar(self, x: QTensor, y: float) -> QTensor:
        return quantize_per_tensor(_reals(x, "quantized::mul_scalar") * y, x.q_scale(), x.q_zero_point(), x.dtype)

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "QFunctional":
        if type(mod) is not FloatFunctional:
            raise AssertionError("QFunctional.from_float expects an instance of FloatFunctional")
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        new_mod = QFunctional()
        new_mod.scale, new_mod.zero_point = float(scale), int(zero_point)
        return new_mod
