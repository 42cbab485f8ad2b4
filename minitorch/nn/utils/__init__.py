"""nn.utils: helpers around a model's parameters, as torch.nn.utils (where PyTorch writes them
in Python too): gradient clipping and the flattening of parameters into one vector."""
from minitorch.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from minitorch.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from minitorch.nn.utils import rnn

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
    "rnn",
]
