"""Optimizer hooks (step pre/post, state_dict and load_state_dict pre/post, the global step
hooks), checked against PyTorch's: the same calls, in the same order, with the same effects."""
import importlib
import pickle

import numpy as np
import pytest

import minitorch


def _libs():
    torch = pytest.importorskip("torch")
    return [minitorch, torch]


def _sgd(lib, cls="SGD"):
    p = lib.nn.Parameter(lib.tensor([1.0, -2.0, 3.0]))
    p.grad = lib.tensor([0.5, 0.5, -1.0])
    return p, getattr(lib.optim, cls)([p], lr=0.1)


def _trace(lib, cls):
    """Registers every hook, runs a step, a state_dict and a load, and returns the log."""
    log = []
    p, opt = _sgd(lib, cls)
    optimizer = importlib.import_module(lib.__name__ + ".optim.optimizer")
    g1 = optimizer.register_optimizer_step_pre_hook(lambda o, a, k: log.append(("gpre", a[1:], k)))
    g2 = optimizer.register_optimizer_step_post_hook(lambda o, a, k: log.append(("gpost", a[1:], k)))
    try:
        opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", o is opt, a[0] is opt, a[1:], k)))
        opt.register_step_post_hook(lambda o, a, k: log.append(("post", a[1:], k)))
        opt.register_state_dict_pre_hook(lambda o: log.append("sd_pre"))
        opt.register_state_dict_pre_hook(lambda o: log.append("sd_pre_first"), prepend=True)

        def sd_post(o, sd):
            log.append(("sd_post", sorted(sd)))
            sd["extra"] = 1
            return sd

        opt.register_state_dict_post_hook(sd_post)
        opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(("load_pre", sd.get("extra"))))
        opt.register_load_state_dict_post_hook(lambda o: log.append("load_post"))
        opt.step()
        opt.step(closure=None)
        sd = opt.state_dict()
        log.append(("extra" in sd,))
        opt.load_state_dict(sd)
    finally:
        g1.remove()
        g2.remove()
    return log, p.detach().numpy()


@pytest.mark.parametrize("cls", ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "NAdam"])
def test_hook_order_and_arguments_as_torch(cls):
    mine, torch = _libs()
    log_m, p_m = _trace(mine, cls)
    log_t, p_t = _trace(torch, cls)
    assert log_m == log_t
    np.testing.assert_allclose(p_m, p_t, rtol=1e-6)


def test_pre_hook_replaces_arguments_and_bad_return_raises():
    for lib in _libs():
        p, opt = _sgd(lib)
        calls = []

        def closure():
            calls.append(1)
            return 7.0

        h = opt.register_step_pre_hook(lambda o, a, k: ((o,), {"closure": closure}))
        assert opt.step() == 7.0 and calls == [1]
        h.remove()
        opt.register_step_pre_hook(lambda o, a, k: 3)
        with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\), but got 3"):
            opt.step()


def test_removed_hooks_do_not_run_and_hooks_are_not_pickled():
    for lib in _libs():
        p, opt = _sgd(lib)
        log = []
        h = opt.register_step_post_hook(lambda o, a, k: log.append(1))
        opt.step()
        h.remove()
        opt.step()
        assert log == [1]
        opt.register_step_pre_hook(lambda o, a, k: log.append(2))
        clone = pickle.loads(pickle.dumps(opt))
        clone.step()
        assert log == [1] and len(clone._optimizer_step_pre_hooks) == 0


def test_load_pre_hook_result_is_loaded():
    for lib in _libs():
        p, opt = _sgd(lib)
        sd = opt.state_dict()
        changed = {"state": sd["state"], "param_groups": [dict(sd["param_groups"][0], lr=0.5)]}
        opt.register_load_state_dict_pre_hook(lambda o, s: changed)
        opt.load_state_dict(sd)
        assert opt.param_groups[0]["lr"] == 0.5


def test_subclass_calling_base_step_runs_hooks_once():
    class Twice(minitorch.optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    p, opt = _sgd(minitorch)
    opt = Twice([p], lr=0.1)
    log = []
    opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: log.append("post"))
    opt.step()
    assert log == ["pre", "post"]
    np.testing.assert_allclose(p.detach().numpy(), [0.95, -2.05, 3.1], rtol=1e-6)
