"""torch.distributed.fsdp: FullyShardedDataParallel (FSDP1) and its configuration classes, and
FSDP2's fully_shard."""
from minitorch.distributed.fsdp.api import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig,
                                            FullStateDictConfig, LocalStateDictConfig, MixedPrecision,
                                            OptimStateDictConfig, ShardedStateDictConfig, ShardingStrategy,
                                            StateDictConfig, StateDictSettings, StateDictType)
from minitorch.distributed.fsdp.fully_sharded_data_parallel import FullyShardedDataParallel
from minitorch.distributed.fsdp._fully_shard import (CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy,
                                                    fully_shard)

__all__ = ["BackwardPrefetch", "CPUOffload", "CPUOffloadPolicy", "FSDPModule", "FullOptimStateDictConfig",
           "FullStateDictConfig", "FullyShardedDataParallel", "LocalStateDictConfig", "MixedPrecision", "MixedPrecisionPolicy",
           "OffloadPolicy", "OptimStateDictConfig", "ShardedStateDictConfig", "ShardingStrategy", "StateDictConfig",
           "StateDictSettings", "StateDictType", "fully_shard"]
