"""torch.distributions.chi2: the module programs import Chi2 from (`from torch.distributions.chi2
import Chi2`); the class lives with the gamma family in gamma.py."""
from .gamma import Chi2

Chi2.__module__ = __name__  # as PyTorch's, which defines it here

__all__ = ["Chi2"]
