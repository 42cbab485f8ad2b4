"""torch.distributed.tensor: DTensor, a tensor laid out over a DeviceMesh by one placement per
mesh dimension (Shard(dim), Replicate(), Partial()), what makes one (distribute_tensor,
DTensor.from_local, the factories zeros, ones, empty, full, rand, randn; distribute_module for a
module's parameters), and what gives its values back (to_local, full_tensor, redistribute).
_dispatch.py says which operators it computes."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import minitorch
from minitorch.distributed.device_mesh import DeviceMesh, init_device_mesh
from minitorch.distributed.tensor._api import DTensor, _leaf, _spec, distribute_module, distribute_tensor
from minitorch.distributed.tensor import _redistribute as _rd
from minitorch.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "DeviceMesh", "Partial", "Placement", "Replicate", "Shard", "distribute_module",
           "distribute_tensor", "empty",
           "full", "init_device_mesh", "ones", "rand", "randn", "zeros"]


def _factory(fill, size: Sequence[Any], requires_grad: bool, dtype, device_mesh, placements) -> DTensor:
    from minitorch.distributed.device_mesh import _mesh_resources

    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else tuple(size)
    mesh = device_mesh if device_mesh is not None else _mesh_resources.get_current_mesh()
    placements = _rd.normalize(placements if placements is not None else [Replicate()] * mesh.ndim, len(shape),
                               mesh.ndim)
    for p in placements:
        if p.is_partial():
            raise RuntimeError("DTensor factories do not take Partial placements")
    local = fill(_rd.local_shape(shape, mesh, placements), dtype=dtype, device=mesh.device_type)
    return _leaf(local, _spec(mesh, placements, shape), requires_grad)


def zeros(*size, requires_grad: bool = False, dtype=None, layout=None, device_mesh: Optional[DeviceMesh] = None,
          placements: Optional[Sequence[Placement]] = None) -> DTensor:
    return _factory(minitorch.zeros, size, requires_grad, dtype, device_mesh, placements)


def ones(*size, requires_grad: bool = False, dtype=None, layout=None, device_mesh: Optional[DeviceMesh] = None,
         placements: Optional[Sequence[Placement]] = None) -> DTensor:
    return _factory(minitorch.ones, size, requires_grad, dtype, device_mesh, placements)


def empty(*size, requires_grad: bool = False, dtype=None, layout=None, device_mesh: Optional[DeviceMesh] = None,
          placements: Optional[Sequence[Placement]] = None) -> DTensor:
    return _factory(minitorch.empty, size, requires_grad, dtype, device_mesh, placements)


def full(size, fill_value, *, requires_grad: bool = False, dtype=None, layout=None,
         device_mesh: Optional[DeviceMesh] = None, placements: Optional[Sequence[Placement]] = None) -> DTensor:
    def fill(shape, dtype, device):
        return minitorch.full(shape, fill_value, dtype=dtype, device=device)

    return _factory(fill, (size,), requires_grad, dtype, device_mesh, placements)


def _random_factory(draw, size, requires_grad, dtype, device_mesh, placements) -> DTensor:
    """Each rank's part of the whole tensor that draw(shape) gives from the mesh's first rank's
    generator state (_random.py): shards of the tensor minitorch.<draw> gives with that seed."""
    from minitorch.distributed.tensor import _random

    def fill(local_shape, dtype, device):
        whole = _random.synced(mesh, lambda: draw(shape, dtype=dtype, device=device))
        return _random.local_part(whole, shape, mesh, placements)

    from minitorch.distributed.device_mesh import _mesh_resources

    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else tuple(size)
    mesh = device_mesh if device_mesh is not None else _mesh_resources.get_current_mesh()
    placements = _rd.normalize(placements if placements is not None else [Replicate()] * mesh.ndim, len(shape),
                               mesh.ndim)
    return _factory(fill, size, requires_grad, dtype, mesh, placements)


def rand(*size, requires_grad: bool = False, dtype=None, layout=None, device_mesh: Optional[DeviceMesh] = None,
         placements: Optional[Sequence[Placement]] = None) -> DTensor:
    """Uniform on [0, 1): each rank's part of one draw of the whole (the same seed as minitorch.rand's)."""
    return _random_factory(minitorch.rand, size, requires_grad, dtype, device_mesh, placements)


def randn(*size, requires_grad: bool = False, dtype=None, layout=None, device_mesh: Optional[DeviceMesh] = None,
          placements: Optional[Sequence[Placement]] = None) -> DTensor:
    """Standard normal: each rank's part of one draw of the whole (the same seed as minitorch.randn's)."""
    return _random_factory(minitorch.randn, size, requires_grad, dtype, device_mesh, placements)
