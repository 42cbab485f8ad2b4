"""minitorch.signal.windows, as torch.signal.windows: SciPy's window functions, M points, symmetric
unless sym=False (then periodic: the first M points of the M + 1 point window)."""
from .windows import (
    bartlett, blackman, cosine, exponential, gaussian, general_cosine, general_hamming, hamming, hann, kaiser,
    nuttall,
)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]
