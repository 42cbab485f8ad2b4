"""Keyword names, the NumPy spellings PyTorch's argument parser also takes, and its messages.

test_every_op_has_pytorchs_parameter_names walks minitorch._C.OPS: every parameter of an op
(a function's self is called input, as in PyTorch's Python signatures) must be one of PyTorch's
for that function, in PyTorch's positional order, with PyTorch's default, read from PyTorch's
own overload schemas (torch._C._jit_get_schemas_for_operator)."""
import math
import re

import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")

# PyTorch's Python layer adds these to the factories' ATen schemas (tensor_new.cpp, templates)
PYTHON_ONLY = {"requires_grad"}
# The same default, spelled otherwise: (op, parameter) -> why
SAME_DEFAULT = {
    ("amax", "dim"): "None and PyTorch's [] both mean every dim",
    ("amin", "dim"): "None and PyTorch's [] both mean every dim",
    ("max_pool2d", "stride"): "None and PyTorch's [] both mean kernel_size",
    ("max_pool3d", "stride"): "None and PyTorch's [] both mean kernel_size",
    ("randperm", "dtype"): "None is int64, PyTorch's 4 (ScalarType::Long)",
    ("sort", "stable"): "False, PyTorch's None (not stable)",
    ("argsort", "stable"): "False, PyTorch's None (not stable)",
    ("conv2d", "padding"): "0; PyTorch's second overload takes a string, 'valid'",
    ("triu_indices", "dtype"): "None is int64, PyTorch's 4 (ScalarType::Long)",
    ("tril_indices", "dtype"): "None is int64, PyTorch's 4 (ScalarType::Long)",
    ("roll", "dims"): "None and PyTorch's [] both mean the flattened tensor",
    ("rot90", "dims"): "None is [0, 1], PyTorch's default",
    ("bernoulli", "p"): "None draws with self's probabilities (PyTorch's first overload); 0.5 is "
                        "bernoulli_'s",
}


def split_params(inner):
    out, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch in "[(" 
        depth -= ch in "])"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + ([cur.strip()] if cur.strip() else [])


def parse(schema):
    """[(python name, keyword-only, default or None, type)] of one schema (ours or ATen's)."""
    end = schema.index(") ->") if ") ->" in schema else schema.rindex(")")
    params, kwonly = [], False
    for p in split_params(schema[schema.index("(") + 1:end]):
        if p == "*":
            kwonly = True
            continue
        decl, _, default = p.partition("=")
        typ, name = decl.rsplit(" ", 1)
        params.append(("input" if name == "self" else name, kwonly, default or None, typ))
    return params


def normal(default):
    """A default as a value: '1.' is 1, "'none'" is 'none', '[1, 1]' is 1."""
    d = default.strip("'\"")
    if d.startswith("[") and d.endswith("]"):
        items = {x.strip() for x in d[1:-1].split(",")}
        d = items.pop() if len(items) == 1 else d
    try:
        return float(d)
    except ValueError:
        return d


def overloads(name):
    """PyTorch's overloads of aten::name (out= overloads folded into `out`): [(params, has_out)]."""
    res = []
    for s in torch._C._jit_get_schemas_for_operator("aten::" + name):
        ps = parse(str(s))
        outs = [p for p in ps if p[1] and "!" in p[3]]
        res.append(([p for p in ps if p not in outs], bool(outs)))
    return res


def test_every_op_has_pytorchs_parameter_names():
    problems = []
    for op in minitorch._C.OPS:
        info = minitorch._C._op_info(op)
        if not (info["function"] or info["method"]):
            continue
        ours = parse(info["schema"])
        theirs = overloads(info["schema"].split("(")[0])
        assert theirs, f"{op}: PyTorch has no aten::{op}"
        names = {p[0] for ps, _ in theirs for p in ps} | PYTHON_ONLY
        if any(has_out for _, has_out in theirs):
            names.add("out")
        problems += [f"{op}: {p[0]} is not PyTorch's" for p in ours if p[0] not in names]
        positional = [p[0] for p in ours if not p[1]]
        if not any([q[0] for q in ps if not q[1]][:len(positional)] == positional for ps, _ in theirs):
            problems.append(f"{op}: positional {positional}")
        for name, _, default, _ in ours:
            defaults = {normal(q[2]) for ps, _ in theirs for q in ps if q[0] == name and q[2]}
            if default and defaults and normal(default) not in defaults and (op, name) not in SAME_DEFAULT:
                problems.append(f"{op}: {name}={default}, PyTorch's {defaults}")
    assert not problems, "\n".join(problems)


def test_function_self_is_input():
    x = minitorch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert minitorch.matmul(input=x, other=x).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    assert minitorch.add(input=x, other=1, alpha=2).tolist() == [[3.0, 4.0], [5.0, 6.0]]
    assert minitorch.mm(x, mat2=x).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    assert minitorch.sum(input=x, dim=1).tolist() == [3.0, 7.0]


# ---- PyTorch's NumPy spellings: axis, keepdims, x/a/x1 (input), x2 (other) ----

# (norm is left out: torch.norm is Python, torch/functional.py, and takes neither axis nor
# keepdims; minitorch's norm is an op and takes both)
KEEPDIM_OPS = [op for op in minitorch._C.OPS if op != "norm" and minitorch._C._op_info(op)["function"]
               and "keepdim" in minitorch._C._op_info(op)["schema"]
               and re.search(r"\bdim\b", minitorch._C._op_info(op)["schema"])]
# the positional arguments an op takes after self
KEEPDIM_ARGS = {"kthvalue": (1,), "quantile": (0.5,), "nanquantile": (0.5,)}


def first(result):
    """An op's result, or the first of several (values of (values, indices))."""
    return result[0] if isinstance(result, tuple) else result


@pytest.mark.parametrize("op", KEEPDIM_OPS)
def test_keepdims_and_axis_wherever_keepdim(op):
    a = np.arange(1.0, 7.0).reshape(2, 3)
    args = KEEPDIM_ARGS.get(op, ())
    for lib in (minitorch, torch):
        fn = getattr(lib, op)
        x = lib.tensor(a)
        if op == "all" or op == "any":
            x = x > 2
        want = first(fn(x, *args, dim=1, keepdim=True))
        for kwargs in ({"axis": 1, "keepdims": True}, {"dim": 1, "keepdims": True}):
            got = first(fn(x, *args, **kwargs))
            assert tuple(got.shape) == tuple(want.shape) == (2, 1), (lib.__name__, op, kwargs)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        if hasattr(torch.Tensor, op):
            method = first(getattr(x, op)(*args, axis=1, keepdims=True))
            np.testing.assert_array_equal(np.asarray(method), np.asarray(want))


def test_max_min_take_axis_and_keepdims():
    for lib in (minitorch, torch):
        x = lib.tensor([[1.0, 5.0], [3.0, 2.0]])
        r = lib.max(x, axis=0, keepdims=True)
        assert r.values.tolist() == [[3.0, 5.0]] and r.indices.tolist() == [[1, 0]]
        assert x.min(axis=1).values.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("kwargs", [{"x": 0}, {"a": 0}, {"x1": 0}], ids=["x", "a", "x1"])
def test_numpy_names_of_input(kwargs):
    for lib in (minitorch, torch):
        t = lib.tensor([1.0, 2.0])
        key = next(iter(kwargs))
        assert lib.add(**{key: t}, other=t).tolist() == [2.0, 4.0]
        assert lib.add(t, x2=t).tolist() == [2.0, 4.0]
        assert lib.sum(**{key: t}).item() == 3.0


CALLS = [
    ("both spellings", lambda L, x: L.sum(x, dim=0, axis=1)),
    ("keepdim twice", lambda L, x: L.sum(x, 0, keepdim=True, keepdims=True)),
    ("positional and NumPy", lambda L, x: L.sum(x, 0, axis=1)),
    ("positional and keyword", lambda L, x: L.mm(x, x, mat2=x)),
    ("unknown keyword", lambda L, x: L.sum(x, 0, keepdimz=True)),
    ("keyword type", lambda L, x: L.add(x, other="a")),
    ("positional type", lambda L, x: L.add(x, "a")),
    ("keyword alpha type", lambda L, x: L.add(x, 3, alpha="a")),
    ("too many", lambda L, x: L.add(x, 1, 2, 3)),
    # (PyTorch's count comes from the overload it picked; minitorch's sum has one schema)
    ("too many of a range", lambda L, x: x.mean(0, True, 3, 4)),
    ("method out", lambda L, x: x.add(x, out=x)),
    ("method self", lambda L, x: x.add(x, input=x)),
    ("missing", lambda L, x: L.add(input=x)),
    ("missing two", lambda L, x: L.add()),
]


@pytest.mark.parametrize("call", [c[1] for c in CALLS], ids=[c[0] for c in CALLS])
def test_binding_errors_match_torch(call):
    with pytest.raises(TypeError) as theirs:
        call(torch, torch.ones(2, 2))
    with pytest.raises(TypeError) as ours:
        call(minitorch, minitorch.ones(2, 2))
    if "invalid combination" not in str(theirs.value):  # PyTorch's overloads list their signatures
        assert str(ours.value) == str(theirs.value)
