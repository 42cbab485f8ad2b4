"""torch.jit.save / torch.jit.load: a zip archive in PyTorch's layout (<name>/data.pkl with its
tensors in <name>/data/N, <name>/constants.pkl with the graph's tensor constants in
<name>/constants/N, <name>/code/__torch__/<Class>.py, <name>/extra/<file>, <name>/version),
written with torch.save's pickler and record alignment (serialization/_torch_format.py).

data.pkl holds, for a traced module, the recorded graph and the module tree (its parameters and
buffers by name), so a load needs no Python class; for a scripted module, the module itself,
pickled as pickle does (its class by reference, its state by value). Archives written by PyTorch
hold TorchScript code that minitorch does not run: load refuses them with a RuntimeError."""
from __future__ import annotations

import copy
import io
import os
import sys
import zipfile
from typing import Any, Dict, Optional

from ..nn.modules.module import Module
from ..serialization import _torch_format
from ..serialization._common import check_map_location
from ._script import RecursiveScriptModule, ScriptFunction, ScriptModule

_FORMAT = b"minitorch.jit 1"  # the record minitorch/format: which archives load() can run


def _tree(m: Module, constants: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    """A module's own parameters, buffers and graphs (their tensor constants moved into
    constants[name], for constants.pkl) and its submodules' trees, by name."""
    d = m.__dict__
    graphs = {}
    for gname, g in d.get("_graphs", {}).items():
        constants[f"{prefix}{gname}"] = dict(g.constants)
        graphs[gname] = copy.copy(g)
        graphs[gname].constants = {}
    return {"name": d.get("_original_name", type(m).__name__), "training": m.training, "graphs": graphs,
            "parameters": dict(d["_parameters"]), "buffers": dict(d["_buffers"]),
            "modules": {k: _tree(sub, constants, f"{prefix}{k}.") for k, sub in d["_modules"].items()
                        if sub is not None}}


def _build(tree: Dict[str, Any], constants: Dict[str, Any], prefix: str = "") -> RecursiveScriptModule:
    """The module a tree describes: a RecursiveScriptModule replaying its graphs."""
    for gname, g in tree["graphs"].items():
        g.constants = dict(constants.get(f"{prefix}{gname}", {}))
    m = RecursiveScriptModule(graphs=tree["graphs"], name=tree["name"])
    for k, p in tree["parameters"].items():
        m.register_parameter(k, p)
    for k, b in tree["buffers"].items():
        m.register_buffer(k, b)
    for k, sub in tree["modules"].items():
        m.add_module(k, _build(sub, constants, f"{prefix}{k}."))
    m.__dict__["training"] = tree["training"]
    return m


def _payload(m: Any) -> tuple:
    """(data.pkl's object, the constants, the code text) of a module to save."""
    if isinstance(m, Module) and m.__dict__.get("_graphs"):
        constants: Dict[str, Any] = {}
        tree = _tree(m, constants)
        return {"kind": "traced", "tree": tree}, constants, m.__dict__["_graphs"]["forward"].code()
    if isinstance(m, ScriptModule):
        orig = m.__dict__.get("_original", m)
        return {"kind": "script", "module": orig}, {}, m.code if hasattr(type(m), "code") else ""
    raise AttributeError(f"'{type(m).__name__}' object has no attribute 'save'")


def save(m: Any, f: Any, _extra_files: Optional[Dict[str, Any]] = None) -> None:
    """torch.jit.save(m, f, _extra_files): m (a ScriptModule) into the file f (a path or a
    writable binary file); _extra_files maps names to str or bytes contents stored beside it."""
    if isinstance(m, ScriptFunction):
        raise RuntimeError("minitorch.jit.save saves modules (ScriptModule); a ScriptFunction is not saved")
    data, constants, code = _payload(m)
    pkl, storages = _torch_format.pickled(data, 2)
    cpkl, cstorages = _torch_format.pickled(constants, 2)
    name = "archive"
    if isinstance(f, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    name = "".join(c if c.isalnum() or c in "_-" else "_" for c in name) or "archive"
    cls = data["tree"]["name"] if data["kind"] == "traced" else type(data["module"]).__name__
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        w = _torch_format._write_record
        w(z, f"{name}/data.pkl", pkl)
        w(z, f"{name}/code/__torch__/{cls}.py", code.encode())
        w(z, f"{name}/constants.pkl", cpkl)
        for k, (_, _, _, t) in enumerate(storages):
            w(z, f"{name}/data/{k}", _torch_format.storage_bytes(t))
        for k, (_, _, _, t) in enumerate(cstorages):
            w(z, f"{name}/constants/{k}", _torch_format.storage_bytes(t))
        for extra, content in (_extra_files or {}).items():
            w(z, f"{name}/extra/{extra}", content.encode() if isinstance(content, str) else bytes(content))
        w(z, f"{name}/minitorch/format", _FORMAT)
        w(z, f"{name}/byteorder", sys.byteorder.encode())
        w(z, f"{name}/version", b"3\n")
    if hasattr(f, "write"):
        f.write(buf.getvalue())
        return
    with open(f, "wb") as out:
        out.write(buf.getvalue())


def _read_source(f: Any) -> io.BytesIO:
    if hasattr(f, "read"):
        return io.BytesIO(f.read())
    path = os.fspath(f)
    if not os.path.exists(path):
        raise ValueError(f"The provided filename {path} does not exist")
    if os.path.isdir(path):
        raise ValueError(f"The provided filename {path} is a directory")
    with open(path, "rb") as src:
        return io.BytesIO(src.read())


def load(f: Any, map_location: Any = None, _extra_files: Optional[Dict[str, Any]] = None,
         _restore_shapes: bool = False) -> Any:
    """torch.jit.load: the module torch.jit.save (minitorch's) wrote to f, its tensors on the
    device map_location names (as torch.load's); _extra_files' keys get the stored contents (bytes)."""
    check_map_location(map_location)
    src = _read_source(f)
    try:
        z = zipfile.ZipFile(src)
        names = z.namelist()
    except zipfile.BadZipFile:
        raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central directory") from None
    prefix = names[0].split("/")[0] + "/" if names and "/" in names[0] else ""
    if prefix + "constants.pkl" not in names:
        raise RuntimeError("PytorchStreamReader failed locating file constants.pkl: file not found")
    if prefix + "minitorch/format" not in names or z.read(prefix + "minitorch/format") != _FORMAT:
        raise RuntimeError("minitorch.jit.load: this TorchScript archive was not written by minitorch.jit.save; "
                           "minitorch does not run TorchScript code (save a state_dict with torch.save instead)")
    for extra in list(_extra_files or {}):
        if prefix + f"extra/{extra}" in names:
            _extra_files[extra] = z.read(prefix + f"extra/{extra}")
    src.seek(0)
    data = _torch_format.load(src, map_location, False)
    src.seek(0)
    constants = _torch_format.load(src, map_location, False, record="constants.pkl", folder="constants")
    if not isinstance(data, dict) or data.get("kind") not in ("traced", "script"):
        raise RuntimeError("minitorch.jit.load: corrupt archive: data.pkl is not a saved module")
    if data["kind"] == "script":
        return RecursiveScriptModule(data["module"], name=type(data["module"]).__name__)
    return _build(data["tree"], constants)

