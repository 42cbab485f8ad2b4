"""Module-level names of torch.nn.functional that programs and libraries built on it use: the
grid_sample mode tables, DType, the BroadcastingList annotations, assert_int_or_pair and
boolean_dispatch (the helper that makes max_pool's return_indices pick one of two functions)."""
from __future__ import annotations

import weakref

# grid_sample's modes, numbered as the kernels take them
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

DType = int  # PyTorch's annotation alias: a dtype argument as TorchScript sees it


class BroadcastingListCls:
    """BroadcastingList2[int] and its kin: annotations for an argument that is one value or a
    list of them (TorchScript reads them; eagerly, subscripting gives None, as PyTorch's)."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = BroadcastingListCls()

# boolean_dispatch's functions -> what they dispatch between
boolean_dispatched: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def assert_int_or_pair(arg, arg_name: str, message: str) -> None:
    """arg is an int or a pair, else AssertionError(message.format(arg_name))."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function that calls if_true or if_false as its boolean argument (by name, or at position
    arg_index; `default` when absent) says; the one of the two that has a docstring lends it."""

    def fn(*args, **kwargs):
        flag = default
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        if_true.__doc__ = doc = if_false.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        if_false.__doc__ = doc = if_true.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is None:
        doc = None
    else:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = doc
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    boolean_dispatched[fn] = {"if_true": if_true, "if_false": if_false, "index": arg_index, "default": default,
                              "arg_name": arg_name}
    return fn
