"""Which kernel the CUDA key runs for each op (no GPU needed: _C_cuda registers its kernels at
import, device or not): every op with a CPU kernel has a CUDA kernel (mt_cuda_<op>, or the shared
kernel its ops.def row's CUDA_AS names), or is in HOST_ROUND_TRIP, the explicit list of ops that
still run through dispatch/host_fallback.c (copy to the host, CPU kernel, copy back) until they get
a CUDA kernel of their own. The backend's own kernels are registered from ops.def's cuda column
alone (cuda/ops.c's generated table)."""
import re
from pathlib import Path

import pytest

import minitorch
from minitorch import _C

if minitorch.cuda._C_cuda is None:
    pytest.skip(f"minitorch._C_cuda is not built: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

# Not yet on CUDA: a host round trip stands in. An op with a CPU kernel and no CUDA kernel must
# be named here. The LAPACK kernels of torch.linalg (cuSOLVER would be theirs) and the
# two statistics kernels whose results' sizes depend on the data sorted on the host.
HOST_ROUND_TRIP: set = {"linalg_inv_ex", "linalg_det", "linalg_slogdet", "linalg_solve", "linalg_solve_triangular",
                        "linalg_cholesky_ex", "linalg_qr", "_linalg_svd", "_linalg_eigh", "linalg_lstsq",
                        "linalg_lu_factor_ex", "lu_unpack", "linalg_lu_solve", "geqrf", "linalg_ldl_factor_ex",
                        "linalg_ldl_solve", "_linalg_eig", "_linalg_eig_backward",
                        "histogram_bins", "unique_dim"}
# the fused CPU attention kernel (PyTorch's name says for_cpu): on CUDA scaled_dot_product_attention's
# composite runs device ops and never calls it
HOST_ROUND_TRIP |= {"_scaled_dot_product_flash_attention_for_cpu"}
# the gamma sampler's gradients and the Dirichlet sampler (PyTorch's CPU algorithms, csrc/cpu/gamma.c):
# _standard_gamma itself has a CUDA kernel (cuda/random.cu)
HOST_ROUND_TRIP |= {"_standard_gamma_grad", "_sample_dirichlet", "_dirichlet_grad"}
# the binomial sampler (PyTorch's CPU algorithm on its CPU stream, csrc/cpu/gamma.c): no CUDA kernel yet
HOST_ROUND_TRIP |= {"binomial"}
# layer_norm's statistics for its CPU backward: on CUDA layer_norm records itself and its backward
# recomputes them
HOST_ROUND_TRIP |= {"native_layer_norm"}
# the FFT primitives: a CPU kernel only, and complex tensors cannot live on the device,
# so the round trip ends in the complex-on-CUDA refusal (tests/cuda/test_cuda_fft.py)
HOST_ROUND_TRIP |= {"_fft_c2c", "_fft_r2c", "_fft_c2r"}
# (convolution is on cuDNN when _C_cuda was built with it, else on im2col and cuBLAS; softmax's
# backward and grid_sample's sampler have CUDA kernels)
# the matrix products are on cuBLAS, when its headers were found (CI's fresh venv has none)
PRODUCTS = {"mm", "addmm", "_addmm_activation", "bmm", "mv", "dot", "addmv", "baddbmm"}  # ops.def's CUBLAS rows
if not minitorch.cuda._C_cuda.has_cublas:
    HOST_ROUND_TRIP |= PRODUCTS
CUDA_SOURCES = Path(__file__).resolve().parents[2] / "cuda"


def cuda_kernel(op):
    return _C._dispatch_table(op).get("CUDA")


def column():
    """{op: "mt_cuda_<kernel>"} for each row of ops.def with a cuda column, as _C reads it."""
    return {op: _C._op_info(op)["cuda"] for op in _C.OPS if _C._op_info(op)["cuda"]}


def device_kernel(op):
    """The CUDA kernel an op runs when it is not a host round trip: its row's cuda column, else
    the family kernel _C registers for it (elementwise, index, sort, ...), mt_cuda_<op>."""
    return column().get(op) or f"mt_cuda_{op}"


def test_every_cpu_kernel_has_a_cuda_kernel_or_is_listed():
    wrong = []
    for op in _C.OPS:
        if "CPU" not in _C._dispatch_table(op):
            continue
        want = f"mt_cuda_host_{op}" if op in HOST_ROUND_TRIP else device_kernel(op)
        if not column().get(op) and "CompositeImplicitAutograd" in _C._dispatch_table(op):
            want = None  # a CPU kernel beside a composite (conv3d): the composite runs on CUDA
        if cuda_kernel(op) != want:
            wrong.append((op, cuda_kernel(op), want))
    assert wrong == []


def test_the_list_names_only_ops_with_cpu_kernels():
    assert all(op in _C.OPS and "CPU" in _C._dispatch_table(op) for op in HOST_ROUND_TRIP)


@pytest.mark.parametrize("op", ["add", "where", "sum", "var", "argmax", "softmax", "cumsum", "masked_fill", "gelu_backward",
                                "gather", "scatter_add_", "index", "index_put_", "index_select", "embedding",
                                "uniform_", "normal_", "bernoulli_", "random_", "arange", "linspace", "logspace",
                                "eye", "cat", "flip", "tril", "triu_", "one_hot", "layer_norm",
                                "binary_cross_entropy", "binary_cross_entropy_with_logits",
                                "embedding_dense_backward", "nll_loss", "nonzero", "masked_select", "batch_norm",
                                "batch_norm_backward", "layer_norm_backward", "nll_loss_backward",
                                "sort", "argsort", "topk", "_unique2", "randperm", "exponential_", "geometric_",
                                "log_normal_", "cauchy_", "poisson", "multinomial"])
def test_kernels_of_this_issue_are_device_kernels(op):
    assert cuda_kernel(op) == device_kernel(op) and not cuda_kernel(op).startswith("mt_cuda_host_")


def test_the_backend_exports_the_table_of_the_cuda_column():
    """_C reads ops.def's cuda column (_op_info's "cuda"), _C_cuda's kernel table is generated from
    the same column (kernels()), and the dispatcher runs what that table holds: every row with a
    cuda column has its kernel (but the CUBLAS rows in a build without cuBLAS), and the backend
    registers no kernel of its own outside the column."""
    rows, exported = column(), minitorch.cuda._C_cuda.kernels()
    assert len(rows) > 80 and all(k.startswith("mt_cuda_") for k in rows.values())
    missing = set(rows) - set(exported)
    assert missing == (set() if minitorch.cuda._C_cuda.has_cublas else PRODUCTS)
    assert {op: rows.get(op) for op in exported} == exported
    assert {op: cuda_kernel(op) for op in exported} == exported


def test_rows_may_share_a_cuda_kernel():
    """CUDA_AS(kernel): one kernel for several ops, which the plan's op tells apart."""
    pools = [op for op in _C.OPS if "pool" in op and "unpool" not in op and "_backward" not in op]
    assert {cuda_kernel(op) for op in pools} == {"mt_cuda_pool"}
    assert cuda_kernel("max_pool3d_with_indices_backward") == cuda_kernel("_adaptive_avg_pool2d_backward") == "mt_cuda_pool_backward"
    assert {cuda_kernel(op) for op in ("tril", "tril_", "triu", "triu_")} == {"mt_cuda_triangle"}


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason="no CUDA device (run with MINITORCH_CUDA_EMU=1)")
def test_a_shared_cuda_kernel_tells_its_ops_apart():
    x = minitorch.arange(1.0, 10.0).reshape(3, 3)
    for op in ("tril", "triu"):
        y = x.cuda()
        assert minitorch.equal(getattr(y, op)(1).cpu(), getattr(x, op)(1))
        assert minitorch.equal(getattr(y, op + "_")(-1).cpu(), getattr(x.clone(), op + "_")(-1))


def test_every_kernel_defined_in_cuda_has_a_row():
    """A kernel mt_cuda_<op>(mt_args *a) of cuda/ that its row's cuda column does not name would
    never run: adding a CUDA kernel is the kernel and its row's column. (Helpers of that shape
    with other names, such as conv_gemm.c's, are called by a kernel.)"""
    defined = set()
    for path in CUDA_SOURCES.glob("*.c"):
        defined |= set(re.findall(r"^mt_cuda_(\w+)\(mt_args \*a\)$", path.read_text(), re.M))
    assert len(defined) > 50
    named = {k.removeprefix("mt_cuda_") for k in column().values()}
    assert {k for k in defined if k in _C.OPS} - named == set()
    assert {"pool", "pool_backward", "triangle"} <= defined & named
