"""The quantized BatchNorm2d (torch.ao.nn.quantized.BatchNorm2d), and with a fused ReLU
(nn.intrinsic.quantized.BNReLU2d): per channel c, in float32 as PyTorch's kernel,
q_out = round(alpha[c] * (q_in - in_zp) + beta[c]) clamped to quint8, with
alpha = weight / sqrt(var + eps) * in_scale / out_scale and
beta = (bias - mean * weight / sqrt(var + eps)) / out_scale + out_zp."""
from __future__ import annotations

from typing import Any

import minitorch
from minitorch import nn
from minitorch._qtensor import QTensor, per_tensor_affine, quint8

from .utils import _input_integers

__all__ = ["BatchNorm2d"]


class BatchNorm2d(nn.BatchNorm2d):
    """Batch norm (running statistics) of a quantized (N, C, H, W) tensor, the result quantized
    with scale and zero_point (buffers, saved in the state_dict)."""

    _relu = False  # BNReLU2d clamps its output from the zero point up

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(num_features, eps, momentum, True, True)
        self.register_buffer("scale", minitorch.tensor(1.0))
        self.register_buffer("zero_point", minitorch.tensor(0))

    def _get_name(self) -> str:
        return "QuantizedBatchNorm2d"

    def forward(self, input: Any) -> Any:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")
        f32 = minitorch.float32
        out_scale, out_zp = float(self.scale), int(self.zero_point)
        inv_std = self.weight.detach() / minitorch.sqrt(self.running_var + self.eps)  # (C,)
        alpha = inv_std * (minitorch.tensor(input.q_scale(), dtype=f32) / minitorch.tensor(out_scale, dtype=f32))
        beta = (self.bias.detach() - self.running_mean * inv_std) / out_scale + out_zp
        x = _input_integers(input, "quantized::batch_norm2d").to(f32)
        v = (alpha.view(1, -1, 1, 1) * x + beta.view(1, -1, 1, 1)).round()
        ir = v.clamp(out_zp if self._relu else 0, 255).to(minitorch.uint8)
        return QTensor(ir, quint8, per_tensor_affine, out_scale, out_zp)

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "BatchNorm2d":
        """The quantized twin of an observed BatchNorm2d (or fused BNReLU2d): its statistics and
        affine parameters, the output parameters from its observer."""
        post = mod.activation_post_process
        if isinstance(mod, nn.Sequential):  # BNReLU2d
            mod = mod[0]
        scale, zero_point = post.calculate_qparams()
        new_mod = cls(mod.num_features, mod.eps)
        new_mod.weight, new_mod.bias = mod.weight, mod.bias
        new_mod.running_mean, new_mod.running_var = mod.running_mean, mod.running_var
        new_mod.scale = scale.reshape(()).float()
        new_mod.zero_point = zero_point.reshape(()).long()
        return new_mod
