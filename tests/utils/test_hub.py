"""minitorch.hub offline: file:// downloads with sha256 checks, the checkpoint cache, hubconf.py
from a local directory and from a GitHub-style zip archive (served from a file:// URL)."""
import hashlib
import os
import shutil
import zipfile

import numpy as np
import pytest

import minitorch
from minitorch import hub

HUBCONF = '''
"""A hub repository for the tests."""
dependencies = ["numpy"]

import minitorch


def tiny(width=3, bias=True):
    """A Linear(2, width)."""
    minitorch.manual_seed(0)
    return minitorch.nn.Linear(2, width, bias=bias)


def _private():
    return None
'''


@pytest.fixture
def hub_dir(tmp_path):
    saved = hub._hub_dir
    hub.set_dir(str(tmp_path / "hub"))
    yield tmp_path / "hub"
    hub._hub_dir = saved


def _repo(tmp_path, text=HUBCONF):
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    (repo / "hubconf.py").write_text(text)
    return repo


def test_get_set_dir_as_torch(monkeypatch, tmp_path):
    torch = pytest.importorskip("torch")
    saved = hub._hub_dir
    try:
        hub._hub_dir = None
        monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
        assert hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "home" / "hub")
        hub.set_dir("~/somewhere")
        assert hub.get_dir() == os.path.expanduser("~/somewhere")
    finally:
        hub._hub_dir = saved


def test_download_checks_hash(tmp_path):
    src = tmp_path / "blob.bin"
    src.write_bytes(b"minitorch" * 1000)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    dst = tmp_path / "copy.bin"
    hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix=digest[:8], progress=False)
    assert dst.read_bytes() == src.read_bytes()
    bad = tmp_path / "bad.bin"
    with pytest.raises(RuntimeError, match=f'invalid hash value \\(expected "0000", got "{digest}"\\)'):
        hub.download_url_to_file(src.as_uri(), str(bad), hash_prefix="0000", progress=False)
    assert not bad.exists() and not [p for p in os.listdir(tmp_path) if p.endswith(".partial")]


def test_load_state_dict_from_url_caches_and_checks(hub_dir, tmp_path):
    model = minitorch.nn.Linear(3, 2)
    raw = tmp_path / "weights.pth"
    minitorch.save(model.state_dict(), str(raw))
    digest = hashlib.sha256(raw.read_bytes()).hexdigest()
    named = tmp_path / f"linear-{digest[:10]}.pth"
    shutil.copy(raw, named)
    sd = hub.load_state_dict_from_url(named.as_uri(), check_hash=True, progress=False)
    np.testing.assert_array_equal(sd["weight"].numpy(), model.weight.detach().numpy())
    cached = hub_dir / "checkpoints" / named.name
    assert cached.exists()
    named.unlink()  # the cache answers now
    assert set(hub.load_state_dict_from_url(named.as_uri(), progress=False)) == {"weight", "bias"}
    wrong = tmp_path / "linear-00ff.pth"
    shutil.copy(raw, wrong)
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.load_state_dict_from_url(wrong.as_uri(), check_hash=True, progress=False)
    other = hub.load_state_dict_from_url(raw.as_uri(), model_dir=str(tmp_path / "m"), file_name="x.pt",
                                         progress=False)
    assert (tmp_path / "m" / "x.pt").exists() and set(other) == {"weight", "bias"}


def test_load_local_hubconf(tmp_path):
    repo = _repo(tmp_path)
    m = hub.load(str(repo), "tiny", 4, source="local", bias=False)
    assert isinstance(m, minitorch.nn.Linear) and m.out_features == 4 and m.bias is None
    assert str(repo) not in __import__("sys").path
    with pytest.raises(RuntimeError, match="Cannot find callable nothere in hubconf"):
        hub.load(str(repo), "nothere", source="local")
    with pytest.raises(ValueError, match='Unknown source: "web". Allowed values: "github" | "local".'):
        hub.load(str(repo), "tiny", source="web")
    _repo(tmp_path, "dependencies = ['no_such_package_xyz']\n")
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_package_xyz"):
        hub.load(str(repo), "tiny", source="local")


def test_github_source_from_archive(hub_dir, tmp_path, monkeypatch):
    repo = _repo(tmp_path)
    archive = tmp_path / "archive.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(repo / "hubconf.py", "owner-toy-abc123/hubconf.py")
    monkeypatch.setattr(hub, "_archive_url", lambda owner, name, ref: archive.as_uri())
    monkeypatch.setattr(hub, "_default_branch", lambda owner, name: "main")
    assert hub.list("owner/toy", trust_repo=True) == ["tiny"]
    assert (hub_dir / "owner_toy_main" / "hubconf.py").exists()
    assert "owner_toy" in (hub_dir / "trusted_list").read_text()
    assert hub.help("owner/toy", "tiny") == "A Linear(2, width)."
    archive.unlink()  # the cached repository answers now
    assert hub.load("owner/toy", "tiny", width=5).out_features == 5
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    with pytest.raises(Exception, match="Untrusted repository."):
        hub.load("stranger/toy:v1", "tiny")
