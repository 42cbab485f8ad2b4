"""micrograd's reference checks and its lecture's cross-check against PyTorch: scalars made by
torch.Tensor([2.0]).double() with requires_grad = True set afterwards, a neuron
n = x1*w1 + x2*w2 + b through torch.tanh, o.data.item() and x2.grad.item(); the sanity check
chain (a + b, a * b + b**3, c + c + 1, (b + a).relu(), e**2, f / 2.0, 10.0 / f, -a) with
g.backward() and amg.grad.item(); and the MLP of the lecture trained by hand over four examples:
[p for layer in layers for p in layer.parameters()], ypred = [n(x) for x in xs], loss as
sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred)) (Python's sum over tensors), p.grad = None
before backward and p.data += -0.05 * p.grad after."""
import numpy as np

from prog_helpers import compare_program, numpy_of


def micrograd(torch, init=None, steps=10):
    result = {}
    x1 = torch.Tensor([2.0]).double()
    x1.requires_grad = True
    x2 = torch.Tensor([0.0]).double()
    x2.requires_grad = True
    w1 = torch.Tensor([-3.0]).double()
    w1.requires_grad = True
    w2 = torch.Tensor([1.0]).double()
    w2.requires_grad = True
    b = torch.Tensor([6.8813735870195432]).double()
    b.requires_grad = True
    n = x1 * w1 + x2 * w2 + b
    o = torch.tanh(n)
    result["o"] = o.data.item()
    o.backward()
    result["neuron_grads"] = [x2.grad.item(), w2.grad.item(), x1.grad.item(), w1.grad.item()]
    result["dtype"] = str(o.dtype).split(".")[-1]

    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    result["sanity"] = [y.data.item(), x.grad.item()]

    a = torch.Tensor([-4.0]).double()
    bb = torch.Tensor([2.0]).double()
    a.requires_grad = True
    bb.requires_grad = True
    c = a + bb
    d = a * bb + bb ** 3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (bb + a).relu()
    d = d + 3 * d + (bb - a).relu()
    e = c - d
    f = e ** 2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    result["more_ops"] = [g.data.item(), a.grad.item(), bb.grad.item()]

    rng = np.random.default_rng(0)

    class Neuron:
        def __init__(self, nin):
            self.w = [torch.tensor(rng.uniform(-1, 1), dtype=torch.float64, requires_grad=True) for _ in range(nin)]
            self.b = torch.tensor(rng.uniform(-1, 1), dtype=torch.float64, requires_grad=True)

        def __call__(self, x):
            act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
            return act.tanh()

        def parameters(self):
            return self.w + [self.b]

    class Layer:
        def __init__(self, nin, nout):
            self.neurons = [Neuron(nin) for _ in range(nout)]

        def __call__(self, x):
            outs = [n(x) for n in self.neurons]
            return outs[0] if len(outs) == 1 else outs

        def parameters(self):
            return [p for neuron in self.neurons for p in neuron.parameters()]

    class MLP:
        def __init__(self, nin, nouts):
            sz = [nin] + nouts
            self.layers = [Layer(sz[i], sz[i + 1]) for i in range(len(nouts))]

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

        def parameters(self):
            return [p for layer in self.layers for p in layer.parameters()]

    net = MLP(3, [4, 4, 1])
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    losses = []
    for k in range(steps):
        ypred = [net(x) for x in xs]
        loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred))
        for p in net.parameters():
            p.grad = None
        loss.backward()
        for p in net.parameters():
            p.data += -0.05 * p.grad
        losses.append(loss.item())
    result.update(losses=losses, nparams=len(net.parameters()), ypred=[yp.item() for yp in ypred],
                  params=np.array([p.item() for p in net.parameters()]))
    return result


def test_micrograd_cross_check():
    ref, got = compare_program(micrograd, rtol=1e-10, atol=1e-12)
    assert got["dtype"] == "float64" and ref["losses"][-1] < ref["losses"][0]
