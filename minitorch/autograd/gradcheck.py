"""gradcheck: compares autograd's gradients with central finite differences, in float64.

One perturbation per input element, as PyTorch's gradcheck: a debugging tool for small inputs.
"""
from __future__ import annotations

from .. import _C


def _as_tuple(x):
    return (x,) if isinstance(x, _C.TensorBase) else tuple(x)


def _forward_jacobian(func, inputs, k: int, o_idx: int, n_out: int):
    """(x.numel(), n_out): row i is the tangent of output o_idx when input k's element i has
    tangent 1 (forward mode, through autograd.forward_ad)."""
    import numpy as np

    from .. import tensor
    from . import forward_ad

    x = inputs[k]
    jac = np.zeros((x.numel(), n_out))
    for i in range(x.numel()):
        seed = np.zeros(x.numel())
        seed[i] = 1.0
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(x.detach(), tensor(seed.reshape(tuple(x.shape)), dtype=x.dtype))
            args = inputs[:k] + (dual,) + inputs[k + 1:]
            tangent = forward_ad.unpack_dual(_as_tuple(func(*args))[o_idx]).tangent
            if tangent is not None:
                jac[i] = np.asarray(tangent.detach()).reshape(-1)
    return jac


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, check_forward_ad: bool = False, check_backward_ad: bool = True,
              **unused) -> bool:
    """True if the Jacobian of func at inputs from autograd (reverse mode when check_backward_ad,
    forward mode when check_forward_ad) matches the numerical one."""
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
            view = x.detach().numpy()  # x's memory, strided as x (reshape(-1) would copy it)
            numerical = np.zeros((x.numel(), n_out))
            for i in range(x.numel()):
                at = np.unravel_index(i, view.shape)
                orig = view[at]
                view[at] = orig + eps
                with no_grad():
                    plus = np.array(_as_tuple(func(*inputs))[o_idx].detach().numpy(), dtype=np.float64).reshape(-1)
                view[at] = orig - eps
                with no_grad():
                    minus = np.array(_as_tuple(func(*inputs))[o_idx].detach().numpy(), dtype=np.float64).reshape(-1)
                view[at] = orig
                numerical[i] = (plus - minus) / (2 * eps)
            if check_forward_ad:
                analytical = _forward_jacobian(func, inputs, k, o_idx, n_out)
                if not np.allclose(analytical, numerical, atol=atol, rtol=rtol):
                    if raise_exception:
                        raise RuntimeError(f"Jacobian computed with forward mode mismatch for output {o_idx} with "
                                           f"respect to input {k},\nnumerical:{numerical}\nanalytical:{analytical}\n")
                    return False
            if not check_backward_ad:
                continue
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


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True, **unused) -> bool:
    """True if the second derivatives of func at inputs from autograd match the numerical ones:
    gradcheck of the function (inputs, grad_outputs) -> grad(func(inputs), inputs, grad_outputs,
    create_graph=True), as torch.autograd.gradgradcheck. Without grad_outputs, random float64 ones
    (seeded, so a failure repeats) of each output's shape are used, and are checked as inputs too."""
    import numpy as np

    from .. import autograd, enable_grad, tensor

    inputs = _as_tuple(inputs)
    diff = [x for x in inputs if isinstance(x, _C.TensorBase) and x.requires_grad]
    if grad_outputs is None:
        outputs = _as_tuple(func(*inputs))
        rng = np.random.default_rng(0)
        grad_outputs = []
        for o in outputs:
            g = tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype)
            if gen_non_contig_grad_outputs and o.dim() > 1:
                g = g.mT.contiguous().mT
            grad_outputs.append(g.requires_grad_(o.dtype.is_floating_point))
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def new_func(*args):
        ins, gos = args[:n_in], args[n_in:]
        with enable_grad():  # gradcheck evaluates its function under no_grad for the numerical part
            outs = _as_tuple(func(*ins))
            keep = [k for k, o in enumerate(outs) if o.requires_grad]
            grads = autograd.grad([outs[k] for k in keep], diff, [gos[k] for k in keep], create_graph=True,
                                  allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
