"""nn.Parameter: a Tensor that a Module registers as one of its learnable weights.

A Parameter owns no memory of its own: it is a second Python object, of class Parameter, over the
storage of the tensor it was made from (`_C.TensorBase._make_subclass`). It computes nothing.
"""
from __future__ import annotations

from typing import Any, Optional

import minitorch
from minitorch import _C

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


class _MarkMeta(type(minitorch.Tensor)):
    """isinstance(t, Parameter) and isinstance(t, Buffer) are true for any tensor marked as one
    (t._is_param, t._is_buffer), as in PyTorch: Buffer(data) and the Parameter of a Tensor
    subclass's instance keep their class and are only marked."""

    def __instancecheck__(cls, instance: Any) -> bool:
        mark = cls.__dict__.get("_mark")
        if mark and isinstance(instance, minitorch.Tensor) and getattr(instance, mark, False):
            return True
        return super().__instancecheck__(instance)


class Parameter(minitorch.Tensor, metaclass=_MarkMeta):
    """A Tensor that, assigned as a Module attribute, is listed in `Module.parameters()`.

    `Parameter(data)` shares `data`'s storage and requires grad unless told otherwise;
    `Parameter()` holds an empty tensor, as `torch.nn.Parameter()` does.
    """

    _mark = "_is_param"

    def __new__(cls, data: Optional[minitorch.Tensor] = None, requires_grad: bool = True) -> "Parameter":
        if data is None:
            data = minitorch.empty(0)
        if type(data) is minitorch.Tensor or type(data) is Parameter:
            return _C.TensorBase._make_subclass(cls, data, requires_grad)
        # an instance of another Tensor subclass stays of its class, marked as a parameter
        t = data.detach().requires_grad_(requires_grad)
        if type(t) is not type(data):
            raise RuntimeError(f"Creating a Parameter from an instance of type {type(data).__name__} requires that "
                               f"detach() returns an instance of the same type, but return type {type(t).__name__} "
                               "was found instead. To use the type as a Parameter, please correct the detach() "
                               "semantics defined by its __torch_dispatch__() implementation.")
        t._is_param = True
        return t

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Everything was set in __new__; this keeps a base __init__ from seeing the arguments.
        pass

    # Results of ops on a Parameter are plain Tensors, and its calls take the C path, as PyTorch's.
    __torch_function__ = _C._disabled_torch_function_impl

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__  # print(p) shows the header too, as PyTorch's does

    def __deepcopy__(self, memo: dict) -> "Parameter":
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: int) -> tuple:
        # Pickled as the plain tensor it wraps, and made a Parameter again when loaded.
        return (_rebuild_parameter, (self.detach(), self.requires_grad))


def _rebuild_parameter(data: minitorch.Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


class Buffer(minitorch.Tensor, metaclass=_MarkMeta):
    """A Tensor that, assigned as a Module attribute, is registered as a buffer (state that is not
    learned, such as BatchNorm's running_mean); persistent=False keeps it out of the state_dict.

    As PyTorch's, `Buffer(data)` returns a plain Tensor over data's storage, marked as a buffer.
    """

    _mark = "_is_buffer"

    def __new__(cls, data: Optional[minitorch.Tensor] = None, *, persistent: bool = True) -> minitorch.Tensor:
        if data is None:
            data = minitorch.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedTensorMixin:
    """A parameter or buffer of a Lazy module before its first forward: no data (an empty tensor
    of the dtype and device it will have) and no shape, until materialize(shape) gives it its
    memory and makes it a plain Parameter or Tensor (cls_to_become)."""

    cls_to_become: Any = None

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        if device is None:
            device = self.data.device
        if dtype is None:
            dtype = self.data.dtype
        self.data = minitorch.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. "
            "This error usually happens in `load_state_dict` when trying to load "
            "an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes."
        )

    def share_memory_(self) -> Any:
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. "
            "Call `forward` to initialize the parameters before calling `module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto: int) -> tuple:
        return (self.__class__, (self.requires_grad,))

    def __deepcopy__(self, memo: dict) -> Any:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        return memo[id(self)]


def is_lazy(param: Any) -> bool:
    """Whether param is a Lazy module's parameter or buffer that has no shape yet."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter of a Lazy module before its first forward (see UninitializedTensorMixin)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> "UninitializedParameter":
        return _C.TensorBase._make_subclass(cls, minitorch.empty(0, device=device, dtype=dtype), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, minitorch.Tensor):
    """A buffer of a Lazy module before its first forward (see UninitializedTensorMixin)."""

    cls_to_become = minitorch.Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                persistent: bool = True) -> "UninitializedBuffer":
        t = _C.TensorBase._make_subclass(cls, minitorch.empty(0, device=device, dtype=dtype), requires_grad)
        t.persistent = persistent  # a Buffer, as PyTorch's: assigned to a module, it registers as one
        t._is_buffer = True
        return t
