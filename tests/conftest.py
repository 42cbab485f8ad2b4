"""Test set-up shared by every layer: hypothesis profiles, poisoned allocations, devices."""
import os
import sys

import pytest
from hypothesis import HealthCheck, settings

import minitorch

# The sanitizer run cannot load PyTorch (ASan's exception interceptor aborts on its C++ throws):
# make `import torch` fail, so every comparison with PyTorch skips as where it is not installed.
if os.environ.get("MINITORCH_TEST_NO_TORCH") == "1":
    sys.modules["torch"] = None

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("deep", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("MINITORCH_HYPOTHESIS", "ci"))


@pytest.fixture(autouse=True, scope="session")
def poisoned_allocations():
    """Fresh CPU memory is 0xff bytes (NaN / -1), so an output element a kernel never wrote
    shows up as a mismatch instead of passing by luck on zeroed memory."""
    minitorch._C._set_alloc_poison(True)
    yield
    minitorch._C._set_alloc_poison(False)


def available_devices():
    devs = ["cpu"]
    cuda = getattr(minitorch, "cuda", None)
    if cuda is not None and cuda.is_available():
        devs.append("cuda")
    return devs


@pytest.fixture(params=available_devices())
def device(request):
    """Runs a test on every device present: cpu, and cuda where a GPU is."""
    return request.param
