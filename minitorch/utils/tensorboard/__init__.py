"""torch.utils.tensorboard: SummaryWriter writes TensorBoard event files.

PyTorch's module needs the tensorboard package; ours encodes the files itself (TFRecord framing,
protocol-buffer Event and Summary messages, PNG images on zlib), so it needs nothing beyond NumPy,
and matplotlib only for add_figure. TensorBoard reads the files as it reads PyTorch's.
"""
from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
