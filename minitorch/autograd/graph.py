"""The autograd graph's nodes: `tensor.grad_fn` is a Node (a subclass named after it, such as
AddmmBackward0), with `name()` and `next_functions`."""
from .._C import Node  # noqa: F401
