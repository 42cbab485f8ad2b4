"""No leaks over a long training loop: the seed network's forward, backward, Adam step and
zero_grad run 100,000 times, and afterwards the process's resident memory, the CPU allocator's
live bytes and the counts of C tensors, storages and autograd nodes are back where they were
after a warm-up. One leaked 32-byte block per step would be 3 MB of live bytes here.

The sanitizer run (MINITORCH_SANITIZE_RUN=1, set by `make test-sanitize`) does fewer steps, as
ASan makes each one several times slower and LeakSanitizer sees any leaked block anyway, and it
skips the resident-memory check: ASan's quarantine keeps freed blocks (up to 256 MB) out of reuse,
so the RSS grows there without a leak. MINITORCH_LEAK_STEPS overrides the count."""
import os
import time

import minitorch
from minitorch import nn

_SANITIZED = os.environ.get("MINITORCH_SANITIZE_RUN") == "1"
STEPS = int(os.environ.get("MINITORCH_LEAK_STEPS", 20_000 if _SANITIZED else 100_000))
WARMUP = 2_000
# Resident memory may move a little (the interpreter's free lists, pages glibc keeps); a leak of
# even 8 bytes a step would move it by 800 kB over 100,000 steps, and live bytes catch less.
RSS_TOLERANCE = 512 * 1024


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def live_bytes():
    return minitorch._C._cpu_allocator_stats()["allocated_bytes"]


def snapshot():
    return {"rss": rss_bytes(), "live_bytes": live_bytes(), **minitorch._C._live_objects()}


def make_step():
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = minitorch.optim.Adam(model.parameters(), lr=1e-3)
    x = minitorch.randn(3, 4)
    target = minitorch.randn(3, 2)

    def step():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        return loss

    return step


def test_training_loop_returns_to_its_starting_memory(capsys):
    step = make_step()
    for _ in range(WARMUP):
        step()
    start = snapshot()
    t0 = time.perf_counter()
    for _ in range(STEPS):
        loss = step()
    elapsed = time.perf_counter() - t0
    del loss  # the last step's loss holds nothing but itself: its graph was freed by backward
    end = snapshot()
    with capsys.disabled():
        print(f"\nleak test: {STEPS} steps in {elapsed:.1f} s; start {start}; end {end}")
    assert end["live_bytes"] == start["live_bytes"]
    assert (end["tensors"], end["storages"], end["nodes"]) == (
        start["tensors"], start["storages"], start["nodes"])
    if not _SANITIZED:
        assert end["rss"] - start["rss"] <= RSS_TOLERANCE, (start, end)


def test_a_dropped_model_frees_everything():
    before = snapshot()
    step = make_step()
    for _ in range(10):
        step()
    del step
    after = snapshot()
    assert after["live_bytes"] == before["live_bytes"]
    assert (after["tensors"], after["storages"], after["nodes"]) == (
        before["tensors"], before["storages"], before["nodes"])
