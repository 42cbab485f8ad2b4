"""nn.functional's multi-head attention, which PyTorch writes in Python (torch/nn/functional.py):
multi_head_attention_forward and its helpers (_canonical_mask, _mha_shape_check, the input
projections). Each step is one op (linear, baddbmm, softmax, scaled_dot_product_attention, ...);
the checks and messages are PyTorch's. minitorch.nn.functional re-exports these names."""
from __future__ import annotations

import math
import warnings
from typing import List, Optional, Tuple

import minitorch
from minitorch import Tensor
from minitorch.nn import functional as F


def _canonical_mask(
    mask: Optional[Tensor],
    mask_name: str,
    other_type: Optional[minitorch.dtype],
    other_name: str,
    target_type: minitorch.dtype,
    check_other: bool = True,
) -> Optional[Tensor]:
    """A bool mask (True: masked out) as an additive float mask of target_type; a float one as is."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != minitorch.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both instead.",
            stacklevel=2,
        )
    if not is_float:
        mask = minitorch.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input: Optional[Tensor]) -> Optional[minitorch.dtype]:
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Optional[Tensor],
                     attn_mask: Optional[Tensor], num_heads: int) -> bool:
    """Whether query is batched (3-D) or not (2-D), after PyTorch's checks of every shape."""
    if query.dim() not in (2, 3):
        raise AssertionError(
            f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query tensor"
        )
    batched = query.dim() == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    nd = query.dim()
    if key.dim() != nd or value.dim() != nd:
        raise AssertionError(
            f"For {kind} `query`, expected `key` and `value` to be {nd}-D"
            f" but found {key.dim()}-D and {value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != nd - 1:
        raise AssertionError(
            f"For {kind} `query`, expected `key_padding_mask` to be `None` or {nd - 1}-D"
            f" but found {key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                f" but found {attn_mask.dim()}-D tensor instead"
            )
        if not batched and attn_mask.dim() == 3:
            expected_shape = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.shape != expected_shape:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected_shape} but got {attn_mask.shape}")
    return batched


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Optional[Tensor] = None) -> List[Tensor]:
    """q, k, v projected by the (3E, E) weight w packed in q, k, v order (one matmul when they are
    the same tensor, two when k is v)."""
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = F.linear(q, w, b)
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        kv = F.linear(k, w_kv, b_kv).unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return F.linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def _in_projection(q: Tensor, k: Tensor, v: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor,
                   b_q: Optional[Tensor] = None, b_k: Optional[Tensor] = None,
                   b_v: Optional[Tensor] = None) -> Tuple[Tensor, Tensor, Tensor]:
    """q, k, v projected by their own weights, all to q's embedding dimension."""
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, shape in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)), ("value", w_v, (Eq, Ev))):
        if w.shape != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got {w.shape}")
    for name, bias in (("query", b_q), ("key", b_k), ("value", b_v)):
        if bias is not None and bias.shape != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {bias.shape}")
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def _static_kv(x: Tensor, name: str, bsz: int, num_heads: int, head_dim: int) -> Tensor:
    if x.size(0) != bsz * num_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got {x.size(0)}")
    if x.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {x.size(2)}")
    return x


def _attn_mask_3d(attn_mask: Tensor, tgt_len: int, src_len: int, bsz: int, num_heads: int) -> Tensor:
    """attn_mask as (1 or bsz * num_heads, tgt_len, src_len), after PyTorch's shape checks."""
    if attn_mask.dim() == 2:
        if attn_mask.shape != (tgt_len, src_len):
            raise RuntimeError(
                f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {(tgt_len, src_len)}."
            )
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(
                f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                f"{(bsz * num_heads, tgt_len, src_len)}."
            )
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Optional[Tensor], in_proj_bias: Optional[Tensor], bias_k: Optional[Tensor],
    bias_v: Optional[Tensor], add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
    out_proj_bias: Optional[Tensor], training: bool = True, key_padding_mask: Optional[Tensor] = None,
    need_weights: bool = True, attn_mask: Optional[Tensor] = None, use_separate_proj_weight: bool = False,
    q_proj_weight: Optional[Tensor] = None, k_proj_weight: Optional[Tensor] = None,
    v_proj_weight: Optional[Tensor] = None, static_k: Optional[Tensor] = None, static_v: Optional[Tensor] = None,
    average_attn_weights: bool = True, is_causal: bool = False,
) -> Tuple[Tensor, Optional[Tensor]]:
    """query (L, N, E) or (L, E), key and value (S, N, Ek/Ev) or (S, Ek/Ev) -> attention output
    (L, N, E) and, with need_weights, the weights (N, L, S), averaged over the heads or per head."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
            "`generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention's own causal mask replaces it
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}"
            )
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)

    if attn_mask is not None:
        attn_mask = _attn_mask_3d(attn_mask, tgt_len, src_len, bsz, num_heads)
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = minitorch.cat([k, bias_k.repeat(1, bsz, 1)])
        v = minitorch.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # (L, N, E) -> (N * heads, L, head_dim)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        k = _static_kv(static_k, "static_k", bsz, num_heads, head_dim)
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        v = _static_kv(static_v, "static_v", bsz, num_heads, head_dim)
    if add_zero_attn:
        zero_attn_shape = (bsz * num_heads, 1, head_dim)
        k = minitorch.cat([k, minitorch.zeros(zero_attn_shape, dtype=k.dtype, device=k.device)], dim=1)
        v = minitorch.cat([v, minitorch.zeros(zero_attn_shape, dtype=v.dtype, device=v.device)], dim=1)
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src_len}, but got {key_padding_mask.shape[1]}"
            )
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(q.shape[2]))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = minitorch.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = minitorch.bmm(q_scaled, k.transpose(-2, -1))
        weights = F.softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = F.dropout(weights, p=dropout_p)
        out = minitorch.bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None
