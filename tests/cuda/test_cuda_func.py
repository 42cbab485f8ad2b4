"""minitorch.func on the CUDA device: vmap and the transforms compose ops, so a CUDA input gives
the CPU's results on the device (per-sample gradients, jacrev, hessian), and vmap's randomness
modes watch and restore the CUDA generators too."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 3)).astype(np.float32)


def _both(prog):
    """prog(device) on the CPU and on CUDA: the same pytree of values, CUDA's on the device."""
    leaves = minitorch.utils._pytree.tree_leaves
    assert_same(tuple(leaves(prog("cuda"))), tuple(leaves(prog("cpu"))), rtol=1e-5, atol=1e-6)


def test_per_sample_gradients_on_cuda():
    minitorch.manual_seed(0)
    model = minitorch.nn.Sequential(minitorch.nn.Linear(3, 5), minitorch.nn.Tanh(), minitorch.nn.Linear(5, 2))
    y = rng.integers(0, 2, 4)

    def prog(device):
        m = model.to(device)
        params = {k: v.detach() for k, v in m.named_parameters()}

        def loss(p, x, t):
            out = minitorch.func.functional_call(m, p, (x.unsqueeze(0),))
            return minitorch.nn.functional.cross_entropy(out, t.unsqueeze(0))

        x, t = minitorch.tensor(X, device=device), minitorch.tensor(y, device=device)
        return minitorch.vmap(minitorch.func.grad(loss), in_dims=(None, 0, 0))(params, x, t)

    _both(prog)


def test_jacobians_on_cuda():
    def prog(device):
        x = minitorch.tensor(X[0], device=device)
        f = lambda v: (v.sin() * v.sum()).exp()  # noqa: E731
        return (minitorch.func.jacrev(f)(x), minitorch.func.jacfwd(f)(x),
                minitorch.func.hessian(lambda v: f(v).sum())(x), minitorch.vmap(f, in_dims=1)(
                    minitorch.tensor(X, device=device)))

    _both(prog)


def test_vmap_randomness_watches_cuda_generators():
    x = minitorch.zeros(3, 4, device="cuda")
    with pytest.raises(RuntimeError, match="randomness error mode"):
        minitorch.vmap(lambda r: r + minitorch.rand(4, device="cuda"))(x)
    rows = minitorch.vmap(lambda r: r + minitorch.rand(4, device="cuda"), randomness="same")(x)
    assert all(minitorch.equal(rows[0], r) for r in rows[1:])
    rows = minitorch.vmap(lambda r: r + minitorch.rand(4, device="cuda"), randomness="different")(x)
    assert not minitorch.equal(rows[0], rows[1])
