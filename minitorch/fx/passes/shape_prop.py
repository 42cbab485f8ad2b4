"""torch.fx.passes.shape_prop: runs a GraphModule on example inputs and records, in each node's
meta['tensor_meta'], the shape, dtype, strides and other properties of the tensor it produced
(a nest of them where the node returns a tuple or list of tensors)."""
from __future__ import annotations

from typing import Any, Dict, NamedTuple, Optional, Tuple

import minitorch

from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    shape: minitorch.Size
    dtype: minitorch.dtype
    requires_grad: bool
    stride: Tuple[int, ...]
    memory_format: Optional[Any]
    is_quantized: bool
    qparams: Dict[str, Any]


def _extract_tensor_metadata(result: minitorch.Tensor) -> TensorMetadata:
    memory_format = None
    for fmt in (minitorch.contiguous_format, minitorch.channels_last, minitorch.channels_last_3d):
        if result.is_contiguous(memory_format=fmt):
            memory_format = fmt
            break
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(), memory_format,
                          False, {})


class ShapeProp(Interpreter):
    """ShapeProp(gm).propagate(*example_inputs) runs gm and annotates every node that produced
    tensors with meta['tensor_meta'] and every node with meta['type']."""

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        found = []

        def meta(x: Any) -> Any:
            if isinstance(x, minitorch.Tensor):
                found.append(True)
                return _extract_tensor_metadata(x)
            return x

        tensor_meta = map_aggregate(result, meta)
        if found:
            n.meta["tensor_meta"] = tensor_meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        return super().run(*args)
