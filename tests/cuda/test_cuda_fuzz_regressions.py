"""Calls the CUDA fuzz mode (test_cuda_fuzz.py) once found disagreeing with the CPU or crashing,
each checked against the CPU result here."""
import numpy as np
import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)


@pytest.mark.parametrize("dtype", [minitorch.int32, minitorch.int64])
def test_integer_division_by_zero_gives_a_value_instead_of_trapping(dtype):
    # was: SIGFPE in the emulated kernel (x / 0 is undefined behaviour in CUDA C++ too); PyTorch's
    # CUDA kernels do not raise ZeroDivisionError as the CPU does, so any value is theirs: ours
    # are -1 for a quotient and x for a remainder
    x = minitorch.tensor([-3, 7, 0, 2**31 - 1], dtype=dtype, device="cuda")
    zero = minitorch.zeros(4, dtype=dtype, device="cuda")
    for q in (x // 0, x.div(0, rounding_mode="trunc"), x // zero, x.clone().div_(zero, rounding_mode="floor")):
        assert q.cpu().tolist() == [-1] * 4
    for r in (x % 0, x.remainder(zero), x.fmod(0), minitorch.fmod(x, zero)):
        assert r.cpu().tolist() == x.cpu().tolist()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        x.cpu() // 0
    big = minitorch.tensor([-(2**31)], dtype=dtype, device="cuda")
    assert (big // -1).cpu().tolist() == (big.cpu() // -1).tolist()


@pytest.mark.parametrize("call, words", [
    (lambda x: x.bitwise_not(), '"bitwise_not_cuda" not implemented for \'Float\''),
    (lambda x: x & 1.0, '"bitwise_and_cuda" not implemented for \'Float\''),
    (lambda x: x.bool().abs(), '"abs_cuda" not implemented for \'Bool\''),
    (lambda x: x.bool().abs_(), '"abs_cuda" not implemented for \'Bool\''),
])
def test_not_implemented_names_the_kernel_once(call, words):
    # was: "bitwise_not_cuda_cuda" (the name given with its suffix, which the driver adds again)
    with pytest.raises(NotImplementedError) as e:
        call(minitorch.ones(2, device="cuda"))
    assert words in str(e.value) and "_cuda_cuda" not in str(e.value)


@pytest.mark.parametrize("fill", [lambda t: t.zero_(), lambda t: t.fill_(2.5)])
def test_fill_of_an_expanded_tensor_fills_as_on_the_cpu(fill):
    # was: RuntimeError "more than one element of the written-to tensor refers to a single memory
    # location" on CUDA only; PyTorch fills an overlapping tensor (every element gets one value)
    base = minitorch.tensor([[-1.0, 3.0]])
    g = minitorch.tensor([[-1.0, 3.0]], device="cuda")
    want, got = fill(base.expand(3, 2)), fill(g.expand(3, 2))
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    np.testing.assert_array_equal(g.cpu().numpy(), base.numpy())


@pytest.mark.parametrize("dtype, name", [(minitorch.int32, "Int"), (minitorch.bool, "Bool"), (minitorch.float64, "Double")])
def test_expand_error_names_the_tensors_type(dtype, name):
    # was: torch.FloatTensor whatever the dtype and device
    for dev, prefix in (("cpu", "torch."), ("cuda", "torch.cuda.")):
        with pytest.raises(RuntimeError, match=rf"^expand\({prefix}{name}Tensor\{{\[3\]\}}, size=\[\]\)"):
            minitorch.zeros(3, dtype=dtype, device=dev).expand(())
