"""Hooks on every module (nn.modules.module.register_module_*_hook) and always_call forward hooks,
against PyTorch: the order of calls, what each hook sees and returns, removal, and hooks that run
when forward raises."""
import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")


def _log_run(lib):
    mm = lib.nn.modules.module
    log = []
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU())
    hs = [
        mm.register_module_forward_pre_hook(lambda m, a: log.append(("gpre", type(m).__name__))),
        mm.register_module_forward_hook(lambda m, a, o: log.append(("gfwd", type(m).__name__, tuple(o.shape)))),
        mm.register_module_full_backward_hook(
            lambda m, gi, go: log.append(("gbwd", type(m).__name__, [None if g is None else tuple(g.shape) for g in gi]))),
        mm.register_module_full_backward_pre_hook(lambda m, go: log.append(("gbpre", type(m).__name__))),
        net[0].register_forward_hook(lambda m, a, o: log.append(("own", type(m).__name__))),
    ]
    x = lib.ones(4, 3, requires_grad=True)
    net(x).sum().backward()
    for h in hs[:4]:
        h.remove()
    log.append("removed")
    net(x)
    hs[4].remove()
    return log


def test_global_hooks_run_for_every_module_in_pytorchs_order():
    assert _log_run(minitorch) == _log_run(torch)


def test_global_forward_hook_can_replace_the_output_and_takes_kwargs():
    for lib in (minitorch, torch):
        mm = lib.nn.modules.module
        seen = []
        h1 = mm.register_module_forward_hook(lambda m, a, kw, o: seen.append(sorted(kw)) or o * 2, with_kwargs=True)
        h2 = mm.register_module_forward_pre_hook(lambda m, a: (a[0] + 1,))
        try:
            out = lib.nn.Identity()(lib.ones(2))
        finally:
            h1.remove()
            h2.remove()
        np.testing.assert_array_equal(np.asarray(out.tolist()), [4.0, 4.0])
        assert seen == [[]]
        np.testing.assert_array_equal(np.asarray(lib.nn.Identity()(lib.ones(2)).tolist()), [1.0, 1.0])


class _Boom:
    def __init__(self, lib):
        class Boom(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        self.module = Boom()


@pytest.mark.parametrize("where", ["global", "module"])
def test_always_call_hooks_run_when_forward_raises(where):
    logs = []
    for lib in (minitorch, torch):
        log = []
        m = _Boom(lib).module
        reg = lib.nn.modules.module.register_module_forward_hook if where == "global" else m.register_forward_hook
        h1 = reg(lambda mod, a, o: log.append(("always", o)), always_call=True)
        h2 = reg(lambda mod, a, o: log.append(("plain", o)))
        with pytest.raises(ValueError, match="boom"):
            m(lib.ones(1))
        h1.remove()
        h2.remove()
        with pytest.raises(ValueError, match="boom"):
            m(lib.ones(1))
        logs.append(log)
    assert logs[0] == logs[1] == [("always", None)]
