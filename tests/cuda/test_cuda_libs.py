"""The library calls on CUDA: cuDNN's plan cache with
torch.backends.cudnn's benchmark and deterministic semantics, counted through the profiler's
Library:: events; addmm/linear on cublasLtMatmul with the bias as its epilogue, against the CPU,
and _addmm_activation with the bias and ReLU/GELU as one;
and TF32 under torch.backends.cuda.matmul.allow_tf32 / set_float32_matmul_precision."""
import itertools

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch.profiler import ProfilerActivity, profile
from helpers import as_numpy, assert_same, to_layout

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(22)
_SIZES = itertools.count(11)  # each test's convolutions get shapes no other call has planned


def rand(*shape, dtype=np.float32):
    return minitorch.tensor(RNG.standard_normal(shape).astype(dtype))


def library_calls(fn):
    """fn() under the profiler; the names of the Library:: events it recorded, in order."""
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        minitorch.cuda.synchronize()
    return [e.name for e in prof.events() if e.name.startswith("Library::")]


def count(names, fragment):
    return sum(fragment in n for n in names)


@pytest.fixture
def flags(monkeypatch):
    """torch.backends' switches, restored after the test (through setattr: the backend sees it)."""
    cudnn, matmul = minitorch.backends.cudnn, minitorch.backends.cuda.matmul
    for obj, name in [(cudnn, "benchmark"), (cudnn, "deterministic"), (matmul, "allow_tf32")]:
        monkeypatch.setattr(obj, name, getattr(obj, name))
    monkeypatch.setattr(minitorch.backends, "_float32_matmul_precision", "highest")
    return cudnn, matmul


needs_cudnn = pytest.mark.skipif(not minitorch.cuda._C_cuda.has_cudnn, reason="built without cuDNN")
needs_cublas = pytest.mark.skipif(not minitorch.cuda._C_cuda.has_cublas, reason="built without cuBLAS")


# ---- cuDNN ---------------------------------------------------------------------------------------

@needs_cudnn
def test_cudnn_queries_answer_for_this_build():
    cudnn = minitorch.backends.cudnn
    assert cudnn.is_available() is True
    v = cudnn.version()
    assert isinstance(v, int) and v >= 8000  # cudnnGetVersion(): 9.x.y reads 90x0y


def conv_once(h, dtype=np.float32, stride=1, grad=False):
    x, w, b = rand(2, 3, h, h + 1, dtype=dtype), rand(4, 3, 3, 3, dtype=dtype), rand(4, dtype=dtype)
    gx, gw, gb = (t.cuda() for t in (x, w, b))
    if grad:
        gx.requires_grad_(True)
        gw.requires_grad_(True)
    out = F.conv2d(gx, gw, gb, stride=stride, padding=1)
    if grad:
        out.sum().backward()
    return out, F.conv2d(x, w, b, stride=stride, padding=1)


@needs_cudnn
def test_heuristics_are_asked_once_per_convolution(flags):
    h = next(_SIZES)
    first = library_calls(lambda: conv_once(h))
    again = library_calls(lambda: conv_once(h))
    other = library_calls(lambda: (conv_once(h, stride=2), conv_once(h, dtype=np.float64)))
    rank = "cudnnGetConvolutionForwardAlgorithm_v7"
    assert count(first, rank) == 1 and count(first, "cudnnConvolutionForward") == 1
    assert count(again, rank) == 0 and count(again, "cudnnConvolutionForward") == 1
    assert count(other, rank) == 2  # another stride, another dtype: two more keys
    assert count(first + again + other, "cudnnFind") == 0
    out, want = conv_once(h)
    assert_same(out, want, atol=1e-4, rtol=1e-4)


@needs_cudnn
def test_backward_passes_are_planned_once_each(flags):
    h = next(_SIZES)
    first = library_calls(lambda: conv_once(h, grad=True))
    again = library_calls(lambda: conv_once(h, grad=True))
    for rank in ("cudnnGetConvolutionBackwardDataAlgorithm_v7",
                 "cudnnGetConvolutionBackwardFilterAlgorithm_v7"):
        assert count(first, rank) == 1 and count(again, rank) == 0
    assert count(again, "cudnnConvolutionBackwardFilter") == 1


@needs_cudnn
def test_benchmark_finds_once_per_convolution(flags):
    cudnn, _ = flags
    h = next(_SIZES)
    cudnn.benchmark = True
    first = library_calls(lambda: conv_once(h, grad=True))
    again = library_calls(lambda: conv_once(h, grad=True))
    for find in ("cudnnFindConvolutionForwardAlgorithm", "cudnnFindConvolutionBackwardDataAlgorithm",
                 "cudnnFindConvolutionBackwardFilterAlgorithm"):
        assert count(first, find) == 1 and count(again, find) == 0
    assert count(first + again, "Algorithm_v7") == 0
    out, want = conv_once(h)
    assert_same(out, want, atol=1e-4, rtol=1e-4)
    # benchmark off again: the heuristics' plan is its own key, asked once
    cudnn.benchmark = False
    assert count(library_calls(lambda: conv_once(h)), "cudnnGetConvolutionForwardAlgorithm_v7") == 1


@needs_cudnn
def test_deterministic_keeps_deterministic_algorithms(flags):
    cudnn, _ = flags
    h = next(_SIZES)
    with cudnn.flags(enabled=True, deterministic=True, allow_tf32=False):  # flags' default: True
        x, w = rand(2, 3, h, h), rand(4, 3, 3, 3)
        gx, gw = x.cuda().requires_grad_(True), w.cuda().requires_grad_(True)
        calls = library_calls(lambda: F.conv2d(gx, gw, padding=1).sum().backward())
        first = as_numpy(gw.grad).copy()
        gw.grad = None
        F.conv2d(gx, gw, padding=1).sum().backward()
        np.testing.assert_array_equal(as_numpy(gw.grad), first)  # bitwise the same, run to run
    assert count(calls, "cudnnGetConvolutionBackwardFilterAlgorithm_v7") == 1
    xc, wc = x.requires_grad_(True), w.requires_grad_(True)
    F.conv2d(xc, wc, padding=1).sum().backward()
    np.testing.assert_allclose(first, as_numpy(wc.grad), atol=1e-4, rtol=1e-4)


# ---- cuBLASLt ------------------------------------------------------------------------------------

def addmm_case(m, k, n, dtype, layout, bias_shape):
    a = RNG.standard_normal((m, k)).astype(dtype)
    b = RNG.standard_normal((k, n)).astype(dtype)
    bias = RNG.standard_normal(bias_shape).astype(dtype)
    return to_layout(a, layout), to_layout(b, layout), minitorch.tensor(bias)


@needs_cublas
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("bias_shape", [(5,), (1, 5)])
@pytest.mark.parametrize("alpha", [1.0, -0.5])
def test_addmm_with_a_bias_is_one_lt_matmul(flags, dtype, layout, bias_shape, alpha):
    m1, m2, bias = addmm_case(7, 3, 5, dtype, layout, bias_shape)
    want = minitorch.addmm(bias, m1, m2, alpha=alpha)
    g = [t.cuda() for t in (bias, m1, m2)]
    got = []
    calls = library_calls(lambda: got.append(minitorch.addmm(*g, alpha=alpha)))
    assert count(calls, "cublasLtMatmul") == 1 and count(calls, "cublasSgemm") + count(calls, "cublasDgemm") == 0
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert_same(got[0], want, atol=tol, rtol=tol)


def activation_case(use_gelu, dtype, layout, bias_shape=(5,), **kw):
    """A _addmm_activation call's CPU operands and what CUDA must give: addmm, then ReLU or
    GELU approximated by tanh (cuBLASLt's epilogue and PyTorch's CUDA fallback alike)."""
    m1, m2, bias = addmm_case(7, 3, 5, dtype, layout, bias_shape)
    pre = minitorch.addmm(bias, m1, m2, **kw)
    return (bias, m1, m2), F.gelu(pre, approximate="tanh") if use_gelu else F.relu(pre)


@needs_cublas
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("use_gelu", [False, True])
def test_addmm_activation_is_one_lt_matmul_with_its_epilogue(flags, dtype, layout, use_gelu):
    """A bias vector and beta 1: one cublasLtMatmul whose epilogue adds the bias and applies the
    activation (RELU_BIAS, GELU_BIAS), no kernel of its own after it."""
    args, want = activation_case(use_gelu, dtype, layout, alpha=-0.5)
    got = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        got.append(minitorch._addmm_activation(*[t.cuda() for t in args], alpha=-0.5, use_gelu=use_gelu))
        minitorch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == "CPU"]
    under = names[names.index("Kernel::mt_cuda__addmm_activation"):]
    if dtype == np.float32 or minitorch.cuda._is_emulated():  # a GPU's cuBLASLt may refuse float64's GELU
        assert count(under, "cublasLtMatmul") == 1
        assert not any(n.startswith(("Runtime::LaunchKernel", "Op::")) or "Memcpy" in n for n in under)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert_same(got[0], want, atol=tol, rtol=tol)
    assert got[0]._version == 0


@needs_cublas
@pytest.mark.parametrize("use_gelu", [False, True])
def test_addmm_activation_off_the_epilogue(flags, use_gelu):
    """beta != 1 or a full (m, n) self: gemm, then the activation as its own op (PyTorch's
    relu_/gelu_(tanh) after the product); one row: gemv, then the same."""
    for bias_shape, kw in [((5,), dict(beta=0.5)), ((7, 5), {}), ((7, 1), dict(alpha=2))]:
        args, want = activation_case(use_gelu, np.float32, "contiguous", bias_shape, **kw)
        got = []
        calls = library_calls(lambda: got.append(
            minitorch._addmm_activation(*[t.cuda() for t in args], use_gelu=use_gelu, **kw)))
        assert count(calls, "cublasLtMatmul") == 0 and count(calls, "cublasSgemm") == 1
        assert_same(got[0], want, atol=1e-5, rtol=1e-5)
        assert got[0]._version == 0


@needs_cublas
def test_addmm_activation_nan_empty_and_no_derivative(flags):
    bias = minitorch.tensor(np.array([np.nan, -1.0, 2.0], dtype=np.float32))
    m1, m2 = rand(4, 2), rand(2, 3)
    for use_gelu in (False, True):
        args = (bias, m1, m2)
        want = minitorch.addmm(*args)
        want = F.gelu(want, approximate="tanh") if use_gelu else F.relu(want)
        assert_same(minitorch._addmm_activation(*[t.cuda() for t in args], use_gelu=use_gelu), want)
        e1, e2 = rand(4, 0), rand(0, 3)
        got = minitorch._addmm_activation(bias.cuda(), e1.cuda(), e2.cuda(), use_gelu=use_gelu)
        assert_same(got, F.relu(minitorch.addmm(bias, e1, e2)) if not use_gelu
                    else F.gelu(minitorch.addmm(bias, e1, e2), approximate="tanh"))
    w = m2.cuda().requires_grad_(True)
    y = bias.cuda()._addmm_activation(m1.cuda(), w)
    assert type(y.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="^derivative for aten::_addmm_activation is not implemented$"):
        y.sum().backward()


@needs_cublas
def test_lt_addmm_launches_no_bias_copy(flags):
    bias, m1, m2 = rand(6).cuda(), rand(4, 3).cuda(), rand(3, 6).cuda()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        minitorch.addmm(bias, m1, m2)
    names = [e.name for e in prof.events() if e.device_type == "CPU"]
    under = names[names.index("Kernel::mt_cuda_addmm"):]
    assert "Library::cublasLtMatmul" in under
    assert not any(n.startswith("Runtime::LaunchKernel") or "Memcpy" in n for n in under)


@needs_cublas
def test_other_addmms_keep_the_legacy_path(flags):
    """beta != 1, a full (m, n) self and a single row are not bias epilogues (as PyTorch's
    useLtInterface): the same results through gemm or gemv."""
    m1, m2 = rand(4, 3), rand(3, 5)
    cases = [(rand(5), dict(beta=0.5)), (rand(4, 5), {}), (rand(4, 1), {})]
    for self_, kw in cases:
        got = []
        calls = library_calls(lambda: got.append(minitorch.addmm(self_.cuda(), m1.cuda(), m2.cuda(), **kw)))
        assert count(calls, "cublasLtMatmul") == 0 and count(calls, "cublasSgemm") == 1
        assert_same(got[0], minitorch.addmm(self_, m1, m2, **kw), atol=1e-5, rtol=1e-5)
    one = library_calls(lambda: minitorch.addmm(rand(5).cuda(), rand(1, 3).cuda(), m2.cuda()))
    assert count(one, "cublasSgemv") == 1 and count(one, "cublasLtMatmul") == 0


@needs_cublas
def test_linear_trains_through_the_epilogue(flags):
    """nn.Linear's forward is the Lt product; its gradients match the CPU's."""
    lin = minitorch.nn.Linear(6, 4)
    x = rand(5, 6)
    glin = minitorch.nn.Linear(6, 4).cuda()
    glin.load_state_dict({k: v.cuda() for k, v in lin.state_dict().items()})
    gx = x.cuda().requires_grad_(True)
    x.requires_grad_(True)
    calls = library_calls(lambda: glin(gx).square().sum().backward())
    lin(x).square().sum().backward()
    assert count(calls, "cublasLtMatmul") == 1
    for g, c in [(gx.grad, x.grad), (glin.weight.grad, lin.weight.grad), (glin.bias.grad, lin.bias.grad)]:
        assert_same(g, c, atol=1e-5, rtol=1e-5)


@needs_cublas
def test_bias_nan_and_empty_inner_dim(flags):
    bias = minitorch.tensor(np.array([np.nan, 1.0, 2.0], dtype=np.float32))
    m1, m2 = rand(3, 2), rand(2, 3)
    assert_same(minitorch.addmm(bias.cuda(), m1.cuda(), m2.cuda()), minitorch.addmm(bias, m1, m2))
    e1, e2 = rand(3, 0), rand(0, 3)  # k = 0: the bias alone, broadcast
    assert_same(minitorch.addmm(bias.cuda(), e1.cuda(), e2.cuda()), minitorch.addmm(bias, e1, e2))


def tf32(a):
    """a (float32) rounded to TF32 as tensor cores read it: 10 mantissa bits, to nearest even."""
    b = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x0FFF + ((b >> 13) & 1)) & ~np.uint64(0x1FFF)
    return b.astype(np.uint32).view(np.float32)


@needs_cublas
@pytest.mark.parametrize("how", ["allow_tf32", "precision"])
def test_tf32_when_allowed(flags, how):
    _, matmul = flags
    a = RNG.standard_normal((6, 40)).astype(np.float32)
    b = RNG.standard_normal((40, 7)).astype(np.float32)
    bias = np.zeros(7, dtype=np.float32)
    ga, gb, gbias = (minitorch.tensor(v).cuda() for v in (a, b, bias))
    exact = a.astype(np.float64) @ b
    rounded = tf32(a).astype(np.float64) @ tf32(b)
    assert np.abs(rounded - exact).max() > 1e-3  # the case tells the two apart
    full = as_numpy(ga @ gb)
    np.testing.assert_allclose(full, exact, atol=1e-4, rtol=1e-5)
    if how == "allow_tf32":
        matmul.allow_tf32 = True
    else:
        minitorch.set_float32_matmul_precision("high")
        assert matmul.allow_tf32 and minitorch.get_float32_matmul_precision() == "high"
    for got in (as_numpy(ga @ gb), as_numpy(minitorch.addmm(gbias, ga, gb)),
                as_numpy(minitorch.bmm(ga[None], gb[None]))[0]):
        np.testing.assert_allclose(got, rounded, atol=1e-4, rtol=1e-5)
    # float64 never uses TF32
    d = as_numpy(minitorch.tensor(a.astype(np.float64)).cuda() @ minitorch.tensor(b.astype(np.float64)).cuda())
    np.testing.assert_allclose(d, exact, atol=1e-10, rtol=1e-10)
    matmul.allow_tf32 = False
    np.testing.assert_allclose(as_numpy(ga @ gb), exact, atol=1e-4, rtol=1e-5)


# ---- the journey (point 7) -----------------------------------------------------------------------

def test_main_job_shows_the_articles_whole_path(tmp_path):
    """`python -m minitorch --device cuda`: the article's table holds, in this order, Op::to and its
    Runtime::Memcpy (the input moved to the GPU) with the copy on the GPU, the forward's ops with a
    Runtime::LaunchKernel and a library call with its kernel, Mem events, and last
    Runtime::DeviceSynchronize."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(minitorch.__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-m", "minitorch", "--device", "cuda", "--wide", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(root)))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "The tree of Python::Sequential" in text
    table = text[text.index("the article's table"):]
    lines = table.split("\n")
    header = next(i for i, line in enumerate(lines) if line.startswith("Event"))
    assert lines[header].split() == ["Event", "Description", "CPU", "time", "GPU", "time", "Device", "type"]
    rows = []
    for line in lines[header + 2:]:
        if not line.strip():
            break
        rows.append(line)
    events = [r.split("  ")[0] for r in rows]

    def first(pred, after=0):
        return next(i for i in range(after, len(events)) if pred(events[i]))

    to = first(lambda e: e == "Op::to")
    memcpy = first(lambda e: e == "Runtime::Memcpy", to)
    assert "Memcpy HtoD" in events[memcpy + 1] and rows[memcpy + 1].rstrip().endswith("CUDA")
    forward = first(lambda e: e == "Python::Sequential", memcpy)
    launch = first(lambda e: e == "Runtime::LaunchKernel", forward)
    assert rows[launch + 1].split("  ")[0].startswith("Kernel::") and rows[launch + 1].rstrip().endswith("CUDA")
    if minitorch.cuda._C_cuda.has_cublas:
        lib = first(lambda e: e.startswith("Library::cublas"), forward)
        assert events[lib + 1].startswith("Kernel::")
    assert any(e.startswith("Mem::") for e in events[forward:])
    assert events[-1] == "Runtime::DeviceSynchronize"
    assert rows[to].rstrip().endswith("CPU")
