"""DTensor (minitorch.distributed.tensor) over 2 and 4 processes (scripts/dtensor.py) against
NumPy: its layouts (shape, stride, placements, local shape), the values of its parts and of the
whole, its operators, gradients and optimizer steps, and its errors in PyTorch's words."""
import numpy as np
import pytest

from launching import chunk, launched_once, needs_mpi

import minitorch
from minitorch.distributed.tensor import Partial, Replicate, Shard

g = np.random.default_rng(0)
X = g.standard_normal((7, 5))
Y = g.standard_normal((7, 5))
W = g.standard_normal((5, 6))


def layout(shape, stride, placements, local):
    return f"DTensor {tuple(shape)} {tuple(stride)} {tuple(placements)} {tuple(local)}"


def sgd(p, target, steps=2, lr=0.1, momentum=0.9):
    buf = None
    for _ in range(steps):
        grad = 2 * (p - target)
        buf = grad if buf is None else momentum * buf + grad
        p = p - lr * buf
    return p


def adam(p, target, steps=2, lr=0.01, b1=0.9, b2=0.999, eps=1e-8):
    m = v = np.zeros_like(p)
    for t in range(1, steps + 1):
        grad = 2 * (p - target)
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        p = p - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
    return p


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    return launched_once(tmp_path_factory, "dtensor.py", timeout=180, args=("{out}/checkpoint",))


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_dtensor_layouts_and_values(launched, n):
    close = dict(rtol=1e-12, atol=1e-12)
    S = n * (n + 1) / 2  # the sum of the partial parts X * (r + 1)
    for r, got in enumerate(launched(n)):
        r0, nr = chunk(7, n, r)
        c0, nc = chunk(5, n, r)
        assert str(got["layout_s0"]) == layout((7, 5), (5, 1), [Shard(0)], (nr, 5))
        assert str(got["layout_s1"]) == layout((7, 5), (5, 1), [Shard(1)], (7, nc))
        assert str(got["layout_neg"]) == layout((7, 5), (5, 1), [Shard(1)], (7, nc))
        assert str(got["layout_rep"]) == layout((7, 5), (5, 1), [Replicate()], (7, 5))
        np.testing.assert_array_equal(got["local_s0"], X[r0:r0 + nr])
        np.testing.assert_array_equal(got["local_s1"], X[:, c0:c0 + nc])
        for name in ("s0", "s1", "rep", "neg"):
            np.testing.assert_array_equal(got[f"full_{name}"], X)
        assert str(got["re_s0_s1"]) == layout((7, 5), (5, 1), [Shard(1)], (7, nc))
        assert str(got["re_s0_rep"]) == layout((7, 5), (5, 1), [Replicate()], (7, 5))
        np.testing.assert_array_equal(got["re_s0_s1_full"], X)
        np.testing.assert_array_equal(got["re_s0_rep_full"], X)
        np.testing.assert_array_equal(got["re_rep_s1_local"], X[:, c0:c0 + nc])
        assert str(got["partial"]) == layout((7, 5), (5, 1), [Partial()], (7, 5))
        np.testing.assert_allclose(got["partial_full"], X * S, **close)
        np.testing.assert_allclose(got["partial_s0_local"], (X * S)[r0:r0 + nr], **close)
        np.testing.assert_allclose(got["rep_to_partial_full"], X, **close)
        # from_local
        assert str(got["from_local"]) == layout((2 * n, 5), (5, 1), [Shard(0)], (2, 5))
        np.testing.assert_array_equal(got["from_local_full"], np.concatenate([X[:2] * (k + 1) for k in range(n)]))
        assert str(got["from_local_shape"]) == layout((n - 1, 5), (5, 1), [Shard(0)], (1, 5))
        np.testing.assert_array_equal(got["from_local_grad"], np.full((2, 5), 3.0))
        # pointwise
        assert str(got["pointwise"]) == layout((7, 5), (5, 1), [Shard(0)], (nr, 5))
        np.testing.assert_allclose(got["pointwise_full"], np.exp(2 * X + Y) - np.tanh(X) / 3, **close)
        assert str(got["inplace"]) == layout((7, 5), (5, 1), [Shard(0)], (nr, 5))
        np.testing.assert_allclose(got["inplace_full"], X * Y + 1.5, **close)
        assert str(got["partial_linear"]) == layout((7, 5), (5, 1), [Partial()], (7, 5))
        np.testing.assert_allclose(got["partial_linear_full"], 3 * X * S, **close)
        np.testing.assert_allclose(got["partial_relu_full"], np.maximum(X * S - 1, 0), **close)
        assert str(got["partial_relu"]) == layout((7, 5), (5, 1), [Replicate()], (7, 5))
        # reductions
        assert str(got["sum_all"]) == layout((), (), [Partial()], ())
        np.testing.assert_allclose(got["sum_all_full"], X.sum(), **close)
        assert str(got["sum_0"]) == layout((5,), (1,), [Partial()], (5,))
        np.testing.assert_allclose(got["sum_0_full"], X.sum(0), **close)
        assert str(got["sum_1"]) == layout((7, 1), (1, 1), [Shard(0)], (nr, 1))
        np.testing.assert_allclose(got["sum_1_full"], X.sum(1, keepdims=True), **close)
        np.testing.assert_allclose(got["mean_0_full"], X.mean(0), **close)
        np.testing.assert_array_equal(got["amax_full"], X.max(0))
        assert str(got["amax"]) == layout((5,), (1,), [Partial("max")], (5,))
        np.testing.assert_allclose(got["item"], X.sum(), **close)
        np.testing.assert_array_equal(got["numpy"], X)
        # matmul
        assert str(got["mm_s0"]) == layout((7, 6), (6, 1), [Shard(0)], (nr, 6))
        np.testing.assert_allclose(got["mm_s0_full"], X @ W, **close)
        assert str(got["mm_partial"]) == layout((7, 6), (6, 1), [Partial()], (7, 6))
        np.testing.assert_allclose(got["mm_partial_full"], X @ W, **close)
        assert str(got["mm_s1"]) == layout((7, 6), (6, 1), [Shard(1)], (7, chunk(6, n, r)[1]))
        assert str(got["t"]) == layout((5, 7), (1, 5), [Shard(1)], (5, nr))
        np.testing.assert_array_equal(got["t_full"], X.T)
        # autograd
        assert str(got["grad_layout"]) == layout((5, 6), (6, 1), [Shard(1)], (5, chunk(6, n, r)[1]))
        np.testing.assert_allclose(got["loss"], np.tanh(Y @ W).sum(), **close)
        np.testing.assert_allclose(got["grad_full"], Y.T @ (1 - np.tanh(Y @ W) ** 2), **close)
        # optimizers on the shards
        np.testing.assert_allclose(got["opt_sgd"], sgd(W, W * 0.5), **close)
        np.testing.assert_allclose(got["opt_adam"], adam(W, W * 0.5), rtol=1e-10, atol=1e-12)
        assert got["opt_sgd_is_param"].all() and got["opt_adam_is_param"].all()
        # clip_grad_norm_: the total norm of the whole gradients, every shard scaled by it
        grads = np.concatenate([np.full(W.size, 3.0), (2 * X).reshape(-1)])
        total = np.linalg.norm(grads)
        np.testing.assert_allclose(got["clip_norm"], total, **close)
        np.testing.assert_allclose(got["clip_grads"], grads * 0.5 / (total + 1e-6), **close)
        np.testing.assert_allclose(got["clip_inf"], np.abs(grads).max() * 0.5 / (total + 1e-6), **close)
        assert str(got["scaled"]) == layout((7, 5), (5, 1), [Shard(0)], (nr, 5))
        np.testing.assert_array_equal(got["scaled_full"], X * 0.5)
        assert str(got["bias_cols"]) == layout((7, 5), (5, 1), [Shard(1)], (7, nc))
        np.testing.assert_array_equal(got["bias_cols_full"], X + Y[0])
        np.testing.assert_array_equal(got["bias_rows_full"], X + Y[0])
        assert str(got["rows_scaled"]) == layout((7, 5), (5, 1), [Shard(0)], (nr, 5))
        assert list(got["module_kinds"]) == ["weight (Shard(dim=0),)", "bias (Replicate(),)"]
        np.testing.assert_allclose(got["module_out"], got["module_want"], **close)
        np.testing.assert_allclose(got["module_grads"], got["module_want_grads"], **close)
        # checkpointed by rows, loaded by columns, whole, and a partial value reduced
        np.testing.assert_array_equal(got["dcp_rows_local"], X[:, c0:c0 + nc])
        np.testing.assert_array_equal(got["dcp_rep"], X)
        np.testing.assert_allclose(got["dcp_part"], X * S, **close)
        assert list(got["dcp_chunks"]) == [str(minitorch.Size((chunk(7, n, k)[0], 0))) for k in range(n)]
        assert str(got["zeros"]) == layout((5, 3), (3, 1), [Shard(1)], (5, chunk(3, n, r)[1]))
        # errors
        assert str(got["err_mixed"]) == ("RuntimeError: aten.add.default: got mixed torch.Tensor and DTensor, need "
                                         "to convert all torch.Tensor to DTensor before calling distributed "
                                         "operators!")
        assert str(got["err_placements"]) == ("ValueError: `placements` must have the same length as "
                                              "`device_mesh.ndim`! Found placements length: 2, and "
                                              "device_mesh.ndim: 1.")
        assert str(got["rep_reshape"]) == layout((35,), (1,), [Replicate()], (35,))
        np.testing.assert_array_equal(got["rep_getitem_full"], X[1:3, ::2])
        assert str(got["err_view"]) == ("RuntimeError: Cannot flatten unevenly sharded tensor: dimension 0 (size 7) is "
                                        f"not evenly divisible by mesh dimension 0 (size {n}). Please redistribute "
                                        "the tensor before this operation.")
        assert str(got["err_no_strategy"]) == ("NotImplementedError: Operator aten.cumsum.default does not have a "
                                               "sharding strategy registered.")
        assert str(got["err_to_partial"]).startswith("RuntimeError: Can not redistribute to Partial")
        assert str(got["err_distribute_dtensor"]).startswith("ValueError: distribute_tensor expects a torch.Tensor")
        assert str(got["err_shard_dim"]).startswith("IndexError: Dimension out of range")


@needs_mpi
def test_dtensor_on_a_2d_mesh(launched):
    for r, got in enumerate(launched(4)):
        dp, tp = divmod(r, 2)
        r0, nr = chunk(7, 2, dp)
        c0, nc = chunk(5, 2, tp)
        assert str(got["mesh2"]) == layout((7, 5), (5, 1), [Shard(0), Shard(1)], (nr, nc))
        np.testing.assert_array_equal(got["mesh2_full"], X)
        t0, tn = chunk(nr, 2, tp)  # dim 0 split by dp, then each part by tp
        np.testing.assert_array_equal(got["mesh2_twice_local"], X[r0 + t0:r0 + t0 + tn])
        np.testing.assert_array_equal(got["mesh2_twice_full"], X)
        np.testing.assert_array_equal(got["mesh2_re_full"], X)
        np.testing.assert_allclose(got["mesh2_sum_full"], X.sum(1), rtol=1e-12, atol=1e-12)


def test_placements_as_torch():
    assert repr(Shard(0)) == "Shard(dim=0)" and repr(Replicate()) == "Replicate()" and repr(Partial()) == \
        "Partial(sum)"
    assert Shard(1) == Shard(1) and Shard(0) != Shard(1) and Replicate() == Replicate() and Partial() != \
        Partial("max")
    assert Shard(0).is_shard() and Shard(0).is_shard(0) and not Shard(0).is_shard(1)
    assert Replicate().is_replicate() and Partial().is_partial() and not Shard(0).is_partial()
    assert len({Shard(0), Shard(0), Replicate()}) == 2
    with pytest.raises(RuntimeError, match="No device mesh is currently active"):
        minitorch.distributed.tensor.distribute_tensor(minitorch.ones(2), placements=[Replicate()])
