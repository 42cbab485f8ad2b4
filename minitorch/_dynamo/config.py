"""torch._dynamo.config: the settings scripts write around torch.compile, with PyTorch's
defaults, kept and not acted on (minitorch runs eagerly; see _config_module.py)."""
from minitorch._config_module import install_config_module

install_config_module(__name__, "minitorch._dynamo.config", {
    "cache_size_limit": 8, "recompile_limit": 8, "accumulated_cache_size_limit": 256,
    "accumulated_recompile_limit": 256, "suppress_errors": False, "verbose": False,
    "capture_scalar_outputs": False, "capture_dynamic_output_shape_ops": False,
    "automatic_dynamic_shapes": True, "assume_static_by_default": True, "optimize_ddp": True,
    "specialize_int": False, "guard_nn_modules": True, "inline_inbuilt_nn_modules": True,
    "log_compilation_metrics": True, "force_parameter_static_shapes": True,
    "error_on_recompile": False, "compiled_autograd": False,
})
