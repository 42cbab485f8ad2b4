"""torch.distributed.device_mesh: a DeviceMesh lays the ranks of the world out as an n-D array
(init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))), and owns one process group per
dimension for each rank: the ranks that differ from it along that dimension only.

Every rank builds the same mesh (SPMD): the groups of every dimension are made when the mesh is
(every rank calls new_group for every group, in the same order), so that slicing (mesh["dp"])
and get_group() communicate nothing. A dimension that spans the whole world uses the default group.
"""
from __future__ import annotations

import weakref
from typing import List, Optional, Tuple, Union

import numpy as np

import minitorch
from minitorch import distributed as dist

__all__ = ["DeviceMesh", "init_device_mesh"]


def _dim_groups(mesh: np.ndarray) -> List:
    """For each dimension of mesh (global ranks), the group of this rank along it (every rank
    takes part in making every group)."""
    me = dist.get_rank()
    world = dist.get_world_size()
    groups = []
    for d in range(mesh.ndim):
        lines = np.moveaxis(mesh, d, -1).reshape(-1, mesh.shape[d])
        mine = None
        for line in lines:
            ranks = [int(r) for r in line]
            if len(ranks) == world:
                pg = dist._require_init()
            else:
                pg = dist.new_group(ranks)
            if me in ranks:
                mine = pg
        groups.append(mine)
    return groups


class DeviceMesh:
    """An n-D layout of global ranks (mesh), on device_type ("cpu" or "cuda"), with a name per
    dimension when mesh_dim_names is given."""

    def __init__(self, device_type: str, mesh, *, mesh_dim_names: Optional[Tuple[str, ...]] = None,
                 _init_backend: bool = True, _groups: Optional[List] = None) -> None:
        self.device_type = device_type
        arr = mesh.cpu().numpy() if isinstance(mesh, minitorch.Tensor) else np.asarray(mesh)
        self._mesh = arr.astype(np.int64)
        self._mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names is not None else None
        if _groups is not None:
            self._groups = list(_groups)
        elif _init_backend:
            if not dist.is_initialized():
                dist.init_process_group()
            world = dist.get_world_size()
            if self._mesh.size > world:
                raise RuntimeError(f"Mesh should not be bigger than default world size {world}, but found "
                                   f"{self._mesh.size} ranks!")
            self._groups = _dim_groups(self._mesh)
        else:
            self._groups = [None] * self._mesh.ndim
        if _init_backend or _groups is not None:
            _made.append(weakref.ref(self))

    @property
    def mesh(self) -> "minitorch.Tensor":
        return minitorch.from_numpy(self._mesh.copy())

    @property
    def mesh_dim_names(self) -> Optional[Tuple[str, ...]]:
        return self._mesh_dim_names

    @property
    def ndim(self) -> int:
        return self._mesh.ndim

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(self._mesh.shape)

    def size(self, mesh_dim: Optional[int] = None) -> int:
        return int(self._mesh.size if mesh_dim is None else self._mesh.shape[mesh_dim])

    def get_rank(self) -> int:
        return dist.get_rank()

    def _dim(self, mesh_dim: Union[int, str]) -> int:
        if isinstance(mesh_dim, str):
            if not self._mesh_dim_names:
                raise KeyError("No `mesh_dim_names` found.")
            if mesh_dim not in self._mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist.",
                               f"Available mesh dimensions are: mesh_dim_names={self._mesh_dim_names}")
            return self._mesh_dim_names.index(mesh_dim)
        return int(mesh_dim)

    def get_coordinate(self) -> Optional[List[int]]:
        """This rank's index in the mesh, None when it is not in it."""
        where = np.argwhere(self._mesh == dist.get_rank())
        return [int(i) for i in where[0]] if len(where) else None

    def get_local_rank(self, mesh_dim: Union[int, str, None] = None) -> int:
        if self.ndim > 1 and mesh_dim is None:
            raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                               "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.")
        return dist.get_rank(self.get_group(0 if mesh_dim is None else mesh_dim))

    def get_group(self, mesh_dim: Union[int, str, None] = None):
        """The process group of this rank along mesh_dim (needed when the mesh has several)."""
        if self.ndim > 1 and mesh_dim is None:
            raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                               "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.",
                               "If you want to get the list of all the ProcessGroups in the DeviceMesh,"
                               "please use `get_all_groups()` instead.")
        group = self._groups[self._dim(0 if mesh_dim is None else mesh_dim)]
        if group is None:
            raise RuntimeError("DeviceMesh process groups not initialized!")
        return group

    def get_all_groups(self) -> List:
        return [self.get_group(d) for d in range(self.ndim)]

    def __getitem__(self, mesh_dim_names: Union[str, Tuple[str, ...]]) -> "DeviceMesh":
        """The submesh of the named dimensions that holds this rank (mesh["dp"], mesh["dp", "tp"])."""
        if not self._mesh_dim_names:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if names == self._mesh_dim_names:
            return self
        if not all(n in self._mesh_dim_names for n in names):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. "
                           f"Valid mesh_dim_names are {self._mesh_dim_names}.")
        if len(set(names)) != len(names):
            raise RuntimeError(f"Slicing overlapping dim_names {names} is not allowed.")
        dims = [self._mesh_dim_names.index(n) for n in names]
        coord = self.get_coordinate()
        # this rank's line: the other dimensions fixed at its coordinate, the named ones in their order
        index = tuple(slice(None) if d in dims else coord[d] for d in range(self.ndim))
        kept = sorted(dims)
        sub = np.transpose(self._mesh[index], [kept.index(d) for d in dims])
        return DeviceMesh(self.device_type, sub, mesh_dim_names=names, _groups=[self._groups[d] for d in dims])

    def __enter__(self) -> "DeviceMesh":
        """Inside `with mesh:`, DTensor's functions take this mesh when given none."""
        _mesh_resources.mesh_stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _mesh_resources.mesh_stack.pop()

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (isinstance(other, DeviceMesh) and self.device_type == other.device_type
                and np.array_equal(self._mesh, other._mesh) and self._mesh_dim_names == other._mesh_dim_names)

    def __hash__(self) -> int:
        return hash((self.device_type, self._mesh.tobytes(), self._mesh.shape, self._mesh_dim_names))

    def __reduce__(self):
        """Pickled by its layout (a DTensor's minitorch.save): unpickled as this process's equal
        mesh when it has one, else as a new one (then every rank must load together: new groups)."""
        return (_rebuild_mesh, (self.device_type, self._mesh.tolist(), self._mesh_dim_names))

    def __repr__(self) -> str:
        sizes = (f"({', '.join(f'{k}={v}' for k, v in zip(self._mesh_dim_names, self._mesh.shape))})"
                 if self._mesh_dim_names else f"{tuple(self._mesh.shape)}")
        return f"DeviceMesh({sizes}, '{self.device_type}', mesh={self._mesh.tolist()})"


_made: List["weakref.ref[DeviceMesh]"] = []  # the meshes of this process, for unpickling


def _rebuild_mesh(device_type: str, mesh: list, mesh_dim_names: Optional[Tuple[str, ...]]) -> DeviceMesh:
    want = DeviceMesh(device_type, mesh, mesh_dim_names=mesh_dim_names, _init_backend=False)
    _made[:] = [ref for ref in _made if ref() is not None]
    for ref in reversed(_made):
        if ref() == want:
            return ref()
    return DeviceMesh(device_type, mesh, mesh_dim_names=mesh_dim_names)


class _MeshEnv:
    """The meshes entered with `with mesh:` (innermost last)."""

    def __init__(self) -> None:
        self.mesh_stack: List[DeviceMesh] = []

    def get_current_mesh(self) -> DeviceMesh:
        if not self.mesh_stack:
            raise RuntimeError("No device mesh is currently active!")
        return self.mesh_stack[-1]


_mesh_resources = _MeshEnv()


def init_device_mesh(device_type: str, mesh_shape: Tuple[int, ...], *,
                     mesh_dim_names: Optional[Tuple[str, ...]] = None) -> DeviceMesh:
    """A DeviceMesh of the world's ranks 0..N-1 in row-major order, shaped mesh_shape; it starts
    the default process group (env://) when none is."""
    mesh_shape = tuple(int(s) for s in mesh_shape)
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError("Each mesh_dim_name must be unique. "
                               f"Found repeated mesh_dim_name in mesh_dim_names {mesh_dim_names}")
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError("mesh_shape and mesh_dim_names should have same length! "
                               f"Found len(mesh_dim_names): {len(mesh_dim_names)} and "
                               f"len(mesh_shape):{len(mesh_shape)}.")
    if ":" in device_type:
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. ",
                           "If you maintained a 'torch.device' object, it's recommended to pass in 'device.type'.")
    mesh = np.arange(int(np.prod(mesh_shape)), dtype=np.int64).reshape(mesh_shape)
    return DeviceMesh(device_type, mesh, mesh_dim_names=mesh_dim_names)
