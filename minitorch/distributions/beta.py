"""torch.distributions.beta: the module programs import Beta from (`from torch.distributions.beta
import Beta`); the class lives with the gamma family in gamma.py."""
from .gamma import Beta

Beta.__module__ = __name__  # as PyTorch's, which defines it here

__all__ = ["Beta"]
