"""Dropout's masks are PyTorch's with the same seed: dropout, the channel forms (dropout1d/2d/3d,
feature_alpha_dropout), alpha_dropout and their modules, in place or not, on contiguous,
transposed and sliced inputs (the noise is laid out as the input, as PyTorch's empty_like), on
sizes past PyTorch's parallel grain; the generator left where PyTorch leaves it. On this path
PyTorch draws bernoulli_(p) from its mt19937 stream (not MKL's: an AMD CPU, or no MKL)."""
import warnings

import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")


def mt19937_path():
    torch.manual_seed(0)
    a = torch.empty(200, dtype=torch.float64).bernoulli_(0.3)
    torch.manual_seed(0)
    return bool((a == (torch.rand(200, dtype=torch.float64) < 0.3)).all())


pytestmark = pytest.mark.skipif(not mt19937_path(), reason="PyTorch draws bernoulli_(p) from MKL's streams here")

INPUTS = {
    "contiguous": lambda t: t.arange(2 * 3 * 4 * 5, dtype=t.float32).reshape(2, 3, 4, 5) / 7 - 8,
    "transposed": lambda t: (t.arange(2 * 3 * 4 * 5, dtype=t.float32).reshape(5, 4, 3, 2) / 7 - 8).permute(3, 2, 1, 0),
    "sliced": lambda t: (t.arange(2 * 3 * 8 * 5, dtype=t.float64).reshape(2, 3, 8, 5) / 7)[:, :, ::2],
    "large": lambda t: t.ones(7, 9, 33, 29),
}
CALLS = {
    "dropout": lambda t, x: t.nn.functional.dropout(x, 0.3),
    "dropout inplace": lambda t, x: t.nn.functional.dropout(x.clone(), 0.6, inplace=True),
    "dropout p=1": lambda t, x: t.nn.functional.dropout(x, 1.0),
    "dropout2d": lambda t, x: t.nn.functional.dropout2d(x, 0.4),
    "dropout2d inplace": lambda t, x: t.nn.functional.dropout2d(x.clone(), 0.4, inplace=True),
    "dropout1d": lambda t, x: t.nn.functional.dropout1d(x[0], 0.5),
    "dropout1d unbatched": lambda t, x: t.nn.functional.dropout1d(x[0, 0], 0.5),
    "dropout3d unbatched": lambda t, x: t.nn.functional.dropout3d(x, 0.5),
    "dropout3d": lambda t, x: t.nn.functional.dropout3d(x[None], 0.5),
    "alpha_dropout": lambda t, x: t.nn.functional.alpha_dropout(x, 0.2, True),
    "alpha_dropout inplace": lambda t, x: t.nn.functional.alpha_dropout(x.clone(), 0.2, True, inplace=True),
    "feature_alpha_dropout": lambda t, x: t.nn.functional.feature_alpha_dropout(x, 0.3, True),
    "Dropout2d module": lambda t, x: t.nn.Dropout2d(0.25)(x),
    "AlphaDropout module": lambda t, x: t.nn.AlphaDropout(0.25)(x),
    "FeatureAlphaDropout module": lambda t, x: t.nn.FeatureAlphaDropout(0.25)(x),
    "Dropout3d module": lambda t, x: t.nn.Dropout3d(0.25)(x),
    "Dropout1d module": lambda t, x: t.nn.Dropout1d(0.25)(x[1]),
    "bernoulli_(0.3)": lambda t, x: x.clone().bernoulli_(0.3),
    "bernoulli(p tensor)": lambda t, x: t.bernoulli((x - x.min()) / (x.max() - x.min() + 1)),
    "eval mode": lambda t, x: t.nn.functional.dropout(x, 0.5, training=False),
}


@pytest.mark.parametrize("layout", list(INPUTS))
@pytest.mark.parametrize("call", list(CALLS))
def test_same_masks_as_torch(layout, call):
    results = []
    for lib in (minitorch, torch):
        lib.manual_seed(1234)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = CALLS[call](lib, INPUTS[layout](lib))
        results.append((out.numpy(), lib.rand(3).numpy()))
    (got, after), (want, t_after) = results
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(after, t_after)


def test_gradients_through_the_masks():
    grads = []
    for lib in (minitorch, torch):
        lib.manual_seed(5)
        x = lib.tensor(np.linspace(-2, 2, 240).reshape(2, 3, 8, 5), requires_grad=True)
        y = lib.nn.functional.dropout2d(x, 0.5) * 2 + lib.nn.functional.alpha_dropout(x, 0.3, True)
        y.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(*grads, rtol=1e-12)


def test_channel_dropout_errors_and_warnings():
    F = minitorch.nn.functional
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(minitorch.ones(1, 2, 3, 4))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout2d(minitorch.ones(1, 2, 3, 4), 1.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.5"):
        F.alpha_dropout(minitorch.ones(3), -0.5)
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input"):
        F.dropout2d(minitorch.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input to dropout2d, which is deprecated"):
        F.dropout2d(minitorch.ones(2, 3))
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions in the input"):
        minitorch.feature_dropout(minitorch.ones(3), 0.5, True)
    assert repr(minitorch.nn.Dropout2d(0.2)) == "Dropout2d(p=0.2, inplace=False)"


TORCH_LEVEL = {
    "feature_dropout_": lambda lib, x, train: lib.feature_dropout_(x, 0.4, train),
    "alpha_dropout_": lambda lib, x, train: lib.alpha_dropout_(x, 0.3, train),
    "feature_alpha_dropout_": lambda lib, x, train: lib.feature_alpha_dropout_(x, 0.5, train),
    "feature_dropout": lambda lib, x, train: lib.feature_dropout(x, 0.4, train),
    "alpha_dropout": lambda lib, x, train: lib.alpha_dropout(x, 0.3, train),
    "feature_alpha_dropout": lambda lib, x, train: lib.feature_alpha_dropout(x, 0.5, train),
}


@pytest.mark.parametrize("name", list(TORCH_LEVEL))
def test_the_torch_level_functions_in_place_and_not(name):
    results = []
    for lib in (minitorch, torch):
        lib.manual_seed(77)
        x = lib.arange(60, dtype=lib.float32).reshape(3, 4, 5) / 9 - 3
        out = TORCH_LEVEL[name](lib, x, True)
        assert (out is x) == name.endswith("_")
        results.append(out.numpy())
        assert TORCH_LEVEL[name](lib, x, False) is x  # not training: the input itself
    np.testing.assert_allclose(*results, rtol=1e-6, atol=1e-6)
