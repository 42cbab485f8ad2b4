"""Builds minitorch._C from csrc/ and, when a CUDA toolkit is found, minitorch._C_cuda from cuda/.

The BLAS is OpenBLAS from the scipy-openblas32 wheel, the one NumPy ships: its headers and
library come from the installed package, and minitorch/__init__.py loads the library before _C.
Set MINITORCH_SANITIZE=1 to build with AddressSanitizer and UndefinedBehaviorSanitizer, and
MINITORCH_NO_TRACE=1 for a _C whose profiler checks are compiled out (a benchmark's baseline).

The CUDA toolkit is looked for in $CUDA_HOME (or $CUDA_PATH), beside the nvcc on PATH, in
/usr/local/cuda, and in the PyPI nvidia-* wheels (nvidia/cu13/..., nvidia/cuda_nvcc/...; cuBLAS
usually comes from there, with PyTorch). MINITORCH_CUDA=0 skips _C_cuda, MINITORCH_CUDA=1 makes a
missing toolkit an error; by default it is built when nvcc is found. Without the cuBLAS headers
_C_cuda is built without the matrix products. cuBLAS and cuDNN (nvidia-cublas, nvidia-cudnn-cu13
wheels: nvidia/cu13/{include,lib}, nvidia/cudnn/...) are linked by file name with an rpath to
their folder, so _C_cuda loads from the wheels without LD_LIBRARY_PATH; MT_CUDA_CUBLAS and
MT_CUDA_CUDNN say to the code which were found. (A fresh venv has neither: the nvidia-cublas
wheel is some 400 MB, too much for every CI run, so CI builds _C_cuda without the products.)

minitorch._C_cuda_emu is the same backend built against the emulated CUDA device of cuda/emu/
(runtime, kernels, cuBLAS, cuDNN, CUB and CUPTI on the CPU), by g++ alone: no toolkit needed, so
the backend runs and is tested anywhere (MINITORCH_CUDA_EMU=1 at run time selects it). It is
built whenever g++ is found; MINITORCH_CUDA_EMU=0 at build time skips it.
"""
import glob
import os
from concurrent.futures import ThreadPoolExecutor
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

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
    if os.environ.get("MINITORCH_NO_TRACE") == "1":  # bench_profiler.py --callgrind's baseline
        cflags.append("-DMT_NO_TRACE")
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


def nvidia_wheel_roots():
    """The nvidia/<component> folders of the nvidia-* wheels installed for this Python."""
    dirs = list(site.getsitepackages()) + [site.getusersitepackages(), sysconfig.get_paths()["purelib"]]
    return sorted({p for d in dirs for p in glob.glob(os.path.join(d, "nvidia", "*")) if os.path.isdir(p)})


def find_cuda():
    """{nvcc, include_dirs, library_dirs, cublas} for the first toolkit found, or None."""
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        homes.append(str(Path(nvcc).resolve().parent.parent))
    homes.append("/usr/local/cuda")
    homes += nvidia_wheel_roots()
    # The first home with nvcc and the CUDA runtime (an nvcc on PATH may be a wrapper script).
    for home in homes:
        if home and os.path.isfile(os.path.join(home, "bin", "nvcc")):
            found = toolkit_at(home)
            if found:
                return found
    return None


def toolkit_at(home):
    roots = [home] + nvidia_wheel_roots()
    incs = [d for r in roots for d in (os.path.join(r, "include"), os.path.join(r, "targets", "x86_64-linux", "include"))
            if any(os.path.isfile(os.path.join(d, h)) for h in ("cuda_runtime_api.h", "cublas_v2.h", "cudnn.h"))]

    def lib_dir(name):
        for r in roots:
            for sub in ("lib64", "lib", "targets/x86_64-linux/lib"):
                hits = sorted(glob.glob(os.path.join(r, sub, f"lib{name}.so*")))
                if hits:
                    return os.path.join(r, sub), os.path.basename(hits[0])
        return None, None

    def library(name, header):
        """(dir, file) of a library whose header is found too, else None."""
        d, f = lib_dir(name)
        has_h = any(os.path.isfile(os.path.join(i, header)) for i in incs)
        return (d, f) if d and has_h else None

    cudart = library("cudart", "cuda_runtime_api.h")
    if cudart is None:
        return None
    cublas, cudnn = library("cublas", "cublas_v2.h"), library("cudnn", "cudnn.h")
    libs = [cudart] + [lib for lib in (cublas, cudnn) if lib]
    return {"nvcc": os.path.join(home, "bin", "nvcc"), "include_dirs": incs, "libs": libs,
            "cublas": cublas is not None, "cudnn": cudnn is not None}


def cuda_extension(cuda, cflags, ldflags):
    sources = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cuda").glob("*.c"))
    sources += sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cuda").glob("*.cu"))
    lib_dirs = sorted({d for d, _ in cuda["libs"]})
    # A wheel ships libcublas.so.13 with no unversioned name, so libraries are named by file.
    link = [f"-l:{name}" for _, name in cuda["libs"]] + ["-lstdc++"]  # nvcc's host code is C++
    macros = [(m, "1") for m, on in (("MT_CUDA_CUBLAS", cuda["cublas"]), ("MT_CUDA_CUDNN", cuda["cudnn"])) if on]
    return Extension(
        "minitorch._C_cuda",
        sources=sources,
        include_dirs=["csrc", "."] + cuda["include_dirs"],
        define_macros=macros,
        library_dirs=lib_dirs,
        runtime_library_dirs=lib_dirs,
        extra_compile_args=[f for f in cflags if f != "-fopenmp"],
        extra_link_args=[f for f in ldflags if f != "-fopenmp"] + link,
    )


def emu_extension(cflags, ldflags):
    """minitorch._C_cuda_emu: cuda/ over the emulated device (cuda/emu/), compiled by gcc and g++;
    its headers (cuda/emu/include) stand in for the toolkit's, so they come first."""
    sources = sorted(str(p.relative_to(ROOT)) for d in ("cuda", "cuda/emu") for ext in ("c", "cu", "cc")
                     for p in (ROOT / d).glob(f"*.{ext}"))
    emu_inc = ROOT / "cuda" / "emu" / "include"
    macros = [("MT_CUDA_EMU", "1")]
    macros += [(m, "1") for m, h in (("MT_CUDA_CUBLAS", "cublas_v2.h"), ("MT_CUDA_CUDNN", "cudnn.h"))
               if (emu_inc / h).is_file()]
    ext = Extension(
        "minitorch._C_cuda_emu",
        sources=sources,
        include_dirs=["cuda/emu/include", "csrc", "."],
        define_macros=macros,
        extra_compile_args=[f for f in cflags if f != "-fopenmp"],
        extra_link_args=[f for f in ldflags if f != "-fopenmp"] + ["-lstdc++"],
    )
    ext.emulated = True
    return ext


class BuildExt(build_ext):
    """Compiles an extension's .cu sources with nvcc (sm_90 code plus compute_90 PTX, which any
    newer GPU JIT-compiles), or, for the emulated device's extension, its .cu and .cc sources
    with g++ (two at a time); then lets setuptools compile the .c files and link everything."""

    nvcc = None

    def build_extension(self, ext):
        if getattr(ext, "emulated", False):
            # cuda/*.c again, with other headers and macros: objects of their own
            temp = self.build_temp
            self.build_temp = os.path.join(temp, "emu")
            try:
                self.build_sources(ext, emulated=True)
            finally:
                self.build_temp = temp
        else:
            self.build_sources(ext, emulated=False)

    def build_sources(self, ext, emulated):
        own = [s for s in ext.sources if s.endswith(".cu") or (emulated and s.endswith(".cc"))]
        if own:
            ext.sources = [s for s in ext.sources if s not in own]
            deps = [*glob.glob("cuda/*.h"), "csrc/core/math.h", "csrc/core/dtype.h", "csrc/cpu/pool_window.h"]
            if emulated:
                deps += glob.glob("cuda/emu/*.h") + glob.glob("cuda/emu/include/**/*.*", recursive=True)
            jobs = []
            for src in own:
                obj = os.path.join(self.build_temp, src.rsplit(".", 1)[0] + ".o")
                os.makedirs(os.path.dirname(obj), exist_ok=True)
                jobs.append((src, obj))
            stale = [(src, obj) for src, obj in jobs if self.force or not os.path.exists(obj) or any(
                os.path.getmtime(obj) < os.path.getmtime(p) for p in [src, *deps])]
            compile_one = self.gxx_command if emulated else self.nvcc_command
            with ThreadPoolExecutor(2 if emulated else 1) as pool:
                list(pool.map(lambda job: compile_one(ext, *job), stale))
            objs = [obj for _, obj in jobs]
            ext.extra_objects = list(ext.extra_objects or []) + objs
            ext.depends = list(ext.depends or []) + objs  # a new object relinks the extension
        super().build_extension(ext)

    def run_command_line(self, cmd):
        self.announce(" ".join(cmd), level=2)
        subprocess.check_call(cmd)

    def nvcc_command(self, ext, src, obj):
        macros = [f"-D{k}={v}" for k, v in ext.define_macros]
        self.run_command_line([self.nvcc, "-c", src, "-o", obj, "-O3", "-std=c++17", "-Xcompiler",
                               "-fPIC,-fvisibility=hidden", "-gencode", "arch=compute_90,code=sm_90",
                               "-gencode", "arch=compute_90,code=compute_90", *macros,
                               *[f"-I{d}" for d in ext.include_dirs]])

    def gxx_command(self, ext, src, obj):
        # The C flags less the C-only ones; the kernels at -O1 (-O2 nearly doubles the build for
        # little: the emulation's cost is in running threads one by one, not in the arithmetic).
        flags = [f for f in ext.extra_compile_args if not f.startswith("-std=") and f != "-O3"]
        opt = "-O1" if src.endswith(".cu") or "-O1" in flags else "-O2"
        cu = ["-x", "c++", "-include", "cuda/emu/kernel.h", "-Wno-unknown-pragmas"] if src.endswith(".cu") else []
        macros = [f"-D{k}={v}" for k, v in ext.define_macros]
        self.run_command_line([os.environ.get("CXX", "g++"), "-c", "-std=c++17", "-fPIC", opt, *flags, *cu, src,
                               "-o", obj, *macros, *[f"-I{d}" for d in ext.include_dirs]])


def extensions():
    c = c_extension()
    exts = [c]
    if os.environ.get("MINITORCH_CUDA_EMU", "") != "0" and shutil.which(os.environ.get("CXX", "g++")):
        exts.append(emu_extension(c.extra_compile_args, c.extra_link_args))
    return exts + cuda_extensions(c)


def cuda_extensions(c):
    want = os.environ.get("MINITORCH_CUDA", "")
    if want == "0":
        return []
    cuda = find_cuda()
    if cuda is None:
        if want == "1":
            sys.exit("MINITORCH_CUDA=1 but no CUDA toolkit (nvcc, cudart) was found: set CUDA_HOME")
        print("minitorch: no CUDA toolkit found, building without minitorch._C_cuda", file=sys.stderr)
        return []
    if not cuda["cublas"]:
        print("minitorch: cuBLAS headers not found, _C_cuda is built without matrix products", file=sys.stderr)
    BuildExt.nvcc = cuda["nvcc"]
    return [cuda_extension(cuda, c.extra_compile_args, c.extra_link_args)]


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
