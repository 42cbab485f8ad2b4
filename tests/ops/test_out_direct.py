"""out= written straight into out (csrc/python/out.c, mt_args.into): the elementwise family, the
matrix products and the reductions over dims, against PyTorch, for every kind of out a kernel may
write or must not: out of the result's shape, empty (resized first), transposed, strided, of another
dtype, of another shape with elements (PyTorch's warning), an input itself, a view of an input, in
part over an input; the values, out's layout, the same object, its version, its memory, and the
errors. tests/ops/test_out.py covers out='s rules op by op; this file, where out is written."""
import warnings

import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(21)
A = RNG.standard_normal((4, 4)).astype(np.float32)
B = RNG.standard_normal((4, 4)).astype(np.float32)
V = RNG.standard_normal(4).astype(np.float32)
A3 = RNG.standard_normal((2, 4, 4)).astype(np.float32)

# name -> (call(L, a, b, o), the result's shape); a and b are (4, 4) float32 tensors
CALLS = {
    "neg": (lambda L, a, b, o: L.neg(a, out=o), (4, 4)),
    "exp": (lambda L, a, b, o: L.exp(a, out=o), (4, 4)),
    "sigmoid": (lambda L, a, b, o: L.sigmoid(a, out=o), (4, 4)),
    "add": (lambda L, a, b, o: L.add(a, b, out=o), (4, 4)),
    "add_alpha": (lambda L, a, b, o: L.add(a, b, alpha=-2, out=o), (4, 4)),
    "sub_alpha": (lambda L, a, b, o: L.sub(a, b, alpha=3, out=o), (4, 4)),
    "mul": (lambda L, a, b, o: L.mul(a, b, out=o), (4, 4)),
    "mul_number": (lambda L, a, b, o: L.mul(a, 2.5, out=o), (4, 4)),
    "div_broadcast": (lambda L, a, b, o: L.div(a, b[0], out=o), (4, 4)),
    "maximum": (lambda L, a, b, o: L.maximum(a, b, out=o), (4, 4)),
    "lt": (lambda L, a, b, o: L.lt(a, b, out=o), (4, 4)),
    "eq_number": (lambda L, a, b, o: L.eq(a, 0, out=o), (4, 4)),
    "where": (lambda L, a, b, o: L.where(a > 0, a, b, out=o), (4, 4)),
    "clamp": (lambda L, a, b, o: L.clamp(a, -0.5, 0.5, out=o), (4, 4)),
    "clamp_tensor": (lambda L, a, b, o: L.clamp(a, min=b, out=o), (4, 4)),
    "clamp_min": (lambda L, a, b, o: L.clamp_min(a, 0.0, out=o), (4, 4)),
    "mm": (lambda L, a, b, o: L.mm(a, b, out=o), (4, 4)),
    "mm_transposed": (lambda L, a, b, o: L.mm(a.t(), b, out=o), (4, 4)),
    "addmm": (lambda L, a, b, o: L.addmm(b[0], a, b, beta=0.5, alpha=2, out=o), (4, 4)),
    "matmul": (lambda L, a, b, o: L.matmul(a, b, out=o), (4, 4)),
    "matmul_mv": (lambda L, a, b, o: L.matmul(a, b[1], out=o), (4,)),
    "mv": (lambda L, a, b, o: L.mv(a, b[1], out=o), (4,)),
    "bmm": (lambda L, a, b, o: L.bmm(a[None], b[None], out=o), (1, 4, 4)),
    "baddbmm": (lambda L, a, b, o: L.baddbmm(a[None], a[None], b[None], alpha=0.5, out=o), (1, 4, 4)),
    "sum_0": (lambda L, a, b, o: L.sum(a, 0, out=o), (4,)),
    "sum_1_keepdim": (lambda L, a, b, o: L.sum(a, 1, keepdim=True, out=o), (4, 1)),
    "sum_all": (lambda L, a, b, o: L.sum(a, (0, 1), out=o), ()),
    "mean_1": (lambda L, a, b, o: L.mean(a, 1, out=o), (4,)),
    "amax_0": (lambda L, a, b, o: L.amax(a, 0, out=o), (4,)),
    "amin_1": (lambda L, a, b, o: L.amin(a, 1, out=o), (4,)),
}
BOOL_RESULT = {"lt", "eq_number"}


def make_out(lib, kind, shape, dtype):
    """An out of the given kind for a result of shape (and the tensor it is a view of, if any)."""
    if kind == "same":
        return lib.full(shape, 7, dtype=dtype)
    if kind == "empty":
        return lib.empty(0, dtype=dtype)
    if kind == "transposed":  # the result's shape, its dims' strides reversed
        return lib.full(shape[::-1], 7, dtype=dtype).permute(*range(len(shape))[::-1])
    if kind == "strided":  # every other element of a larger buffer
        base = lib.full(shape[:-1] + (2 * shape[-1],) if shape else (2,), 7, dtype=dtype)
        return base[..., ::2] if shape else base[0]
    if kind == "other_shape":
        return lib.full((3, 5), 7, dtype=dtype)
    raise AssertionError(kind)


def outcome(lib, call, a, b, o):
    """What a call does to out: its values, dtype, shape, strides and version change, whether
    the same object came back and whether out kept its memory; or the error and its message."""
    version, ptr = o._version, o.data_ptr()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = call(lib, a, b, o)
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            return type(e).__name__, str(e).split("\n")[0]
    warned = [str(m.message).split(" (Triggered")[0] for m in w]
    return ("ok", r is o, np.asarray(o).tolist(), str(o.dtype).split(".")[-1], tuple(o.shape), o.stride(),
            o._version - version, o.data_ptr() == ptr, warned)


def assert_like_torch(call, make_operands, make_o, tol=1e-5):
    ours = outcome(minitorch, call, *make_operands(minitorch), make_o(minitorch))
    theirs = outcome(torch, call, *make_operands(torch), make_o(torch))
    if ours[0] == "ok" and theirs[0] == "ok":
        np.testing.assert_allclose(np.array(ours[2], dtype=np.float64), np.array(theirs[2], dtype=np.float64),
                                   rtol=tol, atol=tol)
        ours, theirs = ours[:2] + ours[3:], theirs[:2] + theirs[3:]
    assert ours == theirs


def operands(lib):
    return lib.tensor(A), lib.tensor(B)


@pytest.mark.parametrize("kind", ["same", "empty", "transposed", "strided", "other_shape"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_out_of_each_kind_like_torch(name, kind):
    call, shape = CALLS[name]
    if kind == "transposed" and len(shape) < 2:
        pytest.skip("no dims to transpose")
    dtype = "bool" if name in BOOL_RESULT else "float32"
    assert_like_torch(call, operands, lambda L: make_out(L, kind, shape, getattr(L, dtype)))


# out='s dtype rule as python/out.c had it before out= was written directly, where it differs from
# PyTorch's (a cast refused, or another message): left as it was
RULE_DIFFERS = {"clamp_tensor": "clamp(Tensor) refuses another dtype (OUT_SAME); PyTorch casts",
                "mv": "PyTorch's message is addmv's", "matmul_mv": "PyTorch's message is addmv's"}


@pytest.mark.parametrize("dtype", ["float64", "int64", "bool", "float16"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_out_of_another_dtype_like_torch(name, dtype):
    """Cast where the op's rule allows (the result is made, then copied in), else PyTorch's error,
    with out left as it was."""
    if name in RULE_DIFFERS:
        pytest.skip(RULE_DIFFERS[name])
    call, shape = CALLS[name]
    tol = 1e-2 if dtype == "float16" else 1e-5
    assert_like_torch(call, operands, lambda L: make_out(L, "same", shape, getattr(L, dtype)), tol)


ELEMENTWISE = {"neg", "exp", "sigmoid", "add", "add_alpha", "sub_alpha", "mul", "mul_number", "div_broadcast",
               "maximum", "lt", "eq_number", "where", "clamp", "clamp_tensor", "clamp_min"}
# The products' and reductions' values, from NumPy (a, b the (4, 4) operands)
REFERENCE = {
    "mm": lambda a, b: a @ b, "mm_transposed": lambda a, b: a.T @ b,
    "addmm": lambda a, b: 0.5 * b[0] + 2 * (a @ b), "matmul": lambda a, b: a @ b,
    "matmul_mv": lambda a, b: a @ b[1], "mv": lambda a, b: a @ b[1], "bmm": lambda a, b: (a @ b)[None],
    "baddbmm": lambda a, b: (a + 0.5 * (a @ b))[None], "sum_0": lambda a, b: a.sum(0),
    "sum_1_keepdim": lambda a, b: a.sum(1, keepdims=True), "sum_all": lambda a, b: a.sum(),
    "mean_1": lambda a, b: a.mean(1), "amax_0": lambda a, b: a.max(0), "amin_1": lambda a, b: a.min(1),
}
ALIASES = {"a": lambda a, b: a, "b": lambda a, b: b, "a_view": lambda a, b: a[:], "a_t": lambda a, b: a.t(),
           "a_row": lambda a, b: a[1], "a_half": lambda a, b: a[:2], "b_reshaped": lambda a, b: b.view(16).view(4, 4)}
# The aliases over an input of each call in part (the same bytes in another layout: the calls pass
# views such as a.t(), b[0], a[None]); the others are an input's own view, or share nothing.
A_PARTS, B_ALL = {"a_t", "a_row", "a_half"}, {"b", "b_reshaped"}
PARTIAL = {"mm": A_PARTS, "matmul": A_PARTS, "mm_transposed": {"a", "a_view", "a_row", "a_half"},
           "addmm": A_PARTS | B_ALL, "mv": A_PARTS | B_ALL, "matmul_mv": A_PARTS | B_ALL,
           "bmm": set(ALIASES), "baddbmm": set(ALIASES)}


@pytest.mark.parametrize("which", sorted(ALIASES))
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_out_aliasing_an_input_like_torch(name, which):
    """out is an input or the same view of one: computed in place; in part over one: PyTorch's
    error. The inputs after the call too."""
    call, _ = CALLS[name]
    results = []
    for lib in (minitorch, torch):
        a, b = operands(lib)
        o = ALIASES[which](a, b)
        results.append((outcome(lib, call, a, b, o), np.asarray(a).tolist(), np.asarray(b).tolist()))
    (ours, a1, b1), (theirs, a2, b2) = results
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] != "ok":
        assert ours == theirs
        return
    np.testing.assert_allclose(np.array(ours[2], dtype=np.float64), np.array(theirs[2], dtype=np.float64),
                               rtol=1e-5, atol=1e-5)
    assert ours[:2] + ours[3:] == theirs[:2] + theirs[3:]
    np.testing.assert_allclose(a1, a2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b1, b2, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("which", sorted(ALIASES))
@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_product_and_reduction_out_aliasing_an_input_is_right(name, which):
    """A product or a reduction into one of its inputs is computed before out is written (PyTorch's
    own mm into an operand reads what it already wrote, and gives other values): the result is the
    product of the inputs as they were. An out in part over an input is refused (PyTorch checks no
    overlap for these)."""
    call, shape = CALLS[name]
    a, b = operands(minitorch)
    o = ALIASES[which](a, b)
    if which in PARTIAL.get(name, A_PARTS):
        with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor"):
            call(minitorch, a, b, o)
        np.testing.assert_array_equal(np.asarray(a), A)
        return
    version = o._version
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert call(minitorch, a, b, o) is o
    assert tuple(o.shape) == shape and o._version == version + 1
    np.testing.assert_allclose(np.asarray(o), REFERENCE[name](A, B), rtol=1e-5, atol=1e-5)
    assert len(w) == (0 if o.numel() == 16 else 1)  # a (4, 4) out of another shape is resized, with the warning


def test_add_into_its_first_input_computes_in_place():
    for lib in (minitorch, torch):
        x, y = lib.tensor(A), lib.tensor(B)
        ptr, version = x.data_ptr(), x._version
        assert lib.add(x, y, alpha=2, out=x) is x
        assert x.data_ptr() == ptr and x._version == version + 1
        np.testing.assert_allclose(np.asarray(x), A + 2 * B, rtol=1e-6)
        view = x[1:3]
        lib.mul(view, view, out=view)  # a view in place, the rest untouched
        expect = A + 2 * B
        expect[1:3] *= expect[1:3]
        np.testing.assert_allclose(np.asarray(x), expect, rtol=1e-5)


def test_mm_into_an_operand_is_still_the_product():
    for lib in (minitorch,):  # PyTorch's mm reads the operand it is writing (other values)
        a, b = lib.tensor(A), lib.tensor(B)
        lib.mm(a, b, out=a)
        np.testing.assert_allclose(np.asarray(a), A @ B, rtol=1e-5, atol=1e-6)
        a, b = lib.tensor(A), lib.tensor(B)
        lib.mm(a, b, out=b)
        np.testing.assert_allclose(np.asarray(b), A @ B, rtol=1e-5, atol=1e-6)
        c = lib.tensor(A3)
        lib.bmm(c, c, out=c)
        np.testing.assert_allclose(np.asarray(c), A3 @ A3, rtol=1e-5, atol=1e-5)
        s = lib.tensor(A)
        with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor"):
            lib.sum(s, 0, keepdim=True, out=s[:1])  # in part over its input: refused
        np.testing.assert_array_equal(np.asarray(s), A)


@pytest.mark.parametrize("name", ["mul", "add_alpha", "where", "clamp", "mm", "addmm", "matmul", "mv",
                                  "bmm", "baddbmm", "sum_0", "mean_1", "amax_0"])
def test_out_refuses_autograd(name):
    call, shape = CALLS[name]
    dtype = "bool" if name in BOOL_RESULT else "float32"
    for lib in (minitorch, torch):
        a = lib.tensor(A, requires_grad=True)
        o = make_out(lib, "same", shape, getattr(lib, dtype))
        before, version = np.asarray(o).copy(), o._version
        with pytest.raises(RuntimeError) as e:
            call(lib, a, lib.tensor(B), o)
        assert "functions with out=... arguments don't support automatic differentiation, but one of the " \
               "arguments requires grad." in str(e.value)
        np.testing.assert_array_equal(np.asarray(o), before)  # nothing written
        assert o._version == version


def ops_run(call):
    """The ops a call runs, from the profiler."""
    with minitorch.profiler.profile() as prof:
        call()
    return {e.key for e in prof.key_averages()}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_out_of_the_results_layout_takes_no_copy(name):
    """The kernel writes into out itself: no copy_ runs (the result of another layout or dtype
    goes through one, as before)."""
    call, shape = CALLS[name]
    dtype = minitorch.bool if name in BOOL_RESULT else minitorch.float32
    a, b = operands(minitorch)
    o = minitorch.empty(shape, dtype=dtype)
    ran = ops_run(lambda: call(minitorch, a, b, o))
    assert not any("copy_" in k for k in ran), ran
    o = minitorch.empty(0, dtype=dtype)  # resized first, then written
    assert not any("copy_" in k for k in ops_run(lambda: call(minitorch, a, b, o))), name
    o = minitorch.empty((3, 5), dtype=dtype)  # of another shape: made anew, then copied in
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert any("copy_" in k for k in ops_run(lambda: call(minitorch, a, b, o)))


def test_out_on_large_and_broadcast_operands():
    x = RNG.standard_normal((300, 257)).astype(np.float32)
    y = RNG.standard_normal(257).astype(np.float32)
    for lib in (minitorch, torch):
        o = lib.empty(300, 257)
        lib.mul(lib.tensor(x), lib.tensor(y), out=o)
        np.testing.assert_allclose(np.asarray(o), x * y, rtol=1e-6)
        o = lib.empty(257, 300).t()
        lib.sub(lib.tensor(x), lib.tensor(y), alpha=2, out=o)
        np.testing.assert_allclose(np.asarray(o), x - 2 * y, rtol=1e-6)
        s = lib.empty(257)
        lib.sum(lib.tensor(x), 0, out=s)
        np.testing.assert_allclose(np.asarray(s), x.sum(0), rtol=1e-4, atol=1e-4)


def test_out_on_each_device(device):
    """The same path on every device: the front ends are the device's too."""
    a, b = (minitorch.tensor(x, device=device) for x in (A, B))
    o, s, m = (minitorch.empty(shape, device=device) for shape in ((4, 4), (4,), (4, 4)))
    ran = ops_run(lambda: (minitorch.mul(a, b, out=o), minitorch.sum(a, 0, out=s), minitorch.mm(a, b, out=m),
                           minitorch.add(a, b, alpha=2, out=a)))
    assert not any("copy_" in k for k in ran), ran
    np.testing.assert_allclose(o.cpu().numpy(), A * B, rtol=1e-6)
    np.testing.assert_allclose(s.cpu().numpy(), A.sum(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.cpu().numpy(), A @ B, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(a.cpu().numpy(), A + 2 * B, rtol=1e-6)
    with pytest.raises(RuntimeError, match="Expected out tensor to have device"):
        minitorch.mm(a, b, out=minitorch.empty(4, 4, device="cpu" if device != "cpu" else "meta"))
