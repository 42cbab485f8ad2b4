"""setup.py's incremental build: an object is recompiled when a file the compiler read for it
changed (its dependency file says which), when its command changed, or when it is missing, and
not otherwise; the CUDA architectures follow MINITORCH_CUDA_ARCH_LIST in PyTorch's syntax."""
import importlib.util
import os
import shutil

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def setup_py():
    spec = importlib.util.spec_from_file_location("minitorch_setup", os.path.join(ROOT, "setup.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # not __main__: defines the build's parts, builds nothing
    return mod


@pytest.fixture(autouse=True)
def compilers_without_the_sanitizer(monkeypatch):
    """make test-sanitize preloads libasan into every child process; gcc then exits non-zero on
    LeakSanitizer's report of gcc's own leaks, which says nothing about our build."""
    monkeypatch.delenv("LD_PRELOAD", raising=False)


def age(*paths, seconds=10):
    """As if the files were written `seconds` ago."""
    for path in paths:
        st = os.stat(path)
        os.utime(path, (st.st_atime - seconds, st.st_mtime - seconds))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_an_object_is_rebuilt_exactly_when_what_it_read_changed(setup_py, tmp_path):
    (tmp_path / "shared.h").write_text("#define TWO 2\n")
    (tmp_path / "uses.c").write_text('#include "shared.h"\nint uses(void) { return TWO; }\n')
    (tmp_path / "alone.c").write_text("int alone(void) { return 1; }\n")

    def job(name, *flags):
        src, obj = str(tmp_path / f"{name}.c"), str(tmp_path / "obj" / f"{name}.o")
        return setup_py.Job("CC", src, obj, ["gcc", *flags, "-c", src, "-o", obj, "-MMD", "-MF", obj + ".d"])

    uses, alone = job("uses"), job("alone")
    assert uses.stale(False) == alone.stale(False) == "new"
    setup_py.run_jobs([uses, alone], 2, False)
    assert uses.stale(False) is None and alone.stale(False) is None
    assert alone.stale(True) == "forced"

    age(*(str(p) for p in tmp_path.rglob("*") if p.is_file()))
    (tmp_path / "shared.h").write_text("#define TWO (1 + 1)\n")  # the header: only its includer
    assert uses.stale(False).endswith("shared.h changed") and alone.stale(False) is None
    setup_py.run_jobs([uses], 1, False)
    assert uses.stale(False) is None

    assert job("alone", "-O2").stale(False) == "flags changed"
    os.remove(alone.dep_file)
    assert alone.stale(False) == "no record of its last build"
    os.remove(alone.obj)
    assert alone.stale(False) == "new"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_failed_compile_stops_the_build_and_leaves_no_record(setup_py, tmp_path):
    (tmp_path / "bad.c").write_text("int broken(void) { return }\n")
    src, obj = str(tmp_path / "bad.c"), str(tmp_path / "bad.o")
    bad = setup_py.Job("CC", src, obj, ["gcc", "-c", src, "-o", obj, "-MMD", "-MF", obj + ".d"])
    with pytest.raises(setup_py.CompileError, match="bad.c"):
        setup_py.run_jobs([bad], 1, False)
    assert not os.path.exists(bad.cmd_file) and bad.stale(False) is not None


def test_include_folders_outside_the_checkout_do_not_count(setup_py):
    # pip's isolated build environment is a new temporary folder each time: its headers' folder
    # must not make every object stale
    a = setup_py.Job("CC", "x.c", "x.o", ["gcc", "-I/tmp/pip-build-env-1/include", "-Icsrc", "-c", "x.c"])
    b = setup_py.Job("CC", "x.c", "x.o", ["gcc", "-I/tmp/pip-build-env-2/include", "-Icsrc", "-c", "x.c"])
    assert a.signature() == b.signature() and "-Icsrc" in a.signature()


def test_cuda_architectures(setup_py, monkeypatch):
    monkeypatch.delenv("MINITORCH_CUDA_ARCH_LIST", raising=False)
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    flags = " ".join(setup_py.cuda_arch_flags())
    for arch in ("80", "86", "89", "90"):
        assert f"arch=compute_{arch},code=sm_{arch}" in flags
    assert flags.count("code=compute_") == 1 and "arch=compute_90,code=compute_90" in flags
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "7.5 8.6+PTX")
    assert setup_py.cuda_arch_flags() == ["-gencode", "arch=compute_75,code=sm_75", "-gencode",
                                          "arch=compute_86,code=sm_86", "-gencode", "arch=compute_86,code=compute_86"]
    monkeypatch.setenv("MINITORCH_CUDA_ARCH_LIST", "9.0a")  # ours first
    assert setup_py.cuda_arch_flags() == ["-gencode", "arch=compute_90a,code=sm_90a"]
    monkeypatch.setenv("MINITORCH_CUDA_ARCH_LIST", "sm_90")
    with pytest.raises(SystemExit, match="bad CUDA architecture 'sm_90'"):
        setup_py.cuda_arch_flags()
