"""autograd.functional, as torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp over
minitorch's reverse-mode engine, with PyTorch's argument checks, strict-mode errors and output
structure (a tensor for a tensor, tuples for tuples).

jvp and hvp use the double-backward trick, as PyTorch's do. minitorch has no forward-mode AD, and
its vmap (minitorch.func) is a loop over the batch: `vectorize=True` is accepted and computes the
same Jacobian one row per backward (PyTorch's vectorize=False path), and strategy="forward-mode"
likewise computes it in reverse mode.
"""
from __future__ import annotations

import minitorch

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(inp, arg_name, fn_name):
    """(whether inp was a tuple, inp as a tuple), checking each element is a tensor."""
    is_inp_tuple = isinstance(inp, tuple)
    if not is_inp_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, minitorch.Tensor):
            where = f"the value at index {i}" if is_inp_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where} has type {type(el)}.")
    return is_inp_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Unpacks the tuples the caller did not give (one level, or two for jacobian/hessian)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """Inputs the function is differentiated at: views that keep the caller's graph when
    create_graph, detached leaves otherwise."""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad else inp.detach().requires_grad_(need_graph)
                 for inp in inputs)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], minitorch.Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


_INDEPENDENT = {
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the input. "
               "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
               "and that the hessian depends on the inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect to "
                "input {i} is independent of the input. This is not allowed in strict mode. You should ensure that "
                "your function is twice differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be computed "
               "in a differentiable manner from the input when running in strict mode.",
}


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_INDEPENDENT[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad; None for inputs nothing reaches."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(out, g) for out, g in zip(outputs, grad_outputs) if out is not None and out.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    new_outputs, new_grads = zip(*pairs)
    return minitorch.autograd.grad(new_outputs, inputs, new_grads, allow_unused=True, create_graph=create_graph,
                                   retain_graph=retain_graph)


_ZERO_GRAD = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = ()
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                raise RuntimeError(_ZERO_GRAD[stage].format(i=i))
            grads_i = minitorch.zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        res += (grads_i,)
    return res


def _prepare(func, inputs, v, create_graph, strict, fn_name, v_against):
    """The common start of vjp/jvp/vhp/hvp: inputs, v checked against the inputs ('inputs') or
    the outputs ('outputs'), and the function's outputs."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
    if v_against == "inputs":
        if v is not None:
            _validate_v(v, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if v_against == "outputs":
        if v is not None:
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs


def _check_scalar_output(is_outputs_tuple, outputs, fn_name):
    if is_outputs_tuple or not isinstance(outputs[0], minitorch.Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")


def _last_backward(outputs, of, wrt, v, refs, strict, create_graph, stage, is_outputs_tuple, is_result_tuple):
    """The last backward of vjp/jvp/vhp/hvp (recorded only when create_graph), zeros filled in
    for what it did not reach, results detached unless create_graph, tuples unpacked as given."""
    with minitorch.set_grad_enabled(True if create_graph else minitorch.is_grad_enabled()):
        grad_res = _autograd_grad(of, wrt, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, refs, strict, create_graph, stage)
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_result_tuple))


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs."""
    with minitorch.enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _prepare(func, inputs, v, create_graph, strict, "vjp",
                                                                         "outputs")
    return _last_backward(outputs, outputs, inputs, v, inputs, strict, create_graph, "back",
                          is_outputs_tuple, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick."""
    with minitorch.enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _prepare(func, inputs, v, create_graph, strict, "jvp",
                                                                         "inputs")
        grad_outputs = tuple(minitorch.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    return _last_backward(outputs, grad_inputs, grad_outputs, v, outputs, strict, create_graph, "back_trick",
                          is_outputs_tuple, is_outputs_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at inputs: J[i][j] has shape outputs[i].shape + inputs[j].shape."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
                               'not supported together (yet). Please either set `strict=False` or '
                               '`strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                      "only implemented for `vectorize=True`.")
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
                           "together. Please either set `strict=False` or `vectorize=False`.")
    with minitorch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        jac = ()
        for i, out in enumerate(outputs):
            rows = tuple([] for _ in inputs)  # one backward per output element, as PyTorch's loop
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for el_idx, (rows_el, vj_el, inp_el) in enumerate(zip(rows, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError(f"The jacobian of the user-provided function is independent of input "
                                               f"{i}. This is not allowed in strict mode when create_graph=True.")
                        rows_el.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{el_idx}. This is not allowed in strict mode.")
                        rows_el.append(minitorch.zeros_like(inp_el))
            jac += (tuple(minitorch.stack(r, dim=0).view(out.size() + inputs[k].size()) if r else
                          minitorch.zeros(out.size() + inputs[k].size(), dtype=inputs[k].dtype)
                          for k, r in enumerate(rows)),)
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar func at inputs: H[i][j] has shape inputs[i].shape + inputs[j].shape."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, minitorch.Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar func."""
    with minitorch.enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _prepare(func, inputs, v, create_graph, strict, "vhp",
                                                                         "inputs")
        _check_scalar_output(is_outputs_tuple, outputs, "vhp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    return _last_backward(outputs, jac, inputs, v, inputs, strict, create_graph, "double_back",
                          is_outputs_tuple, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar func, by the double-backward trick."""
    with minitorch.enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _prepare(func, inputs, v, create_graph, strict, "hvp",
                                                                         "inputs")
        _check_scalar_output(is_outputs_tuple, outputs, "hvp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(minitorch.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    return _last_backward(outputs, double_back, grad_jac, v, inputs, strict, create_graph, "double_back_trick",
                          is_outputs_tuple, is_inputs_tuple)
