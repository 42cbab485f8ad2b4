"""What the tests of the emulation's parts share: building and running plain C/C++ programs and
libraries beside the test process."""
import os


def plain_env(**extra):
    """The environment without the sanitizer run's preloaded ASan runtime: neither gcc/g++ nor an
    uninstrumented program is to run under it (gcc aborts there)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env.update(extra)
    return env


EMU = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "cuda", "emu")


def build_emu_program(d, source: str):
    """The executable of source, a CUDA program, built by g++ in folder d as the emulated build
    builds cuda/*.cu (kernel.h force-included) and linked with the emulated runtime; skips the
    test without g++."""
    import shutil
    import subprocess

    import pytest

    gxx = shutil.which(os.environ.get("CXX", "g++"))
    if gxx is None:
        pytest.skip("no g++")
    src, exe = d / "check.cu", d / "check"
    src.write_text(source)
    inc = ["-I" + os.path.join(EMU, "include"), "-I" + EMU]
    objs = []
    for name in ("runtime.cc", "launch.cc", "guard.cc", "attribute.cc"):
        objs.append(str(d / (name + ".o")))
        subprocess.run([gxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-c", os.path.join(EMU, name),
                        "-o", objs[-1], *inc], check=True, env=plain_env())
    subprocess.run([gxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Wno-unknown-pragmas", "-x", "c++", "-include",
                    os.path.join(EMU, "kernel.h"), *inc, str(src), "-x", "none", *objs, "-o", str(exe),
                    "-pthread"], check=True, env=plain_env())
    return exe
