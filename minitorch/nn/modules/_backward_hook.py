"""nn.Module's full backward hooks, as torch/utils/hooks.py's BackwardHook: an identity
Function around the module's tensor inputs and one around its tensor outputs. In the backward
the output side runs first and keeps grad_output (after the backward pre-hooks, which may
replace it); the input side then calls each hook(module, grad_input, grad_output), which may
replace grad_input. A position that holds no tensor reads None; a tensor input that needs no
grad reads zeros (None when no input needs one), as in PyTorch."""
from __future__ import annotations

import warnings
from typing import Any, Callable, List, Optional, Sequence, Tuple

import minitorch
from minitorch.nn.modules._functions import BackwardHookFunction


class BackwardHook:
    def __init__(self, module: Any, user_hooks: List[Callable], user_pre_hooks: List[Callable]) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: Optional[tuple] = None
        self.n_outputs = -1
        self.output_tensors_index: Optional[List[int]] = None
        self.n_inputs = -1
        self.input_tensors_index: Optional[List[int]] = None

    @staticmethod
    def _pack_with_none(indices: Sequence[int], values: Sequence[Any], size: int) -> tuple:
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    def _apply_on_tensors(self, on_backward: Callable, args: tuple) -> Tuple[tuple, Optional[List[int]]]:
        tensors_idx = [i for i, arg in enumerate(args) if isinstance(arg, minitorch.Tensor)]
        tensors = [args[i] for i in tensors_idx]
        if not (any(t.requires_grad for t in tensors) and minitorch.is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.hooked(on_backward, *tensors)
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        return (tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)), tensors_idx

    def _on_input_grads(self, grads: tuple) -> tuple:
        """The gradients of the inputs arrived: the hooks see them beside grad_output."""
        if self.grad_outputs is None:
            return grads
        res = self._pack_with_none(self.input_tensors_index, grads, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(
                    "Backward hook returned an invalid number of grad_input, "
                    f"got {len(out)}, but expected {len(res)}"
                )
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_tensors_index)

    def setup_input_hook(self, args: tuple) -> tuple:
        res, input_idx = self._apply_on_tensors(self._on_input_grads, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def _on_output_grads(self, grads: tuple) -> tuple:
        """The gradients of the outputs arrived: kept (after the pre-hooks) for the input side."""
        self.grad_outputs = self._pack_with_none(self.output_tensors_index, grads, self.n_outputs)
        for pre_hook in self.user_pre_hooks:
            new = pre_hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError(
                    "Backward pre hook returned an invalid number of grad_output, "
                    f"got {len(new)}, but expected {len(self.grad_outputs)}"
                )
            self.grad_outputs = new
        local_grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to module "
                "outputs since no inputs require gradients. See "
                "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook "
                "for more details.",
                stacklevel=5,
            )
            grad_inputs = self._pack_with_none([], [], self.n_inputs)
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(el is None for el in res)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should always "
                        "return None or None for all gradients."
                    )
            self.grad_outputs = None
        return tuple(local_grad_outputs[i] for i in self.output_tensors_index)

    def setup_output_hook(self, result: Any) -> Any:
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, output_idx = self._apply_on_tensors(self._on_output_grads, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return res if is_tuple else res[0]
