"""torch.nn.DataParallel and nn.parallel.data_parallel, as scripts use them: wrap a model so that
it runs on the GPUs when there are any. Without CUDA the wrapper calls the module as it is (as
PyTorch's does); with CUDA, inputs move to device_ids[0], the module (whose parameters must be
there, PyTorch's check and message) runs, and the output moves to output_device. What is left
out: PyTorch splits the batch over several devices and replicates the module onto each; here the
whole batch runs on device_ids[0] (the same numbers, but for BatchNorm's per-replica statistics),
with a one-time warning when more than one device is named."""
from __future__ import annotations

import warnings
from typing import Any, Optional, Sequence

import minitorch
from minitorch.nn.modules.module import Module

_warned = False


def _index(d) -> int:
    if isinstance(d, int):
        return d
    d = minitorch.device(d)
    return d.index if d.index is not None else minitorch.cuda.current_device()


def _to(obj: Any, device) -> Any:
    """obj with its tensors (in tuples, lists and dicts too) on device."""
    if isinstance(obj, minitorch.Tensor):
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to(o, device) for o in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to(o, device) for o in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to(v, device)) for k, v in obj.items())
    return obj


def _device_ids(device_ids, output_device):
    if device_ids is None:
        device_ids = list(range(minitorch.cuda.device_count()))
    ids = [_index(d) for d in device_ids]
    out = ids[0] if output_device is None else _index(output_device)
    global _warned
    if len(ids) > 1 and not _warned:
        _warned = True
        warnings.warn("minitorch's DataParallel runs the whole batch on device_ids[0]: it does not split it "
                      "over the other devices", stacklevel=3)
    return ids, out


def _check_on(module: Module, src: minitorch.device) -> None:
    for t in list(module.parameters()) + list(module.buffers()):
        if t.device != src:
            raise RuntimeError(f"module must have its parameters and buffers on device {src} (device_ids[0]) "
                               f"but found one of them on device: {t.device}")


class DataParallel(Module):
    """module run on the GPUs (here device_ids[0]) when CUDA is available, else as it is. Its
    state_dict keys carry the "module." prefix, as PyTorch's."""

    def __init__(self, module: Module, device_ids: Optional[Sequence] = None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        if not minitorch.cuda.is_available():
            self.device_ids = []
            return
        self.dim = dim
        self.device_ids, self.output_device = _device_ids(device_ids, output_device)
        self.src_device_obj = minitorch.device("cuda", self.device_ids[0])

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_on(self.module, self.src_device_obj)
        out = self.module(*_to(inputs, self.src_device_obj), **_to(kwargs, self.src_device_obj))
        return _to(out, minitorch.device("cuda", self.output_device))


def data_parallel(module: Module, inputs: Any, device_ids: Optional[Sequence] = None, output_device=None,
                  dim: int = 0, module_kwargs: Optional[dict] = None) -> Any:
    """The function form of DataParallel: module(*inputs, **module_kwargs) on device_ids[0]."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    module_kwargs = module_kwargs or {}
    if not minitorch.cuda.is_available():
        return module(*inputs, **module_kwargs)
    ids, out_device = _device_ids(device_ids, output_device)
    src = minitorch.device("cuda", ids[0])
    _check_on(module, src)
    return _to(module(*_to(inputs, src), **_to(module_kwargs, src)), minitorch.device("cuda", out_device))
