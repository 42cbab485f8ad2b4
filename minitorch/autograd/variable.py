"""torch.autograd.variable: where older programs import Variable from (`from
torch.autograd.variable import Variable`); Variable(t) returns a tensor, as in PyTorch."""
from .._legacy import Variable

__all__ = ["Variable"]
