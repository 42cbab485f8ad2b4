"""tests/cuda's set-up: float32 convolutions compare with the CPU in full float32 precision."""
import pytest

import minitorch


@pytest.fixture(autouse=True, scope="package")
def convolutions_without_tf32():
    """cuDNN's TF32 (torch.backends.cudnn.allow_tf32, True by default as in PyTorch; the emulated
    cuDNN rounds to it too) keeps 10 mantissa bits, beyond these tests' tolerances, so they turn
    it off, as PyTorch's own do (its tf32_off); a test of TF32 turns it back on."""
    cudnn = minitorch.backends.cudnn
    saved = cudnn.allow_tf32
    cudnn.allow_tf32 = False
    yield
    cudnn.allow_tf32 = saved
