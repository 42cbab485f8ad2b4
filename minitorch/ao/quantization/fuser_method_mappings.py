"""Which function fuses which run of module types (torch.ao.quantization.fuser_method_mappings).
A fuser method takes is_qat and the modules: for training it wraps them in a fused module (the
batch norm stays, for quantization-aware training); for inference it folds a batch norm into the
layer before it (nn.utils.fuse_conv_bn_eval's math) and wraps what is left with its ReLU."""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from minitorch import nn
from minitorch.ao.nn import intrinsic as nni
from minitorch.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval

__all__ = ["fuse_conv_bn", "fuse_conv_bn_relu", "fuse_linear_bn", "get_fuser_method"]

_CONV_BN = {nn.Conv1d: nni.ConvBn1d, nn.Conv2d: nni.ConvBn2d, nn.Conv3d: nni.ConvBn3d}
_CONV_BN_RELU = {nn.Conv1d: nni.ConvBnReLU1d, nn.Conv2d: nni.ConvBnReLU2d, nn.Conv3d: nni.ConvBnReLU3d}
_CONV_RELU = {nn.Conv1d: nni.ConvReLU1d, nn.Conv2d: nni.ConvReLU2d, nn.Conv3d: nni.ConvReLU3d}


def _check_bn_for_training(bn: Any, channels: int, what: str) -> None:
    if bn.num_features != channels:
        raise AssertionError(what)
    if not bn.affine:
        raise AssertionError("Only support fusing BatchNorm2d with affine set to True")
    if not bn.track_running_stats:
        raise AssertionError("Only support fusing BatchNorm2d with tracking_running_stats set to True")


def fuse_conv_bn(is_qat: bool, conv: Any, bn: Any) -> Any:
    """conv and bn as one module: nni.ConvBn*d for training, else conv with bn folded in."""
    if conv.training != bn.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if not is_qat:
        return fuse_conv_bn_eval(conv, bn)
    _check_bn_for_training(bn, conv.out_channels, "Output channel of Conv2d must match num_features of BatchNorm2d")
    if type(conv) not in _CONV_BN:
        raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn)}")
    return _CONV_BN[type(conv)](conv, bn)


def fuse_conv_bn_relu(is_qat: bool, conv: Any, bn: Any, relu: Any) -> Any:
    """conv, bn and relu as one module: nni.ConvBnReLU*d for training, else nni.ConvReLU*d of conv
    with bn folded in."""
    if not conv.training == bn.training == relu.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if is_qat:
        _check_bn_for_training(bn, conv.out_channels, "Output channel of Conv must match num_features of BatchNorm")
        if type(conv) not in _CONV_BN_RELU:
            raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn, relu)}")
        return _CONV_BN_RELU[type(conv)](conv, bn, relu)
    if type(conv) not in _CONV_RELU:
        raise NotImplementedError(f"Cannot fuse eval modules: {(conv, bn, relu)}")
    return _CONV_RELU[type(conv)](fuse_conv_bn_eval(conv, bn), relu)


def fuse_linear_bn(is_qat: bool, linear: Any, bn: Any) -> Any:
    """linear and bn as one module: nni.LinearBn1d for training, else linear with bn folded in."""
    if linear.training != bn.training:
        raise AssertionError("Linear and BN both must be in the same mode (train or eval).")
    if not is_qat:
        return fuse_linear_bn_eval(linear, bn)
    _check_bn_for_training(bn, linear.out_features, "Output features of Linear must match num_features of "
                           "BatchNorm1d")
    return nni.LinearBn1d(linear, bn)


def _sequential_wrapper2(sequential: type) -> Callable:
    """A fuser method that wraps its two modules in the fused class sequential."""

    def fuser_method(is_qat: bool, m1: Any, m2: Any) -> Any:
        return sequential(m1, m2)

    return fuser_method


_DEFAULT_OP_LIST_TO_FUSER_METHOD: Dict[tuple, Callable] = {
    (nn.Conv1d, nn.BatchNorm1d): fuse_conv_bn,
    (nn.Conv1d, nn.BatchNorm1d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv2d, nn.BatchNorm2d): fuse_conv_bn,
    (nn.Conv2d, nn.BatchNorm2d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv3d, nn.BatchNorm3d): fuse_conv_bn,
    (nn.Conv3d, nn.BatchNorm3d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv1d, nn.ReLU): _sequential_wrapper2(nni.ConvReLU1d),
    (nn.Conv2d, nn.ReLU): _sequential_wrapper2(nni.ConvReLU2d),
    (nn.Conv3d, nn.ReLU): _sequential_wrapper2(nni.ConvReLU3d),
    (nn.Linear, nn.BatchNorm1d): fuse_linear_bn,
    (nn.Linear, nn.ReLU): _sequential_wrapper2(nni.LinearReLU),
    (nn.BatchNorm2d, nn.ReLU): _sequential_wrapper2(nni.BNReLU2d),
    (nn.BatchNorm3d, nn.ReLU): _sequential_wrapper2(nni.BNReLU3d),
}


def get_fuser_method(op_list: tuple, additional_fuser_method_mapping: Optional[Dict[tuple, Callable]] = None
                     ) -> Optional[Callable]:
    """The fuser method for a tuple of module types (the additional mapping's first)."""
    mapping = {**_DEFAULT_OP_LIST_TO_FUSER_METHOD, **(additional_fuser_method_mapping or {})}
    fuser_method = mapping.get(op_list, None)
    if fuser_method is None:
        raise AssertionError(f"did not find fuser method for: {op_list} ")
    return fuser_method
