"""Argument checks shared by the functions written in Python."""
from minitorch._C import TensorBase


def _tensors(fname: str, **args) -> None:
    """PyTorch's TypeError for an argument that must be a tensor and is not (before any Python
    here reads its .size(), which would raise AttributeError instead)."""
    for pos, (name, value) in enumerate(args.items(), 1):
        if not isinstance(value, TensorBase):
            raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be Tensor, not {type(value).__name__}")


def _to_out(result, out):
    """result, or out resized to it and holding its values (PyTorch's out= contract for the
    functions written in Python; the op table's out= does the same in C)."""
    if out is None:
        return result
    out.resize_(result.shape)
    return out.copy_(result)
