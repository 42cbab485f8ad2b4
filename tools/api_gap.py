"""The public API PyTorch users reach that minitorch still lacks: run from the repository root as
`PYTHONPATH=. python3 tools/api_gap.py [--names-only] [--quiet]`.

A tool, not part of minitorch: it imports torch only to compare. For each namespace below it lists
  missing   the public names (no leading underscore) of PyTorch's namespace that minitorch's lacks
            (getattr fails). Names that are not this namespace's API but imported into it (another
            library's: `torch.nn.functional.np`, `torch.os`, typing's `Callable`; torch's own
            top-level names: `torch.fft.Tensor`; modules that are not its submodules; the docstring
            templates `common_args`, `tf32_notes`) are counted apart as `imports` and not listed;
  signature the names both have whose parameters differ:
            - both Python: inspect.signature's parameter names, kinds and defaults;
            - either a C builtin: every keyword PyTorch's docstring documents (its `name(...)`
              lines, overloads included), that PyTorch itself accepts, is passed alone with a
              sentinel value to minitorch's function (or method of a tensor); a refusal naming the
              keyword as unexpected, or an overload list that lacks it, is a difference.
The last line gives the totals. Exit status 0 always: the output is the report."""
import argparse
import importlib
import inspect
import re
import sys
import types

import minitorch
import torch

# (label, path under torch): modules, torch.Tensor, and the flag modules of torch.backends
NAMESPACES = ["", "Tensor", "nn", "nn.functional", "nn.init", "nn.utils", "nn.utils.rnn", "nn.utils.parametrize",
              "nn.utils.prune", "linalg", "fft", "special", "autograd", "autograd.functional", "optim",
              "optim.lr_scheduler", "optim.swa_utils", "utils.data", "distributions", "random", "testing", "amp",
              "utils.checkpoint", "func"]
NAMESPACES += ["backends." + n for n in sorted(dir(torch.backends))
               if isinstance(getattr(torch.backends, n), types.ModuleType) and not n.startswith("_")]
TYPING_MODULES = ("typing", "typing_extensions", "collections", "collections.abc", "abc", "builtins",
                  "dataclasses", "enum", "functools", "numpy", "contextlib", "warnings", "math", "os")


class _Probe:
    """The value a keyword is probed with: no function accepts it as a real argument."""

    def __repr__(self):
        return "<probe>"


PROBE = _Probe()


def resolve(lib, path):
    """lib's namespace at path ('' is lib itself; 'Tensor' its tensor class), or None."""
    obj = lib
    for k, part in enumerate(filter(None, path.split("."))):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                return importlib.import_module(lib.__name__ + "." + path)
            except ImportError:
                return None
    return obj


def is_import(ns, name, value):
    """Whether ns.name is another library's object imported into PyTorch's namespace, not API."""
    if name == "TYPE_CHECKING":
        return True
    if isinstance(value, types.ModuleType):
        return value.__name__ != getattr(ns, "__name__", "") + "." + name
    if ns is not torch and isinstance(ns, types.ModuleType) and getattr(torch, name, None) is value is not None:
        return True  # torch.fft.Tensor, torch.random.Generator: torch's own name imported
    if isinstance(value, (str, dict)) and re.search(r"(notes|args|common)$", name):
        return True  # the docstring templates (torch.fft.common_args, F.tf32_notes)
    mod = getattr(value, "__module__", None)
    if isinstance(mod, str) and (mod in TYPING_MODULES or mod.split(".")[0] in ("typing", "numpy", "collections")):
        return True
    return False


def missing(theirs, ours):
    """(listed missing names, count of imported names skipped)."""
    names, imports = [], 0
    for n in sorted(dir(theirs)):
        if n.startswith("_") or (ours is not None and hasattr(ours, n)):
            continue
        try:
            value = getattr(theirs, n)
        except Exception:  # noqa: BLE001 - a lazy attribute that fails to load is still a name
            value = None
        if is_import(theirs, n, value):
            imports += 1
        else:
            names.append(n)
    return names, imports


def py_signature(fn):
    """inspect.signature of a Python callable, None for a builtin or one that has none."""
    if isinstance(fn, (types.BuiltinFunctionType, types.BuiltinMethodType)) or type(fn).__name__ in (
            "method_descriptor", "getset_descriptor", "wrapper_descriptor", "member_descriptor"):
        return None
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def doc_keywords(fn, name):
    """The parameter names of PyTorch's docstring lines `name(...)`, overloads included."""
    doc = getattr(fn, "__doc__", None) or ""
    found = []
    for params in re.findall(r"^\s*(?:\.\. (?:function|method):: )?(?:torch\.)?%s\((.*?)\)\s*(?:->|$)"
                             % re.escape(name), doc, re.M):
        depth, part, parts = 0, "", []
        for ch in params:
            depth += ch in "([{"
            depth -= ch in ")]}"
            if ch == "," and depth == 0:
                parts.append(part)
                part = ""
            else:
                part += ch
        parts.append(part)
        for p in parts:
            p = p.split("=")[0].strip()
            if re.fullmatch(r"[A-Za-z_]\w*", p) and p not in found:
                found.append(p)
    return found


def _outcome(fn, kw, lead=()):
    """The message of the exception fn(*lead, kw=PROBE) raises with the keyword's name blanked, or
    None."""
    try:
        fn(*lead, **{kw: PROBE})
    except Exception as e:  # noqa: BLE001 - the message is the answer
        return type(e).__name__ + ": " + re.sub(r"\b%s\b" % re.escape(kw), "KW", str(e))
    return None


def accepts(fn, kw, lib):
    """Whether fn takes the keyword kw: called with kw set to PROBE, alone and then after one and
    two tensors of lib (for a parser that checks the required arguments before the keywords). A
    refusal that names it unexpected, or an overload list without it, is False; the same refusal
    as for a made-up keyword every time is None (the calls could not tell)."""
    for lead in ((), (lib.ones(2),), (lib.ones(2), lib.ones(2))):
        got = _outcome(fn, kw, lead)
        if got is None:
            return True
        if "invalid combination of arguments" in got:
            listing = got.split("expected one of", 1)[-1]
            return re.search(r"[ (*]KW( =|,|\))", listing) is not None
        if "unexpected keyword argument" in got or "takes no keyword arguments" in got:
            return False
        if got != _outcome(fn, "gap_made_up_keyword", lead):
            return True
    return None


def schema_keywords(name, method):
    """The argument names of PyTorch's aten::name schemas (self read as input for a function)."""
    try:
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + name)
    except Exception:  # noqa: BLE001 - not an aten operator
        return set()
    names = {a.name for s in schemas for a in s.arguments}
    if "self" in names and not method:
        names.add("input")
    return names


def _default(p):
    d = p.default
    if d is inspect.Parameter.empty:
        return "<required>"
    if callable(d) and hasattr(d, "__qualname__"):  # F.relu is each library's own function
        return "<%s %s>" % (type(d).__name__, d.__qualname__)
    return re.sub(r" at 0x[0-9a-f]+", "", re.sub(r"\bminitorch\b", "torch", repr(d)))


def _varargs(sig):
    return any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values())


def compare_signatures(label, name, theirs, ours, instance):
    """A one-line description of how ours's parameters differ from theirs's, or None."""
    if callable(theirs) is False or callable(ours) is False:
        return None
    if inspect.isclass(theirs) != inspect.isclass(ours):
        return None
    t_sig, o_sig = py_signature(theirs), py_signature(ours)
    if t_sig is not None and _varargs(t_sig) and not t_sig.parameters.keys() - {"args", "kwargs", "self"}:
        return None  # PyTorch's (*args, **kwargs): nothing documented to compare
    if t_sig is not None and o_sig is not None and not _varargs(o_sig):
        if instance:  # a method's first parameter is bound: PyTorch's self is minitorch's input
            t_sig = t_sig.replace(parameters=list(t_sig.parameters.values())[1:])
            o_sig = o_sig.replace(parameters=list(o_sig.parameters.values())[1:])
        t_p = [(p.name, p.kind, _default(p)) for p in t_sig.parameters.values()]
        o_p = [(p.name, p.kind, _default(p)) for p in o_sig.parameters.values()]
        if t_p == o_p:
            return None
        t_names = [p[0] for p in t_p]
        o_names = [p[0] for p in o_p]
        lost = [n for n in t_names if n not in o_names and t_sig.parameters[n].kind not in (
            inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
        if not _varargs(t_sig):
            extra = [n for n in o_names if n not in t_names and o_sig.parameters[n].default is inspect.Parameter.empty]
        else:
            extra = []
        defaults = [n for n, _, d in t_p if n in o_sig.parameters and _default(o_sig.parameters[n]) != d
                    and t_sig.parameters[n].kind == o_sig.parameters[n].kind]
        kinds = [n for n, k, _ in t_p if n in o_sig.parameters and o_sig.parameters[n].kind != k
                 and k not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
        order = [n for n in t_names if n in o_names]
        moved = order != [n for n in o_names if n in t_names]
        bits = []
        if lost:
            bits.append("lacks " + ", ".join(lost))
        if extra:
            bits.append("requires extra " + ", ".join(extra))
        if defaults:
            bits.append("defaults differ: " + ", ".join(
                "%s=%s (PyTorch %s)" % (n, _default(o_sig.parameters[n]), _default(t_sig.parameters[n]))
                for n in defaults))
        if kinds:
            bits.append("kind differs: " + ", ".join(
                "%s %s (PyTorch %s)" % (n, o_sig.parameters[n].kind.name, t_sig.parameters[n].kind.name)
                for n in kinds))
        if moved:
            bits.append("order differs")
        return "; ".join(bits) or None
    if inspect.isclass(theirs):
        return None
    # a C builtin on either side: probe minitorch with PyTorch's keywords
    if t_sig is not None:
        kws = [p.name for p in t_sig.parameters.values()
               if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"]
    else:
        kws = doc_keywords(theirs, name)
    if not kws:
        return None
    t_call = getattr(instance[0], name) if instance else theirs
    o_call = getattr(instance[1], name) if instance else ours
    aten = schema_keywords(name, bool(instance))
    # PyTorch takes kw where a call says so, or where the calls cannot tell and its schema names it
    kws = [k for k in kws if not (instance and k == "self")
           and (lambda said: said or (said is None and k in aten))(accepts(t_call, k, torch))]
    named = set(o_sig.parameters) if o_sig is not None else set()
    if o_sig is not None and not _varargs(o_sig):
        lost = [k for k in kws if k not in named]
    else:  # a builtin, or **kwargs beside the named ones: an undecided keyword is listed
        lost = [k for k in kws if k not in named and not accepts(o_call, k, minitorch)]
    return ("lacks keyword " + ", ".join(lost)) if lost else None


def audit(label, names_only):
    theirs = resolve(torch, label)
    ours = resolve(minitorch, label)
    if theirs is None or (isinstance(theirs, types.ModuleType) and theirs.__name__ != "torch." + label.strip(".")
                          and label):
        return [], 0, [], "(not a module of this PyTorch)"
    gone, imports = missing(theirs, ours)
    diffs = []
    if ours is not None and not names_only:
        instance = (torch.ones(2), minitorch.ones(2)) if label == "Tensor" else None
        for n in sorted(dir(theirs)):
            if n.startswith("_") or not hasattr(ours, n):
                continue
            try:
                t, o = getattr(theirs, n), getattr(ours, n)
            except Exception:  # noqa: BLE001
                continue
            if isinstance(t, types.ModuleType) or isinstance(o, types.ModuleType):
                continue
            if label == "Tensor" and isinstance(inspect.getattr_static(torch.Tensor, n, None), property):
                continue
            try:
                d = compare_signatures(label, n, t, o, instance)
            except Exception as e:  # noqa: BLE001 - the tool reports, it does not stop
                d = "could not compare (%s)" % type(e).__name__
            if d:
                diffs.append((n, d))
    return gone, imports, diffs, "" if ours is not None else "(whole namespace missing)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--names-only", action="store_true", help="skip the signature comparison")
    ap.add_argument("--quiet", action="store_true", help="counts only")
    args = ap.parse_args()
    total_missing = total_sig = total_imports = 0
    for label in NAMESPACES:
        gone, imports, diffs, note = audit(label, args.names_only)
        total_missing += len(gone)
        total_sig += len(diffs)
        total_imports += imports
        print("torch%s: %d missing, %d signatures differ, %d imports skipped %s" % (
            "." + label if label else "", len(gone), len(diffs), imports, note))
        if args.quiet:
            continue
        if gone:
            print("  missing: " + " ".join(gone))
        for n, d in diffs:
            print("  signature %s: %s" % (n, d))
    print("TOTAL: %d missing names, %d signature differences (%d imported names skipped), torch %s" % (
        total_missing, total_sig, total_imports, torch.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
