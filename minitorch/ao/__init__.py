"""minitorch.ao: PyTorch's architecture-optimization namespace; here its quantization parts
(ao.quantization, ao.nn.quantized). Imported on first use of minitorch.ao."""
from . import nn, quantization  # noqa: F401
