"""torch.nn.parallel: DataParallel (data_parallel) and DistributedDataParallel."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
