"""minitorch.Tensor: the Python class over the C TensorBase.

Everything that computes is a C slot or an op method generated from the op table; this class
adds only pure-Python conveniences (conversions, printing, NumPy interop)."""
from __future__ import annotations

import copy
import functools
import numbers
import warnings
from collections import OrderedDict
from typing import Any

import numpy as np

from . import _C, _dlpack, _indexing, _legacy, _memory_format, _pointwise, _python_ops, _shape, _stats, functional
from ._device import device as _device
from ._reductions import max as _max, min as _min


# _C._TensorMeta: isinstance(x, Tensor) holds for the sparse tensors too (minitorch.sparse
# registers its classes), as PyTorch's sparse tensors are Tensors

def _cast_method(name: str, dtype):
    """Tensor.<name>(*, memory_format=preserve_format): self.to(dtype, memory_format=...)."""
    def cast(self, *, memory_format=_memory_format.preserve_format) -> "Tensor":
        return self.to(dtype, memory_format=memory_format)

    cast.__name__, cast.__qualname__ = name, "Tensor." + name
    cast.__doc__ = f"self.to({dtype}, memory_format=memory_format): a copy unless self is {dtype} already."
    return cast

class Tensor(_C.TensorBase, metaclass=_C._TensorMeta):
    # NumPy defers binary operators to us: ndarray + Tensor gives a Tensor.
    __array_priority__ = 1000

    def __new__(cls, *args, device=None):
        """PyTorch's legacy constructor: Tensor(2, 3) (uninitialised), Tensor(size),
        Tensor([1, 2]) (data, in the default dtype), Tensor(other) (other's memory), Tensor()."""
        t = _legacy.new(None, "cpu", args, device)
        return t if cls is Tensor else _C.TensorBase._make_subclass(cls, t, t.requires_grad)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        from .overrides import _install_member_wrappers

        _install_member_wrappers(cls)  # its properties and methods that are no ops dispatch too

    # PyTorch's: a class that keeps this one has no __torch_dispatch__ (utils/_python_dispatch.py)
    __torch_dispatch__ = _C._disabled_torch_dispatch_impl

    @staticmethod
    def _make_wrapper_subclass(cls, size, strides=None, storage_offset=None, memory_format=None, dtype=None,
                               layout=None, device=None, pin_memory=False, requires_grad=False,
                               dispatch_sizes_strides_policy=None, dispatch_device=False, dispatch_layout=False,
                               _extra_dispatch_keys=None, storage_size=None):
        """A cls object with this size, strides, dtype and device and no memory of its own: it
        wraps other tensors, which its __torch_dispatch__ unwraps (every op on it goes there)."""
        import minitorch

        size = tuple(int(s) for s in size)
        if strides is None:
            strides, step = [], 1
            for n in reversed(size):
                strides.insert(0, step)
                step *= max(n, 1)
        if layout is not None and layout is not minitorch.strided:
            raise NotImplementedError(f"_make_wrapper_subclass: layout {layout} is not supported")
        dtype = minitorch.get_default_dtype() if dtype is None else dtype
        device = minitorch.device("cpu") if device is None else minitorch.device(device)
        return _C._make_wrapper(cls, size, tuple(int(s) for s in strides), int(storage_offset or 0), dtype,
                                device, bool(requires_grad))

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """What a Tensor subclass's calls run unless it defines its own: func with subclass
        dispatch off, its tensor results made instances of cls (in tuples and lists too).
        Returns NotImplemented when an argument's class is not a base of cls."""
        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with _C.DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
            if func in _nowrap_functions():
                return ret
            return _convert(ret, cls)

    def __repr__(self, *, tensor_contents=None) -> str:
        from ._tensor_str import _str

        return _str(self, tensor_contents=tensor_contents)

    __str__ = __repr__

    def _repr_html_(self) -> str:
        from ._html import tensor_html  # Jupyter: values as a table when small, else a summary

        return tensor_html(self)

    def __format__(self, spec: str) -> str:
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __reversed__(self):
        return (self[i] for i in range(self.shape[0] - 1, -1, -1))

    max = _max
    min = _min
    view = _pointwise.view
    type_as = _pointwise.type_as
    polygamma = _pointwise.polygamma
    equal = _pointwise.tensor_equal
    allclose = _pointwise.tensor_allclose

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        """Accumulates the gradient of self into the .grad of the leaves it depends on."""
        from . import autograd

        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # Gradient hooks, as PyTorch keeps them: one table per tensor, read by one engine hook that
    # is added with the table, so that handle.remove() is a deletion from the table.
    _backward_hooks = None
    _post_accumulate_grad_hooks = None

    def register_hook(self, hook):
        """hook(grad) -> Tensor or None runs each time a gradient of self is computed; a tensor
        it returns is used instead of grad. Returns a handle whose remove() unregisters it."""
        from .utils.hooks import RemovableHandle

        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._backward_hooks is None:
            self._backward_hooks = OrderedDict()
            _C._add_grad_hook(self, functools.partial(_run_grad_hooks, self._backward_hooks, tuple(self.shape)),
                              False)
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor) -> None runs after a leaf's .grad was accumulated in a backward."""
        from .utils.hooks import RemovableHandle

        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = OrderedDict()
            _C._add_grad_hook(self, functools.partial(_run_post_accumulate_hooks,
                                                      self._post_accumulate_grad_hooks), True)
        handle = RemovableHandle(self._post_accumulate_grad_hooks)
        self._post_accumulate_grad_hooks[handle.id] = hook
        return handle

    def where(self, condition: "Tensor", other) -> "Tensor":
        """self where condition holds, else other: minitorch.where(condition, self, other)."""
        return _C.where(condition, self, other)

    # ---- NumPy ----
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The tensor's memory as a NumPy array (no copy)."""
        t = self.detach() if force else self
        return np.asarray(memoryview(t))

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(memoryview(self))
        if dtype is not None:
            return a.astype(dtype, copy=bool(copy) if copy is not None else False)
        return a.copy() if copy else a

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # NumPy hands back here what a ufunc computed from a Tensor operand (Tensor + ndarray,
        # once the Tensor's own operator declined the array): a Tensor, as in PyTorch.
        return _C.from_numpy(array)

    # ---- conversions ----
    def to(self, *args, **kwargs) -> "Tensor":
        """to(dtype) / to(device) / to(device, dtype) / to(other): self if nothing changes."""
        dtype = kwargs.pop("dtype", None)
        dev = kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        fmt = kwargs.pop("memory_format", _memory_format.preserve_format)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
        for a in args:
            if isinstance(a, _C.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, dev = a.dtype, a.device
            elif isinstance(a, (str, _device, int)):
                dev = a
            else:
                raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
        if dev is not None:
            dev = _device(dev) if not isinstance(dev, int) else _device("cuda", dev)
            if dev.type == "cuda" and dev.index is None:  # the current device, as in PyTorch
                from . import cuda

                dev = _device("cuda", cuda.current_device() if cuda.is_available() else 0)
        if fmt is not _memory_format.preserve_format:
            return _memory_format.to_format(self, fmt, dtype, dev, bool(copy))
        # one op (Op::to in the profiler, as aten::to): self when nothing changes, else _to_copy
        return _C.to(self, dtype=dtype, device=dev, copy=bool(copy))

    def copy_(self, other, non_blocking: bool = False) -> "Tensor":
        """self's values become other's (broadcast and cast to self's dtype); `other` is PyTorch's
        Python name of the schema's `src`. non_blocking lets a copy between host and device
        overlap the caller; copies here complete before returning."""
        if not isinstance(non_blocking, bool):
            raise TypeError(f"copy_(): argument 'non_blocking' must be bool, not {type(non_blocking).__name__}")
        return _C.TensorBase.copy_(self, other)

    def record_stream(self, stream) -> None:
        """Marks the tensor's memory as used on stream: the caching allocator does not reuse it
        before the work queued there so far is done."""
        from .cuda.streams import _record_stream

        _record_stream(self, stream)

    def cpu(self, memory_format=_memory_format.preserve_format) -> "Tensor":
        return self.to("cpu", memory_format=memory_format)

    def cuda(self, device: Any = None, non_blocking: bool = False,
             memory_format=_memory_format.preserve_format) -> "Tensor":
        """A copy on device (default: the current CUDA device), or self when it is there."""
        if device is None:
            device = "cuda"  # the current device, as "cuda" means everywhere
        return self.to(_device("cuda", device) if isinstance(device, int) else device, non_blocking=non_blocking,
                       memory_format=memory_format)

    def get_device(self) -> int:
        """The CUDA device index, or -1 for a CPU tensor (as PyTorch)."""
        return self.device.index if self.device.type == "cuda" else -1

    def type(self, dtype=None, non_blocking=False):
        """The legacy type name ('minitorch.FloatTensor'), or a cast to a dtype or a legacy type
        (minitorch.LongTensor, 'torch.cuda.FloatTensor')."""
        if dtype is None:
            return _legacy.type_name(self)
        legacy = _legacy.parse_type(dtype)
        if legacy is not None:
            return self.to(legacy.device_type, legacy.dtype)
        return self.to(dtype)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    # the casts as methods of their own (float(), double(), ...), each laid out as memory_format says
    float, double, long, int = (_cast_method(n, d) for n, d in (("float", _C.float32), ("double", _C.float64),
                                                                ("long", _C.int64), ("int", _C.int32)))
    bool, half, bfloat16, byte = (_cast_method(n, d) for n, d in (("bool", _C.bool), ("half", _C.float16),
                                                                  ("bfloat16", _C.bfloat16), ("byte", _C.uint8)))
    char, short, cfloat, cdouble = (_cast_method(n, d) for n, d in (("char", _C.int8), ("short", _C.int16),
                                                                    ("cfloat", _C.complex64),
                                                                    ("cdouble", _C.complex128)))

    # new_*: self's dtype and device unless told; the size as ints, one sequence or size=, as PyTorch;
    # each an op of its own for __torch_dispatch__ (_python_ops.py)
    def _new(self, name, factory, args, size, *fill, dtype=None, layout=None, device=None, pin_memory=False,
             requires_grad=False) -> "Tensor":
        _C._factory_options(name, layout, pin_memory)
        if size is not None and args:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        if size is None:
            if not args:
                raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
            size = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list, _C.Size)) else args
        if _python_ops.wanted(self):
            return _python_ops.dispatch(name, _NEW_OPS[name], (self, list(size), *fill),
                                        _python_ops.options(dtype, device), requires_grad)
        return factory(tuple(size), *fill, dtype=dtype or self.dtype, device=device or self.device,
                       requires_grad=requires_grad)

    def new_empty(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
                 pin_memory=False) -> "Tensor":
        return self._new("new_empty", _C.empty, args, size, dtype=dtype, layout=layout, device=device,
                         pin_memory=pin_memory, requires_grad=requires_grad)

    def new_zeros(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
                 pin_memory=False) -> "Tensor":
        return self._new("new_zeros", _C.zeros, args, size, dtype=dtype, layout=layout, device=device,
                         pin_memory=pin_memory, requires_grad=requires_grad)

    def new_ones(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
                 pin_memory=False) -> "Tensor":
        return self._new("new_ones", _C.ones, args, size, dtype=dtype, layout=layout, device=device,
                         pin_memory=pin_memory, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
                 pin_memory=False) -> "Tensor":
        return self._new("new_full", _C.full, (), size, fill_value, dtype=dtype, layout=layout, device=device,
                         pin_memory=pin_memory, requires_grad=requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False) -> "Tensor":
        if isinstance(data, Tensor):  # PyTorch copies it too, detached
            data = data.detach()
        return _C.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)

    def new(self, *args, device=None) -> "Tensor":
        """The legacy constructor in self's dtype and on self's device: new(2, 3) (uninitialised),
        new(size), new([1, 2]) (data), new(other) (other's memory, of self's dtype), new()."""
        return _legacy.new(self.dtype, self.device.type, args, device if device is not None else self.device)

    # ---- selection with a variable number of results (minitorch/_indexing.py) ----
    def nonzero(self, *, as_tuple: bool = False):
        return _indexing.nonzero(self, as_tuple=as_tuple)

    def argwhere(self) -> "Tensor":
        return _indexing.argwhere(self)

    def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim=None):
        return _indexing.unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False, dim=None):
        return _stats.unique_consecutive(self, return_inverse, return_counts, dim)

    def median(self, dim=None, keepdim=False):
        return _stats.median(self, dim, keepdim)

    def nanmedian(self, dim=None, keepdim=False):
        return _stats.nanmedian(self, dim, keepdim)

    def histogram(self, bins=100, *, range=None, weight=None, density=False):
        return _stats.histogram(self, bins, range=range, weight=weight, density=density)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        return functional.norm(self, p, dim, keepdim, dtype=dtype)

    def lu(self, pivot=True, get_infos=False):
        return functional.lu(self, pivot, get_infos)

    def __contains__(self, element: Any) -> bool:
        if isinstance(element, (Tensor, numbers.Number)):
            return bool((element == self).any().item())
        raise RuntimeError(
            f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}."
        )

    @property
    def T(self) -> "Tensor":
        if self.dim() == 0:
            warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
                          UserWarning, stacklevel=2)
        elif self.dim() != 2:
            warnings.warn(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and "
                "it will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                UserWarning, stacklevel=2)
        return self.permute(tuple(range(self.dim() - 1, -1, -1)))

    @property
    def mT(self) -> "Tensor":
        if self.dim() == 0:
            warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
                          UserWarning, stacklevel=2)
            return self
        if self.dim() == 1:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
        return self.transpose(-2, -1)

    @property
    def data(self) -> "Tensor":
        # detach() with a version counter of its own, as PyTorch's: x.data.add_(1) is no change
        # of x that autograd sees
        return self._variable_data()

    @data.setter
    def data(self, value: "Tensor") -> None:
        # The tensor keeps its identity (a Parameter stays the optimizer's) and now views value's
        # memory, whatever its shape, dtype or device.
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        self._set_data(value)

    def split(self, split_size, dim=0) -> tuple:
        """Views of split_size along dim (the last one shorter), or of each size in a list."""
        if isinstance(split_size, Tensor):
            try:
                split_size = int(split_size)
            except ValueError:
                pass
        if isinstance(split_size, int):
            return _C.split(self, split_size, dim)
        return _C.split_with_sizes(self, split_size, dim)

    def tensor_split(self, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                     tensor_indices_or_sections=None) -> tuple:
        return _shape.tensor_split(self, indices_or_sections, dim, sections=sections, indices=indices,
                                   tensor_indices_or_sections=tensor_indices_or_sections)

    def hsplit(self, indices_or_sections) -> tuple:
        return _shape.hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections) -> tuple:
        return _shape.vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections) -> tuple:
        return _shape.dsplit(self, indices_or_sections)

    def share_memory_(self) -> Tensor:
        """Moves the values to shared memory, where other processes reach them (see
        minitorch.multiprocessing.reductions); returns self."""
        from .multiprocessing import reductions

        return reductions.share_memory_(self)

    def is_shared(self) -> bool:
        from .multiprocessing import reductions

        return reductions.is_shared(self)

    def __reduce_ex__(self, protocol):
        with _C.DisableTorchFunctionSubclass():
            args = (self.detach().cpu().numpy().copy(), str(self.device), self.requires_grad)
        if type(self) is Tensor:
            return (_rebuild, args)
        # a subclass's instance comes back of its class, with its attributes, as PyTorch's
        return (_rebuild_subclass, (type(self), args, dict(self.__dict__)))

    __dlpack__ = _dlpack.tensor_dlpack
    __dlpack_device__ = _dlpack.tensor_dlpack_device

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        with _C.DisableTorchFunctionSubclass():
            t = self.detach().clone()
        if type(self) is Tensor:
            t.requires_grad_(self.requires_grad)
            memo[id(self)] = t
            return t
        t = _C.TensorBase._make_subclass(type(self), t, self.requires_grad)
        memo[id(self)] = t
        t.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return t


def _rebuild(array, dev, requires_grad):
    t = _C.tensor(array).to(dev)
    t.requires_grad_(requires_grad)
    return t


def _rebuild_subclass(cls, args, state):
    """A pickled instance of a Tensor subclass: its values as a cls leaf, then its attributes
    (through cls.__setstate__ where the class has one)."""
    t = _C.TensorBase._make_subclass(cls, _rebuild(*args[:2], False), args[2])
    setstate = getattr(t, "__setstate__", None)
    if setstate is not None:
        setstate(state)
    else:
        t.__dict__.update(state)
    return t


def _convert(ret, cls):
    """ret with its tensors made instances of cls (views of the same memory, as_subclass)."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        ret = type(ret)(_convert(r, cls) for r in ret)
    return ret


@functools.lru_cache(maxsize=None)
def _nowrap_functions():
    from .overrides import get_default_nowrap_functions

    return frozenset(get_default_nowrap_functions())




def _run_grad_hooks(hooks: "OrderedDict", size: tuple, grad):
    """The engine's call of a tensor's gradient hooks, in order, each seeing the last one's
    result; PyTorch's checks of what a hook returns. A sparse gradient comes as its parts
    (values, indices, coalesced), is shown as a sparse tensor of the tensor's size and goes back
    as parts (a hook must keep it sparse, as PyTorch's)."""
    sparse = isinstance(grad, tuple)
    if sparse:
        from .sparse import _from_grad

        grad = _from_grad(grad[0], grad[1], size, grad[2], None)
    for hook in list(hooks.values()):
        res = hook(grad)
        if res is None:
            continue
        name = getattr(hook, "__name__", "<unknown>")
        if sparse != bool(getattr(res, "is_sparse", False)):
            kind = _sparse_type(grad) if sparse else grad.type()
            got = res.type() if sparse else _sparse_type(res)
            raise RuntimeError(f"hook '{name}' has changed the type of value (was {kind} got {got})")
        if sparse:
            if res.dtype != grad.dtype or res.device != grad.device or tuple(res.shape) != size:
                raise RuntimeError(f"hook '{name}' has changed the type of value")
            grad = res
            continue
        if not isinstance(res, _C.TensorBase):
            raise TypeError(f"expected Variable, but hook returned '{type(res).__name__}'")
        if res.dtype != grad.dtype:
            raise RuntimeError(f"hook '{name}' has changed the type of value (was {grad.type()} got {res.type()})")
        if res.is_cuda != grad.is_cuda:
            was = "(was CUDA tensor got CPU tensor)" if grad.is_cuda else "(was CPU tensor got CUDA tensor)"
            raise RuntimeError(f"hook '{name}' has changed the type of value {was}")
        if tuple(res.shape) != tuple(grad.shape):
            raise RuntimeError(f"hook '{name}' has changed the size of value")
        grad = res
    return (grad._v, grad._i, grad._coalesced) if sparse else grad


def _sparse_type(t) -> str:
    """A sparse tensor's legacy type name (minitorch.sparse.FloatTensor), as PyTorch's type()."""
    module, name = t._v.type().rsplit(".", 1)
    return f"{module}.sparse.{name}"


def _run_post_accumulate_hooks(hooks: "OrderedDict", leaf: Tensor) -> None:
    for hook in list(hooks.values()):
        hook(leaf)


# PyTorch's Tensor names torch as its module (print(type(x)) shows <class 'torch.Tensor'>).
Tensor.__module__ = "minitorch"


def _new_op(factory):
    """aten.new_<factory>(self, size, [fill_value,] *, dtype, layout, device, pin_memory) as the
    OpOverload's function: self's dtype and device unless given."""

    def op(self, size, *fill, dtype=None, layout=None, device=None, pin_memory=None):
        return factory(tuple(size), *fill, dtype=dtype or self.dtype, device=device or self.device)

    return op


_NEW_OPS = {"new_empty": _new_op(_C.empty), "new_zeros": _new_op(_C.zeros), "new_ones": _new_op(_C.ones),
            "new_full": _new_op(_C.full)}
