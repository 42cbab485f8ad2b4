"""minitorch.fft and complex tensors on the CUDA device: the backend has no FFT (no cuFFT in its
build), so a transform of a CUDA tensor runs on the host (the primitives' host round trip) and its
complex result comes back to the device, equal to the CPU's, its gradient too; complex tensors move
to and from the device and are made there (csrc/dispatch/complex.c)."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft", "fft2", "rfftn", "irfft", "hfft"])
def test_transform_of_a_cuda_tensor_as_on_the_cpu(name):
    x = np.random.default_rng(4).standard_normal((4, 6)).astype(np.float32)
    results = {}
    for device in ("cpu", "cuda"):
        t = minitorch.tensor(x, requires_grad=True)
        y = getattr(minitorch.fft, name)(t.to(device))
        assert y.device.type == device
        real = minitorch.view_as_real(y) if y.is_complex() else y
        (real * real).sum().backward()
        results[device] = (as_numpy(y), as_numpy(t.grad))
    np.testing.assert_allclose(results["cuda"][0], results["cpu"][0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(results["cuda"][1], results["cpu"][1], rtol=1e-5, atol=1e-5)


def test_complex_on_cuda():
    z = minitorch.fft.fft(minitorch.arange(4.0))
    c = z.to("cuda")
    assert c.device.type == "cuda" and c.dtype == minitorch.complex64
    np.testing.assert_array_equal(as_numpy(c), as_numpy(z))
    assert as_numpy(minitorch.zeros(3, dtype=minitorch.complex64, device="cuda")).tolist() == [0j] * 3
    v = minitorch.view_as_complex(minitorch.ones(3, 2, device="cuda"))
    assert v.device.type == "cuda" and as_numpy(v).tolist() == [1 + 1j] * 3


def test_cpu_round_trip():
    x = minitorch.arange(8.0, device="cuda") * 2
    got = minitorch.fft.rfft(x.cpu())
    np.testing.assert_allclose(np.asarray(minitorch.view_as_real(got).tolist()),
                               np.stack([np.fft.rfft(np.arange(8.0) * 2).real,
                                         np.fft.rfft(np.arange(8.0) * 2).imag], -1), atol=1e-4)
