"""torch.fx.graph_module: a GraphModule is an nn.Module whose forward is Python source generated
from a Graph and exec'd. It holds the submodules, parameters and buffers its graph names (copied
from the root it was made from), so it trains, saves and loads like any module.

Each GraphModule gets a class of its own (as in PyTorch), so that recompile() can set forward on
the class without touching other instances.
"""
from __future__ import annotations

import copy
import itertools
import linecache
from typing import Any, Dict, Union

import minitorch
from minitorch.nn import Module, Parameter

from .graph import Graph, PythonCode

__all__ = ["GraphModule"]

_source_keys = itertools.count()


def _forward_from_src(src: str, globals_: Dict[str, Any]) -> Any:
    """Compiles src under a unique file name that linecache knows, so tracebacks and inspect show
    the generated lines."""
    key = f"<eval_with_key>.{next(_source_keys)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    scope = dict(globals_)
    exec(compile(src, key, "exec"), scope)
    return scope["forward"]


def _copy_attr(from_module: Module, to_module: Module, target: str) -> None:
    """to_module.<target> = from_module.<target>, making empty Modules for missing parents; a plain
    tensor is registered as a buffer (so state_dict and .to() see it)."""
    *prefix, field = target.split(".")
    for item in prefix:
        src = getattr(from_module, item)
        dst = getattr(to_module, item, None)
        if src is dst:
            return
        if dst is None:
            dst = Module()
            setattr(to_module, item, dst)
        from_module, to_module = src, dst
    value = getattr(from_module, field)
    if isinstance(value, minitorch.Tensor) and not isinstance(value, Parameter):
        to_module.register_buffer(field, value, persistent=field not in from_module._non_persistent_buffers_set)
    else:
        setattr(to_module, field, value)


def _assign_attr(value: Any, to_module: Module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        nxt = getattr(to_module, item, None)
        if nxt is None:
            nxt = Module()
            setattr(to_module, item, nxt)
        to_module = nxt
    if isinstance(value, minitorch.Tensor) and not isinstance(value, Parameter):
        to_module.register_buffer(field, value)
    else:
        setattr(to_module, field, value)


def _deserialize_graph_module(state: Dict[str, Any], class_name: str) -> "GraphModule":
    gm = GraphModule.__new__(GraphModule)
    gm.__dict__.update(state)
    type(gm).__name__ = type(gm).__qualname__ = class_name
    gm.graph = state["_graph"]
    return gm


class GraphModule(Module):
    """An nn.Module made from a Graph: forward is the graph's generated code (see .code)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> "GraphModule":
        # one class per instance: the first class in the MRO that is not such a per-instance class
        base = next(c for c in cls.__mro__ if not c.__dict__.get("_per_instance", False))

        class GraphModuleImpl(base):  # type: ignore[misc, valid-type]
            _per_instance = True

        return super().__new__(GraphModuleImpl)

    def __init__(self, root: Union[Module, Dict[str, Any]], graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        type(self).__name__ = type(self).__qualname__ = class_name
        if isinstance(root, Module):
            self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but that target was not "
                                           "provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError(f"Unsupported type {root} passed for root!")
        self.meta: Dict[str, Any] = {}
        self.graph = graph

    # ---- the graph and its code ---------------------------------------------------------------------

    @property
    def graph(self) -> Graph:
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        if "_code" not in self.__dict__:
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self) -> PythonCode:
        """Regenerates forward from the graph (after editing it)."""
        python_code = self._graph.python_code(root_module="self")
        self.__dict__["_code"] = python_code.src
        type(self).forward = _forward_from_src(python_code.src, python_code.globals)
        return python_code

    def print_readable(self, print_output: bool = True, include_stride: bool = False, include_device: bool = False,
                       colored: bool = False) -> str:
        """The module as a class with the generated forward."""
        body = self._code.strip("\n").rstrip()
        text = f"class {type(self).__name__}(torch.nn.Module):\n" + "\n".join(
            ("    " + line) if line else line for line in body.splitlines()) + "\n"
        if print_output:
            print(text)
        return text

    def __str__(self) -> str:
        return "\n".join([super().__str__(), self._code,
                          "# To see more debug info, please use `graph_module.print_readable()`"])

    # ---- submodules ----------------------------------------------------------------------------------

    def add_submodule(self, target: str, m: Module) -> bool:
        """Installs m at dotted path target, making empty parents; False where a parent on the
        way is not a Module."""
        *prefix, field = target.split(".")
        mod: Module = self
        for item in prefix:
            nxt = getattr(mod, item, None)
            if nxt is None:
                nxt = Module()
                mod.add_module(item, nxt)
            if not isinstance(nxt, Module):
                return False
            mod = nxt
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Removes the submodule at target; False where there is none."""
        *prefix, field = target.split(".")
        mod: Module = self
        for item in prefix:
            mod = getattr(mod, item, None)
            if not isinstance(mod, Module):
                return False
        if not isinstance(getattr(mod, field, None), Module):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Removes the submodules that no node calls or reads (nor anything beneath them)."""
        used = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                atoms = node.target.split(".")
                used.update(".".join(atoms[:i]) for i in range(1, len(atoms) + 1))
                if node.op == "call_module":
                    sub = self.get_submodule(node.target)
                    used.update(f"{node.target}.{name}" for name, _ in sub.named_modules() if name)
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)

    # ---- copies ----------------------------------------------------------------------------------------

    def __deepcopy__(self, memo: Dict[int, Any]) -> "GraphModule":
        res = GraphModule.__new__(type(self))
        memo[id(self)] = res
        res.__dict__.update(copy.deepcopy(self.__dict__, memo))
        type(res).__name__ = type(res).__qualname__ = type(self).__name__
        res.graph = res.__dict__["_graph"]
        return res

    def __copy__(self) -> "GraphModule":
        res = GraphModule(self, self.graph, type(self).__name__)
        res.meta = getattr(self, "meta", {})
        return res

    def __reduce__(self) -> Any:
        state = dict(self.__dict__)
        state.pop("_code", None)
        return (_deserialize_graph_module, (state, type(self).__name__))
