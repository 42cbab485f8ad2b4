"""A CPU allocation that cannot be satisfied raises PyTorch's RuntimeError and leaves the process
usable (the sanitizer run needs ASAN_OPTIONS=allocator_may_return_null=1 for this, see Makefile)."""
import re

import pytest

import minitorch

OOM = re.escape("DefaultCPUAllocator: can't allocate memory: you tried to allocate ") + r"\d+" + re.escape(
    " bytes. Error code 12 (Cannot allocate memory)")


@pytest.mark.parametrize("make", [
    lambda: minitorch.empty(2**45),
    lambda: minitorch.zeros(2**43, dtype=minitorch.int64),
    lambda: minitorch.ones(2**22, 2**22),
    lambda: minitorch.ones(1, 2).expand(2**40, 2).contiguous(),
])
def test_cpu_oom_raises_and_process_stays_usable(make):
    before = minitorch._C._cpu_allocator_stats()["allocated_bytes"]
    with pytest.raises(RuntimeError, match=OOM):
        make()
    assert minitorch._C._cpu_allocator_stats()["allocated_bytes"] == before
    t = minitorch.ones(1000) * 2
    assert t.sum().item() == 2000


def test_oom_message_has_the_byte_count():
    with pytest.raises(RuntimeError, match=str(2**45 * 4)):
        minitorch.empty(2**45)
