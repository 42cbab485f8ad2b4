"""torch._inductor.config: the code generator's settings with PyTorch's defaults (dotted names
are sub-configs: config.cpp.threads), kept and not acted on (minitorch runs eagerly)."""
from minitorch._config_module import install_config_module

install_config_module(__name__, "minitorch._inductor.config", {
    "freezing": False, "freezing_discard_parameters": False, "coordinate_descent_tuning": False,
    "fx_graph_cache": True, "autotune_local_cache": True, "max_autotune": False, "max_autotune_gemm": False,
    "epilogue_fusion": True, "shape_padding": True, "aggressive_fusion": False, "benchmark_kernel": False,
    "force_fuse_int_mm_with_mul": False, "use_mixed_mm": True, "debug": False, "cpp_wrapper": False,
    "compile_threads": 1, "fallback_random": False, "split_reductions": True, "layout_optimization": True,
    "keep_output_stride": True, "emulate_precision_casts": False, "size_asserts": True,
    "trace.enabled": False, "trace.graph_diagram": False,
    "cpp.enable_kernel_profile": False, "cpp.threads": -1, "cpp.simdlen": None, "cpp.weight_prepack": True,
    "cpp.dynamic_threads": False, "cpp.min_chunk_size": 1,
    "triton.unique_kernel_names": True, "triton.cudagraphs": False, "triton.cudagraph_trees": True,
})
