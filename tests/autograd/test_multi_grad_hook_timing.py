"""register_multi_grad_hook: when its function runs relative to the other hooks of the same
backward pass (mode "all": as soon as the gradients of all the given tensors that the pass computes
are ready, not at its end), and what it gets, next to PyTorch."""
import pytest

import minitorch

try:
    import torch
except ImportError:
    torch = None

LIBS = [minitorch] + ([torch] if torch is not None else [])


def _graph(lib):
    """a -> b -> c -> d (a chain), e = a * 5 beside it, f reached by nothing."""
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    c = b * 3
    e = a * 5
    d = (c + e).sum()
    f = lib.tensor([3.0], requires_grad=True)
    return a, b, c, d, e, f


def _record(lib, watched, run, node_hooks=True):
    """The events of run(tensors): each tensor hook, node prehook and the multi-grad hook."""
    events = []
    ts = _graph(lib)
    a, b, c, d, e, f = ts
    names = dict(zip("abcdef", ts))
    for name in "abce":
        names[name].register_hook(lambda g, name=name: events.append(f"hook {name} {g.tolist()}"))
    if node_hooks:
        b.grad_fn.register_prehook(lambda go: events.append("node of b runs"))
        a_node_prehook = lambda go: events.append("a accumulates")  # noqa: E731
        lib.autograd.graph.get_gradient_edge(a).node.register_prehook(a_node_prehook)

    def multi(grads):
        events.append("multi " + " ".join("None" if g is None else str(g.tolist()) for g in grads))

    handle = lib.autograd.graph.register_multi_grad_hook([names[n] for n in watched], multi)
    run(names)
    handle.remove()
    run(names)  # removed: no more multi events
    return events


RUNS = {
    "backward": lambda t: t["d"].backward(retain_graph=True),
    "grad_of_a": lambda t: lib_grad(t, "a"),
    "backward_inputs_b": lambda t: t["d"].backward(inputs=[t["b"]], retain_graph=True),
}


def lib_grad(t, name):
    lib = minitorch if isinstance(t["d"], minitorch.Tensor) else torch
    lib.autograd.grad(t["d"], [t[name]], retain_graph=True)


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
@pytest.mark.parametrize("watched", ["bc", "cb", "ce", "bf", "c", "be"])
@pytest.mark.parametrize("run", list(RUNS))
def test_all_mode_runs_when_its_gradients_are_ready_as_torch(watched, run):
    # backward(inputs=[b]) runs b's node in PyTorch (its gradient for a is dropped) and not in
    # minitorch, which stops at b: the node hooks are left out of that comparison
    node_hooks = run != "backward_inputs_b"
    got = _record(minitorch, watched, RUNS[run], node_hooks)
    want = _record(torch, watched, RUNS[run], node_hooks)
    assert got == want


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_all_mode_before_later_nodes(lib):
    events = []
    a, b, c, d, e, f = _graph(lib)
    a.register_hook(lambda g: events.append("a"))
    lib.autograd.graph.register_multi_grad_hook((b, c), lambda grads: events.append(("multi", len(grads))))
    d.backward()
    assert events == [("multi", 2), "a"]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_any_mode_and_bad_mode(lib):
    seen = []
    a, b, c, d, e, f = _graph(lib)
    lib.autograd.graph.register_multi_grad_hook((b, c, f), lambda g: seen.append(g.tolist()), mode="any")
    d.backward(retain_graph=True)
    d.backward()
    assert seen == [[1.0, 1.0], [1.0, 1.0]]  # once per pass, c's gradient (the first ready)
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        lib.autograd.graph.register_multi_grad_hook((a,), print, mode="some")


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_engine_queries_outside_a_backward(lib):
    a = lib.ones(2, requires_grad=True)
    assert lib._C._current_graph_task_id() == -1
    with pytest.raises(RuntimeError, match="expects an grad_fn, but got NoneType"):
        lib._C._will_engine_execute_node(None)
    with pytest.raises(RuntimeError, match="should only be called during the backward pass"):
        lib._C._will_engine_execute_node((a * 2).grad_fn)
    ids = []
    b = a * 2
    b.register_hook(lambda g: ids.append(lib._C._current_graph_task_id()))
    b.sum().backward(retain_graph=True)
    b.sum().backward()
    assert len(ids) == 2 and ids[0] != ids[1] and min(ids) >= 0
