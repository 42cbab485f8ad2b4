"""torch.distributed.tensor.placement_types: how a DTensor lies along one dimension of its
DeviceMesh. Shard(dim): split along the tensor's dim into as many chunks as the mesh dimension
has ranks, as torch.chunk splits (ceil(n / w) elements each, the last ones shorter or empty);
Replicate(): every rank holds all of it; Partial(op): every rank holds a part of the value, which
is the reduction (sum by default) of the parts; _StridedShard(dim, split_factor=f): the dimension
cut into f pieces first, each piece split over the ranks as Shard splits, a rank holding its part
of every piece in order (PyTorch's placement for a sharded dimension flattened behind others, and
for FSDP2 over tensor-parallel shards)."""
from __future__ import annotations

from typing import List, Optional, Tuple

__all__ = ["Partial", "Placement", "Replicate", "Shard"]  # and _StridedShard, private as PyTorch's


class Placement:
    """The base of the placements; asks what a placement is."""

    def is_shard(self, dim: Optional[int] = None) -> bool:
        return isinstance(self, Shard) and (dim is None or self.dim == dim)

    def is_replicate(self) -> bool:
        return isinstance(self, Replicate)

    def is_partial(self, reduce_op: Optional[str] = None) -> bool:
        return isinstance(self, Partial) and (reduce_op is None or self.reduce_op == reduce_op)


class Shard(Placement):
    """Split along tensor dimension dim over the ranks of the mesh dimension."""

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shard) and self.dim == other.dim

    def __hash__(self) -> int:
        return hash(("Shard", self.dim))

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"

    def __str__(self) -> str:
        return f"S({self.dim})"

    @staticmethod
    def _chunk(size: int, world: int, rank: int) -> Tuple[int, int]:
        """(start, length) of rank's chunk of a dimension of size elements split over world ranks
        as torch.chunk splits it (chunks of ceil(size / world), the last ones shorter or empty)."""
        full = -(-size // world) if world else 0
        start = min(full * rank, size)
        return start, max(0, min(full, size - start))


class _StridedShard(Placement):
    """dim cut into split_factor pieces (as torch.chunk cuts), each split over the ranks of the
    mesh dimension as Shard splits; a rank holds its chunk of every piece, concatenated in piece
    order. A dimension (a, b) sharded on b and flattened is _StridedShard(0, split_factor=a): the
    same elements on each rank as before the flatten, in the same order. Not a Shard (is_shard()
    is False), as PyTorch's."""

    def __init__(self, dim: int, *, split_factor: int = 1, sf: Optional[int] = None) -> None:
        if sf is not None:
            if split_factor != 1:
                raise TypeError("_StridedShard received both split_factor and sf")
            split_factor = sf
        self.dim = dim
        self.split_factor = int(split_factor)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _StridedShard) and (self.dim, self.split_factor) == (other.dim, other.split_factor)

    def __hash__(self) -> int:
        return hash((self.dim, self.split_factor))

    def __repr__(self) -> str:
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"

    def __str__(self) -> str:
        return f"_S({self.dim}, {self.split_factor})"

    def _segments(self, size: int, world: int, rank: int) -> List[Tuple[int, int]]:
        """The (start, length) runs of a dimension of size elements that rank holds, in order."""
        out = []
        for j in range(self.split_factor):
            start, length = Shard._chunk(size, self.split_factor, j)
            s, n = Shard._chunk(length, world, rank)
            out.append((start + s, n))
        return out


def _sharded_dim(p: Placement) -> Optional[int]:
    """The tensor dimension a Shard or _StridedShard splits, else None."""
    return p.dim if isinstance(p, (Shard, _StridedShard)) else None


class Replicate(Placement):
    """The whole tensor on every rank of the mesh dimension."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Replicate)

    def __hash__(self) -> int:
        return hash("Replicate")

    def __repr__(self) -> str:
        return "Replicate()"

    def __str__(self) -> str:
        return "R"


class Partial(Placement):
    """Each rank of the mesh dimension holds a part; the value is their reduce_op ("sum", "avg",
    "max", "min")."""

    def __init__(self, reduce_op: str = "sum") -> None:
        if reduce_op not in ("sum", "avg", "max", "min"):
            raise ValueError(f"Partial does not support reduce_op {reduce_op!r}")
        self.reduce_op = reduce_op

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Partial) and self.reduce_op == other.reduce_op

    def __hash__(self) -> int:
        return hash(("Partial", self.reduce_op))

    def __repr__(self) -> str:
        return f"Partial({self.reduce_op})"

    def __str__(self) -> str:
        return f"P({self.reduce_op})"
