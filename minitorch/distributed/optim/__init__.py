"""minitorch.distributed.optim, as torch.distributed.optim: ZeroRedundancyOptimizer and
DistributedOptimizer (over RPC, with distributed autograd)."""
from .optimizer import DistributedOptimizer
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["DistributedOptimizer", "ZeroRedundancyOptimizer"]
