"""torch.hub: models and weights from a hub cache directory.

get_dir/set_dir name the cache ($TORCH_HOME/hub, ~/.cache/torch/hub by default, as PyTorch, so
both share downloaded files); download_url_to_file and load_state_dict_from_url fetch through
urllib (http(s) and file:// URLs alike), check a sha256 prefix and cache under checkpoints/;
load, list and help read a repository's hubconf.py, from a local directory (source="local") or
a GitHub repository downloaded as a zip archive into the cache (source="github", after the
trust check PyTorch asks for; the fork check of skip_validation needs GitHub's API and is not
made).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import uuid
import warnings
import zipfile
from types import ModuleType
from typing import Any, Callable, List, Optional
from urllib.parse import urlparse

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")  # the sha256 prefix in a file name such as resnet18-f37072fd.pth
_READ_SIZE = 8192
_hub_dir: Optional[str] = None


def _get_torch_home() -> str:
    cache = os.getenv("XDG_CACHE_HOME", "~/.cache")
    return os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(cache, "torch")))


def get_dir() -> str:
    """The hub cache: what set_dir gave, else $TORCH_HOME/hub."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    return _hub_dir if _hub_dir is not None else os.path.join(_get_torch_home(), "hub")


def set_dir(d: "str | os.PathLike") -> None:
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# ---- downloads -----------------------------------------------------------------------------

def download_url_to_file(url: str, dst: str, hash_prefix: Optional[str] = None, progress: bool = True) -> None:
    """Copies what url holds to dst, through a temporary file beside it; with hash_prefix, the
    file's sha256 must begin with it (RuntimeError otherwise, and dst is not written)."""
    dst = os.path.expanduser(dst)
    request = urllib.request.Request(url, headers={"User-Agent": "torch.hub"})
    partial = f"{dst}.{uuid.uuid4().hex}.partial"
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(request) as response, open(partial, "wb") as out:  # noqa: S310
            size = response.headers.get("Content-Length") if hasattr(response, "headers") else None
            done = 0
            while True:
                chunk = response.read(_READ_SIZE)
                if not chunk:
                    break
                out.write(chunk)
                digest.update(chunk)
                done += len(chunk)
                if progress and size:
                    sys.stderr.write(f"\r{100 * done // int(size):3d}% of {int(size)} bytes")
            if progress and size:
                sys.stderr.write("\n")
        if hash_prefix is not None:
            got = digest.hexdigest()
            if got[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{got}")')
        shutil.move(partial, dst)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def load_state_dict_from_url(url: str, model_dir: Optional[str] = None, map_location: Any = None,
                             progress: bool = True, check_hash: bool = False, file_name: Optional[str] = None,
                             weights_only: bool = False) -> Any:
    """minitorch.load of the file at url, downloaded once into model_dir (<hub dir>/checkpoints);
    check_hash compares the file's sha256 with the prefix its name carries ("name-<hex>.ext")."""
    from . import load as _load

    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    model_dir = model_dir if model_dir is not None else os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name or os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stderr.write(f'Downloading: "{url}" to {cached_file}\n')
        found = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, found.group(1) if found else None, progress=progress)
    return _load(cached_file, map_location=map_location, weights_only=weights_only)


# ---- repositories and their hubconf.py -----------------------------------------------------

def _import_hubconf(repo_dir: str) -> ModuleType:
    """repo_dir/hubconf.py as a module, with repo_dir first on sys.path while it loads, and its
    `dependencies` installed."""
    path = os.path.join(repo_dir, "hubconf.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"[Errno 2] No such file or directory: '{path}'")
    sys.path.insert(0, repo_dir)
    try:
        spec = importlib.util.spec_from_file_location("hubconf", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    missing = [p for p in getattr(module, "dependencies", None) or [] if importlib.util.find_spec(p) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _entry(module: ModuleType, model: str) -> Callable:
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    fn = getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def _archive_url(owner: str, name: str, ref: str) -> str:
    return f"https://github.com/{owner}/{name}/zipball/{ref}"


def _default_branch(owner: str, name: str) -> str:
    """'main' where the repository has it, else 'master' (PyTorch's order)."""
    try:
        with urllib.request.urlopen(f"https://github.com/{owner}/{name}/tree/main/"):  # noqa: S310
            return "main"
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return "master"
        raise


def _trusted(owner: str, name: str, trust_repo: Any, hub_dir: str) -> None:
    """PyTorch's trust check: a repository not in <hub dir>/trusted_list (nor owned by pytorch)
    is asked about (trust_repo False or "check") or warned of (None); True adds it."""
    listed = os.path.join(hub_dir, "trusted_list")
    known = set()
    if os.path.exists(listed):
        with open(listed) as f:
            known = {line.strip() for line in f}
    key = f"{owner}_{name}"
    if key in known or owner in ("pytorch", "facebookresearch", "facebookincubator", "fairinternal"):
        if trust_repo is not False:
            return
    if trust_repo is None:
        warnings.warn("You are about to download and run code from an untrusted repository. In a future release, "
                      "this won't be allowed. To add the repository to your trusted list, change the command to "
                      "{calling_fn}(..., trust_repo=False) and a command prompt will appear asking for an explicit "
                      "confirmation of trust, or load(..., trust_repo=True), which will assume that the prompt is to "
                      "be answered with 'yes'. You can also use load(..., trust_repo='check') which will only prompt "
                      "for confirmation if the repo is not already trusted. This will eventually be the default "
                      "behaviour", stacklevel=4)
        return
    if trust_repo is not True:
        answer = input(f"The repository {key} does not belong to the list of trusted repositories and as such "
                       "cannot be downloaded. Do you trust this repository and wish to add it to the trusted list "
                       "of repositories (y/N)?")
        if answer.lower() not in ("y", "yes"):
            raise Exception("Untrusted repository.")
    with open(listed, "a") as f:
        f.write(key + "\n")


def _github_repo(github: str, force_reload: bool, trust_repo: Any, verbose: bool) -> str:
    """The directory of owner/name[:ref] in the hub cache, downloaded and unzipped when missing."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner_name, _, ref = github.partition(":")
    if "/" not in owner_name:
        raise ValueError(f'Invalid input: repo_or_dir should be of the form "repo_owner/repo_name[:ref]", '
                         f"got {github}")
    owner, name = owner_name.split("/", 1)
    ref = ref or _default_branch(owner, name)
    repo_dir = os.path.join(hub_dir, "_".join([owner, name, ref.replace("/", "_")]))
    _trusted(owner, name, trust_repo, hub_dir)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    archive = os.path.join(hub_dir, ref.replace("/", "_") + ".zip")
    url = _archive_url(owner, name, ref)
    sys.stdout.write(f'Downloading: "{url}" to {archive}\n')
    download_url_to_file(url, archive, progress=False)
    with zipfile.ZipFile(archive) as z, tempfile.TemporaryDirectory(dir=hub_dir) as unpack:
        root = os.path.realpath(unpack)
        for member in z.namelist():  # nothing may land outside the folder it is unpacked into
            if not os.path.realpath(os.path.join(unpack, member)).startswith(root + os.sep):
                raise ValueError(f"Reference {member} in zip file is outside of the extraction directory")
        z.extractall(unpack)
        top = z.namelist()[0].split("/")[0]
        if os.path.exists(repo_dir):
            shutil.rmtree(repo_dir)
        shutil.move(os.path.join(unpack, top), repo_dir)
    os.remove(archive)
    return repo_dir


def _repo_dir(repo_or_dir: str, source: str, force_reload: bool, trust_repo: Any, verbose: bool) -> str:
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "local":
        return repo_or_dir
    return _github_repo(repo_or_dir, force_reload, trust_repo, verbose)


def load(repo_or_dir: str, model: str, *args: Any, source: str = "github", trust_repo: Any = "check",
         force_reload: bool = False, verbose: bool = True, skip_validation: bool = False, **kwargs: Any) -> Any:
    """The entry point `model` of the repository's hubconf.py, called with *args and **kwargs."""
    repo_dir = _repo_dir(repo_or_dir, source, force_reload, trust_repo, verbose)
    return _entry(_import_hubconf(repo_dir), model)(*args, **kwargs)


def list(github: str, force_reload: bool = False, skip_validation: bool = False, trust_repo: Any = "check",
         verbose: bool = True) -> List[str]:  # noqa: A001 (torch.hub's name)
    """The entry points (public callables) of the repository's hubconf.py."""
    module = _import_hubconf(_github_repo(github, force_reload, trust_repo, verbose))
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github: str, model: str, force_reload: bool = False, skip_validation: bool = False,
         trust_repo: Any = "check") -> Optional[str]:  # noqa: A001 (torch.hub's name)
    """The docstring of the entry point `model`."""
    module = _import_hubconf(_github_repo(github, force_reload, trust_repo, True))
    return _entry(module, model).__doc__

