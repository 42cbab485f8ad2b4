"""Wishart draws against PyTorch 2.13 after the same seed: the same Bartlett draws (Chi2 on the
diagonal, standard normals below it) and the same corrections, so the same samples (to the
rounding of the Cholesky factor and the matrix products) and the generator left where PyTorch
leaves it. PyTorch's rsample flags a draw for drawing again by support.check, which is True for a
positive definite draw, so it draws again (with the warning "Singular sample detected.") until
a redraw comes out singular or the tries run out: the stream follows that."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import torch

needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch")

COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]])

# name -> make(lib, dtype): a Wishart of each parametrisation, batch shape and df
MAKERS = {
    "cov": lambda lib, dt: lib.distributions.Wishart(lib.tensor(5.0, dtype=dt),
                                                     covariance_matrix=lib.tensor(COV, dtype=dt)),
    "number_df": lambda lib, dt: lib.distributions.Wishart(4, covariance_matrix=lib.tensor(COV, dtype=dt)),
    "tril_batch": lambda lib, dt: lib.distributions.Wishart(
        lib.tensor([4.0, 6.5], dtype=dt), scale_tril=lib.linalg.cholesky(lib.tensor(COV, dtype=dt))),
    "precision": lambda lib, dt: lib.distributions.Wishart(
        lib.tensor([3.5, 4.0], dtype=dt), precision_matrix=lib.tensor(COV, dtype=dt)),
    "low_df": lambda lib, dt: lib.distributions.Wishart(lib.tensor(2.2, dtype=dt),
                                                        covariance_matrix=lib.tensor(COV, dtype=dt)),
    "batch_2x2": lambda lib, dt: lib.distributions.Wishart(
        lib.tensor([[3.0, 5.0], [7.0, 2.5]], dtype=dt), covariance_matrix=lib.tensor(COV, dtype=dt)),
}


def draws(lib, name, dtype, shapes, seed):
    lib.manual_seed(seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = MAKERS[name](lib, getattr(lib, dtype))
        out = [d.sample(s) for s in shapes] + [d.rsample()]
    singular = sum("Singular sample detected." in str(w.message) for w in caught)
    return [o.numpy() for o in out], lib.rand(4).numpy(), singular


@needs_torch
@pytest.mark.parametrize("seed", [0, 1, 5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(MAKERS))
def test_wishart_draws_are_torchs(name, dtype, seed):
    if name == "low_df" and dtype == "float32":
        # draws with df < p have an eigenvalue near 0 (1e-7 in float32): whether Cholesky takes
        # them is LAPACK's rounding (PyTorch's and OpenBLAS's part there), which the redraws follow
        pytest.skip("near-singular float32 draws: LAPACK's rounding decides the redraws")
    shapes = [(), (2,), (3, 1)]
    got, got_next, got_warned = draws(minitorch, name, dtype, shapes, seed)
    want, want_next, want_warned = draws(torch, name, dtype, shapes, seed)
    tol = 1e-4 if dtype == "float32" else 1e-10
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    np.testing.assert_array_equal(got_next, want_next)  # the stream is left as PyTorch's
    assert got_warned == want_warned


@needs_torch
def test_wishart_max_try_correction():
    """max_try_correction bounds the redraws as in PyTorch (0: the first draw stays)."""
    for tries in (0, 1, 3):
        res = []
        for lib in (minitorch, torch):
            lib.manual_seed(11)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s = MAKERS["tril_batch"](lib, lib.float64).rsample((4,), max_try_correction=tries)
            res.append((s.numpy(), lib.rand(2).numpy()))
        np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10, atol=1e-10)
        np.testing.assert_array_equal(res[0][1], res[1][1])
