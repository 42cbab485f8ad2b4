"""torch.__config__: what this build of minitorch has (show) and how its CPU work is threaded
(parallel_info), read from the build and the running process rather than written down."""
import os

import minitorch


def _blas_config() -> str:
    """OpenBLAS's own description of itself (version, target core, threading), from the library
    _C is linked against (scipy-openblas32, NumPy's), or a plain name where it cannot be asked."""
    try:
        import ctypes

        import scipy_openblas32

        lib = ctypes.CDLL(os.path.join(scipy_openblas32.get_lib_dir(), f"lib{scipy_openblas32.get_library()}.so"))
        fn = lib.scipy_openblas_get_config
        fn.restype = ctypes.c_char_p
        return fn().decode().strip()
    except (ImportError, OSError, AttributeError):
        return "OpenBLAS (scipy-openblas32)"


def show() -> str:
    """A human-readable description of this build's configuration, as torch.__config__.show()."""
    cuda = minitorch.cuda
    lines = [
        "minitorch built with:",
        "  - C11 core (csrc/), CUDA backend as a plug-in (minitorch._C_cuda)",
        f"  - BLAS: {_blas_config()}",
        "  - LAPACK is enabled (provided by OpenBLAS)",
        "  - OpenMP: the CPU loops' one thread pool",
        f"  - CPU capability usage: {minitorch.backends.cpu.get_cpu_capability()}",
        f"  - CUDA: {'runtime ' + str(minitorch.version.cuda) if minitorch.version.cuda else 'not built'}"
        f" ({'available' if cuda.is_available() else 'no device'})",
        f"  - Build settings: TORCH_VERSION={minitorch.__version__}, USE_CUDA={int(bool(minitorch.version.cuda))}, "
        f"USE_OPENMP=ON, BLAS_INFO=open, LAPACK_INFO=open",
    ]
    return "\n".join(lines) + "\n"


def parallel_info() -> str:
    """The thread settings of the CPU work, as torch.__config__.parallel_info()."""
    env = "\n".join(f"\t{k} : {os.environ.get(k, '[not set]')}" for k in
                    ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MINITORCH_NUM_THREADS"))
    return (f"ATen/Parallel:\n\tat::get_num_threads() : {minitorch.get_num_threads()}\n"
            f"\tat::get_num_interop_threads() : {minitorch.get_num_interop_threads()}\n"
            f"OpenMP\n\tthreads : {minitorch.get_num_threads()}\n"
            f"{_blas_config()}\n"
            f"std::thread::hardware_concurrency() : {os.cpu_count()}\n"
            f"Environment variables:\n{env}\n"
            "ATen parallel backend: OpenMP\n")
