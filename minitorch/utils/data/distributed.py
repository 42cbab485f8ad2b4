"""torch.utils.data.distributed.DistributedSampler: each rank its share of the dataset."""
from __future__ import annotations

import math
from typing import Iterator, Optional, TypeVar

import minitorch

from . import _rng
from .sampler import Sampler

__all__ = ["DistributedSampler"]

T_co = TypeVar("T_co", covariant=True)


class DistributedSampler(Sampler[T_co]):
    """Rank `rank` of `num_replicas` gets indices rank, rank + num_replicas, ... of the (shuffled with
    seed + epoch when shuffle) dataset order, padded by repeating its start (or, with drop_last,
    cut) so that every rank gets the same number."""

    def __init__(self, dataset, num_replicas: Optional[int] = None, rank: Optional[int] = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            if not minitorch.distributed.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = minitorch.distributed.get_world_size()
        if rank is None:
            if not minitorch.distributed.is_available():
                raise RuntimeError("Requires distributed package to be available")
            rank = minitorch.distributed.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[T_co]:
        if self.shuffle:
            g = minitorch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = _rng.randperm(len(self.dataset), g)
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank:self.total_size:self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose order __iter__ gives when shuffle (the same on every rank)."""
        self.epoch = epoch
