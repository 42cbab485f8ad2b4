"""torch.func's module helpers: functional_call (a module run with given parameters and
buffers in place of its own), stack_module_state (an ensemble's parameters stacked for vmap),
replace_all_batch_norm_modules_ and functionalize."""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Dict, Iterator, Sequence, Tuple, Union

import minitorch
from .. import nn

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_", "functionalize"]

_MISSING = object()


def _untie_named_tensors_map(module: nn.Module, parameters_and_buffers: Dict[str, Any]) -> Dict[str, Any]:
    """parameters_and_buffers with each given value also set under the names its tensor is tied to
    in module (a shared parameter has several names)."""
    all_named = dict(module.named_parameters(remove_duplicate=False))
    all_named.update(module.named_buffers(remove_duplicate=False))
    names_of: Dict[int, set] = {}
    for name, tensor in all_named.items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied: Dict[str, set] = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given = set(parameters_and_buffers)
    given_tied = {name for name in given if name in tied}
    for name in given_tied:
        names = tied[name]
        if len(names & given_tied) > 1 and len({id(parameters_and_buffers[n]) for n in names & given_tied}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. Consider "
                             "using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given_tied:
        for other in tied[name]:
            untied[other] = parameters_and_buffers[name]
    return untied


def _swap_tensor(module: nn.Module, name: str, value: Any) -> Any:
    """Puts value at module's dotted name (a parameter, buffer or plain attribute; _MISSING
    removes it) and returns what was there (_MISSING for nothing)."""
    prefix, _, attr = name.rpartition(".")
    owner = module.get_submodule(prefix) if prefix else module
    if value is not _MISSING and value is not None and not isinstance(value, minitorch.Tensor):
        raise TypeError(f"{value} is not an instance of torch.Tensor")
    for table in ("_parameters", "_buffers"):
        members = owner.__dict__[table]
        if attr in members:
            orig = members[attr]
            if value is _MISSING:
                del members[attr]
            else:
                members[attr] = value
            return orig
    orig = getattr(owner, attr) if hasattr(owner, attr) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, minitorch.Tensor):
        raise TypeError(f"attribute `{attr}`: {orig} is not an instance of torch.Tensor")
    if value is _MISSING:
        if orig is not _MISSING:
            delattr(owner, attr)
    else:
        object.__setattr__(owner, attr, value)
    return orig


@contextlib.contextmanager
def _reparametrize_module(module: nn.Module, parameters_and_buffers: Dict[str, Any], tie_weights: bool = False,
                          strict: bool = False) -> Iterator[None]:
    untied = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(untied)), sorted(set(untied) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                              "\n\t".join(msgs)))
    originals: Dict[str, Any] = {}
    try:
        for name, value in untied.items():
            originals[name] = _swap_tensor(module, name, value)
        yield
    finally:
        current = {name: _swap_tensor(module, name, orig) for name, orig in reversed(list(originals.items()))}
        # a tensor the forward replaced (a buffer it reassigned) goes back to the caller's dict
        parameters_and_buffers.update({k: current[k] for k in parameters_and_buffers if k in current})


def functional_call(module: nn.Module, parameter_and_buffer_dicts: Union[Dict[str, Any], Sequence[Dict[str, Any]]],
                    args: Any = None, kwargs: Any = None, *, tie_weights: bool = True, strict: bool = False) -> Any:
    """Calls module(*args, **kwargs) with its parameters and buffers replaced by the given
    tensors (by dotted name) for that call only; the module is unchanged afterwards."""
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts: Dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def _functional_call(module: nn.Module, parameters_and_buffers: Dict[str, Any], args: Any = None, kwargs: Any = None,
                     *, tie_weights: bool = True, strict: bool = False) -> Any:
    if isinstance(module, nn.DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def _construct_stacked_leaf(tensors: Sequence[Any], name: str) -> Any:
    all_rg = all(t.requires_grad for t in tensors)
    if not all_rg and any(t.requires_grad for t in tensors):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = minitorch.stack(list(tensors))
    if all_rg:
        result = result.detach().requires_grad_()
    return result


def stack_module_state(models: Sequence[nn.Module]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """(parameters, buffers) of the models (of one class, in one mode) stacked along a new first
    dimension, by name: new leaves, unrelated to the models' own, ready for vmap and an optimizer."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _construct_stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _construct_stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root: nn.Module) -> nn.Module:
    """In place: every batch norm in root stops tracking running statistics (they are set to
    None), so it normalizes with the batch's own, which is what vmap over it needs."""
    for module in root.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """PyTorch's functionalize rewrites func's in-place ops as out-of-place ones for tracing and
    copies the final values back into mutated inputs; run eagerly, that is func's own behaviour,
    so minitorch returns a function that calls func."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}.")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return wrapped

