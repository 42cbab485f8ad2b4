"""torch.__future__: switches for behaviour that PyTorch will make the default, read by
nn.Module's conversions (module.to(), .float(), .cuda(), to_empty) and load_state_dict.

With overwrite on, a conversion puts a new Parameter in the module instead of changing the old
one's .data; with swap on (which takes precedence), the old Parameter object keeps its identity and
takes the converted tensor's contents by utils.swap_tensors, and load_state_dict swaps each
parameter and buffer with param.module_load(state_dict[key]) instead of copying into it."""

_overwrite_module_params_on_conversion: bool = False
_swap_module_params_on_conversion: bool = False

__all__ = ["set_overwrite_module_params_on_conversion", "get_overwrite_module_params_on_conversion",
           "set_swap_module_params_on_conversion", "get_swap_module_params_on_conversion"]


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Whether module conversions assign new Parameters instead of changing the existing ones."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """Whether module conversions assign new Parameters (False by default)."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Whether module conversions and load_state_dict swap the existing parameters' contents
    (utils.swap_tensors) instead of setting .data or copying; takes precedence over overwrite."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """Whether module conversions and load_state_dict swap parameters (False by default)."""
    return _swap_module_params_on_conversion
