"""torch.distributed.fsdp.wrap: auto-wrap policies, which choose the submodules that become FSDP
units of their own. A policy is called as policy(module=, recurse=, nonwrapped_numel=): with
recurse=True it says whether to look inside module, with recurse=False whether to wrap module,
whose parameters not yet in a unit number nonwrapped_numel. enable_wrap and wrap wrap by hand."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Set, Tuple, Type

from minitorch import nn

__all__ = ["ModuleWrapPolicy", "always_wrap_policy", "enable_wrap", "lambda_auto_wrap_policy",
           "size_based_auto_wrap_policy", "transformer_auto_wrap_policy", "wrap"]


def always_wrap_policy(module: nn.Module, recurse: bool, *args: Any, **kwargs: Any) -> bool:
    return True


def _module_wrap_policy(module: nn.Module, recurse: bool, nonwrapped_numel: int,
                        module_classes: Set[Type[nn.Module]]) -> bool:
    if recurse:
        return True
    return isinstance(module, tuple(module_classes))


def transformer_auto_wrap_policy(module: nn.Module, recurse: bool, nonwrapped_numel: int,
                                 transformer_layer_cls: Set[Type[nn.Module]]) -> bool:
    """Wraps every instance of transformer_layer_cls (e.g. {nn.TransformerEncoderLayer})."""
    return _module_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls)


def lambda_auto_wrap_policy(module: nn.Module, recurse: bool, nonwrapped_numel: int,
                            lambda_fn: Callable[[nn.Module], bool]) -> bool:
    if recurse:
        return True
    return lambda_fn(module)


def size_based_auto_wrap_policy(module: nn.Module, recurse: bool, nonwrapped_numel: int,
                                min_num_params: int = int(1e8), force_leaf_modules: Iterable = None,
                                exclude_wrap_modules: Iterable = None) -> bool:
    """Wraps a module once its parameters not yet wrapped number at least min_num_params; never
    looks inside force_leaf_modules (MultiheadAttention) nor wraps exclude_wrap_modules (ModuleList,
    ModuleDict)."""
    force_leaf = tuple(size_based_auto_wrap_policy.FORCE_LEAF_MODULES if force_leaf_modules is None
                       else force_leaf_modules)
    exclude = tuple(size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES if exclude_wrap_modules is None
                    else exclude_wrap_modules)
    if recurse:
        return not isinstance(module, force_leaf)
    return nonwrapped_numel >= min_num_params and not isinstance(module, exclude)


size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {nn.ModuleList, nn.ModuleDict}  # type: ignore[attr-defined]
size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {nn.MultiheadAttention}  # type: ignore[attr-defined]


class ModuleWrapPolicy:
    """Wraps every instance of the given module classes."""

    def __init__(self, module_classes: Iterable[Type[nn.Module]]) -> None:
        self._module_classes = set(module_classes)
        self._module_classes_str = str(self._module_classes)

    def __call__(self, module: nn.Module, recurse: bool, *args: Any, **kwargs: Any) -> bool:
        return _module_wrap_policy(module, recurse, nonwrapped_numel=-1, module_classes=self._module_classes)

    def __repr__(self) -> str:
        return super().__repr__() + f"({self._module_classes_str})"


def _recursive_wrap(module: nn.Module, policy: Callable, wrap: Callable[[nn.Module], nn.Module],
                    only_wrap_children: bool = False) -> Tuple[nn.Module, int]:
    """Wraps module's subtree bottom-up where policy says so: (the module, wrapped or not, and how
    many of its parameters went into units)."""
    from minitorch.distributed.fsdp.fully_sharded_data_parallel import FullyShardedDataParallel as FSDP

    if isinstance(module, FSDP):
        return module, 0
    nonwrapped = sum(p.numel() for p in module.parameters() if not getattr(p, "_fsdp_flattened", False))
    if not policy(module=module, recurse=True, nonwrapped_numel=nonwrapped):
        return module, 0
    wrapped = 0
    for name, child in list(module.named_children()):
        new, n = _recursive_wrap(child, policy, wrap)
        if new is not child:
            setattr(module, name, new)
        wrapped += n
    remainder = nonwrapped - wrapped
    if not only_wrap_children and policy(module=module, recurse=False, nonwrapped_numel=remainder):
        return wrap(module), nonwrapped
    return module, wrapped


def _as_policy(policy: Any) -> Callable:
    """A callable policy from what auto_wrap_policy accepts (a function, a partial, ModuleWrapPolicy,
    or a set of module classes)."""
    if isinstance(policy, (set, frozenset, list, tuple)):
        return ModuleWrapPolicy(policy)
    if not callable(policy):
        raise TypeError(f"auto_wrap_policy must be callable or a ModuleWrapPolicy, got {type(policy).__name__}")
    return policy



_wrap_context: dict = {}  # enable_wrap's wrapper class and arguments while it is active


class enable_wrap:
    """Context manager: inside it, wrap(module) wraps module with wrapper_cls and these arguments."""

    def __init__(self, *, wrapper_cls: Any, **wrapper_kwargs: Any) -> None:
        self.config = {"wrapper_cls": wrapper_cls, **wrapper_kwargs}

    def __enter__(self) -> None:
        if _wrap_context:
            raise NotImplementedError("You are already within an autowrap context and we currently do not "
                                      "supported nested autowrap.")
        _wrap_context.update(self.config)

    def __exit__(self, *exc: Any) -> None:
        _wrap_context.clear()


def wrap(module: nn.Module, **wrap_overrides: Any) -> nn.Module:
    """module wrapped by enable_wrap's wrapper class (its arguments, wrap_overrides over them);
    outside enable_wrap, module itself."""
    if not _wrap_context:
        return module
    kwargs = {k: v for k, v in _wrap_context.items() if k != "wrapper_cls"}
    return _wrap_context["wrapper_cls"](module, **{**kwargs, **wrap_overrides})
