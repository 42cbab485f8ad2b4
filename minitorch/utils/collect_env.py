"""`python -m minitorch.utils.collect_env`: the facts a bug report needs (torch.utils.collect_env),
gathered from the running interpreter, the OS and minitorch's own build."""
import os
import platform
import sys
from collections import namedtuple

SystemEnv = namedtuple("SystemEnv", ["torch_version", "is_debug_build", "cuda_compiled_version", "os", "libc_version",
                                     "python_version", "python_platform", "is_cuda_available", "cpu_info",
                                     "cpu_capability", "num_threads", "blas", "pip_packages"])


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _packages() -> str:
    from importlib import metadata

    wanted = ("minitorch", "numpy", "mpi4py", "scipy-openblas32", "einops", "hypothesis", "pytest")
    found = []
    for name in wanted:
        try:
            found.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return "\n".join(found)


def get_env_info() -> SystemEnv:
    import minitorch
    from minitorch import __config__

    return SystemEnv(
        torch_version=minitorch.__version__, is_debug_build=False,
        cuda_compiled_version=minitorch.version.cuda or "None",
        os=f"{platform.system()} {platform.release()} ({platform.machine()})",
        libc_version="-".join(platform.libc_ver()) or "N/A",
        python_version=f"{sys.version.split()[0]} ({platform.architecture()[0]} runtime)",
        python_platform=platform.platform(), is_cuda_available=minitorch.cuda.is_available(),
        cpu_info=f"{_cpu_model()}, {os.cpu_count()} logical CPUs", cpu_capability=minitorch.backends.cpu.get_cpu_capability(),
        num_threads=minitorch.get_num_threads(), blas=__config__._blas_config(), pip_packages=_packages())


def pretty_str(env: SystemEnv) -> str:
    return "\n".join([
        f"PyTorch version: {env.torch_version}",
        f"Is debug build: {env.is_debug_build}",
        f"CUDA used to build PyTorch: {env.cuda_compiled_version}",
        "",
        f"OS: {env.os}",
        f"Libc version: {env.libc_version}",
        "",
        f"Python version: {env.python_version}",
        f"Python platform: {env.python_platform}",
        f"Is CUDA available: {env.is_cuda_available}",
        "",
        f"CPU: {env.cpu_info}",
        f"CPU capability usage: {env.cpu_capability}",
        f"Threads: {env.num_threads}",
        f"BLAS: {env.blas}",
        "",
        "Versions of relevant libraries:",
        env.pip_packages,
    ])


def get_pretty_env_info() -> str:
    return pretty_str(get_env_info())


def main() -> None:
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
