""""Learning PyTorch with Examples" as a user runs it: a third-order polynomial fitted to sin(x)
with raw tensors and hand-written gradients, the same with autograd and updates under no_grad
(grad = None afterwards), a custom autograd.Function (the third Legendre polynomial, with
ctx.save_for_backward) inside the model, then nn.Sequential(Linear(3, 1), Flatten(0, 1)) over
x.unsqueeze(-1).pow(p) with MSELoss(reduction='sum') and RMSprop, and finally a module whose
forward repeats a layer a number of times drawn from NumPy (dynamic control flow) with SGD and
momentum. Coefficients and losses match PyTorch's."""
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

POINTS = 200


def polynomial_fits(torch, init=None, steps=60):
    dtype = torch.float
    x = torch.linspace(-math.pi, math.pi, POINTS, dtype=dtype)
    y = torch.sin(x)
    rng = np.random.default_rng(0)
    start = [torch.tensor(v, dtype=dtype) for v in rng.standard_normal(4).astype(np.float32)]
    result = {}

    # raw tensors, gradients by hand
    a, b, c, d = (v.clone() for v in start)
    lr = 1e-6
    manual = []
    for t in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum().item()
        if t % 10 == 9:
            manual.append(loss)
        grad_y_pred = 2.0 * (y_pred - y)
        a -= lr * grad_y_pred.sum()
        b -= lr * (grad_y_pred * x).sum()
        c -= lr * (grad_y_pred * x ** 2).sum()
        d -= lr * (grad_y_pred * x ** 3).sum()
    result["manual"] = manual
    result["manual_coeffs"] = [a.item(), b.item(), c.item(), d.item()]

    # autograd
    a, b, c, d = (v.clone().requires_grad_(True) for v in start)
    auto = []
    for t in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        if t % 10 == 9:
            auto.append(loss.item())
        loss.backward()
        with torch.no_grad():
            a -= lr * a.grad
            b -= lr * b.grad
            c -= lr * c.grad
            d -= lr * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    result["auto"] = auto
    result["auto_coeffs"] = [a.item(), b.item(), c.item(), d.item()]
    result["result_line"] = f"Result: y = {a.item():.3f} + {b.item():.3f} x + {c.item():.3f} x^2 + {d.item():.3f} x^3"

    # custom Function
    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, dtype=dtype, requires_grad=True)
    lr = 5e-6
    legendre = []
    for t in range(steps):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        if t % 10 == 9:
            legendre.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= lr * p.grad
                p.grad = None
    result["legendre"] = legendre
    result["legendre_coeffs"] = [a.item(), b.item(), c.item(), d.item()]
    result["grad_fn_name"] = type(y_pred.grad_fn).__name__
    return result


def sequential_rmsprop(torch, init=None, steps=40):
    x = torch.linspace(-math.pi, math.pi, POINTS)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    result = {"xx_shape": tuple(xx.shape), "xx_dtype": str(xx.dtype).split(".")[-1]}
    start_from(torch, model, init, result)
    loss_fn = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    losses = []
    for t in range(steps):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    linear_layer = model[0]
    result.update(losses=losses, bias=linear_layer.bias.item(), weight=numpy_of(linear_layer.weight[:, 0]),
                  weights=linear_layer.weight[:, 1].item(), out_shape=tuple(model(xx).shape))
    return result


def dynamic_net(torch, init=None, steps=30):
    rng = np.random.default_rng(5)

    class DynamicNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(torch.tensor(float(rng.standard_normal())))
            self.b = torch.nn.Parameter(torch.tensor(float(rng.standard_normal())))
            self.c = torch.nn.Parameter(torch.tensor(float(rng.standard_normal())))
            self.d = torch.nn.Parameter(torch.tensor(float(rng.standard_normal())))
            self.e = torch.nn.Parameter(torch.tensor(float(rng.standard_normal())))

        def forward(self, x):
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, int(rng.integers(4, 6)) + 1):
                y = y + self.e * x ** exp
            return y

        def string(self):
            return f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?"

    x = torch.linspace(-math.pi, math.pi, POINTS)
    y = torch.sin(x)
    model = DynamicNet()
    criterion = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    losses = []
    for t in range(steps):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {"losses": losses, "params": [p.item() for p in model.parameters()],
            "names": [n for n, _ in model.named_parameters()], "has_string": "x^4" in model.string()}


def test_polynomial_raw_autograd_and_custom_function():
    ref, got = compare_program(polynomial_fits, rtol=1e-3, atol=1e-4)
    assert got["grad_fn_name"] == ref["grad_fn_name"] == "AddBackward0"
    assert got["result_line"].startswith("Result: y = ")
    assert got["legendre"][-1] < got["legendre"][0]


def test_sequential_flatten_rmsprop():
    ref, got = compare_program(sequential_rmsprop, rtol=1e-3, atol=1e-4)
    assert got["xx_shape"] == (POINTS, 3) and got["out_shape"] == (POINTS,)
    assert got["xx_dtype"] == "float32"


def test_dynamic_control_flow():
    compare_program(dynamic_net, rtol=1e-3, atol=1e-4)
