"""The CPU allocator's cache of freed large blocks (csrc/alloc/cpu_allocator.c): a freed block from
64 KiB up is kept by size class (8 per power of two) and handed out again for the same class, so a
hot temporary does not fault its pages in on every call; small blocks go straight back to malloc;
empty_cache returns the cache; the counters stay exact under threads; a forked child allocates."""
import gc
import os
import threading

import numpy as np

import minitorch

KiB = 1024
MiB = 1024 * KiB
stats = minitorch._C._cpu_allocator_stats
empty_cache = minitorch._C._cpu_allocator_empty_cache


def cached():
    s = stats()
    return s["reserved_bytes"] - s["allocated_bytes"]


def test_large_block_is_reused():
    gc.collect()
    empty_cache()
    assert cached() == 0
    x = minitorch.empty(MiB)  # 4 MiB
    ptr = x.data_ptr()
    del x
    assert cached() == 4 * MiB
    before = stats()
    y = minitorch.empty(MiB - 100)  # the same size class (4 MiB - 400 bytes rounds up to 4 MiB)
    assert y.data_ptr() == ptr
    assert cached() == 0
    after = stats()
    assert after["num_allocs"] == before["num_allocs"] + 1
    assert after["allocated_bytes"] == before["allocated_bytes"] + 4 * (MiB - 100)
    del y
    z = minitorch.empty(MiB + MiB // 4)  # 5 MiB: another class, a new block
    assert cached() == 4 * MiB
    del z
    assert cached() == 9 * MiB
    empty_cache()
    assert cached() == 0


def test_small_blocks_are_not_cached():
    gc.collect()
    empty_cache()
    x = minitorch.empty(60 * KiB // 4)
    del x
    assert cached() == 0


def test_blocks_from_64_kib_are_cached():
    """A recurrent step's (32, 1024) float32 gates, 128 KiB, are reused: left to malloc they were
    returned to the kernel and faulted in again step after step (glibc trims its heap's top)."""
    gc.collect()
    empty_cache()
    x = minitorch.empty(32, 1024)
    ptr = x.data_ptr()
    del x
    assert cached() == 128 * KiB
    assert minitorch.empty(32, 1024).data_ptr() == ptr
    empty_cache()


def test_reused_block_is_poisoned_and_results_exact():
    """A reused block holds the last tensor's bytes: every kernel must write all of its output
    (the poison fill shows one that does not), and results stay the fresh block's."""
    gc.collect()
    a = np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32)
    x = minitorch.tensor(a)
    for _ in range(3):
        y = x + x
        np.testing.assert_array_equal(y.numpy(), a + a)
        del y
    minitorch._C._set_alloc_poison(True)
    try:
        del x
        e = minitorch.empty(1 << 20)
        assert np.isnan(e.numpy()).all()
    finally:
        minitorch._C._set_alloc_poison(False)


def test_counts_under_threads():
    gc.collect()
    before = stats()
    x = minitorch.ones(1 << 18)  # 1 MiB: cached sizes

    def worker(k):
        for _ in range(100):
            y = (x + k) * 2
            assert y[7].item() == 2 * (1 + k)
            del y

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    del x
    gc.collect()
    after = stats()
    assert after["allocated_bytes"] == before["allocated_bytes"]
    assert after["num_allocs"] - before["num_allocs"] == after["num_frees"] - before["num_frees"]
    assert cached() <= 1 << 30
    empty_cache()
    assert stats()["reserved_bytes"] == stats()["allocated_bytes"]


def test_forked_child_allocates():
    x = minitorch.ones(1 << 20)
    del x
    pid = os.fork()
    if pid == 0:
        try:
            minitorch.set_num_threads(1)  # libgomp's pool does not survive fork(): one thread
            y = minitorch.ones(1 << 20) + 1
            os._exit(0 if y.sum().item() == 2 * (1 << 20) else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
