"""torch.nn.attention.bias: causal attention biases that scaled_dot_product_attention takes as its
attn_mask. A CausalBias is a Tensor subclass (as PyTorch's, an uninitialised tensor of the shape
its three constructor numbers give, never read) whose __torch_function__ catches
F.scaled_dot_product_attention: the upper-left variant, or any square one, runs as is_causal=True;
the lower-right one with its boolean mask materialised (PyTorch's CPU path: no fused kernel takes
it there).
"""
from __future__ import annotations

from enum import IntEnum, auto
from typing import Optional
from warnings import warn

import minitorch as torch

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    r"""UPPER_LEFT: torch.tril(torch.ones(size, dtype=torch.bool)), the mask is_causal=True means;
    LOWER_RIGHT: the same triangle aligned to the lower right corner,
    torch.tril(torch.ones(size, dtype=torch.bool), diagonal=size[1] - size[0]). The two agree when
    the matrix is square."""

    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


class CausalBias(torch.Tensor):
    """A causal (triangular) attention bias of one CausalVariant for seq_len_q queries and
    seq_len_kv keys; made by causal_upper_left and causal_lower_right."""

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        super().__init__()
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warn("Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!", stacklevel=2)

    def _upper_left(self, device) -> torch.Tensor:
        """Upper left causal bias"""
        return torch.tril(torch.ones(self.seq_len_q, self.seq_len_kv, device=device, dtype=torch.bool))

    def _lower_right(self, device) -> torch.Tensor:
        """Lower right causal bias"""
        diagonal_offset = self.seq_len_kv - self.seq_len_q
        return torch.tril(torch.ones(self.seq_len_q, self.seq_len_kv, device=device, dtype=torch.bool),
                          diagonal=diagonal_offset)

    def _materialize(self, device: Optional[torch.device] = None) -> torch.Tensor:
        """The boolean (seq_len_q, seq_len_kv) mask, True where attention is allowed (on the CPU
        unless device is given)."""
        if device is None:
            device = torch.device("cpu")
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        return self._lower_right(device)

    @staticmethod
    def _dispatch(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attn_mask: "CausalBias",
                  dropout_p: float = 0.0, is_causal: bool = False, scale: Optional[float] = None,
                  enable_gqa: bool = False) -> torch.Tensor:
        """scaled_dot_product_attention with this bias as its mask."""
        F = torch.nn.functional
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if attn_mask.seq_len_q == attn_mask.seq_len_kv or attn_mask.variant == CausalVariant.UPPER_LEFT:
            return F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=dropout_p,
                                                  is_causal=True, scale=scale, enable_gqa=enable_gqa)
        if attn_mask.variant == CausalVariant.LOWER_RIGHT:
            return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask._materialize(query.device),
                                                  dropout_p=dropout_p, is_causal=False, scale=scale,
                                                  enable_gqa=enable_gqa)
        raise ValueError(f"CausalBias.variant must be a CausalVariant type, but found: {attn_mask.variant}")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """scaled_dot_product_attention with a CausalBias goes to _dispatch; the rest as a Tensor's."""
        if kwargs is None:
            kwargs = {}
        if func is torch.nn.functional.scaled_dot_product_attention:
            return cls._dispatch(*args, **kwargs)
        return super().__torch_function__(func, types, args, kwargs)

    def __repr__(self) -> str:
        return self._materialize().__repr__()

    __str__ = __repr__  # print() shows the mask too (minitorch.Tensor defines its own __str__)


def causal_upper_left(*size) -> CausalBias:
    """The UPPER_LEFT causal bias of size (seq_len_q, seq_len_kv): is_causal=True's mask."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.UPPER_LEFT, seq_len_q, seq_len_kv)


def causal_lower_right(*size) -> CausalBias:
    """The LOWER_RIGHT causal bias of size (seq_len_q, seq_len_kv): the triangle aligned to the
    last query and the last key."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.LOWER_RIGHT, seq_len_q, seq_len_kv)
