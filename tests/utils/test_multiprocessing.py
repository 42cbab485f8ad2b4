"""minitorch.multiprocessing (the Hogwild example): share_memory_/is_shared, a shared
tensor (a view of one, a Module's parameters after share_memory()) reaching spawned, forked and
forkserver processes as the same memory, a tensor that is not shared arriving as a copy, and
spawn() with PyTorch's ProcessRaisedException. The process targets live in this module so that
spawned children can import them."""
import numpy as np
import pytest

import minitorch
import minitorch.multiprocessing as mp

METHODS = ["spawn", "fork", "forkserver"]


def add_rank(rank, t, lin, plain, q):
    t[rank] += 10 * (rank + 1)
    plain += 1
    with minitorch.no_grad():
        lin.weight.add_(1.0)
    q.put((rank, t.is_shared(), lin.weight.is_shared(), plain.is_shared()))


def fill(i, x):
    x[i] = i + 1


def fail_on_one(i):
    if i == 1:
        raise ValueError("boom")


def test_share_memory_keeps_identity_and_values():
    t = minitorch.arange(6.0).view(2, 3)
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared() and t[1].is_shared()
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3))
    assert t.share_memory_() is t
    lin = minitorch.nn.Linear(3, 2)
    weight = lin.weight
    assert lin.share_memory() is lin and lin.weight is weight and weight.is_shared() and lin.bias.is_shared()
    assert minitorch.tensor([]).share_memory_().numel() == 0


@pytest.mark.parametrize("method", METHODS)
def test_processes_write_shared_memory(method):
    ctx = mp.get_context(method)
    t = minitorch.zeros(4).share_memory_()
    lin = minitorch.nn.Linear(2, 2).share_memory()
    before = lin.weight.detach().clone()
    plain = minitorch.zeros(2)
    q = ctx.SimpleQueue()
    procs = [ctx.Process(target=add_rank, args=(r, t[1:], lin, plain, q)) for r in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    reports = sorted(q.get() for _ in procs)
    assert reports == [(0, True, True, False), (1, True, True, False)]
    np.testing.assert_array_equal(t.numpy(), [0, 10, 20, 0])  # a view with an offset, written through
    np.testing.assert_allclose((lin.weight - before).detach().numpy(), 2.0, atol=1e-6)
    np.testing.assert_array_equal(plain.numpy(), [0, 0])  # not shared: each child had its own copy


def test_spawn_runs_each_rank_and_raises_the_first_error():
    x = minitorch.zeros(3).share_memory_()
    assert mp.spawn(fill, args=(x,), nprocs=3) is None
    np.testing.assert_array_equal(x.numpy(), [1, 2, 3])
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: boom"):
        mp.spawn(fail_on_one, nprocs=2)
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    assert mp.Process is not None and mp.cpu_count() >= 1  # multiprocessing's own names are here too


def test_xpu_answers_as_pytorch_without_xpu():
    torch = pytest.importorskip("torch")
    assert minitorch.xpu.is_available() is torch.xpu.is_available() is False
    assert minitorch.xpu.device_count() == torch.xpu.device_count() == 0
    with pytest.raises(AssertionError, match="Torch not compiled with XPU enabled"):
        minitorch.xpu.current_device()


def parallel_work(q):
    z = minitorch.randn(300, 300)
    q.put((((z * 2).exp().sum() + (z @ z).sum()).item() != 0, minitorch.get_num_threads()))


def test_a_forked_child_computes_after_the_parent_ran_parallel_regions():
    # libgomp's pool does not survive fork: without the at-fork drop to one thread this child
    # waits forever in its first parallel region (PyTorch's does).
    threads = minitorch.get_num_threads()
    minitorch.set_num_threads(2)
    try:
        x = minitorch.randn(300, 300)
        ((x * 2).exp().sum() + (x @ x).sum()).item()
        ctx = mp.get_context("fork")
        q = ctx.SimpleQueue()
        p = ctx.Process(target=parallel_work, args=(q,))
        p.start()
        p.join(60)
        if p.is_alive():
            p.kill()
            pytest.fail("the forked child hung in a parallel region")
        assert p.exitcode == 0 and q.get() == (True, 1)
    finally:
        minitorch.set_num_threads(threads)
