"""The CPU's fast paths, against PyTorch: the thread count (one pool for minitorch's
loops and OpenBLAS's), max_pool2d keeping its indices for the backward and its double backward,
and layer_norm / batch_norm on edge rows (one element, huge values, NaN) at 1 and 2 threads;
layer_norm recording native_layer_norm, whose mean and rstd its backward reads."""
import numpy as np
import pytest

import minitorch
from helpers import check_grad, child_env, same_as_torch, to_layout, torch

needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")
rng = np.random.default_rng(0)


# ---- threads ----

def test_set_num_threads_round_trip():
    before = minitorch.get_num_threads()
    try:
        for n in (1, 3, 2):
            minitorch.set_num_threads(n)
            assert minitorch.get_num_threads() == n
            a = minitorch.tensor(rng.standard_normal((300, 300)).astype(np.float32))
            np.testing.assert_allclose((a @ a).numpy(), a.numpy() @ a.numpy(), rtol=1e-4, atol=1e-3)
            np.testing.assert_allclose((a + 1).sum().item(), (a.numpy() + 1).sum(dtype=np.float64), rtol=1e-5)
    finally:
        minitorch.set_num_threads(before)


@pytest.mark.parametrize("value, message", [
    (0, "set_num_threads expects a positive integer"),
    (-1, "set_num_threads expects a positive integer"),
    (1.5, "set_num_threads expects an int, but got float"),
    ("a", "set_num_threads expects an int, but got str"),
    (True, "set_num_threads expects an int, but got bool"),
])
def test_set_num_threads_errors(value, message):
    libs = [minitorch] + ([torch] if torch is not None else [])
    for lib in libs:
        with pytest.raises(RuntimeError, match=message):
            lib.set_num_threads(value)


def test_numpy_integer_thread_count():
    before = minitorch.get_num_threads()
    try:
        minitorch.set_num_threads(np.int64(1))
        assert minitorch.get_num_threads() == 1
    finally:
        minitorch.set_num_threads(before)


def test_defaults_follow_omp_num_threads():
    """OMP_NUM_THREADS sets the count of both pools' one pool; interop threads may be set once."""
    import subprocess
    import sys

    code = ("import minitorch as t; print(t.get_num_threads()); "
            "assert t.get_num_interop_threads() >= 1; t.set_num_interop_threads(3); "
            "print(t.get_num_interop_threads())\n"
            "try:\n    t.set_num_interop_threads(2)\nexcept RuntimeError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], env=child_env(OMP_NUM_THREADS="1"),
                         capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:3] == ["1", "3", "Error: cannot set number of interop threads after parallel work has "
                                 "started or set_num_interop_threads called"]


# ---- max_pool2d ----

def test_max_pool2d_records_with_indices():
    x = minitorch.randn(2, 3, 6, 6, requires_grad=True)
    y = minitorch.nn.functional.max_pool2d(x, 2)
    assert type(y.grad_fn).__name__ == "MaxPool2DWithIndicesBackward0"
    y.relu_()  # an in-place change of the output: the node keeps the indices, not the output
    y.sum().backward()
    assert x.grad.sum().item() == pytest.approx(np.count_nonzero(y.detach().numpy() > 0))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)])
def test_max_pool2d_grad(kw, threads):
    check_grad(lambda m, x: m.nn.functional.max_pool2d(x, **kw), [rng.standard_normal((2, 3, 7, 7))])


@needs_torch
@pytest.mark.parametrize("return_indices", [False, True])
def test_max_pool2d_double_backward(return_indices):
    """The gradient of the backward: grad-grad gathered at the indices, zeros for self."""
    x0 = rng.standard_normal((2, 3, 6, 5))
    gg0 = rng.standard_normal((2, 3, 6, 5))
    results = []
    for lib in (minitorch, torch):
        x = lib.tensor(x0, requires_grad=True)
        y = lib.nn.functional.max_pool2d(x, 2, stride=1, padding=1, return_indices=return_indices)
        y = y[0] if return_indices else y
        g = lib.ones_like(y, requires_grad=True)
        (gx,) = lib.autograd.grad(y, x, g, create_graph=True)
        assert type(gx.grad_fn).__name__ == "MaxPool2DWithIndicesBackwardBackward0"
        gg, gxx = lib.autograd.grad(gx, (g, x), lib.tensor(gg0), allow_unused=True)
        results.append((gg.detach().numpy(), None if gxx is None else gxx.detach().numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0])
    assert (results[0][1] is None) == (results[1][1] is None)
    if results[1][1] is not None:
        np.testing.assert_array_equal(results[0][1], results[1][1])


# ---- layer_norm, batch_norm ----

def edge_rows(kind):
    x = rng.standard_normal((5, 6)).astype(np.float32)
    if kind == "huge":
        x = x * 1e30
    elif kind == "offset":
        x = x + 1e4
    elif kind == "nan":
        x[1, 2] = np.nan
    elif kind == "inf":
        x[2, 0] = np.inf
    return x


@pytest.mark.parametrize("kind", ["plain", "nan", "inf"])
def test_layer_norm_rows(kind, threads):
    x = edge_rows(kind)
    w, b = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    same_as_torch(lambda m, x, w, b: m.nn.functional.layer_norm(x, (6,), w, b), [x, w, b], atol=1e-4, rtol=1e-4)
    same_as_torch(lambda m, x: m.nn.functional.layer_norm(x, (6,)), [x], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("kind, atol", [("huge", 1e-5), ("offset", 2e-3)])
def test_layer_norm_rows_far_from_zero(kind, atol, threads):
    """Statistics in double: rows of 1e30s (whose squares overflow float, where PyTorch's float
    moments give NaN) and rows around 1e4 (float's spacing there is 1e-3) against float64."""
    x = edge_rows(kind)
    x64 = x.astype(np.float64)
    want = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5)
    got = minitorch.nn.functional.layer_norm(minitorch.tensor(x), (6,)).numpy()
    np.testing.assert_allclose(got, want, atol=atol)


def test_layer_norm_rows_of_one_element(threads):
    x = rng.standard_normal((7, 1)).astype(np.float32) * 1e3
    b = np.float32([0.25])
    out = minitorch.nn.functional.layer_norm(minitorch.tensor(x), (1,), None, minitorch.tensor(b))
    np.testing.assert_array_equal(out.numpy(), np.full((7, 1), 0.25, np.float32))
    same_as_torch(lambda m, x: m.nn.functional.layer_norm(x, (1,)), [x], atol=1e-5)


def test_layer_norm_many_rows_threads(threads):
    """Enough rows that the rows (and the backward's weight sums) are split among threads."""
    x = rng.standard_normal((300, 257)).astype(np.float32)
    w, b = rng.standard_normal(257).astype(np.float32), rng.standard_normal(257).astype(np.float32)
    same_as_torch(lambda m, x, w, b: m.nn.functional.layer_norm(x, (257,), w, b), [x, w, b],
                  atol=1e-4, rtol=1e-4)
    same_as_torch(lambda m, x, w, b: m.nn.functional.layer_norm(x.double(), (257,), w.double(), b.double()),
                  [x, w, b], atol=1e-10, rtol=1e-10)


def test_layer_norm_records_native_layer_norm():
    """On the CPU the node keeps each row's mean and rstd (native_layer_norm's outputs 1 and 2):
    an in-place change of the output does not touch them, and the gradient matches PyTorch's."""
    x0 = rng.standard_normal((4, 3, 5)).astype(np.float32)
    grads = []
    for lib in (minitorch, torch) if torch is not None else (minitorch,):
        x = lib.tensor(x0, requires_grad=True)
        y = lib.nn.functional.layer_norm(x, (3, 5))
        assert type(y.grad_fn).__name__ == "NativeLayerNormBackward0"
        y.relu_()
        y.sum().backward()
        grads.append(x.grad.numpy())
    if len(grads) == 2:
        np.testing.assert_allclose(grads[0], grads[1], atol=1e-5)


def test_layer_norm_records_itself_for_the_small_dtypes():
    """Off the float32/float64 path (bfloat16 here, CUDA in tests/cuda) layer_norm records its
    own node, whose backward recomputes the statistics: the gradient still arrives."""
    x0 = rng.standard_normal((4, 6)).astype(np.float32)
    x = minitorch.tensor(x0, dtype=minitorch.bfloat16, requires_grad=True)
    y = minitorch.nn.functional.layer_norm(x, (6,))
    assert type(y.grad_fn).__name__ == "NativeLayerNormBackward0"
    (y.float() * minitorch.tensor(x0)).sum().backward()
    ref = minitorch.tensor(x0, dtype=minitorch.float64, requires_grad=True)
    (minitorch.nn.functional.layer_norm(ref, (6,)) * minitorch.tensor(x0).double()).sum().backward()
    np.testing.assert_allclose(x.grad.float().numpy(), ref.grad.numpy(), atol=0.1)


@needs_torch
@pytest.mark.parametrize("dtype, atol", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_native_layer_norm(dtype, atol, affine, layout, threads):
    """Output, mean and rstd (shaped (*, 1, 1)) against aten.native_layer_norm."""
    x0 = (rng.standard_normal((40, 6, 2, 3)) * 3 + 1).astype(dtype)
    w0, b0 = rng.standard_normal((2, 3)).astype(dtype), rng.standard_normal((2, 3)).astype(dtype)
    x = minitorch.tensor(x0.transpose(1, 0, 2, 3).copy()).transpose(0, 1) if layout == "transposed" \
        else minitorch.tensor(x0)
    w, b = (minitorch.tensor(w0), minitorch.tensor(b0)) if affine else (None, None)
    got = minitorch._C.native_layer_norm(x, [2, 3], w, b, 1e-3)
    want = torch.ops.aten.native_layer_norm(torch.tensor(x0), [2, 3], torch.tensor(w0) if affine else None,
                                            torch.tensor(b0) if affine else None, 1e-3)
    for mine, ref in zip(got, want):
        assert mine.shape == tuple(ref.shape) and mine.numpy().dtype == dtype
        np.testing.assert_allclose(mine.numpy(), ref.numpy(), atol=atol, rtol=atol)


@needs_torch
@pytest.mark.parametrize("dtype, atol", [(np.float32, 1e-4), (np.float64, 1e-10)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_backward_reads_the_statistics(dtype, atol, affine, threads):
    """Given mean and rstd, the backward uses them (not the input's own statistics): against
    aten.native_layer_norm_backward with the same arbitrary mean and rstd."""
    x0, g0 = (rng.standard_normal((70, 33)).astype(dtype) for _ in range(2))
    w0 = rng.standard_normal(33).astype(dtype) if affine else None
    mean0 = rng.standard_normal((70, 1)).astype(dtype)
    rstd0 = rng.uniform(0.5, 2, (70, 1)).astype(dtype)
    t = (lambda a: None if a is None else minitorch.tensor(a))
    got = minitorch._C.layer_norm_backward(t(g0), t(x0), [33], t(w0), 1e-5, t(mean0), t(rstd0))
    tt = (lambda a: None if a is None else torch.tensor(a))
    want = torch.ops.aten.native_layer_norm_backward(tt(g0), tt(x0), [33], tt(mean0), tt(rstd0), tt(w0),
                                                     tt(w0), [True, affine, affine])
    for mine, ref in zip(got, want if affine else want[:1]):
        np.testing.assert_allclose(mine.numpy(), ref.numpy(), atol=atol, rtol=atol)
    if not affine:  # the weight's and bias' gradients, as if the weight were ones
        np.testing.assert_allclose(got[2].numpy(), g0.sum(0), atol=atol, rtol=atol)
        xh = (x0 - mean0) * rstd0
        np.testing.assert_allclose(got[1].numpy(), (g0 * xh).sum(0), atol=atol * 10, rtol=atol)


def test_layer_norm_backward_statistics_errors():
    C, ones = minitorch._C, minitorch.ones
    with pytest.raises(RuntimeError, match="go together"):
        C.layer_norm_backward(ones(2, 4), ones(2, 4), [4], None, 1e-5, ones(2, 1), None)
    with pytest.raises(RuntimeError, match="one float per row"):
        C.layer_norm_backward(ones(2, 4), ones(2, 4), [4], None, 1e-5, ones(3, 1), ones(3, 1))
    with pytest.raises(RuntimeError, match="one float per row"):
        C.layer_norm_backward(ones(2, 4), ones(2, 4), [4], None, 1e-5, ones(2).long(), ones(2).long())
    with pytest.raises(RuntimeError, match="normalized_shape"):
        C.native_layer_norm(ones(2, 4), [3], None, None, 1e-5)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("kind", ["plain", "offset"])
def test_batch_norm_threads(training, kind, threads):
    x = rng.standard_normal((8, 16, 20, 20)).astype(np.float32) + (1e3 if kind == "offset" else 0)
    w, b = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3)) + 0.5

    def fn(m, x, w, b):
        return m.nn.functional.batch_norm(x, m.tensor(mean), m.tensor(var), w, b, training=training)
    same_as_torch(fn, [x, w, b], atol=2e-3 if kind == "offset" else 1e-4, rtol=1e-3)


# ---- cross_entropy's backward: log_softmax's in one pass ----

@pytest.mark.parametrize("shape, dim", [((7, 5), 1), ((7, 5), 0), ((2, 3, 4), -1), ((2, 3, 4), 1), ((3,), 0),
                                        ((0, 4), 1), ((300, 200), 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_softmax_backward_data(shape, dim, dtype, threads):
    x = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    y = x - np.log(np.exp(x - x.max(dim, keepdims=True)).sum(dim, keepdims=True)) - x.max(dim, keepdims=True)
    want = g - np.exp(y.astype(np.float64)) * g.astype(np.float64).sum(dim, keepdims=True)
    mt = minitorch.float32 if dtype == np.float32 else minitorch.float64
    got = minitorch._log_softmax_backward_data(minitorch.tensor(g), minitorch.tensor(y), dim, mt)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-5 if dtype == np.float32 else 1e-12, rtol=1e-4)
    if torch is not None:
        t = torch._log_softmax_backward_data(torch.tensor(g), torch.tensor(y), dim,
                                             torch.float32 if dtype == np.float32 else torch.float64)
        np.testing.assert_allclose(got.numpy(), t.numpy(), atol=1e-5 if dtype == np.float32 else 1e-12, rtol=1e-4)


@pytest.mark.parametrize("kind", ["above_zero", "very_negative", "nan_inf"])
def test_log_softmax_backward_data_any_output(kind, threads):
    """A float32 row of log_softmax outputs (all <= 0) takes a faster exp; rows with an output above
    0 (the op called with other values), far below (exp subnormal or 0), NaN or inf still give
    g - exp(y) * sum(g) as float64 does, row by row."""
    y = rng.standard_normal((6, 67)).astype(np.float32) - 3
    if kind == "above_zero":
        y[1, 5], y[4, 66] = 2.5, 100.0
    elif kind == "very_negative":
        y[0, :] = -200.0
        y[2, 3:9] = [-87.0, -88.0, -100.0, -104.0, -1e30, -np.inf]
    else:
        y[1, 2], y[3, 4], y[5, 6] = np.nan, np.inf, -np.inf
    g = rng.standard_normal(y.shape).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        want = (g - np.exp(y.astype(np.float64)) * g.astype(np.float64).sum(1, keepdims=True)).astype(np.float32)
    got = minitorch._log_softmax_backward_data(minitorch.tensor(g), minitorch.tensor(y), 1, minitorch.float32)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-5, rtol=1e-4)
    if torch is not None:
        t = torch._log_softmax_backward_data(torch.tensor(g), torch.tensor(y), 1, torch.float32)
        np.testing.assert_allclose(got.numpy(), t.numpy(), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("shape, dim", [((7, 5), 1), ((7, 5), 0), ((2, 3, 4), -1), ((2, 3, 4), 1), ((3,), 0),
                                        ((0, 4), 1), ((300, 200), 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_backward_data(shape, dim, dtype, threads):
    """softmax's backward in one pass over each row: output * (grad - sum(grad * output))."""
    x = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    e = np.exp(x - x.max(dim, keepdims=True))
    y = (e / e.sum(dim, keepdims=True)).astype(dtype)
    y64, g64 = y.astype(np.float64), g.astype(np.float64)
    want = y64 * (g64 - (g64 * y64).sum(dim, keepdims=True))
    mt = minitorch.float32 if dtype == np.float32 else minitorch.float64
    got = minitorch._softmax_backward_data(minitorch.tensor(g), minitorch.tensor(y), dim, mt)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got.numpy(), want, atol=tol, rtol=1e-4)
    if torch is not None:
        t = torch._softmax_backward_data(torch.tensor(g), torch.tensor(y), dim,
                                         torch.float32 if dtype == np.float32 else torch.float64)
        np.testing.assert_allclose(got.numpy(), t.numpy(), atol=tol, rtol=1e-4)
    with pytest.raises(RuntimeError, match="_softmax_backward_data: expected grad_output and output"):
        minitorch._softmax_backward_data(minitorch.tensor(g), minitorch.tensor(y).int(), dim, mt)


def test_log_softmax_backward_data_errors():
    g = minitorch.zeros(2, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        minitorch._log_softmax_backward_data(g, g, 2, minitorch.float32)
    with pytest.raises(RuntimeError, match="one float dtype and shape"):
        minitorch._log_softmax_backward_data(g, minitorch.zeros(3, 2), 1, minitorch.float32)


@pytest.mark.parametrize("kw", [dict(), dict(reduction="sum"), dict(weight=True), dict(label_smoothing=0.1)])
def test_cross_entropy_backward(kw, threads):
    """The gradient through log_softmax's one-pass backward."""
    x = rng.standard_normal((64, 10))
    target = rng.integers(0, 10, 64)
    weight = rng.uniform(0.5, 2, 10)

    def fn(m, x):
        w = m.tensor(weight) if kw.get("weight") else None
        rest = {k: v for k, v in kw.items() if k != "weight"}
        return m.nn.functional.cross_entropy(x, m.tensor(target), weight=w, **rest)
    check_grad(fn, [x])


@needs_torch
def test_log_softmax_double_backward(threads):
    """create_graph takes the chain of ops (which records), not the one-pass kernel."""
    x, w = rng.standard_normal((64, 10)), rng.standard_normal((64, 10))
    grads = []
    for lib in (minitorch, torch):
        t = lib.tensor(x, requires_grad=True)
        (gx,) = lib.autograd.grad((lib.log_softmax(t, 1) * lib.tensor(w)).sum(), t, create_graph=True)
        (gg,) = lib.autograd.grad((gx * gx).sum(), t)
        grads.append((gx.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], atol=1e-6)
    np.testing.assert_allclose(grads[0][1], grads[1][1], atol=1e-6)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason="needs a CUDA device (or MINITORCH_CUDA_EMU=1)")
def test_log_softmax_backward_data_on_cuda():
    x = rng.standard_normal((6, 5)).astype(np.float32)
    g = rng.standard_normal((6, 5)).astype(np.float32)
    cpu = minitorch._log_softmax_backward_data(minitorch.tensor(g), minitorch.tensor(x), 1, minitorch.float32)
    dev = minitorch._log_softmax_backward_data(minitorch.tensor(g).cuda(), minitorch.tensor(x).cuda(), 1,
                                               minitorch.float32)
    np.testing.assert_allclose(dev.cpu().numpy(), cpu.numpy(), atol=1e-5)


# ---- operands that disagree on the fastest dim: the iterator's tiles ----

def with_specials(a):
    """a with NaN, inf and -inf at its first elements (where it has them)."""
    a = a.copy()
    flat = a.reshape(-1)
    flat[:3] = [np.nan, np.inf, -np.inf][: flat.size]
    return a


@pytest.mark.parametrize("shape", [(256, 1024), (65, 130), (1, 200), (200, 1), (33, 31), (0, 100), (100, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_add_transposed_operand(shape, dtype, threads):
    x = with_specials(rng.standard_normal(shape)).astype(dtype) if dtype != np.int64 else \
        rng.integers(-9, 9, shape)
    y = rng.standard_normal(shape[::-1]).astype(dtype) if dtype != np.int64 else rng.integers(-9, 9, shape[::-1])
    got = minitorch.tensor(x) + minitorch.tensor(y).t()
    np.testing.assert_array_equal(got.numpy(), x + y.T)
    assert got.is_contiguous()
    got = minitorch.tensor(x).t() * minitorch.tensor(y)  # the output takes the first operand's layout
    np.testing.assert_array_equal(got.numpy(), x.T * y)


@pytest.mark.parametrize("perm", [(0, 2, 1), (2, 1, 0), (1, 2, 0)])
def test_add_permuted_3d(perm, threads):
    x = with_specials(rng.standard_normal((3, 70, 90))).astype(np.float32)
    y = rng.standard_normal(np.array(x.shape)[list(perm)]).astype(np.float32)
    inv = np.argsort(perm)
    yt = minitorch.tensor(y).permute(*inv.tolist())
    np.testing.assert_array_equal((minitorch.tensor(x) + yt).numpy(), x + y.transpose(inv))
    # a broadcast operand and a flipped (negative stride) transposed one
    b = rng.standard_normal((1, 1, 90)).astype(np.float32)
    np.testing.assert_array_equal((minitorch.tensor(x) + yt - minitorch.tensor(b)).numpy(), x + y.transpose(inv) - b)
    flipped = minitorch.tensor(y).flip(2).permute(*inv.tolist())
    np.testing.assert_array_equal((minitorch.tensor(x) + flipped).numpy(), x + y[:, :, ::-1].transpose(inv))


@pytest.mark.parametrize("shape", [(300, 500), (65, 7), (0, 3)])
def test_contiguous_of_transposed(shape, threads):
    a = with_specials(rng.standard_normal(shape))
    t = minitorch.tensor(a).t()
    np.testing.assert_array_equal(t.contiguous().numpy(), a.T)
    np.testing.assert_array_equal(t.float().numpy(), a.T.astype(np.float32))
    out = minitorch.zeros(shape[::-1]).t()  # copy_ into a transposed destination
    out.copy_(minitorch.tensor(a.astype(np.float32)))
    np.testing.assert_array_equal(out.numpy(), a.astype(np.float32))


def test_add_transposed_grad(threads):
    check_grad(lambda m, x, y: x + y.t(), [rng.standard_normal((70, 40)), rng.standard_normal((40, 70))])


# ---- conv2d with a bias ----

@needs_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, kw", [((4, 3, 16, 16), dict(padding=1)), ((2, 4, 9, 7), dict(stride=2, groups=2)),
                                       ((3, 9, 9), dict()), ((0, 3, 8, 8), dict(padding=1)),
                                       # chunks of 5 images through one gemm each (the last of 3)
                                       ((13, 3, 32, 32), dict(padding=1, dilation=2))])
def test_conv2d_bias(dtype, shape, kw, threads):
    c = shape[-3]
    x = with_specials(rng.standard_normal(shape)).astype(dtype) if shape[0] else np.zeros(shape, dtype)
    w = rng.standard_normal((6, c // kw.get("groups", 1), 3, 3)).astype(dtype)
    b = np.array([np.inf, -1e30, np.nan, 0.0, -0.0, 2.5], dtype)
    same_as_torch(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, **kw), [x, w, b], grad=False,
                  rtol=1e-4, atol=1e-4)
    # finite values with gradients, every operand strided (a bias whose elements are 2 apart);
    # the weight's float32 gradient sums 10^4 products over 13 images, to about 1e-4
    tol = 1e-3 if dtype == np.float32 and shape[0] > 8 else 1e-4
    same_as_torch(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, **kw),
                  [np.nan_to_num(x, posinf=1.0, neginf=-1.0), w, rng.standard_normal(6).astype(dtype)],
                  layout="sliced", rtol=tol, atol=tol)


# ---- float32 exp: a vectorised polynomial in place of libm's expf ----

def ulps32(got, x):
    """|got - exp(x)| in units of the float32 spacing at exp(x) (x float32, exp in float64)."""
    with np.errstate(over="ignore", invalid="ignore"):
        exact = np.exp(x.astype(np.float64))
        rounded = exact.astype(np.float32)
        spacing = np.spacing(np.abs(rounded)).astype(np.float64)
        return np.where(np.isfinite(rounded), np.abs(got.astype(np.float64) - exact) / spacing, 0.0)


EXP_SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40, -1e-38, 88.72283, 88.7229,
                         89.0, -87.33654, -87.34, -100.0, -103.97, -103.98, -104.0, -1e30, 1e30, 0.34657359,
                         -0.34657359, 1e-8], np.float32)


def test_exp_float32_ulps(threads, vmath_path):
    x = np.concatenate([np.linspace(-110, 95, 400_001, dtype=np.float32), EXP_SPECIALS,
                        rng.standard_normal(10_000).astype(np.float32) * 30])
    got = minitorch.tensor(x).exp().numpy()
    with np.errstate(over="ignore"):
        want = np.exp(x.astype(np.float64)).astype(np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)])
    assert ulps32(got, x).max() <= 1.0  # over every float32: 0.96 portable, 0.78 AVX-512
    np.testing.assert_array_equal(minitorch.tensor(EXP_SPECIALS).exp().numpy()[3:5], [1.0, 1.0])
    if torch is not None:  # PyTorch's own float exp (SLEEF's) agrees to 2 ulp as well
        t = torch.tensor(x).exp().numpy()
        np.testing.assert_allclose(got, t, rtol=3e-7, atol=3e-45)


def test_exp_float32_layouts(threads, vmath_path):
    a = with_specials(rng.standard_normal((70, 130)).astype(np.float32) * 40)
    with np.errstate(over="ignore"):
        want = np.exp(a.astype(np.float64)).astype(np.float32)
    for layout in ("transposed", "sliced"):
        t = to_layout(a, layout)
        np.testing.assert_allclose(t.exp().numpy(), want, rtol=3e-7, atol=3e-45)
    t = minitorch.tensor(a)
    t.exp_()
    np.testing.assert_allclose(t.numpy(), want, rtol=3e-7, atol=3e-45)
    out = minitorch.empty((130, 70)).t()
    minitorch.exp(minitorch.tensor(a), out=out)
    np.testing.assert_allclose(out.numpy(), want, rtol=3e-7, atol=3e-45)
    assert minitorch.tensor(np.zeros((0, 3), np.float32)).exp().shape == (0, 3)
    check_grad(lambda m, x: x.exp(), [rng.standard_normal((5, 6)).astype(np.float32)], atol=1e-3, rtol=1e-3)


# ---- float32 tanh: vectorised, computed in double and rounded once ----

TANH_SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40, 2.0**-12, -2.0**-12,
                          2.0**-13, 9.99, 10.0, 10.01, -10.01, 1e30, -1e30, 0.5493061, 3e-4], np.float32)


def test_tanh_float32_is_rounded_once_from_double(threads):
    """Values equal float64 tanh rounded to float32 (libm's tanhf agrees; SLEEF's, PyTorch's, is
    within 1 ulp), signs of zeros and NaN kept, over the ranges where the formula changes, but
    for rare values within about 1e-13 of a float midpoint, where the kernel's double result
    (exp(2|x|) - 1 loses up to 1e-16 / (2|x|)) may round the other way: 1 ulp off, 0 to 2 of
    these 1.1M values depending on the draw (vmath.h says so). Its own generator: the module's
    gave each xdist worker other values, so the count changed from run to run."""
    draw = np.random.default_rng(471)
    x = np.concatenate([draw.standard_normal(200_000).astype(np.float32) * s for s in (1e-5, 1e-3, 0.3, 2, 6)]
                       + [np.linspace(-12, 12, 100_001, dtype=np.float32), TANH_SPECIALS])
    got = minitorch.tensor(x).tanh().numpy()
    want = np.tanh(x.astype(np.float64)).astype(np.float32)
    off = np.nonzero((got != want) & ~(np.isnan(got) & np.isnan(want)))[0]
    assert len(off) <= 4, (x[off[:8]], got[off[:8]], want[off[:8]])
    np.testing.assert_array_max_ulp(got[off], want[off], maxulp=1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    for layout in ("transposed", "sliced"):
        a = x[:4800].reshape(60, 80)
        np.testing.assert_array_equal(to_layout(a, layout).tanh().numpy(), want[:4800].reshape(60, 80))
    check_grad(lambda m, x: x.tanh(), [rng.standard_normal((5, 6)).astype(np.float32)], atol=1e-3, rtol=1e-3)


# ---- sums over leading dims: rows of x added into the row of sums ----

@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
def test_sum_over_leading_dims(threads, dtype):
    a = rng.standard_normal((300, 7, 130)) * 10
    a = a > 0 if dtype == "bool" else a.astype(dtype)
    want_dt = {"float32": np.float32, "float64": np.float64}.get(dtype, np.int64)
    for dims in (0, (0, 1), 1):
        got = minitorch.tensor(a).sum(dims).numpy()
        assert got.dtype == want_dt
        want = a.astype(np.float64).sum(dims)
        if dtype == "float32":
            # float32 rows are added in float32 blocks (as PyTorch's cascade and NumPy's pairwise
            # sums are): the error is bounded by the sum of |x| times a few float32 epsilons
            # (PyTorch 2.13's on this data: up to 1.5e-7 of it, minitorch's 1.8e-7)
            bound = 1e-6 * np.abs(a).astype(np.float64).sum(dims)
            assert np.all(np.abs(got - want) <= bound), np.max(np.abs(got - want) / bound)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    if dtype.startswith("float"):
        b = with_specials(a)
        np.testing.assert_array_equal(np.isnan(minitorch.tensor(b).sum(0).numpy()), np.isnan(b.sum(0)))
        t = to_layout(a[:, 0, :], "sliced")
        np.testing.assert_allclose(t.sum(0).numpy(), a[:, 0, :].astype(np.float64).sum(0), rtol=1e-6)
        check_grad(lambda m, x: x.sum(0), [a[:5, 0, :6]], atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("op", ["exp", "log"])
def test_vmath_lengths_tails_and_in_place(op, vmath_path):
    """Every length from 0 to 40 (the AVX-512 loops take 16 lanes and a masked tail), from an
    offset into the storage, in place and out of place, against float64 rounded (within the
    functions' 1 ulp), specials in every lane position."""
    fn = {"exp": np.exp, "log": np.log}[op]
    base = np.array([0.5, -3.0, 20.0, 1e-40, -0.0, np.nan, np.inf, -np.inf, 0.0, 88.9, -104.5, 7.25, 1e-30,
                     3.4e38, -1e-45, 0.75], np.float32)
    for n in range(41):
        x = np.roll(np.resize(base, n + 3), n)
        with np.errstate(all="ignore"):
            want = fn(x[3:].astype(np.float64)).astype(np.float32)
        whole = minitorch.tensor(x)
        t = whole[3:]
        got = getattr(t, op)().numpy()
        getattr(t, op + "_")()
        for g in (got, t.numpy()):
            assert g.shape == (n,)
            np.testing.assert_array_equal(np.isnan(g), np.isnan(want))
            np.testing.assert_array_max_ulp(np.nan_to_num(g), np.nan_to_num(want), maxulp=1)
            np.testing.assert_array_equal(np.signbit(g[~np.isnan(g)]), np.signbit(want[~np.isnan(want)]))
        assert np.array_equal(whole.numpy()[:3], x[:3], equal_nan=True)  # untouched
