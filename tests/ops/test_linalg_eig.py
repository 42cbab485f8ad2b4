"""torch.linalg.eig and eigvals against PyTorch and NumPy (complex128 reference): real
inputs give complex results, complex inputs too; batched, non-contiguous and empty inputs;
eigenvectors as LAPACK normalises them (unit columns); NaN and inf inputs; gradients of real and
complex inputs against PyTorch's .grad (linalg_eig_backward); PyTorch's errors."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, as_numpy, complex_sample, same_as_torch_complex, same_error, to_layout, torch

rng = np.random.default_rng(1919)
DTYPES = ["float32", "float64", "complex64", "complex128"]
RESULT = {"float32": "complex64", "float64": "complex128", "complex64": "complex64", "complex128": "complex128"}
needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}


def sample(shape, dtype):
    """Random matrices (..., n, n) of the dtype; real ones have complex-conjugate pairs of
    eigenvalues as well as real ones."""
    if dtype.startswith("complex"):
        return complex_sample(rng, shape, dtype)
    return rng.standard_normal(shape).astype(dtype)


def well_separated(shape, dtype):
    """Matrices whose eigenvalues are far apart (a diagonal 0, 3, 6, ... conjugated by a random
    well-conditioned matrix), so the eigenvectors' gradients are well conditioned."""
    n = shape[-1]
    d = np.diag(3.0 * np.arange(n))
    p = rng.standard_normal(shape) + 2 * np.sqrt(n) * np.eye(n)
    if dtype.startswith("complex"):
        p = p + 1j * rng.standard_normal(shape)
    return (p @ d @ np.linalg.inv(p)).astype(dtype)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_against_numpy_and_torch(dtype, layout):
    a = sample((2, 3, 5, 5), dtype)
    L, V = minitorch.linalg.eig(to_layout(a, layout))
    assert str(L.dtype) == str(V.dtype) == f"minitorch.{RESULT[dtype]}"
    assert L.shape == (2, 3, 5) and V.shape == (2, 3, 5, 5)
    L, V, wide = as_numpy(L), as_numpy(V), a.astype(np.complex128)
    tol = TOL[dtype]
    # A V = V diag(L), unit columns, and NumPy's eigenvalues as a set
    np.testing.assert_allclose(wide @ V, V * L[..., None, :], atol=50 * tol)
    np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1.0, atol=tol)
    want = np.linalg.eigvals(wide)
    gap = np.abs(L[..., :, None] - want[..., None, :])  # each value has a partner in the other set
    assert gap.min(-1).max() < 50 * tol and gap.min(-2).max() < 50 * tol
    # PyTorch's own values (the same LAPACK algorithm: the same order), and its vectors up to the
    # phase of each column (PyTorch's LAPACK (MKL) may flip a real vector's sign)
    same_as_torch_complex(lambda m, x: m.linalg.eig(x).eigenvalues, [a], layout=layout, atol=tol, rtol=tol)
    if torch is None:
        return
    want_v = torch.linalg.eig(torch.tensor(a)).eigenvectors.numpy()
    np.testing.assert_allclose(fixed_phase(V), fixed_phase(want_v), atol=tol, rtol=tol)


def fixed_phase(v):
    """Each column of v (..., n, n) turned so that its largest element is real and positive."""
    top = np.take_along_axis(v, np.abs(v).argmax(-2)[..., None, :], -2)
    return v * np.conj(top / np.abs(top))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_eigvals(dtype, layout):
    a = sample((3, 4, 4), dtype)
    vals = minitorch.linalg.eigvals(to_layout(a, layout))
    assert str(vals.dtype) == f"minitorch.{RESULT[dtype]}"
    np.testing.assert_allclose(as_numpy(vals), as_numpy(minitorch.linalg.eig(to_layout(a, layout))[0]))
    # values, and the gradient of a weighted sum of their parts (eigvals records linalg.eig's node)
    wide = a.astype(np.float64 if dtype.startswith("float") else np.complex128)
    same_as_torch_complex(lambda m, x: m.linalg.eigvals(x), [wide], layout=layout, atol=1e-9, rtol=1e-9)


def test_internal_kernel_without_vectors():
    a = sample((2, 3, 3), "float64")
    assert minitorch.linalg.eig is minitorch._C.linalg_eig and minitorch.linalg.eigvals is minitorch._C.linalg_eigvals
    np.testing.assert_array_equal(as_numpy(minitorch._C.linalg_eigvals(minitorch.tensor(a))),
                                  as_numpy(minitorch._C.linalg_eig(minitorch.tensor(a)).eigenvalues))
    L, V = minitorch._C._linalg_eig(minitorch.tensor(a), False)
    assert V.shape == (0,) and V.dtype == minitorch.complex128
    np.testing.assert_allclose(as_numpy(L), as_numpy(minitorch.linalg.eig(minitorch.tensor(a))[0]))


def test_real_matrices_with_conjugate_pairs():
    # a rotation by 90 degrees: eigenvalues +-i, eigenvectors (1, -+i) / sqrt(2)
    r = minitorch.tensor([[0.0, -1.0], [1.0, 0.0]])
    L, V = minitorch.linalg.eig(r)
    np.testing.assert_allclose(as_numpy(L), [1j, -1j], atol=1e-6)
    np.testing.assert_allclose(as_numpy(V), np.array([[1, 1], [-1j, 1j]]) / np.sqrt(2), atol=1e-6)
    if torch is not None:
        t = torch.linalg.eig(torch.tensor([[0.0, -1.0], [1.0, 0.0]]))
        np.testing.assert_allclose(as_numpy(L), t.eigenvalues.numpy(), atol=1e-6)
        np.testing.assert_allclose(as_numpy(V), t.eigenvectors.numpy(), atol=1e-6)
    # a diagonal matrix: real eigenvalues, the identity's columns
    L, V = minitorch.linalg.eig(minitorch.tensor(np.diag([2.0, -1.0, 5.0])))
    np.testing.assert_array_equal(as_numpy(L), [2, -1, 5])
    np.testing.assert_array_equal(as_numpy(V), np.eye(3))


@needs_torch
@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 2, 2)])
def test_empty(shape):
    for fn in (lambda m, x: m.linalg.eig(x), lambda m, x: m.linalg.eigvals(x)):
        got = fn(minitorch, minitorch.zeros(*shape))
        want = fn(torch, torch.zeros(*shape))
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert tuple(g.shape) == tuple(w.shape) and str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_non_finite(bad, dtype):
    a = sample((2, 3, 3), dtype)
    a[1, 0, 2] = bad
    same_error(lambda m, x: m.linalg.eig(x), a)
    # without eigenvectors: NaNs for that matrix (PyTorch's for an inf; LAPACK may not return on a
    # NaN, which minitorch never hands it), the other matrix's values as they are
    vals = as_numpy(minitorch.linalg.eigvals(minitorch.tensor(a)))
    assert np.isnan(vals[1].real).all() and np.isnan(vals[1].imag).all()
    np.testing.assert_allclose(vals[0], as_numpy(minitorch.linalg.eigvals(minitorch.tensor(a[0]))))
    if bad == float("inf") and torch is not None:
        np.testing.assert_array_equal(vals[1], torch.linalg.eigvals(torch.tensor(a[1])).numpy())


def test_errors_as_torch():
    for fn in (lambda m, x: m.linalg.eig(x), lambda m, x: m.linalg.eigvals(x)):
        same_error(fn, np.ones((2, 3)))
        same_error(fn, np.ones(3))
        same_error(fn, np.ones((2, 2), dtype=np.int64))
        same_error(fn, np.ones((2, 3), dtype=np.int64))
        same_error(fn, np.ones((2, 2), dtype=bool))
        same_error(lambda m, x: fn(m, x.to(m.bfloat16)), np.ones((2, 2)))
        same_error(lambda m, x: fn(m, x.half()), np.ones((2, 2)))


# ---- gradients (PyTorch's linalg_eig_backward), of real and complex inputs ----

LOSSES = {
    # eigenvalues only: the eigenvalue formula V^-H diag(gL) V^H
    "values": lambda m, L, V, w: (m.view_as_real(L) * w[0]).sum(),
    # eigenvectors by their moduli only (phase invariant, so well defined)
    "vectors": lambda m, L, V, w: (V.abs() * w[1]).sum(),
    "both": lambda m, L, V, w: (m.view_as_real(L) * w[0]).sum() + (V.abs() ** 2 * w[1]).sum(),
}


@needs_torch
@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32", "complex64"])
def test_gradients_against_torch(dtype, layout, loss):
    from helpers import torch_layout

    a = well_separated((2, 4, 4), dtype)
    weights = (rng.standard_normal((2, 4, 2)), rng.standard_normal((2, 4, 4)))
    grads = []
    for lib, make in ((minitorch, lambda x: to_layout(x, layout)), (torch, lambda x: torch_layout(torch, x, layout))):
        x = make(a).detach().requires_grad_(True)
        L, V = lib.linalg.eig(x)
        real = lib.float32 if dtype in ("float32", "complex64") else lib.float64
        w = tuple(lib.tensor(v, dtype=real) for v in weights)
        LOSSES[loss](lib, L, V, w).backward()
        grads.append(x.grad)
    got, want = grads
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1] == dtype
    tol = 1e-3 if dtype in ("float32", "complex64") else 1e-9
    np.testing.assert_allclose(as_numpy(got), want.numpy(), atol=tol, rtol=tol)


@needs_torch
def test_eigvals_gradient_is_eig_backward():
    a = well_separated((3, 3), "float64")
    x = minitorch.tensor(a, requires_grad=True)
    vals = minitorch.linalg.eigvals(x)
    assert type(vals.grad_fn).__name__ == "LinalgEigBackward0"
    t = torch.tensor(a, requires_grad=True)
    (minitorch.view_as_real(vals) ** 2).sum().backward()
    (torch.view_as_real(torch.linalg.eigvals(t)) ** 2).sum().backward()
    np.testing.assert_allclose(as_numpy(x.grad), t.grad.numpy(), atol=1e-10)


@needs_torch
def test_backward_op_directly():
    """_linalg_eig_backward(gL, gV, L, V, real_input) against PyTorch's backward of linalg.eig
    given the same output gradients (torch.autograd.grad), for complex and real inputs."""
    for dtype in ("complex128", "float64"):
        a = well_separated((2, 3, 3), dtype)
        x = torch.tensor(a, requires_grad=True)
        L, V = torch.linalg.eig(x)
        gL, gV = complex_sample(rng, (2, 3)), complex_sample(rng, (2, 3, 3))
        # gV's part along V's phases taken out (V^H gV with a real diagonal), as a real loss gives
        vh = np.conj(np.swapaxes(V.detach().numpy(), -1, -2))
        phase = np.diagonal(vh @ gV, 0, -2, -1).imag / np.diagonal(vh @ V.detach().numpy(), 0, -2, -1).real
        gV = gV - V.detach().numpy() * (1j * phase)[..., None, :]
        mine = [minitorch.tensor(t) for t in (gL, gV, L.detach().numpy(), V.detach().numpy())]
        real_input = dtype == "float64"
        for given in ((0, 1), (0,), (1,)):
            want = torch.autograd.grad([(L, V)[k] for k in given], x,
                                       [torch.tensor((gL, gV)[k]) for k in given], retain_graph=True)[0]
            got = minitorch._C._linalg_eig_backward(mine[0] if 0 in given else None,
                                                    mine[1] if 1 in given else None, mine[2], mine[3],
                                                    real_input)
            assert str(got.dtype).split(".")[-1] == dtype
            np.testing.assert_allclose(as_numpy(got), want.numpy(), atol=1e-10)
    with pytest.raises(RuntimeError, match="_linalg_eig_backward: expected the eigenvalues"):
        minitorch._C._linalg_eig_backward(None, None, mine[2], mine[2], True)


@needs_torch
def test_loss_depending_on_phase_raises_as_torch():
    a = well_separated((3, 3), "float64")
    msgs = []
    for lib in (minitorch, torch):
        x = lib.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            lib.linalg.eig(x)[1].imag.sum().backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert "specified up to multiplication by e^{i phi}" in msgs[0]


@needs_torch
def test_defective_matrix_gradient_as_torch():
    """A Jordan block has no basis of eigenvectors: LAPACK's V is nearly singular, and the
    eigenvalues' gradient (a solve with V^H) is PyTorch's all the same."""
    grads = []
    for lib in (minitorch, torch):
        x = lib.tensor([[1.0, 1.0], [0.0, 1.0]], requires_grad=True)
        lib.view_as_real(lib.linalg.eig(x)[0]).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-5)
