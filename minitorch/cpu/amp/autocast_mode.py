"""torch.cpu.amp.autocast_mode, where PyTorch defines torch.cpu.amp's autocast, custom_fwd and custom_bwd."""
from minitorch.cpu.amp import autocast, custom_bwd, custom_fwd  # noqa: F401
