"""torch.functional: einsum, norm, broadcast_tensors and broadcast_shapes, and the argument
binding torch/functional.py does for meshgrid, cartesian_prod, block_diag, atleast_1d/2d/3d,
tensordot and cdist (each then one op of _C).

norm is torch.norm as torch/functional.py writes it: a vector norm for a number p (or 'fro'
over at most two dims), else linalg.matrix_norm ('nuc'), over dim or all of input.

einsum is a composite: the equation is parsed here, and the operands are contracted a pair at a
time with views (permute, reshape, expand, as_strided for a repeated subscript) and one product
through the dispatcher: mm or bmm when subscripts are summed over, mul (broadcast) when none is,
sum for a subscript only one operand has. "..." stands for broadcast dims, right-aligned across
operands as NumPy and PyTorch align them. No tensor value is computed in Python.
"""
from __future__ import annotations

import warnings
from typing import Dict, List, Sequence, Tuple

from . import _C
from ._checks import _tensors

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "cdist", "einsum", "lu", "meshgrid", "norm", "tensordot"]

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


def _contraction_order(ops: List[Term], out: str) -> List[Tuple[int, ...]]:
    """The pairs einsum contracts, each result appended to the operands left: opt_einsum's path
    for backends.opt_einsum.strategy where it is installed and enabled (as PyTorch's), else the
    first two operands each time (left to right)."""
    if len(ops) < 2:
        return []
    from .backends import opt_einsum

    oe = opt_einsum.get_opt_einsum()
    if len(ops) < 3 or oe is None or not opt_einsum.enabled:
        return [(0, 1)] * (len(ops) - 1)
    letters = {c: oe.get_symbol(i) for i, c in enumerate(dict.fromkeys("".join(s for _, s in ops) + out))}
    spelled = ",".join("".join(letters[c] for c in s) for _, s in ops) + "->" + "".join(letters[c] for c in out)
    path, _ = oe.contract_path(spelled, *[tuple(t.shape) for t, _ in ops], shapes=True,
                               optimize=opt_einsum.strategy)
    return [tuple(sorted(pair)) for pair in path]


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
    for pair in _contraction_order(ops, out):
        if len(pair) == 1:  # a path may sum one operand over its own subscripts first
            rest = [op for k, op in enumerate(ops) if k != pair[0]]
            ops = rest + [_sum_out(*ops[pair[0]], set(out).union(*[s for _, s in rest]))]
            continue
        (a, sa), (b, sb) = ops[pair[0]], ops[pair[1]]
        ops = [op for k, op in enumerate(ops) if k not in pair]
        later = set(out).union(*[s for _, s in ops])
        a, sa = _sum_out(a, sa, later | set(sb))
        b, sb = _sum_out(b, sb, later | set(sa))
        ops.append(_contract(a, sa, b, sb, later, sizes))
    t, s = _sum_out(*ops[0], set(out))
    return t.permute([s.index(c) for c in out])


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The p-norm of input (over dim, or all of it): a vector norm for a number p, and for 'fro'
    over at most two dims; the matrix norm (linalg.matrix_norm) for 'nuc'."""
    _tensors("norm", input=input)
    _dim = [dim] if isinstance(dim, int) else dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return _C.linalg_vector_norm(input, 2, _dim, keepdim, dtype=dtype, out=out)
        if _dim is None:
            _dim = list(range(input.dim()))
        return _C.linalg_matrix_norm_str(input, p, _dim, keepdim, dtype=dtype, out=out)
    return _C.linalg_vector_norm(input, 2.0 if p is None else p, _dim, keepdim, dtype=dtype, out=out)


_meshgrid_warned = False  # PyTorch warns once per process (TORCH_WARN_ONCE), whatever the filters


def meshgrid(*tensors, indexing: "str | None" = None) -> tuple:
    """The grids of 0- or 1-dim tensors: grid k holds tensors[k] along dim k, expanded to all their
    lengths (views). indexing 'ij' (the default, with a warning the first time it is not given, as PyTorch) or 'xy'
    (the first two dims swapped). The tensors may also be given as one list."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    global _meshgrid_warned
    if indexing is None and not _meshgrid_warned:
        _meshgrid_warned = True
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
    return _C.meshgrid(list(tensors), indexing=indexing)


def cartesian_prod(*tensors) -> "_C.TensorBase":
    """Every combination of one element of each 1-D tensor, as the rows of an (N, len(tensors))
    tensor (itertools.product's order)."""
    return _C.cartesian_prod(list(tensors))


def block_diag(*tensors) -> "_C.TensorBase":
    """The tensors (each 0-, 1- or 2-dim) as blocks on the diagonal of a zero matrix."""
    return _C.block_diag(list(tensors))


def _atleast(op, tensors):
    if len(tensors) == 1:
        tensors = tensors[0]
    if isinstance(tensors, _C.TensorBase):
        return op(tensors)
    if not isinstance(tensors, (list, tuple)):
        return op(tensors)  # op's TypeError for what is not a tensor
    return tuple(op(t) for t in tensors)


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (a 0-dim one reshaped to (1)); one tensor, or a tuple."""
    return _atleast(_C.atleast_1d, tensors)


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims ((1, 1), or (1, n)); one tensor, or a tuple."""
    return _atleast(_C.atleast_2d, tensors)


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims ((1, 1, 1), (1, n, 1) or (m, n, 1)); one tensor, or a tuple."""
    return _atleast(_C.atleast_3d, tensors)


def tensordot(a, b, dims=2, out=None) -> "_C.TensorBase":
    """The sum of products of a and b over their last `dims` and first `dims` dims (dims an int), or
    over the dims of two lists ([dims of a], [dims of b]), or of a (2, k) or one-element tensor."""
    _tensors("tensordot", a=a, b=b)
    if not isinstance(dims, (tuple, list, _C.TensorBase, int)) or isinstance(dims, bool):
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    elif isinstance(dims, _C.TensorBase) and dims.numel() > 1:
        dims_a, dims_b = dims[0].tolist(), dims[1].tolist()
    else:
        n = int(dims.item()) if isinstance(dims, _C.TensorBase) else dims
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if isinstance(dims, int) and n > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-n, 0)), list(range(n))
    dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
    dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    return _C.tensordot(a, b, dims_a, dims_b, out=out)


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> "_C.TensorBase":
    """The p-norm distance between each row of x1 (B.., P, M) and each row of x2 (B.., R, M):
    (B.., P, R). minitorch computes every mode the same way (the norm of the differences)."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return _C.cdist(x1, x2, p, _CDIST_MODES[compute_mode])


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (views; one op, broadcast_tensors)."""
    return tuple(_C.broadcast_tensors(tensors))


def broadcast_shapes(*shapes):
    """The shape tensors of these shapes broadcast to (PyTorch's torch.functional version: ints
    stand for 1-D shapes, None is skipped), computed without tensors."""
    from collections.abc import Sequence

    shapes = tuple((s,) if isinstance(s, int) else s for s in shapes if s is not None)
    if not shapes:
        return _C.Size([])
    for shape in shapes:
        if not isinstance(shape, Sequence):
            raise RuntimeError(
                f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}")
    common = [1] * max(len(shape) for shape in shapes)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            if shape[idx] != 1 and common[idx] != shape[idx]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! Mismatching "
                    f"argument at index {arg_idx} had {shape}; but expected shape should be broadcastable "
                    f"to {common}")
    return _C.Size(common)


def lu(A, pivot: bool = True, get_infos: bool = False, out=None):
    """torch.lu (deprecated for linalg.lu_factor and linalg.lu_factor_ex): (LU, pivots), or with
    get_infos (LU, pivots, infos). As PyTorch's, a matrix with a zero pivot raises in neither."""
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
                  "removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced "
                  "with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
                  "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
                  "torch.linalg.lu_factor_ex(A, compute_pivots)", UserWarning, stacklevel=2)
    result = _C.linalg_lu_factor_ex(A, pivot=pivot)
    if out is not None:
        for dst, src in zip(out, result):
            dst.resize_(src.shape).copy_(src)
        result = out
    return tuple(result) if get_infos else (result[0], result[1])
