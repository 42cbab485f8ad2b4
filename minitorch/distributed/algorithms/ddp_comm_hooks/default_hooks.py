"""PyTorch's default DDP communication hooks: hook(state, bucket) -> Future of the bucket's
averaged gradients, registered with DistributedDataParallel.register_comm_hook(state, hook);
state is the process group to use (None: the default group)."""
from __future__ import annotations

import minitorch
from minitorch import distributed as dist


def _group_size(process_group) -> int:
    return dist.get_world_size(process_group)


def allreduce_hook(process_group, bucket) -> "minitorch.futures.Future":
    """What DDP does without a hook: the bucket divided by the group's size, then all-reduced."""
    group = process_group if process_group is not None else dist.group.WORLD
    tensor = bucket.buffer()
    with minitorch.no_grad():
        tensor.div_(_group_size(group))
    work = dist.all_reduce(tensor, group=group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def _compress_hook(dtype, process_group, bucket) -> "minitorch.futures.Future":
    group = process_group if process_group is not None else dist.group.WORLD
    buffer = bucket.buffer()
    with minitorch.no_grad():
        compressed = buffer.to(dtype).div_(_group_size(group))
    work = dist.all_reduce(compressed, group=group, async_op=True)

    def decompress(fut):
        with minitorch.no_grad():
            buffer.copy_(fut.value()[0])
        return buffer

    return work.get_future().then(decompress)


def fp16_compress_hook(process_group, bucket) -> "minitorch.futures.Future":
    """The bucket sent as float16 (half the bytes): divided by the group's size, all-reduced, and
    put back in the bucket's dtype."""
    return _compress_hook(minitorch.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket) -> "minitorch.futures.Future":
    """As fp16_compress_hook, in bfloat16."""
    return _compress_hook(minitorch.bfloat16, process_group, bucket)
