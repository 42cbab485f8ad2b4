"""minitorch.fft against numpy.fft (the reference, in float64) and torch.fft (values, dtypes,
gradients, errors): every transform over random lengths (primes, powers of two, others: the
radix and Bluestein paths), n/s cropping and padding, dims, the three norms, batched and
non-contiguous inputs, empty tensors; and the complex-tensor surface the transforms need."""
import numpy as np
import pytest

import minitorch
from tests.helpers import LAYOUTS, as_numpy, check, same_as_torch, same_error, to_layout

NORMS = (None, "backward", "ortho", "forward")
LENGTHS = (1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 31, 64, 97, 100)


def _ri(c):
    """A complex array as its real view (..., 2), as view_as_real shows a complex tensor."""
    c = np.asarray(c)
    return np.stack([c.real, c.imag], axis=-1)


def _c(a):
    """The complex array whose real view is a (..., 2)."""
    return a[..., 0] + 1j * a[..., 1]


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _complex_in(lib, x):
    """A complex tensor from a float tensor (..., 2): differentiable through view_as_complex."""
    return lib.view_as_complex(x.contiguous())


# ---- the 1-D transforms at float64 against numpy.fft ----

@pytest.mark.parametrize("n", LENGTHS + (128, 257, 1000))
@pytest.mark.parametrize("norm", NORMS)
def test_fft_ifft_complex_float64(n, norm):
    a = _rand(3, n, 2, seed=n)
    tol = 1e-12 * max(1, n)
    for fn, ref in ((minitorch.fft.fft, np.fft.fft), (minitorch.fft.ifft, np.fft.ifft)):
        z = minitorch.view_as_complex(minitorch.tensor(a))
        out = fn(z, norm=norm)
        assert out.dtype == minitorch.complex128 and tuple(out.shape) == (3, n)
        np.testing.assert_allclose(as_numpy(minitorch.view_as_real(out)), _ri(ref(_c(a), norm=norm)), atol=tol)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("norm", NORMS)
def test_real_input_transforms_float64(n, norm):
    a = _rand(2, n, seed=n)
    tol = 1e-12 * max(1, n)
    x = minitorch.tensor(a)
    for name in ("fft", "ifft", "rfft", "ihfft"):
        out = getattr(minitorch.fft, name)(x, norm=norm)
        want = getattr(np.fft, name)(a, norm=norm)
        assert out.dtype == minitorch.complex128, name
        np.testing.assert_allclose(as_numpy(minitorch.view_as_real(out)), _ri(want), atol=tol, err_msg=name)


@pytest.mark.parametrize("n", (1, 2, 3, 4, 5, 8, 9, 16, 31, 64, 100))
@pytest.mark.parametrize("norm", NORMS)
def test_irfft_hfft_float64(n, norm):
    half = _rand(2, n // 2 + 1, 2, seed=n)
    x = minitorch.view_as_complex(minitorch.tensor(half))
    for name in ("irfft", "hfft"):
        out = getattr(minitorch.fft, name)(x, n=n, norm=norm)
        want = getattr(np.fft, name)(_c(half), n=n, norm=norm)
        assert out.dtype == minitorch.float64 and tuple(out.shape) == (2, n), name
        np.testing.assert_allclose(as_numpy(out), want, atol=1e-12 * n, err_msg=name)


@pytest.mark.parametrize("n", (None, 1, 3, 6, 11, 16))
def test_n_crops_and_pads(n):
    a = _rand(4, 9, seed=1)
    x = minitorch.tensor(a)
    for name in ("fft", "ifft", "rfft", "ihfft"):
        want = getattr(np.fft, name)(a, n=n, axis=0)
        got = getattr(minitorch.fft, name)(x, n=n, dim=0)
        np.testing.assert_allclose(as_numpy(minitorch.view_as_real(got)), _ri(want), atol=1e-11, err_msg=name)
    c = _rand(4, 9, 2, seed=2)
    z = minitorch.view_as_complex(minitorch.tensor(c))
    for name in ("irfft", "hfft"):
        want = getattr(np.fft, name)(_c(c), n=n, axis=-1)
        np.testing.assert_allclose(as_numpy(getattr(minitorch.fft, name)(z, n=n)), want, atol=1e-11,
                                   err_msg=name)


# ---- the N-D transforms ----

@pytest.mark.parametrize("s,dim", [(None, None), (None, (0, 2)), ((4, 6), None), ((3, 5), (1, 0)),
                                   ((2, -1), (0, 1)), (None, (-1,)), ((7,), (1,))])
@pytest.mark.parametrize("norm", (None, "ortho", "forward"))
def test_nd_transforms_float64(s, dim, norm):
    a = _rand(3, 5, 4, seed=3)
    x = minitorch.tensor(a)
    axes = dim if dim is not None or s is None else tuple(range(3 - len(s), 3))
    np_s = None if s is None else [a.shape[d] if k == -1 else k for k, d in zip(s, axes)]
    for name in ("fftn", "ifftn", "rfftn"):
        got = getattr(minitorch.fft, name)(x, s=s, dim=dim, norm=norm)
        want = getattr(np.fft, name)(a, s=np_s, axes=axes, norm=norm)
        np.testing.assert_allclose(as_numpy(minitorch.view_as_real(got)), _ri(want), atol=1e-11, err_msg=name)
    c = _rand(3, 5, 4, 2, seed=4)
    z = minitorch.view_as_complex(minitorch.tensor(c))
    got = minitorch.fft.fftn(z, s=s, dim=dim, norm=norm)
    np.testing.assert_allclose(as_numpy(minitorch.view_as_real(got)),
                               _ri(np.fft.fftn(_c(c), s=np_s, axes=axes, norm=norm)), atol=1e-11)
    # irfftn's -1 in s means its default: 2 * (size - 1) along the last dim, the size elsewhere
    c2r_s = None if s is None else [k if k != -1 else (2 * (c.shape[d] - 1) if i == len(s) - 1 else c.shape[d])
                                    for i, (k, d) in enumerate(zip(s, axes))]
    got = minitorch.fft.irfftn(z, s=s, dim=dim, norm=norm)
    np.testing.assert_allclose(as_numpy(got), np.fft.irfftn(_c(c), s=c2r_s, axes=axes, norm=norm), atol=1e-11)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "hfftn", "ihfftn"])
def test_2d_and_hermitian_nd_like_torch(name):
    torch = pytest.importorskip("torch")
    a = _rand(2, 6, 5, seed=5)
    real_in = name in ("rfft2", "ihfft2", "ihfftn")
    for norm in NORMS:
        for s in (None, (4, 7)):
            if real_in:
                got = getattr(minitorch.fft, name)(minitorch.tensor(a), s=s, norm=norm)
                want = getattr(torch.fft, name)(torch.tensor(a), s=s, norm=norm)
            else:
                c = _rand(2, 6, 5, 2, seed=6)
                got = getattr(minitorch.fft, name)(minitorch.view_as_complex(minitorch.tensor(c)), s=s, norm=norm)
                want = getattr(torch.fft, name)(torch.view_as_complex(torch.tensor(c)), s=s, norm=norm)
            assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
            g = as_numpy(minitorch.view_as_real(got)) if got.dtype.is_complex else as_numpy(got)
            w = torch.view_as_real(want).numpy() if want.is_complex() else want.numpy()
            np.testing.assert_allclose(g, w, atol=1e-10, err_msg=f"{name} s={s} norm={norm}")


# ---- float32, dtypes, layouts, batches, empty ----

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("n", (5, 8, 13))
def test_float32_layouts_like_numpy_and_torch(layout, n):
    a = _rand(3, n, seed=n).astype(np.float32)
    check(lambda lib, x: lib.view_as_real(lib.fft.fft(x)), lambda x: _ri(np.fft.fft(x)), [a], layout=layout,
          atol=1e-5, rtol=1e-5, dtype=minitorch.float32)
    check(lambda lib, x: lib.view_as_real(lib.fft.rfft(x, norm="ortho")), lambda x: _ri(np.fft.rfft(x, norm="ortho")),
          [a], layout=layout, atol=1e-5, rtol=1e-5)
    check(lambda lib, x: lib.fft.irfft(lib.fft.rfft(x), n=n), lambda x: x, [a], layout=layout, atol=1e-5)
    check(lambda lib, x: lib.view_as_real(lib.fft.fft2(x)), lambda x: _ri(np.fft.fft2(x)), [a], layout=layout,
          atol=1e-4, rtol=1e-5)


def test_dtypes():
    assert minitorch.fft.fft(minitorch.ones(4)).dtype == minitorch.complex64
    assert minitorch.fft.fft(minitorch.ones(4, dtype=minitorch.float64)).dtype == minitorch.complex128
    assert minitorch.fft.rfft(minitorch.arange(6)).dtype == minitorch.complex64  # ints: the default float
    assert minitorch.fft.irfft(minitorch.fft.rfft(minitorch.ones(6))).dtype == minitorch.float32
    z = minitorch.fft.fft(minitorch.arange(5, dtype=minitorch.float64))
    assert minitorch.fft.ifft(z).dtype == minitorch.complex128
    assert minitorch.fft.hfft(z).dtype == minitorch.float64


def test_noncontiguous_complex_and_batched_dims():
    c = _rand(6, 7, 5, 2, seed=7)
    z = minitorch.view_as_complex(minitorch.tensor(c))
    zc = _c(c)
    for view, ref in ((z.transpose(0, 2), zc.transpose(2, 1, 0)), (z[::2, 1:, ::3], zc[::2, 1:, ::3])):
        assert not view.is_contiguous()
        for dim in (0, 1, -1):
            got = minitorch.fft.fft(view, dim=dim)
            np.testing.assert_allclose(as_numpy(minitorch.view_as_real(got)), _ri(np.fft.fft(ref, axis=dim)),
                                       atol=1e-11)
        got = minitorch.fft.fftn(view, dim=(0, 2))
        np.testing.assert_allclose(as_numpy(minitorch.view_as_real(got)), _ri(np.fft.fftn(ref, axes=(0, 2))),
                                   atol=1e-11)


def test_empty():
    x = minitorch.zeros(0, 5)
    out = minitorch.fft.fft(x)
    assert tuple(out.shape) == (0, 5) and out.dtype == minitorch.complex64
    assert tuple(minitorch.fft.rfft(x).shape) == (0, 3)
    assert tuple(minitorch.fft.irfft(minitorch.fft.rfft(x)).shape) == (0, 4)
    assert tuple(minitorch.fft.fftn(minitorch.zeros(3, 0, 2), dim=(0, 2)).shape) == (3, 0, 2)


# ---- frequencies and shifts ----

@pytest.mark.parametrize("n", (1, 2, 5, 8, 11))
@pytest.mark.parametrize("d", (1.0, 0.1, 3))
def test_fftfreq_rfftfreq(n, d):
    f = minitorch.fft.fftfreq(n, d)
    assert f.dtype == minitorch.float32
    np.testing.assert_allclose(as_numpy(f), np.fft.fftfreq(n, d), rtol=1e-6)
    np.testing.assert_allclose(as_numpy(minitorch.fft.rfftfreq(n, d, dtype=minitorch.float64)),
                               np.fft.rfftfreq(n, d), rtol=1e-12)
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(as_numpy(f), torch.fft.fftfreq(n, d).numpy(), rtol=1e-6)


@pytest.mark.parametrize("dim", (None, 0, -1, (0, 1)))
def test_fftshift_ifftshift(dim):
    a = _rand(5, 4, seed=8)
    for name in ("fftshift", "ifftshift"):
        got = getattr(minitorch.fft, name)(minitorch.tensor(a), dim=dim)
        np.testing.assert_array_equal(as_numpy(got), getattr(np.fft, name)(a, axes=dim))
    z = minitorch.fft.fft(minitorch.tensor(a))  # complex
    got = minitorch.fft.fftshift(z, dim=dim)
    np.testing.assert_array_equal(as_numpy(minitorch.view_as_real(got)),
                                  _ri(np.fft.fftshift(_c(as_numpy(minitorch.view_as_real(z))), axes=dim)))


# ---- gradients, against PyTorch ----

GRAD_CASES = {
    "fft_real": (lambda lib, x: lib.view_as_real(lib.fft.fft(x)), (3, 7)),
    "fft_n_pad": (lambda lib, x: lib.view_as_real(lib.fft.fft(x, n=9, norm="ortho")), (3, 7)),
    "fft_n_crop": (lambda lib, x: lib.view_as_real(lib.fft.fft(x, n=4, dim=0)), (6, 3)),
    "ifft_complex": (lambda lib, x: lib.view_as_real(lib.fft.ifft(_complex_in(lib, x))), (3, 5, 2)),
    "fft_complex_forward": (lambda lib, x: lib.view_as_real(lib.fft.fft(_complex_in(lib, x), norm="forward")),
                            (4, 8, 2)),
    "rfft": (lambda lib, x: lib.view_as_real(lib.fft.rfft(x)), (2, 8)),
    "rfft_odd_ortho": (lambda lib, x: lib.view_as_real(lib.fft.rfft(x, norm="ortho")), (2, 7)),
    "irfft": (lambda lib, x: lib.fft.irfft(_complex_in(lib, x)), (2, 5, 2)),
    "irfft_n_odd": (lambda lib, x: lib.fft.irfft(_complex_in(lib, x), n=7, norm="forward"), (2, 4, 2)),
    "hfft": (lambda lib, x: lib.fft.hfft(_complex_in(lib, x), n=6), (3, 4, 2)),
    "ihfft": (lambda lib, x: lib.view_as_real(lib.fft.ihfft(x).resolve_conj()), (3, 6)),
    "fft2": (lambda lib, x: lib.view_as_real(lib.fft.fft2(x)), (2, 3, 5)),
    "rfft2": (lambda lib, x: lib.view_as_real(lib.fft.rfft2(x, norm="ortho")), (3, 6)),
    "irfftn": (lambda lib, x: lib.fft.irfftn(_complex_in(lib, x), s=(3, 6)), (3, 4, 2)),
    "abs_of_rfft": (lambda lib, x: lib.fft.rfft(x).abs(), (2, 9)),
    "real_imag": (lambda lib, x: lib.fft.fft(x).real * 2 + lib.fft.fft(x).imag, (5,)),
    "fftshift": (lambda lib, x: lib.view_as_real(lib.fft.fftshift(lib.fft.fft(x))), (4, 5)),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
@pytest.mark.parametrize("layout", ("contiguous", "transposed"))
def test_gradients_like_torch(case, layout):
    fn, shape = GRAD_CASES[case]
    same_as_torch(fn, [_rand(*shape, seed=9)], layout=layout, atol=1e-10, rtol=1e-7)


def test_gradcheck_c2c_r2c_c2r():
    for fn, shape in ((lambda x: minitorch.view_as_real(minitorch.fft.fft(x, n=5)), (4,)),
                      (lambda x: minitorch.view_as_real(minitorch.fft.rfft(x)), (2, 6)),
                      (lambda x: minitorch.fft.irfft(minitorch.view_as_complex(x), n=5), (3, 3, 2))):
        x = minitorch.tensor(_rand(*shape, seed=10), requires_grad=True)
        assert minitorch.autograd.gradcheck(fn, (x,), atol=1e-6, rtol=1e-5)


# ---- errors, as PyTorch raises them ----

@pytest.mark.parametrize("call", [
    lambda lib, x: lib.fft.fft(x, norm="bogus"),
    lambda lib, x: lib.fft.fft(x, n=0),
    lambda lib, x: lib.fft.fft(x, dim=2),
    lambda lib, x: lib.fft.fft(x.sum()),
    lambda lib, x: lib.fft.rfft(lib.fft.fft(x)),
    lambda lib, x: lib.fft.irfft(x[:, :1]),
    lambda lib, x: lib.fft.fftn(x, dim=(0, 0)),
    lambda lib, x: lib.fft.fftn(x, s=(2, 2), dim=(0,)),
    lambda lib, x: lib.fft.fftn(x, s=(2, 2, 2)),
    lambda lib, x: lib.fft.fft(x.half()),
    lambda lib, x: lib.fft.rfftn(lib.fft.fft(x)),
    lambda lib, x: lib.fft.fft(x, dim=-3),
])
def test_errors_like_torch(call):
    same_error(call, _rand(3, 4).astype(np.float32))


# ---- the complex tensors the transforms need ----

def test_complex_dtypes_and_numpy_interop():
    assert minitorch.complex64.is_complex and not minitorch.complex64.is_floating_point
    assert minitorch.complex128.itemsize == 16
    c = (_rand(3, 4, seed=11) + 1j * _rand(3, 4, seed=12)).astype(np.complex64)
    t = minitorch.tensor(c)
    assert t.dtype == minitorch.complex64 and t.is_complex() and minitorch.is_complex(t)
    np.testing.assert_array_equal(as_numpy(t), c)
    np.testing.assert_array_equal(t.numpy(), c)
    assert t.tolist() == c.tolist()
    np.testing.assert_array_equal(as_numpy(minitorch.from_numpy(c.astype(np.complex128))), c)
    np.testing.assert_array_equal(as_numpy(t.T.contiguous()), c.T)
    np.testing.assert_array_equal(as_numpy(t.to(minitorch.complex128)), c.astype(np.complex128))
    np.testing.assert_array_equal(as_numpy(minitorch.tensor(c.real).to(minitorch.complex64)), c.real + 0j)
    assert "j" in repr(t)


def test_complex_views_and_ops():
    c = _rand(3, 4, seed=13) + 1j * _rand(3, 4, seed=14)
    t = minitorch.tensor(c)
    r = minitorch.view_as_real(t)
    assert tuple(r.shape) == (3, 4, 2) and r.dtype == minitorch.float64 and r.stride() == (8, 2, 1)
    r[0, 0, 1] = 5.0  # a view: writes show in t
    c[0, 0] = c[0, 0].real + 5j
    np.testing.assert_array_equal(as_numpy(t), c)
    np.testing.assert_array_equal(as_numpy(t.real), c.real)
    np.testing.assert_array_equal(as_numpy(t.imag), c.imag)
    np.testing.assert_array_equal(as_numpy(minitorch.real(t)), c.real)
    np.testing.assert_array_equal(as_numpy(t.conj()), c.conj())
    np.testing.assert_allclose(as_numpy(t.abs()), np.abs(c), rtol=1e-15)
    np.testing.assert_allclose(as_numpy(minitorch.abs(t)), np.abs(c), rtol=1e-15)
    np.testing.assert_allclose(as_numpy(t.angle()), np.angle(c), rtol=1e-15)
    np.testing.assert_allclose(as_numpy(minitorch.angle(minitorch.tensor([-2.0, 0.0, 3.0]))), [np.pi, 0, 0])
    np.testing.assert_array_equal(as_numpy(t + t), c + c)
    np.testing.assert_array_equal(as_numpy(t - t * 2), c - c * 2)
    np.testing.assert_array_equal(as_numpy(t / 4), c / 4)
    np.testing.assert_array_equal(as_numpy(-t), -c)
    np.testing.assert_array_equal(as_numpy(minitorch.cat([t, t[:1]])), np.concatenate([c, c[:1]]))
    np.testing.assert_array_equal(as_numpy(t.flip(0)), c[::-1])
    np.testing.assert_array_equal(as_numpy(minitorch.zeros(2, dtype=minitorch.complex128)), np.zeros(2))
    np.testing.assert_array_equal(as_numpy(minitorch.ones(2, dtype=minitorch.complex64)), np.ones(2))
    with pytest.raises(RuntimeError, match="view_as_real is only supported for complex tensors"):
        minitorch.view_as_real(minitorch.ones(2))
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        minitorch.view_as_complex(minitorch.ones(3))
    with pytest.raises(RuntimeError, match="stride 1"):
        minitorch.view_as_complex(minitorch.ones(2, 3).t())
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        minitorch.ones(2).imag


def test_complex_promotion():
    assert minitorch.promote_types(minitorch.complex64, minitorch.float64) == minitorch.complex128
    assert minitorch.promote_types(minitorch.int64, minitorch.complex64) == minitorch.complex64
    assert minitorch.promote_types(minitorch.complex128, minitorch.complex64) == minitorch.complex128
    assert not minitorch.can_cast(minitorch.complex64, minitorch.float64)
    assert minitorch.can_cast(minitorch.float64, minitorch.complex64)


def test_ops_without_complex_loops_refuse():
    t = minitorch.fft.fft(minitorch.ones(3))
    with pytest.raises(NotImplementedError, match="\"erf_vml_cpu\" not implemented for 'ComplexFloat'"):
        t.erf()  # PyTorch's class and kernel name
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):
        t < minitorch.ones(3)  # complex numbers have no order
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):
        t.cummax(0)  # complex numbers have no order: no running maximum


def test_complex_gradient_accumulates_through_two_uses():
    torch = pytest.importorskip("torch")

    def fn(lib, x):
        z = lib.fft.fft(x)
        return (z.real * z.imag + z.abs()).sum()

    a = _rand(6, seed=15)
    x = minitorch.tensor(a, requires_grad=True)
    fn(minitorch, x).backward()
    tx = torch.tensor(a, requires_grad=True)
    fn(torch, tx).backward()
    np.testing.assert_allclose(as_numpy(x.grad), tx.grad.numpy(), atol=1e-12)


def test_layout_helper_inputs():
    # to_layout's three layouts of a float array feed fft alike
    a = _rand(4, 6, seed=16)
    for layout in LAYOUTS:
        x = to_layout(a, layout)
        np.testing.assert_allclose(as_numpy(minitorch.view_as_real(minitorch.fft.fft(x))), _ri(np.fft.fft(a)),
                                   atol=1e-12)


# ---- stft and istft (composites), against PyTorch ----

STFT_CASES = {
    "default_center_reflect": dict(n_fft=16),
    "hop_win_window": dict(n_fft=16, hop_length=5, win_length=12, window=True),
    "no_center_normalized": dict(n_fft=8, hop_length=3, center=False, normalized=True),
    "constant_pad_two_sided": dict(n_fft=10, pad_mode="constant", onesided=False),
    "replicate_window": dict(n_fft=12, hop_length=4, window=True, pad_mode="replicate"),
}


def _stft_args(lib, w, kw):
    kw = dict(kw)
    if kw.pop("window", False):
        kw["window"] = w
    return kw


@pytest.mark.parametrize("case", sorted(STFT_CASES))
@pytest.mark.parametrize("batched", (False, True))
def test_stft_like_torch(case, batched):
    kw = STFT_CASES[case]
    sig = _rand(2, 50, seed=17) if batched else _rand(50, seed=17)
    win = np.abs(_rand(kw.get("win_length", kw["n_fft"]), seed=18)) + 0.5

    def fn(lib, x, w):
        return lib.view_as_real(lib.stft(x, return_complex=True, **_stft_args(lib, w, kw)))

    same_as_torch(fn, [sig, win], atol=1e-10, rtol=1e-8)


@pytest.mark.parametrize("case", ["default_center_reflect", "hop_win_window", "no_center_normalized"])
@pytest.mark.parametrize("length", (None, 45, 60))
def test_istft_like_torch(case, length):
    torch = pytest.importorskip("torch")
    kw = {k: v for k, v in STFT_CASES[case].items() if k != "pad_mode"}
    win = np.abs(_rand(kw.get("win_length", kw["n_fft"]), seed=19)) + 0.5
    spec_shape = tuple(torch.stft(torch.tensor(_rand(2, 50)), return_complex=True,
                                  **_stft_args(torch, torch.tensor(win), kw)).shape)
    spec = _rand(*spec_shape, 2, seed=20)
    spec[:, 0, :, 1] = 0  # a real DC bin, as a real signal's spectrum has

    def fn(lib, s, w):
        return lib.istft(lib.view_as_complex(s.contiguous()), length=length, **_stft_args(lib, w, kw))

    same_as_torch(fn, [spec, win], atol=1e-9, rtol=1e-7)


def test_stft_istft_round_trip_and_errors():
    x = minitorch.tensor(_rand(3, 64, seed=21))
    w = minitorch.tensor(np.hanning(18)[1:-1])
    spec = minitorch.stft(x, 16, hop_length=4, window=w, return_complex=True)
    assert spec.dtype == minitorch.complex128 and tuple(spec.shape) == (3, 9, 17)
    back = minitorch.istft(spec, 16, hop_length=4, window=w, length=64)
    np.testing.assert_allclose(as_numpy(back), as_numpy(x), atol=1e-10)
    with pytest.raises(RuntimeError, match="requires the return_complex parameter"):
        minitorch.stft(x, 16)
    with pytest.raises(RuntimeError, match="expected 0 < n_fft"):
        minitorch.stft(x, 200, center=False, return_complex=True)
    with pytest.raises(RuntimeError, match="istft requires a complex-valued input"):
        minitorch.istft(x, 16)


# ---- the primitives themselves, against torch's ATen ops of the same names ----

def test_primitives_like_torch():
    torch = pytest.importorskip("torch")
    c = _rand(4, 6, 2, seed=22)
    r = _rand(4, 6, seed=23)
    z, tz = minitorch.view_as_complex(minitorch.tensor(c)), torch.view_as_complex(torch.tensor(c))
    x, tx = minitorch.tensor(r), torch.tensor(r)
    pairs = [
        (minitorch._C._fft_c2c(z, [0, 1], 1, True), torch._fft_c2c(tz, [0, 1], 1, True)),
        (minitorch._C._fft_c2c(z, [1], 2, False), torch._fft_c2c(tz, [1], 2, False)),
        (minitorch._C._fft_r2c(x, [1, 0], 0, True), torch._fft_r2c(tx, [1, 0], 0, True)),
        (minitorch._C._fft_r2c(x, [1], 1, False), torch._fft_r2c(tx, [1], 1, False)),
        (minitorch._C._fft_c2r(z[:, :4], [0, 1], 2, 7), torch._fft_c2r(tz[:, :4], [0, 1], 2, 7)),
        (minitorch._C._fft_c2r(z, [1], 0, 10), torch._fft_c2r(tz, [1], 0, 10)),
        (minitorch.conj_physical(z), torch.conj_physical(tz)),
        (minitorch.conj_physical(x), torch.conj_physical(tx)),
    ]
    for k, (got, want) in enumerate(pairs):
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], k
        g = as_numpy(minitorch.view_as_real(got)) if got.dtype.is_complex else as_numpy(got)
        w = torch.view_as_real(want).numpy() if want.is_complex() else want.numpy()
        np.testing.assert_allclose(g, w, atol=1e-12, err_msg=str(k))
    with pytest.raises(RuntimeError, match="expected a complex input"):
        minitorch._C._fft_c2c(x, [0], 0, True)
    with pytest.raises(RuntimeError, match="expected a float32 or float64 input"):
        minitorch._C._fft_r2c(z, [0], 0, True)
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        minitorch._C._fft_c2c(z, [0, -2], 0, True)
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        minitorch._C._fft_c2r(z, [1], 0, 0)
    with pytest.raises(IndexError):
        minitorch._C._fft_c2r(z, [2], 0, 4)


def test_conj_physical_gradient():
    same_as_torch(lambda lib, x: lib.view_as_real(lib.conj_physical(lib.view_as_complex(x.contiguous())) * 3),
                  [_rand(3, 2, seed=24)], atol=1e-12)


def test_complex_checkpoints_from_torch(tmp_path):
    torch = pytest.importorskip("torch")
    spec = torch.fft.rfft(torch.arange(10.0, dtype=torch.float64))
    torch.save({"spec": spec, "c64": spec.to(torch.complex64)}, tmp_path / "c.pt")
    got = minitorch.load(tmp_path / "c.pt")
    assert got["spec"].dtype == minitorch.complex128 and got["c64"].dtype == minitorch.complex64
    np.testing.assert_array_equal(as_numpy(got["spec"]), spec.numpy())
    minitorch.save(got, tmp_path / "m.pt")
    back = torch.load(tmp_path / "m.pt")
    np.testing.assert_array_equal(back["c64"].numpy(), spec.to(torch.complex64).numpy())


def test_stft_and_istft_warn_once_without_a_window():
    """PyTorch warns once per process for each of stft and istft when no window is given."""
    import warnings

    from minitorch import _stft

    saved = set(_stft._warned_no_window)
    _stft._warned_no_window.clear()
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = minitorch.stft(minitorch.randn(400), 64, return_complex=True)
            minitorch.stft(minitorch.randn(400), 64, return_complex=True)
            minitorch.istft(s, 64)
            minitorch.istft(s, 64)
            minitorch.stft(minitorch.randn(400), 64, return_complex=True, window=minitorch.hann_window(64))
        msgs = [str(x.message) for x in w if "window was not provided" in str(x.message)]
        assert len(msgs) == 2
        assert "spectral leakage" in msgs[0] and "inversion lossless" in msgs[1]
        assert all(m.endswith("explicitly set `window=torch.ones(n_fft, device=<device>)`.") for m in msgs)
    finally:
        _stft._warned_no_window.clear()
        _stft._warned_no_window.update(saved)
