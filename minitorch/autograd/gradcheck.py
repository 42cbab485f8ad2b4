"""gradcheck: compares autograd's gradients with central finite differences, in float64.

One perturbation per input element, as PyTorch's gradcheck: a debugging tool for small inputs.
"""
from __future__ import annotations

from .. import _C


def _as_tuple(x):
    return (x,) if isinstance(x, _C.TensorBase) else tuple(x)


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, **unused) -> bool:
    """True if the Jacobian of func at inputs from autograd matches the numerical one."""
    import numpy as np

    from .. import autograd, no_grad, tensor

    inputs = _as_tuple(inputs)
    diff = [k for k, x in enumerate(inputs) if isinstance(x, _C.TensorBase) and x.requires_grad]
    with no_grad():
        outputs = _as_tuple(func(*inputs))
    for k in diff:
        x = inputs[k]
        if x.dtype != _C.float64:
            raise ValueError(f"gradcheck expects float64 inputs, got {x.dtype} for input {k}")
    for o_idx, out0 in enumerate(outputs):
        n_out = out0.numel()
        for k in diff:
            x = inputs[k]
            # a view of x's memory, indexed by position (reshape(-1) would copy a transposed x)
            arr = x.detach().numpy()
            numerical = np.zeros((x.numel(), n_out))
            for i in range(x.numel()):
                at = np.unravel_index(i, arr.shape)
                orig = arr[at]
                arr[at] = orig + eps
                with no_grad():
                    plus = np.array(_as_tuple(func(*inputs))[o_idx].detach().numpy(), dtype=np.float64).reshape(-1)
                arr[at] = orig - eps
                with no_grad():
                    minus = np.array(_as_tuple(func(*inputs))[o_idx].detach().numpy(), dtype=np.float64).reshape(-1)
                arr[at] = orig
                numerical[i] = (plus - minus) / (2 * eps)
            analytical = np.zeros((x.numel(), n_out))
            for j in range(n_out):
                out = _as_tuple(func(*inputs))[o_idx]
                seed = np.zeros(n_out)
                seed[j] = 1.0
                (g,) = autograd.grad(out, x, tensor(seed.reshape(tuple(out.shape)), dtype=out.dtype),
                                     allow_unused=True)
                if g is not None:
                    analytical[:, j] = np.asarray(g).reshape(-1)
            if not np.allclose(analytical, numerical, atol=atol, rtol=rtol):
                if raise_exception:
                    raise RuntimeError(f"Jacobian mismatch for output {o_idx} with respect to input {k},\n"
                                       f"numerical:{numerical}\nanalytical:{analytical}\n")
                return False
    return True
