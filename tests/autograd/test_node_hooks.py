"""Hooks on autograd nodes (torch.autograd.graph.Node): grad_fn.register_prehook(fn), fn(grad_outputs),
and grad_fn.register_hook(fn), fn(grad_inputs, grad_outputs), each able to replace its first
argument; their handles' remove(); the errors for a bad return. Compared with torch: what the
hooks see, and the gradients that come out."""
import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def seen_of(args):
    return [None if g is None else np.array(g.detach().tolist()) for g in args]


def run(lib, register, *, remove=False):
    """x (a leaf) -> a = x * 2 -> y = exp(a) -> sum; register(lib, y.grad_fn, log) adds hooks.
    Returns x's gradient and what the hooks saw."""
    x = lib.tensor(X, requires_grad=True)
    y = (x * 2).exp()
    log = []
    handles = register(lib, y.grad_fn, log)
    if remove:
        for h in handles:
            h.remove()
    y.sum().backward()
    return np.array(x.grad.tolist()), [(name, [seen_of(a) for a in args]) for name, args in log]


def pre_scales(lib, node, log):
    def pre(grad_outputs):
        log.append(("pre", (grad_outputs,)))
        return (grad_outputs[0] * 10,)
    return [node.register_prehook(pre)]


def post_adds(lib, node, log):
    def post(grad_inputs, grad_outputs):
        log.append(("post", (grad_inputs, grad_outputs)))
        return (grad_inputs[0] + 1,)
    return [node.register_hook(post)]


def both_in_order(lib, node, log):
    def first(g):
        log.append(("first", (g,)))
    def second(g):
        log.append(("second", (g,)))
        return (g[0] * 3,)
    def observe(gi, go):
        log.append(("observe", (gi, go)))
    return [node.register_prehook(first), node.register_prehook(second), node.register_hook(observe)]


def on_accumulate_grad(lib, node, log):
    acc = node.next_functions[0][0].next_functions[0][0]
    assert type(acc).__name__ == "AccumulateGrad"

    def pre(g):
        log.append(("pre", (g,)))
        return (g[0] * 0.5,)
    def post(gi, go):
        log.append(("post", (gi, go)))
    return [acc.register_prehook(pre), acc.register_hook(post)]


@pytest.mark.parametrize("register", [pre_scales, post_adds, both_in_order, on_accumulate_grad])
@pytest.mark.parametrize("remove", [False, True])
def test_hooks_like_torch(register, remove):
    got_grad, got_log = run(minitorch, register, remove=remove)
    want_grad, want_log = run(torch, register, remove=remove)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6)
    assert [n for n, _ in got_log] == [n for n, _ in want_log]
    for (_, got), (_, want) in zip(got_log, want_log):
        for g, w in zip(got, want):
            assert len(g) == len(w)
            for a, b in zip(g, w):
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_grad_inputs_of_an_input_without_grad_is_none():
    for lib in (minitorch, torch):
        a = lib.ones(2, requires_grad=True)
        z = a * lib.full((2,), 3.0)
        seen = []
        z.grad_fn.register_hook(lambda gi, go: seen.append((gi[0] is None, gi[1] is None, len(go))))
        z.sum().backward()
        assert seen == [(False, True, 1)]


BAD_PRE = {
    "too_many": lambda lib: lambda g: (g[0], g[0]),
    "not_a_tuple": lambda lib: lambda g: g[0],
    "a_number": lambda lib: lambda g: 5,
    "other_size": lambda lib: lambda g: (lib.ones(7),),
}
BAD_POST = {
    "too_many": lambda lib: lambda gi, go: (gi[0], gi[0]),
    "not_a_tuple": lambda lib: lambda gi, go: gi[0],
    "other_size": lambda lib: lambda gi, go: (lib.ones(7),),
}


@pytest.mark.parametrize("kind,name", [("pre", n) for n in BAD_PRE] + [("post", n) for n in BAD_POST])
def test_bad_returns_raise_like_torch(kind, name):
    def attempt(lib):
        x = lib.ones(3, requires_grad=True)
        y = (x * 2).exp()
        if kind == "pre":
            y.grad_fn.register_prehook(BAD_PRE[name](lib))
        else:
            y.grad_fn.register_hook(BAD_POST[name](lib))
        y.sum().backward()

    with pytest.raises(Exception) as want:
        attempt(torch)
    with pytest.raises(want.type) as got:
        attempt(minitorch)
    assert str(got.value) == str(want.value)


def test_nodes_are_graph_nodes():
    y = minitorch.ones(2, requires_grad=True) * 2
    assert isinstance(y.grad_fn, minitorch.autograd.graph.Node)
    assert isinstance(y.grad_fn, minitorch._C.Node)


def test_hook_error_propagates_and_graph_survives():
    x = minitorch.ones(2, requires_grad=True)
    y = x.exp()

    def boom(g):
        raise ValueError("from the hook")
    h = y.grad_fn.register_prehook(boom)
    with pytest.raises(ValueError, match="from the hook"):
        y.sum().backward(retain_graph=True)
    h.remove()
    y.sum().backward()
    np.testing.assert_allclose(np.array(x.grad.tolist()), np.exp([1.0, 1.0]), rtol=1e-6)


def test_hooks_go_with_their_node():
    import gc

    gc.collect()
    before = minitorch._C._live_objects()
    for _ in range(3):
        x = minitorch.ones(3, requires_grad=True)
        y = (x * 2).exp()
        y.grad_fn.register_prehook(lambda g: (g[0] * 2,))
        y.grad_fn.register_hook(lambda gi, go: None)
        y.sum().backward()
        del x, y
    gc.collect()
    assert minitorch._C._live_objects() == before
