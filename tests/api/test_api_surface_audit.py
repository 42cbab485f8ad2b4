"""The public names the API audit found missing and that minitorch now has (tests/api/api_audit.py's
missing_public_names over torch, torch.Tensor, torch.nn, torch.nn.functional, torch.linalg and
torch.optim; tools/api_gap.py's over torch.autograd, torch.func and torch.backends): none of them may go missing again, and each is a public name of PyTorch's."""
import pytest

import minitorch
from api_audit import missing_public_names
from helpers import torch

ADDED = {
    "": ["sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt", "sym_sum", "cond",
         "while_loop", "sym_constrain_range", "sym_constrain_range_for_size", "sym_fresh_size", "empty_permuted",
         "norm_except_dim", "get_device_module", "is_vulkan_available", "init_num_threads", "native_layer_norm",
         "native_batch_norm", "native_group_norm", "native_dropout", "convolution", "conv_tbc",
         "max_pool1d_with_indices", "grid_sampler", "is_distributed", "thread_safe_generator",
         "hash_tensor", "from_file", "mps", "Tag", "Storage", "Future", "fork", "wait", "windows", "TYPE_CHECKING",
         "USE_GLOBAL_DEPS", "USE_RTLD_GLOBAL_WITH_LIBTORCH", "segment_reduce", "indices_copy", "values_copy",
         "crow_indices_copy", "col_indices_copy", "ccol_indices_copy", "row_indices_copy", "int_repr", "q_scale",
         "q_zero_point", "q_per_channel_scales", "q_per_channel_zero_points", "q_per_channel_axis", "as_strided_",
         "DisableTorchFunction", "DisableTorchFunctionSubclass", "sspaddmm", "saddmm", "smm", "hspmm", "hsmm", "dsmm",
         "sparse_bsr", "sparse_bsc", "sparse_bsr_tensor", "sparse_bsc_tensor", "sparse_compressed_tensor",
         "slice_inverse", "resize_as_sparse_", "quantized_max_pool1d", "quantized_max_pool2d",
         "quantized_max_pool3d", "empty_quantized", "quantized_batch_norm", "batch_norm_update_stats",
         "fused_moving_avg_obs_fake_quant", "native_norm", "choose_qparams_optimized", "PRIVATE_OPS", "classproperty",
         "get_file_path", "prepare_multiprocessing_environment", "profiler_allow_cudagraph_cupti_lazy_reinit_cuda12",
         "SymInt", "SymFloat", "SymBool", "cudnn_is_acceptable"],
    "Tensor": ["is_mps", "is_xpu", "is_ipu", "is_mtia", "is_maia", "is_vulkan", "is_xla", "volatile", "is_set_to",
               "dequantize", "module_load",
               "hash_tensor", "map2_", "is_distributed", "sparse_dim", "dense_dim", "indices", "values", "coalesce",
               "is_coalesced", "int_repr", "q_scale", "q_zero_point", "q_per_channel_scales",
               "q_per_channel_zero_points", "q_per_channel_axis", "qscheme", "to_padded_tensor", "xpu", "ipu", "mtia",
               "reinforce", "smm", "sspaddmm", "to_sparse_bsr", "to_sparse_bsc", "slice_inverse",
               "sparse_resize_", "sparse_resize_and_clear_", "resize_as_sparse_"],
    "nn": ["NLLLoss2d", "factory_kwargs", "common_types", "LinearCrossEntropyLoss", "LinearCrossEntropyOptions"],
    "nn.functional": ["grad", "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
                      "handle_torch_function", "linear_cross_entropy", "conv_tbc", "grouped_mm",
                      "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES", "DType", "BroadcastingList1",
                      "BroadcastingList2", "BroadcastingList3", "assert_int_or_pair", "boolean_dispatch"],
    "autograd": ["is_tensor_like", "has_torch_function", "handle_torch_function", "ProfilerActivity",
                 "kineto_available", "is_view_replay_enabled"],
    "func": ["debug_unwrap"],
    "backends.mha": ["get_fastpath_enabled", "set_fastpath_enabled"],
    "backends.mkl": ["VERBOSE_OFF", "VERBOSE_ON", "verbose"],
    "backends.nnpack": ["is_available", "flags", "set_flags"],
}


def _namespace(lib, path):
    obj = lib
    for part in filter(None, path.split(".")):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("path", list(ADDED), ids=lambda p: p or "torch")
def test_added_names_present(path):
    ours = _namespace(minitorch, path)
    assert [n for n in ADDED[path] if not hasattr(ours, n)] == []
    if torch is not None:
        theirs = _namespace(torch, path)
        assert [n for n in ADDED[path] if not hasattr(theirs, n)] == []
        assert not set(ADDED[path]) & set(missing_public_names(theirs, ours))


def test_every_foreach_function_present():
    names = [n for n in dir(torch) if n.startswith("_foreach_")] if torch is not None else []
    assert [n for n in names if not hasattr(minitorch, n)] == []
