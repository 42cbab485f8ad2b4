"""torch.nn.functional.grouped_mm: the grouped matrix product of Mixture-of-Experts layers, one
matmul per group, with PyTorch's checks (float32, bfloat16 or float16 operands laid out with one
unit stride and 16-byte aligned rows, int32 offsets).

The four forms, offs[g] ending group g (offs[-1] may fall short of the jagged length: the rest
of the output is zeros, where PyTorch leaves it unwritten):
  mat_a (M, K), mat_b (G, K, N) -> (M, N): rows offs[g-1]:offs[g] of mat_a times mat_b[g];
  mat_a (G, M, K), mat_b (K, N) -> (M, N): mat_a[g] times columns offs[g-1]:offs[g] of mat_b;
  mat_a (M, K), mat_b (K, N) -> (G, M, N): the K slice offs[g-1]:offs[g] of both;
  mat_a (G, M, K), mat_b (G, K, N), no offs -> (G, M, N): bmm.
Each group is one matmul of whole slices; the gradients are the matmuls' own."""
from __future__ import annotations

from .. import _C

_DTYPE_WORDS = {"float32": "Float32", "bfloat16": "BFloat16", "float16": "Float16", "float64": "Double",
                "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _check_operand(name: str, t) -> None:
    word = _DTYPE_WORDS.get(str(t.dtype).split(".")[-1], str(t.dtype))
    if word not in ("Float32", "BFloat16", "Float16"):
        raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got {word}")


def _check_layout(t) -> None:
    """One of the last two dims has unit stride and the other's stride is a multiple of 16 bytes."""
    s1, s2 = t.stride()[-2], t.stride()[-1]
    lead = s1 if s2 == 1 else s2 if s1 == 1 else None
    if lead is None:
        raise RuntimeError(f"Invalid strides/sizes, got {list(t.stride()[-2:])} for strides and "
                           f"{list(t.shape[-2:])} for sizes")
    if (lead * t.element_size()) % 16:
        raise RuntimeError("strides should be multiple of 16 bytes")


def _groups(offs, length: int) -> list:
    """[(start, end)] of each group, cut to [0, length]."""
    ends = [min(max(int(e), 0), length) for e in offs.tolist()]
    starts = [0] + ends[:-1]
    return [(min(s, e), e) for s, e in zip(starts, ends)]


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """The grouped product of mat_a and mat_b (2-D or 3-D each), groups cut by offs (see above)."""
    _check_operand("mat_a", mat_a)
    _check_operand("mat_b", mat_b)
    for name, t in (("mat_a", mat_a), ("mat_b", mat_b)):
        if t.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    _check_layout(mat_a)
    _check_layout(mat_b)
    a2, b2 = mat_a.dim() == 2, mat_b.dim() == 2
    if (offs is not None) != (a2 or b2):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d")
    if offs is not None:
        if offs.dtype != _C.int32:
            raise RuntimeError("Offsets have to be int32")
        if offs.dim() != 1:
            raise RuntimeError("offs has to be 1D")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if not a2 and not b2:
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError("batched dimension has to match")
        return _C.bmm(mat_a, mat_b)
    count = offs.numel()
    if a2 and not b2:  # (M, K) x (G, K, N)
        if mat_b.shape[0] != count:
            raise RuntimeError("matrix batch sizes have to match")
        m, n = mat_a.shape[0], mat_b.shape[2]
        parts = [mat_a[s:e] @ mat_b[g] for g, (s, e) in enumerate(_groups(offs, m))]
        done = sum(p.shape[0] for p in parts)
        parts.append(_C.zeros((m - done, n), dtype=mat_a.dtype, device=mat_a.device))
        return _C.cat(parts, 0)
    if b2 and not a2:  # (G, M, K) x (K, N)
        if mat_a.shape[0] != count:
            raise RuntimeError("matrix batch sizes have to match")
        m, n = mat_a.shape[1], mat_b.shape[1]
        parts = [mat_a[g] @ mat_b[:, s:e] for g, (s, e) in enumerate(_groups(offs, n))]
        done = sum(p.shape[1] for p in parts)
        parts.append(_C.zeros((m, n - done), dtype=mat_a.dtype, device=mat_a.device))
        return _C.cat(parts, 1)
    # (M, K) x (K, N): the contraction is jagged
    k = mat_a.shape[1]
    parts = [mat_a[:, s:e] @ mat_b[s:e] for s, e in _groups(offs, k)]
    if not parts:
        return _C.zeros((0, mat_a.shape[0], mat_b.shape[1]), dtype=mat_a.dtype, device=mat_a.device)
    return _C.stack(parts, 0)
