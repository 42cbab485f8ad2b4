"""torch.distributed.checkpoint.state_dict_saver: where PyTorch defines save and async_save."""
from minitorch.distributed.checkpoint import async_save, save  # noqa: F401

__all__ = ["async_save", "save"]
