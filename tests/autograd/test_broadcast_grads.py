"""Values and gradients against PyTorch for every binary op of the op table and every loss of
nn.functional, with inputs that broadcast, are laid out non-contiguously, are empty, or hold NaN
and inf. The binary ops are found by walking _C.OPS (a schema `op(Tensor self, Tensor other...)`
or `...exponent`), the losses by walking nn.functional, so a new one is tested, or fails here
until it has a case."""
import inspect
import re

import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, same_as_torch

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def _params(schema):
    inside = schema[schema.index("(") + 1 : schema.rindex(")")]
    return [p.strip() for p in inside.split(",") if p.strip() and p.strip() != "*"]


def binary_ops():
    """The ops whose first two parameters are tensors named self and other (or exponent), and
    whose other parameters have defaults: the elementwise binary ops and their in-place forms."""
    out = []
    for op in minitorch._C.OPS:
        ps = _params(minitorch._C._op_info(op)["schema"])
        if (len(ps) >= 2 and re.match(r"Tensor(\|Scalar)? self$", ps[0])
                and re.match(r"Tensor(\|Scalar)? (other|exponent)$", ps[1]) and all("=" in p for p in ps[2:])):
            out.append(op)
    return out


# Products whose schema reads like a binary op's but which are not pointwise: kron (tested in
# tests/ops/test_diag_rearrange.py; PyTorch's refuses a transposed matrix, as it views a product
# its mul laid out transposed, which minitorch's computes).
NOT_POINTWISE = {"kron"}
BINARY = [op for op in binary_ops() if op not in NOT_POINTWISE]


def test_the_walk_finds_the_binary_ops():
    for op in ("add", "sub_", "mul", "div", "pow", "remainder", "fmod_", "maximum", "minimum", "eq", "logical_and",
               "bitwise_or"):
        assert op in BINARY
    for op in ("mm", "where", "mse_loss", "masked_fill", "copy_"):
        assert op not in BINARY


def call_binary(op):
    info = minitorch._C._op_info(op)
    name = info["schema"].split("(")[0]

    def fn(lib, x, y):
        if info["inplace"]:
            return getattr(x * 1 if x.requires_grad else x.clone(), name)(y)
        return getattr(lib, name)(x, y) if info["function"] else getattr(x, name)(y)
    return fn


# PyTorch records nothing for these in place on a float self, so the gradient passes through
# them as if they were the identity (a silently wrong gradient, which minitorch refuses with
# "the derivative ... is not implemented"): their values are compared, not their gradients.
NO_GRAD_COMPARED = {"logical_and_", "logical_or_", "logical_xor_"}

# (self shape, other shape): broadcasting either way, 0-dim, and empty
SHAPES = [((2, 3), (3,)), ((2, 1), (1, 3)), ((3,), (2, 3)), ((), (2, 3)), ((2, 3), ()), ((4, 1, 3), (2, 1)),
          ((2, 3), (2, 3)), ((0, 3), (3,)), ((2, 0), (2, 1)), ((1, 0), (3, 1))]


def values(shape, rng, special, kind):
    if kind == "int":
        a = rng.integers(1, 6, size=shape) * rng.choice([-1, 1], size=shape)  # no 0: no integer division by 0
        return a.astype(np.int64)
    a = rng.standard_normal(shape) * 2
    if special and a.size:
        flat = a.reshape(-1)
        picks = rng.choice([NAN, INF, -INF, 0.0], size=max(1, flat.size // 2))
        flat[rng.choice(flat.size, size=picks.size, replace=False)] = picks
    return a


@pytest.mark.parametrize("op", BINARY)
def test_binary_op_broadcast_values_and_grads(op):
    fn = call_binary(op)
    rng = np.random.default_rng(sum(map(ord, op)))
    for kind in ("float", "int"):
        for a_shape, b_shape in SHAPES:
            for layout in LAYOUTS:
                for special in (False, True) if kind == "float" else (False,):
                    a, b = values(a_shape, rng, special, kind), values(b_shape, rng, special, kind)
                    try:
                        same_as_torch(fn, [a, b], layout=layout, grad=op not in NO_GRAD_COMPARED)
                    except AssertionError as e:
                        raise AssertionError(f"{op}({kind} {a_shape}, {b_shape}), {layout}, special={special}: "
                                             f"{e}\nself={a.tolist()}\nother={b.tolist()}") from None


@pytest.mark.parametrize("op", [op for op in BINARY if "Scalar" in _params(minitorch._C._op_info(op)["schema"])[1]])
@pytest.mark.parametrize("number", [2.5, -2, 0.5, INF, NAN, True])
def test_binary_op_with_a_python_number(op, number):
    fn = call_binary(op)
    rng = np.random.default_rng(1)
    for layout in LAYOUTS:
        same_as_torch(lambda lib, x: fn(lib, x, number), [values((2, 3), rng, True, "float")], layout=layout,
                      grad=op not in NO_GRAD_COMPARED)


# ---- losses: every one of nn.functional, each with its own inputs ----

def probs(shape, rng):
    return rng.uniform(0.05, 0.95, size=shape)


def with_special(a, rng):
    a = a.copy()
    if a.size:
        a.reshape(-1)[rng.choice(a.size, size=min(2, a.size), replace=False)] = [NAN, INF][: min(2, a.size)]
    return a


REDUCTIONS = ("mean", "sum", "none")


def pointwise_cases(name, rng):
    for a_shape, b_shape in SHAPES:
        for r in REDUCTIONS:
            yield (lambda m, x, t, r=r: getattr(m.nn.functional, name)(x, t, reduction=r),
                   [rng.standard_normal(a_shape), rng.standard_normal(b_shape)])
            yield (lambda m, x, t, r=r: getattr(m.nn.functional, name)(x, t, reduction=r),
                   [with_special(rng.standard_normal(a_shape), rng), rng.standard_normal(b_shape)])
    # a weight, as torch 2.13's mse_loss and l1_loss take
    yield (lambda m, x, t, w: getattr(m.nn.functional, name)(x, t, weight=w),
           [rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), rng.uniform(0, 1, (3,))])


def bce_cases(rng):
    F = "binary_cross_entropy"
    for shape, w_shape in (((2, 3), (3,)), ((2, 3), (2, 1)), ((2, 3), ()), ((0, 3), (3,)), ((4,), (4,))):
        for r in REDUCTIONS:
            yield (lambda m, x, t, w, r=r: getattr(m.nn.functional, F)(x, t, weight=w, reduction=r),
                   [probs(shape, rng), probs(shape, rng), rng.uniform(0, 2, w_shape)])
            yield (lambda m, x, t, r=r: getattr(m.nn.functional, F)(x, t, reduction=r),
                   [probs(shape, rng), rng.integers(0, 2, shape).astype(np.float64)])
    # inputs at the ends: log(0) is clamped to -100 in both
    yield (lambda m, x, t: getattr(m.nn.functional, F)(x, t), [np.array([0.0, 1.0, 0.5]), np.array([1.0, 0.0, 0.5])])
    yield (lambda m, x, t: getattr(m.nn.functional, F)(x, t), [np.array([NAN, 0.5]), np.array([1.0, 0.0])])
    # a target whose size differs: PyTorch refuses it
    yield (lambda m, x, t: getattr(m.nn.functional, F)(x, t), [probs((2, 3), rng), probs((3,), rng)])


def bce_logits_cases(rng):
    F = "binary_cross_entropy_with_logits"
    for shape, w_shape in (((2, 3), (3,)), ((2, 3), (2, 1)), ((2, 3), ()), ((0, 3), (3,)), ((2, 3), (1, 3))):
        for r in REDUCTIONS:
            yield (lambda m, x, t, w, p, r=r: getattr(m.nn.functional, F)(x, t, weight=w, pos_weight=p, reduction=r),
                   [rng.standard_normal(shape), probs(shape, rng), rng.uniform(0, 2, w_shape),
                    rng.uniform(0.5, 2, (shape[-1],))])
            yield (lambda m, x, t, p, r=r: getattr(m.nn.functional, F)(x, t, pos_weight=p, reduction=r),
                   [with_special(rng.standard_normal(shape), rng), probs(shape, rng), rng.uniform(0.5, 2, w_shape)])
    yield (lambda m, x, t: getattr(m.nn.functional, F)(x, t), [rng.standard_normal((2, 3)), probs((3,), rng)])
    yield (lambda m, x, t: getattr(m.nn.functional, F)(x, t),
           [np.array([INF, -INF, 50.0, -50.0]), np.array([1.0, 0.0, 0.0, 1.0])])


def class_cases(name, rng):
    log = name == "nll_loss"

    def inputs(shape):
        x = rng.standard_normal(shape)
        axis = 1 if len(shape) > 1 else 0
        return x - np.log(np.exp(x).sum(axis, keepdims=True)) if log and shape[0] else x

    for shape in ((4, 3), (2, 3, 2), (0, 3), (3,)):
        target = rng.integers(0, 3, (shape[0],) + shape[2:] if len(shape) > 1 else ()).astype(np.int64)
        for r in REDUCTIONS:
            yield (lambda m, x, t, r=r: getattr(m.nn.functional, name)(x, t, reduction=r), [inputs(shape), target])
            yield (lambda m, x, t, w, r=r: getattr(m.nn.functional, name)(x, t, weight=w, reduction=r),
                   [inputs(shape), target, rng.uniform(0.5, 2, (3,))])
            if len(shape) > 1 and shape[0]:
                ignored = target.copy()
                ignored.reshape(-1)[0] = 1
                yield (lambda m, x, t, r=r: getattr(m.nn.functional, name)(x, t, ignore_index=1, reduction=r),
                       [inputs(shape), ignored])
                yield (lambda m, x, t, r=r: getattr(m.nn.functional, name)(x, t, reduction=r),
                       [with_special(inputs(shape), rng), target])
    if not log:
        for r in REDUCTIONS:
            yield (lambda m, x, t, r=r: m.nn.functional.cross_entropy(x, t, reduction=r, label_smoothing=0.2),
                   [rng.standard_normal((4, 3)), rng.integers(0, 3, (4,)).astype(np.int64)])
            yield (lambda m, x, t, w, r=r: m.nn.functional.cross_entropy(x, t, weight=w, reduction=r),
                   [rng.standard_normal((4, 3)), probs((4, 3), rng), rng.uniform(0.5, 2, (3,))])


def sign_array(shape, rng):
    return np.where(rng.standard_normal(shape) > 0, 1.0, -1.0)


def loss_cases(call, make_inputs, rng):
    """call(F, *tensors, reduction) for each reduction, on make_inputs(rng, special) with and
    without NaN and inf in the first input."""
    for r in REDUCTIONS:
        for special in (False, True):
            yield (lambda m, *t, r=r: call(m.nn.functional, *t, r), make_inputs(rng, special))


def first_special(arrays, rng, special):
    return [with_special(arrays[0], rng) if special else arrays[0]] + arrays[1:]


def margin_cases(rng):  # the losses of pairs and triplets, with a target of +-1
    for shape in ((4,), (2, 3)):
        yield from loss_cases(lambda F, a, b, t, r: F.margin_ranking_loss(a, b, t, margin=0.2, reduction=r),
                              lambda rng, s: first_special([rng.standard_normal(shape), rng.standard_normal(shape),
                                                            sign_array(shape, rng)], rng, s), rng)
    for shape, t_shape in (((4, 5), (4,)), ((5,), ())):
        yield from loss_cases(lambda F, a, b, t, r: F.cosine_embedding_loss(a, b, t, margin=0.1, reduction=r),
                              lambda rng, s: first_special([rng.standard_normal(shape), rng.standard_normal(shape),
                                                            sign_array(t_shape, rng)], rng, s), rng)


LOSS_CASES = {
    "mse_loss": lambda rng: pointwise_cases("mse_loss", rng),
    "l1_loss": lambda rng: pointwise_cases("l1_loss", rng),
    "smooth_l1_loss": lambda rng: pointwise_cases("smooth_l1_loss", rng),
    "huber_loss": lambda rng: pointwise_cases("huber_loss", rng),
    "soft_margin_loss": lambda rng: loss_cases(
        lambda F, x, t, r: F.soft_margin_loss(x, t, reduction=r),
        lambda rng, s: first_special([rng.standard_normal((3, 4)), sign_array((3, 4), rng)], rng, s), rng),
    "hinge_embedding_loss": lambda rng: loss_cases(
        lambda F, x, t, r: F.hinge_embedding_loss(x, t, margin=0.5, reduction=r),
        lambda rng, s: first_special([rng.standard_normal((3, 4)), sign_array((4,), rng)], rng, s), rng),
    "margin_ranking_loss": margin_cases,
    "cosine_embedding_loss": margin_cases,
    "poisson_nll_loss": lambda rng: loss_cases(
        lambda F, x, t, r: F.poisson_nll_loss(x, t, full=True, reduction=r),
        lambda rng, s: first_special([rng.standard_normal((3, 4)), rng.integers(0, 5, (4,)) * 1.0], rng, s), rng),
    "gaussian_nll_loss": lambda rng: loss_cases(
        lambda F, x, t, v, r: F.gaussian_nll_loss(x, t, v, reduction=r),
        lambda rng, s: first_special([rng.standard_normal((3, 4)), rng.standard_normal((3, 4)),
                                      rng.uniform(0.1, 2, (3, 1))], rng, s), rng),
    "triplet_margin_loss": lambda rng: loss_cases(
        lambda F, a, p, n, r: F.triplet_margin_loss(a, p, n, p=1.5, swap=True, reduction=r),
        lambda rng, s: first_special([rng.standard_normal((3, 4)), rng.standard_normal((3, 4)),
                                      rng.standard_normal((1, 4))], rng, s), rng),
    "triplet_margin_with_distance_loss": lambda rng: loss_cases(
        lambda F, a, p, n, r: F.triplet_margin_with_distance_loss(a, p, n, swap=True, margin=0.5, reduction=r),
        lambda rng, s: first_special([rng.standard_normal((3, 4)), rng.standard_normal((3, 4)),
                                      rng.standard_normal((1, 4))], rng, s), rng),
    "multilabel_soft_margin_loss": lambda rng: loss_cases(
        lambda F, x, t, w, r: F.multilabel_soft_margin_loss(x, t, w, reduction=r),
        lambda rng, s: first_special([rng.standard_normal((3, 4)), rng.integers(0, 2, (3, 4)) * 1.0,
                                      rng.uniform(0.5, 2, (4,))], rng, s), rng),
    "binary_cross_entropy": bce_cases,
    "binary_cross_entropy_with_logits": bce_logits_cases,
    "nll_loss": lambda rng: class_cases("nll_loss", rng),
    "cross_entropy": lambda rng: class_cases("cross_entropy", rng),
}


def losses():
    F = minitorch.nn.functional
    return sorted(n for n, f in vars(F).items() if inspect.isfunction(f) and not n.startswith("_")
                  and f.__module__ == F.__name__ and ("loss" in n or "entropy" in n))


def test_every_loss_has_cases():
    assert set(losses()) <= set(LOSS_CASES), f"losses without cases here: {set(losses()) - set(LOSS_CASES)}"


@pytest.mark.parametrize("name", losses())
def test_loss_values_and_grads(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    for k, (fn, arrays) in enumerate(LOSS_CASES[name](rng)):
        for layout in LAYOUTS:
            try:
                same_as_torch(fn, arrays, layout=layout)
            except AssertionError as e:
                raise AssertionError(f"{name} case {k}, {layout}, shapes {[a.shape for a in arrays]}: {e}\n"
                                     f"inputs: {[a.tolist() for a in arrays]}") from None
