"""nn.utils: helpers around a model's parameters, as torch.nn.utils (where PyTorch writes them
in Python too): gradient clipping, the flattening of parameters into one vector, parametrizations (weight
and spectral normalisation, legacy and as parametrizations), the conversion of convolution weights
to a memory format."""
from minitorch.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from minitorch.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from minitorch.nn.utils import fusion, parametrizations, parametrize, prune, rnn, stateless
from minitorch.nn.utils.fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from minitorch.nn.utils.init import skip_init
from minitorch.nn.utils.memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from minitorch.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from minitorch.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "convert_conv2d_weight_memory_format",
    "convert_conv3d_weight_memory_format",
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
    "fusion",
    "skip_init",
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
    "parametrizations",
    "parametrize",
    "prune",
    "remove_spectral_norm",
    "remove_weight_norm",
    "rnn",
    "spectral_norm",
    "weight_norm",
]
