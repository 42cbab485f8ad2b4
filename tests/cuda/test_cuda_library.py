"""minitorch.library on the CUDA device: a custom op runs its CUDA kernel for CUDA tensors and its
CPU kernel for CPU ones, refuses a device it has no kernel for, and a Python kernel for a built-in
op's CUDA key replaces the CUDA kernel only."""
import warnings

import numpy as np
import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

Tensor = minitorch.Tensor


def test_custom_op_runs_the_kernel_of_its_inputs_device():
    @minitorch.library.custom_op("mt_cuda_lib::scale", mutates_args=(), device_types="cpu")
    def scale(x: Tensor) -> Tensor:
        return x * 2

    with pytest.raises(NotImplementedError, match="Could not run 'mt_cuda_lib::scale' with arguments from the 'CUDA'"):
        scale(minitorch.ones(2, device="cuda"))
    scale.register_kernel("cuda")(lambda x: x * 3)
    x = np.arange(4, dtype=np.float32)
    got = scale(minitorch.tensor(x, device="cuda"))
    assert got.device.type == "cuda"
    np.testing.assert_array_equal(got.cpu().numpy(), 3 * x)
    np.testing.assert_array_equal(scale(minitorch.tensor(x)).numpy(), 2 * x)
    scale.register_autograd(lambda ctx, g: g * 3)
    t = minitorch.tensor(x, device="cuda", requires_grad=True)
    scale(t).sum().backward()
    assert t.grad.device.type == "cuda"
    np.testing.assert_array_equal(t.grad.cpu().numpy(), np.full(4, 3.0))
    with minitorch.profiler.profile() as prof:
        scale(minitorch.ones(1, device="cuda"))
    assert ("Op::mt_cuda_lib::scale", "CUDA") in [(e.name, e.detail) for e in prof.events()]


def test_builtin_override_for_the_cuda_key_only():
    lib = minitorch.library.Library("aten", "IMPL")
    with warnings.catch_warnings(action="ignore"):
        lib.impl("exp", lambda x: x + 1, "CUDA")
    np.testing.assert_array_equal(minitorch.exp(minitorch.zeros(2, device="cuda")).cpu().numpy(), [1, 1])
    np.testing.assert_allclose(minitorch.exp(minitorch.ones(2)).numpy(), [np.e, np.e], rtol=1e-6)
    lib._destroy()
    np.testing.assert_allclose(minitorch.exp(minitorch.ones(2, device="cuda")).cpu().numpy(), [np.e, np.e], rtol=1e-6)
