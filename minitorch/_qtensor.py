"""Quantized tensors, as torch.quantize_per_tensor makes them: minitorch.qint8, quint8 and qint32,
the quantization schemes (minitorch.per_tensor_affine, ...), and the tensor that holds integers
and the parameters that map them to reals: real = (q - zero_point) * scale.

The C dtype table has no quantized types, so a quantized tensor is a Python object over its
integer tensor (int8, uint8 or int32: what int_repr() returns) and its quantizer. Its `dtype` is
one of the quantized dtype objects here, which compare, hash, print and pickle as PyTorch's. As in
PyTorch, few ops run on it (views, indexing, relu, dequantize, clone); every other op raises
PyTorch's NotImplementedError for the QuantizedCPU backend. Rounding follows PyTorch's fbgemm
kernels bit for bit (the tests compare with torch): 8-bit per-tensor quantization rounds
x * (1/scale) + zero_point once, as one fused multiply-add, to the nearest even integer; qint32
and per-channel quantization round x * (1/scale) in float32, then add zero_point in float32;
dequantization is (q - zero_point) * scale in float32 (per channel: times the float64 scale,
rounded once).
"""
from __future__ import annotations

import warnings
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from . import _C
from ._tensor import Tensor

_DEPRECATED = ("torch.quantize_per_tensor, torch.quantize_per_channel and other quantized tensor creation "
               "functions that produce tensors with dtype torch.quint8, torch.qint8, and torch.qint32 are "
               "deprecated and will be removed in a future PyTorch release.")
_warned = False


def _warn_deprecated() -> None:
    """PyTorch 2.13 warns once per process when a quantized tensor is first made."""
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(_DEPRECATED, UserWarning, stacklevel=3)


class qscheme:
    """A quantization scheme (minitorch.per_tensor_affine, ...): one object per scheme."""

    _by_name: dict = {}

    def __init__(self, name: str) -> None:
        self.name = name
        qscheme._by_name[name] = self

    def __repr__(self) -> str:
        return f"minitorch.{self.name}"

    def __reduce__(self):
        return _qscheme_named, (self.name,)


def _qscheme_named(name: str) -> qscheme:
    return qscheme._by_name[name]


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")


class QuantizedDtype:
    """minitorch.qint8, quint8, qint32: a quantized element type. Not a C dtype (the C table has
    none), but it answers the dtype attributes as PyTorch's do: itemsize, is_floating_point,
    is_complex; is_signed raises, as PyTorch's does for quantized types."""

    _by_name: dict = {}

    def __init__(self, name: str, storage: Any, qmin: int, qmax: int) -> None:
        self.name, self._storage, self._qmin, self._qmax = name, storage, qmin, qmax
        QuantizedDtype._by_name[name] = self

    def __repr__(self) -> str:
        return f"minitorch.{self.name}"

    def __reduce__(self):
        return _qdtype_named, (self.name,)

    @property
    def itemsize(self) -> int:
        return self._storage.itemsize

    is_floating_point = False
    is_complex = False

    @property
    def is_signed(self) -> bool:
        raise RuntimeError("isSignedType not supported for quantized types")

    def to_real(self) -> "QuantizedDtype":
        return self

    def to_complex(self):
        raise RuntimeError(f"Unsupported ScalarType {_storage_name(self)}")

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: tuple = (), kwargs: Optional[dict] = None) -> Any:
        """A quantized dtype given to a factory or a cast: PyTorch's refusal (no quantized
        tensor is made that way; quantize_per_tensor makes them)."""
        name = getattr(func, "__name__", "")
        if name in ("zeros", "new_zeros"):
            raise _not_implemented("aten::zero_")
        raise RuntimeError("empty_strided not supported on quantized tensors yet see "
                           "https://github.com/pytorch/pytorch/issues/74540")


def _qdtype_named(name: str) -> QuantizedDtype:
    return QuantizedDtype._by_name[name]


def _storage_name(dt: QuantizedDtype) -> str:
    """PyTorch's ScalarType name: QInt8, QUInt8, QInt32."""
    return {"qint8": "QInt8", "quint8": "QUInt8", "qint32": "QInt32"}[dt.name]


qint8 = QuantizedDtype("qint8", _C.int8, -128, 127)
quint8 = QuantizedDtype("quint8", _C.uint8, 0, 255)
qint32 = QuantizedDtype("qint32", _C.int32, -(2 ** 31), 2 ** 31 - 1)


def _qdtype_of_storage(dt: Any) -> QuantizedDtype:
    for q in (qint8, quint8, qint32):
        if q._storage == dt:
            return q
    raise RuntimeError(f"Creation of quantized tensor requires quantized dtype like torch.quint8, got {dt}")


def _not_implemented(op: str) -> NotImplementedError:
    return NotImplementedError(
        f"Could not run '{op}' with arguments from the 'QuantizedCPU' backend. This could be because the "
        "operator doesn't exist for this backend, or was omitted during the selective/custom build process "
        "(if using custom build).")


def _aten_name(name: str) -> str:
    """aten::<op>.out, as PyTorch 2.13's message names the out= kernel it could not find."""
    name = name.strip("_")
    name = {"truediv": "div", "radd": "add", "rmul": "mul", "iadd": "add", "isub": "sub", "imul": "mul",
            "itruediv": "div", "matmul": "mm", "rmatmul": "mm", "softmax": "_softmax"}.get(name, name)
    return f"aten::{name}.out"


_VIEWS = ("view", "reshape", "flatten", "squeeze", "unsqueeze", "transpose", "t", "permute", "expand",
          "narrow", "select", "__getitem__", "contiguous", "clone", "detach", "unflatten", "view_as",
          "reshape_as", "chunk", "split", "unbind")
_SHAPE = ("size", "dim", "numel", "nelement", "stride", "is_contiguous", "storage_offset", "ndimension",
          "__len__", "data_ptr")


class QTensor(Tensor):
    """A quantized tensor: integers (int_repr) and the quantizer that maps them to reals.

    It is a Tensor (isinstance says so, as PyTorch's), made over the storage of its int_repr
    (_make_subclass), so sizes and strides are the C tensor's; every op reaches
    __torch_function__, which runs the few quantized ones and refuses the others."""

    is_quantized = True
    is_sparse = False
    is_cuda = False
    is_meta = False
    requires_grad = False
    grad = None
    grad_fn = None
    is_leaf = True

    def __new__(cls, ir, *args: Any) -> "QTensor":
        return _C.TensorBase._make_subclass(cls, ir, False)

    def __init__(self, ir, dtype: QuantizedDtype, scheme: qscheme, scale: Any, zero_point: Any,
                 axis: Optional[int] = None) -> None:
        self._ir, self._dtype, self._qscheme = ir, dtype, scheme
        if axis is None:
            self._scale, self._zero_point = float(scale), int(zero_point)
            self._scales = self._zero_points = self._axis = None
        else:
            self._scales, self._zero_points, self._axis = scale, zero_point, axis
            self._scale = self._zero_point = None

    # ---- the quantizer ----
    @property
    def dtype(self) -> QuantizedDtype:
        return self._dtype

    def qscheme(self) -> qscheme:
        return self._qscheme

    def _per_tensor(self, what: str) -> None:
        if self._axis is not None:
            raise RuntimeError(f"Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false. "
                               f"({what} is only for per-tensor quantized tensors)")

    def _per_channel(self) -> None:
        if self._axis is None:
            raise RuntimeError("Expected quantizer->qscheme() == kPerChannelAffine || quantizer->qscheme() == "
                               "kPerChannelAffineFloatQParams to be true, but got false.")

    def q_scale(self) -> float:
        self._per_tensor("q_scale")
        return self._scale

    def q_zero_point(self) -> int:
        self._per_tensor("q_zero_point")
        return self._zero_point

    def q_per_channel_scales(self):
        self._per_channel()
        return self._scales.clone()

    def q_per_channel_zero_points(self):
        self._per_channel()
        return self._zero_points.clone()

    def q_per_channel_axis(self) -> int:
        self._per_channel()
        return self._axis

    def int_repr(self):
        return self._ir.clone()

    def dequantize(self):
        return _dequantize(self)

    # ---- what a tensor answers about itself ----
    @property
    def shape(self):
        return self._ir.shape

    @property
    def ndim(self) -> int:
        return self._ir.dim()

    @property
    def device(self):
        return self._ir.device

    @property
    def layout(self):
        return self._ir.layout

    @property
    def T(self) -> "QTensor":
        return self._like(self._ir.T)

    @property
    def mT(self) -> "QTensor":
        return self._like(self._ir.mT)

    @property
    def data(self) -> "QTensor":
        return self.detach()

    def element_size(self) -> int:
        return self._dtype.itemsize

    def is_floating_point(self) -> bool:
        return False

    def is_complex(self) -> bool:
        return False

    def requires_grad_(self, requires_grad: bool = True) -> "QTensor":
        if requires_grad:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        return self

    def cpu(self) -> "QTensor":
        return self

    def to(self, *args: Any, **kwargs: Any) -> "QTensor":
        target = kwargs.get("device", args[0] if args else None)
        if target is None or str(target) == "cpu" or target == self._dtype:
            return self
        raise _not_implemented("aten::_to_copy")

    def _like(self, ir) -> "QTensor":
        if self._axis is None:
            return QTensor(ir, self._dtype, self._qscheme, self._scale, self._zero_point)
        if ir.dim() != self._ir.dim() or ir.shape[self._axis] != self._ir.shape[self._axis]:
            raise _not_implemented("aten::as_strided (a view that moves a per-channel tensor's axis)")
        return QTensor(ir, self._dtype, self._qscheme, self._scales, self._zero_points, self._axis)

    def _view_op(self, name: str, *args: Any, **kwargs: Any) -> Any:
        out = getattr(self._ir, name)(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(self._like(o) for o in out)
        return self._like(out)

    def relu(self) -> "QTensor":
        """max(q, zero_point): real values below zero become zero, as quantized::relu."""
        self._per_tensor("relu")
        zp = self._zero_point
        return self._like(self._ir.clamp_min(zp))

    def relu_(self) -> "QTensor":
        self._per_tensor("relu_")
        self._ir.clamp_min_(self._zero_point)
        return self

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"'Tensor' object has no attribute '{name}'")

    def __getitem__(self, index: Any) -> "QTensor":
        return self._view_op("__getitem__", index)

    def __len__(self) -> int:
        return len(self._ir)

    def __iter__(self):
        return iter(self.unbind(0))

    # ---- one element's value, and what has no quantized form ----
    def item(self) -> float:
        return _dequantize(self).item()

    def __bool__(self) -> bool:
        return bool(_dequantize(self))

    def __float__(self) -> float:
        return float(_dequantize(self))

    def __int__(self) -> int:
        return int(_dequantize(self))

    def numpy(self, *, force: bool = False) -> Any:
        raise TypeError(f"Got unsupported ScalarType {_storage_name(self._dtype)}")

    def tolist(self) -> Any:
        raise RuntimeError("load_scalar: invalid type")

    def _float_cast(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Creation of quantized tensor requires quantized dtype like torch.quint8")

    float = double = half = bfloat16 = long = int = _float_cast

    def mean(self, dim: Any = None, keepdim: bool = False) -> "QTensor":
        """The mean of the real values, quantized with this tensor's parameters, as PyTorch's
        mean_quantized_cpu: over the innermost dims of a contiguous tensor, the integers' sum
        divided in float32 and rounded half to even (its qmean_inner_dim kernel: a mean that is a
        tie, as 116.5, rounds to 116 where dequantize-mean-quantize could give 117); otherwise
        dequantize, mean, quantize."""
        self._per_tensor("mean")
        nd = self._ir.dim()
        dims = list(range(nd)) if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0) else (
            [dim] if isinstance(dim, int) else list(dim))
        dims = sorted(d % nd for d in dims) if nd else []
        if self._ir.is_contiguous() and dims == list(range(nd - len(dims), nd)) and self._ir.numel() > 0:
            count = 1
            for d in dims:
                count *= self._ir.shape[d]
            total = self._ir.to(_C.int64).sum(dims, keepdim=keepdim) if dims else self._ir.to(_C.int64)
            return self._like((total.to(_C.float32) / count).round().to(self._ir.dtype))
        x = _dequantize(self)
        m = x.mean() if dim is None else x.mean(dim, keepdim=keepdim)
        return quantize_per_tensor(m, self._scale, self._zero_point, self._dtype)

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        from ._tensor_str import _add_suffixes, _tensor_str

        prefix = "tensor("
        values = self.dequantize()
        body = _tensor_str(values, len(prefix)) if values.numel() else "[]"
        suffixes = [f"size={tuple(self.shape)}", f"dtype={self._dtype}",
                    f"quantization_scheme={self._qscheme}"]
        if self._axis is None:
            suffixes += [f"scale={self._scale!r}", f"zero_point={self._zero_point}"]
        else:
            suffixes += [f"scale={self._scales!r}", f"zero_point={self._zero_points!r}", f"axis={self._axis}"]
        return _add_suffixes(prefix + body, suffixes, len(prefix))

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(repr(self), spec)

    def __deepcopy__(self, memo: dict) -> "QTensor":
        out = QTensor(self._ir.clone(), self._dtype, self._qscheme, self._scale, self._zero_point)
        if self._axis is not None:
            out = QTensor(self._ir.clone(), self._dtype, self._qscheme, self._scales.clone(),
                          self._zero_points.clone(), self._axis)
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol: int):
        return self.__reduce__()

    def __reduce__(self):
        params = ((self._scale, self._zero_point) if self._axis is None
                  else (self._scales, self._zero_points, self._axis))
        return _rebuild, (self._ir, self._dtype.name, self._qscheme.name, params)

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: tuple = (), kwargs: Optional[dict] = None) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        if name == "__get__" and args and isinstance(args[0], QTensor):
            return func(args[0]._ir)  # a Tensor property none of ours covers: the integers' answer
        if name in _HANDLED:
            return _HANDLED[name](*args, **kwargs)
        raise _not_implemented(_aten_name(name))


def _unsupported_operator(name: str):
    def op(self: QTensor, *args: Any) -> Any:
        raise _not_implemented(_aten_name(name))
    op.__name__ = name
    return op


for _name in ("add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul", "truediv", "rtruediv",
              "itruediv", "floordiv", "mod", "pow", "rpow", "matmul", "rmatmul", "neg", "abs", "and", "or",
              "xor", "invert", "lshift", "rshift"):
    setattr(QTensor, f"__{_name}__", _unsupported_operator(_name))


def _comparison(name: str):
    """A comparison of real values (PyTorch's quantized eq/ne/lt/...: a bool tensor)."""
    def op(self: Any, other: Any) -> Any:
        a = _dequantize(self) if isinstance(self, QTensor) else self
        b = _dequantize(other) if isinstance(other, QTensor) else other
        return getattr(a, f"__{name}__")(b)
    op.__name__ = name
    return op


for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(QTensor, f"__{_name}__", _comparison(_name))
    setattr(QTensor, _name, _comparison(_name))
del _name


def _rebuild(ir, dtype_name: str, scheme_name: str, params: tuple) -> QTensor:
    return QTensor(ir, _qdtype_named(dtype_name), _qscheme_named(scheme_name), *params)


# ---- making and reading quantized tensors ----

def _check_float_input(input: Any) -> None:
    from ._tensor import Tensor

    if isinstance(input, QTensor) or not isinstance(input, Tensor):
        raise TypeError(f"quantize: expected a Tensor as input, got {type(input).__name__}")
    if input.dtype != _C.float32:
        name = {"float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long", "int32": "Int",
                "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}.get(
                    str(input.dtype).rsplit(".", 1)[-1], str(input.dtype))
        raise RuntimeError(f"Quantize only works on Float Tensor, got {name}")


def _check_qdtype(dtype: Any) -> QuantizedDtype:
    if not isinstance(dtype, QuantizedDtype):
        name = {"float32": "Float", "float64": "Double", "int8": "Char", "uint8": "Byte", "int32": "Int",
                "int64": "Long", "float16": "Half"}.get(str(dtype).rsplit(".", 1)[-1], str(dtype))
        raise RuntimeError(f"ScalarType {name} is not supported in new_qtensor.")
    return dtype


def _check_zero_point(fn: str, zero_point: int, dtype: QuantizedDtype) -> None:
    if zero_point > dtype._qmax:
        raise RuntimeError(f"{fn} zero_point {zero_point} is above upper bound.")
    if zero_point < dtype._qmin:
        raise RuntimeError(f"{fn} zero_point {zero_point} is below lower bound.")


def _round_clamp(v, dtype: QuantizedDtype, nan_to: int):
    """v (float32 of x/scale + zero_point) rounded half to even, clamped to dtype's range."""
    from . import nan_to_num

    v = nan_to_num(v.round(), nan=float(nan_to))
    if dtype is qint32:  # float32 cannot hold int32's bounds exactly: clamp in float64
        v = v.double()
    return v.clamp(dtype._qmin, dtype._qmax).to(dtype._storage)


def _quantize_values(x, scale: float, zero_point: int, dtype: QuantizedDtype):
    """fbgemm's per-tensor rounding of float32 x: int_repr values."""
    from . import float32, tensor

    inv = float(tensor(1.0, dtype=float32) / tensor(scale, dtype=float32))  # 1.0f / float(scale)
    if dtype is qint32:
        v = x * tensor(inv, dtype=float32) + tensor(float(zero_point), dtype=float32)
    else:
        # one rounding of x * inv + zero_point, as fbgemm's fused multiply-add: the product of two
        # floats is exact in float64, so only the sum rounds before the cast to float32
        v = (x.double() * inv + zero_point).float()
    return _round_clamp(v, dtype, dtype._qmax)


def quantize_per_tensor(input: Any, scale: Any, zero_point: Any, dtype: Any) -> Any:
    """Quantizes the float32 tensor input (or each of a list of them) with one scale and zero point."""
    if isinstance(input, (list, tuple)):
        scales = scale.tolist() if hasattr(scale, "tolist") else scale
        zps = zero_point.tolist() if hasattr(zero_point, "tolist") else zero_point
        return [quantize_per_tensor(t, s, z, dtype) for t, s, z in zip(input, scales, zps)]
    dtype = _check_qdtype(dtype)
    _check_float_input(input)
    scale = float(scale.item() if hasattr(scale, "item") else scale)
    zero_point = int(zero_point.item() if hasattr(zero_point, "item") else zero_point)
    _check_zero_point("quantize_tensor_per_tensor_affine", zero_point, dtype)
    _warn_deprecated()
    ir = _quantize_values(input.detach().contiguous(), scale, zero_point, dtype)
    return QTensor(ir, dtype, per_tensor_affine, scale, zero_point)


def _f32(v: float) -> float:
    """v rounded to float32, as a C++ float holds it."""
    return float(np.float32(v))


def _choose_qparams(x_min: float, x_max: float, qmin: int, qmax: int, reduce_range: bool,
                    preserve_sparsity: bool = False) -> tuple:
    """(scale, zero_point) for values in [x_min, x_max] as PyTorch's ChooseQuantizationParams
    (quant_utils, the same as fbgemm's): the range widened to hold 0, scale in double, zero point
    from whichever end adds the smaller error, nudged to an integer in [qmin, qmax].
    preserve_sparsity (symmetric schemes) first makes the range symmetric about 0 on the integer
    grid, and puts the zero point in the middle of [qmin, qmax]."""
    if reduce_range:
        qmin, qmax = int(qmin / 2), int(qmax / 2)
    symmetric = preserve_sparsity and x_min < 0 < x_max
    if symmetric:
        sym_qmin, sym_qmax = -((qmax - qmin) // 2 + 1), (qmax - qmin) // 2
        max_scale = max(abs(_f32(x_min) / sym_qmin), abs(_f32(x_max) / sym_qmax))
        x_min, x_max = max_scale * sym_qmin, max_scale * sym_qmax
    x_min, x_max = min(_f32(x_min), 0.0), max(_f32(x_max), 0.0)
    scale = (x_max - x_min) / (qmax - qmin)
    with np.errstate(over="ignore", divide="ignore"):
        unusable = _f32(scale) == 0.0 or np.isinf(np.float32(1.0) / np.float32(scale))
    if unusable:
        scale = 0.1  # fbgemm multiplies by 1/scale, which must be finite
    small = _f32(6.1e-5)  # fp16's smallest normal: smaller scales are raised to it, as in PyTorch
    if scale < small:
        old, scale = scale, small
        if x_min == 0.0:
            x_max = _f32(small * (qmax - qmin))
        elif x_max == 0.0:
            x_min = _f32(-small * (qmax - qmin))
        else:
            amplifier = _f32(small / _f32(old))
            x_min, x_max = _f32(x_min * amplifier), _f32(x_max * amplifier)
    from_min, from_max = qmin - x_min / scale, qmax - x_max / scale
    err_min, err_max = abs(qmin) - abs(x_min / scale), abs(qmax) - abs(x_max / scale)
    zero = from_min if err_min < err_max else from_max
    if symmetric:
        zero = (qmin + qmax) / 2
    if zero < qmin:
        return scale, qmin
    if zero > qmax:
        return scale, qmax
    return scale, int(round(zero))  # Python's round is nearbyint's: ties to even


def quantize_per_tensor_dynamic(input: Any, dtype: Any, reduce_range: bool) -> Any:
    """Quantizes input with a scale and zero point chosen from its own min and max, as PyTorch's
    dynamic quantization of activations does (quint8 or qint8)."""
    dtype = _check_qdtype(dtype)
    _check_float_input(input)
    if dtype not in (qint8, quint8):
        raise RuntimeError(f"dtype {_storage_name(dtype)}not supported")
    if input.numel() == 0:
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")
    from . import aminmax

    lo, hi = (float(v) for v in aminmax(input.detach()))
    scale, zero_point = _choose_qparams(lo, hi, dtype._qmin, dtype._qmax, reduce_range)
    return quantize_per_tensor(input, scale, zero_point, dtype)


def quantize_per_channel(input: Any, scales: Any, zero_points: Any, axis: int, dtype: Any) -> Any:
    """Quantizes input with one scale and zero point for each index along axis."""
    from . import float32, float64, int64

    dtype = _check_qdtype(dtype)
    _check_float_input(input)
    if not 0 <= axis < input.dim():
        raise RuntimeError(f"Channel axis out of range in per channel affine quantization. Got: {axis}"
                           f"Expected: [0, {input.dim()})")
    channels = input.shape[axis]
    if scales.numel() != channels:
        raise RuntimeError(f"length of scales must equal to channel, expected {channels} got, {scales.numel()}")
    if zero_points.numel() != channels:
        raise RuntimeError(f"length of zero_points must equal to channel expected {channels} got, "
                           f"{zero_points.numel()}")
    for z in zero_points.tolist():
        _check_zero_point("quantize_tensor_per_channel_affine", int(z), dtype)
    _warn_deprecated()
    shape = [1] * input.dim()
    shape[axis] = channels
    inv = (1.0 / scales.to(float32)).view(shape)  # 1.0f / float(scale), per channel
    zp = zero_points.to(float32).view(shape)
    ir = _round_clamp(input.detach() * inv + zp, dtype, 0)
    return QTensor(ir, dtype, per_channel_affine, scales.to(float64).clone(), zero_points.to(int64).clone(),
                   axis)


def _dequantize(q: QTensor):
    """(q - zero_point) * scale: in float32 per tensor, in float64 rounded to float32 per channel."""
    from . import float32, tensor

    x = q._ir.to(float32)
    if q._axis is None:
        return (x - float(q._zero_point)) * tensor(q._scale, dtype=float32)
    shape = [1] * x.dim()
    shape[q._axis] = x.shape[q._axis]
    # per channel, PyTorch multiplies by the float64 scales and rounds once to float32
    return ((x - q._zero_points.to(float32).view(shape)).double() * q._scales.view(shape)).float()


def dequantize(tensor: Any) -> Any:
    """The float32 values of a quantized tensor (or of each in a list); a plain tensor as float32
    (itself where it is float32 already), as PyTorch's."""
    if isinstance(tensor, (list, tuple)):
        return [dequantize(t) for t in tensor]
    if isinstance(tensor, QTensor):
        return _dequantize(tensor)
    return tensor if tensor.dtype == _C.float32 else tensor.to(_C.float32)


def _make_per_tensor_quantized_tensor(input: Any, scale: float, zero_point: int) -> QTensor:
    """A quantized tensor whose int_repr is (a copy of) the integer tensor input."""
    dtype = _qdtype_of_storage(input.dtype)
    _warn_deprecated()
    return QTensor(input.detach().contiguous().clone(), dtype, per_tensor_affine, float(scale), int(zero_point))


def _make_per_channel_quantized_tensor(input: Any, scale: Any, zero_point: Any, axis: int) -> QTensor:
    from . import float64, int64

    dtype = _qdtype_of_storage(input.dtype)
    _warn_deprecated()
    return QTensor(input.detach().contiguous().clone(), dtype, per_channel_affine, scale.to(float64).clone(),
                   zero_point.to(int64).clone(), axis)


def _empty_affine_quantized(size: Sequence[int], *, scale: float = 1.0, zero_point: int = 0,
                            dtype: Any = quint8, **_: Any) -> QTensor:
    from . import zeros

    dtype = _check_qdtype(dtype)
    return QTensor(zeros(*size, dtype=dtype._storage), dtype, per_tensor_affine, scale, zero_point)


def _handled_views() -> dict:
    """Views make a quantized tensor with the same quantizer; shape questions are the integers'."""
    out = {name: (lambda n: lambda self, *a, **k: self._view_op(n, *a, **k))(name) for name in _VIEWS}
    out.update({name: (lambda n: lambda self, *a, **k: getattr(self._ir, n)(*a, **k))(name) for name in _SHAPE})
    return out


def _relu(input: QTensor, inplace: bool = False) -> QTensor:
    return input.relu_() if inplace else input.relu()


def _quantized_value(input: QTensor, value: float) -> int:
    """value quantized with input's scale and zero point (PyTorch's quantize_val)."""
    from . import tensor

    return int(quantize_per_tensor(tensor([float(value)]), input._scale, input._zero_point, input._dtype)._ir)


def _hardtanh(input: QTensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> QTensor:
    """The integers clamped to min_val and max_val quantized (quantized::hardtanh, relu6)."""
    input._per_tensor("hardtanh")
    lo, hi = _quantized_value(input, min_val), _quantized_value(input, max_val)
    if inplace:
        input._ir.clamp_(lo, hi)
        return input
    return input._like(input._ir.clamp(lo, hi))


def _relu6(input: QTensor, inplace: bool = False) -> QTensor:
    return _hardtanh(input, 0.0, 6.0, inplace)


def _dropout(input: QTensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> QTensor:
    """Dropout in eval mode passes a quantized tensor through, as PyTorch's."""
    if training:
        raise _not_implemented("aten::native_dropout")
    return input


def _max_pooling(name: str):
    """max_pool1d/2d/3d of the integers (the maximum of the reals, as the map is increasing); the
    quantizer kept. The integers pool exactly in float32."""
    def op(input: QTensor, *args: Any, **kwargs: Any) -> Any:
        from .nn import functional as F

        out = getattr(F, name)(input._ir.float(), *args, **kwargs)
        if isinstance(out, tuple):  # return_indices=True
            return input._like(out[0].to(input._ir.dtype)), out[1]
        return input._like(out.to(input._ir.dtype))
    return op


def _integer_average(input: QTensor, average: Any) -> QTensor:
    """average (a mean or an average pooling) of the integers less the zero point, in float64
    (exact sums, one rounding of the quotient), rounded half to even, plus the zero point: the
    result keeps the input's quantizer, as PyTorch's quantized averages do."""
    zp = input._zero_point
    v = average(input._ir.to(_C.float64) - zp).round() + zp
    return QTensor(v.clamp(input._dtype._qmin, input._dtype._qmax).to(input._dtype._storage), input._dtype,
                   input._qscheme, input._scale, zp)


def _average_pooling(name: str):
    """avg_pool2d, adaptive_avg_pool2d, ... of a quantized tensor (_integer_average)."""
    def op(input: QTensor, *args: Any, **kwargs: Any) -> QTensor:
        from .nn import functional as F

        input._per_tensor(name)
        return _integer_average(input, lambda v: getattr(F, name)(v, *args, **kwargs))
    return op


def _cat(tensors: List[QTensor], dim: int = 0) -> QTensor:
    """cat of quantized tensors with one quantizer: the int_reprs joined."""
    from . import cat

    first = tensors[0]
    for t in tensors[1:]:
        if not isinstance(t, QTensor) or t._dtype is not first._dtype or t._axis is not None or \
                (t._scale, t._zero_point) != (first._scale, first._zero_point):
            raise _not_implemented("aten::cat (quantized tensors with different quantizers)")
    return first._like(cat([t._ir for t in tensors], dim))


def _equal(a: Any, b: Any) -> bool:
    if not (isinstance(a, QTensor) and isinstance(b, QTensor)):
        return False
    if a._dtype is not b._dtype or a._qscheme is not b._qscheme or a.shape != b.shape:
        return False
    if a._axis is None:
        same = (a._scale, a._zero_point) == (b._scale, b._zero_point)
    else:
        same = a._axis == b._axis and bool((a._scales == b._scales).all()) and \
            bool((a._zero_points == b._zero_points).all())
    return same and bool((a._ir == b._ir).all())


_HANDLED: dict = {
    **_handled_views(),
    "dequantize": dequantize, "int_repr": QTensor.int_repr, "q_scale": QTensor.q_scale,
    "q_zero_point": QTensor.q_zero_point, "q_per_channel_scales": QTensor.q_per_channel_scales,
    "q_per_channel_zero_points": QTensor.q_per_channel_zero_points,
    "q_per_channel_axis": QTensor.q_per_channel_axis, "qscheme": QTensor.qscheme,
    "relu": _relu, "relu_": lambda t: t.relu_(), "mean": QTensor.mean, "cat": _cat, "concat": _cat, "concatenate": _cat,
    "hardtanh": _hardtanh, "relu6": _relu6, "dropout": _dropout,
    **{n: _max_pooling(n) for n in ("max_pool1d", "max_pool2d", "max_pool3d")},
    **{n: _average_pooling(n) for n in ("avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
                                        "adaptive_avg_pool2d", "adaptive_avg_pool3d")},
    "equal": _equal, "is_floating_point": lambda t: False, "is_complex": lambda t: False,
    **{n: getattr(QTensor, n) for n in ("eq", "ne", "lt", "le", "gt", "ge")},
}
