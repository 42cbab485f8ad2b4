"""The caching allocator's rules (PyTorch's CUDACachingAllocator) on the host-memory backend.

_C._HostCachingAllocator runs the same C code the CUDA backend plugs cudaMalloc into, over
malloc'd segments, so every rule is checked on machines without a GPU: rounding, pool choice
and segment sizes, reuse, splitting, merging, best fit, per-stream pools and record_stream,
free-and-retry on out-of-memory, the error message, empty_cache and the statistics.
"""
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch

KiB = 1024
MiB = 1024 * 1024
Alloc = minitorch._C._HostCachingAllocator


def blocks(a):
    """(size, allocated) of every block, segment after segment, by address."""
    return [(b["size"], b["allocated"]) for s in a.segments() for b in s["blocks"]]


def stat(a, name):
    return a.memory_stats()[name]


def oom_error_class():
    cuda = getattr(minitorch, "cuda", None)
    return getattr(cuda, "OutOfMemoryError", RuntimeError)


# ---- sizes and pools ----


@pytest.mark.parametrize(
    "size, rounded",
    [(1, 512), (511, 512), (512, 512), (513, 1024), (1000, 1024), (MiB, MiB), (MiB + 1, MiB + 512)],
)
def test_sizes_round_up_to_512_bytes(size, rounded):
    a = Alloc()
    p = a.malloc(size)
    assert p % 512 == 0
    assert a.memory_allocated() == rounded
    assert stat(a, "requested_bytes.all.current") == size
    assert a.segments()[0]["blocks"][0]["size"] == rounded


def test_zero_bytes_is_a_null_pointer_and_no_memory():
    a = Alloc()
    assert a.malloc(0) == 0
    a.free(0)
    assert a.raw_alloc_calls == 0 and a.segments() == []


@pytest.mark.parametrize(
    "size, pool, segment",
    [
        (512, "small", 2 * MiB),
        (MiB, "small", 2 * MiB),  # 1 MiB is still small
        (MiB + 1, "large", 20 * MiB),  # 1-10 MiB share 20 MiB segments
        (10 * MiB - 512, "large", 20 * MiB),
        (10 * MiB, "large", 10 * MiB),  # from 10 MiB: the size rounded to 2 MiB
        (10 * MiB + 1, "large", 12 * MiB),
        (21 * MiB, "large", 22 * MiB),
    ],
)
def test_pool_choice_and_segment_size(size, pool, segment):
    a = Alloc()
    a.malloc(size)
    (seg,) = a.segments()
    assert seg["segment_type"] == pool and seg["total_size"] == segment
    assert a.memory_reserved() == segment
    assert stat(a, f"segment.{pool}_pool.current") == 1
    assert stat(a, f"reserved_bytes.{pool}_pool.current") == segment
    other = "large" if pool == "small" else "small"
    assert stat(a, f"segment.{other}_pool.current") == 0


def test_small_requests_share_one_segment():
    a = Alloc()
    ptrs = [a.malloc(100 * KiB) for _ in range(20)]  # 20 x 100 KiB fit in 2 MiB
    assert a.raw_alloc_calls == 1 and len(a.segments()) == 1
    assert sorted(ptrs) == [ptrs[0] + k * 100 * KiB for k in range(20)]
    a.malloc(100 * KiB)  # 21 x 100 KiB do not
    assert a.raw_alloc_calls == 2


# ---- reuse, splitting, merging, best fit ----


@pytest.mark.parametrize("size", [1000, 3 * MiB, 12 * MiB])
def test_freed_block_is_reused_without_a_raw_allocation(size):
    a = Alloc()
    p = a.malloc(size)
    a.free(p)
    assert a.memory_allocated() == 0 and a.memory_reserved() > 0
    assert a.malloc(size) == p
    assert a.raw_alloc_calls == 1


def test_small_pool_splits_any_remainder_of_512_bytes_or_more():
    a = Alloc()
    a.malloc(MiB)
    assert blocks(a) == [(MiB, True), (MiB, False)]
    a.malloc(MiB - 512)  # leaves exactly 512 bytes: still split off
    assert blocks(a) == [(MiB, True), (MiB - 512, True), (512, False)]
    a.malloc(512)
    assert blocks(a) == [(MiB, True), (MiB - 512, True), (512, True)]
    assert a.raw_alloc_calls == 1


def test_large_pool_splits_only_remainders_above_1_mib():
    a = Alloc()
    a.malloc(2 * MiB)
    assert blocks(a) == [(2 * MiB, True), (18 * MiB, False)]
    b = Alloc()
    b.malloc(19 * MiB)  # a 20 MiB segment; the 1 MiB rest is not split off
    assert blocks(b) == [(20 * MiB, True)]
    assert b.memory_allocated() == 20 * MiB
    assert stat(b, "requested_bytes.all.current") == 19 * MiB
    c = Alloc()
    c.malloc(19 * MiB - 512)  # rest 1 MiB + 512: split
    assert blocks(c) == [(19 * MiB - 512, True), (MiB + 512, False)]


def test_cached_large_block_is_split_or_handed_out_whole():
    a = Alloc()
    a.free(a.malloc(2 * MiB))
    assert blocks(a) == [(20 * MiB, False)]
    p = a.malloc(18 * MiB + 512 * KiB)
    assert blocks(a) == [(18 * MiB + 512 * KiB, True), (MiB + 512 * KiB, False)]
    a.free(p)
    a.malloc(19 * MiB + 512 * KiB)
    assert blocks(a) == [(20 * MiB, True)]
    assert a.raw_alloc_calls == 1


def test_freeing_merges_free_neighbours_back_into_one_block():
    a = Alloc()
    x, y, z = a.malloc(4 * KiB), a.malloc(8 * KiB), a.malloc(16 * KiB)
    rest = 2 * MiB - 28 * KiB
    a.free(x)
    a.free(z)
    assert blocks(a) == [(4 * KiB, False), (8 * KiB, True), (16 * KiB + rest, False)]
    assert stat(a, "inactive_split.all.current") == 2
    assert stat(a, "inactive_split_bytes.all.current") == 4 * KiB + 16 * KiB + rest
    a.free(y)
    assert blocks(a) == [(2 * MiB, False)]
    assert stat(a, "inactive_split.all.current") == 0
    assert stat(a, "inactive_split_bytes.all.current") == 0


def test_best_fit_takes_the_smallest_free_block_then_the_lowest_address():
    a = Alloc()
    x1, _, x2, _, x3, _ = (a.malloc(s) for s in (4 * KiB, 512, 2 * KiB, 512, 2 * KiB, 512))
    for p in (x1, x2, x3):
        a.free(p)
    assert a.malloc(1500) == x2  # 1536 bytes: a 2 KiB block, the lower one
    assert a.malloc(2 * KiB) == x3
    assert a.malloc(3 * KiB) == x1  # only the 4 KiB block fits
    assert a.raw_alloc_calls == 1


# ---- streams ----


def test_blocks_are_reused_only_by_their_stream():
    a = Alloc()
    p = a.malloc(1000, stream=1)
    a.free(p)
    q = a.malloc(1000, stream=2)
    assert q != p and a.raw_alloc_calls == 2
    assert {s["stream"] for s in a.segments()} == {1, 2}
    assert a.malloc(1000, stream=1) == p
    assert a.raw_alloc_calls == 2


def test_record_stream_holds_a_freed_block_until_that_stream_is_done():
    a = Alloc()
    p = a.malloc(1000)
    a.record_stream(p, 5)
    a.free(p)
    assert a.segments()[0]["blocks"][0]["state"] == "active_pending_free"
    assert a.memory_allocated() == 0
    assert stat(a, "active_bytes.all.current") == 1024  # still active: stream 5 may use it
    q = a.malloc(1000)
    assert q != p  # the pending block is not handed out
    a.synchronize(6)  # another stream's work finishing changes nothing
    assert a.malloc(1000) not in (p, q)
    a.synchronize(5)
    assert a.malloc(1000) == p  # the next malloc sees the event done
    assert stat(a, "active_bytes.all.current") == 3 * 1024
    assert a.raw_alloc_calls == 1


def test_record_stream_on_the_allocation_stream_is_ignored():
    a = Alloc()
    p = a.malloc(1000, stream=3)
    a.record_stream(p, 3)
    a.free(p)
    assert a.malloc(1000, stream=3) == p


def test_block_used_on_two_streams_waits_for_both():
    a = Alloc()
    p = a.malloc(1000)
    a.record_stream(p, 1)
    a.record_stream(p, 2)
    a.free(p)
    a.synchronize(1)
    assert a.malloc(1000) != p
    a.synchronize(2)
    assert a.malloc(1000) == p


def test_empty_cache_waits_for_pending_streams_then_releases():
    a = Alloc()
    p = a.malloc(1000)
    a.record_stream(p, 7)
    a.free(p)
    a.empty_cache()
    assert a.segments() == [] and a.memory_reserved() == 0
    assert stat(a, "num_sync_all_streams") == 1
    assert stat(a, "active.all.current") == 0


def test_bad_addresses_raise_pytorch_errors():
    a = Alloc()
    p = a.malloc(1000)
    with pytest.raises(RuntimeError, match=r"^invalid device pointer: 0x"):
        a.free(p + 512)
    with pytest.raises(RuntimeError, match="^No allocated block can be found$"):
        a.record_stream(p + 512, 1)
    a.free(p)
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        a.free(p)  # twice


# ---- out of memory ----


def test_out_of_memory_frees_the_cache_and_retries_once():
    a = Alloc(capacity_bytes=13 * MiB)
    a.free(a.malloc(1000))  # a cached 2 MiB small segment, of no use to a large request
    p = a.malloc(12 * MiB)  # 2 + 12 > 13: fails, frees the cache, succeeds
    assert p != 0
    assert a.raw_alloc_calls == 3 and a.raw_free_calls == 1
    assert a.memory_reserved() == 12 * MiB
    s = a.memory_stats()
    assert s["num_alloc_retries"] == 1 and s["num_ooms"] == 0
    assert s["num_device_alloc"] == 2 and s["num_device_free"] == 1
    assert s["num_sync_all_streams"] == 1


def test_backend_failing_once_is_retried():
    a = Alloc()
    a.free(a.malloc(1000))
    a.fail_next_raw_allocs(1)
    a.malloc(5 * MiB)
    assert stat(a, "num_alloc_retries") == 1 and stat(a, "num_ooms") == 0
    assert [s["segment_type"] for s in a.segments()] == ["large"]  # the small one was freed


def test_out_of_memory_error_after_the_retry():
    a = Alloc(capacity_bytes=16 * MiB)
    with pytest.raises(oom_error_class()) as e:
        a.malloc(2 * MiB)
    assert str(e.value) == (
        "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
        "16.00 MiB of which 16.00 MiB is free. Of the allocated memory 0 bytes is allocated by "
        "PyTorch, and 0 bytes is reserved by PyTorch but unallocated."
    )
    assert isinstance(e.value, RuntimeError)
    assert stat(a, "num_ooms") == 1 and stat(a, "num_alloc_retries") == 1
    assert a.malloc(1000) != 0  # still usable


def test_out_of_memory_message_counts_allocated_and_cached_memory():
    a = Alloc(capacity_bytes=24 * MiB)
    a.malloc(4 * MiB)  # a 20 MiB segment, 16 MiB of it free but split: not releasable
    with pytest.raises(RuntimeError) as e:
        a.malloc(17 * MiB)
    assert str(e.value) == (
        "CUDA out of memory. Tried to allocate 18.00 MiB. GPU 0 has a total capacity of "
        "24.00 MiB of which 4.00 MiB is free. Of the allocated memory 4.00 MiB is allocated by "
        "PyTorch, and 16.00 MiB is reserved by PyTorch but unallocated."
    )


def test_backend_failing_twice_is_an_out_of_memory_error():
    a = Alloc()
    a.fail_next_raw_allocs(2)
    with pytest.raises(RuntimeError, match=r"^CUDA out of memory\. Tried to allocate 2\.00 MiB\."):
        a.malloc(100)
    a.fail_next_raw_allocs(2)
    with pytest.raises(RuntimeError, match="out of memory"):
        a.malloc(100)
    s = a.memory_stats()
    assert s["num_ooms"] == 2 and s["num_alloc_retries"] == 2
    assert a.raw_alloc_calls == 4 and a.memory_reserved() == 0


def test_pytorch_out_of_memory_error_is_a_runtime_error():
    torch = pytest.importorskip("torch")
    assert issubclass(torch.cuda.OutOfMemoryError, RuntimeError)


# ---- statistics ----


def test_stats_after_a_sequence():
    a = Alloc()
    x = a.malloc(1000)  # 1024 bytes, small
    y = a.malloc(3 * MiB)  # 3 MiB of a 20 MiB large segment
    a.free(x)
    z = a.malloc(600)  # 1024 again: x's block
    assert z == x
    a.free(y)
    s = a.memory_stats()
    assert [s[f"allocated_bytes.all.{k}"] for k in ("current", "peak", "allocated", "freed")] == [
        1024, 1024 + 3 * MiB, 2048 + 3 * MiB, 1024 + 3 * MiB]
    assert [s[f"allocation.all.{k}"] for k in ("current", "peak", "allocated", "freed")] == [
        1, 2, 3, 2]
    assert [s[f"allocated_bytes.large_pool.{k}"] for k in ("current", "peak", "allocated")] == [
        0, 3 * MiB, 3 * MiB]
    assert s["allocated_bytes.small_pool.current"] == 1024
    assert [s[f"reserved_bytes.all.{k}"] for k in ("current", "peak", "allocated", "freed")] == [
        22 * MiB, 22 * MiB, 22 * MiB, 0]
    assert [s[f"segment.all.{k}"] for k in ("current", "peak", "allocated", "freed")] == [2, 2, 2, 0]
    assert s["requested_bytes.all.current"] == 600
    assert s["requested_bytes.all.allocated"] == 1000 + 3 * MiB + 600
    assert s["active.all.current"] == 1 and s["active_bytes.all.current"] == 1024
    # the small segment is split (z and its rest); the large one merged back whole
    assert s["inactive_split.all.current"] == 1
    assert s["inactive_split_bytes.all.current"] == 2 * MiB - 1024
    a.free(z)
    a.empty_cache()
    s = a.memory_stats()
    assert s["reserved_bytes.all.current"] == 0 and s["reserved_bytes.all.freed"] == 22 * MiB
    assert s["segment.all.freed"] == 2 and s["num_device_free"] == 2
    assert a.max_memory_reserved() == 22 * MiB


def test_empty_cache_releases_only_unused_segments():
    a = Alloc()
    small = a.malloc(1000)
    big, mid = a.malloc(12 * MiB), a.malloc(3 * MiB)
    a.free(big)
    a.free(mid)
    assert a.memory_reserved() == 2 * MiB + 12 * MiB + 20 * MiB
    a.empty_cache()
    assert a.memory_reserved() == 2 * MiB  # the small segment still holds a block
    assert blocks(a) == [(1024, True), (2 * MiB - 1024, False)]
    a.free(small)
    a.empty_cache()
    assert a.memory_reserved() == 0 and a.segments() == []
    assert a.raw_free_calls == 3


def test_reset_peak_memory_stats():
    a = Alloc()
    p = a.malloc(5 * MiB)
    a.free(a.malloc(MiB))
    a.free(p)
    assert a.max_memory_allocated() == 6 * MiB
    q = a.malloc(1000)
    a.reset_peak_memory_stats()
    assert a.max_memory_allocated() == a.memory_allocated() == 1024
    assert a.max_memory_reserved() == a.memory_reserved()
    assert stat(a, "allocated_bytes.all.allocated") == 6 * MiB + 1024  # totals are kept
    a.free(q)
    a.reset_accumulated_memory_stats()
    s = a.memory_stats()
    assert s["allocated_bytes.all.allocated"] == 0 and s["allocated_bytes.all.freed"] == 0
    assert s["num_device_alloc"] == 0


def test_stat_keys_are_pytorchs():
    torch = pytest.importorskip("torch")
    doc = torch.cuda.memory.memory_stats.__doc__
    expected = set()
    for name in re.findall(r'``"([a-z][a-z_]*(?:\.\{[a-z_,]+\})*)"``', doc):
        keys = [""]
        for part in name.split("."):
            options = part[1:-1].split(",") if part.startswith("{") else [part]
            keys = [f"{k}.{o}" if k else o for k in keys for o in options]
        expected.update(keys)
    # The docstring calls the allocation counts "allocated.*"; the dict's keys say "allocation".
    expected = {re.sub(r"^allocated\.", "allocation.", k) for k in expected}
    expected.discard("reserved_bytes_by_private_pools")  # nested per private pool: none here
    assert "allocated_bytes.all.current" in expected and "num_ooms" in expected
    keys = list(Alloc().memory_stats())
    assert set(keys) == expected
    assert keys == sorted(keys)  # memory_stats() sorts its keys


def test_stats_start_at_zero():
    s = Alloc().memory_stats()
    assert s.pop("max_split_size") == -1
    assert set(s.values()) == {0}


# ---- the mt_allocator vtable, as storages use it ----


def test_allocator_vtable_uses_the_current_stream():
    a = Alloc()
    a.set_stream(3)
    p = a.allocator_alloc(1000)
    assert a.segments()[0]["stream"] == 3
    assert a.allocator_alloc(0) == 0
    # (allocated_bytes, peak_allocated_bytes, reserved_bytes, num_allocs, num_frees)
    assert a.allocator_stats() == (1024, 1024, 2 * MiB, 1, 0)
    a.allocator_free(p)
    assert a.allocator_stats() == (0, 1024, 2 * MiB, 1, 1)
    a.set_stream(0)
    assert a.allocator_alloc(1000) != p  # another stream's block


# ---- invariants over random sequences ----


def check_invariants(a, live):
    segs = a.segments()
    total = allocated = 0
    for seg in segs:
        addr = seg["address"]
        prev_free = False
        for b in seg["blocks"]:
            assert b["address"] == addr  # blocks tile the segment
            addr += b["size"]
            assert b["size"] % 512 == 0
            free = b["state"] == "inactive"
            assert not (free and prev_free)  # free neighbours are always merged
            prev_free = free
            allocated += b["size"] if b["allocated"] else 0
        assert addr - seg["address"] == seg["total_size"]
        total += seg["total_size"]
    assert total == a.memory_reserved()
    assert allocated == a.memory_allocated()
    in_use = {b["address"]: b["requested_size"] for s in segs for b in s["blocks"] if b["allocated"]}
    assert in_use == live


ops = st.lists(
    st.tuples(
        st.sampled_from(["malloc", "free", "record", "sync", "empty"]),
        st.sampled_from([1, 512, 700, 64 * KiB, MiB, MiB + 1, 3 * MiB, 11 * MiB]),
        st.integers(0, 2),
        st.integers(0, 10**6),
    ),
    max_size=60,
)


@given(ops)
def test_random_sequences_keep_the_invariants(seq):
    a = Alloc(capacity_bytes=64 * MiB)
    live = {}
    for op, size, stream, pick in seq:
        if op == "malloc":
            try:
                live[a.malloc(size, stream=stream)] = size
            except RuntimeError as e:
                assert "CUDA out of memory" in str(e)
        elif op in ("free", "record") and live:
            p = sorted(live)[pick % len(live)]
            if op == "free":
                a.free(p)
                del live[p]
            else:
                a.record_stream(p, stream + 10)
        elif op == "sync":
            a.synchronize()
        elif op == "empty":
            a.empty_cache()
        check_invariants(a, live)
    for p in list(live):
        a.free(p)
    a.empty_cache()
    assert a.memory_reserved() == 0 and a.memory_allocated() == 0
    s = a.memory_stats()
    assert s["active.all.current"] == 0 and s["inactive_split.all.current"] == 0
    assert s["num_device_alloc"] == s["num_device_free"] == a.raw_free_calls
