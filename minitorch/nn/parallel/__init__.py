"""torch.nn.parallel: DataParallel (data_parallel), DistributedDataParallel, and the pieces
DataParallel is made of: replicate, scatter, parallel_apply, gather."""
from ._functions import gather, parallel_apply, replicate, scatter
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather", "parallel_apply", "replicate",
           "scatter"]
