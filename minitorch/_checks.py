"""Argument checks shared by the functions written in Python."""
import sys

from minitorch._C import TensorBase


def _tensors(fname: str, **args) -> None:
    """PyTorch's TypeError for an argument that must be a tensor and is not (before any Python
    here reads its .size(), which would raise AttributeError instead)."""
    for pos, (name, value) in enumerate(args.items(), 1):
        if not isinstance(value, TensorBase):
            raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be Tensor, not {type(value).__name__}")


def _to_out(result, out, name=None):
    """result, or out (a tensor, or a tuple of them for a tuple result) resized to it and holding
    its values: PyTorch's out= contract for the functions written in Python (the op table's out=
    does the same in C, csrc/python/out.c): a result that autograd recorded (an input requires
    grad) is refused, as is a result dtype out cannot hold; an out with elements and another shape
    is resized with PyTorch's warning; out itself is returned. name, for the message: the
    function's (by default the caller's)."""
    if out is None:
        return result
    if name is None:
        name = sys._getframe(1).f_code.co_name.rstrip("_")
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"out= expects a tuple of {len(result)} tensors, not {type(out).__name__}")
        written = tuple(_to_out(r, o, name) for r, o in zip(result, out))
        if type(result) is tuple:
            return written
        kind = type(result)  # a return_types row, or a namedtuple
        return kind._make(written) if hasattr(kind, "_make") else kind(written)
    if not isinstance(out, TensorBase):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if result.grad_fn is not None:  # a leaf asked for with requires_grad=True (range) may go to out
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    from minitorch._C import can_cast

    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {_scalar_name(result.dtype)} can't be cast to the desired output "
                           f"type {_scalar_name(out.dtype)}")
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            import warnings

            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(result.shape)}. This behavior "
                          "is deprecated, and in a future PyTorch release outputs will not be resized unless "
                          "they have zero elements. You can explicitly reuse an out tensor t by resizing it, "
                          "inplace, to zero elements with t.resize_(0).", UserWarning, stacklevel=3)
        out.resize_(result.shape)
    return out.copy_(result)


def _scalar_name(dtype) -> str:
    """PyTorch's C++ name of a dtype (Float, Long, ComplexDouble, ...), as its messages give it"""
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
             "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
    key = str(dtype).split(".")[-1]
    return names.get(key, key)
