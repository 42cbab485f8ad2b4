"""Operator schemas for minitorch.library: parsing PyTorch's schema language
("foo.overload(Tensor x, int[] dims, *, float alpha=1.0) -> Tensor") and inferring a schema from
a function's type hints, as torch.library.infer_schema does.

Errors are PyTorch's: a schema that does not parse raises RuntimeError with the place marked
(`~~~~ <--- HERE`); a function whose hints give no schema raises ValueError.
"""
from __future__ import annotations

import collections.abc
import inspect
import re
import typing
from dataclasses import dataclass, field
from typing import Any, List, Optional, Sequence, Tuple, Union

# The base types of the schema language minitorch takes (SymInt is int, as at run time).
_BASE_TYPES = ("Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Device",
               "Layout", "MemoryFormat", "Generator", "Dimname", "Any")
_TOKEN = re.compile(r"\s*(->|\.\.\.|[A-Za-z_][A-Za-z0-9_]*|-?[0-9][0-9.e+-]*|\"[^\"]*\"|'[^']*'|\S)")


@dataclass
class Argument:
    """One parameter (or result) of a schema."""

    name: str
    type: str  # the base type: "Tensor", "int", "SymInt", ...
    optional: bool = False  # "Type?"
    is_list: bool = False  # "Type[]" or "Type[N]"
    list_optional: bool = False  # "Type?[]": a list whose items may be None
    alias: str = ""  # "a!" of "Tensor(a!)"
    default: Any = inspect.Parameter.empty
    default_text: str = ""
    kwarg_only: bool = False

    @property
    def is_write(self) -> bool:
        return self.alias.endswith("!")

    @property
    def has_default(self) -> bool:
        return self.default is not inspect.Parameter.empty

    def type_str(self) -> str:
        s = self.type + (f"({self.alias})" if self.alias else "")
        if self.list_optional:
            s = self.type + "?"
        if self.is_list:
            s += "[]"
        return s + ("?" if self.optional else "")

    def __str__(self) -> str:
        s = self.type_str() + (f" {self.name}" if self.name else "")
        return s + (f"={self.default_text}" if self.has_default else "")


@dataclass
class FunctionSchema:
    """A parsed schema. str() gives it back as PyTorch prints it."""

    name: str  # "mylib::foo" (namespace included once qualified)
    overload_name: str
    arguments: List[Argument] = field(default_factory=list)
    returns: List[Argument] = field(default_factory=list)
    returns_tuple: bool = False  # "-> (Tensor, Tensor)" or "-> ()", not a lone "-> Tensor"

    def __str__(self) -> str:
        args, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                args.append("*")
                star = True
            args.append(str(a))
        rets = ", ".join(str(r) for r in self.returns)
        rets = f"({rets})" if self.returns_tuple else rets
        name = self.name + (f".{self.overload_name}" if self.overload_name else "")
        return f"{name}({', '.join(args)}) -> {rets}"


def _here(text: str, start: int, end: int, what: str) -> RuntimeError:
    """PyTorch's schema-parser error: the message, the schema, and a ~ mark under the culprit."""
    width = max(1, end - start)
    return RuntimeError(f"{what}:\n{text}\n{' ' * start}{'~' * width} <--- HERE\n")


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens: List[Tuple[str, int, int]] = []
        pos = 0
        while pos < len(text) and text[pos:].strip():
            m = _TOKEN.match(text, pos)
            self.tokens.append((m.group(1), m.start(1), m.end(1)))
            pos = m.end()
        self.k = 0

    def peek(self) -> str:
        return self.tokens[self.k][0] if self.k < len(self.tokens) else ""

    def take(self) -> Tuple[str, int, int]:
        tok = self.tokens[self.k] if self.k < len(self.tokens) else ("", len(self.text), len(self.text))
        self.k += 1
        return tok

    def expect(self, want: str, name: str) -> None:
        tok, s, e = self.take()
        if tok != want:
            found = {"": "eof", "->": "arrow"}.get(tok, tok if tok.isidentifier() else f"'{tok}'")
            found = found if found in ("eof", "arrow") or found.startswith("'") else "ident"
            raise _here(self.text, s, e, f"expected {name} but found '{found}' here")

    def type_(self) -> Argument:
        tok, s, e = self.take()
        if tok not in _BASE_TYPES:
            raise _here(self.text, s, e, "\nunknown type specifier. Common valid schema types include Tensor, "
                        "SymInt, int, float, bool, Scalar; for a full list, please see "
                        "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md#func ")
        arg = Argument(name="", type=tok)
        if self.peek() == "(":  # an alias annotation: Tensor(a), Tensor(a!)
            self.take()
            parts = []
            while self.peek() not in (")", ""):
                parts.append(self.take()[0])
            self.expect(")", ")")
            arg.alias = "".join(parts)
        if self.peek() == "?":
            self.take()
            arg.optional = True
        if self.peek() == "[":
            self.take()
            if self.peek() not in ("]", ""):
                self.take()  # a fixed length: int[2]
            self.expect("]", "]")
            arg.is_list = True
            arg.list_optional, arg.optional = arg.optional, False
            if self.peek() == "?":
                self.take()
                arg.optional = True
        return arg

    def default(self, arg: Argument) -> None:
        parts = []
        while self.peek() not in (",", ")", ""):
            parts.append(self.take()[0])
        arg.default_text = "".join(parts)
        arg.default = _default_value(arg.default_text)
        if isinstance(arg.default, float) and arg.default.is_integer():
            arg.default_text = f"{arg.default:.0f}."  # as PyTorch prints a parsed schema: 1.

    def argument(self, kwarg_only: bool) -> Argument:
        arg = self.type_()
        tok, s, e = self.take()
        if not tok.isidentifier():
            raise _here(self.text, s, e, f"expected ident but found '{tok or 'eof'}' here")
        arg.name, arg.kwarg_only = tok, kwarg_only
        if self.peek() == "=":
            self.take()
            self.default(arg)
        return arg

    def parse(self, allow_no_name: bool) -> FunctionSchema:
        name, overload = "", ""
        if self.peek() != "(" or not allow_no_name:
            tok, s, e = self.take()
            if not tok.isidentifier():
                raise _here(self.text, s, e, f"expected ident but found '{tok or 'eof'}' here")
            name = tok
            while self.peek() == ":":  # a namespace: mylib::foo
                self.take()
                self.expect(":", ":")
                name += "::" + self.take()[0]
            if self.peek() == ".":
                self.take()
                overload = self.take()[0]
        schema = FunctionSchema(name, overload)
        self.expect("(", "(")
        kwarg_only = False
        while self.peek() != ")":
            if self.peek() == "*":
                self.take()
                kwarg_only = True
            else:
                schema.arguments.append(self.argument(kwarg_only))
            if self.peek() != ",":
                break
            self.take()
        self.expect(")", ")")
        self.expect("->", "arrow")
        if self.peek() == "(":
            self.take()
            schema.returns_tuple = True
            while self.peek() not in (")", ""):
                schema.returns.append(self.result())
                if self.peek() == ",":
                    self.take()
            self.expect(")", ")")
        else:
            schema.returns.append(self.result())
        tok, s, e = self.take()
        if tok:
            raise _here(self.text, s, e, f"expected eof but found '{tok}' here")
        return schema

    def result(self) -> Argument:
        arg = self.type_()
        if self.peek().isidentifier():
            arg.name = self.take()[0]
        return arg


def _default_value(text: str) -> Any:
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text[:1] in "\"'":
        return text[1:-1]
    if text.startswith("["):
        return [_default_value(t.strip()) for t in text[1:-1].split(",") if t.strip()]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text  # contiguous_format, a dtype's name: given as written


def parse_schema(text: str, *, allow_no_name: bool = False) -> FunctionSchema:
    """A schema from its text; allow_no_name takes "(Tensor x) -> Tensor" (torch.library.define's
    and custom_op's form), whose name the caller sets."""
    return _Parser(text).parse(allow_no_name)


# ---- infer_schema: a schema from type hints ----

def _hint_types() -> dict:
    """Annotation -> schema type, as PyTorch's infer_schema maps them (int is SymInt)."""
    from .. import Tensor, device, dtype

    pairs = [(Tensor, "Tensor"), (int, "SymInt"), (float, "float"), (bool, "bool"), (str, "str"),
             (dtype, "ScalarType"), (device, "Device"), (Union[int, float, bool], "Scalar")]
    table = {}
    for hint, name in pairs:
        table[hint] = name
        table[Optional[hint]] = name + "?"
        if hint in (Tensor, int, float, bool):
            for seq in (Sequence, List, list, collections.abc.Sequence):
                try:
                    table[seq[hint]] = name + "[]"
                    table[Optional[seq[hint]]] = name + "[]?"
                except TypeError:
                    pass
    for seq in (Sequence, List, list, collections.abc.Sequence):
        table[seq[Optional[Tensor]]] = "Tensor?[]"
    return table


def _return_type(ann: Any, table: dict, error) -> str:
    if ann is None or ann is type(None):
        return "()"
    origin = typing.get_origin(ann)
    if origin is tuple:
        parts = [table.get(a) for a in typing.get_args(ann)]
        if None in parts or any(p.endswith("?") for p in parts):
            error(f"Return has unsupported type {ann}.")
        return f"({', '.join(parts)})"
    if ann not in table or table[ann].endswith("?"):
        error(f"Return has unsupported type {ann}. The valid types are: {list(table)}.")
    return table[ann]


def _default_text(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value) if isinstance(value, (bool, int, float)) or value is None else str(value)


def infer_schema(prototype_function, /, *, mutates_args, op_name: Optional[str] = None) -> str:
    """The schema of a function from its type hints, e.g. "(Tensor x, SymInt n) -> Tensor":
    mutates_args names the Tensor arguments the function changes in place ("unknown": all)."""
    sig = inspect.signature(prototype_function)

    def error(what: str):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    try:
        hints = typing.get_type_hints(prototype_function)
    except Exception:  # noqa: BLE001 - an unresolvable hint reads as none
        hints = {}
    table = _hint_types()
    params, star, mutated = [], False, 0
    if mutates_args != "unknown":
        missing = set(mutates_args) - set(sig.parameters)
        if missing:
            error(f"{sorted(missing)} in mutates_args were not found in the custom op's signature. "
                  "mutates_args should contain the names of all args that the custom op mutates, or "
                  "just the string 'unknown' if you don't know.")
    for name, p in sig.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            error("Parameters of type *args and **kwargs are not supported.")
        if p.kind == p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if name not in hints:
            error(f"Parameter {name} must have a type annotation.")
        ann = hints[name]
        if ann not in table:
            error(f"Parameter {name} has unsupported type {ann}. The valid types are: {list(table)}.")
        ty = table[ann]
        if mutates_args == "unknown" or name in mutates_args:
            if not ty.startswith("Tensor"):
                error(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors "
                      "can be mutated")
            ty = ty.replace("Tensor", f"Tensor(a{mutated}!)", 1)
            mutated += 1
        text = f"{ty} {name}"
        if p.default is not p.empty:
            text += "=" + _default_text(p.default)
        params.append(text)
    if "return" not in hints:
        error("No return type annotation was provided. Please add one.")
    ret = _return_type(hints["return"], table, error)
    return f"{op_name or ''}({', '.join(params)}) -> {ret}"
