"""Complex tensors through padding (F.pad in every mode, constant_pad_nd, the reflection,
replication and circular pads), unfold and fold (im2col and col2im, the parts as a batch), and so
through stft of a complex signal and istft with return_complex=True, against PyTorch: values,
dtype, shape and the gradients of a real loss (helpers.same_as_torch_complex), on contiguous and
non-contiguous inputs; errors of the same class as PyTorch's."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, as_numpy, complex_sample, same_as_torch_complex, torch

rng = np.random.default_rng(2020)

PADS = {
    "constant_1d": ((2, 5, 6), lambda L, x: L.nn.functional.pad(x, (2, 1))),
    "constant_value": ((2, 5, 6), lambda L, x: L.nn.functional.pad(x, (1, 2, 0, 3), value=1.5)),
    "constant_negative": ((2, 5, 6), lambda L, x: L.nn.functional.pad(x, (-1, 2, 1, -2))),
    "constant_pad_nd": ((4, 3), lambda L, x: L.constant_pad_nd(x, [1, 0, 2, 2])),
    "reflect_1d": ((2, 3, 7), lambda L, x: L.nn.functional.pad(x, (3, 2), mode="reflect")),
    "reflect_1d_unbatched": ((3, 7), lambda L, x: L.nn.functional.pad(x, (1, 4), mode="reflect")),
    "reflect_2d": ((1, 2, 5, 6), lambda L, x: L.nn.functional.pad(x, (2, 1, 3, 2), mode="reflect")),
    "reflect_3d": ((1, 2, 3, 4, 5), lambda L, x: L.nn.functional.pad(x, (1, 1, 2, 0, 1, 2), mode="reflect")),
    "replicate_1d": ((2, 3, 4), lambda L, x: L.nn.functional.pad(x, (3, 2), mode="replicate")),
    "replicate_2d": ((2, 4, 5), lambda L, x: L.nn.functional.pad(x, (2, 1, 0, 2), mode="replicate")),
    "replicate_3d": ((1, 2, 3, 2, 4), lambda L, x: L.nn.functional.pad(x, (1, 2, 2, 1, 0, 1), mode="replicate")),
    "circular_1d": ((2, 3, 5), lambda L, x: L.nn.functional.pad(x, (2, 3), mode="circular")),
    "circular_2d": ((1, 2, 4, 5), lambda L, x: L.nn.functional.pad(x, (1, 2, 3, 1), mode="circular")),
}


def test_reflect_pad_against_numpy():
    z = complex_sample(rng, (2, 3, 6))
    got = minitorch.nn.functional.pad(minitorch.tensor(z), (2, 3), mode="reflect")
    assert got.dtype == minitorch.complex128
    np.testing.assert_array_equal(as_numpy(got), np.pad(z, ((0, 0), (0, 0), (2, 3)), mode="reflect"))
    got = minitorch.nn.functional.pad(minitorch.tensor(z), (1, 2), mode="circular")
    np.testing.assert_array_equal(as_numpy(got), np.pad(z, ((0, 0), (0, 0), (1, 2)), mode="wrap"))


FOLDS = {
    "unfold": ((2, 3, 5, 6), lambda L, x: L.nn.functional.unfold(x, (2, 3))),
    "unfold_unbatched": ((3, 5, 6), lambda L, x: L.nn.functional.unfold(x, 2, padding=1, stride=2)),
    "unfold_dilated": ((1, 2, 7, 7), lambda L, x: L.nn.functional.unfold(x, 3, dilation=2, stride=(1, 2))),
    "fold": ((2, 12, 8), lambda L, x: L.nn.functional.fold(x, (4, 5), (2, 2), stride=(2, 1))),
    "fold_unbatched": ((8, 9), lambda L, x: L.nn.functional.fold(x, (4, 4), 2, padding=0, stride=1)),
    "fold_overlap_add": ((3, 16, 7), lambda L, x: L.nn.functional.fold(x, (1, 40), (1, 16), stride=(1, 4))),
    "fold_of_unfold": ((1, 2, 6, 6), lambda L, x: L.nn.functional.fold(L.nn.functional.unfold(x, 3, padding=1),
                                                                        (6, 6), 3, padding=1)),
}


CASES = {**PADS, **FOLDS}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_pad_unfold_and_fold_of_complex_like_torch(name, layout):
    shape, fn = CASES[name]
    same_as_torch_complex(fn, [complex_sample(rng, shape)], layout=layout)


@pytest.mark.parametrize("name", sorted(CASES))
def test_pad_unfold_and_fold_of_complex64(name):
    shape, fn = CASES[name]
    same_as_torch_complex(fn, [complex_sample(rng, shape, "complex64")])


def test_fold_of_complex_is_the_fold_of_each_part():
    z = complex_sample(rng, (2, 8, 9))
    fold = minitorch.nn.functional.fold
    got = fold(minitorch.tensor(z), (4, 4), 2)
    re = fold(minitorch.tensor(z.real.copy()), (4, 4), 2)
    im = fold(minitorch.tensor(z.imag.copy()), (4, 4), 2)
    np.testing.assert_array_equal(as_numpy(got), as_numpy(re) + 1j * as_numpy(im))


@pytest.mark.parametrize("call", [
    lambda L, x: L.nn.functional.fold(x, (4, 4), 2),  # a 4-D input
    lambda L, x: L.nn.functional.unfold(x[0, 0], 2),  # a 2-D input
    lambda L, x: L.nn.functional.fold(x[0], (4, 4), 3),  # sizes that do not match
    lambda L, x: L.nn.functional.pad(x, (9, 9), mode="reflect"),  # a pad wider than the dim
])
def test_complex_errors_like_torch(call):
    """The class PyTorch raises, with a message that is the op's own (not a refusal of complex)."""
    z = complex_sample(rng, (2, 3, 4, 4))
    with pytest.raises(Exception) as got:
        call(minitorch, minitorch.tensor(z))
    assert "not implemented for" not in str(got.value)
    if torch is not None:
        with pytest.raises(Exception) as want:
            call(torch, torch.tensor(z))
        assert got.type is want.type, f"{got.value!r}, PyTorch's {want.value!r}"


# ---- stft of a complex signal, istft to a complex one ----

def _win(lib, n=16):
    return lib.hann_window(n, dtype=lib.float64)


STFTS = {
    "stft_complex_signal": ((2, 60), lambda L, x: L.view_as_real(
        L.stft(x, 16, hop_length=4, window=_win(L), return_complex=True))),
    "stft_complex_1d_constant_pad": ((50,), lambda L, x: L.view_as_real(
        L.stft(x, 12, hop_length=3, window=_win(L, 12), pad_mode="constant", onesided=False, return_complex=True))),
    "istft_return_complex": ((2, 60), lambda L, x: L.istft(
        L.stft(x, 16, hop_length=4, window=_win(L), return_complex=True), 16, hop_length=4, window=_win(L),
        onesided=False, return_complex=True, length=60)),
    "istft_complex_no_length": ((2, 60), lambda L, x: L.istft(
        L.stft(x, 16, hop_length=4, window=_win(L), return_complex=True), 16, hop_length=4, window=_win(L),
        onesided=False, return_complex=True)),
}


@pytest.mark.parametrize("name", sorted(STFTS))
def test_stft_and_istft_of_complex_signals_like_torch(name):
    shape, fn = STFTS[name]
    same_as_torch_complex(fn, [complex_sample(rng, shape)], atol=1e-9, rtol=1e-7)


def test_istft_inverts_the_stft_of_a_complex_signal():
    z = complex_sample(rng, (3, 80))
    w = minitorch.hann_window(16, dtype=minitorch.float64)
    spec = minitorch.stft(minitorch.tensor(z), 16, hop_length=4, window=w, return_complex=True)
    assert tuple(spec.shape) == (3, 16, 21) and spec.dtype == minitorch.complex128
    back = minitorch.istft(spec, 16, hop_length=4, window=w, return_complex=True, length=80)
    np.testing.assert_allclose(as_numpy(back), z, atol=1e-12)
    with pytest.raises(RuntimeError, match="Cannot have onesided output if window or input is complex"):
        minitorch.stft(minitorch.tensor(z), 16, window=w, onesided=True, return_complex=True)
