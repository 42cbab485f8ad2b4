"""torch.functional: einsum and norm.

norm is torch.norm as torch/functional.py writes it: a vector norm for a number p (or 'fro'
over at most two dims), else linalg.matrix_norm ('nuc'), over dim or all of input.

einsum is a composite: the equation is parsed here, and the operands are contracted a pair at a
time with views (permute, reshape, expand, as_strided for a repeated subscript) and one product
through the dispatcher: mm or bmm when subscripts are summed over, mul (broadcast) when none is,
sum for a subscript only one operand has. "..." stands for broadcast dims, right-aligned across
operands as NumPy and PyTorch align them. No tensor value is computed in Python.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from . import _C

__all__ = ["einsum", "norm"]

Term = Tuple["_C.TensorBase", str]


def _check_subscripts(parts: List[str]) -> None:
    pos = 0
    for part in parts:
        for c in part.replace("...", "\0\0\0"):
            if not ("a" <= c <= "z" or "A" <= c <= "Z" or c == "\0"):
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {pos} in the equation string, "
                    "subscripts must be in [a-zA-Z]"
                )
            pos += 1
        pos += 1


def _parse(equation: str, operands: Sequence) -> Tuple[List[str], str]:
    """The operands' subscripts and the output's, with "..." spelt out as characters outside
    [a-zA-Z] (one per broadcast dim, right-aligned across operands)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    _check_subscripts(terms + ([rhs] if arrow else []))
    n_ell = 0
    for i, (t, op) in enumerate(zip(terms, operands)):
        named = len(t) - (3 if "..." in t else 0)
        if named > op.dim() or ("..." not in t and named != op.dim()):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({named}) does not match the number "
                f"of dimensions ({op.dim()}) for operand {i}"
                + ("" if "..." in t else " and no ellipsis was given")
            )
        if "..." in t:
            n_ell = max(n_ell, op.dim() - named)
    ell = "".join(chr(0x100 + k) for k in range(n_ell))
    terms = [t.replace("...", ell[n_ell - (op.dim() - len(t) + 3):] if n_ell else "")
             for t, op in zip(terms, operands)]
    seen = "".join(terms)
    if not arrow:
        # Implicit output: broadcast dims, then the subscripts that appear once, in alphabetical
        # order (A-Z before a-z).
        return terms, ell + "".join(sorted(c for c in set(seen) if seen.count(c) == 1 and c not in ell))
    rhs = rhs.replace("...", ell)
    for c in rhs:
        if rhs.count(c) > 1:
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
        if c not in seen:
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input operand")
    return terms, rhs


def _diagonal(t: "_C.TensorBase", s: str, i: int) -> Term:
    """A repeated subscript ("ii") takes the diagonal: one dim whose stride is the sum."""
    if len(set(s)) == len(s):
        return t, s
    letters = "".join(dict.fromkeys(s))
    sizes, strides = [], []
    for c in letters:
        dims = [d for d, x in enumerate(s) if x == c]
        for d in dims[1:]:
            if t.shape[d] != t.shape[dims[0]]:
                raise RuntimeError(
                    f"einsum(): subscript {c} is repeated for operand {i} but the sizes don't match, "
                    f"{t.shape[d]} != {t.shape[dims[0]]}"
                )
        sizes.append(t.shape[dims[0]])
        strides.append(sum(t.stride(d) for d in dims))
    return _C.as_strided(t, sizes, strides, t.storage_offset()), letters


def _sum_out(t: "_C.TensorBase", s: str, keep: set) -> Term:
    dims = [d for d, c in enumerate(s) if c not in keep]
    if not dims:
        return t, s
    return t.sum(dims), "".join(c for c in s if c in keep)


def _expand(t: "_C.TensorBase", s: str, sizes: Dict[str, int]) -> "_C.TensorBase":
    want = [sizes[c] for c in s]
    return t if list(t.shape) == want else t.expand(want)


def _contract(a: "_C.TensorBase", sa: str, b: "_C.TensorBase", sb: str, keep: set,
              sizes: Dict[str, int]) -> Term:
    """The product of two operands, summed over their shared subscripts not in keep."""
    batch = [c for c in sa if c in sb and c in keep]
    summed = [c for c in sa if c in sb and c not in keep]
    a_only = [c for c in sa if c not in sb]
    b_only = [c for c in sb if c not in sa]
    out = "".join(batch + a_only + b_only)
    if not summed:
        # A broadcast product: both operands laid out as out, with size-1 dims for the other's.
        pa = a.permute([sa.index(c) for c in batch + a_only])
        pb = b.permute([sb.index(c) for c in batch + b_only])
        shape_a = [pa.shape[k] for k in range(len(batch) + len(a_only))] + [1] * len(b_only)
        shape_b = list(pb.shape[: len(batch)]) + [1] * len(a_only) + list(pb.shape[len(batch):])
        return _C.mul(pa.reshape(shape_a), pb.reshape(shape_b)), out
    a, b = _expand(a, sa, sizes), _expand(b, sb, sizes)

    def numel(letters):
        n = 1
        for c in letters:
            n *= sizes[c]
        return n

    nb, m, k, n = numel(batch), numel(a_only), numel(summed), numel(b_only)
    pa = a.permute([sa.index(c) for c in batch + a_only + summed])
    pb = b.permute([sb.index(c) for c in batch + summed + b_only])
    if batch:
        r = _C.bmm(pa.reshape([nb, m, k]), pb.reshape([nb, k, n]))
    else:
        r = _C.mm(pa.reshape([m, k]), pb.reshape([k, n]))
    return r.reshape([sizes[c] for c in out]), out


def einsum(equation: str, *operands: "_C.TensorBase") -> "_C.TensorBase":
    """Sums the product of the operands' elements over the subscripts the output leaves out:
    einsum("ij,jk->ik", a, b) is a @ b. Operands may also be given as one list."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for t in operands:
        if not isinstance(t, _C.TensorBase):
            raise TypeError(f"einsum(): operands must be Tensors, not {type(t).__name__}")
    terms, out = _parse(equation, operands)
    sizes: Dict[str, int] = {}
    ops: List[Term] = []
    for i, (s, t) in enumerate(zip(terms, operands)):
        t, s = _diagonal(t, s, i)
        for c, size in zip(s, t.shape):
            seen = sizes.get(c, size)
            if seen != size and seen != 1 and size != 1:
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {size} for operand {i} which does not broadcast "
                    f"with previously seen size {seen}"
                )
            sizes[c] = max(seen, size) if size != 0 and seen != 0 else 0
        ops.append((t, s))
    while len(ops) > 1:
        (a, sa), (b, sb) = ops[0], ops[1]
        later = set(out).union(*[s for _, s in ops[2:]])
        a, sa = _sum_out(a, sa, later | set(sb))
        b, sb = _sum_out(b, sb, later | set(sa))
        ops = [_contract(a, sa, b, sb, later, sizes)] + ops[2:]
    t, s = _sum_out(*ops[0], set(out))
    return t.permute([s.index(c) for c in out])


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The p-norm of input (over dim, or all of it): a vector norm for a number p, and for 'fro'
    over at most two dims; the matrix norm (linalg.matrix_norm) for 'nuc'."""
    if out is not None:
        raise NotImplementedError("norm(out=...) is not supported")
    _dim = [dim] if isinstance(dim, int) else dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return _C.linalg_vector_norm(input, 2, _dim, keepdim, dtype=dtype)
        if _dim is None:
            _dim = list(range(input.dim()))
        return _C.linalg_matrix_norm_str(input, p, _dim, keepdim, dtype=dtype)
    return _C.linalg_vector_norm(input, 2.0 if p is None else p, _dim, keepdim, dtype=dtype)
