"""torch._foreach_*: each overload (a number, a list of numbers, one tensor, a list of tensors) of
the ops optimizer and EMA code call, against NumPy in float64 and PyTorch, values and gradients,
in-place forms included; PyTorch's errors for lists of different lengths, empty lists and calls
that fit no overload; and the torch.utils._foreach_utils helpers optimizers import."""
import numpy as np
import pytest

import minitorch
from api_audit import same_call
from helpers import check, same_as_torch, to_layout, torch

R = np.random.default_rng(7)
X = R.standard_normal((3, 4)).astype(np.float32)
Y = R.standard_normal((5,)).astype(np.float32)
P = R.uniform(0.5, 2.0, (3, 4)).astype(np.float32)  # positive: roots, logs and divisors
Q = R.uniform(0.5, 2.0, (5,)).astype(np.float32)
LAYOUTS = ["contiguous", "transposed", "sliced"]


def _flat(lib, results):
    """The results of a list form as one vector, so one backward reaches them all."""
    return lib.cat([r.reshape(-1) for r in results])


# ---- values against NumPy (and PyTorch inside check), item by item ----

UNARY = {
    "abs": np.abs, "neg": np.negative, "exp": np.exp, "sign": np.sign, "sqrt": np.sqrt,
    "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
    "log": np.log, "reciprocal": lambda a: 1 / a, "rsqrt": lambda a: 1 / np.sqrt(a), "tanh": np.tanh,
    "floor": np.floor, "trunc": np.trunc, "expm1": np.expm1, "log1p": np.log1p, "sin": np.sin,
    "frac": lambda a: a - np.trunc(a),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", sorted(UNARY))
@pytest.mark.parametrize("k", [0, 1])
def test_unary_values(op, layout, k):
    arrays = [P, Q] if op in ("sqrt", "log", "rsqrt", "log1p") else [X, Y]
    check(lambda lib, a, b: getattr(lib, f"_foreach_{op}")([a, b])[k], lambda a, b: UNARY[op]((a, b)[k]), arrays,
          layout=layout, atol=1e-5, rtol=1e-5)


# (the 0-dim tensor operand is detached: PyTorch 2.13 fails its backward, "inconsistent range for
# TensorList output")
BINARY = [
    # (name, call, NumPy of item k)
    ("add_scalar", lambda lib, a, b, c, d: lib._foreach_add([a, b], 1.5), lambda a, b, c, d, k: (a, b)[k] + 1.5),
    ("add_scalarlist", lambda lib, a, b, c, d: lib._foreach_add([a, b], [2, -0.5]),
     lambda a, b, c, d, k: (a, b)[k] + (2, -0.5)[k]),
    ("add_list_alpha", lambda lib, a, b, c, d: lib._foreach_add([a, b], [c, d], alpha=0.25),
     lambda a, b, c, d, k: (a, b)[k] + 0.25 * (c, d)[k]),
    ("add_tensor_alpha", lambda lib, a, b, c, d: lib._foreach_add([a, b], c.sum().detach(), alpha=2),
     lambda a, b, c, d, k: (a, b)[k] + 2 * c.sum()),
    ("sub_list", lambda lib, a, b, c, d: lib._foreach_sub([a, b], [c, d], alpha=3),
     lambda a, b, c, d, k: (a, b)[k] - 3 * (c, d)[k]),
    ("sub_scalarlist", lambda lib, a, b, c, d: lib._foreach_sub([a, b], [1, 2]),
     lambda a, b, c, d, k: (a, b)[k] - (1, 2)[k]),
    ("mul_scalar", lambda lib, a, b, c, d: lib._foreach_mul([a, b], 0.9),
     lambda a, b, c, d, k: (a, b)[k] * 0.9),
    ("mul_list", lambda lib, a, b, c, d: lib._foreach_mul([a, b], [c, d]),
     lambda a, b, c, d, k: (a, b)[k] * (c, d)[k]),
    ("mul_tensor", lambda lib, a, b, c, d: lib._foreach_mul([a, b], d[1].detach()),
     lambda a, b, c, d, k: (a, b)[k] * d[1]),
    ("div_list", lambda lib, a, b, c, d: lib._foreach_div([a, b], [c, d]),
     lambda a, b, c, d, k: (a, b)[k] / (c, d)[k]),
    ("div_scalarlist", lambda lib, a, b, c, d: lib._foreach_div([a, b], [4, 0.5]),
     lambda a, b, c, d, k: (a, b)[k] / (4, 0.5)[k]),
    ("maximum_list", lambda lib, a, b, c, d: lib._foreach_maximum([a, b], [c, d]),
     lambda a, b, c, d, k: np.maximum((a, b)[k], (c, d)[k])),
    ("minimum_scalar", lambda lib, a, b, c, d: lib._foreach_minimum([a, b], 0.1),
     lambda a, b, c, d, k: np.minimum((a, b)[k], 0.1)),
    ("clamp_min_scalarlist", lambda lib, a, b, c, d: lib._foreach_clamp_min([a, b], [0.0, 0.5]),
     lambda a, b, c, d, k: np.maximum((a, b)[k], (0.0, 0.5)[k])),
    ("clamp_max_list", lambda lib, a, b, c, d: lib._foreach_clamp_max([a, b], [c, d]),
     lambda a, b, c, d, k: np.minimum((a, b)[k], (c, d)[k])),
    ("pow_scalar", lambda lib, a, b, c, d: lib._foreach_pow([c, d], 1.5), lambda a, b, c, d, k: (c, d)[k] ** 1.5),
    ("pow_list", lambda lib, a, b, c, d: lib._foreach_pow([c, d], [a, b]),
     lambda a, b, c, d, k: (c, d)[k] ** (a, b)[k]),
    ("pow_scalar_self", lambda lib, a, b, c, d: lib._foreach_pow(2.0, [a, b]),
     lambda a, b, c, d, k: 2.0 ** (a, b)[k]),
    ("lerp_scalar", lambda lib, a, b, c, d: lib._foreach_lerp([a, b], [c, d], 0.3),
     lambda a, b, c, d, k: (a, b)[k] + 0.3 * ((c, d)[k] - (a, b)[k])),
    ("lerp_list", lambda lib, a, b, c, d: lib._foreach_lerp([a, b], [c, d], [c / 4, d / 4]),
     lambda a, b, c, d, k: (a, b)[k] + (c, d)[k] / 4 * ((c, d)[k] - (a, b)[k])),
    ("addcmul_value", lambda lib, a, b, c, d: lib._foreach_addcmul([a, b], [c, d], [a, b], value=-0.5),
     lambda a, b, c, d, k: (a, b)[k] - 0.5 * (c, d)[k] * (a, b)[k]),
    ("addcdiv_scalarlist", lambda lib, a, b, c, d: lib._foreach_addcdiv([a, b], [a, b], [c, d], [0.1, 2]),
     lambda a, b, c, d, k: (a, b)[k] + (0.1, 2)[k] * (a, b)[k] / (c, d)[k]),
    ("addcdiv_tensor",
     lambda lib, a, b, c, d: lib._foreach_addcdiv([a, b], [a, b], [c, d], lib.tensor([3.0, -1.0])),
     lambda a, b, c, d, k: (a, b)[k] + (3.0, -1.0)[k] * (a, b)[k] / (c, d)[k]),
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name,fn,ref", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("k", [0, 1])
def test_binary_and_pointwise_values(name, fn, ref, layout, k):
    check(lambda lib, *ts: fn(lib, *ts)[k], lambda *arrays: ref(*arrays, k), [X, Y, P, Q], layout=layout,
          atol=1e-5, rtol=1e-5)


# (PyTorch 2.13 has no derivative for the Tensor form of _foreach_addcdiv; minitorch's is its ops')
@pytest.mark.parametrize("name,fn,ref", [b for b in BINARY if b[0] != "addcdiv_tensor"],
                         ids=[b[0] for b in BINARY if b[0] != "addcdiv_tensor"])
def test_binary_and_pointwise_gradients(name, fn, ref):
    same_as_torch(lambda lib, *ts: _flat(lib, fn(lib, *ts)), [X, Y, P, Q], layout="transposed", atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_gradients(op):
    arrays = [P, Q] if op in ("sqrt", "log", "rsqrt", "log1p") else [X, Y]
    same_as_torch(lambda lib, a, b: _flat(lib, getattr(lib, f"_foreach_{op}")([a, b])), arrays, layout="sliced",
                  atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("ord_", [2, 1, 0, 3.0, -1, float("inf")])
def test_norm_max_powsum(ord_):
    def ref(a, k):
        return np.linalg.norm(a.reshape(-1), ord_) if ord_ != 0 else np.count_nonzero(a)

    for k in range(2):
        check(lambda lib, a, b: lib._foreach_norm([a, b], ord_)[k], lambda a, b: ref((a, b)[k], k), [X, Y],
              layout="transposed", atol=1e-5, rtol=1e-5)
    check(lambda lib, a, b: lib._foreach_max([a, b])[1], lambda a, b: b.max(), [X, Y])
    check(lambda lib, a, b: lib._foreach_powsum([a, b], 3)[0], lambda a, b: (np.abs(a) ** 3).sum(), [X, Y],
          atol=1e-4, rtol=1e-5)
    same_as_torch(lambda lib, a, b: lib.stack(lib._foreach_norm([a, b], ord_)), [X, Y], atol=1e-5, rtol=1e-5)


def test_norm_dtype_and_nan_inf():
    check(lambda lib, a: lib._foreach_norm([a], dtype=lib.float64)[0], lambda a: np.linalg.norm(a.reshape(-1)), [X],
          dtype=minitorch.float64, atol=1e-6)
    bad = np.array([1.0, np.nan, np.inf, -2.0], np.float32)
    with np.errstate(invalid="ignore"):  # inf - inf
        check(lambda lib, a: lib._foreach_add([a], [a], alpha=-1)[0], lambda a: a - a, [bad])
    check(lambda lib, a: lib._foreach_maximum([a], 0.0)[0], lambda a: np.where(np.isnan(a), a, np.maximum(a, 0)), [bad])
    check(lambda lib, a: lib._foreach_norm([a])[0], lambda a: np.linalg.norm(a), [bad])


# ---- in-place forms: the tensors change, the list comes back ----

INPLACE = [
    ("mul_", lambda lib, ts, os: lib._foreach_mul_(ts, 0.9), lambda t, o, k: t * 0.9),
    ("add_list_alpha", lambda lib, ts, os: lib._foreach_add_(ts, os, alpha=-0.1), lambda t, o, k: t - 0.1 * o),
    ("add_tensor", lambda lib, ts, os: lib._foreach_add_(ts, lib.tensor(0.5)), lambda t, o, k: t + 0.5),
    ("sub_scalarlist", lambda lib, ts, os: lib._foreach_sub_(ts, [1, 2]), lambda t, o, k: t - (1, 2)[k]),
    ("div_", lambda lib, ts, os: lib._foreach_div_(ts, os), lambda t, o, k: t / o),
    ("lerp_", lambda lib, ts, os: lib._foreach_lerp_(ts, os, 0.001), lambda t, o, k: t + 0.001 * (o - t)),
    ("addcmul_", lambda lib, ts, os: lib._foreach_addcmul_(ts, os, os, value=0.01), lambda t, o, k: t + 0.01 * o * o),
    ("addcdiv_", lambda lib, ts, os: lib._foreach_addcdiv_(ts, ts, os, value=-1), lambda t, o, k: t - t / o),
    ("maximum_", lambda lib, ts, os: lib._foreach_maximum_(ts, os), lambda t, o, k: np.maximum(t, o)),
    ("clamp_min_", lambda lib, ts, os: lib._foreach_clamp_min_(ts, 0.0), lambda t, o, k: np.maximum(t, 0)),
    ("pow_", lambda lib, ts, os: lib._foreach_pow_(ts, 2), lambda t, o, k: t * t),
    ("sqrt_", lambda lib, ts, os: lib._foreach_sqrt_(os), lambda t, o, k: t),
    ("zero_", lambda lib, ts, os: lib._foreach_zero_(ts), lambda t, o, k: 0 * t),
    ("copy_", lambda lib, ts, os: lib._foreach_copy_(ts, [o * 2 for o in os]), lambda t, o, k: 2 * o),
    ("neg_", lambda lib, ts, os: lib._foreach_neg_(ts), lambda t, o, k: -t),
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name,fn,ref", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace(name, fn, ref, layout):
    for lib in [minitorch] + ([torch] if torch is not None else []):
        make = (lambda a: to_layout(a, layout)) if lib is minitorch else (lambda a: lib.tensor(a))
        ts, os = [make(X), make(Y)], [make(P), make(Q)]
        ids = [id(t) for t in ts]
        res = fn(lib, ts, os)
        assert type(res) is list and [id(r) for r in res] == [id(t) for t in (os if name == "sqrt_" else ts)]
        assert [id(t) for t in ts] == ids
        for k, (t, a, o) in enumerate(zip(ts, (X, Y), (P, Q))):
            got = t.numpy() if lib is torch else np.asarray(t.contiguous().tolist())
            np.testing.assert_allclose(got, ref(a.astype(np.float64), o.astype(np.float64), k), atol=1e-5, rtol=1e-5)


def test_ema_update_on_parameters():
    """The EMA step of real training code: _foreach_lerp_ under no_grad towards Parameters that
    need grad, and the older _foreach_mul_ then _foreach_add_(alpha=) form; both give
    decay * ema + (1 - decay) * param."""
    model = minitorch.nn.Linear(4, 3)
    params = list(model.parameters())
    ema = [p.detach().clone() * 2 for p in params]
    old = [e.clone() for e in ema]
    want = [0.99 * e.numpy() + 0.01 * p.detach().numpy() for e, p in zip(ema, params)]
    with minitorch.no_grad():
        minitorch._foreach_lerp_(ema, params, 1 - 0.99)
        minitorch._foreach_mul_(old, 0.99)
        minitorch._foreach_add_(old, params, alpha=0.01)
    for e, o, w in zip(ema, old, want):
        assert not e.requires_grad and not o.requires_grad
        np.testing.assert_allclose(e.numpy(), w, atol=1e-6)
        np.testing.assert_allclose(o.numpy(), w, atol=1e-6)


# ---- errors as PyTorch's ----

TS = lambda lib: [lib.ones(2), lib.ones(3)]  # noqa: E731

ERRORS = {
    "empty": lambda lib: lib._foreach_add([], 1),
    "empty_list_other": lambda lib: lib._foreach_mul([], []),
    "lengths": lambda lib: lib._foreach_add(TS(lib), [lib.ones(2)]),
    "lengths_addcmul": lambda lib: lib._foreach_addcmul(TS(lib), TS(lib), TS(lib)[:1]),
    "lengths_copy_": lambda lib: lib._foreach_copy_(TS(lib), TS(lib)[:1]),
    "scalarlist_length": lambda lib: lib._foreach_add(TS(lib), [1.0]),
    "scalarlist_empty": lambda lib: lib._foreach_mul(TS(lib), []),
    "shapes": lambda lib: lib._foreach_add(TS(lib), [lib.ones(3), lib.ones(2)]),
    "bad_type": lambda lib: lib._foreach_add(TS(lib), "x"),
    "not_a_list": lambda lib: lib._foreach_mul(lib.ones(2), 2),
    "alpha_with_scalar": lambda lib: lib._foreach_add(TS(lib), 1, alpha=2),
    "none_other": lambda lib: lib._foreach_maximum(TS(lib), None),
    "mixed_list": lambda lib: lib._foreach_add(TS(lib), [1, lib.ones(1)]),
    "tensor_not_0d": lambda lib: lib._foreach_mul(TS(lib), lib.ones(2)),
    "packed_scalars_dim": lambda lib: lib._foreach_addcmul(TS(lib), TS(lib), TS(lib), lib.tensor(2.0)),
    "packed_scalars_len": lambda lib: lib._foreach_addcdiv(TS(lib), TS(lib), TS(lib), lib.ones(3)),
    "unary_extra_arg": lambda lib: lib._foreach_abs(TS(lib), 1),
    "norm_bad_ord": lambda lib: lib._foreach_norm(TS(lib), "fro"),
    "norm_extra": lambda lib: lib._foreach_norm(TS(lib), 2, None, 3),
    "norm_keyword": lambda lib: lib._foreach_norm(TS(lib), foo=1),
    "norm_missing": lambda lib: lib._foreach_norm(),
    "norm_int": lambda lib: lib._foreach_norm([lib.ones(2, dtype=lib.int64)]),
    "norm_inf_empty": lambda lib: lib._foreach_norm([lib.ones(0)], float("inf")),
    "max_empty": lambda lib: lib._foreach_max([lib.ones(2), lib.ones(0)]),
    "copy_non_blocking": lambda lib: lib._foreach_copy_(TS(lib), TS(lib), 1),
    "inplace_cast": lambda lib: lib._foreach_add_([lib.ones(2, dtype=lib.int64)], 1.5),
    "bool_sub": lambda lib: lib._foreach_sub([lib.ones(2, dtype=lib.bool)], 1),
    "bool_neg": lambda lib: lib._foreach_neg([lib.ones(2, dtype=lib.bool)]),
    "leaf_inplace": lambda lib: lib._foreach_mul_([lib.ones(2, requires_grad=True)], 2),
    "powsum_int": lambda lib: lib._foreach_powsum([lib.ones(2, dtype=lib.int64)]),
}


@pytest.mark.parametrize("fn", list(ERRORS.values()), ids=list(ERRORS))
def test_errors_as_torch(fn):
    with pytest.raises(Exception):
        fn(minitorch)
    same_call(fn)


RESULTS = {
    "int_promotes": lambda lib: lib._foreach_add([lib.arange(3)], [1.5]),
    "complex_scalar": lambda lib: lib._foreach_mul([lib.ones(2)], 1 + 2j),
    "tuple_in": lambda lib: lib._foreach_add((lib.ones(2), lib.zeros(1)), 1),
    "zero_dim_as_number": lambda lib: lib._foreach_sub([lib.ones(2)], lib.tensor(2.0)),
    "keywords": lambda lib: lib._foreach_add(self=[lib.ones(2)], other=[lib.ones(2)], alpha=3),
    "mm": lambda lib: lib._foreach_mm([lib.ones(2, 3)], [lib.ones(3, 2)]),
    "clone": lambda lib: lib._foreach_clone([lib.ones(2)]),
    "out_of_place_tuple": lambda lib: type(lib._foreach_exp([lib.ones(1)])).__name__,
    "grad_through": lambda lib: lib._foreach_mul([lib.ones(2, requires_grad=True) * 1], 3),
}


@pytest.mark.parametrize("fn", list(RESULTS.values()), ids=list(RESULTS))
def test_results_as_torch(fn):
    fn(minitorch)
    same_call(fn)


def test_names_match_torch():
    """Every _foreach_ function of PyTorch exists here."""
    names = [n for n in dir(minitorch) if n.startswith("_foreach_")]
    assert len(names) >= 91
    if torch is not None:
        assert sorted(n for n in dir(torch) if n.startswith("_foreach_")) == sorted(names)


# ---- torch.utils._foreach_utils ----

def test_foreach_utils():
    from minitorch.utils import _foreach_utils as fu

    a = [minitorch.ones(2), minitorch.ones(3, dtype=minitorch.float64), minitorch.ones(1)]
    b = [None, minitorch.zeros(3, dtype=minitorch.float64), minitorch.zeros(1)]
    grouped = fu._group_tensors_by_device_and_dtype([a, b], with_indices=True)
    cpu = minitorch.device("cpu")
    assert sorted(grouped, key=str) == [(cpu, minitorch.float32), (cpu, minitorch.float64)]
    lists, idx = grouped[(cpu, minitorch.float32)]
    assert idx == [0, 2] and lists[0][0] is a[0] and lists[0][1] is a[2] and lists[1] == [None, b[2]]
    lists, idx = fu._group_tensors_by_device_and_dtype([a])[(cpu, minitorch.float64)]
    assert idx == [] and len(lists) == 1 and lists[0][0] is a[1]
    p = minitorch.nn.Parameter(minitorch.ones(1))
    assert fu._has_foreach_support([a[0], None, p], cpu) and fu._device_has_foreach_support(cpu)

    class Sub(minitorch.Tensor):
        pass

    assert not fu._has_foreach_support([minitorch.ones(1).as_subclass(Sub)], cpu)
    if torch is not None:
        import torch.utils._foreach_utils as tfu

        assert tfu._get_foreach_kernels_supported_devices() == fu._get_foreach_kernels_supported_devices()
        assert tfu._get_fused_kernels_supported_devices() == fu._get_fused_kernels_supported_devices()

        class TSub(torch.Tensor):
            pass

        assert not tfu._has_foreach_support([torch.ones(1).as_subclass(TSub)], torch.device("cpu"))
