"""minitorch.cuda's memory functions, as torch.cuda.memory: the caching allocator's statistics.

The allocator is _C's (csrc/alloc/caching.c, PyTorch's algorithm); _C_cuda feeds it device
memory. As in PyTorch, the statistics read empty until CUDA is initialised, so on a machine
without a GPU memory_allocated() is 0 and memory_stats() an empty dict.
"""
from __future__ import annotations

import collections
import operator
import pickle
import sys
import warnings
from typing import Any, Optional

from .. import _C
from . import _C_cuda, _index, _lazy_init, is_available, is_initialized

__all__ = ["reset_max_memory_allocated", "reset_max_memory_cached", "memory_cached", "max_memory_cached",
           "set_per_process_memory_fraction", "get_per_process_memory_fraction", "caching_allocator_alloc", "caching_allocator_delete", "empty_cache",
           "max_memory_allocated", "max_memory_reserved", "mem_get_info", "memory_allocated",
           "memory_reserved", "memory_snapshot", "memory_stats", "memory_stats_as_nested_dict",
           "memory_summary", "reset_accumulated_memory_stats", "reset_peak_memory_stats"]


def _missing(name: str) -> AttributeError:
    # What PyTorch's CPU-only build raises for these: its _C lacks the binding.
    return AttributeError(f"module 'minitorch._C' has no attribute '{name}'")


def _optional_index(device: Any) -> Optional[int]:
    """torch.cuda._utils._get_device_index(device, optional=True): None with no usable device."""
    if device is None:
        return _index(None) if is_available() else None
    return _index(device)


def memory_stats(device: Any = None) -> "collections.OrderedDict[str, int]":
    """The allocator's statistics under PyTorch's key names ("allocated_bytes.all.current", ...)."""
    return collections.OrderedDict(sorted(memory_stats_as_nested_dict(device).items()))


def memory_stats_as_nested_dict(device: Any = None) -> dict:
    # The C side gives the flat names already; nothing nests them further here.
    if not is_initialized():
        return {}
    return _C._cuda_memory_stats(_index(device))


def memory_allocated(device: Any = None) -> int:
    """Bytes held by tensors on device."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: Any = None) -> int:
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: Any = None) -> int:
    """Bytes the allocator holds from the driver (cached or in use)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: Any = None) -> int:
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def empty_cache() -> None:
    """Gives the cached segments no tensor uses back to the driver."""
    if is_initialized():
        _C._cuda_empty_cache()


def reset_peak_memory_stats(device: Any = None) -> None:
    if _C_cuda is None:
        raise _missing("_cuda_resetPeakMemoryStats")
    _lazy_init()
    _C._cuda_reset_peak_memory_stats(_index(device))


def reset_accumulated_memory_stats(device: Any = None) -> None:
    if _C_cuda is None:
        raise _missing("_cuda_resetAccumulatedMemoryStats")
    _lazy_init()
    _C._cuda_reset_accumulated_memory_stats(_index(device))


def reset_max_memory_allocated(device: Any = None) -> None:
    """Deprecated: reset_peak_memory_stats, which resets every peak, not only this one."""
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, "
                  "which resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device=device)


def reset_max_memory_cached(device: Any = None) -> None:
    """Deprecated: reset_peak_memory_stats, which resets every peak, not only this one."""
    warnings.warn("torch.cuda.reset_max_memory_cached now calls torch.cuda.reset_peak_memory_stats, "
                  "which resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device=device)


def memory_cached(device: Any = None) -> int:
    """Deprecated name of memory_reserved."""
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`", FutureWarning,
                  stacklevel=2)
    return memory_reserved(device=device)


def max_memory_cached(device: Any = None) -> int:
    """Deprecated name of max_memory_reserved."""
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device=device)


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    """Limits the caching allocator of device (default: the current one) to fraction of the
    device's total memory: an allocation that would reserve more frees the cache, then raises
    OutOfMemoryError."""
    _lazy_init()
    idx = _index(device)
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _C._cuda_set_memory_fraction(fraction, idx)


def get_per_process_memory_fraction(device: Any = None) -> float:
    """The fraction set_per_process_memory_fraction set for device (1.0 when none was)."""
    _lazy_init()
    return _C._cuda_get_memory_fraction(_index(device))


def memory_snapshot() -> list:
    """Every segment with its blocks (a subset of torch.cuda.memory_snapshot()'s fields)."""
    if _C_cuda is None:
        raise _missing("_cuda_memorySnapshot")
    return _C._cuda_memory_snapshot()


def _record_memory_history(enabled: Optional[str] = "all", *args, **kwargs) -> None:
    """Records, for every CUDA device's caching allocator, the Python stack of each allocation
    (enabled="state": the blocks in use keep theirs) and the history of its actions
    (enabled="all": alloc, free_requested, free_completed, segment_alloc, segment_free, oom), which
    _snapshot() returns; None stops. A bool is PyTorch's older form."""
    if isinstance(enabled, bool):
        return _record_memory_history_legacy(enabled, *args, **kwargs)
    return _record_memory_history_impl(enabled, *args, **kwargs)


def _record_memory_history_impl(enabled: Optional[str] = "all", context: Optional[str] = "all",
                                stacks: str = "all", max_entries: int = sys.maxsize, device: Any = None,
                                clear_history: bool = False, compile_context: bool = False,
                                global_record_annotations: bool = False,
                                skip_actions: Optional[list] = None) -> None:
    # stacks="all" adds C++ frames in PyTorch; minitorch records the Python ones either way
    if _C_cuda is None:
        raise _missing("_cuda_record_memory_history")
    _C._cuda_record_memory_history(enabled, context, stacks, max_entries, clear_history,
                                   skip_actions if skip_actions is not None else [])


def _record_memory_history_legacy(enabled: bool, record_context: bool = True,
                                  trace_alloc_max_entries: int = 1, trace_alloc_record_context: bool = False,
                                  device: Any = None, record_context_cpp: bool = False,
                                  clear_history: bool = False, compile_context: bool = False,
                                  global_record_annotations: bool = False) -> None:
    """PyTorch's older switches, as its _record_memory_history_legacy maps them."""
    if _C_cuda is None:
        raise _missing("_cuda_record_memory_history_legacy")
    history = enabled and trace_alloc_max_entries > 1
    context = ("all" if trace_alloc_record_context else "state") if enabled and record_context else None
    _C._cuda_record_memory_history(("all" if history else "state") if enabled else None, context, "python",
                                   trace_alloc_max_entries, clear_history, [])


def _snapshot(device: Any = None, augment_with_fx_traces: bool = False) -> dict:
    """The CUDA memory as PyTorch's snapshot dict: "segments" (each with its blocks, their
    "frames" where recorded) and "device_traces", one list of actions per device, oldest first."""
    if _C_cuda is None:
        raise _missing("_cuda_memorySnapshot")
    return {"segments": _C._cuda_memory_snapshot(),
            "device_traces": [_C._cuda_memory_trace(d) for d in range(_C_cuda.device_count())]}


def _dump_snapshot(filename: str = "dump_snapshot.pickle", augment_with_fx_traces: bool = False) -> None:
    """_snapshot() pickled into filename (the file PyTorch's memory_viz reads)."""
    s = _snapshot(augment_with_fx_traces=augment_with_fx_traces)
    with open(filename, "wb") as f:
        pickle.dump(s, f)


def mem_get_info(device: Any = None) -> tuple:
    """(free, total) bytes of device, as cudaMemGetInfo reports them."""
    _lazy_init()
    return _C_cuda.mem_get_info(_index(device))


_raw_blocks: dict = {}  # address -> device, for caching_allocator_delete


def caching_allocator_alloc(size: int, device: Any = None, stream: Any = None) -> int:
    """size bytes from the caching allocator, as an address; free with caching_allocator_delete."""
    from .streams import Stream, current_stream

    _lazy_init()
    size = operator.index(size)
    if size < 0:
        raise ValueError(f"size must be non-negative, got {size}")
    idx = _index(device)
    if stream is None:
        stream = current_stream(idx)
    if isinstance(stream, Stream):
        stream = stream.cuda_stream
    if not isinstance(stream, int):
        raise TypeError("Invalid type for stream argument, must be `minitorch.cuda.Stream` or `int` "
                        "representing a pointer to an existing stream")
    ptr = _C_cuda.caching_alloc(idx, size, stream)
    if ptr:
        _raw_blocks[ptr] = idx
    return ptr


def caching_allocator_delete(mem_ptr: int) -> None:
    if _C_cuda is None:
        raise _missing("_cuda_cudaCachingAllocator_raw_delete")
    if mem_ptr in _raw_blocks:
        _C_cuda.caching_free(_raw_blocks.pop(mem_ptr), mem_ptr)


def _scaled(n: int, pref: float, prefixes: list, limit: int, step: int) -> tuple:
    """n in the unit its row's reference value pref reads best in (PyTorch's rule)."""
    prefix = prefixes[0]
    for new_prefix in prefixes[1:]:
        if pref < limit:
            break
        prefix, n, pref = new_prefix, n // step, pref / step
    return n, prefix


def _format_size(sz: int, pref_sz: float) -> str:
    sz, prefix = _scaled(sz, pref_sz, ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"], 768 * 1024, 1024)
    return f"{sz:6d} {prefix}"


def _format_count(cnt: int, pref_cnt: float) -> str:
    cnt, prefix = _scaled(cnt, pref_cnt, [" ", "K", "M"], 750 * 1000, 1000)
    return f"{cnt:7d} {prefix} "


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """PyTorch's table of the allocator's statistics (torch.cuda.memory_summary's layout)."""
    device = _optional_index(device)
    stats = memory_stats(device)
    metrics = [
        ("allocated_bytes", "Allocated memory", _format_size),
        ("active_bytes", "Active memory", _format_size),
        ("requested_bytes", "Requested memory", _format_size),
        ("reserved_bytes", "GPU reserved memory", _format_size),
        ("inactive_split_bytes", "Non-releasable memory", _format_size),
        ("allocation", "Allocations", _format_count),
        ("active", "Active allocs", _format_count),
        ("segment", "GPU reserved segments", _format_count),
        ("inactive_split", "Non-releasable allocs", _format_count),
    ]
    lines = ["=" * 75,
             " {_:16} PyTorch CUDA memory summary, device ID {device:<17d} ",
             "-" * 75,
             "  {_:9} CUDA OOMs: {num_ooms:<12d} | {_:6} cudaMalloc retries: {num_alloc_retries:<8d}  ",
             "=" * 75,
             "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  "]

    def row(name, prefix, fmt, ref):
        vals = [stats[prefix + k] for k in ("current", "peak", "allocated", "freed")]
        refs = vals if ref is None else ref
        cells = " | ".join(fmt(v, r) for v, r in zip(vals, refs))
        lines.append(f" {name:<21} | {cells} ")
        return refs

    for key, name, fmt in metrics:
        lines.append("-" * 75)
        subs = [("all", name)] + ([] if abbreviated else [("large_pool", "      from large pool"),
                                                          ("small_pool", "      from small pool")])
        ref = None
        for sub, sub_name in subs:
            ref = row(sub_name, f"{key}.{sub}.", fmt, ref)
    for key, name in [("oversize_allocations", "Oversize allocations"),
                      ("oversize_segments", "Oversize GPU segments")]:
        lines.append("-" * 75)
        row(name, key + ".", _format_count, None)
    lines.append("=" * 75)
    fmt_dict = {"_": "", "device": device}
    for k, v in stats.items():
        fmt_dict[k.replace(".", "-")] = v
    return "|" + "|\n|".join(lines).format(**fmt_dict) + "|\n"
