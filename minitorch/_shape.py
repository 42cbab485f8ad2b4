"""The splits whose overload PyTorch picks from the type of an argument: tensor_split (a number of
sections, a list of indices, or a tensor of either) and hsplit, vsplit, dsplit (a number of equal
sections, or indices). Each is then one op of _C (tensor_split or tensor_split_indices, views)."""
from __future__ import annotations

from . import _C
from ._checks import _tensors

# PyTorch's names of the dtypes in its messages
_SCALAR_NAMES = {"minitorch.float32": "Float", "minitorch.float64": "Double", "minitorch.int64": "Long",
                 "minitorch.int32": "Int", "minitorch.bool": "Bool", "minitorch.float16": "Half",
                 "minitorch.bfloat16": "BFloat16", "minitorch.uint8": "Byte", "minitorch.int8": "Char",
                 "minitorch.int16": "Short"}


def tensor_split(input, indices_or_sections=None, dim: int = 0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None) -> tuple:
    """Views of input along dim: `sections` pieces (the first ones one longer where it does not
    divide), or the pieces between the given indices (as Python slices)."""
    how = next((x for x in (indices_or_sections, sections, indices, tensor_indices_or_sections) if x is not None),
               None)
    if isinstance(how, _C.TensorBase):
        if how.device.type != "cpu":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be on cpu, but it's on "
                               f"{how.device}")
        if how.dtype != _C.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{_SCALAR_NAMES[str(how.dtype)]}")
        if how.dim() > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {how.dim()} dims")
        how = int(how.item()) if how.dim() == 0 else how.tolist()
    if isinstance(how, int) and not isinstance(how, bool):
        return _C.tensor_split(input, how, dim)
    if isinstance(how, (list, tuple)):
        return _C.tensor_split_indices(input, list(how), dim)
    got = "" if how is None else f", {type(how).__name__}"
    raise TypeError(f"tensor_split() received an invalid combination of arguments - got (Tensor{got}), but "
                    "expected one of:\n * (Tensor input, tuple of ints indices, int dim = 0)\n"
                    " * (Tensor input, Tensor tensor_indices_or_sections, int dim = 0)\n"
                    " * (Tensor input, int sections, int dim = 0)\n")


def _split_along(name: str, least: int, input, indices_or_sections) -> tuple:
    if input.dim() < least:
        dims = "1 dimension" if least == 1 else f"{least} dimension"
        raise RuntimeError(f"torch.{name} requires a tensor with at least {dims}, but got a tensor with "
                           f"{input.dim()} dimensions!")
    dim = 0 if name == "vsplit" else 2 if name == "dsplit" else 0 if input.dim() == 1 else 1
    how = indices_or_sections
    if isinstance(how, int) and not isinstance(how, bool):
        if how == 0 or input.shape[dim] % how != 0:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {input.shape[dim]} is not divisible by the split_size {how}!")
        return _C.tensor_split(input, how, dim)
    if isinstance(how, (list, tuple)):
        return _C.tensor_split_indices(input, list(how), dim)
    raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, {type(how).__name__}), "
                    f"but expected one of:\n * (Tensor input, int sections)\n * (Tensor input, tuple of ints indices)\n")


def hsplit(input, indices_or_sections) -> tuple:
    """tensor_split along dim 1 (dim 0 of a 1-D input); a number of sections must divide it."""
    _tensors("hsplit", input=input)
    return _split_along("hsplit", 1, input, indices_or_sections)


def vsplit(input, indices_or_sections) -> tuple:
    """tensor_split along dim 0 of an input of 2 dims or more."""
    _tensors("vsplit", input=input)
    return _split_along("vsplit", 2, input, indices_or_sections)


def dsplit(input, indices_or_sections) -> tuple:
    """tensor_split along dim 2 of an input of 3 dims or more."""
    _tensors("dsplit", input=input)
    return _split_along("dsplit", 3, input, indices_or_sections)
