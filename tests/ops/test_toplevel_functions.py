"""The top-level functions of minitorch/_toplevel.py against PyTorch: values, dtypes, shapes,
gradients and errors (isin, rsub, unravel_index, scalar_tensor, empty_strided, asarray, frombuffer,
fill, polar, complex, chain_matmul, pdist, nuclear/frobenius norms, the in-place forms, the
*_copy functions, unsafe splits, the neg bit, the removed linalg functions)."""
import array
import math
import warnings

import numpy as np
import pytest

import minitorch
from helpers import as_numpy, same_as_torch, same_error

RNG = np.random.default_rng(3)


def _torch():
    return pytest.importorskip("torch")


def test_constants():
    assert minitorch.e == math.e and minitorch.pi == math.pi
    assert minitorch.inf == math.inf and math.isnan(minitorch.nan) and minitorch.newaxis is None
    assert tuple(minitorch.zeros(2, 3)[:, minitorch.newaxis].shape) == (2, 1, 3)


ISIN_CASES = [
    (np.array([1, 2, 3, 4]), np.array([2, 4, 9])),
    (np.array([[1.5, 2.0], [np.nan, 3.0]]), np.array([2.0, np.nan, 1.5])),
    (np.array([1, 2, 3]), np.array([2.0])),
    (np.array([1.0, 2.0]), np.array([], dtype=np.float64)),
    (np.zeros((0, 3)), np.array([1.0])),
    (np.array([3, 1, 3, 2]), np.array([[3, 3], [7, 1]])),
]


@pytest.mark.parametrize("case", range(len(ISIN_CASES)))
@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_isin(case, invert, layout):
    a, b = ISIN_CASES[case]
    if layout == "transposed" and a.ndim < 2:
        pytest.skip("1-d")
    same_as_torch(lambda lib, x, y: lib.isin(x, y, invert=invert), [a, b], layout=layout, grad=False)
    same_as_torch(lambda lib, x: lib.isin(x, 2, invert=invert), [a], grad=False)
    same_as_torch(lambda lib, y: lib.isin(2, y, invert=invert), [b], grad=False)


def test_isin_errors():
    with pytest.raises(TypeError, match="isin"):
        minitorch.isin(2, 3)


@pytest.mark.parametrize("other", ["tensor", 3, 2.5, "broadcast"])
@pytest.mark.parametrize("alpha", [1, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_rsub(other, alpha, dtype):
    a = (RNG.standard_normal((3, 4)) * 5).astype(dtype)
    if other == "tensor":
        same_as_torch(lambda lib, x, y: lib.rsub(x, y, alpha=alpha), [a, RNG.standard_normal((3, 4))])
    elif other == "broadcast":
        same_as_torch(lambda lib, x, y: lib.rsub(x, y, alpha=alpha), [a, np.array([1.0, 2, 3, 4])])
    else:
        same_as_torch(lambda lib, x: lib.rsub(x, other, alpha=alpha), [a])
    same_error(lambda lib, x: lib.rsub(x, True), np.array([True, False]))


@pytest.mark.parametrize("indices, shape", [
    (np.array([4, 5, 0, 1]), (2, 3)),
    (np.array([[7, -1], [-7, 23]]), (2, 3, 4)),
    (np.array(6), (2, 3)),
    (np.array([3]), 5),
    (np.array([0, 1]), ()),
    (np.zeros((0,), dtype=np.int64), (4, 0)),
    (np.array([5], dtype=np.int32), (3, 2)),
])
def test_unravel_index(indices, shape):
    torch = _torch()
    got = minitorch.unravel_index(minitorch.tensor(indices), shape)
    want = torch.unravel_index(torch.tensor(indices), shape)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == minitorch.int64 and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_array_equal(as_numpy(g), w.numpy())


def test_unravel_index_errors():
    with pytest.raises(TypeError, match="expected 'indices' to be integer dtype, but got minitorch.float32"):
        minitorch.unravel_index(minitorch.tensor(1.0), (2, 3))
    with pytest.raises(ValueError, match="'shape' cannot have negative values, but got"):
        minitorch.unravel_index(minitorch.tensor(1), (2, -3))


def test_scalar_tensor_and_empty_strided():
    torch = _torch()
    for s, kw in ((3, {}), (2.5, {}), (True, {}), (3, {"dtype": "int64"}), (1.5, {"dtype": "float64"})):
        got = minitorch.scalar_tensor(s, **{k: getattr(minitorch, v) for k, v in kw.items()})
        want = torch.scalar_tensor(s, **{k: getattr(torch, v) for k, v in kw.items()})
        assert got.shape == () and str(got.dtype)[10:] == str(want.dtype)[6:] and got.item() == want.item()
    assert minitorch.scalar_tensor(2.0, requires_grad=True).requires_grad
    for size, stride in (((2, 3), (1, 2)), ((2, 3), (3, 1)), ((4,), (2,)), ((2, 0), (1, 1)), ((), ()),
                         ((2, 3, 4), (1, 8, 2))):
        got = minitorch.empty_strided(size, stride, dtype=minitorch.float64)
        want = torch.empty_strided(size, stride, dtype=torch.float64)
        assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
        assert got.dtype == minitorch.float64
    t = minitorch.empty_strided((2, 3), (1, 2), requires_grad=True)
    assert t.requires_grad and t.is_leaf


def test_fill_and_inplace_forms():
    torch = _torch()
    same_as_torch(lambda lib, x: lib.fill(x, 3), [RNG.standard_normal((2, 3))])
    same_as_torch(lambda lib, x: lib.fill(x.t(), lib.tensor(2.5)), [RNG.standard_normal((2, 3))], grad=False)
    a = RNG.uniform(0.5, 2, (3, 4))
    cases = {
        "abs_": (), "exp_": (), "log_": (), "sqrt_": (), "sin_": (), "cos_": (), "tanh_": (), "sigmoid_": (),
        "neg_": (), "negative_": (), "reciprocal_": (), "rsqrt_": (), "square_": (), "expm1_": (),
        "log1p_": (), "log2_": (), "log10_": (), "exp2_": (), "arcsinh_": (), "arctan_": (),
        "clamp_": (0.7, 1.5), "clamp_min_": (1.0,), "clamp_max_": (1.0,), "zero_": (), "fill_": (4.0,),
    }
    for name, args in cases.items():
        m, t = minitorch.tensor(a), torch.tensor(a)
        got = getattr(minitorch, name)(m, *args)
        getattr(torch, name)(t, *args)
        assert got is m, name
        np.testing.assert_allclose(as_numpy(m), t.numpy(), rtol=1e-12, err_msg=name)
    with pytest.raises(TypeError, match="exp_"):
        minitorch.exp_(3.0)


def test_polar_and_complex():
    r, th = RNG.uniform(0.5, 2, (3, 4)), RNG.standard_normal((3, 4))
    for dtype in (np.float32, np.float64):
        same_as_torch(lambda lib, a, b: lib.view_as_real(lib.polar(a, b)), [r.astype(dtype), th.astype(dtype)],
                      atol=1e-5)
        same_as_torch(lambda lib, a, b: lib.view_as_real(lib.complex(a, b)), [r.astype(dtype), th.astype(dtype)])
    same_as_torch(lambda lib, a, b: lib.view_as_real(lib.complex(a.t(), b)), [r.T.copy(), th[:1]])
    got = minitorch.complex(minitorch.tensor([1.0]), minitorch.tensor([2.0]))
    assert got.dtype == minitorch.complex64 and got.tolist() == [1 + 2j]
    same_error(lambda lib, a, b: lib.polar(a, b), np.array([1, 2]), np.array([0.5, 1.0]))
    same_error(lambda lib, a, b: lib.complex(a, b.double()), np.array([1.0], np.float32),
               np.array([0.5], np.float32))
    r32 = minitorch.tensor([1.0, 2.0])
    assert minitorch.tensor([1.0]).cfloat().dtype == minitorch.complex64
    assert r32.cdouble().dtype == minitorch.complex128 and r32.cdouble().tolist() == [1 + 0j, 2 + 0j]


def test_chain_matmul_pdist_and_norms():
    a, b, c = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5)), RNG.standard_normal((5, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_as_torch(lambda lib, x, y, z: lib.chain_matmul(x, y, z), [a, b, c])
        same_as_torch(lambda lib, x: lib.chain_matmul(x), [a])
        same_as_torch(lambda lib, x: lib.nuclear_norm(x), [a], atol=1e-6)
        same_as_torch(lambda lib, x: lib.nuclear_norm(x, (0, 2), keepdim=True), [RNG.standard_normal((3, 2, 4))],
                      atol=1e-6)
        same_as_torch(lambda lib, x: lib.frobenius_norm(x, (0, 1)), [a])
        same_as_torch(lambda lib, x: lib.frobenius_norm(x, 1, True), [a])
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        minitorch.chain_matmul(minitorch.ones(2, 2), minitorch.ones(2, 2))
    for p in (2, 1, 3.5, 0, math.inf):
        same_as_torch(lambda lib, x: lib.pdist(x, p), [RNG.standard_normal((5, 3))], atol=1e-6)
    same_error(lambda lib, x: lib.pdist(x), RNG.standard_normal(4))


@pytest.mark.parametrize("name, args", [
    ("view", ((4, 3),)), ("permute", ((1, 0, 2),)), ("t", ()), ("transpose", (0, 2)), ("expand", ((2, 3, 3, 4),)),
    ("diagonal", (0, 1, 2)), ("select", (1, 2)), ("squeeze", ()), ("unsqueeze", (1,)), ("unfold", (2, 2, 1)),
    ("as_strided", ((2, 2), (1, 2), 1)), ("detach", ()), ("alias", ()), ("slice", (2, 1, 4, 2)),
    ("split", (2, 2)), ("split_with_sizes", ([1, 3], 2)), ("unbind", (1,)),
])
def test_view_copies(name, args):
    torch = _torch()
    shape = (3, 4) if name == "t" else (3, 1, 4) if name == "squeeze" else (2, 3, 4) if name != "view" else (3, 4)
    a = RNG.standard_normal(shape)
    if name == "expand":
        a = RNG.standard_normal((3, 4))
    if name not in ("split", "split_with_sizes", "unbind", "detach"):  # (detach_copy: PyTorch's requires grad)
        same_as_torch(lambda lib, x: getattr(lib, name + "_copy")(x, *args), [a])
    m = minitorch.tensor(a)
    got = getattr(minitorch, name + "_copy")(m, *args)
    want = getattr(torch, name + "_copy")(torch.tensor(a), *args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.is_contiguous() and g.stride() == w.stride() and tuple(g.shape) == tuple(w.shape)
        assert g.numel() == 0 or g.data_ptr() != m.data_ptr()  # a copy, not a view
        np.testing.assert_array_equal(as_numpy(g), w.numpy())


def test_view_copies_grad_and_out():
    same_as_torch(lambda lib, x: lib.stack(lib.unbind_copy(x, 1)), [RNG.standard_normal((2, 3))])
    same_as_torch(lambda lib, x: lib.cat(lib.split_copy(x, 2, 1), 1), [RNG.standard_normal((2, 5))])
    same_as_torch(lambda lib, x: lib.view_as_real_copy(lib.view_as_complex_copy(x)), [RNG.standard_normal((3, 2))],
                  grad=False)
    out = minitorch.empty(0)
    assert minitorch.t_copy(minitorch.ones(2, 3), out=out) is out and tuple(out.shape) == (3, 2)


def test_unsafe_splits_and_neg_bit():
    torch = _torch()
    same_as_torch(lambda lib, x: lib.cat(lib.unsafe_split(x, 2), 0) * 2, [RNG.standard_normal((5, 2))])
    same_as_torch(lambda lib, x: lib.cat(x.unsafe_chunk(3, 1), 1), [RNG.standard_normal((2, 7))])
    same_as_torch(lambda lib, x: lib.cat(lib.unsafe_split_with_sizes(x, [1, 4]), 0), [RNG.standard_normal((5, 2))])
    for lib in (minitorch, torch):
        x = lib.ones(2)
        assert lib.is_neg(x) is False and x.is_neg() is False and lib.resolve_neg(x) is x and x.resolve_neg() is x
        assert lib.is_conj(x) is False


def test_loss_and_rrelu_at_top_level():
    x, t = RNG.standard_normal((3, 4)), RNG.uniform(0, 1, (3, 4))
    w, pw = RNG.uniform(0.5, 1, (4,)), RNG.uniform(0.5, 2, (4,))
    for reduction in (0, 1, 2):
        same_as_torch(lambda lib, a, b, c, d: lib.binary_cross_entropy_with_logits(a, b, c, d, reduction),
                      [x, t, w, pw])
    same_as_torch(lambda lib, a: lib.rrelu(a), [x])
    same_as_torch(lambda lib, a: lib.rrelu_(a.clone(), 0.2, 0.4), [x])


@pytest.mark.parametrize("name", ["matrix_rank", "lstsq", "eig", "symeig", "solve"])
def test_removed_functions_raise(name):
    a = minitorch.eye(3)
    args = (a, a) if name in ("lstsq", "solve") else (a,)
    with pytest.raises(RuntimeError, match="This function was deprecated since version 1.9 and is now removed"):
        getattr(minitorch, name)(*args)
    if name != "matrix_rank":
        with pytest.raises(RuntimeError, match="deprecated since version 1.9"):
            getattr(a, name)(*args[1:])


def test_frombuffer():
    torch = _torch()
    raw = bytearray(np.arange(8, dtype=np.int16).tobytes())
    for kw in ({"dtype": "int32"}, {"dtype": "int16", "count": 2, "offset": 2}, {"dtype": "uint8"},
               {"dtype": "float64"}, {"dtype": "int16", "count": 5, "offset": 0},
               {"dtype": "int16", "offset": 16}, {"dtype": "int32", "offset": 2}, {"dtype": "int32", "count": 0},
               {"dtype": "bool", "offset": 3, "count": 4}):
        results = []
        for lib in (minitorch, torch):
            try:
                kwargs = dict(kw, dtype=getattr(lib, kw["dtype"]))
                t = lib.frombuffer(raw, **kwargs)
                results.append((tuple(t.shape), t.tolist(), str(t.dtype).split(".")[-1]))
            except ValueError as e:
                results.append(str(e))
        assert results[0] == results[1], kw
    t = minitorch.frombuffer(raw, dtype=minitorch.int16)
    t[0] = 99  # shares the buffer's memory, both ways
    assert np.frombuffer(raw, dtype=np.int16)[0] == 99
    raw[2:4] = np.int16(-5).tobytes()
    assert t[1].item() == -5
    with pytest.raises(ValueError, match="both buffer length"):
        minitorch.frombuffer(bytearray(0), dtype=minitorch.int32)
    with pytest.warns(UserWarning, match="not writable"):
        assert minitorch.frombuffer(b"abcd", dtype=minitorch.uint8).tolist() == [97, 98, 99, 100]
    assert minitorch.frombuffer(raw, dtype=minitorch.float32, requires_grad=True).requires_grad


def test_asarray():
    torch = _torch()
    cases = [
        lambda lib: lib.asarray([1, 2.5]),
        lambda lib: lib.asarray([[1, 2]], dtype=lib.int16),
        lambda lib: lib.asarray(3),
        lambda lib: lib.asarray(3.5, requires_grad=True),
        lambda lib: lib.asarray([1, 2], copy=False),
        lambda lib: lib.asarray(np.arange(3, dtype=np.int32)),
        lambda lib: lib.asarray(np.arange(3, dtype=np.int32), dtype=lib.float32),
        lambda lib: lib.asarray(np.arange(3, dtype=np.int32), dtype=lib.float32, copy=False),
        lambda lib: lib.asarray(np.float64(2.0)),
        lambda lib: lib.asarray(bytearray(b"abcd")),
        lambda lib: lib.asarray(bytearray(b"abcd"), dtype=lib.int32),
        lambda lib: lib.asarray(array.array("f", [1, 2])),
        lambda lib: lib.asarray(lib.tensor([1.0, 2.0]), dtype=lib.float64),
        lambda lib: lib.asarray(lib.tensor([1.0, 2.0]), dtype=lib.float64, copy=False),
        lambda lib: lib.asarray(lib.tensor([1.0, 2.0]), requires_grad=True),
    ]
    for k, case in enumerate(cases):
        results = []
        for lib in (minitorch, torch):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    t = case(lib)
                    results.append((tuple(t.shape), t.tolist(), str(t.dtype).split(".")[-1], t.requires_grad))
                except ValueError as e:
                    results.append(str(e))
        assert results[0] == results[1], k
    x = minitorch.tensor([1.0, 2.0])
    assert minitorch.asarray(x) is x and minitorch.asarray(x, copy=True) is not x
    y = minitorch.tensor([1.0, 2.0], requires_grad=True)
    assert minitorch.asarray(y) is y and not minitorch.asarray(y, requires_grad=False).requires_grad
    a = np.arange(4.0)
    t = minitorch.asarray(a)
    a[0] = 7  # shares the array's memory
    assert t[0].item() == 7 and minitorch.asarray(a, copy=True).data_ptr() != t.data_ptr()
    b = bytearray(8)
    u = minitorch.asarray(b, dtype=minitorch.int32)
    b[0] = 1
    assert u[0].item() == 1
    d = minitorch.asarray(torch.arange(3.0))  # through DLPack, sharing memory
    assert d.tolist() == [0.0, 1.0, 2.0] and d.dtype == minitorch.float32


def test_to_dlpack_round_trip():
    x = minitorch.arange(6.0).reshape(2, 3)
    y = minitorch.from_dlpack(minitorch.to_dlpack(x))
    assert y.tolist() == x.tolist() and y.data_ptr() == x.data_ptr()
    torch = pytest.importorskip("torch")
    z = torch.from_dlpack(minitorch.to_dlpack(x))
    assert z.tolist() == x.tolist() and z.data_ptr() == x.data_ptr()
