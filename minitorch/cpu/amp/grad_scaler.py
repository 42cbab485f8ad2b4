"""torch.cpu.amp.grad_scaler, where PyTorch defines torch.cpu.amp.GradScaler."""
from minitorch.cpu.amp import GradScaler  # noqa: F401
