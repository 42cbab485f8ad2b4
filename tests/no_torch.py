"""Makes `import torch` fail in this process, as on a machine without PyTorch: the sanitizer run
(MINITORCH_TEST_NO_TORCH=1) cannot load it (ASan's exception interceptor aborts on its C++
throws), so every comparison with PyTorch skips there.

A finder at the head of sys.meta_path, not None in sys.modules: libraries that probe
`sys.modules` for a loaded torch (einops' backend search, scipy's array-API checks) would take a
"torch" key as PyTorch being loaded and fail on the None; with the finder there is no key at all."""
import importlib.abc
import os
import sys


class _TorchAbsent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by MINITORCH_TEST_NO_TORCH=1)",
                                      name=name)
        return None


def block_torch_if_asked() -> None:
    if os.environ.get("MINITORCH_TEST_NO_TORCH") != "1":
        return
    if any(isinstance(f, _TorchAbsent) for f in sys.meta_path):
        return
    if "torch" in sys.modules:
        raise RuntimeError("MINITORCH_TEST_NO_TORCH=1, but torch was imported before the block")
    sys.meta_path.insert(0, _TorchAbsent())
