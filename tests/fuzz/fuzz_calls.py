"""The fuzzer's call generator and checker, run inside the worker subprocess (fuzz_worker.py).

A call is drawn by hypothesis from the operator table (`_C.OPS` and each op's schema), the Tensor
methods and operators, indexing, and nn.functional, with arguments that are often wrong: wrong
shapes and dtypes, negative or huge sizes, out-of-range dims and indices, non-tensor objects, NaN
and inf, empty tensors, overlapping in-place views. Each argument carries the Python source that
rebuilds it, so a failing call is reported as a line one can paste (`src`).

A call passes when it raises one of PyTorch's exception classes, or returns well-formed tensors
(and, for the ops of REFS with float inputs, values equal to NumPy's float64 reference).
"""
from __future__ import annotations

import functools
import inspect
import math
import operator
import re

import numpy as np
from hypothesis import strategies as st

import minitorch
import minitorch.nn.functional as F
from minitorch import _C

# What a bad call may raise: PyTorch's classes (minitorch's own errors subclass these).
ALLOWED = (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError)
# The few AssertionErrors that PyTorch raises itself, with these words, and minitorch copies.
TORCH_ASSERTIONS = ("Padding_idx must be within num_embeddings", "not compiled with CUDA enabled")
# Python's own OverflowErrors that PyTorch lets through too: an integer 0-dim tensor is an index,
# so `tensor(2**63 - 1) * 'abc'` is str repetition; and a Python int outside both int64 and
# uint64 as a number argument (`t + 2**64`, `t.add(-(2**70))`), whose conversion PyTorch 2.13
# leaves to Python's (checked against torch: the same class and words).
PYTHON_OVERFLOWS = ("repeated string is too long", "repeated bytes are too long", "cannot fit 'int' into an index",
                    "int too big to convert", "can't convert negative int to unsigned")

DTYPES = ("float32", "float64", "int64", "int32", "bool")
MT_DTYPE = {d: getattr(minitorch, d) for d in DTYPES}
# Sizes that can never be allocated, next to the small ones; no size in between (one that a
# machine could allocate and fill would only make the fuzzer slow).
INTS = (0, 1, 2, 3, -1, -2, -3, 4, 5, 2**40, 2**62, 2**63 - 1, -(2**63), 2**64, -(2**70))
FLOATS = (0.0, -0.0, 1.0, -1.0, 0.5, 2.5, float("nan"), float("inf"), float("-inf"), 1e300, -1e-310, 3.0)


class Junk:
    """An object of no type an op knows."""

    def __repr__(self):
        return "Junk()"


JUNK = (None, "abc", [1, "x"], {"a": 1}, Junk(), 1.5, (), [], b"\x00", np.float64(2.0), np.arange(3))


class Arg:
    """A value and the Python source that rebuilds it."""

    def __init__(self, value, src, array=None):
        self.value, self.src, self.array = value, src, array

    def __repr__(self):
        return self.src


def _lit(a: np.ndarray) -> str:
    txt = repr(a.tolist()).replace("nan", "float('nan')").replace("inf", "float('inf')")
    return f"np.array({txt}, dtype='{a.dtype}').reshape({a.shape})"


def make_tensor(a: np.ndarray, layout: str, device: str = "cpu"):
    """A minitorch tensor equal to a, laid out as asked; the layout goes into the source. On
    another device, the same view ops on a copy there give it the CPU one's strides."""
    if layout == "expanded" and not (a.ndim >= 1 and a.shape[0] == 1):
        layout = "contiguous"

    def base(x):
        t = minitorch.tensor(x)
        return t if device == "cpu" else t.to(device)
    t = base(a)
    if layout == "transposed" and a.ndim >= 2:
        t = base(np.ascontiguousarray(a.transpose())).permute(*reversed(range(a.ndim)))
    elif layout == "sliced" and a.ndim >= 1:
        wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
        wide[..., ::2] = a
        t = base(wide)[..., ::2]
    elif layout == "expanded":
        t = base(a).expand(*((3,) + a.shape[1:]))
        a = np.broadcast_to(a, (3,) + a.shape[1:])
    return t, a, layout


# Every tensor tensors() drew, by id: (tensor, array, layout), so that the CUDA mode
# (fuzz_cuda.py) can rebuild it on the device with the same values and strides. The worker
# clears it after each batch of calls.
MADE = {}


@st.composite
def arrays(draw, max_dims=4):
    dtype = draw(st.sampled_from(DTYPES))
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=max_dims)))
    n = int(np.prod(shape))
    if dtype == "bool":
        vals = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    elif dtype.startswith("int"):
        big = 2**31 - 1 if dtype == "int32" else 2**63 - 1
        vals = draw(st.lists(st.one_of(st.integers(-5, 5), st.sampled_from([big, -big - 1])), min_size=n, max_size=n))
    else:
        vals = draw(st.lists(st.one_of(st.floats(-10, 10, width=32), st.sampled_from(FLOATS)), min_size=n, max_size=n))
    return np.array(vals, dtype=dtype).reshape(shape)


@st.composite
def tensors(draw, max_dims=4):
    a = draw(arrays(max_dims))
    layout = draw(st.sampled_from(("contiguous", "contiguous", "transposed", "sliced", "expanded")))
    t, b, layout = make_tensor(a, layout)
    MADE[id(t)] = (t, a, layout)
    return Arg(t, f"make_tensor({_lit(a)}, '{layout}')", b)


def junk():
    return st.sampled_from(JUNK).map(lambda j: Arg(j, repr(j)))


def ints():
    return st.one_of(st.sampled_from(INTS), st.integers(-6, 6)).map(lambda i: Arg(i, repr(i)))


def scalars():
    return st.one_of(st.sampled_from(FLOATS), st.sampled_from(INTS), st.booleans()).map(lambda s: Arg(s, repr(s)))


def int_lists():
    lists = st.lists(st.sampled_from(INTS[:9]) | st.sampled_from(INTS), max_size=5)
    return st.one_of(lists.map(lambda xs: Arg(xs, repr(xs))), lists.map(lambda xs: Arg(tuple(xs), repr(tuple(xs)))), ints())


def _arg_strategy(typ: str):
    """The strategy for one schema type (PyTorch's schema language)."""
    optional = typ.endswith("?")
    base = typ.rstrip("?")
    if base == "Tensor":
        s = st.one_of(tensors(), tensors(), tensors(), junk())
    elif base == "Tensor|Scalar":
        s = st.one_of(tensors(), scalars(), junk())
    elif base == "Scalar":
        s = st.one_of(scalars(), scalars(), junk())
    elif base == "int":
        s = st.one_of(ints(), ints(), junk())
    elif base.startswith("int["):
        s = st.one_of(int_lists(), int_lists(), junk())
    elif base == "bool":
        s = st.one_of(st.booleans().map(lambda b: Arg(b, repr(b))), ints(), junk())
    elif base == "str":
        s = st.one_of(st.sampled_from(("none", "tanh", "floor", "trunc", "", "bogus")).map(lambda x: Arg(x, repr(x))), junk())
    elif base == "Data":
        s = weird_data()
    elif base == "Eq":
        s = st.one_of(st.sampled_from(EQUATIONS).map(lambda x: Arg(x, repr(x))), junk())
    elif base == "ScalarType":
        s = st.one_of(st.sampled_from(DTYPES).map(lambda d: Arg(MT_DTYPE[d], f"minitorch.{d}")), junk())
    elif base == "Device":
        s = st.one_of(st.sampled_from(("cpu", "cuda", "bogus", "cpu:0")).map(lambda x: Arg(x, repr(x))), junk())
    elif base in ("Tensor[]", "Tensor?[]"):
        item = st.one_of(tensors(), tensors(), junk()) if base == "Tensor[]" else st.one_of(tensors(), junk(), ints())
        s = st.one_of(st.lists(item, max_size=3).map(lambda xs: Arg([x.value for x in xs], f"[{', '.join(x.src for x in xs)}]")), junk())
    else:
        s = st.one_of(scalars(), junk())
    if optional:
        s = st.one_of(st.just(Arg(None, "None")), s)
    return s


_PARAM = re.compile(r"\s*([\w\[\]\|\?0-9]+)\s+(\w+)(?:\s*=\s*(.+))?")


def _parse_schema(schema: str):
    """[(type, name, has_default, kwarg_only)] of a schema string."""
    inside = schema[schema.index("(") + 1 : schema.rindex(")")]
    params, kwonly = [], False
    for part in (p.strip() for p in inside.split(",")) if inside else ():
        if part == "*":
            kwonly = True
            continue
        m = _PARAM.match(part)
        if m:
            params.append((m.group(1), m.group(2), m.group(3) is not None, kwonly))
    return params


# Every callable the fuzzer targets: (label, params), label "module.name" (a key of MODULES) or
# "Tensor.method" (a method of the first argument), params [(schema type, name, has_default, kwonly)].
MODULES = {"minitorch": minitorch, "_C": _C, "F": F, "Tensor": minitorch.Tensor}
OP_SCHEMAS = {}
for name in _C.OPS:
    info = _C._op_info(name)
    OP_SCHEMAS[name] = (info, _parse_schema(info["schema"]))


def _op_targets():
    out = []
    for name, (info, params) in OP_SCHEMAS.items():
        pyname = info["schema"].split("(")[0]
        if info["function"] and hasattr(minitorch, pyname):
            out.append(("minitorch." + pyname, params))
        if info["method"] and hasattr(minitorch.Tensor, pyname) and params and params[0][0].startswith("Tensor"):
            out.append(("Tensor." + pyname, params))
        if not info["function"] and not info["method"] and hasattr(_C, pyname):
            out.append(("_C." + pyname, params))
    return out


# nn.functional, typed from the names of the parameters.
_F_TYPES = {"input": "Tensor", "target": "Tensor", "weight": "Tensor?", "bias": "Tensor?", "pos_weight": "Tensor?",
            "running_mean": "Tensor?", "running_var": "Tensor?", "tensor": "Tensor", "dim": "int?",
            "kernel_size": "int[]", "stride": "int[]?", "padding": "int[]", "dilation": "int[]",
            "output_size": "int[]", "normalized_shape": "int[]", "num_classes": "int", "groups": "int",
            "reduction": "str", "approximate": "str", "p": "Scalar", "eps": "Scalar", "momentum": "Scalar",
            "label_smoothing": "Scalar", "training": "bool", "inplace": "bool", "ceil_mode": "bool",
            "ignore_index": "int", "padding_idx": "int?", "dtype": "ScalarType?"}


def _f_targets():
    out = []
    for name in dir(F):
        fn = getattr(F, name)
        if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != F.__name__:
            continue
        params = []
        for p in inspect.signature(fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name.startswith("_"):
                break  # a private parameter (softmax's _stacklevel) is no API to fuzz
            typ = _F_TYPES.get(p.name, "Scalar" if isinstance(p.default, float) else "int?")
            if p.name == "reduction":
                typ = "Fstr"
            params.append((typ, p.name, p.default is not p.empty, p.kind == p.KEYWORD_ONLY))
        out.append(("F." + name, params))
    return out


# NumPy arrays and Python data that minitorch.tensor / from_numpy meet in the wild.
WEIRD_DATA = {
    "np.zeros((2, 3), 'float16')": np.zeros((2, 3), "float16"),
    "np.ones(3, 'complex64')": np.ones(3, "complex64"),
    "np.arange(6, dtype='uint8')": np.arange(6, dtype="uint8"),
    "np.arange(6, dtype='int8')[::-2]": np.arange(6, dtype="int8")[::-2],
    "np.array([1, 'a'], dtype=object)": np.array([1, "a"], dtype=object),
    "np.array(['ab', 'c'])": np.array(["ab", "c"]),
    "np.arange(12.0).reshape(3, 4)[:, ::-1]": np.arange(12.0).reshape(3, 4)[:, ::-1],
    "np.arange(12.0).reshape(3, 4).T": np.arange(12.0).reshape(3, 4).T,
    "np.broadcast_to(np.arange(3.0), (4, 3))": np.broadcast_to(np.arange(3.0), (4, 3)),
    "np.zeros((0, 3))": np.zeros((0, 3)),
    "np.float32(2.5)": np.float32(2.5),
    "np.array(7)": np.array(7),
    "np.zeros((1,) * 32)": np.zeros((1,) * 32),
    "np.array([0, 1, 255], dtype='uint8').view(bool)": np.array([0, 1, 255], dtype="uint8").view(bool),
    "np.array([True, False])": np.array([True, False]),
    "[[1, 2], [3]]": [[1, 2], [3]],
    "[[1, 2], 3]": [[1, 2], 3],
    "[1, None]": [1, None],
    "[1.5, float('nan'), 2**70]": [1.5, float("nan"), 2**70],
    "[[]]": [[]],
    "[[[[[[[[[[1]]]]]]]]]]": [[[[[[[[[[1]]]]]]]]]],
    "functools.reduce(lambda a, _: [a], range(200), 1)": functools.reduce(lambda a, _: [a], range(200), 1),
    "[True, 2, 3.5]": [True, 2, 3.5],
    "(1, 2)": (1, 2),
    "2**64": 2**64,
    "range(3)": range(3),
}


def weird_data():
    return st.one_of(st.sampled_from(sorted(WEIRD_DATA)).map(lambda k: Arg(WEIRD_DATA[k], k)), junk(), scalars(), tensors())


EQUATIONS = ("ij,jk->ik", "ii->i", "ii", "i,i->", "...ij->...ji", "ab->ba", "bij,bjk->bik", "i->", "->", "ij->k",
             "i,j->ij", "aa->", "ij,jk", "bogus", "", "i j->", "I,I->", "ab,ab,ab->")

# Public functions and methods outside the op table: (label, params) with schema types, plus
# "Data" (anything minitorch.tensor might be handed) and "Eq" (an einsum equation).
EXTRA = {
    "minitorch.tensor": [("Data", "data", False, False), ("ScalarType?", "dtype", True, True),
                         ("Device?", "device", True, True), ("bool", "requires_grad", True, True)],
    "minitorch.from_numpy": [("Data", "ndarray", False, False)],
    "minitorch.einsum": [("Eq", "equation", False, False), ("Tensor", "a", False, False), ("Tensor", "b", True, False)],
    "minitorch.argwhere": [("Tensor", "input", False, False)],
    "minitorch.unique": [("Tensor", "input", False, False), ("bool", "sorted", True, False),
                         ("bool", "return_inverse", True, False), ("bool", "return_counts", True, False),
                         ("int?", "dim", True, False)],
    "minitorch.numel": [("Tensor", "input", False, False)],
    "minitorch.zeros_like": [("Tensor", "input", False, False), ("ScalarType?", "dtype", True, True)],
    "minitorch.full_like": [("Tensor", "input", False, False), ("Scalar", "fill_value", False, False),
                            ("ScalarType?", "dtype", True, True)],
    "minitorch.randint_like": [("Tensor", "input", False, False), ("int", "low", False, False), ("int", "high", True, False)],
    "minitorch.rand_like": [("Tensor", "input", False, False), ("ScalarType?", "dtype", True, True)],
    "Tensor.size": [("Tensor", "self", False, False), ("int?", "dim", True, False)],
    "Tensor.stride": [("Tensor", "self", False, False), ("int?", "dim", True, False)],
    "Tensor.item": [("Tensor", "self", False, False)],
    "Tensor.tolist": [("Tensor", "self", False, False)],
    "Tensor.numpy": [("Tensor", "self", False, False)],
    "Tensor.to": [("Tensor", "self", False, False), ("ScalarType?", "a", True, False), ("Device?", "b", True, False)],
    "Tensor.type": [("Tensor", "self", False, False), ("str", "dtype", True, False)],
    "Tensor.new_zeros": [("Tensor", "self", False, False), ("int[]", "size", False, False)],
    "Tensor.new_ones": [("Tensor", "self", False, False), ("int[]", "size", False, False)],
    "Tensor.new_empty": [("Tensor", "self", False, False), ("int[]", "size", False, False)],
    "Tensor.new_tensor": [("Tensor", "self", False, False), ("Data", "data", False, False)],
    "Tensor.requires_grad_": [("Tensor", "self", False, False), ("bool", "requires_grad", True, False)],
    "Tensor.backward": [("Tensor", "self", False, False), ("Tensor?", "gradient", True, False)],
    "Tensor.unique": [("Tensor", "self", False, False), ("bool", "sorted", True, False), ("int?", "dim", True, True)],
    "Tensor.argwhere": [("Tensor", "self", False, False)],
    "Tensor.view": [("Tensor", "self", False, False), ("ScalarType", "dtype", False, False)],
    "Tensor.repeat": [("Tensor", "self", False, False), ("int", "a", False, False), ("int", "b", True, False)],
    "Tensor.permute": [("Tensor", "self", False, False), ("int", "a", False, False), ("int", "b", True, False)],
    "Tensor.reshape": [("Tensor", "self", False, False), ("int", "a", False, False), ("int", "b", True, False)],
    "Tensor.expand": [("Tensor", "self", False, False), ("int", "a", False, False), ("int", "b", True, False)],
    "Tensor.sum": [("Tensor", "self", False, False), ("int", "a", False, False), ("int", "b", True, False)],
    "Tensor.max": [("Tensor", "self", False, False), ("Tensor|Scalar", "other", False, False)],
}


def _extra_targets():
    out = []
    for label, params in EXTRA.items():
        where, name = label.split(".")
        if hasattr(MODULES[where], name):
            out.append((label, params))
    return out


TARGETS = _op_targets() + _f_targets() + _extra_targets()

BINOPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
          "%": operator.mod, "**": operator.pow, "@": operator.matmul, "==": operator.eq, "<": operator.lt,
          "&": operator.and_, "|": operator.or_, "+=": operator.iadd, "*=": operator.imul, "-=": operator.isub}


def index_items():
    one = st.one_of(ints(), st.sampled_from([slice(None), slice(1, None), slice(None, None, 2), slice(-2, 2 ** 62),
                                             slice(None, None, -1), slice(None, None, 0), None, Ellipsis, True])
                    .map(lambda x: Arg(x, repr(x))), tensors(max_dims=2), junk(),
                    st.lists(st.integers(-5, 5), max_size=3).map(lambda xs: Arg(xs, repr(xs))))
    return st.one_of(one, st.lists(one, max_size=4).map(lambda xs: Arg(tuple(x.value for x in xs), f"({''.join(x.src + ', ' for x in xs)})")))


def _same(value):
    return value


@st.composite
def calls(draw):
    """One call: (label, source, thunk, check-info). thunk(conv) makes the call with conv(value)
    for each argument value (conv walks lists, tuples and dicts itself): the CUDA mode passes one
    that puts the tensors on the device."""
    kind = draw(st.sampled_from(("op",) * 8 + ("binop", "getitem", "setitem", "overlap")))
    if kind == "binop":
        sym = draw(st.sampled_from(sorted(BINOPS)))
        a, b = draw(tensors()), draw(st.one_of(tensors(), scalars(), junk()))
        return "op " + sym, f"{a.src} {sym} {b.src}", lambda conv=_same: BINOPS[sym](conv(a.value), conv(b.value)), None
    if kind in ("getitem", "setitem"):
        x, idx = draw(tensors()), draw(index_items())
        if kind == "getitem":
            return "getitem", f"{x.src}[{idx.src}]", lambda conv=_same: conv(x.value)[conv(idx.value)], None
        v = draw(st.one_of(tensors(max_dims=2), scalars(), junk()))

        def setitem(conv=_same):
            xv = conv(x.value)
            xv[conv(idx.value)] = conv(v.value)
            return xv
        return "setitem", f"{x.src}[{idx.src}] = {v.src}", setitem, None
    if kind == "overlap":
        # in-place ops whose self and other share memory: partial overlap must raise, full
        # overlap (x.add_(x)) and disjoint views must give NumPy's (copy semantics) answer.
        n = draw(st.integers(1, 6))
        base = np.arange(n, dtype=np.float32) - 2
        op = draw(st.sampled_from(("add_", "sub_", "mul_", "div_", "copy_", "maximum", "pow_", "clamp_min_")))
        how = draw(st.sampled_from(("shifted", "same", "reversed", "expanded_self", "disjoint")))
        src = f"(lambda x: __OP__)(minitorch.tensor({base.tolist()}))"
        exprs = {"shifted": ("x[1:]", "x[:-1]"), "same": ("x", "x"), "reversed": ("x", "x.flip([0])"),
                 "expanded_self": ("x[:1].expand(" + str(n) + ")", "x"), "disjoint": ("x[:1]", "x[1:2]")}
        s_expr, o_expr = exprs[how]
        call = f"{s_expr}.{op}({o_expr})"
        fn = eval(f"lambda x: {call}")  # noqa: S307 - our own source

        def overlap(conv=_same):
            return fn(conv(minitorch.tensor(base)))
        return "overlap " + op, src.replace("__OP__", call), overlap, ("overlap", op, how, base)
    label, params = draw(st.sampled_from(TARGETS))
    is_method = label.startswith("Tensor.")
    args, kwargs, srcs = [], {}, []
    for i, (typ, pname, has_default, kwonly) in enumerate(params):
        if has_default and draw(st.integers(0, 2)) == 0:
            continue
        if typ == "Fstr":
            a = draw(st.one_of(st.sampled_from(("mean", "sum", "none", "bogus")).map(lambda x: Arg(x, repr(x))), junk()))
        else:
            a = draw(_arg_strategy(typ))
        if kwonly or (i > 0 and draw(st.integers(0, 4)) == 0):
            kwargs[pname] = a
        else:
            if kwargs:  # a positional after a keyword would be a SyntaxError, not a call
                kwargs[pname] = a
            else:
                args.append(a)
    if draw(st.integers(0, 20)) == 0:  # an extra argument, or a made-up keyword
        kwargs[draw(st.sampled_from(("bogus", "out", "dim")))] = draw(scalars())
    if is_method:
        if not args or not isinstance(args[0].value, minitorch.Tensor):
            args[:1] = [draw(tensors())]
        self_, rest = args[0], args[1:]
        fname = label.split(".", 1)[1]
        fn_src = f"{self_.src}.{fname}"
        target = lambda conv: getattr(conv(self_.value), fname)  # noqa: E731
    else:
        rest = args
        where, name = label.split(".")
        fn, fn_src = getattr(MODULES[where], name), label
        target = lambda conv: fn  # noqa: E731
    argsrc = ", ".join([a.src for a in rest] + [f"{k}={v.src}" for k, v in kwargs.items()])
    src = f"{fn_src}({argsrc})"
    vals, kvals = [a.value for a in rest], {k: v.value for k, v in kwargs.items()}
    info = ("ref", label.split(".", 1)[1], args, kwargs)
    return label, src, lambda conv=_same: target(conv)(*conv(vals), **conv(kvals)), info


# NumPy float64 references for a curated set of ops (taken only when every tensor input is float).
def _sigmoid(x):
    with np.errstate(all="ignore"):
        return 1 / (1 + np.exp(-x))


UNARY = {"exp": np.exp, "log": np.log, "log1p": np.log1p, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
         "tanh": np.tanh, "sigmoid": _sigmoid, "abs": np.abs, "neg": np.negative, "reciprocal": lambda x: 1 / x,
         "exp2": np.exp2, "expm1": np.expm1, "log2": np.log2, "log10": np.log10, "square": np.square,
         "rsqrt": lambda x: 1 / np.sqrt(x), "relu": lambda x: np.where(np.isnan(x), x, np.maximum(x, 0)),
         "isnan": np.isnan, "isinf": np.isinf}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "true_divide": np.true_divide,
          "maximum": np.maximum, "minimum": np.minimum, "eq": np.equal, "ne": np.not_equal, "lt": np.less,
          "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}


def reference(name: str, args, kwargs):
    """NumPy's answer for the call, or None where the fuzzer has no reference for it."""
    base = name[:-1] if name.endswith("_") else name
    if kwargs and not (base in ("add", "sub") and set(kwargs) <= {"alpha", "other"}):
        return None
    base_fn = UNARY.get(base) or BINARY.get(base)
    if base_fn is None or not args:
        return None
    vals = list(args) + [kwargs[k] for k in ("other",) if k in kwargs]
    nargs = 1 if base in UNARY else 2
    if len(vals) != nargs:
        return None
    arrays_ = []
    for a in vals:
        if isinstance(a.value, minitorch.Tensor) and a.array is not None and a.array.dtype.kind == "f":
            arrays_.append(np.asarray(a.array, dtype=np.float64))
        elif type(a.value) is float and nargs == 2 and arrays_:
            # A Python number is computed in the tensor's dtype (PyTorch's wrapped numbers).
            with np.errstate(all="ignore"):
                arrays_.append(np.float64(np.asarray(a.value).astype(vals[0].array.dtype)))
        else:
            return None
    alpha = kwargs.get("alpha")
    if alpha is not None:
        # (alpha is computed in the tensor's dtype too: a float64-only value has no reference here)
        if type(alpha.value) is not float or not (alpha.value == 0 or 1e-30 < abs(alpha.value) < 1e30):
            return None
        arrays_[1] = arrays_[1] * alpha.value
    with np.errstate(all="ignore"):
        return base_fn(*arrays_)


def well_formed(r, depth=0):
    """Raises AssertionError unless r is a sane result: tensors with a shape and dtype, whose
    values can be read, or containers/numbers of them."""
    if isinstance(r, minitorch.Tensor):
        shape = tuple(r.shape)
        assert all(type(s) is int and s >= 0 for s in shape), f"bad shape {shape}"
        assert repr(r.dtype).split(".")[-1] in DTYPES, f"bad dtype {r.dtype}"
        n = math.prod(shape)
        assert r.numel() == n, f"numel {r.numel()} != prod(shape) {n}"
        if n <= 100_000 and max(shape, default=0) < 2**31:  # NumPy's limit, even when empty
            a = np.array(memoryview(r.detach()), copy=True)
            assert a.shape == shape, f"buffer shape {a.shape} != {shape}"
            r.tolist()
        return
    if isinstance(r, (tuple, list)) and depth < 32:  # tolist() of a tensor nests as deep as its dims
        for x in r:
            well_formed(x, depth + 1)
        return
    # An ndarray comes from NumPy's reflected operator (tensor / ndarray), as in PyTorch.
    ok = (bool, int, float, minitorch.dtype, minitorch.Size, str, np.ndarray, np.generic, minitorch.device)
    assert r is None or isinstance(r, ok), f"odd result type {type(r).__name__}"


def check_values(got, ref):
    assert isinstance(got, minitorch.Tensor), f"expected a tensor, got {type(got).__name__}"
    g = np.array(memoryview(got.detach()), copy=True)
    ref = np.asarray(ref)
    assert g.shape == ref.shape, f"shape {g.shape}, NumPy {ref.shape}"
    if g.dtype == np.bool_ or ref.dtype == np.bool_:
        assert np.array_equal(g.astype(bool), ref.astype(bool)), f"got {g.tolist()}, NumPy {ref.tolist()}"
        return
    if g.dtype.kind != "f":
        return
    with np.errstate(all="ignore"):
        want = ref.astype(g.dtype).astype(np.float64)
    tol = 1e-4 if g.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(g.astype(np.float64), want, rtol=tol, atol=tol, equal_nan=True)


def check_overlap(result, info):
    """A written-to tensor that overlaps itself must raise RuntimeError (PyTorch's rule). One that
    partly overlaps an input may raise (PyTorch does) or give NumPy's answer, as if the inputs had
    been copied first (minitorch copies); never the answer of a loop reading what it wrote."""
    _, op, how, base = info
    n = len(base)
    if n > 1 and how == "expanded_self" and op != "maximum":
        raise AssertionError(f"an in-place {op} with {how} overlap returned instead of raising RuntimeError")
    sl = {"shifted": (slice(1, None), slice(None, -1)), "same": (slice(None), slice(None)),
          "reversed": (slice(None), slice(None, None, -1)), "disjoint": (slice(0, 1), slice(1, 2)),
          "expanded_self": (slice(0, 1), slice(None))}
    if n < 2 and how in ("disjoint", "expanded_self", "shifted"):
        return
    s, o = sl[how]
    x = base.astype(np.float64)
    fns = {"add_": np.add, "sub_": np.subtract, "mul_": np.multiply, "div_": np.true_divide,
           "copy_": lambda a, b: b + 0 * a, "pow_": np.power, "clamp_min_": np.maximum, "maximum": np.maximum}
    with np.errstate(all="ignore"):
        want = fns[op](x[s], x[o]).astype(np.float32).astype(np.float64)
    got = np.array(memoryview(result), copy=True).astype(np.float64)
    assert got.shape == want.shape, f"shape {got.shape}, NumPy {want.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
