"""torch.cuda's device questions where no device is usable (the usual run): they answer or raise
as PyTorch's do without CUDA (tests/cuda/test_cuda_device_api.py asks a device)."""
import warnings

import pytest

import minitorch

cuda = minitorch.cuda
pytestmark = pytest.mark.skipif(cuda.is_available(), reason="a CUDA device is usable here")


def expected_error():
    """PyTorch's: AssertionError on a build without CUDA, RuntimeError (CUDA's words) with one."""
    return AssertionError if cuda._C_cuda is None else RuntimeError


@pytest.mark.parametrize("call", [
    lambda: cuda.get_device_properties(), lambda: cuda.get_device_capability(0), lambda: cuda.init(),
    lambda: cuda.set_per_process_memory_fraction(0.5), lambda: cuda.get_per_process_memory_fraction(),
])
def test_device_questions_raise(call):
    with pytest.raises(expected_error()):
        call()


def test_answers_without_a_device():
    assert cuda.is_bf16_supported() is False and cuda.is_bf16_supported(False) is False
    assert cuda.is_tf32_supported() is False
    with pytest.warns(FutureWarning):
        assert cuda.memory_cached() == 0
    with pytest.warns(FutureWarning):
        assert cuda.max_memory_cached() == 0


def test_nvtx_without_the_backend():
    if cuda._C_cuda is not None:
        pytest.skip("the CUDA backend is built: nvtx ranges work (tests/cuda/test_cuda_device_api.py)")
    with pytest.raises(RuntimeError, match="NVTX functions not installed"):
        cuda.nvtx.range_push("x")


def test_same_answers_as_torch():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("PyTorch has a device here")
    assert cuda.is_bf16_supported() == torch.cuda.is_bf16_supported()
    assert cuda.is_tf32_supported() == torch.cuda.is_tf32_supported()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cuda.memory_cached() == torch.cuda.memory_cached()
