"""torch.distributed.fsdp: FullyShardedDataParallel (FSDP1) and its configuration classes."""
from minitorch.distributed.fsdp.api import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig,
                                            FullStateDictConfig, LocalStateDictConfig, MixedPrecision,
                                            OptimStateDictConfig, ShardedStateDictConfig, ShardingStrategy,
                                            StateDictConfig, StateDictSettings, StateDictType)
from minitorch.distributed.fsdp.fully_sharded_data_parallel import FullyShardedDataParallel

__all__ = ["BackwardPrefetch", "CPUOffload", "FullOptimStateDictConfig", "FullStateDictConfig",
           "FullyShardedDataParallel", "LocalStateDictConfig", "MixedPrecision", "OptimStateDictConfig",
           "ShardedStateDictConfig", "ShardingStrategy", "StateDictConfig", "StateDictSettings", "StateDictType"]
