"""torch.cuda.amp.grad_scaler, where PyTorch defines torch.cuda.amp.GradScaler."""
from minitorch.cuda.amp import GradScaler  # noqa: F401
