"""torch.utils: the data pipeline, minitorch.utils.data. It is imported on first use (about 20 ms,
multiprocessing included), so `import minitorch` does not pay for it."""
import copyreg
import importlib
import importlib.util
import weakref

__all__ = ["benchmark", "checkpoint", "collect_env", "data", "deterministic", "dlpack", "hooks", "model_zoo", "tensorboard"]


def swap_tensors(t1, t2) -> None:
    """Swaps the contents of two Tensor objects: afterwards t1 has t2's class, attributes, data,
    grad and autograd history and t2 has t1's, while each keeps its identity (what nn.Module's
    conversions and load_state_dict do under __future__.set_swap_module_params_on_conversion).
    Tensors with weak references, or whose classes have different __slots__, cannot be swapped."""
    from .. import _C

    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    t1_slots = set(copyreg._slotnames(t1.__class__))
    t2_slots = set(copyreg._slotnames(t2.__class__))
    if t1_slots != t2_slots:
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")

    def swap_attr(name):
        tmp = getattr(t1, name)
        setattr(t1, name, getattr(t2, name))
        setattr(t2, name, tmp)

    swap_attr("__class__")
    swap_attr("__dict__")
    for slot in t1_slots:
        if hasattr(t1, slot) and hasattr(t2, slot):
            swap_attr(slot)
        elif hasattr(t1, slot):
            setattr(t2, slot, getattr(t1, slot))
            delattr(t1, slot)
        elif hasattr(t2, slot):
            setattr(t1, slot, getattr(t2, slot))
            delattr(t2, slot)
    _C.TensorBase._swap_tensor_impl(t1, t2)


def __getattr__(name: str):
    # the public submodules, and the private ones PyTorch's `import torch` has loaded already
    # (utils._pytree, utils._python_dispatch): reachable as attributes, imported on first use
    if name in __all__ or (name.startswith("_") and not name.startswith("__")
                           and importlib.util.find_spec("." + name, __name__) is not None):
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
