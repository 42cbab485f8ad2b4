"""torch.autograd.graph.saved_tensors_hooks, save_on_cpu and disable_saved_tensors_hooks beside
PyTorch's: the same number of pack and unpack calls for the same program (the tensors each node
saves, once per backward), the tensors pack sees, what unpack returns being what the backward
uses, nesting, retain_graph, autograd.Function's ctx.save_for_backward, errors; and
torch.utils.checkpoint's non-reentrant variant built on them (recomputation on unpack)."""
import numpy as np
import pytest

import minitorch

try:
    import torch
except ImportError:  # the sanitizer run: minitorch's side only
    torch = None
LIBS = (minitorch,) if torch is None else (minitorch, torch)
rng = np.random.default_rng(0)


def need_torch():
    if torch is None:
        pytest.skip("compares with PyTorch")


def counting(lib, program, *arrays, backward=1, retain=False):
    """Runs program(lib, *leaves) under counting hooks, then `backward` backward passes: the pack
    and unpack counts, the shapes pack saw (sorted), and the leaves' gradients."""
    packs, unpacks, shapes = [], [], []

    def pack(t):
        packs.append(1)
        shapes.append(tuple(t.shape))
        return t

    def unpack(t):
        unpacks.append(1)
        return t

    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = program(lib, *xs)
    counts = [len(packs)]
    for _ in range(backward):
        out.sum().backward(retain_graph=retain)
        counts.append(len(unpacks))
    return counts, sorted(shapes), [x.grad.numpy() for x in xs]


PROGRAMS = {
    "mul": (lambda m, x, y: x * y, (3, 4), (3, 4)),
    "pow": (lambda m, x: x.pow(2), (5,)),
    "exp": (lambda m, x: x.exp(), (2, 3)),
    "mm": (lambda m, x, w: x @ w, (3, 4), (4, 2)),
    "chain": (lambda m, x, w: (x @ w).tanh().sigmoid(), (3, 4), (4, 2)),
    "mlp": (lambda m, x, w: m.nn.functional.relu(x @ w).sum(1) * x[:, 0], (3, 4), (4, 2)),
    "square_of_self": (lambda m, x: x * x, (4,)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_pack_and_unpack_counts_like_torch(name):
    need_torch()
    program, *shapes = PROGRAMS[name]
    arrays = [rng.standard_normal(s) for s in shapes]
    got = counting(minitorch, program, *arrays)
    want = counting(torch, program, *arrays)
    assert got[0] == want[0], f"pack/unpack counts {got[0]} != PyTorch's {want[0]}"
    assert got[1] == want[1]
    for g, w in zip(got[2], want[2]):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_retain_graph_unpacks_per_backward():
    need_torch()
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal((4, 2))]
    program = PROGRAMS["chain"][0]
    got = counting(minitorch, program, *arrays, backward=2, retain=True)
    want = counting(torch, program, *arrays, backward=2, retain=True)
    assert got[0] == want[0]


def test_unpacked_tensor_is_what_backward_uses():
    # pack stores a value, unpack gives a different tensor: the gradient follows the unpacked one
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t * 10):
            y = x.pow(2)
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [20.0, 40.0, 60.0])


def test_pack_sees_detached_values_under_no_grad():
    seen = []

    def pack(t):
        seen.append((t.requires_grad, minitorch.is_grad_enabled(), t.tolist()))
        return t

    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    with minitorch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = x * 3.0
        (y * y).sum().backward()
    assert seen and all(not rg and not grad for rg, grad, _ in seen)
    assert [2.0, 4.0] in [v for _, _, v in seen] or [3.0, 6.0] in [v for _, _, v in seen]


def test_hooks_nest_and_are_inactive_outside():
    log = []
    outer = minitorch.autograd.graph.saved_tensors_hooks(lambda t: (log.append("outer"), t)[1], lambda t: t)
    inner = minitorch.autograd.graph.saved_tensors_hooks(lambda t: (log.append("inner"), t)[1], lambda t: t)
    x = minitorch.ones(2, requires_grad=True)
    with outer:
        x.exp()
        with inner:
            x.exp()
        x.exp()
    x.exp()
    assert log == ["outer", "inner", "outer"]


@pytest.mark.parametrize("pin_memory", (False, True))
def test_save_on_cpu(pin_memory):
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal((4, 2))]
    grads = []
    for lib in LIBS:
        x, w = (lib.tensor(a, requires_grad=True) for a in arrays)
        with lib.autograd.graph.save_on_cpu(pin_memory=pin_memory):
            y = (x @ w).tanh().sum()
        y.backward()
        grads.append((x.grad.numpy(), w.grad.numpy()))
    for g, w in zip(*grads) if torch else ():
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_disable_saved_tensors_hooks():
    for lib in LIBS:
        graph = lib.autograd.graph
        with graph.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError, match="no hooks here"):
                with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again
            pass


def test_unpack_must_return_a_tensor():
    for lib in LIBS:
        x = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = x.exp()
        with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor"):
            y.sum().backward()


def test_errors_in_hooks_propagate():
    x = minitorch.ones(2, requires_grad=True)

    def bad(t):
        raise ValueError("pack failed")

    with minitorch.autograd.graph.saved_tensors_hooks(bad, lambda t: t):
        with pytest.raises(ValueError, match="pack failed"):
            x.exp()
    y = x.exp()  # the hooks are gone
    y.sum().backward()


def test_custom_function_saves_through_hooks():
    class Cube(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * g

    packs, unpacks = [], []
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    with minitorch.autograd.graph.saved_tensors_hooks(lambda t: (packs.append(1), t)[1],
                                                      lambda t: (unpacks.append(1), t)[1]):
        y = Cube.apply(x)
    y.sum().backward()
    assert (len(packs), len(unpacks)) == (1, 1)
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])


def test_released_after_backward():
    x = minitorch.ones(2, requires_grad=True)
    with minitorch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.exp()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


# ---- checkpoint(use_reentrant=False) over the hooks ----

def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Dropout(0.3), lib.nn.Linear(8, 3))


def test_checkpoint_recomputes_on_unpack():
    calls = []
    model = _model(minitorch)

    def f(x):
        calls.append(1)
        return model(x)

    x = minitorch.tensor(rng.standard_normal((5, 4)).astype(np.float32), requires_grad=True)
    minitorch.manual_seed(5)
    y = minitorch.utils.checkpoint.checkpoint(f, x, use_reentrant=False)
    assert y.grad_fn is not None and len(calls) == 1
    y.sum().backward()
    assert len(calls) == 2  # one recomputation for the whole backward
    with_checkpoint = x.grad.clone()
    x.grad = None
    minitorch.manual_seed(5)
    model(x).sum().backward()  # Dropout in training mode: the recomputation replayed the mask
    np.testing.assert_allclose(with_checkpoint.numpy(), x.grad.numpy(), rtol=1e-6)


def test_checkpoint_non_reentrant_matches_torch_with_autograd_grad_and_kwargs():
    a = rng.standard_normal((5, 4)).astype(np.float32)
    results = []
    for lib in LIBS:
        model = _model(lib)
        x = lib.tensor(a)  # needs no grad: the parameters do

        def f(x, *, scale):
            return model(x) * scale

        lib.manual_seed(1)
        y = lib.utils.checkpoint.checkpoint(f, x, scale=2.0, use_reentrant=False)
        params = list(model.parameters())
        grads = lib.autograd.grad(y.pow(2).sum(), params)  # closed-over tensors as inputs
        results.append([y.detach().numpy()] + [g.numpy() for g in grads])
    for got, want in zip(*results) if torch else ():
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_nested_checkpoints_and_retain_graph():
    a = rng.standard_normal((3, 4))
    results = []
    for lib in LIBS:
        cp = lib.utils.checkpoint.checkpoint
        x = lib.tensor(a, requires_grad=True)

        def inner(t):
            return t.sin() * t

        def outer(t):
            return cp(inner, t.exp(), use_reentrant=False).tanh() * t

        y = cp(outer, x, use_reentrant=False).sum()
        y.backward(retain_graph=True)
        first = x.grad.clone()
        y.backward()
        results.append((first.numpy(), x.grad.numpy()))
    for got, want in zip(*results) if torch else ():
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_checkpoint_sequential_non_reentrant_beside_torch():
    a = rng.standard_normal((6, 4)).astype(np.float32)
    results = []
    for lib in LIBS:
        model = _model(lib)
        x = lib.tensor(a, requires_grad=True)
        lib.manual_seed(3)
        y = lib.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=False)
        y.sum().backward()
        results.append([x.grad.numpy(), model[0].weight.grad.numpy()])
    for got, want in zip(*results) if torch else ():
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_recomputation_that_saves_differently_raises():
    state = {"recomputing": False}

    def f(t):
        return t[:1].exp() * 1.0 if state["recomputing"] else t.exp()

    x = minitorch.ones(3, requires_grad=True)
    y = minitorch.utils.checkpoint.checkpoint(f, x, use_reentrant=False)
    state["recomputing"] = True
    with pytest.raises(minitorch.utils.checkpoint.CheckpointError, match="different metadata"):
        y.sum().backward()


def _raw_saved_run(lib):
    """The autograd-mechanics note's per-tensor hooks: pack on registration (grad mode off),
    unpack at backward, what unpack gives being what the backward uses; the errors."""
    log = []
    x = lib.tensor(rng.standard_normal(4), requires_grad=True)
    y = x.pow(2)
    saved = y.grad_fn._raw_saved_self
    assert type(saved).__name__ == "SavedTensor" and not hasattr(y.grad_fn, "_raw_saved_exponent")

    def pack(t):
        log.append(("pack", t.requires_grad, lib.is_grad_enabled()))
        return t.detach().numpy() * 3  # anything may stand for the tensor

    def unpack(packed):
        log.append(("unpack",))
        return lib.tensor(packed)

    saved.register_hooks(pack, unpack)
    errors = []
    for call in (lambda: saved.register_hooks(pack, unpack), lambda: saved.register_hooks(1, 2)):
        try:
            call()
        except (RuntimeError, TypeError) as e:
            errors.append((type(e).__name__, str(e).split(":")[0][:40]))
    log.append(("before backward",))
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    grad = x.grad.numpy().copy()
    for bad in (lambda: saved.register_hooks(pack, unpack),):
        try:
            bad()
        except RuntimeError as e:
            errors.append(("freed", str(e).startswith("Calling register_hooks on a saved tensor after it has been freed")))
    z = x.detach().exp().requires_grad_()
    w = z * 2  # mul keeps the other factor only: z's slot is a number here
    r = z.exp()
    r.grad_fn._raw_saved_result.register_hooks(lambda t: t.detach() + 1, lambda t: t)
    r.sum().backward()
    ok = np.allclose(z.grad.numpy(), np.exp(z.detach().numpy()) + 1)
    del w
    return log, errors, grad, ok, x.detach().numpy()


def test_raw_saved_register_hooks_like_torch():
    need_torch()
    got, want = _raw_saved_run(minitorch), _raw_saved_run(torch)
    assert got[0] == want[0] == [("pack", False, False), ("before backward",), ("unpack",), ("unpack",)]
    assert got[1][0] == want[1][0] and got[1][0][0] == "RuntimeError"
    assert got[1][1][0] == want[1][1][0] == "TypeError" and got[1][2] == want[1][2] == ("freed", True)
    np.testing.assert_allclose(got[2], 2 * 2 * 3 * got[4], rtol=1e-6)  # two backwards of 2 * (3 x)
    assert got[3] and want[3]


def test_raw_saved_pack_error_leaves_the_tensor():
    x = minitorch.randn(3, requires_grad=True)
    y = x.pow(2)

    def bad(t):
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        y.grad_fn._raw_saved_self.register_hooks(bad, lambda t: t)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)
    for lib in LIBS:  # layer_norm without a weight keeps None in its weight slot
        y = lib.nn.functional.layer_norm(lib.randn(2, 3, requires_grad=True), (3,))
        with pytest.raises(RuntimeError, match="saved tensor with value None is forbidden"):
            y.grad_fn._raw_saved_weight.register_hooks(lambda t: t, lambda t: t)
