"""quantize_dynamic and the eager-mode machinery under it (torch.ao.quantization.quantize):
propagate_qconfig_ gives each submodule its qconfig, convert swaps the configured ones for their
quantized twins (swap_module, through the mapping's from_float)."""
from __future__ import annotations

import copy
import itertools
import warnings
from typing import Any, Dict, Optional

import minitorch
from minitorch import nn
from minitorch._qtensor import qint8, quint8
from minitorch.ao.nn.intrinsic import _FusedModule
from minitorch.ao.nn.quantized import FloatFunctional

from .qconfig import default_dynamic_qconfig, float16_dynamic_qconfig, float_qparams_weight_only_qconfig
from .quantization_mappings import (get_default_dynamic_quant_module_mappings, get_default_qat_module_mappings,
                                    get_default_qconfig_propagation_list, get_default_static_quant_module_mappings)
from .stubs import DeQuantStub

__all__ = ["quantize_dynamic", "propagate_qconfig_", "convert", "swap_module", "prepare", "quantize", "prepare_qat", "quantize_qat"]

# PyTorch 2.13 deprecates eager-mode quantization in favour of torchao; its entry points warn so.
DEPRECATION_WARNING = ("torch.ao.quantization is deprecated and will be removed in 2.10. For migrations of users: "
                       "eager mode quantization (quantize, quantize_dynamic) moves to torchao's quantize_ API; "
                       "see https://github.com/pytorch/ao/issues/2259 for more details")

_DYNAMIC_TYPES = (nn.Linear, nn.LSTM, nn.GRU, nn.LSTMCell, nn.RNNCell, nn.GRUCell)


def _propagate(module: nn.Module, qconfig_dict: Dict[Any, Any], parent: Any, prefix: str) -> None:
    qconfig = qconfig_dict.get(type(module), parent)
    qconfig = qconfig_dict.get(prefix, qconfig)
    qconfig = getattr(module, "qconfig", qconfig)
    module.qconfig = qconfig
    for name, child in module.named_children():
        _propagate(child, qconfig_dict, qconfig, prefix + "." + name if prefix else name)


def propagate_qconfig_(module: nn.Module, qconfig_dict: Optional[Dict[Any, Any]] = None,
                       prepare_custom_config_dict: Optional[dict] = None) -> None:
    """Sets module.qconfig on module and every submodule: the entry for its name, else for its
    type, else its parent's; a qconfig already set on a module is kept."""
    _propagate(module, qconfig_dict or {}, None, "")


def swap_module(mod: nn.Module, mapping: Dict[Any, Any], custom_module_class_mapping: Optional[dict] = None,
                use_precomputed_fake_quant: bool = False) -> nn.Module:
    """mod's quantized twin when mod has a qconfig and its type is in mapping, else mod itself;
    the user's forward hooks move over, prepare's observer hook does not."""
    if getattr(mod, "qconfig", None) is None or type(mod) not in mapping:
        return mod
    new_mod = mapping[type(mod)].from_float(mod)
    for hook in mod._forward_pre_hooks.values():
        new_mod.register_forward_pre_hook(hook)
    for hook in mod._forward_hooks.values():
        if hook is not _observer_forward_hook:  # the observer stays behind with the float module
            new_mod.register_forward_hook(hook)
    return new_mod


def _remove_qconfig(module: nn.Module) -> None:
    for child in module.children():
        _remove_qconfig(child)
    if hasattr(module, "qconfig"):
        del module.qconfig


def _convert(module: nn.Module, mapping: Dict[Any, Any]) -> nn.Module:
    swapped = {}
    for name, child in module.named_children():
        if not isinstance(child, _FusedModule):  # a fused module is swapped whole
            _convert(child, mapping)
        swapped[name] = swap_module(child, mapping)
    for name, new in swapped.items():
        module._modules[name] = new
    return module


def convert(module: nn.Module, mapping: Optional[Dict[Any, Any]] = None, inplace: bool = False,
            remove_qconfig: bool = True, is_reference: bool = False, convert_custom_config_dict: Any = None,
            use_precomputed_fake_quant: bool = False) -> nn.Module:
    """Replaces each configured submodule of module by its quantized twin (module itself is
    never replaced, as in PyTorch)."""
    warnings.warn(DEPRECATION_WARNING, DeprecationWarning, stacklevel=2)
    if mapping is None:
        mapping = get_default_static_quant_module_mappings()
    if not inplace:
        module = copy.deepcopy(module)
    _convert(module, mapping)
    if remove_qconfig:
        _remove_qconfig(module)
    return module


def quantize_dynamic(model: nn.Module, qconfig_spec: Any = None, dtype: Any = qint8, mapping: Any = None,
                     inplace: bool = False) -> nn.Module:
    """model with its Linear and recurrent layers (or those qconfig_spec names, by type or by
    submodule name) replaced by dynamic quantized ones: weights stored as qint8 (or float16),
    activations quantized at each call. qconfig_spec is a set (dtype then decides the
    QConfig) or a dict from type or name to QConfig."""
    warnings.warn(DEPRECATION_WARNING, DeprecationWarning, stacklevel=2)
    if qconfig_spec is None:
        if dtype is qint8:
            qconfig_spec = dict.fromkeys(_DYNAMIC_TYPES, default_dynamic_qconfig)
        elif dtype is minitorch.float16:
            qconfig_spec = dict.fromkeys(_DYNAMIC_TYPES, float16_dynamic_qconfig)
        elif dtype is quint8:
            qconfig_spec = {nn.EmbeddingBag: float_qparams_weight_only_qconfig,
                            nn.Embedding: float_qparams_weight_only_qconfig}
        else:
            raise ValueError(f"Don't know how to quantize with default settings for {dtype}. "
                             "Provide full qconfig please")
    elif isinstance(qconfig_spec, set):
        if dtype is qint8:
            default = default_dynamic_qconfig
        elif dtype is minitorch.float16:
            default = float16_dynamic_qconfig
        elif dtype is quint8:
            default = float_qparams_weight_only_qconfig
        else:
            raise RuntimeError("Unknown dtype specified for quantize_dynamic: ", str(dtype))
        qconfig_spec = dict(zip(qconfig_spec, itertools.repeat(default)))
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    _convert(model, mapping)
    _remove_qconfig(model)
    return model




def _observer_forward_hook(module: nn.Module, input: Any, output: Any) -> Any:
    """Runs the module's output through its activation_post_process (an observer)."""
    return module.activation_post_process(output)


def _add_observer_(module: nn.Module, propagation: set, non_leaf: Any = ()) -> None:
    """An activation_post_process child, and a forward hook calling it, on each leaf module (or
    fused module, or module of a type in non_leaf: a QAT Linear, whose child is its weight's
    FakeQuantize) with a qconfig whose type convert can swap (DeQuantStub's output is float: no
    observer). A FloatFunctional gets the observer alone: its operations call it."""
    if type(module) in non_leaf or isinstance(module, _FusedModule):
        is_leaf = True
    elif isinstance(module, FloatFunctional):
        if getattr(module, "qconfig", None) is not None:
            module.activation_post_process = module.qconfig.activation()
        return
    else:
        for child in module.children():
            if type(child) is not nn.Dropout:
                _add_observer_(child, propagation, non_leaf)
        is_leaf = not any(True for _ in module.children()) and not isinstance(module, nn.Sequential)
    qconfig = getattr(module, "qconfig", None)
    in_list = type(module) in propagation or isinstance(module, _FusedModule)
    if is_leaf and qconfig is not None and in_list and type(module) is not DeQuantStub:
        module.add_module("activation_post_process", qconfig.activation())
        module.register_forward_hook(_observer_forward_hook)


def prepare(model: nn.Module, inplace: bool = False, allow_list: Any = None, observer_non_leaf_module_list: Any = None,
            prepare_custom_config_dict: Any = None) -> nn.Module:
    """model with observers for static quantization: each submodule gets its qconfig (from
    model.qconfig or the submodules' own), and each quantizable leaf an observer of its output;
    run calibration data through it, then convert."""
    warnings.warn(DEPRECATION_WARNING, DeprecationWarning, stacklevel=2)
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model, None)
    propagation = allow_list if allow_list is not None else get_default_qconfig_propagation_list()
    if not any(getattr(m, "qconfig", None) for m in model.modules()):
        warnings.warn("None of the submodule got qconfig applied. Make sure you passed correct configuration "
                      "through `qconfig_dict` or by assigning the `.qconfig` attribute directly on submodules")
    _add_observer_(model, propagation)
    return model


def quantize(model: nn.Module, run_fn: Any, run_args: Any, mapping: Any = None, inplace: bool = False) -> nn.Module:
    """prepare, run_fn(model, run_args) to calibrate, convert: static post-training quantization."""
    warnings.warn(DEPRECATION_WARNING, DeprecationWarning, stacklevel=2)
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, *run_args) if isinstance(run_args, (list, tuple)) else run_fn(model, run_args)
    convert(model, mapping, inplace=True)
    return model


def prepare_qat(model: nn.Module, mapping: Any = None, inplace: bool = False) -> nn.Module:
    """model (in training mode) ready for quantization-aware training: its Linears become QAT
    Linears (fake-quantized weights) and each quantizable leaf's output a FakeQuantize."""
    warnings.warn(DEPRECATION_WARNING, DeprecationWarning, stacklevel=2)
    if not model.training:
        raise AssertionError("prepare_qat only works on models in training mode")
    if mapping is None:
        mapping = get_default_qat_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model, None)
    _convert(model, mapping)
    _add_observer_(model, get_default_qconfig_propagation_list(), set(mapping.values()))
    return model


def quantize_qat(model: nn.Module, run_fn: Any, run_args: Any, inplace: bool = False) -> nn.Module:
    """prepare_qat, run_fn(model, *run_args) to train, convert."""
    warnings.warn(DEPRECATION_WARNING, DeprecationWarning, stacklevel=2)
    if not inplace:
        model = copy.deepcopy(model)
    model.train()
    prepare_qat(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, inplace=True)
    return model
