"""torch._foreach_*: one op applied to each tensor of a list, with a number, a list of numbers, one
tensor or a second list of tensors as the other operand, chosen by PyTorch's overloads. This is
PyTorch's slow path (the one its fused kernels must agree with): each item is one op call into _C,
so the results, their dtypes, broadcasting, autograd and the errors of a single item are that op's.
Python loops over the tensors of a list, never over their elements.

The calls are matched to the overloads the way PyTorch's argument parser does (each overload a
list of parameters; a 0-dim tensor passes for a Number only where no overload takes it as a
Tensor), with PyTorch's TypeError where none matches and its RuntimeErrors for lists of different
lengths and for an empty list. In-place forms return their list of tensors, the others a tuple."""
from __future__ import annotations

import ast
import numbers

from . import _C
from ._stats import _dtype_title
from ._tensor import Tensor

_TYPE_TEXT = {"TL": "tuple of Tensors", "S": "Number", "SL": "tuple of Scalars", "T": "Tensor",
              "dtype": "ScalarType", "bool": "bool", "format": "memory_format"}
_ARG_TEXT = {"dtype": "minitorch.dtype"}  # the type a single overload's message names, where it differs


def _param(text: str):
    """'TL self', 'S alpha=1', '*' -> (type, name, default) or None for the keyword-only mark."""
    if text == "*":
        return None
    spec, _, default = text.partition("=")
    kind, name = spec.split()
    return kind, name, (ast.literal_eval(default) if default else _REQUIRED)


_REQUIRED = object()  # a parameter's default where it has none


class _Overload:
    """One of PyTorch's overloads of a foreach function: its tag ('Scalar', 'List', ...) and its
    parameters, from a signature written 'TL self, TL other, *, S alpha=1'."""

    def __init__(self, tag: str, sig: str):
        self.tag = tag
        params = [_param(p.strip()) for p in sig.split(",")]
        star = params.index(None) if None in params else len(params)
        self.npos = star
        self.params = [p for p in params if p is not None]
        self.text = ", ".join(self._show(p) for p in params)

    @staticmethod
    def _show(p):
        if p is None:
            return "*"
        kind, name, default = p
        shown = "" if default is _REQUIRED else f" = {default}"
        return f"{_TYPE_TEXT[kind]} {name}{shown}"

    def bind(self, name: str, args: tuple, kwargs: dict, lenient: bool) -> dict:
        """The parameters' values by name; _Mismatch with PyTorch's message for this overload
        alone where the call does not fit it."""
        names = [p[1] for p in self.params]
        if len(args) > self.npos:
            least = sum(p[2] is _REQUIRED for p in self.params)
            given = "was" if len(args) == 1 else "were"
            if least == self.npos:
                raise _Mismatch(f"{name}() takes {least} positional argument{'s' * (least != 1)} but "
                                f"{len(args)} {given} given")
            raise _Mismatch(f"{name}() takes from {least} to {self.npos} positional arguments but "
                            f"{len(args)} {given} given")
        for k in kwargs:
            if k not in names:
                raise _Mismatch(f"{name}() got an unexpected keyword argument '{k}'")
            if names.index(k) < len(args):
                raise _Mismatch(f"{name}() got multiple values for argument '{k}'")
        missing = [f'"{p[1]}"' for k, p in enumerate(self.params)
                   if p[2] is _REQUIRED and k >= len(args) and p[1] not in kwargs]
        if missing:  # (PyTorch's plural is the other way round, as python/args.c writes it)
            raise _Mismatch(f"{name}() missing {len(missing)} required positional argument"
                            f"{'s' * (len(missing) == 1)}: {', '.join(missing)}")
        vals = {}
        for k, (kind, pname, default) in enumerate(self.params):
            v = args[k] if k < len(args) else kwargs.get(pname, default)
            if not _fits(kind, v, lenient):
                where = f" (position {k + 1})" if k < len(args) else ""
                raise _Mismatch(f"{name}(): argument '{pname}'{where} must be {_ARG_TEXT.get(kind, _TYPE_TEXT[kind])}, "
                                f"not {type(v).__name__}")
            vals[pname] = v
        return vals


class _Mismatch(TypeError):
    pass


def _is_number(v, lenient: bool) -> bool:
    if isinstance(v, Tensor):
        return lenient and v.dim() == 0
    return isinstance(v, numbers.Number)


def _fits(kind: str, v, lenient: bool) -> bool:
    if kind == "TL":  # a list with a tensor in it; its other items are checked once it is chosen
        return isinstance(v, (list, tuple)) and (not v or any(isinstance(t, Tensor) for t in v))
    if kind == "SL":
        return isinstance(v, (list, tuple)) and all(_is_number(s, False) for s in v)
    if kind == "S":
        return _is_number(v, lenient)
    if kind == "T":
        return isinstance(v, Tensor)
    if kind == "dtype":
        return v is None or isinstance(v, _C.dtype)
    if kind == "bool":
        return isinstance(v, bool)
    return True  # a memory format: checked by clone itself


def _invalid_combination(name: str, args: tuple, kwargs: dict, overloads) -> TypeError:
    """PyTorch's message for a call that fits none of the overloads: the types given (keywords
    last, in the reverse of their order, as its parser lists them) and each overload."""
    got = [type(a).__name__ for a in args]
    given = [f"{k}={type(v).__name__}" for k, v in reversed(kwargs.items())]
    inner = ", ".join(got + given) if got else "".join(g + ", " for g in given)
    lines = "".join(f" * ({o.text})\n" for o in overloads)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({inner}), "
                     f"but expected one of:\n{lines}")


def _check_tensors(v: list, pos: int) -> None:
    for k, t in enumerate(v):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument {pos}, but got {type(t).__name__}")


def _resolve(name: str, overloads, args: tuple, kwargs: dict):
    """(overload tag, values by name) of the first overload that fits, strict Numbers first. With
    one overload, the message says what did not fit, as PyTorch's parser does."""
    for lenient in (False, True):
        for o in overloads:
            try:
                vals = o.bind(name, args, kwargs, lenient)
                break
            except _Mismatch as e:
                if len(overloads) == 1 and lenient:
                    raise TypeError(str(e)) from None
        else:
            continue
        break
    else:
        raise _invalid_combination(name, args, kwargs, overloads)
    n = None
    for k, (kind, pname, _) in enumerate(o.params):
        v = vals[pname]
        if kind == "TL":
            _check_tensors(v, k)
            if n is None and not v:
                raise RuntimeError("Tensor list must have at least one tensor.")
            if n is not None and len(v) != n:
                raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} and {len(v)}")
            n = len(v) if n is None else n
        elif kind == "SL" and len(v) != n:
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
    return o.tag, vals


def _define(name: str, sigs: dict, body, namespace: dict) -> None:
    """namespace[name]: a function that resolves its overloads (tag -> signature) and runs
    body(tag, values by name)."""
    overloads = [_Overload(tag, sig) for tag, sig in sigs.items()]

    def fn(*args, **kwargs):
        tag, vals = _resolve(name, overloads, args, kwargs)
        return body(tag, vals)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: " + "; ".join(f"({o.text})" for o in overloads)
    namespace[name] = fn


def _run(inplace: bool, ts, item):
    """item(k) for each tensor ts[k]: an in-place form changes ts's tensors and returns them in a
    list (ts itself where it is one), the others return their results in a tuple."""
    results = tuple(item(k) for k in range(len(ts)))
    return (ts if isinstance(ts, list) else list(ts)) if inplace else results


def _each(v, k):
    """The k-th operand of an item: a list's k-th element, a lone scalar or tensor as it is."""
    return v[k] if isinstance(v, (list, tuple)) else v


# ---- unary: the op of the same name on each tensor ----

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor",
          "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt",
          "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")


def _unary(method: str, inplace: bool):
    def body(tag, v):
        ts = v["self"]
        return _run(inplace, ts, lambda k: getattr(ts[k], method)())
    return body


# ---- binary: (self, other) with other a Number, numbers, a tensor or tensors ----

_SIGS = {
    "Scalar": "TL self, S scalar",
    "ScalarList": "TL self, SL scalars",
    "Tensor": "TL self, T other",
    "List": "TL self, TL other",
}
_ALPHA = ", *, S alpha=1"


def _binary_sigs(tags: str, alpha: bool) -> dict:
    return {t: _SIGS[t] + (_ALPHA if alpha and t in ("Tensor", "List") else "") for t in tags.split()}


def _scalar_tensor(t: Tensor) -> Tensor:
    if t.dim() != 0:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {t.dim()} dimensions and "
                           f"{t.numel()} elements.")
    return t


def _binary(scalar_op, tensor_op, inplace: bool):
    """scalar_op(x, s) and tensor_op(x, y, **alpha) compute one item."""
    def body(tag, v):
        ts = v["self"]
        other = v.get("scalar", v.get("scalars", v.get("other")))
        extra = {"alpha": v["alpha"]} if "alpha" in v else {}
        if tag == "Tensor":
            other = _scalar_tensor(other)
        op = scalar_op if tag in ("Scalar", "ScalarList") else tensor_op
        return _run(inplace, ts, lambda k: op(ts[k], _each(other, k), **extra))
    return body


def _replace(x: Tensor, value: Tensor) -> Tensor:
    """x's values become value's (an in-place form of an op without its own in-place method)."""
    return x.copy_(value)


_BINARY = {
    # name: (overloads, alpha, (scalar op, tensor op), (in-place scalar op, in-place tensor op))
    "add": ("Scalar ScalarList Tensor List", True, (Tensor.add, Tensor.add), (Tensor.add_, Tensor.add_)),
    "sub": ("Scalar ScalarList List", True, (Tensor.sub, Tensor.sub), (Tensor.sub_, Tensor.sub_)),
    "mul": ("Scalar ScalarList Tensor List", False, (Tensor.mul, Tensor.mul), (Tensor.mul_, Tensor.mul_)),
    "div": ("Scalar ScalarList Tensor List", False, (Tensor.div, Tensor.div), (Tensor.div_, Tensor.div_)),
    "clamp_min": ("Scalar ScalarList List", False, (Tensor.clamp_min, lambda x, y: x.clamp(min=y)),
                  (Tensor.clamp_min_, lambda x, y: x.clamp_(min=y))),
    "clamp_max": ("Scalar ScalarList List", False, (Tensor.clamp_max, lambda x, y: x.clamp(max=y)),
                  (Tensor.clamp_max_, lambda x, y: x.clamp_(max=y))),
    # a number bounds as clamp_min does (NaN stays NaN); a tensor takes maximum's NaN rule
    "maximum": ("Scalar ScalarList List", False, (Tensor.clamp_min, Tensor.maximum),
                (Tensor.clamp_min_, lambda x, y: _replace(x, x.maximum(y)))),
    "minimum": ("Scalar ScalarList List", False, (Tensor.clamp_max, Tensor.minimum),
                (Tensor.clamp_max_, lambda x, y: _replace(x, x.minimum(y)))),
}


def _pow(inplace: bool):
    def body(tag, v):
        if tag == "ScalarAndTensor":  # a number raised to each tensor
            ts = v["exponent"]
            return _run(False, ts, lambda k: _C.pow(v["self"], ts[k]))
        ts, e = v["self"], v["exponent"]
        op = Tensor.pow_ if inplace else Tensor.pow
        return _run(inplace, ts, lambda k: op(ts[k], _each(e, k)))
    return body


_POW_SIGS = {"List": "TL self, TL exponent", "Scalar": "TL self, S exponent",
             "ScalarList": "TL self, SL exponent"}


# ---- pointwise with two tensor lists: addcmul, addcdiv, lerp ----

def _scalar_values(t: Tensor, n: int) -> list:
    """A 1-D tensor of n values as numbers (the Tensor form of addcmul's scalars)."""
    if t.dim() != 1:
        raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got {t.dim()} instead.")
    if t.numel() != n:
        raise RuntimeError(f"Expected length of scalars to match input of length {n} but got {t.numel()} instead.")
    return t.tolist()


def _addc(method: str):
    def body(tag, v):
        ts, t1, t2 = v["self"], v["tensor1"], v["tensor2"]
        scale = v.get("value", v.get("scalars"))
        if tag == "Tensor":
            scale = _scalar_values(scale, len(ts))
        return _run(method.endswith("_"), ts,
                    lambda k: getattr(ts[k], method)(t1[k], t2[k], value=_each(scale, k)))
    return body


_ADDC_SIGS = {"Scalar": "TL self, TL tensor1, TL tensor2, S value=1",
              "ScalarList": "TL self, TL tensor1, TL tensor2, SL scalars",
              "Tensor": "TL self, TL tensor1, TL tensor2, T scalars"}


def _lerp(method: str):
    def body(tag, v):
        ts, ends = v["self"], v["tensors1"]
        w = v.get("weights", v.get("weight"))
        return _run(method.endswith("_"), ts, lambda k: getattr(ts[k], method)(ends[k], _each(w, k)))
    return body


_LERP_SIGS = {"List": "TL self, TL tensors1, TL weights", "Scalar": "TL self, TL tensors1, S weight",
              "ScalarList": "TL self, TL tensors1, SL weight"}


# ---- reductions to one value per tensor ----

def _norm(tag, v):
    ts, ord_ = v["self"], v["ord"]
    if ord_ == float("inf") and any(t.numel() == 0 for t in ts):
        raise RuntimeError("_foreach_norm cannot compute the infinity norm on an empty tensor because the "
                           "operation does not have an identity")
    return tuple(_C.linalg_vector_norm(t, ord_, dtype=v["dtype"]) for t in ts)


def _powsum(tag, v):
    """sum(|x| ** ord) of each tensor, in dtype where given."""
    ts, ord_, dtype = v["self"], v["ord"], v["dtype"]
    for t in ts:
        if not (t.is_floating_point() or t.is_complex()):
            raise NotImplementedError(f'"powsum_cpu" not implemented for \'{_dtype_title(t.dtype)}\'')
    return tuple((t if dtype is None else t.to(dtype)).abs().pow(ord_).sum() for t in ts)


def _max(tag, v):
    ts = v["self"]
    if any(t.numel() == 0 for t in ts):
        raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; max over zero "
                           "elements is undefined.")
    return tuple(t.max() for t in ts)


def install(namespace: dict) -> None:
    """Defines every torch._foreach_* function in namespace (the minitorch module's)."""
    for op in _UNARY:
        _define(f"_foreach_{op}", {"": "TL self"}, _unary(op, False), namespace)
        _define(f"_foreach_{op}_", {"": "TL self"}, _unary(op + "_", True), namespace)
    for op, (tags, alpha, ops, inplace_ops) in _BINARY.items():
        sigs = _binary_sigs(tags, alpha)
        _define(f"_foreach_{op}", sigs, _binary(*ops, False), namespace)
        _define(f"_foreach_{op}_", sigs, _binary(*inplace_ops, True), namespace)
    _define("_foreach_pow", {**_POW_SIGS, "ScalarAndTensor": "S self, TL exponent"}, _pow(False), namespace)
    _define("_foreach_pow_", _POW_SIGS, _pow(True), namespace)
    for op in ("addcmul", "addcdiv"):
        _define(f"_foreach_{op}", _ADDC_SIGS, _addc(op), namespace)
        _define(f"_foreach_{op}_", _ADDC_SIGS, _addc(op + "_"), namespace)
    _define("_foreach_lerp", _LERP_SIGS, _lerp("lerp"), namespace)
    _define("_foreach_lerp_", _LERP_SIGS, _lerp("lerp_"), namespace)
    _define("_foreach_zero_", {"": "TL self"}, _unary("zero_", True), namespace)
    _define("_foreach_copy_", {"": "TL self, TL src, bool non_blocking=False"},
            lambda tag, v: _run(True, v["self"], lambda k: v["self"][k].copy_(v["src"][k], v["non_blocking"])),
            namespace)
    _define("_foreach_clone", {"": "TL self, *, format memory_format=None"},
            lambda tag, v: tuple(t.clone(memory_format=v["memory_format"]) if v["memory_format"] is not None
                                 else t.clone() for t in v["self"]), namespace)
    _define("_foreach_mm", {"": "TL self, TL mat2"},
            lambda tag, v: tuple(_C.mm(a, b) for a, b in zip(v["self"], v["mat2"])), namespace)
    _define("_foreach_norm", {"": "TL self, S ord=2, dtype dtype=None"}, _norm, namespace)
    _define("_foreach_powsum", {"": "TL self, S ord=2, dtype dtype=None"}, _powsum, namespace)
    _define("_foreach_max", {"": "TL self"}, _max, namespace)
