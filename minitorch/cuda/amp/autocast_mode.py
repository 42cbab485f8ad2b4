"""torch.cuda.amp.autocast_mode, where PyTorch defines torch.cuda.amp's autocast, custom_fwd and custom_bwd."""
from minitorch.cuda.amp import autocast, custom_bwd, custom_fwd  # noqa: F401
