"""torch.func (functorch): composable transforms over functions of tensors.

vmap maps a function over a batch dimension (minitorch calls it once per batch element and stacks
the results; see func/_vmap.py); grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian and
linearize differentiate it through minitorch's reverse-mode engine (jvp and jacfwd without
forward-mode AD; see func/_transforms.py); functional_call and stack_module_state run modules
with parameters given as tensors, for per-sample gradients and model ensembles.
"""
from ._functional_call import functional_call, functionalize, replace_all_batch_norm_modules_, stack_module_state
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ._vmap import vmap


def debug_unwrap(tensor, *, recurse: bool = True):
    """The tensor under a functorch wrapper (BatchedTensor, GradTrackingTensor): minitorch's
    transforms wrap none (vmap loops over the batch), so it is the tensor itself."""
    return tensor


__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize",
           "functional_call", "stack_module_state", "replace_all_batch_norm_modules_", "functionalize"]
