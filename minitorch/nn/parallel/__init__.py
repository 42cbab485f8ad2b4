"""torch.nn.parallel: DataParallel (data_parallel), DistributedDataParallel, and the pieces
DataParallel is made of: replicate, scatter, parallel_apply, gather."""
from ._functions import gather, parallel_apply, replicate, scatter
from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather", "parallel_apply", "replicate",
           "scatter"]


def __getattr__(name: str):
    """DistributedDataParallel (and its module, nn.parallel.distributed), imported on first use
    with minitorch.distributed (14 modules that `import minitorch` need not load)."""
    if name in ("DistributedDataParallel", "distributed"):
        import importlib

        distributed = importlib.import_module(__name__ + ".distributed")

        return distributed if name == "distributed" else distributed.DistributedDataParallel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
