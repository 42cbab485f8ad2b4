"""fastbook's chapter 17, "A Neural Net from the Foundations", as the notebook writes it (the
fastai imports left out: `tensor` is torch.tensor), randomness from torch.manual_seed (both
libraries draw PyTorch's CPU stream): matmul by three loops writing c[i,j] += a[i,k] * b[k,j]
(at a smaller size, the loops being Python's), then by (a[i] * b[:,j]).sum(), by
(a[i].unsqueeze(-1) * b).sum(dim=0) and by torch.einsum('ik,kj->ij'); elementwise comparisons and
.all(); the broadcasting error of m*n; c.expand_as(m) with its stride (0, 1) and storage of three
values; unsqueeze against None indexing; the exploding and vanishing activations of 50 layers
x @ torch.randn(100,100) * scale (nan, zeros), the sqrt(1/n) and Kaiming sqrt(2/n) scales with
relu as x.clamp_min(0.); the forward and backward passes written by hand storing gradients in a
`.g` attribute on each tensor (mse_grad, relu_grad, lin_grad), the same refactored into Relu, Lin
and Mse classes with __call__ and backward, then a LayerFunction base with forward/bwd; the
gradients checked against autograd on clones with requires_grad_(True); a
torch.autograd.Function MyRelu; a LinearLayer nn.Module of nn.Parameter(torch.randn(n_out, n_in)
* sqrt(2/n_in)); and the nn.Sequential Model whose forward returns the loss."""
from math import sqrt

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of


def foundations(torch, init=None):
    tensor = torch.tensor
    r = {}
    torch.manual_seed(42)

    def matmul(a, b):
        ar, ac = a.shape  # n_rows * n_cols
        br, bc = b.shape
        assert ac == br
        c = torch.zeros(ar, bc)
        for i in range(ar):
            for j in range(bc):
                for k in range(ac):
                    c[i, j] += a[i, k] * b[k, j]
        return c

    m1 = torch.randn(5, 28)
    m2 = torch.randn(28, 10)
    t1 = matmul(m1, m2)
    r["loop"] = numpy_of(t1)
    r["loop_close"] = bool(torch.allclose(t1, m1 @ m2, rtol=1e-4, atol=1e-5))

    a = tensor([10., 6, -4])
    b = tensor([2., 8, 7])
    r["ab"] = [numpy_of(a + b), numpy_of(a < b), bool((a < b).all()), bool((a == b).all()),
               (a + b).mean().item()]
    m = tensor([[1., 2, 3], [4, 5, 6], [7, 8, 9]])
    n = tensor([[1., 2, 3], [4, 5, 6]])
    r["mm"] = numpy_of(m * m)
    with pytest.raises(RuntimeError) as e:
        m * n
    r["mn_error"] = str(e.value)

    def matmul(a, b):
        ar, ac = a.shape
        br, bc = b.shape
        assert ac == br
        c = torch.zeros(ar, bc)
        for i in range(ar):
            for j in range(bc):
                c[i, j] = (a[i] * b[:, j]).sum()
        return c

    r["loop2"] = numpy_of(matmul(m1, m2))

    a = tensor([10., 6, -4])
    r["a"] = [numpy_of(a > 0), numpy_of(a + 1), numpy_of(2 * m)]
    c = tensor([10., 20, 30])
    r["shapes"] = [tuple(m.shape), tuple(c.shape)]
    r["m+c"] = numpy_of(m + c)
    r["expand"] = numpy_of(c.expand_as(m))
    t = c.expand_as(m)
    r["storage"] = list(t.storage())
    r["stride"] = [t.stride(), tuple(t.shape)]
    r["c+m"] = numpy_of(c + m)
    m = tensor([[1., 2, 3], [4, 5, 6]])
    r["c+m2"] = numpy_of(c + m)
    c = tensor([10., 20])
    with pytest.raises(RuntimeError) as e:
        c + m
    r["cm_error"] = str(e.value)
    c = tensor([10., 20, 30])
    m = tensor([[1., 2, 3], [4, 5, 6], [7, 8, 9]])
    c = c.unsqueeze(1)
    r["unsq"] = [tuple(m.shape), tuple(c.shape), numpy_of(c + m)]
    t = c.expand_as(m)
    r["stride2"] = [list(t.storage()), t.stride(), tuple(t.shape)]
    c = tensor([10., 20, 30])
    r["none"] = [tuple(x.shape) for x in (c, c.unsqueeze(0), c.unsqueeze(1), c[None, :], c[:, None],
                                          c[None], c[..., None])]
    r["m_none"] = tuple(m[:, None].shape)

    def matmul(a, b):
        ar, ac = a.shape
        br, bc = b.shape
        assert ac == br
        c = torch.zeros(ar, bc)
        for i in range(ar):
            c[i] = (a[i].unsqueeze(-1) * b).sum(dim=0)
        return c

    r["loop3"] = numpy_of(matmul(m1, m2))

    def matmul(a, b): return torch.einsum('ik,kj->ij', a, b)

    r["einsum"] = numpy_of(matmul(m1, m2))

    x = torch.randn(200, 100)
    y = torch.randn(200)
    w1 = torch.randn(100, 50)
    b1 = torch.zeros(50)
    w2 = torch.randn(50, 1)
    b2 = torch.zeros(1)

    def lin(x, w, b): return x @ w + b

    l1 = lin(x, w1, b1)
    r["l1"] = [tuple(l1.shape), l1.mean().item(), l1.std().item()]
    x = torch.randn(200, 100)
    for i in range(50):
        x = x @ torch.randn(100, 100)
    r["explode"] = numpy_of(x[0:5, 0:5])
    x = torch.randn(200, 100)
    for i in range(50):
        x = x @ (torch.randn(100, 100) * 0.01)
    r["vanish"] = numpy_of(x[0:5, 0:5])
    x = torch.randn(200, 100)
    for i in range(50):
        x = x @ (torch.randn(100, 100) * 0.1)
    r["tenth"] = [numpy_of(x[0:5, 0:5]), x.std().item()]

    x = torch.randn(200, 100)
    y = torch.randn(200)
    w1 = torch.randn(100, 50) / sqrt(100)
    b1 = torch.zeros(50)
    w2 = torch.randn(50, 1) / sqrt(50)
    b2 = torch.zeros(1)
    l1 = lin(x, w1, b1)
    r["l1_scaled"] = [l1.mean().item(), l1.std().item()]

    def relu(x): return x.clamp_min(0.)

    l2 = relu(l1)
    r["l2"] = [l2.mean().item(), l2.std().item()]
    x = torch.randn(200, 100)
    for i in range(50):
        x = relu(x @ (torch.randn(100, 100) * 0.1))
    r["relu_tenth"] = numpy_of(x[0:5, 0:5])
    x = torch.randn(200, 100)
    for i in range(50):
        x = relu(x @ (torch.randn(100, 100) * sqrt(2 / 100)))
    r["relu_kaiming"] = numpy_of(x[0:5, 0:5])

    x = torch.randn(200, 100)
    y = torch.randn(200)
    w1 = torch.randn(100, 50) * sqrt(2 / 100)
    b1 = torch.zeros(50)
    w2 = torch.randn(50, 1) * sqrt(2 / 50)
    b2 = torch.zeros(1)
    l1 = lin(x, w1, b1)
    l2 = relu(l1)
    r["l2_kaiming"] = [l2.mean().item(), l2.std().item()]

    def model(x):
        l1 = lin(x, w1, b1)
        l2 = relu(l1)
        l3 = lin(l2, w2, b2)
        return l3

    out = model(x)

    def mse(output, targ): return (output.squeeze(-1) - targ).pow(2).mean()

    r["model"] = [tuple(out.shape), mse(out, y).item()]

    def mse_grad(inp, targ):
        # grad of loss with respect to output of previous layer
        inp.g = 2. * (inp.squeeze() - targ).unsqueeze(-1) / inp.shape[0]

    def relu_grad(inp, out):
        # grad of relu with respect to input activations
        inp.g = (inp > 0).float() * out.g

    def lin_grad(inp, out, w, b):
        # grad of matmul with respect to input
        inp.g = out.g @ w.t()
        w.g = inp.t() @ out.g
        b.g = out.g.sum(0)

    def forward_and_backward(inp, targ):
        # forward pass:
        l1 = inp @ w1 + b1
        l2 = relu(l1)
        out = l2 @ w2 + b2
        # we don't actually need the loss in backward!
        loss = mse(out, targ)
        # backward pass:
        mse_grad(out, targ)
        lin_grad(l2, out, w2, b2)
        relu_grad(l1, l2)
        lin_grad(inp, l1, w1, b1)
        return loss

    r["fb_loss"] = forward_and_backward(x, y).item()
    grads = [w1.g.clone(), b1.g.clone(), w2.g.clone(), b2.g.clone(), x.g.clone()]
    r["manual_grads"] = [numpy_of(g) for g in grads]

    # checked against autograd, as the course's lesson does
    xt2 = x.clone().requires_grad_(True)
    w12 = w1.clone().requires_grad_(True)
    w22 = w2.clone().requires_grad_(True)
    b12 = b1.clone().requires_grad_(True)
    b22 = b2.clone().requires_grad_(True)

    def forward(inp, targ):
        l1 = inp @ w12 + b12
        l2 = relu(l1)
        out = l2 @ w22 + b22
        return mse(out, targ)

    loss = forward(xt2, y)
    loss.backward()
    r["autograd_close"] = [bool(torch.allclose(p.grad, g, rtol=1e-3, atol=1e-5))
                           for p, g in zip((w12, b12, w22, b22, xt2), grads)]

    class Relu():
        def __call__(self, inp):
            self.inp = inp
            self.out = inp.clamp_min(0.)
            return self.out

        def backward(self): self.inp.g = (self.inp > 0).float() * self.out.g

    class Lin():
        def __init__(self, w, b): self.w, self.b = w, b

        def __call__(self, inp):
            self.inp = inp
            self.out = inp @ self.w + self.b
            return self.out

        def backward(self):
            self.inp.g = self.out.g @ self.w.t()
            self.w.g = self.inp.t() @ self.out.g
            self.b.g = self.out.g.sum(0)

    class Mse():
        def __call__(self, inp, targ):
            self.inp = inp
            self.targ = targ
            self.out = (inp.squeeze() - targ).pow(2).mean()
            return self.out

        def backward(self):
            x = (self.inp.squeeze() - self.targ).unsqueeze(-1)
            self.inp.g = 2. * x / self.targ.shape[0]

    class Model():
        def __init__(self, w1, b1, w2, b2):
            self.layers = [Lin(w1, b1), Relu(), Lin(w2, b2)]
            self.loss = Mse()

        def __call__(self, x, targ):
            for l in self.layers:
                x = l(x)
            return self.loss(x, targ)

        def backward(self):
            self.loss.backward()
            for l in reversed(self.layers):
                l.backward()

    model = Model(w1, b1, w2, b2)
    loss = model(x, y)
    model.backward()
    r["classes"] = [numpy_of(loss), numpy_of(w1.g), numpy_of(b2.g), numpy_of(x.g)]

    class LayerFunction():
        def __call__(self, *args):
            self.args = args
            self.out = self.forward(*args)
            return self.out

        def forward(self): raise Exception('not implemented')

        def bwd(self): raise Exception('not implemented')

        def backward(self): self.bwd(self.out, *self.args)

    class Relu(LayerFunction):
        def forward(self, inp): return inp.clamp_min(0.)

        def bwd(self, out, inp): inp.g = (inp > 0).float() * out.g

    class Lin(LayerFunction):
        def __init__(self, w, b): self.w, self.b = w, b

        def forward(self, inp): return inp @ self.w + self.b

        def bwd(self, out, inp):
            inp.g = out.g @ self.w.t()
            self.w.g = inp.t() @ self.out.g
            self.b.g = out.g.sum(0)

    class Mse(LayerFunction):
        def forward(self, inp, targ): return (inp.squeeze() - targ).pow(2).mean()

        def bwd(self, out, inp, targ):
            inp.g = 2 * (inp.squeeze() - targ).unsqueeze(-1) / targ.shape[0]

    class Model():
        def __init__(self, w1, b1, w2, b2):
            self.layers = [Lin(w1, b1), Relu(), Lin(w2, b2)]
            self.loss = Mse()

        def __call__(self, x, targ):
            for l in self.layers:
                x = l(x)
            return self.loss(x, targ)

        def backward(self):
            self.loss.backward()
            for l in reversed(self.layers):
                l.backward()

    model = Model(w1, b1, w2, b2)
    loss = model(x, y)
    model.backward()
    r["layer_functions"] = [numpy_of(loss), numpy_of(w2.g), numpy_of(b1.g), numpy_of(x.g)]

    from importlib import import_module
    Function = import_module(torch.__name__ + ".autograd").Function

    class MyRelu(Function):
        @staticmethod
        def forward(ctx, i):
            result = i.clamp_min(0.)
            ctx.save_for_backward(i)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            i, = ctx.saved_tensors
            return grad_output * (i > 0).float()

    xr = torch.randn(4, 3, requires_grad=True)
    MyRelu.apply(xr).pow(2).sum().backward()
    r["myrelu"] = numpy_of(xr.grad)

    nn = torch.nn

    class LinearLayer(nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(n_out, n_in) * sqrt(2 / n_in))
            self.bias = nn.Parameter(torch.zeros(n_out))

        def forward(self, x): return x @ self.weight.t() + self.bias

    lin = LinearLayer(10, 2)
    p1, p2 = lin.parameters()
    r["linear_layer"] = [tuple(p1.shape), tuple(p2.shape), numpy_of(lin(torch.ones(3, 10)))]

    class Model(nn.Module):
        def __init__(self, n_in, nh, n_out):
            super().__init__()
            self.layers = nn.Sequential(
                nn.Linear(n_in, nh), nn.ReLU(), nn.Linear(nh, n_out))
            self.loss = mse

        def forward(self, x, targ): return self.loss(self.layers(x).squeeze(), targ)

    model = Model(100, 50, 1)
    loss = model(x, y)
    loss.backward()
    r["nn_model"] = [numpy_of(loss), numpy_of(model.layers[0].weight.grad)]
    return r


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")  # t.storage(), as the book
def test_fastbook_foundations():
    ref, got = compare_program(foundations, rtol=1e-3, atol=1e-4)
    assert np.isnan(got["explode"]).all() and not got["vanish"].any()
    assert got["stride"] == [(0, 1), (3, 3)] and got["stride2"][1] == (1, 0)
    assert all(got["autograd_close"])
