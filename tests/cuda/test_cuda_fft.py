"""minitorch.fft and complex tensors on the CUDA device: the backend has no FFT and no complex
kernels, so each raises NotImplementedError naming the op (csrc/dispatch/complex.c, and the
dispatcher's missing-kernel error for a real CUDA input), never a crash or a wrong result; real
tensors stay usable around it, and the CPU transform of a copy brought back is right."""
import numpy as np
import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft", "fft2", "rfftn"])
def test_cuda_input_names_the_function(name):
    x = minitorch.ones(4, 6, device="cuda")
    with pytest.raises(NotImplementedError, match=f"minitorch.fft.{name} is not implemented for the cuda device"):
        getattr(minitorch.fft, name)(x)
    # below the Python layer, the primitives refuse too (no CUDA kernel; the host fallback's
    # complex result cannot come back to the device)
    with pytest.raises(NotImplementedError, match="_fft_r2c|complex tensors are not supported on the CUDA device"):
        minitorch._C._fft_r2c(x, [1], 0, True)


def test_complex_to_cuda_refused():
    z = minitorch.fft.fft(minitorch.arange(4.0))
    with pytest.raises(NotImplementedError, match="complex tensors are not supported on the CUDA device"):
        z.to("cuda")
    with pytest.raises(NotImplementedError, match="zeros: complex tensors"):
        minitorch.zeros(3, dtype=minitorch.complex64, device="cuda")
    with pytest.raises(NotImplementedError, match="view_as_complex"):
        minitorch.view_as_complex(minitorch.ones(3, 2, device="cuda"))


def test_cpu_round_trip_after_the_refusal():
    x = minitorch.arange(8.0, device="cuda") * 2
    got = minitorch.fft.rfft(x.cpu())
    np.testing.assert_allclose(np.asarray(minitorch.view_as_real(got).tolist()),
                               np.stack([np.fft.rfft(np.arange(8.0) * 2).real,
                                         np.fft.rfft(np.arange(8.0) * 2).imag], -1), atol=1e-4)
