"""minitorch.save and minitorch.load, in PyTorch's checkpoint format, as torch.save and torch.load.

save writes PyTorch's zip format (`_torch_format`), so torch.load reads minitorch's state_dicts and
checkpoints, and load reads what torch.save writes: its zip format, its legacy format
(`_use_new_zipfile_serialization=False`, `_legacy`) and minitorch's own earlier format (`_native`),
told apart by their first bytes. PyTorch's formats are pickles; load reads them with PyTorch's
default rules, weights_only=True: an allow-list unpickler that builds tensors, containers, numbers
and strings and runs no code from the file (`_unpickler`); add_safe_globals allows more, and
weights_only=False unpickles anything, as PyTorch does, with a warning.

A malformed, truncated or hostile file raises RuntimeError, or pickle.UnpicklingError for a global
that weights_only refuses (as torch.load); reads are bounded by the file's size, and so are the
storages allocated for it, however large the sizes the file claims.
"""
from __future__ import annotations

import pickle
import warnings
from typing import Any, Callable, List, Optional, Tuple, Union

from . import _legacy, _native, _torch_format, _unpickler
from ._common import PathOrFile, Reader, _open, check_map_location

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint"]

_ZIP_MAGIC = b"PK\x03\x04"


def save(obj: object, f: PathOrFile, pickle_module: Any = pickle, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Saves obj to the path or binary file f as torch.save does: tensors, Parameters and anything
    pickle can store (state_dicts, optimizer state, numbers, strings, containers). Tensors that
    share memory are saved as views of one storage and load as such, in minitorch and PyTorch."""
    if pickle_module is not pickle:
        raise NotImplementedError("minitorch.save writes with Python's pickle module only")
    # Pickled before f is opened: an object that cannot be pickled leaves an existing file as it was.
    if _use_new_zipfile_serialization:
        pkl, storages = _torch_format.pickled(obj, pickle_protocol)
        with _open(f, "wb") as out:
            _torch_format.write(out, pkl, storages, not _disable_byteorder_record)
    else:
        pkl, storages = _torch_format.pickled(obj, pickle_protocol, _legacy.LegacyPickler)
        with _open(f, "wb") as out:
            _legacy.write(out, pkl, storages, pickle_protocol)


def load(f: PathOrFile, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: Optional[bool] = None, mmap: Optional[bool] = None, **pickle_load_args: Any) -> Any:
    """Loads what minitorch.save or torch.save wrote, each tensor on the device it was saved from,
    unless map_location (a device, its name, a dict from saved locations to devices, or a
    callable(storage, location)) says where. weights_only (True unless a pickle_module is given)
    loads only tensors, containers and plain values, as torch.load does; mmap is accepted and the
    file is read into memory. pickle_load_args takes pickle's encoding (of Python 2's strings)."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("minitorch.load reads with Python's pickle module only")
    check_map_location(map_location)
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.")
    encoding = pickle_load_args.pop("encoding", "utf-8")
    if pickle_load_args:
        raise TypeError(f"minitorch.load: unexpected pickle arguments {sorted(pickle_load_args)} (only encoding)")
    with _open(f, "rb") as src:
        r = Reader(src)
        head = r.read_upto(len(_native.MAGIC))
        if head == _native.MAGIC:
            return _native.load(r, head, map_location)
        if head[:4] == _ZIP_MAGIC or head[:1] == b"\x80":
            try:
                src.seek(-len(head), 1)
            except (AttributeError, OSError, ValueError):
                raise RuntimeError("minitorch.load: a PyTorch checkpoint must be read from a seekable file") from None
            if head[:4] == _ZIP_MAGIC:
                if _torch_format.is_torchscript(src):
                    return _load_torchscript(src, map_location, weights_only)
                return _torch_format.load(src, map_location, weights_only, encoding)
            return _legacy.load(src, map_location, weights_only, encoding)
        raise RuntimeError("minitorch.load: not a file of minitorch.save or torch.save (bad magic number)")


def _load_torchscript(src: Any, map_location: Any, weights_only: bool) -> Any:
    """What torch.load does with a TorchScript archive (torch.jit.save's): warns and hands it to
    torch.jit.load, which runs code, so not with weights_only."""
    warnings.warn("'torch.load' received a zip file that looks like a TorchScript archive dispatching to "
                  "'torch.jit.load' (call 'torch.jit.load' directly to silence this warning)", UserWarning,
                  stacklevel=3)
    if weights_only:
        raise RuntimeError("Cannot use ``weights_only=True`` with TorchScript archives passed to ``torch.load``. "
                           "Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it "
                           "can result in arbitrary code execution. Do it only if you got the file from a trusted "
                           "source.")
    from ..jit import _serialization
    return _serialization.load(src, map_location)


SafeGlobal = Union[Callable, Tuple[Callable, str]]


def add_safe_globals(safe_globals: List[SafeGlobal]) -> None:
    """Marks globals (classes, functions) as safe for weights_only loads, as torch.serialization's:
    each one, or a (global, "module.name") pair where the pickle names it otherwise."""
    for g in safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of length: {len(g)}")
            if type(g[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: {type(g[1])}")
        if g not in _unpickler._user_globals:
            _unpickler._user_globals.append(g)


def clear_safe_globals() -> None:
    """Forgets every global that add_safe_globals added."""
    _unpickler._user_globals.clear()


def get_safe_globals() -> List[SafeGlobal]:
    """The globals that add_safe_globals added."""
    return list(_unpickler._user_globals)


class safe_globals:
    """Context manager: the globals are safe for weights_only loads inside the with block."""

    def __init__(self, safe_globals: List[SafeGlobal]) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        self.added = [g for g in self.safe_globals if g not in _unpickler._user_globals]
        add_safe_globals(self.added)

    def __exit__(self, *exc: Any) -> None:
        for g in self.added:
            _unpickler._user_globals.remove(g)


def get_unsafe_globals_in_checkpoint(f: PathOrFile) -> List[str]:
    """The globals that a checkpoint of torch.save's zip format names and that weights_only would
    refuse, found by reading its pickle, not running it (as torch.serialization's: a global that
    the pickle builds on its stack, not names, is not found)."""
    with _open(f, "rb") as src:
        if src.read(len(_ZIP_MAGIC)) != _ZIP_MAGIC:
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        src.seek(-len(_ZIP_MAGIC), 1)
        return _unpickler.unsafe_globals(_torch_format.open_archive(src).read("data.pkl"))
