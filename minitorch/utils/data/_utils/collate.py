"""default_collate and default_convert: how DataLoader turns a list of samples into a batch
(tensors, NumPy arrays and numbers stacked along a new first dimension; mappings, sequences and
namedtuples collated field by field) or converts one sample (NumPy to tensors, no batch dimension).
The dispatch on the sample's type is PyTorch's: a table from type to function, `collate_fn_map`,
that users may extend by calling `collate(batch, collate_fn_map=...)` themselves."""
from __future__ import annotations

import collections.abc
import copy
import re
from typing import Any, Callable, Dict, Optional, Tuple, Type, Union

import numpy as np

import minitorch

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _as_tensor(data: Any) -> minitorch.Tensor:
    """torch.as_tensor for what collation meets: an ndarray shares its memory; NumPy scalars and
    lists of them keep their NumPy dtype."""
    if isinstance(data, minitorch.Tensor):
        return data
    return minitorch.from_numpy(np.asarray(data))


def _rebuild_mapping(data: collections.abc.Mapping, fn: Callable[[Any], Any]) -> Any:
    """data's type, with each value v replaced by fn(key): a copy for mutable mappings (keeps
    extra attributes), else elem_type(dict); a plain dict where the type cannot be built that way."""
    try:
        if isinstance(data, collections.abc.MutableMapping):
            clone = copy.copy(data)
            clone.update({key: fn(key) for key in data})
            return clone
        return type(data)({key: fn(key) for key in data})
    except TypeError:
        return {key: fn(key) for key in data}


def _rebuild_sequence(data: collections.abc.Sequence, items: list) -> Any:
    """data's type holding items: a copy for mutable sequences, else elem_type(list); a list
    where the type cannot be built from one."""
    try:
        if isinstance(data, collections.abc.MutableSequence):
            clone = copy.copy(data)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(data)(items)
    except TypeError:
        return items


def default_convert(data: Any) -> Any:
    """One sample, without batching (DataLoader(batch_size=None)): NumPy arrays and scalars
    become tensors, inside mappings, namedtuples and sequences too; everything else is kept."""
    elem_type = type(data)
    if isinstance(data, minitorch.Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data  # arrays of strings or objects stay arrays
        return _as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, lambda key: default_convert(data[key]))
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch, *, collate_fn_map: Optional[Dict[Union[Type, Tuple[Type, ...]], Callable]] = None):
    """Collates a list of samples of one structure: the function collate_fn_map has for the type
    of batch[0] (or a base class of it) collates leaves; mappings, namedtuples and sequences are
    collated field by field, keeping their types."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, lambda key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map))
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return transposed  # tuples become lists, as in PyTorch
        return _rebuild_sequence(elem, transposed)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Stacks along a new first dimension. In a worker process the batch travels to the main
    process through shared memory (see _utils/shared.py), not through a pipe."""
    return minitorch.stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([_as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return _as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return minitorch.tensor(list(batch), dtype=minitorch.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return minitorch.tensor(list(batch))  # int64, or bool for bools


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map: Dict[Union[Type, Tuple[Type, ...]], Callable] = {
    minitorch.Tensor: collate_tensor_fn,
    (np.ndarray, np.memmap): collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """DataLoader's collate_fn when batching: a list of samples -> one batch of the same
    structure, tensors/arrays/numbers stacked into tensors with a new first dimension
    (floats -> float64, ints -> int64, bools -> bool), strings kept as lists."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
