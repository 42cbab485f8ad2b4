"""torch.nn.attention.flex_attention: attention with a user score_mod and a BlockMask, as PyTorch runs
it without torch.compile (its "math" path): the full score matrix, the score_mod applied to every
(batch, head, q_idx, kv_idx), positions the mask_mod rejects set to -inf, a softmax that gives 0 for
fully masked rows, and the logsumexp when asked.

PyTorch applies score_mod and mask_mod through vmap over 0-d index tensors; here they are called once
with index tensors shaped to broadcast, b (B,1,1,1), h (1,H,1,1), q_idx (1,1,L,1), kv_idx (1,1,1,S),
which gives the same result for mods written with tensor operations and indexing of captured tensors
(what vmap supports too). A BlockMask keeps PyTorch's block structure (kv_num_blocks, kv_indices and
their full-block counterparts, BLOCK_SIZE, shape, sparsity(), to_dense(), to_string()); as in
PyTorch's eager path, the values come from its mask_mod, the blocks are bookkeeping.
"""
from __future__ import annotations

import itertools
import math
import operator
import warnings
from typing import Any, Callable, NamedTuple, Optional, Tuple, Union

import minitorch as torch

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions", "create_block_mask",
           "create_mask", "or_masks", "and_masks", "noop_mask"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128  # PyTorch's default block edge for create_block_mask
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30  # the one block of the mask used when flex_attention gets none
_WARNINGS_SHOWN: set = set()

FlexKernelOptions = dict  # kernel tuning options: accepted, meaningless without the compiled kernel


def _warn_once(warning_id: str, message: str, category: type = UserWarning) -> None:
    if warning_id not in _WARNINGS_SHOWN:
        warnings.warn(message, category, stacklevel=3)
        _WARNINGS_SHOWN.add(warning_id)


class AuxRequest(NamedTuple):
    """Which auxiliary outputs flex_attention should return."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """Auxiliary outputs of flex_attention; the fields not requested are None."""
    lse: Optional[torch.Tensor] = None
    max_scores: Optional[torch.Tensor] = None


def _identity(score, batch, head, token_q, token_kv):
    return score


def noop_mask(batch, head, token_q, token_kv):
    """Returns a noop mask_mod"""
    return batch.new_ones(size=(), dtype=torch.bool, device=batch.device)


def _combined(mask_mods, start: bool, op: Callable, name: str) -> Callable:
    """A mask_mod folding mask_mods with op (| or &) from a 0-d start value."""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def combined(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=torch.bool) if start else b.new_zeros((), dtype=torch.bool)
        for mask in mask_mods:
            result = op(result, mask(b, h, q_idx, kv_idx))
        return result

    combined.__name__ = name
    return combined


def or_masks(*mask_mods: Callable) -> Callable:
    """Returns a mask_mod that's the union of provided mask_mods"""
    return _combined(mask_mods, False, operator.or_, "or_mask")


def and_masks(*mask_mods: Callable) -> Callable:
    """Returns a mask_mod that's the intersection of provided mask_mods"""
    return _combined(mask_mods, True, operator.and_, "and_mask")


def _num_positional_args(fn: Callable) -> int:
    import inspect

    if hasattr(fn, "__code__"):
        return fn.__code__.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    return sum(1 for p in inspect.signature(fn).parameters.values() if p.default is inspect.Parameter.empty)


def _is_score_mod(fn: Callable) -> bool:
    """PyTorch's _get_mod_type: five positional arguments make a score_mod, four a mask_mod."""
    n = _num_positional_args(fn)
    if n not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {n}")
    return n == 5


def _indices(B: int, H: int, L: int, S: int, device) -> Tuple[torch.Tensor, ...]:
    """b, h, q_idx, kv_idx as int64 index tensors that broadcast to (B, H, L, S)."""
    return (torch.arange(B, device=device).view(B, 1, 1, 1), torch.arange(H, device=device).view(1, H, 1, 1),
            torch.arange(L, device=device).view(1, 1, L, 1), torch.arange(S, device=device).view(1, 1, 1, S))


def create_mask(mod_fn: Callable, B: Optional[int], H: Optional[int], Q_LEN: int, KV_LEN: int,
                device=None) -> torch.Tensor:
    """The (B, H, Q_LEN, KV_LEN) boolean mask of a mask_mod, or of a score_mod (where it is not -inf)."""
    if device is None:
        device = torch.accelerator.current_accelerator() or "cpu"
    B = 1 if B is None else B
    H = 1 if H is None else H
    b, h, m, n = _indices(B, H, Q_LEN, KV_LEN, device)
    if _is_score_mod(mod_fn):
        out = mod_fn(torch.zeros(B, H, Q_LEN, KV_LEN, device=device), b, h, m, n)
        return torch.where(torch.isneginf(out.expand(B, H, Q_LEN, KV_LEN)), False, True)
    mask = torch.as_tensor(mod_fn(b, h, m, n), device=device)
    return mask.to(torch.bool).expand(B, H, Q_LEN, KV_LEN)


def _dense_to_ordered(dense_mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """(blocks per row, column indices with the row's blocks first, in order), both int32."""
    dense_mask = dense_mask.to(dtype=torch.int32)
    num_blocks_in_row = dense_mask.sum(dim=-1)
    col_indices = torch.argsort(dense_mask, dim=-1, descending=True, stable=True)
    return num_blocks_in_row.to(torch.int32).contiguous(), col_indices.to(torch.int32).contiguous()


def _ordered_to_dense(num_blocks_in_row: torch.Tensor, col_indices: torch.Tensor, num_cols: int) -> torch.Tensor:
    """The (..., rows, num_cols) int32 0/1 block matrix the ordered form describes."""
    valid = torch.arange(col_indices.shape[-1], device=col_indices.device) < num_blocks_in_row[..., None]
    dense = torch.zeros(*col_indices.shape[:-1], num_cols + 1, dtype=torch.int32, device=col_indices.device)
    # invalid slots write into an extra column, dropped after
    target = torch.where(valid, col_indices.to(torch.int64), num_cols)
    dense.scatter_(-1, target, 1)
    return dense[..., :num_cols]


class BlockMask:
    r"""A block-sparse attention mask: for each (batch, head, query block) the key/value blocks that
    are partly (kv_num_blocks, kv_indices) or fully (full_kv_num_blocks, full_kv_indices) unmasked,
    blocks of BLOCK_SIZE = (Q_BLOCK_SIZE, KV_BLOCK_SIZE), for sequences of seq_lengths, and the
    mask_mod that says which elements inside a block are kept."""

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, q_num_blocks,
                 q_indices, full_q_num_blocks, full_q_indices, BLOCK_SIZE, mask_mod):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if kv_num_blocks is None:
            raise AssertionError("kv_num_blocks must be provided")
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None, full_kv_indices=None,
                       BLOCK_SIZE: Union[int, Tuple[int, int]] = _DEFAULT_SPARSE_BLOCK_SIZE, mask_mod=None,
                       seq_lengths=None, compute_q_blocks: bool = True):
        """A BlockMask from its key/value block structure; the query-side structure is derived."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise ValueError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        q_num_blocks = q_indices = full_q_num_blocks = full_q_indices = None
        if compute_q_blocks:
            cols = kv_indices.shape[-1]
            dense = _ordered_to_dense(kv_num_blocks, kv_indices, cols)
            q_num_blocks, q_indices = _dense_to_ordered(dense.transpose(-2, -1))
            if full_kv_num_blocks is not None:
                full_q_num_blocks, full_q_indices = _dense_to_ordered(
                    _ordered_to_dense(full_kv_num_blocks, full_kv_indices, cols).transpose(-2, -1))
        BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0], kv_indices.shape[-1] * BLOCK_SIZE[1])
        mask_mod = noop_mask if mask_mod is None else mask_mod
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, q_num_blocks,
                   q_indices, full_q_num_blocks, full_q_indices, BLOCK_SIZE, mask_mod)

    def as_tuple(self, flatten: bool = True) -> Tuple[Any, ...]:
        block_size = (self.BLOCK_SIZE[0], self.BLOCK_SIZE[1]) if flatten else (self.BLOCK_SIZE,)
        return (*self.seq_lengths, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks,
                self.full_kv_indices, self.q_num_blocks, self.q_indices, self.full_q_num_blocks, self.full_q_indices,
                *block_size, self.mask_mod)

    @property
    def shape(self) -> Tuple[int, ...]:
        *batch_dims, _, _ = self.kv_indices.shape
        return tuple(batch_dims) + self.seq_lengths

    def numel(self) -> int:
        """Returns the number of elements (not accounting for sparsity) in the mask."""
        return math.prod(self.shape)

    def sparsity(self) -> float:
        """Computes the percentage of blocks that are sparse (i.e. not computed)"""
        computed_blocks = self.kv_num_blocks.sum()
        if self.full_kv_num_blocks is not None:
            computed_blocks = computed_blocks + self.full_kv_num_blocks.sum()
        computed_size = computed_blocks.item() * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed_size / self.numel())

    def to_dense(self) -> torch.Tensor:
        """Returns a dense block that is equivalent to the block mask."""
        partial = _ordered_to_dense(self.kv_num_blocks, self.kv_indices, self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            return partial | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                               self.full_kv_indices.shape[-1])
        return partial

    def to_string(self, grid_size: Union[int, Tuple[int, int]] = (20, 20), limit: int = 4) -> str:
        """One picture per (batch, head): a block is "█" when computed, " " when skipped, "░" for a
        cell that summarises both."""
        dense_mask = self.to_dense()
        *batch_dims, num_rows, num_cols = dense_mask.shape
        if isinstance(grid_size, int) and grid_size == -1:
            max_rows, max_cols = num_rows, num_cols
        elif isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        else:
            max_rows, max_cols = grid_size
        row_step = max(1, -(-num_rows // max_rows))
        col_step = max(1, -(-num_cols // max_cols))
        pictures = []
        for k, batch_idx in enumerate(itertools.product(*[range(i) for i in batch_dims])):
            if k == limit:
                pictures += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                             "You can also index (BlockMask[batch, head]) to choose a specific batch or head"]
                break
            cur = dense_mask[batch_idx]
            vis = f"{batch_idx}\n"
            for r in range(0, num_rows, row_step):
                for c in range(0, num_cols, col_step):
                    share = cur[r:r + row_step, c:c + col_step].float().mean().item()
                    vis += ("█" if share == 1 else " " if share == 0 else "░") * 2
                vis += "\n"
            pictures.append(vis)
        return "\n".join(pictures)

    def __str__(self) -> str:
        return f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n{self.to_string().strip()}\n)"

    def __repr__(self) -> str:
        def shape_or_none(x):
            return x.shape if x is not None else None

        return (f"BlockMask(\n    kv_num_blocks={self.kv_num_blocks.shape},\n    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={shape_or_none(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={shape_or_none(self.full_kv_indices)},\n"
                f"    q_num_blocks={shape_or_none(self.q_num_blocks)},\n"
                f"    q_indices={shape_or_none(self.q_indices)},\n"
                f"    full_q_num_blocks={shape_or_none(self.full_q_num_blocks)},\n"
                f"    full_q_indices={shape_or_none(self.full_q_indices)},\n    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n    sparsity={self.sparsity():.2f}%,\n"
                f"    mask_mod={getattr(self.mask_mod, '__name__', self.mask_mod)}\n)")

    def to(self, device) -> "BlockMask":
        def moved(t):
            return None if t is None else t.to(device)

        return BlockMask(self.seq_lengths, moved(self.kv_num_blocks), moved(self.kv_indices),
                         moved(self.full_kv_num_blocks), moved(self.full_kv_indices), moved(self.q_num_blocks),
                         moved(self.q_indices), moved(self.full_q_num_blocks), moved(self.full_q_indices),
                         self.BLOCK_SIZE, self.mask_mod)


def create_block_mask(mask_mod: Callable, B: Optional[int], H: Optional[int], Q_LEN: int, KV_LEN: int, device=None,
                      BLOCK_SIZE: Union[int, Tuple[int, int]] = _DEFAULT_SPARSE_BLOCK_SIZE, _compile=False,
                      separate_full_blocks: bool = True) -> BlockMask:
    r"""The BlockMask of a mask_mod(b, h, q_idx, kv_idx) -> bool over (B, H, Q_LEN, KV_LEN); B or H
    None means 1 (broadcast over the batch or heads)."""
    if device is None:
        device = torch.accelerator.current_accelerator() or "cpu"
    if _is_score_mod(mask_mod):
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    B = 1 if B is None else B
    H = 1 if H is None else H
    q_bs, kv_bs = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    if _compile:
        warnings.warn("_compile flag on create_block_mask was originally added to work around a torch.compile "
                      "limitation. That limitation has since been addressed. So, to compile create_block_mask, we "
                      "suggest doing torch.compile(create_block_mask). This still works for now, but will be removed "
                      "in the future.", DeprecationWarning, stacklevel=2)
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    # pad to whole blocks, then count the kept elements of each (q block, kv block)
    mask = torch.nn.functional.pad(mask, (0, -KV_LEN % kv_bs, 0, -Q_LEN % q_bs))
    _, _, Q, KV = mask.shape
    per_block = mask.view(B, H, Q // q_bs, q_bs, KV // kv_bs, kv_bs).sum(dim=(3, 5))
    if separate_full_blocks:
        full = per_block == q_bs * kv_bs
        partial = (per_block > 0) & ~full
        full_kv_num_blocks, full_kv_indices = _dense_to_ordered(full)
    else:
        partial = per_block > 0
        full_kv_num_blocks = full_kv_indices = None
    kv_num_blocks, kv_indices = _dense_to_ordered(partial)
    return BlockMask.from_kv_blocks(kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices,
                                    BLOCK_SIZE=(q_bs, kv_bs), mask_mod=mask_mod, seq_lengths=(Q_LEN, KV_LEN))


def _create_empty_block_mask(query: torch.Tensor) -> BlockMask:
    """One block covering all of query and key: every position is kept."""
    return BlockMask.from_kv_blocks(torch.ones([1, 1, 1], dtype=torch.int32, device=query.device),
                                    torch.zeros([1, 1, 1, 1], dtype=torch.int32, device=query.device),
                                    BLOCK_SIZE=_LARGE_SPARSE_BLOCK_SIZE, seq_lengths=(1, 1))


def _check_inputs(query, key, value, block_mask, enable_gqa) -> None:
    """PyTorch's checks, in its order and words."""
    if query.device != key.device or query.device != value.device:
        raise ValueError(f"Expected query, key, and value to have the same device type, but got query.device: "
                         f"{query.device}, key.device: {key.device}, and value.device: {value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                         f"{query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if query.size(-1) != key.size(-1):
        raise ValueError(f"Expect query and key/value to have the same embedding dimension "
                         f"but got E={query.size(-1)} and E={key.size(-1)}.")
    if query.device.type == "cpu" and (query.requires_grad or key.requires_grad or value.requires_grad):
        raise NotImplementedError("FlexAttention does not support backward on CPU. Please set the input "
                                  "requires_grad to False or use another device.")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if not enable_gqa and query.size(-3) != key.size(-3):
        raise ValueError(f"Expect query and key/value to have the same number of heads but got "
                         f"Hq={query.size(-3)} and Hkv={key.size(-3)}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and query.size(1) % key.size(1) != 0:
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but got "
                         f"Hq={query.size(1)} and Hkv={key.size(1)}.")
    if query.size(0) != key.size(0):
        if block_mask is None:
            raise ValueError(f"Expect query and key/value to have the same batch size, or non-none block_mask, "
                             f"but got block_mask=None, Bq={query.size(0)}, and Bkv={key.size(0)}.")
        if block_mask.kv_num_blocks.size(0) != query.size(0):
            raise ValueError(f"Expect query and key/value to have the same batch size, or block_mask and query to "
                             f"have the same batch size, but got Bq={query.size(0)}, Bkv={key.size(0)}, "
                             f"B_block_mask={block_mask.kv_num_blocks.size(0)}.")
    if block_mask is not None and block_mask.BLOCK_SIZE != (_LARGE_SPARSE_BLOCK_SIZE, _LARGE_SPARSE_BLOCK_SIZE):
        q_len, kv_len = block_mask.shape[-2:]
        L, S = query.size(-2), key.size(-2)
        if L > q_len or S > kv_len:
            raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={L} and "
                             f"kv_len={S}. As the block mask was created for a smaller length than you're using it "
                             f"for, you likely need to create a new block mask.")
        if (L < q_len and S <= kv_len) or (L <= q_len and S < kv_len):
            raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={L} and "
                             f"kv_len={S}. As the block mask was created for a larger length than you're using it "
                             f"for, you can either 1. create a new block mask with the correct length, or 2. "
                             f"'adjust' the existing block mask to the correct length by calling "
                             f"block_mask._adjust(q_len, kv_len). This essentially 'crops' the block mask to the "
                             f"upper left corner, which does not work for all mask_mods!")
    if block_mask is not None and query.device != block_mask.kv_num_blocks.device:
        raise RuntimeError(f"Expect q/k/v and block_mask to be on the same device but got {query.device} and "
                           f"{block_mask.kv_num_blocks.device}.")


def flex_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, score_mod: Optional[Callable] = None,
                   block_mask: Optional[BlockMask] = None, scale: Optional[float] = None, enable_gqa: bool = False,
                   return_lse: bool = False, kernel_options: Optional[dict] = None, *,
                   return_aux: Optional[AuxRequest] = None):
    r"""softmax(score_mod(query @ key^T * scale) where the mask_mod keeps, else -inf) @ value, for
    query (B, Hq, L, E), key (B, Hkv, S, E), value (B, Hkv, S, Ev); rows with nothing kept give 0.
    With return_lse (deprecated) or return_aux, also the logsumexp (and the row maxima) of the
    modified scores, (B, Hq, L)."""
    _check_inputs(query, key, value, block_mask, enable_gqa)
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. "
                         "return_lse is deprecated, please use return_aux=AuxRequest(lse=True) instead.")
    if return_aux is not None and return_aux.max_scores and query.device.type in ("cpu", "mps"):
        raise NotImplementedError("Returning max scores is not supported on CPU/MPS.")
    if return_lse:
        _warn_once("deprecated_return_lse", "return_lse is deprecated and will be removed in v2.10. "
                   "Please use return_aux=AuxRequest(lse=True) instead.", FutureWarning)
    _warn_once("flex_attention_performance",
               "flex_attention called without torch.compile() - this will use an unfused implementation that "
               "materializes the full scores matrix instead of generating a fused kernel.\n\n"
               "SOLUTION: Use torch.compile(flex_attention)(...)")
    score_mod = _identity if score_mod is None else score_mod
    mask_mod = (block_mask or _create_empty_block_mask(query)).mask_mod
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))

    # key and value repeated over each group of query heads (GQA), broadcast over the batch
    group = query.size(1) // key.size(1)
    key, value = key.repeat_interleave(group, dim=1), value.repeat_interleave(group, dim=1)
    B, Hq, L, S = query.size(0), query.size(1), query.size(2), key.size(2)
    key, value = key.expand(B, *key.shape[1:]), value.expand(B, *value.shape[1:])

    work = torch.float64 if query.dtype == torch.float64 else torch.float32
    scores = (query.to(work) @ key.to(work).transpose(-2, -1)) * scale
    b, h, m, n = _indices(B, Hq, L, S, query.device)
    kept = torch.as_tensor(mask_mod(b, h, m, n), device=query.device).to(torch.bool)
    modified = torch.as_tensor(score_mod(scores, b, h, m, n), dtype=work, device=query.device)
    post = torch.where(kept, modified, torch.tensor(-math.inf, dtype=work, device=query.device))
    post = post.expand(B, Hq, L, S)

    # a fully masked row gets probabilities 0 (PyTorch's _safe_softmax) and logsumexp -inf
    masked_rows = torch.all(post == -math.inf, dim=-1, keepdim=True)
    probs = torch.softmax(post.masked_fill(masked_rows, 0.0), dim=-1).masked_fill(masked_rows, 0.0)
    out = probs.to(query.dtype) @ value.to(query.dtype)
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    want_max = return_aux is not None and return_aux.max_scores
    lse = torch.where(masked_rows[..., 0], -math.inf, torch.logsumexp(post, dim=-1)) if want_lse else None
    max_scores = post.max(dim=-1).values if want_max else None
    if return_aux is not None:
        return out, AuxOutput(lse=lse, max_scores=max_scores)
    if return_lse:
        return out, lse
    return out
