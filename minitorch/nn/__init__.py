"""minitorch.nn: Parameter, Module and the layers, as torch.nn.

Importing this needs minitorch.Tensor to exist already (Parameter subclasses it). The layers are
minitorch.nn.modules' (its __all__ is the one list of them); the transformer classes load there
on first use, which the import below makes once functional is whole.
"""
from minitorch.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from minitorch.nn import functional, grad, init
from minitorch.nn import modules
from minitorch.nn.modules import *  # noqa: F401,F403 (modules.__all__)
from minitorch.nn import utils

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "functional", "init", "utils",
           *modules.__all__]
from minitorch.nn import parallel  # noqa: E402  (DistributedDataParallel; MPI is imported only when used)
from minitorch.nn.parallel import DataParallel  # noqa: E402

__all__.append("DataParallel")
from minitorch.nn import common_types  # noqa: E402,F401


def factory_kwargs(kwargs):
    """The device, dtype and memory_format of a module's **kwargs as one dict for a factory call,
    as torch.nn.factory_kwargs: they may also come grouped in kwargs['factory_kwargs']; any other
    key, or one given both ways, is a TypeError."""
    if kwargs is None:
        return {}
    simple = ("device", "dtype", "memory_format")
    unexpected = set(kwargs) - set(simple) - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in simple:
        if key in kwargs:
            if key in out:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            out[key] = kwargs[key]
    return out



def __getattr__(name: str):
    """minitorch.nn.quantized, nn.qat and nn.intrinsic (minitorch.ao.nn's) are imported on first
    use, as they import the quantization package, which imports minitorch.nn."""
    if name in ("quantized", "qat", "intrinsic"):
        import importlib

        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
