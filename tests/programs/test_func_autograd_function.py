"""The "Extending torch.func with autograd.Function" page: Functions in the setup_context style
that leave the library for NumPy (a sort through np.argsort returning the indices and their
inverse, marked non-differentiable; a take whose backward is again a Function), gradients through the
saved inverse permutation (PyTorch 2.13 itself refuses .numpy() inside them under torch.func.grad
and vmap, "Cannot access data pointer of Tensor that doesn't have storage", so the program calls
them eagerly, row by row); then
a MyCube written with setup_context whose second output carries a gradient (dx), differentiated
twice through torch.func.grad(grad(...))."""
import numpy as np

from prog_helpers import compare_program, numpy_of


def numpy_functions(torch, init=None):
    def to_numpy(tensor):
        return tensor.cpu().numpy()

    class NumpyTake(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x, ind, ind_inv, dim):
            device = x.device
            x = to_numpy(x)
            ind = to_numpy(ind)
            return torch.tensor(np.take_along_axis(x, ind, dim), device=device)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, ind, ind_inv, dim = inputs
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output):
            ind, ind_inv = ctx.saved_tensors
            result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
            return result, None, None, None

    class NumpySort(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x, dim):
            device = x.device
            x = to_numpy(x)
            ind = np.argsort(x, axis=dim)
            ind_inv = np.argsort(ind, axis=dim)
            result = np.take_along_axis(x, ind, axis=dim)
            return (torch.tensor(result, device=device), torch.tensor(ind, device=device),
                    torch.tensor(ind_inv, device=device))

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, dim = inputs
            _, ind, ind_inv = output
            ctx.mark_non_differentiable(ind, ind_inv)
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output, _0, _1):
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

    def numpy_sort(x, dim=-1):
        result, _, _ = NumpySort.apply(x, dim)
        return result

    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((3, 5)), dtype=torch.float64)
    weights = torch.tensor(np.linspace(0.1, 1.0, 5), dtype=torch.float64)
    f = lambda v: (numpy_sort(v) * weights).sum()  # noqa: E731
    sorted_rows = torch.stack([numpy_sort(row) for row in x])
    xg = x.clone().requires_grad_(True)
    (grad_x,) = torch.autograd.grad(f(xg), xg)
    xr = x.clone().requires_grad_(True)
    (numpy_sort(xr, 0) ** 2 * 0.5).sum().backward()

    class MyCube(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 3, 3 * x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            return grad_output * dx + grad_dx * 6 * x

    def my_cube(v):
        return MyCube.apply(v)[0]

    point = torch.tensor(0.7, dtype=torch.float64)
    second = torch.func.grad(torch.func.grad(my_cube))(point)
    return {"grad": numpy_of(grad_x), "sorted": numpy_of(sorted_rows), "sort_dim0_grad": numpy_of(xr.grad), "second": second.item()}


def test_numpy_functions_under_transforms():
    ref, got = compare_program(numpy_functions, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got["second"], 6 * 0.7, rtol=1e-12)
