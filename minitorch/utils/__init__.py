"""torch.utils: the data pipeline, minitorch.utils.data. It is imported on first use (about 20 ms,
multiprocessing included), so `import minitorch` does not pay for it."""
import importlib

__all__ = ["benchmark", "checkpoint", "collect_env", "data", "deterministic", "dlpack", "hooks", "model_zoo", "tensorboard"]


def __getattr__(name: str):
    if name in __all__:
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
