"""PyTorch's shell dtypes, uint16, uint32, uint64 and the float8 formats, against PyTorch 2.13: the
dtype objects, finfo/iinfo, conversions to and from every dtype, NumPy in and out, printing, and
which ops take them: each case below runs on a (3, 4) tensor of each dtype in both libraries, and
both must succeed with the same result (shape, dtype, values) or both raise the same class with
the same message (NotImplementedError naming PyTorch's kernel, or its promotion error)."""
import numpy as np
import pytest

import minitorch
from helpers import same_as_torch

torch = pytest.importorskip("torch")

UINTS = ["uint16", "uint32", "uint64"]
FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
SHELL = UINTS + FLOAT8
OTHERS = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def dts(name):
    return getattr(minitorch, name), getattr(torch, name)


# name -> f(lib, x), x a (3, 4) tensor of the dtype under test holding 0..11
CASES = {
    "clone": lambda m, x: x.clone(),
    "contiguous": lambda m, x: x.t().contiguous(),
    "view": lambda m, x: x.view(4, 3),
    "reshape_t": lambda m, x: x.t().reshape(12),
    "permute": lambda m, x: x.permute(1, 0),
    "expand": lambda m, x: x[:1].expand(2, 4),
    "squeeze": lambda m, x: x.unsqueeze(0).squeeze(0),
    "select": lambda m, x: x[1],
    "slice": lambda m, x: x[:, 1:3],
    "flatten": lambda m, x: x.flatten(),
    "narrow": lambda m, x: x.narrow(1, 1, 2),
    "movedim": lambda m, x: m.movedim(x, 0, 1),
    "unflatten": lambda m, x: x.unflatten(1, (2, 2)),
    "cat": lambda m, x: m.cat([x, x]),
    "stack": lambda m, x: m.stack([x, x], 1),
    "split": lambda m, x: x.split(2, 1)[1],
    "chunk": lambda m, x: x.chunk(2, 0)[0],
    "unbind": lambda m, x: x.unbind(1)[2],
    "repeat": lambda m, x: x.repeat(2, 1),
    "detach": lambda m, x: x.detach(),
    "index_int": lambda m, x: x[1, 2],
    "index_tensor": lambda m, x: x[m.tensor([2, 0])],
    "index_bool": lambda m, x: x[m.tensor([True, False, True])],
    "setitem": lambda m, x: x.clone().__setitem__((0, 1), 7) or x,
    "setitem_tensor": lambda m, x: x.clone().__setitem__(m.tensor([1]), x[0]) or x,
    "masked_select": lambda m, x: m.masked_select(x, m.ones(3, 4, dtype=m.bool)),
    "where": lambda m, x: m.where(m.ones(3, 4, dtype=m.bool), x, x),
    "index_select": lambda m, x: x.index_select(0, m.tensor([0, 2])),
    "gather": lambda m, x: x.gather(0, m.zeros(1, 4, dtype=m.int64)),
    "scatter": lambda m, x: x.clone().scatter_(0, m.zeros(1, 4, dtype=m.int64), x),
    "flip": lambda m, x: x.flip(0),
    "roll": lambda m, x: x.roll(1, 0),
    "tril": lambda m, x: x.tril(),
    "diagonal": lambda m, x: x.diagonal(),
    "diag": lambda m, x: x[0].diag(),
    "take": lambda m, x: x.take(m.tensor([0, 5])),
    "masked_fill": lambda m, x: x.masked_fill(m.ones(3, 4, dtype=m.bool), 1),
    "index_put_acc": lambda m, x: x.clone().index_put_((m.tensor([0]),), x[1], accumulate=True),
    "fill_": lambda m, x: x.clone().fill_(2),
    "zero_": lambda m, x: x.clone().zero_(),
    "zeros_like": lambda m, x: m.zeros_like(x),
    "ones_like": lambda m, x: m.ones_like(x),
    "full_like": lambda m, x: m.full_like(x, 3),
    "empty_like": lambda m, x: m.empty_like(x).shape,
    "copy_": lambda m, x: x.clone().copy_(m.arange(12.0).view(3, 4)),
    "to_float": lambda m, x: x.to(m.float32),
    "to_double": lambda m, x: x.double(),
    "to_int64": lambda m, x: x.long(),
    "to_bool": lambda m, x: x.bool(),
    "to_half": lambda m, x: x.half(),
    "to_uint8": lambda m, x: x.to(m.uint8),
    "from_float": lambda m, x: m.arange(12.0).view(3, 4).to(x.dtype),
    "mul": lambda m, x: x * x,
    "mul_": lambda m, x: x.clone().mul_(x),
    "mul_int": lambda m, x: x * 2,
    "mul_float": lambda m, x: x * 1.5,
    "mul_0dim_long": lambda m, x: x * m.tensor(2),
    "mul_f32": lambda m, x: x * m.ones(3, 4),
    "mul_i64": lambda m, x: x * m.ones(3, 4, dtype=m.int64),
    "add": lambda m, x: x + x,
    "add_int": lambda m, x: x + 1,
    "sub": lambda m, x: x - x,
    "div": lambda m, x: x / (x + 0 if False else x),
    "floordiv": lambda m, x: x // x,
    "rem": lambda m, x: x % x,
    "neg": lambda m, x: -x,
    "abs": lambda m, x: x.abs(),
    "abs_": lambda m, x: x.clone().abs_(),
    "sign": lambda m, x: x.sign(),
    "pow": lambda m, x: x ** 2,
    "exp": lambda m, x: x.exp(),
    "sqrt": lambda m, x: x.sqrt(),
    "relu": lambda m, x: m.relu(x),
    "clamp": lambda m, x: x.clamp(1, 5),
    "maximum": lambda m, x: m.maximum(x, x),
    "eq": lambda m, x: x == x,
    "eq_int": lambda m, x: x == 3,
    "ne": lambda m, x: x != x,
    "lt": lambda m, x: x < x,
    "gt_int": lambda m, x: x > 3,
    "isnan": lambda m, x: x.isnan(),
    "isinf": lambda m, x: x.isinf(),
    "isfinite": lambda m, x: x.isfinite(),
    "bitwise_and": lambda m, x: x & x,
    "bitwise_or": lambda m, x: x | x,
    "bitwise_xor": lambda m, x: x ^ x,
    "bitwise_not": lambda m, x: ~x,
    "lshift": lambda m, x: x << 1,
    "sum": lambda m, x: x.sum(),
    "sum_dim": lambda m, x: x.sum(1),
    "prod": lambda m, x: x.prod(),
    "mean": lambda m, x: x.mean(),
    "cumsum": lambda m, x: x.cumsum(1),
    "max": lambda m, x: x.max(),
    "max_dim": lambda m, x: x.max(1),
    "amax": lambda m, x: x.amax(1),
    "argmax": lambda m, x: x.argmax(),
    "min": lambda m, x: x.min(),
    "any": lambda m, x: x.any(),
    "all": lambda m, x: x.all(),
    "any_dim": lambda m, x: x.any(1),
    "sort": lambda m, x: x.sort(1),
    "sort_desc": lambda m, x: x.sort(0, descending=True),
    "argsort": lambda m, x: x.argsort(1),
    "topk": lambda m, x: x.topk(2),
    "unique": lambda m, x: m.unique(x),
    "nonzero": lambda m, x: x.nonzero(),
    "count_nonzero": lambda m, x: m.count_nonzero(x),
    "isclose": lambda m, x: m.isclose(x, x),
    "allclose": lambda m, x: m.allclose(x, x),
    "equal": lambda m, x: m.equal(x, x),
    "mm": lambda m, x: x @ x.t(),
    "matmul_vec": lambda m, x: x @ x[0],
    "arange": lambda m, x: m.arange(3, dtype=x.dtype),
    "linspace": lambda m, x: m.linspace(0, 3, 4, dtype=x.dtype),
    "rand": lambda m, x: m.rand(3, dtype=x.dtype).shape,
    "randint": lambda m, x: m.randint(0, 5, (3,), dtype=x.dtype).shape,
    "eye": lambda m, x: m.eye(3, dtype=x.dtype),
    "tolist": lambda m, x: x.tolist(),
    "item": lambda m, x: x[1, 1].item(),
    "repr": lambda m, x: repr(x).replace("minitorch", "torch"),
    "repr_0d": lambda m, x: repr(x[1, 1]).replace("minitorch", "torch"),
}


def outcome(lib, name, case):
    x = lib.arange(12).view(3, 4).to(getattr(lib, name))
    try:
        return CASES[case](lib, x), None
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return None, e


def as_plain(v):
    """A result as comparable Python data: tensors by dtype name, shape and values (bit patterns
    for float8, which NumPy has no dtype for)."""
    if isinstance(v, (tuple, list)) and not isinstance(v, (minitorch.Size, torch.Size)) \
            and not hasattr(v, "_fields"):
        return [as_plain(u) for u in v]
    if isinstance(v, (minitorch.Tensor, torch.Tensor)):
        name = str(v.dtype).split(".")[-1]
        lib = torch if isinstance(v, torch.Tensor) else minitorch
        bits = v.view(lib.uint8) if name.startswith("float8") else v
        return name, tuple(v.shape), as_plain(bits.tolist())
    if isinstance(v, (float, complex)) and v != v:
        return "nan" if isinstance(v, float) else ("nan", as_plain(v.imag))
    if hasattr(v, "_fields"):  # return_types: values, indices
        return [as_plain(u) for u in tuple(v)]
    return tuple(v) if isinstance(v, (minitorch.Size, torch.Size)) else v


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name", SHELL)
def test_op_matrix(name, case):
    got, err = outcome(minitorch, name, case)
    want, t_err = outcome(torch, name, case)
    if t_err or err:
        assert err is not None and t_err is not None, f"minitorch: {err!r}, PyTorch: {t_err!r}"
        assert type(err) is type(t_err), f"{err!r} vs {t_err!r}"
        if isinstance(t_err, NotImplementedError) or "Promotion" in str(t_err):
            assert str(err) == str(t_err).split("\n")[0]
        return
    if case == "rand" or case == "randint" or case == "empty_like":
        assert got == tuple(want)
        return
    mine, theirs = as_plain(got), as_plain(want)
    if isinstance(theirs, tuple) and theirs[0].startswith("float") and not theirs[0].startswith("float8"):
        # floats computed (exp, sqrt, /): as PyTorch's to float32 rounding, not bit for bit
        assert mine[:2] == theirs[:2]
        np.testing.assert_allclose(np.array(got.tolist(), dtype=np.float64),
                                   np.array(want.tolist(), dtype=np.float64), rtol=1e-6)
        return
    assert mine == theirs


# ---- the dtype objects and their limits ----

@pytest.mark.parametrize("name", SHELL)
def test_dtype_attributes(name):
    d, t = dts(name)
    assert (d.itemsize, d.is_floating_point, d.is_signed, d.is_complex) == \
        (t.itemsize, t.is_floating_point, t.is_signed, t.is_complex)
    assert repr(d) == repr(t).replace("torch.", "minitorch.")
    x, y = minitorch.zeros(2, dtype=d), torch.zeros(2, dtype=t)
    assert (x.element_size(), x.is_floating_point(), x.is_signed()) == \
        (y.element_size(), y.is_floating_point(), y.is_signed())
    assert x.type() == y.type().replace("torch.", "minitorch.")


@pytest.mark.parametrize("name", UINTS)
def test_iinfo(name):
    d, t = dts(name)
    f, g = minitorch.iinfo(d), torch.iinfo(t)
    assert (f.bits, f.min, f.max, f.dtype) == (g.bits, g.min, g.max, g.dtype)
    assert repr(f) == repr(g)
    with pytest.raises(TypeError):
        minitorch.finfo(d)


@pytest.mark.parametrize("name", FLOAT8)
def test_finfo(name):
    d, t = dts(name)
    f, g = minitorch.finfo(d), torch.finfo(t)
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(f, field) == getattr(g, field), field
    assert repr(f) == repr(g)
    with pytest.raises(TypeError):
        minitorch.iinfo(d)


@pytest.mark.parametrize("a", SHELL + OTHERS)
@pytest.mark.parametrize("b", SHELL)
def test_promote_types(a, b):
    for x, y in ((a, b), (b, a)):
        assert minitorch.can_cast(getattr(minitorch, x), getattr(minitorch, y)) == \
            torch.can_cast(getattr(torch, x), getattr(torch, y)), (x, y)
        try:
            want = str(torch.promote_types(getattr(torch, x), getattr(torch, y))).split(".")[-1]
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as got:
                minitorch.promote_types(getattr(minitorch, x), getattr(minitorch, y))
            assert str(got.value) == str(e)
            continue
        assert str(minitorch.promote_types(getattr(minitorch, x), getattr(minitorch, y))).split(".")[-1] == want


# ---- conversions ----

def cast_sources():
    """Values every dtype can hold some of: integers, fractions, negatives, large ones."""
    v = np.array([0, 1, 2, 3, 7, 100, 255, 256, 1000, 65535, 65536, 2 ** 31 - 1], dtype=np.float64)
    return np.concatenate([v, [0.5, 1.5, 2.5, -0.0, 3.75, 0.0625, 447.0, 449.0, 1e-3]])


@pytest.mark.parametrize("src", OTHERS)
@pytest.mark.parametrize("dst", SHELL)
def test_cast_to_and_from(src, dst):
    vals = cast_sources()
    if src in ("bool",):
        vals = vals[:4] != 0
    for lib_vals in (vals,):
        a = minitorch.tensor(lib_vals).to(getattr(minitorch, src))
        b = torch.tensor(lib_vals).to(getattr(torch, src))
        if src == "complex64" or src == "complex128":
            a, b = a.real.to(a.dtype), b.real.to(b.dtype)
        x, y = a.to(getattr(minitorch, dst)), b.to(getattr(torch, dst))
        assert as_plain(x) == as_plain(y), (src, dst)
        # and back: to the source dtype from the shell dtype
        assert as_plain(x.to(getattr(minitorch, src))) == as_plain(y.to(getattr(torch, src))), (dst, src)


@pytest.mark.parametrize("a", SHELL)
@pytest.mark.parametrize("b", SHELL)
def test_cast_between_shell_dtypes(a, b):
    vals = np.array([0, 1, 2, 3, 7, 12, 100, 200, 240, 448], dtype=np.float64)
    x = minitorch.tensor(vals).to(getattr(minitorch, a)).to(getattr(minitorch, b))
    y = torch.tensor(vals).to(getattr(torch, a)).to(getattr(torch, b))
    assert as_plain(x) == as_plain(y)


@pytest.mark.parametrize("name", UINTS)
def test_negative_and_wide_integers_wrap(name):
    vals = [-1, -2, 2 ** 16 + 5, 2 ** 32 + 7, -(2 ** 40)]
    x = minitorch.tensor(vals).to(getattr(minitorch, name))
    y = torch.tensor(vals).to(getattr(torch, name))
    assert x.tolist() == y.tolist()
    assert x.to(minitorch.int64).tolist() == y.to(torch.int64).tolist()
    assert x.double().tolist() == y.double().tolist()


def test_uint64_above_int64():
    big = np.array([2 ** 64 - 1, 2 ** 63, 2 ** 63 - 1, 12345], dtype=np.uint64)
    x, y = minitorch.from_numpy(big), torch.from_numpy(big)
    assert x.tolist() == y.tolist() == big.tolist()
    assert x[0].item() == 2 ** 64 - 1
    assert x.double().tolist() == y.double().tolist()
    assert x.float().tolist() == y.float().tolist()
    assert (x == x).all().item() and (x * x).tolist() == (y * y).tolist()
    assert x.sum().item() == y.sum().item()
    assert same_text(repr(x), repr(y))
    f = np.array([-1.0, 1e19, 2.5, 9.3e18], dtype=np.float32)
    assert minitorch.from_numpy(f).to(minitorch.uint64).tolist() == torch.from_numpy(f).to(torch.uint64).tolist()


@pytest.mark.parametrize("name", UINTS)
def test_full_checks_range(name):
    d, t = dts(name)
    for v in (-1, 65535, 65536, 2 ** 32, -1.5, 7.9, 2 ** 40):
        try:
            want = torch.full((2,), v, dtype=t).tolist()
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as got:
                minitorch.full((2,), v, dtype=d)
            assert str(got.value) == str(e)
            continue
        assert minitorch.full((2,), v, dtype=d).tolist() == want


# ---- NumPy, DLPack, printing ----

@pytest.mark.parametrize("name", UINTS)
def test_numpy_in_and_out(name):
    a = np.arange(12, dtype=name).reshape(3, 4)[:, ::2]
    x = minitorch.from_numpy(np.ascontiguousarray(a))
    assert x.dtype is getattr(minitorch, name)
    assert x.numpy().dtype == np.dtype(name)
    np.testing.assert_array_equal(x.numpy(), a)
    assert minitorch.tensor(a).dtype is getattr(minitorch, name)
    assert minitorch.tensor(getattr(np, name)(5)).dtype is getattr(minitorch, name)
    x.numpy()[0, 0] = 9  # shares memory
    assert x[0, 0].item() == 9


@pytest.mark.parametrize("name", FLOAT8)
def test_numpy_refuses_float8(name):
    with pytest.raises(TypeError) as got:
        minitorch.zeros(2, dtype=getattr(minitorch, name)).numpy()
    with pytest.raises(TypeError) as want:
        torch.zeros(2, dtype=getattr(torch, name)).numpy()
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name", SHELL)
def test_dlpack_both_ways(name):
    d, t = dts(name)
    x = minitorch.arange(6).view(2, 3).to(d)
    y = torch.from_dlpack(x)
    assert y.dtype == t and as_plain(y) == as_plain(torch.arange(6).view(2, 3).to(t))
    z = minitorch.from_dlpack(torch.arange(6).to(t))
    assert z.dtype is d and as_plain(z) == as_plain(minitorch.arange(6).to(d))


def same_text(mine, theirs):
    """Equal reprs but for the module name, and the line breaks that its longer dtype names
    move (minitorch's repr wraps `dtype=minitorch.x` at 80 columns by its own length)."""
    return " ".join(mine.split()) == " ".join(theirs.replace("torch.", "minitorch.").split())


@pytest.mark.parametrize("name", SHELL)
def test_repr(name):
    d, t = dts(name)
    vals = [[0.0, 1.5, 3.25], [-2.0, 100.0, 0.0625]] if name.startswith("float8") else [[0, 1, 300], [7, 65535, 2]]
    x, y = minitorch.tensor(vals).to(d), torch.tensor(vals).to(t)
    assert same_text(repr(x), repr(y))
    assert same_text(repr(x[1, 1]), repr(y[1, 1]))
    assert same_text(str(x.t()), str(y.t()))


@pytest.mark.parametrize("name", FLOAT8)
def test_special_values_print_and_compare(name):
    d, t = dts(name)
    vals = [float("nan"), float("inf"), -float("inf"), -0.0, 1e-3, 1e6]
    x, y = minitorch.tensor(vals).to(d), torch.tensor(vals).to(t)
    assert as_plain(x) == as_plain(y)
    assert same_text(repr(x), repr(y))
    assert x.isnan().tolist() == y.isnan().tolist()
    assert (x == x).tolist() == (y == y).tolist()


# ---- computing through the widening: values against PyTorch on other inputs ----

@pytest.mark.parametrize("name", UINTS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_uint_compute_ops(name, layout):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 1000, (4, 5)).astype(np.float64)
    b = rng.integers(0, 1000, (4, 5)).astype(np.float64)

    def as_dt(lib, t):
        return t.to(getattr(lib, name))

    for fn in (lambda m, x, y: as_dt(m, x) * as_dt(m, y), lambda m, x, y: as_dt(m, x) == as_dt(m, y),
               lambda m, x, y: as_dt(m, x) & as_dt(m, y), lambda m, x, y: as_dt(m, x) ^ as_dt(m, y),
               lambda m, x, y: as_dt(m, x) / as_dt(m, y),
               lambda m, x, y: as_dt(m, x).sum(0), lambda m, x, y: as_dt(m, x).cumsum(1),
               lambda m, x, y: as_dt(m, x).sort(1).values, lambda m, x, y: as_dt(m, x).argsort(0),
               lambda m, x, y: as_dt(m, x).prod(1), lambda m, x, y: m.unique(as_dt(m, x)),
               lambda m, x, y: as_dt(m, x) * 3, lambda m, x, y: as_dt(m, x) == 4.0):
        same_as_torch(fn, [a, b], layout=layout, grad=False)


@pytest.mark.parametrize("name", FLOAT8)
def test_float8_compute_ops(name):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 5)) * 4
    b = rng.standard_normal((5, 3))

    def as_dt(lib, t):
        return t.to(getattr(lib, name))

    for fn in (lambda m, x, y: as_dt(m, x) * as_dt(m, x), lambda m, x, y: as_dt(m, x).abs(),
               lambda m, x, y: as_dt(m, x) @ as_dt(m, y), lambda m, x, y: as_dt(m, x) != as_dt(m, x).t().t()):
        same_as_torch(lambda m, x, y: fn(m, x, y).float() if fn(m, x, y).dtype != m.bool else fn(m, x, y),
                      [a, b], grad=False)


def test_shell_dtypes_on_cuda_refused_clearly():
    if not minitorch.cuda.is_available():
        pytest.skip("no CUDA device")
    with pytest.raises(NotImplementedError, match="UInt16"):
        minitorch.zeros(3, dtype=minitorch.uint16).cuda()
