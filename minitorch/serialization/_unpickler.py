"""The pickles of PyTorch's checkpoints, read without running code from the file.

torch.save pickles a tensor as a call of a function of PyTorch's, named in the pickle:

    torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks)

where storage is a persistent id, ('storage', torch.FloatStorage, key, location, numel), whose
bytes are the record data/<key> of the archive. Unpickling calls whatever global a pickle names, so
with weights_only=True (the default, as in PyTorch) `find_class` hands out only the globals of an
allow-list, PyTorch's: its rebuild functions, dtypes, storage types, torch.Size, torch.device,
OrderedDict, Counter, set, complex, bytearray and _codecs.encode (protocol 2's bytes), plus what the
user adds with add_safe_globals. Each is minitorch's own stand-in, which checks its arguments, so
that a hostile pickle can only build containers, numbers, strings and views of the storages it
holds: a refused global raises pickle.UnpicklingError with PyTorch's wording, and anything else
malformed a RuntimeError. BUILD (which sets an object's attributes) is allowed only on instances of
OrderedDict, Counter and the classes the user added, so a file cannot change a class or one of the
stand-ins for every later load. weights_only=False unpickles anything, as pickle does, mapping PyTorch's
globals to minitorch's and never importing torch.
"""
from __future__ import annotations

import _compat_pickle
import importlib
import io
import pickle
import pickletools
from collections import Counter, OrderedDict
from typing import Any, Callable, Dict, List

import numpy as np

from .. import _C
from ._common import check_view

# torch's storage class name -> its dtype's name (the numpy name, and minitorch's where it has it)
STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128",
}
STORAGE_NAMES = {dtype: name for name, dtype in STORAGE_DTYPES.items()}
# a quantized tensor's storage: its quantized dtype -> the storage name, and the integers' dtype
Q_STORAGE_NAMES = {"qint8": "QInt8Storage", "quint8": "QUInt8Storage", "qint32": "QInt32Storage"}
Q_STORAGE_DTYPES = {"QInt8Storage": "int8", "QUInt8Storage": "uint8", "QInt32Storage": "int32"}

# PyTorch's globals for things minitorch does not have: named in the error, not refused as unsafe.
_UNSUPPORTED = {
    "torch._utils._rebuild_sparse_tensor": "sparse tensors",
    "torch._utils._rebuild_nested_tensor": "nested tensors",
    "torch._utils._rebuild_meta_tensor_no_storage": "meta tensors",
    "torch._utils._rebuild_wrapper_subclass": "tensor subclasses",
    "torch._utils._rebuild_tensor_v3": "untyped storages",
    "torch._utils._rebuild_device_tensor_from_numpy": "tensors of devices other than cpu and cuda",
    "torch._utils._rebuild_device_tensor_from_cpu_tensor": "tensors of devices other than cpu and cuda",
    "torch.serialization._get_layout": "sparse tensors",
    "torch.storage.UntypedStorage": "untyped storages",
    "torch.UntypedStorage": "untyped storages",
    "torch.storage.TypedStorage": "saved storages",
}
_BLOCKED_MODULES = ("sys",)

_user_globals: list = []  # what add_safe_globals added, in order
# minitorch's own globals that its packages allow when imported ("module.name" -> object), as
# torch.distributed.tensor allowlists DTensor's: not the user's list (get_safe_globals)
library_globals: Dict[str, Any] = {}


def minitorch_dtype(name: str, what: str):
    """minitorch's dtype of that name, or a RuntimeError saying the file needs one it lacks."""
    dtype = getattr(_C, name, None)
    if not isinstance(dtype, _C.dtype):
        have = ", ".join(n for n in STORAGE_NAMES if isinstance(getattr(_C, n, None), _C.dtype))
        raise RuntimeError(f"minitorch.load: the file holds {what} of dtype {name}, which minitorch "
                           f"does not have (it has {have})")
    return dtype


class StorageType:
    """torch.FloatStorage and its kin, as named in a persistent id: the dtype of the storage."""

    def __init__(self, name: str) -> None:
        self.name, self.dtype_name = name, STORAGE_DTYPES.get(name) or Q_STORAGE_DTYPES[name]
        self.dtype = minitorch_dtype(self.dtype_name, "a storage")
        self.itemsize = 2 if self.dtype_name == "bfloat16" else np.dtype(self.dtype_name).itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class LoadedStorage:
    """A storage read from the file: a 1-D tensor over all of it, where map_location put it."""

    def __init__(self, tensor, stype: StorageType) -> None:
        self.tensor, self.stype = tensor, stype


def _rebuild_tensor(storage: Any, storage_offset: Any, size: Any, stride: Any):
    if not isinstance(storage, LoadedStorage):
        raise RuntimeError(f"minitorch.load: corrupt pickle: a tensor's storage is a {type(storage).__name__}")
    size, stride = _int_tuple(size), _int_tuple(stride)
    check_view(size, stride, storage_offset, storage.tensor.numel(), "minitorch.load: corrupt tensor")
    return storage.tensor.as_strided(list(size), list(stride), storage_offset)


def _rebuild_tensor_v2(storage: Any, storage_offset: Any, size: Any, stride: Any, requires_grad: Any,
                       backward_hooks: Any, metadata: Any = None):
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError("minitorch.load: corrupt tensor: only floating point tensors can require gradients")
        t.requires_grad_(True)
    return t


def _rebuild_qtensor(storage: Any, storage_offset: Any, size: Any, stride: Any, quantizer_params: Any,
                     requires_grad: Any, backward_hooks: Any):
    """A quantized tensor: its integers viewed from a QInt8Storage (or kin) and its quantizer. A
    view, not a copy: a legacy file's storage bytes are read after its pickle."""
    from .. import _qtensor

    t = _rebuild_tensor(storage, storage_offset, size, stride)
    qdtype = {v: k for k, v in Q_STORAGE_NAMES.items()}.get(storage.stype.name)
    params = quantizer_params if isinstance(quantizer_params, tuple) else ()
    scheme = params[0] if params else None
    if qdtype is None or not isinstance(scheme, _qtensor.qscheme):
        raise RuntimeError("minitorch.load: corrupt pickle: a bad quantized tensor")
    if scheme.name == "per_tensor_affine" and len(params) == 3 and isinstance(params[1], float) \
            and type(params[2]) is int:
        return _qtensor.QTensor(t, _qtensor._qdtype_named(qdtype), scheme, params[1], params[2])
    if scheme.name in ("per_channel_affine", "per_channel_affine_float_qparams") and len(params) == 4 \
            and all(isinstance(p, _C.TensorBase) for p in params[1:3]) and type(params[3]) is int \
            and 0 <= params[3] < t.dim() and params[1].numel() == params[2].numel() == t.shape[params[3]]:
        return _qtensor.QTensor(t, _qtensor._qdtype_named(qdtype), scheme, params[1], params[2], params[3])
    raise RuntimeError(f"minitorch.load: the file holds a quantized tensor of scheme {scheme}, which "
                       "minitorch cannot rebuild")


def _rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any):
    from ..nn.parameter import Parameter

    if not isinstance(data, _C.TensorBase):
        raise RuntimeError(f"minitorch.load: corrupt pickle: a parameter's data is a {type(data).__name__}")
    if requires_grad and not data.dtype.is_floating_point:
        raise RuntimeError("minitorch.load: corrupt tensor: only floating point tensors can require gradients")
    return Parameter(data.detach(), bool(requires_grad))


def _set_state(obj: Any, state: Any):
    """The attributes a tensor carried (PyTorch's _set_obj_state), set only where they do not
    replace one of the class's: a file cannot swap a method or a property setter."""
    if isinstance(state, tuple) and len(state) == 2:
        state = {**(state[0] or {}), **(state[1] or {})}
    if not state:
        return obj
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise RuntimeError("minitorch.load: corrupt pickle: a tensor's state is not a dict of names")
    for k, v in state.items():
        if hasattr(type(obj), k) or k.startswith("__"):
            raise RuntimeError(f"minitorch.load: corrupt pickle: a tensor's state sets {k!r}")
        setattr(obj, k, v)
    return obj


def _rebuild_parameter_with_state(data: Any, requires_grad: Any, backward_hooks: Any, state: Any):
    return _set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


class _TypeName:
    """torch.Tensor or torch.nn.Parameter as a pickle names them: a type to rebuild into
    (_rebuild_from_type_v2), not a constructor a file may call with sizes of its choosing."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


class _ParameterName(_TypeName):
    """torch.nn.parameter.Parameter: a type to rebuild into, and callable as Parameter(data)."""

    def __call__(self, data: Any = None, requires_grad: Any = True):
        if data is None:
            raise RuntimeError("minitorch.load: corrupt pickle: a Parameter without data")
        return _rebuild_parameter(data, requires_grad, None)


_TENSOR, _PARAMETER = _TypeName("torch.Tensor"), _ParameterName("torch.nn.parameter.Parameter")
_REBUILDS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_parameter, _rebuild_parameter_with_state)


def _rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any):
    from ..nn.parameter import Parameter

    if all(func is not f for f in _REBUILDS) or (new_type is not _TENSOR and new_type is not _PARAMETER) \
            or not isinstance(args, tuple):
        raise RuntimeError("minitorch.load: corrupt pickle: a bad _rebuild_from_type_v2")
    t = func(*args)
    if new_type is _PARAMETER and not isinstance(t, Parameter):
        t = Parameter(t, t.requires_grad)
    return _set_state(t, state)


def _int_tuple(v: Any) -> tuple:
    if not isinstance(v, (tuple, list)) or not all(type(n) is int for n in v):
        raise RuntimeError("minitorch.load: corrupt pickle: a size or stride that is not ints")
    return tuple(v)


def _size(sizes: Any = ()):
    from .. import Size

    return Size(_int_tuple(sizes))


def _device(kind: Any, index: Any = None):
    from .._device import device

    if not isinstance(kind, str) or not (index is None or type(index) is int):
        raise RuntimeError("minitorch.load: corrupt pickle: a bad torch.device")
    return device(kind) if index is None else device(kind, index)


def _encode(obj: Any, encoding: Any = "utf-8"):
    """_codecs.encode as protocol 2 uses it for bytes: a str to latin-1 bytes, nothing else."""
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1"):
        raise RuntimeError("minitorch.load: corrupt pickle: _codecs.encode of other than a latin-1 str")
    return obj.encode("latin-1")


def _bytearray(*args: Any):
    """bytearray of bytes or of a latin-1 str, never bytearray(n), which allocates n bytes."""
    if not args:
        return bytearray()
    if len(args) == 1 and isinstance(args[0], (bytes, bytearray)):
        return bytearray(args[0])
    return bytearray(_encode(*args))


def _allowed_globals() -> Dict[str, Any]:
    rc: Dict[str, Any] = {
        "collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
        "builtins.set": set, "builtins.complex": complex, "builtins.bytearray": _bytearray,
        "_codecs.encode": _encode, "torch.Size": _size, "torch.device": _device, "torch.Tensor": _TENSOR,
        "torch.nn.parameter.Parameter": _PARAMETER,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch._utils._rebuild_qtensor": _rebuild_qtensor,
    }
    from .. import _qtensor

    for name in _qtensor.qscheme._by_name:
        rc[f"torch.{name}"] = _qtensor.qscheme._by_name[name]
    for name in _qtensor.QuantizedDtype._by_name:
        rc[f"torch.{name}"] = _qtensor.QuantizedDtype._by_name[name]
    for f in _REBUILDS:
        rc[f"torch._utils.{f.__name__}"] = f
    return rc


_ALLOWED = _allowed_globals()


def _torch_global(full: str) -> Any:
    """minitorch's stand-in for a global of PyTorch's that weights_only allows, or None."""
    if full in _ALLOWED:
        return _ALLOWED[full]
    if full in _UNSUPPORTED:
        raise RuntimeError(f"minitorch.load: the file holds {_UNSUPPORTED[full]} ({full}), which minitorch does not support")
    module, _, name = full.rpartition(".")
    if module == "torch" and (name in STORAGE_DTYPES or name in Q_STORAGE_DTYPES):
        return StorageType(name)
    if module == "torch" and name in STORAGE_NAMES:
        return minitorch_dtype(name, "a value")
    return None


def unsafe_globals(data: bytes) -> List[str]:
    """The globals that the pickle data names (GLOBAL opcodes, read, not run) which weights_only
    would refuse, as torch.serialization.get_unsafe_globals_in_checkpoint finds them."""
    names = set()
    try:
        for op, arg, _ in pickletools.genops(data):
            if op.name == "GLOBAL":
                module, name = _py3_name(*arg.split(" ", 1))
                names.add(f"{module}.{name}")
    except Exception as e:  # ValueError, struct.error, ...: all mean a malformed pickle
        raise RuntimeError(f"minitorch.load: corrupt pickle: {e}") from None
    module_name = (n.rpartition(".") for n in names)
    allowed = {f"{m}.{n}" for m, _, n in module_name
               if m == "torch" and (n in STORAGE_DTYPES or n in STORAGE_NAMES or n in Q_STORAGE_DTYPES)}
    allowed |= _ALLOWED.keys() | _UNSUPPORTED.keys() | _user_allowed().keys() | library_globals.keys()
    return sorted(names - allowed)


def _user_allowed() -> Dict[str, Any]:
    rc = {}
    for g in _user_globals:
        if isinstance(g, tuple):
            rc[g[1]] = g[0]
        else:
            rc[f"{g.__module__}.{g.__qualname__}"] = g
    return rc


def _py3_name(module: str, name: str):
    """Protocol 2 pickles name Python 2's modules (__builtin__.set): their Python 3 names."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


class _WeightsUnpickler(pickle._Unpickler):
    """Python's own unpickler (pickle.Unpickler's pure-Python twin), so that BUILD, which sets the
    attributes of the object under it, can be checked too: only on instances of allowed classes,
    never on a class, a function or a storage that this module hands out (as PyTorch's)."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, persistent_load: Callable, encoding: str) -> None:
        super().__init__(file, encoding=encoding)
        self.load_storage, self.refusal, self.storage_error = persistent_load, None, None

    def persistent_load(self, pid: Any) -> Any:
        try:
            return self.load_storage(pid)
        except Exception as e:  # raised as it is: it checks the pid itself, then runs map_location
            self.storage_error = e
            raise

    def find_class(self, module: str, name: str) -> Any:
        module, name = _py3_name(module, name)
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            self.refuse(f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        found = _torch_global(full)
        if found is not None:
            return found
        user = _user_allowed()
        if full in user:
            return user[full]
        if full in library_globals:
            return library_globals[full]
        shown = full[len("builtins."):] if full.startswith("builtins.") else full
        self.refuse(f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
                    f"`minitorch.serialization.add_safe_globals([{shown}])` or the "
                    f"`minitorch.serialization.safe_globals([{shown}])` context manager to allowlist this "
                    "global if you trust this class/function.")

    def refuse(self, message: str) -> None:
        self.refusal = pickle.UnpicklingError(message)
        raise self.refusal

    def load_build(self) -> None:
        inst = self.stack[-2]
        if type(inst) not in (OrderedDict, Counter) and type(inst) not in _user_allowed().values():
            self.refuse("Can only build OrderedDict, Counter or types allowlisted via `add_safe_globals`, "
                        f"but got {type(inst)}")
        pickle._Unpickler.load_build(self)

    dispatch[pickle.BUILD[0]] = load_build


class _ScriptObject:
    """torch.ScriptObject, for weights_only=False: PyTorch pickles its packed quantized weights
    as an empty ScriptObject given (state, class name) by BUILD; the object becomes minitorch's
    class of that name (LinearPacked, CellParams) from the state."""

    def __setstate__(self, state: Any) -> None:
        from .. import _qtensor
        from ..ao.nn.quantized._packed import LinearPacked
        from ..ao.nn.quantized.dynamic.modules.rnn import CellParams

        inner, name = state
        if name.endswith(".LinearPackedParamsBase"):
            weight, bias = inner[:2]
            dtype = _qtensor.qint8 if isinstance(weight, _qtensor.QTensor) else _C.float16
            self.__class__ = LinearPacked
            LinearPacked.__init__(self, weight, bias, dtype)
        elif name.endswith(".CellParamsBase"):
            self.__class__ = CellParams
            CellParams.__setstate__(self, inner)
        else:
            raise RuntimeError(f"minitorch.load: the file holds a TorchScript object {name}, which minitorch "
                               "does not have")


class _FullUnpickler(pickle.Unpickler):
    """weights_only=False: any global, as pickle; PyTorch's become minitorch's, torch is never imported."""

    def __init__(self, file, persistent_load: Callable, encoding: str) -> None:
        super().__init__(file, encoding=encoding)
        self.load_storage = persistent_load

    def persistent_load(self, pid: Any) -> Any:
        return self.load_storage(pid)

    def find_class(self, module: str, name: str) -> Any:
        module, name = _py3_name(module, name)
        if module != "torch" and not module.startswith("torch."):
            return super().find_class(module, name)
        full = f"{module}.{name}"
        if full == "torch.ScriptObject":
            return _ScriptObject
        found = _torch_global(full)
        if found is _TENSOR or found is _PARAMETER:
            from .._tensor import Tensor
            from ..nn.parameter import Parameter

            return Tensor if found is _TENSOR else Parameter
        if found is not None:
            return found
        try:
            return getattr(importlib.import_module("mini" + module), name)
        except (ImportError, AttributeError):
            raise RuntimeError(f"minitorch.load: the file needs {full}, which minitorch does not have") from None


WO_MESSAGE = ("Re-running `minitorch.load` with `weights_only` set to `False` will likely succeed, but it "
              "can result in arbitrary code execution. Do it only if you got the file from a trusted source.")


def _refused_message(message: str) -> str:
    """PyTorch's words around a refusal of the weights-only unpickler (torch.load's _get_wo_message)."""
    if "was not an allowed global by default" in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "do those steps only if you trust the source of the checkpoint. "
                f"\n\t(1) {WO_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
                "the recommended steps in the following error message.\n\tWeightsUnpickler error: " + message)
    return f"Weights only load failed. {WO_MESSAGE}\n\n{message}"


def unpickle(data: bytes, persistent_load: Callable, weights_only: bool, encoding: str = "utf-8") -> Any:
    """The object that the pickle data holds, its storages got from persistent_load(pid); encoding
    decodes Python 2's strings, as pickle's."""
    try:
        # Walks the opcodes first: a length field past the data's end raises here, before the
        # C unpickler would allocate what it claims.
        for _ in pickletools.genops(data):
            pass
    except Exception as e:  # ValueError, struct.error, ...: all mean a malformed pickle
        raise RuntimeError(f"minitorch.load: corrupt pickle: {e}") from None
    if not weights_only:
        return _FullUnpickler(io.BytesIO(data), persistent_load, encoding).load()
    up = _WeightsUnpickler(io.BytesIO(data), persistent_load, encoding)
    try:
        return up.load()
    except pickle.UnpicklingError as e:
        if e is up.refusal:
            raise pickle.UnpicklingError(_refused_message(str(e))) from None
        raise RuntimeError(f"minitorch.load: corrupt pickle: {e}") from None
    except Exception as e:  # TypeError from a call with the wrong arguments, KeyError from a memo, ...
        if isinstance(e, RuntimeError) or e is up.storage_error:
            raise
        raise RuntimeError(f"minitorch.load: corrupt pickle: {type(e).__name__}: {e}") from None
