"""Two tutorials that change how a layer computes its weight: parametrizations
(parametrize.register_parametrization of a Symmetric module, of a MatrixExponential on a skew
part and of a chain of two; right_inverse used when the weight is assigned; the
parametrizations.weight.original Parameter trained by SGD; parametrize.cached(); is_parametrized;
remove_parametrizations with leave_parametrized; nn.utils.parametrizations.orthogonal); and
fusing Convolution and BatchNorm into one custom autograd.Function (the convolution's and batch
norm's backward written out with F.conv2d, conv2d_input/conv2d_weight from
torch.nn.grad, a BatchNorm without affine written as sums over (0, 2, 3), gradcheck in float64,
a FusedConvBN module trained with SGD against the unfused nn.Conv2d + nn.BatchNorm2d)."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def parametrizations(torch, init=None, steps=5):
    nn = torch.nn
    parametrize = torch.nn.utils.parametrize

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)

    class MatrixExponential(nn.Module):
        def forward(self, X):
            return torch.matrix_exp(X)

    class NoisyParametrization(nn.Module):
        def forward(self, X):
            return X * 1.0

        def right_inverse(self, Z):
            return Z

    torch.manual_seed(0)
    layer = nn.Linear(3, 3)
    orth_layer = nn.Linear(3, 3)
    result = {}
    start_from(torch, {"layer": layer, "orth": orth_layer}, init, result)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    A = layer.weight
    result.update(symmetric=bool(torch.allclose(A, A.T)), sym=numpy_of(A), is_param=parametrize.is_parametrized(layer),
                  is_param_w=parametrize.is_parametrized(layer, "weight"),
                  is_param_b=parametrize.is_parametrized(layer, "bias"),
                  keys=sorted(layer.state_dict().keys()),
                  original=numpy_of(layer.parametrizations.weight.original))
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((8, 3)), dtype=torch.float32)
    y = torch.tensor(rng.standard_normal((8, 3)), dtype=torch.float32)
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        loss = ((layer(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    result.update(losses=losses, trained=numpy_of(layer.weight), still_symmetric=bool(torch.allclose(layer.weight, layer.weight.T)))
    with parametrize.cached():
        cached = layer(x) + layer(x)
    result["cached"] = numpy_of(cached)

    parametrize.register_parametrization(orth_layer, "weight", Skew())
    parametrize.register_parametrization(orth_layer, "weight", MatrixExponential())
    Q = orth_layer.weight
    result.update(orthogonal=numpy_of(Q.T @ Q), chain=[type(p).__name__ for p in orth_layer.parametrizations.weight])
    X = torch.tensor(rng.standard_normal((3, 3)), dtype=torch.float32)
    sym = nn.Linear(3, 3)
    parametrize.register_parametrization(sym, "weight", NoisyParametrization())
    sym.weight = X
    result["assigned"] = numpy_of(sym.weight)
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
    result.update(removed=numpy_of(layer.weight), removed_is_param=type(layer.weight).__name__,
                  removed_flag=parametrize.is_parametrized(layer))
    ortho = nn.utils.parametrizations.orthogonal(nn.Linear(4, 4))
    w = ortho.weight
    result["builtin_orthogonal"] = numpy_of(w @ w.T)
    return result


def fused_conv_bn(torch, init=None, steps=3):
    nn, F = torch.nn, torch.nn.functional

    def convolution_backward(grad_out, X, weight):
        grad_input = F.conv2d(X.transpose(0, 1), grad_out.transpose(0, 1)).transpose(0, 1)
        grad_X = torch.nn.grad.conv2d_input(X.shape, weight, grad_out)
        return grad_X, grad_input

    def unsqueeze_all(t):
        return t[None, :, None, None]

    def batch_norm_backward(grad_out, X, sum, sqrt_var, N, eps):
        tmp = ((X - unsqueeze_all(sum) / N) * grad_out).sum(dim=(0, 2, 3))
        tmp *= -1
        d_denom = tmp / (sqrt_var + eps) ** 2
        d_var = d_denom / (2 * sqrt_var)
        d_mean_dx = grad_out / unsqueeze_all(sqrt_var + eps)
        d_mean_dx = unsqueeze_all(-d_mean_dx.sum(dim=(0, 2, 3)) / N)
        grad_input = X * unsqueeze_all(d_var * N)
        grad_input += unsqueeze_all(-d_var * sum)
        grad_input *= 2 / ((N - 1) * N)
        grad_input += d_mean_dx
        grad_input *= unsqueeze_all(sqrt_var + eps)
        grad_input += grad_out
        grad_input /= unsqueeze_all(sqrt_var + eps)
        return grad_input

    class FusedConvBN2DFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, X, conv_weight, eps=1e-3):
            assert X.ndim == 4
            ctx.save_for_backward(X, conv_weight)
            X = F.conv2d(X, conv_weight)
            sum = X.sum(dim=(0, 2, 3))
            var = X.var(unbiased=True, dim=(0, 2, 3))
            N = X.numel() / X.size(1)
            sqrt_var = torch.sqrt(var)
            ctx.eps = eps
            ctx.sum = sum
            ctx.N = N
            ctx.sqrt_var = sqrt_var
            mean = sum / N
            denom = sqrt_var + eps
            out = X - unsqueeze_all(mean)
            out /= unsqueeze_all(denom)
            return out

        @staticmethod
        def backward(ctx, grad_out):
            X, conv_weight, = ctx.saved_tensors
            X_conv_out = F.conv2d(X, conv_weight)
            grad_out = batch_norm_backward(grad_out, X_conv_out, ctx.sum, ctx.sqrt_var, ctx.N, ctx.eps)
            grad_X, grad_input = convolution_backward(grad_out, X, conv_weight)
            return grad_X, grad_input, None, None, None, None, None

    class FusedConvBN(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, exp_avg_factor=0.1, eps=1e-3):
            super().__init__()
            weight_shape = (out_channels, in_channels, kernel_size, kernel_size)
            self.conv_weight = nn.Parameter(torch.empty(*weight_shape))
            self.eps = eps
            self.reset_parameters()

        def forward(self, X):
            return FusedConvBN2DFunction.apply(X, self.conv_weight, self.eps)

        def reset_parameters(self) -> None:
            nn.init.kaiming_uniform_(self.conv_weight, a=np.sqrt(5))

    rng = np.random.default_rng(3)
    X = torch.tensor(rng.random((2, 3, 4, 5)), dtype=torch.double, requires_grad=True)
    weight = torch.tensor(rng.random((5, 3, 3, 3)), dtype=torch.double, requires_grad=True)
    result = {"gradcheck": torch.autograd.gradcheck(FusedConvBN2DFunction.apply, (X, weight))}

    torch.manual_seed(0)
    fused = FusedConvBN(1, 4, 3)
    unfused = nn.Sequential(nn.Conv2d(1, 4, 3, bias=False), nn.BatchNorm2d(4, affine=False, eps=1e-3))
    start_from(torch, {"fused": fused, "unfused": unfused}, init, result)
    with torch.no_grad():
        unfused[0].weight.copy_(fused.conv_weight)
    data = torch.tensor(rng.standard_normal((6, 1, 7, 7)), dtype=torch.float32)
    target = torch.tensor(rng.standard_normal((6, 4, 5, 5)), dtype=torch.float32)
    history = {}
    for name, model in (("fused", fused), ("unfused", unfused)):
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = F.mse_loss(model(data), target)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        history[name] = losses
    result.update(history=history, fused_w=numpy_of(fused.conv_weight))
    return result


def test_parametrizations():
    ref, got = compare_program(parametrizations, rtol=1e-4, atol=1e-5)
    assert got["symmetric"] and got["still_symmetric"] and got["is_param"] and not got["removed_flag"]
    np.testing.assert_allclose(got["orthogonal"], np.eye(3), atol=1e-5)
    np.testing.assert_allclose(got["builtin_orthogonal"], np.eye(4), atol=1e-5)


def test_fused_conv_bn():
    ref, got = compare_program(fused_conv_bn, rtol=1e-4, atol=1e-5)
    assert got["gradcheck"]
