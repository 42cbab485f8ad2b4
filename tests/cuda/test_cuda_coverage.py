"""Which kernel the CUDA key runs for each op (no GPU needed: _C_cuda registers its kernels at
import, device or not): every op with a CPU kernel has a CUDA kernel (mt_cuda_<op>), or is in
HOST_ROUND_TRIP, the explicit list of ops that still run through dispatch/host_fallback.c (copy to
the host, CPU kernel, copy back) until they get a CUDA kernel of their own."""
import pytest

import minitorch
from minitorch import _C

if minitorch.cuda._C_cuda is None:
    pytest.skip(f"minitorch._C_cuda is not built: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

# Not yet on CUDA: a host round trip stands in. An op with a CPU kernel and no CUDA kernel must
# be named here. The LAPACK kernels of torch.linalg (issue 19; cuSOLVER would be theirs) and the
# two statistics kernels whose results' sizes depend on the data sorted on the host.
HOST_ROUND_TRIP: set = {"linalg_inv_ex", "linalg_det", "linalg_slogdet", "linalg_solve", "linalg_solve_triangular",
                        "linalg_cholesky_ex", "linalg_qr", "_linalg_svd", "_linalg_eigh", "linalg_lstsq",
                        "linalg_lu_factor_ex", "lu_unpack", "linalg_lu_solve", "geqrf", "linalg_ldl_factor_ex",
                        "linalg_ldl_solve",
                        "histogram_bins", "unique_dim"}
# the fused CPU attention kernel (PyTorch's name says for_cpu): on CUDA scaled_dot_product_attention's
# composite runs device ops and never calls it
HOST_ROUND_TRIP |= {"_scaled_dot_product_flash_attention_for_cpu"}
# the gamma sampler's gradients and the Dirichlet sampler (PyTorch's CPU algorithms, csrc/cpu/gamma.c):
# _standard_gamma itself has a CUDA kernel (cuda/random.cu)
HOST_ROUND_TRIP |= {"_standard_gamma_grad", "_sample_dirichlet", "_dirichlet_grad"}
# layer_norm's statistics for its CPU backward: on CUDA layer_norm records itself and its backward
# recomputes them
HOST_ROUND_TRIP |= {"native_layer_norm"}
# the FFT primitives (issue 19): a CPU kernel only, and complex tensors cannot live on the device,
# so the round trip ends in the complex-on-CUDA refusal (tests/cuda/test_cuda_fft.py)
HOST_ROUND_TRIP |= {"_fft_c2c", "_fft_r2c", "_fft_c2r"}
# (convolution is on cuDNN when _C_cuda was built with it, else on im2col and cuBLAS; softmax's
# backward and grid_sample's sampler have CUDA kernels: issue 22's second round)
# the matrix products are on cuBLAS, when its headers were found (CI's fresh venv has none)
if not minitorch.cuda._C_cuda.has_cublas:
    HOST_ROUND_TRIP |= {"mm", "addmm", "bmm", "mv", "dot", "addmv", "baddbmm"}


def cuda_kernel(op):
    return _C._dispatch_table(op).get("CUDA")


def test_every_cpu_kernel_has_a_cuda_kernel_or_is_listed():
    wrong = []
    for op in _C.OPS:
        if "CPU" not in _C._dispatch_table(op):
            continue
        want = f"mt_cuda_host_{op}" if op in HOST_ROUND_TRIP else f"mt_cuda_{op}"
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
    assert cuda_kernel(op) == f"mt_cuda_{op}"
