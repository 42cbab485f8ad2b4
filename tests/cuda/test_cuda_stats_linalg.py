"""The statistics and linear algebra ops on a CUDA device against the CPU: the
kernels of cuda/stats.cu (histc, bincount, searchsorted, cummax, cummin), the composites over
device ops (quantile, median, mode, ...) and, through the host round trip of
dispatch/host_fallback.c, the LAPACK kernels (results and LinAlgError alike)."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same, check_device, raises_alike

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(0)
L = minitorch.linalg


def t(*shape, dtype="float32", rounded=False):
    a = RNG.standard_normal(shape)
    return minitorch.tensor((np.round(a) if rounded else a).astype(dtype))


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_histc_bincount_searchsorted(dtype):
    x = t(6, 7, dtype=dtype)
    check_device(lambda a: minitorch.histc(a, 9), x)
    check_device(lambda a: a.histc(4, -1, 1), x[:, ::2])
    ints = minitorch.tensor(RNG.integers(0, 9, 40))
    check_device(lambda a: minitorch.bincount(a), ints)
    check_device(lambda a: minitorch.bincount(a, minlength=20), ints[::2])
    check_device(lambda a, w: minitorch.bincount(a, weights=w), ints, t(40, dtype=dtype))
    check_device(lambda a: minitorch.bincount(a), minitorch.zeros(0, dtype=minitorch.int64))
    seq = minitorch.tensor(np.sort(RNG.integers(-4, 5, (6, 10)), axis=-1).astype(dtype))
    for right in (False, True):
        check_device(lambda s, v: minitorch.searchsorted(s, v, right=right), seq, t(6, 7, dtype=dtype, rounded=True))
        check_device(lambda s, v: minitorch.searchsorted(s[0], v, out_int32=True), seq, x)
        check_device(lambda s, v: minitorch.bucketize(v, s[1], right=right), seq, x.t())
    check_device(lambda s, v, o: minitorch.searchsorted(s, v, sorter=o), minitorch.tensor([3, 1, 2]),
                 minitorch.tensor([2, 0, 4]), minitorch.tensor([1, 2, 0]))
    raises_alike(lambda a: minitorch.bincount(a), minitorch.tensor([1, -2]))
    raises_alike(lambda a: minitorch.histc(a, 3), minitorch.tensor([1.0, float("nan")]))


@pytest.mark.parametrize("dtype", ("float32", "float64", "int64", "int32", "bool"))
def test_cummax_cummin(dtype):
    a = minitorch.tensor(RNG.integers(-3, 4, (5, 6, 3)).astype(dtype))
    for dim in (0, 1, 2):
        check_device(lambda x: minitorch.cummax(x, dim), a)
        check_device(lambda x: minitorch.cummin(x, dim), a.permute(2, 0, 1))
    if dtype.startswith("float"):
        check_device(lambda x: minitorch.cummax(x, 0), minitorch.tensor([1.0, float("nan"), 2.0, float("nan")], dtype=a.dtype))
    x = t(4, 5, dtype="float64").cuda().requires_grad_()
    minitorch.cummax(x, 1).values.sum().backward()
    assert x.grad.device.type == "cuda"


def test_composite_statistics_on_the_device():
    x, r = t(5, 8), t(5, 8, rounded=True)
    check_device(lambda a: minitorch.quantile(a, minitorch.tensor([0.1, 0.5, 0.9], device=a.device), dim=1), x)
    check_device(lambda a: minitorch.nanquantile(a, 0.3, interpolation="nearest"), x)
    check_device(lambda a: minitorch.median(a, 1), x)
    check_device(lambda a: minitorch.median(a), x)
    check_device(lambda a: minitorch.kthvalue(a, 3, 0), x)
    check_device(lambda a: minitorch.mode(a, 1), r)
    check_device(lambda a: minitorch.std_mean(a, 1), x)
    check_device(lambda a: minitorch.aminmax(a, dim=0), x)
    check_device(lambda a: minitorch.diff(a, 2, 0), x)
    check_device(lambda a: minitorch.renorm(a, 2, 0, 1.0), x)
    check_device(lambda a: minitorch.unique_consecutive(a, return_counts=True), r)
    check_device(lambda a: minitorch.unique(a, dim=0, return_inverse=True), r)
    check_device(lambda a: minitorch.histogram(a.cpu(), 5)[0].to(a.device), x)


def test_linalg_through_the_host_round_trip():
    a = t(3, 4, 4, dtype="float64") + 4 * minitorch.eye(4, dtype=minitorch.float64)
    assert minitorch._C._dispatch_table("linalg_inv_ex")["CUDA"] == "mt_cuda_host_linalg_inv_ex"
    check_device(lambda x: L.inv(x), a)
    check_device(lambda x: L.det(x), a)
    check_device(lambda x: L.slogdet(x), a)
    check_device(lambda x, b: L.solve(x, b), a, t(3, 4, 2, dtype="float64"))
    check_device(lambda x: L.cholesky(x @ x.mT), a)
    check_device(lambda x: L.qr(x).R.abs(), a)
    check_device(lambda x: L.svdvals(x), a)
    check_device(lambda x: L.eigvalsh(x + x.mT), a)
    check_device(lambda x: L.pinv(x), a)
    check_device(lambda x: L.matrix_norm(x, "nuc"), a)
    check_device(lambda x, b: L.lstsq(x, b).solution, a, t(3, 4, 2, dtype="float64"))
    raises_alike(lambda x: L.inv(x), minitorch.zeros(2, 2))
    x = a.cuda().requires_grad_()
    L.det(x).sum().backward()
    assert x.grad.device.type == "cuda"


def test_lu_family_through_the_host_round_trip():
    a = t(3, 4, 4, dtype="float64") + 4 * minitorch.eye(4, dtype=minitorch.float64)
    b = t(3, 4, 2, dtype="float64")
    check_device(lambda x: L.lu_factor_ex(x), a)
    check_device(lambda x: L.lu(x), t(2, 3, 5, dtype="float64"))
    check_device(lambda x: minitorch.lu_unpack(*L.lu_factor(x)), a)
    check_device(lambda x, y: L.lu_solve(*L.lu_factor(x), y), a, b)
    check_device(lambda x, y: L.lu_solve(*L.lu_factor(x), y.mT, left=False, adjoint=True), a, b)
    raises_alike(lambda x: L.lu_factor(x), minitorch.zeros(2, 2))
    x, y = a.cuda().requires_grad_(), b.cuda().requires_grad_()
    L.lu_solve(*L.lu_factor(x), y).sum().backward()
    assert x.grad.device.type == "cuda" and y.grad.device.type == "cuda"
    cpu_x, cpu_y = a.requires_grad_(), b.requires_grad_()
    L.lu_solve(*L.lu_factor(cpu_x), cpu_y).sum().backward()
    assert_same(x.grad, cpu_x.grad)
    assert_same(y.grad, cpu_y.grad)


def test_eig_refused_on_the_device():
    """linalg.eig and eigvals give complex results, which no CUDA tensor holds: the refusal names
    the op, after PyTorch's checks of the shape (the same words as on the CPU)."""
    a = t(3, 3).cuda()
    with pytest.raises(NotImplementedError, match="^linalg_eig: complex tensors are not supported on the CUDA"):
        L.eig(a)
    with pytest.raises(NotImplementedError, match="^linalg_eigvals: complex tensors are not supported on the CUDA"):
        L.eigvals(a)
    with pytest.raises(RuntimeError, match="linalg.eig: A must be batches of square matrices"):
        L.eig(t(2, 3).cuda())
    with pytest.raises(NotImplementedError, match="complex tensors are not supported on the CUDA"):
        minitorch._C._linalg_eig(a, False)
