"""The small dtypes: uint8, int8, int16, float16, bfloat16 against PyTorch 2.13: the dtype
objects, promotion for every pair, conversions with PyTorch's rounding and wraparound, factories,
NumPy in and out, integer arithmetic that wraps, float16/bfloat16 compute rounded once on store,
autograd on float16 leaves, and a walk over the op table."""
import numpy as np
import pytest

import minitorch
from helpers import SMALL_DTYPES, arrays, same_as_torch, shapes

torch = pytest.importorskip("torch")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
SMALL = ["uint8", "int8", "int16", "float16", "bfloat16"]


def mt_dt(name):
    return getattr(minitorch, name)


def t_dt(name):
    return getattr(torch, name)


def values_equal(got, want):
    """Equal value lists, NaN equal to NaN, -0.0 not equal to 0.0."""
    g, w = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert g.shape == w.shape
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    assert same.all(), f"{g} != {w}"
    assert (np.signbit(g) == np.signbit(w))[~np.isnan(g)].all(), f"signs of {g} != {w}"


# ---- the dtype objects ----

@pytest.mark.parametrize("name", ALL)
def test_dtype_attributes(name):
    d, t = mt_dt(name), t_dt(name)
    assert d.itemsize == t.itemsize
    assert d.is_floating_point == t.is_floating_point
    assert d.is_signed == t.is_signed
    assert repr(d) == repr(t).replace("torch.", "minitorch.")


@pytest.mark.parametrize("alias, name", [("half", "float16"), ("short", "int16"), ("float", "float32"),
                                         ("double", "float64"), ("long", "int64"), ("int", "int32")])
def test_aliases(alias, name):
    assert getattr(minitorch, alias) is mt_dt(name)
    assert getattr(torch, alias) is t_dt(name)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_finfo(name):
    f, g = minitorch.finfo(mt_dt(name)), torch.finfo(t_dt(name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(f, field) == getattr(g, field), field
    assert repr(f) == repr(g)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16"])
def test_iinfo(name):
    f, g = minitorch.iinfo(mt_dt(name)), torch.iinfo(t_dt(name))
    assert (f.bits, f.min, f.max) == (g.bits, g.min, g.max)
    assert repr(f) == repr(g)


# ---- promotion ----

@pytest.mark.parametrize("a", ALL)
def test_promote_types_every_pair(a):
    for b in ALL:
        got = minitorch.promote_types(mt_dt(a), mt_dt(b))
        want = torch.promote_types(t_dt(a), t_dt(b))
        assert repr(got).split(".")[-1] == repr(want).split(".")[-1], (a, b)
        assert minitorch.can_cast(mt_dt(a), mt_dt(b)) == torch.can_cast(t_dt(a), t_dt(b)), (a, b)


@pytest.mark.parametrize("a", ALL)
@pytest.mark.parametrize("other", [1, 2.5, True, "0dim_int64", "0dim_float32", "0dim_float16", "1dim_uint8",
                                   "1dim_int8", "1dim_float16", "1dim_bfloat16"])
def test_result_type_and_arithmetic(a, other):
    def make(lib, name, spec):
        if not isinstance(spec, str):
            return spec
        dims, dt = spec.split("_")
        return lib.ones((2,) if dims == "1dim" else (), dtype=getattr(lib, dt))

    x, tx = minitorch.ones(2, dtype=mt_dt(a)), torch.ones(2, dtype=t_dt(a))
    o, to = make(minitorch, a, other), make(torch, a, other)
    want = torch.result_type(tx, to)
    assert str(minitorch.result_type(x, o)).split(".")[-1] == str(want).split(".")[-1]
    if a != "bool":
        assert str((x + o).dtype).split(".")[-1] == str((tx + to).dtype).split(".")[-1]


# ---- conversions ----

SPECIAL = [0.0, -0.0, 1.0, -1.5, 2.5, 3.5, 127.9, 128.0, 255.0, 256.0, 300.7, -129.0, 40000.0, 65504.0, 65519.99,
           65520.0, 1e6, -1e6, 1e-8, 6e-8, 3e-5, 1.0009765625, 1.00048828125, 1.00146484375, 3.0e38, 1e39,
           float("inf"), -float("inf"), float("nan")]


@pytest.mark.parametrize("src", ["float32", "float64"])
@pytest.mark.parametrize("dst", ["float16", "bfloat16"])
def test_float_to_half_rounding(src, dst):
    """Round to nearest even, overflow to inf, NaN stays NaN, subnormals, ties."""
    x = minitorch.tensor(SPECIAL, dtype=mt_dt(src)).to(mt_dt(dst))
    y = torch.tensor(SPECIAL, dtype=t_dt(src)).to(t_dt(dst))
    assert x.dtype == mt_dt(dst)
    values_equal(x.float().tolist(), y.float().tolist())


@given(st.lists(st.floats(width=32), min_size=1, max_size=50))
@settings(max_examples=60, deadline=None)
def test_float_to_half_random(vals):
    for dst in ("float16", "bfloat16"):
        values_equal(minitorch.tensor(vals).to(mt_dt(dst)).float().tolist(),
                     torch.tensor(vals).to(t_dt(dst)).float().tolist())


@pytest.mark.parametrize("dst", ["uint8", "int8", "int16", "bool"])
def test_float_to_small_int(dst):
    """Truncation toward zero and wraparound as PyTorch's CPU; only values whose C conversion is
    defined (within int32) are compared."""
    vals = [0.0, -0.0, 1.9, -1.9, 127.9, 128.5, 200.0, 255.9, 256.0, -129.0, -1.0, 40000.0, -40000.0, 65537.5]
    for src in ("float32", "float64", "float16", "bfloat16"):
        x = minitorch.tensor(vals).to(mt_dt(src)).to(mt_dt(dst))
        y = torch.tensor(vals).to(t_dt(src)).to(t_dt(dst))
        assert x.tolist() == y.tolist(), (src, dst)


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ALL)
def test_every_cast(src, dst):
    vals = [0, 1, 2, 3, 100, 127, 200, 255] if src in ("uint8",) else [0, 1, -1, 2, -3, 100, -128, 127]
    if src == "bool":
        vals = [0, 1, 1, 0]
    x = minitorch.tensor(vals, dtype=mt_dt(src))
    y = torch.tensor(vals, dtype=t_dt(src))
    got, want = x.to(mt_dt(dst)), y.to(t_dt(dst))
    assert got.dtype == mt_dt(dst)
    assert got.tolist() == want.tolist()
    # and through a strided view
    assert x[::2].to(mt_dt(dst)).tolist() == y[::2].to(t_dt(dst)).tolist()


def test_methods():
    x = minitorch.tensor([1.7, -2.2, 300.0])
    y = torch.tensor([1.7, -2.2, 300.0])
    for m in ("half", "bfloat16", "byte", "char", "short"):
        a, b = getattr(x, m)(), getattr(y, m)()
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        values_equal(a.double().tolist(), b.double().tolist())


# ---- factories, tensor(), item, repr ----

@pytest.mark.parametrize("name", SMALL)
def test_factories(name):
    d, t = mt_dt(name), t_dt(name)
    assert minitorch.zeros(2, 3, dtype=d).tolist() == torch.zeros(2, 3, dtype=t).tolist()
    assert minitorch.ones(4, dtype=d).tolist() == torch.ones(4, dtype=t).tolist()
    assert minitorch.full((2,), 7, dtype=d).tolist() == torch.full((2,), 7, dtype=t).tolist()
    assert minitorch.arange(10, dtype=d).tolist() == torch.arange(10, dtype=t).tolist()
    assert minitorch.empty(3, dtype=d).dtype == d
    assert minitorch.tensor([1, 2, 3], dtype=d).tolist() == torch.tensor([1, 2, 3], dtype=t).tolist()
    assert minitorch.tensor(5, dtype=d).item() == torch.tensor(5, dtype=t).item()
    assert repr(minitorch.tensor([1, 2], dtype=d)) == repr(torch.tensor([1, 2], dtype=t)).replace("torch.", "minitorch.")
    if d.is_floating_point:
        r = minitorch.rand(1000, dtype=d)
        assert r.dtype == d and 0 <= r.min().item() and r.max().item() <= 1
        assert minitorch.randn(10, dtype=d).dtype == d
        x = [0.1, 12345.678]
        assert repr(minitorch.tensor(x, dtype=d)) == repr(torch.tensor(x, dtype=t)).replace("torch.", "minitorch.")
    else:
        r = minitorch.randint(0, 100, (1000,), dtype=d)
        assert r.dtype == d and 0 <= r.min().item() and r.max().item() < 100


@pytest.mark.parametrize("name, value", [("uint8", 300), ("uint8", -256), ("int8", 128), ("int16", 40000),
                                         ("uint8", -1), ("uint8", 255.5), ("int8", -128.9), ("float16", 70000)])
def test_full_overflow(name, value):
    def run(lib):
        try:
            return lib.full((1,), value, dtype=getattr(lib, name)).tolist()
        except RuntimeError as e:
            return str(e)

    assert run(minitorch) == run(torch)


# ---- NumPy ----

@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "float16"])
def test_numpy_both_ways(name):
    a = np.arange(-6, 6).astype(name).reshape(3, 4)
    t = minitorch.from_numpy(a)
    assert t.dtype == mt_dt(name) and t.tolist() == a.tolist()
    a[0, 0] = 9  # shares memory
    assert t[0, 0].item() == 9
    back = t.numpy()
    assert back.dtype == np.dtype(name) and np.shares_memory(back, a)
    assert np.asarray(t.t()).tolist() == a.T.tolist()
    assert minitorch.tensor(a).dtype == mt_dt(name)


def test_bfloat16_numpy_raises():
    t, u = minitorch.ones(2, dtype=minitorch.bfloat16), torch.ones(2, dtype=torch.bfloat16)
    with pytest.raises(TypeError) as e:
        u.numpy()
    with pytest.raises(TypeError) as f:
        t.numpy()
    assert str(e.value) == str(f.value)


def test_dlpack_and_save_load(tmp_path):
    for name in SMALL:
        t = minitorch.arange(6, dtype=mt_dt(name)).reshape(2, 3)
        u = torch.from_dlpack(t)
        assert str(u.dtype).split(".")[-1] == name and u.tolist() == t.tolist()
        back = minitorch.from_dlpack(torch.arange(6, dtype=t_dt(name)))
        assert back.dtype == mt_dt(name) and back.tolist() == list(range(6))
        minitorch.save(t, tmp_path / "t.pt")
        assert torch.load(tmp_path / "t.pt").tolist() == t.tolist()
        torch.save(torch.arange(6, dtype=t_dt(name)), tmp_path / "u.pt")
        got = minitorch.load(tmp_path / "u.pt")
        assert got.dtype == mt_dt(name) and got.tolist() == list(range(6))


# ---- integer arithmetic wraps as C and PyTorch ----

INT_OPS = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "floordiv": lambda x, y: x // y, "mod": lambda x, y: x % y, "and": lambda x, y: x & y,
    "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y, "lt": lambda x, y: x < y, "eq": lambda x, y: x == y,
    "max": lambda x, y: x.maximum(y),
}


@pytest.mark.parametrize("a", ["uint8", "int8", "int16"])
@pytest.mark.parametrize("b", ["uint8", "int8", "int16", "int32", "python"])
@pytest.mark.parametrize("op", sorted(INT_OPS))
def test_integer_ops_wrap(a, b, op):
    if op == "max" and b == "python":
        pytest.skip("maximum takes tensors only")
    xs = [250, 7, 0, 100, 127, 3] if a == "uint8" else [-128 if a == "int8" else -32768, 7, -5, 100, 127, 3]
    ys = [10, 3, 4, 200, 2, 255] if b == "uint8" else [10, 3, -4, 100, 2, -1]
    if op in ("floordiv", "mod"):
        ys = [y if y else 1 for y in ys]

    def run(lib):
        x = lib.tensor(xs, dtype=getattr(lib, a))
        y = 7 if b == "python" else lib.tensor(ys, dtype=getattr(lib, b))
        r = INT_OPS[op](x, y)
        return str(r.dtype).split(".")[-1], r.tolist()

    assert run(minitorch) == run(torch)


@pytest.mark.parametrize("a", ["uint8", "int8", "int16"])
def test_integer_unary_and_shifts(a):
    xs = [0, 1, 5, 100, 127] + ([200, 255] if a == "uint8" else [-1, -100, -128])
    for f in (lambda x: -x, lambda x: ~x, lambda x: x.abs(), lambda x: x << 3, lambda x: x >> 1, lambda x: x.sum(),
              lambda x: x.cumsum(0), lambda x: x.prod(), lambda x: x.max(), lambda x: x.sort().values,
              lambda x: x * 3, lambda x: x.float().mean(), lambda x: x / 2, lambda x: x.sqrt()):
        got = f(minitorch.tensor(xs, dtype=mt_dt(a)))
        want = f(torch.tensor(xs, dtype=t_dt(a)))
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        values_equal(got.double().tolist(), want.double().tolist())


def test_uint8_plus_ten_wraps():
    assert (minitorch.tensor([250], dtype=minitorch.uint8) + 10).tolist() == [4]


# ---- float16/bfloat16 compute: float32 inside, rounded once ----

FLOAT_FNS = {
    "add": lambda m, x: x + x * 0.5, "mul": lambda m, x: x * x, "div": lambda m, x: x / 3,
    "exp": lambda m, x: x.exp(), "tanh": lambda m, x: x.tanh(), "sigmoid": lambda m, x: x.sigmoid(),
    "relu": lambda m, x: m.relu(x), "gelu": lambda m, x: m.nn.functional.gelu(x), "sqrt": lambda m, x: x.abs().sqrt(),
    "where": lambda m, x: m.where(x > 0, x, -x), "clamp": lambda m, x: x.clamp(-1, 1), "pow": lambda m, x: x ** 2,
    "max": lambda m, x: x.max(), "amax": lambda m, x: x.amax(-1), "argmax": lambda m, x: x.argmax(),
    "sort": lambda m, x: x.sort(-1).values, "cat": lambda m, x: m.cat([x, x]), "index": lambda m, x: x[..., :1] * 2,
    "sum": lambda m, x: x.sum(-1), "mean": lambda m, x: x.mean(), "softmax": lambda m, x: x.softmax(-1),
    "log_softmax": lambda m, x: x.log_softmax(-1), "cumsum": lambda m, x: x.cumsum(-1),
}


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@pytest.mark.parametrize("fn", sorted(FLOAT_FNS))
@given(a=arrays("float32", shapes(min_dims=1, max_dims=3, min_side=1)))
@settings(max_examples=15, deadline=None)
def test_float_elementwise_and_reductions(name, fn, a):
    """Elementwise ops equal PyTorch's bit for bit; reductions within one unit in the last place
    of the dtype (PyTorch's CPU sums in other orders)."""
    f = FLOAT_FNS[fn]
    got = f(minitorch, minitorch.tensor(a).to(mt_dt(name)))
    want = f(torch, torch.tensor(a).to(t_dt(name)))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    g, w = np.asarray(got.double().tolist()), np.asarray(want.double().tolist())
    if fn in ("sum", "mean", "cumsum", "softmax", "log_softmax", "gelu", "exp", "tanh", "sigmoid"):
        # sums in another order; transcendental functions within float32's error, then rounded
        eps = torch.finfo(t_dt(name)).eps
        np.testing.assert_allclose(g, w, rtol=2 * eps, atol=2 * eps * (1 + np.abs(w).max(initial=0)))
    else:
        values_equal(g, w)


def test_nan_and_inf_in_half():
    x = [float("nan"), float("inf"), -float("inf"), 1.0]
    for name in ("float16", "bfloat16"):
        a, b = minitorch.tensor(x, dtype=mt_dt(name)), torch.tensor(x, dtype=t_dt(name))
        for f in (lambda v: v * 2, lambda v: v.max(), lambda v: v.isnan(), lambda v: v.nan_to_num(), lambda v: v.sum()):
            values_equal(np.asarray(f(a).double().tolist()), np.asarray(f(b).double().tolist()))


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_matmul_linear_norms_conv(name):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    m = rng.standard_normal((6, 16)).astype(np.float32)
    lw = rng.standard_normal((7, 16)).astype(np.float32)
    cases = {
        "mm": lambda L, F, x, w, m, lw: m @ lw.t(),
        "linear": lambda L, F, x, w, m, lw: F.linear(m, lw),
        "bmm": lambda L, F, x, w, m, lw: L.bmm(m.reshape(2, 3, 16), lw.t().reshape(1, 16, 7).expand(2, 16, 7)),
        "layer_norm": lambda L, F, x, w, m, lw: F.layer_norm(m, (16,)),
        "conv2d": lambda L, F, x, w, m, lw: F.conv2d(x, w, padding=1),
        "max_pool2d": lambda L, F, x, w, m, lw: F.max_pool2d(x, 2),
        "cross_entropy": lambda L, F, x, w, m, lw: F.cross_entropy(m, L.tensor([0, 1, 2, 3, 4, 5])),
    }
    for case, f in cases.items():
        def run(L):
            conv = lambda a: L.tensor(a).to(getattr(L, name))  # noqa: E731
            return f(L, L.nn.functional, conv(x), conv(w), conv(m), conv(lw))

        got, want = run(minitorch), run(torch)
        assert str(got.dtype).split(".")[-1] == name, case
        g, w_ = np.asarray(got.double().tolist()), np.asarray(want.double().tolist())
        # PyTorch's CPU accumulates these in float32 in other orders: a few units in the last place
        eps = torch.finfo(t_dt(name)).eps
        np.testing.assert_allclose(g, w_, rtol=4 * eps, atol=8 * eps * max(1.0, np.abs(w_).max()), err_msg=case)


# ---- autograd ----

@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_autograd_on_half_leaves(name):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 2)).astype(np.float32)
    res = []
    for L in (minitorch, torch):
        x = L.tensor(a).to(getattr(L, name)).requires_grad_()
        y = L.tensor(b).to(getattr(L, name)).requires_grad_()
        out = ((x @ y).tanh() * 3).sum()
        out.backward()
        assert str(x.grad.dtype).split(".")[-1] == name
        res.append((x.grad.double().tolist(), y.grad.double().tolist()))
    eps = torch.finfo(t_dt(name)).eps
    for g, w in zip(res[0], res[1]):
        np.testing.assert_allclose(g, w, rtol=4 * eps, atol=8 * eps)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_inplace_on_half_and_views(name):
    for L in (minitorch, torch):
        x = L.arange(6, dtype=getattr(L, name)).reshape(2, 3)
        v = x[1]
        v.add_(0.5)
        x.mul_(2)
        x[0, 0] = 7
        x.t()[1].fill_(-1)
        if L is minitorch:
            got = x.double().tolist()
        else:
            assert got == x.double().tolist()


# ---- indexing ----

def test_uint8_mask_indexing_warns():
    a = np.arange(5, dtype=np.float32)
    mask = [1, 0, 1, 1, 0]
    res = []
    for L in (minitorch, torch):
        x = L.tensor(a)
        with pytest.warns(UserWarning, match="uint8"):
            r = x[L.tensor(mask, dtype=L.uint8)]
        res.append(r.tolist())
    assert res[0] == res[1]


@pytest.mark.parametrize("name", ["int8", "int16"])
def test_small_int_index_tensors(name):
    def run(L):
        x = L.arange(10.0)
        try:
            return x[L.tensor([1, 3], dtype=getattr(L, name))].tolist()
        except IndexError as e:
            return type(e)

    assert run(minitorch) == run(torch)


# ---- the helpers' strategies draw the small dtypes ----

@pytest.mark.parametrize("dtype", SMALL_DTYPES)
@given(data=st.data())
@settings(max_examples=10, deadline=None)
def test_helpers_draw_small_dtypes(dtype, data):
    a = data.draw(arrays(dtype, shapes(min_dims=1, max_dims=2, min_side=1), low=-50, high=50))
    same_as_torch(lambda L, x: (x * 2 + 1).abs(), [a], grad=False, atol=0, rtol=0)
    same_as_torch(lambda L, x: x.max(-1).values, [a], grad=False, atol=0, rtol=0)


# ---- every op of the table with a float16 and a uint8 input ----

def _op_inputs(name):
    """Call forms for an op by its schema: the first argument a tensor, other tensors alike."""
    return minitorch._C._op_info(name)["schema"]


@pytest.mark.parametrize("name", ["float16", "uint8"])
def test_walk_op_table(name):
    """Each op of _C.OPS whose schema takes one Tensor then defaults: with a small-dtype input either
    both libraries raise related exception classes, or both give the same dtype, shape and values
    (float16 within its resolution). The walk counts the ops it could call, so a change that makes
    them all raise fails."""
    rng = np.random.default_rng(0)
    a = rng.uniform(0.1, 4, (3, 4)).astype(np.float32)
    compared = 0
    for op in minitorch._C.OPS:
        schema = _op_inputs(op)
        args = schema[schema.index("(") + 1: schema.rindex(")")].split(", ")
        if not args or not args[0].startswith("Tensor self") or op.endswith("_"):
            continue
        rest = [p for p in args[1:] if p != "*" and "=" not in p]
        if rest:
            continue
        fn_t = getattr(torch, op, None) or getattr(torch.Tensor, op, None)
        fn_m = getattr(minitorch._C, op, None)
        if fn_t is None or fn_m is None:
            continue
        x = minitorch.tensor(a).to(mt_dt(name))
        y = torch.tensor(a).to(t_dt(name))
        errs, outs = [], []
        for f, v in ((fn_m, x), (fn_t, y)):
            try:
                outs.append(f(v))
                errs.append(None)
            except Exception as e:  # noqa: BLE001
                outs.append(None)
                errs.append(e)
        if errs[0] or errs[1]:
            assert errs[0] and errs[1] and (isinstance(errs[0], type(errs[1])) or isinstance(errs[1], type(errs[0]))), \
                (op, errs)
            continue
        got, want = outs
        if isinstance(want, tuple):
            got, want = got[0], want[0]
        if not isinstance(want, torch.Tensor) or not isinstance(got, minitorch.Tensor):
            continue
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], op
        assert tuple(got.shape) == tuple(want.shape), op
        if op in ("empty", "empty_like", "rand_like", "randn_like", "bernoulli", "poisson", "normal", "multinomial",
                  "histc"):  # random, or (histc) float16 bin edges PyTorch computes in float16
            continue
        g, w = np.asarray(got.double().tolist()), np.asarray(want.double().tolist())
        # float16 within its resolution; uint8 results in float32 within float32's (libm differs)
        tol = 4e-3 if name == "float16" else 1e-6 if want.dtype.is_floating_point else 0
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * 4, equal_nan=True, err_msg=op)
        compared += 1
    assert compared > 40, compared


def test_a_tensor_given_twice_and_no_leak():
    """x + x and x.add_(x) widen x once (one tensor, as given); the widened copies are freed."""
    for name in ("float16", "uint8"):
        x, y = minitorch.arange(6, dtype=mt_dt(name)), torch.arange(6, dtype=t_dt(name))
        assert (x + x).tolist() == (y + y).tolist()
        x.add_(x), y.add_(y)
        assert x.tolist() == y.tolist()
    before = minitorch._C._live_objects()
    for _ in range(3):
        h = minitorch.ones(4, 4, dtype=minitorch.float16, requires_grad=True)
        (h @ h).sum().backward()
        del h
    after = minitorch._C._live_objects()
    assert after["tensors"] <= before["tensors"] and after["storages"] <= before["storages"]


def test_positions_stay_int32():
    """searchsorted/bucketize with out_int32 on small-dtype inputs give int32 positions."""
    res = []
    for L in (minitorch, torch):
        s, v = L.tensor([1, 3, 5, 7], dtype=L.uint8), L.tensor([2, 6, 9], dtype=L.uint8)
        a, b = L.searchsorted(s, v, out_int32=True), L.bucketize(v, s, out_int32=True)
        res.append((str(a.dtype).split(".")[-1], a.tolist(), str(b.dtype).split(".")[-1], b.tolist()))
    assert res[0] == res[1]
