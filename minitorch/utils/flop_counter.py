"""torch.utils.flop_counter: FlopCounterMode counts the FLOPs of the ops a program runs.

A TorchDispatchMode (utils/_python_dispatch.py): every op reaches it below autograd, the
backward's too, as the aten overload PyTorch names it; the ops of the registry count with
PyTorch's formulas (2 * m * n * k for a matrix product; a convolution's multiplications, its
backward as the two convolutions it is), per module (utils/module_tracker.py) and in "Global".
minitorch's convolutions are aten.conv2d/conv3d and, in backward,
aten.convolution_backward_input/_weight (PyTorch's aten.convolution and
aten.convolution_backward), so the per-op keys differ there and the totals agree. Like
PyTorch's, it counts scaled_dot_product_attention only through the fused GPU kernels' ops it
registers (PyTorch's CPU flash kernel counts nothing); written with matmul, attention counts as
its bmm.
"""
from __future__ import annotations

from collections import defaultdict
from functools import wraps
from math import prod
from typing import Any, Callable, Dict, List, Optional

import minitorch
from minitorch.utils._pytree import tree_map, tree_map_
from minitorch.utils._python_dispatch import TorchDispatchMode
from minitorch.utils.module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula"]

aten = minitorch.ops.aten


def get_shape(i: Any) -> Any:
    return i.shape if isinstance(i, minitorch.Tensor) else i


flop_registry: Dict[Any, Any] = {}


def shape_wrapper(f: Callable) -> Callable:
    @wraps(f)
    def nf(*args, out_val=None, **kwargs):
        args, kwargs, out_shape = tree_map(get_shape, (args, kwargs, out_val))
        return f(*args, out_shape=out_shape, **kwargs)

    return nf


def _packets(*names: str) -> List[Any]:
    """The packets of these aten ops that minitorch has (PyTorch registers some it lacks)."""
    return [getattr(aten, n) for n in names if hasattr(aten, n)]


def register_flop_formula(targets, get_raw: bool = False) -> Callable[[Callable], Callable]:
    """A decorator: the function counts the FLOPs of the op packet(s) targets, from their
    arguments' shapes (or the arguments themselves with get_raw)."""
    from minitorch._ops import OpOverloadPacket

    def register_fun(flop_formula: Callable) -> Callable:
        if not get_raw:
            flop_formula = shape_wrapper(flop_formula)

        def register(target) -> None:
            if not isinstance(target, OpOverloadPacket):
                raise ValueError(f"register_flop_formula(targets): expected each target to be OpOverloadPacket "
                                 f"(i.e. torch.ops.mylib.foo), got {target} which is of type {type(target)}")
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = flop_formula

        tree_map_(register, targets)
        return flop_formula

    return register_fun


@register_flop_formula(aten.mm)
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """Count flops for matmul."""
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"matmul: inner dimensions must match (k == k2), got {k} and {k2}")
    return m * n * 2 * k


@register_flop_formula(aten.addmm)
def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """Count flops for addmm."""
    return mm_flop(a_shape, b_shape)


@register_flop_formula(aten.bmm)
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """Count flops for the bmm operation."""
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2:
        raise AssertionError(f"bmm: batch dimensions must match (b == b2), got {b} and {b2}")
    if k != k2:
        raise AssertionError(f"bmm: inner dimensions must match (k == k2), got {k} and {k2}")
    return b * m * n * 2 * k


@register_flop_formula(aten.baddbmm)
def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """Count flops for the baddbmm operation."""
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed: bool = False) -> int:
    """Count flops for convolution: only the multiplications (bias ignored), 2 per
    multiply-add; for a transposed convolution, per point of the input's spatial dims."""
    batch_size = x_shape[0]
    conv_shape = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *filter_size = w_shape
    return prod(conv_shape) * prod(filter_size) * batch_size * c_out * c_in * 2


@register_flop_formula(_packets("convolution", "_convolution", "conv1d", "conv2d", "conv3d"))
def conv_flop(x_shape, w_shape, *args, out_shape=None, **kwargs) -> int:
    """Count flops for convolution (aten.convolution's transposed flag when given)."""
    transposed = bool(args[4]) if len(args) > 4 and isinstance(args[4], bool) else False
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


def _t(shape) -> list:
    return [shape[1], shape[0]] + list(shape[2:])


@register_flop_formula(_packets("convolution_backward_input"))
def conv_backward_input_flop(grad_out_shape, w_shape, *args, out_shape=None, **kwargs) -> int:
    """The grad_input half of PyTorch's convolution_backward: a transposed convolution of
    grad_output with the weight."""
    return conv_flop_count(grad_out_shape, w_shape, out_shape, True)


@register_flop_formula(_packets("convolution_backward_weight"))
def conv_backward_weight_flop(grad_out_shape, x_shape, *args, out_shape=None, **kwargs) -> int:
    """The grad_weight half of PyTorch's convolution_backward: a convolution of the input with
    grad_output, batch and channels swapped."""
    return conv_flop_count(_t(x_shape), _t(grad_out_shape), _t(out_shape), transposed=False)


def sdpa_flop_count(query_shape, key_shape, value_shape) -> int:
    """Count flops for self-attention: its two batched products (grouped-query attention too)."""
    b, h_q, s_q, d_q = query_shape
    _b2, h_kv, s_k, _d2 = key_shape
    _b3, _h3, _s3, d_v = value_shape
    if not (b == _b2 == _b3 and h_kv == _h3 and d_q == _d2 and s_k == _s3):
        raise AssertionError(f"sdpa_flop_count: query/key/value shapes are incompatible: "
                             f"q={query_shape}, k={key_shape}, v={value_shape}")
    if h_q < h_kv or h_q % h_kv != 0:
        raise AssertionError(f"sdpa_flop_count: query heads ({h_q}) must be a multiple of key/value heads ({h_kv})")
    return bmm_flop((b * h_q, s_q, d_q), (b * h_q, d_q, s_k)) + bmm_flop((b * h_q, s_q, s_k), (b * h_q, s_k, d_v))


@register_flop_formula(_packets("_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention",
                                "_scaled_dot_product_cudnn_attention"))
def sdpa_flop(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs) -> int:
    """Count flops for self-attention."""
    return sdpa_flop_count(query_shape, key_shape, value_shape)


def sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape) -> int:
    """The backward of attention: four batched products."""
    b, h_q, s_q, d_q = query_shape
    _b2, h_kv, s_k, _d2 = key_shape
    _b3, _h3, _s3, d_v = value_shape
    _b4, _h4, _s4, d_4 = grad_out_shape
    total = bmm_flop((b * h_q, s_q, d_v), (b * h_q, d_v, s_k))  # gradScores = grad_out @ v^T
    total += bmm_flop((b * h_q, s_k, s_q), (b * h_q, s_q, d_v))  # grad_v = scores^T @ grad_out
    total += bmm_flop((b * h_q, s_q, s_k), (b * h_q, s_k, d_q))  # grad_q = gradScores @ k
    total += bmm_flop((b * h_q, s_k, s_q), (b * h_q, s_q, d_q))  # grad_k = gradScores^T @ q
    return total


@register_flop_formula(_packets("_scaled_dot_product_efficient_attention_backward",
                                "_scaled_dot_product_flash_attention_backward",
                                "_scaled_dot_product_cudnn_attention_backward"))
def sdpa_backward_flop(grad_out_shape, query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs) -> int:
    """Count flops for self-attention backward."""
    return sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape)


suffixes = ["", "K", "M", "B", "T"]


def get_suffix_str(number: int) -> str:
    """The suffix a number shows with: 1.01B as 1001M."""
    return suffixes[max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))]


def convert_num_with_suffix(number: int, suffix: str) -> str:
    index = suffixes.index(suffix)
    return f"{number / 1000 ** index:.3f}" + suffixes[index]


def convert_to_percent_str(num: int, denom: int) -> str:
    return "0%" if denom == 0 else f"{num / denom:.2%}"


class FlopCounterMode:
    """A context manager that counts the FLOPs of the ops run inside it, per module (see the
    module's note): get_total_flops(), get_flop_counts(), get_table(); with display=True it
    prints the table on exit."""

    def __init__(self, mods=None, depth: int = 2, display: bool = True,
                 custom_mapping: Optional[Dict[Any, Any]] = None) -> None:
        self.flop_counts: Dict[str, Dict[Any, int]] = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode: Optional[_FlopCounterMode] = None
        if mods is not None:
            import warnings

            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)
        self.flop_registry = {
            **flop_registry,
            **{k: v if getattr(v, "_get_raw", False) else shape_wrapper(v) for k, v in (custom_mapping or {}).items()},
        }
        self.mod_tracker = ModuleTracker()

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> Dict[str, Dict[Any, int]]:
        """The counts by module name ("Global" for all), then by op packet."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth: Optional[int] = None) -> str:
        depth = self.depth if depth is None else depth
        depth = 999999 if depth is None else depth
        global_flops = self.get_total_flops()
        global_suffix = get_suffix_str(global_flops)
        is_global_subsumed = False

        def process_mod(mod_name: str, depth: int) -> list:
            nonlocal is_global_subsumed
            total = sum(self.flop_counts[mod_name].values())
            is_global_subsumed |= total >= global_flops
            pad = " " * depth
            rows = [[pad + mod_name, convert_num_with_suffix(total, global_suffix),
                     convert_to_percent_str(total, global_flops)]]
            for k, v in self.flop_counts[mod_name].items():
                rows.append([pad + " - " + str(k), convert_num_with_suffix(v, global_suffix),
                             convert_to_percent_str(v, global_flops)])
            return rows

        values: list = []
        for mod in sorted(self.flop_counts.keys()):
            if mod == "Global" or mod.count(".") + 1 > depth:
                continue
            values.extend(process_mod(mod, mod.count(".")))
        if "Global" in self.flop_counts and not is_global_subsumed:
            for row in values:
                row[0] = " " + row[0]
            values = process_mod("Global", 0) + values
        if not values:
            values = [["Global", "0", "0%"]]
        header = ["Module", "FLOP", "% Total"]
        widths = [max(len(str(r[c])) for r in values + [header]) for c in range(3)]
        lines = [f"{header[0]:<{widths[0]}}  {header[1]:>{widths[1]}}  {header[2]:>{widths[2]}}",
                 "  ".join("-" * w for w in widths)]
        lines += [f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}" for r in values]
        return "\n".join(lines)

    def __enter__(self):
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = _FlopCounterMode(self)
        self.mode.__enter__()
        return self

    def __exit__(self, *args):
        b = self.mode.__exit__(*args)
        self.mode = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return b

    def _count_flops(self, func_packet, out, args, kwargs):
        if func_packet in self.flop_registry:
            flop_count = self.flop_registry[func_packet](*args, **kwargs, out_val=out)
            for par in set(self.mod_tracker.parents):
                self.flop_counts[par][func_packet] += flop_count
        return out


class _FlopCounterMode(TorchDispatchMode):
    def __init__(self, counter: FlopCounterMode) -> None:
        super().__init__()
        self.counter = counter

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs if kwargs else {}
        out = func(*args, **kwargs)
        return self.counter._count_flops(func.overloadpacket, out, args, kwargs)
