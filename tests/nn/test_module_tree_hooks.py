"""nn.Module's tree walks, registration, state_dict prefixes and strict=False reporting, forward
pre-hooks and full backward hooks, each built the same way in both libraries and compared with
PyTorch: names, orders, reprs, error texts, and the gradients the hooks see and return."""
import warnings

import numpy as np
import pytest

import minitorch as mt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


def net(lib):
    """A tree with a shared child (reached twice), a non-persistent buffer and a None child."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, shared):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.act = nn.ReLU()
            self.shared = shared
            self.register_buffer("steps", lib.zeros(1, dtype=lib.int64))
            self.register_buffer("cache", lib.ones(2), persistent=False)

        def forward(self, x):
            return self.shared(self.act(self.fc(x)))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            shared = nn.Linear(3, 3)
            self.a = Block(shared)
            self.b = Block(shared)
            self.head = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
            self.none = None
            self.register_module("extra", nn.Identity())

        def forward(self, x):
            return self.head(self.b(self.a(x)))

    return Net()


def same_weights(m, t):
    m.load_state_dict({k: mt.tensor(v.numpy()) for k, v in t.state_dict().items()})


def test_tree_walks_match_torch():
    m, t = net(mt), net(torch)
    for kw in ({}, {"prefix": "root"}, {"remove_duplicate": False}, {"memo": None, "prefix": "p"}):
        assert [n for n, _ in m.named_modules(**kw)] == [n for n, _ in t.named_modules(**kw)], kw
    assert [type(x).__name__ for x in m.modules()] == [type(x).__name__ for x in t.modules()]
    assert [n for n, _ in m.named_children()] == [n for n, _ in t.named_children()]
    assert [type(x).__name__ for x in m.children()] == [type(x).__name__ for x in t.children()]
    memo = {m.a}
    tmemo = {t.a}
    assert [n for n, _ in m.named_modules(memo)] == [n for n, _ in t.named_modules(tmemo)]
    visited, tvisited = [], []
    assert m.apply(lambda x: visited.append(type(x).__name__)) is m
    t.apply(lambda x: tvisited.append(type(x).__name__))
    assert visited == tvisited
    # apply as PyTorch users use it: initialising every Linear
    m.apply(lambda x: mt.nn.init.constant_(x.weight, 0.5) if isinstance(x, mt.nn.Linear) else None)
    assert all(float(p.min()) == 0.5 for n, p in m.named_parameters() if n.endswith("weight"))


def test_buffers_state_dict_prefix_keep_vars():
    m, t = net(mt), net(torch)
    assert list(m.state_dict()) == list(t.state_dict())
    assert "a.cache" not in m.state_dict() and "a.cache" in dict(m.named_buffers())
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in t.named_buffers()]
    for kw in ({"prefix": "model."}, {"keep_vars": True}, {"prefix": "x.", "keep_vars": True}):
        sd, tsd = m.state_dict(**kw), t.state_dict(**kw)
        assert list(sd) == list(tsd)
        assert [v.requires_grad for v in sd.values()] == [v.requires_grad for v in tsd.values()]
    sd = m.state_dict(keep_vars=True)
    assert sd["a.fc.weight"] is m.a.fc.weight
    assert m.state_dict()["a.fc.weight"].grad_fn is None
    assert list(m.state_dict()._metadata) == list(t.state_dict()._metadata)


def test_load_state_dict_strict_false_reports_keys():
    m, t = net(mt), net(torch)
    sd = {k: mt.tensor(v.numpy()) for k, v in t.state_dict().items()}
    tsd = dict(t.state_dict())
    for d in (sd, tsd):
        d.pop("a.fc.bias")
        d.pop("head.0.weight")
    sd["unknown.x"], tsd["unknown.x"] = mt.zeros(1), torch.zeros(1)
    sd["a.fc.extra"], tsd["a.fc.extra"] = mt.zeros(1), torch.zeros(1)
    res, tres = m.load_state_dict(sd, strict=False), t.load_state_dict(tsd, strict=False)
    assert res.missing_keys == tres.missing_keys and res.unexpected_keys == tres.unexpected_keys
    assert repr(res) == repr(tres).replace("torch", "minitorch") or repr(res) == repr(tres)
    assert type(res).__name__ == type(tres).__name__ == "_IncompatibleKeys"
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(tsd)
    assert str(e.value) == str(te.value)
    ok = m.load_state_dict({k: mt.tensor(v.numpy()) for k, v in t.state_dict().items()})
    assert repr(ok) == repr(t.load_state_dict(t.state_dict())) == "<All keys matched successfully>"
    # a shape mismatch is an error even without strict
    bad = {k: mt.tensor(v.numpy()) for k, v in t.state_dict().items()}
    tbad = dict(t.state_dict())
    bad["head.0.bias"], tbad["head.0.bias"] = mt.zeros(5), torch.zeros(5)
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(bad, strict=False)
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(tbad, strict=False)
    assert str(e.value).replace("minitorch.Size", "torch.Size") == str(te.value)


def errors_alike(fn):
    with pytest.raises(Exception) as e:
        fn(mt)
    with pytest.raises(Exception) as te:
        fn(torch)
    assert type(e.value) is type(te.value) and str(e.value) == str(te.value)


def test_get_submodule_parameter_buffer():
    m, t = net(mt), net(torch)
    assert m.get_submodule("head.0") is m.head[0]
    assert m.get_submodule("") is m
    assert m.get_parameter("a.fc.weight") is m.a.fc.weight
    assert m.get_parameter("a.shared.bias") is m.b.shared.bias
    assert m.get_buffer("b.steps") is m.b.steps
    assert m.get_buffer("b.cache") is m.b.cache
    nets = {mt: m, torch: t}
    errors_alike(lambda lib: nets[lib].get_submodule("a.nope"))
    errors_alike(lambda lib: nets[lib].get_submodule("a.fc.weight"))
    errors_alike(lambda lib: nets[lib].get_parameter("a.fc.nope"))
    errors_alike(lambda lib: nets[lib].get_parameter("a.steps"))
    errors_alike(lambda lib: nets[lib].get_parameter("a.act"))
    errors_alike(lambda lib: nets[lib].get_buffer("a.fc.weight"))
    errors_alike(lambda lib: nets[lib].get_buffer("a.zzz"))
    errors_alike(lambda lib: nets[lib].register_module("a.b", lib.nn.ReLU()))
    errors_alike(lambda lib: nets[lib].register_module("x", 3))
    errors_alike(lambda lib: nets[lib].register_buffer("y", 3))


def test_forward_pre_hook_matches_torch():
    outs = []
    for lib in (mt, torch):
        lin = lib.nn.Linear(2, 2)
        lin.weight.data = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        lin.bias.data = lib.zeros(2)
        h = lin.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        lin.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] + 1,), kwargs), with_kwargs=True)
        y1 = lin(lib.ones(1, 2))
        h.remove()
        y2 = lin(lib.ones(1, 2))
        outs.append((y1.tolist(), y2.tolist()))
    assert outs[0] == outs[1]


def run_backward_hooks(lib, x, *, modify=False, pre=False, input_grad=True):
    """A Linear with a full backward hook (and pre-hook) inside a Sequential; returns what the
    hooks saw and the input's and weight's gradients."""
    nn = lib.nn
    lin = nn.Linear(3, 2)
    lin.weight.data = lib.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 7)
    lin.bias.data = lib.tensor([0.5, -0.5])
    model = nn.Sequential(nn.Tanh(), lin, nn.Sigmoid())
    seen = []

    def hook(mod, grad_input, grad_output):
        seen.append(("hook", [None if g is None else g.tolist() for g in grad_input], [g.tolist() for g in grad_output]))
        if modify:
            return tuple(None if g is None else g * 10 for g in grad_input)

    def pre_hook(mod, grad_output):
        seen.append(("pre", [g.tolist() for g in grad_output]))
        return (grad_output[0] * 3,)

    lin.register_full_backward_hook(hook)
    if pre:
        lin.register_full_backward_pre_hook(pre_hook)
    xt = lib.tensor(x, requires_grad=input_grad)
    out = model(xt)
    (out * lib.tensor([1.0, 2.0])).sum().backward()
    return seen, (xt.grad.tolist() if input_grad else None), lin.weight.grad.tolist()


@pytest.mark.parametrize("modify", [False, True])
@pytest.mark.parametrize("pre", [False, True])
@pytest.mark.parametrize("input_grad", [True, False])
def test_full_backward_hook_matches_torch(modify, pre, input_grad):
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = run_backward_hooks(mt, x, modify=modify, pre=pre, input_grad=input_grad)
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        want = run_backward_hooks(torch, x, modify=modify, pre=pre, input_grad=input_grad)
    assert [str(a.message) for a in w] == [str(a.message) for a in tw]
    assert [s[0] for s in got[0]] == [s[0] for s in want[0]]
    for g, t in zip(got, want):
        np.testing.assert_allclose(np.array(_flat(g), dtype=float), np.array(_flat(t), dtype=float), rtol=1e-5, atol=1e-6)


def _flat(x):
    if x is None:
        return [np.nan]
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _flat(item)]
    if isinstance(x, str):
        return []
    return [x]


def multi_io(lib):
    class Two(lib.nn.Module):
        def forward(self, a, k, b):
            return a * b, a + k, "tag"

    m = Two()
    seen = []
    m.register_full_backward_hook(
        lambda mod, gi, go: seen.append(([None if g is None else g.tolist() for g in gi],
                                         [None if g is None else g.tolist() for g in go]))
    )
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0])
    p, s, tag = m(a, 5, b)
    (p * 2 + s * 3).sum().backward()
    return seen, a.grad.tolist(), p.grad_fn.name(), tag


def test_full_backward_hook_several_inputs_and_outputs():
    assert multi_io(mt) == multi_io(torch)


def test_backward_hook_errors_and_removal():
    def wrong(lib):
        lin = lib.nn.Linear(2, 2)
        lin.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        lin(lib.ones(1, 2, requires_grad=True)).sum().backward()

    errors_alike(wrong)

    def wrong_pre(lib):
        lin = lib.nn.Linear(2, 2)
        lin.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        lin(lib.ones(1, 2, requires_grad=True)).sum().backward()

    errors_alike(wrong_pre)
    calls = []
    lin = mt.nn.Linear(2, 2)
    h = lin.register_full_backward_hook(lambda *a: calls.append(1))
    lin(mt.ones(1, 2, requires_grad=True)).sum().backward()
    h.remove()
    y = lin(mt.ones(1, 2, requires_grad=True))
    assert y.grad_fn.name() == "AddmmBackward0"
    y.sum().backward()
    assert calls == [1]
    # a hook on the output only: nothing fires when the output takes no part in the loss
    lin.register_full_backward_hook(lambda *a: calls.append(2))
    x = mt.ones(1, 2, requires_grad=True)
    lin(x)
    (x * 2).sum().backward()
    assert calls == [1]
    with mt.no_grad():
        assert lin(x).grad_fn is None
