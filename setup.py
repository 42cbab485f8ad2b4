"""Builds minitorch._C from csrc/ and, where a GPU can use it, minitorch._C_cuda from cuda/.

The BLAS is OpenBLAS from the scipy-openblas32 wheel, the one NumPy ships: its headers and
library come from the installed package, and minitorch/__init__.py loads the library before _C.
Set MINITORCH_SANITIZE=1 to build with AddressSanitizer and UndefinedBehaviorSanitizer, and
MINITORCH_NO_TRACE=1 for a _C whose profiler checks are compiled out (a benchmark's baseline).
The build compiles MAX_JOBS files at a time (default: one per core) and only what changed since
the last build (BuildExt below); MINITORCH_VERBOSE_BUILD=1 prints each command.

The CUDA toolkit is looked for in $CUDA_HOME (or $CUDA_PATH), beside the nvcc on PATH, in
/usr/local/cuda, and in the PyPI nvidia-* wheels (nvidia/cu13/..., nvidia/cuda_nvcc/...; cuBLAS
usually comes from there, with PyTorch). By default _C_cuda is built when a toolkit is found and
the NVIDIA driver loads (no driver: no GPU to run it); MINITORCH_CUDA=1 builds it wherever a
toolkit is found (a missing one is an error), MINITORCH_CUDA=0 never. The code is compiled for
MINITORCH_CUDA_ARCH_LIST (PyTorch's TORCH_CUDA_ARCH_LIST is read too; default
"8.0;8.6;8.9;9.0+PTX"). Without the cuBLAS headers
_C_cuda is built without the matrix products. cuBLAS and cuDNN (nvidia-cublas, nvidia-cudnn-cu13
wheels: nvidia/cu13/{include,lib}, nvidia/cudnn/...) are linked by file name with an rpath to
their folder, so _C_cuda loads from the wheels without LD_LIBRARY_PATH; MT_CUDA_CUBLAS and
MT_CUDA_CUDNN say to the code which were found. (A fresh venv has neither: the nvidia-cublas
wheel is some 400 MB, too much for every CI run, so CI builds _C_cuda without the products.)

minitorch._C_cuda_emu is the same backend built against the emulated CUDA device of cuda/emu/
(runtime, kernels, cuBLAS, cuDNN, CUB and CUPTI on the CPU), by g++ alone: no toolkit needed, so
the backend runs and is tested anywhere. It is a test tool, built only on request:
MINITORCH_CUDA_EMU=1 at build time builds it (make test does), and at run time selects it.
"""
import ctypes
import glob
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:
    from setuptools.errors import CompileError
except ImportError:  # setuptools < 59
    from distutils.errors import CompileError

ROOT = Path(__file__).resolve().parent
SANITIZE = os.environ.get("MINITORCH_SANITIZE") == "1"
NO_TRACE = os.environ.get("MINITORCH_NO_TRACE") == "1"
# The GPUs of the last three generations, and PTX of the newest for what comes after them:
# A100 (8.0), RTX 30xx / A10 / A40 (8.6), RTX 40xx / L4 / L40 (8.9), H100 / H200 (9.0).
DEFAULT_CUDA_ARCHS = "8.0;8.6;8.9;9.0+PTX"
# What tools/gen_ops_api.py writes (the typed C API of the ops, from ops.def) before compiling
GEN_DIR = "build/gen"


def openblas():
    import scipy_openblas32

    return scipy_openblas32.get_include_dir(), scipy_openblas32.get_lib_dir(), scipy_openblas32.get_library()


# Flags of one C file on top of the extension's. fft.c: cpu/fft_row_vec.h passes vectors by
# value between inline functions, where no ABI is involved, and GCC notes for each that one of
# 32 bytes was passed differently before GCC 4.6; `#pragma GCC diagnostic ignored "-Wpsabi"`
# does not silence that note, the flag does.
FILE_CFLAGS = {"csrc/cpu/fft.c": ["-Wno-psabi"]}


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
              "-fno-trapping-math",
              # Nor errno after a math function: with it kept, sqrtf is a libm call (and on a
              # negative input its slow error path) in every loop, never a vector instruction.
              # The values are the same.
              "-fno-math-errno"]
    ldflags = ["-fopenmp"]
    if SANITIZE:
        san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]
        cflags = [f for f in cflags if f != "-O3"] + ["-O1", "-g"] + san
        ldflags += san
    if os.environ.get("MINITORCH_WERROR") == "1":
        cflags.append("-Werror")
    if NO_TRACE:  # bench_profiler.py --callgrind's baseline
        cflags.append("-DMT_NO_TRACE")
    return Extension(
        "minitorch._C",
        sources=sources,
        include_dirs=["csrc", GEN_DIR, inc],
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
    # cuda/blas.c runs addmm's bias epilogue on cuBLASLt (same wheel): both, or neither
    cublaslt = library("cublasLt", "cublasLt.h")
    if cublas is None or cublaslt is None:
        cublas = cublaslt = None
    libs = [cudart] + [lib for lib in (cublas, cublaslt, cudnn) if lib]
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
        include_dirs=["csrc", GEN_DIR, "."] + cuda["include_dirs"],
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
        include_dirs=["cuda/emu/include", "csrc", GEN_DIR, "."],
        define_macros=macros,
        extra_compile_args=[f for f in cflags if f != "-fopenmp"],
        extra_link_args=[f for f in ldflags if f != "-fopenmp"] + ["-lstdc++"],
    )
    ext.emulated = True
    return ext


def cuda_arch_flags():
    """nvcc's -gencode flags for MINITORCH_CUDA_ARCH_LIST (else TORCH_CUDA_ARCH_LIST, PyTorch's
    name for the same thing), in PyTorch's syntax: "8.0;8.6;8.9;9.0+PTX" (";", "," or spaces
    between entries; "+PTX" adds that architecture's PTX, which newer GPUs JIT-compile)."""
    spec = os.environ.get("MINITORCH_CUDA_ARCH_LIST") or os.environ.get("TORCH_CUDA_ARCH_LIST") or DEFAULT_CUDA_ARCHS
    flags = []
    for entry in re.split(r"[;,\s]+", spec.strip()):
        m = re.fullmatch(r"(\d+)\.(\d+)([a-z]?)(\+PTX)?", entry)
        if m is None:
            sys.exit(f"minitorch: bad CUDA architecture {entry!r} in {spec!r}: expected entries such as 8.6 or 9.0+PTX")
        arch = m.group(1) + m.group(2) + m.group(3)
        flags += ["-gencode", f"arch=compute_{arch},code=sm_{arch}"]
        if m.group(4):
            flags += ["-gencode", f"arch=compute_{arch},code=compute_{arch}"]
    return flags


class Job:
    """One source to compile: its object, the command, and the files it was last built from."""

    def __init__(self, tool, src, obj, cmd):
        self.tool, self.src, self.obj, self.cmd = tool, src, obj, cmd
        self.dep_file, self.cmd_file = obj + ".d", obj + ".cmd"

    def signature(self):
        """The command with the include folders outside the checkout left out: a build in pip's
        isolated environment (a new temporary folder each time) then reuses the objects of
        another build. The Python version and platform are in the object folder's name."""
        return " ".join(a for a in self.cmd if not (a.startswith("-I") and not inside_root(a[2:])))

    def stale(self, force):
        """Why the object must be (re)compiled, or None: missing, built by another command, or
        older than a file the compiler read for it (the dependency file it wrote then)."""
        if force or not os.path.exists(self.obj):
            return "new" if not force else "forced"
        try:
            if Path(self.cmd_file).read_text() != self.signature():
                return "flags changed"
            deps = read_deps(self.dep_file)
        except OSError:
            return "no record of its last build"
        built = os.path.getmtime(self.obj)
        for dep in deps:
            try:
                if os.path.getmtime(dep) > built:
                    return f"{os.path.relpath(dep, ROOT)} changed"
            except OSError:
                if inside_root(dep):  # a header of ours was removed: the source changed too
                    return f"{os.path.relpath(dep, ROOT)} is gone"
        return None


def inside_root(path):
    return os.path.abspath(os.path.join(ROOT, path)).startswith(str(ROOT) + os.sep)


def read_deps(path):
    """The prerequisites in a make rule written by gcc -MMD or nvcc -MD ("obj: a.c b.h \\ ..."),
    as paths relative to the checkout where the compiler gave them relative."""
    text = Path(path).read_text().replace("\\\n", " ")
    rule = text.split(": ", 1)[1] if ": " in text else ""
    words = re.findall(r"(?:\\ |[^\s])+", rule.split("\n", 1)[0])
    return [os.path.join(ROOT, w.replace("\\ ", " ")) for w in words]


def run_jobs(jobs, nproc, verbose):
    """Compiles the jobs nproc at a time, printing one line per object as it starts and the
    compiler's output (warnings) whole, after it; the first failure stops the build."""
    width = len(str(len(jobs)))
    lock, failed = threading.Lock(), []
    started = iter(range(1, len(jobs) + 1))

    def one(job):
        if failed:
            return
        with lock:
            print(f"[{next(started):>{width}}/{len(jobs)}] {job.tool:<4} {job.src}", flush=True)
            if verbose:
                print("    " + " ".join(job.cmd), flush=True)
        os.makedirs(os.path.dirname(job.obj), exist_ok=True)
        for stale_record in (job.cmd_file, job.dep_file):
            if os.path.exists(stale_record):
                os.remove(stale_record)
        out = subprocess.run(job.cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with lock:
            if out.stdout.strip():
                print(out.stdout.rstrip(), flush=True)
            if out.returncode != 0:
                failed.append(job)
                return
        Path(job.cmd_file).write_text(job.signature())

    with ThreadPoolExecutor(max(1, nproc)) as pool:
        list(pool.map(one, jobs))
    if failed:
        raise CompileError(f"minitorch: compiling {failed[0].src} failed (its errors are above)")


class BuildExt(build_ext):
    """Compiles every extension's sources in one pool of MAX_JOBS processes (default: one per
    core), showing each file as it starts, and recompiles only what changed: the objects live
    in build/obj.<platform>-<python>[-sanitize|-notrace]/ of the checkout (nvcc's in the plain
    folder: no variant changes them), each with the compiler's dependency file (gcc -MMD,
    nvcc -MD) and its command, so a header or ops.def edit recompiles exactly the files that
    include it, and pip's editable, wheel and in-place builds share them. .c files go to the C compiler, .cu files to nvcc (or, for the emulated
    device's extension, with its .cc files, to g++). Every extension is relinked each time
    (seconds). An in-place build removes a CUDA extension this configuration does not build, so
    the tree never mixes a new _C with an old _C_cuda."""

    nvcc = None

    def finalize_options(self):
        super().finalize_options()
        variant = "".join(f"-{name}" for name, on in (("sanitize", SANITIZE), ("notrace", NO_TRACE)) if on)
        self.build_plain = str(ROOT / "build" / f"obj.{sysconfig.get_platform()}-{sys.implementation.cache_tag}")
        self.build_temp = self.build_plain + variant

    def build_extensions(self):
        self.check_extensions_list(self.extensions)
        subprocess.run([sys.executable, str(ROOT / "tools" / "gen_ops_api.py"), str(ROOT / GEN_DIR)],
                       check=True, stdout=subprocess.DEVNULL)
        objects, jobs = {}, []
        for ext in self.extensions:
            ext_jobs = [self.job(ext, src) for src in ext.sources]
            objects[ext.name] = [job.obj for job in ext_jobs]
            jobs += ext_jobs
        todo = [job for job in jobs if job.stale(self.force)]
        nproc = int(os.environ.get("MAX_JOBS") or self.parallel or os.cpu_count() or 1)
        print(f"minitorch: {len(todo)} of {len(jobs)} files to compile, {nproc} at a time "
              f"(objects in {os.path.relpath(self.build_temp, ROOT)})", flush=True)
        run_jobs(todo, nproc, os.environ.get("MINITORCH_VERBOSE_BUILD") == "1")
        for ext in self.extensions:
            self.link(ext, objects[ext.name])

    def run(self):
        super().run()
        # A CUDA extension of an earlier configuration, left in the checkout (an in-place build)
        # or in build/lib (from which pip's wheel is packed), would be loaded or shipped with this _C.
        built = {ext.name for ext in self.extensions}
        folders = [os.path.join(self.build_lib, "minitorch")] + ([str(ROOT / "minitorch")] if self.inplace else [])
        for name in ("_C_cuda", "_C_cuda_emu"):
            if f"minitorch.{name}" in built:
                continue
            for path in (p for folder in folders for p in glob.glob(os.path.join(folder, f"{name}.*.so"))):
                print(f"minitorch: removing {os.path.relpath(path, ROOT)} (not built in this configuration)")
                os.remove(path)

    def job(self, ext, src):
        emulated = getattr(ext, "emulated", False)
        nvcc = not emulated and src.endswith(".cu")
        # nvcc's objects take none of the C flags a variant changes: the variants share them
        obj = os.path.join(self.build_plain if nvcc else self.build_temp, ext.name.split(".")[-1],
                           src.rsplit(".", 1)[0] + ".o")
        # The compilers run in the checkout, so its objects are named relative to it: the
        # recorded commands then hold no absolute path and a copy of build/ (another worktree,
        # a moved checkout) stays up to date.
        named = os.path.relpath(obj, ROOT) if inside_root(obj) else obj
        if nvcc:
            return Job("NVCC", src, obj, self.nvcc_command(ext, src, named))
        if emulated and not src.endswith(".c"):
            return Job("CXX", src, obj, self.gxx_command(ext, src, named))
        return Job("CC", src, obj, self.c_command(ext, src, named))

    def c_command(self, ext, src, obj):
        """What distutils' UnixCCompiler runs (Python's own flags first), plus a dependency file."""
        macros = [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in ext.define_macros]
        incs = [f"-I{d}" for d in ext.include_dirs + self.include_dirs]
        return [*self.compiler.compiler_so, *macros, *incs, "-c", src, "-o", obj,
                *ext.extra_compile_args, *FILE_CFLAGS.get(src, []), "-MMD", "-MF", obj + ".d"]

    def nvcc_command(self, ext, src, obj):
        macros = [f"-D{k}={v}" for k, v in ext.define_macros]
        return [self.nvcc, "-c", src, "-o", obj, "-O3", "-std=c++17", "-Xcompiler", "-fPIC,-fvisibility=hidden",
                *cuda_arch_flags(), *macros, *[f"-I{d}" for d in ext.include_dirs], "-MD", "-MF", obj + ".d"]

    def gxx_command(self, ext, src, obj):
        # The C flags less the C-only ones; the kernels at -O1 (-O2 nearly doubles the build for
        # little: the emulation's cost is in running threads one by one, not in the arithmetic).
        flags = [f for f in ext.extra_compile_args if not f.startswith("-std=") and f != "-O3"]
        opt = "-O1" if src.endswith(".cu") or "-O1" in flags else "-O2"
        cu = ["-x", "c++", "-include", "cuda/emu/kernel.h", "-Wno-unknown-pragmas"] if src.endswith(".cu") else []
        macros = [f"-D{k}={v}" for k, v in ext.define_macros]
        return [os.environ.get("CXX", "g++"), "-c", "-std=c++17", "-fPIC", opt, *flags, *cu, src,
                "-o", obj, *macros, *[f"-I{d}" for d in ext.include_dirs], "-MMD", "-MF", obj + ".d"]

    def link(self, ext, objects):
        path = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        print(f"minitorch: linking {ext.name}", flush=True)
        self.compiler.force = True  # cheap, and right when the list of objects or libraries changed
        self.compiler.link_shared_object(
            objects, path, libraries=self.get_libraries(ext), library_dirs=ext.library_dirs,
            runtime_library_dirs=ext.runtime_library_dirs, extra_postargs=ext.extra_link_args,
            export_symbols=self.get_export_symbols(ext), debug=self.debug, build_temp=self.build_temp,
            target_lang=self.compiler.detect_language(ext.sources))


def extensions():
    c = c_extension()
    exts = [c] + cuda_extensions(c)
    # The emulated device is a test tool: built on request (make test asks), never by default.
    if os.environ.get("MINITORCH_CUDA_EMU") == "1":
        if not shutil.which(os.environ.get("CXX", "g++")):
            sys.exit("MINITORCH_CUDA_EMU=1 but no C++ compiler (g++ or $CXX) was found")
        exts.append(emu_extension(c.extra_compile_args, c.extra_link_args))
    return exts


def has_driver():
    """Whether the NVIDIA driver's library loads: without it no GPU can run what nvcc builds."""
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def cuda_extensions(c):
    want = os.environ.get("MINITORCH_CUDA", "")
    if want == "0":
        return []
    cuda = find_cuda()
    if cuda is None:
        if want == "1":
            sys.exit("MINITORCH_CUDA=1 but no CUDA toolkit (nvcc, cudart) was found: set CUDA_HOME")
        print("minitorch: no CUDA toolkit found, building without minitorch._C_cuda (CPU only)", flush=True)
        return []
    if want != "1" and not has_driver():
        print("minitorch: a CUDA toolkit but no NVIDIA driver here, so no GPU to run on: building without "
              "minitorch._C_cuda (MINITORCH_CUDA=1 builds it anyway, e.g. for a wheel used elsewhere)", flush=True)
        return []
    if not cuda["cublas"]:
        print("minitorch: cuBLAS headers not found, _C_cuda is built without matrix products", flush=True)
    BuildExt.nvcc = cuda["nvcc"]
    return [cuda_extension(cuda, c.extra_compile_args, c.extra_link_args)]


if __name__ == "__main__":  # pip's backend runs this file as __main__; tests import it for BuildExt's parts
    setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
