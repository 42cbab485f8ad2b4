"""nn.parallel's building blocks, as PyTorch's replicate, scatter_gather and parallel_apply:
replicate(module, devices) copies a module onto each device, scatter splits inputs into one chunk
per device, parallel_apply runs module i on input i, gather concatenates the outputs on one
device. They work on the devices minitorch has (CUDA, the emulated one included): integers are
CUDA indices and a CPU device is refused, as PyTorch's. parallel_apply runs the replicas one after
another on the calling thread (PyTorch uses a thread each when there are several); the results
are the same."""
from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any, List, Optional, Sequence

import minitorch
from minitorch.nn.modules.module import Module


def _device(d) -> minitorch.device:
    """a CUDA device from an index, a string or a device; PyTorch's refusal of the CPU"""
    if isinstance(d, int):
        return minitorch.device("cuda", d)
    d = minitorch.device(d)
    if d.type == "cpu":
        raise ValueError(f"Expected a non cpu device, but got: {d}")
    return d


def _replica(module: Module) -> Module:
    """module's object copied, its tables copied (so the replica's children and buffers can be
    replaced without touching module); its parameters become plain tensor attributes, set by
    replicate, as PyTorch's replicas have none of their own"""
    replica = module.__new__(type(module))
    replica.__dict__ = module.__dict__.copy()
    replica.__dict__["_parameters"] = OrderedDict()
    replica.__dict__["_buffers"] = replica._buffers.copy()
    replica.__dict__["_modules"] = replica._modules.copy()
    replica.__dict__["_is_replica"] = True
    return replica


def _copy_to(t, device, detach: bool):
    """t on device: t itself where it already is (a replica on the module's device shares it),
    a copy elsewhere, differentiable unless detach"""
    if t is None:
        return None
    out = t if t.device == device else t.to(device)
    if detach:
        out = out.detach().requires_grad_(t.requires_grad)
    return out


def replicate(network: Module, devices: Sequence, detach: bool = False) -> List[Module]:
    """One replica of network per device: the same modules with their parameters and buffers
    copied there (gradients flow back to network's parameters unless detach)."""
    devices = [_device(d) for d in devices]
    modules = list(network.modules())
    replicas = [[_replica(m) for m in modules] for _ in devices]
    index = {id(m): i for i, m in enumerate(modules)}
    for j, device in enumerate(devices):
        for m, r in zip(modules, replicas[j]):
            for name, child in m._modules.items():
                r._modules[name] = None if child is None else replicas[j][index[id(child)]]
            for name, p in m._parameters.items():
                r.__dict__[name] = _copy_to(p, device, detach)
            for name, b in m._buffers.items():
                r._buffers[name] = _copy_to(b, device, detach or not (b is not None and b.requires_grad))
    return [r[0] for r in replicas]


def _scatter(obj: Any, devices: list, dim: int) -> list:
    if isinstance(obj, minitorch.Tensor):
        return [chunk.to(d) for chunk, d in zip(obj.chunk(len(devices), dim), devices)]
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return [type(obj)(*parts) for parts in zip(*(_scatter(o, devices, dim) for o in obj))]
    if isinstance(obj, tuple) and obj:
        return [tuple(parts) for parts in zip(*(_scatter(o, devices, dim) for o in obj))]
    if isinstance(obj, list) and obj:
        return [list(parts) for parts in zip(*(_scatter(o, devices, dim) for o in obj))]
    if isinstance(obj, dict) and obj:
        return [type(obj)(parts) for parts in _scatter(list(obj.items()), devices, dim)]
    return [obj for _ in devices]


def scatter(inputs: Any, target_gpus: Sequence, dim: int = 0) -> list:
    """inputs split along dim into one chunk per device (fewer when a tensor has fewer slices),
    through tuples, lists and dicts; other values are repeated."""
    return _scatter(inputs, [_device(d) for d in target_gpus], dim)


def gather(outputs: Any, target_device, dim: int = 0) -> Any:
    """The per-device outputs concatenated along dim on target_device (-1 or "cpu": the host),
    through tuples, lists and dicts; 0-dim tensors are stacked into a vector (with PyTorch's
    warning)."""
    device = minitorch.device("cpu") if target_device == -1 else (
        minitorch.device("cuda", target_device) if isinstance(target_device, int) else minitorch.device(target_device))

    def gather_map(outs: list) -> Any:
        out = outs[0]
        if isinstance(out, minitorch.Tensor):
            if any(o.device.type == "cpu" for o in outs):
                raise AssertionError("Gather function not implemented for CPU tensors")
            if all(o.dim() == 0 for o in outs):
                warnings.warn("Was asked to gather along dimension 0, but all input tensors were scalars; will "
                              "instead unsqueeze and return a vector.", stacklevel=3)
                return minitorch.stack([o.to(device) for o in outs])
            return minitorch.cat([o.to(device) for o in outs], dim)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        if isinstance(out, tuple) and hasattr(out, "_fields"):
            return type(out)._make(map(gather_map, zip(*outs)))
        return type(out)(map(gather_map, zip(*outs)))

    return gather_map(list(outputs))


def parallel_apply(modules: Sequence[Module], inputs: Sequence[Any], kwargs_tup: Optional[Sequence[dict]] = None,
                   devices: Optional[Sequence] = None) -> List[Any]:
    """[modules[i](*inputs[i], **kwargs_tup[i])] (an input that is not a list or tuple is the one
    argument), each on its device."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    if kwargs_tup is None:
        kwargs_tup = [{} for _ in modules]
    elif len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of kwargs "
                             f"{len(kwargs_tup)}")
    if devices is not None:
        if len(modules) != len(devices):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of devices "
                                 f"{len(devices)}")
        devices = [_device(d) for d in devices]
    outputs = []
    for module, inp, kwargs in zip(modules, inputs, kwargs_tup):
        args = inp if isinstance(inp, (list, tuple)) else (inp,)
        outputs.append(module(*args, **kwargs))
    return outputs
