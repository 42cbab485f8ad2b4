"""nn.utils against PyTorch: clip_grad_norm_ (every norm type, error_if_nonfinite, foreach,
the returned total norm), clip_grad_value_, parameters_to_vector and vector_to_parameters, from
the same gradients (on the CUDA device: tests/cuda/test_cuda_nn_more.py)."""
import math

import numpy as np
import pytest

import minitorch as mt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(20)
SHAPES = [(3, 4), (4,), (), (2, 0), (2, 3, 2)]


def params_with_grads(lib, device="cpu", grads=None, dtype=np.float32):
    """Parameters of SHAPES (the third without a grad), with the same grads in either library."""
    grads = grads if grads is not None else [RNG.standard_normal(s).astype(dtype) * 3 for s in SHAPES]
    ps = []
    for k, g in enumerate(grads):
        p = lib.nn.Parameter(lib.zeros(g.shape, dtype=getattr(lib, str(g.dtype))).to(device))
        if k != 2:
            p.grad = lib.tensor(g).to(device)
        ps.append(p)
    return ps, grads


def np_of(t):
    return np.asarray(t.detach().cpu().tolist(), dtype=np.float64)


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, 0.5, float("inf"), -float("inf"), 0, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, foreach):
    ps, grads = params_with_grads(mt)
    tps, _ = params_with_grads(torch, grads=grads)
    if float(norm_type) in (math.inf, -math.inf):  # the (2, 0) grad: no identity, PyTorch's error
        with pytest.raises(RuntimeError) as e:
            mt.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type, foreach=foreach)
        with pytest.raises(RuntimeError) as te:
            torch.nn.utils.clip_grad_norm_(tps, max_norm, norm_type=norm_type, foreach=foreach)
        assert str(e.value) == str(te.value)
        ps, tps = [p for p in ps if p.numel()], [p for p in tps if p.numel()]
    total = mt.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type, foreach=foreach)
    t_total = torch.nn.utils.clip_grad_norm_(tps, max_norm, norm_type=norm_type, foreach=foreach)
    assert isinstance(total, mt.Tensor) and total.shape == () and total.dtype == mt.float32
    assert not total.requires_grad
    np.testing.assert_allclose(total.item(), t_total.item(), rtol=1e-5)
    for p, tp in zip(ps, tps):
        assert (p.grad is None) == (tp.grad is None)
        if p.grad is not None:
            np.testing.assert_allclose(np_of(p.grad), np_of(tp.grad), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_forms():
    # a single tensor, a generator, float64 grads, norm_type given as a string
    p = mt.nn.Parameter(mt.ones(3, dtype=mt.float64))
    p.grad = mt.tensor([3.0, 4.0, 0.0], dtype=mt.float64)
    total = mt.nn.utils.clip_grad_norm_(p, 1.0)
    assert total.dtype == mt.float64 and total.item() == 5.0
    np.testing.assert_allclose(np_of(p.grad), [0.6, 0.8, 0.0], rtol=1e-6)
    assert mt.nn.utils.clip_grad_norm_(iter([p]), 1.0, "inf").item() == pytest.approx(0.8, rel=1e-6)
    # no gradients at all: a total norm of 0
    q = mt.nn.Parameter(mt.ones(2))
    assert mt.nn.utils.clip_grad_norm_([q], 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="empty generator"):
        mt.nn.utils.clip_grad_norm_((x for x in []), 1.0)
    with pytest.warns(FutureWarning, match="deprecated"):
        mt.nn.utils.clip_grad_norm([p], 1.0)


def test_clip_grad_norm_nonfinite():
    for bad in (float("nan"), float("inf")):
        g = np.array([1.0, bad, 2.0], np.float32)
        ps, _ = params_with_grads(mt, grads=[g, g, g, g, g])
        tps, _ = params_with_grads(torch, grads=[g, g, g, g, g])
        with pytest.raises(RuntimeError) as e:
            mt.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
        with pytest.raises(RuntimeError) as te:
            torch.nn.utils.clip_grad_norm_(tps, 1.0, error_if_nonfinite=True)
        assert str(e.value) == str(te.value)
        # without the flag the grads are scaled by the non-finite norm anyway
        total = mt.nn.utils.clip_grad_norm_(ps, 1.0)
        t_total = torch.nn.utils.clip_grad_norm_(tps, 1.0)
        np.testing.assert_array_equal(total.item(), t_total.item())
        np.testing.assert_array_equal(np_of(ps[0].grad), np_of(tps[0].grad))


def test_clip_grad_norm_in_a_training_step():
    """The clipping is in place on .grad and outside autograd: the next step sees the clipped grads."""
    lin, tlin = mt.nn.Linear(5, 3), torch.nn.Linear(5, 3)
    lin.load_state_dict({k: mt.tensor(v.numpy()) for k, v in tlin.state_dict().items()})
    x = RNG.standard_normal((7, 5)).astype(np.float32) * 10
    for lib, m in ((mt, lin), (torch, tlin)):
        m(lib.tensor(x)).pow(2).sum().backward()
    n = mt.nn.utils.clip_grad_norm_(lin.parameters(), 1.0)
    tn = torch.nn.utils.clip_grad_norm_(tlin.parameters(), 1.0)
    np.testing.assert_allclose(n.item(), tn.item(), rtol=1e-5)
    for (k, p), tp in zip(lin.named_parameters(), tlin.parameters()):
        np.testing.assert_allclose(np_of(p.grad), np_of(tp.grad), rtol=1e-5, atol=1e-6, err_msg=k)
        assert p.grad.grad_fn is None


@pytest.mark.parametrize("clip", [0.5, 2, 0.0])
def test_clip_grad_value(clip):
    ps, grads = params_with_grads(mt)
    tps, _ = params_with_grads(torch, grads=grads)
    assert mt.nn.utils.clip_grad_value_(ps, clip) is None
    torch.nn.utils.clip_grad_value_(tps, clip, foreach=False)
    for p, tp in zip(ps, tps):
        if p.grad is not None:
            np.testing.assert_array_equal(np_of(p.grad), np_of(tp.grad))
    p = mt.nn.Parameter(mt.zeros(3))
    p.grad = mt.tensor([-5.0, 0.25, 5.0])
    mt.nn.utils.clip_grad_value_(p, 1, foreach=True)
    assert p.grad.tolist() == [-1.0, 0.25, 1.0]


def test_parameters_to_vector_and_back():
    lin, tlin = mt.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    lin.load_state_dict({k: mt.tensor(v.numpy()) for k, v in tlin.state_dict().items()})
    v = mt.nn.utils.parameters_to_vector(lin.parameters())
    tv = torch.nn.utils.parameters_to_vector(tlin.parameters())
    assert v.shape == (15,)
    np.testing.assert_array_equal(np_of(v), np_of(tv))
    new = np.arange(15, dtype=np.float32)
    mt.nn.utils.vector_to_parameters(mt.tensor(new), lin.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(new), tlin.parameters())
    for p, tp in zip(lin.parameters(), tlin.parameters()):
        assert isinstance(p, mt.nn.Parameter) and p.requires_grad
        np.testing.assert_array_equal(np_of(p), np_of(tp))
    # the gradient flows through parameters_to_vector (a view and a cat)
    v = mt.nn.utils.parameters_to_vector(lin.parameters())
    (v * mt.arange(15.0)).sum().backward()
    np.testing.assert_array_equal(np_of(lin.weight.grad).ravel(), np.arange(12.0))
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        mt.nn.utils.vector_to_parameters([1.0], lin.parameters())
    with pytest.raises(TypeError) as te:
        torch.nn.utils.vector_to_parameters([1.0], tlin.parameters())
    assert "list" in str(te.value)
