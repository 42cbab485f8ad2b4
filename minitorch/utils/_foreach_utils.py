"""torch.utils._foreach_utils: which devices have foreach (and fused) kernels, and the grouping of
parallel tensor lists by device and dtype that optimizers do before a foreach call. minitorch's
_foreach_* functions run on every device it has, as PyTorch's do on the CPU and CUDA."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import minitorch
from minitorch import Tensor

TensorListList = List[List[Optional[Tensor]]]
Indices = List[int]
_foreach_supported_types = [Tensor, minitorch.nn.parameter.Parameter]


def _get_foreach_kernels_supported_devices() -> List[str]:
    """The device types with fast foreach kernels (the CPU runs foreach ops too, item by item)."""
    return ["cuda", "xpu", "mtia", "privateuseone"]


def _get_fused_kernels_supported_devices() -> List[str]:
    """The device types with the fused optimizer kernels (fused=True)."""
    return ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]


def _device_has_foreach_support(device: minitorch.device) -> bool:
    return device.type in _get_foreach_kernels_supported_devices() + ["cpu"]


def _has_foreach_support(tensors: List[Tensor], device: minitorch.device) -> bool:
    """Whether the tensors (None entries allowed) can go to a foreach call on device."""
    return _device_has_foreach_support(device) and all(t is None or type(t) in _foreach_supported_types
                                                       for t in tensors)


@minitorch.no_grad()
def _group_tensors_by_device_and_dtype(
    tensorlistlist: TensorListList, with_indices: bool = False
) -> Dict[Tuple[minitorch.device, minitorch.dtype], Tuple[TensorListList, Indices]]:
    """The parallel lists split by the device and dtype of the first list's tensors: for each
    (device, dtype), the lists' entries at those positions (None entries kept), and the positions
    themselves when with_indices."""
    groups: dict = {}
    for k, t in enumerate(tensorlistlist[0]):
        key = (t.device, t.dtype)
        if key not in groups:
            groups[key] = ([[] for _ in tensorlistlist], [])
        lists, idx = groups[key]
        for dst, src in zip(lists, tensorlistlist):
            dst.append(src[k])
        if with_indices:
            idx.append(k)
    return groups
