"""Long kernels release the GIL, and what they share stays consistent: results from several threads
equal the single-threaded ones, each thread's profile() holds its own events, allocator counts add up."""
import gc
import threading
import time

import numpy as np

import minitorch
from minitorch import nn
from minitorch.profiler import profile


def run_threads(n, target):
    failures = []

    def wrapped(k):
        try:
            target(k)
        except BaseException as e:  # reported by the main thread
            failures.append((k, repr(e)))

    threads = [threading.Thread(target=wrapped, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]


def test_long_matmul_lets_python_run():
    ticks = []
    stop = threading.Event()

    def counter():
        while not stop.is_set():
            ticks.append(time.perf_counter())

    # big enough for one call to take > 50 ms, whatever the machine
    n, dur = 256, 0.0
    while dur < 0.05 and n <= 4096:
        n *= 2
        a = minitorch.ones(n, n)
        t0 = time.perf_counter()
        a @ a
        dur = time.perf_counter() - t0
    t = threading.Thread(target=counter)
    t.start()
    try:
        for _ in range(3):  # a loaded machine may not schedule the counter in one try
            t0 = time.perf_counter()
            a @ a
            t1 = time.perf_counter()
            # Holding the GIL, the kernel would let the counter run at most one switch interval
            # (5 ms) after t0: ticks in its second half mean the GIL was released.
            mid = t0 + (t1 - t0) / 2
            if t1 - t0 > 0.02 and any(mid < x < t1 for x in ticks[-100000:]):
                break
        else:
            raise AssertionError(f"no Python progress during {n}x{n} matmuls of {t1 - t0:.3f} s")
    finally:
        stop.set()
        t.join()


def seed_model(seed, width):
    minitorch.manual_seed(seed)
    return nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 2))


def step(model, x, y):
    model.zero_grad()
    out = model(x)
    loss = nn.MSELoss()(out, y)
    loss.backward()
    return [out.detach().numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()]


def test_big_forward_backward_from_four_threads():
    """Sizes where linear and its backward run without the GIL (the seed network's are below)."""
    width, batch, rounds = 192, 192, 6
    rng = np.random.default_rng(0)
    models = [seed_model(k, width) for k in range(4)]
    data = [(minitorch.tensor(rng.standard_normal((batch, width)).astype(np.float32)),
             minitorch.tensor(rng.standard_normal((batch, 2)).astype(np.float32))) for _ in range(4)]
    expected = [step(models[k], *data[k]) for k in range(4)]

    def worker(k):
        for _ in range(rounds):
            got = step(models[k], *data[k])
            assert all(np.array_equal(g, e) for g, e in zip(got, expected[k])), k

    run_threads(4, worker)


def test_shared_model_grad_from_four_threads():
    """Threads share the parameters (and so their AccumulateGrad nodes) and differentiate with
    respect to their own inputs."""
    width = 128
    model = seed_model(3, width)
    rng = np.random.default_rng(1)
    xs = [minitorch.tensor(rng.standard_normal((256, width)).astype(np.float32), requires_grad=True)
          for _ in range(4)]

    def grad_of(x):
        (g,) = minitorch.autograd.grad(model(x).square().sum(), [x])
        return g.numpy().copy()

    expected = [grad_of(x) for x in xs]

    def worker(k):
        for _ in range(8):
            assert np.array_equal(grad_of(xs[k]), expected[k]), k

    run_threads(4, worker)
    assert all(p.grad is None for p in model.parameters())


def test_each_thread_profiles_its_own_work():
    started = threading.Barrier(2)
    done = threading.Barrier(2)
    events = {}
    big = minitorch.ones(1 << 16)  # add and mul release the GIL on it

    def worker(k):
        x = minitorch.ones(4) if k == 0 else big
        with profile() as prof:
            started.wait(10)
            for _ in range(50):
                x.add(1) if k == 0 else x.mul(2)
            done.wait(10)
        events[k] = (threading.get_native_id(), prof.events())

    run_threads(2, worker)
    for k, name in ((0, "add"), (1, "mul")):
        tid, evs = events[k]
        assert {e.thread for e in evs} == {tid}
        ops = [e.name for e in evs if e.name.startswith("Op::")]
        assert ops == ["Op::" + name] * 50, (k, ops[:5], len(ops))


def test_allocator_counts_under_concurrent_allocation():
    gc.collect()
    before = minitorch._C._cpu_allocator_stats()
    x = minitorch.ones(1 << 16)

    def worker(k):
        for _ in range(200):
            y = (x + k) * 2  # two allocations each, without the GIL
            del y

    run_threads(4, worker)
    del x
    gc.collect()
    after = minitorch._C._cpu_allocator_stats()
    assert after["allocated_bytes"] == before["allocated_bytes"]
    allocs = after["num_allocs"] - before["num_allocs"]
    assert allocs >= 4 * 200 * 2 + 1
    assert after["num_frees"] - before["num_frees"] == allocs


def test_random_from_four_threads():
    """The generator is locked: draws from several threads are valid and, for one seed, the same
    multiset as from one thread."""
    n = 1 << 16
    minitorch.manual_seed(5)
    one = np.sort(np.concatenate([minitorch.rand(n).numpy() for _ in range(4)]))
    minitorch.manual_seed(5)
    out = [None] * 4
    buf = [minitorch.empty(n) for _ in range(4)]

    def worker(k):
        out[k] = buf[k].uniform_().numpy().copy()

    run_threads(4, worker)
    many = np.sort(np.concatenate(out))
    assert np.array_equal(one, many)
