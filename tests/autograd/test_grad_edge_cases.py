"""Autograd at the edges PyTorch defines and a quick port gets wrong: views of the whole tensor
from indexing, a loss whose target broadcasts, NaN, inf and zeros into gradients, a tensor value
to fill_, a 0-dim masked_select, custom autograd.Functions that return their input, see their
saved tensors change or return non-tensors, and integer tensors asked to require grad. Each is
compared with PyTorch's values, gradients and errors where it is installed."""
import re

import numpy as np
import pytest

import minitorch
from helpers import check_grad, torch

needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")

NAN, INF = float("nan"), float("inf")


def grads(fn, *arrays):
    """fn(lib, *leaves) backward with ones, in minitorch and (where installed) PyTorch: the two
    lists of input gradients (None where none flowed) as NumPy arrays."""
    out = []
    for lib in (minitorch, torch) if torch is not None else (minitorch,):
        xs = [lib.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
        y = fn(lib, *xs)
        y.backward(lib.ones_like(y))
        out.append([None if x.grad is None else np.array(x.grad.tolist()) for x in xs])
    return out


def same_grads(fn, *arrays):
    got = grads(fn, *arrays)
    if len(got) == 2:
        for g, t in zip(*got):
            assert (g is None) == (t is None)
            if g is not None:
                np.testing.assert_allclose(g, t, rtol=1e-6, atol=1e-12, equal_nan=True)
    return got[0]


# ---- point 4: indexing that selects everything is still a view under autograd ----

FULL = [slice(None), Ellipsis, (), (slice(None), slice(None)), slice(None, None, 1),
        (Ellipsis, slice(None)), [slice(None)]]


@pytest.mark.parametrize("key", FULL, ids=repr)
def test_full_range_index_keeps_the_graph(key):
    x = minitorch.ones(2, 3, requires_grad=True)
    y = x[key]
    assert y.requires_grad and not y.is_leaf and x.is_leaf
    (y * 7).sum().backward()
    np.testing.assert_array_equal(x.grad.tolist(), np.full((2, 3), 7.0))
    if torch is not None:
        assert type(y.grad_fn).__name__ == type(torch.ones(2, 3, requires_grad=True)[key].grad_fn).__name__


def test_full_range_index_is_a_new_view():
    x = minitorch.arange(6.0).reshape(2, 3)
    for key in FULL:
        y = x[key]
        assert y is not x and y.data_ptr() == x.data_ptr() and y.stride() == x.stride()
    with pytest.raises(IndexError, match="slice\\(\\) cannot be applied to a 0-dim tensor"):
        minitorch.tensor(1.0)[:]
    # Through a view: the gradient reaches the base's elements only.
    x = minitorch.ones(4, requires_grad=True)
    x[::2][:].sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0, 0.0]


# ---- point 5: a loss whose target broadcasts against the input ----

@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_loss_with_broadcast_target(loss, reduction):
    def fn(m, x, t):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch warns about the broadcast
            return getattr(m.nn.functional, loss)(x, t, reduction=reduction)
    check_grad(fn, [np.array([[0.5, 2.0, -3.0]]), np.array([[0.0], [1.0]])], gradcheck=True)
    check_grad(fn, [np.array([[0.0], [1.0]]), np.array([[0.5, 2.0, -3.0]])], gradcheck=True)


def test_mse_mean_divides_by_the_broadcast_count():
    x = minitorch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    t = minitorch.tensor([[0.0], [1.0]], requires_grad=True)
    minitorch.nn.functional.mse_loss(t, x).backward()
    # d/dx of mean over 6 of (t - x)^2, summed over the broadcast rows
    np.testing.assert_allclose(x.grad.tolist(), [[1 / 3, 1.0, 5 / 3]], rtol=1e-6)
    np.testing.assert_allclose(t.grad.tolist(), [[-2.0], [-1.0]], rtol=1e-6)


# ---- point 7: gradients through NaN and inf, as PyTorch's ----

SPECIAL = [
    ("max_nan", lambda m, x: x.max(), [1.0, NAN, 3.0], [0.0, 1.0, 0.0]),
    ("min_nan", lambda m, x: x.min(), [1.0, NAN, 3.0], [0.0, 1.0, 0.0]),
    ("max_two_nans", lambda m, x: m.max(x), [NAN, 2.0, NAN], [0.5, 0.0, 0.5]),
    ("amax_nan", lambda m, x: x.amax(), [1.0, NAN, 3.0], None),
    ("norm_inf_nan", lambda m, x: x.norm(INF), [1.0, NAN, -3.0], [0.0, 0.0, 0.0]),
    ("cumprod_zero_inf", lambda m, x: x.cumprod(0), [2.0, 0.0, INF, 3.0], [1.0, INF, 0.0, 0.0]),
    ("cumprod_zero_first_inf", lambda m, x: x.cumprod(0), [0.0, INF, 2.0], [INF, 0.0, 0.0]),
    ("cumprod_inf_no_zero", lambda m, x: x.cumprod(0), [1.0, INF, 2.0], None),
    ("cumprod_inf_after_two_zeros", lambda m, x: x.cumprod(0), [0.0, 3.0, 0.0, INF], None),
    ("cumprod_nan_before_zero", lambda m, x: x.cumprod(0), [NAN, 2.0, 0.0, 5.0], None),
    ("relu_nan", lambda m, x: m.relu(x), [1.0, NAN, -1.0, 0.0], [1.0, 1.0, 0.0, 0.0]),
    ("relu_method_nan", lambda m, x: x.relu(), [NAN, -INF, INF], [1.0, 0.0, 1.0]),
    ("prod_inf", lambda m, x: x.prod(), [1.0, INF, -INF], [-INF, NAN, NAN]),
    ("prod_nan", lambda m, x: x.prod(), [1.0, NAN, 3.0], [NAN, NAN, NAN]),
    ("prod_two_zeros_inf", lambda m, x: x.prod(), [0.0, INF, 0.0], [0.0, 0.0, 0.0]),
    ("prod_dim_inf", lambda m, x: x.prod(0), [2.0, INF], None),
]


@pytest.mark.parametrize("name, fn, a, expected", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_grads_through_nan_and_inf(name, fn, a, expected):
    g = same_grads(fn, a)[0]
    if expected is not None:
        np.testing.assert_array_equal(g, np.array(expected))


@needs_torch
def test_nan_and_inf_lines_along_a_dim():
    rng = np.random.default_rng(3)
    for _ in range(40):
        a = rng.choice([0.0, INF, -INF, NAN, 1.5, -2.0], size=(3, 4))
        for fn in (lambda m, x: x.cumprod(1), lambda m, x: x.cumprod(0), lambda m, x: x.prod(1),
                   lambda m, x: x.max(), lambda m, x: x.min(), lambda m, x: x.norm(INF, dim=1),
                   lambda m, x: m.relu(x)):
            same_grads(fn, a)


@pytest.mark.parametrize("a", [[2.0, 0.0, 3.0, 0.5], [0.0, 2.0, 0.0, 3.0], [[1.5, 0.0, 2.0], [0.0, 0.0, 3.0]]])
@pytest.mark.parametrize("op", ["cumprod", "prod"])
def test_second_derivative_of_products_at_zeros(a, op):
    # With a graph of the backward, the gradient at zeros is made of differentiable products
    # (the masks of the first-order formula would differentiate to 0).
    def fn(m, x):
        y = getattr(x, op)(-1)
        (g,) = m.autograd.grad((y * m.arange(1.0, 1.0 + y.numel()).reshape(y.shape)).sum(), x,
                               create_graph=True)
        return g
    check_grad(fn, [np.array(a)], gradcheck=False)  # (gradcheck runs fn under no_grad)


# ---- point 8: fill_ with a tensor value; masked_select of a 0-dim input ----

@pytest.mark.parametrize("self_grad", [False, True])
def test_fill_with_a_tensor_value_gets_its_gradient(self_grad):
    def fn(m, v, x):
        y = (x * 1 if self_grad else m.zeros(2, 3, dtype=v.dtype)).fill_(v)
        return y * m.arange(6.0, dtype=v.dtype).reshape(2, 3)
    x = np.ones((2, 3))
    check_grad(fn, [np.array(1.5), x if self_grad else x.astype(np.int64)])


def test_fill_values_errors_and_node_names():
    v = minitorch.tensor(2.0, requires_grad=True)
    y = minitorch.zeros(3).fill_(v)
    assert y.requires_grad and not y.is_leaf and type(y.grad_fn).__name__ == "FillBackward3"
    assert type(minitorch.ones(2, requires_grad=True).clone().fill_(1).grad_fn).__name__ == "FillBackward2"
    y.sum().backward()
    assert v.grad.item() == 3.0
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions."):
        minitorch.zeros(3).fill_(minitorch.tensor([2.0]))
    assert minitorch.zeros(2, dtype=minitorch.int64).fill_(minitorch.tensor(2.7)).tolist() == [2, 2]
    z = minitorch.tensor([0.0, 4.0, 0.0])
    assert z.fill_(z[1]).tolist() == [4.0, 4.0, 4.0]  # the value is read before the fill
    if torch is not None:
        for dt in ("float32", "int64", "bool"):
            got = minitorch.zeros(2, dtype=getattr(minitorch, dt)).fill_(minitorch.tensor(True))
            want = torch.zeros(2, dtype=getattr(torch, dt)).fill_(torch.tensor(True))
            assert got.tolist() == want.tolist()


@pytest.mark.parametrize("x, mask", [(3.0, True), (3.0, False), (3.0, [True, False, True]),
                                     ([3.0, 4.0], True), ([[1.0, 2.0]], [[True], [False]])])
def test_masked_select_of_0_dim_and_broadcast(x, mask):
    same_grads(lambda m, t: t.masked_select(m.tensor(mask)) * 2, x)


# ---- point 12: custom autograd.Functions ----

class Identity(minitorch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


class ReturnsBoth(minitorch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        return x, x * w

    @staticmethod
    def backward(ctx, gx, gy):
        return gx + gy, gy


def test_function_returning_its_input_gives_a_view():
    x = minitorch.ones(2, requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and x.grad_fn is None
    assert y.grad_fn is not None and type(y.grad_fn).__name__ == "IdentityBackward"
    assert y.data_ptr() == x.data_ptr()
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    x2 = minitorch.ones(2, requires_grad=True)
    a, b = ReturnsBoth.apply(x2, minitorch.tensor([3.0, 4.0]))
    assert a is not x2 and x2.is_leaf
    (a + b).sum().backward()
    assert x2.grad.tolist() == [2.0, 2.0]
    # The C layer refuses to link a leaf that requires grad as an output (the cycle).
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        minitorch._C._function_record(object(), "XBackward", [x2], [x2])
    assert x2.is_leaf


def test_function_returning_its_input_frees_its_graph():
    x = minitorch.ones(2, requires_grad=True)

    def nodes():
        return minitorch._C._live_objects()["nodes"]

    for _ in range(10):
        Identity.apply(x).sum().backward()
    start = nodes()
    for _ in range(200):
        Identity.apply(x).sum().backward()
        Identity.apply(x)  # dropped without a backward
    assert nodes() - start <= 2  # a cycle per call kept 3 nodes each


class SavesInput(minitorch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


def test_function_saved_tensor_modified_in_place_is_an_error():
    x = minitorch.ones(2, requires_grad=True)
    a = x.clone()
    y = SavesInput.apply(a)
    a.mul_(3)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has "
                                           "been modified by an inplace operation: .*, which is output 0 "
                                           "of Mul, is at version"):
        y.sum().backward()
    # Unchanged, it works.
    y = SavesInput.apply(x.clone())
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]  # g * x

    # A saved leaf (one that needs no grad) changed: no node to name, as PyTorch.
    class Scales(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            (w,) = ctx.saved_tensors
            return g * w, None

    w = minitorch.ones(2)
    y = Scales.apply(x, w)
    w.add_(1)
    with pytest.raises(RuntimeError, match=r"inplace operation: \[minitorch.FloatTensor \[2\]\] is at version 1; "
                                           r"expected version 0 instead. Hint: enable anomaly detection"):
        y.sum().backward()
    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 0 is of type int"):
        minitorch.autograd.function.FunctionCtx().save_for_backward(3)


def doubling(name, backward):
    """A Function class named name: forward x * 2 (other arguments ignored), backward(g) given."""
    return type(name, (minitorch.autograd.Function,), {
        "forward": staticmethod(lambda ctx, x, *rest: x * 2),
        "backward": staticmethod(lambda ctx, g: backward(g))})


@pytest.mark.parametrize("bad, cls", [("s", "str"), (3, "int"), (np.ones(2), "numpy.ndarray"),
                                      (2.5, "float"), ([1.0, 1.0], "list")])
def test_function_backward_returning_a_non_tensor_raises(bad, cls):
    x = minitorch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=f"expected Variable or None \\(got {cls}\\)"):
        doubling("Bad", lambda g: bad).apply(x).sum().backward()
    assert x.grad is None


def test_function_gradient_for_a_non_tensor_argument_raises():
    x = minitorch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="function ScaleBackward returned a gradient different than None at "
                                           "position 2, but the corresponding forward input was not a Variable"):
        doubling("Scale", lambda g: (g, minitorch.ones(1))).apply(x, 3).sum().backward()
    with pytest.raises(RuntimeError, match="Function WideBackward returned an invalid gradient at index 0 - got "
                                           "\\[3\\] but expected shape compatible with \\[2\\]"):
        doubling("Wide", lambda g: minitorch.ones(3)).apply(x).sum().backward()


# ---- point 13: only floating point tensors require grad, whichever way they are made ----

@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_integer_tensors_cannot_require_grad(dtype):
    t = minitorch.zeros(2, dtype=getattr(minitorch, dtype))
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients$"):
        minitorch.nn.Parameter(t)
    assert not minitorch.nn.Parameter(t, requires_grad=False).requires_grad
    p = minitorch.nn.Parameter(minitorch.ones(2))
    with pytest.raises(RuntimeError, match="^data set to a tensor that requires gradients must be floating point or complex dtype$"):
        p.data = t
    assert p.dtype == minitorch.float32 and p.requires_grad
    q = minitorch.ones(2)
    q.data = t  # fine for a tensor that does not require grad, as in PyTorch
    assert q.dtype == t.dtype
    with pytest.raises(RuntimeError, match="^only Tensors of floating point and complex dtype can require gradients$"):
        t.requires_grad = True
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require gradients$"):
        t.requires_grad_()
    assert not t.requires_grad
    if torch is not None:  # the same exception classes and words
        tt = torch.zeros(2, dtype=getattr(torch, dtype))
        with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype"):
            torch.nn.Parameter(tt)
        with pytest.raises(RuntimeError, match="^data set to a tensor that requires gradients must be"):
            torch.nn.Parameter(torch.ones(2)).data = tt


@pytest.mark.parametrize("parameter", [True, False])
def test_a_loaded_integer_tensor_cannot_require_grad(parameter):
    import json
    import struct
    import zlib

    data = np.arange(2, dtype=np.int64).tobytes() + bytes(48)
    entry = {"dtype": "int64", "shape": [2], "offset": 0, "requires_grad": True, "parameter": parameter}
    header = json.dumps({"format": 1, "object": {"tensor": 0}, "tensors": [entry],
                         "data_crc32": zlib.crc32(data)}).encode()
    blob = b"MTORCH\x00\x01" + struct.pack("<QI", len(header), zlib.crc32(header)) + header + data
    import io
    with pytest.raises(RuntimeError, match="corrupt entry for tensor 0: requires_grad on a tensor of dtype int64"):
        minitorch.load(io.BytesIO(blob))
    entry["requires_grad"] = False
    header = json.dumps({"format": 1, "object": {"tensor": 0}, "tensors": [entry],
                         "data_crc32": zlib.crc32(data)}).encode()
    blob = b"MTORCH\x00\x01" + struct.pack("<QI", len(header), zlib.crc32(header)) + header + data
    t = minitorch.load(io.BytesIO(blob))
    assert t.tolist() == [0, 1] and not t.requires_grad


# ---- found by the autograd fuzzer (tests/fuzz/fuzz_autograd.py) ----

@pytest.mark.parametrize("a", [INF, NAN, 0.0, -2.0])
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_prod_of_a_0_dim_tensor_passes_the_gradient(a, dim):
    same_grads(lambda m, x: x.prod() if dim is None else x.prod(dim), a)


@pytest.mark.parametrize("p", [INF, -INF, -1, -0.5])
@pytest.mark.parametrize("shape, dim", [((2, 0), None), ((0,), None), ((2, 0), -1), ((2, 0), (0, 1)),
                                        ((0, 2), 0), ((2, 0), 0)])
def test_norm_without_identity_over_no_element(p, shape, dim):
    def fn(m):
        x = m.zeros(*shape)
        return x.norm(p) if dim is None else x.norm(p, dim=dim)
    if torch is None:
        pytest.skip("compares with PyTorch")
    try:
        want = fn(torch)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=f"^{re.escape(str(e))}$"):
            fn(minitorch)
    else:
        assert fn(minitorch).tolist() == want.tolist()


@needs_torch
@pytest.mark.parametrize("create_graph", [False, True])
def test_gradients_of_many_views_of_one_tensor_add_into_its_gradient(create_graph):
    """The engine adds a view's gradient straight into its part of the input's gradient (a
    recurrent loop's slices, split and unbind pieces), also when the same tensor is used whole,
    twice with retain_graph, and with create_graph (where the formula runs instead)."""
    x = np.random.default_rng(3).standard_normal((12, 5)).astype(np.float32)
    grads = []
    for lib in (torch, minitorch):
        t = lib.tensor(x, requires_grad=True)
        y = t * 1.5
        pieces = list(y.split([1] * 12)) + list(y.unbind(1)) + [y[2:7], y[:, ::2], y[3]]
        total = sum((p * (k + 1)).sum() for k, p in enumerate(pieces)) + (y * y).sum()
        (g,) = lib.autograd.grad(total, t, retain_graph=True, create_graph=create_graph)
        total.backward()
        grads.append((g.detach().numpy().copy(), t.grad.numpy().copy()))
    for want, got in zip(grads[0], grads[1]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


MM_LAYOUTS = {
    "linear": lambda lib, x, w: lib.nn.functional.linear(x, w),
    "linear_3d": lambda lib, x, w: lib.nn.functional.linear(x.reshape(2, 3, 4), w),
    "mm_t": lambda lib, x, w: x.mm(w.t()),
    "matmul_t": lambda lib, x, w: x @ w.t(),
    "addmm_alpha": lambda lib, x, w: lib.addmm(lib.zeros(5, dtype=x.dtype), x, w.t(), beta=0.5, alpha=2.0),
    "mm_row_major": lambda lib, x, w: w.mm(x.t()),
    "mat1_column_major": lambda lib, x, w: w.t().t().t().mm(w),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(MM_LAYOUTS))
def test_matrix_product_gradients_take_their_operands_layout(name):
    """A matrix product's input gradients come out laid out as the inputs were (PyTorch's
    mm_mat1/mat2_backward): linear's weight, used as weight.t(), gets a contiguous gradient, so
    autograd.grad's results can be view()ed, as pytorch-trpo's torch.cat([g.view(-1) ...]) does."""
    rng = np.random.default_rng(0)
    x_np, w_np = rng.standard_normal((6, 4)), rng.standard_normal((5, 4))
    results = []
    for lib in (minitorch, torch):
        x = lib.tensor(x_np, requires_grad=True)
        w = lib.tensor(w_np, requires_grad=True)
        gx, gw = lib.autograd.grad(MM_LAYOUTS[name](lib, x, w).pow(2).sum(), [x, w], allow_unused=True)
        results.append([(None, None) if g is None else (g.stride(), g.view(-1).numpy()) for g in (gx, gw)])
    for (mine_strides, mine), (their_strides, theirs) in zip(*results):
        assert mine_strides == their_strides
        if theirs is not None:
            np.testing.assert_allclose(mine, theirs, rtol=1e-12)


MEAN_GRADS = {
    "all": ((2, 3, 7), lambda lib, x: x.mean()),
    "dim": ((2, 3, 7), lambda lib, x: x.mean(1)),
    "dims_keepdim": ((2, 3, 7), lambda lib, x: x.mean((0, 2), keepdim=True)),
    "adaptive_avg_pool2d_1x1": ((2, 3, 5, 5), lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 1)),
    "empty_dim": ((0, 3), lambda lib, x: x.mean(0)),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(MEAN_GRADS))
def test_mean_gradient_is_a_tensor_of_its_own(name):
    """mean's gradient is sum's backward divided by the count, as PyTorch's mean_backward: a
    tensor with PyTorch's strides and bits (g / n), writable in place (a WGAN-GP script's
    gradients.view(n, -1) and in-place edits of autograd.grad's results work)."""
    shape, fn = MEAN_GRADS[name]
    x_np = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    results = []
    for lib in (minitorch, torch):
        x = lib.tensor(x_np, requires_grad=True)
        y = fn(lib, x)
        g, = lib.autograd.grad(y, [x], lib.ones_like(y) * 0.7)
        g.add_(1)  # its own memory: an expanded gradient would refuse the write
        results.append((g.stride(), g.reshape(-1).numpy().copy()))
    (mine_strides, mine), (their_strides, theirs) = results
    assert mine_strides == their_strides
    np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("inputs", [[], ()])
def test_grad_with_no_inputs_raises_as_pytorch(inputs):
    """autograd.grad(y, []) is PyTorch's RuntimeError, not a fall-back to backward()."""
    x = minitorch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^`inputs` argument to `grad\\(\\)` cannot be empty.$"):
        minitorch.autograd.grad((x * 2).sum(), inputs)
    assert x.grad is None
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="^`inputs` argument to `grad\\(\\)` cannot be empty.$"):
        torch.autograd.grad((torch.ones(2, requires_grad=True) * 2).sum(), inputs)
