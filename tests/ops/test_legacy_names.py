"""Names old and new programs reach for: torch.range (deprecated, end included), adjoint/mH/H
conjugating complex tensors, torch.return_types, torch.OutOfMemoryError; against torch's."""
import pickle
import warnings

import numpy as np
import pytest

import minitorch

RANGES = [(1, 4), (1, 4, 0.5), (0, 1, 0.1), (5, 1, -1.5), (0, 10, 3), (-2.5, 2.5, 0.25), (3, 3)]


@pytest.mark.parametrize("args", RANGES)
def test_range_includes_the_end(args):
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        got = minitorch.range(*args)
    start, end, step = (args + (1,))[:3]
    n = int(np.floor((end - start) / step)) + 1
    assert got.dtype == minitorch.float32 and got.shape == (n,)
    np.testing.assert_array_equal(got.numpy(), (np.arange(n, dtype=np.float64) * step + start).astype(np.float32))
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert got.tolist() == torch.range(*args).tolist()


def test_range_dtype_grad_and_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert minitorch.range(1, 4, dtype=minitorch.int64).tolist() == [1, 2, 3, 4]
        assert minitorch.range(0, 1, 0.5, requires_grad=True).requires_grad
        out = minitorch.empty(0)
        assert minitorch.range(0, 2, out=out) is out and out.tolist() == [0.0, 1.0, 2.0]
        with pytest.raises(RuntimeError, match="step must be nonzero"):
            minitorch.range(1, 4, 0)
        with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
            minitorch.range(4, 1)
    assert range(3) == range(0, 3)  # the builtin is untouched


@pytest.mark.parametrize("attr", ["mH", "H", "adjoint"])
def test_conjugate_transposes_conjugate_complex(attr):
    a = np.array([[1 + 2j, 3 - 1j], [0.5j, 2]], dtype=np.complex64)
    x = minitorch.tensor(a)
    got = getattr(x, attr)
    got = got() if attr == "adjoint" else got
    np.testing.assert_array_equal(got.numpy(), a.conj().T)
    real = minitorch.arange(6.0).reshape(2, 3)
    r = getattr(real, attr)
    r = r() if attr == "adjoint" else r
    np.testing.assert_array_equal(r.numpy(), real.numpy().T)


def test_top_level_adjoint_batched():
    a = (np.arange(12) + 1j * np.arange(12)[::-1]).reshape(2, 2, 3).astype(np.complex128)
    np.testing.assert_array_equal(minitorch.adjoint(minitorch.tensor(a)).numpy(), a.conj().transpose(0, 2, 1))


def test_return_types_module():
    import minitorch.return_types as rt

    r = minitorch.tensor([[1.0, 3.0], [4.0, 2.0]]).max(1)
    assert isinstance(r, rt.max) and type(r).__module__ == "minitorch.return_types"
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is rt.max and back.values.tolist() == [3.0, 4.0]
    torch = pytest.importorskip("torch")
    shared = {"max", "min", "sort", "topk", "kthvalue", "median", "mode", "aminmax", "cummax", "cummin", "slogdet",
              "linalg_qr", "linalg_slogdet", "linalg_eigh", "linalg_svd", "frexp", "histogram"}
    for name in shared:  # structseqs both: the field names are their __match_args__
        assert getattr(rt, name).__match_args__ == getattr(torch.return_types, name).__match_args__, name


def test_out_of_memory_error_is_cudas():
    assert minitorch.OutOfMemoryError is minitorch.cuda.OutOfMemoryError
    assert issubclass(minitorch.OutOfMemoryError, RuntimeError)
