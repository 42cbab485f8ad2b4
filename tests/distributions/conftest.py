"""PyTorch's distributions validate their arguments by default, but importing torch._dynamo (any
torch.compile call earlier in the session, as tests/core and tests/programs make) turns that
default off for the rest of the process: the comparisons here expect a fresh process's default."""
import pytest


@pytest.fixture(autouse=True)
def _torch_validates_distribution_args():
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(before)
