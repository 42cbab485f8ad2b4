"""Activation layers: thin Modules over the functions in nn.functional."""
from __future__ import annotations

import warnings
from typing import Optional

import minitorch
from minitorch import Tensor
from minitorch.nn import functional as F
from minitorch.nn import init as nn_init
from minitorch.nn.modules.module import Module
from minitorch.nn.parameter import Parameter

__all__ = ["ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Softmin", "Softmax2d"]


class ReLU(Module):
    """max(x, 0) elementwise; inplace=True overwrites the input."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """x * Phi(x) elementwise (exact form)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x) elementwise."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class Softmax(Module):
    """softmax along dim (rows sum to 1)."""

    __constants__ = ["dim"]

    def __init__(self, dim: Optional[int] = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    """softmax(-x) along dim (rows sum to 1, the smallest entry weighs most)."""

    __constants__ = ["dim"]

    def __init__(self, dim: Optional[int] = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """softmax over the channels of each location: dim -3 of a (C, H, W) or (N, C, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


class LogSoftmax(Module):
    """log(softmax(x)) along dim, computed without forming the softmax."""

    __constants__ = ["dim"]

    def __init__(self, dim: Optional[int] = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


# ---- activations, as torch/nn/modules/activation.py ----


def _inplace_str(inplace: bool, first: bool = False) -> str:
    return ("inplace=True" if first else ", inplace=True") if inplace else ""


class Threshold(Module):
    """value where input <= threshold, else input."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_str(self.inplace)}"


class Hardtanh(Module):
    """input clamped into [min_val, max_val]."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: Optional[float] = None, max_value: Optional[float] = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self.inplace)}"


class ReLU6(Hardtanh):
    """min(max(0, x), 6)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, first=True)


class _InplaceActivation(Module):
    """An activation whose only option is inplace: F.<_fn>(input, inplace)."""

    __constants__ = ["inplace"]
    _fn = ""
    _repr_inplace = True  # PyTorch's Hardsigmoid and Hardswish print no inplace

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, first=True) if self._repr_inplace else ""


class Hardsigmoid(_InplaceActivation):
    """relu6(x + 3) / 6."""

    _fn = "hardsigmoid"
    _repr_inplace = False


class Hardswish(_InplaceActivation):
    """x * relu6(x + 3) / 6."""

    _fn = "hardswish"
    _repr_inplace = False


class Mish(_InplaceActivation):
    """x * tanh(softplus(x))."""

    _fn = "mish"


class SELU(_InplaceActivation):
    """scale * elu(x, alpha), with SELU's fixed constants."""

    _fn = "selu"


class _AlphaActivation(Module):
    """ELU and CELU: alpha and inplace."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class ELU(_AlphaActivation):
    """x where positive, else alpha * (exp(x) - 1)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)


class CELU(_AlphaActivation):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class LeakyReLU(Module):
    """x where positive, else negative_slope * x."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_str(self.inplace)}"


class GLU(Module):
    """a * sigmoid(b), a and b the halves of the input along dim."""

    __constants__ = ["dim"]

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class _Shrink(Module):
    """Hardshrink and Softshrink: lambd."""

    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """x outside [-lambd, lambd], 0 inside."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)


class Softshrink(_Shrink):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear above threshold."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """x where positive, else weight * x, with a learnt weight (one, or one per channel)
    initialised to init."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(minitorch.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn_init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class LogSigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Softsign(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


__all__ += [
    "Threshold", "Hardtanh", "ReLU6", "Hardsigmoid", "Hardswish", "Mish", "SELU", "ELU", "CELU", "LeakyReLU",
    "GLU", "Hardshrink", "Softshrink", "Softplus", "PReLU", "LogSigmoid", "Softsign", "Tanhshrink",
]


class MultiheadAttention(Module):
    """Attention over num_heads heads of embed_dim // num_heads each: query (L, N, E) (batch_first:
    (N, L, E)) or unbatched (L, E); key (S, N, kdim), value (S, N, vdim) -> output (L, N, E) and the
    attention weights (N, L, S) when need_weights (per head, (N, heads, L, S), unless
    average_attn_weights). PyTorch's parameters: in_proj_weight (3E, E) when kdim == vdim == E,
    else q_proj_weight, k_proj_weight, v_proj_weight; in_proj_bias (3E); out_proj; bias_k and bias_v
    (1, 1, E) with add_bias_kv. PyTorch's inference fast path (_native_multi_head_attention) is
    an optimisation minitorch leaves out: every call takes the path below."""

    __constants__ = ["batch_first"]

    def __init__(
        self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True, add_bias_kv: bool = False,
        add_zero_attn: bool = False, kdim: Optional[int] = None, vdim: Optional[int] = None,
        batch_first: bool = False, device=None, dtype=None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0,"
                f" got embed_dim={embed_dim} and num_heads={num_heads} instead"
            )
        from minitorch.nn.modules.linear import NonDynamicallyQuantizableLinear

        kw = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(minitorch.empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(minitorch.empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(minitorch.empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(minitorch.empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(minitorch.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(minitorch.empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(minitorch.empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            nn_init.xavier_uniform_(self.in_proj_weight)
        else:
            nn_init.xavier_uniform_(self.q_proj_weight)
            nn_init.xavier_uniform_(self.k_proj_weight)
            nn_init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            nn_init.constant_(self.in_proj_bias, 0.0)
            nn_init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            nn_init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            nn_init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        if "_qkv_same_embed_dim" not in state:
            state["_qkv_same_embed_dim"] = True
        super().__setstate__(state)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Optional[Tensor] = None,
        need_weights: bool = True, attn_mask: Optional[Tensor] = None, average_attn_weights: bool = True,
        is_causal: bool = False,
    ):
        if query.is_nested or key.is_nested or value.is_nested:
            return self._nested_forward(query, key, value, key_padding_mask, need_weights, attn_mask,
                                        average_attn_weights)
        is_batched = query.dim() == 3
        key_padding_mask = F._canonical_mask(key_padding_mask, "key_padding_mask", F._none_or_dtype(attn_mask),
                                             "attn_mask", query.dtype)
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and is_batched:
            # (N, L, E) -> (L, N, E), keeping which arguments are the same tensor
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {} if self._qkv_same_embed_dim else {
            "use_separate_proj_weight": True, "q_proj_weight": self.q_proj_weight,
            "k_proj_weight": self.k_proj_weight, "v_proj_weight": self.v_proj_weight,
        }
        attn_output, attn_output_weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal, **separate,
        )
        if self.batch_first and is_batched:
            return attn_output.transpose(1, 0), attn_output_weights
        return attn_output, attn_output_weights

    def _why_not_fast_path(self, query, key, value, key_padding_mask, attn_mask) -> str:
        """Why PyTorch's inference fast path (_native_multi_head_attention) would not run, in its
        words, or ''. Only a nested input depends on it: it is the one path that takes one."""
        params = (self.in_proj_weight, self.in_proj_bias, self.out_proj.weight, self.out_proj.bias)
        checks = (
            (not minitorch.backends.mha.get_fastpath_enabled(), "torch.backends.mha.get_fastpath_enabled() was not True"),
            (query.dim() != 3, f"input not batched; expected query.dim() of 3 but got {query.dim()}"),
            (query is not key or key is not value,
             "non-self attention was used (query, key, and value are not the same Tensor)"),
            (self.in_proj_weight is None, "in_proj_weight was None"),
            (self.training, "training is enabled"),
            (self.num_heads % 2 != 0, "self.num_heads is not even"),
            (not self.batch_first, "batch_first was not True"),
            (self.bias_k is not None, "self.bias_k was not None"),
            (self.bias_v is not None, "self.bias_v was not None"),
            (self.add_zero_attn, "add_zero_attn was enabled"),
            (not self._qkv_same_embed_dim, "_qkv_same_embed_dim was not True"),
            (key_padding_mask is not None or attn_mask is not None,
             "supplying both src_key_padding_mask and src_mask at the same time is not supported with "
             "NestedTensor input"),
            (minitorch.is_grad_enabled() and any(p is not None and p.requires_grad for p in params + (query,)),
             "grad is enabled and at least one of query or the input/output projection weights or biases "
             "requires_grad"),
        )
        return next((why for failed, why in checks if failed), "")

    def _nested_forward(self, query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights):
        """Self-attention over each component of a nested query (L_i, E) on its own, as PyTorch's
        fast path does: the components padded to one length, the padding masked out, the rows cut
        back. The weights come padded, zero outside each component, as PyTorch's."""
        why = self._why_not_fast_path(query, key, value, key_padding_mask, attn_mask)
        if why:
            raise AssertionError("MultiheadAttention does not support NestedTensor outside of its fast path. "
                                 f"The fast path was not hit because {why}")
        weights = []

        def attend(x, pad):
            out, w = self.forward(x, x, x, key_padding_mask=pad, need_weights=need_weights,
                                  average_attn_weights=average_attn_weights)
            if w is not None:
                rows = pad.unsqueeze(-1) if average_attn_weights else pad.unsqueeze(1).unsqueeze(-1)
                weights.append(w.masked_fill(rows, 0.0))
            return out

        out = minitorch.nested.run_padded(query, attend)
        return out, (weights[0] if weights else None)


class RReLU(Module):
    """x where positive, else x times a slope drawn from U(lower, upper) per element in
    training, (lower + upper) / 2 in eval."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_str(self.inplace)}"


__all__ += ["RReLU"]
