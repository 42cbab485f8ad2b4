"""torch.utils: the data pipeline, minitorch.utils.data. It is imported on first use (about 20 ms,
multiprocessing included), so `import minitorch` does not pay for it."""
import importlib

__all__ = ["data"]


def __getattr__(name: str):
    if name == "data":
        return importlib.import_module(".data", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
