"""torch.func's autodiff transforms (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian,
linearize) over minitorch's reverse-mode engine.

PyTorch wraps the inputs of each transform at a new "level" and unwraps the results. Here a
transform makes its differentiated inputs fresh leaves (or views, for inputs that already
require grad, so an outer transform or the caller's autograd sees through), runs the function
with grad enabled, and calls autograd.grad. Whether the gradients must themselves be
differentiable (create_graph) is read off the graph: only when the function's outputs reach a
tensor requiring grad other than this transform's own leaves (the input of an enclosing grad,
a captured parameter), which is exactly when an outer level can differentiate them. Results
that reach nothing outside are detached, so grad(f)(x) does not require grad, as in PyTorch.

minitorch has no forward-mode AD (no autograd.forward_ad): jvp uses the double-vjp trick (the
vjp of the vjp, which is linear in its cotangent), so it needs the function's backward formulas
to be differentiable once more; jacfwd computes the same Jacobian in reverse mode, one backward
per output element, as jacrev does.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import minitorch
from ..utils._pytree import tree_flatten, tree_unflatten, treespec_pprint

argnums_t = Union[int, Tuple[int, ...]]

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize"]

_JVP_STR = "jvp(f, primals, tangents)"


class _Levels(threading.local):
    """Per thread: the transforms running now, outermost first (each the ids of the fresh leaves
    it made), and every fresh leaf made since the outermost began, by id (held, so ids stay
    unique): the leaves of finished inner transforms stay in the graphs their results carry, and
    are no more "outside" than the current transform's own."""

    def __init__(self) -> None:
        self.levels: List[set] = []
        self.fresh: Dict[int, Any] = {}


_STATE = _Levels()


class _Level:
    """One running transform (a level, in PyTorch's words)."""

    def __enter__(self) -> "_Level":
        _STATE.levels.append(set())
        return self

    def __exit__(self, *exc: Any) -> None:
        _STATE.levels.pop()
        if not _STATE.levels:
            _STATE.fresh.clear()


def _inner_ids() -> set:
    """Ids of the leaves that are not outside the current transform: its own and those of the
    inner transforms that ran within it."""
    enclosing = set().union(*_STATE.levels[:-1])
    return {i for i in _STATE.fresh if i not in enclosing}


def _reaches_outer(roots: Sequence[Any], fresh_ids: set) -> bool:
    """Whether the autograd graph behind the tensors roots reaches a leaf that requires grad
    and is not one of the transform's own leaves (those whose ids are fresh_ids)."""
    stack = []
    for t in roots:
        if isinstance(t, minitorch.Tensor) and t.requires_grad:
            fn = t.grad_fn
            if fn is None:
                if id(t) not in fresh_ids:
                    return True
            else:
                stack.append(fn)
    seen = {}  # id -> node, which keeps each visited node (and so its id) alive
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        try:
            leaf = node.variable
        except AttributeError:
            leaf = None
        if leaf is not None:
            if id(leaf) not in fresh_ids:
                return True
            continue
        stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    return False


def _unwrap(tree: Any, fresh_ids: set, outer: bool, tensors_only: bool = False) -> Any:
    """The results of a transform: detached unless they reach a tensor outside it (aux results,
    tensors_only, must be tensors, as PyTorch unwraps them)."""

    def one(x: Any) -> Any:
        if tensors_only and not isinstance(x, minitorch.Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
        if isinstance(x, minitorch.Tensor) and x.requires_grad and not (outer and _reaches_outer([x], fresh_ids)):
            return x.detach()
        return x

    leaves, spec = tree_flatten(tree)
    return tree_unflatten([one(x) for x in leaves], spec)


def _create_differentiable(x: Any) -> Any:
    """The transform's own input for x: a fresh leaf, or a view that keeps x's graph."""
    if not isinstance(x, minitorch.Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if x.requires_grad:
        return x.view_as(x)
    leaf = x.detach().requires_grad_()
    _STATE.fresh[id(leaf)] = leaf
    _STATE.levels[-1].add(id(leaf))
    return leaf


def _autograd_grad(outputs: Sequence[Any], inputs: Sequence[Any], grad_outputs: Optional[Sequence[Any]] = None,
                   retain_graph: bool = True, create_graph: bool = True) -> Tuple[Any, ...]:
    """autograd.grad over the outputs that require grad, zeros for inputs nothing reaches."""
    if grad_outputs is None:
        pairs = [(o, None) for o in outputs if o.requires_grad]
    else:
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return tuple(minitorch.zeros_like(x) for x in inputs)
    outs, gos = zip(*pairs)
    res = minitorch.autograd.grad(outs, inputs, None if grad_outputs is None else gos, retain_graph=retain_graph,
                                  create_graph=create_graph, allow_unused=True)
    return tuple(minitorch.zeros_like(x) if g is None else g for g, x in zip(res, inputs))


def _validate_and_wrap_argnum(argnum: Any, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _wrap_argnums(argnums: Any, num_args: int) -> argnums_t:
    """argnums checked and made non-negative, with PyTorch's messages."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        return _validate_and_wrap_argnum(argnums, num_args)
    wrapped = tuple(_validate_and_wrap_argnum(a, num_args) for a in argnums)
    if len(wrapped) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return wrapped


def _differentiable_args(args: tuple, argnums: Optional[argnums_t]):
    """(args with the differentiated ones replaced, the differentiated part as given (an arg
    for an int argnums, a tuple otherwise), its flat fresh tensors, its spec)."""
    args = list(args)
    if argnums is None:
        picked: Any = tuple(args)
    else:
        argnums = _wrap_argnums(argnums, len(args))
        picked = args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)
    flat, spec = tree_flatten(picked)
    fresh = [_create_differentiable(x) for x in flat]
    new = tree_unflatten(fresh, spec)
    if argnums is None:
        args = list(new)
    elif isinstance(argnums, int):
        args[argnums] = new
    else:
        for i, a in zip(argnums, new):
            args[i] = a
    return tuple(args), fresh, spec


def _split_aux(output: Any, has_aux: bool, api: str) -> Tuple[Any, Any]:
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def grad_and_value(func: Callable, argnums: argnums_t = 0, has_aux: bool = False) -> Callable:
    """Returns a function computing (the gradient of func's scalar output with respect to the
    arguments argnums, func's output): (grad, (output, aux)) when has_aux."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _Level(), minitorch.enable_grad():
            args, fresh, spec = _differentiable_args(args, argnums)
            output = func(*args, **kwargs)
            output, aux = _split_aux(output, has_aux, "grad_and_value(f)(*args)")
            if not isinstance(output, minitorch.Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            ids = _inner_ids()
            outer = _reaches_outer([output], ids)
            grads = _autograd_grad((output,), fresh, create_graph=outer)
            grad_input = _unwrap(tree_unflatten(grads, spec), ids, outer)
            output = _unwrap(output, ids, outer)
            if has_aux:
                return grad_input, (output, _unwrap(aux, ids, outer, tensors_only=True))
            return grad_input, output

    return wrapper


def grad(func: Callable, argnums: argnums_t = 0, has_aux: bool = False) -> Callable:
    """Returns a function computing the gradient of func's scalar output with respect to the
    arguments argnums (a pytree of gradients shaped as those arguments; (grad, aux) when has_aux)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def _flat_outputs(out: Any, api: str = "vjp(f, *primals)", call: str = "f(*primals)",
                  floating: bool = True) -> Tuple[List[Any], Any]:
    """The flat outputs of a function that vjp/jacrev (floating) or jvp differentiates, and their
    spec, checked with the messages of api."""
    flat_out, out_spec = tree_flatten(out)
    if len(flat_out) == 0:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {flat_out})")
    for o in flat_out:
        if not isinstance(o, minitorch.Tensor):
            raise RuntimeError(f"{api}: expected {call} to return only tensors, got unsupported type {type(o)}")
    for o in flat_out if floating else ():
        if not (o.is_floating_point() or o.is_complex()):
            raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor "
                               f"with dtype {o.dtype}")
    return flat_out, out_spec


def _run_for_vjp(func: Callable, args: tuple, argnums: Optional[argnums_t], has_aux: bool):
    """func run on its differentiable arguments, inside the caller's level: (fresh leaves, their
    spec, output, aux, flat output, its spec, the ids of the level's leaves, whether the output
    reaches a tensor outside)."""
    args, fresh, spec = _differentiable_args(args, argnums)
    out, aux = _split_aux(func(*args), has_aux, "vjp(f, *primals)")
    flat_out, out_spec = _flat_outputs(out)
    ids = _inner_ids()
    return fresh, spec, out, aux, flat_out, out_spec, ids, _reaches_outer(flat_out, ids)


def _vjp_with_argnums(func: Callable, *primals: Any, argnums: Optional[argnums_t] = None, has_aux: bool = False):
    with _Level(), minitorch.enable_grad():
        fresh, spec, out, aux, flat_out, out_spec, ids, outer = _run_for_vjp(func, primals, argnums, has_aux)
        held = [_STATE.fresh[i] for i in ids]  # kept alive (their ids unique) while vjp_fn lives
        results = _unwrap(out, ids, outer)

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: Optional[bool] = None) -> Any:
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {treespec_pprint(cot_spec)}, primal output: "
                               f"{treespec_pprint(out_spec)}")
        needs_graph = outer or any(isinstance(c, minitorch.Tensor) and c.requires_grad for c in flat_cot)
        if create_graph is None:
            create_graph = minitorch.is_grad_enabled() and needs_graph
        with minitorch.enable_grad():
            res = _autograd_grad(flat_out, fresh, flat_cot, retain_graph=retain_graph, create_graph=create_graph)
        return _unwrap(tree_unflatten(res, spec), ids, create_graph)

    vjp_fn._leaves = held  # type: ignore[attr-defined]
    if has_aux:
        return results, vjp_fn, _unwrap(aux, ids, outer, tensors_only=True)
    return results, vjp_fn


def vjp(func: Callable, *primals: Any, has_aux: bool = False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives the vector-Jacobian products with respect
    to every primal, as a tuple shaped as primals; (output, vjp_fn, aux) when has_aux."""
    return _vjp_with_argnums(func, *primals, has_aux=has_aux)


def _jvp_with_argnums(func: Callable, primals: Any, tangents: Any, argnums: Optional[argnums_t], *,
                      strict: bool = False, has_aux: bool = False):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP_STR}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    if argnums is None:
        diff = primals
    else:
        wrapped = _wrap_argnums(argnums, len(primals))
        diff = (primals[wrapped],) if isinstance(wrapped, int) else tuple(primals[i] for i in wrapped)
    flat_primals, primals_spec = tree_flatten(diff)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{_JVP_STR}: Expected primals and tangents to have the same python structure. For "
                           "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals with "
                           f"structure {primals_spec} and tangents with structure {tangents_spec}")
    for name, flat in (("primals", flat_primals), ("tangents", flat_tangents)):
        if len(flat) == 0:
            raise RuntimeError(f"{_JVP_STR}: Expected {name} to contain at least one Tensor.")
        for x in flat:
            if not isinstance(x, minitorch.Tensor):
                raise RuntimeError(f"{_JVP_STR}: Expected {name} to only contain Tensors, got {type(x)}")
    for p, t in zip(flat_primals, flat_tangents):
        if p.shape != t.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")
    with _Level(), minitorch.enable_grad():
        args, fresh, _ = _differentiable_args(primals, argnums)
        out = func(*args)
        out, aux = _split_aux(out, has_aux, _JVP_STR)
        flat_out, out_spec = _flat_outputs(out, _JVP_STR, "f(*args)", floating=False)
        ids = _inner_ids()
        outer = _reaches_outer(flat_out, ids) or any(t.requires_grad for t in flat_tangents)
        # The double-vjp trick: g(u) = J^T u is linear in u, so the vjp of g with the tangent t
        # is (J^T)^T t = J t.
        live = [k for k, o in enumerate(flat_out) if o.requires_grad]
        tangents_out: List[Any] = [None] * len(flat_out)
        if live:
            us = [minitorch.zeros_like(flat_out[k], requires_grad=True) for k in live]
            g = minitorch.autograd.grad([flat_out[k] for k in live], fresh, us, create_graph=True, allow_unused=True)
            pairs = [(gi, ti) for gi, ti in zip(g, flat_tangents) if gi is not None and gi.requires_grad]
            if pairs:
                jv = minitorch.autograd.grad([p[0] for p in pairs], us, [p[1] for p in pairs], create_graph=outer,
                                             allow_unused=True)
                for k, v in zip(live, jv):
                    tangents_out[k] = v
        for k, o in enumerate(flat_out):
            if tangents_out[k] is None:
                if strict:
                    raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
                                       "inputs. This is not allowed with strict=True.")
                tangents_out[k] = minitorch.zeros_like(o)
        primals_out = _unwrap(out, ids, outer)
        tangents_out = _unwrap(tree_unflatten(tangents_out, out_spec), ids, outer)
        if has_aux:
            return primals_out, tangents_out, _unwrap(aux, ids, outer, tensors_only=True)
        return primals_out, tangents_out


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), the Jacobian-vector product with tangents), computed by the double-vjp
    trick (minitorch has no forward-mode AD); (output, jvp_out, aux) when has_aux."""
    return _jvp_with_argnums(func, primals, tangents, None, strict=strict, has_aux=has_aux)


def linearize(func: Callable, *primals: Any):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian-vector product at primals.
    Each call recomputes func (PyTorch traces it once)."""
    output = func(*primals)
    flat_primals, primals_spec = tree_flatten(primals)

    def jvp_fn(*tangents: Any) -> Any:
        flat_tangents, tangents_spec = tree_flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {tangents_spec} to have the same argument structure as the "
                               f"primals {primals_spec}")
        for idx, (p, t) in enumerate(zip(flat_primals, flat_tangents)):
            for what, a, b in (("shape", t.shape, p.shape), ("device", t.device, p.device),
                               ("dtype", t.dtype, p.dtype)):
                if a != b:
                    raise RuntimeError(f"tangent:{idx} with {what} {a} in flattened pytree doesn't match the {what} "
                                       f"{b} of the corresponding primal.")
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


def _jacobian(func: Callable, argnums: argnums_t, has_aux: bool, api: str, args: tuple) -> Any:
    """func's Jacobian with respect to args[argnums]: for each output leaf, the structure of the
    differentiated arguments, each tensor of shape out.shape + arg.shape."""
    for idx, x in enumerate(tree_flatten(args)[0]):
        if isinstance(x, minitorch.Tensor) and x.is_complex():
            raise RuntimeError(f"{api}: Expected all inputs to be real but received complex tensor at flattened "
                               f"input idx: {idx}")
    with _Level(), minitorch.enable_grad():
        fresh, primals_spec, out, aux, flat_out, out_spec, ids, outer = _run_for_vjp(func, args, argnums, has_aux)
        per_output = []
        for o in flat_out:
            n = o.numel()
            rows: List[List[Any]] = [[] for _ in fresh]
            if o.requires_grad and n > 0:
                basis = minitorch.eye(n, dtype=o.dtype, device=o.device).view((n,) + tuple(o.shape))
                for k in range(n):
                    gk = _autograd_grad((o,), fresh, (basis[k],), create_graph=outer)
                    for r, g in zip(rows, gk):
                        r.append(g)
            jac = []
            for r, x in zip(rows, fresh):
                shape = tuple(o.shape) + tuple(x.shape)
                jac.append(minitorch.stack(r).view(shape) if r else minitorch.zeros(shape, dtype=x.dtype,
                                                                                    device=x.device))
            per_arg = tree_unflatten(jac, primals_spec)
            per_output.append(per_arg)
        result = _unwrap(tree_unflatten(per_output, out_spec), ids, outer)
        if has_aux:
            return result, _unwrap(aux, ids, outer, tensors_only=True)
        return result


def jacrev(func: Callable, argnums: argnums_t = 0, *, has_aux: bool = False, chunk_size: Optional[int] = None,
           _preallocate_and_copy: bool = False) -> Callable:
    """Returns a function computing func's Jacobian with respect to the arguments argnums in
    reverse mode, one backward per output element (chunk_size only groups them in PyTorch)."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        return _jacobian(func, argnums, has_aux, "jacrev", args)

    return wrapper


def jacfwd(func: Callable, argnums: argnums_t = 0, has_aux: bool = False, *, randomness: str = "error") -> Callable:
    """Returns a function computing func's Jacobian with respect to the arguments argnums. PyTorch
    computes it in forward mode; minitorch has none and computes the same Jacobian in reverse mode."""
    from ._vmap import _check_no_random, _check_randomness_arg, _rng_states

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        # PyTorch vmaps func over the basis of the inputs, with this randomness
        _check_randomness_arg(randomness)
        states = _rng_states() if randomness == "error" else None
        result = _jacobian(func, argnums, has_aux, "jacfwd", args)
        if states is not None:
            _check_no_random(states)
        return result

    return wrapper


def hessian(func: Callable, argnums: argnums_t = 0) -> Callable:
    """Returns a function computing the Hessian of func with respect to the arguments argnums:
    jacfwd(jacrev(func, argnums), argnums), as PyTorch defines it."""
    return jacfwd(jacrev(func, argnums), argnums)
