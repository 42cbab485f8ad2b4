"""torch.distributions.beta: the module programs import Beta from (`from torch.distributions.beta
import Beta`); the class lives with the gamma family in gamma.py."""
from .gamma import Beta

__all__ = ["Beta"]
