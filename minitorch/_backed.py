"""What the tensor-like classes built on one dense tensor share (sparse tensors on their values,
nested tensors on their buffer): dtype, device and autograd come from that tensor, `_v`."""
from __future__ import annotations


class BackedByValues:
    """The attributes read off the dense tensor `_v` that holds the elements."""

    _v: object

    @property
    def dtype(self):
        return self._v.dtype

    @property
    def device(self):
        return self._v.device

    @property
    def is_cuda(self) -> bool:
        return self._v.is_cuda

    @property
    def requires_grad(self) -> bool:
        return self._v.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self._v.requires_grad = flag

    def requires_grad_(self, requires_grad: bool = True):
        self._v.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._v.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._v.is_leaf
