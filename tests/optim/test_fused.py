"""The optimizer-step ops behind minitorch.optim (_fused_sgd_, _fused_adam_, _fused_adamw_,
_fused_rmsprop_): one op per step, checks before any write, version counters, zero_grad; none of
these need PyTorch (they run in the sanitizer build too)."""
import numpy as np
import pytest

import minitorch
from minitorch import _C, _journey

OPTIMIZERS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9}, "_fused_sgd_"),
    ("Adam", {"amsgrad": True}, "_fused_adam_"),
    ("AdamW", {}, "_fused_adamw_"),
    ("RMSprop", {"centered": True, "momentum": 0.5}, "_fused_rmsprop_"),
]


def params_with_grads(n, dtype=minitorch.float32):
    ps = [minitorch.nn.Parameter(minitorch.randn(3, k + 1, dtype=dtype)) for k in range(n)]
    for p in ps:
        p.grad = minitorch.randn(*p.shape, dtype=dtype)
    return ps


@pytest.mark.parametrize("name,kwargs,fused", OPTIMIZERS)
def test_one_fused_call_per_step(name, kwargs, fused, monkeypatch):
    calls = []
    original = getattr(_C, fused)

    def counting(params, *args, **kwargs):
        calls.append(len(params))
        return original(params, *args, **kwargs)

    monkeypatch.setattr(_C, fused, counting)
    ps = params_with_grads(7)
    opt = getattr(minitorch.optim, name)(ps, **kwargs)
    for _ in range(3):
        opt.step()
    assert calls == [7, 7, 7]


@pytest.mark.parametrize("name,kwargs,fused", OPTIMIZERS)
def test_journey_shows_the_op_and_its_kernel(name, kwargs, fused):
    ps = params_with_grads(5)
    opt = getattr(minitorch.optim, name)(ps, **kwargs)
    opt.step()  # makes the state (zeros_like: ops)
    _, events = _journey.record(opt.step)
    assert [e.label for e in events] == [f"Op::{fused}", f"Kernel::mt_cpu_{fused}"]


@pytest.mark.parametrize("name,kwargs,fused", OPTIMIZERS)
def test_step_bumps_versions_and_skips_none_grads(name, kwargs, fused):
    ps = params_with_grads(3)
    ps[1].grad = None
    before = [p.detach().numpy().copy() for p in ps]
    versions = [p._version for p in ps]
    opt = getattr(minitorch.optim, name)(ps, **kwargs)
    opt.step()
    assert not np.array_equal(ps[0].detach().numpy(), before[0])
    np.testing.assert_array_equal(ps[1].detach().numpy(), before[1])
    assert ps[1] not in opt.state
    assert [p._version for p in ps] == [versions[0] + 1, versions[1], versions[2] + 1]


def test_sgd_against_numpy():
    """SGD with momentum, dampening and weight decay, computed in NumPy float64."""
    rng = np.random.default_rng(0)
    p0, grads = rng.standard_normal(6), [rng.standard_normal(6) for _ in range(4)]
    p = minitorch.nn.Parameter(minitorch.tensor(p0, dtype=minitorch.float64))
    opt = minitorch.optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.01)
    ref, buf = p0.copy(), None
    for g in grads:
        p.grad = minitorch.tensor(g, dtype=minitorch.float64)
        opt.step()
        d = g + 0.01 * ref
        buf = d.copy() if buf is None else 0.9 * buf + 0.8 * d
        ref = ref - 0.1 * buf
    np.testing.assert_allclose(p.detach().numpy(), ref, rtol=1e-14)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    ps = params_with_grads(3)
    ps[2].grad = None
    grads = [p.grad for p in ps[:2]]
    opt = minitorch.optim.SGD(ps, lr=0.1)
    opt.zero_grad(set_to_none=set_to_none)
    assert ps[2].grad is None
    for p, g in zip(ps[:2], grads):
        if set_to_none:
            assert p.grad is None
        else:
            assert p.grad is not None and not p.grad.requires_grad
            np.testing.assert_array_equal(p.grad.numpy(), np.zeros(p.shape, np.float32))
            np.testing.assert_array_equal(g.numpy(), np.zeros(p.shape, np.float32))  # in place


def test_zero_grad_default_sets_none():
    ps = params_with_grads(1)
    minitorch.optim.Adam(ps).zero_grad()
    assert ps[0].grad is None


def test_bad_calls_raise_and_write_nothing():
    p, q = minitorch.ones(3), minitorch.ones(2, 2)
    g3, g22 = minitorch.ones(3), minitorch.ones(2, 2)
    s1, s2 = minitorch.tensor(0.0), minitorch.tensor(0.0)
    z = minitorch.zeros_like
    hyper = {"lr": 0.1, "beta1": 0.9, "beta2": 0.999, "weight_decay": 0.0, "eps": 1e-8,
             "amsgrad": False, "maximize": False}
    sgd_hyper = {"weight_decay": 0.0, "momentum": 0.9, "lr": 0.1, "dampening": 0.0,
                 "nesterov": False, "maximize": False, "is_first_step": True}
    rms_hyper = {"lr": 0.1, "alpha": 0.9, "eps": 1e-8, "weight_decay": 0.0, "momentum": 0.0,
                 "centered": True, "maximize": False}

    def adam_call(params, grads, avgs, sqs, steps, **kw):
        return _C._fused_adam_(params, grads, avgs, sqs, [], steps, **{**hyper, **kw})

    bad = [
        (RuntimeError, "has shape [2, 2] but params[0] has shape [3]",
         lambda: adam_call([p, q], [g22, g22], [z(p), z(q)], [z(p), z(q)], [s1, s2])),
        (RuntimeError, "expected 2 grads",
         lambda: adam_call([p, q], [g3], [z(p), z(q)], [z(p), z(q)], [s1, s2])),
        (RuntimeError, "dtype float64 but params[1] has dtype float32",
         lambda: adam_call([p, q], [g3, g22], [z(p), z(q, dtype=minitorch.float64)], [z(p), z(q)], [s1, s2])),
        (RuntimeError, "state_steps[1] must be a one-element float tensor",
         lambda: adam_call([p, q], [g3, g22], [z(p), z(q)], [z(p), z(q)], [s1, minitorch.zeros(2)])),
        (RuntimeError, "max_exp_avg_sqs are needed",
         lambda: adam_call([p, q], [g3, g22], [z(p), z(q)], [z(p), z(q)], [s1, s2], amsgrad=True)),
        (RuntimeError, "params[0] has dtype int64",
         lambda: adam_call([minitorch.ones(3, dtype=minitorch.int64)], [g3], [z(p)], [z(p)], [s1])),
        (TypeError, "expected Tensor as element 1 in argument 1",
         lambda: adam_call([p, q], [g3, 1.0], [z(p), z(q)], [z(p), z(q)], [s1, s2])),
        (TypeError, "argument 'exp_avgs' (position 3) must be tuple of Tensors, not NoneType",
         lambda: adam_call([p, q], [g3, g22], None, [z(p), z(q)], [s1, s2])),
        (TypeError, "argument 'lr' must be float, not str",
         lambda: adam_call([p], [g3], [z(p)], [z(p)], [s1], lr="0.1")),
        (RuntimeError, "momentum_buffer_list are needed",
         lambda: _C._fused_sgd_([p], [g3], [], **sgd_hyper)),
        (RuntimeError, "grad_avgs are needed",
         lambda: _C._fused_rmsprop_([p], [g3], [z(p)], [], [], [s1], **rms_hyper)),
        (RuntimeError, "more than one element of the written-to tensor",
         lambda: _C._fused_sgd_([minitorch.ones(1).expand(3)], [g3], [], **{**sgd_hyper, "momentum": 0.0})),
    ]
    for cls, message, call in bad:
        with pytest.raises(cls) as info:
            call()
        assert message in str(info.value)
    # every check ran before any write: nothing moved, no step was counted
    np.testing.assert_array_equal(p.numpy(), np.ones(3, np.float32))
    np.testing.assert_array_equal(q.numpy(), np.ones((2, 2), np.float32))
    assert s1.item() == 0 and s2.item() == 0


def test_ops_return_none_and_take_positional_lists():
    p = minitorch.ones(3)
    assert _C._fused_sgd_([p], [minitorch.ones(3)], [], weight_decay=0.0, momentum=0.0, lr=0.5,
                          dampening=0.0, nesterov=False, maximize=False, is_first_step=False) is None
    np.testing.assert_array_equal(p.numpy(), np.full(3, 0.5, np.float32))


def test_adamw_is_adam_on_the_shrunk_parameter():
    """_fused_adamw_ decays the parameter (p *= 1 - lr * wd) and then takes Adam's step."""
    hyper = {"lr": 0.1, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "amsgrad": False, "maximize": False}
    g = minitorch.tensor([0.5, -1.0, 2.0], dtype=minitorch.float64)
    p = minitorch.tensor([1.0, 2.0, 3.0], dtype=minitorch.float64)
    q = p * (1 - 0.1 * 0.25)
    state = [[minitorch.zeros(3, dtype=minitorch.float64) for _ in range(2)] + [minitorch.tensor(0.0)]
             for _ in range(2)]
    _C._fused_adamw_([p], [g], [state[0][0]], [state[0][1]], [], [state[0][2]], weight_decay=0.25, **hyper)
    _C._fused_adam_([q], [g], [state[1][0]], [state[1][1]], [], [state[1][2]], weight_decay=0.0, **hyper)
    np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-15)
    assert state[0][2].item() == state[1][2].item() == 1.0


def test_empty_lists_and_empty_tensors():
    _C._fused_adam_([], [], [], [], [], [], lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0,
                    eps=1e-8, amsgrad=False, maximize=False)
    e = minitorch.ones(0, 3)
    _C._fused_sgd_([e], [minitorch.ones(0, 3)], [], weight_decay=0.0, momentum=0.0, lr=0.1,
                   dampening=0.0, nesterov=False, maximize=False, is_first_step=False)
    assert e.shape == (0, 3)


def test_large_tensor_parallel_update():
    """Enough elements for the threaded path: every element is updated, as in a small one."""
    n = 200_003
    p = minitorch.nn.Parameter(minitorch.ones(n, dtype=minitorch.float64))
    p.grad = minitorch.arange(n, dtype=minitorch.float64)
    opt = minitorch.optim.RMSprop([p], lr=0.01, momentum=0.9)
    opt.step()
    g = np.arange(n, dtype=np.float64)
    avg = np.sqrt(0.01 * g * g) + 1e-8
    np.testing.assert_allclose(p.detach().numpy(), 1 - 0.01 * g / avg, rtol=1e-12)


def test_state_dict_refers_to_params_by_index():
    ps = params_with_grads(3)
    opt = minitorch.optim.Adam([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.5}], lr=0.1)
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert [g["lr"] for g in sd["param_groups"]] == [0.1, 0.5]
    assert sorted(sd["state"]) == [0, 1, 2]
    assert sorted(sd["state"][0]) == ["exp_avg", "exp_avg_sq", "step"]
    assert sd["state"][2]["step"].item() == 1.0


def test_load_state_dict_casts_state_to_the_params_dtype():
    ps = params_with_grads(1, dtype=minitorch.float64)
    opt = minitorch.optim.SGD(ps, lr=0.1, momentum=0.9)
    opt.load_state_dict({"state": {0: {"momentum_buffer": minitorch.ones(3, 1)}},
                         "param_groups": [{**opt.state_dict()["param_groups"][0]}]})
    assert opt.state[ps[0]]["momentum_buffer"].dtype == minitorch.float64
    opt.step()
    np.testing.assert_allclose(opt.state[ps[0]]["momentum_buffer"].numpy(), 0.9 + ps[0].grad.numpy())


def test_closure_and_pickling():
    import pickle

    ps = params_with_grads(2)
    opt = minitorch.optim.AdamW(ps)
    assert opt.step(lambda: 3.5) == 3.5
    opt2 = pickle.loads(pickle.dumps(opt))
    assert repr(opt2) == repr(opt)
    assert len(opt2.state) == 2


F32 = np.float32


def adam_numpy_f32(p, g, m, v, step, lr, beta1, beta2, eps, weight_decay, decoupled, maximize,
                   vmax=None):
    """One float32 Adam/AdamW step in NumPy, in core/optim_math.h's order of roundings."""
    g = -g if maximize else g
    if weight_decay and decoupled:
        p = p * F32(1 - lr * weight_decay)
    elif weight_decay:
        g = g + F32(weight_decay) * p
    m = m + F32(1 - beta1) * (g - m)  # PyTorch's lerp for a weight below 0.5
    v = v * F32(beta2)
    v = v + F32(1 - beta2) * g * g
    second = v if vmax is None else np.where((vmax > v) | np.isnan(vmax), vmax, v)
    denom = np.sqrt(second) / F32(np.sqrt(1 - beta2**step)) + F32(eps)
    p = p + F32(-lr / (1 - beta1**step)) * m / denom
    return p, m, v, second


@pytest.mark.parametrize("n", [1, 15, 17, 100_003])
@pytest.mark.parametrize("op,weight_decay,amsgrad,maximize", [
    ("_fused_adam_", 0.0, False, False), ("_fused_adam_", 0.1, False, False),
    ("_fused_adamw_", 0.1, False, False), ("_fused_adam_", 0.0, True, False),
    ("_fused_adamw_", 0.1, False, True)])
def test_float32_adam_bit_for_bit(op, weight_decay, amsgrad, maximize, n, threads):
    """float32 Adam and AdamW (vector loops for the common options, the general loop for
    amsgrad and maximize) equal NumPy's float32 steps bit for bit, over lengths around the vector
    widths and one the threads split; NaN and inf gradients included."""
    rng = np.random.default_rng(n)
    p0 = rng.standard_normal(n).astype(F32)
    hyper = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=weight_decay)
    p, m, v, vmax = (minitorch.tensor(a) for a in (p0, np.zeros(n, F32), np.zeros(n, F32), np.zeros(n, F32)))
    step = minitorch.tensor(0.0)
    ref = [p0, np.zeros(n, F32), np.zeros(n, F32), np.zeros(n, F32)]
    for k in range(1, 4):
        g = rng.standard_normal(n).astype(F32) * F32(10.0**k)
        g[:: 7] = [np.nan, np.inf, -np.inf][k - 1]
        getattr(_C, op)([p], [minitorch.tensor(g)], [m], [v], [vmax] if amsgrad else [], [step],
                        amsgrad=amsgrad, maximize=maximize, **hyper)
        ref = adam_numpy_f32(ref[0], g, ref[1], ref[2], k, decoupled=op == "_fused_adamw_",
                             maximize=maximize, vmax=ref[3] if amsgrad else None, **hyper)
        for got, want in zip((p, m, v), ref):
            np.testing.assert_array_equal(got.numpy(), want)
        if amsgrad:
            np.testing.assert_array_equal(vmax.numpy(), ref[3])


def test_float32_adam_with_one_tensor_for_both_moments():
    """exp_avg and exp_avg_sq the same tensor: the vector loop (whose operands must not overlap)
    stands aside, and each element is updated in the order of the general loop."""
    g0 = np.array([0.5, 2.0, 3.0] * 11, F32)
    p, mv = minitorch.ones(33), minitorch.zeros(33)
    _C._fused_adam_([p], [minitorch.tensor(g0)], [mv], [mv], [], [minitorch.tensor(0.0)], lr=0.1,
                    beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False)
    m = F32(0.1) * g0
    v = m * F32(0.999) + F32(1 - 0.999) * g0 * g0  # exp_avg_sq starts from exp_avg's new value
    want = F32(1) + F32(-0.1 / 0.1) * v / (np.sqrt(v) / F32(np.sqrt(1 - 0.999)) + F32(1e-8))
    np.testing.assert_array_equal(mv.numpy(), v)
    np.testing.assert_array_equal(p.numpy(), want)


@pytest.mark.parametrize("n", [1, 17, 100_003])
def test_float32_sgd_momentum_bit_for_bit(n, threads):
    """float32 SGD with momentum (the vector loop after the first step) equals NumPy's float32
    steps bit for bit."""
    rng = np.random.default_rng(n)
    p0 = rng.standard_normal(n).astype(F32)
    p, buf = minitorch.tensor(p0), minitorch.zeros(n)
    ref_p, ref_buf = p0, None
    for k in range(3):
        g = rng.standard_normal(n).astype(F32)
        g[::5] = np.inf if k == 2 else g[::5]
        _C._fused_sgd_([p], [minitorch.tensor(g)], [buf], weight_decay=0.0, momentum=0.9, lr=0.1,
                       dampening=0.25, nesterov=False, maximize=False, is_first_step=k == 0)
        ref_buf = g if ref_buf is None else ref_buf * F32(0.9) + F32(0.75) * g
        ref_p = ref_p + F32(-0.1) * ref_buf
        np.testing.assert_array_equal(buf.numpy(), ref_buf)
        np.testing.assert_array_equal(p.numpy(), ref_p)
