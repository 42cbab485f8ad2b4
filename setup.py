"""Builds minitorch._C from csrc/ (and, in a later issue, minitorch._C_cuda from cuda/).

The BLAS is OpenBLAS from the scipy-openblas32 wheel, the one NumPy ships: its headers and
library come from the installed package, and minitorch/__init__.py loads the library before _C.
Set MINITORCH_SANITIZE=1 to build with AddressSanitizer and UndefinedBehaviorSanitizer.
"""
import os
from pathlib import Path

from setuptools import Extension, setup

ROOT = Path(__file__).parent


def openblas():
    import scipy_openblas32

    return scipy_openblas32.get_include_dir(), scipy_openblas32.get_lib_dir(), scipy_openblas32.get_library()


def c_extension():
    inc, libdir, lib = openblas()
    sources = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "csrc").rglob("*.c"))
    # OpenMP: large elementwise ops and reductions split their outer dim across the cores.
    # -fopenmp implies _REENTRANT, under which glibc's headers would pick an older POSIX level
    # than Python.h does; naming Python's level for every file keeps the two in agreement.
    cflags = ["-std=c11", "-O3", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
              "-fvisibility=hidden", "-fopenmp", "-D_POSIX_C_SOURCE=200809L",
              # Nothing reads the floating-point exception flags, so comparisons and selects
              # may be computed unconditionally: loops with clamps and NaN tests vectorise.
              "-fno-trapping-math"]
    ldflags = ["-fopenmp"]
    if os.environ.get("MINITORCH_SANITIZE") == "1":
        san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]
        cflags = [f for f in cflags if f != "-O3"] + ["-O1", "-g"] + san
        ldflags += san
    if os.environ.get("MINITORCH_WERROR") == "1":
        cflags.append("-Werror")
    return Extension(
        "minitorch._C",
        sources=sources,
        include_dirs=["csrc", inc],
        library_dirs=[libdir],
        libraries=[lib],
        runtime_library_dirs=[libdir],
        extra_compile_args=cflags,
        extra_link_args=ldflags,
    )


setup(ext_modules=[c_extension()])
