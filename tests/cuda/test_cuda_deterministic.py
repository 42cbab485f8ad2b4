"""use_deterministic_algorithms(True) on CUDA tensors: the ops PyTorch lists as having no
deterministic implementation raise its RuntimeError, or warn with warn_only; their CPU forms and
the other cases run."""
import warnings

import pytest

import minitorch
import minitorch.nn.functional as F

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)


@pytest.fixture(autouse=True)
def restore():
    yield
    minitorch.use_deterministic_algorithms(False)


def cuda(*shape, grad=False):
    return minitorch.rand(*shape, device="cuda").requires_grad_(grad)


def _pool_backward(fn):
    def run():
        x = cuda(1, 2, 4, 4, 4, grad=True) if fn is F.avg_pool3d else cuda(1, 2, 4, 4, grad=True)
        out = fn(x, 2)
        out.sum().backward()
    return run


ALERTS = [
    ("_histc_cuda", lambda: minitorch.histc(cuda(10), bins=3)),
    ("_bincount_cuda", lambda: minitorch.bincount(minitorch.tensor([0, 1, 1], device="cuda"),
                                                  weights=cuda(3))),
    ("median CUDA with indices output", lambda: minitorch.median(cuda(3, 4), 1)),
    ("cumsum_cuda_kernel", lambda: minitorch.cumsum(cuda(5), 0)),
    ("scatter_reduce_cuda", lambda: cuda(4).scatter_reduce(0, minitorch.tensor([0, 1], device="cuda"), cuda(2),
                                                           "prod")),
    ("adaptive_avg_pool2d_backward_cuda", _pool_backward(F.adaptive_avg_pool2d)),
    ("avg_pool3d_backward_cuda", _pool_backward(F.avg_pool3d)),
    ("upsample_bilinear2d_backward_out_cuda",
     lambda: F.interpolate(cuda(1, 1, 2, 2, grad=True), scale_factor=2, mode="bilinear")),
    ("reflection_pad2d_backward_cuda", lambda: F.pad(cuda(1, 1, 3, 3, grad=True), (1, 1, 1, 1), mode="reflect")),
    ("grid_sampler_2d_backward_cuda",
     lambda: F.grid_sample(cuda(1, 1, 3, 3, grad=True), cuda(1, 2, 2, 2) * 2 - 1, align_corners=False)
     .sum().backward()),
    ("nll_loss2d_forward_out_cuda_template",
     lambda: F.nll_loss(cuda(2, 3, 2, 2), minitorch.zeros(2, 2, 2, dtype=minitorch.int64, device="cuda"))),
]


@pytest.mark.parametrize("caller,call", ALERTS, ids=[c for c, _ in ALERTS])
def test_alerts_raise_and_warn(caller, call):
    call()  # off: runs
    minitorch.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError) as err:
        call()
    assert str(err.value).startswith(
        f"{caller} does not have a deterministic implementation, but you set "
        "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this operation")
    minitorch.use_deterministic_algorithms(True, warn_only=True)
    with pytest.warns(UserWarning, match=f"{caller} does not have a deterministic implementation, but you set "
                                         r"'torch.use_deterministic_algorithms\(True, warn_only=True\)'"):
        call()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning):
            call()


def test_deterministic_cases_run():
    minitorch.use_deterministic_algorithms(True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        minitorch.cumsum(minitorch.tensor([1, 2, 3], device="cuda"), 0)  # integers: exact in any order
        minitorch.bincount(minitorch.tensor([0, 1, 1], device="cuda"))  # no weights
        minitorch.median(cuda(3, 4))  # no indices
        F.interpolate(cuda(1, 1, 2, 2), scale_factor=2, mode="bilinear")  # nothing to differentiate
        F.interpolate(cuda(1, 1, 2, 2, grad=True), scale_factor=2, mode="nearest")
        F.nll_loss(cuda(2, 3), minitorch.zeros(2, dtype=minitorch.int64, device="cuda"))
        minitorch.histc(minitorch.rand(10), bins=3)  # CPU
        with minitorch.no_grad():
            F.pad(cuda(1, 1, 3, 3, grad=True), (1, 1, 1, 1), mode="reflect")
    assert bool(minitorch.empty(3, device="cuda").isnan().all())
