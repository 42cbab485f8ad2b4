"""minitorch's backend for einops: rearrange, reduce, repeat, einsum, pack and parse_shape on
minitorch tensors. Imported only once einops is loaded (see __init__.py); defining the class
registers it, as einops looks its backends up among AbstractBackend's subclasses.

einops's PyTorch backend already speaks PyTorch's API (permute, amin/amax, repeat, expand, cat,
stack, einsum) through its `torch` attribute; minitorch's is that backend with minitorch as its
torch, so both stay the same code as einops changes. Its __init__ is not run: it imports the real
torch (for torch.compile's registration).
"""
from __future__ import annotations

from einops._backends import TorchBackend

import minitorch


class MinitorchBackend(TorchBackend):
    framework_name = "minitorch"

    def __init__(self):
        self.torch = minitorch

    def layers(self):
        from . import layers

        return layers
