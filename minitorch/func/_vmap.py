"""torch.vmap for minitorch: func mapped over a dimension of its inputs.

PyTorch runs func once on "batched" tensors and each op applies its batching rule, falling back
to a loop over the batch for ops that have none. minitorch has no batched tensors: vmap always
takes that loop. It calls func once per batch element on the elements (views selected at each
input's in_dim; inputs with in_dim None passed whole) and stacks each output at its out_dim.
The arguments, their checks and messages, pytrees of inputs and outputs, out_dims None,
chunk_size, nesting and composition with grad/vjp/jacrev are PyTorch's; the results are the
same, computed batch element by batch element (one call of func each).

randomness: 'different' lets each call draw its own numbers; 'same' restores the default
generators' states (CPU, and CUDA once in use) before each call, so every element sees the
same numbers; 'error' raises when a call changed one of those states (after that call
returns, where PyTorch raises at the random op; a draw from a generator passed explicitly
is not seen). An output with out_dim None must not depend on the batch: PyTorch
knows whether it is batched; here it is taken from the first call and must be equal in every
call (a tensor that differs raises PyTorch's error).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, List, Optional, Tuple, Union

import minitorch
from ..utils._pytree import _broadcast_to_and_flatten, tree_flatten, tree_unflatten

__all__ = ["vmap"]

in_dims_t = Union[int, Tuple[Any, ...]]
out_dims_t = Union[int, Tuple[Any, ...], None]


def _get_name(func: Any) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def _check_randomness_arg(randomness: str) -> None:
    if randomness not in ["error", "different", "same"]:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


def _check_out_dims(out_dims: out_dims_t, func: Callable) -> None:
    if isinstance(out_dims, int):
        return
    for x in tree_flatten(out_dims)[0]:
        if not (x is None or isinstance(x, int)):
            raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or "
                             "a python collection of ints representing where in the outputs the vmapped dimension "
                             "should appear.")


def _process_batched_inputs(in_dims: in_dims_t, args: tuple, func: Callable):
    """(batch size, flat in_dims (non-negative), flat args, args' spec), checked as PyTorch does."""
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         "to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, args_spec = tree_flatten(args)
    flat_in_dims = _broadcast_to_and_flatten(in_dims, args_spec)
    if flat_in_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {args_spec}.")
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        if not isinstance(in_dim, int) and in_dim is not None:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input but "
                             "in_dim must be either an integer dimension or None.")
        if isinstance(in_dim, int) and not isinstance(arg, minitorch.Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input but "
                             f"the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        if in_dim is not None and (in_dim < -arg.dim() or in_dim >= arg.dim()):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for some input, "
                             f"but that input is a Tensor of dimensionality {arg.dim()} so expected in_dim to satisfy "
                             f"-{arg.dim()} <= in_dim < {arg.dim()}.")
        if in_dim is not None and in_dim < 0:
            flat_in_dims[i] = in_dim % arg.dim()
    sizes = [arg.size(d) for d, arg in zip(flat_in_dims, flat_args) if d is not None]
    if len(sizes) == 0:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0], flat_in_dims, flat_args, args_spec


def _flat_out_dims(first_output: Any, output_spec: Any, out_dims: out_dims_t, func: Callable) -> List[Any]:
    def incompatible() -> ValueError:
        return ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                          f"with the structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but "
                          f"outputs has structure {output_spec}.")

    if isinstance(first_output, minitorch.Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        raise incompatible()
    flat = _broadcast_to_and_flatten(out_dims, output_spec)
    if flat is None:
        raise incompatible()
    return flat


_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def _rng_states() -> List[Any]:
    """The default generators' states: the CPU's, and each CUDA device's once CUDA is in use."""
    states = [minitorch.get_rng_state()]
    if minitorch.cuda.is_initialized():
        states += minitorch.cuda.get_rng_state_all()
    return states


def _set_rng_states(states: List[Any]) -> None:
    minitorch.set_rng_state(states[0])
    if len(states) > 1:
        minitorch.cuda.set_rng_state_all(states[1:])


def _call_per_element(func, batch_size, flat_in_dims, flat_args, args_spec, randomness, kwargs) -> List[Any]:
    """func's output for each batch element, in order."""
    states = _rng_states() if randomness in ("same", "error") else None
    outputs = []
    for b in range(batch_size):
        if randomness == "same":
            _set_rng_states(states)
        elem = [arg if d is None else arg.select(d, b) for d, arg in zip(flat_in_dims, flat_args)]
        outputs.append(func(*tree_unflatten(elem, args_spec), **kwargs))
        if randomness == "error":
            _check_no_random(states)
    return outputs


def _check_no_random(states: List[Any]) -> None:
    """PyTorch's error for randomness='error' where a generator's state moved from states."""
    now = _rng_states()
    # compared as bytes (states are CPU tensors): ~1 us, where minitorch.equal takes ~60 us
    if len(now) != len(states) or any(a.numpy().tobytes() != b.numpy().tobytes()
                                      for a, b in zip(now, states)):
        raise RuntimeError(_RANDOM_ERROR)


def _call_empty_batch(func, flat_in_dims, flat_args, args_spec, kwargs) -> Any:
    """func's output for an element of a batch of size 0 (zeros of the element's shape, the
    generator's state left as it was), from which the outputs' shapes follow."""
    elem = [arg if d is None else arg.new_zeros(arg.shape[:d] + arg.shape[d + 1:])
            for d, arg in zip(flat_in_dims, flat_args)]
    states = _rng_states()
    try:
        return func(*tree_unflatten(elem, args_spec), **kwargs)
    finally:
        _set_rng_states(states)


def _stack_outputs(outputs: List[Any], batch_size: int, out_dims: out_dims_t, func: Callable) -> Any:
    name = _get_name(func)
    flats = [tree_flatten(o) for o in outputs]
    flat0, spec = flats[0]
    for flat, s in flats[1:]:
        if s != spec:
            raise RuntimeError(f"vmap({name}, ...): `{name}` returned outputs of different structures for different "
                               f"batch elements: {spec} and {s}; minitorch's vmap calls it once per element")
    flat_out_dims = _flat_out_dims(outputs[0], spec, out_dims, func)
    result = []
    for k, out_dim in enumerate(flat_out_dims):
        column = [flat[k] for flat, _ in flats]
        first = column[0]
        if out_dim is None:
            if isinstance(first, minitorch.Tensor) and any(
                    not (c is first or (c.shape == first.shape and minitorch.equal(c, first))) for c in column[1:]):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            result.append(first)
            continue
        if not isinstance(first, minitorch.Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(first)}. Did you "
                             "mean to set out_dims= to None for output?")
        if batch_size == 0:
            one = minitorch.stack([first], dim=out_dim)  # PyTorch's error for an out_dim out of range
            shape = list(one.shape)
            shape[out_dim if out_dim >= 0 else out_dim + one.dim()] = 0
            result.append(one.new_empty(shape))
        else:
            result.append(minitorch.stack(column, dim=out_dim))
    return tree_unflatten(result, spec)


def vmap(func: Callable, in_dims: in_dims_t = 0, out_dims: out_dims_t = 0, randomness: str = "error", *,
         chunk_size: Optional[int] = None) -> Callable:
    """Returns func vectorized over dimension in_dims of its inputs, its outputs stacked at
    out_dims. minitorch calls func once per batch element (PyTorch's fallback loop for ops
    without a batching rule) and stacks the results; see the module's notes on randomness."""
    _check_randomness_arg(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _check_out_dims(out_dims, func)
        batch_size, flat_in_dims, flat_args, args_spec = _process_batched_inputs(in_dims, args, func)
        if batch_size == 0:
            outputs = [_call_empty_batch(func, flat_in_dims, flat_args, args_spec, kwargs)]
        else:
            outputs = _call_per_element(func, batch_size, flat_in_dims, flat_args, args_spec, randomness, kwargs)
        return _stack_outputs(outputs, batch_size, out_dims, func)

    return functools.wraps(func)(wrapped)
