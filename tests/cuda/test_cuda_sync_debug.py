"""cuda.set_sync_debug_mode: "warn" and "error" on the host's waits for the device, nothing
otherwise; get_arch_list."""
import warnings

import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)


@pytest.fixture(autouse=True)
def restore():
    yield
    minitorch.cuda.set_sync_debug_mode(0)


WAITS = [
    lambda t: t.sum().item(),
    lambda t: t.tolist(),
    lambda t: t.cpu(),
    lambda t: t.to("cpu"),
    lambda t: t.to(device="cpu"),
    lambda t: bool(t[0] > 0),
    lambda t: float(t[0]),
    lambda t: t.nonzero(),
    lambda t: minitorch.cuda.synchronize(),
]


@pytest.mark.parametrize("wait", WAITS)
def test_waits_warn_and_error(wait):
    t = minitorch.ones(3, device="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wait(t)  # default: no check
    minitorch.cuda.set_sync_debug_mode("warn")
    assert minitorch.cuda.get_sync_debug_mode() == 1
    with pytest.warns(UserWarning, match="called a synchronizing CUDA operation"):
        wait(t)
    minitorch.cuda.set_sync_debug_mode(2)
    with pytest.raises(RuntimeError, match="called a synchronizing CUDA operation"):
        wait(t)


def test_no_wait_no_alert_and_bad_mode():
    minitorch.cuda.set_sync_debug_mode("error")
    t = minitorch.ones(3, device="cuda")
    (t * 2).sum()  # stays on the device
    t.to("cuda")
    c = minitorch.ones(3)
    c.item() if c.numel() == 1 else c.tolist()  # a CPU tensor
    c.cpu()
    with pytest.raises(RuntimeError, match="invalid value of debug_mode, expected one of `default`, `warn`, `error`"):
        minitorch.cuda.set_sync_debug_mode("loud")
    minitorch.cuda.set_sync_debug_mode("default")
    assert minitorch.cuda.get_sync_debug_mode() == 0
    assert "item" not in minitorch.Tensor.__dict__  # the watch is gone


def test_get_arch_list():
    arch = minitorch.cuda.get_arch_list()
    major, minor = minitorch.cuda.get_device_capability()
    assert arch and f"sm_{major}{minor}" in arch
