"""What the tests of the emulation's parts share: building and running plain C/C++ programs and
libraries beside the test process."""
import os


def plain_env(**extra):
    """The environment without the sanitizer run's preloaded ASan runtime: neither gcc/g++ nor an
    uninstrumented program is to run under it (gcc aborts there)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env.update(extra)
    return env
