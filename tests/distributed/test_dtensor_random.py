"""Random DTensors (distributed.tensor.rand/randn, nn.init, rand_like and dropout on DTensors) and DTensor
pickling over 2 and 4 processes (scripts/dtensor_random.py): each shard is the matching slice
of the tensor one process draws with the same seed (PyTorch's offset-based RNG's promise), and a
saved DTensor loads back as the same layout and values."""
import numpy as np
import pytest

from launching import chunk, launched_once, needs_mpi

import minitorch


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    return launched_once(tmp_path_factory, "dtensor_random.py", timeout=120)


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_random_dtensors_are_slices_of_one_draw(launched, n):
    minitorch.manual_seed(5)
    want = {"randn_s0": minitorch.randn(7, 5, dtype=minitorch.float64).numpy(), "rand_s1": minitorch.rand(7, 5).numpy(),
            "randn_rep": minitorch.randn(4, 3).numpy(), "randn_2d": minitorch.randn(7, 5).numpy(),
            "after": minitorch.randn(3).numpy()}
    minitorch.manual_seed(7)
    w = minitorch.zeros(6, 4, dtype=minitorch.float64)
    minitorch.nn.init.normal_(w, mean=1.0, std=2.0)
    want["init_normal"] = w.numpy().copy()
    minitorch.nn.init.uniform_(w, -1.0, 1.0)
    want["init_uniform"] = w.numpy().copy()
    want["rand_like"] = minitorch.rand_like(minitorch.zeros(5, 3)).numpy()
    minitorch.manual_seed(11)
    act = (minitorch.ones(6, 4, dtype=minitorch.float64) * 3).requires_grad_()
    dropped = minitorch.nn.functional.dropout(act, 0.5)
    (dropped * 2).sum().backward()
    want["dropout"], want["dropout_grad"] = dropped.detach().numpy(), act.grad.numpy()
    assert 0 < (want["dropout"] == 0).sum() < want["dropout"].size  # some dropped, some kept
    for r, got in enumerate(launched(n)):
        assert str(got["dropout_layout"]) == "(Shard(dim=0),)"
        for key, value in want.items():
            np.testing.assert_array_equal(got[key], value, err_msg=key)
        assert str(got["init_normal_layout"]) == "(Shard(dim=1),)"
        assert str(got["rand_like_layout"]) == "DTensor (Shard(dim=0),)"
        if n == 4:  # 7 rows over 2, each part's 5 columns over 2
            r0, nr = chunk(7, 2, r // 2)
            c0, nc = chunk(5, 2, r % 2)
            np.testing.assert_array_equal(got["randn_2d_local"], want["randn_2d"][r0:r0 + nr, c0:c0 + nc])


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_dtensors_pickle_and_load_back(launched, n):
    g = np.random.default_rng(0)
    X = g.standard_normal((7, 5))
    for r, got in enumerate(launched(n)):
        assert list(got["pickled_kinds"]) == ["rows DTensor (Shard(dim=0),) (7, 5) True False False",
                                              "cols DTensor (Shard(dim=1),) (7, 5) True True True",
                                              "part DTensor (Partial(sum),) (7, 5) True False False"]
        r0, nr = chunk(7, n, r)
        np.testing.assert_array_equal(got["pickled_rows_local"], X[r0:r0 + nr])
        np.testing.assert_array_equal(got["pickled_rows_full"], X)
        np.testing.assert_array_equal(got["pickled_cols_full"], X)
        np.testing.assert_allclose(got["pickled_part_full"], X * n * (n + 1) / 2, rtol=1e-12)
