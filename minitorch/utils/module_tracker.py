"""torch.utils.module_tracker: which nn.Modules are running, forward and backward.

`parents` holds "Global" and the names of the modules whose forward runs now (a module is named
by its class, its children `Parent.child`, as PyTorch's ModuleTracker names them); in backward,
a module's name is back in from when its outputs' first gradient arrives until its inputs'
first one is computed (gradient hooks: minitorch's register_multi_grad_hook in mode "all" runs
its function only once the backward is done, PyTorch's once the tensors' gradients are), and
the backward's end leaves "Global" alone, as PyTorch's. FlopCounterMode reads it.
"""
from __future__ import annotations

import weakref
from typing import Any, List, Set

import minitorch
from minitorch.autograd.graph import _tasks, register_multi_grad_hook
from minitorch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from minitorch.utils._pytree import tree_flatten

__all__ = ["ModuleTracker"]


class ModuleTracker:
    """A context manager that tracks the nn.Module hierarchy while it runs (see the module)."""

    parents: Set[str]

    def __init__(self) -> None:
        self.parents = {"Global"}
        self._known_modules: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._seen_modules: weakref.WeakSet = weakref.WeakSet()
        self._hooks: List[Any] = []
        self._has_callback = False

    def _maybe_set_engine_callback(self) -> None:
        """At the end of the running backward, parents is {"Global"} again."""
        if self._has_callback or not _tasks.stack:
            return

        def callback() -> None:
            self.parents = {"Global"}
            self._has_callback = False

        _tasks.stack[-1].append(callback)
        self._has_callback = True

    def _get_mod_name(self, mod) -> str:
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        mod_name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for name, submod in mod.named_children():
                self._known_modules[submod] = f"{mod_name}.{name}"
                self._get_mod_name(submod)
            self._seen_modules.add(mod)
        return mod_name

    def _get_append_fn(self, name: str, is_bw: bool):
        def fn(*args) -> None:
            if is_bw:
                self._maybe_set_engine_callback()
            self.parents.add(name)

        return fn

    def _get_pop_fn(self, name: str, is_bw: bool):
        def fn(*args) -> None:
            self.parents.discard(name)

        return fn

    @staticmethod
    def _grad_tensors(values) -> list:
        leaves, _ = tree_flatten(values)
        return [a for a in leaves if isinstance(a, minitorch.Tensor) and a.requires_grad]

    def _fw_pre_hook(self, mod, input) -> None:
        name = self._get_mod_name(mod)
        self._get_append_fn(name, False)()
        tensors = self._grad_tensors(input)
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._get_pop_fn(name, True), mode="any"))

    def _fw_post_hook(self, mod, input, output) -> None:
        name = self._get_mod_name(mod)
        self._get_pop_fn(name, False)()
        tensors = self._grad_tensors(output)
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._get_append_fn(name, True), mode="any"))

    def __enter__(self):
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        return self

    def __exit__(self, *args) -> None:
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for h in self._hooks:
            h.remove()
        self._hooks.clear()
