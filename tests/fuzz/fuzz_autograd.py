"""The autograd fuzzer: `python fuzz_autograd.py N_CALLS TRACE_FILE [SEED]`, run in a subprocess by
test_fuzz_autograd.py (so that a crash or a hang names the call it was in, as fuzz_worker.py does).

Each call is a small program fn(lib, *tensors) drawn by hypothesis from five families that reach
the autograd paths the op fuzzer (fuzz_calls.py) does not:

- index: full-range and step-1 slices, `...`, `()`, None and ints, alone or in tuples, then a
  computation on the view;
- loss: a loss of nn.functional whose target (mse_loss, l1_loss) or weights (the cross entropies)
  broadcast, every reduction, weights as constants or as inputs that require grad;
- special: a differentiable op (reductions, scans, products, clamps, powers ...) on inputs full of
  NaN, inf, -inf and signed zeros;
- function: a custom autograd.Function that returns its input (or a view of it, or two outputs),
  saves tensors and may see them changed in place before backward, and whose backward may return
  a non-tensor, a tensor of the wrong shape, or the wrong number of gradients;
- inplace: an in-place op (comparisons, fill_ with a tensor value, masked_select of 0-dim inputs)
  on a tensor in the graph, or on a view of one (CopySlices, a view read after its base changed,
  the multi-output views PyTorch refuses to change).

Every float input is a leaf that requires grad. Where PyTorch is installed the program runs in both
(helpers.same_as_torch): both raise related exception classes, or give the same values and, after
the backward of one random weighting of the output, the same gradients. Without PyTorch each call
must raise one of PyTorch's exception classes or return a tensor whose backward gives every input a
well-formed gradient. Before each call its source goes to TRACE_FILE; at the end one JSON line on
stdout gives the counts and the failing calls.
"""
from __future__ import annotations

import faulthandler
import json
import os
import sys
import warnings

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/, for helpers
from no_torch import block_torch_if_asked  # noqa: E402

block_torch_if_asked()  # the sanitizer run
import minitorch  # noqa: E402
from helpers import LAYOUTS, same_as_torch, to_layout, torch  # noqa: E402

sys.path.insert(0, HERE)
from fuzz_drive import drive  # noqa: E402

ALLOWED = (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError)
# Differences found and not fixed yet, by words of the report: counted and listed apart (the
# test prints them), not failed. Several ellipses in one index: NumPy and minitorch refuse them,
# PyTorch's indexing accepts them (each one skips the dims the others leave), a PyTorch quirk
# minitorch does not copy.
KNOWN: dict[str, str] = {"several ellipses in one index": "an index can only have a single ellipsis"}
SPECIAL = (float("nan"), float("inf"), float("-inf"), 0.0, -0.0)


def _lit(a: np.ndarray) -> str:
    txt = repr(a.tolist()).replace("nan", "float('nan')").replace("inf", "float('inf')")
    return f"np.array({txt}, dtype='{a.dtype}').reshape({a.shape})"


class Call:
    """A program fn(lib, *tensors) on arrays, with the source that rebuilds it."""

    def __init__(self, family: str, body: str, fn, arrays, layout: str, prelude: str = ""):
        self.family, self.fn, self.arrays, self.layout = family, fn, arrays, layout
        self.src = prelude + f"same_as_torch({body}, [{', '.join(_lit(a) for a in arrays)}], layout='{layout}')"


@st.composite
def float_arrays(draw, shape=None, special=0.3, low=-3.0, high=3.0):
    if shape is None:
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    n = int(np.prod(shape))
    plain = st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    pick = st.one_of(plain, st.sampled_from(SPECIAL)) if draw(st.floats(0, 1)) < special else plain
    return np.array(draw(st.lists(pick, min_size=n, max_size=n)), dtype=np.float64).reshape(shape)


# ---- index: full-range and step-1 slices under autograd ----

def _slice_items(size):
    return st.sampled_from([slice(None), slice(None, None, 1), slice(0, None), slice(None, size),
                            slice(None, size + 3), slice(-size - 1 if size else -1, None), Ellipsis, None,
                            slice(1, None), 0, -1])


@st.composite
def index_calls(draw):
    a = draw(float_arrays(special=0.1))
    size = a.shape[0] if a.ndim else 0
    kind = draw(st.sampled_from(("lone", "tuple", "empty_tuple", "list")))
    if kind == "lone":
        idx = draw(_slice_items(size))
    elif kind == "empty_tuple":
        idx = ()
    else:
        idx = tuple(draw(st.lists(_slice_items(size), min_size=1, max_size=max(1, a.ndim + 1))))
        idx = list(idx) if kind == "list" and any(isinstance(i, slice) or i is None or i is Ellipsis for i in idx) else idx
    then = draw(st.sampled_from(("* 3", ".exp()", ".sum()", "[...] * 2", ".clone().mul_(2)")))
    body = f"lambda lib, x: x[{idx!r}]{then}"
    return Call("index", body, eval(body), [a], draw(st.sampled_from(LAYOUTS)))  # noqa: S307 - our own source


# ---- loss: broadcast targets and weights ----

@st.composite
def loss_calls(draw):
    name = draw(st.sampled_from(("mse_loss", "l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
                                 "cross_entropy", "nll_loss")))
    red = draw(st.sampled_from(("mean", "sum", "none")))
    layout = draw(st.sampled_from(LAYOUTS))
    if name in ("mse_loss", "l1_loss"):
        shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3)).input_shapes
        arrays = [draw(float_arrays(shapes[0])), draw(float_arrays(shapes[1]))]
        body = f"lambda lib, x, t: lib.nn.functional.{name}(x, t, reduction='{red}')"
        return Call("loss", body, eval(body), arrays, layout)  # noqa: S307
    if name.startswith("binary"):
        shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3))
        w_shape = draw(hnp.broadcastable_shapes(shape, max_dims=len(shape), min_side=0))
        logits = name.endswith("logits")
        x = draw(float_arrays(shape, special=0.2)) if logits else draw(float_arrays(shape, special=0.05, low=0, high=1))
        t = draw(float_arrays(shape, special=0.0, low=0, high=1))
        w = draw(float_arrays(w_shape, special=0.0, low=0, high=2))
        extra = ", pos_weight=lib.tensor(pw)" if logits and draw(st.booleans()) else ""
        pw = draw(float_arrays((shape[-1],), special=0.0, low=0.5, high=2))
        if draw(st.booleans()):  # the weight an input: PyTorch refuses it requiring grad
            body = f"lambda lib, x, t, w: lib.nn.functional.{name}(x, t, weight=w, reduction='{red}'{extra})"
            arrays = [x, t, w]
        else:
            body = (f"lambda lib, x, t: lib.nn.functional.{name}(x, t, weight=lib.tensor({_lit(w)}), "
                    f"reduction='{red}'{extra})")
            arrays = [x, t]
        body = body.replace("lib.tensor(pw)", f"lib.tensor({_lit(pw)})")
        return Call("loss", body, eval(body), arrays, layout)  # noqa: S307
    n, c = draw(st.integers(0, 3)), draw(st.integers(1, 3))
    x = draw(float_arrays((n, c), special=0.2))
    target = np.array(draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)), dtype=np.int64)
    w = draw(float_arrays((c,), special=0.0, low=0.5, high=2))
    opts = draw(st.sampled_from(("", f", weight=lib.tensor({_lit(w)})", ", ignore_index=0",
                                 ", label_smoothing=0.1" if name == "cross_entropy" else "")))
    body = f"lambda lib, x, t: lib.nn.functional.{name}(x, t, reduction='{red}'{opts})"
    return Call("loss", body, eval(body), [x, target], layout)  # noqa: S307


# ---- special: NaN, inf and signed zeros into gradients ----

SPECIAL_OPS = ("x.max()", "x.min()", "x.amax(-1)", "x.amin()", "lib.max(x, -1)[0]", "x.cumprod(-1)", "x.cumsum(-1)",
               "x.prod()", "x.prod(-1)", "x.norm(float('inf'))", "x.norm()", "x.norm(1)", "lib.relu(x)",
               "x.clamp(-1, 1)", "x.clamp_min(0)", "x.abs()", "x.sqrt()", "x.pow(2)", "x.pow(0.5)", "x ** -0.5",
               "x.exp()", "x.log()", "x.sigmoid()", "x.tanh()", "x.softmax(-1)", "x.log_softmax(-1)",
               "x.logsumexp(-1)", "x.sort(-1)[0]", "x.var()", "x.std(-1)", "x.mean()", "x.sum()",
               "lib.maximum(x, x.flip(-1))", "lib.where(x > 0, x, x * 2)", "x * x", "x / x.flip(-1)",
               "x.reciprocal()", "x.masked_fill(x != x, 0.0)")


@st.composite
def special_calls(draw):
    a = draw(float_arrays(special=0.9))
    body = f"lambda lib, x: {draw(st.sampled_from(SPECIAL_OPS))}"
    return Call("special", body, eval(body), [a], draw(st.sampled_from(LAYOUTS)))  # noqa: S307


# ---- function: custom autograd.Functions ----

FORWARDS = {
    "identity": "return x",
    "view": "return x.view_as(x)",
    "scaled": "return x * 2",
    "two": "return x, x * 2",
    "twice": "return x, x",
}
BACKWARDS = ("right", "saved", "none", "str", "int", "ndarray", "list", "wide", "too_many", "int_tensor")


def _function_program(fwd, bwd, save, modify):
    """The source of fn(lib, x): a Function class made for lib, applied to a non-leaf, maybe the
    tensor it saved changed in place before backward, its outputs summed into one tensor."""
    two = fwd in ("two", "twice")
    g, gsum = ("g0", "(g0 + g1)") if two else ("g", "g")
    backward = {
        "right": f"return {gsum} * 2",
        "saved": f"(s,) = ctx.saved_tensors\n            return {gsum} * s",
        "none": "return None",
        "str": "return 'g'",
        "int": "return 3",
        "ndarray": "return np.ones(1)",
        "list": f"return [{g}]",
        "wide": f"return lib.ones(tuple({g}.shape) + (2,), dtype={g}.dtype)",
        "too_many": f"return {g}, {g}",
        "int_tensor": f"return lib.ones(tuple({g}.shape), dtype=lib.int64)",
    }[bwd]
    lines = ["def fn(lib, x):",
             "    class F(lib.autograd.Function):",
             "        @staticmethod",
             "        def forward(ctx, x):",
             *(["            ctx.save_for_backward(x)"] if save else []),
             f"            {FORWARDS[fwd]}",
             "",
             "        @staticmethod",
             f"        def backward(ctx, {'g0, g1' if two else 'g'}):",
             f"            {backward}",
             "",
             "    a = x * 1",
             "    y = F.apply(a)",
             *(["    a.mul_(2)"] if modify else []),
             f"    return {'y[0] + y[1]' if two else 'y'}"]
    return "\n".join(lines) + "\n"


@st.composite
def function_calls(draw):
    fwd = draw(st.sampled_from(sorted(FORWARDS)))
    bwd = draw(st.sampled_from(BACKWARDS))
    src = _function_program(fwd, bwd, bwd == "saved" or draw(st.booleans()), draw(st.booleans()))
    scope = {"np": np}
    exec(src, scope)  # noqa: S102 - our own source
    a = draw(float_arrays(special=0.1))
    return Call("function", "fn", scope["fn"], [a], draw(st.sampled_from(LAYOUTS)), prelude=src)


# ---- inplace: in-place ops on tensors in the graph ----

INPLACE_OPS = ("(x * 1).eq_(x.flip(-1))", "(x * 1).lt_(0.5)", "(x * 1).ge_(x)", "(x * 1).fill_(x.sum())",
               "lib.zeros(tuple(x.shape), dtype=x.dtype).fill_(x.sum())", "(x * 1).fill_(2.5)",
               "x.sum().masked_select(lib.tensor(True))", "x.sum().masked_select(lib.tensor([True, False, True]))",
               "x.masked_select(x > 0)", "(x * 1).clamp_(-1, 1)", "(x * 1).pow_(0.5)", "(x * 1).relu_()",
               "((a := x * 1)[..., 1:].mul_(2), a)[1]", "((a := x * 1), (v := a[..., ::2]), a.exp_(), v * v)[3]",
               # flatten is a view of a contiguous a, a copy of a permuted one (an elementwise result
               # keeps a permuted input's layout): either way a matches PyTorch's
               "((a := (x * 1).contiguous()), (v := a.flatten()[1:]), (w := a.flatten()[:2]), v.relu_(),"
               " a * w.sum())[4]",
               "((a := x.transpose(0, -1) * 1), (v := a.flatten()[1:]), v.relu_(), a * v.sum())[3]",
               "((a := lib.zeros(tuple(x.shape), dtype=x.dtype)), a[..., :1].copy_(x[..., 1:2]), a)[2]",
               "((a := x * 1), a.t()[..., 0].clamp_(-1, 1), a)[2]", "((a := x * 1).unbind(-1)[0].mul_(2))",
               "((a := x * 1), (p := a.chunk(2, -1)), a.add_(1), p[0] * 1)[3]")


@st.composite
def inplace_calls(draw):
    a = draw(float_arrays(special=0.3))
    body = f"lambda lib, x: {draw(st.sampled_from(INPLACE_OPS))}"
    return Call("inplace", body, eval(body), [a], draw(st.sampled_from(LAYOUTS)))  # noqa: S307


def calls():
    return st.one_of(index_calls(), loss_calls(), special_calls(), function_calls(), inplace_calls())


# ---- running and checking ----

def run_alone(call: Call):
    """Without PyTorch: the call raises one of its exception classes, or returns a tensor whose
    backward gives each float input a gradient of its shape (or raises so)."""
    xs = [to_layout(a, call.layout).detach().requires_grad_(a.dtype.kind == "f") for a in call.arrays]
    try:
        out = call.fn(minitorch, *xs)
        if out.requires_grad:
            (out * minitorch.ones_like(out)).sum().backward()
    except ALLOWED:
        return "raised"
    for x in xs:
        if x.grad is not None:
            assert tuple(x.grad.shape) == tuple(x.shape) and x.grad.dtype == x.dtype, "malformed gradient"
            np.array(memoryview(x.grad), copy=True)
    return "returned"


def main():
    n_calls, trace_path = int(sys.argv[1]), sys.argv[2]
    fixed_seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    faulthandler.enable()
    warnings.simplefilter("ignore")
    trace = os.open(trace_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    counts = {"calls": 0, "compared": 0, **{f: 0 for f in ("index", "loss", "special", "function", "inplace")}}
    failures, seen, known = [], {}, {}

    def run_one(call: Call):
        os.ftruncate(trace, 0)
        os.pwrite(trace, call.src.encode("utf-8", "replace")[:4000], 0)
        counts["calls"] += 1
        counts[call.family] += 1
        try:
            if torch is None:
                run_alone(call)
            else:
                same_as_torch(call.fn, call.arrays, layout=call.layout)
                counts["compared"] += 1
        except BaseException as e:  # noqa: BLE001 - every other outcome is a finding
            detail = f"{type(e).__name__}: {e}"
            for what, words in KNOWN.items():
                if words in detail:
                    known.setdefault(what, {"count": 0, "call": call.src})["count"] += 1
                    return
            key = (call.family, detail.splitlines()[0][:60])
            seen[key] = seen.get(key, 0) + 1
            if seen[key] <= 2 and len(failures) < 200:
                failures.append({"family": call.family, "call": call.src, "detail": detail[:2000]})

    drive(calls(), run_one, n_calls, fixed_seed)
    os.ftruncate(trace, 0)
    print(json.dumps({"counts": counts, "failures": failures, "distinct": len(seen), "known": known}), flush=True)


if __name__ == "__main__":
    main()
