"""gradcheck and gradgradcheck: autograd's gradients against central finite differences, as
torch.autograd.gradcheck does it.

Slow mode compares whole Jacobians: one perturbation per input element (columns), one backward per
output element (rows), each backward run twice to see that it is reentrant (nondet_tol). Fast mode
compares one number per (input, output) pair, v^T J u for random u and v: one directional
derivative instead of numel perturbations, one backward instead of numel, with atol scaled by
sum(u) sum(v) as PyTorch's. A complex output is checked as its real and imaginary parts (the
backward of Re(o_j) is grad_output e_j, of Im(o_j) is 1j e_j); the derivative with respect to a
complex input z = a + ib is d/da + i d/db, PyTorch's convention for the gradient of a real function.

Then, as PyTorch: backward with zero grad_outputs must give zero gradients of the inputs' dtypes and
sizes (check_undefined_grad: minitorch has no undefined-gradient tensor, so zeros stand for it),
and check_batched_grad compares autograd.grad(is_grads_batched=True) with one call per grad_output.
Numbers are taken in float64 (complex128); other float inputs warn, as PyTorch's."""
from __future__ import annotations

import warnings

from .. import _C


class GradcheckError(RuntimeError):
    """Error raised by gradcheck and gradgradcheck."""


FAILED_BATCHED_GRAD_MSG = (
    "gradcheck or gradgradcheck failed while testing batched gradient computation: autograd.grad "
    "with is_grads_batched=True gave other gradients than one call per grad_output. Pass "
    "check_batched_grad=False to skip this check.")

FAST_FAIL_SLOW_OK_MSG = (
    "Fast gradcheck failed but element-wise differences are small. This means that the test might've "
    "passed in slow_mode! Pass fast_mode=False to check the whole Jacobians.")


def _as_tuple(x):
    return (x,) if isinstance(x, _C.TensorBase) else tuple(x)


def _np():
    import numpy as np

    return np


def _values(t):
    """t's values, flat, as a float64 (complex128) NumPy array."""
    np = _np()
    a = np.asarray(t.detach().cpu().resolve_conj().numpy())
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64).reshape(-1)


def _check_inputs(inputs):
    any_grad = False
    for idx, x in enumerate(inputs):
        if not (isinstance(x, _C.TensorBase) and x.requires_grad):
            continue
        if x.dtype not in (_C.float64, _C.complex128):
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or "
                          "complex. This check will likely fail if all the inputs are not of double precision "
                          "floating point or complex. ", stacklevel=3)
        if not all(st > 0 or sz <= 1 for st, sz in zip(x.stride(), x.shape)):
            raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs "
                               "that are non-overlapping to be able to compute the numerical gradients correctly. "
                               "You should call .contiguous on the input before passing it to gradcheck.")
        any_grad = True
    if not any_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")


class _Perturb:
    """Sets element i of input x to its value plus a (complex) step and back: through a NumPy view
    of x's memory where x is a CPU tensor, by indexing elsewhere."""

    def __init__(self, x):
        np = _np()
        self.shape = tuple(x.shape)
        self.view = None
        self.x = x.detach()
        if x.device.type == "cpu" and not x.is_conj():
            self.view = self.x.numpy()
        self.orig = _values(x)
        self.is_complex = np.iscomplexobj(self.orig)

    def set(self, i, delta):
        np = _np()
        at = np.unravel_index(i, self.shape) if self.shape else ()
        value = self.orig[i] + delta
        if not self.is_complex:
            value = value.real
        if self.view is not None:
            self.view[at] = value
        else:
            from .. import no_grad

            with no_grad():
                self.x[tuple(int(k) for k in at)] = value.item() if hasattr(value, "item") else value

    def reset(self, i):
        self.set(i, 0.0)

    def set_all(self, delta):
        """Every element moved by delta (a flat array): one assignment through the view."""
        if self.view is None:
            for i in range(self.orig.size):
                self.set(i, delta[i])
            return
        value = self.orig + delta
        self.view[...] = (value if self.is_complex else value.real).reshape(self.shape)


def _eval(func, inputs, out_idx):
    from .. import no_grad

    with no_grad():
        outs = _as_tuple(func(*inputs))
    return [_values(outs[k]) for k in out_idx]


def _parts(o):
    """(name, c): the real-valued parts of output o checked, Re(conj(c) o)."""
    return (("real", 1.0), ("imaginary", 1j)) if o.is_complex() else (("real", 1.0),)


def _numerical_jacobians(func, inputs, k, out_idx, eps):
    """For input k: for each output in out_idx, (x.numel(), o.numel()) complex128 with
    J[i, j] = d o_j / d a_i + i d o_j / d b_i (b only for a complex input), o_j complex."""
    np = _np()
    p = _Perturb(inputs[k])
    n = p.orig.size
    steps = (eps, 1j * eps) if p.is_complex else (eps,)
    jac = None
    for i in range(n):
        for s, step in enumerate(steps):
            p.set(i, step)
            plus = _eval(func, inputs, out_idx)
            p.set(i, -step)
            minus = _eval(func, inputs, out_idx)
            p.reset(i)
            if jac is None:
                jac = [np.zeros((n, len(pl), 2), dtype=np.complex128) for pl in plus]
            for J, a, b in zip(jac, plus, minus):
                J[i, :, s] = (a - b) / (2 * eps)
    if jac is None:
        outs = _eval(func, inputs, out_idx)
        return [np.zeros((0, o.size, 2), dtype=np.complex128) for o in outs]
    return jac


def _real_part_jacobian(J, c):
    """J[..., 0] is d o / d a, J[..., 1] is d o / d b: the Jacobian of Re(conj(c) o) in
    PyTorch's convention, d/da + i d/db."""
    cc = complex(c).conjugate()
    return (cc * J[..., 0]).real + 1j * (cc * J[..., 1]).real


def _vjp(out, diffs, g):
    from .. import autograd

    return autograd.grad(out, diffs, g, retain_graph=True, allow_unused=True)


def _grad_output(o, j, c):
    from .. import zeros

    g = zeros(tuple(o.shape), dtype=o.dtype, device=o.device)
    if j is not None:
        g.view(-1)[j] = c
    return g


def _grad_rows(grads, diffs, check_grad_dtypes):
    """Each input's gradient, flat, complex128; dtype and size checked."""
    np = _np()
    rows = []
    for g, x in zip(grads, diffs):
        if g is None:
            rows.append(np.zeros(x.numel(), dtype=np.complex128))
            continue
        if check_grad_dtypes and g.dtype != x.dtype:
            raise GradcheckError("Gradient has dtype mismatch")
        if g.numel() != x.numel():
            raise GradcheckError("Analytical gradient has incorrect size")
        rows.append(_values(g).astype(np.complex128))
    return rows


def _analytical(o, diffs, vs, nondet_tol, check_grad_dtypes):
    """For each grad_output in vs: each input's vjp (flat), computed twice (reentrancy)."""
    np = _np()
    first = [_grad_rows(_vjp(o, diffs, v), diffs, check_grad_dtypes) for v in vs]
    second = [_grad_rows(_vjp(o, diffs, v), diffs, False) for v in vs]
    for r1, r2 in zip(first, second):
        for a, b in zip(r1, r2):
            if a.size and np.max(np.abs(a - b)) > nondet_tol:
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
                    "times gives different values, although analytical gradient matches numerical gradient."
                    f"The tolerance for nondeterminism was {nondet_tol}.")
    return first


def _show(a):
    np = _np()
    return np.array2string(a.real if not np.iscomplexobj(a) or not np.any(a.imag) else a, precision=4,
                           max_line_width=100)


def _mismatch(out_i, in_k, part, complex_out, numerical, analytical, mode=""):
    prefix = f"While considering the {part} part of complex outputs only, " if complex_out else ""
    return (f"{prefix}Jacobian {mode}mismatch for output {out_i:d} with respect to input {in_k:d},\n"
            f"numerical:{_show(numerical)}\nanalytical:{_show(analytical)}\n")


def _allclose(a, b, rtol, atol):
    np = _np()
    return np.allclose(a, b, rtol=rtol, atol=atol)


def _check_zero_numerical(func, inputs, diff_idx, eps, tol):
    np = _np()
    outs = _as_tuple(func(*inputs))
    for k in diff_idx:
        for J in _numerical_jacobians(func, inputs, k, range(len(outs)), eps):
            if J.size and np.max(np.abs(J)) > tol:
                raise GradcheckError("Numerical gradient for function expected to be zero")


def _slow(func, inputs, diff_idx, outs, out_idx, eps, rtol, atol, nondet_tol, check_grad_dtypes):
    np = _np()
    diffs = [inputs[k] for k in diff_idx]
    numerical = [_numerical_jacobians(func, inputs, k, out_idx, eps) for k in diff_idx]
    for i, o in enumerate(outs):
        for part, c in _parts(o):
            rows = _analytical(o, diffs, [_grad_output(o, j, c) for j in range(o.numel())], nondet_tol,
                               check_grad_dtypes)
            for kk, k in enumerate(diff_idx):
                num = _real_part_jacobian(numerical[kk][i], c)
                ana = (np.stack([r[kk] for r in rows], axis=1) if rows
                       else np.zeros((diffs[kk].numel(), 0), dtype=np.complex128))
                if not _allclose(ana, num, rtol, atol):
                    raise GradcheckError(_mismatch(i, k, part, o.is_complex(), num, ana))


def _fast(func, inputs, diff_idx, outs, out_idx, eps, rtol, atol, nondet_tol, check_grad_dtypes):
    """v^T J u for each (input, output) pair, u and v random and non-negative (seeded: a failure
    repeats), with atol scaled by sum(u) sum(v)."""
    np = _np()
    rng = np.random.default_rng(0)
    diffs = [inputs[k] for k in diff_idx]
    us = []
    for x in diffs:
        u = rng.random(x.numel())
        us.append(u / (np.linalg.norm(u) or 1.0))
    # J u for each input k, by the directional derivative along u (along i u for the imaginary part)
    ju = []
    for k, u in zip(diff_idx, us):
        p = _Perturb(inputs[k])
        per_out = []
        for s, step in enumerate((1.0, 1j) if p.is_complex else (1.0,)):
            p.set_all(step * eps * u)
            plus = _eval(func, inputs, out_idx)
            p.set_all(-step * eps * u)
            minus = _eval(func, inputs, out_idx)
            p.set_all(np.zeros(u.size))
            for q, (a, b) in enumerate(zip(plus, minus)):
                if s == 0:
                    per_out.append(np.zeros((a.size, 2), dtype=np.complex128))
                per_out[q][:, s] = (a - b) / (2 * eps)
        ju.append(per_out)
    for i, o in enumerate(outs):
        for part, c in _parts(o):
            v = rng.random(o.numel())
            v = v / (np.linalg.norm(v) or 1.0)
            from .. import tensor

            g = tensor(v.reshape(tuple(o.shape)), dtype=o.dtype, device=o.device) * c
            (rows,) = _analytical(o, diffs, [g], nondet_tol, check_grad_dtypes)
            for kk, k in enumerate(diff_idx):
                num = np.dot(v, _real_part_jacobian(ju[kk][i], c))
                ana = np.dot(rows[kk], us[kk])
                tol = atol * us[kk].sum() * v.sum() * (2 if diffs[kk].is_complex() else 1)
                if not _allclose(ana, num, rtol, tol):
                    raise GradcheckError(_mismatch(i, k, part, o.is_complex(), np.array(num), np.array(ana))
                                         + _slow_mode_detail(func, inputs, k, i, out_idx, o, c, eps, rtol, atol))


def _slow_mode_detail(func, inputs, k, i, out_idx, o, c, eps, rtol, atol):
    """What slow mode finds for the pair fast mode rejected, as PyTorch's message adds."""
    np = _np()
    num = _real_part_jacobian(_numerical_jacobians(func, inputs, k, [out_idx[i]], eps)[0], c)
    ana = np.stack([_grad_rows(_vjp(o, [inputs[k]], _grad_output(o, j, c)), [inputs[k]], False)[0]
                    for j in range(o.numel())], axis=1) if o.numel() else num
    diff = np.max(np.abs(num - ana)) if num.size else 0.0
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed \n"
           "in fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
           f"Numerical:\n {_show(num)}\nAnalytical:\n{_show(ana)}\n\n"
           f"The max per-element difference (slow mode) is: {diff}.\n")
    return msg + (FAST_FAIL_SLOW_OK_MSG if _allclose(ana, num, rtol, atol) else "")


def _forward_ad(func, inputs, diff_idx, out_idx, eps, rtol, atol, fast_mode):
    """Jacobian-vector products from forward mode (autograd.forward_ad) against finite differences:
    every column (slow) or J u (fast), along the real (and, for a complex input, the imaginary)
    direction of the input."""
    np = _np()
    from .. import tensor
    from . import forward_ad

    rng = np.random.default_rng(0)
    for k in diff_idx:
        x = inputs[k]
        numerical = _numerical_jacobians(func, inputs, k, out_idx, eps)
        if fast_mode:
            u = rng.random(x.numel())
            seeds = [u / (np.linalg.norm(u) or 1.0)]
        else:
            seeds = list(np.eye(x.numel()))
        for s, step in enumerate((1.0, 1j) if x.is_complex() else (1.0,)):
            got = [[] for _ in out_idx]
            for seed in seeds:
                with forward_ad.dual_level():
                    t = tensor((step * seed).reshape(tuple(x.shape)), dtype=x.dtype, device=x.device)
                    dual = forward_ad.make_dual(x.detach(), t)
                    outs = _as_tuple(func(*(inputs[:k] + (dual,) + inputs[k + 1:])))
                    for q, j in enumerate(out_idx):
                        tangent = forward_ad.unpack_dual(outs[j]).tangent
                        got[q].append(np.zeros(outs[j].numel(), dtype=np.complex128) if tangent is None
                                      else _values(tangent).astype(np.complex128))
            for q, J in enumerate(numerical):
                num = J[..., s]
                if fast_mode:
                    num = np.dot(seeds[0], num)[None]
                ana = np.stack(got[q]) if got[q] else num
                if not _allclose(ana, num, rtol, atol):
                    raise GradcheckError(_mismatch(q, k, "real", False, num, ana, "computed with forward mode "))


def _check_batched_grad(inputs, diff_idx, o, i):
    from .. import autograd, randn_like, stack, zeros

    diffs = [inputs[k] for k in diff_idx]

    def vjp(g, **kw):
        res = autograd.grad(o, diffs, g, retain_graph=True, allow_unused=True, **kw)
        return [r if r is not None else zeros(((g.shape[0],) if kw else ()) + tuple(x.shape), dtype=x.dtype)
                for r, x in zip(res, diffs)]

    gos = [randn_like(o) for _ in range(2)]
    expected = [stack(s) for s in zip(*[vjp(g) for g in gos])]
    try:
        result = vjp(stack(gos), is_grads_batched=True)
    except RuntimeError as ex:
        raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n{FAILED_BATCHED_GRAD_MSG}") from ex
    for kk, (res, exp) in enumerate(zip(result, expected)):
        if not res.allclose(exp):
            raise GradcheckError(f"For output {i} and input {kk}:\n\n{FAILED_BATCHED_GRAD_MSG}\n\nGot:\n{res}\n\n"
                                 f"Expected:\n{exp}")


def _check_zero_grad_outputs(inputs, diff_idx, outs, undefined):
    """Backward of zero grad_outputs: zero gradients of the inputs' dtypes and sizes. PyTorch runs
    this once with zeros (is backward multiplied by grad_output) and once with undefined gradients
    (check_undefined_grad); minitorch's undefined gradient is a zero tensor, so one run is both."""
    from .. import autograd

    diffs = [inputs[k] for k in diff_idx]
    try:
        grads = autograd.grad(list(outs), diffs, [_grad_output(o, None, 0) for o in outs], allow_unused=True,
                              retain_graph=True)
    except RuntimeError as e:
        if not undefined:
            raise
        raise GradcheckError("Expected backward function to handle undefined output grads. Please look at "
                             "\"Notes about undefined output gradients\" in \"tools/autograd/derivatives.yaml\"") from e
    for g, x in zip(grads, diffs):
        if g is None:
            continue
        if not bool(g.eq(0).all()):
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype != x.dtype:
            raise GradcheckError("grad is incorrect type")
        if g.device != x.device:
            raise GradcheckError("grad is incorrect device")
        if tuple(g.shape) != tuple(x.shape):
            raise GradcheckError("grad is incorrect size")


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked=None) -> bool:
    """True if the gradients of func at inputs from autograd match finite differences; otherwise
    raises GradcheckError (a RuntimeError), or returns False when raise_exception is False."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        return _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol, check_undefined_grad,
                          check_grad_dtypes, check_batched_grad, check_forward_ad, check_backward_ad, fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
               check_batched_grad, check_forward_ad, check_backward_ad, fast_mode):
    _check_inputs(inputs)
    diff_idx = [k for k, x in enumerate(inputs) if isinstance(x, _C.TensorBase) and x.requires_grad]
    func_out = _as_tuple(func(*inputs))
    out_idx = [j for j, o in enumerate(func_out) if isinstance(o, _C.TensorBase) and o.requires_grad]
    outs = [func_out[j] for j in out_idx]
    if not outs:
        _check_zero_numerical(func, inputs, diff_idx, eps, nondet_tol)
        return True
    if check_forward_ad:
        _forward_ad(func, inputs, diff_idx, out_idx, eps, rtol, atol, fast_mode)
    if not check_backward_ad:
        return True
    (_fast if fast_mode else _slow)(func, inputs, diff_idx, outs, out_idx, eps, rtol, atol, nondet_tol,
                                    check_grad_dtypes)
    if check_batched_grad:
        for i, o in enumerate(outs):
            _check_batched_grad(inputs, diff_idx, o, i)
    _check_zero_grad_outputs(inputs, diff_idx, outs, check_undefined_grad)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """True if the second derivatives of func at inputs from autograd match the numerical ones:
    gradcheck of the function (inputs, grad_outputs) -> grad(func(inputs), inputs, grad_outputs,
    create_graph=True), as torch.autograd.gradgradcheck. Without grad_outputs, random float64 ones
    (seeded, so a failure repeats) of each output's shape are used, and are checked as inputs too."""
    np = _np()
    from .. import autograd, enable_grad, tensor

    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    diff = [x for x in inputs if isinstance(x, _C.TensorBase) and x.requires_grad]
    if grad_outputs is None:
        outputs = _as_tuple(func(*inputs))
        rng = np.random.default_rng(0)
        grad_outputs = []
        for o in outputs:
            g = tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, device=o.device)
            if gen_non_contig_grad_outputs and o.dim() > 1:
                g = g.mT.contiguous().mT
            grad_outputs.append(g.requires_grad_(o.dtype.is_floating_point or o.dtype.is_complex))
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

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev,
                     fast_mode=fast_mode)
