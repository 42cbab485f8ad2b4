"""The CUDA random ops (cuda/ops_random.c, random.cu) and CUDA generators: the distributions
of the fills, poisson, bernoulli with a tensor p and multinomial (Philox on the device: the
distribution, not the CPU's numbers), generator= and the per-device default generators
(minitorch.cuda's seeding functions), and the same errors as the CPU's."""
import numpy as np
import pytest

import minitorch
from helpers import raises_alike, raises_device_assert

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

N = 200_000


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
def test_more_fills_have_the_right_distribution(dtype):
    minitorch.manual_seed(0)
    x = minitorch.empty(N, dtype=dtype, device="cuda")
    e = x.exponential_(2.5).cpu().numpy().astype(np.float64)
    assert e.min() >= 0 and abs(e.mean() - 0.4) < 0.005 and abs(e.var() - 0.16) < 0.005
    g = x.geometric_(0.25).cpu().numpy()
    assert g.min() >= 1 and abs(g.mean() - 4) < 0.05 and (g == np.round(g)).all()
    ln = np.log(x.log_normal_(0.5, 0.8).cpu().numpy().astype(np.float64))
    assert abs(ln.mean() - 0.5) < 0.01 and abs(ln.std() - 0.8) < 0.01
    c = x.cauchy_(1.0, 2.0).cpu().numpy().astype(np.float64)
    q1, q2, q3 = np.quantile(c, [0.25, 0.5, 0.75])
    assert abs(q2 - 1.0) < 0.05 and abs((q3 - q1) / 2 - 2.0) < 0.05
    strided = minitorch.empty(400, 500, dtype=dtype, device="cuda").t().exponential_().cpu().numpy()
    assert abs(strided.mean() - 1) < 0.01
    ints = minitorch.empty(N, dtype=minitorch.int32, device="cuda").geometric_(0.5).cpu().numpy()
    assert ints.min() >= 1 and abs(ints.mean() - 2) < 0.02


def test_bernoulli_poisson_and_normal_of_tensors():
    minitorch.manual_seed(1)
    p = minitorch.arange(N, device="cuda") / (N - 1)
    b = minitorch.bernoulli(p).cpu().numpy()
    assert set(np.unique(b)) == {0.0, 1.0} and abs(b[: N // 2].mean() - 0.25) < 0.01 and b[0] == 0 and b[-1] == 1
    m = minitorch.empty(1000, 200, dtype=minitorch.bool, device="cuda").bernoulli_(
        minitorch.full((200,), 0.3, device="cuda")).cpu().numpy()
    assert m.dtype == np.bool_ and abs(m.mean() - 0.3) < 0.01
    for rate in (0.5, 4.0, 40.0):
        v = minitorch.poisson(minitorch.full((N,), rate, dtype=minitorch.float64, device="cuda")).cpu().numpy()
        assert (v == np.round(v)).all() and abs(v.mean() - rate) < 5 * np.sqrt(rate / N) and abs(v.var() - rate) < 0.03 * rate
    z = minitorch.normal(minitorch.full((N,), 2.0, device="cuda"), minitorch.full((N,), 0.5, device="cuda"))
    assert z.device.type == "cuda" and abs(z.cpu().numpy().mean() - 2) < 0.01


def test_multinomial():
    p = np.array([0.05, 0.15, 0.3, 0.0, 0.5])
    minitorch.manual_seed(2)
    probs = minitorch.tensor(p * 3, device="cuda")
    draws = minitorch.multinomial(probs, 50_000, replacement=True)
    assert draws.device.type == "cuda" and draws.dtype == minitorch.int64
    counts = np.bincount(draws.cpu().numpy(), minlength=5)
    keep = p > 0
    expected = p[keep] * counts.sum()
    assert counts[3] == 0 and (((counts[keep] - expected) ** 2) / expected).sum() < 16.27
    rows = minitorch.multinomial(minitorch.tensor(np.tile(p, (300, 1)), device="cuda"), 4).cpu().numpy()
    assert rows.shape == (300, 4) and all(len(set(r)) == 4 for r in rows)
    assert minitorch.multinomial(minitorch.ones(3, 4, device="cuda"), 5, True).shape == (3, 5)


def test_generators_of_the_devices():
    g = minitorch.Generator(device="cuda")
    assert g.device == minitorch.device("cuda", 0) and g.initial_seed() == 67280421310721
    g.manual_seed(5)
    a = minitorch.rand(1000, device="cuda", generator=g).cpu().tolist()
    assert g.get_offset() == 1 and g.get_state().tolist()[:8] == [5, 0, 0, 0, 0, 0, 0, 0]
    g.manual_seed(5)
    assert minitorch.rand(1000, device="cuda", generator=g).cpu().tolist() == a
    state = g.get_state()
    b = minitorch.randn(10, device="cuda", generator=g).cpu().tolist()
    g.set_state(state)
    assert minitorch.randn(10, device="cuda", generator=g).cpu().tolist() == b
    assert minitorch.randperm(50, device="cuda", generator=g.manual_seed(3)).cpu().tolist() == \
        minitorch.randperm(50, device="cuda", generator=g.manual_seed(3)).cpu().tolist()
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        minitorch.rand(3, device="cuda", generator=minitorch.Generator())
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        minitorch.rand(3, generator=g)


def test_seeding_functions_reach_every_device():
    minitorch.manual_seed(9)
    assert [gen.initial_seed() for gen in minitorch.cuda.default_generators] == [9] * minitorch.cuda.device_count()
    assert minitorch.cuda.initial_seed() == 9
    a = minitorch.rand(100, device="cuda").cpu().tolist()
    minitorch.cuda.manual_seed(9)
    assert minitorch.rand(100, device="cuda").cpu().tolist() == a
    state = minitorch.cuda.get_rng_state()
    b = minitorch.rand(100, device="cuda").cpu().tolist()
    minitorch.cuda.set_rng_state(state)
    assert minitorch.rand(100, device="cuda").cpu().tolist() == b
    with minitorch.random.fork_rng():
        minitorch.rand(100, device="cuda")
    c = minitorch.rand(100, device="cuda").cpu().tolist()
    minitorch.cuda.set_rng_state(state)
    minitorch.rand(100, device="cuda")
    assert minitorch.rand(100, device="cuda").cpu().tolist() == c
    minitorch.cuda.seed_all()
    seeds = {gen.initial_seed() for gen in minitorch.cuda.default_generators}
    assert len(seeds) == 1 and seeds != {9}
    minitorch.cuda.manual_seed_all(4)
    assert len(minitorch.cuda.get_rng_state_all()) == minitorch.cuda.device_count()


@pytest.mark.parametrize("call", [
    lambda t: t.exponential_(0),
    lambda t: t.geometric_(1.5),
    lambda t: t.log_normal_(1, 0),
    lambda t: t.cauchy_(0, -1),
    lambda t: t.long().exponential_(),
    lambda t: minitorch.poisson(-t),
    lambda t: minitorch.multinomial(t, 4),
    lambda t: minitorch.multinomial(t * 0, 1),
    lambda t: minitorch.multinomial(-t, 2, True),
    lambda t: minitorch.normal(t, -t - 1),
])
def test_errors_match_the_cpu(call):
    raises_alike(call, minitorch.tensor([0.25, 0.5, 0.75]))


def test_bernoulli_p_is_checked_on_the_device():
    """As PyTorch's CUDA bernoulli_: its kernel asserts 0 <= p <= 1, nothing waits."""
    raises_device_assert(lambda t: t.bernoulli_(t * 3), minitorch.tensor([0.25, 0.5, 0.75]))


def test_dtype_errors_name_the_cuda_kernels():
    x = minitorch.tensor([0.25, 0.5, 0.75], device="cuda")
    with pytest.raises(NotImplementedError, match="\"geometric_cuda\" not implemented for 'Bool'"):
        x.bool().geometric_(0.5)
    with pytest.raises(NotImplementedError, match="\"bernoulli_tensor_cuda_p_\" not implemented for 'Long'"):
        x.bernoulli_(x.long())
    with pytest.raises(NotImplementedError, match="\"poisson_cuda\" not implemented for 'Long'"):
        minitorch.poisson(x.long())
