"""The torch.func tutorials: Jacobians, Hessians, hvp and vmap (a linear-tanh predict function,
jacrev with argnums, vjp rows by hand against jacrev, jacfwd, vmap(jacrev(...)) over a batch,
jacrev(jacrev(...)) and hessian, hvp through jvp of grad); per-sample gradients
(functional_call over detached params and buffers, grad of a one-sample loss, vmap with
in_dims=(None, None, 0, 0), compared with the loop of per-sample backward passes); and model
ensembling (stack_module_state, a base copy moved to the 'meta' device (which minitorch lacks: that
test is an expected failure; the same program with the copy on the CPU runs), vmap of functional_call
over minibatches per model and one shared minibatch, checked against each model's own outputs)."""
import copy

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from

D = 6


def jacobians_hessians(torch, init=None):
    F = torch.nn.functional
    ft = torch.func
    hessian, jacfwd, jacrev, jvp, vjp, vmap, grad = ft.hessian, ft.jacfwd, ft.jacrev, ft.jvp, ft.vjp, ft.vmap, ft.grad

    rng = np.random.default_rng(0)
    weight = torch.tensor(rng.standard_normal((D, D)), dtype=torch.float32)
    bias = torch.tensor(rng.standard_normal(D), dtype=torch.float32)
    x = torch.tensor(rng.standard_normal(D), dtype=torch.float32)

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    def compute_jac(xp):
        jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                         for vec in unit_vectors]
        return torch.stack(jacobian_rows)

    xp = x.clone().requires_grad_()
    unit_vectors = torch.eye(D)
    jacobian = compute_jac(xp)
    ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
    _, vjp_fn = vjp(lambda xx: predict(weight, bias, xx), x)
    ft_rows = vmap(vjp_fn)(unit_vectors)
    jac_wb = jacrev(predict, argnums=(0, 1))(weight, bias, x)
    jacfwd_x = jacfwd(predict, argnums=2)(weight, bias, x)
    batch = torch.tensor(rng.standard_normal((5, D)), dtype=torch.float32)
    compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
    batch_jac = compute_batch_jacobian(weight, bias, batch)

    def predict_with_output_summed(weight, bias, x):
        return predict(weight, bias, x).sum(0)

    summed_jac = jacrev(predict_with_output_summed, argnums=2)(weight, bias, batch).movedim(1, 0)
    hess_api = hessian(predict, argnums=2)(weight, bias, x)
    hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
    hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)

    def hvp(f, primals, tangents):
        return jvp(grad(f), primals, tangents)[1]

    def f(v):
        return v.sin().sum()

    v = torch.tensor(rng.standard_normal(D), dtype=torch.float32)
    tangent = torch.tensor(rng.standard_normal(D), dtype=torch.float32)
    return {"jacobian": numpy_of(jacobian), "ft_jacobian": numpy_of(ft_jacobian), "ft_rows": numpy_of(ft_rows[0]),
            "jac_w": numpy_of(jac_wb[0]), "jac_b": numpy_of(jac_wb[1]), "jacfwd_x": numpy_of(jacfwd_x),
            "batch_jac": numpy_of(batch_jac), "summed_jac": numpy_of(summed_jac), "hess": numpy_of(hess_api),
            "hess_fwdfwd": numpy_of(hess_fwdfwd), "hess_revrev": numpy_of(hess_revrev),
            "hvp": numpy_of(hvp(f, (v,), (tangent,))),
            "autograd_jac": numpy_of(torch.autograd.functional.jacobian(lambda xx: predict(weight, bias, xx), x,
                                                                        vectorize=True, strategy="reverse-mode"))}


def per_sample_grads(torch, init=None, batch_size=8):
    nn, F = torch.nn, torch.nn.functional
    functional_call, grad, vmap = torch.func.functional_call, torch.func.grad, torch.func.vmap

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.fc1 = nn.Linear(8 * 2 * 2, 16)
            self.fc2 = nn.Linear(16, 5)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    def loss_fn(predictions, targets):
        return F.nll_loss(predictions, targets)

    torch.manual_seed(0)
    model = SimpleCNN()
    result = {}
    start_from(torch, model, init, result)
    rng = np.random.default_rng(1)
    data = torch.tensor(rng.standard_normal((batch_size, 1, 8, 8)), dtype=torch.float32)
    targets = torch.tensor(rng.integers(0, 5, batch_size))

    def compute_grad(sample, target):
        sample = sample.unsqueeze(0)
        target = target.unsqueeze(0)
        prediction = model(sample)
        loss = loss_fn(prediction, target)
        return torch.autograd.grad(loss, list(model.parameters()))

    def compute_sample_grads(data, targets):
        sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
        sample_grads = zip(*sample_grads)
        return [torch.stack(shards) for shards in sample_grads]

    per_sample = compute_sample_grads(data, targets)
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        return loss_fn(predictions, targets)

    ft_compute_grad = grad(compute_loss)
    ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
    same = [bool(torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5))
            for per_sample_grad, ft_per_sample_grad in zip(per_sample, ft_per_sample_grads.values())]
    result.update(loop={k: numpy_of(g) for k, g in zip(params, per_sample)},
                  vmapped={k: numpy_of(g) for k, g in ft_per_sample_grads.items()}, same=same,
                  shapes=[tuple(g.shape) for g in ft_per_sample_grads.values()])
    return result


def ensembling(torch, init=None, num_models=4, minibatches=3, base_device="meta"):
    nn, F = torch.nn, torch.nn.functional
    functional_call, stack_module_state = torch.func.functional_call, torch.func.stack_module_state

    class SimpleMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(16, 32)
            self.fc2 = nn.Linear(32, 16)
            self.fc3 = nn.Linear(16, 5)

        def forward(self, x):
            x = x.flatten(1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    torch.manual_seed(0)
    models = [SimpleMLP() for _ in range(num_models)]
    result = {}
    start_from(torch, {str(i): m for i, m in enumerate(models)}, init, result)
    rng = np.random.default_rng(2)
    data = torch.tensor(rng.standard_normal((num_models, minibatches, 1, 4, 4)), dtype=torch.float32)
    minibatch = data[0]
    predictions_diff_minibatch_loop = [model(mb) for model, mb in zip(models, data)]
    predictions2 = [model(minibatch) for model in models]
    params, buffers = stack_module_state(models)
    base_model = copy.deepcopy(models[0])
    base_model = base_model.to(base_device)

    def fmodel(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))

    predictions1_vmap = torch.vmap(fmodel)(params, buffers, data)
    predictions2_vmap = torch.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    result.update(
        vmap1=numpy_of(predictions1_vmap), vmap2=numpy_of(predictions2_vmap),
        loop1=numpy_of(torch.stack(predictions_diff_minibatch_loop)), loop2=numpy_of(torch.stack(predictions2)),
        base_device=str(next(base_model.parameters()).device), stacked=sorted((k, tuple(v.shape)) for k, v in params.items()),
        requires_grad=all(v.requires_grad for v in params.values()))
    return result


def test_jacobians_hessians():
    ref, got = compare_program(jacobians_hessians, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["jacobian"], got["ft_jacobian"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["hess"], got["hess_revrev"], rtol=1e-4, atol=1e-5)


def test_per_sample_gradients():
    ref, got = compare_program(per_sample_grads, rtol=1e-4, atol=1e-5)
    assert all(got["same"])


def test_model_ensembling():
    ref, got = compare_program(ensembling, rtol=1e-5, atol=1e-6, base_device="cpu")
    np.testing.assert_allclose(got["vmap1"], got["loop1"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["vmap2"], got["loop2"], rtol=1e-5, atol=1e-6)


def test_model_ensembling_base_on_meta_device():
    ref, got = compare_program(ensembling)
    assert got["base_device"] == "meta"
