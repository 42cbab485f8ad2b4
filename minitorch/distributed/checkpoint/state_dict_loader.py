"""torch.distributed.checkpoint.state_dict_loader: where PyTorch defines load."""
from minitorch.distributed.checkpoint import load  # noqa: F401

__all__ = ["load"]
