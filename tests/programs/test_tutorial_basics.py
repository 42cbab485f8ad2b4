"""The PyTorch beginner tutorials' idioms, written as a user runs them: tensors sharing memory with
NumPy (t.numpy() seeing t.add_(1), np.add(n, 1, out=n) seen by from_numpy), matmul/mul with out=,
in-place ops; autograd with retain_graph, backward(gradient), tensor hooks, torch.autograd.grad
with create_graph for a second derivative, autograd.functional.jacobian and hessian; "what is
torch.nn really": logistic regression with hand-made weights (randn / sqrt(784) then
requires_grad_()), a log_softmax and nll written out, updates under no_grad with grad.zero_(),
then the same refactored into nn.Module, a Lambda layer, get_data/fit/loss_batch with TensorDataset
and a WrappedDataLoader, and validation loss averaged by np.sum(np.multiply(losses, nums))."""
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

PIX = 16


def tensors_and_autograd(torch, init=None):
    result = {}
    t = torch.ones(5)
    n = t.numpy()
    t.add_(1)
    result["shared_from_tensor"] = n.copy()
    n = np.ones(5)
    t = torch.from_numpy(n)
    np.add(n, 1, out=n)
    result["shared_from_numpy"] = numpy_of(t)
    tensor = torch.from_numpy(np.arange(16, dtype=np.float32).reshape(4, 4))
    tensor[:, 1] = 0
    y3 = torch.rand_like(tensor)
    torch.matmul(tensor, tensor.T, out=y3)
    z3 = torch.rand_like(tensor)
    torch.mul(tensor, tensor, out=z3)
    agg = tensor.sum()
    result.update(y3=numpy_of(y3), z3=numpy_of(z3), agg=agg.item(), last=numpy_of(tensor[..., -1]),
                  cat=numpy_of(torch.cat([tensor, tensor, tensor], dim=1)), is_tensor=torch.is_tensor(tensor))

    x = torch.ones(5)
    y = torch.zeros(3)
    w = torch.from_numpy(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)).requires_grad_(True)
    b = torch.from_numpy(np.array([0.1, -0.2, 0.3], np.float32)).requires_grad_(True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    seen = []
    z.register_hook(lambda grad: seen.append(grad.clone()))
    loss.backward(retain_graph=True)
    first = numpy_of(w.grad)
    loss.backward()
    result.update(has_grad_fn=z.grad_fn is not None, w_grad=first, w_grad_twice=numpy_of(w.grad),
                  hooked=numpy_of(seen[0]), z_det=z.detach().requires_grad)

    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp + 1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    inp.grad.zero_()
    out.backward(torch.ones_like(out))
    result["inp_grad"] = numpy_of(inp.grad)

    a = torch.tensor([2., 3.], requires_grad=True)
    q = 3 * a ** 3
    (g,) = torch.autograd.grad(q.sum(), a, create_graph=True)
    (g2,) = torch.autograd.grad(g.sum(), a)
    f = lambda v: (v.sin() * v.exp()).sum()  # noqa: E731
    point = torch.tensor([0.5, -1.0, 2.0])
    jac = torch.autograd.functional.jacobian(lambda v: v ** 2 * v.sum(), point)
    hess = torch.autograd.functional.hessian(f, point)
    result.update(g=numpy_of(g), g2=numpy_of(g2), check=bool((g == 9 * a ** 2).all()), jac=numpy_of(jac),
                  hess=numpy_of(hess))
    return result


def mnist_the_hard_way(torch, init=None, epochs=2, bs=16, lr=0.5):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(0)
    protos = rng.random((10, PIX * PIX)) > 0.6
    labels = rng.integers(0, 10, 160)
    images = (protos[labels] * 0.8 + 0.2 * rng.random((160, PIX * PIX))).astype(np.float32)
    x_train, y_train, x_valid, y_valid = map(torch.tensor, (images[:128], labels[:128], images[128:],
                                                            labels[128:]))
    n, c = x_train.shape
    result = {"shape": (n, c), "min_max": (int(y_train.min()), int(y_train.max()))}

    # from scratch
    torch.manual_seed(0)
    weights = torch.from_numpy(rng.standard_normal((PIX * PIX, 10)).astype(np.float32)) / math.sqrt(PIX * PIX)
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    scratch = []
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb, yb = x_train[start_i:end_i], y_train[start_i:end_i]
            pred = model(xb)
            loss = nll(pred, yb)
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
        scratch.append([loss.item(), accuracy(model(x_valid), y_valid).item()])

    # refactored: nn.Module, Lambda, DataLoader, fit
    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    def preprocess(x, y):
        return x.view(-1, 1, PIX, PIX), y

    class WrappedDataLoader:
        def __init__(self, dl, func):
            self.dl, self.func = dl, func

        def __len__(self):
            return len(self.dl)

        def __iter__(self):
            for b in self.dl:
                yield self.func(*b)

    def get_data(train_ds, valid_ds, bs):
        return (torch.utils.data.DataLoader(train_ds, batch_size=bs, shuffle=False),
                torch.utils.data.DataLoader(valid_ds, batch_size=bs * 2))

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)

    def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
        history = []
        for epoch in range(epochs):
            model.train()
            for xb, yb in train_dl:
                loss_batch(model, loss_func, xb, yb, opt)
            model.eval()
            with torch.no_grad():
                losses, nums = zip(*[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl])
            history.append(np.sum(np.multiply(losses, nums)) / np.sum(nums))
        return history

    cnn = nn.Sequential(
        nn.Conv2d(1, 8, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(8, 8, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(8, 10, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), Lambda(lambda x: x.view(x.size(0), -1)),
    )
    start_from(torch, cnn, init, result)
    train_dl, valid_dl = get_data(torch.utils.data.TensorDataset(x_train, y_train),
                                  torch.utils.data.TensorDataset(x_valid, y_valid), bs)
    train_dl, valid_dl = WrappedDataLoader(train_dl, preprocess), WrappedDataLoader(valid_dl, preprocess)
    opt = torch.optim.SGD(cnn.parameters(), lr=0.1, momentum=0.9)
    history = fit(epochs, cnn, F.cross_entropy, opt, train_dl, valid_dl)
    result.update(scratch=np.array(scratch), weights=numpy_of(weights), history=history, n_batches=len(train_dl))
    return result


def test_tensor_and_autograd_tutorial():
    ref, got = compare_program(tensors_and_autograd)
    np.testing.assert_array_equal(got["shared_from_tensor"], 2)
    np.testing.assert_array_equal(got["shared_from_numpy"], 2)
    assert got["check"]


def test_what_is_torch_nn_really():
    compare_program(mnist_the_hard_way, rtol=1e-3, atol=1e-4)
