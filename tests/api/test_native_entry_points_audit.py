"""torch.native_layer_norm, native_batch_norm, native_group_norm, native_dropout, convolution,
max_pool1d_with_indices, grid_sampler and is_distributed against PyTorch: every result (the saved
statistics included) and the gradients of the inputs; running statistics updated alike."""
import numpy as np
import pytest

import minitorch
from helpers import same_as_torch, torch

R = np.random.default_rng(5)
X = R.standard_normal((2, 3, 4))
X4 = R.standard_normal((1, 2, 3, 4))
G = R.uniform(-1.1, 1.1, (1, 2, 2, 2))


def _cat(lib, results):
    """The results of a call as one vector (a bool mask as 0/1), so one backward reaches them all."""
    return lib.cat([r.double().reshape(-1) for r in results])


CASES = {
    "layer_norm_last": lambda lib, x, w: _cat(lib, lib.native_layer_norm(x, [4], None, None, 1e-5)),
    "layer_norm_two_dims_affine": lambda lib, x, w: _cat(
        lib, lib.native_layer_norm(x, [3, 4], w[:3, :4] * 2, w[:3, :4], 1e-5)),
    "batch_norm_train": lambda lib, x, w: _cat(lib, lib.native_batch_norm(x, w[0, :3], w[1, :3], None, None, True,
                                                                          0.1, 1e-5)),
    "batch_norm_eval": lambda lib, x, w: _cat(lib, lib.native_batch_norm(
        x, None, w[1, :3], w[2, :3].detach(), w[3, :3].detach().abs() + 0.5, False, 0.1, 1e-3)),
    # (PyTorch 2.13 asserts a contiguous input here and reads a strided weight wrongly; minitorch
    # takes any layout)
    "group_norm": lambda lib, x, w: _cat(lib, lib.native_group_norm(x.contiguous(), w[0, :3].contiguous(), None,
                                                                    2, 3, 4, 3, 1e-5)),
    "dropout_eval": lambda lib, x, w: _cat(lib, lib.native_dropout(x, 0.3, False)),
    "dropout_p0": lambda lib, x, w: _cat(lib, lib.native_dropout(x, 0.0, True)),
    "dropout_p1": lambda lib, x, w: _cat(lib, lib.native_dropout(x, 1.0, None)),
    "conv1d": lambda lib, x, w: lib.convolution(x, w[:5, :3].reshape(5, 3, 1).expand(5, 3, 2), w[0, :5], [1], [1],
                                                [2], False, [0], 1),
    "conv_transpose1d": lambda lib, x, w: lib.convolution(x, w[:3, :4].reshape(3, 2, 2), None, [2], [1], [1],
                                                          True, [1], 1),
    "conv2d_groups": lambda lib, x, w: lib.convolution(x.reshape(1, 2, 3, 4), w[:4, :4].reshape(4, 1, 2, 2), None,
                                                       [1, 2], [1, 0], [1, 1], False, [0, 0], 2),
    # (PyTorch 2.13's conv_tbc views some strided inputs and fails there: this one made contiguous)
    "conv_tbc": lambda lib, x, w: lib.conv_tbc(x.permute(2, 0, 1).contiguous(), w[:4, :3].reshape(2, 3, 2), w[5, :2],
                                               1),
    "conv_tbc_functional": lambda lib, x, w: lib.nn.functional.conv_tbc(x.permute(1, 0, 2), w[:2, :4].reshape(2, 4, 1),
                                                                        w[5, :1]),
    "conv_tbc_bias_size": lambda lib, x, w: lib.conv_tbc(x.permute(2, 0, 1), w[:4, :3].reshape(2, 3, 2), w[5, :3]),
    "conv_tbc_input_dims": lambda lib, x, w: lib.conv_tbc(x[0], w[:4, :3].reshape(2, 3, 2), w[5, :2]),
    "conv_tbc_channels": lambda lib, x, w: lib.conv_tbc(x, w[:4, :3].reshape(2, 3, 2), w[5, :2]),
    "conv_tbc_weight_dims": lambda lib, x, w: lib.conv_tbc(x, w[:3, :3], w[5, :3]),
    "max_pool1d": lambda lib, x, w: _cat(lib, lib.max_pool1d_with_indices(x, 2)),
    "max_pool1d_options": lambda lib, x, w: _cat(lib, lib.max_pool1d_with_indices(x, [2], [1], [1], [1], True)),
    "grid_sampler_bilinear_zeros": lambda lib, x, w: lib.grid_sampler(
        x.reshape(1, 2, 3, 4), lib.tensor(G), 0, 0, False),
    "grid_sampler_nearest_border": lambda lib, x, w: lib.grid_sampler(
        x.reshape(1, 2, 3, 4), lib.tensor(G), 1, 1, True),
    "grid_sampler_bicubic_reflection": lambda lib, x, w: lib.grid_sampler(
        x.reshape(1, 2, 3, 4), lib.tensor(G), 2, 2, False),
}


@pytest.mark.parametrize("fn", list(CASES.values()), ids=list(CASES))
def test_against_torch(fn):
    same_as_torch(fn, [X, R.standard_normal((6, 6))], layout="transposed", atol=1e-9, rtol=1e-7)


def test_running_statistics_and_shapes():
    x = minitorch.tensor(X)
    rm, rv = minitorch.zeros(3, dtype=minitorch.float64), minitorch.ones(3, dtype=minitorch.float64)
    out, mean, invstd = minitorch.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
    want_mean = X.mean(axis=(0, 2))
    np.testing.assert_allclose(mean.numpy(), want_mean, rtol=1e-12)
    np.testing.assert_allclose(invstd.numpy(), 1 / np.sqrt(X.var(axis=(0, 2)) + 1e-5), rtol=1e-12)
    np.testing.assert_allclose(rm.numpy(), 0.1 * want_mean, rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * X.var(axis=(0, 2), ddof=1), rtol=1e-12)
    _, m, r = minitorch.native_layer_norm(x, [3, 4], None, None, 1e-5)
    assert tuple(m.shape) == (2, 1, 1) and tuple(r.shape) == (2, 1, 1)
    out, mask = minitorch.native_dropout(minitorch.ones(1000), 0.25, True)
    assert mask.dtype == minitorch.bool and 600 < int(mask.sum()) < 900
    np.testing.assert_allclose(out.numpy(), mask.numpy() / 0.75)
    assert minitorch.is_distributed(x) is False
    if torch is not None:
        assert torch.is_distributed(torch.tensor(X)) is False


def test_group_norm_any_layout():
    """The strided input and weight PyTorch's native_group_norm refuses or misreads give group_norm's
    values here."""
    x = minitorch.tensor(np.ascontiguousarray(X.transpose())).permute(2, 1, 0)
    w = minitorch.tensor(np.ascontiguousarray(np.arange(6.0).reshape(2, 3).T)).t()[1]
    out, mean, rstd = minitorch.native_group_norm(x, w, None, 2, 3, 4, 3, 1e-5)
    ref = minitorch.nn.functional.group_norm(x.contiguous(), 3, w.contiguous(), None, 1e-5)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)
    np.testing.assert_allclose(mean.numpy(), X.mean(axis=2), rtol=1e-12)
    np.testing.assert_allclose(rstd.numpy(), 1 / np.sqrt(X.var(axis=2) + 1e-5), rtol=1e-12)
